//! UUID functions as MySQL has them: UUID() (a time-based version 1 UUID
//! in its 36-character text), UUID_TO_BIN(text [, swap]) and
//! BIN_TO_UUID(bytes [, swap]) (16 bytes; with swap the time-low and
//! time-high parts change places so values made one after another sort
//! together), IS_UUID(text). NULL in, NULL out; text that is not a UUID
//! is MySQL's 1411, bytes that are not 16 long too.

use std::sync::OnceLock;

use protocol::MysqlError;
use uuid::Uuid;

use crate::error::SqlResult;
use crate::eval::value::{to_text, truth, NullCheck, Value};

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value]) -> Option<SqlResult<Value>> {
    if matches!(name, "UUID_TO_BIN" | "BIN_TO_UUID" | "IS_UUID") && values.first().is_some_and(Value::is_null) {
        return Some(Ok(Value::Null));
    }
    Some(match (name, values) {
        ("UUID", []) => Ok(Value::Bytes(Uuid::now_v1(node()).hyphenated().to_string().into_bytes())),
        ("IS_UUID", [text]) => Ok(Value::Int(i64::from(parse(&to_text(text)).is_some()))),
        ("UUID_TO_BIN", [text]) => to_bin(text, false),
        ("UUID_TO_BIN", [text, swap]) => to_bin(text, truth(swap) == Some(true)),
        ("BIN_TO_UUID", [bytes]) => from_bin(bytes, false),
        ("BIN_TO_UUID", [bytes, swap]) => from_bin(bytes, truth(swap) == Some(true)),
        ("UUID" | "IS_UUID" | "UUID_TO_BIN" | "BIN_TO_UUID", _) => Err(crate::error::wrong_argument_count(name)),
        _ => return None,
    })
}

/// This process's node id: random, with the multicast bit set, as MySQL
/// makes one on a host whose network address it cannot read (RFC 4122
/// 4.5), so it never poses as a real interface's address.
fn node() -> &'static [u8; 6] {
    static NODE: OnceLock<[u8; 6]> = OnceLock::new();
    NODE.get_or_init(|| {
        let random = Uuid::new_v4();
        let mut node = [0u8; 6];
        node.copy_from_slice(&random.as_bytes()[..6]);
        node[0] |= 0x01;
        node
    })
}

/// A UUID in any form MySQL's IS_UUID takes: 32 hex digits, with or
/// without the four hyphens, optionally in braces.
fn parse(text: &[u8]) -> Option<Uuid> {
    let text = std::str::from_utf8(text).ok()?;
    let inner = text.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')).unwrap_or(text);
    match inner.len() {
        32 if inner.bytes().all(|b| b.is_ascii_hexdigit()) => Uuid::try_parse(inner).ok(),
        36 => Uuid::try_parse(inner).ok(),
        _ => None,
    }
}

fn incorrect(kind: &str, value: &Value) -> MysqlError {
    let shown = String::from_utf8_lossy(&to_text(value)).into_owned();
    MysqlError::new(1411, "HY000", format!("Incorrect string value: '{shown}' for function {kind}"))
}

fn to_bin(text: &Value, swap: bool) -> SqlResult<Value> {
    let uuid = parse(&to_text(text)).ok_or_else(|| incorrect("uuid_to_bin", text))?;
    let mut bytes = *uuid.as_bytes();
    if swap {
        bytes = swapped(&bytes, true);
    }
    Ok(Value::Bytes(bytes.to_vec()))
}

fn from_bin(bytes: &Value, swap: bool) -> SqlResult<Value> {
    let raw = to_text(bytes);
    let mut array: [u8; 16] = raw.as_slice().try_into().map_err(|_| incorrect("bin_to_uuid", bytes))?;
    if swap {
        array = swapped(&array, false);
    }
    Ok(Value::Bytes(Uuid::from_bytes(array).hyphenated().to_string().into_bytes()))
}

/// MySQL's swap: time-high (bytes 6..8) and time-mid (4..6) first, then
/// time-low (0..4); `forward` false undoes it.
fn swapped(bytes: &[u8; 16], forward: bool) -> [u8; 16] {
    let mut out = *bytes;
    if forward {
        out[0..2].copy_from_slice(&bytes[6..8]);
        out[2..4].copy_from_slice(&bytes[4..6]);
        out[4..8].copy_from_slice(&bytes[0..4]);
    } else {
        out[6..8].copy_from_slice(&bytes[0..2]);
        out[4..6].copy_from_slice(&bytes[2..4]);
        out[0..4].copy_from_slice(&bytes[4..8]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: SqlResult<Value>) -> String {
        match value.unwrap() {
            Value::Bytes(bytes) => String::from_utf8(bytes).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn uuid_is_version_1_text_and_each_call_differs() {
        let first = text(call("UUID", &[]).unwrap());
        let second = text(call("UUID", &[]).unwrap());
        assert_eq!(first.len(), 36);
        assert_eq!(&first[14..15], "1", "version 1: {first}");
        assert_ne!(first, second);
        assert_eq!(first[24..], second[24..], "one node per process");
    }

    #[test]
    fn to_and_from_binary_match_mysqls_examples() {
        // MySQL reference manual, "Miscellaneous Functions".
        let uuid = Value::Bytes(b"6ccd780c-baba-1026-9564-5b8c656024db".to_vec());
        let plain = call("UUID_TO_BIN", std::slice::from_ref(&uuid)).unwrap().unwrap();
        let hex = |value: &Value| to_text(value).iter().map(|b| format!("{b:02X}")).collect::<String>();
        assert_eq!(hex(&plain), "6CCD780CBABA102695645B8C656024DB");
        let swapped = call("UUID_TO_BIN", &[uuid.clone(), Value::Int(1)]).unwrap().unwrap();
        assert_eq!(hex(&swapped), "1026BABA6CCD780C95645B8C656024DB");
        assert_eq!(text(call("BIN_TO_UUID", &[swapped, Value::Int(1)]).unwrap()), "6ccd780c-baba-1026-9564-5b8c656024db");
        assert_eq!(text(call("BIN_TO_UUID", &[plain]).unwrap()), "6ccd780c-baba-1026-9564-5b8c656024db");
        let is_uuid = |text: &str| call("IS_UUID", &[Value::Bytes(text.as_bytes().to_vec())]).unwrap().unwrap();
        assert_eq!(is_uuid("{6ccd780c-baba-1026-9564-5b8c656024db}"), Value::Int(1));
        assert_eq!(is_uuid("6ccd780cbaba102695645b8c656024db"), Value::Int(1));
        assert_eq!(is_uuid("6ccd780c-baba-1026-9564-5b8c6560"), Value::Int(0));
        assert_eq!(call("UUID_TO_BIN", &[Value::Null]).unwrap().unwrap(), Value::Null);
        assert_eq!(call("UUID_TO_BIN", &[Value::Bytes(b"nope".to_vec())]).unwrap().unwrap_err().code, 1411);
    }
}
