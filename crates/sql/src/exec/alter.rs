//! ALTER TABLE and RENAME TABLE.
//!
//! ALTER applies its specs in order to a working copy of the definition
//! (each column remembering the old column it comes from), then the
//! engine hands over the committed rows under the table's exclusive
//! metadata lock and they are converted here with MySQL's rules under the
//! session's sql_mode: strict mode fails the statement with the first
//! value that does not fit ("... at row N") and the table stays as it
//! was; otherwise values are clipped with warnings. The engine logs and
//! swaps the table in one step (see the engine's `alter` module); the
//! statement is then logged to the binlog as a Query event, as all DDL.

use std::cell::RefCell;

use binlog_format::{ColumnType, Value};
use engine::{ColumnDef, IndexSpec, TableDef, TableRebuild, TableSpec};
use protocol::{MysqlError, OkResponse};
use sqlparser::ast::TableConstraint;

use crate::error::{database_error, not_supported, SqlResult};
use crate::eval::columns::coerce_write;
use crate::eval::expr::{Columns, Scope};
use crate::eval::temporal::{current_timestamp_for, WriteRules};
use crate::exec::ddl::{build_column, check_default_expressions, check_identifier, check_no_json_keys, index_columns};
use crate::locking::statement_locks::lock_wait_timeout;
use crate::parse::alter::{AlterSpec, AlterTable, ColumnPosition, TableName};
use crate::session::{Context, Outcome, Warning};

/// One column of the new table and the old column its values come from.
#[derive(Debug, Clone)]
struct Column {
    def: ColumnDef,
    source: Option<usize>,
}

/// The definition as the specs so far leave it.
struct Working {
    database: String,
    name: String,
    columns: Vec<Column>,
    primary_key: Vec<String>,
    indexes: Vec<IndexSpec>,
    auto_increment: Option<u64>,
    /// Kept through the copy, its columns following renames.
    partitioning: Option<engine::Partitioning>,
    comment: String,
    /// The table's default collation: what a column added or changed
    /// without its own takes.
    default_collation: u16,
    /// The character set a `CHARACTER SET` option of this ALTER named: a
    /// COLLATE option after it must be one of its collations (1253).
    charset_named: Option<&'static str>,
}

pub fn rename_table(pairs: &[(TableName, TableName)], context: &Context<'_>) -> SqlResult<Outcome> {
    let mut resolved = Vec::with_capacity(pairs.len());
    for ((from_database, from), (to_database, to)) in pairs {
        check_identifier(to)?;
        resolved
            .push(((context.database(from_database.as_deref())?, from.clone()), (context.database(to_database.as_deref())?, to.clone())));
    }
    context
        .execute_ddl(&context.statement_context(), |engine| engine.rename_tables(&resolved, lock_wait_timeout(context)))
        .map_err(database_error)?;
    Ok(Outcome::ok())
}

