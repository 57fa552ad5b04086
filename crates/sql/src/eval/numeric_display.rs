//! What numeric column types add to their values: the integer display
//! width and ZEROFILL, FLOAT(M,D) / DOUBLE(M,D) and FLOAT(p).
//!
//! MySQL 8.4 keeps an integer's display width only to print it with
//! ZEROFILL (and for TINYINT(1), which connectors read as a boolean);
//! ZEROFILL implies UNSIGNED and pads the text form with zeros to the
//! width. FLOAT(M,D) rounds what it stores to D decimals, refuses what
//! needs more than M-D integer digits (1264) and prints D decimals.
//! FLOAT(p) is FLOAT up to p = 24 and DOUBLE up to 53.

use binlog_format::ColumnType;
use engine::ColumnDef;
use sqlparser::ast::{DataType, ExactNumberInfo};

use crate::error::{out_of_range, SqlResult};

/// MySQL's limits on FLOAT(M,D): M up to 255, D up to 30, p up to 53.
const FLOAT_DIGITS_MAX: u64 = 255;
const FLOAT_DECIMALS_MAX: u64 = 30;
const FLOAT_PRECISION_MAX: u64 = 53;
/// FLOAT(p) is single precision up to this p.
const FLOAT_SINGLE_PRECISION_MAX: u64 = 24;

/// The display width written in the type (`INT(10)`), if any.
pub fn declared_width(data_type: &DataType) -> Option<u64> {
    use DataType as D;
    match data_type {
        D::TinyInt(width)
        | D::TinyIntUnsigned(width)
        | D::SmallInt(width)
        | D::SmallIntUnsigned(width)
        | D::MediumInt(width)
        | D::MediumIntUnsigned(width)
        | D::Int(width)
        | D::IntUnsigned(width)
        | D::Integer(width)
        | D::IntegerUnsigned(width)
        | D::BigInt(width)
        | D::BigIntUnsigned(width) => *width,
        D::Bool | D::Boolean => Some(1),
        _ => None,
    }
}

/// MySQL's default display width of an integer type (what it pads a
/// ZEROFILL column without a width to).
pub fn default_width(column_type: &ColumnType, unsigned: bool) -> u8 {
    let (signed, unsigned_width) = match column_type {
        ColumnType::Tiny => (4, 3),
        ColumnType::Short => (6, 5),
        ColumnType::Int24 => (9, 8),
        ColumnType::Long => (11, 10),
        _ => (20, 20),
    };
    if unsigned {
        unsigned_width
    } else {
        signed
    }
}

/// 1439 ER_TOO_BIG_DISPLAYWIDTH.
pub fn display_width_too_big(column: &str, max: u64) -> protocol::MysqlError {
    protocol::MysqlError::new(1439, "42000", format!("Display width out of range for column '{column}' (max = {max})"))
}

/// The type and (M, D) of FLOAT/DOUBLE/REAL with its precision info
/// (`double` for DOUBLE and REAL), or MySQL's error for bad digits.
pub fn float_from_sql(name: &str, info: &ExactNumberInfo, double: bool) -> SqlResult<(ColumnType, Option<(u8, u8)>)> {
    let plain = if double { ColumnType::Double } else { ColumnType::Float };
    match *info {
        ExactNumberInfo::None => Ok((plain, None)),
        ExactNumberInfo::Precision(precision) if !double => {
            if precision > FLOAT_PRECISION_MAX {
                return Err(protocol::MysqlError::new(1063, "42000", format!("Incorrect column specifier for column '{name}'")));
            }
            Ok((if precision <= FLOAT_SINGLE_PRECISION_MAX { ColumnType::Float } else { ColumnType::Double }, None))
        }
        ExactNumberInfo::PrecisionAndScale(digits, decimals) => {
            let decimals = u64::try_from(decimals).unwrap_or(u64::MAX);
            if digits > FLOAT_DIGITS_MAX {
                return Err(display_width_too_big(name, FLOAT_DIGITS_MAX));
            }
            if decimals > FLOAT_DECIMALS_MAX {
                return Err(protocol::MysqlError::new(
                    1425,
                    "42000",
                    format!("Too big scale {decimals} specified for column '{name}'. Maximum is {FLOAT_DECIMALS_MAX}."),
                ));
            }
            if decimals > digits {
                return Err(protocol::MysqlError::new(
                    1427,
                    "42000",
                    format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."),
                ));
            }
            Ok((plain, Some((digits as u8, decimals as u8))))
        }
        ExactNumberInfo::Precision(_) => Err(crate::error::syntax_error(")")),
    }
}

