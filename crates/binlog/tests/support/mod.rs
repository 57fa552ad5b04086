//! Shared helpers for the binary log's tests: a workload of small
//! transactions, and a checker that decodes every file of a log and
//! asserts the invariants recovery promises.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use binlog::{BinaryLog, CrashPoints, Options, TransactionCache};
use binlog_format::constants::{EventType, LOG_EVENT_BINLOG_IN_USE_F};
use binlog_format::events::{ColumnSpec, Event, QueryEvent, RowChange, RowsEvent, TableMap, XidEvent};
use binlog_format::file::EventStream;
use binlog_format::gtid_set::Uuid;
use binlog_format::{ColumnType, Value};
use storage::Storage;

pub fn uuid() -> Uuid {
    Uuid::from_random_bytes([7; 16])
}

pub fn options(dir: &Path) -> Options {
    let mut options = Options::new(dir);
    options.server_uuid = uuid();
    options
}

/// `test.t (xid BIGINT UNSIGNED, n INT, note VARCHAR(64) NULL)`, table id 1.
pub fn table_map() -> TableMap {
    let spec =
        |name: &str, column_type, nullable, unsigned| ColumnSpec { name: name.to_string(), column_type, nullable, unsigned, collation: 45 };
    let columns = [
        spec("xid", ColumnType::LongLong, false, true),
        spec("n", ColumnType::Long, false, false),
        spec("note", ColumnType::VarChar { max_length_bytes: 256 }, true, false),
    ];
    TableMap::new(1, "test", "t", &columns, &[0, 1]).unwrap()
}

/// The row `n` of transaction `xid` (every 7th note is NULL).
pub fn row(xid: u64, n: usize) -> Vec<Value> {
    let note = if n % 7 == 3 { Value::Null } else { Value::Bytes(format!("row {n} of {xid}").into_bytes()) };
    vec![Value::UInt(xid), Value::Int(n as i64), note]
}

/// BEGIN; Table_map; Write_rows events of at most 100 rows; Xid = `xid`.
pub fn transaction(log: &BinaryLog, xid: u64, rows: usize) -> TransactionCache {
    let mut cache = log.new_cache();
    let table = table_map();
    cache.append(&Event::Query(QueryEvent::new(1, "test", "BEGIN")), 1_700_000_000).unwrap();
    cache.append(&Event::TableMap(table.clone()), 1_700_000_000).unwrap();
    let all: Vec<Vec<Value>> = (0..rows).map(|n| row(xid, n)).collect();
    for chunk in all.chunks(100) {
        let event = RowsEvent::write(1, &table, chunk).unwrap().into_event();
        cache.append(&event, 1_700_000_000).unwrap();
    }
    cache.append(&Event::Xid(XidEvent { xid }), 1_700_000_000).unwrap();
    cache
}

/// One transaction as found in the files.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundTransaction {
    pub gno: u64,
    pub xid: Option<u64>,
    pub file: String,
    pub last_committed: i64,
    pub sequence_number: i64,
    /// Rows written, as binlogd's decoder reads them.
    pub rows: Vec<Vec<Value>>,
}

/// Everything the checker learned from a log directory.
#[derive(Debug, Default)]
pub struct LogContents {
    pub index: Vec<String>,
    pub transactions: Vec<FoundTransaction>,
}

