//! Scalar subqueries, `(SELECT …)` used as a value. Before the outer query's expressions
//! are bound, each one is cut out of the AST and replaced by a placeholder name; the
//! subquery becomes a relation the outer query joins, and the name one of its columns.
//! - Uncorrelated (TPC-H Q11, Q15, Q22): a relation of exactly one row, joined to every
//!   outer row (the join planner joins it on a constant key). Aggregates without GROUP BY
//!   are one row; any other query is made one (`at_most_one_row`: NULL over no rows,
//!   DuckDB's error over several).
//! - Correlated by `inner = outer` equalities (Q2, Q17, Q20): the subquery is grouped by
//!   its inner correlation columns (one row per outer key value) and joined on the
//!   equalities. An outer row without a group sees the value over no rows (NULL, but 0
//!   for COUNT): where that is NULL and the subquery is an operand of a comparison that
//!   is a WHERE conjunct, an inner join drops the same rows; elsewhere (and for COUNT)
//!   the binder left-joins it and reads `CASE WHEN key IS NULL THEN <value over no rows>
//!   ELSE value END`. Not after an aggregation (its select list, HAVING).
//!   Groups whose key no outer row can have are wasted work (TPC-H Q17 would aggregate
//!   all of lineitem for the 0.1% of parts it keeps), so when an outer key is a column of
//!   an outer FROM table that the outer WHERE filters, the subquery's input is first
//!   semi-joined with that table's filtered keys (a "magic set").
//! - Correlated by any other condition (`x.b < t1.b`, an OR): computed once per distinct
//!   combination of the outer values it reads (bind_decorrelate.rs), then joined likewise.

use crate::bind_expr::{contains_subquery, is_unknown_column, AtSpan, Context, Scope, ScopeField};
use crate::bind_from::bind_from;
use crate::bind_select::{bind_query, bind_select};
use gpusql_common::{Catalog, DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// A scalar subquery as a relation. Output: the inner correlation keys, then the value.
pub struct ScalarSubquery {
    /// The placeholder name the outer expression refers to the value by.
    pub name: String,
    pub plan: LogicalPlan,
    /// Bound against the outer scope, one per key column (empty: uncorrelated).
    pub outer_keys: Vec<Expr>,
    /// Correlated only: the value for outer rows without inner rows where it is not NULL
    /// (COUNT is 0 there). Such a subquery needs a left join; the others an inner join.
    pub over_no_rows: Option<Expr>,
}

/// Cuts the scalar subqueries of `e` (not those nested inside other subqueries) out of it,
/// leaving identifiers `__scalar<n>`; returns them with their names.
pub fn extract(e: &mut ast::Expr, counter: &mut usize) -> Vec<(String, ast::Query)> {
    let mut found = vec![];
    let _ = crate::outside_subqueries::rewrite(e, |e| {
        let ast::Expr::Subquery(q) = e else { return Ok(None) };
        let name = format!("__scalar{}", *counter);
        *counter += 1;
        found.push((name.clone(), (**q).clone()));
        Ok(Some(ast::Expr::Identifier(ast::Ident::with_span(q.span(), name))))
    });
    found
}

/// Whether `e` is `x <op> (subquery)` or `(subquery) <op> x` for a comparison operator:
/// the one shape where a correlated scalar subquery may be joined.
pub fn is_comparison_with_subquery(e: &ast::Expr) -> bool {
    use ast::BinaryOperator as B;
    let direct = |x: &ast::Expr| matches!(strip_nested(x), ast::Expr::Subquery(_));
    match strip_nested(e) {
        ast::Expr::BinaryOp { left, op: B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq, right } => {
            direct(left) || direct(right)
        }
        _ => false,
    }
}

fn strip_nested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}

/// The outer query around a scalar subquery: its FROM items and WHERE conjuncts.
pub struct OuterQuery<'a> {
    pub from: &'a [ast::TableWithJoins],
    pub where_terms: &'a [ast::Expr],
}