pub fn alter_table(alter: &AlterTable, context: &Context<'_>) -> SqlResult<Outcome> {
    let database = context.database(alter.table.0.as_deref())?;
    let table = alter.table.1.clone();
    let only_renames = alter.specs.iter().all(|spec| matches!(spec, AlterSpec::RenameTable(_) | AlterSpec::Harmless));
    if only_renames {
        let target = alter.specs.iter().rev().find_map(|spec| match spec {
            AlterSpec::RenameTable((to_database, to)) => Some((to_database.clone(), to.clone())),
            _ => None,
        });
        let Some((to_database, to)) = target else {
            // Options only: nothing binlogd keeps changes, but the table
            // must exist and the statement is logged, as MySQL does.
            context.db().catalog().table(&database, &table).map_err(crate::error::engine_error)?;
            context.execute_ddl(&context.statement_context(), |_| Ok(())).map_err(database_error)?;
            return Ok(Outcome::ok());
        };
        return rename_table(&[((Some(database), table), (to_database, to))], context);
    }
    // What the specs reject is found before the engine is asked (names,
    // keys); what the rows reject, while it holds the table.
    let refused: RefCell<Option<MysqlError>> = RefCell::new(None);
    let mut warnings = Vec::new();
    let mut records = 0;
    let rules = WriteRules::of(&context.env);
    let result = context.execute_ddl(&context.statement_context(), |engine| {
        engine.alter_table(&database, &table, lock_wait_timeout(context), |def, rows| {
            let converted = plan(alter, def, context, &mut warnings)
                .and_then(|working| convert(&working, def, rows, context, rules, &mut warnings).map(|rows| (working, rows)));
            match converted {
                Ok((working, rows)) => {
                    records = rows.len();
                    Ok(TableRebuild { spec: working.spec(), rows, auto_increment: working.auto_increment })
                }
                Err(error) => {
                    *refused.borrow_mut() = Some(error);
                    Err(engine::EngineError::Internal("ALTER TABLE refused by the SQL layer".into()))
                }
            }
        })
    });
    if let Some(error) = refused.into_inner() {
        return Err(error);
    }
    result.map_err(database_error)?;
    let ok = OkResponse { info: format!("Records: {records}  Duplicates: 0  Warnings: {}", warnings.len()), ..OkResponse::default() };
    let mut outcome = Outcome::new(ok);
    outcome.warnings = warnings;
    Ok(outcome)
}

/// The specs applied, in order, to `def`; what they warn of (a comment
/// cut to MySQL's length) goes to `warnings`.
fn plan(alter: &AlterTable, def: &TableDef, context: &Context<'_>, warnings: &mut Vec<Warning>) -> SqlResult<Working> {
    let declared = def.to_spec();
    let mut working = Working {
        database: declared.database,
        name: declared.name,
        columns: declared.columns.into_iter().enumerate().map(|(position, def)| Column { def, source: Some(position) }).collect(),
        primary_key: declared.primary_key,
        indexes: declared.indexes,
        auto_increment: None,
        partitioning: declared.partitioning,
        comment: declared.comment,
        default_collation: def.default_collation,
        charset_named: None,
    };
    for spec in &alter.specs {
        working.apply(spec, context, warnings)?;
    }
    // Generated columns' and expression defaults' expressions, as CREATE
    // TABLE checks them. A column of the old table they no longer find was
    // dropped or renamed under them: MySQL's 3108 and 3837.
    let columns: Vec<ColumnDef> = working.columns.iter().map(|column| column.def.clone()).collect();
    let lost = |error: MysqlError, dependency: fn(&str, &str) -> MysqlError| match unknown_column_name(&error) {
        Some(name) if def.column_index(&name).is_ok() => dependency(&name, &def.name),
        _ => error,
    };
    for (position, column) in columns.iter().enumerate() {
        if let Some(generated) = &column.attributes.generated {
            crate::eval::generated::check(&columns, position, &crate::eval::generated::parse_expression(&generated.expression)?).map_err(
                |error| {
                    lost(error, |name, _| MysqlError::new(3108, "HY000", format!("Column '{name}' has a generated column dependency.")))
                },
            )?;
        }
    }
    check_default_expressions(&columns, context).map_err(|error| {
        lost(error, |name, table| {
            MysqlError::new(
                3837,
                "HY000",
                format!("Column '{name}' of table '{table}' has a default value expression dependency and cannot be dropped or renamed."),
            )
        })
    })?;
    if working.columns.is_empty() {
        return Err(MysqlError::new(1090, "42000", "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"));
    }
    if working.columns.iter().all(|c| c.def.attributes.invisible) {
        return Err(MysqlError::new(4028, "HY000", "A table must have at least one visible column."));
    }
    // MySQL makes primary key columns NOT NULL.
    for name in &working.primary_key {
        if let Some(column) = working.columns.iter_mut().find(|c| c.def.name.eq_ignore_ascii_case(name)) {
            column.def.nullable = false;
        }
    }
    let columns: Vec<ColumnDef> = working.columns.iter().map(|c| c.def.clone()).collect();
    check_no_json_keys(&columns, std::iter::once(&working.primary_key).chain(working.indexes.iter().map(|index| &index.columns)))?;
    Ok(working)
}

