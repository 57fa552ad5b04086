//! `binlogd inspect` on the real files of `mysql_common`'s test data (the
//! format crate's `tests/data/mysql_common/`, see its README): every row
//! of every rows event, those inside a Transaction_payload too, is printed,
//! and a copy cut inside an event fails with the file and that event's
//! offset.

mod inspect_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use binlog_format::events::{RowChange, TableMap};
use binlog_format::file::EventStream;
use binlog_format::Event;
use inspect_support::*;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../format/tests/data/mysql_common");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 30, "the corpus is in {}", dir.display());
    files
}

/// Adds the rows of a rows event to (inserts, updates, deletes).
fn count_rows(event: Event, maps: &mut HashMap<u64, TableMap>, counts: &mut [usize; 3]) {
    match event.into_uncompressed() {
        Event::TableMap(map) => {
            maps.insert(map.table_id, map);
        }
        Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
            for change in rows.decode_rows(&maps[&rows.table_id]).unwrap() {
                counts[match change {
                    RowChange::Write(_) => 0,
                    RowChange::Update { .. } => 1,
                    RowChange::Delete(_) => 2,
                }] += 1;
            }
        }
        Event::PartialUpdateRows(rows) => counts[1] += rows.decode_rows(&maps[&rows.rows.table_id]).unwrap().len(),
        _ => {}
    }
}

/// Rows binlogd decodes from `bytes`, as (inserts, updates, deletes), and
/// the offset of every event.
fn rows_and_offsets(bytes: &[u8]) -> ([usize; 3], Vec<u64>) {
    let mut stream = EventStream::new(bytes).unwrap();
    let context = stream.context().clone();
    let mut maps = HashMap::new();
    let mut counts = [0; 3];
    let mut offsets = Vec::new();
    for next in stream.by_ref() {
        let (offset, _, event) = next.unwrap();
        offsets.push(offset);
        if let Event::TransactionPayload(payload) = event {
            for inner in payload.events(&context).unwrap() {
                count_rows(inner.event, &mut maps, &mut counts);
            }
        } else {
            count_rows(event, &mut maps, &mut counts);
        }
    }
    (counts, offsets)
}

#[test]
fn inspect_prints_every_row_of_every_corpus_file() {
    let mut total = 0;
    for path in corpus() {
        let bytes = std::fs::read(&path).unwrap();
        let ([inserts, updates, deletes], _) = rows_and_offsets(&bytes);
        let output = inspect(&[], &[&path]);
        assert_succeeded(&output, &path.display().to_string());
        let text = stdout(&output);
        let printed = |prefix: &str| text.lines().filter(|line| line.starts_with(prefix)).count();
        assert_eq!(
            [printed("### INSERT INTO "), printed("### UPDATE "), printed("### DELETE FROM ")],
            [inserts, updates, deletes],
            "{}:\n{text}",
            path.display()
        );
        total += inserts + updates + deletes;
    }
    assert!(total >= 70, "the corpus holds {total} rows");
}

#[test]
fn a_copy_cut_inside_an_event_names_the_file_and_the_events_offset() {
    let dir = tempfile::tempdir().unwrap();
    for path in corpus() {
        let bytes = std::fs::read(&path).unwrap();
        let (_, offsets) = rows_and_offsets(&bytes);
        let copy = dir.path().join(path.file_name().unwrap());
        // Cut each event after its header's first byte and one byte
        // before its end; the first event (the Format_description) too.
        for (index, &start) in offsets.iter().enumerate() {
            let end = offsets.get(index + 1).copied().unwrap_or(bytes.len() as u64);
            for length in [start + 1, end - 1] {
                std::fs::write(&copy, &bytes[..length as usize]).unwrap();
                let output = inspect(&[], &[&copy]);
                let context = format!("{} cut to {length} bytes", path.display());
                assert_failed_cleanly(&output, &context);
                let expected = format!("binlogd inspect: {}: truncated event at offset {start} (file ends at {length})", copy.display());
                assert!(stderr(&output).contains(&expected), "{context}: expected {expected:?} in {}", stderr(&output));
            }
        }
    }
}
