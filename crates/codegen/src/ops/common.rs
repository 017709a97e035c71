//! Pieces several operators share.

use crate::kernel_builder::KernelBuilder;
use crate::spec::Param;
use crate::value::Value;
use gpusql_common::{Error, Result};
use gpusql_plan::{Expr, ReplicatedTable};

/// Loads the columns the join keys read and evaluates the keys; also returns the C
/// condition "some key is NULL" when a key can be NULL.
pub fn key_values(k: &mut KernelBuilder, keys: &[Expr]) -> Result<(Vec<Value>, Option<String>)> {
    let refs: Vec<&Expr> = keys.iter().collect();
    k.load_columns(&refs);
    let kv: Vec<Value> = keys.iter().map(|e| k.eval(e)).collect::<Result<_>>()?;
    let nulls: Vec<String> = kv.iter().filter(|v| !v.is_never_null()).map(|v| v.null.clone()).collect();
    Ok((kv, (!nulls.is_empty()).then(|| nulls.join(" || "))))
}

/// The kernel parameters of a sink's group hash table: slots, mask, group capacity.
pub fn group_table_params(k: &mut KernelBuilder) -> (String, String, String) {
    let slots = k.param(Param::HashSlots, "int* __restrict__");
    let mask = k.param(Param::HashMask, "const uint32_t");
    let max_groups = k.param(Param::MaxGroups, "const uint32_t");
    (slots, mask, max_groups)
}

/// Checks that `keys` is the single source column `rt` was placed for (the rows' slots
/// stand for that column's values, nothing else).
pub fn check_replicated_key(keys: &[Expr], rt: &ReplicatedTable) -> Result<()> {
    match keys {
        [Expr::Column { index, .. }] if *index == rt.source_column => Ok(()),
        _ => Err(Error::exec(format!("replicated table of source column {} used for keys {keys:?}", rt.source_column))),
    }
}
