//! Scans read only the columns some operator above them uses: the bytes a query must read
//! are its bandwidth floor on the GPU.

use super::OptimizerRule;
use crate::expr::Expr;
use crate::logical::{JoinKind, LogicalPlan};
use gpusql_common::Result;

pub struct ProjectionPushdown;

impl OptimizerRule for ProjectionPushdown {
    fn name(&self) -> &'static str {
        "projection_pushdown"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        let all: Vec<usize> = (0..plan.schema().len()).collect();
        let (plan, _) = prune(plan, &all);
        Ok(plan)
    }
}

/// Prunes `plan` to the outputs `required` (at least) and returns the new plan with the
/// mapping from old output index to new (None where dropped).
fn prune(plan: LogicalPlan, required: &[usize]) -> (LogicalPlan, Vec<Option<usize>>) {
    let remap = |e: Expr, map: &[Option<usize>]| e.remap_columns(&|i| map[i].expect("required column kept"));
    match plan {
        LogicalPlan::Scan { table, table_schema, projection, rows, sample, statistics, chunks } => {
            let mut keep: Vec<usize> = required.to_vec();
            keep.sort_unstable();
            keep.dedup();
            let mut map = vec![None; projection.len()];
            for (new, old) in keep.iter().enumerate() {
                map[*old] = Some(new);
            }
            let projection = keep.iter().map(|i| projection[*i]).collect();
            (LogicalPlan::Scan { table, table_schema, projection, rows, sample, statistics, chunks }, map)
        }
        LogicalPlan::Filter { input, predicate } => {
            let mut req = required.to_vec();
            predicate.columns(&mut req);
            let (input, map) = prune(*input, &req);
            let predicate = remap(predicate, &map);
            (LogicalPlan::Filter { input: Box::new(input), predicate }, map)
        }
        LogicalPlan::Sort { input, keys } => {
            let mut req = required.to_vec();
            for k in &keys {
                k.expr.columns(&mut req);
            }
            let (input, map) = prune(*input, &req);
            let keys = keys
                .into_iter()
                .map(|mut k| {
                    k.expr = remap(k.expr, &map);
                    k
                })
                .collect();
            (LogicalPlan::Sort { input: Box::new(input), keys }, map)
        }
        LogicalPlan::Limit { input, skip, fetch } => {
            let (input, map) = prune(*input, required);
            (LogicalPlan::Limit { input: Box::new(input), skip, fetch }, map)
        }
        LogicalPlan::CrossJoin { left, right } => {
            let nl = left.schema().len();
            let (l, r) = split_required(required, nl);
            let (left, lmap) = prune(*left, &l);
            let (right, rmap) = prune(*right, &r);
            let map = join_map(&lmap, &rmap, left.schema().len());
            (LogicalPlan::CrossJoin { left: Box::new(left), right: Box::new(right) }, map)
        }
        LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } => {
            let outputs_build = matches!(kind, JoinKind::Inner | JoinKind::Left);
            let old_np = probe.schema().len();
            let np = if outputs_build { old_np } else { usize::MAX };
            // A mark join's own column (old_np) comes from neither input.
            let required: Vec<usize> = required.iter().copied().filter(|i| outputs_build || *i < old_np).collect();
            let (mut p, mut b) = split_required(&required, np);
            if let Some(r) = &residual {
                let mut cols = vec![];
                r.columns(&mut cols);
                let (rp, rb) = split_required(&cols, old_np);
                p.extend(rp);
                b.extend(rb);
            }
            for k in &probe_keys {
                k.columns(&mut p);
            }
            for k in &build_keys {
                k.columns(&mut b);
            }
            let (probe, pmap) = prune(*probe, &p);
            let (build, bmap) = prune(*build, &b);
            let probe_keys = probe_keys.into_iter().map(|e| remap(e, &pmap)).collect();
            let build_keys = build_keys.into_iter().map(|e| remap(e, &bmap)).collect();
            let residual = residual.map(|r| remap(r, &join_map(&pmap, &bmap, probe.schema().len())));
            // Semi/anti joins output the probe side only, mark joins and their mark column.
            let map = match kind {
                JoinKind::Inner | JoinKind::Left => join_map(&pmap, &bmap, probe.schema().len()),
                JoinKind::Mark => pmap.into_iter().chain([Some(probe.schema().len())]).collect(),
                JoinKind::Semi | JoinKind::Anti => pmap,
            };
            (
                LogicalPlan::Join {
                    probe: Box::new(probe),
                    build: Box::new(build),
                    probe_keys,
                    build_keys,
                    kind,
                    residual,
                },
                map,
            )
        }
        LogicalPlan::Project { input, exprs, names } => {
            // Only the outputs someone above reads are computed (the root asks for all).
            let mut keep: Vec<usize> = required.iter().copied().filter(|i| *i < exprs.len()).collect();
            keep.sort_unstable();
            keep.dedup();
            let mut req = vec![];
            for i in &keep {
                exprs[*i].columns(&mut req);
            }
            let (input, map) = prune(*input, &req);
            let mut out_map = vec![None; exprs.len()];
            let (mut new_exprs, mut new_names) = (vec![], vec![]);
            for (new, old) in keep.iter().enumerate() {
                out_map[*old] = Some(new);
                new_exprs.push(remap(exprs[*old].clone(), &map));
                new_names.push(names[*old].clone());
            }
            (LogicalPlan::Project { input: Box::new(input), exprs: new_exprs, names: new_names }, out_map)
        }
        LogicalPlan::Enumerate { input, partition } => {
            // The position column stays (it is last); the input keeps what is read of it.
            let width = input.schema().len();
            let req: Vec<usize> = required.iter().copied().filter(|i| *i < width).collect();
            let (input, mut map) = prune(*input, &req);
            map.push(Some(input.schema().len()));
            (LogicalPlan::Enumerate { input: Box::new(input), partition }, map)
        }
        LogicalPlan::ConcatRuns { input, keys, value, position, separator } => {
            // The input stays in its order (an Enumerate keeps the columns it is asked for
            // in their order, and its position last).
            let req: Vec<usize> = keys.iter().copied().chain([value, position]).collect();
            let (input, map) = prune(*input, &req);
            let at = |i: usize| map[i].expect("required column kept");
            let keys: Vec<usize> = keys.into_iter().map(at).collect();
            let (value, position) = (at(value), at(position));
            let out_map = (0..=keys.len()).map(Some).collect();
            (LogicalPlan::ConcatRuns { input: Box::new(input), keys, value, position, separator }, out_map)
        }
        LogicalPlan::Window { input, windows } => {
            // The input keeps what is read above and what the windows read; the windows'
            // columns follow it, all kept.
            let width = input.schema().len();
            let mut req: Vec<usize> = required.iter().copied().filter(|i| *i < width).collect();
            for w in &windows {
                w.args.iter().chain(&w.partition_by).for_each(|e| e.columns(&mut req));
                w.order_by.iter().for_each(|k| k.expr.columns(&mut req));
            }
            let (input, map) = prune(*input, &req);
            let remap_all = |v: Vec<Expr>| v.into_iter().map(|e| remap(e, &map)).collect();
            let windows: Vec<crate::window::WindowExpr> = windows
                .into_iter()
                .map(|mut w| {
                    w.args = remap_all(w.args);
                    w.partition_by = remap_all(w.partition_by);
                    for k in w.order_by.iter_mut() {
                        k.expr = remap(k.expr.clone(), &map);
                    }
                    w
                })
                .collect();
            let kept = input.schema().len();
            let mut out_map = map;
            out_map.extend((0..windows.len()).map(|j| Some(kept + j)));
            (LogicalPlan::Window { input: Box::new(input), windows }, out_map)
        }
        LogicalPlan::Repeat { input, times } => {
            let mut req = required.to_vec();
            times.columns(&mut req);
            let (input, map) = prune(*input, &req);
            let times = remap(times, &map);
            (LogicalPlan::Repeat { input: Box::new(input), times }, map)
        }
        LogicalPlan::Union { inputs, schema } => {
            // Every arm keeps the same columns, in the same order: each is pruned, then
            // cut to exactly those by a projection where it kept more.
            let mut keep: Vec<usize> = required.to_vec();
            keep.sort_unstable();
            keep.dedup();
            let inputs = inputs
                .into_iter()
                .map(|arm| {
                    let (arm, map) = prune(arm, &keep);
                    let arm_schema = arm.schema();
                    let picks: Vec<usize> = keep.iter().map(|i| map[*i].expect("required column kept")).collect();
                    if picks.iter().copied().eq(0..arm_schema.len()) {
                        return arm;
                    }
                    let exprs = picks
                        .iter()
                        .map(|i| {
                            let f = &arm_schema.fields[*i];
                            Expr::Column { index: *i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
                        })
                        .collect();
                    let names = picks.iter().map(|i| arm_schema.fields[*i].name.clone()).collect();
                    LogicalPlan::Project { input: Box::new(arm), exprs, names }
                })
                .collect();
            let mut map = vec![None; schema.len()];
            for (new, old) in keep.iter().enumerate() {
                map[*old] = Some(new);
            }
            let schema = gpusql_common::Schema::new(keep.iter().map(|i| schema.fields[*i].clone()).collect());
            (LogicalPlan::Union { inputs, schema }, map)
        }
        LogicalPlan::Aggregate { input, group_by, group_names, aggs } => {
            let mut req = vec![];
            for e in &group_by {
                e.columns(&mut req);
            }
            for a in &aggs {
                if let Some(e) = &a.arg {
                    e.columns(&mut req);
                }
            }
            let (input, map) = prune(*input, &req);
            let group_by: Vec<Expr> = group_by.into_iter().map(|e| remap(e, &map)).collect();
            let aggs: Vec<_> = aggs
                .into_iter()
                .map(|mut a| {
                    a.arg = a.arg.map(|e| remap(e, &map));
                    a
                })
                .collect();
            let n = group_by.len() + aggs.len();
            (LogicalPlan::Aggregate { input: Box::new(input), group_by, group_names, aggs }, (0..n).map(Some).collect())
        }
    }
}

/// Splits output indices of a two-input node into left and right input indices.
fn split_required(required: &[usize], left_len: usize) -> (Vec<usize>, Vec<usize>) {
    let l = required.iter().filter(|i| **i < left_len).copied().collect();
    let r = required.iter().filter(|i| **i >= left_len).map(|i| i - left_len).collect();
    (l, r)
}

/// Output mapping of a two-input node from its inputs' mappings.
fn join_map(lmap: &[Option<usize>], rmap: &[Option<usize>], new_left_len: usize) -> Vec<Option<usize>> {
    lmap.iter().copied().chain(rmap.iter().map(|m| m.map(|i| i + new_left_len))).collect()
}
