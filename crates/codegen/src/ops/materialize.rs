//! Materialize: dense output positions by the atomic prefix sum of [Funke et al. 2018] with local
//! resolution and global propagation: ballot + popc inside the warp, a scan of the warp
//! counts in shared memory, and one atomicAdd per block on the global row counter. Where
//! warps do not move in step (Lane Refill) each warp reserves its own range instead.

use super::SinkOperator;
use crate::kernel_builder::KernelBuilder;
use crate::spec::{InitKernel, Param, Part, BLOCK_SIZE};
use crate::types::c_type;
use gpusql_common::{Result, Schema};

/// Writes the rows to intermediate `id`.
pub struct Materialize<'a> {
    pub id: usize,
    pub schema: &'a Schema,
}

impl SinkOperator for Materialize<'_> {
    fn consume(&self, k: &mut KernelBuilder, _entry: &str) -> Result<Option<InitKernel>> {
        write_rows(k, &format!("Materialize -> #{}", self.id), self.schema, &[])?;
        Ok(None)
    }
}

/// The prefix-sum write of the current row (and `extra` (pointer, value) pairs).
pub fn write_rows(k: &mut KernelBuilder, what: &str, schema: &Schema, extra: &[(String, String)]) -> Result<()> {
    let count = k.param(Param::OutCount, "unsigned long long*");
    let capacity = k.param(Param::OutCapacity, "const uint64_t");
    let warps = BLOCK_SIZE / 32;
    let block_sync = k.block_sync();
    // Columns of the source that were never read are loaded here.
    let all: Vec<usize> = (0..k.width()).collect();
    let loads: Vec<String> = all.iter().filter_map(|c| k.take_load(*c)).collect();
    if block_sync {
        k.pre().line(format!("__shared__ uint32_t warp_base_[{warps}];"));
        k.pre().line("__shared__ unsigned long long block_base_;");
        k.body().line(format!(
            "// ---- {what} (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----"
        ));
    } else {
        k.body().line(format!(
            "// ---- {what} (prefix-sum write: ballot/popc per warp, one atomicAdd per warp: warps run apart) ----"
        ));
    }
    if !loads.is_empty() {
        k.body().open("if (active)");
        for l in loads {
            k.body().line(l);
        }
        k.body().close();
    }
    let b = k.body();
    b.line("const uint32_t lane_ = threadIdx.x & 31;");
    b.line("const uint32_t ballot_ = __ballot_sync(FULL_MASK, active);");
    if block_sync {
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
    let row = k.row().to_vec();
    for (i, v) in row.iter().enumerate() {
        let ct = c_type(&schema.fields[i].ty);
        let out = k.param(Param::Output { column: i, part: Part::Values }, &format!("{ct}* __restrict__"));
        k.body().line(format!("{out}[pos_] = {};", v.v));
        if schema.fields[i].nullable {
            let valid = k.param(Param::Output { column: i, part: Part::Validity }, "uint8_t* __restrict__");
            k.body().line(format!("{valid}[pos_] = !{};", v.null));
        }
    }
    for (ptr, v) in extra {
        k.body().line(format!("{ptr}[pos_] = {v};"));
    }
    k.body().close();
    if block_sync {
        k.body().line("__syncthreads();");
    }
    Ok(())
}