/// Decodes every listed file with binlogd's own decoder and checks the
/// invariants: every listed file exists and decodes entirely with valid
/// checksums and no in-use flag (after recovery or close, except `active`),
/// transactions are whole, GTIDs are consecutive in file order from the
/// first file's Previous_gtids, no binlog file
/// lies outside the index, no spill file is left.
pub fn check_log(storage: &dyn Storage, dir: &Path, active: Option<&str>) -> LogContents {
    let options = options(dir);
    let index_text = String::from_utf8(storage.read_all(&options.index_path()).expect("index exists")).unwrap();
    let index: Vec<String> = index_text.lines().map(|l| l.trim_start_matches("./").to_string()).collect();
    let mut contents = LogContents { index: index.clone(), transactions: Vec::new() };
    let mut first_gno = None;
    let on_disk: BTreeSet<String> = storage.list(dir).unwrap().into_iter().filter(|n| options.file_number(n).is_some()).collect();
    let listed: BTreeSet<String> = index.iter().cloned().collect();
    assert_eq!(on_disk, listed, "binlog files on disk and in the index disagree");
    for name in &index {
        let bytes = storage.read_all(&dir.join(name)).unwrap();
        let mut open: Option<FoundTransaction> = None;
        let mut in_body = false;
        let mut tables = std::collections::HashMap::new();
        for item in EventStream::new(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")) {
            let (offset, raw, event) = item.unwrap_or_else(|e| panic!("{name}: {e}"));
            match event {
                Event::FormatDescription(_) => {
                    let in_use = raw.header.flags & LOG_EVENT_BINLOG_IN_USE_F != 0;
                    assert_eq!(in_use, Some(name.as_str()) == active, "{name}: in-use flag");
                }
                Event::PreviousGtids(previous) => {
                    first_gno.get_or_insert(previous.last_gno(&uuid()) + 1);
                }
                Event::Gtid(gtid) => {
                    assert!(open.is_none(), "{name}@{offset}: Gtid inside a transaction");
                    open = Some(FoundTransaction {
                        gno: gtid.gtid.gno,
                        xid: None,
                        file: name.clone(),
                        last_committed: gtid.last_committed,
                        sequence_number: gtid.sequence_number,
                        rows: Vec::new(),
                    });
                    assert!(gtid.last_committed < gtid.sequence_number, "{name}@{offset}: logical clock");
                }
                Event::Query(q) if q.is_begin() => in_body = true,
                Event::TableMap(map) => tables.insert(map.table_id, map).map_or((), |_| ()),
                Event::WriteRows(rows) => {
                    let table = &tables[&rows.table_id];
                    let trx = open.as_mut().expect("rows outside a transaction");
                    for change in rows.decode_rows(table).unwrap_or_else(|e| panic!("{name}@{offset}: {e}")) {
                        let RowChange::Write(row) = change else { panic!("not a write") };
                        trx.rows.push(row);
                    }
                }
                Event::Xid(XidEvent { xid }) => {
                    let mut trx = open.take().expect("Xid outside a transaction");
                    trx.xid = Some(xid);
                    contents.transactions.push(trx);
                    in_body = false;
                }
                Event::Query(_) if !in_body => {
                    contents.transactions.push(open.take().expect("DDL without Gtid"));
                }
                _ => {}
            }
        }
        assert!(open.is_none(), "{name}: file ends inside a transaction");
        // Oracle: mysql_common decodes the same rows from the same file.
        let ours: Vec<Vec<Value>> = contents.transactions.iter().filter(|t| t.file == *name).flat_map(|t| t.rows.clone()).collect();
        assert_eq!(mysql_common_rows(&bytes), ours.iter().map(|r| oracle_view(r)).collect::<Vec<_>>(), "{name}: mysql_common disagrees");
    }
    for (position, trx) in contents.transactions.iter().enumerate() {
        assert_eq!(trx.gno, position as u64 + first_gno.unwrap_or(1), "GTIDs are not consecutive in file order");
    }
    let spill_dir = options.spill_dir();
    if storage.exists(&spill_dir) {
        let leftovers: Vec<String> = storage.list(&spill_dir).unwrap();
        assert!(leftovers.is_empty(), "spill files left behind: {leftovers:?}");
    }
    contents
}

pub fn open(dir: &Path, storage: Arc<dyn Storage>, tweak: impl FnOnce(&mut Options)) -> BinaryLog {
    let mut options = options(dir);
    tweak(&mut options);
    BinaryLog::open(options, storage, CrashPoints::default()).expect("open").0
}

pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/binlog")
}

/// Runs `mariadb-binlog --verbose` on a file; asserts exit status 0.
pub fn mariadb_binlog_verbose(path: &Path) -> String {
    let output = std::process::Command::new("mariadb-binlog")
        .arg("--verbose")
        .arg(path)
        .output()
        .expect("mariadb-binlog must be installed (apt-get install mariadb-client); .ci/run installs it");
    assert!(output.status.success(), "mariadb-binlog failed on {}: {}", path.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn event_type_name(code: u8) -> &'static str {
    EventType::name_of(code)
}

/// (xid, n, note) as mysql_common decodes every Write_rows row of a file.
pub fn mysql_common_rows(file: &[u8]) -> Vec<(u64, i64, Option<Vec<u8>>)> {
    use mysql_common::binlog::events::EventData;
    use mysql_common::binlog::value::BinlogValue;
    use mysql_common::value::Value as TheirValue;
    let mut binlog = mysql_common::binlog::BinlogFile::new(mysql_common::binlog::consts::BinlogVersion::Version4, file)
        .expect("mysql_common reads the magic");
    let mut rows = Vec::new();
    while let Some(event) = binlog.next() {
        let event = event.expect("mysql_common reads every event");
        // Type 43 (Large_transaction_header) is unknown to mysql_common: skipped as ignorable.
        let Ok(Some(EventData::RowsEvent(data))) = event.read_data() else { continue };
        let table = binlog.reader().get_tme(data.table_id()).expect("table map precedes rows").clone();
        for row in data.rows(&table) {
            let (_, after) = row.expect("mysql_common decodes the row");
            let values: Vec<TheirValue> = after
                .expect("a write has an after image")
                .unwrap()
                .into_iter()
                .map(|v| match v {
                    BinlogValue::Value(v) => v,
                    other => panic!("unexpected {other:?}"),
                })
                .collect();
            let int = |v: &TheirValue| match v {
                TheirValue::Int(i) => *i,
                TheirValue::UInt(u) => *u as i64,
                other => panic!("not an integer: {other:?}"),
            };
            let note = match &values[2] {
                TheirValue::NULL => None,
                TheirValue::Bytes(b) => Some(b.clone()),
                other => panic!("note: {other:?}"),
            };
            rows.push((int(&values[0]) as u64, int(&values[1]), note));
        }
    }
    rows
}

/// Our decoded row in the oracle's shape.
pub fn oracle_view(row: &[Value]) -> (u64, i64, Option<Vec<u8>>) {
    let xid = match row[0] {
        Value::UInt(v) => v,
        ref other => panic!("xid {other:?}"),
    };
    let n = match row[1] {
        Value::Int(v) => v,
        ref other => panic!("n {other:?}"),
    };
    let note = match &row[2] {
        Value::Null => None,
        Value::Bytes(b) => Some(b.clone()),
        other => panic!("note {other:?}"),
    };
    (xid, n, note)
}
