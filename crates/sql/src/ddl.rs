//! Statements that change the catalog: CREATE TABLE [AS], CREATE VIEW, DROP, INSERT
//! (VALUES or a query), and DESCRIBE of a table or view.

use crate::bind_expr::{sql_type, AtSpan, Context, Scope};
use crate::bind_select::bind_query;
use crate::coerce::cast;
use crate::BoundStatement;
use gpusql_common::{Catalog, DataType, Error, Result, ScalarValue, Schema, ViewInfo};
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
}

pub fn bind_create_table(ct: &ast::CreateTable, catalog: &dyn Catalog) -> Result<BoundStatement> {
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
        if !ct.columns.is_empty() {
            return Err(Error::not_supported("column definitions with CREATE TABLE … AS"));
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
    for c in &ct.columns {
        let nullable = !c.options.iter().any(|o| matches!(o.option, ast::ColumnOption::NotNull));
        columns.push(ColumnDef { name: c.name.value.clone(), ty: sql_type(&c.data_type)?, nullable });
    }
    if columns.is_empty() {
        return Err(Error::bind("CREATE TABLE needs at least one column"));
    }
    Ok(BoundStatement::CreateTable { name, columns, if_not_exists: ct.if_not_exists, replace: ct.or_replace })
}

/// CREATE [OR REPLACE] VIEW v [(a, b)] AS <query>: the query is bound now (so errors show
/// at once) and kept as SQL text, bound again wherever the view is used.
pub fn bind_create_view(v: &ast::CreateView, catalog: &dyn Catalog) -> Result<BoundStatement> {
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
    let name = ins.table.to_string();
    let info = catalog.table(&name).ok_or_else(|| Error::bind(format!("unknown table '{name}'")))?;
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
        return bind_insert_query(source, &info.name, &info.schema, &targets, catalog);
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
            let value = if let (ScalarValue::Utf8(s), DataType::Date | DataType::Timestamp) =
                (literal_value(&bound), field.ty)
            {
                crate::literal::datetime_literal(&s, field.ty).map(|e| literal_value(&e))?
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
    Ok(BoundStatement::Insert(InsertRows { table: info.name, rows }))
}

/// INSERT INTO t [(cols)] <query>: the query's columns cast to the target columns' types,
/// NULL for the columns not listed.
fn bind_insert_query(
    source: &ast::Query,
    table: &str,
    schema: &Schema,
    targets: &[usize],
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
    })
}

fn literal_value(e: &gpusql_plan::Expr) -> ScalarValue {
    match e {
        gpusql_plan::Expr::Literal { value, .. } => value.clone(),
        _ => ScalarValue::Null,
    }
}
