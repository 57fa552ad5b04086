//! Shared by the `inspect*` tests: sample binlog files (built with the
//! test kit's `BinlogBuilder`) and the built `binlogd` binary run on them.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use binlog_format::events::large_transaction_header::LARGE_TRANSACTION_HEADER_VERSION;
use binlog_format::events::{LargeTransactionHeaderEvent, QueryEvent, XidEvent};
use binlog_format::file::WriterIdentity;
use binlog_format::{ColumnSpec, ColumnType, Event, EventType, GtidSet, RowsEvent, TableMap, Value};
pub use testkit::{BinlogBuilder, SERVER_ID, SOURCE_UUID, TIMESTAMP};

pub const TABLE_ID: u64 = 89;

/// `shop.items`: one column of each kind binlogd types.
pub fn item_columns() -> Vec<ColumnSpec> {
    let column = |name: &str, column_type, nullable, unsigned, collation| ColumnSpec {
        name: name.to_string(),
        column_type,
        nullable,
        unsigned,
        collation,
    };
    vec![
        column("id", ColumnType::Long, false, false, 0),
        column("name", ColumnType::VarChar { max_length_bytes: 80 }, true, false, 45),
        column("price", ColumnType::NewDecimal { precision: 10, scale: 2 }, true, false, 0),
        column("added", ColumnType::DateTime2 { fsp: 6 }, true, false, 0),
        column("note", ColumnType::Blob { length_bytes: 2 }, true, false, 45),
        column("qty", ColumnType::Long, true, true, 0),
    ]
}

pub fn items_table() -> TableMap {
    TableMap::new(TABLE_ID, "shop", "items", &item_columns(), &[0]).unwrap()
}

pub fn item(id: i64, name: &str, price: &str, note: Option<&str>, qty: u64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Bytes(name.as_bytes().to_vec()),
        Value::Decimal(price.to_string()),
        Value::DateTime { year: 2024, month: 5, day: 23, hour: 10, minute: 16, second: 2, micros: 123_456 },
        note.map_or(Value::Null, |n| Value::Bytes(n.as_bytes().to_vec())),
        Value::UInt(qty),
    ]
}

/// A file with a bit of everything binlogd writes: DDL; a transaction
/// inserting two rows; a promoted-file style Large_transaction_header
/// whose target is the Xid of the next transaction, which updates a row
/// and deletes one; a closing Rotate.
pub struct Sample {
    pub builder: BinlogBuilder,
    pub lth_offset: u64,
    pub xid_offset: u64,
}

pub fn sample(checksum: bool) -> Sample {
    sample_with(checksum, &[])
}

/// [`sample`] with `extra` events (and their header flags) before the Rotate.
pub fn sample_with(checksum: bool, extra: &[(Event, u16)]) -> Sample {
    let mut previous = GtidSet::new();
    previous.add_interval(SOURCE_UUID, 1, 10);
    let mut builder = BinlogBuilder::new(checksum, &previous);
    builder.ddl(10, "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))");
    let table = items_table();
    let insert = RowsEvent::write(
        TABLE_ID,
        &table,
        &[item(1, "apple", "1.50", None, 4_000_000_000), item(2, "pear", "-0.25", Some("it's ripe"), 7)],
    )
    .unwrap();
    builder.transaction(11, &[Event::TableMap(table.clone()), Event::WriteRows(insert)], 101);
    // The header must name the Xid's offset before the Xid is written:
    // compute it from the sizes of what comes between.
    let lth_size = {
        let probe = Event::LargeTransactionHeader(LargeTransactionHeaderEvent {
            version: LARGE_TRANSACTION_HEADER_VERSION,
            terminating_event_offset: 0,
            terminating_event_type: 0,
            padding_length: 16,
        });
        builder.event_size(&probe)
    };
    let update = RowsEvent::update(
        TABLE_ID,
        &table,
        &[(item(1, "apple", "1.50", None, 4_000_000_000), item(1, "apple", "1.75", Some("dearer"), 3))],
    )
    .unwrap();
    let delete = RowsEvent::delete(TABLE_ID, &table, &[item(2, "pear", "-0.25", Some("it's ripe"), 7)]).unwrap();
    let statements = [
        Event::Query(QueryEvent::new(11, "shop", "BEGIN")),
        Event::TableMap(table.clone()),
        Event::UpdateRows(update),
        Event::TableMap(table.clone()),
        Event::DeleteRows(delete),
    ];
    let statements_size: u64 = statements.iter().map(|e| builder.event_size(e)).sum();
    let xid = Event::Xid(XidEvent { xid: 102 });
    let xid_size = builder.event_size(&xid);
    let gtid = builder.gtid_event(12, statements_size + xid_size);
    let gtid_size = builder.event_size(&gtid);
    let lth_offset = builder.offset();
    let xid_offset = lth_offset + lth_size + gtid_size + statements_size;
    builder.large_transaction_header(xid_offset, EventType::Xid as u8);
    builder.push(&gtid, 0);
    for event in &statements {
        builder.push(event, 0);
    }
    assert_eq!(builder.push(&xid, 0), xid_offset);
    for (event, flags) in extra {
        builder.push(event, *flags);
    }
    builder.rotate("binlog.000002");
    Sample { builder, lth_offset, xid_offset }
}

pub fn binlogd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_binlogd"))
}

