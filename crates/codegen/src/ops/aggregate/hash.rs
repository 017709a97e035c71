//! HashAggregate: an open-addressing hash table of group ids in global memory (atomicCAS
//! insert), keys and states in arrays indexed by group id. The groups of the first few ids
//! accumulate in each thread's registers (no atomic per row; a warp reduction each when the
//! thread's rows end), or, where the keys are dictionary codes, each lane's own group (the
//! first it meets) does. For the others, lanes of a warp that hit the same group first combine
//! their values (warp-level local resolution) where the whole warp holds one group;
//! otherwise each lane updates its group atomically. Groups with small ids accumulate per
//! block in shared memory first, and a per-block group cache (`group_cache.rs`) saves most
//! rows the global table lookup; where the keys are dictionary codes, a per-block index of
//! their combinations (`code_index.rs`) saves it.

use super::code_index::{code_keys, emit_code_index};
use super::group_cache::emit_group_cache;
use super::{
    arg_values, contribution, declare_args, declare_states, eval_args, group_table, init_kernel, lane_updates,
    row_updates, StateCode,
};
use crate::emit::Emitter;
use crate::hash_table::{emit_insert_with_runs, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use crate::ops::SinkOperator;
use crate::spec::{InitKernel, Param, Part};
use crate::types::{c_size, c_type};
use gpusql_common::Result;
use gpusql_plan::{AggState, Expr, StateFunc};

/// Groups with ids below a limit accumulate per block in shared memory first (group ids
/// are dense, so a query with few groups never touches global states until the block
/// ends). The limit fills about this many bytes of shared memory, between 32 and 512
/// groups.
const SMEM_STATE_BYTES: usize = 12 * 1024;

/// The most 32-bit registers each thread's partials of the register groups may take: the
/// groups kept in registers are as many as fit (and at most `SET register_groups`).
const REGISTER_GROUP_REGS: usize = 48;

/// Groups `keys` of aggregation `id` into the global hash table, with their `states`.
pub struct HashAggregate<'a> {
    pub id: usize,
    pub keys: &'a [Expr],
    pub states: &'a [AggState],
    /// At most this many groups (the first ids) accumulate in registers (None: `auto_register_groups`).
    pub register_groups: Option<u32>,
    /// Without register groups, each lane keeps the partials of the first group it meets in
    /// its registers (`SET lane_group`).
    pub lane_group: bool,
}

