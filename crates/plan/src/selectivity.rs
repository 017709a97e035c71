//! Selectivity estimates. A filter over a table scan (after earlier filters on it) is
//! *measured*: its terms are evaluated on the table's sample (1024 evenly spaced rows,
//! taken by the catalog) that passed the filters below it. Elsewhere (over joins and
//! aggregates, or with sampling off) terms are guessed: = 0.1, other comparisons 1/3, a
//! lower and an upper bound on one expression 1/4 together, IN lists 0.1 per item,
//! anything else 1/2. Join planning orders tables by
//! guesses (see `estimate`); the physical planner orders filter terms by measured ones
//! (multi-predicate plans) and places Lane Refill operators where they leave few lanes
//! active.

use crate::eval::eval;
use crate::expr::{BinaryOp, Expr};
use crate::logical::LogicalPlan;
use gpusql_common::ScalarValue;

/// Sample rows are the plan's output columns.
type Row = Vec<ScalarValue>;

/// The rows of `plan`'s output drawn from its base table's sample: a scan's sample rows
/// (its columns), through filters (the rows that pass). None where the plan is not a
/// filtered scan of a table with a sample, or a filter raises an error on a sample row.
pub fn sample_rows(plan: &LogicalPlan) -> Option<Vec<Row>> {
    match plan {
        LogicalPlan::Scan { projection, sample: Some(s), .. } => s.0.rows(projection),
        LogicalPlan::Filter { input, predicate } => {
            let mut kept = vec![];
            for r in sample_rows(input)? {
                if eval(predicate, &r).ok()? == ScalarValue::Boolean(true) {
                    kept.push(r);
                }
            }
            Some(kept)
        }
        _ => None,
    }
}

/// The share of `input`'s rows for which every term is TRUE: measured on the sample where
/// there is one with rows (at least half a sample row's worth, never 0), else guessed.
pub fn selectivity(input: &LogicalPlan, terms: &[Expr]) -> f64 {
    sample_selectivity(sample_rows(input).as_deref(), terms)
}

/// `selectivity` over sample rows already drawn (`sample_rows`), for several term sets of
/// one filter. A term that raises an error on a sample row falls back to the guesses.
pub fn sample_selectivity(rows: Option<&[Row]>, terms: &[Expr]) -> f64 {
    let measured = rows.filter(|r| !r.is_empty()).and_then(|rows| {
        let mut hits = 0usize;
        for r in rows {
            let mut all = true;
            for t in terms {
                all &= eval(t, r).ok()? == ScalarValue::Boolean(true);
            }
            hits += all as usize;
        }
        Some((hits as f64).max(0.5) / rows.len() as f64)
    });
    measured.unwrap_or_else(|| conjunction_selectivity(terms))
}

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
            (e, Expr::Literal { .. } | Expr::Parameter { .. }) => Some(((*e).clone(), lower)),
            (Expr::Literal { .. } | Expr::Parameter { .. }, e) => Some(((*e).clone(), !lower)),
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
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => {
            (term_selectivity(left) + term_selectivity(right)).min(1.0)
        }
        Expr::Binary { op, .. } if op.is_comparison() => 0.33,
        Expr::InList { list, negated: false, .. } => (0.1 * list.len() as f64).min(0.5),
        Expr::InSet { set, negated: false, .. } => (0.1 * set.values.len() as f64).min(0.5),
        _ => 0.5,
    }
}

/// Which selectivities `estimate` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimates {
    /// Measured on table samples where there are (see `selectivity`).
    Measured,
    /// The fixed guesses per kind of term only.
    Guessed,
}

