//! MySQL's binary JSON (`json_binary.cc`): [`encode`] writes a document
//! byte for byte as MySQL 8.4 serializes it, [`decode`] reads one back and
//! refuses anything malformed. The layout is in the [module doc](super).

use super::temporal::PACKED_LENGTH;
use super::{key_order, Json, JsonDecimal, Object, Temporal, TemporalKind, DEPTH_MAX};
use crate::column_type::type_code;
use crate::error::DecodeError;
use crate::value::decimal;
use std::cmp::Ordering;
use thiserror::Error;

mod type_byte {
    pub const SMALL_OBJECT: u8 = 0x00;
    pub const LARGE_OBJECT: u8 = 0x01;
    pub const SMALL_ARRAY: u8 = 0x02;
    pub const LARGE_ARRAY: u8 = 0x03;
    pub const LITERAL: u8 = 0x04;
    pub const INT16: u8 = 0x05;
    pub const UINT16: u8 = 0x06;
    pub const INT32: u8 = 0x07;
    pub const UINT32: u8 = 0x08;
    pub const INT64: u8 = 0x09;
    pub const UINT64: u8 = 0x0a;
    pub const DOUBLE: u8 = 0x0b;
    pub const STRING: u8 = 0x0c;
    pub const OPAQUE: u8 = 0x0f;
}

mod literal {
    pub const NULL: u8 = 0x00;
    pub const TRUE: u8 = 0x01;
    pub const FALSE: u8 = 0x02;
}

/// Offsets, sizes and counts in a small container are u16; past this they
/// need the large form.
const SMALL_OFFSET_MAX: usize = u16::MAX as usize;
/// A document is at most 4 GiB: large offsets are u32.
const DOCUMENT_BYTES_MAX: usize = u32::MAX as usize;
/// Keys carry a u16 length.
const KEY_BYTES_MAX: usize = u16::MAX as usize;
/// A variable length of a u32 takes at most 5 bytes of 7 bits.
const VARIABLE_LENGTH_BYTES_MAX: usize = 5;

fn offset_size(large: bool) -> usize {
    if large {
        4
    } else {
        2
    }
}

fn key_entry_size(large: bool) -> usize {
    offset_size(large) + 2
}

fn value_entry_size(large: bool) -> usize {
    1 + offset_size(large)
}

/// Why a document cannot be stored, with MySQL's error for it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JsonEncodeError {
    /// 3150 ER_JSON_VALUE_TOO_BIG: the document would pass 4 GiB.
    #[error("The JSON value is too big to be stored in a JSON column.")]
    ValueTooBig,
    /// 3151 ER_JSON_KEY_TOO_BIG: a key of more than 65535 bytes.
    #[error("The JSON object contains a key name that is too long.")]
    KeyTooBig,
    /// 3157 ER_JSON_DOCUMENT_TOO_DEEP: arrays and objects nested past 100.
    #[error("The JSON document exceeds the maximum depth.")]
    TooDeep,
    /// A value no MySQL document holds (a non-finite double, a DECIMAL
    /// text that does not fit its precision): a caller's bug, not user input.
    #[error("invalid JSON {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

impl JsonEncodeError {
    /// MySQL's error code; every one has SQLSTATE [`super::SQL_STATE`]
    /// except `Invalid`, an internal error (1105, HY000).
    pub fn code(&self) -> u16 {
        match self {
            JsonEncodeError::ValueTooBig => 3150,
            JsonEncodeError::KeyTooBig => 3151,
            JsonEncodeError::TooDeep => 3157,
            JsonEncodeError::Invalid { .. } => 1105,
        }
    }
}

/// How serializing a container in one form went wrong: too big for the
/// small form (retry it large), or an error for the caller.
enum Failure {
    NeedsLargeForm,
    Error(JsonEncodeError),
}

impl From<JsonEncodeError> for Failure {
    fn from(error: JsonEncodeError) -> Self {
        Failure::Error(error)
    }
}

