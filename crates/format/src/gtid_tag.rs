//! GTID tags (MySQL 8.3+): the `tag` of `uuid:tag:N`, 1-32 characters of
//! `[a-z_][a-z0-9_]*`, accepted in any case and kept lower-case.

use std::fmt;
use std::str::FromStr;

use crate::error::DecodeError;

/// Longest tag MySQL accepts, in characters.
pub const TAG_MAX_LENGTH: usize = 32;

/// A GTID tag, or the empty tag of an untagged GTID. Fixed-size so that
/// [`crate::Gtid`] stays `Copy`. The bytes come first and are zero-padded,
/// so the derived order is the order of the tag strings, empty first, as
/// MySQL orders a UUID's untagged GTIDs before its tagged ones.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tag {
    bytes: [u8; TAG_MAX_LENGTH],
    length: u8,
}

impl Tag {
    /// The empty tag: an untagged GTID's.
    pub const NONE: Tag = Tag { bytes: [0; TAG_MAX_LENGTH], length: 0 };

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII letters, digits and '_' are ever stored.
        std::str::from_utf8(&self.bytes[..self.length as usize]).unwrap_or_default()
    }

    /// A tag as stored in an event: already lower-case, so anything else
    /// is an error rather than folded.
    pub fn from_stored(bytes: &[u8]) -> Result<Tag, DecodeError> {
        let text = std::str::from_utf8(bytes).map_err(|_| DecodeError::invalid("gtid tag", "not UTF-8"))?;
        let tag: Tag = text.parse()?;
        if tag.as_str() != text {
            return Err(DecodeError::invalid("gtid tag", format!("{text:?} is not lower-case")));
        }
        Ok(tag)
    }
}

impl FromStr for Tag {
    type Err = DecodeError;
    /// Parses a non-empty tag, folding it to lower case as MySQL does.
    fn from_str(text: &str) -> Result<Tag, DecodeError> {
        let bad = || DecodeError::invalid("gtid tag", format!("{text:?} is not a tag ([a-z_][a-z0-9_]*, 1-32 characters)"));
        let bytes = text.as_bytes();
        let valid_first = bytes.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        let valid_rest = bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if !valid_first || !valid_rest || bytes.len() > TAG_MAX_LENGTH {
            return Err(bad());
        }
        let mut tag = Tag { bytes: [0; TAG_MAX_LENGTH], length: bytes.len() as u8 };
        for (slot, byte) in tag.bytes.iter_mut().zip(bytes) {
            *slot = byte.to_ascii_lowercase();
        }
        Ok(tag)
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({:?})", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_fold_to_lower_case_and_reject_what_mysql_rejects() {
        assert_eq!("Domain_1".parse::<Tag>().unwrap().as_str(), "domain_1");
        assert_eq!("_x".parse::<Tag>().unwrap().as_str(), "_x");
        assert_eq!("a".repeat(32).parse::<Tag>().unwrap().as_str().len(), 32);
        for bad in ["", "1abc", "a-b", "a b", "é", &"a".repeat(33)] {
            assert!(bad.parse::<Tag>().is_err(), "{bad:?} accepted");
        }
        assert!(Tag::from_stored(b"Abc").is_err());
        assert_eq!(Tag::from_stored(b"abc").unwrap(), "abc".parse().unwrap());
    }

    #[test]
    fn tags_order_as_their_strings_with_the_empty_tag_first() {
        let mut tags: Vec<Tag> = ["b", "a_", "a", "ab"].iter().map(|t| t.parse().unwrap()).collect();
        tags.push(Tag::NONE);
        tags.sort();
        let names: Vec<&str> = tags.iter().map(Tag::as_str).collect();
        assert_eq!(names, ["", "a", "a_", "ab", "b"]);
    }
}
