//! JSON text as MySQL reads and prints it: RapidJSON's errors at the same
//! byte positions, MySQL's number types, the last of duplicate keys, and
//! the printed form (`{"a": 1, "b": [1, 2]}`, `my_gcvt` doubles, MySQL's
//! escapes). Documents printed and parsed again are the same document, in
//! text and through the binary form.

use binlog_format::value::json::binary::{decode, to_binary};
use binlog_format::value::json::print::{format_double, to_text, to_unquoted_text};
use binlog_format::value::json::text::{message, parse, JsonTextError};
use binlog_format::value::json::{Json, JsonDecimal, Object, Temporal};
use proptest::prelude::*;

fn parsed(text: &str) -> Json {
    parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn syntax_error(text: &[u8]) -> (&'static str, usize) {
    match parse(text) {
        Err(JsonTextError::Syntax { message, position }) => (message, position),
        other => panic!("{:?} gave {other:?}", String::from_utf8_lossy(text)),
    }
}

#[test]
fn invalid_text_gets_rapidjsons_message_at_its_position() {
    let cases: Vec<(&[u8], &str, usize)> = vec![
        (b"", message::DOCUMENT_EMPTY, 0),
        (b"   ", message::DOCUMENT_EMPTY, 3),
        (b"{\"a\":}", message::VALUE_INVALID, 5),
        (b"[1,2", message::ARRAY_MISSING_COMMA_OR_SQUARE_BRACKET, 4),
        (b"[1 2]", message::ARRAY_MISSING_COMMA_OR_SQUARE_BRACKET, 3),
        (b"[1,]", message::VALUE_INVALID, 3),
        (b"{\"a\" 1}", message::OBJECT_MISSING_COLON, 5),
        (b"{\"a\":1,}", message::OBJECT_MISSING_NAME, 7),
        (b"{\"a\":1 \"b\":2}", message::OBJECT_MISSING_COMMA_OR_CURLY_BRACKET, 7),
        (b"{a:1}", message::OBJECT_MISSING_NAME, 1),
        (b"[1] x", message::ROOT_NOT_SINGULAR, 4),
        (b"nul", message::VALUE_INVALID, 3),
        (b"nxll", message::VALUE_INVALID, 1),
        (b"True", message::VALUE_INVALID, 0),
        (b"\"abc", message::STRING_MISSING_QUOTATION_MARK, 4),
        (b"\"a\x01\"", message::STRING_INVALID_ENCODING, 2),
        (b"\"a\xff\"", message::STRING_INVALID_ENCODING, 2),
        (b"[\"\\q\"]", message::STRING_ESCAPE_INVALID, 2),
        (b"\"\\u12g4\"", message::STRING_UNICODE_ESCAPE_INVALID_HEX, 1),
        (b"\"\\ud800\"", message::STRING_UNICODE_SURROGATE_INVALID, 1),
        (b"\"\\ud800\\u0041\"", message::STRING_UNICODE_SURROGATE_INVALID, 1),
        (b"1.", message::NUMBER_MISSING_FRACTION, 2),
        (b"1.e5", message::NUMBER_MISSING_FRACTION, 2),
        (b"1e", message::NUMBER_MISSING_EXPONENT, 2),
        (b"1e+", message::NUMBER_MISSING_EXPONENT, 3),
        (b"-", message::VALUE_INVALID, 1),
        (b"+1", message::VALUE_INVALID, 0),
        (b".5", message::VALUE_INVALID, 0),
        (b"01", message::ROOT_NOT_SINGULAR, 1),
        (b"1e400", message::NUMBER_TOO_BIG, 0),
        (b"[0, 1e309]", message::NUMBER_TOO_BIG, 4),
        (b"NaN", message::VALUE_INVALID, 0),
    ];
    for (text, expected_message, expected_position) in cases {
        assert_eq!(syntax_error(text), (expected_message, expected_position), "{:?}", String::from_utf8_lossy(text));
    }
}

#[test]
fn errors_read_as_mysqls_messages() {
    let error = parse(b"{\"a\":}").unwrap_err();
    assert_eq!(error.code_for_column(), 3140);
    assert_eq!(error.message_for_column("doc"), "Invalid JSON text: \"Invalid value.\" at position 5 in value for column 'doc'.");
    assert_eq!(error.code_for_argument(), 3141);
    assert_eq!(
        error.message_for_argument(1, "cast_as_json"),
        "Invalid JSON text in argument 1 to function cast_as_json: \"Invalid value.\" at position 5."
    );
}

#[test]
fn nesting_past_100_is_mysqls_depth_error() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(parsed(&nested(100)).depth(), 100);
    let error = parse(nested(101).as_bytes()).unwrap_err();
    assert_eq!(error, JsonTextError::TooDeep);
    assert_eq!((error.code_for_column(), error.to_string().as_str()), (3157, "The JSON document exceeds the maximum depth."));
    let objects = format!("{}1{}", "{\"k\":".repeat(101), "}".repeat(101));
    assert_eq!(parse(objects.as_bytes()), Err(JsonTextError::TooDeep));
    // Deep text far past the limit is refused, not a stack overflow.
    assert_eq!(parse(nested(1_000_000).as_bytes()), Err(JsonTextError::TooDeep));
}

