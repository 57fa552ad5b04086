//! JSON text to a document, as MySQL parses it (RapidJSON's reader with
//! MySQL's handler): the same accepted grammar, the same error message and
//! byte position for text it refuses, the same number types.
//!
//! | number in the text | value |
//! |--------------------|-------|
//! | no fraction or exponent, 0 ..= 4294967295 | `Int` |
//! | no fraction or exponent, 4294967296 ..= 18446744073709551615 | `UInt` |
//! | no fraction or exponent, -9223372036854775808 ..= -1 | `Int` |
//! | anything else | `Double`, built as RapidJSON builds it (see `number`) |
//!
//! Duplicate keys keep the last value. Arrays and objects nest at most
//! [`DEPTH_MAX`] deep. A NUL byte ends the text, as it does for RapidJSON.

use super::{Json, Object, DEPTH_MAX};
use thiserror::Error;

/// RapidJSON's messages (`GetParseError_En`) for the errors its reader
/// gives MySQL.
pub mod message {
    pub const DOCUMENT_EMPTY: &str = "The document is empty.";
    pub const ROOT_NOT_SINGULAR: &str = "The document root must not be followed by other values.";
    pub const VALUE_INVALID: &str = "Invalid value.";
    pub const OBJECT_MISSING_NAME: &str = "Missing a name for object member.";
    pub const OBJECT_MISSING_COLON: &str = "Missing a colon after a name of object member.";
    pub const OBJECT_MISSING_COMMA_OR_CURLY_BRACKET: &str = "Missing a comma or '}' after an object member.";
    pub const ARRAY_MISSING_COMMA_OR_SQUARE_BRACKET: &str = "Missing a comma or ']' after an array element.";
    pub const STRING_UNICODE_ESCAPE_INVALID_HEX: &str = "Incorrect hex digit after \\u escape in string.";
    pub const STRING_UNICODE_SURROGATE_INVALID: &str = "The surrogate pair in string is invalid.";
    pub const STRING_ESCAPE_INVALID: &str = "Invalid escape character in string.";
    pub const STRING_MISSING_QUOTATION_MARK: &str = "Missing a closing quotation mark in string.";
    pub const STRING_INVALID_ENCODING: &str = "Invalid encoding in string.";
    pub const NUMBER_TOO_BIG: &str = "Number too big to be stored in double.";
    pub const NUMBER_MISSING_FRACTION: &str = "Miss fraction part in number.";
    pub const NUMBER_MISSING_EXPONENT: &str = "Miss exponent in number.";
}

/// Why a text is not a JSON document MySQL accepts.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JsonTextError {
    /// 3140 ER_INVALID_JSON_TEXT for a column value, 3141
    /// ER_INVALID_JSON_TEXT_IN_PARAM for a function argument: RapidJSON's
    /// message and the byte offset it stopped at.
    #[error("Invalid JSON text: \"{message}\" at position {position}")]
    Syntax { message: &'static str, position: usize },
    /// 3157 ER_JSON_DOCUMENT_TOO_DEEP.
    #[error("The JSON document exceeds the maximum depth.")]
    TooDeep,
}

impl JsonTextError {
    /// MySQL's error code when the text is a value for a column.
    pub fn code_for_column(&self) -> u16 {
        match self {
            JsonTextError::Syntax { .. } => 3140,
            JsonTextError::TooDeep => 3157,
        }
    }

    /// MySQL's message when the text is a value for `column`.
    pub fn message_for_column(&self, column: &str) -> String {
        match self {
            JsonTextError::Syntax { message, position } => {
                format!("Invalid JSON text: \"{message}\" at position {position} in value for column '{column}'.")
            }
            JsonTextError::TooDeep => self.to_string(),
        }
    }

    /// MySQL's error code when the text is argument of a function.
    pub fn code_for_argument(&self) -> u16 {
        match self {
            JsonTextError::Syntax { .. } => 3141,
            JsonTextError::TooDeep => 3157,
        }
    }

    /// MySQL's message when the text is argument `argument` (from 1) of
    /// `function`.
    pub fn message_for_argument(&self, argument: usize, function: &str) -> String {
        match self {
            JsonTextError::Syntax { message, position } => {
                format!("Invalid JSON text in argument {argument} to function {function}: \"{message}\" at position {position}.")
            }
            JsonTextError::TooDeep => self.to_string(),
        }
    }
}

