//! Binlog coordinates in log order: files by the number after the last
//! dot (`binlog.000010` comes after `binlog.000009`), then offsets.

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPosition {
    pub file_name: String,
    pub position: u64,
}

impl LogPosition {
    pub fn new(file_name: &str, position: u64) -> LogPosition {
        LogPosition { file_name: file_name.to_string(), position }
    }

    fn file_number(&self) -> Option<u64> {
        self.file_name.rsplit_once('.').and_then(|(_, number)| number.parse().ok())
    }
}

impl Ord for LogPosition {
    fn cmp(&self, other: &Self) -> Ordering {
        let files = match (self.file_number(), other.file_number()) {
            (Some(ours), Some(theirs)) => ours.cmp(&theirs),
            _ => self.file_name.cmp(&other.file_name),
        };
        files.then(self.position.cmp(&other.position))
    }
}

impl PartialOrd for LogPosition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_files_come_after_any_offset_of_earlier_ones() {
        assert!(LogPosition::new("binlog.000010", 4) > LogPosition::new("binlog.000009", 1 << 40));
        assert!(LogPosition::new("binlog.000002", 900) > LogPosition::new("binlog.000002", 899));
        assert_eq!(LogPosition::new("binlog.000002", 5), LogPosition::new("binlog.000002", 5));
    }
}
