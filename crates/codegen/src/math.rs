//! The math functions in generated code: C's functions and prelude.cu's `f64_sign`,
//! `scaled_floor`, … (names, types and the CPU values in `gpusql_plan::math`).

use crate::emit::Emitter;
use crate::expr::gen;
use crate::types::c_type;
use crate::value::{Row, Value};
use gpusql_common::{DataType, Result};
use gpusql_plan::{Expr, MathFunc};

/// A math function (`plan/src/math.rs`): the C function of a DOUBLE, prelude.cu's exact
/// FLOOR / CEIL / TRUNC of a DECIMAL, SIGN as an INTEGER; NULL where an argument is.
pub fn gen_math(func: MathFunc, args: &[Expr], row: &Row, out: &mut Emitter) -> Result<Value> {
    let ty = args[0].ty();
    let values: Vec<Value> = args.iter().map(|a| gen(a, row, out)).collect::<Result<_>>()?;
    let null = values.iter().map(|v| v.null.clone()).collect::<Vec<_>>().join(" || ");
    let null = if values.len() > 1 { format!("({null})") } else { null };
    let x = &values[0].v;
    let t = out.tmp("m");
    let ct = c_type(&ty);
    let v = match (func, ty) {
        (MathFunc::Sign, DataType::Float64) => format!("(int32_t)f64_sign({x})"),
        (MathFunc::Sign, _) => format!("(int32_t)(({x} > 0) - ({x} < 0))"),
        (f, DataType::Decimal { scale, .. }) => {
            let p = 10i128.pow(scale as u32);
            let p = if ct == "__int128" { crate::types::i128_literal(p) } else { format!("{p}ll") };
            let name = match f {
                MathFunc::Floor => "scaled_floor",
                MathFunc::Ceil => "scaled_ceil",
                _ => "scaled_trunc",
            };
            format!("{name}<{ct}>({x}, {p})")
        }
        (f, _) => {
            let rest: String = values[1..].iter().map(|v| format!(", {}", v.v)).collect();
            format!("{}({x}{rest})", f.cuda_name())
        }
    };
    out.line(format!("const {} {t} = {v};", c_type(&func.result_type(ty))));
    Ok(Value { v: t, null })
}
