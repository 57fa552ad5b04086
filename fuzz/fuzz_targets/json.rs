//! Feeds arbitrary bytes to MySQL's binary JSON decoder and to the JSON
//! text parser. Nothing may panic; a binary that decodes must re-encode to
//! a binary that decodes to the same document, and a text that parses must
//! encode and decode to the same document.
//!
//! Run: `cargo +nightly fuzz run json` from this directory.

#![no_main]

use binlog_format::value::json::{binary, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(document) = binary::decode(data) {
        let again = binary::to_binary(&document).expect("a decoded document encodes");
        assert_eq!(binary::decode(&again).expect("a re-encoded document decodes"), document);
    }
    if let Ok(document) = text::parse(data) {
        let bytes = binary::to_binary(&document).expect("a parsed document encodes");
        assert_eq!(binary::decode(&bytes).expect("an encoded document decodes"), document);
    }
});
