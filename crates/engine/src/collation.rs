//! How a character column's collation compares text: the order of
//! `WHERE`, `ORDER BY`, `GROUP BY` and `DISTINCT`, and what a unique key
//! counts as the same value. Every collation maps text to a sequence of
//! weights; two texts compare as their weight sequences, and a key stores
//! the weights (see [`crate::key`]), so an index orders and deduplicates
//! exactly as [`Collation::compare`] does.
//!
//! | collations (ids) | weights | trailing spaces |
//! |------------------|---------|-----------------|
//! | `binary` (63), `utf8mb4_0900_bin` (309) | the bytes | significant (NO PAD) |
//! | `utf8mb4_bin` (46), `latin1_bin` (47), `ascii_bin` (65), `utf8mb3_bin` (83) | the bytes | ignored (PAD SPACE) |
//! | `utf8mb4_general_ci` (45), `utf8mb3_general_ci` (33), `latin1_swedish_ci` (8), `ascii_general_ci` (11) | one per character: its base letter upper-cased; `ß` weighs as `S`; above U+FFFF, U+FFFD | ignored |
//! | `utf8mb4_unicode_ci` (224), `utf8mb3_unicode_ci` (192) | Unicode primary weights (below) | ignored |
//! | `utf8mb4_0900_ai_ci` (255) | Unicode primary weights | significant |
//! | `utf8mb4_0900_as_cs` (305) | primary weights, then the characters themselves | significant |
//!
//! Primary weights follow the Unicode Collation Algorithm's first level as
//! far as equality goes: a character's compatibility decomposition without
//! its combining marks, lower-cased, so `'a' = 'A' = 'á' = 'ａ'`, `'ß' =
//! 'ss'`, `'æ' = 'ae'`. Their order puts spaces and punctuation before
//! digits before letters, then orders by code point; MySQL's DUCET tables
//! order letters of one script alphabetically too, but may differ between
//! punctuation marks or scripts. Under `utf8mb4_general_ci` MySQL pads
//! with spaces where this ignores trailing spaces: the two differ only for
//! a text ending in a character below the space (a tab, say).

use std::cmp::Ordering;

use unicode_normalization::char::{decompose_canonical, decompose_compatible, is_combining_mark};

/// A collation's comparison rule (several collation ids share one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collation {
    /// Bytes as they are.
    Binary,
    /// Bytes, trailing spaces ignored.
    BinaryPadSpace,
    /// MySQL's `_general_ci`: one weight per character, trailing spaces
    /// ignored.
    GeneralCi,
    /// Unicode primary weights: accent and case insensitive.
    UnicodeCi { pad_space: bool },
    /// Unicode primary weights, then the characters: accent and case
    /// sensitive, ordered by letter first.
    UnicodeCs,
}

/// The `binary` collation's id, which every non-character column has.
pub const BINARY_COLLATION_ID: u16 = 63;

impl Collation {
    /// The rule of collation `id`; an id binlogd does not know compares
    /// bytes.
    pub const fn from_id(id: u16) -> Collation {
        match id {
            8 | 11 | 33 | 45 => Collation::GeneralCi,
            46 | 47 | 65 | 83 => Collation::BinaryPadSpace,
            192 | 224 => Collation::UnicodeCi { pad_space: true },
            255 => Collation::UnicodeCi { pad_space: false },
            305 => Collation::UnicodeCs,
            _ => Collation::Binary,
        }
    }

    /// True when the collation compares bytes as they are.
    pub fn is_binary(self) -> bool {
        self == Collation::Binary
    }

    /// `left` against `right` under this collation.
    pub fn compare(self, left: &[u8], right: &[u8]) -> Ordering {
        match self {
            Collation::Binary => left.cmp(right),
            Collation::BinaryPadSpace => trim_spaces(left).cmp(trim_spaces(right)),
            // Its own walk finds equal text as fast as a comparison of
            // the bytes would.
            Collation::GeneralCi => general_compare(trim_spaces(left), trim_spaces(right)),
            _ if left == right => Ordering::Equal,
            _ => self.weights(left).cmp(self.weights(right)),
        }
    }