/// `offset_or_size` fits the form in use (`is_too_big_for_json`).
fn check_fits(offset_or_size: usize, large: bool) -> Result<(), Failure> {
    if offset_or_size <= SMALL_OFFSET_MAX {
        Ok(())
    } else if !large {
        Err(Failure::NeedsLargeForm)
    } else if offset_or_size > DOCUMENT_BYTES_MAX {
        Err(JsonEncodeError::ValueTooBig.into())
    } else {
        Ok(())
    }
}

/// Appends `document` in MySQL's binary JSON format.
pub fn encode(document: &Json, out: &mut Vec<u8>) -> Result<(), JsonEncodeError> {
    let start = out.len();
    let type_position = out.len();
    out.push(0);
    let result = Encoder { out }.value(document, type_position, 0, false);
    match result {
        Ok(()) if out.len() - start > DOCUMENT_BYTES_MAX => Err(JsonEncodeError::ValueTooBig),
        Ok(()) => Ok(()),
        // A top-level container is never asked to stay small.
        Err(Failure::NeedsLargeForm) => Err(JsonEncodeError::ValueTooBig),
        Err(Failure::Error(error)) => Err(error),
    }
    .inspect_err(|_| out.truncate(start))
}

/// `document` in MySQL's binary JSON format.
pub fn to_binary(document: &Json) -> Result<Vec<u8>, JsonEncodeError> {
    let mut out = Vec::new();
    encode(document, &mut out)?;
    Ok(out)
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

impl Encoder<'_> {
    fn write_offset_or_size(&mut self, position: usize, value: usize, large: bool) {
        let bytes = (value as u32).to_le_bytes();
        let width = offset_size(large);
        self.out[position..position + width].copy_from_slice(&bytes[..width]);
    }

    fn push_offset_or_size(&mut self, value: usize, large: bool) {
        let position = self.out.len();
        self.out.resize(position + offset_size(large), 0);
        self.write_offset_or_size(position, value, large);
    }

    fn push_variable_length(&mut self, mut length: usize) -> Result<(), JsonEncodeError> {
        if length > DOCUMENT_BYTES_MAX {
            return Err(JsonEncodeError::ValueTooBig);
        }
        loop {
            let low = (length & 0x7f) as u8;
            length >>= 7;
            if length == 0 {
                self.out.push(low);
                return Ok(());
            }
            self.out.push(low | 0x80);
        }
    }

    /// Writes `value` at the end and its type byte at `type_position`
    /// (`serialize_json_value`). `small_parent`: the enclosing container is
    /// being written small, so a container here that needs the large form
    /// makes the parent large too.
    fn value(&mut self, value: &Json, type_position: usize, depth: usize, small_parent: bool) -> Result<(), Failure> {
        let type_byte = match value {
            Json::Array(elements) => return self.container(type_position, depth, small_parent, Container::Array(elements)),
            Json::Object(members) => return self.container(type_position, depth, small_parent, Container::Object(members)),
            Json::Null => {
                self.out.push(literal::NULL);
                type_byte::LITERAL
            }
            Json::Bool(b) => {
                self.out.push(if *b { literal::TRUE } else { literal::FALSE });
                type_byte::LITERAL
            }
            Json::Int(v) => {
                if let Ok(v) = i16::try_from(*v) {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::INT16
                } else if let Ok(v) = i32::try_from(*v) {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::INT32
                } else {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::INT64
                }
            }
            Json::UInt(v) => {
                if let Ok(v) = u16::try_from(*v) {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::UINT16
                } else if let Ok(v) = u32::try_from(*v) {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::UINT32
                } else {
                    self.out.extend_from_slice(&v.to_le_bytes());
                    type_byte::UINT64
                }
            }
            Json::Double(v) => {
                if !v.is_finite() {
                    return Err(JsonEncodeError::Invalid { what: "double", reason: format!("{v} is not finite") }.into());
                }
                self.out.extend_from_slice(&v.to_le_bytes());
                type_byte::DOUBLE
            }
            Json::String(s) => {
                self.push_variable_length(s.len())?;
                self.out.extend_from_slice(s.as_bytes());
                type_byte::STRING
            }
            Json::Decimal(d) => {
                let mut bytes = vec![d.precision, d.scale];
                decimal::encode_decimal(&d.text, d.precision, d.scale, &mut bytes)
                    .map_err(|reason| JsonEncodeError::Invalid { what: "DECIMAL", reason })?;
                self.opaque(type_code::NEWDECIMAL, &bytes)?
            }
            Json::Temporal(t) => self.opaque(t.kind.field_type(), &t.packed().to_le_bytes())?,
            Json::Opaque { field_type, .. }
                if *field_type == type_code::NEWDECIMAL || TemporalKind::from_field_type(*field_type).is_some() =>
            {
                let reason = format!("field type {field_type} is held by Json::Decimal or Json::Temporal");
                return Err(JsonEncodeError::Invalid { what: "opaque value", reason }.into());
            }
            Json::Opaque { field_type, bytes } => self.opaque(*field_type, bytes)?,
        };
        self.out[type_position] = type_byte;
        Ok(())
    }

    fn opaque(&mut self, field_type: u8, bytes: &[u8]) -> Result<u8, JsonEncodeError> {
        self.out.push(field_type);
        self.push_variable_length(bytes.len())?;
        self.out.extend_from_slice(bytes);
        Ok(type_byte::OPAQUE)
    }

    /// An array or object: small if it fits, else large.
    fn container(&mut self, type_position: usize, depth: usize, small_parent: bool, container: Container<'_>) -> Result<(), Failure> {
        let start = self.out.len();
        self.out[type_position] = container.type_byte(false);
        match self.container_in_form(&container, false, depth) {
            Err(Failure::NeedsLargeForm) if !small_parent => {
                self.out.truncate(start);
                self.out[type_position] = container.type_byte(true);
                self.container_in_form(&container, true, depth)
            }
            result => result,
        }
    }

    fn container_in_form(&mut self, container: &Container<'_>, large: bool, depth: usize) -> Result<(), Failure> {
        let depth = depth + 1;
        if depth > DEPTH_MAX {
            return Err(JsonEncodeError::TooDeep.into());
        }
        let start = self.out.len();
        let count = container.len();
        check_fits(count, large)?;
        self.push_offset_or_size(count, large);
        let size_position = self.out.len();
        self.push_offset_or_size(0, large);

        if let Container::Object(members) = container {
            // Keys follow the key entries and the value entries.
            let mut key_offset = self.out.len() - start + count * (key_entry_size(large) + value_entry_size(large));
            for key in members.keys() {
                if key.len() > KEY_BYTES_MAX {
                    return Err(JsonEncodeError::KeyTooBig.into());
                }
                check_fits(key_offset, large)?;
                self.push_offset_or_size(key_offset, large);
                self.out.extend_from_slice(&(key.len() as u16).to_le_bytes());
                key_offset += key.len();
            }
        }
        let mut entry_position = self.out.len();
        self.out.resize(entry_position + count * value_entry_size(large), 0);
        if let Container::Object(members) = container {
            for key in members.keys() {
                self.out.extend_from_slice(key.as_bytes());
            }
        }

        let mut elements: Box<dyn Iterator<Item = &Json>> = match container {
            Container::Array(elements) => Box::new(elements.iter()),
            Container::Object(members) => Box::new(members.iter().map(|(_, value)| value)),
        };
        for element in &mut elements {
            if !self.inline(element, entry_position, large) {
                let offset = self.out.len() - start;
                check_fits(offset, large)?;
                self.write_offset_or_size(entry_position + 1, offset, large);
                self.value(element, entry_position, depth, !large)?;
            }
            entry_position += value_entry_size(large);
        }

        let size = self.out.len() - start;
        check_fits(size, large)?;
        self.write_offset_or_size(size_position, size, large);
        Ok(())
    }

    /// Writes `value` into its value entry if MySQL inlines it there
    /// (`attempt_inline_value`): literals and 16-bit integers always,
    /// 32-bit integers in the large form.
    fn inline(&mut self, value: &Json, entry_position: usize, large: bool) -> bool {
        let (type_byte, inlined) = match value {
            Json::Null => (type_byte::LITERAL, literal::NULL as u32),
            Json::Bool(true) => (type_byte::LITERAL, literal::TRUE as u32),
            Json::Bool(false) => (type_byte::LITERAL, literal::FALSE as u32),
            Json::Int(v) if i16::try_from(*v).is_ok() => (type_byte::INT16, *v as i32 as u32),
            Json::Int(v) if large && i32::try_from(*v).is_ok() => (type_byte::INT32, *v as i32 as u32),
            Json::UInt(v) if u16::try_from(*v).is_ok() => (type_byte::UINT16, *v as u32),
            Json::UInt(v) if large && u32::try_from(*v).is_ok() => (type_byte::UINT32, *v as u32),
            _ => return false,
        };
        self.out[entry_position] = type_byte;
        self.write_offset_or_size(entry_position + 1, inlined as usize, large);
        true
    }
}

