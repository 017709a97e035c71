//! GlobalAggregate (no keys): per-thread accumulators over the row loop, then a warp
//! shuffle reduction, a block reduction in shared memory and one atomic per block and
//! state.

use super::{arg_values, contribution, declare_args, declare_states, eval_args, init_kernel};
use crate::kernel_builder::KernelBuilder;
use crate::ops::SinkOperator;
use crate::spec::{InitKernel, BLOCK_SIZE};
use crate::types::less_call;
use gpusql_common::Result;
use gpusql_plan::{AggState, Expr};

/// Aggregates every row into one group: the states of aggregation `id`.
pub struct GlobalAggregate<'a> {
    pub id: usize,
    pub states: &'a [AggState],
}

impl SinkOperator for GlobalAggregate<'_> {
    fn consume(&self, k: &mut KernelBuilder, entry: &str) -> Result<Option<InitKernel>> {
        let (id, states) = (self.id, self.states);
        let (codes, ptrs) = declare_states(k, states)?;
        let names: Vec<String> = states.iter().map(|s| k.show_state(s)).collect();
        let arg_vals = arg_values(states);
        let all_exprs: Vec<&Expr> = states.iter().filter_map(|s| s.arg.as_ref()).collect();
        k.body().line(format!(
            "// ---- GlobalAggregate -> #{id} [{}] (block reduction, one atomic per block) ----",
            names.join(", ")
        ));
        for (j, c) in codes.iter().enumerate() {
            k.pre().line(format!("{} acc{j}_ = {};", c.ct, c.identity));
        }
        declare_args(k, states);
        k.body().open("if (active)");
        k.load_columns(&all_exprs);
        eval_args(k, states)?;
        for (j, (s, c)) in states.iter().zip(&codes).enumerate() {
            let contrib = contribution(s, c, &arg_vals[j], "true");
            let update = match c.reduce {
                "sum" => format!("acc{j}_ += {contrib};"),
                // (Their identity is a "no value" mark: str_min / iv_min skip it.)
                r if matches!(c.ct, "Str" | "Interval") => format!("acc{j}_ = {}_{r}(acc{j}_, {contrib});", c.suffix),
                "min" => format!(
                    "{{ const {} x_ = {contrib}; if ({}) acc{j}_ = x_; }}",
                    c.ct,
                    less_call(c.ct, "x_", &format!("acc{j}_"))
                ),
                _ => format!(
                    "{{ const {} x_ = {contrib}; if ({}) acc{j}_ = x_; }}",
                    c.ct,
                    less_call(c.ct, &format!("acc{j}_"), "x_")
                ),
            };
            k.body().line(update);
        }
        k.body().close();
        let warps = BLOCK_SIZE / 32;
        let p = k.post();
        p.line("// GlobalAggregate: warp shuffle reduction, block reduction in shared memory, one atomic per block");
        p.line("const uint32_t lane_ = threadIdx.x & 31, warp_ = threadIdx.x >> 5;");
        for (j, c) in codes.iter().enumerate() {
            p.open("");
            p.line(format!("__shared__ {} red_[{warps}];", c.ct));
            p.line(format!("{} v_ = warp_{}_{}(acc{j}_);", c.ct, c.reduce, c.suffix));
            p.line("if (lane_ == 0) red_[warp_] = v_;");
            p.line("__syncthreads();");
            p.open("if (warp_ == 0)");
            p.line(format!("v_ = lane_ < {warps} ? red_[lane_] : {};", c.identity));
            p.line(format!("v_ = warp_{}_{}(v_);", c.reduce, c.suffix));
            p.line(format!("if (lane_ == 0) atomic_{}_{}({}, v_);", c.atomic, c.suffix, ptrs[j]));
            p.close();
            p.close();
        }
        Ok(Some(init_kernel(k, id, false, &codes, entry)))
    }
}
