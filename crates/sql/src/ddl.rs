//! Statements that change the catalog: CREATE TABLE [AS], CREATE VIEW, DROP, INSERT
//! (VALUES or a query), and DESCRIBE of a table or view.

use crate::bind_cast::sql_type;
use crate::bind_expr::{AtSpan, Context, Scope};
use crate::bind_select::bind_query;
use crate::coerce::cast;
use crate::BoundStatement;
use gpusql_common::{Catalog, DataType, Error, OnConflict, Result, ScalarValue, Schema, UniqueKey, ViewInfo};
use gpusql_plan::eval::eval;
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// What DROP removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Table,
    View,
}

#[derive(Debug, Clone)]
pub struct ColumnDef {
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
}

#[derive(Debug, Clone)]
pub struct InsertRows {
    pub table: String,
    /// Values in table column order, already of the column types.
    pub rows: Vec<Vec<ScalarValue>>,
    pub on_conflict: OnConflict,
}

pub fn bind_create_table(ct: &ast::CreateTable, catalog: &dyn Catalog) -> Result<BoundStatement> {
    crate::audit::create_table(ct)?;
    let name = ct.name.to_string();
    // A clash is reported before the query is bound (IF NOT EXISTS / OR REPLACE decide
    // when the statement runs).
    if !ct.if_not_exists && !ct.or_replace {
        if catalog.table(&name).is_some() {
            return Err(Error::bind(format!("table '{name}' already exists")));
        }
        if catalog.view(&name).is_some() {
            return Err(Error::bind(format!("a view named '{name}' already exists")));
        }
    }
    if let Some(q) = &ct.query {
        if !ct.columns.is_empty() || !ct.constraints.is_empty() {
            return Err(Error::not_supported("column definitions with CREATE TABLE … AS").at_span(ct.name.span()));
        }
        let plan = bind_query(q, catalog)?;
        let schema = plan.schema();
        for (i, f) in schema.fields.iter().enumerate() {
            if schema.fields[..i].iter().any(|g| g.name.eq_ignore_ascii_case(&f.name)) {
                return Err(Error::bind(format!(
                    "CREATE TABLE {name} AS: column name '{}' appears twice (name the columns with AS)",
                    f.name
                )));
            }
        }
        return Ok(BoundStatement::CreateTableAs {
            name,
            plan,
            if_not_exists: ct.if_not_exists,
            replace: ct.or_replace,
        });
    }
    let mut columns = vec![];
    let mut column_keys = vec![];
    for (i, c) in ct.columns.iter().enumerate() {
        let ast::ColumnDef { name: column_name, data_type, options } = c;
        let mut nullable = true;
        for o in options {
            let ast::ColumnOptionDef { name: constraint_name, option } = o;
            if let Some(n) = constraint_name {
                return Err(Error::not_supported("named constraints (CONSTRAINT name …)").at_span(n.span));
            }
            match option {
                ast::ColumnOption::Null => {}
                ast::ColumnOption::NotNull => nullable = false,
                ast::ColumnOption::PrimaryKey(k) => column_keys.push((i, key_parts(k, option.span())?)),
                ast::ColumnOption::Unique(k) => column_keys.push((i, key_parts(k, option.span())?)),
                other => {
                    let what = other.to_string();
                    let what = what.split_whitespace().next().unwrap_or("this column option");
                    return Err(Error::not_supported(format!("column option {what}")).at_span(other.span()));
                }
            }
        }
        columns.push(ColumnDef {
            name: column_name.value.clone(),
            ty: sql_type(data_type).map_err(|e| e.at_span(column_name.span))?,
            nullable,
        });
    }
    if columns.is_empty() {
        return Err(Error::bind("CREATE TABLE needs at least one column"));
    }
    let mut unique_keys = vec![];
    for (i, (primary, key_columns)) in column_keys {
        if let Some(c) = key_columns.first() {
            return Err(Error::not_supported("a column list after a column's PRIMARY KEY / UNIQUE").at_span(c.span()));
        }
        unique_keys.push(UniqueKey { columns: vec![i], primary });
    }
    for t in &ct.constraints {
        let (primary, key_columns) = match t {
            ast::TableConstraint::PrimaryKey(k) => key_parts(k, t.span())?,
            ast::TableConstraint::Unique(k) => key_parts(k, t.span())?,
            other => {
                let what = other.to_string();
                let what = what.split('(').next().unwrap_or("this constraint").trim().to_string();
                return Err(Error::not_supported(format!("table constraint {what}")).at_span(other.span()));
            }
        };
        let mut key = vec![];
        for c in key_columns {
            let name = match &c.column.expr {
                ast::Expr::Identifier(id) if c.operator_class.is_none() => &id.value,
                _ => return Err(Error::not_supported(format!("key column {c}")).at_span(t.span())),
            };
            let i = columns.iter().position(|f| f.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
                Error::bind(format!("key column '{name}' is not a column of table {}", ct.name)).at_span(t.span())
            })?;
            key.push(i);
        }
        unique_keys.push(UniqueKey { columns: key, primary });
    }
    if unique_keys.iter().filter(|k| k.primary).count() > 1 {
        return Err(Error::bind(format!("table {} has more than one PRIMARY KEY", ct.name)));
    }
    // A primary key's columns are NOT NULL.
    for k in unique_keys.iter().filter(|k| k.primary) {
        for &c in &k.columns {
            columns[c].nullable = false;
        }
    }
    Ok(BoundStatement::CreateTable {
        name,
        columns,
        unique_keys,
        if_not_exists: ct.if_not_exists,
        replace: ct.or_replace,
    })
}

