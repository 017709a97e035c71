//! `Expr::StringFn` -> calls of strings.cu's functions (`StringFunc::cuda_name`). A call
//! that makes a string takes the kernel's arena (`Emitter::uses_arena`: the kernel then
//! declares it, `KernelBuilder::finish`), and runs only for rows whose arguments are not
//! NULL, so NULLs take no room.

use crate::device_constants::KernelError;
use crate::emit::Emitter;
use crate::expr::gen;
use crate::types::c_type;
use crate::value::{Row, Value};
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::{Expr, StringFunc};

/// The kernel's `Arena` variable (strings.cu).
pub const ARENA: &str = "arena";

pub fn gen_string(func: StringFunc, args: &[Expr], row: &Row, out: &mut Emitter) -> Result<Value> {
    let values: Vec<Value> = args.iter().map(|a| gen(a, row, out)).collect::<Result<_>>()?;
    if matches!(func, StringFunc::Strptime | StringFunc::TryStrptime) {
        return Ok(gen_strptime(func, &values, out));
    }
    let arena = if func.writes_strings() {
        out.uses_arena = true;
        format!("{ARENA}, ")
    } else {
        String::new()
    };
    let call = match func {
        StringFunc::Concat | StringFunc::ConcatWs => {
            let (sep, parts) = match func {
                StringFunc::ConcatWs => (values[0].v.clone(), &values[1..]),
                _ => ("make_str(\"\", 0)".to_string(), &values[..]),
            };
            let (p, has) = (out.tmp("parts"), out.tmp("has"));
            let list = |f: &dyn Fn(&Value) -> String| parts.iter().map(f).collect::<Vec<_>>().join(", ");
            out.line(format!("const Str {p}[{}] = {{{}}};", parts.len(), list(&|v| v.v.clone())));
            out.line(format!("const bool {has}[{}] = {{{}}};", parts.len(), list(&|v| format!("!{}", v.null))));
            format!("str_concat_ws({arena}{sep}, {p}, {has}, {})", parts.len())
        }
        StringFunc::ToText => {
            let x = &values[0].v;
            match args[0].ty() {
                DataType::Boolean => format!("str_from_bool({arena}{x})"),
                DataType::Float64 => format!("str_from_f64({arena}{x})"),
                DataType::Int32 | DataType::Int64 => format!("str_from_scaled({arena}(__int128){x}, 0)"),
                DataType::Decimal { scale, .. } => format!("str_from_scaled({arena}(__int128){x}, {scale})"),
                DataType::Date => format!("str_from_date({arena}{x})"),
                DataType::Timestamp => format!("str_from_ts({arena}{x})"),
                DataType::Interval => format!("str_from_iv({arena}{x})"),
                other => return Err(Error::plan(format!("CAST of {other} to VARCHAR on the GPU"))),
            }
        }
        // (Without characters: none, Unicode's space separators.)
        StringFunc::Trim | StringFunc::LTrim | StringFunc::RTrim if values.len() == 1 => {
            format!("{}({}, STR_NONE)", func.cuda_name(), values[0].v)
        }
        f => {
            let list: Vec<&str> = values.iter().map(|v| v.v.as_str()).collect();
            format!("{}({arena}{})", f.cuda_name(), list.join(", "))
        }
    };
    // NULL where an argument is (concat_ws: where its separator is).
    let nulls: Vec<&str> = match func {
        StringFunc::ConcatWs => vec![values[0].null.as_str()],
        _ => values.iter().map(|v| v.null.as_str()).collect(),
    };
    let nulls: Vec<&str> = nulls.into_iter().filter(|n| *n != "false").collect();
    let ty = c_type(&func.result_type());
    let t = out.tmp("s");
    if nulls.is_empty() {
        out.line(format!("const {ty} {t} = {call};"));
        return Ok(Value::not_null(t));
    }
    let null = format!("({})", nulls.join(" || "));
    let none = crate::types::null_value(&func.result_type());
    out.line(format!("const {ty} {t} = {null} ? {none} : {call};"));
    Ok(Value { v: t, null })
}

/// strptime / try_strptime (text_cast.cu's `strptime_parse`): the formats (constants, never
/// NULL) an array of `Str`; a row that no format reads raises `KernelError::Strptime` with
/// the failure in its upper bytes, or is NULL under try_strptime, where only `infinity`
/// still raises.
fn gen_strptime(func: StringFunc, values: &[Value], out: &mut Emitter) -> Value {
    let (text, formats) = (&values[0], &values[1..]);
    let (list, status, t) = (out.tmp("formats"), out.tmp("st"), out.tmp("ts"));
    let items: Vec<&str> = formats.iter().map(|f| f.v.as_str()).collect();
    let each = func == StringFunc::TryStrptime;
    out.line(format!("const Str {list}[{}] = {{{}}};", items.len(), items.join(", ")));
    out.line(format!("int {status} = STRPTIME_OK;"));
    out.line(format!(
        "const int64_t {t} = {} ? 0 : strptime_parse({}, {list}, {}, {each}, &{status});",
        text.null,
        text.v,
        items.len()
    ));
    let raise = format!("raise_error(err, {} | {status} << 8)", KernelError::Strptime.c_name());
    if !each {
        out.line(format!("if ({status} != STRPTIME_OK) {raise};"));
        return Value { v: t, null: text.null.clone() };
    }
    out.line(format!("if ({status} == STRPTIME_INFINITE) {raise};"));
    Value { v: t, null: format!("({} || {status} != STRPTIME_OK)", text.null) }
}