enum Container<'a> {
    Array(&'a [Json]),
    Object(&'a Object),
}

impl Container<'_> {
    fn len(&self) -> usize {
        match self {
            Container::Array(elements) => elements.len(),
            Container::Object(members) => members.len(),
        }
    }

    fn type_byte(&self, large: bool) -> u8 {
        match (self, large) {
            (Container::Array(_), false) => type_byte::SMALL_ARRAY,
            (Container::Array(_), true) => type_byte::LARGE_ARRAY,
            (Container::Object(_), false) => type_byte::SMALL_OBJECT,
            (Container::Object(_), true) => type_byte::LARGE_OBJECT,
        }
    }
}

const WHAT: &str = "binary JSON";

fn invalid(reason: impl Into<String>) -> DecodeError {
    DecodeError::invalid(WHAT, reason)
}

fn truncated(needed: usize, available: usize) -> DecodeError {
    DecodeError::Truncated { what: WHAT, needed, available }
}

/// `bytes[at..at + length]`, or a truncation error.
fn slice(bytes: &[u8], at: usize, length: usize) -> Result<&[u8], DecodeError> {
    match at.checked_add(length) {
        Some(end) if end <= bytes.len() => Ok(&bytes[at..end]),
        _ => Err(truncated(at.saturating_add(length), bytes.len())),
    }
}

