//! SELECT … FROM … WHERE … GROUP BY … HAVING … ORDER BY … LIMIT into a logical plan:
//! Scan -> Filter -> [Aggregate -> Filter] -> Project -> Sort -> Limit -> [Project].

use crate::bind_aggregate::aggregate_plan;
use crate::bind_distinct_on;
use crate::bind_expr::{contains_aggregate, AggContext, AtSpan, Context, Scope, ScopeField, POST_AGGREGATE};
use crate::bind_grouping_sets;
use crate::bind_mark;
use crate::bind_order::{bind_order_by, bind_order_by_all, is_order_by_all, limit, positional, project_sort_limit};
use crate::bind_scalar::{self, ScalarSubquery};
use crate::bind_subquery::is_subquery_condition;
use crate::bind_where::{bind_where, require_bool, where_conjuncts};
use crate::bind_window;
use gpusql_common::{Catalog, DataType, Error, Result};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};
use std::cell::RefCell;

use crate::bind_from::bind_from;
use crate::bind_select_list::select_items;

pub fn bind_query(q: &ast::Query, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    crate::audit::query(q)?;
    if q.with.is_some() {
        return bind_query(&crate::cte::inline_ctes(q)?, catalog);
    }
    if let Some(rewritten) = crate::bind_set::exists_over_set_operations(q) {
        return bind_query(&rewritten, catalog);
    }
    let order_by: Vec<ast::OrderByExpr> = match &q.order_by {
        None => vec![],
        Some(ob) => match &ob.kind {
            ast::OrderByKind::Expressions(v) if !is_order_by_all(v) => v.clone(),
            // ORDER BY ALL (a keyword, as in DuckDB, though the generic dialect parses an
            // identifier): every output column, left to right, with the options given.
            ast::OrderByKind::Expressions(v) => return bind_order_by_all(q, &v[0].options, catalog),
            ast::OrderByKind::All(options) => return bind_order_by_all(q, options, catalog),
        },
    };
    let (skip, fetch) = limit(&q.limit_clause)?;
    match &*q.body {
        ast::SetExpr::Select(select) => bind_select(select, &order_by, skip, fetch, catalog),
        ast::SetExpr::Query(inner) if order_by.is_empty() && q.limit_clause.is_none() => bind_query(inner, catalog),
        // Set operations and VALUES: their ORDER BY and LIMIT see the output columns only.
        body => crate::bind_set::order_limit(crate::bind_set::bind_set_expr(body, catalog)?, &order_by, skip, fetch),
    }
}

/// Output name of a select item (DuckDB: the expression text, or the column name).
pub(crate) fn item_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => id.value.clone(),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(|p| p.value.clone()).unwrap_or_default(),
        other => other.to_string(),
    }
}

