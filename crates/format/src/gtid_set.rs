//! GTIDs (`server_uuid:N`) and GTID sets (`uuid:1-5:7,uuid2:1-3`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// A version-4 style UUID from 16 random bytes.
    pub fn from_random_bytes(mut bytes: [u8; 16]) -> Uuid {
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        Uuid(bytes)
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for Uuid {
    type Err = DecodeError;
    fn from_str(text: &str) -> Result<Uuid, DecodeError> {
        let hex: Vec<u8> = text.bytes().filter(|&b| b != b'-').collect();
        let dashes = text.len() - hex.len();
        if hex.len() != 32 || !(dashes == 0 || dashes == 4) {
            return Err(DecodeError::invalid("uuid", format!("{text:?} is not a UUID")));
        }
        let mut bytes = [0u8; 16];
        for (index, pair) in hex.chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).unwrap_or("zz");
            bytes[index] = u8::from_str_radix(pair, 16).map_err(|_| DecodeError::invalid("uuid", format!("{text:?} is not a UUID")))?;
        }
        Ok(Uuid(bytes))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gtid {
    pub uuid: Uuid,
    /// Transaction number, 1-based.
    pub gno: u64,
}

impl fmt::Display for Gtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.uuid, self.gno)
    }
}

/// A set of GTIDs as sorted, disjoint, non-adjacent half-open intervals
/// `[start, end)` per UUID, which is how Previous_gtids stores them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GtidSet {
    intervals: BTreeMap<Uuid, Vec<(u64, u64)>>,
}

impl GtidSet {
    pub fn new() -> GtidSet {
        GtidSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    pub fn contains(&self, gtid: &Gtid) -> bool {
        self.intervals.get(&gtid.uuid).is_some_and(|list| {
            let index = list.partition_point(|&(_, end)| end <= gtid.gno);
            list.get(index).is_some_and(|&(start, _)| start <= gtid.gno)
        })
    }

    pub fn add(&mut self, gtid: Gtid) {
        self.add_interval(gtid.uuid, gtid.gno, gtid.gno + 1);
    }

    /// Adds `[start, end)` for `uuid`, merging with neighbours.
    pub fn add_interval(&mut self, uuid: Uuid, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let list = self.intervals.entry(uuid).or_default();
        // First interval that could touch [start, end): its end >= start.
        let first = list.partition_point(|&(_, e)| e < start);
        let mut last = first;
        let (mut merged_start, mut merged_end) = (start, end);
        while last < list.len() && list[last].0 <= end {
            merged_start = merged_start.min(list[last].0);
            merged_end = merged_end.max(list[last].1);
            last += 1;
        }
        list.splice(first..last, [(merged_start, merged_end)]);
    }

    pub fn union(&mut self, other: &GtidSet) {
        for (uuid, list) in &other.intervals {
            for &(start, end) in list {
                self.add_interval(*uuid, start, end);
            }
        }
    }

    /// True when every GTID of `self` is in `other`.
    pub fn is_subset_of(&self, other: &GtidSet) -> bool {
        self.intervals.iter().all(|(uuid, list)| {
            list.iter()
                .all(|&(start, end)| other.intervals.get(uuid).is_some_and(|theirs| theirs.iter().any(|&(s, e)| s <= start && end <= e)))
        })
    }

    /// Intervals per UUID, `[start, end)`.
    pub fn intervals(&self) -> impl Iterator<Item = (&Uuid, &[(u64, u64)])> {
        self.intervals.iter().map(|(uuid, list)| (uuid, list.as_slice()))
    }

    /// Highest transaction number recorded for `uuid` (0 when none).
    pub fn last_gno(&self, uuid: &Uuid) -> u64 {
        self.intervals.get(uuid).and_then(|l| l.last()).map_or(0, |&(_, end)| end - 1)
    }

    pub fn count(&self) -> u64 {
        self.intervals.values().flatten().map(|&(s, e)| e - s).sum()
    }

    /// The body of a Previous_gtids event: n_sids u64, then per UUID the
    /// 16 UUID bytes, n_intervals u64 and (start i64, end i64) pairs.
    pub fn encode_previous_gtids_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.intervals.len() as u64);
        for (uuid, list) in &self.intervals {
            out.put_slice(&uuid.0);
            out.put_u64(list.len() as u64);
            for &(start, end) in list {
                out.put_u64(start);
                out.put_u64(end);
            }
        }
    }

    pub fn decode_previous_gtids_body(body: &[u8]) -> Result<GtidSet, DecodeError> {
        let mut reader = ByteReader::new(body);
        let uuid_count = reader.u64("previous_gtids n_sids")?;
        // Each UUID takes at least 24 bytes: reject absurd counts up front.
        if uuid_count > (reader.remaining() / 24) as u64 {
            return Err(DecodeError::BadLength { length: uuid_count, reason: "n_sids exceeds body" });
        }
        let mut set = GtidSet::new();
        for _ in 0..uuid_count {
            let uuid = Uuid(reader.take(16, "previous_gtids uuid")?.try_into().unwrap());
            let interval_count = reader.u64("previous_gtids n_intervals")?;
            if interval_count > (reader.remaining() / 16) as u64 {
                return Err(DecodeError::BadLength { length: interval_count, reason: "n_intervals exceeds body" });
            }
            for _ in 0..interval_count {
                let start = reader.u64("previous_gtids interval start")?;
                let end = reader.u64("previous_gtids interval end")?;
                if start == 0 || start >= end {
                    return Err(DecodeError::invalid("previous_gtids interval", format!("[{start}, {end}) is empty or starts at 0")));
                }
                set.add_interval(uuid, start, end);
            }
        }
        reader.finish("previous_gtids body")?;
        Ok(set)
    }
}

