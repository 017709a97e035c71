//! CREATE TABLE and INSERT … VALUES: how small tables (tests, examples) get into the
//! catalog. They load data on the host; queries over them run like any other.

use crate::bind_expr::{sql_type, Context, Scope};
use crate::coerce::cast;
use crate::BoundStatement;
use gpusql_common::{Catalog, DataType, Error, Result, ScalarValue};
use gpusql_plan::eval::eval;
use sqlparser::ast;

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

pub fn bind_create_table(ct: &ast::CreateTable) -> Result<BoundStatement> {
    if ct.query.is_some() {
        return Err(Error::not_supported("CREATE TABLE … AS"));
    }
    let mut columns = vec![];
    for c in &ct.columns {
        let nullable = !c.options.iter().any(|o| matches!(o.option, ast::ColumnOption::NotNull));
        columns.push(ColumnDef { name: c.name.value.clone(), ty: sql_type(&c.data_type)?, nullable });
    }
    if columns.is_empty() {
        return Err(Error::plan("CREATE TABLE needs at least one column"));
    }
    Ok(BoundStatement::CreateTable { name: ct.name.to_string(), columns })
}

pub fn bind_insert(ins: &ast::Insert, catalog: &dyn Catalog) -> Result<BoundStatement> {
    let name = ins.table.to_string();
    let info = catalog.table(&name).ok_or_else(|| Error::plan(format!("unknown table '{name}'")))?;
    let Some(source) = &ins.source else {
        return Err(Error::not_supported("INSERT without VALUES"));
    };
    let ast::SetExpr::Values(values) = &*source.body else {
        return Err(Error::not_supported("INSERT … SELECT"));
    };
    // Target columns: listed ones, or all in order.
    let targets: Vec<usize> = if ins.columns.is_empty() {
        (0..info.schema.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                let n = c.to_string();
                info.schema.index_of(&n).ok_or_else(|| Error::plan(format!("unknown column '{n}' in table {name}")))
            })
            .collect::<Result<_>>()?
    };
    let empty = Scope::default();
    let ctx = Context::Plain(&empty);
    let mut rows = vec![];
    for row in &values.rows {
        if row.len() != targets.len() {
            return Err(Error::plan(format!("INSERT has {} values for {} columns", row.len(), targets.len())));
        }
        let mut out = vec![ScalarValue::Null; info.schema.len()];
        for (v, &t) in row.iter().zip(&targets) {
            let field = &info.schema.fields[t];
            let bound = ctx.bind(v)?;
            let value = if let (ScalarValue::Utf8(s), DataType::Date) = (literal_value(&bound), field.ty) {
                crate::literal::date_literal(&s).map(|e| literal_value(&e))?
            } else {
                if bound.ty() != field.ty && !(bound.ty().is_numeric() && field.ty.is_numeric()) && !matches!(literal_value(&bound), ScalarValue::Null) {
                    return Err(Error::plan(format!("cannot insert {} into column {} of type {}", bound.ty(), field.name, field.ty)));
                }
                eval(&cast(bound, field.ty), &[])?
            };
            if value.is_null() && !field.nullable {
                return Err(Error::plan(format!("NULL value in NOT NULL column {}", field.name)));
            }
            out[t] = value;
        }
        rows.push(out);
    }
    Ok(BoundStatement::Insert(InsertRows { table: info.name, rows }))
}

fn literal_value(e: &gpusql_plan::Expr) -> ScalarValue {
    match e {
        gpusql_plan::Expr::Literal { value, .. } => value.clone(),
        _ => ScalarValue::Null,
    }
}
