//! approx_count_distinct's HyperLogLog and the group hash in generated code: sketches.cu's
//! `hll_*` and `duck_hash_*` functions (the CPU twins in `gpusql_plan::hyperloglog`).

use crate::emit::Emitter;
use crate::expr::gen;
use crate::types::c_type;
use crate::value::{Row, Value};
use gpusql_common::{DataType, Result};
use gpusql_plan::hyperloglog::SketchOp;
use gpusql_plan::Expr;

/// sketches.cu's `hll_*` functions over `duck_hash_*` (the CPU twins in
/// `gpusql_plan::hyperloglog`).
pub fn gen_sketch(op: SketchOp, args: &[Expr], row: &Row, out: &mut Emitter) -> Result<Value> {
    let values: Vec<Value> = args.iter().map(|a| gen(a, row, out)).collect::<Result<_>>()?;
    let t = out.tmp("hll");
    match op {
        SketchOp::Estimate => {
            // (A NULL count is no register: 0.)
            let counts: Vec<String> = values.iter().map(|c| format!("({} ? 0 : {})", c.null, c.v)).collect();
            let c = out.tmp("hist");
            out.line(format!("const int64_t {c}[{}] = {{{}}};", counts.len(), counts.join(", ")));
            out.line(format!("const int64_t {t} = hll_estimate({c});"));
            Ok(Value::not_null(t))
        }
        SketchOp::GroupHash => {
            out.line(format!("uint64_t {t} = {}ull;", gpusql_plan::hyperloglog::GROUP_HASH_SEED));
            for (a, v) in args.iter().zip(&values) {
                let h = duck_hash(&a.ty(), &v.v);
                out.line(format!("{t} = murmur64({t} ^ ({} ? 0ull : {h}));", v.null));
            }
            Ok(Value::not_null(format!("((int64_t){t})")))
        }
        SketchOp::Register | SketchOp::Rank => {
            let hash = duck_hash(&args[0].ty(), &values[0].v);
            let f = if op == SketchOp::Register { "hll_register" } else { "hll_rank" };
            out.line(format!("const int32_t {t} = {f}({hash});"));
            Ok(Value { v: t, null: values[0].null.clone() })
        }
    }
}

/// DuckDB's hash of value `x` of type `ty` (sketches.cu's `duck_hash_*`, the CPU's
/// `hyperloglog::duckdb_hash`).
fn duck_hash(ty: &DataType, x: &str) -> String {
    match (ty, c_type(ty)) {
        (DataType::Utf8, _) => format!("duck_hash_bytes({x}.p, {x}.len)"),
        (DataType::Float64, _) => format!("duck_hash_f64({x})"),
        (DataType::Interval, _) => format!("duck_hash_iv({x})"),
        (DataType::Decimal { precision, .. }, _) if *precision <= 9 => format!("duck_hash_u32((uint32_t)(int32_t){x})"),
        (_, "int64_t") => format!("murmur64((uint64_t){x})"),
        (_, "__int128") => format!("duck_hash_i128({x})"),
        _ => format!("duck_hash_u32((uint32_t)(int32_t){x})"),
    }
}
