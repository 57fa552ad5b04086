//! DDL: CREATE/DROP DATABASE, CREATE TABLE (and ... LIKE), CREATE/DROP
//! INDEX, DROP TABLE, TRUNCATE. Each runs through the database's
//! `execute_ddl`, which writes the statement to the binlog as a Query event.

use engine::{IndexSpec, TableSpec};
use protocol::OkResponse;
use sqlparser::ast::{
    ColumnOption, CreateIndex, CreateTable, CreateTableLikeKind, Expr, IndexColumn, ObjectType, Statement as Ast, TableConstraint,
};
use sqlparser::tokenizer::Token;

use crate::error::{database_error, not_supported, syntax_error, SqlResult};
use crate::eval::columns::{coerce_write, column_in_collation};
use crate::eval::expr::Columns;
use crate::eval::temporal::{current_timestamp_precision, WriteRules};
use crate::eval::value::NullCheck;
use crate::exec::dispatch::table_name;
use crate::locking::statement_locks::lock_wait_timeout;
use crate::parse::partition::PartitionClause;
use crate::parse::Statement;
use crate::session::{Context, Outcome, Warning};

/// An `IF [NOT] EXISTS` statement that had nothing to do: OK with MySQL's
/// note (SHOW WARNINGS lists it; the OK packet counts it).
fn ok_with_note(code: u16, message: String) -> Outcome {
    let mut outcome = Outcome::new(OkResponse::default());
    outcome.warnings.push(Warning { level: "Note", code, message });
    outcome
}

pub fn database_statement(statement: &Statement, context: &Context<'_>) -> SqlResult<Outcome> {
    let db = context.db();
    let ctx = context.statement_context();
    match statement {
        Statement::CreateDatabase { name, if_not_exists, options } => {
            check_identifier(name)?;
            let collation = options_collation(options)?.unwrap_or(engine::SERVER_DEFAULT_COLLATION);
            if *if_not_exists && db.catalog().databases().contains(name) {
                return Ok(ok_with_note(1007, format!("Can't create database '{name}'; database exists")));
            }
            context.execute_ddl(&ctx, |engine| engine.create_database_in_collation(name, collation)).map_err(database_error)?;
            Ok(Outcome::new(OkResponse::affected(1)))
        }
        Statement::AlterDatabase { name, options } => {
            let name = context.database(name.as_deref())?;
            let current = db.catalog().database_collation(&name).map_err(crate::error::engine_error)?;
            let collation = options_collation(options)?.unwrap_or(current);
            context.execute_ddl(&ctx, |engine| engine.alter_database_collation(&name, collation)).map_err(database_error)?;
            let mut outcome = Outcome::new(OkResponse::affected(1));
            // The current database's variables follow it, as in MySQL.
            if context.env.database == Some(name.as_str()) {
                outcome.set_variables.extend(crate::charsets::database_variables(collation));
            }
            Ok(outcome)
        }
        Statement::DropDatabase { name, if_exists } => {
            if *if_exists && !db.catalog().databases().contains(name) {
                return Ok(ok_with_note(1008, format!("Can't drop database '{name}'; database doesn't exist")));
            }
            let dropped =
                context.execute_ddl(&ctx, |engine| engine.drop_database(name, lock_wait_timeout(context))).map_err(database_error)?;
            let mut outcome = Outcome::new(OkResponse::affected(dropped.len() as u64));
            if context.env.database == Some(name.as_str()) {
                outcome.use_database = Some(None);
            }
            Ok(outcome)
        }
        Statement::Truncate { database, table } => {
            let database = context.database(database.as_deref())?;
            context
                .execute_ddl(&ctx, |engine| engine.truncate_table(&database, table, lock_wait_timeout(context)))
                .map_err(database_error)?;
            Ok(Outcome::ok())
        }
        _ => Err(protocol::MysqlError::internal("not a database statement")),
    }
}

