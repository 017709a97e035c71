//! A join whose rows only say which values exist becomes a semi join. The build side of a
//! semi, anti or mark join (IN, EXISTS and their negations) counts by the set of values it
//! holds, not by how many times each comes. Where that side is
//!
//! ```text
//! Project (columns of one side X only)
//!   [Filter p]
//!     Join inner (X and Y on keys)
//! ```
//!
//! each X row matters once, however many Y rows it pairs with: `X semi-join Y on the keys,
//! where p` holds the same set of values. TPC-DS q95's `ws_wh` (web_sales joined with
//! itself on the order number, warehouses differing) pairs each order line with every
//! other line of its order; as a semi join each line stops at its first line from another
//! warehouse and is written once.
//!
//! Below such a projection, the sides of an inner join count by their sets of rows too, and
//! are rewritten the same way (q95's second `ws_wh`, joined with web_returns).
//!
//! X becomes the semi join's probe side and Y its hash table: where X was the inner join's
//! build side, only if X is estimated at least as large as Y (the table hashed must not
//! grow).

use super::{map_plan, OptimizerRule};
use crate::expr::Expr;
use crate::logical::{JoinKind, LogicalPlan};
use crate::selectivity::{estimate, Estimates};
use gpusql_common::Result;

pub struct ExistenceJoins;

impl OptimizerRule for ExistenceJoins {
    fn name(&self) -> &'static str {
        "existence_joins"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        map_plan(plan, &mut |node| {
            Ok(match node {
                LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual }
                    if matches!(kind, JoinKind::Semi | JoinKind::Anti | JoinKind::Mark) =>
                {
                    let build = Box::new(values_only(*build));
                    LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual }
                }
                other => other,
            })
        })
    }
}

/// `plan` where only the set of its rows matters: a projection (or projections, composed)
/// of an inner join's one side becomes one projection of a semi join.
fn values_only(plan: LogicalPlan) -> LogicalPlan {
    let LogicalPlan::Project { input, exprs, names } = &plan else { return plan };
    let (mut base, mut exprs) = (input.as_ref(), exprs.clone());
    while let LogicalPlan::Project { input, exprs: inner, .. } = base {
        exprs = exprs
            .into_iter()
            .map(|e| {
                e.transform(&mut |x| match x {
                    Expr::Column { index, .. } => inner[index].clone(),
                    other => other,
                })
            })
            .collect();
        base = input.as_ref();
    }
    match semi_of(base.clone(), &exprs) {
        Some((semi, exprs)) => LogicalPlan::Project { input: Box::new(semi), exprs, names: names.clone() },
        None => within(plan),
    }
}

/// The sides of inner joins under projections and filters where only the set of rows
/// matters: the set of their pairs depends on the sets of each side's rows only.
fn within(plan: LogicalPlan) -> LogicalPlan {
    match plan {
        LogicalPlan::Project { input, exprs, names } => {
            LogicalPlan::Project { input: Box::new(within(*input)), exprs, names }
        }
        LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter { input: Box::new(within(*input)), predicate },
        LogicalPlan::Join { probe, build, probe_keys, build_keys, kind: JoinKind::Inner, residual } => {
            let (probe, build) = (Box::new(values_only(*probe)), Box::new(values_only(*build)));
            LogicalPlan::Join { probe, build, probe_keys, build_keys, kind: JoinKind::Inner, residual }
        }
        other => other,
    }
}