fn read_offset_or_size(bytes: &[u8], at: usize, large: bool) -> Result<usize, DecodeError> {
    let field = slice(bytes, at, offset_size(large))?;
    Ok(if large { u32::from_le_bytes(field.try_into().unwrap()) as usize } else { u16::from_le_bytes(field.try_into().unwrap()) as usize })
}

/// A variable length and the bytes it took (`read_variable_length`).
fn read_variable_length(bytes: &[u8]) -> Result<(usize, usize), DecodeError> {
    let mut length: u64 = 0;
    for (i, &byte) in bytes.iter().take(VARIABLE_LENGTH_BYTES_MAX).enumerate() {
        length |= ((byte & 0x7f) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            if length > DOCUMENT_BYTES_MAX as u64 {
                return Err(invalid(format!("variable length {length} exceeds 32 bits")));
            }
            return Ok((length as usize, i + 1));
        }
    }
    if bytes.len() < VARIABLE_LENGTH_BYTES_MAX {
        Err(truncated(bytes.len() + 1, bytes.len()))
    } else {
        Err(invalid("variable length runs past 5 bytes"))
    }
}

/// Reads a whole binary JSON value (a JSON column's bytes, a row event's
/// JSON field). An empty value is the null literal, as MySQL reads it.
pub fn decode(bytes: &[u8]) -> Result<Json, DecodeError> {
    let Some((&type_byte, body)) = bytes.split_first() else {
        return Ok(Json::Null);
    };
    let mut decoder = Decoder { budget: bytes.len() };
    let (value, length) = decoder.value(type_byte, body, 0)?;
    if length < body.len() {
        return Err(DecodeError::TrailingBytes { what: WHAT, count: body.len() - length });
    }
    Ok(value)
}