pub fn ddl(ast: &Ast, context: &Context<'_>) -> SqlResult<Outcome> {
    match ast {
        Ast::CreateTable(create) => create_table(create, None, context),
        Ast::CreateIndex(create) => create_index(create, context),
        Ast::Drop { object_type: ObjectType::Table, if_exists, names, temporary: false, .. } => {
            let mut tables = Vec::with_capacity(names.len());
            for name in names {
                tables.push(table_name(name, context)?);
            }
            let catalog = context.db().catalog();
            let missing: Vec<String> =
                tables.iter().filter(|(d, t)| catalog.table(d, t).is_err()).map(|(d, t)| format!("{d}.{t}")).collect();
            if !missing.is_empty() && !*if_exists {
                return Err(protocol::MysqlError::new(1051, "42S02", format!("Unknown table '{}'", missing.join(","))));
            }
            let present: Vec<(String, String)> = tables.into_iter().filter(|(d, t)| catalog.table(d, t).is_ok()).collect();
            if present.is_empty() {
                return Ok(ok_with_note(1051, format!("Unknown table '{}'", missing.join(","))));
            }
            context
                .execute_ddl(&context.statement_context(), |engine| engine.drop_tables(&present, lock_wait_timeout(context)))
                .map_err(database_error)?;
            Ok(Outcome::ok())
        }
        Ast::Drop { object_type: ObjectType::Index, names, table: Some(table), .. } => {
            let (database, table) = table_name(table, context)?;
            let [index] = names.as_slice() else { return Err(syntax_error(&ast.to_string())) };
            let index = index.to_string();
            context
                .execute_ddl(&context.statement_context(), |engine| {
                    engine.drop_index(&database, &table, &index, lock_wait_timeout(context))
                })
                .map_err(database_error)?;
            Ok(Outcome::ok())
        }
        other => Err(not_supported(crate::eval::expr::first_words(&other.to_string()))),
    }
}

pub fn index_columns(columns: &[IndexColumn]) -> SqlResult<Vec<String>> {
    columns
        .iter()
        .map(|column| match &column.column.expr {
            Expr::Identifier(ident) => Ok(ident.value.clone()),
            other => Err(not_supported(format!("index on {other}"))),
        })
        .collect()
}

/// MySQL's NAME_CHAR_LEN: names of databases, tables, columns and indexes.
/// A longer one would stop a MySQL replica applying this binlog.
const IDENTIFIER_CHARACTERS_MAX: usize = 64;

/// InnoDB's limit on a table's columns (MySQL's own is 4096).
const TABLE_COLUMNS_MAX: usize = 1017;

/// 1059 ER_TOO_LONG_IDENT for a name over 64 characters.
pub fn check_identifier(name: &str) -> SqlResult<()> {
    if name.chars().count() > IDENTIFIER_CHARACTERS_MAX {
        return Err(protocol::MysqlError::new(
            1059,
            "42000",
            format!("Identifier name '{}' is too long", name.chars().take(100).collect::<String>()),
        ));
    }
    Ok(())
}

/// The names a new table brings, and its width: 1059 or 1117 before the
/// engine sees it.
fn check_table_spec(spec: &TableSpec) -> SqlResult<()> {
    check_identifier(&spec.name)?;
    if spec.columns.len() > TABLE_COLUMNS_MAX {
        return Err(protocol::MysqlError::new(1117, "42000", "Too many columns"));
    }
    for column in &spec.columns {
        check_identifier(&column.name)?;
    }
    for index in &spec.indexes {
        check_identifier(&index.name)?;
    }
    Ok(())
}