#[test]
fn numbers_take_mysqls_types() {
    let cases = [
        ("0", Json::Int(0)),
        ("-0", Json::Int(0)),
        ("4294967295", Json::Int(4294967295)),
        ("4294967296", Json::UInt(4294967296)),
        ("18446744073709551615", Json::UInt(u64::MAX)),
        ("18446744073709551616", Json::Double(18446744073709551616.0)),
        ("-9223372036854775808", Json::Int(i64::MIN)),
        ("-9223372036854775809", Json::Double(-9223372036854775809.0)),
        ("1.0", Json::Double(1.0)),
        ("1e2", Json::Double(100.0)),
        ("1E-2", Json::Double(0.01)),
        ("-0.0", Json::Double(-0.0)),
        ("1e-400", Json::Double(0.0)),
        ("0.1", Json::Double(0.1)),
    ];
    for (text, expected) in cases {
        let value = parsed(text);
        assert_eq!(value, expected, "{text}");
        if let (Json::Double(a), Json::Double(b)) = (&value, &expected) {
            assert_eq!(a.to_bits(), b.to_bits(), "{text} keeps its sign");
        }
    }
}

#[test]
fn doubles_are_built_as_rapidjson_builds_them_without_full_precision() {
    // MySQL parses with RapidJSON's default flags: up to 17 significant
    // digits, scaled by one multiplication with a power of ten. Short
    // numbers come out correctly rounded; this one lands one step away.
    assert_eq!(parsed("1.2330021593809018e147"), Json::Double(1.2330021593809016e147));
    assert_eq!(parsed("0.1234567890123456789"), Json::Double(0.12345678901234568));
    assert_eq!(parsed("123456.789e3"), Json::Double(123456789.0));
}

