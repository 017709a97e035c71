//! Aggregation sinks.
//! - GlobalAggregate (no keys): per-thread accumulators over the row loop, then a warp
//!   shuffle reduction, a block reduction in shared memory and one atomic per block and
//!   state.
//! - HashAggregate: an open-addressing hash table of group ids in global memory
//!   (atomicCAS insert), keys and states in arrays indexed by group id. Lanes of a warp
//!   that hit the same group first combine their values (warp-level local resolution) when
//!   the warp sees few distinct groups; otherwise each lane updates its group atomically.

use crate::expr::{gen, Value};
use crate::hash_table::{emit_insert, emit_insert_with_runs, KeyArrays};
use crate::pipeline::PipelineGen;
use crate::types::{c_max, c_min, c_size, c_type, helper_suffix};
use crate::{InitKernel, Param, Part, ReplicaPart, BLOCK_SIZE};
use gpusql_common::Result;
use gpusql_plan::replicated::GROUP_CACHE_BYTES;
use gpusql_plan::{AggState, Expr, StateFunc};

/// Warp-distinct-group count up to which lanes pre-combine values in the warp.
const WARP_COMBINE_MAX_GROUPS: u32 = 4;
/// Groups with ids below a limit accumulate per block in shared memory first (group ids
/// are dense, so a query with few groups never touches global states until the block
/// ends). The limit fills about this many bytes of shared memory, between 32 and 512
/// groups.
const SMEM_STATE_BYTES: usize = 12 * 1024;

/// The group cache is for aggregations that a good share of the rows reach (estimated):
/// its shared memory comes out of the L1 cache the pipeline's probes use, which costs
/// every row, while it saves only the rows that get to the aggregation.
const GROUP_CACHE_MIN_REACH: f64 = 0.02;

/// How a key is kept in the group cache: the parts stored (C type, the key's value of
/// that part); a cached key equals the row's when every part does. Strings keep their
/// pointer and length only: equal strings of one dictionary share their bytes, and a
/// string equal to the cached one at another address just misses the cache (the global
/// table decides).
fn cached_key(ty: &gpusql_common::DataType, v: &str) -> Option<Vec<(&'static str, String)>> {
    match c_type(ty) {
        "Str" => {
            Some(vec![("unsigned long long", format!("(unsigned long long){v}.p")), ("uint32_t", format!("{v}.len"))])
        }
        ct @ ("int32_t" | "int64_t" | "int16_t" | "int8_t" | "uint8_t" | "bool") => Some(vec![(ct, v.to_string())]),
        _ => None,
    }
}

fn smem_groups(codes: &[StateCode]) -> usize {
    let per_group: usize = codes.iter().map(|c| c_size(c.ct)).sum();
    let fit = SMEM_STATE_BYTES / per_group.max(1);
    // Largest power of two that fits, within [32, 512].
    let pow = if fit == 0 { 1 } else { 1usize << (usize::BITS - 1 - fit.leading_zeros()) };
    pow.clamp(32, 512)
}

struct StateCode {
    ct: &'static str,
    suffix: &'static str,
    /// Identity element (value of a lane that contributes nothing).
    identity: String,
    /// Reduction/atomic helper names: ("sum"|"min"|"max", "add"|"min"|"max").
    reduce: &'static str,
    atomic: &'static str,
}

fn state_code(s: &AggState) -> Result<StateCode> {
    let ct = match s.func {
        StateFunc::Count => "int64_t",
        _ => c_type(&s.ty),
    };
    let suffix = helper_suffix(ct, &format!("{s}"))?;
    Ok(match s.func {
        StateFunc::Sum | StateFunc::Count => {
            StateCode { ct, suffix, identity: format!("(({ct})0)"), reduce: "sum", atomic: "add" }
        }
        StateFunc::Min => StateCode { ct, suffix, identity: c_max(ct).into(), reduce: "min", atomic: "min" },
        StateFunc::Max => StateCode { ct, suffix, identity: c_min(ct).into(), reduce: "max", atomic: "max" },
    })
}

