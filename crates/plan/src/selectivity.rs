//! Selectivity guesses for filter terms (there are no column statistics yet): = 0.1, other
//! comparisons 1/3, a lower and an upper bound on one expression 1/4 together, IN lists
//! 0.1 per item, anything else 1/2. Join planning orders tables by them; the physical
//! planner orders filter terms by them (multi-predicate plans).

use crate::expr::{BinaryOp, Expr};
use crate::logical::LogicalPlan;

/// Product of the terms' selectivities, except that a lower and an upper bound on the same
/// expression (BETWEEN) count 1/4 together rather than 1/3 each.
pub fn conjunction_selectivity(terms: &[Expr]) -> f64 {
    let bound = |t: &Expr| -> Option<(Expr, bool)> {
        let Expr::Binary { op, left, right, .. } = t else { return None };
        let lower = match op {
            BinaryOp::Gt | BinaryOp::GtEq => true,
            BinaryOp::Lt | BinaryOp::LtEq => false,
            _ => return None,
        };
        match (&**left, &**right) {
            (e, Expr::Literal { .. }) => Some(((*e).clone(), lower)),
            (Expr::Literal { .. }, e) => Some(((*e).clone(), !lower)),
            _ => None,
        }
    };
    let bounds: Vec<Option<(Expr, bool)>> = terms.iter().map(bound).collect();
    let mut s = 1.0;
    for (i, t) in terms.iter().enumerate() {
        match &bounds[i] {
            Some((e, lower)) if bounds.iter().any(|b| b.as_ref().is_some_and(|(x, l)| x == e && l != lower)) => {
                // The pair's 1/4, split between its two terms.
                s *= 0.5;
            }
            _ => s *= term_selectivity(t),
        }
    }
    s
}

pub fn term_selectivity(e: &Expr) -> f64 {
    match e {
        Expr::Binary { op: BinaryOp::Eq, .. } => 0.1,
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => (term_selectivity(left) + term_selectivity(right)).min(1.0),
        Expr::Binary { op, .. } if op.is_comparison() => 0.33,
        Expr::InList { list, negated: false, .. } => (0.1 * list.len() as f64).min(0.5),
        _ => 0.5,
    }
}

/// Rows a relation is expected to yield (table rows times a selectivity per filter term),
/// and the fraction of its base table's rows that is.
pub fn estimate(plan: &LogicalPlan) -> (f64, f64) {
    match plan {
        LogicalPlan::Scan { rows, .. } => (*rows as f64, 1.0),
        LogicalPlan::Filter { input, predicate } => {
            let (rows, sel) = estimate(input);
            let s = conjunction_selectivity(&predicate.clone().conjuncts());
            (rows * s, sel * s)
        }
        LogicalPlan::Join { probe, .. } => estimate(probe),
        LogicalPlan::Aggregate { group_by, .. } if group_by.is_empty() => (1.0, 1.0),
        // Grouping shrinks its input; by how much is unknown, so say half (it also
        // keeps a grouped subquery from tying with the table it aggregates).
        LogicalPlan::Aggregate { input, .. } => {
            let (rows, sel) = estimate(input);
            (rows * 0.5, sel * 0.5)
        }
        other => other.inputs().first().map_or((1.0, 1.0), |i| estimate(i)),
    }
}
