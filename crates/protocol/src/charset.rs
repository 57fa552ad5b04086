//! The character sets a client talks in. Statements, string parameters and
//! names arrive in `character_set_client` and become the server's UTF-8
//! before parsing; text values of string columns leave in
//! `character_set_results`. Values are stored as UTF-8 whatever the client
//! speaks, so only this seam knows about other encodings.

use std::borrow::Cow;

use encoding_rs::WINDOWS_1252;

use crate::errors::MysqlError;
use crate::resultset::{ColumnDefinition, QueryResponse};
use crate::value::Value;

/// The `binary` collation id: a column with it carries bytes, never text.
const BINARY_COLLATION: u16 = 63;

/// A client character set binlogd converts to and from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientCharset {
    #[default]
    Utf8mb4,
    Utf8mb3,
    /// MySQL's latin1 is Windows-1252 (cp1252), with the five bytes cp1252
    /// leaves undefined mapped to the C1 controls, as encoding_rs maps them.
    Latin1,
    Ascii,
    /// No conversion: bytes pass as they are (statements must still be UTF-8).
    Binary,
}

impl ClientCharset {
    /// The character set by its MySQL name (`utf8` is `utf8mb3`'s alias).
    pub fn from_name(name: &str) -> Option<ClientCharset> {
        Some(match name.to_ascii_lowercase().as_str() {
            "utf8mb4" => ClientCharset::Utf8mb4,
            "utf8mb3" | "utf8" => ClientCharset::Utf8mb3,
            "latin1" => ClientCharset::Latin1,
            "ascii" => ClientCharset::Ascii,
            "binary" => ClientCharset::Binary,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ClientCharset::Utf8mb4 => "utf8mb4",
            ClientCharset::Utf8mb3 => "utf8mb3",
            ClientCharset::Latin1 => "latin1",
            ClientCharset::Ascii => "ascii",
            ClientCharset::Binary => "binary",
        }
    }

    /// The character set's default collation id (the column definition's
    /// character set for string columns sent in it).
    pub fn default_collation(self) -> u16 {
        match self {
            ClientCharset::Utf8mb4 => 255,
            ClientCharset::Utf8mb3 => 33,
            ClientCharset::Latin1 => 8,
            ClientCharset::Ascii => 11,
            ClientCharset::Binary => BINARY_COLLATION,
        }
    }

    /// The client's bytes as UTF-8, or 1300 naming the first bad bytes.
    pub fn decode(self, bytes: &[u8]) -> Result<Cow<'_, str>, MysqlError> {
        let invalid = |at: usize| Err(MysqlError::invalid_character_string(self.name(), &bytes[at..]));
        match self {
            ClientCharset::Latin1 => Ok(WINDOWS_1252.decode_without_bom_handling(bytes).0),
            ClientCharset::Ascii => match bytes.iter().position(|byte| !byte.is_ascii()) {
                Some(at) => invalid(at),
                None => Ok(Cow::Borrowed(std::str::from_utf8(bytes).expect("ASCII is UTF-8"))),
            },
            // utf8mb3 has no characters beyond the BMP, but clients that
            // call themselves utf8mb3 (the mariadb client under a UTF-8
            // locale) send them: binlogd stores them as utf8mb4 would,
            // where MySQL would warn and replace them.
            ClientCharset::Utf8mb4 | ClientCharset::Utf8mb3 | ClientCharset::Binary => match std::str::from_utf8(bytes) {
                Err(error) => invalid(error.valid_up_to()),
                Ok(text) => Ok(Cow::Borrowed(text)),
            },
        }
    }

    /// UTF-8 text in this character set; a character it cannot hold
    /// becomes `?`, as MySQL converts. Bytes that are not UTF-8 pass
    /// unchanged (they were stored as bytes).
    pub fn encode(self, utf8: &[u8]) -> Cow<'_, [u8]> {
        let Ok(text) = std::str::from_utf8(utf8) else { return Cow::Borrowed(utf8) };
        match self {
            // Characters beyond the BMP reach utf8mb3 clients unchanged,
            // as they were accepted from them.
            ClientCharset::Utf8mb4 | ClientCharset::Utf8mb3 | ClientCharset::Binary => Cow::Borrowed(utf8),
            ClientCharset::Ascii if text.is_ascii() => Cow::Borrowed(utf8),
            ClientCharset::Ascii => Cow::Owned(text.chars().map(|c| if c.is_ascii() { c as u8 } else { b'?' }).collect()),
            ClientCharset::Latin1 if text.is_ascii() => Cow::Borrowed(utf8),
            ClientCharset::Latin1 => Cow::Owned(binlog_format::text_charset::encode_latin1(text)),
        }
    }

    /// Whether text values must be converted on their way to the client.
    fn converts_results(self) -> bool {
        matches!(self, ClientCharset::Latin1 | ClientCharset::Ascii)
    }
}

