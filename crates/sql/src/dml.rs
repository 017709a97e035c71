//! UPDATE and DELETE of tables held in memory (made by CREATE TABLE, INSERT, or a generator).
//! Both are bound as a query over the table that yields every row with its new values and,
//! last, whether the row is changed (`WHERE` is TRUE for it; NULL is not):
//! `SELECT *, <SET values>, <WHERE> FROM t`, with `CASE WHEN changed THEN value ELSE column
//! END` for each assigned column on top. The engine runs it (on either backend), keeps the
//! rows (DELETE: the unchanged ones) as the table's new contents, checked against its
//! constraints, and reports how many rows changed. Values are computed from the rows as
//! they were (`SET a = b, b = a` swaps), as in DuckDB.

use crate::bind_expr::AtSpan;
use crate::bind_select::bind_query;
use crate::coerce::cast;
use crate::BoundStatement;
use gpusql_common::{Catalog, DataType, Error, Result, ScalarValue};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// Which change a `BoundStatement::ChangeRows` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChange {
    Update,
    Delete,
}

pub fn bind_delete(d: &ast::Delete, catalog: &dyn Catalog) -> Result<BoundStatement> {
    let at = d.delete_token.0.span;
    let refuse = |what: &str| Err(Error::not_supported(format!("DELETE … {what}")).at_span(at));
    if d.using.is_some() {
        return refuse("USING");
    }
    if d.returning.is_some() || d.output.is_some() {
        return refuse("RETURNING");
    }
    if !d.order_by.is_empty() || d.limit.is_some() {
        return refuse("ORDER BY / LIMIT");
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    let [table] = from.as_slice() else { return refuse("of several tables") };
    if !d.tables.is_empty() {
        return refuse("of several tables");
    }
    change_rows(table, &[], d.selection.as_ref(), RowChange::Delete, catalog)
}

pub fn bind_update(u: &ast::Update, catalog: &dyn Catalog) -> Result<BoundStatement> {
    let at = u.update_token.0.span;
    let refuse = |what: &str| Err(Error::not_supported(format!("UPDATE … {what}")).at_span(at));
    if u.from.is_some() {
        return refuse("FROM");
    }
    if u.returning.is_some() || u.output.is_some() {
        return refuse("RETURNING");
    }
    if u.or.is_some() || !u.order_by.is_empty() || u.limit.is_some() {
        return refuse("OR / ORDER BY / LIMIT");
    }
    change_rows(&u.table, &u.assignments, u.selection.as_ref(), RowChange::Update, catalog)
}

fn change_rows(
    table: &ast::TableWithJoins,
    assignments: &[ast::Assignment],
    selection: Option<&ast::Expr>,
    change: RowChange,
    catalog: &dyn Catalog,
) -> Result<BoundStatement> {
    let verb = if change == RowChange::Update { "UPDATE" } else { "DELETE" };
    let ast::TableFactor::Table { name, args: None, .. } = &table.relation else {
        return Err(Error::not_supported(format!("{verb} of something other than a table")).at_span(table.span()));
    };
    if !table.joins.is_empty() {
        return Err(Error::not_supported(format!("{verb} of a join")).at_span(table.span()));
    }
    let name = name.to_string();
    let Some(info) = catalog.table(&name) else {
        return Err(match catalog.view(&name) {
            Some(_) => Error::bind(format!("cannot {verb} view '{name}': change the tables it reads")),
            None => Error::bind(format!("unknown table '{name}'")),
        }
        .at_span(table.span()));
    };
    // The assigned columns, each once.
    let mut targets: Vec<(usize, &ast::Expr)> = vec![];
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(column) = &a.target else {
            return Err(Error::not_supported("UPDATE of a tuple of columns").at_span(a.value.span()));
        };
        let column_name = column.0.last().map(|p| p.to_string()).unwrap_or_default();
        let column_name = column_name.trim_matches('"');
        let Some(c) = info.schema.index_of(column_name) else {
            return Err(
                Error::bind(format!("unknown column '{column_name}' in table {}", info.name)).at_span(column.span())
            );
        };
        if targets.iter().any(|(t, _)| *t == c) {
            return Err(
                Error::bind(format!("Multiple assignments to same column \"{column_name}\"")).at_span(column.span())
            );
        }
        targets.push((c, &a.value));
    }
    // SELECT *, <values>, <WHERE> FROM t
    let mut extra: Vec<ast::Expr> = targets.iter().map(|(_, v)| (*v).clone()).collect();
    extra.push(selection.cloned().unwrap_or(ast::Expr::Value(ast::Value::Boolean(true).into())));
    let query = rows_query(table, extra)?;
    let plan = bind_query(&query, catalog)?;
    let out = plan.schema();
    let width = info.schema.len();
    let column = |i: usize| {
        let f = &out.fields[i];
        Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
    };
    let flag = column(width + targets.len());
    let null_where = selection.is_some_and(is_null_literal);
    if flag.ty() != DataType::Boolean && !null_where {
        return Err(Error::bind(format!("WHERE expects BOOLEAN, got {}", flag.ty())));
    }
    let lit = |b: bool| Expr::literal(ScalarValue::Boolean(b), DataType::Boolean);
    // TRUE only: a NULL condition changes nothing.
    let changed = Expr::Case {
        branches: vec![(cast(flag, DataType::Boolean), lit(true))],
        else_expr: Some(Box::new(lit(false))),
        ty: DataType::Boolean,
    };
    let mut exprs = vec![];
    for (i, field) in info.schema.fields.iter().enumerate() {
        let Some(k) = targets.iter().position(|(c, _)| *c == i) else {
            exprs.push(column(i));
            continue;
        };
        let value = assigned_value(column(width + k), targets[k].1, field)?;
        exprs.push(Expr::Case {
            branches: vec![(changed.clone(), value)],
            else_expr: Some(Box::new(column(i))),
            ty: field.ty,
        });
    }
    exprs.push(changed);
    let mut names: Vec<String> = info.schema.fields.iter().map(|f| f.name.clone()).collect();
    names.push("changed".into());
    Ok(BoundStatement::ChangeRows {
        table: info.name,
        plan: LogicalPlan::Project { input: Box::new(plan), exprs, names },
        change,
    })
}

