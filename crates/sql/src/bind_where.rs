//! WHERE: its conjuncts (ORs factored), its conditions bound as filters, semi / anti / mark
//! joins for IN and EXISTS, and the scalar subqueries joined to the rows before and after
//! the aggregation.

use crate::bind_expr::{contains_aggregate, contains_subquery, AtSpan, Context, Scope, ScopeField};
use crate::bind_mark;
use crate::bind_scalar::{self, ScalarSubquery};
use crate::bind_select::Clauses;
use crate::bind_subquery::{bind_subquery_condition, is_subquery_condition, not_in_null_guard};
use gpusql_common::{Catalog, DataType, Error, Result, ScalarValue};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// WHERE's conjuncts; NOT IN over nullable values adds its NULL semantics as one more
/// (scalar subquery) term.
pub(crate) fn where_conjuncts(select: &ast::Select, scope: &Scope, catalog: &dyn Catalog) -> Result<Vec<ast::Expr>> {
    let mut terms = vec![];
    if let Some(w) = &select.selection {
        split_and(w, &mut terms);
    }
    for i in 0..terms.len() {
        if let Some(guard) = not_in_null_guard(&terms[i], scope, catalog)? {
            terms.push(guard);
        }
    }
    Ok(terms)
}

/// The rows the SELECT reads: the FROM plan joined to the scalar subqueries read before
/// any aggregation, filtered by WHERE and ON, semi/anti joined to WHERE's IN / EXISTS,
/// mark joined, and left joined to the correlated subqueries that need it (their
/// conditions filter after them). Returns the scalar subqueries joined after the
/// aggregation. `key_asts`: the grouping keys where the SELECT aggregates.
pub(crate) fn bind_where(
    plan: LogicalPlan,
    scope: &mut Scope,
    on: &[ast::Expr],
    clauses: &mut Clauses,
    key_asts: Option<&[ast::Expr]>,
    from: &[ast::TableWithJoins],
    catalog: &dyn Catalog,
) -> Result<(LogicalPlan, Vec<ScalarSubquery>)> {
    let scalars = std::mem::take(&mut clauses.scalars);
    let outer = bind_scalar::OuterQuery { from, where_terms: &clauses.where_terms };
    let joined = join_scalar_subqueries(plan, scope, scalars, key_asts, &outer, catalog)?;
    let mut conditions = joined.conditions;

    // WHERE conjuncts that are IN / EXISTS subqueries become semi/anti joins.
    let mut subquery_joins = vec![];
    let mut plain_terms = vec![];
    for t in &clauses.where_terms {
        if is_subquery_condition(t) {
            subquery_joins.push(bind_subquery_condition(t, scope, &outer, catalog)?);
        } else {
            plain_terms.push(t.clone());
        }
    }
    // Mark joins, then correlated subqueries whose value over no inner rows is not NULL
    // (COUNT) as left joins, follow the other conditions and the semi joins; the
    // conditions on their columns filter after them.
    let left_joined_from = scope.fields.len();
    let mut mark_joins = vec![];
    // The GROUP BY keys other than marks, over the rows before the marks are joined (None
    // where one does not bind: the aggregation reports it).
    let group_keys: Option<Vec<Expr>> = key_asts
        .unwrap_or_default()
        .iter()
        .filter(|k| !matches!(k, ast::Expr::Identifier(id) if id.value.starts_with("__mark")))
        .map(|k| Context::Plain(scope).bind(k).ok())
        .collect();
    for m in &clauses.marks {
        let j = bind_mark::bind(m, scope, &outer, catalog)?;
        if let Some(group_keys) = group_keys.as_ref().filter(|_| clauses.outside_marks.contains(&m.name)) {
            bind_mark::check_grouped(&j, scope.fields.len(), group_keys, scope)
                .map_err(|e| e.at_span(m.condition.span()))?;
        }
        mark_joins.push(j);
        scope.fields.push(ScopeField {
            hidden: false,
            qualifier: String::new(),
            name: m.name.clone(),
            ty: DataType::Boolean,
            nullable: false,
        });
    }
    let left_joined: Vec<(ScalarSubquery, Expr)> =
        joined.left_joined.into_iter().map(|s| scalar_left_join_value(scope, s)).collect();
    let mut after_left_joins = vec![];
    let plain = Context::Plain(scope);
    for (what, e) in on.iter().map(|e| ("JOIN … ON", e)).chain(plain_terms.iter().map(|w| ("WHERE", w))) {
        let pred = bind_condition(&plain, e, what)?;
        let mut cols = vec![];
        pred.columns(&mut cols);
        if cols.iter().any(|c| *c >= left_joined_from) {
            after_left_joins.push(pred);
        } else {
            conditions.push(pred);
        }
    }

    let mut plan = filter(joined.plan, conditions);
    for j in subquery_joins.into_iter().chain(mark_joins) {
        plan = LogicalPlan::Join {
            probe: Box::new(plan),
            build: Box::new(j.build),
            probe_keys: j.probe_keys,
            build_keys: j.build_keys,
            kind: j.kind,
            residual: j.residual,
        };
    }
    for (s, value) in left_joined {
        plan = scalar_left_join(plan, s, value)?;
    }
    Ok((filter(plan, after_left_joins), joined.post_aggregate))
}

