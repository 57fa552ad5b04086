//! MySQL's binary JSON: every document this crate encodes is decoded by
//! `mysql_common` (an independent reader of the format) to the same value,
//! decodes back to the same document here, and a few documents match the
//! bytes MySQL's format description gives. Malformed binaries are refused
//! with an error, never a panic.

use binlog_format::value::json::binary::{decode, encode, to_binary, JsonEncodeError};
use binlog_format::value::json::{Json, JsonDecimal, Object, Temporal};
use mysql_common::binlog::jsonb::{self, JsonContainer, JsonDom, JsonNumber, JsonScalar};
use mysql_common::io::ParseBuf;
use proptest::prelude::*;

/// The document `mysql_common` reads from `bytes`.
fn read_with_mysql_common(bytes: &[u8]) -> JsonDom {
    let value: jsonb::Value<'_> = ParseBuf(bytes).parse(()).unwrap_or_else(|e| panic!("mysql_common refuses {bytes:02x?}: {e}"));
    value.parse().unwrap_or_else(|e| panic!("mysql_common cannot build the document: {e}"))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let group = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(group >> (18 - 6 * i) & 0x3f) as usize] as char } else { '=' });
        }
    }
    out
}

/// `theirs` is the value `ours` describes, type for type.
fn assert_same(ours: &Json, theirs: &JsonDom, path: &str) {
    match (ours, theirs) {
        (Json::Null, JsonDom::Scalar(JsonScalar::Null)) => {}
        (Json::Bool(a), JsonDom::Scalar(JsonScalar::Boolean(b))) => assert_eq!(a, b, "{path}"),
        (Json::Int(a), JsonDom::Scalar(JsonScalar::Number(JsonNumber::Int(b)))) => assert_eq!(a, b, "{path}"),
        (Json::UInt(a), JsonDom::Scalar(JsonScalar::Number(JsonNumber::Uint(b)))) => assert_eq!(a, b, "{path}"),
        (Json::Double(a), JsonDom::Scalar(JsonScalar::Number(JsonNumber::Double(b)))) => assert_eq!(a.to_bits(), b.to_bits(), "{path}"),
        (Json::String(a), JsonDom::Scalar(JsonScalar::String(b))) => assert_eq!(a, b, "{path}"),
        (Json::Decimal(a), JsonDom::Scalar(JsonScalar::Number(JsonNumber::Decimal(b)))) => {
            assert_eq!(normalized_decimal(&a.text), normalized_decimal(&b.to_string()), "{path}")
        }
        (Json::Temporal(a), JsonDom::Scalar(JsonScalar::DateTime(b))) => assert_eq!(a.to_text(), format!("{b:.6}"), "{path}"),
        (Json::Opaque { field_type, bytes }, JsonDom::Scalar(JsonScalar::Opaque(b))) => {
            assert_eq!(format!("base64:type{field_type}:{}", base64(bytes)), b.to_string(), "{path}")
        }
        (Json::Array(a), JsonDom::Container(JsonContainer::Array(b))) => {
            assert_eq!(a.len(), b.len(), "{path}");
            for (i, (a, b)) in a.iter().zip(b).enumerate() {
                assert_same(a, b, &format!("{path}[{i}]"));
            }
        }
        (Json::Object(a), JsonDom::Container(JsonContainer::Object(b))) => {
            assert_eq!(a.len(), b.len(), "{path}");
            for (key, a) in a.iter() {
                let b = b.get(key).unwrap_or_else(|| panic!("{path}: mysql_common lacks key {key:?}"));
                assert_same(a, b, &format!("{path}.{key:?}"));
            }
        }
        _ => panic!("{path}: ours {ours:?}, mysql_common's {theirs:?}"),
    }
}

