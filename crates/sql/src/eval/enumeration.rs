//! ENUM and SET columns in the SQL layer. The engine and the binlog keep
//! an ENUM value as its member's 1-based index (0 is the error value '')
//! and a SET value as a bit mask of members; expressions read the member
//! text, ORDER BY orders by the stored number, as MySQL does.

use binlog_format::ColumnType;
use sqlparser::ast::EnumMember;

use crate::error::{not_supported, SqlResult};
use crate::eval::value::{is_whole_number_text, to_number, Number, Value};

/// MySQL's limits: 65535 ENUM members, 64 SET members.
const ENUM_MEMBERS_MAX: usize = 65_535;
const SET_MEMBERS_MAX: usize = 64;

/// An ENUM or SET column's members, as an expression reads its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Members {
    pub is_set: bool,
    pub members: Vec<Vec<u8>>,
}

impl Members {
    /// The members of `column_type` (ENUM or SET), or `None` for any
    /// other type.
    pub fn of(column_type: &ColumnType, members: &[Vec<u8>]) -> Option<Members> {
        match column_type {
            ColumnType::Enum { .. } => Some(Members { is_set: false, members: members.to_vec() }),
            ColumnType::Set { .. } => Some(Members { is_set: true, members: members.to_vec() }),
            _ => None,
        }
    }

    /// The text of a stored value: the member (ENUM; '' for 0) or the
    /// members joined by ',' (SET); other values unchanged.
    pub fn text(&self, stored: &Value) -> Value {
        let Value::UInt(number) = stored else { return stored.clone() };
        Value::Bytes(member_text(self.is_set, &self.members, *number))
    }
}

/// Per column of `def`, its ENUM or SET members (for
/// [`crate::eval::expr::Columns`]); empty when the table has none, so
/// other tables pay nothing.
pub fn table_members(def: &engine::TableDef) -> Vec<Option<Members>> {
    if !def.columns.iter().any(|c| c.column_type.is_enum_or_set()) {
        return Vec::new();
    }
    def.columns.iter().map(|c| Members::of(&c.column_type, &c.attributes.members)).collect()
}

/// The text of ENUM index or SET mask `stored`.
pub fn member_text(is_set: bool, members: &[Vec<u8>], stored: u64) -> Vec<u8> {
    if !is_set {
        return usize::try_from(stored)
            .ok()
            .and_then(|index| index.checked_sub(1))
            .and_then(|i| members.get(i))
            .cloned()
            .unwrap_or_default();
    }
    let mut text = Vec::new();
    for (bit, member) in members.iter().enumerate() {
        if stored >> bit & 1 == 1 {
            if !text.is_empty() {
                text.push(b',');
            }
            text.extend_from_slice(member);
        }
    }
    text
}

/// 1265 WARN_DATA_TRUNCATED: a value that is no member (an error in
/// strict mode).
pub fn data_truncated(column: &str) -> protocol::MysqlError {
    protocol::MysqlError::new(1265, "01000", format!("Data truncated for column '{column}' at row 1"))
}

/// Members compare as the column's collation does: case-insensitively,
/// trailing spaces ignored.
fn same_member(member: &[u8], text: &[u8]) -> bool {
    let trimmed = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim_end_matches(' ').to_lowercase();
    trimmed(member) == trimmed(text)
}

fn position(members: &[Vec<u8>], text: &[u8]) -> Option<usize> {
    members.iter().position(|member| same_member(member, text))
}

/// `value` as an ENUM column stores it (the member's index), or 1265.
/// Text names a member; a number (or numeric text naming no member) is
/// the index itself.
pub fn coerce_enum(members: &[Vec<u8>], value: &Value, column: &str) -> SqlResult<Value> {
    if let Value::Bytes(text) = value {
        if let Some(found) = position(members, text) {
            return Ok(Value::UInt(found as u64 + 1));
        }
        if !is_whole_number_text(text) {
            return Err(data_truncated(column));
        }
    }
    match to_number(value) {
        Some(Number::Int(index)) if index >= 1 && index <= members.len() as i128 => Ok(Value::UInt(index as u64)),
        _ => Err(data_truncated(column)),
    }
}

/// `value` as a SET column stores it (a bit mask), or 1265. Text is a
/// comma-separated list of members ('' is the empty set); a number is the
/// mask itself.
pub fn coerce_set(members: &[Vec<u8>], value: &Value, column: &str) -> SqlResult<Value> {
    if let Value::Bytes(text) = value {
        let mut mask = 0u64;
        let mut all_members = true;
        for part in text.split(|&b| b == b',').filter(|part| !text.is_empty() || !part.is_empty()) {
            match position(members, part) {
                Some(found) => mask |= 1 << found,
                None => all_members = false,
            }
        }
        if all_members {
            return Ok(Value::UInt(mask));
        }
        if !is_whole_number_text(text) {
            return Err(data_truncated(column));
        }
    }
    let limit = if members.len() >= 64 { u64::MAX as i128 } else { (1i128 << members.len()) - 1 };
    match to_number(value) {
        Some(Number::Int(mask)) if (0..=limit).contains(&mask) => Ok(Value::UInt(mask as u64)),
        _ => Err(data_truncated(column)),
    }
}