pub(crate) fn bind_select(
    select: &ast::Select,
    order_by: &[ast::OrderByExpr],
    skip: usize,
    fetch: Option<usize>,
    catalog: &dyn Catalog,
) -> Result<LogicalPlan> {
    crate::audit::select(select)?;
    let distinct = select_distinct(select)?;
    let (plan, mut scope, on) = bind_from(select, catalog)?;
    let mut clauses = Clauses::cut_subqueries(select, order_by, &scope, catalog)?;
    // ROLLUP / CUBE / GROUPING SETS: their keys once each, and the sets.
    let sets = match &select.group_by {
        ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => bind_grouping_sets::grouping_sets(v)?,
        _ => None,
    };
    let set_keys = sets.as_ref().map(|(k, _)| k.as_slice());
    let (mut key_asts, distinct_rows) = grouping_keys(select, set_keys, distinct, &clauses, &scope)?;
    match key_asts.as_mut() {
        // Marks read outside aggregates group too (one value per group: checked where
        // their joins are bound), unless a key holds them already (GROUP BY ALL, DISTINCT,
        // GROUP BY x IN (…)): then the key is their value's group.
        Some(keys) => {
            clauses.outside_marks.retain(|m| !keys.iter().any(|k| names_placeholder(k, m)));
            keys.extend(clauses.outside_marks.iter().map(|m| ast::Expr::Identifier(ast::Ident::new(m))));
        }
        None => clauses.outside_marks.clear(),
    }
    let distinct_on = match &select.distinct {
        Some(ast::Distinct::On(on)) => Some(on),
        _ => None,
    };
    let (plan, post_aggregate) =
        bind_where(plan, &mut scope, &on, &mut clauses, key_asts.as_deref(), &select.from, catalog)?;

    // Window calls bind over the rows they see (the groups where the SELECT aggregates);
    // their placeholders then name the columns the Window node adds.
    let mut windows = vec![];
    if key_asts.is_none() && !clauses.windows.is_empty() {
        for (_, f) in &clauses.windows {
            windows.push(Context::Plain(&scope).bind_window(f, &select.named_window)?);
        }
        if scope.fields.len() != plan.schema().len() {
            return Err(Error::plan("the scope of a SELECT with window functions is not its rows"));
        }
        for ((name, _), w) in clauses.windows.iter().zip(&windows) {
            scope.fields.push(ScopeField {
                qualifier: String::new(),
                name: name.clone(),
                ty: w.ty,
                nullable: w.nullable(),
                hidden: false,
            });
        }
    }
    let n_set_keys = sets.as_ref().map_or(0, |(k, _)| k.len());
    let set_key_asts: Vec<ast::Expr> = key_asts.iter().flatten().take(n_set_keys).cloned().collect();
    let mut agg_ctx = key_asts.map(|keys| aggregation(&scope, &keys, &post_aggregate)).transpose()?;
    // The grouping sets as indices of the bound keys (repeated ones bind to one; keys
    // added for marks are in every set), and the grouping id ahead of the other values
    // that follow the aggregation (GROUPING reads it).
    let mut bound_sets = None;
    if let (Some(g), Some((_, sets))) = (agg_ctx.as_mut(), &sets) {
        let mut at = vec![];
        for e in &set_key_asts {
            let k = Context::Plain(&scope).bind(e)?;
            at.push(
                g.keys.iter().position(|x| *x == k).ok_or_else(|| Error::plan("a grouping set's key is not a key"))?,
            );
        }
        let marks: Vec<usize> = (0..g.keys.len()).filter(|i| !at.contains(i)).collect();
        let mut mapped = vec![];
        for s in sets {
            let mut m: Vec<usize> = s.iter().map(|i| at[*i]).chain(marks.iter().copied()).collect();
            m.sort_unstable();
            m.dedup();
            mapped.push(m);
        }
        bound_sets = Some(mapped);
        g.post.insert(0, (bind_grouping_sets::GROUPING_ID.to_string(), DataType::Int64, false));
    }
    if let Some(g) = agg_ctx.as_mut() {
        for (_, f) in &clauses.windows {
            windows.push(Context::Grouped(g).bind_window(f, &select.named_window)?);
        }
        for ((name, _), w) in clauses.windows.iter().zip(&windows) {
            g.post.push((name.clone(), w.ty, w.nullable()));
        }
    }
    let ctx = match &agg_ctx {
        Some(g) => Context::Grouped(g),
        None => Context::Plain(&scope),
    };
    let (mut exprs, mut names) = bind_select_list(&ctx, &clauses.items)?;
    let mut having = clauses.having.as_ref().map(|h| ctx.bind(h)).transpose()?;
    let mut qualify = clauses.qualify.as_ref().map(|q| ctx.bind(q)).transpose()?;
    let visible = exprs.len();
    let sort_keys = bind_order_by(&ctx, &clauses.order_by, distinct, &mut exprs, &mut names)?;
    // DISTINCT ON's keys: select columns (hidden ones added), over the aggregation's rows
    // where the SELECT aggregates.
    let distinct_on = distinct_on.map(|on| bind_distinct_on::on_keys(&ctx, on, visible, &mut exprs, &mut names));
    let distinct_on = distinct_on.transpose()?;

    let mut plan = plan;
    if let Some(g) = &agg_ctx {
        // Values joined after the aggregation follow its keys and aggregates.
        let width = g.keys.len() + g.aggs.borrow().len();
        let renumber = |e: Expr| e.remap_columns(&|c| if c >= POST_AGGREGATE { width + c - POST_AGGREGATE } else { c });
        exprs = exprs.into_iter().map(renumber).collect();
        having = having.map(renumber);
        qualify = qualify.map(renumber);
        windows = windows.into_iter().map(|w| w.map_exprs(&renumber)).collect();
        plan = match &bound_sets {
            Some(sets) => {
                bind_grouping_sets::grouping_sets_plan(plan, &g.keys, &g.key_names, g.aggs.borrow().clone(), sets)?
            }
            None => aggregate_plan(plan, &g.keys, &g.key_names, g.aggs.borrow().clone())?,
        };
        for s in post_aggregate {
            plan = LogicalPlan::CrossJoin { left: Box::new(plan), right: Box::new(s.plan) };
        }
        if let Some(h) = having {
            require_bool(&h, "HAVING")?;
            plan = LogicalPlan::Filter { input: Box::new(plan), predicate: h };
        }
    }
    if !windows.is_empty() {
        plan = LogicalPlan::Window { input: Box::new(plan), windows };
    }
    if let Some(q) = qualify {
        require_bool(&q, "QUALIFY")?;
        plan = LogicalPlan::Filter { input: Box::new(plan), predicate: q };
    }
    if let Some(on) = distinct_on {
        let rows = LogicalPlan::Project { input: Box::new(plan), exprs, names: names.clone() };
        let plan = bind_distinct_on::distinct_on_plan(rows, &on, &sort_keys)?;
        let exprs = columns_of(&plan);
        return Ok(project_sort_limit(plan, exprs, names, visible, sort_keys, skip, fetch));
    }
    if distinct_rows {
        // DISTINCT over an aggregation: its rows grouped once more, by every column (ORDER BY
        // names only columns of the select list here, so its keys index these columns).
        let rows = LogicalPlan::Project { input: Box::new(plan), exprs, names: names.clone() };
        let columns = columns_of(&rows);
        plan = aggregate_plan(rows, &columns, &names, vec![])?;
        exprs = columns_of(&plan);
    }
    Ok(project_sort_limit(plan, exprs, names, visible, sort_keys, skip, fetch))
}

