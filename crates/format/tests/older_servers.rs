//! The checksum algorithm is read from each file's Format_description,
//! never assumed: a file a MariaDB wrote with `binlog_checksum=NONE`, and a
//! MySQL 5.5 file whose Format_description predates the algorithm byte,
//! decode event by event as `mysql_common` decodes them; files of binlog
//! versions 1 and 3 are refused by their version, not as a bad checksum.

use binlog_format::constants::BINLOG_CHECKSUM_ALG_UNDEF;
use binlog_format::file::{EventStream, OffsetError};
use binlog_format::{DecodeError, Event, RowChange, RowsVersion};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::BinlogFile;
use testkit::older_servers::{mysql_55_file, mysql_55_rows, start_v3_file, MYSQL_55_VERSION};

const MARIADB_CHECKSUM_NONE: &[u8] = include_bytes!("data/mariadb-10.11-checksum-none.000002");

/// (offset, type, body) of every event as we frame it; a
/// Format_description's body is left out (`mysql_common` holds it without
/// its algorithm byte), its place and type kept.
fn our_frames(file: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
    EventStream::new(file)
        .unwrap()
        .map(|item| {
            let (offset, raw, _) = item.unwrap_or_else(|e| panic!("{e}"));
            let body = if raw.header.event_type == 15 { Vec::new() } else { raw.body.to_vec() };
            (offset, raw.header.event_type, body)
        })
        .collect()
}

/// The same as `mysql_common` frames and decodes the events: its offsets
/// are the sizes of the events before summed.
fn their_frames(file: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
    let binlog = BinlogFile::new(BinlogVersion::Version4, file).expect("mysql_common reads the magic");
    let mut frames = Vec::new();
    let mut offset = 4u64;
    for event in binlog {
        let event = event.unwrap_or_else(|e| panic!("mysql_common rejects the event at {offset}: {e}"));
        event.read_data().unwrap_or_else(|e| panic!("mysql_common cannot decode the event at {offset}: {e}"));
        let event_type = event.header().event_type_raw();
        let body = if event_type == 15 { Vec::new() } else { event.data().to_vec() };
        frames.push((offset, event_type, body));
        offset += u64::from(event.header().event_size());
    }
    frames
}

#[test]
fn a_mariadb_file_written_with_checksum_none_decodes_as_mysql_common_decodes_it() {
    let mut stream = EventStream::new(MARIADB_CHECKSUM_NONE).unwrap();
    let (_, _, first) = stream.next().unwrap().unwrap();
    let Event::FormatDescription(format) = first else { panic!("{first:?}") };
    assert_eq!(format.checksum_name(), "NONE");
    assert!(!stream.has_checksum());
    let rest: Vec<_> = stream.map(|item| item.unwrap_or_else(|e| panic!("{e}"))).collect();
    assert!(rest.iter().all(|(_, raw, _)| !raw.has_checksum));
    assert!(rest.iter().any(|(_, _, event)| matches!(event, Event::WriteRows(_))));
    assert_eq!(our_frames(MARIADB_CHECKSUM_NONE), their_frames(MARIADB_CHECKSUM_NONE));
}

#[test]
fn a_mysql_55_file_has_no_algorithm_byte_and_no_checksums_and_its_rows_v1_decode() {
    let file = mysql_55_file();
    let events: Vec<_> = EventStream::new(&file).unwrap().map(|item| item.unwrap_or_else(|e| panic!("{e}"))).collect();
    let Event::FormatDescription(format) = &events[0].2 else { panic!("{:?}", events[0].2) };
    assert_eq!(format.server_version, MYSQL_55_VERSION);
    assert_eq!(format.checksum_alg, BINLOG_CHECKSUM_ALG_UNDEF);
    assert_eq!(events[0].1.bytes.len(), 19 + 2 + 50 + 4 + 1 + 27, "no algorithm byte, no checksum");
    assert!(events.iter().all(|(_, raw, _)| !raw.has_checksum));
    let Event::TableMap(table) = &events[2].2 else { panic!("{:?}", events[2].2) };
    let Event::WriteRows(rows) = &events[3].2 else { panic!("{:?}", events[3].2) };
    assert_eq!(rows.version, RowsVersion::V1);
    let written: Vec<_> = rows
        .decode_rows(table)
        .unwrap()
        .into_iter()
        .map(|change| match change {
            RowChange::Write(row) => row,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(written, mysql_55_rows());
    assert!(matches!(events.last().unwrap().2, Event::Stop));
    assert_eq!(our_frames(&file), their_frames(&file));
}

#[test]
fn files_of_binlog_versions_1_and_3_are_refused_by_their_version() {
    for version in [1u16, 3] {
        let file = start_v3_file(version);
        let error = EventStream::new(&file).unwrap().next().unwrap().unwrap_err();
        assert_eq!(error, OffsetError { offset: 4, error: DecodeError::UnsupportedBinlogVersion { version } });
        assert!(error.to_string().contains(&format!("unsupported binlog version {version}")), "{error}");
    }
}

#[test]
fn a_format_description_naming_an_older_version_is_refused_by_that_version() {
    let mut file = mysql_55_file();
    file[4 + 19] = 3;
    let error = EventStream::new(&file).unwrap().next().unwrap().unwrap_err();
    assert_eq!(error.error, DecodeError::UnsupportedBinlogVersion { version: 3 });
}

#[test]
fn cut_or_flipped_copies_of_the_older_files_give_an_error_at_an_offset_never_a_panic() {
    for file in [mysql_55_file(), MARIADB_CHECKSUM_NONE.to_vec()] {
        let boundaries: Vec<u64> = our_frames(&file).iter().map(|frame| frame.0).collect();
        for cut in (5..file.len()).step_by(7).filter(|cut| !boundaries.contains(&(*cut as u64))) {
            let outcome: Result<Vec<_>, _> = EventStream::new(&file[..cut]).unwrap().collect();
            assert!(outcome.is_err(), "a copy cut at {cut} reads as whole");
        }
        for at in (4..file.len()).step_by(3) {
            let mut copy = file.clone();
            copy[at] ^= 0x5a;
            let _ = EventStream::new(&copy).unwrap().collect::<Result<Vec<_>, _>>();
        }
    }
}
