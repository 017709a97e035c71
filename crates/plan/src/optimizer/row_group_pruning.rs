//! Row-group pruning: a filter directly over the scan of a table read from Parquet files
//! keeps only the chunks (row groups) whose min/max/NULL-count statistics leave room for
//! a matching row, so the others are never decoded nor uploaded. Only conditions of a
//! column against literals of its own type are judged (=, <>, <, <=, >, >=, IN, IS
//! [NOT] NULL, and AND / OR of them); anything else keeps every chunk. EXPLAIN shows
//! how many row groups were skipped.

use super::{map_plan, OptimizerRule};
use crate::expr::{BinaryOp, Expr};
use crate::logical::LogicalPlan;
use gpusql_common::{ColumnStatistics, Result, ScalarValue};
use std::cmp::Ordering;
use std::sync::Arc;

pub struct RowGroupPruning;

impl OptimizerRule for RowGroupPruning {
    fn name(&self) -> &'static str {
        "row_group_pruning"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        map_plan(plan, &mut |node| {
            Ok(match node {
                LogicalPlan::Filter { input, predicate } => match *input {
                    LogicalPlan::Scan {
                        table,
                        table_schema,
                        projection,
                        rows,
                        sample,
                        statistics: Some(stats),
                        chunks,
                    } => {
                        let candidates: Vec<usize> = match &chunks {
                            Some(c) => c.to_vec(),
                            None => (0..stats.chunks.len()).collect(),
                        };
                        let kept: Vec<usize> = candidates
                            .iter()
                            .copied()
                            .filter(|&k| may_match(&predicate, &|i| stats.chunks[k].get(projection[i])))
                            .collect();
                        let (rows, chunks) = if kept.len() < stats.chunks.len() {
                            let rows = kept.iter().map(|&k| stats.chunks[k].first().map_or(0, |c| c.rows)).sum();
                            (rows, Some(Arc::new(kept)))
                        } else {
                            (rows, None)
                        };
                        let scan = LogicalPlan::Scan {
                            table,
                            table_schema,
                            projection,
                            rows,
                            sample,
                            statistics: Some(stats),
                            chunks,
                        };
                        LogicalPlan::Filter { input: Box::new(scan), predicate }
                    }
                    other => LogicalPlan::Filter { input: Box::new(other), predicate },
                },
                other => other,
            })
        })
    }
}

/// Whether a row of a chunk with the statistics `column(i)` (of scan output column i)
/// could make `e` TRUE.
fn may_match<'a>(e: &Expr, column: &dyn Fn(usize) -> Option<&'a ColumnStatistics>) -> bool {
    match e {
        Expr::Binary { op: BinaryOp::And, left, right, .. } => may_match(left, column) && may_match(right, column),
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => may_match(left, column) || may_match(right, column),
        Expr::Binary { op, left, right, .. } if op.is_comparison() => match (&**left, &**right) {
            (Expr::Column { index, ty, .. }, Expr::Literal { value, ty: lt }) if ty == lt => {
                compare_may_match(column(*index), *op, value)
            }
            (Expr::Literal { value, ty: lt }, Expr::Column { index, ty, .. }) if ty == lt => {
                compare_may_match(column(*index), op.mirrored(), value)
            }
            _ => true,
        },
        Expr::InList { expr, list, negated: false } => match &**expr {
            Expr::Column { index, ty, .. } => list.iter().any(|l| match l {
                Expr::Literal { value, ty: lt } if lt == ty => compare_may_match(column(*index), BinaryOp::Eq, value),
                _ => true,
            }),
            _ => true,
        },
        Expr::InSet { expr, set, negated: false } => match (&**expr, column_of(expr).and_then(column)) {
            (Expr::Column { ty, .. }, Some(s)) if *ty == set.ty => match (&s.min, &s.max) {
                _ if s.nulls.is_some_and(|n| n == s.rows) => false,
                (Some(min), Some(max)) => set.any_between(min, max),
                _ => true,
            },
            _ => true,
        },
        Expr::IsNull { expr, negated } => match (&**expr, column_of(expr).and_then(column)) {
            (Expr::Column { .. }, Some(s)) => match (negated, s.nulls) {
                (false, Some(0)) => false,
                (true, Some(n)) => n < s.rows,
                _ => true,
            },
            _ => true,
        },
        _ => true,
    }
}

fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column { index, .. } => Some(*index),
        _ => None,
    }
}

/// Whether some value in the chunk's [min, max] satisfies `value_in_chunk op lit`.
fn compare_may_match(s: Option<&ColumnStatistics>, op: BinaryOp, lit: &ScalarValue) -> bool {
    let Some(s) = s else { return true };
    if lit.is_null() {
        return false; // a comparison with NULL is never TRUE
    }
    if s.nulls.is_some_and(|n| n == s.rows) {
        return false; // only NULLs
    }
    let (Some(min), Some(max)) = (&s.min, &s.max) else { return true };
    let lo = min.compare(lit);
    let hi = max.compare(lit);
    match op {
        BinaryOp::Eq => lo != Ordering::Greater && hi != Ordering::Less,
        BinaryOp::NotEq => !(lo == Ordering::Equal && hi == Ordering::Equal),
        BinaryOp::Lt => lo == Ordering::Less,
        BinaryOp::LtEq => lo != Ordering::Greater,
        BinaryOp::Gt => hi == Ordering::Greater,
        BinaryOp::GtEq => hi != Ordering::Less,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusql_common::DataType;

    fn stats(min: i32, max: i32, nulls: usize) -> ColumnStatistics {
        ColumnStatistics {
            min: Some(ScalarValue::Int32(min)),
            max: Some(ScalarValue::Int32(max)),
            nulls: Some(nulls),
            rows: 100,
        }
    }

    fn cmp(op: BinaryOp, v: i32) -> Expr {
        let col = Expr::Column { index: 0, name: "x".into(), ty: DataType::Int32, nullable: true };
        Expr::Binary {
            op,
            left: Box::new(col),
            right: Box::new(Expr::Literal { value: ScalarValue::Int32(v), ty: DataType::Int32 }),
            ty: DataType::Boolean,
        }
    }

    #[test]
    fn ranges_decide() {
        let s = stats(10, 20, 0);
        let col = |_| Some(&s);
        assert!(may_match(&cmp(BinaryOp::Eq, 15), &col));
        assert!(!may_match(&cmp(BinaryOp::Eq, 25), &col));
        assert!(!may_match(&cmp(BinaryOp::Lt, 10), &col));
        assert!(may_match(&cmp(BinaryOp::LtEq, 10), &col));
        assert!(!may_match(&cmp(BinaryOp::Gt, 20), &col));
        assert!(may_match(&cmp(BinaryOp::GtEq, 20), &col));
        let either = Expr::Binary {
            op: BinaryOp::Or,
            left: Box::new(cmp(BinaryOp::Eq, 1)),
            right: Box::new(cmp(BinaryOp::Eq, 12)),
            ty: DataType::Boolean,
        };
        assert!(may_match(&either, &col));
        let both = Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(cmp(BinaryOp::Gt, 1)),
            right: Box::new(cmp(BinaryOp::Lt, 5)),
            ty: DataType::Boolean,
        };
        assert!(!may_match(&both, &col));
        let no_nulls = Expr::IsNull { expr: Box::new(cmp(BinaryOp::Eq, 0).clone()), negated: false };
        assert!(may_match(&no_nulls, &col), "IS NULL of an expression: not judged");
        let x = Expr::Column { index: 0, name: "x".into(), ty: DataType::Int32, nullable: true };
        assert!(!may_match(&Expr::IsNull { expr: Box::new(x), negated: false }, &col));
        let unknown = ColumnStatistics { rows: 100, ..Default::default() };
        assert!(may_match(&cmp(BinaryOp::Eq, 25), &|_| Some(&unknown)));
    }
}