fn cant_drop(name: &str) -> MysqlError {
    MysqlError::new(1091, "42000", format!("Can't DROP '{name}'; check that column/key exists"))
}

fn duplicate_column(name: &str) -> MysqlError {
    MysqlError::new(1060, "42S21", format!("Duplicate column name '{name}'"))
}

fn duplicate_key(name: &str) -> MysqlError {
    MysqlError::new(1061, "42000", format!("Duplicate key name '{name}'"))
}

impl Working {
    fn spec(&self) -> TableSpec {
        TableSpec {
            database: self.database.clone(),
            name: self.name.clone(),
            columns: self.columns.iter().map(|c| c.def.clone()).collect(),
            primary_key: self.primary_key.clone(),
            indexes: self.indexes.clone(),
            auto_increment_start: 0,
            partitioning: self.partitioning.clone(),
            comment: self.comment.clone(),
            default_collation: Some(self.default_collation),
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.def.name.eq_ignore_ascii_case(name))
    }

    /// 1054 naming the table, as MySQL's ALTER does.
    fn existing(&self, name: &str) -> SqlResult<usize> {
        self.position(name).ok_or_else(|| crate::error::unknown_column(name, &self.name))
    }

    fn place(&mut self, column: Column, position: &Option<ColumnPosition>) -> SqlResult<()> {
        let at = match position {
            None => self.columns.len(),
            Some(ColumnPosition::First) => 0,
            Some(ColumnPosition::After(name)) => self.existing(name)? + 1,
        };
        self.columns.insert(at, column);
        Ok(())
    }

    fn rename_in_keys(&mut self, from: &str, to: &str) {
        let partitioning = self.partitioning.iter_mut().map(|partitioning| &mut partitioning.columns);
        let keys =
            std::iter::once(&mut self.primary_key).chain(self.indexes.iter_mut().map(|index| &mut index.columns)).chain(partitioning);
        for key in keys {
            for name in key.iter_mut().filter(|name| name.eq_ignore_ascii_case(from)) {
                *name = to.to_string();
            }
        }
    }

    fn add_inline_keys(&mut self, name: &str, primary_key: bool, unique: bool) -> SqlResult<()> {
        if primary_key {
            if !self.primary_key.is_empty() {
                return Err(MysqlError::new(1068, "42000", "Multiple primary key defined"));
            }
            self.primary_key = vec![name.to_string()];
        }
        if unique {
            let index_name = self.free_index_name(name);
            self.indexes.push(IndexSpec { name: index_name, columns: vec![name.to_string()], unique: true });
        }
        Ok(())
    }

    /// MySQL's name for an unnamed key: its first column's, with `_2`,
    /// `_3`, ... when taken.
    fn free_index_name(&self, first_column: &str) -> String {
        let taken = |name: &str| self.indexes.iter().any(|index| index.name.eq_ignore_ascii_case(name));
        if !taken(first_column) && !first_column.eq_ignore_ascii_case("PRIMARY") {
            return first_column.to_string();
        }
        (2..).map(|n| format!("{first_column}_{n}")).find(|name| !taken(name)).expect("some suffix is free")
    }

