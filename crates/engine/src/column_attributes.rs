//! What a column's SQL type says beyond its binlog type and metadata:
//! the integer display width and ZEROFILL, FLOAT(M,D)'s digits, ENUM and
//! SET members, a geometry column's kind and SRID, INVISIBLE, a generated
//! column's expression, its COMMENT, an expression DEFAULT. The engine keeps them
//! with the definition (redo and checkpoints) for SHOW CREATE TABLE, the
//! result-set column definitions and the Table_map's ENUM/SET and
//! GEOMETRY_TYPE metadata; it never looks inside them.
//!
//! Encoding (after a column's DEFAULT, only when not all default, see
//! `codec.rs`): display width u8, flags u8 (1 ZEROFILL, 2 digits follow,
//! 4 geometry follows, 8 INVISIBLE, 16 generated follows, 32 comment
//! follows, 64 DEFAULT expression follows), [M u8, D u8], member count
//! u32, each member u32 length + bytes, [geometry kind u8, SRID given u8,
//! SRID u32], [STORED u8, expression u32 length + bytes], [comment u32
//! length + bytes], [DEFAULT expression u32 length + bytes].

use binlog_format::bytes::{ByteReader, ByteWriter};
use binlog_format::value::geometry::Kind;

use crate::codec::{put_bytes, put_count, CountedReads};
use crate::error::{EngineError, Result};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnAttributes {
    /// The integer display width SHOW CREATE TABLE prints (MySQL 8.4 prints
    /// it only with ZEROFILL and for tinyint(1)) and the text protocol pads
    /// a ZEROFILL value to; 0 for none.
    pub display_width: u8,
    /// ZEROFILL (which implies UNSIGNED).
    pub zerofill: bool,
    /// FLOAT(M,D) / DOUBLE(M,D): (M, D); values are rounded to D decimals.
    pub float_digits: Option<(u8, u8)>,
    /// ENUM and SET members in declaration order (an ENUM value is a
    /// 1-based index into them, a SET value a bit mask over them).
    pub members: Vec<Vec<u8>>,
    /// A geometry column's declared kind and SRID.
    pub geometry: Option<GeometryAttributes>,
    /// INVISIBLE: left out of `SELECT *` and of an INSERT without a column
    /// list; the Table_map's COLUMN_VISIBILITY says so.
    pub invisible: bool,
    /// A generated column's expression and kind.
    pub generated: Option<Generated>,
    /// `COMMENT '...'`: SHOW CREATE TABLE, SHOW FULL COLUMNS and
    /// INFORMATION_SCHEMA.COLUMNS show it; empty for none, as in MySQL.
    pub comment: String,
    /// `DEFAULT (expression)`: evaluated for every row written without a
    /// value for the column (sqlparser's text, parsed again then).
    pub default_expression: Option<String>,
}

/// `GENERATED ALWAYS AS (expression) VIRTUAL | STORED`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The expression as the SQL layer wrote it (sqlparser's text), parsed
    /// again when a row is written.
    pub expression: String,
    /// STORED rather than VIRTUAL.
    pub stored: bool,
}

/// What a GEOMETRY, POINT, ... column declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeometryAttributes {
    /// The kind the column takes (GEOMETRY takes any).
    pub kind: Kind,
    /// `SRID n`: every value must have this SRID; `None` takes any.
    pub srid: Option<u32>,
}

const ZEROFILL: u8 = 1;
const FLOAT_DIGITS: u8 = 2;
const GEOMETRY: u8 = 4;
const INVISIBLE: u8 = 8;
const GENERATED: u8 = 16;
const COMMENT: u8 = 32;
const DEFAULT_EXPRESSION: u8 = 64;
const FLAGS_KNOWN: u8 = ZEROFILL | FLOAT_DIGITS | GEOMETRY | INVISIBLE | GENERATED | COMMENT | DEFAULT_EXPRESSION;