/// Rows a relation is expected to yield (table rows times the selectivity of each filter),
/// and the fraction of its base table's rows that is.
///
/// Join planning uses `Guessed`: with measured selectivities its rows-times-columns cost
/// made worse choices on TPC-H (Q14 built the 1.2% of lineitem in the date range, on a
/// non-unique key, instead of part on its primary key: 1.5 → 7.1 ms at SF 10), as it
/// does not price how much more a build on a repeated key costs than one on a unique key.
pub fn estimate(plan: &LogicalPlan, how: Estimates) -> (f64, f64) {
    let estimate = |p: &LogicalPlan| estimate(p, how);
    match plan {
        LogicalPlan::Scan { rows, .. } => (*rows as f64, 1.0),
        LogicalPlan::Filter { input, predicate } => {
            let (rows, sel) = estimate(input);
            let terms = predicate.clone().conjuncts();
            let s = match how {
                Estimates::Measured => selectivity(input, &terms),
                Estimates::Guessed => conjunction_selectivity(&terms),
            };
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
        // The arms' rows add up; the fraction kept is of no one base table.
        LogicalPlan::Union { inputs, .. } => (inputs.iter().map(|i| estimate(i).0).sum(), 1.0),
        other => other.inputs().first().map_or((1.0, 1.0), |i| estimate(i)),
    }
}

/// `estimate`'s rows, or fewer where a grouping's keys are known to take fewer values: a
/// grouping yields at most one row per combination of its keys' values, and a key that
/// is a column of a table read whole-number values from [min, max] (chunk statistics) takes
/// at most max - min + 1 of them, and NULL. For the cross-join guard, which must not refuse
/// a pairing of two small aggregates (TPC-DS q77's sales and returns per call center)
/// because its input was large.
pub fn rows_at_most(plan: &LogicalPlan) -> f64 {
    let rows = estimate(plan, Estimates::Guessed).0;
    match plan {
        LogicalPlan::Aggregate { input, group_by, .. } if !group_by.is_empty() => {
            let bound = group_by.iter().try_fold(1.0f64, |acc, k| match k {
                Expr::Column { index, .. } => column_values(input, *index).map(|n| acc * (n + 1.0)),
                _ => None,
            });
            bound.map_or(rows, |b| rows.min(b))
        }
        LogicalPlan::Filter { input, .. } | LogicalPlan::Project { input, .. } => rows.min(rows_at_most(input)),
        _ => rows,
    }
}

/// How many non-NULL values output column `col` of `plan` can take at most, where its
/// table's statistics bound a whole-number column (through filters, projections of
/// columns, joins and group keys).
fn column_values(plan: &LogicalPlan, col: usize) -> Option<f64> {
    match plan {
        LogicalPlan::Scan { projection, statistics: Some(stats), .. } => {
            let column = *projection.get(col)?;
            let (mut lo, mut hi) = (i128::MAX, i128::MIN);
            for chunk in &stats.chunks {
                let c = chunk.get(column)?;
                lo = lo.min(whole(c.min.as_ref()?)?);
                hi = hi.max(whole(c.max.as_ref()?)?);
            }
            (hi >= lo).then(|| (hi - lo + 1) as f64)
        }
        LogicalPlan::Filter { input, .. } => column_values(input, col),
        LogicalPlan::Project { input, exprs, .. } => match exprs.get(col)? {
            Expr::Column { index, .. } => column_values(input, *index),
            _ => None,
        },
        LogicalPlan::Aggregate { input, group_by, .. } => match group_by.get(col)? {
            Expr::Column { index, .. } => column_values(input, *index),
            _ => None,
        },
        LogicalPlan::Join { probe, build, .. } => {
            let width = probe.schema().len();
            if col < width {
                column_values(probe, col)
            } else if plan.schema().len() == width + build.schema().len() {
                column_values(build, col - width)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An integer, date, timestamp or decimal statistic as a whole number (a decimal's
/// unscaled value: as many values as the statistic's range at its scale).
fn whole(v: &ScalarValue) -> Option<i128> {
    match v {
        ScalarValue::Float64(_) | ScalarValue::Utf8(_) => None,
        other => other.as_i128(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusql_common::{DataType, Field, Schema, TableSample};
    use std::sync::Arc;

    fn col(index: usize) -> Expr {
        Expr::Column { index, name: format!("c{index}"), ty: DataType::Int64, nullable: false }
    }

    fn lt(e: Expr, v: i64) -> Expr {
        Expr::Binary {
            op: BinaryOp::Lt,
            left: Box::new(e),
            right: Box::new(Expr::Literal { value: ScalarValue::Int64(v), ty: DataType::Int64 }),
            ty: DataType::Boolean,
        }
    }

    #[test]
    fn filters_over_a_sampled_scan_are_measured() {
        // Two columns, 100 rows: c0 = 0..99, c1 = 99..0; the scan reads only c1.
        let rows: Vec<Vec<ScalarValue>> =
            (0..100).map(|i| vec![ScalarValue::Int64(i), ScalarValue::Int64(99 - i)]).collect();
        let schema =
            Schema::new(vec![Field::new("c0", DataType::Int64, false), Field::new("c1", DataType::Int64, false)]);
        let scan = LogicalPlan::Scan {
            table: "t".into(),
            table_schema: schema,
            projection: vec![1],
            rows: 1_000_000,
            sample: Some(TableSample(Arc::new(rows))),
            statistics: None,
            chunks: None,
        };
        assert_eq!(selectivity(&scan, &[lt(col(0), 10)]), 0.1);
        // Below another filter: measured on the sample rows that passed it.
        let filtered = LogicalPlan::Filter { input: Box::new(scan.clone()), predicate: lt(col(0), 50) };
        assert_eq!(selectivity(&filtered, &[lt(col(0), 10)]), 0.2);
        // Nothing passes: half a row's worth, never 0.
        assert_eq!(selectivity(&scan, &[lt(col(0), -1)]), 0.005);
        // Measured selectivity drives the estimate; guesses drive join planning.
        let f = LogicalPlan::Filter { input: Box::new(scan), predicate: lt(col(0), 10) };
        assert_eq!(estimate(&f, Estimates::Measured), (100_000.0, 0.1));
        assert_eq!(estimate(&f, Estimates::Guessed).1, 0.33);
    }
}
