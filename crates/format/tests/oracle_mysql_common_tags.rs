//! Tagged GTIDs (MySQL 8.3+) against `mysql_common`, the oracle: it decodes
//! the Gtid_tagged_log_event and tagged Previous_gtids binlogd writes to the
//! same GTIDs, binlogd decodes what it encodes, and a file MySQL 9.6 wrote
//! (from `mysql_common`'s test data, see `data/README.md`) decodes and
//! re-encodes byte for byte.

mod common;

use binlog_format::events::GtidEvent;
use binlog_format::file::EventStream;
use binlog_format::{Event, EventType, Gtid, GtidSet, Tsid, Uuid};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, GtidEvent as TheirGtid, PreviousGtidsEvent, PreviousGtidsSid};
use mysql_common::binlog::BinlogFile;
use mysql_common::packets::{GnoInterval, Tag as TheirTag};
use mysql_common::proto::MySerialize;
use testkit::BinlogBuilder;

const UUID: Uuid = Uuid([0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62]);

fn tsid(tag: &str) -> Tsid {
    Tsid { uuid: UUID, tag: tag.parse().unwrap() }
}

fn gtid_event(gtid: Gtid, original: Option<u64>) -> GtidEvent {
    GtidEvent {
        flags: 1,
        gtid,
        last_committed: 4,
        sequence_number: 5,
        immediate_commit_timestamp_us: 1_716_459_362_123_456,
        original_commit_timestamp_us: original,
        transaction_length: 0,
        immediate_server_version: 80400,
        original_server_version: None,
        commit_group_ticket: None,
        layout: binlog_format::events::gtid::GtidLayout::ServerVersions,
    }
}

/// (uuid, tag, [(start, end)]) of each source `mysql_common` reads.
type TheirSources = Vec<([u8; 16], Option<String>, Vec<(u64, u64)>)>;

fn their_sources(event: &PreviousGtidsEvent<'_>) -> TheirSources {
    event
        .sids()
        .iter()
        .map(|sid| {
            let intervals = sid.intervals().iter().map(|i| (i.start(), i.end())).collect();
            (sid.uuid(), sid.tag().map(|t| t.as_str().to_owned()), intervals)
        })
        .collect()
}

fn our_sources(set: &GtidSet) -> TheirSources {
    set.intervals().map(|(tsid, list)| (tsid.uuid.0, (!tsid.tag.is_empty()).then(|| tsid.tag.to_string()), list.to_vec())).collect()
}

#[test]
fn mysql_common_decodes_the_tagged_events_binlogd_writes() {
    let previous: GtidSet = format!("{UUID}:1-13:mytag:1-2:other:5").parse().unwrap();
    let mut file = BinlogBuilder::new(true, &previous);
    let tagged = gtid_event(Gtid::tagged(tsid("mytag"), 3), Some(1_716_459_000_000_000));
    let untagged = gtid_event(Gtid::new(UUID, 14), None);
    for (gtid, xid) in [(&tagged, 1), (&untagged, 2)] {
        file.push(&Event::Gtid(gtid.clone()), 0);
        file.push(&common::begin(), 0);
        file.push(&common::xid(xid), 0);
    }
    let types: Vec<u8> = file.events.iter().map(|&(_, event_type)| event_type).collect();
    assert_eq!(types[2], EventType::GtidTagged as u8);
    assert_eq!(types[5], EventType::Gtid as u8);

    let binlog = BinlogFile::new(BinlogVersion::Version4, &file.bytes[..]).unwrap();
    let mut theirs_previous = None;
    let mut theirs_gtids = Vec::new();
    for event in binlog {
        let event = event.expect("mysql_common reads the event");
        match event.read_data().expect("mysql_common decodes the event") {
            Some(EventData::PreviousGtidsEvent(event)) => theirs_previous = Some(their_sources(&event)),
            Some(EventData::GtidEvent(event)) => theirs_gtids.push(event),
            _ => {}
        }
    }
    assert_eq!(theirs_previous.expect("a Previous_gtids"), our_sources(&previous));
    assert_eq!(theirs_gtids.len(), 2);
    for (theirs, ours) in theirs_gtids.iter().zip([&tagged, &untagged]) {
        assert_eq!(theirs.is_tagged(), ours.gtid.is_tagged());
        assert_eq!(theirs.tag().map(|t| t.as_str().to_owned()), (ours.gtid.is_tagged()).then(|| ours.gtid.tag.to_string()));
        assert_eq!(theirs.sid(), ours.gtid.uuid.0);
        assert_eq!(theirs.gno(), ours.gtid.gno);
        assert_eq!(theirs.flags_raw(), ours.flags);
        assert_eq!(theirs.last_committed(), ours.last_committed as u64);
        assert_eq!(theirs.sequence_number(), ours.sequence_number as u64);
        assert_eq!(theirs.immediate_commit_timestamp(), ours.immediate_commit_timestamp_us);
        assert_eq!(theirs.original_commit_timestamp(), ours.original_commit_timestamp());
        assert_eq!(theirs.immediate_server_version(), ours.immediate_server_version);
        assert_eq!(theirs.original_server_version(), ours.immediate_server_version);
        assert_eq!(theirs.tx_length(), ours.transaction_length);
    }
}