/// The character sets a session is in: what its statements arrive in
/// (`character_set_client`) and what its results leave in
/// (`character_set_results`; `None` for NULL or binary, no conversion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharacterSets {
    pub client: ClientCharset,
    pub results: Option<ClientCharset>,
}

impl Default for CharacterSets {
    fn default() -> Self {
        CharacterSets { client: ClientCharset::Utf8mb4, results: Some(ClientCharset::Utf8mb4) }
    }
}

/// `response` with its text values and string columns' character sets in
/// `results`. Numbers, temporal values and binary columns pass unchanged.
pub fn convert_results(response: QueryResponse<'_>, results: Option<ClientCharset>) -> QueryResponse<'_> {
    let Some(charset) = results.filter(|charset| charset.converts_results()) else { return response };
    match response {
        QueryResponse::Ok(ok) => QueryResponse::Ok(ok),
        QueryResponse::ResultSet(mut result_set) => {
            let text_columns = relabel(&mut result_set.columns, charset);
            for row in &mut result_set.rows {
                convert_row(row, &text_columns, charset);
            }
            QueryResponse::ResultSet(result_set)
        }
        QueryResponse::Stream(mut stream) => {
            let text_columns = relabel(&mut stream.columns, charset);
            let rows = stream.rows;
            stream.rows = Box::new(rows.map(move |row| {
                row.map(|mut row| {
                    convert_row(&mut row, &text_columns, charset);
                    row
                })
            }));
            QueryResponse::Stream(stream)
        }
    }
}

/// Marks the string columns as sent in `charset`; which ones they are.
fn relabel(columns: &mut [ColumnDefinition], charset: ClientCharset) -> Vec<bool> {
    columns
        .iter_mut()
        .map(|column| {
            let text = column.character_set != BINARY_COLLATION;
            if text {
                column.character_set = charset.default_collation();
            }
            text
        })
        .collect()
}

fn convert_row(row: &mut [Value], text_columns: &[bool], charset: ClientCharset) {
    for (value, text) in row.iter_mut().zip(text_columns) {
        if let (Value::Bytes(bytes), true) = (&mut *value, *text) {
            if let Cow::Owned(converted) = charset.encode(bytes) {
                *bytes = converted;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_is_windows_1252_both_ways() {
        let bytes = [b'c', b'a', b'f', 0xE9, b' ', 0x80, 0x81];
        let text = ClientCharset::Latin1.decode(&bytes).unwrap();
        assert_eq!(text, "caf\u{e9} \u{20ac}\u{81}");
        assert_eq!(ClientCharset::Latin1.encode(text.as_bytes()).as_ref(), bytes);
        // A character latin1 lacks is `?`, as MySQL converts it.
        assert_eq!(ClientCharset::Latin1.encode("a\u{4e2d}b\u{1f600}".as_bytes()).as_ref(), b"a?b?");
    }

    #[test]
    fn strict_charsets_name_the_bad_bytes() {
        let error = ClientCharset::Utf8mb4.decode(b"ok \xE9t\xE9").unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (1300, "Invalid utf8mb4 character string: 'E974E9'"));
        assert_eq!(ClientCharset::Utf8mb3.decode(b"\xC3(").unwrap_err().message, "Invalid utf8mb3 character string: 'C328'");
        assert_eq!(ClientCharset::Ascii.decode(b"a\xC3\xA9").unwrap_err().message, "Invalid ascii character string: 'C3A9'");
        assert_eq!(ClientCharset::Utf8mb3.decode("caf\u{e9}".as_bytes()).unwrap(), "caf\u{e9}");
    }

    #[test]
    fn results_convert_only_text_columns() {
        let columns = vec![
            ColumnDefinition::varchar("name"),
            ColumnDefinition::new("blob", mysql_common::constants::ColumnType::MYSQL_TYPE_BLOB).with_character_set(BINARY_COLLATION),
        ];
        let mut result_set = crate::resultset::ResultSet::new(columns);
        result_set.push_row(vec![Value::Bytes("caf\u{e9}".into()), Value::Bytes("caf\u{e9}".into())]);
        let QueryResponse::ResultSet(converted) = convert_results(result_set.into(), Some(ClientCharset::Latin1)) else {
            panic!("a result set stays one")
        };
        assert_eq!(converted.rows[0], vec![Value::Bytes(b"caf\xE9".to_vec()), Value::Bytes("caf\u{e9}".into())]);
        assert_eq!((converted.columns[0].character_set, converted.columns[1].character_set), (8, BINARY_COLLATION));
    }
}
