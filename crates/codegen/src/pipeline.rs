//! Assembles one pipeline's kernel: source (scan), operators (consume in order), sink.

use crate::emit::Emitter;
use crate::expr::Value;
use crate::{aggregate, filter, materialize, project, scan, KernelSpec, Param, BLOCK_SIZE, PRELUDE};
use gpusql_common::Result;
use gpusql_plan::{Expr, Pipeline, PipelineOp, Sink};

pub struct PipelineGen {
    /// Code before the row loop (accumulators, shared memory).
    pub pre: Emitter,
    /// The row loop's body.
    pub body: Emitter,
    /// Code after the row loop (block reductions, flushes).
    pub post: Emitter,
    /// Extra device functions or kernels of this module.
    pub extra: String,
    pub params: Vec<(Param, String, String)>,
    /// Current row values.
    pub row: Vec<Value>,
    /// Load statements of source columns not yet loaded (None: loaded or computed).
    pub pending_loads: Vec<Option<String>>,
    pub next_project: usize,
}

impl PipelineGen {
    /// Declares (once) a kernel parameter and returns its C name.
    pub fn param(&mut self, p: Param, c_decl: &str) -> String {
        if let Some((_, _, name)) = self.params.iter().find(|(q, _, _)| *q == p) {
            return name.clone();
        }
        let name = match &p {
            Param::RowCount => "n_rows".to_string(),
            Param::Input { column, part } => format!("in{column}_{}", format!("{part:?}").to_lowercase()),
            Param::Output { column, part } => format!("out{column}_{}", format!("{part:?}").to_lowercase()),
            Param::OutCount => "out_count".into(),
            Param::State { index } => format!("state{index}"),
            Param::HashSlots => "ht_slots".into(),
            Param::HashMask => "ht_mask".into(),
            Param::MaxGroups => "max_groups".into(),
            Param::ErrorFlag => "err".into(),
        };
        self.params.push((p, c_decl.to_string(), name.clone()));
        name
    }

    /// Emits the loads of the source columns `exprs` read that are not loaded yet (at the
    /// operator's top level, so every later use sees them).
    pub fn load_columns(&mut self, exprs: &[&Expr]) {
        let mut cols = vec![];
        for e in exprs {
            e.columns(&mut cols);
        }
        cols.sort_unstable();
        for c in cols {
            if let Some(load) = self.pending_loads.get_mut(c).and_then(|l| l.take()) {
                self.body.line(load);
            }
        }
    }
}

pub fn generate_pipeline(p: &Pipeline) -> Result<KernelSpec> {
    let entry = format!("pipeline_{}", p.id);
    let mut g = PipelineGen {
        pre: Emitter::default(),
        body: Emitter { indent: 2, ..Default::default() },
        post: Emitter { indent: 1, ..Default::default() },
        extra: String::new(),
        params: vec![],
        row: vec![],
        pending_loads: vec![],
        next_project: 0,
    };
    g.pre.indent = 1;
    g.param(Param::RowCount, "const uint64_t");
    g.param(Param::ErrorFlag, "int*");
    scan::declare(&mut g, &p.source);
    for op in &p.ops {
        match op {
            PipelineOp::Filter(pred) => filter::consume(&mut g, pred)?,
            PipelineOp::Project { exprs, .. } => project::consume(&mut g, exprs)?,
        }
    }
    let init = match &p.sink {
        Sink::Materialize { id, schema } => {
            materialize::consume(&mut g, *id, schema)?;
            None
        }
        Sink::Aggregate { id, keys, states, .. } => Some(aggregate::consume(&mut g, *id, keys, states, &entry)?),
    };

    let params: Vec<String> = g.params.iter().map(|(_, decl, name)| format!("{decl} {name}")).collect();
    let mut src = String::new();
    src.push_str(PRELUDE);
    src.push_str(&format!("\n// ======== Pipeline {} ========\n", p.id));
    src.push_str(&g.extra);
    src.push_str(&format!(
        "extern \"C\" __global__ void __launch_bounds__({BLOCK_SIZE}) {entry}(\n    {})\n{{\n",
        params.join(",\n    ")
    ));
    src.push_str(&g.pre.code);
    src.push_str("    const uint64_t stride_ = (uint64_t)gridDim.x * blockDim.x;\n");
    src.push_str("    for (uint64_t base_ = (uint64_t)blockIdx.x * blockDim.x; base_ < n_rows; base_ += stride_) {\n");
    src.push_str("        const uint64_t row = base_ + threadIdx.x;\n        bool active = row < n_rows;\n");
    src.push_str(&g.body.code);
    src.push_str("    }\n");
    src.push_str(&g.post.code);
    src.push_str("}\n");
    Ok(KernelSpec { source: src, entry, params: g.params.into_iter().map(|(p, _, _)| p).collect(), init })
}