/// Parses UTF-8 JSON text into a document.
pub fn parse(text: &[u8]) -> Result<Json, JsonTextError> {
    let mut parser = Parser { text, position: 0, depth: 0 };
    parser.skip_whitespace();
    if parser.peek() == 0 {
        return Err(parser.error(message::DOCUMENT_EMPTY));
    }
    let value = parser.value()?;
    parser.skip_whitespace();
    if parser.peek() != 0 {
        return Err(parser.error(message::ROOT_NOT_SINGULAR));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a [u8],
    position: usize,
    /// Arrays and objects open around the current position.
    depth: usize,
}

impl Parser<'_> {
    /// The next byte; 0 at the end, like RapidJSON's memory stream.
    fn peek(&self) -> u8 {
        self.text.get(self.position).copied().unwrap_or(0)
    }

    fn consume(&mut self, expected: u8) -> bool {
        if self.peek() == expected && expected != 0 {
            self.position += 1;
            true
        } else {
            false
        }
    }

    fn error(&self, message: &'static str) -> JsonTextError {
        JsonTextError::Syntax { message, position: self.position }
    }

    fn error_at(position: usize, message: &'static str) -> JsonTextError {
        JsonTextError::Syntax { message, position }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), b' ' | b'\n' | b'\r' | b'\t') {
            self.position += 1;
        }
    }

    fn value(&mut self) -> Result<Json, JsonTextError> {
        match self.peek() {
            b'n' => self.literal(b"null", Json::Null),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'"' => self.string().map(Json::String),
            b'{' => self.object(),
            b'[' => self.array(),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json, JsonTextError> {
        self.position += 1;
        for &expected in &word[1..] {
            if !self.consume(expected) {
                return Err(self.error(message::VALUE_INVALID));
            }
        }
        Ok(value)
    }

    /// Counts one more level of nesting (MySQL's handler checks on every
    /// `[` and `{`).
    fn enter(&mut self) -> Result<(), JsonTextError> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err(JsonTextError::TooDeep);
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Json, JsonTextError> {
        self.position += 1;
        self.enter()?;
        let mut members = Object::new();
        self.skip_whitespace();
        if self.consume(b'}') {
            self.depth -= 1;
            return Ok(Json::Object(members));
        }
        loop {
            if self.peek() != b'"' {
                return Err(self.error(message::OBJECT_MISSING_NAME));
            }
            let key = self.string()?;
            self.skip_whitespace();
            if !self.consume(b':') {
                return Err(self.error(message::OBJECT_MISSING_COLON));
            }
            self.skip_whitespace();
            let value = self.value()?;
            members.insert(key, value);
            self.skip_whitespace();
            match self.peek() {
                b',' => {
                    self.position += 1;
                    self.skip_whitespace();
                }
                b'}' => {
                    self.position += 1;
                    self.depth -= 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.error(message::OBJECT_MISSING_COMMA_OR_CURLY_BRACKET)),
            }
        }
    }

    fn array(&mut self) -> Result<Json, JsonTextError> {
        self.position += 1;
        self.enter()?;
        let mut elements = Vec::new();
        self.skip_whitespace();
        if self.consume(b']') {
            self.depth -= 1;
            return Ok(Json::Array(elements));
        }
        loop {
            elements.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                b',' => {
                    self.position += 1;
                    self.skip_whitespace();
                }
                b']' => {
                    self.position += 1;
                    self.depth -= 1;
                    return Ok(Json::Array(elements));
                }
                _ => return Err(self.error(message::ARRAY_MISSING_COMMA_OR_SQUARE_BRACKET)),
            }
        }
    }

    fn string(&mut self) -> Result<String, JsonTextError> {
        self.position += 1;
        let mut out = String::new();
        loop {
            let c = self.peek();
            match c {
                b'\\' => {
                    let escape_position = self.position;
                    self.position += 1;
                    let letter = self.peek();
                    let unescaped = if letter == b'u' {
                        self.position += 1;
                        self.unicode_escape(escape_position)?
                    } else {
                        let unescaped = match letter {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            _ => return Err(Self::error_at(escape_position, message::STRING_ESCAPE_INVALID)),
                        };
                        self.position += 1;
                        unescaped
                    };
                    out.push(unescaped);
                }
                b'"' => {
                    self.position += 1;
                    return Ok(out);
                }
                0 => return Err(self.error(message::STRING_MISSING_QUOTATION_MARK)),
                0x01..=0x1f => return Err(self.error(message::STRING_INVALID_ENCODING)),
                _ => {
                    let character = self.utf8_character().ok_or_else(|| self.error(message::STRING_INVALID_ENCODING))?;
                    out.push(character);
                }
            }
        }
    }

    /// One UTF-8 character at the position, consumed; `None` if the bytes
    /// there are not UTF-8.
    fn utf8_character(&mut self) -> Option<char> {
        let rest = &self.text[self.position..];
        let length = match rest[0] {
            0x00..=0x7f => 1,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return None,
        };
        let character = std::str::from_utf8(rest.get(..length)?).ok()?.chars().next()?;
        self.position += length;
        Some(character)
    }

    fn hex4(&mut self, escape_position: usize) -> Result<u32, JsonTextError> {
        let mut code_point = 0;
        for _ in 0..4 {
            let digit =
                (self.peek() as char).to_digit(16).ok_or(Self::error_at(escape_position, message::STRING_UNICODE_ESCAPE_INVALID_HEX))?;
            code_point = code_point << 4 | digit;
            self.position += 1;
        }
        Ok(code_point)
    }

    /// The character of a `\uXXXX` escape (and of the low surrogate's
    /// escape after a high one), the `\u` already consumed.
    fn unicode_escape(&mut self, escape_position: usize) -> Result<char, JsonTextError> {
        let surrogate_invalid = Self::error_at(escape_position, message::STRING_UNICODE_SURROGATE_INVALID);
        let high = self.hex4(escape_position)?;
        let code_point = match high {
            0xd800..=0xdbff => {
                if !(self.consume(b'\\') && self.consume(b'u')) {
                    return Err(surrogate_invalid);
                }
                let low = self.hex4(escape_position)?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return Err(surrogate_invalid);
                }
                0x10000 + ((high - 0xd800) << 10 | (low - 0xdc00))
            }
            // A lone low surrogate is no character.
            0xdc00..=0xdfff => return Err(surrogate_invalid),
            _ => high,
        };
        char::from_u32(code_point).ok_or(surrogate_invalid)
    }

    fn digit(&self) -> Option<u32> {
        let c = self.peek();
        c.is_ascii_digit().then(|| (c - b'0') as u32)
    }

    /// RapidJSON's `ParseNumber` without full precision, as MySQL calls it:
    /// integers as wide as they fit, anything else a double built from at
    /// most 17 significant digits scaled by an exact power of ten.
    fn number(&mut self) -> Result<Json, JsonTextError> {
        let start = self.position;
        let negative = self.consume(b'-');
        let mut small: u32 = 0;
        let mut wide: u64 = 0;
        let mut is_wide = false;
        let mut significant_digits = 0;
        match self.digit() {
            Some(0) => self.position += 1,
            Some(first) => {
                small = first;
                self.position += 1;
                // Past these the next digit no longer fits 32 bits.
                let (limit, last_digit_max) = if negative { (214_748_364, 8) } else { (429_496_729, 5) };
                while let Some(digit) = self.digit() {
                    if small >= limit && (small != limit || digit > last_digit_max) {
                        wide = small as u64;
                        is_wide = true;
                        break;
                    }
                    small = small * 10 + digit;
                    self.position += 1;
                    significant_digits += 1;
                }
            }
            None => return Err(self.error(message::VALUE_INVALID)),
        }

        let mut double = 0.0f64;
        let mut is_double = false;
        if is_wide {
            let (limit, last_digit_max) = if negative { (0x0ccc_cccc_cccc_cccc, 8) } else { (0x1999_9999_9999_9999, 5) };
            while let Some(digit) = self.digit() {
                if wide >= limit && (wide != limit || digit > last_digit_max) {
                    double = wide as f64;
                    is_double = true;
                    break;
                }
                wide = wide * 10 + digit as u64;
                self.position += 1;
                significant_digits += 1;
            }
        }
        if is_double {
            while let Some(digit) = self.digit() {
                double = double * 10.0 + digit as f64;
                self.position += 1;
            }
        }

        let mut fraction_exponent: i64 = 0;
        if self.consume(b'.') {
            if self.digit().is_none() {
                return Err(self.error(message::NUMBER_MISSING_FRACTION));
            }
            if !is_double {
                if !is_wide {
                    wide = small as u64;
                }
                // The significand stays exact up to 2^53 - 1.
                while let Some(digit) = self.digit() {
                    if wide > (1 << 53) - 1 {
                        break;
                    }
                    wide = wide * 10 + digit as u64;
                    self.position += 1;
                    fraction_exponent -= 1;
                    if wide != 0 {
                        significant_digits += 1;
                    }
                }
                double = wide as f64;
                is_double = true;
            }
            while let Some(digit) = self.digit() {
                self.position += 1;
                if significant_digits < 17 {
                    double = double * 10.0 + digit as f64;
                    fraction_exponent -= 1;
                    if double > 0.0 {
                        significant_digits += 1;
                    }
                }
            }
        }

        let mut exponent: i64 = 0;
        if self.consume(b'e') || self.consume(b'E') {
            if !is_double {
                double = if is_wide { wide as f64 } else { small as f64 };
                is_double = true;
            }
            let exponent_negative = if self.consume(b'+') { false } else { self.consume(b'-') };
            let Some(first) = self.digit() else {
                return Err(self.error(message::NUMBER_MISSING_EXPONENT));
            };
            exponent = first as i64;
            self.position += 1;
            if exponent_negative {
                // Keeps exponent + fraction_exponent within an int.
                let exponent_max = (fraction_exponent + 2_147_483_639) / 10;
                while let Some(digit) = self.digit() {
                    exponent = exponent * 10 + digit as i64;
                    self.position += 1;
                    if exponent > exponent_max {
                        while self.digit().is_some() {
                            self.position += 1;
                        }
                    }
                }
                exponent = -exponent;
            } else {
                let exponent_max = 308 - fraction_exponent;
                while let Some(digit) = self.digit() {
                    exponent = exponent * 10 + digit as i64;
                    self.position += 1;
                    if exponent > exponent_max {
                        return Err(Self::error_at(start, message::NUMBER_TOO_BIG));
                    }
                }
            }
        }

        if is_double {
            let value = scale_by_power_of_ten(double, exponent + fraction_exponent);
            if value > f64::MAX {
                return Err(Self::error_at(start, message::NUMBER_TOO_BIG));
            }
            return Ok(Json::Double(if negative { -value } else { value }));
        }
        // MySQL's handler: RapidJSON's Int, Uint and Int64 become INTEGER,
        // only Uint64 (non-negative and past 32 bits) UNSIGNED INTEGER.
        Ok(match (is_wide, negative) {
            (false, false) => Json::Int(small as i64),
            (false, true) => Json::Int(-(small as i64)),
            (true, false) => Json::UInt(wide),
            (true, true) => Json::Int((wide as i64).wrapping_neg()),
        })
    }
}

/// RapidJSON's `StrtodNormalPrecision`: `significand` times 10^`exponent`
/// by one multiplication or division with an exact power of ten.
fn scale_by_power_of_ten(significand: f64, exponent: i64) -> f64 {
    if exponent < -308 {
        fast_path(fast_path(significand, -308), exponent + 308)
    } else {
        fast_path(significand, exponent)
    }
}

/// RapidJSON's `FastPath`.
fn fast_path(significand: f64, exponent: i64) -> f64 {
    if exponent < -308 {
        0.0
    } else if exponent >= 0 {
        significand * power_of_ten(exponent)
    } else {
        significand / power_of_ten(-exponent)
    }
}

/// 10^`exponent` (0 ..= 308) as the nearest double, like the literals of
/// RapidJSON's `Pow10` table.
fn power_of_ten(exponent: i64) -> f64 {
    static POWERS: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let powers = POWERS.get_or_init(|| (0..=308).map(|n| format!("1e{n}").parse().unwrap_or(f64::INFINITY)).collect());
    powers.get(exponent as usize).copied().unwrap_or(f64::INFINITY)
}