/// Each column of `plan`'s output as an expression.
pub(crate) fn columns_of(plan: &LogicalPlan) -> Vec<Expr> {
    let schema = plan.schema();
    (0..schema.len())
        .map(|i| {
            let f = &schema.fields[i];
            Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
        })
        .collect()
}

/// SELECT DISTINCT or not (SELECT ALL is the default).
fn select_distinct(select: &ast::Select) -> Result<bool> {
    match &select.distinct {
        None | Some(ast::Distinct::All) => Ok(false),
        Some(ast::Distinct::Distinct) => Ok(true),
        // (Planned apart: `bind_distinct_on.rs`.)
        Some(ast::Distinct::On(_)) => Ok(false),
    }
}

/// A SELECT's clauses with their subqueries cut out: scalar subqueries become relations
/// joined to the FROM list (or, in the select list and HAVING of an aggregation, to its
/// result), IN / EXISTS inside other expressions mark joins; their places hold
/// placeholder names.
pub(crate) struct Clauses {
    /// The select list with `*` expanded: expression and output name.
    pub(crate) items: Vec<(ast::Expr, String)>,
    /// WHERE's conjuncts, with the NULL guards of NOT IN.
    pub(crate) where_terms: Vec<ast::Expr>,
    pub(crate) having: Option<ast::Expr>,
    pub(crate) order_by: Vec<ast::OrderByExpr>,
    pub(crate) marks: Vec<bind_mark::MarkSubquery>,
    /// The marks the select list and HAVING read outside aggregate calls (grouping keys
    /// where the SELECT aggregates).
    pub(crate) outside_marks: Vec<String>,
    /// Placeholder name, query, and whether an inner join may stand for the subquery:
    /// those of WHERE first, then those of the select list, HAVING and ORDER BY.
    pub(crate) scalars: Vec<(String, ast::Query, bool)>,
    /// The window calls of the select list, QUALIFY and ORDER BY (`bind_window.rs`).
    pub(crate) windows: Vec<bind_window::CutWindow>,
    /// QUALIFY, its window calls cut out (select aliases stand for their expressions).
    pub(crate) qualify: Option<ast::Expr>,
}

