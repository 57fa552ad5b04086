//! A partitioned table's PARTITION BY as MySQL 8.4 prints it: at the end
//! of SHOW CREATE TABLE (`generate_partition_syntax` in a `/*!50100 */`
//! comment, `/*!50500` for the COLUMNS forms) and in
//! INFORMATION_SCHEMA.PARTITIONS (PARTITION_EXPRESSION and
//! PARTITION_DESCRIPTION).

use binlog_format::Value;
use engine::{Bound, PartitionDef, PartitionMethod, PartitionValues, Partitioning, TableDef};

use crate::eval::quoting::{quoted_identifier, quoted_string};

/// The text SHOW CREATE TABLE appends for a partitioned table (starting
/// with its newline), or None.
pub fn create_table_suffix(def: &TableDef) -> Option<String> {
    let partitioning = def.partitioning.as_ref()?;
    let columns_form = matches!(partitioning.method, PartitionMethod::RangeColumns | PartitionMethod::ListColumns);
    let comment_start = if columns_form { "\n/*!50500" } else { "\n/*!50100" };
    let mut text = String::from(comment_start);
    text.push_str(" PARTITION BY ");
    if partitioning.linear {
        text.push_str("LINEAR ");
    }
    match partitioning.method {
        PartitionMethod::Hash | PartitionMethod::Range | PartitionMethod::List => {
            let word = match partitioning.method {
                PartitionMethod::Hash => "HASH",
                PartitionMethod::Range => "RANGE",
                _ => "LIST",
            };
            text.push_str(&format!("{word} ({})", expression_text(partitioning)));
        }
        PartitionMethod::Key => {
            text.push_str("KEY ");
            // Only ALGORITHM = 1 is shown (2 is the default), in its own
            // versioned comment.
            if partitioning.key_algorithm == 1 {
                text.push_str(&format!("*/ /*!50611 ALGORITHM = 1 */ {} ", &comment_start[1..]));
            }
            text.push_str(&format!("({})", field_list(&partitioning.columns)));
        }
        PartitionMethod::RangeColumns | PartitionMethod::ListColumns => {
            let word = if partitioning.method == PartitionMethod::RangeColumns { "RANGE" } else { "LIST" };
            text.push_str(&format!("{word}  COLUMNS({})", field_list(&partitioning.columns)));
        }
    }
    if partitioning.by_count {
        if partitioning.partitions.len() > 1 {
            text.push_str(&format!("\nPARTITIONS {}", partitioning.partitions.len()));
        }
    } else {
        let items: Vec<String> = partitioning.partitions.iter().map(|partition| partition_text(partitioning, partition)).collect();
        text.push_str(&format!("\n({})", items.join(",\n ")));
    }
    text.push_str(" */");
    Some(text)
}

/// KEY's and the COLUMNS forms' column list: names quoted only when they
/// must be (MySQL prints it without OPTION_QUOTE_SHOW_CREATE).
fn field_list(columns: &[String]) -> String {
    columns.iter().map(|name| name_when_needed(name)).collect::<Vec<_>>().join(",")
}

fn name_when_needed(name: &str) -> String {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !name.chars().all(|c| c.is_ascii_digit());
    if plain {
        name.to_string()
    } else {
        quoted_identifier(name)
    }
}

fn partition_text(partitioning: &Partitioning, partition: &PartitionDef) -> String {
    let mut text = format!("PARTITION {}", name_when_needed(&partition.name));
    match &partition.values {
        PartitionValues::Hashed => {}
        PartitionValues::LessThan(bounds) => {
            text.push_str(" VALUES LESS THAN ");
            if partitioning.method == PartitionMethod::Range {
                match &bounds[0] {
                    Bound::MaxValue => text.push_str("MAXVALUE"),
                    Bound::Value(value) => text.push_str(&format!("({})", value_text(value))),
                }
            } else {
                text.push_str(&format!("({})", bounds_text(bounds)));
            }
        }
        PartitionValues::In(items) => text.push_str(&format!(" VALUES IN ({})", list_text(partitioning, items))),
    }
    text.push(' ');
    if let Some(comment) = &partition.comment {
        text.push_str(&format!("COMMENT = {} ", quoted_string(comment)));
    }
    text.push_str("ENGINE = InnoDB");
    text
}

fn bounds_text(bounds: &[Bound]) -> String {
    bounds
        .iter()
        .map(|bound| match bound {
            Bound::MaxValue => "MAXVALUE".to_string(),
            Bound::Value(value) => value_text(value),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// VALUES IN's list: LIST prints NULL first; LIST COLUMNS over several
/// columns puts each tuple in parentheses.
fn list_text(partitioning: &Partitioning, items: &[Vec<Value>]) -> String {
    let mut texts = Vec::with_capacity(items.len());
    if partitioning.method == PartitionMethod::List {
        if items.iter().any(|item| item[0] == Value::Null) {
            texts.push("NULL".to_string());
        }
        texts.extend(items.iter().filter(|item| item[0] != Value::Null).map(|item| value_text(&item[0])));
    } else {
        for item in items {
            let values = item.iter().map(value_text).collect::<Vec<_>>().join(",");
            texts.push(if item.len() > 1 { format!("({values})") } else { values });
        }
    }
    texts.join(",")
}

fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "NULL".to_string(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Bytes(bytes) => quoted_string(&String::from_utf8_lossy(bytes)),
        Value::Date { year, month, day } => format!("'{year:04}-{month:02}-{day:02}'"),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let fraction = if *micros == 0 { String::new() } else { format!(".{micros:06}") };
            format!("'{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}'")
        }
        other => format!("{other:?}"),
    }
}

/// INFORMATION_SCHEMA.PARTITIONS.PARTITION_EXPRESSION: the expression
/// (`year(`d`)`), or the KEY / COLUMNS column list, names in backticks.
pub fn expression_text(partitioning: &Partitioning) -> String {
    let columns = partitioning.columns.iter().map(|name| quoted_identifier(name)).collect::<Vec<_>>().join(",");
    match partitioning.function {
        Some(function) => format!("{}({columns})", function.name()),
        None => columns,
    }
}

/// INFORMATION_SCHEMA.PARTITIONS.PARTITION_DESCRIPTION: the RANGE bound
/// or the LIST values; None for HASH and KEY.
pub fn description_text(partitioning: &Partitioning, partition: &PartitionDef) -> Option<String> {
    match &partition.values {
        PartitionValues::Hashed => None,
        PartitionValues::LessThan(bounds) => Some(bounds_text(bounds)),
        PartitionValues::In(items) => Some(list_text(partitioning, items)),
    }
}