    fn apply(&mut self, spec: &AlterSpec, context: &Context<'_>, warnings: &mut Vec<Warning>) -> SqlResult<()> {
        match spec {
            AlterSpec::AddColumns { columns, position } => {
                let mut position = position.clone();
                for column in columns {
                    let built = build_column(column, self.default_collation, context)?;
                    check_identifier(&built.def.name)?;
                    if self.position(&built.def.name).is_some() {
                        return Err(duplicate_column(&built.def.name));
                    }
                    let name = built.def.name.clone();
                    self.place(Column { def: built.def, source: None }, &position)?;
                    self.add_inline_keys(&name, built.primary_key, built.unique)?;
                    // The next column of ADD (a ..., b ...) goes after this one.
                    if position.is_some() {
                        position = Some(ColumnPosition::After(name));
                    }
                }
                Ok(())
            }
            AlterSpec::AddKey(constraint) => self.add_key(constraint),
            AlterSpec::DropColumn(name) => {
                let at = self.position(name).ok_or_else(|| cant_drop(name))?;
                self.columns.remove(at);
                let drop_from = |key: &mut Vec<String>| key.retain(|c| !c.eq_ignore_ascii_case(name));
                drop_from(&mut self.primary_key);
                for index in &mut self.indexes {
                    drop_from(&mut index.columns);
                }
                self.indexes.retain(|index| !index.columns.is_empty());
                Ok(())
            }
            AlterSpec::ChangeColumn { old, column, position } => {
                let at = self.existing(old)?;
                let built = build_column(column, self.default_collation, context)?;
                check_identifier(&built.def.name)?;
                if built.generation.is_some() || self.columns[at].def.attributes.generated.is_some() {
                    return Err(not_supported("ALTER TABLE ... MODIFY or CHANGE of a generated column"));
                }
                if let Some(other) = self.position(&built.def.name) {
                    if other != at {
                        return Err(duplicate_column(&built.def.name));
                    }
                }
                let old_name = self.columns[at].def.name.clone();
                let name = built.def.name.clone();
                let source = self.columns[at].source;
                if position.is_some() {
                    self.columns.remove(at);
                    self.place(Column { def: built.def, source }, position)?;
                } else {
                    self.columns[at] = Column { def: built.def, source };
                }
                self.rename_in_keys(&old_name, &name);
                self.add_inline_keys(&name, built.primary_key, built.unique)
            }
            AlterSpec::RenameColumn { from, to } => {
                let at = self.existing(from)?;
                check_identifier(to)?;
                if self.position(to).is_some_and(|other| other != at) {
                    return Err(duplicate_column(to));
                }
                let old_name = std::mem::replace(&mut self.columns[at].def.name, to.clone());
                self.rename_in_keys(&old_name, to);
                Ok(())
            }
            AlterSpec::SetDefault { column, default } => {
                let at = self.existing(column)?;
                let no_columns = crate::eval::expr::Columns::default();
                let value = context.constants(&no_columns).eval(default)?;
                let def = &mut self.columns[at].def;
                let invalid = || MysqlError::new(1067, "42000", format!("Invalid default value for '{}'", def.name));
                def.default = if value == Value::Null {
                    if !def.nullable {
                        return Err(invalid());
                    }
                    Some(Value::Null)
                } else {
                    Some(coerce_write(def, value, WriteRules::of(&context.env), &mut Vec::new()).map_err(|_| invalid())?)
                };
                def.current_timestamp.on_insert = false;
                Ok(())
            }
            AlterSpec::DropDefault { column } => {
                let at = self.existing(column)?;
                let def = &mut self.columns[at].def;
                def.default = None;
                def.current_timestamp.on_insert = false;
                Ok(())
            }
            AlterSpec::DropIndex(name) if name.eq_ignore_ascii_case("PRIMARY") => self.drop_primary_key(),
            AlterSpec::DropIndex(name) => {
                let at = self.indexes.iter().position(|index| index.name.eq_ignore_ascii_case(name)).ok_or_else(|| cant_drop(name))?;
                self.indexes.remove(at);
                Ok(())
            }
            AlterSpec::DropPrimaryKey => self.drop_primary_key(),
            AlterSpec::RenameTable((database, name)) => {
                check_identifier(name)?;
                self.database = context.database(database.as_deref())?;
                self.name = name.clone();
                Ok(())
            }
            AlterSpec::RenameIndex { from, to } => {
                let at = self
                    .indexes
                    .iter()
                    .position(|index| index.name.eq_ignore_ascii_case(from))
                    .ok_or_else(|| MysqlError::new(1176, "42000", format!("Key '{from}' doesn't exist in table '{}'", self.name)))?;
                check_identifier(to)?;
                if self.indexes.iter().enumerate().any(|(other, index)| other != at && index.name.eq_ignore_ascii_case(to)) {
                    return Err(duplicate_key(to));
                }
                self.indexes[at].name = to.clone();
                Ok(())
            }
            AlterSpec::AutoIncrement(value) => {
                self.auto_increment = Some(*value);
                Ok(())
            }
            AlterSpec::Comment(comment) => {
                self.comment = crate::exec::table_comment::checked(comment, &self.name, WriteRules::of(&context.env).mode, warnings)?;
                Ok(())
            }
            AlterSpec::TableCharset(name) => {
                let collation = crate::charsets::clause_collation(Some(name.as_str()), None)?.expect("a character set names a collation");
                self.default_collation = collation.id;
                self.charset_named = Some(collation.charset);
                Ok(())
            }
            AlterSpec::TableCollation(name) => {
                let collation = crate::charsets::clause_collation(self.charset_named, Some(name.as_str()))?.expect("a collation was named");
                self.default_collation = collation.id;
                Ok(())
            }
            AlterSpec::ConvertTo { charset, collation } => {
                let collation =
                    crate::charsets::clause_collation(Some(charset.as_str()), collation.as_deref())?.expect("a character set was named");
                self.default_collation = collation.id;
                for column in &mut self.columns {
                    column.def = crate::eval::columns::converted_to_collation(&column.def, collation.id)?;
                }
                Ok(())
            }
            AlterSpec::Harmless => Ok(()),
        }
    }