/// A decimal's digits without leading integer zeros, so `0.50` and `.50`
/// compare equal.
fn normalized_decimal(text: &str) -> String {
    let (sign, digits) = text.strip_prefix('-').map_or(("", text), |rest| ("-", rest));
    let (integer, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let integer = match integer.trim_start_matches('0') {
        "" => "0",
        trimmed => trimmed,
    };
    format!("{sign}{integer}.{fraction}")
}

/// Encodes `document`, checks it against `mysql_common` and against our
/// own decoder, and gives the bytes.
fn encode_and_check(document: &Json) -> Vec<u8> {
    let bytes = to_binary(document).unwrap();
    assert_same(document, &read_with_mysql_common(&bytes), "$");
    assert_eq!(&decode(&bytes).unwrap(), document);
    bytes
}

fn object(members: Vec<(&str, Json)>) -> Json {
    Json::Object(members.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap()).collect()
}

fn decimal(text: &str, precision: u8, scale: u8) -> Json {
    Json::Decimal(JsonDecimal::new(text, precision, scale).unwrap())
}

fn every_scalar() -> Vec<Json> {
    vec![
        Json::Null,
        Json::Bool(true),
        Json::Bool(false),
        Json::Int(0),
        Json::Int(-32768),
        Json::Int(32767),
        Json::Int(-32769),
        Json::Int(40000),
        Json::Int(i32::MIN as i64),
        Json::Int(i32::MAX as i64 + 1),
        Json::Int(i64::MIN),
        Json::Int(i64::MAX),
        Json::UInt(0),
        Json::UInt(65535),
        Json::UInt(65536),
        Json::UInt(u32::MAX as u64),
        Json::UInt(u32::MAX as u64 + 1),
        Json::UInt(u64::MAX),
        Json::Double(0.0),
        Json::Double(-0.0),
        Json::Double(1.5),
        Json::Double(-1e300),
        Json::Double(f64::MIN_POSITIVE),
        Json::String(String::new()),
        Json::String("héllo, wörld 😀".to_owned()),
        Json::String("x".repeat(200)),
        decimal("123.45", 5, 2),
        decimal("-0.5", 2, 1),
        decimal("12345678901234567890123456789012345.123456789012345678901234567890", 65, 30),
        decimal("7", 1, 0),
        Json::Temporal(Temporal::date(2024, 2, 29)),
        Json::Temporal(Temporal::date(0, 0, 0)),
        Json::Temporal(Temporal::time(false, 13, 14, 15, 654321)),
        Json::Temporal(Temporal::time(true, 838, 59, 59, 0)),
        Json::Temporal(Temporal::datetime((2015, 1, 15), (15, 16, 17, 123456))),
        Json::Temporal(Temporal::datetime((9999, 12, 31), (23, 59, 59, 999999))),
        Json::Temporal(Temporal::timestamp((1970, 1, 1), (0, 0, 1, 0))),
        Json::Opaque { field_type: 249, bytes: vec![0xbe, 0xba, 0xfe, 0xca] },
        Json::Opaque { field_type: 16, bytes: vec![0x01] },
        Json::Opaque { field_type: 252, bytes: vec![] },
    ]
}

#[test]
fn every_scalar_alone_matches_mysql_common() {
    for scalar in every_scalar() {
        encode_and_check(&scalar);
    }
}

#[test]
fn every_scalar_in_a_small_array_and_object_matches_mysql_common() {
    let scalars = every_scalar();
    let bytes = encode_and_check(&Json::Array(scalars.clone()));
    assert_eq!(bytes[0], 0x02, "small array");
    let members = scalars.into_iter().enumerate().map(|(i, value)| (format!("k{i}"), value)).collect();
    let bytes = encode_and_check(&Json::Object(members));
    assert_eq!(bytes[0], 0x00, "small object");
}

#[test]
fn empty_containers_and_nesting_match_mysql_common() {
    encode_and_check(&Json::Array(vec![]));
    encode_and_check(&Json::Object(Object::new()));
    let nested = object(vec![
        ("a", Json::Array(vec![Json::Int(1), object(vec![("b", Json::Array(vec![]))]), Json::Object(Object::new())])),
        ("ключ", object(vec![("😀", Json::String("deep".to_owned()))])),
        ("", Json::Null),
    ]);
    encode_and_check(&nested);
    let mut deep = Json::Int(1);
    for level in 0..100 {
        deep = if level % 2 == 0 { Json::Array(vec![deep]) } else { object(vec![("k", deep)]) };
    }
    encode_and_check(&deep);
}

#[test]
fn documents_over_64_kib_take_the_large_form_and_match_mysql_common() {
    // 80000 elements alternating literals and a string, as MySQL's own
    // large-document test builds.
    let elements: Vec<Json> = (0..80000)
        .map(|i| match i % 4 {
            0 => Json::Bool(true),
            1 => Json::Bool(false),
            2 => Json::Null,
            _ => Json::String("a".to_owned()),
        })
        .collect();
    let bytes = encode_and_check(&Json::Array(elements));
    assert_eq!(bytes[0], 0x03, "large array");

    // An object whose values pass 64 KiB; int32 values are inlined in the
    // large form, and small children stay small inside a large parent.
    let members = (0..3000).map(|i| (format!("key{i:05}"), Json::String("v".repeat(30)))).chain([
        ("int32".to_owned(), Json::Int(-100_000)),
        ("uint32".to_owned(), Json::UInt(3_000_000_000)),
        ("child".to_owned(), Json::Array(vec![Json::Int(70000)])),
    ]);
    let document = Json::Object(members.collect());
    let bytes = encode_and_check(&document);
    assert_eq!(bytes[0], 0x01, "large object");
    let child = document_child_type(&bytes, "child");
    assert_eq!(child, 0x02, "a small child inside a large object stays small");

    // A small parent holding a child that needs the large form grows too.
    let document = Json::Array(vec![Json::Int(1), Json::Array(vec![Json::String("x".repeat(70000))])]);
    let bytes = encode_and_check(&document);
    assert_eq!(bytes[0], 0x03);
    assert_eq!(bytes[1 + 8 + 5], 0x03, "the child, over 64 KiB itself, is large too");
}

/// The type byte in the value entry of `key` in a large top-level object.
fn document_child_type(bytes: &[u8], key: &str) -> u8 {
    let Json::Object(members) = decode(bytes).unwrap() else { panic!("not an object") };
    let index = members.keys().position(|k| k == key).unwrap();
    let count = members.len();
    bytes[1 + 8 + count * 6 + index * 5]
}

#[test]
fn documents_match_the_bytes_of_mysqls_format() {
    // Built by hand from the grammar in MySQL's json_binary.h.
    let cases: Vec<(Json, &str)> = vec![
        // {"a": 1}: count 1, size 12, key entry (offset 11, length 1),
        // value entry int16 1 inlined, key "a".
        (object(vec![("a", Json::Int(1))]), "00 0100 0c00 0b00 0100 05 0100 61"),
        // [1, "b"]: count 2, size 12, int16 1 inlined, string at offset 10.
        (Json::Array(vec![Json::Int(1), Json::String("b".to_owned())]), "02 0200 0c00 05 0100 0c 0a00 01 62"),
        // [70000]: int32 is not inlined in the small form.
        (Json::Array(vec![Json::Int(70000)]), "02 0100 0b00 07 0700 70110100"),
        (Json::Array(vec![]), "02 0000 0400"),
        (Json::Object(Object::new()), "00 0000 0400"),
        (Json::Null, "04 00"),
        (Json::Bool(true), "04 01"),
        (Json::Bool(false), "04 02"),
        (Json::Int(-1), "05 ffff"),
        (Json::UInt(65535), "06 ffff"),
        (Json::Int(-2147483648), "07 00000080"),
        (Json::UInt(4294967295), "08 ffffffff"),
        (Json::Int(i64::MIN), "09 0000000000000080"),
        (Json::UInt(u64::MAX), "0a ffffffffffffffff"),
        (Json::Double(1.0), "0b 000000000000f03f"),
        (Json::String("abc".to_owned()), "0c 03 616263"),
        // A 200-byte string: the length 200 takes two 7-bit bytes.
        (Json::String("z".repeat(200)), &*Box::leak(format!("0c c801 {}", "7a".repeat(200)).into_boxed_str())),
        // DECIMAL(5,2) 123.45: precision, scale, then decimal2bin.
        (decimal("123.45", 5, 2), "0f f6 05 05 02 807b2d"),
        // DATE 2014-05-17 packed: ((2014 * 13 + 5) << 5 | 17) << 41.
        (Json::Temporal(Temporal::date(2014, 5, 17)), "0f 0a 08 0000000000e29219"),
        // {"b": 1, "a": 2, "ab": 3}: keys sorted "a", "b", "ab".
        (
            object(vec![("b", Json::Int(1)), ("a", Json::Int(2)), ("ab", Json::Int(3))]),
            "00 0300 1d00 1900 0100 1a00 0100 1b00 0200 05 0200 05 0100 05 0300 61 62 6162",
        ),
    ];
    for (document, expected) in cases {
        let bytes = encode_and_check(&document);
        assert_eq!(bytes, hex(expected), "{document:?}");
    }
}

#[test]
fn the_large_form_inlines_32_bit_integers_sign_extended() {
    // 16400 int16 elements push the offsets past 64 KiB only with a 4-byte
    // element; here the size does: 22000 entries of 3 bytes.
    let mut elements = vec![Json::Int(-2), Json::UInt(4_000_000_000), Json::Int(-70000)];
    elements.extend((0..22000).map(|_| Json::Null));
    let bytes = encode_and_check(&Json::Array(elements));
    assert_eq!(bytes[0], 0x03);
    let entries = &bytes[9..9 + 15];
    assert_eq!(entries, hex("05 feffffff 08 0028 6bee 07 90ee feff").as_slice());
}

#[test]
fn encoding_refuses_what_mysql_refuses() {
    let long_key = object(vec![(&"k".repeat(65536), Json::Null)]);
    assert_eq!(to_binary(&long_key), Err(JsonEncodeError::KeyTooBig));
    assert_eq!(to_binary(&long_key).unwrap_err().code(), 3151);
    let mut too_deep = Json::Null;
    for _ in 0..101 {
        too_deep = Json::Array(vec![too_deep]);
    }
    assert_eq!(to_binary(&too_deep), Err(JsonEncodeError::TooDeep));
    assert!(matches!(to_binary(&Json::Double(f64::NAN)), Err(JsonEncodeError::Invalid { .. })));
    let date_as_raw_opaque = Json::Opaque { field_type: 10, bytes: vec![0; 8] };
    assert!(matches!(to_binary(&date_as_raw_opaque), Err(JsonEncodeError::Invalid { .. })));
    let mut out = vec![1, 2, 3];
    assert!(encode(&too_deep, &mut out).is_err());
    assert_eq!(out, [1, 2, 3], "a refused document leaves nothing behind");
}

#[test]
fn an_empty_value_is_the_null_literal_as_mysql_reads_it() {
    assert_eq!(decode(&[]).unwrap(), Json::Null);
}

#[test]
fn malformed_binaries_are_errors() {
    let cases: Vec<(&str, &str)> = vec![
        ("10", "unknown type byte"),
        ("04 03", "unknown literal"),
        ("04", "truncated literal"),
        ("05 01", "truncated int16"),
        ("0b 000000000000f07f", "infinite double"),
        ("0c 05 6162", "string past the end"),
        ("0c ff ff ff ff ff 01", "variable length past 5 bytes"),
        ("0c 02 c328", "string not UTF-8"),
        ("0c 01 61 00", "trailing byte"),
        ("02 0100 0b00", "array size past the end"),
        ("02 0200 0500 05 0100", "entries past the size"),
        ("02 0100 0700 0c 0100", "value offset inside the header"),
        ("02 0100 0700 0c 0700", "value offset at the end"),
        ("02 0100 0700 10 0000", "unknown type in an entry"),
        ("00 0100 0c00 0500 0100 05 0100 61", "key offset inside the header"),
        ("00 0100 0c00 0b00 0200 05 0100 61", "key past the end"),
        ("00 0200 1400 1200 0100 1300 0100 05 0100 05 0200 62 61", "keys out of order"),
        ("00 0200 1400 1200 0100 1200 0100 05 0100 05 0200 61 61", "duplicate keys"),
        ("0f f6 03 05 02 80", "DECIMAL shorter than its precision needs"),
        ("0f f6 01 05", "DECIMAL without scale"),
        ("0f 0a 07 00000000000000", "DATE of 7 bytes"),
        ("0f 0a 08 0100000000e29219", "DATE with time bits"),
    ];
    for (bytes, what) in cases {
        assert!(decode(&hex(bytes)).is_err(), "{what}: {bytes} decoded");
    }
}

#[test]
fn deep_nesting_past_100_is_an_error() {
    // 101 nested small arrays, each [child], built inside out.
    let mut bytes = Vec::new();
    let mut inner: Vec<u8> = hex("0000 0400");
    for _ in 0..100 {
        let size = 4 + 3 + inner.len();
        let mut outer = vec![0x01, 0x00];
        outer.extend_from_slice(&(size as u16).to_le_bytes());
        outer.extend_from_slice(&[0x02, 0x07, 0x00]);
        outer.extend_from_slice(&inner);
        inner = outer;
    }
    bytes.push(0x02);
    bytes.extend_from_slice(&inner);
    let error = decode(&bytes).unwrap_err();
    assert!(error.to_string().contains("deeper than 100"), "{error}");
    // One level less decodes.
    assert!(decode(&[&[0x02][..], &inner[7..]].concat()).is_ok());
}

#[test]
fn entries_sharing_one_value_cannot_multiply_the_document() {
    // Each level is an array of two entries pointing at the same child:
    // 2^40 values if followed, refused once it outgrows the input.
    let mut inner: Vec<u8> = hex("0000 0400");
    for _ in 0..40 {
        let size = 4 + 6 + inner.len();
        let mut outer = vec![0x02, 0x00];
        outer.extend_from_slice(&(size as u16).to_le_bytes());
        outer.extend_from_slice(&[0x02, 0x0a, 0x00, 0x02, 0x0a, 0x00]);
        outer.extend_from_slice(&inner);
        inner = outer;
    }
    let bytes = [&[0x02][..], &inner].concat();
    let error = decode(&bytes).unwrap_err();
    assert!(error.to_string().contains("overlap"), "{error}");
}

fn sample_documents() -> Vec<Json> {
    let mut documents = every_scalar();
    documents.push(Json::Array(every_scalar()));
    documents.push(Json::Object(every_scalar().into_iter().enumerate().map(|(i, v)| (format!("key {i}"), v)).collect()));
    documents.push(object(vec![("nested", Json::Array(vec![object(vec![("x", Json::Array(vec![Json::Int(70000), Json::Null]))])]))]));
    documents.push(Json::Array((0..22000).map(|i| Json::Int(i * 3)).collect()));
    documents
}

#[test]
fn mutated_encodings_decode_or_fail_without_panicking() {
    // Every single-byte change, truncation and a few byte swaps of each
    // small sample: each is an error or a document that re-encodes.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for document in sample_documents() {
        let bytes = to_binary(&document).unwrap();
        for length in 0..bytes.len().min(400) {
            let _ = decode(&bytes[..length]);
        }
        for _ in 0..2000 {
            let mut mutated = bytes.clone();
            for _ in 0..1 + next() % 3 {
                let at = (next() % mutated.len() as u64) as usize;
                mutated[at] = next() as u8;
            }
            if let Ok(decoded) = decode(&mutated) {
                let _ = to_binary(&decoded);
            }
        }
    }
}

