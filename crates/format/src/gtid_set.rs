//! GTIDs (`server_uuid:N`, tagged `server_uuid:tag:N`) and GTID sets
//! (`uuid:1-5:7:tag_a:1-2,uuid2:1-3`). Their binary form is in
//! [`crate::gtid_set_encoding`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::DecodeError;
pub use crate::gtid_tag::Tag;

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

/// A GTID source: the UUID and, for a tagged GTID, its tag (MySQL's
/// `Tsid`). Ordered by UUID, then tag, the untagged one first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tsid {
    pub uuid: Uuid,
    pub tag: Tag,
}

impl Tsid {
    pub fn untagged(uuid: Uuid) -> Tsid {
        Tsid { uuid, tag: Tag::NONE }
    }
}

impl fmt::Display for Tsid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uuid)?;
        if !self.tag.is_empty() {
            write!(f, ":{}", self.tag)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gtid {
    pub uuid: Uuid,
    /// Empty for an untagged GTID.
    pub tag: Tag,
    /// Transaction number, 1-based.
    pub gno: u64,
}

impl Gtid {
    /// An untagged GTID, `uuid:gno`.
    pub fn new(uuid: Uuid, gno: u64) -> Gtid {
        Gtid { uuid, tag: Tag::NONE, gno }
    }

    pub fn tagged(tsid: Tsid, gno: u64) -> Gtid {
        Gtid { uuid: tsid.uuid, tag: tsid.tag, gno }
    }

    pub fn tsid(&self) -> Tsid {
        Tsid { uuid: self.uuid, tag: self.tag }
    }

    pub fn is_tagged(&self) -> bool {
        !self.tag.is_empty()
    }
}

impl fmt::Display for Gtid {
    /// `uuid:N`, or `uuid:tag:N` for a tagged GTID.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.tsid(), self.gno)
    }
}

/// A set of GTIDs as sorted, disjoint, non-adjacent half-open intervals
/// `[start, end)` per UUID and tag, which is how Previous_gtids stores them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GtidSet {
    intervals: BTreeMap<Tsid, Vec<(u64, u64)>>,
}

impl GtidSet {
    pub fn new() -> GtidSet {
        GtidSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// True when some GTID of the set carries a tag.
    pub fn has_tags(&self) -> bool {
        self.intervals.keys().any(|tsid| !tsid.tag.is_empty())
    }

    pub fn contains(&self, gtid: &Gtid) -> bool {
        self.intervals.get(&gtid.tsid()).is_some_and(|list| {
            let index = list.partition_point(|&(_, end)| end <= gtid.gno);
            list.get(index).is_some_and(|&(start, _)| start <= gtid.gno)
        })
    }

    pub fn add(&mut self, gtid: Gtid) {
        self.add_tsid_interval(gtid.tsid(), gtid.gno, gtid.gno + 1);
    }

    /// Adds `[start, end)` of `uuid`'s untagged GTIDs, merging with neighbours.
    pub fn add_interval(&mut self, uuid: Uuid, start: u64, end: u64) {
        self.add_tsid_interval(Tsid::untagged(uuid), start, end);
    }

    /// Adds `[start, end)` for `tsid`, merging with neighbours.
    pub fn add_tsid_interval(&mut self, tsid: Tsid, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let list = self.intervals.entry(tsid).or_default();
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
        for (tsid, list) in &other.intervals {
            for &(start, end) in list {
                self.add_tsid_interval(*tsid, start, end);
            }
        }
    }

    /// The GTIDs of `self` not in `other`.
    pub fn subtract(&self, other: &GtidSet) -> GtidSet {
        let mut out = GtidSet::new();
        for (tsid, list) in &self.intervals {
            let theirs: &[(u64, u64)] = other.intervals.get(tsid).map_or(&[], Vec::as_slice);
            for &(start, end) in list {
                let mut at = start;
                for &(their_start, their_end) in theirs {
                    if their_end <= at || their_start >= end {
                        continue;
                    }
                    out.add_tsid_interval(*tsid, at, their_start.max(at));
                    at = their_end;
                }
                out.add_tsid_interval(*tsid, at, end);
            }
        }
        out
    }

    /// True when every GTID of `self` is in `other`.
    pub fn is_subset_of(&self, other: &GtidSet) -> bool {
        self.intervals.iter().all(|(tsid, list)| {
            list.iter()
                .all(|&(start, end)| other.intervals.get(tsid).is_some_and(|theirs| theirs.iter().any(|&(s, e)| s <= start && end <= e)))
        })
    }

    /// Intervals per UUID and tag, `[start, end)`.
    pub fn intervals(&self) -> impl Iterator<Item = (&Tsid, &[(u64, u64)])> {
        self.intervals.iter().map(|(tsid, list)| (tsid, list.as_slice()))
    }

    /// Highest number recorded for `uuid`'s untagged GTIDs (0 when none).
    pub fn last_gno(&self, uuid: &Uuid) -> u64 {
        self.last_tsid_gno(&Tsid::untagged(*uuid))
    }

    /// Highest number recorded for `tsid` (0 when none).
    pub fn last_tsid_gno(&self, tsid: &Tsid) -> u64 {
        self.intervals.get(tsid).and_then(|l| l.last()).map_or(0, |&(_, end)| end - 1)
    }

    pub fn count(&self) -> u64 {
        self.intervals.values().flatten().map(|&(s, e)| e - s).sum()
    }
}

impl fmt::Display for GtidSet {
    /// MySQL's text form (`Gtid_set::to_string`): `uuid:1-5:7:tag_a:1-3,uuid2:1-3`,
    /// per UUID its untagged intervals first, then each tag in order with
    /// its intervals (no spaces; MySQL adds a newline after commas in some
    /// outputs, which readers accept either way).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut previous_uuid = None;
        for (tsid, list) in &self.intervals {
            if previous_uuid != Some(tsid.uuid) {
                if previous_uuid.is_some() {
                    f.write_str(",")?;
                }
                write!(f, "{}", tsid.uuid)?;
                previous_uuid = Some(tsid.uuid);
            }
            if !tsid.tag.is_empty() {
                write!(f, ":{}", tsid.tag)?;
            }
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
    /// MySQL's text form: after each UUID, colon-separated intervals and
    /// tags, a tag applying to the intervals after it. A tag must be
    /// followed by an interval.
    fn from_str(text: &str) -> Result<GtidSet, DecodeError> {
        let mut set = GtidSet::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut pieces = part.split(':');
            let uuid: Uuid = pieces.next().unwrap_or("").trim().parse()?;
            let mut tsid = Tsid::untagged(uuid);
            let mut tag_awaits_interval = false;
            for piece in pieces.map(str::trim) {
                let bad = || DecodeError::invalid("gtid set", format!("bad interval {piece:?}"));
                if piece.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    if tag_awaits_interval {
                        return Err(bad());
                    }
                    tsid.tag = piece.parse()?;
                    tag_awaits_interval = true;
                    continue;
                }
                let (start, end) = match piece.split_once('-') {
                    Some((a, b)) => (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?),
                    None => {
                        let n = piece.parse::<u64>().map_err(|_| bad())?;
                        (n, n)
                    }
                };
                if start == 0 || end < start || end >= i64::MAX as u64 {
                    return Err(bad());
                }
                set.add_tsid_interval(tsid, start, end + 1);
                tag_awaits_interval = false;
            }
            if tag_awaits_interval {
                return Err(DecodeError::invalid("gtid set", format!("tag without an interval in {part:?}")));
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
            set.add(Gtid::new(uuid(1), gno));
        }
        assert_eq!(set.to_string(), "01010101-0101-0101-0101-010101010101:1-3:5-7");
        set.add(Gtid::new(uuid(1), 4));
        assert_eq!(set.to_string(), "01010101-0101-0101-0101-010101010101:1-7");
        assert!(set.contains(&Gtid::new(uuid(1), 7)));
        assert!(!set.contains(&Gtid::new(uuid(1), 8)));
        assert_eq!(set.to_string().parse::<GtidSet>().unwrap(), set);
    }

