//! INTERVAL arithmetic in generated code: interval.cu's functions (the CPU twins in
//! `gpusql_common::interval`).

use crate::value::Value;
use gpusql_common::DataType;
use gpusql_plan::{BinaryOp, Expr};

/// INTERVAL arithmetic (the binder's forms, `coerce::interval_arithmetic`): interval.cu's
/// `ts_diff`, `ts_add_iv`, `iv_add`, `iv_mul_f64`, …; errors only for non-NULL operands.
pub fn interval_call(op: &BinaryOp, left: &Expr, right: &Expr, l: &Value, r: &Value, null: &str) -> Option<String> {
    let (a, b) = (&l.v, &r.v);
    let flag = if null == "false" { "err".to_string() } else { format!("({null} ? (int*)0 : err)") };
    let f = match (op, left.ty(), right.ty()) {
        (BinaryOp::Sub, DataType::Timestamp, DataType::Timestamp) => "ts_diff",
        (BinaryOp::Add, DataType::Timestamp, DataType::Interval) => "ts_add_iv",
        (BinaryOp::Sub, DataType::Timestamp, DataType::Interval) => "ts_sub_iv",
        (BinaryOp::Add, DataType::Interval, DataType::Interval) => "iv_add",
        (BinaryOp::Sub, DataType::Interval, DataType::Interval) => "iv_sub",
        (BinaryOp::Mul, DataType::Interval, DataType::Int64) => "iv_mul_i64",
        (BinaryOp::Mul, DataType::Interval, DataType::Float64) => "iv_mul_f64",
        (BinaryOp::Div, DataType::Interval, DataType::Float64) => "iv_div_f64",
        _ => return None,
    };
    Some(format!("{f}({a}, {b}, {flag})"))
}
