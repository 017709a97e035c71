//! HashBuild (a sink): inserts each row's key into the shared open-addressing table (one
//! group per distinct key, counting its rows) and writes the row (the payload) with the
//! prefix-sum write; the host then groups the payload by key (scan of the counts,
//! scatter), so a key's matches are one contiguous range for HashProbe.

use super::common::{group_table_params, key_values, show_keys};
use super::materialize::write_rows;
use super::SinkOperator;
use crate::hash_table::{emit_insert_with_runs, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use crate::spec::{InitKernel, Param, Part};
use crate::types::c_type;
use gpusql_common::{Result, Schema};
use gpusql_plan::Expr;

/// Builds hash table `id` over `keys`, with the rows (`schema`) as its payload.
pub struct HashBuild<'a> {
    pub id: usize,
    pub keys: &'a [Expr],
    pub schema: &'a Schema,
}

impl SinkOperator for HashBuild<'_> {
    fn consume(&self, k: &mut KernelBuilder, entry: &str) -> Result<Option<InitKernel>> {
        let (id, keys) = (self.id, self.keys);
        let key_text = show_keys(k, keys);
        k.body().line(format!(
            "// ---- HashBuild -> #{id} keys=[{key_text}] (global hash table, rows grouped by key) ----"
        ));
        let (slots, mask, max_groups) = group_table_params(k);
        let groups = k.param(Param::GroupCount, "unsigned long long*");
        let group_rows = k.param(Param::GroupRows, "uint32_t* __restrict__");
        let row_group = k.param(Param::RowGroup, "uint32_t* __restrict__");
        let multi = k.param(Param::MultiFlag, "int*");
        let mut arrays = vec![];
        for (i, e) in keys.iter().enumerate() {
            let ct = c_type(&e.ty());
            let values = k.param(Param::GroupKey { key: i, part: Part::Values }, &format!("{ct}* __restrict__"));
            arrays.push(KeyArrays { values, validity: None, ty: e.ty() });
        }
        k.body().line("int gid_ = -1;");
        k.body().open("if (active)");
        let (kv, any_null) = key_values(k, keys)?;
        // NULL keys never match: such rows stay out of the table.
        if let Some(any_null) = any_null {
            k.body().line(format!("active = !({any_null});"));
        }
        let runs = emit_insert_with_runs(k.body(), keys, &kv, &arrays, &slots, &mask, &max_groups, &groups, true);
        if runs {
            // The run's leader counts the whole run: one atomic per run, not per row.
            k.body().line(format!(
                "if (gid_ >= 0 && !follower_ && atomicAdd(&{group_rows}[gid_], run_len_) + run_len_ >= 2u) *{multi} = 1;"
            ));
        } else {
            k.body().line(format!("if (gid_ >= 0 && atomicAdd(&{group_rows}[gid_], 1u) == 1u) *{multi} = 1;"));
        }
        k.body().line("active = gid_ >= 0;");
        k.body().close();
        write_rows(k, &format!("HashBuild -> #{id} payload"), self.schema, &[(row_group, "(uint32_t)gid_".into())])?;

        let init_entry = format!("{entry}_init");
        k.add_device_code(&format!(
            "// Init of #{id}: empty hash slots\nextern \"C\" __global__ void {init_entry}(int* ht_slots, const uint32_t ht_mask) {{\n    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;\n    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;\n}}\n\n"
        ));
        Ok(Some(InitKernel { entry: init_entry, params: vec![Param::HashSlots, Param::HashMask] }))
    }
}
