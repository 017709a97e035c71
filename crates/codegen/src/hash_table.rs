//! The open-addressing hash table shared by HashAggregate and HashBuild (insert) and
//! HashProbe (lookup). A slot holds a dense group id (-1 empty, -2 being written, -3 full);
//! the keys of group g live in per-key arrays at index g.

use crate::device_constants::HASH_SEED;
use crate::emit::Emitter;
use crate::types::{eq_call, hash_call};
use crate::value::Value;
use gpusql_common::DataType;

/// Key arrays of a table: values pointer, optional validity pointer, type.
pub struct KeyArrays {
    pub values: String,
    pub validity: Option<String>,
    pub ty: DataType,
}

/// Emits `h_` = the hash of the key values (NULL hashes to a constant).
pub fn emit_hash(b: &mut Emitter, kv: &[Value], keys: &[KeyArrays]) {
    b.line(format!("uint64_t h_ = {HASH_SEED:#x}ull;"));
    for (v, k) in kv.iter().zip(keys) {
        let h = hash_call(&k.ty, &v.v);
        if v.is_never_null() {
            b.line(format!("h_ = hash_combine(h_, {h});"));
        } else {
            b.line(format!("h_ = hash_combine(h_, {} ? 0x5bd1e995ull : {h});", v.null));
        }
    }
}

/// Whether group `at`'s keys equal `kv` (NULL equals NULL, as GROUP BY wants). `load`
/// wraps each array read (ld_cg while other blocks may still be inserting).
fn keys_equal(kv: &[Value], keys: &[KeyArrays], at: &str, load: &str) -> String {
    let mut conds = vec![];
    for (v, k) in kv.iter().zip(keys) {
        let stored = format!("{load}(&{}[{at}])", k.values);
        let eq = match k.ty {
            // (The bytes too: the key may be a string another thread just made.)
            DataType::Utf8 if load == "ld_cg" => format!("str_eq_cg({}, {stored})", v.v),
            _ => eq_call(&k.ty, &v.v, &stored),
        };
        conds.push(match &k.validity {
            None => eq,
            Some(valid) => {
                format!("({} ? {load}(&{valid}[{at}]) == 0 : ({load}(&{valid}[{at}]) != 0 && {eq}))", v.null)
            }
        });
    }
    if conds.is_empty() {
        "true".into()
    } else {
        conds.join(" && ")
    }
}

/// Finds or inserts the group of `kv`; leaves its id in `gid_` (-1 when the table is full,
/// which raises ERR_GROUPS_FULL so the host retries with a larger table).
pub fn emit_insert(
    b: &mut Emitter,
    kv: &[Value],
    keys: &[KeyArrays],
    slots: &str,
    mask: &str,
    max_groups: &str,
    group_count: &str,
) {
    emit_hash(b, kv, keys);
    emit_insert_hashed(b, kv, keys, slots, mask, max_groups, group_count);
}

/// [`emit_insert`] where the keys' hash `h_` (of [`emit_hash`]) is in scope already.
pub fn emit_insert_hashed(
    b: &mut Emitter,
    kv: &[Value],
    keys: &[KeyArrays],
    slots: &str,
    mask: &str,
    max_groups: &str,
    group_count: &str,
) {
    b.line(format!("uint32_t slot_ = (uint32_t)h_ & {mask};"));
    b.open(format!("for (uint32_t probe_ = 0; probe_ <= {mask}; probe_++)"));
    b.line(format!("int cur_ = *(volatile int*)&{slots}[slot_];"));
    b.open("if (cur_ == -1)");
    b.line(format!("cur_ = atomicCAS(&{slots}[slot_], -1, -2);"));
    b.open("if (cur_ == -1)");
    b.line(format!("const unsigned long long g_ = warp_aggregated_inc({group_count});"));
    // err[1] = n_rows - the first row that found the table full (0: none), from which the
    // host extrapolates the number of groups.
    b.line(format!("if (g_ >= {max_groups}) {{ raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&{slots}[slot_], -3); break; }}"));
    for (v, k) in kv.iter().zip(keys) {
        b.line(format!("{}[g_] = {};", k.values, v.v));
        if let Some(valid) = &k.validity {
            b.line(format!("{valid}[g_] = !{};", v.null));
        }
    }
    // Keys are visible before the slot says the group exists.
    b.line("__threadfence();");
    b.line(format!("atomicExch(&{slots}[slot_], (int)g_);"));
    b.line("gid_ = (int)g_;");
    b.line("break;");
    b.close();
    b.close();
    b.line(format!("while (cur_ == -2) cur_ = *(volatile int*)&{slots}[slot_];"));
    b.line("if (cur_ == -3) break;");
    b.line(format!("if ({}) {{ gid_ = cur_; break; }}", keys_equal(kv, keys, "cur_", "ld_cg")));
    b.line(format!("slot_ = (slot_ + 1) & {mask};"));
    b.close();
    b.line("if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);");
}

