//! The character set a character column's values are logged in, from its
//! collation id. binlogd keeps text as UTF-8 in memory; the row events
//! carry each value in its column's own character set, as MySQL's do, so
//! the codec converts on the way out and back on the way in.
//!
//! | collation ids | character set | a value in the row event |
//! |---------------|---------------|--------------------------|
//! | 5, 8, 15, 31, 47, 48, 49, 94 | latin1 (MySQL's latin1 is Windows-1252) | one byte a character |
//! | 11, 65 | ascii | one byte a character |
//! | any other | utf8mb3, utf8mb4, binary or one binlogd does not convert | its bytes as they are |
//!
//! Decoding is total: every byte is a latin1 character (encoding_rs maps
//! the five bytes cp1252 leaves undefined to the C1 controls, as MySQL
//! does), and an ascii column's bytes decode as latin1's, so a value from
//! another server's binlog re-encodes to the same bytes.

use std::borrow::Cow;

use encoding_rs::{EncoderResult, WINDOWS_1252};

use crate::column_type::ColumnType;
use crate::value::{encode_value, Value};

/// How a column's text is encoded in a row event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCharset {
    /// UTF-8 (utf8mb3, utf8mb4), binary, or a character set binlogd does
    /// not convert: the bytes as they are.
    Unconverted,
    /// MySQL's latin1, which is Windows-1252.
    Latin1,
    /// US-ASCII.
    Ascii,
}

impl TextCharset {
    /// The character set of collation `id`.
    pub const fn of_collation(id: u16) -> TextCharset {
        match id {
            5 | 8 | 15 | 31 | 47 | 48 | 49 | 94 => TextCharset::Latin1,
            11 | 65 => TextCharset::Ascii,
            _ => TextCharset::Unconverted,
        }
    }

    /// UTF-8 `utf8` in this character set; a character it cannot hold
    /// becomes `?`, as MySQL converts (writes refuse such characters
    /// first, see [`TextCharset::first_unrepresentable`]). Bytes that are
    /// not UTF-8 pass unchanged (they were stored as bytes).
    pub fn encode(self, utf8: &[u8]) -> Cow<'_, [u8]> {
        if self == TextCharset::Unconverted || utf8.is_ascii() {
            return Cow::Borrowed(utf8);
        }
        match std::str::from_utf8(utf8) {
            // An ascii column's text holds ASCII only, unless it came from
            // another server's bytes, which decode as latin1 (above).
            Ok(text) => Cow::Owned(encode_latin1(text)),
            Err(_) => Cow::Borrowed(utf8),
        }
    }

    /// `bytes` of this character set as UTF-8.
    pub fn decode(self, bytes: &[u8]) -> Cow<'_, [u8]> {
        if self == TextCharset::Unconverted || bytes.is_ascii() {
            return Cow::Borrowed(bytes);
        }
        match WINDOWS_1252.decode_without_bom_handling(bytes).0 {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        }
    }

    /// The first character of `text` this character set cannot hold, as
    /// (byte offset, the character).
    pub fn first_unrepresentable(self, text: &str) -> Option<(usize, char)> {
        match self {
            TextCharset::Unconverted => None,
            TextCharset::Ascii => text.char_indices().find(|(_, c)| !c.is_ascii()),
            TextCharset::Latin1 => text.char_indices().find(|&(_, c)| !c.is_ascii() && !is_latin1(c)),
        }
    }
}

/// `value` of a column of `column_type` whose text is logged in
/// `charset`, encoded as a row event carries it (text converted first).
pub fn encode_column_value(
    column_type: &ColumnType,
    unsigned: bool,
    charset: TextCharset,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match (value, charset) {
        (Value::Bytes(text), TextCharset::Latin1 | TextCharset::Ascii) => {
            encode_value(column_type, unsigned, &Value::Bytes(charset.encode(text).into_owned()), out)
        }
        _ => encode_value(column_type, unsigned, value, out),
    }
}

/// Whether MySQL's latin1 (Windows-1252) has character `c`.
fn is_latin1(c: char) -> bool {
    let mut buffer = [0; 4];
    let mut encoder = WINDOWS_1252.new_encoder();
    let mut out = [0; 4];
    let (result, _, _) = encoder.encode_from_utf8_without_replacement(c.encode_utf8(&mut buffer), &mut out, true);
    result == EncoderResult::InputEmpty
}

/// `text` in Windows-1252, a character it lacks as `?`.
pub fn encode_latin1(mut text: &str) -> Vec<u8> {
    let mut encoder = WINDOWS_1252.new_encoder();
    let mut out = vec![0; text.len()];
    let mut written = 0;
    loop {
        let (result, read, wrote) = encoder.encode_from_utf8_without_replacement(text, &mut out[written..], true);
        written += wrote;
        text = &text[read..];
        match result {
            EncoderResult::InputEmpty => break,
            EncoderResult::Unmappable(_) => {
                out[written] = b'?';
                written += 1;
            }
            // One output byte per character and at least one input byte per
            // character: `out` never runs short.
            EncoderResult::OutputFull => unreachable!("latin1 output is never longer than its UTF-8 input"),
        }
    }
    out.truncate(written);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_is_windows_1252_both_ways() {
        let latin1 = TextCharset::of_collation(8);
        assert_eq!(latin1.encode("café €".as_bytes()).as_ref(), b"caf\xe9 \x80");
        assert_eq!(latin1.decode(b"caf\xe9 \x80").as_ref(), "café €".as_bytes());
        assert_eq!(latin1.encode("a😀b".as_bytes()).as_ref(), b"a?b");
        assert_eq!(latin1.first_unrepresentable("café €😀"), Some((9, '😀')));
        assert_eq!(latin1.first_unrepresentable("café €"), None);
    }

    #[test]
    fn every_byte_of_a_latin1_or_ascii_column_decodes_and_encodes_back() {
        let bytes: Vec<u8> = (0..=255).collect();
        for charset in [TextCharset::Latin1, TextCharset::Ascii] {
            let text = charset.decode(&bytes).into_owned();
            assert_eq!(charset.encode(&text).as_ref(), &bytes[..]);
        }
    }

    #[test]
    fn ascii_holds_ascii_only_and_utf8_passes_unchanged() {
        let ascii = TextCharset::of_collation(11);
        assert_eq!(ascii.first_unrepresentable("abé"), Some((2, 'é')));
        assert_eq!(ascii.encode("ab😀".as_bytes()).as_ref(), b"ab?");
        let utf8 = TextCharset::of_collation(33);
        assert_eq!(utf8.encode("é😀".as_bytes()).as_ref(), "é😀".as_bytes());
        assert_eq!(utf8.first_unrepresentable("é😀"), None);
    }
}
