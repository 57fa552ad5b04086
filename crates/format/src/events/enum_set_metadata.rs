//! The Table_map optional metadata MySQL writes for ENUM and SET columns
//! with `binlog_row_metadata=FULL` (`Table_map_log_event::init_metadata_fields`):
//! ENUM_AND_SET_DEFAULT_CHARSET or ENUM_AND_SET_COLUMN_CHARSET (the
//! collations of the ENUM and SET columns, laid out as DEFAULT_CHARSET and
//! COLUMN_CHARSET are), then SET_STR_VALUE, then ENUM_STR_VALUE. Each
//! STR_VALUE field holds, per column of its type, the member count and
//! each member as a length-encoded string, all length-encoded.
//!
//! binlogd decodes these fields as [`OptionalMetadata::Raw`]; they are
//! built here with the same bytes.

use crate::bytes::ByteWriter;
use crate::column_type::{type_code, ColumnType};
use crate::events::table_map::ColumnSpec;
use crate::events::table_map_metadata::{charset_field, field_type, OptionalMetadata};

/// The fields for `columns`, whose ENUM and SET members are `members`
/// (one list per column; empty for other columns). Nothing when the table
/// has no ENUM or SET column.
pub fn enum_and_set_fields(columns: &[ColumnSpec], members: &[Vec<Vec<u8>>]) -> Vec<OptionalMetadata> {
    let collations: Vec<u16> = columns.iter().filter(|c| c.column_type.is_enum_or_set()).map(|c| c.collation).collect();
    let mut fields = Vec::new();
    if let Some(charset) = charset_field(&collations) {
        let field_type = match charset {
            OptionalMetadata::ColumnCharset(_) => field_type::ENUM_AND_SET_COLUMN_CHARSET,
            _ => field_type::ENUM_AND_SET_DEFAULT_CHARSET,
        };
        let mut value = Vec::new();
        charset.encode_value(&mut value);
        fields.push(OptionalMetadata::Raw { field_type, value });
    }
    for (real_type, field_type) in [(type_code::SET, field_type::SET_STR_VALUE), (type_code::ENUM, field_type::ENUM_STR_VALUE)] {
        let mut value = Vec::new();
        let mut any = false;
        for (position, column) in columns.iter().enumerate() {
            if column.column_type.real_type_code() != real_type
                || !matches!(column.column_type, ColumnType::Enum { .. } | ColumnType::Set { .. })
            {
                continue;
            }
            any = true;
            let column_members = members.get(position).map(Vec::as_slice).unwrap_or_default();
            value.put_packed_u64(column_members.len() as u64);
            for member in column_members {
                value.put_packed_u64(member.len() as u64);
                value.put_slice(member);
            }
        }
        if any {
            fields.push(OptionalMetadata::Raw { field_type, value });
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(column_type: ColumnType, collation: u16) -> ColumnSpec {
        ColumnSpec { name: "c".into(), column_type, nullable: true, unsigned: false, collation }
    }

    #[test]
    fn charset_then_set_then_enum_members() {
        let columns =
            [spec(ColumnType::Enum { length_bytes: 1 }, 45), spec(ColumnType::Long, 0), spec(ColumnType::Set { length_bytes: 1 }, 45)];
        let members = vec![vec![b"a".to_vec(), b"bc".to_vec()], vec![], vec![b"x".to_vec()]];
        let fields = enum_and_set_fields(&columns, &members);
        assert_eq!(
            fields,
            [
                OptionalMetadata::Raw { field_type: 10, value: vec![45] },
                OptionalMetadata::Raw { field_type: 5, value: vec![1, 1, b'x'] },
                OptionalMetadata::Raw { field_type: 6, value: vec![2, 1, b'a', 2, b'b', b'c'] },
            ]
        );
        assert!(enum_and_set_fields(&[spec(ColumnType::Long, 0)], &[]).is_empty());
    }
}