/// The ENUM or SET column type and members of `ENUM(...)` / `SET(...)`:
/// members lose trailing spaces; duplicates are 1291, too many 1097.
pub fn enumeration_from_sql(name: &str, is_set: bool, members: &[String]) -> SqlResult<(ColumnType, Vec<Vec<u8>>)> {
    let kind = if is_set { "SET" } else { "ENUM" };
    let limit = if is_set { SET_MEMBERS_MAX } else { ENUM_MEMBERS_MAX };
    if members.len() > limit {
        return Err(protocol::MysqlError::new(1097, "HY000", format!("Too many strings for column {name} and SET")));
    }
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity(members.len());
    for member in members {
        let member = member.trim_end_matches(' ');
        if is_set && member.contains(',') {
            return Err(protocol::MysqlError::new(1367, "22007", format!("Illegal set '{member}' value found during parsing")));
        }
        if kept.iter().any(|earlier| same_member(earlier, member.as_bytes())) {
            return Err(protocol::MysqlError::new(1291, "HY000", format!("Column '{name}' has duplicated value '{member}' in {kind}")));
        }
        kept.push(member.as_bytes().to_vec());
    }
    let column_type = if is_set {
        ColumnType::Set { length_bytes: set_length_bytes(kept.len()) }
    } else {
        ColumnType::Enum { length_bytes: if kept.len() < 256 { 1 } else { 2 } }
    };
    Ok((column_type, kept))
}

/// `ENUM('a','b')` members as text, refusing ClickHouse's `'a' = 1`.
pub fn enum_member_names(members: &[EnumMember]) -> SqlResult<Vec<String>> {
    members
        .iter()
        .map(|member| match member {
            EnumMember::Name(name) => Ok(name.clone()),
            EnumMember::NamedValue(..) => Err(not_supported("ENUM members with values")),
        })
        .collect()
}

/// MySQL's `get_set_pack_length`: whole bytes for the members, 8 past 4.
fn set_length_bytes(members: usize) -> u8 {
    match members.div_ceil(8).max(1) {
        length @ 1..=4 => length as u8,
        _ => 8,
    }
}

/// `enum('a','b')` / `set('a','b')` as SHOW CREATE TABLE prints the type.
pub fn enumeration_type_name(is_set: bool, members: &[Vec<u8>]) -> String {
    let quoted: Vec<String> = members.iter().map(|m| super::quoting::quoted_string(&String::from_utf8_lossy(m))).collect();
    format!("{}({})", if is_set { "set" } else { "enum" }, quoted.join(","))
}

/// The column length a result set announces: the longest member (ENUM)
/// or all members with their commas (SET), in characters × 4 (utf8mb4).
pub fn enumeration_length(is_set: bool, members: &[Vec<u8>]) -> u32 {
    let characters = |m: &Vec<u8>| String::from_utf8_lossy(m).chars().count();
    let length = if is_set {
        members.iter().map(characters).sum::<usize>() + members.len().saturating_sub(1)
    } else {
        members.iter().map(characters).max().unwrap_or(0)
    };
    u32::try_from(length * 4).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members() -> Vec<Vec<u8>> {
        vec![b"small".to_vec(), b"medium".to_vec(), b"large".to_vec()]
    }

    #[test]
    fn enum_values_are_indexes_by_name_or_number() {
        assert_eq!(coerce_enum(&members(), &Value::Bytes(b"MEDIUM ".to_vec()), "e"), Ok(Value::UInt(2)));
        assert_eq!(coerce_enum(&members(), &Value::Int(3), "e"), Ok(Value::UInt(3)));
        assert_eq!(coerce_enum(&members(), &Value::Bytes(b"1".to_vec()), "e"), Ok(Value::UInt(1)));
        assert_eq!(coerce_enum(&members(), &Value::Int(0), "e").unwrap_err().code, 1265);
        let error = coerce_enum(&members(), &Value::Bytes(b"huge".to_vec()), "e").unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (1265, "Data truncated for column 'e' at row 1"));
        assert_eq!(member_text(false, &members(), 2), b"medium");
        assert_eq!(member_text(false, &members(), 0), b"");
    }

    #[test]
    fn set_values_are_masks_of_members() {
        assert_eq!(coerce_set(&members(), &Value::Bytes(b"large,small".to_vec()), "s"), Ok(Value::UInt(0b101)));
        assert_eq!(coerce_set(&members(), &Value::Bytes(Vec::new()), "s"), Ok(Value::UInt(0)));
        assert_eq!(coerce_set(&members(), &Value::Int(7), "s"), Ok(Value::UInt(7)));
        assert_eq!(coerce_set(&members(), &Value::Int(8), "s").unwrap_err().code, 1265);
        assert_eq!(coerce_set(&members(), &Value::Bytes(b"small,tiny".to_vec()), "s").unwrap_err().code, 1265);
        assert_eq!(member_text(true, &members(), 0b101), b"small,large");
    }

    #[test]
    fn definitions_follow_mysql() {
        let (column_type, kept) = enumeration_from_sql("e", false, &["a ".into(), "it's".into()]).unwrap();
        assert_eq!(column_type, ColumnType::Enum { length_bytes: 1 });
        assert_eq!(enumeration_type_name(false, &kept), "enum('a','it''s')");
        assert_eq!(enumeration_from_sql("e", false, &["a".into(), "A".into()]).unwrap_err().code, 1291);
        let many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
        assert_eq!(enumeration_from_sql("s", true, &many).unwrap_err().code, 1097);
        assert_eq!(enumeration_from_sql("s", true, &many[..64]).unwrap().0, ColumnType::Set { length_bytes: 8 });
        assert_eq!(enumeration_from_sql("s", true, &many[..17]).unwrap().0, ColumnType::Set { length_bytes: 3 });
        assert_eq!(enumeration_length(true, &members()), 4 * 18);
    }
}