impl SinkOperator for HashAggregate<'_> {
    fn consume(&self, k: &mut KernelBuilder, entry: &str) -> Result<Option<InitKernel>> {
        let (id, keys, states) = (self.id, self.keys, self.states);
        let (codes, ptrs) = declare_states(k, states)?;
        let smem_n = smem_groups(&codes);
        let wanted = self.register_groups.unwrap_or_else(|| auto_register_groups(&codes));
        let reg_types: Vec<&str> = states.iter().zip(&codes).map(|(s, c)| register_type(s, c)).collect();
        let reg_n = register_groups(&codes, &reg_types, wanted).min(smem_n);
        let names: Vec<String> = states.iter().map(|s| k.show_state(s)).collect();
        let arg_vals = arg_values(states);
        let [slots, mask, max_groups, count] = group_table(k, id, keys, &names, "global hash table, atomicCAS insert");
        let mut key_out = vec![];
        for (column, e) in keys.iter().enumerate() {
            let ct = c_type(&e.ty());
            let values = k.param(Param::Output { column, part: Part::Values }, &format!("{ct}* __restrict__"));
            let validity =
                e.nullable().then(|| k.param(Param::Output { column, part: Part::Validity }, "uint8_t* __restrict__"));
            key_out.push(KeyArrays { values, validity, ty: e.ty() });
        }
        k.body().line("int gid_ = -1;");
        declare_args(k, states);
        k.body().open("if (active)");
        let table = [slots.as_str(), mask.as_str(), max_groups.as_str(), count.as_str()];
        let args: Vec<&Expr> = states.iter().filter_map(|s| s.arg.as_ref()).collect();
        let key_codes = code_keys(k, keys);
        if let Some(codes) = &key_codes {
            // Keys by their dictionary codes: the key values load only for a new combination.
            k.load_columns(&args);
            emit_code_index(k, id, keys, codes, &key_out, table)?;
        } else {
            let all_exprs: Vec<&Expr> = keys.iter().chain(args).collect();
            k.load_columns(&all_exprs);
            let mut kv = vec![];
            for key in keys {
                kv.push(k.eval(key)?);
            }
            if !emit_group_cache(k, id, keys, &kv, &key_out, table) {
                emit_insert_with_runs(k.body(), keys, &kv, &key_out, &slots, &mask, &max_groups, &count, false);
            }
        }
        eval_args(k, states)?;
        k.body().close();

        let target = |j: usize, g: &str| format!("{g} < {smem_n} ? &sh{j}_[{g}] : &{}[{g}]", ptrs[j]);
        // The lane's own group: with no register groups, where the keys are dictionary codes
        // (at most 2,048 groups, so a lane's first group is likely a frequent one; measured
        // slower where a join's kernel groups many: TPC-H q09 25.5 -> 40.6 ms on the H100)
        // and every state has a register form.
        let lane_group = self.lane_group && reg_n == 0 && key_codes.is_some() && lane_group_fits(&codes, &reg_types);
        let b = k.body();
        b.line("const bool has_ = active && gid_ >= 0;");
        if reg_n > 0 {
            b.line(format!("// groups 0..{reg_n}: into this thread's registers"));
            for g in 0..reg_n {
                b.open(format!("if (has_ && gid_ == {g})"));
                let spill = |j: usize| format!("&sh{j}_[{g}]");
                let update = |j: usize, c: &StateCode, v: &str| {
                    register_update(c, reg_types[j], &format!("rg{g}_{j}"), v, &spill(j))
                };
                for line in row_updates(states, &codes, &arg_vals, update) {
                    b.line(line);
                }
                b.close();
            }
            b.line(format!("const bool rest_ = has_ && gid_ >= {reg_n};"));
            b.open("if (__any_sync(FULL_MASK, rest_))");
        } else if lane_group {
            b.line("// the lane's own group (the first it met): into its registers");
            b.line("if (has_ && lg_ < 0) lg_ = gid_;");
            b.line("const bool mine_ = has_ && gid_ == lg_;");
            b.open("if (mine_)");
            let update = |j: usize, c: &StateCode, v: &str| {
                register_update(c, reg_types[j], &format!("lp{j}_"), v, &target(j, "lg_"))
            };
            for line in row_updates(states, &codes, &arg_vals, update) {
                b.line(line);
            }
            b.close();
            b.line("const bool rest_ = has_ && !mine_;");
            b.open("if (__any_sync(FULL_MASK, rest_))");
        } else {
            b.line("const bool rest_ = has_;");
        }
        let warp_values: Vec<String> =
            states.iter().zip(&codes).zip(&arg_vals).map(|((s, c), a)| contribution(s, c, a, "rest_")).collect();
        let lane_lines = lane_updates(states, &codes, &arg_vals, |j| target(j, "gid_"));
        emit_resolved_updates(b, &codes, "rest_", "gid_", &warp_values, &lane_lines, |j| target(j, "g0_"));
        if reg_n > 0 || lane_group {
            b.close();
        }
        // Block-local accumulators of the first groups, and their flush after the loop.
        k.pre().line(format!(
            "// HashAggregate: groups < {smem_n} accumulate per block in shared memory, flushed once per block"
        ));
        for (j, c) in codes.iter().enumerate() {
            k.pre().line(format!("__shared__ {} sh{j}_[{smem_n}];", c.ct));
            k.pre()
                .line(format!("for (int i = threadIdx.x; i < {smem_n}; i += blockDim.x) sh{j}_[i] = {};", c.identity));
        }
        if reg_n > 0 {
            k.pre().line(format!("// HashAggregate: the partials of groups 0..{reg_n} in this thread's registers"));
            for g in 0..reg_n {
                for (j, c) in codes.iter().enumerate() {
                    let init = if reg_types[j] == c.ct { c.identity.clone() } else { "0".into() };
                    k.pre().line(format!("{} rg{g}_{j} = {init};", reg_types[j]));
                }
            }
        }
        if lane_group {
            k.pre()
                .line("// HashAggregate: the partials of this lane's own group (the first it meets) in its registers");
            k.pre().line("int lg_ = -1;");
            for (j, c) in codes.iter().enumerate() {
                let init = if reg_types[j] == c.ct { c.identity.clone() } else { "0".into() };
                k.pre().line(format!("{} lp{j}_ = {init};", reg_types[j]));
            }
        }
        k.pre().line("__syncthreads();");
        if reg_n > 0 {
            k.post().line("// the register groups: a warp reduction each, into the block's shared state");
            for g in 0..reg_n {
                for (j, c) in codes.iter().enumerate() {
                    k.post().line(format!(
                        "{{ const {ct} v_ = warp_{r}_{sfx}(({ct})rg{g}_{j}); if ((threadIdx.x & 31) == 0) atomic_{a}_{sfx}(&sh{j}_[{g}], v_); }}",
                        ct = c.ct,
                        r = c.reduce,
                        sfx = c.suffix,
                        a = c.atomic,
                    ));
                }
            }
        }
        if lane_group {
            let p = k.post();
            p.line("// the lanes' own groups: resolved in the warp as the rows were");
            p.open("");
            p.line("const bool lf_ = lg_ >= 0;");
            let warp_values: Vec<String> =
                codes.iter().enumerate().map(|(j, c)| format!("(lf_ ? ({})lp{j}_ : {})", c.ct, c.identity)).collect();
            let lane_lines: Vec<String> = codes
                .iter()
                .enumerate()
                .map(|(j, c)| format!("atomic_{}_{}({}, ({})lp{j}_);", c.atomic, c.suffix, target(j, "lg_"), c.ct))
                .collect();
            emit_resolved_updates(p, &codes, "lf_", "lg_", &warp_values, &lane_lines, |j| target(j, "g0_"));
            p.close();
        }
        k.post().line("__syncthreads();");
        k.post().open(format!("for (int i = threadIdx.x; i < {smem_n} && i < (int){max_groups}; i += blockDim.x)"));
        for (j, c) in codes.iter().enumerate() {
            let untouched = match c.ct {
                "Str" => format!("str_is_none(sh{j}_[i])"),
                "Interval" => format!("iv_is_none(sh{j}_[i])"),
                _ => format!("sh{j}_[i] == {}", c.identity),
            };
            k.post().line(format!(
                "if (!({untouched})) atomic_{a}_{sfx}(&{p}[i], sh{j}_[i]);",
                a = c.atomic,
                sfx = c.suffix,
                p = ptrs[j]
            ));
        }
        k.post().close();
        Ok(Some(init_kernel(k, id, true, &codes, entry)))
    }
}