impl Clauses {
    fn cut_subqueries(
        select: &ast::Select,
        order_by: &[ast::OrderByExpr],
        scope: &Scope,
        catalog: &dyn Catalog,
    ) -> Result<Clauses> {
        // Names are taken before subqueries and window calls are cut out.
        let mut items = select_items(select, scope)?;
        let mut where_terms = where_conjuncts(select, scope, catalog)?;
        for t in &where_terms {
            bind_window::refuse_in(t, "WHERE")?;
        }
        if let ast::GroupByExpr::Expressions(keys, _) = &select.group_by {
            keys.iter().try_for_each(|k| bind_window::refuse_in(k, "GROUP BY"))?;
        }
        if let Some(h) = &select.having {
            bind_window::refuse_in(h, "HAVING")?;
        }
        let mut windows = vec![];
        for (e, _) in items.iter_mut() {
            bind_window::refuse_in_aggregates(e)?;
            bind_window::extract(e, &mut windows)?;
        }
        let mut qualify = select.qualify.clone();
        if let Some(q) = qualify.as_mut() {
            let alias = |id: &ast::Ident| -> Option<ast::Expr> {
                if scope.resolve(None, &id.value, id.span).is_ok() {
                    return None;
                }
                let item = items.iter().find(|(_, n)| n.eq_ignore_ascii_case(&id.value));
                item.map(|(x, _)| ast::Expr::Nested(Box::new(x.clone())))
            };
            replace_aliases(q, &alias);
            bind_window::extract(q, &mut windows)?;
        }
        let mut marks = vec![];
        let mut mark_counter = 0;
        for t in where_terms.iter_mut().filter(|t| !is_subquery_condition(t)) {
            marks.extend(bind_mark::extract(t, &mut mark_counter, scope, catalog)?);
        }
        for (e, _) in items.iter_mut() {
            marks.extend(bind_mark::extract(e, &mut mark_counter, scope, catalog)?);
        }
        let mut counter = 0;
        let mut scalars = vec![];
        for t in where_terms.iter_mut().filter(|t| !is_subquery_condition(t)) {
            // The one place an inner join drops the same outer rows as the NULL of a
            // correlated subquery without inner rows: the operand of a comparison that is
            // a conjunct.
            let comparison = bind_scalar::is_comparison_with_subquery(t);
            let found = bind_scalar::extract(t, &mut counter);
            let inner_join_ok = comparison && found.len() == 1;
            scalars.extend(found.into_iter().map(|(n, q)| (n, q, inner_join_ok)));
        }
        let mut others = vec![];
        for (e, _) in items.iter_mut() {
            others.extend(bind_scalar::extract(e, &mut counter));
        }
        let mut having = select.having.clone();
        if let Some(h) = having.as_mut() {
            // A select alias stands for its expression (DuckDB), unless the name is a
            // column that GROUP BY names.
            let grouped_by = |name: &str| match &select.group_by {
                ast::GroupByExpr::Expressions(v, _) => {
                    v.iter().any(|g| matches!(g, ast::Expr::Identifier(i) if i.value.eq_ignore_ascii_case(name)))
                }
                _ => false,
            };
            let alias = |id: &ast::Ident| -> Option<ast::Expr> {
                if grouped_by(&id.value) && scope.resolve(None, &id.value, id.span).is_ok() {
                    return None;
                }
                let item = items.iter().find(|(_, n)| n.eq_ignore_ascii_case(&id.value));
                item.map(|(x, _)| ast::Expr::Nested(Box::new(x.clone())))
            };
            replace_aliases(h, &alias);
            if let Some(x) = aggregate_in_subquery(h) {
                return Err(Error::not_supported("IN (subquery) of an aggregate").at_span(x.span()));
            }
            marks.extend(bind_mark::extract(h, &mut mark_counter, scope, catalog)?);
            others.extend(bind_scalar::extract(h, &mut counter));
        }
        let mut order_by = order_by.to_vec();
        for o in order_by.iter_mut() {
            bind_window::extract(&mut o.expr, &mut windows)?;
            others.extend(bind_scalar::extract(&mut o.expr, &mut counter));
        }
        scalars.extend(others.into_iter().map(|(n, q)| (n, q, false)));
        let mut outside_marks = vec![];
        for e in items.iter().map(|(e, _)| e).chain(&having) {
            bind_mark::outside_aggregates(e, &mut outside_marks);
        }
        // Of the scalar subqueries, only the marks' NULL guards (uncorrelated, joined before
        // any aggregation) are read there as values of the rows.
        outside_marks
            .retain(|n| n.starts_with("__mark") || scalars.iter().any(|(s, q, _)| s == n && bind_mark::is_guard(q)));
        Ok(Clauses { items, where_terms, having, order_by, marks, outside_marks, scalars, windows, qualify })
    }
}