    fn drop_primary_key(&mut self) -> SqlResult<()> {
        if self.primary_key.is_empty() {
            return Err(cant_drop("PRIMARY"));
        }
        self.primary_key.clear();
        Ok(())
    }

    fn add_key(&mut self, constraint: &TableConstraint) -> SqlResult<()> {
        let named = |name: Option<&sqlparser::ast::Ident>, columns: &[String]| -> SqlResult<String> {
            match name {
                Some(name) => {
                    check_identifier(&name.value)?;
                    if self.indexes.iter().any(|index| index.name.eq_ignore_ascii_case(&name.value)) {
                        return Err(duplicate_key(&name.value));
                    }
                    Ok(name.value.clone())
                }
                None => Ok(self.free_index_name(&columns[0])),
            }
        };
        match constraint {
            TableConstraint::PrimaryKey(key) => {
                if !self.primary_key.is_empty() {
                    return Err(MysqlError::new(1068, "42000", "Multiple primary key defined"));
                }
                self.primary_key = index_columns(&key.columns)?;
            }
            TableConstraint::Unique(key) => {
                let columns = index_columns(&key.columns)?;
                let name = named(key.index_name.as_ref().or(key.name.as_ref()), &columns)?;
                self.indexes.push(IndexSpec { name, columns, unique: true });
            }
            TableConstraint::Index(key) => {
                let columns = index_columns(&key.columns)?;
                let name = named(key.name.as_ref(), &columns)?;
                self.indexes.push(IndexSpec { name, columns, unique: false });
            }
            other => return Err(not_supported(crate::eval::expr::first_words(&other.to_string()))),
        }
        Ok(())
    }
}

/// The column a 1054 names.
fn unknown_column_name(error: &MysqlError) -> Option<String> {
    (error.code == 1054).then(|| error.message.split('\'').nth(1).map(str::to_string)).flatten()
}

