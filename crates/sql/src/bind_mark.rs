//! IN / EXISTS subqueries that are not WHERE conjuncts (under OR, NOT or CASE, in the
//! select list) as *mark joins*: every outer row stays and gains a BOOLEAN column saying
//! whether it has a match, which the condition reads in the subquery's place.
//!
//! The mark is two-valued; SQL's `x IN (SELECT y …)` is NULL where x is NULL and the
//! subquery is not empty, or where nothing matches and some y is NULL. Where x or y can be
//! NULL the condition reads
//! `CASE WHEN mark THEN TRUE WHEN g + CASE WHEN x IS NULL THEN 1 ELSE 0 END >= 2 THEN NULL
//! ELSE FALSE END`, with g the uncorrelated scalar subquery
//! `SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) = count(y) THEN 1 ELSE 2 END` over
//! the subquery (0: empty, 1: no NULL, 2: a NULL). EXISTS is the mark itself.

use crate::bind_expr::Scope;
use crate::bind_scalar::OuterQuery;
use crate::bind_subquery::{bind_subquery_condition, in_key_nullability, SubqueryJoin};
use gpusql_common::{Catalog, Result};
use gpusql_plan::JoinKind;
use sqlparser::ast;

/// The alias of the NULL guard's derived table: its scalar subquery belongs before any
/// aggregation, whatever expression it stands in.
const GUARD_ALIAS: &str = "__in_guard";

/// An IN / EXISTS subquery cut out of an expression; `name` now stands for its mark.
pub struct MarkSubquery {
    pub name: String,
    /// `x IN (SELECT …)` or `EXISTS (SELECT …)`, not negated.
    pub condition: ast::Expr,
}

/// Replaces the IN / EXISTS subqueries of `e` (not those inside other subqueries) by
/// their marks (`__mark<n>`), in the three-valued form above where NULLs are possible.
pub fn extract(
    e: &mut ast::Expr,
    counter: &mut usize,
    scope: &Scope,
    catalog: &dyn Catalog,
) -> Result<Vec<MarkSubquery>> {
    let mut found = vec![];
    crate::outside_subqueries::rewrite(e, |e| {
        let (condition, negated, guard) = match e {
            ast::Expr::Exists { subquery, negated } => {
                (ast::Expr::Exists { subquery: subquery.clone(), negated: false }, *negated, None)
            }
            ast::Expr::InSubquery { expr, subquery, negated } => {
                let (x_nullable, y_nullable) = in_key_nullability(expr, subquery, scope, catalog)?;
                let guard = (x_nullable || y_nullable).then(|| (expr.clone(), subquery.clone()));
                (
                    ast::Expr::InSubquery { expr: expr.clone(), subquery: subquery.clone(), negated: false },
                    *negated,
                    guard,
                )
            }
            _ => return Ok(None),
        };
        let name = format!("__mark{}", *counter);
        *counter += 1;
        let value = match guard {
            None => name.clone(),
            Some((x, q)) => format!(
                "CASE WHEN {name} THEN TRUE WHEN (SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) = count(__v) THEN 1 ELSE 2 END FROM ({q}) AS {GUARD_ALIAS}(__v)) + CASE WHEN ({x}) IS NULL THEN 1 ELSE 0 END >= 2 THEN NULL ELSE FALSE END"
            ),
        };
        let sql = if negated { format!("NOT ({value})") } else { format!("({value})") };
        found.push(MarkSubquery { name, condition });
        Ok(Some(crate::functions::parse_expr(&sql, e)?))
    })?;
    Ok(found)
}

/// The placeholders (`__mark…`, `__scalar…`) `e` reads outside aggregate calls. In a grouped
/// SELECT the marks and their NULL guards are grouping keys too (`bind_select.rs`): a mark
/// over GROUP BY keys only is one value per group, and a guard one value in all.
pub fn outside_aggregates(e: &ast::Expr, out: &mut Vec<String>) {
    use std::ops::ControlFlow;
    struct Finder<'a> {
        depth: usize,
        out: &'a mut Vec<String>,
    }
    fn aggregate(e: &ast::Expr) -> bool {
        matches!(e, ast::Expr::Function(f) if f.over.is_none() && crate::bind_aggregate_call::is_aggregate_name(&f.name.to_string()))
    }
    impl ast::Visitor for Finder<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                _ if aggregate(e) => self.depth += 1,
                ast::Expr::Identifier(id) if self.depth == 0 && id.value.starts_with("__") => {
                    self.out.push(id.value.clone())
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            if aggregate(e) {
                self.depth -= 1;
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::Visit::visit(e, &mut Finder { depth: 0, out });
}

/// A mark that is a grouping key must be one value per group: the outer values its join
/// reads (`width`: the outer row's columns) are GROUP BY keys (`keys`), or columns that
/// are. Otherwise DuckDB's error for a column that is not grouped.
pub fn check_grouped(j: &SubqueryJoin, width: usize, keys: &[gpusql_plan::Expr], outer: &Scope) -> Result<()> {
    let key_columns: Vec<usize> = keys
        .iter()
        .filter_map(|k| if let gpusql_plan::Expr::Column { index, .. } = k { Some(*index) } else { None })
        .collect();
    let mut read = vec![];
    for k in j.probe_keys.iter().filter(|k| !keys.contains(k)) {
        k.columns(&mut read);
    }
    if let Some(r) = &j.residual {
        r.columns(&mut read);
    }
    match read.into_iter().find(|c| *c < width && !key_columns.contains(c)) {
        None => Ok(()),
        Some(c) => Err(gpusql_common::Error::bind(format!(
            "column '{}' must appear in the GROUP BY clause or be used in an aggregate function",
            outer.fields[c].name
        ))),
    }
}

/// Whether a scalar subquery is the NULL guard of an IN's mark.
pub fn is_guard(q: &ast::Query) -> bool {
    let ast::SetExpr::Select(s) = &*q.body else { return false };
    matches!(s.from.as_slice(), [t] if matches!(&t.relation, ast::TableFactor::Derived { alias: Some(a), .. } if a.name.value == GUARD_ALIAS))
}

/// The mark join of `m` against the outer rows (`outer`: their columns).
pub fn bind(m: &MarkSubquery, outer: &Scope, outer_query: &OuterQuery, catalog: &dyn Catalog) -> Result<SubqueryJoin> {
    let mut j = bind_subquery_condition(&m.condition, outer, outer_query, catalog)?;
    j.kind = JoinKind::Mark;
    Ok(j)
}
