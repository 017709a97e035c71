//! Logical optimizer: a list of rules, each a `name()` and a `rewrite()`, applied in order.

mod constant_folding;
mod existence_joins;
mod join_planning;
mod move_constants;
mod projection_pushdown;
mod row_group_pruning;
mod union_pushdown;

use crate::logical::LogicalPlan;
use gpusql_common::Result;

pub use constant_folding::ConstantFolding;
pub use existence_joins::ExistenceJoins;
pub use join_planning::JoinPlanning;
pub use projection_pushdown::ProjectionPushdown;
pub use row_group_pruning::RowGroupPruning;
pub use union_pushdown::UnionPushdown;

pub trait OptimizerRule {
    fn name(&self) -> &'static str;
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan>;
}

pub fn default_rules() -> Vec<Box<dyn OptimizerRule>> {
    // Projection pushdown also runs first, so join planning weighs each table by the
    // columns the query reads of it (and filters and aggregations moved into a UNION
    // ALL's arms read only the columns needed). Row groups are pruned once join planning has put
    // each table's filters on its scan. Existence joins
    // rewrite the inner joins join planning made.
    vec![
        Box::new(ConstantFolding),
        Box::new(ProjectionPushdown),
        Box::new(UnionPushdown),
        Box::new(JoinPlanning),
        Box::new(ExistenceJoins),
        Box::new(RowGroupPruning),
        Box::new(ProjectionPushdown),
    ]
}

pub fn optimize(mut plan: LogicalPlan) -> Result<LogicalPlan> {
    for rule in default_rules() {
        plan = rule.rewrite(plan)?;
    }
    Ok(plan)
}

/// Applies `f` to every expression of one plan node (not its inputs).
pub(crate) fn map_node_exprs(
    plan: LogicalPlan,
    f: &mut dyn FnMut(crate::expr::Expr) -> Result<crate::expr::Expr>,
) -> Result<LogicalPlan> {
    Ok(match plan {
        LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter { input, predicate: f(predicate)? },
        LogicalPlan::Project { input, exprs, names } => {
            LogicalPlan::Project { input, exprs: exprs.into_iter().map(&mut *f).collect::<Result<_>>()?, names }
        }
        LogicalPlan::Aggregate { input, group_by, group_names, aggs } => LogicalPlan::Aggregate {
            input,
            group_by: group_by.into_iter().map(&mut *f).collect::<Result<_>>()?,
            group_names,
            aggs: aggs
                .into_iter()
                .map(|mut a| {
                    a.arg = a.arg.map(&mut *f).transpose()?;
                    Ok(a)
                })
                .collect::<Result<_>>()?,
        },
        LogicalPlan::Sort { input, keys } => LogicalPlan::Sort {
            input,
            keys: keys
                .into_iter()
                .map(|mut k| {
                    k.expr = f(k.expr)?;
                    Ok(k)
                })
                .collect::<Result<_>>()?,
        },
        LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } => LogicalPlan::Join {
            probe,
            build,
            kind,
            residual: residual.map(&mut *f).transpose()?,
            probe_keys: probe_keys.into_iter().map(&mut *f).collect::<Result<_>>()?,
            build_keys: build_keys.into_iter().map(&mut *f).collect::<Result<_>>()?,
        },
        LogicalPlan::Repeat { input, times } => LogicalPlan::Repeat { input, times: f(times)? },
        LogicalPlan::Window { input, windows } => LogicalPlan::Window {
            input,
            windows: windows
                .into_iter()
                .map(|mut w| {
                    w.args = w.args.into_iter().map(&mut *f).collect::<Result<_>>()?;
                    w.partition_by = w.partition_by.into_iter().map(&mut *f).collect::<Result<_>>()?;
                    for k in w.order_by.iter_mut() {
                        k.expr = f(k.expr.clone())?;
                    }
                    Ok(w)
                })
                .collect::<Result<_>>()?,
        },
        other => other,
    })
}

/// Rewrites every node bottom-up.
pub(crate) fn map_plan(
    plan: LogicalPlan,
    f: &mut dyn FnMut(LogicalPlan) -> Result<LogicalPlan>,
) -> Result<LogicalPlan> {
    let mut child = |b: Box<LogicalPlan>| -> Result<Box<LogicalPlan>> { Ok(Box::new(map_plan(*b, f)?)) };
    let rebuilt = match plan {
        LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter { input: child(input)?, predicate },
        LogicalPlan::Project { input, exprs, names } => LogicalPlan::Project { input: child(input)?, exprs, names },
        LogicalPlan::Aggregate { input, group_by, group_names, aggs } => {
            LogicalPlan::Aggregate { input: child(input)?, group_by, group_names, aggs }
        }
        LogicalPlan::Sort { input, keys } => LogicalPlan::Sort { input: child(input)?, keys },
        LogicalPlan::Limit { input, skip, fetch } => LogicalPlan::Limit { input: child(input)?, skip, fetch },
        LogicalPlan::CrossJoin { left, right } => LogicalPlan::CrossJoin { left: child(left)?, right: child(right)? },
        LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } => {
            LogicalPlan::Join { probe: child(probe)?, build: child(build)?, probe_keys, build_keys, kind, residual }
        }
        LogicalPlan::Repeat { input, times } => LogicalPlan::Repeat { input: child(input)?, times },
        LogicalPlan::Enumerate { input, partition } => LogicalPlan::Enumerate { input: child(input)?, partition },
        LogicalPlan::ConcatRuns { input, keys, value, position, separator } => {
            LogicalPlan::ConcatRuns { input: child(input)?, keys, value, position, separator }
        }
        LogicalPlan::Window { input, windows } => LogicalPlan::Window { input: child(input)?, windows },
        LogicalPlan::Union { inputs, schema } => {
            LogicalPlan::Union { inputs: inputs.into_iter().map(|i| map_plan(i, f)).collect::<Result<_>>()?, schema }
        }
        scan => scan,
    };
    f(rebuilt)
}