/// Groups in registers where `SET register_groups = auto`: they pay where a state's
/// shared-memory atomic is a compare-and-swap loop (a DOUBLE SUM, MIN or MAX) and cost where
/// the per-row register update is the dearer one (a string's or interval's MIN/MAX compares
/// in each of the groups' branches); DECIMAL sums alone (64-bit adds, one native 64-bit shared
/// atomic otherwise) measured slower in registers too. H100, SF 10, 4 groups: sum of doubles
/// 2.1 -> 0.52 ms (with the code index), a double sum beside a DECIMAL sum 2.2 -> 1.1,
/// DECIMAL sums 0.57 -> 0.63 (64-bit partials), MIN/MAX of strings 1.7 -> 4.7; 2,526 groups
/// unchanged (docs/BENCHMARKS.md).
const AUTO_REGISTER_GROUPS: u32 = 4;

fn auto_register_groups(codes: &[StateCode]) -> u32 {
    let doubles = codes.iter().any(|c| c.suffix == "f64");
    let compared = codes.iter().any(|c| matches!(c.suffix, "str" | "iv"));
    if doubles && !compared {
        AUTO_REGISTER_GROUPS
    } else {
        0
    }
}

/// How many groups accumulate in registers: at most `wanted`, and as many as fit in
/// `REGISTER_GROUP_REGS` (`types`: each state's register type); none where a state has no
/// register form (`combine`).
fn register_groups(codes: &[StateCode], types: &[&str], wanted: u32) -> usize {
    if codes.iter().any(|c| combine(c, "a", "b").is_none()) {
        return 0;
    }
    let per_group: usize = types.iter().map(|t| c_size(t).div_ceil(4)).sum();
    (wanted as usize).min(REGISTER_GROUP_REGS / per_group.max(1))
}

/// The C type of a state's partial in registers: a 128-bit SUM of 64-bit or narrower
/// integers (DECIMAL(18) and below, BIGINT, INTEGER) in 64 bits, half the registers (an add
/// that would overflow moves the partial into the block's state first); others as the state.
fn register_type(s: &AggState, c: &StateCode) -> &'static str {
    match (c.suffix, c.reduce, s.func, s.arg.as_ref().map(|a| c_type(&a.ty()))) {
        ("i128", "sum", StateFunc::Sum, Some("int64_t" | "int32_t")) => "int64_t",
        _ => c.ct,
    }
}

/// The most 32-bit registers a lane's own group may take: its partials and the code
/// that folds and flushes them grow the kernel, so a kernel with many or wide states
/// (TPC-H Q1's six, two of them 128-bit: 16 registers; its kernel took 64 registers a
/// thread with them, 40 without, and ptxas 0.25 s longer here) keeps the warp's
/// resolution alone.
const LANE_GROUP_REGS: usize = 12;

/// Whether a lane's own group takes a register form of every state, within
/// `LANE_GROUP_REGS`, and none compares strings or intervals per row (those lose in
/// registers, as for the register groups).
fn lane_group_fits(codes: &[StateCode], types: &[&str]) -> bool {
    let compared = codes.iter().any(|c| matches!(c.suffix, "str" | "iv"));
    let regs: usize = types.iter().map(|t| c_size(t).div_ceil(4)).sum();
    !compared && regs <= LANE_GROUP_REGS && register_groups(codes, types, 1) == 1
}