#[test]
fn binlogd_decodes_what_mysql_common_encodes() {
    let tag = TheirTag::new("domain_1").unwrap();
    let theirs = TheirGtid::new_tagged(UUID.0, tag.clone(), 42)
        .with_last_committed(10)
        .with_sequence_number(11)
        .with_immediate_commit_timestamp(2_000_000)
        .with_original_commit_timestamp(1_000_000)
        .with_tx_length(256)
        .with_immediate_server_version(80400)
        .with_original_server_version(80300)
        .with_commit_group_ticket(9);
    let mut body = Vec::new();
    theirs.serialize(&mut body);
    let ours = GtidEvent::decode_tagged_body(&body).unwrap();
    assert_eq!(ours.gtid.to_string(), format!("{UUID}:domain_1:42"));
    assert_eq!((ours.last_committed, ours.sequence_number), (10, 11));
    assert_eq!((ours.immediate_commit_timestamp_us, ours.original_commit_timestamp_us), (2_000_000, Some(1_000_000)));
    assert_eq!(ours.transaction_length, 256);
    assert_eq!((ours.immediate_server_version, ours.original_server_version), (80400, Some(80300)));
    assert_eq!(ours.commit_group_ticket, Some(9));
    let mut again = Vec::new();
    ours.encode_body(&mut again);
    assert_eq!(again, body, "binlogd re-encodes mysql_common's bytes");

    let previous = PreviousGtidsEvent::new(vec![
        PreviousGtidsSid::new(UUID.0, None, vec![GnoInterval::new(1, 14)]),
        PreviousGtidsSid::new(UUID.0, Some(tag), vec![GnoInterval::new(1, 3), GnoInterval::new(5, 6)]),
    ]);
    let mut body = Vec::new();
    previous.serialize(&mut body);
    let set = GtidSet::decode_previous_gtids_body(&body).unwrap();
    assert_eq!(set.to_string(), format!("{UUID}:1-13:domain_1:1-2:5"));
    let mut again = Vec::new();
    set.encode_previous_gtids_body(&mut again);
    assert_eq!(again, body);
}

#[test]
fn a_tagged_file_mysql_wrote_decodes_and_re_encodes_byte_for_byte() {
    let file: &[u8] = include_bytes!("data/mysql-9.6-gtid-tagged.000001");
    let mut stream = EventStream::new(file).unwrap();
    let mut ours = Vec::new();
    for next in stream.by_ref() {
        let (offset, raw, event) = next.unwrap_or_else(|error| panic!("{error:?}"));
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(body, raw.body, "{} at {offset} re-encodes to other bytes", event.type_name());
        assert_eq!(event.event_type(), raw.header.event_type, "at {offset}");
        ours.push(event);
    }
    assert_eq!(stream.offset(), file.len() as u64, "every byte is an event");
    let previous = ours.iter().find_map(|e| if let Event::PreviousGtids(set) = e { Some(set) } else { None }).unwrap();
    assert_eq!(previous.to_string(), "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2");
    let gtids: Vec<String> = ours.iter().filter_map(|e| if let Event::Gtid(g) = e { Some(g.gtid.to_string()) } else { None }).collect();
    assert_eq!(gtids, ["55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3"]);

    let binlog = BinlogFile::new(BinlogVersion::Version4, file).unwrap();
    let mut their_gtid = None;
    let mut their_previous = None;
    for event in binlog {
        match event.unwrap().read_data().unwrap() {
            Some(EventData::GtidEvent(event)) => their_gtid = Some(event),
            Some(EventData::PreviousGtidsEvent(event)) => their_previous = Some(their_sources(&event)),
            _ => {}
        }
    }
    assert_eq!(their_previous.unwrap(), our_sources(previous));
    let (their_gtid, our_gtid) =
        (their_gtid.unwrap(), ours.iter().find_map(|e| if let Event::Gtid(g) = e { Some(g) } else { None }).unwrap());
    assert_eq!(their_gtid.tx_length(), our_gtid.transaction_length);
    assert_eq!(their_gtid.immediate_commit_timestamp(), our_gtid.immediate_commit_timestamp_us);
    assert_eq!(their_gtid.sequence_number(), our_gtid.sequence_number as u64);
}

#[test]
fn an_untagged_previous_gtids_of_mysql_8_0_reads_as_before() {
    let file: &[u8] = include_bytes!("data/mysql-8.0-previous-gtids-no-tag.000001");
    let events: Vec<Event> = EventStream::new(file).unwrap().map(|next| next.unwrap().2).collect();
    let previous = events.iter().find_map(|e| if let Event::PreviousGtids(set) = e { Some(set) } else { None }).unwrap();
    assert!(!previous.is_empty() && !previous.has_tags(), "{previous}");
    let mut body = Vec::new();
    previous.encode_previous_gtids_body(&mut body);
    assert_eq!(body[..8], (previous.intervals().count() as u64).to_le_bytes(), "the untagged format");
}