/// The value `v` (column `value` of the query, written `written`) cast to the column's type,
/// as INSERT casts: a string literal into a DATE or TIMESTAMP column is parsed.
fn assigned_value(value: Expr, written: &ast::Expr, field: &gpusql_common::Field) -> Result<Expr> {
    if is_null_literal(written) {
        return Ok(Expr::literal(ScalarValue::Null, field.ty));
    }
    if let ast::Expr::Value(v) = written {
        if let (ast::Value::SingleQuotedString(s), DataType::Date | DataType::Timestamp) = (&v.value, field.ty) {
            return crate::literal::datetime_literal(s, field.ty).map_err(|e| e.at_span(written.span()));
        }
    }
    let ty = value.ty();
    if !crate::coerce::assignable(&ty, &field.ty) {
        return Err(Error::bind(format!("cannot assign {ty} to column {} of type {}", field.name, field.ty))
            .at_span(written.span()));
    }
    Ok(cast(value, field.ty))
}

fn is_null_literal(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Value(v) if v.value == ast::Value::Null)
}

/// `SELECT *, extra… FROM table`.
fn rows_query(table: &ast::TableWithJoins, extra: Vec<ast::Expr>) -> Result<ast::Query> {
    let parsed = crate::parse("SELECT * FROM t")?;
    let Some(ast::Statement::Query(mut query)) = parsed.into_iter().next() else {
        return Err(Error::plan("the template of UPDATE / DELETE did not parse"));
    };
    let ast::SetExpr::Select(select) = query.body.as_mut() else {
        return Err(Error::plan("the template of UPDATE / DELETE is not a SELECT"));
    };
    select.from = vec![table.clone()];
    select.projection.extend(extra.into_iter().map(ast::SelectItem::UnnamedExpr));
    Ok(*query)
}