/// The scalar subqueries bound and sorted by where they join.
struct ScalarJoins {
    /// The FROM plan cross joined to the subqueries joined there.
    plan: LogicalPlan,
    /// Their keys equal to the outer values.
    conditions: Vec<Expr>,
    /// Joined after the aggregation.
    post_aggregate: Vec<ScalarSubquery>,
    /// Correlated, left joined after the WHERE conditions.
    left_joined: Vec<ScalarSubquery>,
}

fn join_scalar_subqueries(
    mut plan: LogicalPlan,
    scope: &mut Scope,
    scalars: Vec<(String, ast::Query, bool)>,
    key_asts: Option<&[ast::Expr]>,
    outer: &bind_scalar::OuterQuery,
    catalog: &dyn Catalog,
) -> Result<ScalarJoins> {
    let mut conditions = vec![];
    let mut post_aggregate = vec![];
    let mut left_joined = vec![];
    for (name, q, inner_join_ok) in scalars {
        // A value the grouping keys or WHERE read is joined to the FROM list; others
        // (aggregated select items, HAVING, ORDER BY) to the groups.
        let after_aggregation = key_asts.is_some_and(|keys| {
            !name_in(&name, outer.where_terms) && !name_in(&name, keys) && !bind_mark::is_guard(&q)
        });
        let s = bind_scalar::bind_scalar_subquery(name, &q, scope, outer, catalog, !after_aggregation)?;
        if after_aggregation {
            post_aggregate.push(s);
        } else if !s.outer_keys.is_empty() && (s.over_no_rows.is_some() || !inner_join_ok) {
            left_joined.push(s);
        } else {
            let (joined, keys) = join_scalar(plan, scope, s)?;
            plan = joined;
            conditions.extend(keys);
        }
    }
    Ok(ScalarJoins { plan, conditions, post_aggregate, left_joined })
}

/// An ON or WHERE condition (`what`), which may hold neither subqueries nor aggregates.
fn bind_condition(plain: &Context, e: &ast::Expr, what: &str) -> Result<Expr> {
    if contains_subquery(e) {
        let which = if what == "WHERE" { "IN / EXISTS subqueries inside other conditions" } else { "subqueries" };
        return Err(Error::not_supported(format!("{which} in {what}")).at_span(e.span()));
    }
    if contains_aggregate(e) {
        return Err(Error::bind(format!("aggregate functions are not allowed in {what}")).at_span(e.span()));
    }
    let pred = plain.bind(e)?;
    require_bool(&pred, what)?;
    Ok(pred)
}

/// `plan` filtered by the conjunction of `predicates` (none: unfiltered).
fn filter(plan: LogicalPlan, predicates: Vec<Expr>) -> LogicalPlan {
    let and = |a, b| Expr::Binary {
        op: gpusql_plan::BinaryOp::And,
        left: Box::new(a),
        right: Box::new(b),
        ty: DataType::Boolean,
    };
    match predicates.into_iter().reduce(and) {
        Some(predicate) => LogicalPlan::Filter { input: Box::new(plan), predicate },
        None => plan,
    }
}

/// The conjuncts of `e`. An OR whose branches share conjuncts gives them up first:
/// `(a AND b) OR (a AND c)` is `a AND (b OR c)` (SQL's three-valued logic distributes), so
/// a join or correlation condition repeated in every branch (TPC-H Q19, TPC-DS q41) is a
/// conjunct of its own. (The optimizer's factor_or does the same over bound plans.)
pub(crate) fn split_and(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::Nested(inner) => split_and(inner, out),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::BinaryOp { op: ast::BinaryOperator::Or, .. } => factor_or(e, out),
        other => out.push(other.clone()),
    }
}

fn factor_or(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    fn disjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
        match e {
            ast::Expr::Nested(inner) => disjuncts(inner, out),
            ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Or, right } => {
                disjuncts(left, out);
                disjuncts(right, out);
            }
            other => out.push(other.clone()),
        }
    }
    let mut branches = vec![];
    disjuncts(e, &mut branches);
    let branches: Vec<Vec<ast::Expr>> = branches
        .iter()
        .map(|b| {
            let mut terms = vec![];
            split_and(b, &mut terms);
            terms
        })
        .collect();
    let common: Vec<ast::Expr> =
        branches[0].iter().filter(|c| branches[1..].iter().all(|b| b.contains(c))).cloned().collect();
    if common.is_empty() {
        out.push(e.clone());
        return;
    }
    let and = |a: ast::Expr, b: ast::Expr| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    };
    let mut rest = vec![];
    for b in branches {
        match b.into_iter().filter(|c| !common.contains(c)).reduce(and) {
            Some(r) => rest.push(ast::Expr::Nested(Box::new(r))),
            // A branch that is the common part alone: the OR adds nothing (a OR (a AND b) is a).
            None => {
                out.extend(common);
                return;
            }
        }
    }
    let or = rest.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::Or,
        right: Box::new(b),
    });
    out.extend(common.into_iter().chain(or));
}