struct Decoder {
    /// What decoding may still produce, in values plus bytes of strings,
    /// keys and opaque data. A document whose values do not overlap never
    /// needs more than its own length; one whose entries all point at the
    /// same nested value would otherwise decode to exponentially many.
    budget: usize,
}

impl Decoder {
    fn spend(&mut self, cost: usize) -> Result<(), DecodeError> {
        self.budget = self.budget.checked_sub(cost).ok_or_else(|| invalid("values overlap: decoding would outgrow the document"))?;
        Ok(())
    }

    /// The value of `type_byte` at the start of `bytes`, and how many bytes
    /// it took. `depth` counts the containers around it.
    fn value(&mut self, type_byte: u8, bytes: &[u8], depth: usize) -> Result<(Json, usize), DecodeError> {
        match type_byte {
            type_byte::SMALL_OBJECT => self.container(bytes, false, true, depth),
            type_byte::LARGE_OBJECT => self.container(bytes, true, true, depth),
            type_byte::SMALL_ARRAY => self.container(bytes, false, false, depth),
            type_byte::LARGE_ARRAY => self.container(bytes, true, false, depth),
            _ => self.scalar(type_byte, bytes),
        }
    }

    fn scalar(&mut self, type_byte: u8, bytes: &[u8]) -> Result<(Json, usize), DecodeError> {
        self.spend(1)?;
        let fixed = |length: usize| slice(bytes, 0, length);
        let value = match type_byte {
            type_byte::LITERAL => match fixed(1)?[0] {
                literal::NULL => (Json::Null, 1),
                literal::TRUE => (Json::Bool(true), 1),
                literal::FALSE => (Json::Bool(false), 1),
                other => return Err(invalid(format!("literal {other:#04x}"))),
            },
            type_byte::INT16 => (Json::Int(i16::from_le_bytes(fixed(2)?.try_into().unwrap()) as i64), 2),
            type_byte::UINT16 => (Json::UInt(u16::from_le_bytes(fixed(2)?.try_into().unwrap()) as u64), 2),
            type_byte::INT32 => (Json::Int(i32::from_le_bytes(fixed(4)?.try_into().unwrap()) as i64), 4),
            type_byte::UINT32 => (Json::UInt(u32::from_le_bytes(fixed(4)?.try_into().unwrap()) as u64), 4),
            type_byte::INT64 => (Json::Int(i64::from_le_bytes(fixed(8)?.try_into().unwrap())), 8),
            type_byte::UINT64 => (Json::UInt(u64::from_le_bytes(fixed(8)?.try_into().unwrap())), 8),
            type_byte::DOUBLE => {
                let v = f64::from_le_bytes(fixed(8)?.try_into().unwrap());
                if !v.is_finite() {
                    return Err(invalid(format!("double {v} is not finite")));
                }
                (Json::Double(v), 8)
            }
            type_byte::STRING => {
                let (length, prefix) = read_variable_length(bytes)?;
                let data = slice(bytes, prefix, length)?;
                self.spend(length)?;
                let text = std::str::from_utf8(data).map_err(|e| invalid(format!("string is not UTF-8: {e}")))?;
                (Json::String(text.to_owned()), prefix + length)
            }
            type_byte::OPAQUE => {
                let field_type = fixed(1)?[0];
                let (length, prefix) = read_variable_length(&bytes[1..])?;
                let data = slice(bytes, 1 + prefix, length)?;
                self.spend(length)?;
                (opaque(field_type, data)?, 1 + prefix + length)
            }
            other => return Err(invalid(format!("type byte {other:#04x}"))),
        };
        Ok(value)
    }