impl ColumnAttributes {
    pub fn is_default(&self) -> bool {
        *self == ColumnAttributes::default()
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u8(self.display_width);
        let zerofill = if self.zerofill { ZEROFILL } else { 0 };
        let float_digits = if self.float_digits.is_some() { FLOAT_DIGITS } else { 0 };
        let geometry = if self.geometry.is_some() { GEOMETRY } else { 0 };
        let invisible = if self.invisible { INVISIBLE } else { 0 };
        let generated = if self.generated.is_some() { GENERATED } else { 0 };
        let comment = if self.comment.is_empty() { 0 } else { COMMENT };
        let default_expression = if self.default_expression.is_some() { DEFAULT_EXPRESSION } else { 0 };
        out.put_u8(zerofill | float_digits | geometry | invisible | generated | comment | default_expression);
        if let Some((digits, decimals)) = self.float_digits {
            out.put_u8(digits);
            out.put_u8(decimals);
        }
        put_count(out, self.members.len());
        for member in &self.members {
            put_bytes(out, member);
        }
        if let Some(geometry) = &self.geometry {
            out.put_u8(geometry.kind.code());
            out.put_u8(u8::from(geometry.srid.is_some()));
            out.put_u32(geometry.srid.unwrap_or(0));
        }
        if let Some(generated) = &self.generated {
            out.put_u8(u8::from(generated.stored));
            put_bytes(out, generated.expression.as_bytes());
        }
        if !self.comment.is_empty() {
            put_bytes(out, self.comment.as_bytes());
        }
        if let Some(expression) = &self.default_expression {
            put_bytes(out, expression.as_bytes());
        }
    }

    pub(crate) fn decode(reader: &mut ByteReader<'_>) -> Result<ColumnAttributes> {
        let display_width = reader.u8("display width")?;
        let flags = reader.u8("column attribute flags")?;
        if flags & !FLAGS_KNOWN != 0 {
            return Err(EngineError::corrupt(format!("column attribute flags {flags:#04x}")));
        }
        let float_digits = if flags & FLOAT_DIGITS != 0 { Some((reader.u8("float digits")?, reader.u8("float decimals")?)) } else { None };
        let count = reader.count(4, "members")?;
        let mut members = Vec::with_capacity(count);
        for _ in 0..count {
            members.push(reader.bytes("member")?.to_vec());
        }
        let geometry = if flags & GEOMETRY != 0 {
            let code = reader.u8("geometry kind")?;
            let kind = Kind::from_code(code).ok_or_else(|| EngineError::corrupt(format!("geometry kind {code}")))?;
            let srid_given = reader.u8("geometry SRID given")? != 0;
            let srid = reader.u32("geometry SRID")?;
            Some(GeometryAttributes { kind, srid: srid_given.then_some(srid) })
        } else {
            None
        };
        let generated = if flags & GENERATED != 0 {
            let stored = reader.u8("generated kind")? != 0;
            let expression = String::from_utf8(reader.bytes("generation expression")?.to_vec())
                .map_err(|_| EngineError::corrupt("a generation expression that is not UTF-8".to_string()))?;
            Some(Generated { expression, stored })
        } else {
            None
        };
        let comment = if flags & COMMENT != 0 {
            String::from_utf8(reader.bytes("column comment")?.to_vec())
                .map_err(|_| EngineError::corrupt("a column comment that is not UTF-8".to_string()))?
        } else {
            String::new()
        };
        let default_expression = if flags & DEFAULT_EXPRESSION != 0 {
            let text = String::from_utf8(reader.bytes("default expression")?.to_vec())
                .map_err(|_| EngineError::corrupt("a default expression that is not UTF-8".to_string()))?;
            Some(text)
        } else {
            None
        };
        Ok(ColumnAttributes {
            display_width,
            zerofill: flags & ZEROFILL != 0,
            float_digits,
            members,
            geometry,
            invisible: flags & INVISIBLE != 0,
            generated,
            comment,
            default_expression,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip_and_unknown_flags_are_corruption() {
        let attributes = ColumnAttributes {
            display_width: 10,
            zerofill: true,
            float_digits: Some((7, 2)),
            members: vec![b"a".to_vec(), Vec::new()],
            invisible: true,
            generated: Some(Generated { expression: "a + 1".into(), stored: true }),
            comment: "the customer's id, née «id»".into(),
            default_expression: Some("json_object('a', 1)".into()),
            ..Default::default()
        };
        let mut out = Vec::new();
        attributes.encode(&mut out);
        let mut reader = ByteReader::new(&out);
        assert_eq!(ColumnAttributes::decode(&mut reader).unwrap(), attributes);
        assert!(reader.is_empty());
        for srid in [None, Some(0), Some(4326)] {
            let geometry = ColumnAttributes { geometry: Some(GeometryAttributes { kind: Kind::Point, srid }), ..Default::default() };
            let mut out = Vec::new();
            geometry.encode(&mut out);
            assert_eq!(ColumnAttributes::decode(&mut ByteReader::new(&out)).unwrap(), geometry);
        }
        out[1] |= 0x80;
        assert!(ColumnAttributes::decode(&mut ByteReader::new(&out)).is_err());
    }
}