/// The block-local partial of a state in a replicated group table: COUNT in 32 bits, SUM
/// of a 32-bit integer argument in 64 bits (see `consume_replicated`), else the state.
fn partial_code(s: &AggState, c: &StateCode) -> Result<StateCode> {
    let ct = match (s.func, s.arg.as_ref().map(|a| c_type(&a.ty()))) {
        (StateFunc::Count, _) => "int32_t",
        (StateFunc::Sum, Some("int32_t")) if c.ct != "double" => "int64_t",
        _ => return state_code(s),
    };
    Ok(StateCode {
        ct,
        suffix: helper_suffix(ct, "a partial state")?,
        identity: format!("(({ct})0)"),
        reduce: "sum",
        atomic: "add",
    })
}

/// This row's contribution to a state: the identity unless `take`.
fn contribution(s: &AggState, c: &StateCode, arg: &Value, take: &str) -> String {
    let ok = if arg.is_never_null() { take.to_string() } else { format!("({take} && !{})", arg.null) };
    let v = match s.func {
        StateFunc::Count => "1".to_string(),
        _ => format!("({})({})", c.ct, arg.v),
    };
    format!("({ok} ? ({}){v} : {})", c.ct, c.identity)
}

pub fn consume(g: &mut PipelineGen, id: usize, keys: &[Expr], states: &[AggState], entry: &str) -> Result<InitKernel> {
    let (codes, ptrs) = declare_states(g, states)?;
    let smem_n = smem_groups(&codes);
    let names: Vec<String> = states.iter().map(|s| s.to_string()).collect();

    let arg_vals = arg_values(states);
    let mut all_exprs: Vec<&Expr> = keys.iter().collect();
    all_exprs.extend(states.iter().filter_map(|s| s.arg.as_ref()));

    if keys.is_empty() {
        g.body.line(format!(
            "// ---- GlobalAggregate -> #{id} [{}] (block reduction, one atomic per block) ----",
            names.join(", ")
        ));
        for (j, c) in codes.iter().enumerate() {
            g.pre.line(format!("{} acc{j}_ = {};", c.ct, c.identity));
        }
        declare_args(g, states);
        g.body.open("if (active)");
        g.load_columns(&all_exprs);
        eval_args(g, states)?;
        for (j, (s, c)) in states.iter().zip(&codes).enumerate() {
            let contrib = contribution(s, c, &arg_vals[j], "true");
            let update = match c.reduce {
                "sum" => format!("acc{j}_ += {contrib};"),
                r if c.ct == "Str" => format!("acc{j}_ = str_{r}(acc{j}_, {contrib});"),
                "min" => format!("{{ const {} x_ = {contrib}; if (x_ < acc{j}_) acc{j}_ = x_; }}", c.ct),
                _ => format!("{{ const {} x_ = {contrib}; if (x_ > acc{j}_) acc{j}_ = x_; }}", c.ct),
            };
            g.body.line(update);
        }
        g.body.close();
        let warps = BLOCK_SIZE / 32;
        let p = &mut g.post;
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
    } else {
        let key_list: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        g.body.line(format!(
            "// ---- HashAggregate -> #{id} keys=[{}] states=[{}] (global hash table, atomicCAS insert) ----",
            key_list.join(", "),
            names.join(", ")
        ));
        let (slots, mask, max_groups) = group_table_params(g);
        let count = g.param(Param::OutCount, "unsigned long long*");
        let mut key_out = vec![];
        for (k, e) in keys.iter().enumerate() {
            let ct = c_type(&e.ty());
            let values = g.param(Param::Output { column: k, part: Part::Values }, &format!("{ct}* __restrict__"));
            let validity = e
                .nullable()
                .then(|| g.param(Param::Output { column: k, part: Part::Validity }, "uint8_t* __restrict__"));
            key_out.push(KeyArrays { values, validity, ty: e.ty() });
        }
        g.body.line("int gid_ = -1;");
        declare_args(g, states);
        g.body.open("if (active)");
        g.load_columns(&all_exprs);
        let mut kv = vec![];
        for k in keys {
            kv.push(gen(k, &g.row, &mut g.body)?);
        }
        if !emit_group_cache(g, id, keys, &kv, &key_out, [&slots, &mask, &max_groups, &count]) {
            emit_insert_with_runs(&mut g.body, keys, &kv, &key_out, &slots, &mask, &max_groups, &count, false);
        }
        eval_args(g, states)?;
        g.body.close();

        let b = &mut g.body;
        b.line("// local resolution: lanes holding the same group combine values in the warp first");
        b.line("const bool has_ = active && gid_ >= 0;");
        b.line("const uint32_t lane_ = threadIdx.x & 31;");
        b.line("const uint32_t peers_ = __match_any_sync(FULL_MASK, has_ ? gid_ : -1);");
        b.line("const uint32_t leaders_ = __ballot_sync(FULL_MASK, has_ && (__ffs(peers_) - 1) == (int)lane_);");
        b.open(format!("if (__popc(leaders_) <= {WARP_COMBINE_MAX_GROUPS})"));
        b.line("uint32_t todo_ = __ballot_sync(FULL_MASK, has_);");
        b.open("while (todo_)");
        b.line("const int g_ = __shfl_sync(FULL_MASK, gid_, __ffs(todo_) - 1);");
        b.line("const bool mine_ = has_ && gid_ == g_;");
        for (j, (s, c)) in states.iter().zip(&codes).enumerate() {
            let contrib = contribution(s, c, &arg_vals[j], "mine_");
            b.line(format!(
                "{{ const {ct} v_ = warp_{r}_{sfx}({contrib}); if (lane_ == 0) atomic_{a}_{sfx}(g_ < {smem_n} ? &sh{j}_[g_] : &{p}[g_], v_); }}",
                ct = c.ct,
                r = c.reduce,
                sfx = c.suffix,
                a = c.atomic,
                p = ptrs[j]
            ));
        }
        b.line("todo_ &= ~__ballot_sync(FULL_MASK, mine_);");
        b.close();
        b.close_with("else if (has_)");
        for line in
            lane_updates(states, &codes, &arg_vals, |j| format!("gid_ < {smem_n} ? &sh{j}_[gid_] : &{}[gid_]", ptrs[j]))
        {
            b.line(line);
        }
        b.close();
        // Block-local accumulators of the first groups, and their flush after the loop.
        g.pre.line(format!(
            "// HashAggregate: groups < {smem_n} accumulate per block in shared memory, flushed once per block"
        ));
        for (j, c) in codes.iter().enumerate() {
            g.pre.line(format!("__shared__ {} sh{j}_[{smem_n}];", c.ct));
            g.pre.line(format!("for (int i = threadIdx.x; i < {smem_n}; i += blockDim.x) sh{j}_[i] = {};", c.identity));
        }
        g.pre.line("__syncthreads();");
        g.post.line("__syncthreads();");
        g.post.open(format!("for (int i = threadIdx.x; i < {smem_n} && i < (int){max_groups}; i += blockDim.x)"));
        for (j, c) in codes.iter().enumerate() {
            let untouched =
                if c.ct == "Str" { format!("str_is_none(sh{j}_[i])") } else { format!("sh{j}_[i] == {}", c.identity) };
            g.post.line(format!(
                "if (!({untouched})) atomic_{a}_{sfx}(&{p}[i], sh{j}_[i]);",
                a = c.atomic,
                sfx = c.suffix,
                p = ptrs[j]
            ));
        }
        g.post.close();
    }
    Ok(init_kernel(g, id, !keys.is_empty(), &codes, entry))
}

