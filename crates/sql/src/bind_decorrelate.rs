//! Correlated subqueries whose conditions are not `inner = outer` equalities
//! (`(SELECT count(*) FROM t x WHERE x.b < t1.b)`, `EXISTS (… WHERE x.b < t1.b)`): the
//! subquery is computed once for each distinct combination of the outer values it reads,
//! DuckDB's decorrelation through the outer side's distinct values:
//!
//! ```sql
//! SELECT __d.n0, COALESCE(__d.c0, <zero>), …, agg(…)          -- or SELECT DISTINCT keys
//! FROM (SELECT DISTINCT o0 IS NULL AS n0, o0 AS c0, … FROM <outer FROM> WHERE <its filters>) __d,
//!      <inner FROM>
//! WHERE <inner conditions> AND <correlated conditions, with oK read as __d.cK>
//! GROUP BY <keys>
//! ```
//!
//! The result joins the outer rows on `(oK IS NULL, COALESCE(oK, <zero>))`, so an outer
//! NULL finds the group computed for NULL (a condition like `x.b < t1.b OR x.c = 1` can
//! hold there). Outer values that cannot be NULL are keys as they are. The outer filters
//! that hold no subquery narrow the distinct values: the subquery's value matters only for
//! rows that pass them.

use crate::bind_expr::{contains_subquery, Context, Scope};
use crate::bind_scalar::OuterQuery;
use crate::bind_select::bind_select;
use gpusql_common::{Catalog, DataType, Error, Result};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast;
use std::ops::ControlFlow;

/// The alias of the outer values' relation (not a name a user writes).
const OUTER_VALUES: &str = "__outer_values";

/// A subquery over the distinct outer values, and the outer expressions it joins on.
pub struct Decorrelated {
    /// Its key columns first (as many as `outer_keys`), then the value where one was asked.
    pub plan: LogicalPlan,
    pub outer_keys: Vec<Expr>,
}

/// `select` (whose FROM is `inner`'s) restricted by its `conditions`: the local ones and the
/// correlated ones that read `outer` columns: grouped by the outer values with `value` as its one value
/// column, or (without a value) the distinct outer values that have a matching row.
pub fn through_outer_values(
    select: &ast::Select,
    value: Option<&ast::Expr>,
    (local, correlated): (&[ast::Expr], &[ast::Expr]),
    inner: &Scope,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<Decorrelated> {
    // The outer values the conditions read, each once; the conditions read them as __outer_values.cK.
    let mut refs: Vec<ast::Expr> = vec![];
    let mut conditions = vec![];
    for t in correlated {
        let mut t = t.clone();
        let _ = ast::visit_expressions_mut(&mut t, |x| {
            if matches!(x, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_))
                && Context::Plain(inner).bind(x).is_err()
                && Context::Plain(outer).bind(x).is_ok()
            {
                let k = refs.iter().position(|r| r == x).unwrap_or_else(|| {
                    refs.push(x.clone());
                    refs.len() - 1
                });
                *x = ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::new(OUTER_VALUES),
                    ast::Ident::new(format!("c{k}")),
                ]);
            }
            ControlFlow::<()>::Continue(())
        });
        conditions.push(format!("({t})"));
    }
    let (mut columns, mut inner_keys, mut outer_keys) = (vec![], vec![], vec![]);
    for (k, r) in refs.iter().enumerate() {
        let bound = Context::Plain(outer).bind(r)?;
        if bound.nullable() {
            let zero = zero_of(bound.ty());
            columns.push(format!("({r}) IS NULL AS n{k}"));
            inner_keys.push(format!("{OUTER_VALUES}.n{k}"));
            inner_keys.push(format!("COALESCE({OUTER_VALUES}.c{k}, {zero})"));
            outer_keys.push(format!("({r}) IS NULL"));
            outer_keys.push(format!("COALESCE({r}, {zero})"));
        } else {
            inner_keys.push(format!("{OUTER_VALUES}.c{k}"));
            outer_keys.push(r.to_string());
        }
        columns.push(format!("{r} AS c{k}"));
    }
    let list = |v: &[String]| v.join(", ");
    let outer_from = list(&outer_query.from.iter().map(|t| t.to_string()).collect::<Vec<_>>());
    let outer_filters: Vec<String> = outer_query
        .where_terms
        .iter()
        .filter(|t| !contains_subquery(t) && Context::Plain(outer).bind(t).is_ok())
        .map(|t| format!("({t})"))
        .collect();
    let outer_where =
        if outer_filters.is_empty() { String::new() } else { format!(" WHERE {}", outer_filters.join(" AND ")) };
    let inner_from = list(&select.from.iter().map(|t| t.to_string()).collect::<Vec<_>>());
    let filters: Vec<String> = local.iter().map(|t| format!("({t})")).chain(conditions).collect();
    let head = match value {
        Some(v) => format!("SELECT {}, {v}", list(&inner_keys)),
        None => format!("SELECT DISTINCT {}", list(&inner_keys)),
    };
    let group_by = if value.is_some() { format!(" GROUP BY {}", list(&inner_keys)) } else { String::new() };
    let sql = format!(
        "{head} FROM (SELECT DISTINCT {} FROM {outer_from}{outer_where}) AS {OUTER_VALUES}, {inner_from} WHERE {}{group_by}",
        list(&columns),
        filters.join(" AND ")
    );
    let plan = bind_select(&parse_select(&sql)?, &[], 0, None, catalog)?;
    let outer_keys = parse_select(&format!("SELECT {}", list(&outer_keys)))?
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::UnnamedExpr(e) => Context::Plain(outer).bind(e),
            other => Err(Error::plan(format!("decorrelation: outer key {other}"))),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Decorrelated { plan, outer_keys })
}

/// A value of `ty` standing for NULL in a key beside its IS NULL flag.
fn zero_of(ty: DataType) -> &'static str {
    match ty {
        DataType::Int32 | DataType::Int64 | DataType::Decimal { .. } | DataType::Float64 => "0",
        DataType::Utf8 => "''",
        DataType::Boolean => "false",
        DataType::Date => "DATE '1970-01-01'",
        DataType::Timestamp => "TIMESTAMP '1970-01-01 00:00:00'",
        DataType::Interval => "INTERVAL 0 DAY",
    }
}

fn parse_select(sql: &str) -> Result<ast::Select> {
    match crate::parse(sql)?.as_slice() {
        [ast::Statement::Query(q)] => match &*q.body {
            ast::SetExpr::Select(s) => Ok((**s).clone()),
            _ => Err(Error::plan(format!("decorrelation built a query that is not a SELECT: {sql}"))),
        },
        _ => Err(Error::plan(format!("decorrelation built more than one statement: {sql}"))),
    }
}
