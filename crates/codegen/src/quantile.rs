//! The quantiles' arithmetic in generated code: sketches.cu's `quantile_*` functions
//! (the CPU twins in `gpusql_plan::quantile`).

use crate::emit::Emitter;
use crate::expr::gen;
use crate::types::c_type;
use crate::value::{Row, Value};
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::quantile::{QuantileFraction, QuantileOp};
use gpusql_plan::Expr;

/// sketches.cu's `quantile_*` functions (the CPU twins in `gpusql_plan::quantile`); the
/// fraction is written into the source (it is part of the plan's shape).
pub fn gen_quantile(
    op: QuantileOp,
    q: &QuantileFraction,
    args: &[Expr],
    row: &Row,
    out: &mut Emitter,
) -> Result<Value> {
    let values: Vec<Value> = args.iter().map(|a| gen(a, row, out)).collect::<Result<_>>()?;
    let null = values.iter().map(|v| v.null.clone()).collect::<Vec<_>>().join(" || ");
    let null = if values.len() > 1 { format!("({null})") } else { null };
    let fraction = crate::types::f64_literal(q.value);
    let n = &values.last().ok_or_else(|| Error::plan("a quantile expression without arguments"))?.v;
    let ty = if op == QuantileOp::Interpolate { args[0].ty() } else { DataType::Int64 };
    let v = match op {
        QuantileOp::ContLower => format!("quantile_cont_lower({n}, {fraction})"),
        QuantileOp::ContUpper => format!("quantile_cont_upper({n}, {fraction})"),
        QuantileOp::Disc => match q.decimal {
            Some((integral, scaling)) => format!(
                "quantile_disc_decimal({n}, {}, {})",
                crate::types::i128_literal(integral),
                crate::types::i128_literal(scaling)
            ),
            None => format!("quantile_disc_f64({n}, {fraction})"),
        },
        QuantileOp::Interpolate => {
            let (lo, hi) = (&values[0].v, &values[1].v);
            if ty == DataType::Interval {
                let flag = if null == "false" { "err".to_string() } else { format!("({null} ? (int*)0 : err)") };
                let t = out.tmp("q");
                out.line(format!(
                    "const Interval {t} = quantile_interpolate_iv({lo}, {hi}, quantile_fraction({n}, {fraction}), {flag});"
                ));
                return Ok(Value { v: t, null });
            }
            let name = match (ty, c_type(&ty)) {
                (DataType::Float64, _) => "quantile_interpolate_f64",
                (DataType::Timestamp, _) => "quantile_interpolate_ts",
                (DataType::Decimal { .. }, "int64_t") => "quantile_interpolate_dec64",
                (DataType::Decimal { .. }, _) => "quantile_interpolate_dec128",
                (other, _) => return Err(Error::plan(format!("quantile interpolation of {other}"))),
            };
            format!("{name}({lo}, {hi}, quantile_fraction({n}, {fraction}))")
        }
    };
    let t = out.tmp("q");
    out.line(format!("const {} {t} = {v};", c_type(&ty)));
    Ok(Value { v: t, null })
}