pub fn bind_scalar_subquery(
    name: String,
    q: &ast::Query,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
    correlation_allowed: bool,
) -> Result<ScalarSubquery> {
    let at = q.span();
    let correlated = match bind_query(q, catalog) {
        Ok(plan) => {
            if plan.schema().len() != 1 {
                return Err(Error::bind(format!(
                    "a scalar subquery must return one column, this one returns {}",
                    plan.schema().len()
                ))
                .at_span(at));
            }
            let plan = if plan.yields_exactly_one_row() { plan } else { at_most_one_row(plan, at)? };
            return Ok(ScalarSubquery { name, plan, outer_keys: vec![], over_no_rows: None });
        }
        Err(e) if is_unknown_column(&e) => e.into_parts().0,
        Err(e) => return Err(e),
    };
    if !correlation_allowed {
        return Err(Error::not_supported(format!(
            "correlated scalar subqueries after an aggregation (its select list, HAVING, ORDER BY) ({correlated})"
        ))
        .at_span(at));
    }
    bind_correlated(name, q, outer, outer_query, catalog)
}

/// An uncorrelated subquery that may return any number of rows, as the one row of its
/// value: its first two rows counted, the value their MIN (the one row's value; NULL over
/// none), and DuckDB's error where there are two.
fn at_most_one_row(plan: LogicalPlan, at: sqlparser::tokenizer::Span) -> Result<LogicalPlan> {
    let field = plan.schema().fields[0].clone();
    let value = Expr::Column { index: 0, name: field.name.clone(), ty: field.ty, nullable: field.nullable };
    let min_ty = AggExpr::result_type(AggFunc::Min, Some(&field.ty)).ok_or_else(|| {
        Error::not_supported(format!("a scalar subquery of {} that may return several rows", field.ty)).at_span(at)
    })?;
    let first_two = LogicalPlan::Limit { input: Box::new(plan), skip: 0, fetch: Some(2) };
    let aggs = vec![
        AggExpr { func: AggFunc::Count, arg: None, ty: DataType::Int64, arg2: None, distinct: false, order: vec![] },
        AggExpr { func: AggFunc::Min, arg: Some(value), ty: min_ty, arg2: None, distinct: false, order: vec![] },
    ];
    let counted = LogicalPlan::Aggregate { input: Box::new(first_two), group_by: vec![], group_names: vec![], aggs };
    let s = counted.schema();
    let col = |i: usize| Expr::column_of(&s, i);
    let several = Expr::Binary {
        op: BinaryOp::Gt,
        left: Box::new(col(0)),
        right: Box::new(Expr::literal(ScalarValue::Int64(1), DataType::Int64)),
        ty: DataType::Boolean,
    };
    let value = Expr::Case {
        branches: vec![(several, Expr::ScalarSubqueryRows { ty: min_ty })],
        else_expr: Some(Box::new(col(1))),
        ty: min_ty,
    };
    Ok(LogicalPlan::Project { input: Box::new(counted), exprs: vec![value], names: vec![field.name] })
}