impl fmt::Display for GtidSet {
    /// MySQL's text form: `uuid:1-5:7,uuid2:1-3` (no spaces; MySQL adds a
    /// newline after commas in some outputs, which readers accept either way).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (uuid, list)) in self.intervals.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{uuid}")?;
            for &(start, end) in list {
                if end - start == 1 {
                    write!(f, ":{start}")?;
                } else {
                    write!(f, ":{start}-{}", end - 1)?;
                }
            }
        }
        Ok(())
    }
}

impl FromStr for GtidSet {
    type Err = DecodeError;
    fn from_str(text: &str) -> Result<GtidSet, DecodeError> {
        let mut set = GtidSet::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut pieces = part.split(':');
            let uuid: Uuid = pieces.next().unwrap_or("").trim().parse()?;
            for range in pieces {
                let bad = || DecodeError::invalid("gtid set", format!("bad interval {range:?}"));
                let (start, end) = match range.split_once('-') {
                    Some((a, b)) => (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?),
                    None => {
                        let n = range.trim().parse::<u64>().map_err(|_| bad())?;
                        (n, n)
                    }
                };
                if start == 0 || end < start {
                    return Err(bad());
                }
                set.add_interval(uuid, start, end + 1);
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(n: u8) -> Uuid {
        Uuid([n; 16])
    }

    #[test]
    fn intervals_merge_and_print_like_mysql() {
        let mut set = GtidSet::new();
        for gno in [1, 2, 3, 5, 7, 6] {
            set.add(Gtid { uuid: uuid(1), gno });
        }
        assert_eq!(set.to_string(), "01010101-0101-0101-0101-010101010101:1-3:5-7");
        set.add(Gtid { uuid: uuid(1), gno: 4 });
        assert_eq!(set.to_string(), "01010101-0101-0101-0101-010101010101:1-7");
        assert!(set.contains(&Gtid { uuid: uuid(1), gno: 7 }));
        assert!(!set.contains(&Gtid { uuid: uuid(1), gno: 8 }));
        assert_eq!(set.to_string().parse::<GtidSet>().unwrap(), set);
    }

    #[test]
    fn previous_gtids_body_round_trips_and_rejects_absurd_counts() {
        let mut set = GtidSet::new();
        set.add_interval(uuid(1), 1, 10);
        set.add_interval(uuid(2), 3, 4);
        let mut body = Vec::new();
        set.encode_previous_gtids_body(&mut body);
        assert_eq!(GtidSet::decode_previous_gtids_body(&body).unwrap(), set);
        let mut absurd = body.clone();
        absurd[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(GtidSet::decode_previous_gtids_body(&absurd).is_err());
        assert!(GtidSet::decode_previous_gtids_body(&body[..body.len() - 1]).is_err());
    }
}
