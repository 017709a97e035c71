//! Pieces several operators share.

use crate::kernel_builder::KernelBuilder;
use crate::spec::Param;
use crate::types::{c_type, i64_literal};
use crate::value::Value;
use gpusql_common::{Error, Result};
use gpusql_plan::{Expr, ReplicatedTable};

/// Loads the columns the join keys read and evaluates the keys; also returns the C
/// condition "some key is NULL" when a key can be NULL.
pub fn key_values(k: &mut KernelBuilder, keys: &[Expr]) -> Result<(Vec<Value>, Option<String>)> {
    let refs: Vec<&Expr> = keys.iter().collect();
    k.load_columns(&refs);
    let kv: Vec<Value> = keys
        .iter()
        .map(|e| match constant_key(e) {
            Some(c) => Ok(Value::not_null(c)),
            None => k.eval(e),
        })
        .collect::<Result<_>>()?;
    let nulls: Vec<String> = kv.iter().filter(|v| !v.is_never_null()).map(|v| v.null.clone()).collect();
    Ok((kv, (!nulls.is_empty()).then(|| nulls.join(" || "))))
}

/// A join key that is an integer literal, as C text: unlike the query's constants (kernel
/// parameters, `literals.rs`) it stays in the source. Such a key is no constant of the
/// query's text: the planner joins an uncorrelated scalar subquery (one row) to its outer
/// query on the constant 0, the same in every query, and a key the compiler sees lets it
/// fold the hashing and the key bitmap test. (In the probe form with shared-memory tables
/// and key bitmaps that `Engine::all_cuda_sources` compiles, TPC-H Q22's bitmap excludes
/// the constant, the compiler drops the rest of the kernel and its shared memory with it;
/// with the key a parameter that kernel's tables, group cache and Lane Refill buffers
/// would take 51.7 KB of static shared memory, over the 48 KB a block may have.)
pub fn constant_key(e: &Expr) -> Option<String> {
    let Expr::Literal { value, ty } = e else { return None };
    let x = value.as_i128()?;
    match c_type(ty) {
        "int32_t" => i32::try_from(x).ok().map(|x| format!("((int32_t){x})")),
        "int64_t" => i64::try_from(x).ok().map(i64_literal),
        _ => None,
    }
}

/// The text of join keys for a comment (constant keys stay values, as in the code).
pub fn show_keys(k: &mut KernelBuilder, keys: &[Expr]) -> String {
    let text: Vec<String> =
        keys.iter().map(|e| if constant_key(e).is_some() { e.to_string() } else { k.show(e) }).collect();
    text.join(", ")
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