/// `[Filter p] Join inner` under a projection `exprs`: the semi join and the projection
/// renumbered onto it, where `exprs` read one side only.
fn semi_of(input: LogicalPlan, exprs: &[Expr]) -> Option<(LogicalPlan, Vec<Expr>)> {
    let (join, predicate) = match input {
        LogicalPlan::Filter { input, predicate }
            if matches!(*input, LogicalPlan::Join { kind: JoinKind::Inner, .. }) =>
        {
            (*input, Some(predicate))
        }
        join @ LogicalPlan::Join { kind: JoinKind::Inner, .. } => (join, None),
        _ => return None,
    };
    let LogicalPlan::Join { probe, build, probe_keys, build_keys, residual: None, .. } = join else { return None };
    let np = probe.schema().len();
    let mut read = vec![];
    for e in exprs {
        e.columns(&mut read);
    }
    let from_probe = read.iter().all(|&c| c < np);
    let from_build = read.iter().all(|&c| c >= np);
    let rows = |p: &LogicalPlan| estimate(p, Estimates::Guessed).0;
    if from_probe {
        // The hash table stays the build side's; the columns keep their numbers.
        let semi =
            LogicalPlan::Join { probe, build, probe_keys, build_keys, kind: JoinKind::Semi, residual: predicate };
        Some((semi, exprs.to_vec()))
    } else if from_build && rows(&build) >= rows(&probe) {
        // The build side probes a hash table of the probe side: in the residual, the build
        // row's columns come first now.
        let nb = build.schema().len();
        let swap = move |c: usize| if c < np { nb + c } else { c - np };
        let residual = predicate.map(|p| p.remap_columns(&swap));
        let exprs = exprs.iter().map(|e| e.clone().remap_columns(&|c| c - np)).collect();
        let semi = LogicalPlan::Join {
            probe: build,
            build: probe,
            probe_keys: build_keys,
            build_keys: probe_keys,
            kind: JoinKind::Semi,
            residual,
        };
        Some((semi, exprs))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::BinaryOp;
    use gpusql_common::{DataType, Field, Schema};

    fn scan(table: &str, rows: usize) -> LogicalPlan {
        let schema = Schema::new(vec![Field::new("k", DataType::Int32, true), Field::new("w", DataType::Int32, true)]);
        LogicalPlan::Scan {
            table: table.into(),
            table_schema: schema,
            projection: vec![0, 1],
            rows,
            sample: None,
            statistics: None,
            chunks: None,
        }
    }
    fn col(index: usize) -> Expr {
        Expr::Column { index, name: format!("c{index}"), ty: DataType::Int32, nullable: true }
    }
    /// `x IN (SELECT <column> FROM probe JOIN build ON k = k WHERE probe.w <> build.w)`.
    fn semi_over_join(column: usize, probe_rows: usize, build_rows: usize) -> LogicalPlan {
        let join = LogicalPlan::Join {
            probe: Box::new(scan("p", probe_rows)),
            build: Box::new(scan("b", build_rows)),
            probe_keys: vec![col(0)],
            build_keys: vec![col(0)],
            kind: JoinKind::Inner,
            residual: None,
        };
        let ne = Expr::Binary {
            op: BinaryOp::NotEq,
            left: Box::new(col(1)),
            right: Box::new(col(3)),
            ty: DataType::Boolean,
        };
        let filter = LogicalPlan::Filter { input: Box::new(join), predicate: ne };
        let project =
            LogicalPlan::Project { input: Box::new(filter), exprs: vec![col(column)], names: vec!["k".into()] };
        LogicalPlan::Join {
            probe: Box::new(scan("outer", 1000)),
            build: Box::new(project),
            probe_keys: vec![col(0)],
            build_keys: vec![col(0)],
            kind: JoinKind::Semi,
            residual: None,
        }
    }
    /// The rewritten subquery: (its projection, its join's probe table, build table, residual).
    fn subquery(plan: LogicalPlan) -> (Vec<Expr>, String, String, JoinKind, Option<Expr>) {
        let LogicalPlan::Join { build, .. } = ExistenceJoins.rewrite(plan).unwrap() else { panic!("a join") };
        let LogicalPlan::Project { input, exprs, .. } = *build else { panic!("a projection") };
        let join = match *input {
            LogicalPlan::Filter { input, .. } => *input,
            other => other,
        };
        let LogicalPlan::Join { probe, build, kind, residual, .. } = join else { panic!("a join") };
        let name = |p: &LogicalPlan| match p {
            LogicalPlan::Scan { table, .. } => table.clone(),
            other => panic!("{other}"),
        };
        (exprs, name(&probe), name(&build), kind, residual)
    }

    #[test]
    fn one_sides_values_become_a_semi_join() {
        // The probe side's column: the same hash table, the condition as the residual.
        let (exprs, probe, build, kind, residual) = subquery(semi_over_join(0, 100, 10));
        assert_eq!((exprs, probe.as_str(), build.as_str(), kind), (vec![col(0)], "p", "b", JoinKind::Semi));
        assert_eq!(residual.map(|r| r.to_string()), Some("(c1#1 <> c3#3)".to_string()));
        // The build side's, the sides as large: the sides swap, and the residual's columns.
        let (exprs, probe, build, kind, residual) = subquery(semi_over_join(2, 100, 100));
        assert_eq!((probe.as_str(), build.as_str(), kind), ("b", "p", JoinKind::Semi));
        assert_eq!(exprs.iter().map(|e| e.to_string()).collect::<Vec<_>>(), vec!["c2#0"]);
        assert_eq!(residual.map(|r| r.to_string()), Some("(c1#3 <> c3#1)".to_string()));
        // The build side's, which is smaller: hashing the probe side instead would cost
        // more, so the join stays.
        let (_, probe, build, kind, residual) = subquery(semi_over_join(2, 100, 10));
        assert_eq!((probe.as_str(), build.as_str(), kind, residual), ("p", "b", JoinKind::Inner, None));
    }
}