    /// An array or object at the start of `bytes` (`parse_array_or_object`
    /// plus the checks of `Value::is_valid`: keys in order, entries inside).
    fn container(&mut self, bytes: &[u8], large: bool, is_object: bool, depth: usize) -> Result<(Json, usize), DecodeError> {
        let depth = depth + 1;
        if depth > DEPTH_MAX {
            return Err(invalid(format!("containers nest deeper than {DEPTH_MAX}")));
        }
        self.spend(1)?;
        let count = read_offset_or_size(bytes, 0, large)?;
        let size = read_offset_or_size(bytes, offset_size(large), large)?;
        let bytes = slice(bytes, 0, size)?;
        let key_entries_start = 2 * offset_size(large);
        let value_entries_start = key_entries_start + if is_object { count * key_entry_size(large) } else { 0 };
        let header_size = value_entries_start + count * value_entry_size(large);
        if header_size > size {
            return Err(invalid(format!("{count} entries need {header_size} bytes, the container has {size}")));
        }

        let mut keys: Vec<&str> = Vec::with_capacity(if is_object { count } else { 0 });
        if is_object {
            for i in 0..count {
                let entry = key_entries_start + i * key_entry_size(large);
                let key_offset = read_offset_or_size(bytes, entry, large)?;
                let key_length = u16::from_le_bytes(slice(bytes, entry + offset_size(large), 2)?.try_into().unwrap()) as usize;
                if key_offset < header_size {
                    return Err(invalid(format!("key {i} at offset {key_offset}, inside the {header_size}-byte header")));
                }
                let key = slice(bytes, key_offset, key_length)?;
                self.spend(key_length)?;
                let key = std::str::from_utf8(key).map_err(|e| invalid(format!("key {i} is not UTF-8: {e}")))?;
                if let Some(previous) = keys.last() {
                    if key_order(previous, key) != Ordering::Less {
                        return Err(invalid(format!("key {key:?} does not sort after {previous:?}")));
                    }
                }
                keys.push(key);
            }
        }

        let mut values = Vec::with_capacity(count);
        for i in 0..count {
            let entry = value_entries_start + i * value_entry_size(large);
            let type_byte = bytes[entry];
            let inlined = matches!(type_byte, type_byte::LITERAL | type_byte::INT16 | type_byte::UINT16)
                || (large && matches!(type_byte, type_byte::INT32 | type_byte::UINT32));
            let value = if inlined {
                self.scalar(type_byte, &bytes[entry + 1..entry + value_entry_size(large)])?.0
            } else {
                let offset = read_offset_or_size(bytes, entry + 1, large)?;
                if offset < header_size || offset >= size {
                    return Err(invalid(format!("value {i} at offset {offset}, outside {header_size}..{size}")));
                }
                self.value(type_byte, &bytes[offset..], depth)?.0
            };
            values.push(value);
        }

        let value = if is_object {
            let members: Object = keys.into_iter().map(str::to_owned).zip(values).collect();
            Json::Object(members)
        } else {
            Json::Array(values)
        };
        Ok((value, size))
    }
}

/// An opaque value's data as its field type defines it.
fn opaque(field_type: u8, data: &[u8]) -> Result<Json, DecodeError> {
    if field_type == type_code::NEWDECIMAL {
        let [precision, scale, digits @ ..] = data else {
            return Err(invalid("DECIMAL without its precision and scale"));
        };
        let text = decimal::decode_decimal(digits, *precision, *scale).map_err(|reason| invalid(format!("DECIMAL: {reason}")))?;
        return Ok(Json::Decimal(JsonDecimal { text, precision: *precision, scale: *scale }));
    }
    if let Some(kind) = TemporalKind::from_field_type(field_type) {
        let packed: [u8; PACKED_LENGTH] =
            data.try_into().map_err(|_| invalid(format!("{kind:?} of {} bytes, not {PACKED_LENGTH}", data.len())))?;
        let temporal = Temporal::from_packed(kind, i64::from_le_bytes(packed)).map_err(invalid)?;
        return Ok(Json::Temporal(temporal));
    }
    Ok(Json::Opaque { field_type, bytes: data.to_vec() })
}
