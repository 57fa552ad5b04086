//! `binlogd inspect` on damaged files: flipped bits, truncation at every
//! offset, wrong magic, impossible lengths. Each must give exit status 1,
//! an error naming the file and the offset, the good events before it on
//! stdout, and never a panic.

mod inspect_support;

use std::path::Path;

use binlog_format::constants::{BINLOG_MAGIC_LENGTH, EVENT_SIZE_OFFSET, FLAGS_OFFSET, LOG_EVENT_BINLOG_IN_USE_F};
use inspect_support::*;

/// Offset of the event that contains byte `position` (0 for the magic).
fn event_containing(events: &[(u64, u8)], position: u64) -> u64 {
    if position < BINLOG_MAGIC_LENGTH as u64 {
        return 0;
    }
    events.iter().rev().map(|&(offset, _)| offset).find(|&offset| offset <= position).unwrap()
}

fn assert_good_events_printed(text: &str, events: &[(u64, u8)], bad_event: u64) {
    for &(offset, _) in events.iter().filter(|&&(offset, _)| offset < bad_event) {
        assert!(text.contains(&format!("\n# at {offset}\n")), "event at {offset} before the damage at {bad_event} not printed:\n{text}");
    }
}

#[test]
fn every_single_bit_flip_is_reported_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let events = &sample.builder.events;
    let length = sample.builder.bytes.len() as u64;
    let path = dir.path().join("binlog.000001");
    let mut random = XorShift(0x5eed_0001);
    // The FDE's checksum is computed with the in-use flag cleared (so that
    // recovery can clear it in place): that one bit is not protected.
    let in_use_bit = (BINLOG_MAGIC_LENGTH + FLAGS_OFFSET) as u64;
    let mut cases = 0;
    while cases < 150 {
        let position = random.below(length);
        let bit = random.below(8) as u8;
        if position == in_use_bit && 1 << bit == LOG_EVENT_BINLOG_IN_USE_F as u8 {
            continue;
        }
        cases += 1;
        let mut bytes = sample.builder.bytes.clone();
        bytes[position as usize] ^= 1 << bit;
        std::fs::write(&path, &bytes).unwrap();
        let context = format!("bit {bit} of byte {position} (seed 0x5eed_0001, case {cases})");
        let output = inspect(&[], &[&path]);
        assert_failed_cleanly(&output, &context);
        let errors = stderr(&output);
        let bad_event = event_containing(events, position);
        assert!(errors.contains(&format!("binlogd inspect: {}: ", path.display())), "{context}: {errors}");
        // A flip inside the Format_description event can turn checksums off
        // (algorithm byte 1 -> 0): the error then shows at a later event.
        if bad_event != BINLOG_MAGIC_LENGTH as u64 {
            assert!(errors.contains(&format!("at offset {bad_event}")), "{context}: expected offset {bad_event} in {errors}");
        } else {
            assert!(errors.contains("at offset "), "{context}: {errors}");
        }
        assert_good_events_printed(&stdout(&output), events, bad_event);
    }
}

#[test]
fn truncation_at_every_offset_is_clean_or_reported() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let events = &sample.builder.events;
    let path = dir.path().join("binlog.000001");
    for length in 0..sample.builder.bytes.len() as u64 {
        std::fs::write(&path, &sample.builder.bytes[..length as usize]).unwrap();
        let output = inspect(&["--json"], &[&path]);
        let context = format!("file cut to {length} bytes");
        let at_boundary = length == BINLOG_MAGIC_LENGTH as u64 || events.iter().any(|&(offset, _)| offset == length);
        if at_boundary {
            assert_succeeded(&output, &context);
            let printed = stdout(&output).lines().count();
            assert_eq!(printed, events.iter().filter(|&&(offset, _)| offset < length).count(), "{context}");
            continue;
        }
        assert_failed_cleanly(&output, &context);
        let errors = stderr(&output);
        if length < BINLOG_MAGIC_LENGTH as u64 {
            assert!(errors.contains("at offset 0: bad magic number"), "{context}: {errors}");
            assert!(errors.contains(&format!("the file is only {length} bytes long")), "{context}: {errors}");
            continue;
        }
        let torn = event_containing(events, length);
        let expected = format!("binlogd inspect: {}: truncated event at offset {torn} (file ends at {length})", path.display());
        assert!(errors.contains(&expected), "{context}: expected {expected:?} in {errors}");
        let printed = stdout(&output).lines().count();
        assert_eq!(printed, events.iter().filter(|&&(offset, _)| offset < torn).count(), "{context}");
    }
}