/// Documents of every kind, nested a few levels.
fn any_document() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        prop_oneof![any::<i16>().prop_map(i64::from), any::<i32>().prop_map(i64::from), any::<i64>()].prop_map(Json::Int),
        prop_oneof![any::<u16>().prop_map(u64::from), any::<u32>().prop_map(u64::from), any::<u64>()].prop_map(Json::UInt),
        any::<f64>().prop_filter("finite", |d| d.is_finite()).prop_map(Json::Double),
        "\\PC{0,20}".prop_map(Json::String),
        (1u8..=65, any::<u64>(), any::<u64>(), any::<bool>()).prop_map(|(precision, integer, fraction, negative)| {
            let scale = (fraction % (precision.min(30) as u64 + 1)) as u8;
            let integer_digits = (precision - scale) as usize;
            let integer = (integer.to_string() + "0").chars().take(integer_digits.min(19)).collect::<String>();
            let fraction = format!("{:0>30}", fraction).chars().take(scale as usize).collect::<String>();
            let sign = if negative { "-" } else { "" };
            let integer = if integer.is_empty() { "0".to_owned() } else { integer };
            let text = if scale == 0 { format!("{sign}{integer}") } else { format!("{sign}{integer}.{fraction}") };
            Json::Decimal(JsonDecimal::new(&text, precision, scale).unwrap())
        }),
        (0u16..=9999, 0u8..=12, 0u8..=31).prop_map(|(y, m, d)| Json::Temporal(Temporal::date(y, m, d))),
        (any::<bool>(), 0u16..=838, 0u8..60, 0u8..60, 0u32..1_000_000)
            .prop_map(|(negative, h, m, s, us)| Json::Temporal(Temporal::time(negative, h, m, s, us))),
        (any::<bool>(), 0u16..=9999, 1u8..=12, 1u8..=31, 0u16..24, 0u8..60, 0u8..60, 0u32..1_000_000).prop_map(
            |(timestamp, y, mo, d, h, mi, s, us)| {
                let (date, time) = ((y, mo, d), (h, mi, s, us));
                Json::Temporal(if timestamp { Temporal::timestamp(date, time) } else { Temporal::datetime(date, time) })
            }
        ),
        (prop::sample::select(vec![16u8, 249, 250, 251, 252, 254, 255]), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(field_type, bytes)| Json::Opaque { field_type, bytes }),
    ];
    leaf.prop_recursive(5, 200, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Json::Array),
            prop::collection::vec(("\\PC{0,8}", inner), 0..12).prop_map(|members| Json::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_documents_round_trip_and_match_mysql_common(document in any_document()) {
        encode_and_check(&document);
    }
}