    /// Appends `text`'s weights: the bytes themselves for the binary
    /// collations, each weight in UTF-8's order-keeping form for
    /// `_general_ci` (so ASCII text weighs one byte a character), 4 bytes
    /// big-endian for the others. Comparing two such strings byte by byte
    /// gives [`Collation::compare`]'s answer.
    pub fn append_weights(self, text: &[u8], out: &mut Vec<u8>) {
        match self {
            Collation::Binary => out.extend_from_slice(text),
            Collation::BinaryPadSpace => out.extend_from_slice(trim_spaces(text)),
            Collation::GeneralCi => {
                let text = trim_spaces(text);
                if text.is_ascii() {
                    out.extend(text.iter().map(u8::to_ascii_uppercase));
                    return;
                }
                for weight in self.weights(text) {
                    push_utf8_form(weight, out);
                }
            }
            _ => {
                for weight in self.weights(text) {
                    out.extend_from_slice(&weight.to_be_bytes());
                }
            }
        }
    }

    fn pads_spaces(self) -> bool {
        matches!(self, Collation::GeneralCi | Collation::UnicodeCi { pad_space: true } | Collation::BinaryPadSpace)
    }

    fn weights(self, text: &[u8]) -> Weights<'_> {
        let text = if self.pads_spaces() { trim_spaces(text) } else { text };
        Weights { collation: self, text, at: 0, pending: [0; PENDING_MAX], pending_length: 0, pending_at: 0, tail: None }
    }
}

/// `_general_ci`'s comparison: ASCII byte by byte (a character's weight
/// is its upper case), the rest by weights from the first other byte on
/// (every byte before it was a whole character). `left` and `right`
/// hold no trailing spaces.
fn general_compare(left: &[u8], right: &[u8]) -> Ordering {
    let common = left.len().min(right.len());
    let mut at = 0;
    while at < common {
        let (a, b) = (left[at], right[at]);
        if !a.is_ascii() || !b.is_ascii() {
            return Collation::GeneralCi.weights(&left[at..]).cmp(Collation::GeneralCi.weights(&right[at..]));
        }
        let (a, b) = (a.to_ascii_uppercase(), b.to_ascii_uppercase());
        if a != b {
            return a.cmp(&b);
        }
        at += 1;
    }
    // One is a prefix of the other; every character left weighs something.
    left.len().cmp(&right.len())
}

/// `weight` as UTF-8 encodes a code point (extended to 21 bits, which
/// `_general_ci`'s weights fit): byte strings of such forms order as the
/// weights do, and a weight below 0x80 is one byte.
fn push_utf8_form(weight: u32, out: &mut Vec<u8>) {
    match weight {
        0..=0x7F => out.push(weight as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (weight >> 6) as u8, 0x80 | (weight & 0x3F) as u8]),
        0x800..=0xFFFF => {
            out.extend_from_slice(&[0xE0 | (weight >> 12) as u8, 0x80 | ((weight >> 6) & 0x3F) as u8, 0x80 | (weight & 0x3F) as u8])
        }
        _ => out.extend_from_slice(&[
            0xF0 | ((weight >> 18) & 0x07) as u8,
            0x80 | ((weight >> 12) & 0x3F) as u8,
            0x80 | ((weight >> 6) & 0x3F) as u8,
            0x80 | (weight & 0x3F) as u8,
        ]),
    }
}

fn trim_spaces(text: &[u8]) -> &[u8] {
    let end = text.iter().rposition(|&byte| byte != b' ').map_or(0, |at| at + 1);
    &text[..end]
}

/// The longest compatibility decomposition (U+FDFA) is 18 characters.
const PENDING_MAX: usize = 18;

/// A text's weights, one character at a time.
struct Weights<'t> {
    collation: Collation,
    text: &'t [u8],
    at: usize,
    pending: [u32; PENDING_MAX],
    pending_length: usize,
    pending_at: usize,
    /// `utf8mb4_0900_as_cs`: the characters again, after the primary
    /// weights and a zero weight.
    tail: Option<usize>,
}