/// CREATE TABLE, with its PARTITION BY clause when it has one.
pub fn create_table(create: &CreateTable, partitioning: Option<&PartitionClause>, context: &Context<'_>) -> SqlResult<Outcome> {
    if create.temporary || create.or_replace || create.query.is_some() || create.clone.is_some() {
        return Err(not_supported("CREATE TEMPORARY TABLE, CREATE OR REPLACE or CREATE TABLE ... SELECT"));
    }
    let (database, table) = table_name(&create.name, context)?;
    let catalog = context.db().catalog();
    if catalog.table(&database, &table).is_ok() && create.if_not_exists {
        return Ok(ok_with_note(1050, format!("Table '{table}' already exists")));
    }
    let mut warnings = Vec::new();
    let spec = if let Some(like) = &create.like {
        let source = match like {
            CreateTableLikeKind::Parenthesized(like) | CreateTableLikeKind::Plain(like) => &like.name,
        };
        let (source_database, source_table) = table_name(source, context)?;
        let def = catalog.table(&source_database, &source_table).map_err(crate::error::engine_error)?;
        // CREATE TABLE ... LIKE copies keys, partitioning and the comment,
        // as MySQL does.
        TableSpec { database: database.clone(), name: table.clone(), ..def.to_spec() }
    } else {
        let comment = crate::exec::table_comment::from_options(&create.table_options).unwrap_or_default();
        let comment = crate::exec::table_comment::checked(comment, &table, WriteRules::of(&context.env).mode, &mut warnings)?;
        let mut spec = TableSpec { database: database.clone(), name: table.clone(), comment, ..TableSpec::default() };
        let mut generation_exprs = Vec::new();
        // The table's own, else its database's, as in MySQL.
        let database_collation = catalog.database_collation(&database).unwrap_or(engine::SERVER_DEFAULT_COLLATION);
        let default_collation = table_collation(&create.table_options)?.unwrap_or(database_collation);
        spec.default_collation = Some(default_collation);
        for column in &create.columns {
            let built = build_column(column, default_collation, context)?;
            if let Some(expr) = built.generation {
                generation_exprs.push((spec.columns.len(), expr));
            }
            if built.primary_key {
                spec.primary_key.push(built.def.name.clone());
            }
            if built.unique {
                spec.indexes.push(IndexSpec { name: built.def.name.clone(), columns: vec![built.def.name.clone()], unique: true });
            }
            spec.columns.push(built.def);
        }
        for (position, expr) in &generation_exprs {
            crate::eval::generated::check(&spec.columns, *position, expr)?;
        }
        check_default_expressions(&spec.columns, context)?;
        if spec.columns.iter().all(|column| column.attributes.invisible) {
            return Err(protocol::MysqlError::new(4028, "HY000", "A table must have at least one visible column."));
        }
        for constraint in &create.constraints {
            match constraint {
                TableConstraint::PrimaryKey(key) => {
                    if !spec.primary_key.is_empty() {
                        return Err(protocol::MysqlError::new(1068, "42000", "Multiple primary key defined"));
                    }
                    spec.primary_key = index_columns(&key.columns)?;
                }
                TableConstraint::Unique(key) => {
                    let columns = index_columns(&key.columns)?;
                    let name = key.index_name.as_ref().or(key.name.as_ref()).map(|n| n.value.clone()).unwrap_or_else(|| columns[0].clone());
                    spec.indexes.push(IndexSpec { name, columns, unique: true });
                }
                TableConstraint::Index(key) => {
                    let columns = index_columns(&key.columns)?;
                    let name = key.name.as_ref().map(|n| n.value.clone()).unwrap_or_else(|| columns[0].clone());
                    spec.indexes.push(IndexSpec { name, columns, unique: false });
                }
                other => return Err(not_supported(crate::eval::expr::first_words(&other.to_string()))),
            }
        }
        spec
    };
    check_table_spec(&spec)?;
    let mut spec = spec;
    if let Some(clause) = partitioning {
        if create.like.is_some() {
            return Err(syntax_error("PARTITION BY"));
        }
        spec.partitioning = Some(crate::exec::partitioning::build(clause, &spec, context)?);
    }
    if spec.primary_key.iter().any(|name| {
        spec.columns.iter().any(|c| c.name.eq_ignore_ascii_case(name) && c.attributes.generated.as_ref().is_some_and(|g| !g.stored))
    }) {
        return Err(protocol::MysqlError::new(
            3106,
            "HY000",
            "'Defining a virtual generated column as primary key' is not supported for generated columns.",
        ));
    }
    check_no_json_keys(&spec.columns, std::iter::once(&spec.primary_key).chain(spec.indexes.iter().map(|index| &index.columns)))?;
    context.execute_ddl(&context.statement_context(), |engine| engine.create_table(&spec)).map_err(database_error)?;
    let mut outcome = Outcome::ok();
    outcome.warnings = warnings;
    Ok(outcome)
}