/// The old rows in the new table's shape. An added column with an
/// expression DEFAULT, then an added generated column, takes what its
/// expression gives over the converted row, in column order, as an INSERT
/// would give it.
fn convert(
    working: &Working,
    old: &TableDef,
    rows: Vec<engine::Row>,
    context: &Context<'_>,
    rules: WriteRules,
    warnings: &mut Vec<Warning>,
) -> SqlResult<Vec<engine::Row>> {
    let added = |text_of: fn(&ColumnDef) -> Option<&String>| -> SqlResult<Vec<(usize, sqlparser::ast::Expr)>> {
        let added = working.columns.iter().enumerate().filter(|(_, column)| column.source.is_none());
        added
            .filter_map(|(position, column)| text_of(&column.def).map(|text| (position, text)))
            .map(|(position, text)| Ok((position, crate::eval::generated::parse_expression(text)?)))
            .collect()
    };
    let computed: Vec<_> = added(|def| def.attributes.default_expression.as_ref())?
        .into_iter()
        .chain(added(|def| def.attributes.generated.as_ref().map(|generated| &generated.expression))?)
        .collect();
    let new_def = TableDef {
        columns: working.columns.iter().map(|column| column.def.clone()).collect(),
        primary_key: Vec::new(),
        indexes: Vec::new(),
        partitioning: None,
        keys_by_collation: true,
        ..old.clone()
    };
    let expression_columns = Columns::of_table(&new_def, None);
    let mut converted = Vec::with_capacity(rows.len());
    for (number, row) in rows.into_iter().enumerate() {
        let rules = rules.at_row(number as u64 + 1);
        let warned_before = warnings.len();
        let mut new_row = Vec::with_capacity(working.columns.len());
        for column in &working.columns {
            let value = match column.source {
                Some(source) if same_storage(&old.columns[source], &column.def) => row[source].clone(),
                Some(source) => {
                    let value = as_sql_value(&old.columns[source], row[source].clone());
                    if value == Value::Null {
                        Value::Null
                    } else {
                        coerce_write(&column.def, value, rules, warnings).map_err(|mut error| {
                            if error.code == DATA_TOO_LONG {
                                error = MysqlError::new(1265, "01000", truncated(&column.def.name, rules.row));
                            }
                            error.message = at_row(error.message, rules.row);
                            error
                        })?
                    }
                }
                None if column.def.current_timestamp.on_insert => current_timestamp_for(&column.def, rules),
                // Computed below, once the row's other values are in.
                None if column.def.attributes.default_expression.is_some() || column.def.attributes.generated.is_some() => Value::Null,
                None => match &column.def.default {
                    Some(value) => value.clone(),
                    None if column.def.nullable || column.def.auto_increment => Value::Null,
                    None => implicit_value(&column.def, rules)?,
                },
            };
            new_row.push(value);
        }
        for (position, expr) in &computed {
            let value = Scope::for_row(&expression_columns, &new_row, context.params, &context.env).eval(expr)?;
            new_row[*position] = coerce_write(&working.columns[*position].def, value, rules, warnings)?;
        }
        for (value, column) in new_row.iter_mut().zip(&working.columns) {
            if *value == Value::Null && !column.def.nullable && !column.def.auto_increment {
                *value = not_null(&column.def, rules, warnings)?;
            }
        }
        for warning in &mut warnings[warned_before..] {
            if warning.code == DATA_TOO_LONG {
                warning.code = 1265;
                let name = warning.message.split('\'').nth(1).unwrap_or_default().to_string();
                warning.message = truncated(&name, rules.row);
            }
            warning.message = at_row(std::mem::take(&mut warning.message), rules.row);
        }
        converted.push(new_row);
    }
    assign_auto_increment(working, &mut converted);
    Ok(converted)
}

/// ER_DATA_TOO_LONG, which an INSERT gets for a string too long; MySQL's
/// copy reports the same cut as 1265 (WARN_DATA_TRUNCATED).
const DATA_TOO_LONG: u16 = 1406;

fn truncated(column: &str, row: u64) -> String {
    format!("Data truncated for column '{column}' at row {row}")
}

/// The value checks name row 1 (an INSERT's first row); ALTER names the
/// row it converts, as MySQL does.
fn at_row(message: String, row: u64) -> String {
    match message.strip_suffix(" at row 1") {
        Some(stem) => format!("{stem} at row {row}"),
        None => message,
    }
}