/// `number` rounded to the column's D decimals, or 1264 past its M digits.
pub fn fit_float_digits(column: &ColumnDef, number: f64) -> SqlResult<f64> {
    let Some((digits, decimals)) = column.attributes.float_digits else { return Ok(number) };
    let scale = 10f64.powi(i32::from(decimals));
    // MySQL's rint: halves go to the even neighbour.
    let rounded = (number * scale).round_ties_even() / scale;
    let max = 10f64.powi(i32::from(digits - decimals)) - 1.0 / scale;
    if rounded.abs() > max + max * f64::EPSILON {
        return Err(out_of_range(&column.name));
    }
    Ok(rounded)
}

/// What follows an integer or float type's name in SHOW CREATE TABLE:
/// `(10) unsigned zerofill`, `(1)` for TINYINT(1), `(7,2)` for FLOAT(7,2).
pub fn type_suffix(column: &ColumnDef) -> String {
    let attributes = &column.attributes;
    let mut suffix = match (&column.column_type, attributes.float_digits) {
        (_, Some((digits, decimals))) => format!("({digits},{decimals})"),
        (ColumnType::Float | ColumnType::Double, None) => String::new(),
        (ColumnType::Tiny, None) if attributes.display_width == 1 => "(1)".to_string(),
        _ if attributes.zerofill => format!("({})", attributes.display_width),
        _ => String::new(),
    };
    if column.unsigned {
        suffix.push_str(" unsigned");
    }
    if attributes.zerofill {
        suffix.push_str(" zerofill");
    }
    suffix
}

/// The text of a FLOAT(M,D) value with its D decimals, padded with zeros
/// to the width for ZEROFILL: what SHOW CREATE TABLE prints as a DEFAULT.
pub fn numeric_text(column: &ColumnDef, text: String) -> String {
    let attributes = &column.attributes;
    let text = match (attributes.float_digits, text.parse::<f64>()) {
        (Some((_, decimals)), Ok(number)) => format!("{number:.*}", usize::from(decimals)),
        _ => text,
    };
    let width = usize::from(attributes.display_width);
    if attributes.zerofill && text.len() < width {
        format!("{}{text}", "0".repeat(width - text.len()))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_digits_round_and_bound_values() {
        let mut column = ColumnDef::new("f", ColumnType::Float);
        column.attributes.float_digits = Some((7, 2));
        assert_eq!(fit_float_digits(&column, 1.005_1), Ok(1.01));
        assert_eq!(fit_float_digits(&column, 0.125), Ok(0.12));
        assert_eq!(fit_float_digits(&column, -99_999.99), Ok(-99_999.99));
        assert_eq!(fit_float_digits(&column, 99_999.995).unwrap_err().code, 1264);
        assert_eq!(type_suffix(&column), "(7,2)");
        assert_eq!(numeric_text(&column, "1.5".into()), "1.50");
    }

    #[test]
    fn float_precision_picks_the_type() {
        assert_eq!(float_from_sql("f", &ExactNumberInfo::Precision(24), false).unwrap().0, ColumnType::Float);
        assert_eq!(float_from_sql("f", &ExactNumberInfo::Precision(25), false).unwrap().0, ColumnType::Double);
        assert_eq!(float_from_sql("f", &ExactNumberInfo::Precision(54), false).unwrap_err().code, 1063);
        assert_eq!(float_from_sql("f", &ExactNumberInfo::PrecisionAndScale(2, 3), true).unwrap_err().code, 1427);
        assert_eq!(float_from_sql("f", &ExactNumberInfo::PrecisionAndScale(10, 31), true).unwrap_err().code, 1425);
    }

    #[test]
    fn zerofill_prints_width_and_pads() {
        let mut column = ColumnDef::new("z", ColumnType::Long).unsigned();
        column.attributes.zerofill = true;
        column.attributes.display_width = 10;
        assert_eq!(type_suffix(&column), "(10) unsigned zerofill");
        assert_eq!(numeric_text(&column, "42".into()), "0000000042");
        let mut boolean = ColumnDef::new("b", ColumnType::Tiny);
        boolean.attributes.display_width = 1;
        assert_eq!(type_suffix(&boolean), "(1)");
        let mut wide = ColumnDef::new("w", ColumnType::Long);
        wide.attributes.display_width = 11;
        assert_eq!(type_suffix(&wide), "");
    }
}