impl Iterator for Weights<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if self.pending_at < self.pending_length {
                self.pending_at += 1;
                return Some(self.pending[self.pending_at - 1]);
            }
            if let Some(at) = self.tail {
                let (character, length) = next_character(&self.text[at..])?;
                self.tail = Some(at + length);
                return Some(character);
            }
            // ASCII has no decomposition, expansion or combining mark: its
            // weight comes straight from the byte.
            if let Some(&byte) = self.text.get(self.at).filter(|byte| byte.is_ascii()) {
                self.at += 1;
                return Some(match self.collation {
                    Collation::GeneralCi => u32::from(byte.to_ascii_uppercase()),
                    _ => primary_weight(char::from(byte)),
                });
            }
            let Some((character, length)) = next_character(&self.text[self.at..]) else {
                if self.collation == Collation::UnicodeCs {
                    self.tail = Some(0);
                    return Some(0);
                }
                return None;
            };
            self.at += length;
            self.pending_length = 0;
            self.pending_at = 0;
            match self.collation {
                Collation::GeneralCi => self.push(general_weight(character)),
                _ => self.push_primary(character),
            }
        }
    }
}

impl Weights<'_> {
    fn push(&mut self, weight: u32) {
        if self.pending_length < PENDING_MAX {
            self.pending[self.pending_length] = weight;
            self.pending_length += 1;
        }
    }

    fn push_primary(&mut self, character: u32) {
        let Some(character) = char::from_u32(character) else {
            self.push(character);
            return;
        };
        let expansion: &[char] = match character {
            'ß' | 'ẞ' => &['s', 's'],
            'æ' | 'Æ' => &['a', 'e'],
            'œ' | 'Œ' => &['o', 'e'],
            'ø' | 'Ø' => &['o'],
            'đ' | 'Đ' => &['d'],
            'ł' | 'Ł' => &['l'],
            'ı' => &['i'],
            _ => &[],
        };
        if !expansion.is_empty() {
            for &letter in expansion {
                self.push(primary_weight(letter));
            }
            return;
        }
        let mut parts = [0u32; PENDING_MAX];
        let mut count = 0;
        decompose_compatible(character, |part| {
            if !is_combining_mark(part) && count < PENDING_MAX {
                parts[count] = primary_weight(part);
                count += 1;
            }
        });
        for &weight in &parts[..count] {
            self.push(weight);
        }
    }
}

/// The character at the start of `bytes` and its length in bytes; a byte
/// that starts no UTF-8 character stands for itself, above every
/// character, so any bytes still compare.
fn next_character(bytes: &[u8]) -> Option<(u32, usize)> {
    let first = *bytes.first()?;
    if first < 0x80 {
        return Some((u32::from(first), 1));
    }
    let length = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    };
    let character = bytes.get(..length).filter(|_| length > 0).and_then(|part| std::str::from_utf8(part).ok()?.chars().next());
    Some(character.map_or((0x0011_0000 + u32::from(first), 1), |character| (character as u32, length)))
}

/// `_general_ci`'s weight: the base letter of a character of the Basic
/// Multilingual Plane, upper-cased; U+FFFD above it.
fn general_weight(character: u32) -> u32 {
    if character > 0x10_FFFF {
        return character;
    }
    let Some(character) = char::from_u32(character).filter(|_| character <= 0xFFFF) else { return 0xFFFD };
    let base = match character {
        'ß' => 'S',
        'æ' | 'Æ' => 'Æ',
        'ð' | 'Ð' => 'Ð',
        'ø' | 'Ø' => 'Ø',
        'þ' | 'Þ' => 'Þ',
        _ => {
            let mut first = None;
            decompose_canonical(character, |part| {
                first.get_or_insert(part);
            });
            first.unwrap_or(character)
        }
    };
    single_mapping(base.to_uppercase()).unwrap_or(base) as u32
}

/// A Unicode primary weight: the character class (spaces, then other
/// symbols, digits, letters) above the lower-cased code point.
fn primary_weight(character: char) -> u32 {
    let folded = single_mapping(character.to_lowercase()).unwrap_or(character);
    let class = if folded.is_whitespace() {
        1
    } else if folded.is_alphabetic() {
        4
    } else if folded.is_numeric() {
        3
    } else {
        2
    };
    class << 24 | folded as u32
}