#[test]
fn strings_unescape_and_duplicate_keys_keep_the_last_value() {
    assert_eq!(parsed(r#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 é""#), Json::String("\"\\/\u{8}\u{c}\n\r\té😀 é".to_owned()));
    let document = parsed(r#"{"a": 1, "b": 2, "a": 3, "": 4, "": 5}"#);
    assert_eq!(to_text(&document), r#"{"": 5, "a": 3, "b": 2}"#);
    // A NUL byte ends the text for RapidJSON, so what follows is not read.
    assert_eq!(parse(b"[1]\0garbage").unwrap(), Json::Array(vec![Json::Int(1)]));
}

#[test]
fn documents_print_as_mysql_prints_them() {
    let cases = [
        (r#"{"b":[1,2],"a":1}"#, r#"{"a": 1, "b": [1, 2]}"#),
        (r#"{"b":1,"a":2,"ab":3,"":4}"#, r#"{"": 4, "a": 2, "b": 1, "ab": 3}"#),
        ("[]", "[]"),
        ("{}", "{}"),
        (" [ true , false , null ] ", "[true, false, null]"),
        (r#"[{"x":[{}]},[[]]]"#, r#"[{"x": [{}]}, [[]]]"#),
        (r#""a\u0001b\u001fc\u007f/é""#, "\"a\\u0001b\\u001fc\u{7f}/é\""),
        (r#""tab\there\nquote\"back\\slash\r\b\f""#, r#""tab\there\nquote\"back\\slash\r\b\f""#),
        ("18446744073709551615", "18446744073709551615"),
        ("-42", "-42"),
    ];
    for (text, expected) in cases {
        assert_eq!(to_text(&parsed(text)), expected, "{text}");
        assert_eq!(parsed(text).to_string(), expected, "{text} through Display");
    }
}

#[test]
fn doubles_print_as_my_gcvt_prints_them() {
    let cases = [
        (1.5, "1.5"),
        (3.0, "3.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (-1.5, "-1.5"),
        (100.0, "100.0"),
        (1e100, "1e100"),
        (1e15, "1e15"),
        (1e14, "100000000000000.0"),
        (123456789012345678.0, "1.2345678901234568e17"),
        (1234567890123456.7, "1234567890123456.8"),
        (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"),
        (0.0001, "0.0001"),
        (1e-15, "0.000000000000001"),
        (1e-16, "1e-16"),
        (1.5e-7, "0.00000015"),
        (-2.5e-300, "-2.5e-300"),
        (f64::MAX, "1.7976931348623157e308"),
        (5e-324, "5e-324"),
    ];
    for (value, expected) in cases {
        assert_eq!(format_double(value), expected, "{value:e}");
        assert_eq!(parsed(expected), Json::Double(value), "{expected} reads back");
    }
}

#[test]
fn opaque_values_print_as_mysql_prints_them() {
    let document = Json::Array(vec![
        Json::Decimal(JsonDecimal::new("123.45", 5, 2).unwrap()),
        Json::Decimal(JsonDecimal::new("-0.5", 3, 2).unwrap()),
        Json::Temporal(Temporal::date(2024, 2, 29)),
        Json::Temporal(Temporal::time(true, 838, 59, 59, 0)),
        Json::Temporal(Temporal::datetime((2015, 1, 15), (15, 16, 17, 123456))),
        Json::Temporal(Temporal::timestamp((1970, 1, 1), (0, 0, 1, 0))),
        Json::Opaque { field_type: 249, bytes: vec![1, 2, 3] },
        Json::Opaque { field_type: 253, bytes: b"as a string".to_vec() },
    ]);
    assert_eq!(
        to_text(&document),
        r#"[123.45, -0.50, "2024-02-29", "-838:59:59.000000", "2015-01-15 15:16:17.123456", "1970-01-01 00:00:01.000000", "base64:type249:AQID", "as a string"]"#
    );
    // MySQL's base64 starts a new line every 76 characters; the printer
    // escapes the newline.
    let long = Json::Opaque { field_type: 252, bytes: vec![0xff; 60] };
    assert_eq!(to_text(&long), format!("\"base64:type252:{}\\n{}\"", "/".repeat(76), "/".repeat(4)));
}

#[test]
fn unquoted_text_drops_the_quotes_of_a_top_level_string() {
    assert_eq!(to_unquoted_text(&Json::String("a\"b\n".to_owned())), "a\"b\n");
    assert_eq!(to_unquoted_text(&Json::Temporal(Temporal::date(2024, 1, 2))), "2024-01-02");
    assert_eq!(to_unquoted_text(&parsed(r#"["a"]"#)), r#"["a"]"#);
    assert_eq!(to_unquoted_text(&Json::Double(2.0)), "2.0");
}

/// Documents that text can hold: integers in the range text reads as
/// `Int`, the rest as `UInt`, doubles, any strings and keys.
fn text_document() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        (i64::MIN..=u32::MAX as i64).prop_map(Json::Int),
        (u32::MAX as u64 + 1..=u64::MAX).prop_map(Json::UInt),
        // Doubles RapidJSON reads back exactly: at most 15 digits scaled by
        // an exact power of ten.
        (-999_999_999_999_999i64..=999_999_999_999_999, -22i32..=8)
            .prop_map(|(mantissa, exponent)| Json::Double(format!("{mantissa}e{exponent}").parse().unwrap())),
        "\\PC{0,12}|[\\x00-\\x1f\"\\\\/]{0,4}".prop_map(Json::String),
    ];
    leaf.prop_recursive(5, 150, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(Json::Array),
            prop::collection::vec(("\\PC{0,6}", inner), 0..10).prop_map(|members| Json::Object(members.into_iter().collect::<Object>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn text_to_document_to_binary_to_document_to_text_round_trips(document in text_document()) {
        let text = to_text(&document);
        let from_text = parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(&from_text, &document);
        let binary = to_binary(&from_text).unwrap();
        let from_binary = decode(&binary).unwrap();
        prop_assert_eq!(&from_binary, &document);
        prop_assert_eq!(to_text(&from_binary), text);
    }
}
