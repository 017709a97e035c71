//! Subqueries in WHERE, decorrelated into semi and anti joins:
//! - `x [NOT] IN (SELECT y …)` (uncorrelated) joins on x = y; correlated, it is bound as
//!   `EXISTS (… AND y = x)`, NOT IN as `NOT EXISTS (… AND (y = x OR y IS NULL OR x IS NULL))`
//!   (`correlated_in`);
//! - `[NOT] EXISTS (SELECT … WHERE inner = outer AND …)` joins on the correlated
//!   equalities; the subquery's own conditions filter its build side, and other
//!   conditions over both (`inner.x <> outer.y`, TPC-H Q21) are the join's residual: a
//!   key match counts only where it holds. As for correlated scalar subqueries, a build
//!   side larger than the filtered outer table it is correlated with is first semi-joined
//!   with that table's keys (a magic set: TPC-H Q4 builds on ~1/30 of lineitem).
//!
//! `x NOT IN (SELECT y …)` is the anti join only where neither side can be NULL. Otherwise
//! SQL's three-valued logic makes it TRUE only when the subquery is empty, or when x is not
//! NULL and no y is NULL (and x matches none); the binder adds that as a guard conjunct
//! (see `not_in_null_guard`) next to the anti join, which on its own keeps NULL keys.

use crate::bind_expr::{is_unknown_column, AtSpan, Context, Scope};
use crate::bind_from::bind_from;
use crate::bind_scalar::{magic_set, OuterQuery};
use crate::bind_select::bind_query;
use crate::coerce;
use gpusql_common::{Catalog, DataType, Error, Result};
use gpusql_plan::{BinaryOp, Expr, JoinKind, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// A subquery condition as a join against the outer rows.
pub struct SubqueryJoin {
    pub build: LogicalPlan,
    pub probe_keys: Vec<Expr>,
    pub build_keys: Vec<Expr>,
    pub kind: JoinKind,
    /// Over the probe (outer) row followed by the build (inner) row.
    pub residual: Option<Expr>,
}

fn column(plan: &LogicalPlan, i: usize) -> Expr {
    let f = &plan.schema().fields[i];
    Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
}

/// Whether `e` is a subquery condition this module turns into a join.
pub fn is_subquery_condition(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner) => is_subquery_condition(inner),
        ast::Expr::InSubquery { .. } | ast::Expr::Exists { .. } => true,
        _ => false,
    }
}