/// A PRIMARY KEY or UNIQUE constraint of sqlparser's.
trait KeyConstraint {
    const PRIMARY: bool;
    fn columns(&self) -> &[ast::IndexColumn];
    /// What the engine does not bind: (written, what), refused where written.
    fn unbound(&self) -> [(bool, &'static str); 4];
}

impl KeyConstraint for ast::PrimaryKeyConstraint {
    const PRIMARY: bool = true;
    fn columns(&self) -> &[ast::IndexColumn] {
        &self.columns
    }
    fn unbound(&self) -> [(bool, &'static str); 4] {
        [
            (self.name.is_some(), "named constraints (CONSTRAINT name …)"),
            (
                self.index_name.is_some() || self.index_type.is_some() || !self.index_options.is_empty(),
                "index names, kinds and options",
            ),
            (!self.include.is_empty(), "INCLUDE"),
            (self.characteristics.is_some(), "DEFERRABLE / INITIALLY / ENFORCED"),
        ]
    }
}

impl KeyConstraint for ast::UniqueConstraint {
    const PRIMARY: bool = false;
    fn columns(&self) -> &[ast::IndexColumn] {
        &self.columns
    }
    fn unbound(&self) -> [(bool, &'static str); 4] {
        [
            (self.name.is_some(), "named constraints (CONSTRAINT name …)"),
            (
                self.index_name.is_some() || self.index_type.is_some() || !self.index_options.is_empty(),
                "index names, kinds and options",
            ),
            (!self.include.is_empty(), "INCLUDE"),
            (
                self.characteristics.is_some() || self.nulls_distinct != ast::NullsDistinctOption::None,
                "DEFERRABLE / NULLS [NOT] DISTINCT",
            ),
        ]
    }
}

/// Whether `k` is a primary key, and its column list; its other parts refused at `at`.
fn key_parts<K: KeyConstraint>(k: &K, at: sqlparser::tokenizer::Span) -> Result<(bool, &[ast::IndexColumn])> {
    match k.unbound().iter().find(|(set, _)| *set) {
        Some((_, what)) => Err(Error::not_supported(*what).at_span(at)),
        None => Ok((K::PRIMARY, k.columns())),
    }
}

/// CREATE [OR REPLACE] VIEW v [(a, b)] AS <query>: the query is bound now (so errors show
/// at once) and kept as SQL text, bound again wherever the view is used.
pub fn bind_create_view(v: &ast::CreateView, catalog: &dyn Catalog) -> Result<BoundStatement> {
    crate::audit::create_view(v)?;
    if v.materialized {
        return Err(Error::not_supported("materialized views (use CREATE TABLE … AS)"));
    }
    let name = v.name.to_string();
    if catalog.table(&name).is_some() {
        return Err(Error::bind(format!("a table named '{name}' already exists")));
    }
    if !v.or_replace && catalog.view(&name).is_some() {
        return Err(Error::bind(format!("view '{name}' already exists")));
    }
    let sql = if v.columns.is_empty() {
        v.query.to_string()
    } else {
        let cols: Vec<String> = v.columns.iter().map(|c| c.name.to_string()).collect();
        format!("SELECT * FROM ({}) AS {name}({})", v.query, cols.join(", "))
    };
    let stmts = crate::parse(&sql)?;
    let [ast::Statement::Query(q)] = stmts.as_slice() else { return Err(Error::plan("a view holds one query")) };
    bind_query(q, catalog)?;
    Ok(BoundStatement::CreateView { view: ViewInfo { name, sql }, replace: v.or_replace })
}

pub fn bind_drop(object_type: &ast::ObjectType, if_exists: bool, names: &[ast::ObjectName]) -> Result<BoundStatement> {
    let kind = match object_type {
        ast::ObjectType::Table => ObjectKind::Table,
        ast::ObjectType::View => ObjectKind::View,
        other => return Err(Error::not_supported(format!("DROP {other}"))),
    };
    Ok(BoundStatement::Drop { kind, names: names.iter().map(|n| n.to_string()).collect(), if_exists })
}

/// DESCRIBE of a table (its columns the engine cannot read listed as such) or a view.
pub fn bind_describe_table(name: &ast::ObjectName, catalog: &dyn Catalog) -> Result<BoundStatement> {
    let n = name.to_string();
    if let Some(info) = catalog.table(&n) {
        return Ok(describe(&info.schema, &info.unsupported));
    }
    if let Some(view) = catalog.view(&n) {
        let stmts = crate::parse(&view.sql)?;
        let [ast::Statement::Query(q)] = stmts.as_slice() else { return Err(Error::plan("a view holds one query")) };
        return Ok(describe(&bind_query(q, catalog)?.schema(), &[]));
    }
    Err(Error::bind(format!("unknown table '{n}'")).at_span(name.span()))
}

pub fn describe(schema: &Schema, unsupported: &[(String, String)]) -> BoundStatement {
    let mut columns: Vec<(String, String, bool)> =
        schema.fields.iter().map(|f| (f.name.clone(), f.ty.to_string(), f.nullable)).collect();
    columns.extend(unsupported.iter().map(|(n, t)| (n.clone(), format!("{t} (not supported)"), true)));
    BoundStatement::Describe { columns }
}

pub fn bind_insert(ins: &ast::Insert, catalog: &dyn Catalog) -> Result<BoundStatement> {
    crate::audit::insert(ins)?;
    let name = ins.table.to_string();
    let info = catalog.table(&name).ok_or_else(|| Error::bind(format!("unknown table '{name}'")))?;
    let on_conflict = on_conflict(ins, &info)?;
    let Some(source) = &ins.source else {
        return Err(Error::not_supported("INSERT without VALUES or a query"));
    };
    // Target columns: listed ones, or all in order.
    let targets: Vec<usize> = if ins.columns.is_empty() {
        (0..info.schema.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                let n = c.to_string();
                info.schema.index_of(&n).ok_or_else(|| Error::bind(format!("unknown column '{n}' in table {name}")))
            })
            .collect::<Result<_>>()?
    };
    let ast::SetExpr::Values(values) = &*source.body else {
        return bind_insert_query(source, &info.name, &info.schema, &targets, on_conflict, catalog);
    };
    let empty = Scope::default();
    let ctx = Context::Plain(&empty);
    let mut rows = vec![];
    for row in &values.rows {
        if row.len() != targets.len() {
            return Err(Error::bind(format!("INSERT has {} values for {} columns", row.len(), targets.len())));
        }
        let mut out = vec![ScalarValue::Null; info.schema.len()];
        for (v, &t) in row.iter().zip(&targets) {
            let field = &info.schema.fields[t];
            let bound = ctx.bind(v)?;
            // Text into a column of another type reads as CAST reads it (DuckDB's implicit cast).
            let value = if let (ScalarValue::Utf8(s), false) = (literal_value(&bound), field.ty == DataType::Utf8) {
                literal_value(&crate::bind_cast::cast_string_literal(bound, field.ty, &s)?)
            } else {
                if !crate::coerce::assignable(&bound.ty(), &field.ty)
                    && !matches!(literal_value(&bound), ScalarValue::Null)
                {
                    return Err(Error::bind(format!(
                        "cannot insert {} into column {} of type {}",
                        bound.ty(),
                        field.name,
                        field.ty
                    )));
                }
                eval(&cast(bound, field.ty), &[])?
            };
            if value.is_null() && !field.nullable {
                return Err(Error::bind(format!("NULL value in NOT NULL column {}", field.name)));
            }
            out[t] = value;
        }
        rows.push(out);
    }
    Ok(BoundStatement::Insert(InsertRows { table: info.name, rows, on_conflict }))
}

/// What the INSERT does with rows whose key the table has: `INSERT OR REPLACE` / `OR
/// IGNORE`, `ON CONFLICT [(columns)] DO NOTHING` (DuckDB's forms; the table needs a
/// PRIMARY KEY or UNIQUE constraint, and a target must name one's columns).
fn on_conflict(ins: &ast::Insert, info: &gpusql_common::TableInfo) -> Result<OnConflict> {
    let at = ins.insert_token.0.span;
    if ins.replace_into {
        return Err(Error::not_supported("REPLACE INTO (write INSERT OR REPLACE INTO)").at_span(at));
    }
    let chosen = match (&ins.or, &ins.on) {
        (None, None) => return Ok(OnConflict::Error),
        (Some(ast::SqliteOnConflict::Replace), None) => OnConflict::Replace,
        (Some(ast::SqliteOnConflict::Ignore), None) => OnConflict::Ignore,
        (Some(other), None) => return Err(Error::not_supported(format!("INSERT OR {other}")).at_span(at)),
        (None, Some(ast::OnInsert::OnConflict(c))) => {
            let ast::OnConflict { conflict_target, action } = c;
            if !matches!(action, ast::OnConflictAction::DoNothing) {
                return Err(Error::not_supported("ON CONFLICT DO UPDATE").at_span(at));
            }
            match conflict_target {
                None => {}
                Some(ast::ConflictTarget::Columns(cols)) => {
                    let mut wanted = vec![];
                    for c in cols {
                        wanted.push(info.schema.index_of(&c.value).ok_or_else(|| {
                            Error::bind(format!("unknown column '{}' in table {}", c.value, info.name)).at_span(c.span)
                        })?);
                    }
                    wanted.sort_unstable();
                    let names_a_key = info.unique_keys.iter().any(|k| {
                        let mut cols = k.columns.clone();
                        cols.sort_unstable();
                        cols == wanted
                    });
                    if !names_a_key {
                        return Err(Error::bind(
                            "the ON CONFLICT columns are not those of a UNIQUE / PRIMARY KEY constraint",
                        )
                        .at_span(at));
                    }
                }
                Some(ast::ConflictTarget::OnConstraint(n)) => {
                    return Err(Error::not_supported("ON CONFLICT ON CONSTRAINT").at_span(n.span()))
                }
            }
            OnConflict::Ignore
        }
        (_, Some(ast::OnInsert::DuplicateKeyUpdate(_))) => {
            return Err(Error::not_supported("ON DUPLICATE KEY UPDATE").at_span(at))
        }
        (Some(_), Some(_)) => return Err(Error::not_supported("INSERT OR … with ON CONFLICT").at_span(at)),
        (None, Some(_)) => return Err(Error::not_supported("this ON clause of INSERT").at_span(at)),
    };
    if info.unique_keys.is_empty() {
        return Err(Error::bind(format!(
            "table {} has no UNIQUE / PRIMARY KEY constraint for INSERT OR REPLACE / IGNORE or ON CONFLICT",
            info.name
        ))
        .at_span(at));
    }
    Ok(chosen)
}

/// INSERT INTO t [(cols)] <query>: the query's columns cast to the target columns' types,
/// NULL for the columns not listed.
fn bind_insert_query(
    source: &ast::Query,
    table: &str,
    schema: &Schema,
    targets: &[usize],
    on_conflict: OnConflict,
    catalog: &dyn Catalog,
) -> Result<BoundStatement> {
    let plan = bind_query(source, catalog)?;
    let out = plan.schema();
    if out.len() != targets.len() {
        return Err(Error::bind(format!("INSERT has {} columns for {} target columns", out.len(), targets.len())));
    }
    let mut exprs = vec![];
    for (i, field) in schema.fields.iter().enumerate() {
        match targets.iter().position(|&t| t == i) {
            Some(j) => {
                let src = &out.fields[j];
                if !crate::coerce::assignable(&src.ty, &field.ty) {
                    return Err(Error::bind(format!(
                        "cannot insert {} into column {} of type {}",
                        src.ty, field.name, field.ty
                    )));
                }
                // (A NULL into a NOT NULL column is an error when the rows are stored.)
                exprs.push(cast(
                    Expr::Column { index: j, name: src.name.clone(), ty: src.ty, nullable: src.nullable },
                    field.ty,
                ));
            }
            None if !field.nullable => {
                return Err(Error::bind(format!(
                    "NULL value in NOT NULL column {} (not given by the INSERT)",
                    field.name
                )))
            }
            None => exprs.push(Expr::Literal { value: ScalarValue::Null, ty: field.ty }),
        }
    }
    let names = schema.fields.iter().map(|f| f.name.clone()).collect();
    Ok(BoundStatement::InsertQuery {
        table: table.to_string(),
        plan: LogicalPlan::Project { input: Box::new(plan), exprs, names },
        on_conflict,
    })
}

fn literal_value(e: &gpusql_plan::Expr) -> ScalarValue {
    match e {
        gpusql_plan::Expr::Literal { value, .. } => value.clone(),
        _ => ScalarValue::Null,
    }
}