pub(crate) fn require_bool(e: &Expr, what: &str) -> Result<()> {
    match (e.ty(), e) {
        (DataType::Boolean, _) | (_, Expr::Literal { value: ScalarValue::Null, .. }) => Ok(()),
        (t, _) => Err(Error::bind(format!("{what} condition must be BOOLEAN, got {t}"))),
    }
}

/// Whether the placeholder `name` was cut out of one of the WHERE terms.
fn name_in(name: &str, terms: &[ast::Expr]) -> bool {
    terms.iter().any(|t| {
        let mut found = false;
        let _ = ast::visit_expressions(t, |x| {
            found |= matches!(x, ast::Expr::Identifier(id) if id.value == name);
            std::ops::ControlFlow::<()>::Continue(())
        });
        found
    })
}

/// Joins a scalar subquery's relation to the FROM list: its columns enter the scope under
/// placeholder names, and the returned conditions equate its keys with the outer values.
fn join_scalar(plan: LogicalPlan, scope: &mut Scope, s: ScalarSubquery) -> Result<(LogicalPlan, Vec<Expr>)> {
    let base = scope.fields.len();
    let schema = s.plan.schema();
    let nkeys = s.outer_keys.len();
    for (i, f) in schema.fields.iter().enumerate() {
        let name = if i == nkeys { s.name.clone() } else { format!("{}_key{i}", s.name) };
        scope.fields.push(ScopeField { hidden: false, qualifier: String::new(), name, ty: f.ty, nullable: f.nullable });
    }
    let mut conditions = vec![];
    for (i, outer) in s.outer_keys.into_iter().enumerate() {
        let f = &schema.fields[i];
        let key = Expr::Column { index: base + i, name: f.name.clone(), ty: f.ty, nullable: f.nullable };
        conditions.push(crate::coerce::comparison(gpusql_plan::BinaryOp::Eq, outer, key)?);
    }
    Ok((LogicalPlan::CrossJoin { left: Box::new(plan), right: Box::new(s.plan) }, conditions))
}

/// A correlated scalar subquery whose value over no inner rows is not NULL (COUNT): its
/// columns enter the scope (keys, then the value), and the value as the outer query sees
/// it is returned: `CASE WHEN key IS NULL THEN <value over no rows> ELSE value END` over
/// the columns `scalar_left_join` produces at the scope's end.
fn scalar_left_join_value(scope: &mut Scope, s: ScalarSubquery) -> (ScalarSubquery, Expr) {
    let base = scope.fields.len();
    let schema = s.plan.schema();
    let nkeys = s.outer_keys.len();
    let col = |i: usize| Expr::Column {
        index: base + i,
        name: schema.fields[i].name.clone(),
        ty: schema.fields[i].ty,
        nullable: true,
    };
    let empty =
        s.over_no_rows.clone().unwrap_or(Expr::Literal { value: ScalarValue::Null, ty: schema.fields[nkeys].ty });
    let value = Expr::Case {
        branches: vec![(Expr::IsNull { expr: Box::new(col(0)), negated: false }, empty)],
        else_expr: Some(Box::new(col(nkeys))),
        ty: schema.fields[nkeys].ty,
    };
    for (i, f) in schema.fields.iter().enumerate() {
        let (name, nullable) =
            if i == nkeys { (s.name.clone(), value.nullable()) } else { (format!("{}_key{i}", s.name), true) };
        scope.fields.push(ScopeField { hidden: false, qualifier: String::new(), name, ty: f.ty, nullable });
    }
    (s, value)
}

/// `plan LEFT JOIN s.plan ON outer keys = inner keys`, with the subquery's value column
/// replaced by `value` (see `scalar_left_join_value`; its columns are the plan's width on).
fn scalar_left_join(plan: LogicalPlan, s: ScalarSubquery, value: Expr) -> Result<LogicalPlan> {
    let base = plan.schema().len();
    let inner = s.plan.schema();
    let nkeys = s.outer_keys.len();
    let (mut probe_keys, mut build_keys) = (vec![], vec![]);
    for (i, outer) in s.outer_keys.into_iter().enumerate() {
        let f = &inner.fields[i];
        let key = Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable };
        let (p, b, _) = crate::coerce::unify(outer, key, "compare (=)")?;
        probe_keys.push(p);
        build_keys.push(b);
    }
    let join = LogicalPlan::Join {
        probe: Box::new(plan),
        build: Box::new(s.plan),
        probe_keys,
        build_keys,
        kind: gpusql_plan::JoinKind::Left,
        residual: None,
    };
    let schema = join.schema();
    let mut exprs: Vec<Expr> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable })
        .collect();
    let mut names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    exprs[base + nkeys] = value;
    names[base + nkeys] = s.name;
    Ok(LogicalPlan::Project { input: Box::new(join), exprs, names })
}