/// A column definition as CREATE TABLE and ALTER TABLE read it, with
/// its inline keys and its generation expression.
pub struct BuiltColumn {
    pub def: engine::ColumnDef,
    pub generation: Option<Expr>,
    pub primary_key: bool,
    pub unique: bool,
}

/// Checks each expression DEFAULT of `columns` as MySQL does, then
/// evaluates it once over a row of NULLs, so an unknown function or an
/// unsupported construct fails the CREATE rather than each INSERT.
pub(crate) fn check_default_expressions(columns: &[engine::ColumnDef], context: &Context<'_>) -> SqlResult<()> {
    let names = Columns { names: columns.iter().map(|c| c.name.clone()).collect(), ..Columns::default() };
    let nulls = vec![binlog_format::Value::Null; columns.len()];
    for (position, column) in columns.iter().enumerate() {
        let Some(text) = &column.attributes.default_expression else { continue };
        let expr = crate::eval::generated::parse_expression(text)?;
        crate::eval::default_expressions::check(columns, position, &expr)?;
        crate::eval::expr::Scope::for_row(&names, &nulls, context.params, &context.env).eval(&expr)?;
    }
    Ok(())
}

/// The collation CREATE or ALTER DATABASE's options name, if any.
fn options_collation(options: &crate::parse::DatabaseOptions) -> SqlResult<Option<u16>> {
    Ok(crate::charsets::clause_collation(options.charset.as_deref(), options.collation.as_deref())?.map(|collation| collation.id))
}

/// The collation CREATE TABLE's `[DEFAULT] CHARACTER SET [=] x` and
/// `[DEFAULT] COLLATE [=] y` options name (the last of each counts, as in
/// MySQL), or `None` when they name none.
pub fn table_collation(options: &sqlparser::ast::CreateTableOptions) -> SqlResult<Option<u16>> {
    use sqlparser::ast::{CreateTableOptions as Options, SqlOption};
    let options = match options {
        Options::None => return Ok(None),
        Options::With(options) | Options::Options(options) | Options::Plain(options) | Options::TableProperties(options) => options,
    };
    let (mut charset, mut collation) = (None, None);
    for option in options {
        if let SqlOption::KeyValue { key, value } = option {
            match key.to_string().to_ascii_uppercase().trim_start_matches("DEFAULT ") {
                "CHARSET" | "CHARACTER SET" => charset = Some(value.to_string()),
                "COLLATE" => collation = Some(value.to_string()),
                _ => {}
            }
        }
    }
    Ok(crate::charsets::clause_collation(charset.as_deref(), collation.as_deref())?.map(|collation| collation.id))
}

/// The collation a column's own `CHARACTER SET` and `COLLATE` name, or
/// `None` when it names neither.
fn column_charset_clause(column: &sqlparser::ast::ColumnDef) -> SqlResult<Option<u16>> {
    let (mut charset, mut collation) = (None, None);
    for option in &column.options {
        match &option.option {
            ColumnOption::CharacterSet(name) => charset = Some(name.to_string()),
            ColumnOption::Collation(name) => collation = Some(name.to_string()),
            _ => {}
        }
    }
    Ok(crate::charsets::clause_collation(charset.as_deref(), collation.as_deref())?.map(|collation| collation.id))
}