fn single_mapping(mut mapping: impl Iterator<Item = char>) -> Option<char> {
    let first = mapping.next()?;
    mapping.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn equal(id: u16, a: &str, b: &str) -> bool {
        Collation::from_id(id).compare(a.as_bytes(), b.as_bytes()) == Ordering::Equal
    }

    fn weights(id: u16, text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        Collation::from_id(id).append_weights(text.as_bytes(), &mut out);
        out
    }

    #[test]
    fn general_ci_ignores_case_accents_and_trailing_spaces() {
        assert!(equal(45, "abc", "ABC"));
        assert!(equal(45, "café", "CAFE"));
        assert!(equal(45, "straße", "STRASE"));
        assert!(equal(45, "a", "a  "));
        assert!(!equal(45, "a", " a"));
        assert!(!equal(45, "a", "b"));
        // Above the BMP every character weighs the same.
        assert!(equal(45, "😀", "😺"));
        assert_eq!(Collation::from_id(45).compare(b"apple", b"Banana"), Ordering::Less);
    }

    #[test]
    fn the_0900_collations_follow_unicode_primary_weights() {
        assert!(equal(255, "résumé", "RESUME"));
        assert!(equal(255, "straße", "STRASSE"));
        assert!(equal(255, "ａｂｃ", "abc"));
        assert!(equal(255, "Æon", "aeon"));
        assert!(!equal(255, "a", "a "), "NO PAD");
        assert!(equal(224, "a", "a "), "unicode_ci pads");
        assert!(!equal(255, "😀", "😺"));
        assert_eq!(Collation::from_id(255).compare(b"-", b"0"), Ordering::Less);
        assert_eq!(Collation::from_id(255).compare(b"9", b"a"), Ordering::Less);
        assert_eq!(Collation::from_id(255).compare(b"apple", b"Banana"), Ordering::Less);
        assert!(!equal(305, "a", "A"));
        assert!(!equal(305, "e", "é"));
        assert_eq!(Collation::from_id(305).compare(b"B", b"a"), Ordering::Greater, "letters first, then case");
    }

    #[test]
    fn binary_collations_compare_bytes() {
        assert!(!equal(63, "a", "A"));
        assert!(!equal(63, "a", "a "));
        assert!(!equal(309, "a", "a "));
        assert!(equal(46, "a", "a "));
        assert!(!equal(46, "a", "A"));
    }

    #[test]
    fn weights_order_as_compare_does() {
        let texts = [
            "",
            " ",
            "a",
            "A",
            "á",
            "ab",
            "a b",
            "b",
            "B",
            "z",
            "0",
            "9",
            "-",
            "ß",
            "ss",
            "st",
            "😀",
            "\u{7f}",
            "\u{e9}t\u{e9}",
            "\t",
            "Ab",
            "aB",
            "aé",
            "AE",
            "e ",
            "\u{100}",
            "zz",
            "\u{ff}",
        ];
        for id in [45, 46, 63, 224, 255, 305, 309] {
            let collation = Collation::from_id(id);
            for a in texts {
                for b in texts {
                    assert_eq!(
                        weights(id, a).cmp(&weights(id, b)),
                        collation.compare(a.as_bytes(), b.as_bytes()),
                        "collation {id}: {a:?} against {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ascii_weighs_as_the_general_rule_would_weigh_it() {
        for byte in 0u8..0x80 {
            let general = Collation::GeneralCi.weights(&[byte]).collect::<Vec<_>>();
            let unicode = Collation::UnicodeCi { pad_space: false }.weights(&[byte]).collect::<Vec<_>>();
            if byte == b' ' {
                assert!(general.is_empty(), "a trailing space is padding");
            } else {
                assert_eq!(general, [general_weight(u32::from(byte))], "{byte:#04x}");
            }
            let mut slow = Weights {
                collation: Collation::UnicodeCi { pad_space: false },
                text: &[],
                at: 0,
                pending: [0; PENDING_MAX],
                pending_length: 0,
                pending_at: 0,
                tail: None,
            };
            slow.push_primary(u32::from(byte));
            assert_eq!(unicode, slow.pending[..slow.pending_length], "{byte:#04x}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_still_compare() {
        let collation = Collation::from_id(45);
        assert_eq!(collation.compare(b"a\xff", b"A\xff"), Ordering::Equal);
        assert_eq!(collation.compare(b"a\xfe", b"a\xff"), Ordering::Less);
    }
}
