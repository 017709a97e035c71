//! Outer joins: `LEFT | RIGHT | FULL [OUTER] JOIN … ON …` of one FROM item. Equalities
//! between the two sides are hash-join keys; what else the ON clause says decides which
//! pairs match (never which rows stay): the preserved side probes, and where a condition
//! is more than keys and the inner side's own filter, the join is the matching pairs
//! UNION ALL the preserved rows without one (an anti join), padded with NULLs.

use crate::bind_expr::{AtSpan, Context, Scope};
use crate::bind_select::columns_of;
use crate::bind_where::split_and;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// The side of an outer join whose rows all stay.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Preserved {
    Left,
    Right,
    /// FULL [OUTER] JOIN: both.
    Both,
}

/// `left LEFT|RIGHT [OUTER] JOIN right ON …`: equalities between the two sides are the
/// keys, conditions on the other (NULL-supplying) side alone filter it before the join,
/// and its columns become nullable. The preserved side probes, the other builds; a RIGHT
/// JOIN's columns are put back in left-then-right order. `left` covers scope columns
/// [item_start, right_start).
pub(crate) fn bind_outer_join(
    left: LogicalPlan,
    right: LogicalPlan,
    on: &ast::Expr,
    preserved: Preserved,
    scope: &mut Scope,
    item_start: usize,
    right_start: usize,
) -> Result<LogicalPlan> {
    let mut terms = vec![];
    split_and(on, &mut terms);
    if preserved == Preserved::Both {
        return bind_full_join(left, right, &terms, scope, item_start, right_start);
    }
    let (mut probe_keys, mut build_keys, mut filters) = (vec![], vec![], vec![]);
    // Some(true): only columns of the right side; Some(false): only of the left side.
    let side = |e: &Expr| -> Option<bool> {
        let mut cols = vec![];
        e.columns(&mut cols);
        if cols.is_empty() || cols.iter().any(|c| *c < item_start) {
            return None;
        }
        let right = cols.iter().all(|c| *c >= right_start);
        let left = cols.iter().all(|c| *c < right_start);
        if right {
            Some(true)
        } else if left {
            Some(false)
        } else {
            None
        }
    };
    let build_is_right = preserved == Preserved::Left;
    let (probe_start, build_start) = if build_is_right { (item_start, right_start) } else { (right_start, item_start) };
    // Conditions that are neither a key nor the build side's own: a match must satisfy
    // them too. Over the probe row, then the build row.
    let n_probe = if build_is_right { right_start - item_start } else { scope.fields.len() - right_start };
    let in_build = |c: usize| if build_is_right { c >= right_start } else { c < right_start };
    let to_pair = |c: usize| if in_build(c) { n_probe + c - build_start } else { c - probe_start };
    let mut residual = vec![];
    let what = if build_is_right { "LEFT" } else { "RIGHT" };
    for t in &terms {
        let bound = Context::Plain(scope).bind(t)?;
        if side(&bound) == Some(build_is_right) {
            filters.push(bound.remap_columns(&|c| c - build_start));
            continue;
        }
        let key = match &bound {
            Expr::Binary { op: gpusql_plan::BinaryOp::Eq, left: a, right: b, .. } => match (side(a), side(b)) {
                (Some(false), Some(true)) => Some(((**a).clone(), (**b).clone())),
                (Some(true), Some(false)) => Some(((**b).clone(), (**a).clone())),
                _ => None,
            },
            _ => None,
        };
        match key {
            Some((l, r)) => {
                let (p, b) = if build_is_right { (l, r) } else { (r, l) };
                probe_keys.push(p.remap_columns(&|c| c - probe_start));
                build_keys.push(b.remap_columns(&|c| c - build_start));
            }
            None => {
                join_condition(&bound, t, what, item_start)?;
                residual.push(bound.remap_columns(&to_pair));
            }
        }
    }
    let (probe, build, nullable) = if build_is_right {
        (left, right, right_start..scope.fields.len())
    } else {
        (right, left, item_start..right_start)
    };
    for f in &mut scope.fields[nullable] {
        f.nullable = true;
    }
    let and = |a, b| Expr::Binary {
        op: gpusql_plan::BinaryOp::And,
        left: Box::new(a),
        right: Box::new(b),
        ty: DataType::Boolean,
    };
    let build = match filters.into_iter().reduce(and) {
        Some(p) => LogicalPlan::Filter { input: Box::new(build), predicate: p },
        None => build,
    };
    if probe_keys.is_empty() {
        // No equality: every pair is a candidate (a constant key), the conditions decide.
        let one = Expr::literal(ScalarValue::Int32(1), DataType::Int32);
        probe_keys.push(one.clone());
        build_keys.push(one);
    }
    let join = match residual.into_iter().reduce(and) {
        None => LogicalPlan::Join {
            probe: Box::new(probe),
            build: Box::new(build),
            probe_keys,
            build_keys,
            kind: gpusql_plan::JoinKind::Left,
            residual: None,
        },
        Some(condition) => outer_join_with_condition(probe, build, probe_keys, build_keys, condition),
    };
    if build_is_right {
        return Ok(join);
    }
    // The join yields right then left columns; the scope has left then right.
    let (n_left, n_right) = (right_start - item_start, scope.fields.len() - right_start);
    let order: Vec<usize> = (n_right..n_right + n_left).chain(0..n_right).collect();
    let schema = join.schema();
    let exprs = order
        .iter()
        .map(|i| {
            let f = &schema.fields[*i];
            Expr::Column { index: *i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
        })
        .collect();
    let names = order.iter().map(|i| schema.fields[*i].name.clone()).collect();
    Ok(LogicalPlan::Project { input: Box::new(join), exprs, names })
}

/// An outer join's ON condition that decides matches: BOOLEAN, over the join's own
/// tables (columns from `item_start`).
fn join_condition(bound: &Expr, t: &ast::Expr, what: &str, item_start: usize) -> Result<()> {
    let mut cols = vec![];
    bound.columns(&mut cols);
    if cols.iter().any(|c| *c < item_start) {
        return Err(Error::not_supported(format!(
            "this {what} JOIN condition: {t} (it names a table outside the join)"
        ))
        .at_span(t.span()));
    }
    if bound.ty() != DataType::Boolean {
        return Err(Error::bind(format!("JOIN condition {t} must be BOOLEAN")).at_span(t.span()));
    }
    Ok(())
}

/// `left FULL [OUTER] JOIN right ON …`: the matching pairs, the left rows without a match
/// (right columns NULL) and the right rows without one (left columns NULL), as one UNION
/// ALL. Equalities between the sides are keys; every other condition, one side's alone
/// too, decides matches (it filters neither side: both sides keep every row).
fn bind_full_join(
    left: LogicalPlan,
    right: LogicalPlan,
    terms: &[ast::Expr],
    scope: &mut Scope,
    item_start: usize,
    right_start: usize,
) -> Result<LogicalPlan> {
    let (mut left_keys, mut right_keys, mut conditions) = (vec![], vec![], vec![]);
    let n_left = right_start - item_start;
    let side = |e: &Expr| -> Option<bool> {
        let mut cols = vec![];
        e.columns(&mut cols);
        if cols.is_empty() {
            return None;
        }
        if cols.iter().all(|c| *c >= right_start) {
            Some(true)
        } else if cols.iter().all(|c| *c >= item_start && *c < right_start) {
            Some(false)
        } else {
            None
        }
    };
    for t in terms {
        let bound = Context::Plain(scope).bind(t)?;
        join_condition(&bound, t, "FULL", item_start)?;
        if let Expr::Binary { op: gpusql_plan::BinaryOp::Eq, left: a, right: b, .. } = &bound {
            let pair = match (side(a), side(b)) {
                (Some(false), Some(true)) => Some(((**a).clone(), (**b).clone())),
                (Some(true), Some(false)) => Some(((**b).clone(), (**a).clone())),
                _ => None,
            };
            if let Some((l, r)) = pair {
                left_keys.push(l.remap_columns(&|c| c - item_start));
                right_keys.push(r.remap_columns(&|c| c - right_start));
                continue;
            }
        }
        conditions.push(bound.remap_columns(&|c| c - item_start));
    }
    for f in &mut scope.fields[item_start..] {
        f.nullable = true;
    }
    if left_keys.is_empty() {
        let one = Expr::literal(ScalarValue::Int32(1), DataType::Int32);
        left_keys.push(one.clone());
        right_keys.push(one);
    }
    let and = |a, b| Expr::Binary {
        op: gpusql_plan::BinaryOp::And,
        left: Box::new(a),
        right: Box::new(b),
        ty: DataType::Boolean,
    };
    let condition = conditions.into_iter().reduce(and);
    let n_right = right.schema().len();
    // The condition over (right, left) rows, for the right side's anti join.
    let swapped =
        condition.as_ref().map(|c| c.clone().remap_columns(&|i| if i < n_left { n_right + i } else { i - n_left }));
    let join = |probe: &LogicalPlan, build: &LogicalPlan, pk: &[Expr], bk: &[Expr], kind, residual| LogicalPlan::Join {
        probe: Box::new(probe.clone()),
        build: Box::new(build.clone()),
        probe_keys: pk.to_vec(),
        build_keys: bk.to_vec(),
        kind,
        residual,
    };
    let inner = join(&left, &right, &left_keys, &right_keys, gpusql_plan::JoinKind::Inner, None);
    let matched = match &condition {
        Some(c) => LogicalPlan::Filter { input: Box::new(inner), predicate: c.clone() },
        None => inner,
    };
    let mut schema = matched.schema();
    for f in &mut schema.fields {
        f.nullable = true;
    }
    let names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    let nulls = |fields: &[gpusql_common::Field]| -> Vec<Expr> {
        fields.iter().map(|f| Expr::literal(ScalarValue::Null, f.ty)).collect()
    };
    let left_only = join(&left, &right, &left_keys, &right_keys, gpusql_plan::JoinKind::Anti, condition.clone());
    let mut exprs = columns_of(&left_only);
    exprs.extend(nulls(&schema.fields[n_left..]));
    let left_only = LogicalPlan::Project { input: Box::new(left_only), exprs, names: names.clone() };
    let right_only = join(&right, &left, &right_keys, &left_keys, gpusql_plan::JoinKind::Anti, swapped);
    let mut exprs = nulls(&schema.fields[..n_left]);
    exprs.extend(columns_of(&right_only));
    let right_only = LogicalPlan::Project { input: Box::new(right_only), exprs, names };
    Ok(LogicalPlan::Union { inputs: vec![matched, left_only, right_only], schema })
}

/// An outer join whose matches must also satisfy `condition` (over the probe row, then
/// the build row; not only keys): the matching pairs (an inner join, filtered), and the
/// probe rows with no such pair (an anti join whose residual is the condition) with NULL
/// build columns, as one UNION ALL.
fn outer_join_with_condition(
    probe: LogicalPlan,
    build: LogicalPlan,
    probe_keys: Vec<Expr>,
    build_keys: Vec<Expr>,
    condition: Expr,
) -> LogicalPlan {
    let join = |kind, residual| LogicalPlan::Join {
        probe: Box::new(probe.clone()),
        build: Box::new(build.clone()),
        probe_keys: probe_keys.clone(),
        build_keys: build_keys.clone(),
        kind,
        residual,
    };
    let matched =
        LogicalPlan::Filter { input: Box::new(join(gpusql_plan::JoinKind::Inner, None)), predicate: condition.clone() };
    let unmatched = join(gpusql_plan::JoinKind::Anti, Some(condition));
    let mut schema = matched.schema();
    let n_probe = probe.schema().len();
    for f in &mut schema.fields[n_probe..] {
        f.nullable = true;
    }
    let mut exprs = columns_of(&unmatched);
    exprs.extend(schema.fields[n_probe..].iter().map(|f| Expr::literal(ScalarValue::Null, f.ty)));
    let names = schema.fields.iter().map(|f| f.name.clone()).collect();
    let padded = LogicalPlan::Project { input: Box::new(unmatched), exprs, names };
    LogicalPlan::Union { inputs: vec![matched, padded], schema }
}