pub fn bind_subquery_condition(
    e: &ast::Expr,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<SubqueryJoin> {
    match e {
        ast::Expr::Nested(inner) => bind_subquery_condition(inner, outer, outer_query, catalog),
        ast::Expr::InSubquery { expr, subquery, negated } => {
            match bind_in(expr, subquery, *negated, outer, catalog) {
                // (Where the EXISTS form is refused too, the refusal names the IN as written.)
                Err(e) if is_correlated_in(&e) => {
                    match correlated_in(expr, subquery, *negated, outer, outer_query, catalog) {
                        Ok(Some(join)) => Ok(join),
                        Err(other) if !matches!(other.kind(), Error::NotSupported(_)) => Err(other),
                        _ => Err(e),
                    }
                }
                other => other,
            }
        }
        ast::Expr::Exists { subquery, negated } => bind_exists(subquery, *negated, outer, outer_query, catalog),
        other => Err(Error::plan(format!("not a subquery condition: {other}"))),
    }
}

fn bind_in(
    expr: &ast::Expr,
    subquery: &ast::Query,
    negated: bool,
    outer: &Scope,
    catalog: &dyn Catalog,
) -> Result<SubqueryJoin> {
    let probe = Context::Plain(outer).bind(expr)?;
    let build = bind_query(subquery, catalog).map_err(|e| {
        if is_unknown_column(&e) {
            Error::not_supported(format!("correlated subqueries in IN (…) ({})", e.kind())).at_span(subquery.span())
        } else {
            e
        }
    })?;
    if build.schema().len() != 1 {
        return Err(Error::bind("the subquery of IN must return one column").at_span(subquery.span()));
    }
    let (p, b, _) = coerce::unify_in_subquery(probe, column(&build, 0))?;
    Ok(SubqueryJoin {
        build,
        probe_keys: vec![p],
        build_keys: vec![b],
        kind: if negated { JoinKind::Anti } else { JoinKind::Semi },
        residual: None,
    })
}

fn is_correlated_in(e: &Error) -> bool {
    matches!(e.kind(), Error::NotSupported(m) if m.contains("correlated subqueries in IN"))
}

/// `x [NOT] IN (SELECT y FROM … WHERE c)` correlated with the outer query, as a condition
/// that filters (a WHERE conjunct, where a NULL and a FALSE both drop the row):
/// `EXISTS (SELECT 1 FROM … WHERE (c) AND (y) = (x))`, which binds the equality as one more
/// correlated key. NOT IN keeps a row only where no y of its subquery's rows equals x, is
/// NULL, or meets a NULL x (SQL's three-valued IN: a NULL on either side makes it unknown
/// once the subquery has rows): `NOT EXISTS (… WHERE (c) AND ((y) = (x) OR (y) IS NULL OR
/// (x) IS NULL))`. None (the refusal stands) where the subquery is not a plain SELECT of
/// one value (grouped, aggregated, limited, DISTINCT ON, with a WITH), or where a name in
/// x would mean an inner column once inside it.
fn correlated_in(
    expr: &ast::Expr,
    subquery: &ast::Query,
    negated: bool,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<Option<SubqueryJoin>> {
    let ast::SetExpr::Select(select) = &*subquery.body else { return Ok(None) };
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty());
    // (DISTINCT ON keeps some of the values: not the EXISTS's question.)
    let distinct_on = matches!(select.distinct, Some(ast::Distinct::On(_)));
    if grouped || distinct_on || select.having.is_some() || subquery.limit_clause.is_some() || subquery.with.is_some() {
        return Ok(None);
    }
    let y = match select.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(y)] | [ast::SelectItem::ExprWithAlias { expr: y, .. }] => y,
        _ => return Ok(None),
    };
    if crate::bind_expr::contains_aggregate(y) || crate::bind_expr::contains_subquery(expr) {
        return Ok(None);
    }
    let (_, inner, _) = bind_from(select, catalog)?;
    let mut captured = false;
    let _ = ast::visit_expressions(expr, |x| {
        if matches!(x, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_))
            && Context::Plain(&inner).bind(x).is_ok()
        {
            captured = true;
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    if captured {
        return Ok(None);
    }
    // Two decimals compare at `unify_in_subquery`'s type, as uncorrelated IN does.
    let x_type = Context::Plain(outer).bind(expr).map(|x| x.ty());
    if let Ok(DataType::Decimal { .. }) = x_type {
        let Ok(y_type) = Context::Plain(&inner).bind(y).map(|y| y.ty()) else { return Ok(None) };
        let x_type = x_type?;
        if let (DataType::Decimal { .. }, Some(DataType::Decimal { precision, scale })) =
            (y_type, coerce::result_type(&x_type, &y_type))
        {
            let cast = |e: &ast::Expr| format!("CAST(({e}) AS DECIMAL({precision}, {scale}))");
            let (y, x) = (crate::functions::parse_expr(&cast(y), y)?, crate::functions::parse_expr(&cast(expr), expr)?);
            return exists_with(select, subquery, &y, &x, negated, outer, outer_query, catalog).map(Some);
        }
    }
    exists_with(select, subquery, y, expr, negated, outer, outer_query, catalog).map(Some)
}

/// `[NOT] EXISTS (SELECT 1 FROM … WHERE (c) AND <y matches x>)` of `x [NOT] IN (SELECT y
/// FROM … WHERE c)` (`correlated_in`).
#[allow(clippy::too_many_arguments)]
fn exists_with(
    select: &ast::Select,
    subquery: &ast::Query,
    y: &ast::Expr,
    expr: &ast::Expr,
    negated: bool,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<SubqueryJoin> {
    let nested = |e: &ast::Expr| ast::Expr::Nested(Box::new(e.clone()));
    let mut equal =
        ast::Expr::BinaryOp { left: Box::new(nested(y)), op: ast::BinaryOperator::Eq, right: Box::new(nested(expr)) };
    if negated {
        let or = |l: ast::Expr, r: ast::Expr| ast::Expr::BinaryOp {
            left: Box::new(l),
            op: ast::BinaryOperator::Or,
            right: Box::new(r),
        };
        let null = |e: &ast::Expr| ast::Expr::IsNull(Box::new(nested(e)));
        equal = nested(&or(or(equal, null(y)), null(expr)));
    }
    let mut exists = select.clone();
    exists.selection = Some(match &select.selection {
        Some(w) => {
            ast::Expr::BinaryOp { left: Box::new(nested(w)), op: ast::BinaryOperator::And, right: Box::new(equal) }
        }
        None => equal,
    });
    exists.projection = vec![ast::SelectItem::UnnamedExpr(ast::Expr::value(ast::Value::Number("1".into(), false)))];
    let query = ast::Query { body: Box::new(ast::SetExpr::Select(Box::new(exists))), ..subquery.clone() };
    bind_exists(&query, negated, outer, outer_query, catalog)
}

/// Whether x and y of `x IN (SELECT y …)` can be NULL.
pub fn in_key_nullability(
    expr: &ast::Expr,
    subquery: &ast::Query,
    outer: &Scope,
    catalog: &dyn Catalog,
) -> Result<(bool, bool)> {
    let join = bind_in(expr, subquery, false, outer, catalog)?;
    Ok((join.probe_keys[0].nullable(), join.build_keys[0].nullable()))
}

/// For a WHERE term `x NOT IN (SELECT y …)` over values that can be NULL, the condition
/// that must hold besides the anti join:
/// `(SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) = count(y) THEN 1 ELSE 2 END
///   FROM (…) AS __not_in(y)) <= CASE WHEN x IS NULL THEN 0 ELSE 1 END`
/// (an empty subquery keeps every row; one without NULLs the rows whose x is not NULL;
/// one with a NULL no row). None where no guard is needed.
pub fn not_in_null_guard(e: &ast::Expr, outer: &Scope, catalog: &dyn Catalog) -> Result<Option<ast::Expr>> {
    let (expr, subquery) = match e {
        ast::Expr::Nested(inner) => return not_in_null_guard(inner, outer, catalog),
        ast::Expr::InSubquery { expr, subquery, negated: true } => (expr, subquery),
        _ => return Ok(None),
    };
    let join = match bind_in(expr, subquery, true, outer, catalog) {
        // (A correlated NOT IN is a NOT EXISTS that weighs the NULLs itself.)
        Err(e) if is_correlated_in(&e) => return Ok(None),
        join => join?,
    };
    if !join.probe_keys[0].nullable() && !join.build_keys[0].nullable() {
        return Ok(None);
    }
    let sql = format!(
        "(SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) = count(__v) THEN 1 ELSE 2 END FROM ({subquery}) AS __not_in(__v)) <= CASE WHEN ({expr}) IS NULL THEN 0 ELSE 1 END"
    );
    Ok(Some(crate::functions::parse_expr(&sql, e)?))
}

fn bind_exists(
    subquery: &ast::Query,
    negated: bool,
    outer: &Scope,
    outer_query: &OuterQuery,
    catalog: &dyn Catalog,
) -> Result<SubqueryJoin> {
    let at = subquery.span();
    let ast::SetExpr::Select(select) = &*subquery.body else {
        return Err(Error::not_supported("this EXISTS subquery").at_span(at));
    };
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty());
    if grouped || select.having.is_some() || subquery.limit_clause.is_some() || subquery.with.is_some() {
        return Err(Error::not_supported("EXISTS over a grouped or limited subquery").at_span(at));
    }
    let (plan, inner, on) = bind_from(select, catalog)?;
    let mut terms = vec![];
    for e in on.iter().chain(select.selection.iter()) {
        crate::bind_where::split_and(e, &mut terms);
    }
    let mut filters = vec![];
    let (mut probe_keys, mut build_keys, mut residual, mut key_asts) = (vec![], vec![], vec![], vec![]);
    // Conditions over both sides bind against the outer columns followed by the inner ones;
    // a bare name both sides have is the inner one's (SQL scoping), the outer one answers to
    // its qualified name only.
    let shadowed = |f: &crate::bind_expr::ScopeField| inner.fields.iter().any(|i| i.name.eq_ignore_ascii_case(&f.name));
    let outer_fields =
        outer.fields.iter().map(|f| crate::bind_expr::ScopeField { hidden: f.hidden || shadowed(f), ..f.clone() });
    let both = Scope {
        fields: outer_fields.chain(inner.fields.iter().cloned()).collect(),
        unsupported: outer.unsupported.iter().chain(&inner.unsupported).cloned().collect(),
    };
    let mut nested = vec![];
    let (mut local_asts, mut correlated_asts) = (vec![], vec![]);
    for t in &terms {
        // The subquery's own IN / EXISTS conditions: semi / anti joins on its rows.
        if is_subquery_condition(t) {
            let own = OuterQuery { from: &select.from, where_terms: &[] };
            let j = bind_subquery_condition(t, &inner, &own, catalog)?;
            if j.kind == JoinKind::Anti
                && matches!(strip_nested(t), ast::Expr::InSubquery { .. })
                && (j.probe_keys[0].nullable() || j.build_keys[0].nullable())
            {
                return Err(Error::not_supported("NOT IN over values that can be NULL inside EXISTS").at_span(t.span()));
            }
            nested.push(j);
            continue;
        }
        // Inner names win over outer ones (SQL scoping).
        if let Ok(f) = Context::Plain(&inner).bind(t) {
            filters.push(f);
            local_asts.push(t.clone());
            continue;
        }
        correlated_asts.push(t.clone());
        let correlated = match t {
            ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => {
                let pair = |i: &ast::Expr, o: &ast::Expr| -> Option<(Expr, Expr, (ast::Expr, ast::Expr))> {
                    Some((
                        Context::Plain(&inner).bind(i).ok()?,
                        Context::Plain(outer).bind(o).ok()?,
                        (i.clone(), o.clone()),
                    ))
                };
                pair(left, right).or_else(|| pair(right, left))
            }
            _ => None,
        };
        let Some((b, p, asts)) = correlated else {
            match Context::Plain(&both).bind(t) {
                Ok(r) if r.ty() == DataType::Boolean => residual.push(r),
                Ok(_) => return Err(Error::bind(format!("EXISTS condition {t} must be BOOLEAN")).at_span(t.span())),
                Err(e) => {
                    return Err(Error::not_supported(format!("correlated condition {t} in EXISTS ({})", e.kind()))
                        .at_span(t.span()))
                }
            }
            continue;
        };
        let (p, b, _) = coerce::unify(p, b, "compare (=)")?;
        key_asts.push(asts);
        probe_keys.push(p);
        build_keys.push(b);
    }
    if probe_keys.is_empty() && !residual.is_empty() {
        if !nested.is_empty() {
            return Err(Error::not_supported(
                "EXISTS correlated without an inner = outer equality, with IN / EXISTS conditions of its own",
            )
            .at_span(at));
        }
        // A semi (anti) join with the distinct outer values that have a matching row.
        let d = crate::bind_decorrelate::through_outer_values(
            select,
            None,
            (&local_asts, &correlated_asts),
            &inner,
            outer,
            outer_query,
            catalog,
        )?;
        let build_keys = (0..d.outer_keys.len()).map(|i| column(&d.plan, i)).collect();
        let kind = if negated { JoinKind::Anti } else { JoinKind::Semi };
        return Ok(SubqueryJoin { build: d.plan, probe_keys: d.outer_keys, build_keys, kind, residual: None });
    }
    let and = |a, b| Expr::Binary { op: BinaryOp::And, left: Box::new(a), right: Box::new(b), ty: DataType::Boolean };
    let mut build = match filters.into_iter().reduce(and) {
        Some(pred) => LogicalPlan::Filter { input: Box::new(plan), predicate: pred },
        None => plan,
    };
    // Uncorrelated: whether the subquery has a row at all; its first row (if any) joins
    // every outer row on a constant key.
    let uncorrelated = probe_keys.is_empty();
    for j in nested {
        build = LogicalPlan::Join {
            probe: Box::new(build),
            build: Box::new(j.build),
            probe_keys: j.probe_keys,
            build_keys: j.build_keys,
            kind: j.kind,
            residual: j.residual,
        };
    }
    if uncorrelated {
        let one = Expr::literal(gpusql_common::ScalarValue::Int32(1), DataType::Int32);
        build = LogicalPlan::Limit { input: Box::new(build), skip: 0, fetch: Some(1) };
        probe_keys.push(one.clone());
        build_keys.push(one);
    } else if let Some(ast::Expr::InSubquery { expr, subquery, .. }) =
        key_asts.iter().find_map(|(i, o)| magic_set(i, o, outer_query, &select.from, catalog))
    {
        let j = bind_in(&expr, &subquery, false, &inner, catalog)?;
        build = LogicalPlan::Join {
            probe: Box::new(build),
            build: Box::new(j.build),
            probe_keys: j.probe_keys,
            build_keys: j.build_keys,
            kind: JoinKind::Semi,
            residual: None,
        };
    }
    let kind = if negated { JoinKind::Anti } else { JoinKind::Semi };
    Ok(SubqueryJoin { build, probe_keys, build_keys, kind, residual: residual.into_iter().reduce(and) })
}

fn strip_nested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}
