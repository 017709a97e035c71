//! Aggregation sinks, one file each: `global` (no keys), `hash` (the global hash table,
//! with the per-block `group_cache` or, for dictionary-coded keys, `code_index`) and `replicated` (a bank-replicated group table in
//! shared memory). Here: how states are encoded and updated, shared by all three.

pub mod code_index;
pub mod global;
pub mod group_cache;
pub mod hash;
pub mod replicated;

use super::common::group_table_params;
use crate::kernel_builder::KernelBuilder;
use crate::spec::{InitKernel, Param};
use crate::types::{c_max, c_min, c_type, helper_suffix};
use crate::value::Value;
use gpusql_common::Result;
use gpusql_plan::{AggState, Expr, StateFunc};

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

/// The init kernel of aggregation #id: empty hash slots (`grouped`) and MIN/MAX identities.
fn init_kernel(k: &mut KernelBuilder, id: usize, grouped: bool, codes: &[StateCode], entry: &str) -> InitKernel {
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
    k.add_device_code(&format!(
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
    row_updates(states, codes, arg_vals, |j, c, v| format!("atomic_{}_{}({}, {v});", c.atomic, c.suffix, target(j)))
}

/// One statement per state folding this row's argument into it (NULLs skipped):
/// `update(j, code, value)`.
fn row_updates(
    states: &[AggState],
    codes: &[StateCode],
    arg_vals: &[Value],
    update: impl Fn(usize, &StateCode, &str) -> String,
) -> Vec<String> {
    let mut out = vec![];
    for (j, (s, c)) in states.iter().zip(codes).enumerate() {
        let v = match s.func {
            StateFunc::Count => "1".to_string(),
            _ => format!("({})({})", c.ct, arg_vals[j].v),
        };
        let upd = update(j, c, &v);
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

fn declare_args(k: &mut KernelBuilder, states: &[AggState]) {
    for (j, s) in states.iter().enumerate() {
        if let Some(a) = &s.arg {
            let ct = c_type(&a.ty());
            k.body().line(format!("{ct} a{j}_{};", crate::types::c_init(ct)));
            if a.nullable() {
                k.body().line(format!("bool a{j}_null = true;"));
            }
        }
    }
}

fn eval_args(k: &mut KernelBuilder, states: &[AggState]) -> Result<()> {
    for (j, s) in states.iter().enumerate() {
        if let Some(a) = &s.arg {
            let x = k.eval(a)?;
            k.body().line(format!("a{j}_ = {};", x.v));
            if a.nullable() {
                k.body().line(format!("a{j}_null = {};", x.null));
            }
        }
    }
    Ok(())
}

/// The states' C encodings and their kernel parameters (one array per state).
fn declare_states(k: &mut KernelBuilder, states: &[AggState]) -> Result<(Vec<StateCode>, Vec<String>)> {
    let codes = states.iter().map(state_code).collect::<Result<Vec<_>>>()?;
    let ptrs = codes
        .iter()
        .enumerate()
        .map(|(j, c)| k.param(Param::State { index: j }, &format!("{}* __restrict__", c.ct)))
        .collect();
    Ok((codes, ptrs))
}

/// The heading comment of a HashAggregate (`how`: its table) and the kernel parameters of
/// its group table: slots, mask, group capacity and group count.
fn group_table(k: &mut KernelBuilder, id: usize, keys: &[Expr], names: &[String], how: &str) -> [String; 4] {
    let key_list: Vec<String> = keys.iter().map(|e| k.show(e)).collect();
    k.body().line(format!(
        "// ---- HashAggregate -> #{id} keys=[{}] states=[{}] ({how}) ----",
        key_list.join(", "),
        names.join(", ")
    ));
    let (slots, mask, max_groups) = group_table_params(k);
    let count = k.param(Param::OutCount, "unsigned long long*");
    [slots, mask, max_groups, count]
}
