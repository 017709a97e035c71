//! HashAggregate over a bank-replicated shared-memory group table (`ReplicatedAggregate`).

use super::{
    arg_values, declare_args, declare_states, eval_args, group_table, init_kernel, lane_updates, partial_code,
    StateCode,
};
use crate::hash_table::{emit_insert, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use crate::ops::common::check_replicated_key;
use crate::ops::SinkOperator;
use crate::spec::{InitKernel, Param, Part, ReplicaPart};
use crate::types::c_type;
use crate::value::Value;
use gpusql_common::Result;
use gpusql_plan::{AggState, Expr};

/// HashAggregate over a bank-replicated shared-memory group table ([Sitaridi 2016] §3.4, writes):
/// a row accumulates into the slot the load-time placement gave it (`rp_slots[row]`, in a
/// distinct bank and a distinct copy from the other lanes of its warp), with no hash
/// lookup per row; after the loop each block merges every slot its rows touched into the
/// global group of the slot's key (found or inserted in the global hash table).
pub struct ReplicatedAggregate<'a> {
    pub id: usize,
    pub keys: &'a [Expr],
    pub states: &'a [AggState],
    /// The pipeline's replicated table (`Pipeline::replicated[replica]`).
    pub replica: usize,
}

impl SinkOperator for ReplicatedAggregate<'_> {
    fn consume(&self, k: &mut KernelBuilder, entry: &str) -> Result<Option<InitKernel>> {
        let (id, keys, states, r) = (self.id, self.keys, self.states, self.replica);
        let rt = k.replicated(r).clone();
        check_replicated_key(keys, &rt)?;
        let (codes, ptrs) = declare_states(k, states)?;
        let names: Vec<String> = states.iter().map(|s| k.show_state(s)).collect();
        let [slots, mask, max_groups, count] = group_table(k, id, keys, &names, &rt.to_string());
        let kt = keys[0].ty();
        let ct = c_type(&kt);
        let key_values = k.param(Param::Output { column: 0, part: Part::Values }, &format!("{ct}* __restrict__"));
        let row_slots =
            k.param(Param::Replica { index: r, part: ReplicaPart::RowSlots }, "const uint16_t* __restrict__");
        let slot_values =
            k.param(Param::Replica { index: r, part: ReplicaPart::SlotValues }, &format!("const {ct}* __restrict__"));
        let n = rt.summary.slots;
        // Block partials narrower than the states where a block's rows cannot overflow them
        // (fewer than 2^31 rows per block, checked below): counts in 32 bits, sums of 32-bit
        // integers in 64 (half the shared memory, and no 128-bit atomics).
        let partials: Vec<StateCode> =
            states.iter().zip(&codes).map(|(s, c)| partial_code(s, c)).collect::<Result<_>>()?;

        k.pre().line(format!(
            "// HashAggregate #{id}: per slot, the block's partial states and whether its rows touched it"
        ));
        k.pre().line("// (32-bit counts and 64-bit sums of 32-bit values hold while a block takes < 2^31 rows)");
        k.pre().line(
            "if (n_rows / gridDim.x >= (1ull << 31)) { if (threadIdx.x == 0) raise_error(err, ERR_OVERFLOW); return; }",
        );
        for (j, c) in partials.iter().enumerate() {
            k.pre().line(format!("__shared__ {} rs{j}_[{n}];", c.ct));
            k.pre().line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) rs{j}_[i] = {};", c.identity));
        }
        k.pre().line(format!("__shared__ uint8_t rs_hit_[{n}];"));
        k.pre().line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) rs_hit_[i] = 0;"));
        k.pre().line("__syncthreads();");

        declare_args(k, states);
        k.body().open("if (active)");
        let args: Vec<&Expr> = states.iter().filter_map(|s| s.arg.as_ref()).collect();
        k.load_columns(&args);
        eval_args(k, states)?;
        k.body().line(format!("const uint32_t s_ = {row_slots}[row];"));
        k.body().line("rs_hit_[s_] = 1;");
        for line in lane_updates(states, &partials, &arg_values(states), |j| format!("&rs{j}_[s_]")) {
            k.body().line(line);
        }
        k.body().close();

        let p = k.post();
        p.line("// merge: each slot the block touched into its key's global group");
        p.line("__syncthreads();");
        p.open(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x)"));
        p.line("const bool active = rs_hit_[i] != 0;");
        // (A full group table is reported as if found at the last row.)
        p.line("const uint64_t row = n_rows - 1;");
        p.line("int gid_ = -1;");
        p.line(format!("const {ct} k_ = {slot_values}[i];"));
        p.open("if (active)");
        let arrays = [KeyArrays { values: key_values, validity: None, ty: kt }];
        emit_insert(p, &[Value::not_null("k_")], &arrays, &slots, &mask, &max_groups, &count);
        p.close();
        p.open("if (gid_ >= 0)");
        for (j, (c, pc)) in codes.iter().zip(&partials).enumerate() {
            let untouched = format!("rs{j}_[i] == {}", pc.identity);
            p.line(format!(
                "if (!({untouched})) atomic_{a}_{sfx}(&{ptr}[gid_], ({ct})rs{j}_[i]);",
                a = c.atomic,
                sfx = c.suffix,
                ptr = ptrs[j],
                ct = c.ct
            ));
        }
        p.close();
        p.close();
        Ok(Some(init_kernel(k, id, true, &codes, entry)))
    }
}