/// Looks `kv` up in a finished table (built by an earlier kernel, so plain loads);
/// leaves the group id in `gid_var` (-1: no match).
pub fn emit_lookup(b: &mut Emitter, kv: &[Value], keys: &[KeyArrays], slots: &str, mask: &str, gid_var: &str) {
    b.open("");
    emit_hash(b, kv, keys);
    b.line(format!("uint32_t slot_ = (uint32_t)h_ & {mask};"));
    b.open(format!("for (uint32_t probe_ = 0; probe_ <= {mask}; probe_++)"));
    b.line(format!("const int cur_ = __ldg(&{slots}[slot_]);"));
    b.line("if (cur_ < 0) break;");
    b.line(format!("if ({}) {{ {gid_var} = cur_; break; }}", keys_equal(kv, keys, "cur_", "ld_plain")));
    b.line(format!("slot_ = (slot_ + 1) & {mask};"));
    b.close();
    b.close();
}

/// Sorted inputs repeat a key in consecutive rows (lineitem is ordered by l_orderkey, 4
/// rows per order): a lane whose key equals the previous lane's joins that lane's run and
/// takes the run leader's group instead of inserting, so a warp inserts once per run.
/// Only for a single never-NULL integer key that is a plain column: its variable lives at
/// loop level, so the warp-level run test can run outside the block that loaded it.
pub(crate) fn sorted_runs_apply(keys: &[gpusql_plan::Expr], kv: &[Value]) -> bool {
    matches!((keys, kv), ([key @ gpusql_plan::Expr::Column { .. }], [v])
        if v.is_never_null() && matches!(crate::types::c_type(&key.ty()), "int32_t" | "int64_t"))
}

/// Finds or inserts the group of `kv` into `gid_`, called inside the `if (active)` block
/// that evaluated the keys; leaves the caller inside an `if (active)` block (to close
/// once). Where sorted runs apply (see `sorted_runs_apply`) the key block is closed for
/// the warp-level run test, only run leaders insert, followers take their leader's
/// group, and with `run_length` the leaders also get `run_len_`, the rows of their run.
/// Returns whether sorted runs apply (`follower_` is then defined).
#[allow(clippy::too_many_arguments)]
pub fn emit_insert_with_runs(
    b: &mut Emitter,
    keys: &[gpusql_plan::Expr],
    kv: &[Value],
    arrays: &[KeyArrays],
    slots: &str,
    mask: &str,
    max_groups: &str,
    group_count: &str,
    run_length: bool,
) -> bool {
    if !sorted_runs_apply(keys, kv) {
        // Nested: the key block may have turned rows inactive (NULL join keys).
        b.open("if (active)");
        emit_insert(b, kv, arrays, slots, mask, max_groups, group_count);
        b.close();
        return false;
    }
    let v = &kv[0].v;
    b.close();
    b.line("// sorted runs: a lane with the previous lane's key takes that run's group (one insert per run)");
    b.line(format!("const long long kprev_ = __shfl_up_sync(FULL_MASK, (long long)({v}), 1);"));
    b.line("const bool aprev_ = __shfl_up_sync(FULL_MASK, active, 1);");
    b.line(format!("const bool follower_ = active && (threadIdx.x & 31) > 0 && aprev_ && kprev_ == (long long)({v});"));
    b.line("const uint32_t run_leaders_ = __ballot_sync(FULL_MASK, active && !follower_);");
    b.open("if (active && !follower_)");
    emit_insert(b, kv, arrays, slots, mask, max_groups, group_count);
    b.close();
    // Each follower takes the group of the highest leader lane at or below it.
    b.line("const uint32_t lane_bits_ = 0xffffffffu >> (31 - (threadIdx.x & 31));");
    b.line("const int run_leader_ = 31 - __clz(run_leaders_ & lane_bits_);");
    b.line("const int run_gid_ = __shfl_sync(FULL_MASK, gid_, run_leader_ < 0 ? 0 : run_leader_);");
    b.line("if (follower_) gid_ = run_gid_;");
    if run_length {
        // The run ends at the next lane that is not a follower.
        b.line("const uint32_t ends_ = ~__ballot_sync(FULL_MASK, follower_) & ~lane_bits_;");
        b.line("const uint32_t run_len_ = (ends_ ? (uint32_t)__ffs(ends_) - 1u : 32u) - (threadIdx.x & 31);");
    }
    b.open("if (active)");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserting_compares_string_keys_past_the_l1_cache() {
        // A key another thread inserted during this kernel may be a string it just made:
        // its bytes are read past L1 (str_eq_cg); a finished table's need not be.
        let keys = [KeyArrays { values: "gkey0".into(), validity: None, ty: DataType::Utf8 }];
        let kv = [Value::not_null("s_1".to_string())];
        let mut b = Emitter::default();
        emit_insert(&mut b, &kv, &keys, "ht", "mask", "max_groups", "count");
        assert!(b.code.contains("str_eq_cg(s_1, ld_cg(&gkey0[cur_]))"), "{}", b.code);
        let mut b = Emitter::default();
        emit_lookup(&mut b, &kv, &keys, "ht", "mask", "g");
        assert!(b.code.contains("str_eq(s_1, ld_plain(&gkey0[cur_]))"), "{}", b.code);
    }
}