    #[test]
    fn tagged_sets_print_untagged_intervals_first_then_tags_in_order() {
        let text = "01010101-0101-0101-0101-010101010101:Zeta:4:alpha:7, 02020202-0202-0202-0202-020202020202:b:1,01010101-0101-0101-0101-010101010101:1-2";
        let set: GtidSet = text.parse().unwrap();
        assert_eq!(set.to_string(), "01010101-0101-0101-0101-010101010101:1-2:alpha:7:zeta:4,02020202-0202-0202-0202-020202020202:b:1");
        assert_eq!(set.to_string().parse::<GtidSet>().unwrap(), set);
        let alpha = Tsid { uuid: uuid(1), tag: "alpha".parse().unwrap() };
        assert!(set.contains(&Gtid::tagged(alpha, 7)));
        assert!(!set.contains(&Gtid::new(uuid(1), 7)));
        assert!(set.has_tags());
        assert_eq!(set.last_gno(&uuid(1)), 2);
        assert_eq!(set.last_tsid_gno(&alpha), 7);
        for bad in [
            "01010101-0101-0101-0101-010101010101:a",
            "01010101-0101-0101-0101-010101010101:a:b:1",
            "01010101-0101-0101-0101-010101010101:1a:1",
            "01010101-0101-0101-0101-010101010101:a-b:1",
        ] {
            assert!(bad.parse::<GtidSet>().is_err(), "{bad}");
        }
    }

    #[test]
    fn union_and_subtract_keep_tags_apart() {
        let a: GtidSet = "01010101-0101-0101-0101-010101010101:1-10:t:1-10".parse().unwrap();
        let b: GtidSet = "01010101-0101-0101-0101-010101010101:3-4:t:5-20:u:1".parse().unwrap();
        assert_eq!(a.subtract(&b).to_string(), "01010101-0101-0101-0101-010101010101:1-2:5-10:t:1-4");
        let mut union = a.clone();
        union.union(&b);
        assert_eq!(union.to_string(), "01010101-0101-0101-0101-010101010101:1-10:t:1-20:u:1");
        assert!(a.is_subset_of(&union) && b.is_subset_of(&union) && !union.is_subset_of(&a));
    }
}
