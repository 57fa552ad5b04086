//! Digest and encoding functions, as MySQL prints them: MD5(str),
//! SHA1(str) / SHA(str), SHA2(str, bits) as lowercase hex text, CRC32(str)
//! as an unsigned integer, TO_BASE64 / FROM_BASE64. NULL in, NULL out;
//! SHA2 with a length other than 0 (256), 224, 256, 384 or 512 is NULL,
//! and FROM_BASE64 of text that is not base64 is NULL, as in MySQL.

use base64::Engine as _;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use crate::eval::value::{to_number, to_text, NullCheck, Number, Value};

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value]) -> Option<Value> {
    if values.iter().any(|value| value.is_null()) && matches!(name, "MD5" | "SHA1" | "SHA" | "SHA2" | "CRC32" | "TO_BASE64" | "FROM_BASE64")
    {
        return Some(Value::Null);
    }
    Some(match (name, values) {
        ("MD5", [value]) => hex_text(&Md5::digest(to_text(value))),
        ("SHA1" | "SHA", [value]) => hex_text(&Sha1::digest(to_text(value))),
        ("SHA2", [value, bits]) => sha2(&to_text(value), bits),
        ("CRC32", [value]) => Value::UInt(u64::from(crc32fast::hash(&to_text(value)))),
        ("TO_BASE64", [value]) => Value::Bytes(base64_lines(&to_text(value)).into_bytes()),
        ("FROM_BASE64", [value]) => {
            // MySQL skips whitespace (TO_BASE64 breaks lines every 76 characters).
            let compact: Vec<u8> = to_text(value).into_iter().filter(|byte| !byte.is_ascii_whitespace()).collect();
            base64::engine::general_purpose::STANDARD.decode(compact).map_or(Value::Null, Value::Bytes)
        }
        _ => return None,
    })
}

fn hex_text(digest: &[u8]) -> Value {
    Value::Bytes(digest.iter().flat_map(|byte| format!("{byte:02x}").into_bytes()).collect())
}

fn sha2(bytes: &[u8], bits: &Value) -> Value {
    let bits = match to_number(bits) {
        Some(Number::Int(bits)) => bits,
        Some(Number::Float(bits)) => bits as i128,
        None => return Value::Null,
    };
    match bits {
        0 | 256 => hex_text(&Sha256::digest(bytes)),
        224 => hex_text(&Sha224::digest(bytes)),
        384 => hex_text(&Sha384::digest(bytes)),
        512 => hex_text(&Sha512::digest(bytes)),
        _ => Value::Null,
    }
}

/// Base64 with a newline after every 76 characters, as MySQL's TO_BASE64.
fn base64_lines(bytes: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let lines: Vec<&str> = encoded.as_bytes().chunks(76).map(|chunk| std::str::from_utf8(chunk).expect("base64 is ASCII")).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn run(name: &str, values: &[Value]) -> String {
        crate::eval::value::text(&call(name, values).unwrap())
    }

    #[test]
    fn digests_print_as_mysql_prints_them() {
        // MySQL 8.4's answers.
        assert_eq!(run("MD5", &[s("testing")]), "ae2b1fca515949e5d54fb22b8ed95575");
        assert_eq!(run("SHA1", &[s("abc")]), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(run("SHA2", &[s("abc"), Value::Int(224)]), "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
        assert_eq!(run("SHA2", &[s("abc"), Value::Int(0)]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(call("SHA2", &[s("abc"), Value::Int(100)]), Some(Value::Null));
        assert_eq!(call("CRC32", &[s("MySQL")]), Some(Value::UInt(3_259_397_556)));
        assert_eq!(call("MD5", &[Value::Null]), Some(Value::Null));
        assert_eq!(run("TO_BASE64", &[s("abc")]), "YWJj");
        assert_eq!(run("FROM_BASE64", &[s("YWJj")]), "abc");
        assert_eq!(call("FROM_BASE64", &[s("not base64!")]), Some(Value::Null));
        let long = "x".repeat(100);
        let encoded = run("TO_BASE64", &[s(&long)]);
        assert_eq!(encoded.lines().map(str::len).collect::<Vec<_>>(), [76, 60]);
        assert_eq!(run("FROM_BASE64", &[s(&encoded)]), long);
    }
}