/// Finds or inserts the row's group (`gid_`) through a per-block cache in shared memory:
/// a slot chosen by the key hash's high bits (or the one after it) holds a group id and the
/// keys of the first group a row of the block found there (written once: claimed by
/// atomicCAS, keys stored, then the id published). A row whose keys equal the slot's takes its group without
/// touching the global table; the others look the global table up (or insert) as before
/// and claim the slot if it is still empty. With few groups (SSB Q3.1: 150) every block
/// soon finds all of them in its cache, where every row used to read the global slot and
/// key arrays (L2 round trips on the same few lines from every SM). Not where sorted runs
/// apply, nor for key types without a cached form; returns whether it emitted the lookup.
fn emit_group_cache(
    g: &mut PipelineGen,
    id: usize,
    keys: &[Expr],
    kv: &[Value],
    arrays: &[KeyArrays],
    table: [&str; 4],
) -> bool {
    let [slots, mask, max_groups, count] = table;
    if crate::hash_table::sorted_runs_apply(keys, kv) || g.sink_reach < GROUP_CACHE_MIN_REACH {
        return false;
    }
    // Per key: its parts, and its NULL flag where it may be NULL (NULL groups with NULL).
    let mut cached: Vec<(Vec<(&'static str, String)>, Option<String>)> = vec![];
    for (k, v) in keys.iter().zip(kv) {
        let Some(parts) = cached_key(&k.ty(), &v.v) else { return false };
        cached.push((parts, (!v.is_never_null()).then(|| v.null.clone())));
    }
    let bytes: usize = 4 + cached
        .iter()
        .map(|(parts, null)| parts.iter().map(|(ct, _)| c_size(ct)).sum::<usize>() + null.as_ref().map_or(0, |_| 1))
        .sum::<usize>();
    let fit = GROUP_CACHE_BYTES / bytes;
    if fit < 64 {
        return false;
    }
    let n = (1usize << (usize::BITS - 1 - fit.leading_zeros())).min(512);
    g.pre.line(format!("// HashAggregate #{id}: a per-block cache of the groups its rows found, {n} slots of {{group id, keys}} ({} bytes)", n * bytes));
    g.pre.line(format!("__shared__ int gc_gid_[{n}];"));
    // Per key, its parts' arrays (name, value stored), and its NULL flag's.
    let mut arrays_of: Vec<(Vec<(String, String)>, Option<(String, String)>)> = vec![];
    for (k, (parts, null)) in cached.iter().enumerate() {
        let mut named = vec![];
        for (i, (ct, val)) in parts.iter().enumerate() {
            let name = format!("gc_k{k}_{i}_");
            g.pre.line(format!("__shared__ {ct} {name}[{n}];"));
            named.push((name, val.clone()));
        }
        let null = null.as_ref().map(|nv| {
            let name = format!("gc_k{k}_{}_", parts.len());
            g.pre.line(format!("__shared__ bool {name}[{n}];"));
            (name, nv.clone())
        });
        arrays_of.push((named, null));
    }
    g.pre.line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) gc_gid_[i] = -1;"));

    let b = &mut g.body;
    b.open("if (active)");
    b.line("// the block's group cache first; the global table where it misses");
    crate::hash_table::emit_hash(b, kv, arrays);
    // Two slots per key (the hash's and the next): a group finds a place while either is
    // free. Slots never empty again, so a free first slot means the group is not cached.
    b.line(format!("const uint32_t gch_ = (uint32_t)(h_ >> 32) & {}u;", n - 1));
    b.line("int gcf_ = -1; // a free slot seen, for this row's group");
    let hit = |slot: &str| -> String {
        let keys: Vec<String> = arrays_of
            .iter()
            .map(|(named, null)| {
                let eq: Vec<String> = named.iter().map(|(name, val)| format!("{name}[{slot}] == {val}")).collect();
                let eq = format!("({})", eq.join(" && "));
                match null {
                    Some((name, nv)) => format!("({name}[{slot}] == {nv} && ({nv} || {eq}))"),
                    None => eq,
                }
            })
            .collect();
        keys.join(" && ")
    };
    // (A slot's keys were stored before its id was published; the acquire load of the id
    // orders the key reads after it.)
    b.open("for (uint32_t t_ = 0; t_ < 2u; t_++)");
    b.line(format!("const uint32_t gcs_ = (gch_ + t_) & {}u;", n - 1));
    b.line("const int gcg_ = ld_acquire_cta(&gc_gid_[gcs_]);");
    b.line("if (gcg_ == -1) { gcf_ = (int)gcs_; break; }");
    b.line(format!("if (gcg_ >= 0 && {}) {{ gid_ = gcg_; break; }}", hit("gcs_")));
    b.close();
    b.open("if (gid_ < 0)");
    // (The insert hashes the keys again, on the rare path: with `h_` reused instead, SSB
    // Q3.1's probe stage measured 0.82-0.84 ms against 0.76-0.77, docs/BENCHMARKS.md.)
    emit_insert(b, kv, arrays, slots, mask, max_groups, count);
    b.open("if (gid_ >= 0 && gcf_ >= 0 && atomicCAS(&gc_gid_[gcf_], -1, -2) == -1)");
    for (named, null) in &arrays_of {
        for (name, val) in named.iter().chain(null) {
            b.line(format!("{name}[gcf_] = {val};"));
        }
    }
    b.line("__threadfence_block();");
    b.line("atomicExch(&gc_gid_[gcf_], gid_);");
    b.close();
    b.close();
    b.close();
    true
}

/// The init kernel of aggregation #id: empty hash slots (`grouped`) and MIN/MAX identities.
fn init_kernel(g: &mut PipelineGen, id: usize, grouped: bool, codes: &[StateCode], entry: &str) -> InitKernel {
    let mut params = if grouped { vec![Param::HashSlots, Param::HashMask] } else { vec![] };
    let mut decls: Vec<String> = vec![];
    let mut fills = vec![];
    if grouped {
        decls.push("int* ht_slots".into());
        decls.push("const uint32_t ht_mask".into());
        fills.push("for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;".to_string());
    }
    for (j, c) in codes.iter().enumerate() {
        if c.reduce != "sum" {
            params.push(Param::State { index: j });
            decls.push(format!("{}* state{j}", c.ct));
            fills.push(format!("for (uint64_t i = tid; i < max_groups; i += stride) state{j}[i] = {};", c.identity));
        }
    }
    params.push(Param::MaxGroups);
    decls.push("const uint32_t max_groups".into());
    let init_entry = format!("{entry}_init");
    g.extra.push_str(&format!(
        "// Init of #{id}: empty hash slots, MIN/MAX identities\nextern \"C\" __global__ void {init_entry}({}) {{\n    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;\n    {}\n}}\n\n",
        decls.join(", "),
        fills.join("\n    ")
    ));
    InitKernel { entry: init_entry, params }
}
/// Per-lane atomic updates of the states with this row's arguments (NULLs skipped);
/// `target(j)` is the address of state j.
fn lane_updates(
    states: &[AggState],
    codes: &[StateCode],
    arg_vals: &[Value],
    target: impl Fn(usize) -> String,
) -> Vec<String> {
    let mut out = vec![];
    for (j, (s, c)) in states.iter().zip(codes).enumerate() {
        let v = match s.func {
            StateFunc::Count => "1".to_string(),
            _ => format!("({})({})", c.ct, arg_vals[j].v),
        };
        let upd = format!("atomic_{}_{}({}, {v});", c.atomic, c.suffix, target(j));
        if arg_vals[j].is_never_null() {
            out.push(upd);
        } else {
            out.push(format!("if (!{}) {upd}", arg_vals[j].null));
        }
    }
    out
}

/// The argument value of each state (`a{j}_`, evaluated by `eval_args` for active rows).
fn arg_values(states: &[AggState]) -> Vec<Value> {
    states
        .iter()
        .enumerate()
        .map(|(j, s)| match &s.arg {
            None => Value::not_null("1"),
            Some(a) => {
                Value { v: format!("a{j}_"), null: if a.nullable() { format!("a{j}_null") } else { "false".into() } }
            }
        })
        .collect()
}

fn declare_args(g: &mut PipelineGen, states: &[AggState]) {
    for (j, s) in states.iter().enumerate() {
        if let Some(a) = &s.arg {
            let ct = c_type(&a.ty());
            g.body.line(format!("{ct} a{j}_{};", if ct == "Str" { " = make_str(\"\", 0)" } else { " = 0" }));
            if a.nullable() {
                g.body.line(format!("bool a{j}_null = true;"));
            }
        }
    }
}

fn eval_args(g: &mut PipelineGen, states: &[AggState]) -> Result<()> {
    for (j, s) in states.iter().enumerate() {
        if let Some(a) = &s.arg {
            let x = gen(a, &g.row, &mut g.body)?;
            g.body.line(format!("a{j}_ = {};", x.v));
            if a.nullable() {
                g.body.line(format!("a{j}_null = {};", x.null));
            }
        }
    }
    Ok(())
}

/// HashAggregate over a bank-replicated shared-memory group table ([Sitaridi 2016] §3.4, writes):
/// a row accumulates into the slot the load-time placement gave it (`rp_slots[row]`, in a
/// distinct bank and a distinct copy from the other lanes of its warp), with no hash
/// lookup per row; after the loop each block merges every slot its rows touched into the
/// global group of the slot's key (found or inserted in the global hash table).
pub fn consume_replicated(
    g: &mut PipelineGen,
    id: usize,
    keys: &[Expr],
    states: &[AggState],
    r: usize,
    entry: &str,
) -> Result<InitKernel> {
    let rt = g.replicated[r].clone();
    crate::check_replicated_key(keys, &rt)?;
    let (codes, ptrs) = declare_states(g, states)?;
    let names: Vec<String> = states.iter().map(|s| s.to_string()).collect();
    let key_list: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    g.body.line(format!(
        "// ---- HashAggregate -> #{id} keys=[{}] states=[{}] ({rt}) ----",
        key_list.join(", "),
        names.join(", ")
    ));
    let (slots, mask, max_groups) = group_table_params(g);
    let count = g.param(Param::OutCount, "unsigned long long*");
    let kt = keys[0].ty();
    let ct = c_type(&kt);
    let key_values = g.param(Param::Output { column: 0, part: Part::Values }, &format!("{ct}* __restrict__"));
    let row_slots = g.param(Param::Replica { index: r, part: ReplicaPart::RowSlots }, "const uint16_t* __restrict__");
    let slot_values =
        g.param(Param::Replica { index: r, part: ReplicaPart::SlotValues }, &format!("const {ct}* __restrict__"));
    let n = rt.summary.slots;
    // Block partials narrower than the states where a block's rows cannot overflow them
    // (fewer than 2^31 rows per block, checked below): counts in 32 bits, sums of 32-bit
    // integers in 64 (half the shared memory, and no 128-bit atomics).
    let partials: Vec<StateCode> = states.iter().zip(&codes).map(|(s, c)| partial_code(s, c)).collect::<Result<_>>()?;

    g.pre.line(format!("// HashAggregate #{id}: per slot, the block's partial states and whether its rows touched it"));
    g.pre.line("// (32-bit counts and 64-bit sums of 32-bit values hold while a block takes < 2^31 rows)");
    g.pre.line(
        "if (n_rows / gridDim.x >= (1ull << 31)) { if (threadIdx.x == 0) raise_error(err, ERR_OVERFLOW); return; }",
    );
    for (j, c) in partials.iter().enumerate() {
        g.pre.line(format!("__shared__ {} rs{j}_[{n}];", c.ct));
        g.pre.line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) rs{j}_[i] = {};", c.identity));
    }
    g.pre.line(format!("__shared__ uint8_t rs_hit_[{n}];"));
    g.pre.line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) rs_hit_[i] = 0;"));
    g.pre.line("__syncthreads();");

    declare_args(g, states);
    g.body.open("if (active)");
    let args: Vec<&Expr> = states.iter().filter_map(|s| s.arg.as_ref()).collect();
    g.load_columns(&args);
    eval_args(g, states)?;
    g.body.line(format!("const uint32_t s_ = {row_slots}[row];"));
    g.body.line("rs_hit_[s_] = 1;");
    for line in lane_updates(states, &partials, &arg_values(states), |j| format!("&rs{j}_[s_]")) {
        g.body.line(line);
    }
    g.body.close();

    let p = &mut g.post;
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
    Ok(init_kernel(g, id, true, &codes, entry))
}

/// The states' C encodings and their kernel parameters (one array per state).
fn declare_states(g: &mut PipelineGen, states: &[AggState]) -> Result<(Vec<StateCode>, Vec<String>)> {
    let codes = states.iter().map(state_code).collect::<Result<Vec<_>>>()?;
    let ptrs = codes
        .iter()
        .enumerate()
        .map(|(j, c)| g.param(Param::State { index: j }, &format!("{}* __restrict__", c.ct)))
        .collect();
    Ok((codes, ptrs))
}

/// The kernel parameters of a sink's group hash table: slots, mask, group capacity.
pub(crate) fn group_table_params(g: &mut PipelineGen) -> (String, String, String) {
    let slots = g.param(Param::HashSlots, "int* __restrict__");
    let mask = g.param(Param::HashMask, "const uint32_t");
    let max_groups = g.param(Param::MaxGroups, "const uint32_t");
    (slots, mask, max_groups)
}
