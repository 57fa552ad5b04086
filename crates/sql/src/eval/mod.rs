//! Computing with values: the SQL layer's values and MySQL's comparison,
//! truth and conversion rules (`value.rs`), expressions over one row
//! (`expr.rs`), CAST and CONVERT (`cast.rs`), the collation a comparison of text uses (`collations.rs`),
//! and column types with the coercion of a value into a column
//! before a write (`columns.rs`), temporal values and the statement's
//! clock (`temporal.rs`), the date and time functions
//! (`date_functions.rs`), JSON values (`json.rs`) and the JSON functions
//! (`json_functions.rs`), the string functions bounded by
//! max_allowed_packet (`strings.rs`), LOCATE and INSTR
//! (`string_search.rs`), NULLIF, GREATEST, LEAST, STRCMP, SUBSTRING_INDEX
//! and REVERSE (`choosing.rs`), digests and base64 (`digests.rs`), UUID()
//! and its conversions (`uuids.rs`), ROUND, FLOOR and the other numeric
//! functions (`math.rs`), the
//! GTID set functions (`gtid_functions.rs`),
//! GROUP_CONCAT with its `group_concat_max_len` (`group_concat.rs`),
//! generated columns (`generated.rs`), expression defaults
//! (`default_expressions.rs`), spatial values and functions
//! (`spatial.rs`), and names and strings written back as SQL text
//! (`quoting.rs`).

pub(crate) mod bit;
pub(crate) mod cast;
pub(crate) mod choosing;
pub(crate) mod collations;
pub(crate) mod column_expression_rules;
pub(crate) mod columns;
pub(crate) mod date_functions;
pub(crate) mod decimal;
pub(crate) mod default_expressions;
pub(crate) mod digests;
pub(crate) mod enumeration;
pub(crate) mod expr;
pub(crate) mod generated;
pub(crate) mod group_concat;
pub(crate) mod gtid_functions;
pub(crate) mod json;
pub(crate) mod json_functions;
pub(crate) mod json_modify;
pub(crate) mod math;
pub(crate) mod numeric_display;
pub(crate) mod quoting;
pub(crate) mod spatial;
pub(crate) mod sql_mode;
pub(crate) mod string_search;
pub(crate) mod strings;
pub mod temporal;
pub(crate) mod temporal_columns;
pub(crate) mod uuids;
pub mod value;