/// Whether `e` reads the placeholder `name` (a mark or scalar subquery cut out of it).
fn names_placeholder(e: &ast::Expr, name: &str) -> bool {
    ast::visit_expressions(e, |x| match x {
        ast::Expr::Identifier(id) if id.value == name => std::ops::ControlFlow::Break(()),
        _ => std::ops::ControlFlow::Continue(()),
    })
    .is_break()
}

/// The value of an `x IN (SELECT …)` in `e` that holds an aggregate call (HAVING's
/// `count(*) IN (…)`: its mark would be joined to the groups, which is not built).
fn aggregate_in_subquery(e: &ast::Expr) -> Option<ast::Expr> {
    let mut found = None;
    let _ = ast::visit_expressions(e, |x| {
        if let ast::Expr::InSubquery { expr, .. } = x {
            if contains_aggregate(expr) {
                found = Some((**expr).clone());
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// The grouping keys where the SELECT aggregates (None where it does not): GROUP BY's,
/// which may name a select alias or position (DuckDB, PostgreSQL), or DISTINCT's select
/// list. True beside them where DISTINCT applies to the rows of an aggregation (GROUP BY,
/// HAVING or aggregates in the select list or ORDER BY): a second grouping of its rows.
fn grouping_keys(
    select: &ast::Select,
    set_keys: Option<&[ast::Expr]>,
    distinct: bool,
    clauses: &Clauses,
    scope: &Scope,
) -> Result<(Option<Vec<ast::Expr>>, bool)> {
    let items = &clauses.items;
    let all_keys: Vec<ast::Expr>;
    let group_exprs: &[ast::Expr] = match &select.group_by {
        // (Grouping sets: the keys they name, each once.)
        _ if set_keys.is_some() => set_keys.unwrap_or_default(),
        ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => v,
        // GROUP BY ALL: the select items without aggregates.
        ast::GroupByExpr::All(mods) if mods.is_empty() => {
            all_keys = items.iter().filter(|(e, _)| !contains_aggregate(e)).map(|(e, _)| e.clone()).collect();
            &all_keys
        }
        _ => return Err(Error::not_supported("GROUP BY … WITH ROLLUP / CUBE / TOTALS")),
    };
    let aggregating = !group_exprs.is_empty()
        || clauses.having.is_some()
        || items.iter().any(|(e, _)| contains_aggregate(e))
        || clauses.order_by.iter().any(|o| contains_aggregate(&o.expr))
        || clauses.windows.iter().any(|(_, f)| contains_aggregate(&ast::Expr::Function(f.clone())));
    if !aggregating {
        return Ok((distinct.then(|| items.iter().map(|(e, _)| e.clone()).collect()), false));
    }
    let resolve = |e: &ast::Expr| -> Result<ast::Expr> {
        if let Some(pos) = positional(e) {
            return items.get(pos.wrapping_sub(1)).map(|(x, _)| x.clone()).ok_or_else(|| {
                Error::bind(format!("GROUP BY position {pos} is not in the select list")).at_span(e.span())
            });
        }
        if let ast::Expr::Identifier(id) = e {
            if scope.resolve(None, &id.value, id.span).is_err() {
                if let Some((x, _)) = items.iter().find(|(_, n)| n.eq_ignore_ascii_case(&id.value)) {
                    return Ok(x.clone());
                }
            }
        }
        Ok(e.clone())
    };
    // (GROUP BY ALL's keys are select items already: a number among them is a constant.)
    if matches!(select.group_by, ast::GroupByExpr::All(_)) {
        return Ok((Some(group_exprs.to_vec()), distinct));
    }
    Ok((Some(group_exprs.iter().map(resolve).collect::<Result<_>>()?), distinct))
}

/// The grouped context: the keys bound against the rows' scope (each once), and the
/// scalar subqueries joined after the aggregation as placeholder columns.
fn aggregation<'a>(
    scope: &'a Scope,
    key_asts: &[ast::Expr],
    post_aggregate: &[ScalarSubquery],
) -> Result<AggContext<'a>> {
    let plain = Context::Plain(scope);
    let mut keys = vec![];
    let mut key_names = vec![];
    for g in key_asts {
        if contains_aggregate(g) {
            return Err(Error::bind("aggregate functions are not allowed in GROUP BY").at_span(g.span()));
        }
        let k = plain.bind(g)?;
        if !keys.contains(&k) {
            key_names.push(item_name(g));
            keys.push(k);
        }
    }
    let post = post_aggregate
        .iter()
        .map(|s| {
            let f = s.plan.schema().fields[0].clone();
            (s.name.clone(), f.ty, f.nullable)
        })
        .collect();
    Ok(AggContext { base: scope, keys, key_names, aggs: RefCell::new(vec![]), post })
}

/// The select list's expressions and names.
fn bind_select_list(ctx: &Context, items: &[(ast::Expr, String)]) -> Result<(Vec<Expr>, Vec<String>)> {
    let mut exprs = vec![];
    let mut names = vec![];
    for (e, n) in items {
        // A mark outside an aggregate of a grouped select list is not a group key.
        exprs.push(ctx.bind(e).map_err(|err| {
            match err.kind() {
                Error::Bind(m) if m.contains("'__mark") => {
                    Error::not_supported("IN / EXISTS subqueries outside aggregates in a grouped select list")
                        .at_span(e.span())
                }
                _ => err,
            }
        })?);
        names.push(n.clone());
    }
    Ok((exprs, names))
}

/// Replaces the identifiers `alias` maps in `e`, outside aggregate calls and subqueries
/// (their arguments name columns): through operators, BETWEEN, IN lists, IS [NOT] NULL,
/// CASE, CAST and scalar function calls.
fn replace_aliases(e: &mut ast::Expr, alias: &dyn Fn(&ast::Ident) -> Option<ast::Expr>) {
    use ast::Expr as A;
    let go = |x: &mut ast::Expr| replace_aliases(x, alias);
    match e {
        A::Identifier(id) => {
            if let Some(x) = alias(id) {
                *e = x;
            }
        }
        A::BinaryOp { left, right, .. } => {
            go(left);
            go(right);
        }
        A::UnaryOp { expr, .. } | A::Nested(expr) | A::IsNull(expr) | A::IsNotNull(expr) | A::Cast { expr, .. } => {
            go(expr)
        }
        A::Between { expr, low, high, .. } => {
            go(expr);
            go(low);
            go(high);
        }
        A::InList { expr, list, .. } => {
            go(expr);
            list.iter_mut().for_each(go);
        }
        // (The value, not the subquery: its names are its own.)
        A::InSubquery { expr, .. } => go(expr),
        A::Case { operand, conditions, else_result, .. } => {
            if let Some(o) = operand {
                go(o);
            }
            for c in conditions.iter_mut() {
                go(&mut c.condition);
                go(&mut c.result);
            }
            if let Some(x) = else_result {
                go(x);
            }
        }
        A::Function(f) if !crate::bind_aggregate_call::is_aggregate_name(&f.name.to_string()) => {
            if let ast::FunctionArguments::List(list) = &mut f.args {
                for a in list.args.iter_mut() {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                        go(x);
                    }
                }
            }
        }
        _ => {}
    }
}