pub fn inspect(args: &[&str], files: &[&Path]) -> Output {
    let mut command = binlogd();
    command.arg("inspect").args(args).args(files);
    command.output().expect("run binlogd")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit status 1 from a normal exit (not a signal), and no panic message.
pub fn assert_failed_cleanly(output: &Output, context: &str) {
    let stderr = stderr(output);
    assert!(!stderr.contains("panicked"), "{context}: binlogd panicked:\n{stderr}");
    assert_eq!(output.status.code(), Some(1), "{context}: expected exit status 1, got {:?}\nstderr:\n{stderr}", output.status);
}

pub fn assert_succeeded(output: &Output, context: &str) {
    assert!(output.status.success(), "{context}: expected success, got {:?}\nstderr:\n{}", output.status, stderr(output));
}

/// A small deterministic generator, so a failing case can be replayed.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// MariaDB's event types and GTID flags, for [`mariadb_sample`].
pub mod mariadb {
    pub const ANNOTATE_ROWS: u8 = 160;
    pub const BINLOG_CHECKPOINT: u8 = 161;
    pub const GTID: u8 = 162;
    pub const GTID_LIST: u8 = 163;
    pub const FL_STANDALONE: u8 = 1;
    pub const FL_ALLOW_PARALLEL: u8 = 4;
    pub const FL_TRANSACTIONAL: u8 = 8;
    pub const FL_DDL: u8 = 0x20;
    pub const DOMAIN_ID: u32 = 0;
}

/// The post-header lengths a MariaDB 10.5 server writes (types 1..=171).
fn mariadb_post_header_lengths() -> Vec<u8> {
    let mut lengths = vec![0u8; 171];
    for (event_type, length) in [
        (1, 56),
        (2, 13),
        (4, 8),
        (6, 18),
        (8, 4),
        (9, 4),
        (10, 4),
        (11, 4),
        (12, 18),
        (15, 228),
        (17, 4),
        (18, 26),
        (19, 8),
        (23, 8),
        (24, 8),
        (25, 8),
        (26, 2),
        (30, 10),
        (31, 10),
        (32, 10),
        (161, 4),
        (162, 19),
        (163, 4),
        (165, 13),
        (166, 8),
        (167, 8),
        (168, 8),
        (169, 10),
        (170, 10),
        (171, 10),
    ] {
        lengths[event_type - 1] = length;
    }
    lengths
}

fn mariadb_gtid_body(seq_no: u64, flags: u8) -> Vec<u8> {
    let mut body = seq_no.to_le_bytes().to_vec();
    body.extend_from_slice(&mariadb::DOMAIN_ID.to_le_bytes());
    body.push(flags);
    body.extend_from_slice(&[0; 6]);
    body
}

/// A file laid out as MariaDB 10.x writes one: MariaDB's FDE, Gtid_list,
/// Binlog_checkpoint; a DDL statement under a standalone GTID 0-7-5; a
/// transaction under GTID 0-7-6 (no BEGIN: the GTID event implies it) with
/// Annotate_rows, Table_map, Write_rows and Xid; a Rotate.
pub fn mariadb_sample() -> BinlogBuilder {
    use binlog_format::constants::LOG_EVENT_BINLOG_IN_USE_F;
    use binlog_format::events::FormatDescription;
    let identity = WriterIdentity { server_id: SERVER_ID, checksum: true };
    let mut builder = BinlogBuilder::magic_only(identity);
    let format = FormatDescription {
        binlog_version: 4,
        server_version: "10.11.6-MariaDB-log".to_string(),
        create_timestamp: TIMESTAMP,
        common_header_length: 19,
        post_header_lengths: mariadb_post_header_lengths(),
        checksum_alg: 1,
    };
    builder.push(&Event::FormatDescription(format), LOG_EVENT_BINLOG_IN_USE_F);
    let mut gtid_list = 1u32.to_le_bytes().to_vec();
    gtid_list.extend_from_slice(&mariadb::DOMAIN_ID.to_le_bytes());
    gtid_list.extend_from_slice(&SERVER_ID.to_le_bytes());
    gtid_list.extend_from_slice(&4u64.to_le_bytes());
    builder.push(&Event::Unknown { event_type: mariadb::GTID_LIST, body: gtid_list }, 0);
    let name = b"mariadb-bin.000001";
    let mut checkpoint = (name.len() as u32).to_le_bytes().to_vec();
    checkpoint.extend_from_slice(name);
    builder.push(&Event::Unknown { event_type: mariadb::BINLOG_CHECKPOINT, body: checkpoint }, 0);

    let ddl = mariadb_gtid_body(5, mariadb::FL_STANDALONE | mariadb::FL_DDL);
    builder.push(&Event::Unknown { event_type: mariadb::GTID, body: ddl }, 0);
    builder.push(&Event::Query(QueryEvent::new(11, "shop", "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))")), 0);

    let transaction = mariadb_gtid_body(6, mariadb::FL_TRANSACTIONAL | mariadb::FL_ALLOW_PARALLEL);
    builder.push(&Event::Unknown { event_type: mariadb::GTID, body: transaction }, 0);
    let statement = b"INSERT INTO items VALUES (1, 'apple')".to_vec();
    builder.push(&Event::Unknown { event_type: mariadb::ANNOTATE_ROWS, body: statement }, 0);
    let table = items_table();
    let rows = RowsEvent::write(TABLE_ID, &table, &[item(1, "apple", "1.50", None, 3)]).unwrap();
    builder.push(&Event::TableMap(table), 0);
    builder.push(&Event::WriteRows(rows), 0);
    builder.push(&Event::Xid(XidEvent { xid: 77 }), 0);
    builder.rotate("mariadb-bin.000002");
    builder
}