/// `(SELECT agg(…) FROM … WHERE inner = outer AND …)` as `SELECT inner, agg(…) FROM … WHERE
/// … GROUP BY inner`, joined on inner = outer.
fn bind_correlated(
    name: String,
    q: &ast::Query,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<ScalarSubquery> {
    let at = q.span();
    let unsupported = |what: &str| Error::not_supported(format!("{what} in a correlated scalar subquery")).at_span(at);
    let ast::SetExpr::Select(select) = &*q.body else { return Err(unsupported("this query form")) };
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty());
    if grouped
        || select.having.is_some()
        || select.distinct.is_some()
        || q.order_by.is_some()
        || q.limit_clause.is_some()
    {
        return Err(unsupported("GROUP BY, HAVING, DISTINCT, ORDER BY or LIMIT"));
    }
    let item = match select.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] | [ast::SelectItem::ExprWithAlias { expr: e, .. }] => e.clone(),
        _ => return Err(Error::bind("a scalar subquery must return one column").at_span(at)),
    };
    let (_, inner, on) = bind_from(select, catalog)?;
    for t in &on {
        if Context::Plain(&inner).bind(t).is_err() {
            return Err(unsupported(&format!("the outer reference in JOIN … ON {t}")));
        }
    }
    let mut terms = vec![];
    if let Some(w) = &select.selection {
        crate::bind_where::split_and(w, &mut terms);
    }
    let (mut local, mut inner_keys, mut outer_keys, mut outer_asts) = (vec![], vec![], vec![], vec![]);
    let (mut correlated, mut other_conditions) = (vec![], false);
    for t in terms {
        // Inner names win over outer ones (SQL scoping).
        if Context::Plain(&inner).bind(&t).is_ok() || crate::bind_expr::contains_subquery(&t) {
            local.push(t);
            continue;
        }
        correlated.push(t.clone());
        let pair = match strip_nested(&t) {
            ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => {
                let pair = |i: &ast::Expr, o: &ast::Expr| -> Option<(ast::Expr, Expr, ast::Expr)> {
                    Context::Plain(&inner).bind(i).ok()?;
                    Some((i.clone(), Context::Plain(outer).bind(o).ok()?, o.clone()))
                };
                pair(left, right).or_else(|| pair(right, left))
            }
            _ => None,
        };
        let Some((i, o, o_ast)) = pair else {
            other_conditions = true;
            continue;
        };
        inner_keys.push(i);
        outer_keys.push(o);
        outer_asts.push(o_ast);
    }
    if !crate::bind_expr::contains_aggregate(&item) {
        return Err(unsupported("a value that is not an aggregate (it could be several rows)"));
    }
    if other_conditions {
        let d = crate::bind_decorrelate::through_outer_values(
            select,
            Some(&item),
            (&local, &correlated),
            &inner,
            outer,
            outer_query,
            catalog,
        )?;
        let over_no_rows = no_rows_literal(&d.plan, d.outer_keys.len()).map_err(&unsupported)?;
        return Ok(ScalarSubquery { name, plan: d.plan, outer_keys: d.outer_keys, over_no_rows });
    }
    if let Some(semi) =
        inner_keys.iter().zip(&outer_asts).find_map(|(i, o)| magic_set(i, o, outer_query, &select.from, catalog))
    {
        local.push(semi);
    }
    let mut grouped = (**select).clone();
    grouped.selection = local.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    });
    grouped.group_by = ast::GroupByExpr::Expressions(inner_keys.clone(), vec![]);
    grouped.projection =
        inner_keys.into_iter().map(ast::SelectItem::UnnamedExpr).chain([ast::SelectItem::UnnamedExpr(item)]).collect();
    let plan = bind_select(&grouped, &[], 0, None, catalog)?;
    let over_no_rows = no_rows_literal(&plan, outer_keys.len()).map_err(&unsupported)?;
    Ok(ScalarSubquery { name, plan, outer_keys, over_no_rows })
}

/// The value over no rows as a literal (None where it is NULL), or what is not supported.
fn no_rows_literal(plan: &LogicalPlan, nkeys: usize) -> std::result::Result<Option<Expr>, &'static str> {
    match value_over_no_rows(plan, nkeys) {
        Some(v) if v.is_null() => Ok(None),
        Some(v) => Ok(Some(Expr::Literal { ty: plan.schema().fields[nkeys].ty, value: v })),
        None => Err("this value (its value over no rows could not be worked out)"),
    }
}