#[test]
fn wrong_magic_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = sample(true).builder.bytes;
    bytes[1] = b'B';
    let path = dir.path().join("binlog.000001");
    std::fs::write(&path, &bytes).unwrap();
    let output = inspect(&[], &[&path]);
    assert_failed_cleanly(&output, "wrong magic");
    let expected = format!(
        "binlogd inspect: {}: at offset 0: bad magic number [fe, 42, 69, 6e], expected fe 62 69 6e: not a binlog file",
        path.display()
    );
    assert!(stderr(&output).contains(&expected), "{}", stderr(&output));
}

fn with_event_size(bytes: &[u8], event_offset: u64, event_size: u32) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    let at = event_offset as usize + EVENT_SIZE_OFFSET;
    bytes[at..at + 4].copy_from_slice(&event_size.to_le_bytes());
    bytes
}

#[test]
fn impossible_event_sizes_are_reported_without_allocating_them() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let xid = sample.xid_offset;
    let length = sample.builder.bytes.len();
    let path = dir.path().join("binlog.000001");
    let cases = [
        (u32::MAX, format!("at offset {xid}: event length 4294967295 is impossible (larger than the 1 GiB event size limit)")),
        (0x4000_0001, format!("at offset {xid}: event length 1073741825 is impossible (larger than the 1 GiB event size limit)")),
        (512 << 20, format!("truncated event at offset {xid} (file ends at {length})")),
        (5, format!("at offset {xid}: event length 5 is impossible (shorter than the common header and checksum)")),
        (0, format!("at offset {xid}: event length 0 is impossible")),
        (22, format!("at offset {xid}: event length 22 is impossible")),
    ];
    for (event_size, expected) in cases {
        std::fs::write(&path, with_event_size(&sample.builder.bytes, xid, event_size)).unwrap();
        let context = format!("event_size {event_size}");
        let output = inspect(&[], &[&path]);
        assert_failed_cleanly(&output, &context);
        assert!(stderr(&output).contains(&expected), "{context}: expected {expected:?} in {}", stderr(&output));
        assert_good_events_printed(&stdout(&output), &sample.builder.events, xid);
        assert!(!stdout(&output).contains("Xid = 102"));
    }
}

#[test]
fn a_bad_checksum_names_both_values() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let mut bytes = sample.builder.bytes.clone();
    // The last byte of the Xid's body: its xid value.
    let xid_end = sample.xid_offset as usize + 19 + 8;
    bytes[xid_end - 1] ^= 0x80;
    let path = dir.path().join("binlog.000001");
    std::fs::write(&path, &bytes).unwrap();
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "bad checksum");
    let errors = stderr(&output);
    let stored = u32::from_le_bytes(bytes[xid_end..xid_end + 4].try_into().unwrap());
    let expected = format!(
        "binlogd inspect: {}: at offset {}: checksum mismatch: stored {stored:#010x}, computed 0x",
        path.display(),
        sample.xid_offset
    );
    assert!(errors.contains(&expected), "expected {expected:?} in {errors}");
}

#[test]
fn unreadable_paths_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-binlog.000001");
    let output = inspect(&[], &[&missing]);
    assert_failed_cleanly(&output, "missing file");
    assert!(stderr(&output).contains(&format!("binlogd inspect: {}: cannot read: ", missing.display())), "{}", stderr(&output));
    let output = inspect(&[], &[dir.path()]);
    assert_failed_cleanly(&output, "a directory");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let output = inspect(&[], &[Path::new(&empty)]);
    assert_failed_cleanly(&output, "an empty file");
    assert!(stderr(&output).contains("the file is only 0 bytes long"), "{}", stderr(&output));
}