/// MySQL's longest column COMMENT, in characters (ER_TOO_LONG_FIELD_COMMENT).
const COLUMN_COMMENT_CHARS_MAX: usize = 1024;

/// The column `column` declares, its text in its own character set and
/// collation or else in `table_collation` (the table's default).
pub fn build_column(column: &sqlparser::ast::ColumnDef, table_collation: u16, context: &Context<'_>) -> SqlResult<BuiltColumn> {
    let no_columns = Columns::default();
    let constants = context.constants(&no_columns);
    let rules = WriteRules::of(&context.env);
    let text_collation = column_charset_clause(column)?.unwrap_or(table_collation);
    let mut def = column_in_collation(&column.name.value, &column.data_type, text_collation)?;
    let (mut generation, mut primary_key, mut unique) = (None, false, false);
    let mut default = None;
    for option in &column.options {
        match &option.option {
            ColumnOption::Null => def.nullable = true,
            ColumnOption::NotNull => def.nullable = false,
            // A parenthesized DEFAULT is an expression, evaluated per row.
            ColumnOption::Default(Expr::Nested(inner)) => {
                def.attributes.default_expression = Some(inner.to_string());
            }
            ColumnOption::Default(expr)
                if matches!(def.column_type, binlog_format::ColumnType::Json | binlog_format::ColumnType::Geometry) =>
            {
                return Err(json_default(&def.name))
            }
            ColumnOption::Srid(expr) => column_srid(&mut def, expr)?,
            ColumnOption::Invisible => def.attributes.invisible = true,
            ColumnOption::Generated { generation_expr: Some(expr), generation_expr_mode, .. } => {
                let stored = matches!(generation_expr_mode, Some(sqlparser::ast::GeneratedExpressionMode::Stored));
                def.attributes.generated = Some(engine::Generated { expression: expr.to_string(), stored });
                generation = Some(expr.clone());
            }
            ColumnOption::Default(expr) if current_timestamp_precision(expr).is_some() => {
                check_current_timestamp(&def, expr, 1067, "Invalid default value for")?;
                def.current_timestamp.on_insert = true;
            }
            ColumnOption::Default(expr) => default = Some(constants.eval(expr)?),
            ColumnOption::OnUpdate(expr) => {
                check_current_timestamp(&def, expr, 1294, "Invalid ON UPDATE clause for")?;
                def.current_timestamp.on_update = true;
            }
            ColumnOption::PrimaryKey(_) => primary_key = true,
            ColumnOption::Unique(_) => unique = true,
            ColumnOption::DialectSpecific(tokens) if matches!(tokens.as_slice(), [Token::Word(word)] if word.value.eq_ignore_ascii_case("AUTO_INCREMENT")) => {
                def.auto_increment = true
            }
            ColumnOption::Comment(comment) if comment.chars().count() > COLUMN_COMMENT_CHARS_MAX => {
                return Err(protocol::MysqlError::new(
                    1629,
                    "HY000",
                    format!("Comment for field '{}' is too long (max = {COLUMN_COMMENT_CHARS_MAX})", def.name),
                ))
            }
            ColumnOption::Comment(comment) => def.attributes.comment = comment.clone(),
            // Read before the type, by `column_charset_clause`.
            ColumnOption::Collation(_) | ColumnOption::CharacterSet(_) => {}
            other => return Err(not_supported(format!("column option {other}"))),
        }
    }
    def.default = match default {
        Some(value) if !value.is_null() => Some(
            coerce_write(&def, value, rules, &mut Vec::new())
                .map_err(|_| protocol::MysqlError::new(1067, "42000", format!("Invalid default value for '{}'", def.name)))?,
        ),
        Some(_) if !def.nullable => {
            return Err(protocol::MysqlError::new(1067, "42000", format!("Invalid default value for '{}'", def.name)))
        }
        other => other,
    };
    Ok(BuiltColumn { def, generation, primary_key, unique })
}

