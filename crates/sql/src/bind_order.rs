//! ORDER BY (also ORDER BY ALL and by position or alias), LIMIT / OFFSET, and the final
//! projection that drops the hidden sort columns.

use crate::bind_expr::{AtSpan, Context};
use crate::bind_select::bind_query;
use gpusql_common::{Catalog, Error, Result};
use gpusql_plan::{Expr, LogicalPlan, SortKey};
use sqlparser::ast::{self, Spanned};

/// `ORDER BY all [ASC|DESC] [NULLS …]`: one unquoted identifier `all`.
pub(crate) fn is_order_by_all(v: &[ast::OrderByExpr]) -> bool {
    matches!(v, [o] if matches!(&o.expr, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("all")))
}

/// The query ordered by every output column, left to right.
pub(crate) fn bind_order_by_all(
    q: &ast::Query,
    options: &ast::OrderByOptions,
    catalog: &dyn Catalog,
) -> Result<LogicalPlan> {
    let mut inner = q.clone();
    inner.order_by = None;
    inner.limit_clause = None;
    let plan = bind_query(&inner, catalog)?;
    let all: Vec<ast::OrderByExpr> = (1..=plan.schema().len())
        .map(|i| ast::OrderByExpr {
            expr: ast::Expr::value(ast::Value::Number(i.to_string(), false)),
            options: options.clone(),
            with_fill: None,
        })
        .collect();
    let (skip, fetch) = limit(&q.limit_clause)?;
    crate::bind_set::order_limit(plan, &all, skip, fetch)
}

pub(crate) fn const_usize(e: &ast::Expr, what: &str) -> Result<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => {
                n.parse().map_err(|_| Error::bind(format!("{what} must be a non-negative integer, got {n}")))
            }
            other => Err(Error::bind(format!("{what} must be a non-negative integer, got {other}"))),
        },
        other => Err(Error::not_supported(format!("{what} expression {other}"))),
    }
}

pub(crate) fn limit(l: &Option<ast::LimitClause>) -> Result<(usize, Option<usize>)> {
    match l {
        None => Ok((0, None)),
        Some(ast::LimitClause::LimitOffset { limit, offset, limit_by }) => {
            if !limit_by.is_empty() {
                return Err(Error::not_supported("LIMIT BY"));
            }
            let fetch = match limit {
                None => None,
                Some(ast::Expr::Value(v)) if matches!(v.value, ast::Value::Null) => None,
                Some(e) => Some(const_usize(e, "LIMIT")?),
            };
            let skip = offset.as_ref().map(|o| const_usize(&o.value, "OFFSET")).transpose()?.unwrap_or(0);
            Ok((skip, fetch))
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            Ok((const_usize(offset, "OFFSET")?, Some(const_usize(limit, "LIMIT")?)))
        }
    }
}

/// DuckDB's refusal of an ORDER BY key that is a literal other than an integer (a string,
/// a decimal number, NULL, TRUE): it orders nothing, and is likely a mistake.
pub(crate) fn refuse_non_integer_literal(e: &ast::Expr) -> Result<()> {
    let ast::Expr::Value(v) = e else { return Ok(()) };
    let integer = matches!(&v.value, ast::Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()));
    if integer || matches!(v.value, ast::Value::Placeholder(_)) {
        return Ok(());
    }
    Err(Error::bind("ORDER BY non-integer literal has no effect.").at_span(e.span()))
}

/// ORDER BY: each key an output position, an output alias, or an expression, which is
/// added to `exprs` as a hidden column where the select list lacks it.
pub(crate) fn bind_order_by(
    ctx: &Context,
    order_by: &[ast::OrderByExpr],
    distinct: bool,
    exprs: &mut Vec<Expr>,
    names: &mut Vec<String>,
) -> Result<Vec<SortKey>> {
    let visible = exprs.len();
    let mut keys = vec![];
    for o in order_by {
        let asc = !matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        if matches!(o.options.sort, Some(ast::OrderBySort::Using(_))) {
            return Err(Error::not_supported("ORDER BY … USING"));
        }
        // DuckDB's default: NULLS LAST in both directions (PostgreSQL differs for DESC).
        let nulls_first = o.options.nulls_first.unwrap_or(false);
        refuse_non_integer_literal(&o.expr)?;
        let index = if let Some(pos) = positional(&o.expr) {
            if pos == 0 || pos > visible {
                return Err(
                    Error::bind(format!("ORDER BY position {pos} is not in the select list")).at_span(o.expr.span())
                );
            }
            pos - 1
        } else if let Some(i) = match &o.expr {
            ast::Expr::Identifier(id) => names[..visible].iter().position(|n| n.eq_ignore_ascii_case(&id.value)),
            _ => None,
        } {
            i
        } else {
            let k = ctx.bind(&o.expr)?;
            match exprs.iter().position(|e| *e == k) {
                Some(i) => i,
                None => {
                    if distinct {
                        return Err(Error::bind(
                            "for SELECT DISTINCT, ORDER BY expressions must appear in the select list",
                        ));
                    }
                    exprs.push(k);
                    names.push(format!("__order{}", exprs.len()));
                    exprs.len() - 1
                }
            }
        };
        let e = &exprs[index];
        keys.push(SortKey {
            expr: Expr::Column { index, name: names[index].clone(), ty: e.ty(), nullable: e.nullable() },
            asc,
            nulls_first,
        });
    }
    Ok(keys)
}

/// The output: `exprs` projected, sorted, limited, then cut to the first `visible`
/// columns where ORDER BY added hidden ones.
pub(crate) fn project_sort_limit(
    plan: LogicalPlan,
    exprs: Vec<Expr>,
    names: Vec<String>,
    visible: usize,
    sort_keys: Vec<SortKey>,
    skip: usize,
    fetch: Option<usize>,
) -> LogicalPlan {
    let width = exprs.len();
    let mut plan = LogicalPlan::Project { input: Box::new(plan), exprs, names: names.clone() };
    if !sort_keys.is_empty() {
        plan = LogicalPlan::Sort { input: Box::new(plan), keys: sort_keys };
    }
    if skip > 0 || fetch.is_some() {
        plan = LogicalPlan::Limit { input: Box::new(plan), skip, fetch };
    }
    if width > visible {
        let schema = plan.schema();
        let exprs = (0..visible)
            .map(|i| Expr::Column {
                index: i,
                name: names[i].clone(),
                ty: schema.fields[i].ty,
                nullable: schema.fields[i].nullable,
            })
            .collect();
        plan = LogicalPlan::Project { input: Box::new(plan), exprs, names: names[..visible].to_vec() };
    }
    plan
}

pub(crate) fn positional(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        // (DuckDB reads `(1)` as the position too.)
        ast::Expr::Nested(inner) => positional(inner),
        _ => None,
    }
}
