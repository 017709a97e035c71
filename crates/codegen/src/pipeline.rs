//! Assembles one pipeline's kernel: the source produces the row, each operator consumes
//! it in order, the sink consumes the last (see `ops/`).

use crate::kernel_builder::KernelBuilder;
use crate::ops::aggregate::global::GlobalAggregate;
use crate::ops::aggregate::hash::HashAggregate;
use crate::ops::aggregate::replicated::ReplicatedAggregate;
use crate::ops::filter::Filter;
use crate::ops::hash_build::HashBuild;
use crate::ops::hash_probe::{early_bitmap_probes, HashProbe, RefillPoint};
use crate::ops::lane_refill::{live_columns, LaneRefill};
use crate::ops::materialize::Materialize;
use crate::ops::project::Project;
use crate::ops::scan::Scan;
use crate::ops::{Operator, SinkOperator};
use crate::spec::{BuildHint, KernelSpec, Param};
use gpusql_common::Result;
use gpusql_plan::{Pipeline, PipelineOp, ReplicaUser, Sink};

/// Generates the kernel of pipeline `p` over a source of `rows` rows (which decides the
/// width of row indices). `builds` describes the hash tables it probes (known once they
/// are built): whether keys repeat and how large they are.
pub fn generate_pipeline(p: &Pipeline, builds: &[BuildHint], rows: u64) -> Result<KernelSpec> {
    let entry = format!("pipeline_{}", p.id);
    let mut k = KernelBuilder::new(p, builds, rows);
    k.param(Param::RowCount, "const uint64_t");
    k.param(Param::ErrorFlag, "int*");
    Scan(p).produce(&mut k);
    consume_operators(&mut k, p)?;
    let init = sink(p).consume(&mut k, &entry)?;
    Ok(k.finish(p, entry, init))
}

/// The operators of `p` in order. A Lane Refill right after a probe may move into the
/// probe, in front of its lookup (`HashProbe::refill_inside`), with the key bitmaps of
/// later probes that most rows reach tested there too.
fn consume_operators(k: &mut KernelBuilder, p: &Pipeline) -> Result<()> {
    let mut refill_done = false;
    // Probes whose key bitmap an earlier probe tested (their lookups cannot fail).
    let mut tested_early: Vec<usize> = vec![];
    for (i, op) in p.ops.iter().enumerate() {
        match op {
            // (Already placed inside the probe before it.)
            PipelineOp::LaneRefill { .. } if std::mem::take(&mut refill_done) => {}
            PipelineOp::LaneRefill { threshold, .. } => match i.checked_sub(1).map(|j| &p.ops[j]) {
                Some(PipelineOp::HashProbe { build, .. }) if tested_early.contains(build) => {
                    let what = format!("LaneRefill threshold={threshold}/32");
                    k.body().line(format!("// ---- {what}: left out, HashProbe #{build}'s key bitmap was tested before an earlier refill, so no row drops out here ----"));
                }
                _ => {
                    let live = live_columns(&p.ops[i + 1..], &p.sink, k.width());
                    LaneRefill { threshold: *threshold, live }.consume(k)?;
                }
            },
            PipelineOp::Filter(plan) => Filter(plan).consume(k)?,
            PipelineOp::Project { exprs, .. } => Project(exprs).consume(k)?,
            PipelineOp::HashProbe { build, keys, build_schema, multi_match, kind, residual, band, .. } => {
                let refill = match p.ops.get(i + 1) {
                    Some(PipelineOp::LaneRefill { threshold, .. }) => Some(RefillPoint {
                        threshold: *threshold,
                        live: live_columns(&p.ops[i..], &p.sink, k.width()),
                        early: early_bitmap_probes(k, &p.ops[i + 1..]),
                    }),
                    _ => None,
                };
                let probe = HashProbe {
                    build: *build,
                    keys,
                    build_schema,
                    mode: *multi_match,
                    kind: *kind,
                    residual: residual.as_ref(),
                    refill,
                    band: band.as_deref(),
                };
                refill_done = probe.refill_inside(k);
                if refill_done {
                    tested_early.extend(probe.refill.iter().flat_map(|r| r.early.iter().map(|(b, _, _)| *b)));
                }
                probe.consume(k)?;
            }
        }
        if !matches!(op, PipelineOp::LaneRefill { .. } | PipelineOp::Project { .. }) {
            k.mark_narrowed();
        }
    }
    Ok(())
}

/// The sink operator of `p`.
fn sink(p: &Pipeline) -> Box<dyn SinkOperator + '_> {
    match &p.sink {
        Sink::Materialize { id, schema } => Box::new(Materialize { id: *id, schema }),
        Sink::Aggregate { id, keys, states, register_groups, lane_group, .. } => {
            match p.replicated.iter().position(|r| r.user == ReplicaUser::Aggregate) {
                Some(replica) => Box::new(ReplicatedAggregate { id: *id, keys, states, replica }),
                None if keys.is_empty() => Box::new(GlobalAggregate { id: *id, states }),
                None => Box::new(HashAggregate {
                    id: *id,
                    keys,
                    states,
                    register_groups: *register_groups,
                    lane_group: *lane_group,
                }),
            }
        }
        Sink::HashBuild { id, keys, schema } => Box::new(HashBuild { id: *id, keys, schema }),
    }
}