/// `SRID n` on a geometry column: its values must have SRID n, which
/// must be one binlogd knows (3548); on another column it is 1221.
fn column_srid(def: &mut engine::ColumnDef, expr: &Expr) -> SqlResult<()> {
    let Some(geometry) = def.attributes.geometry.as_mut() else {
        return Err(protocol::MysqlError::new(1221, "HY000", "Incorrect usage of SRID and non-geometry column"));
    };
    let srid = match expr {
        Expr::Value(value) => value.value.to_string().parse::<u32>().ok(),
        _ => None,
    };
    let Some(srid) = srid else { return Err(syntax_error(&expr.to_string())) };
    crate::eval::spatial::spatial_reference_system(srid)?;
    geometry.srid = Some(srid);
    Ok(())
}

/// DEFAULT / ON UPDATE CURRENT_TIMESTAMP[(fsp)] is for TIMESTAMP and
/// DATETIME columns of the same precision; anything else is `code` (1067
/// for DEFAULT, 1294 for ON UPDATE) with MySQL's message.
fn check_current_timestamp(def: &engine::ColumnDef, expr: &Expr, code: u16, message: &str) -> SqlResult<()> {
    let fsp = match def.column_type {
        binlog_format::ColumnType::Timestamp2 { fsp } | binlog_format::ColumnType::DateTime2 { fsp } => Some(fsp),
        _ => None,
    };
    if fsp.is_none() || fsp != current_timestamp_precision(expr) {
        let sqlstate = if code == 1067 { "42000" } else { "HY000" };
        let suffix = if code == 1067 { "" } else { " column" };
        return Err(protocol::MysqlError::new(code, sqlstate, format!("{message} '{}'{suffix}", def.name)));
    }
    Ok(())
}

fn create_index(create: &CreateIndex, context: &Context<'_>) -> SqlResult<Outcome> {
    if create.concurrently || create.predicate.is_some() || !create.include.is_empty() {
        return Err(not_supported("this form of CREATE INDEX"));
    }
    let (database, table) = table_name(&create.table_name, context)?;
    let name = create.name.as_ref().map(ToString::to_string).ok_or_else(|| syntax_error("ON"))?;
    check_identifier(&name)?;
    let spec = IndexSpec { name, columns: index_columns(&create.columns)?, unique: create.unique };
    if let Ok(def) = context.db().catalog().table(&database, &table) {
        check_no_json_keys(&def.columns, std::iter::once(&spec.columns))?;
    }
    context
        .execute_ddl(&context.statement_context(), |engine| engine.create_index(&database, &table, &spec, lock_wait_timeout(context)))
        .map_err(database_error)?;
    Ok(Outcome::ok())
}

/// 3152 ER_JSON_USED_AS_KEY: MySQL indexes a JSON column only through a
/// generated column on a path.
pub fn check_no_json_keys<'a>(columns: &[engine::ColumnDef], keys: impl Iterator<Item = &'a Vec<String>>) -> SqlResult<()> {
    for key in keys {
        for name in key {
            if let Some(column) =
                columns.iter().find(|c| c.name.eq_ignore_ascii_case(name) && c.column_type == binlog_format::ColumnType::Json)
            {
                return Err(protocol::MysqlError::new(
                    3152,
                    "42000",
                    format!("JSON column '{}' supports indexing only via generated columns on a specified JSON path.", column.name),
                ));
            }
        }
    }
    Ok(())
}

/// A JSON column takes no literal DEFAULT (1101, as MySQL); an expression
/// DEFAULT (`DEFAULT (JSON_OBJECT())`) would have to be kept as an
/// expression and evaluated per row, which the catalog does not hold.
fn json_default(column: &str) -> protocol::MysqlError {
    protocol::MysqlError::new(1101, "42000", format!("BLOB, TEXT, GEOMETRY or JSON column '{column}' can't have a default value"))
}