/// A NULL into a NOT NULL column: 1138 in strict mode, else the type's
/// implicit value with warning 1265 (MySQL's behaviour for MODIFY ... NOT
/// NULL over NULLs).
fn not_null(column: &ColumnDef, rules: WriteRules, warnings: &mut Vec<Warning>) -> SqlResult<Value> {
    if rules.mode.strict {
        return Err(MysqlError::new(1138, "22004", "Invalid use of NULL value"));
    }
    warnings.push(Warning {
        level: "Warning",
        code: 1265,
        message: format!("Data truncated for column '{}' at row {}", column.name, rules.row),
    });
    implicit_value(column, rules)
}

/// A column that becomes AUTO_INCREMENT numbers its NULL and 0 values
/// 1, 2, ... past the largest value present, as MySQL's copy does.
fn assign_auto_increment(working: &Working, rows: &mut [engine::Row]) {
    let Some(at) = working.columns.iter().position(|c| c.def.auto_increment) else { return };
    let as_u64 = |value: &Value| match value {
        Value::Int(v) if *v > 0 => Some(*v as u64),
        Value::UInt(v) if *v > 0 => Some(*v),
        _ => None,
    };
    let mut next = rows.iter().filter_map(|row| as_u64(&row[at])).max().unwrap_or(0) + 1;
    let unsigned = working.columns[at].def.unsigned;
    for row in rows.iter_mut() {
        if as_u64(&row[at]).is_none() {
            row[at] = if unsigned { Value::UInt(next) } else { Value::Int(next as i64) };
            next += 1;
        }
    }
}

/// Whether values of `old` are already values of `new`.
fn same_storage(old: &ColumnDef, new: &ColumnDef) -> bool {
    old.column_type == new.column_type
        && old.unsigned == new.unsigned
        && old.collation == new.collation
        && old.attributes.members == new.attributes.members
        && old.attributes == new.attributes
        && (new.nullable || !old.nullable)
}

/// A stored value as a SQL expression would give it: ENUM and SET by
/// their member names.
fn as_sql_value(column: &ColumnDef, value: Value) -> Value {
    match (&column.column_type, &value) {
        (ColumnType::Enum { .. } | ColumnType::Set { .. }, Value::UInt(stored)) => {
            let is_set = matches!(column.column_type, ColumnType::Set { .. });
            Value::Bytes(crate::eval::enumeration::member_text(is_set, &column.attributes.members, *stored))
        }
        _ => value,
    }
}

/// The value MySQL gives a NOT NULL column without a DEFAULT in rows that
/// had no value for it: zero, the empty string, the first ENUM member,
/// the zero date.
fn implicit_value(column: &ColumnDef, rules: WriteRules) -> SqlResult<Value> {
    let mut ignored = Vec::new();
    let lenient = WriteRules { mode: crate::eval::temporal::SqlMode { strict: false, ..rules.mode }, ..rules };
    Ok(match &column.column_type {
        ColumnType::Date => Value::Date { year: 0, month: 0, day: 0 },
        ColumnType::DateTime2 { .. } => Value::DateTime { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, micros: 0 },
        ColumnType::Timestamp2 { .. } => Value::Timestamp { seconds: 0, micros: 0 },
        ColumnType::Time2 { .. } => Value::Time { negative: false, hours: 0, minute: 0, second: 0, micros: 0 },
        ColumnType::Enum { .. } => match column.attributes.members.first() {
            Some(first) => coerce_write(column, Value::Bytes(first.clone()), lenient, &mut ignored)?,
            None => Value::UInt(0),
        },
        ColumnType::Set { .. } | ColumnType::String { .. } | ColumnType::VarChar { .. } | ColumnType::Blob { .. } => {
            coerce_write(column, Value::Bytes(Vec::new()), lenient, &mut ignored)?
        }
        ColumnType::Json => crate::eval::json::for_column("", &column.name, &Value::Bytes(b"null".to_vec()))?,
        ColumnType::Geometry => return Err(MysqlError::new(1138, "22004", "Invalid use of NULL value")),
        _ => coerce_write(column, Value::Int(0), lenient, &mut ignored)?,
    })
}