/// The statement folding `v` into the register partial `acc` of C type `ty`: a 64-bit
/// partial of a 128-bit sum moves into the state at `spill` (an address) before an add
/// that would overflow it.
fn register_update(c: &StateCode, ty: &str, acc: &str, v: &str, spill: &str) -> String {
    if ty == c.ct {
        combine(c, acc, v).unwrap_or_default()
    } else {
        format!(
            "{{ const int64_t v_ = (int64_t)({v}); const int64_t s_ = (int64_t)((uint64_t){acc} + (uint64_t)v_); \
             if ((({acc} ^ s_) & (v_ ^ s_)) < 0) {{ atomic_add_i128({spill}, (__int128){acc}); {acc} = v_; }} else {acc} = s_; }}"
        )
    }
}

/// Emits the update of the groups (`gid`) of the lanes where `flag` holds, with local
/// resolution: where the warp's flagged lanes hold one group, a warp reduction of
/// `warp_values` (each state's contribution, the identity where `flag` is false) and one
/// update at `target(j)` of group `g0_`; otherwise each flagged lane runs `lane_lines`.
/// Per-lane updates beat combining in the warp from 2 groups on (TPC-H Q1 at SF 10 on the
/// H100: 1.21 ms against 2.82 with a tree over each group's lanes and 3.82 with one warp
/// reduction per group; docs/BENCHMARKS.md), so only a warp of one group combines first.
/// (Its test by __match_any_sync: one by __all_sync of the first lane's group measured
/// 3.80 ms against 2.96 for GROUP BY l_shipdate, 2,526 groups, on an H200.)
fn emit_resolved_updates(
    b: &mut Emitter,
    codes: &[StateCode],
    flag: &str,
    gid: &str,
    warp_values: &[String],
    lane_lines: &[String],
    target: impl Fn(usize) -> String,
) {
    b.line("// local resolution: where the warp holds one group, a warp reduction and one update; otherwise");
    b.line("// each lane updates its own group (shared-memory atomics for the first groups)");
    b.line("const uint32_t lane_ = threadIdx.x & 31;");
    b.line(format!("const uint32_t peers_ = __match_any_sync(FULL_MASK, {flag} ? {gid} : -1);"));
    b.line(format!(
        "const int groups_ = __popc(__ballot_sync(FULL_MASK, {flag} && (__ffs(peers_) - 1) == (int)lane_));"
    ));
    b.line(format!("const int g0_ = __shfl_sync(FULL_MASK, {gid}, __ffs(__ballot_sync(FULL_MASK, {flag})) - 1);"));
    b.open("if (groups_ == 1)");
    for (j, c) in codes.iter().enumerate() {
        b.line(format!(
            "{{ const {ct} v_ = warp_{r}_{sfx}({v}); if (lane_ == 0) atomic_{a}_{sfx}({t}, v_); }}",
            ct = c.ct,
            r = c.reduce,
            sfx = c.suffix,
            a = c.atomic,
            v = warp_values[j],
            t = target(j)
        ));
    }
    b.close_with(format!("else if ({flag})"));
    for line in lane_lines {
        b.line(line.clone());
    }
    b.close();
}

/// The statement folding value `v` into the register partial `acc` (None: the state has no
/// register form).
fn combine(c: &StateCode, acc: &str, v: &str) -> Option<String> {
    let numeric = matches!(c.suffix, "i32" | "i64" | "i128");
    Some(match (c.reduce, c.suffix) {
        ("sum", _) if numeric || c.suffix == "f64" => format!("{acc} += {v};"),
        ("min", "f64") => format!("{{ const double x_ = {v}; if (f64_lt(x_, {acc})) {acc} = x_; }}"),
        ("max", "f64") => format!("{{ const double x_ = {v}; if (f64_lt({acc}, x_)) {acc} = x_; }}"),
        ("min", _) if numeric => format!("{{ const {ct} x_ = {v}; if (x_ < {acc}) {acc} = x_; }}", ct = c.ct),
        ("max", _) if numeric => format!("{{ const {ct} x_ = {v}; if (x_ > {acc}) {acc} = x_; }}", ct = c.ct),
        ("min" | "max", "str" | "iv") => format!("{acc} = {}_{}({acc}, {v});", c.suffix, c.reduce),
        _ => return None,
    })
}

fn smem_groups(codes: &[StateCode]) -> usize {
    let per_group: usize = codes.iter().map(|c| c_size(c.ct)).sum();
    let fit = SMEM_STATE_BYTES / per_group.max(1);
    // Largest power of two that fits, within [32, 512].
    let pow = if fit == 0 { 1 } else { 1usize << (usize::BITS - 1 - fit.leading_zeros()) };
    pow.clamp(32, 512)
}