/// The value column (after `nkeys` keys) of a grouped subquery for a group without rows:
/// its expression over the aggregate's output with COUNTs 0 and every other aggregate (and
/// key) NULL. None where the plan is not projections over the aggregate or that fails.
fn value_over_no_rows(plan: &LogicalPlan, nkeys: usize) -> Option<ScalarValue> {
    fn row(plan: &LogicalPlan) -> Option<Vec<ScalarValue>> {
        match plan {
            LogicalPlan::Aggregate { group_by, aggs, .. } => Some(
                group_by
                    .iter()
                    .map(|_| ScalarValue::Null)
                    .chain(aggs.iter().map(|a| {
                        if a.func == AggFunc::Count {
                            ScalarValue::Int64(0)
                        } else {
                            ScalarValue::Null
                        }
                    }))
                    .collect(),
            ),
            LogicalPlan::Project { input, exprs, .. } => {
                let r = row(input)?;
                // (A value computed from parameters would hold for this run only.)
                if exprs.iter().any(gpusql_plan::parameters::has_parameters) {
                    return None;
                }
                exprs.iter().map(|e| gpusql_plan::eval::eval(e, &r).ok()).collect()
            }
            _ => None,
        }
    }
    row(plan)?.into_iter().nth(nkeys)
}

/// `inner IN (SELECT outer FROM t WHERE <the outer WHERE's conditions on t alone>)`, where
/// `outer` is a column of the outer FROM table `t`, some outer condition filters `t`, and
/// `t` is smaller than the largest table of the subquery's FROM (`inner_from`); None
/// otherwise (a semi-join with all of t, or with a table as large as the subquery's, would
/// cost more than it removes).
pub fn magic_set(
    inner: &ast::Expr,
    outer: &ast::Expr,
    q: &OuterQuery,
    inner_from: &[ast::TableWithJoins],
    catalog: &dyn Catalog,
) -> Option<ast::Expr> {
    if !matches!(outer, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)) {
        return None;
    }
    for item in q.from.iter().filter(|i| i.joins.is_empty()) {
        let ast::TableFactor::Table { name, alias, args: None, .. } = &item.relation else { continue };
        let Some(info) = catalog.table(&name.to_string()) else { continue };
        let largest_inner = inner_from
            .iter()
            .flat_map(|i| std::iter::once(&i.relation).chain(i.joins.iter().map(|j| &j.relation)))
            .filter_map(|f| match f {
                ast::TableFactor::Table { name, .. } => catalog.table(&name.to_string()).map(|t| t.row_count),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let qualifier = alias.as_ref().map_or_else(|| info.name.clone(), |a| a.name.value.clone());
        let scope = Scope {
            fields: info
                .schema
                .fields
                .iter()
                .map(|f| ScopeField {
                    hidden: false,
                    qualifier: qualifier.clone(),
                    name: f.name.clone(),
                    ty: f.ty,
                    nullable: f.nullable,
                })
                .collect(),
            unsupported: vec![],
        };
        if Context::Plain(&scope).bind(outer).is_err() {
            continue;
        }
        if info.row_count >= largest_inner {
            return None;
        }
        // (An IN whose subquery is correlated is left out: binding the magic set would bind
        // that correlated IN again, the one being bound among them, without end.)
        let on_t = |t: &&ast::Expr| match strip_nested(t) {
            ast::Expr::InSubquery { expr, subquery, negated: false } => {
                Context::Plain(&scope).bind(expr).is_ok() && crate::bind_select::bind_query(subquery, catalog).is_ok()
            }
            other => !contains_subquery(other) && Context::Plain(&scope).bind(other).is_ok(),
        };
        let filters: Vec<String> = q.where_terms.iter().filter(on_t).map(|t| format!("({t})")).collect();
        if filters.is_empty() {
            return None;
        }
        let sql = format!("SELECT {outer} FROM {} WHERE {}", item.relation, filters.join(" AND "));
        let parsed = crate::parse(&sql).ok()?;
        let [ast::Statement::Query(sub)] = parsed.as_slice() else { return None };
        return Some(ast::Expr::InSubquery { expr: Box::new(inner.clone()), subquery: sub.clone(), negated: false });
    }
    None
}
