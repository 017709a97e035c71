//! Materialize: dense output positions by the atomic prefix sum of [Funke et al. 2018] with local
//! resolution and global propagation: ballot + popc inside the warp, a scan of the warp
//! counts in shared memory, and one atomicAdd per block on the global row counter. Where
//! warps do not move in step (Lane Refill) each warp reserves its own range instead.

use crate::pipeline::PipelineGen;
use crate::types::c_type;
use crate::{Param, Part, BLOCK_SIZE};
use gpusql_common::{Result, Schema};

pub fn consume(g: &mut PipelineGen, id: usize, schema: &Schema) -> Result<()> {
    write_rows(g, &format!("Materialize -> #{id}"), schema, &[])
}

/// The prefix-sum write of the current row (and `extra` (pointer, value) pairs).
pub fn write_rows(g: &mut PipelineGen, what: &str, schema: &Schema, extra: &[(String, String)]) -> Result<()> {
    let count = g.param(Param::OutCount, "unsigned long long*");
    let capacity = g.param(Param::OutCapacity, "const uint64_t");
    let warps = BLOCK_SIZE / 32;
    // Columns of the source that were never read are loaded here.
    let all: Vec<usize> = (0..g.row.len()).collect();
    let loads: Vec<String> = all.iter().filter_map(|c| g.take_load(*c)).collect();
    if g.block_sync {
        g.pre.line(format!("__shared__ uint32_t warp_base_[{warps}];"));
        g.pre.line("__shared__ unsigned long long block_base_;");
        g.body.line(format!(
            "// ---- {what} (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----"
        ));
    } else {
        g.body.line(format!(
            "// ---- {what} (prefix-sum write: ballot/popc per warp, one atomicAdd per warp: warps run apart) ----"
        ));
    }
    if !loads.is_empty() {
        g.body.open("if (active)");
        for l in loads {
            g.body.line(l);
        }
        g.body.close();
    }
    let b = &mut g.body;
    b.line("const uint32_t lane_ = threadIdx.x & 31;");
    b.line("const uint32_t ballot_ = __ballot_sync(FULL_MASK, active);");
    if g.block_sync {
        b.line("const uint32_t warp_ = threadIdx.x >> 5;");
        b.line("if (lane_ == 0) warp_base_[warp_] = __popc(ballot_);");
        b.line("__syncthreads();");
        b.open("if (threadIdx.x == 0)");
        b.line("uint32_t total_ = 0;");
        b.line(format!("for (int w = 0; w < {warps}; w++) {{ const uint32_t c = warp_base_[w]; warp_base_[w] = total_; total_ += c; }}"));
        b.line(format!("block_base_ = total_ ? atomicAdd({count}, (unsigned long long)total_) : 0ull;"));
        b.close();
        b.line("__syncthreads();");
        b.line("const uint64_t pos_ = block_base_ + warp_base_[warp_] + __popc(ballot_ & ((1u << lane_) - 1u));");
        b.open(format!("if (active && pos_ < {capacity})"));
    } else {
        b.line("unsigned long long wbase_ = 0;");
        b.line(format!(
            "if (lane_ == 0 && ballot_ != 0u) wbase_ = atomicAdd({count}, (unsigned long long)__popc(ballot_));"
        ));
        b.line("wbase_ = __shfl_sync(FULL_MASK, wbase_, 0);");
        b.line("const uint64_t pos_ = wbase_ + __popc(ballot_ & ((1u << lane_) - 1u));");
        b.open(format!("if (active && pos_ < {capacity})"));
    }
    let row = g.row.clone();
    for (i, v) in row.iter().enumerate() {
        let ct = c_type(&schema.fields[i].ty);
        let out = g.param(Param::Output { column: i, part: Part::Values }, &format!("{ct}* __restrict__"));
        g.body.line(format!("{out}[pos_] = {};", v.v));
        if schema.fields[i].nullable {
            let valid = g.param(Param::Output { column: i, part: Part::Validity }, "uint8_t* __restrict__");
            g.body.line(format!("{valid}[pos_] = !{};", v.null));
        }
    }
    for (ptr, v) in extra {
        g.body.line(format!("{ptr}[pos_] = {v};"));
    }
    g.body.close();
    if g.block_sync {
        g.body.line("__syncthreads();");
    }
    Ok(())
}
