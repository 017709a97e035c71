//! Expression -> CUDA statements. Every value is a pair: a C expression for the value and
//! one for "is NULL" ("false" when the value cannot be NULL). CASE, AND and OR evaluate
//! lazily, like the CPU backend, so a division in an untaken branch raises no error.
//! Constants (literals, LIKE patterns, interval amounts) are kernel parameters
//! (`literals.rs`), so the source does not depend on their values; NULL literals stay in
//! the source (their constant NULL flag shapes the code).

use crate::device_constants::{out_of_range_code, typed_code, KernelError};
use crate::emit::Emitter;
use crate::literals::{interval_constants, literal_name, param_name, LiteralPart};
use crate::types::{c_type, null_value};
use crate::value::{Row, Value};
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::{BinaryOp, ConstantField, DateField, Expr, LikePattern};

fn or_null(a: &Value, b: &Value) -> String {
    match (a.is_never_null(), b.is_never_null()) {
        (true, true) => "false".into(),
        (true, false) => b.null.clone(),
        (false, true) => a.null.clone(),
        _ => format!("({} || {})", a.null, b.null),
    }
}

/// Emits `e`; returns its value. A value whose C text nests parentheses deeply is put in
/// a temporary first: NVRTC overflows its stack on a C expression nested ~1,000 deep
/// (`-(-(-(…)))`), which the engine's expression depth limit allows.
pub fn gen(e: &Expr, row: &Row, out: &mut Emitter) -> Result<Value> {
    let value = gen_node(e, row, out)?;
    let deep = |s: &str| paren_depth(s) > MAX_C_NESTING;
    if !deep(&value.v) && !deep(&value.null) {
        return Ok(value);
    }
    let (v, null) = (out.tmp("d"), out.tmp("dn"));
    out.line(format!("const {} {v} = {};", c_type(&e.ty()), value.v));
    out.line(format!("const bool {null} = {};", value.null));
    Ok(Value { v, null })
}

/// How deeply generated C text may nest parentheses before it goes into a temporary.
const MAX_C_NESTING: usize = 64;

fn paren_depth(s: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in s.bytes() {
        match b {
            b'(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn gen_node(e: &Expr, row: &Row, out: &mut Emitter) -> Result<Value> {
    match e {
        Expr::Column { index, .. } => Ok(row[*index].clone()),
        // (NULL: the type's zero with a constant NULL flag, in the source.)
        Expr::Literal { value, ty } if value.is_null() => Ok(Value { v: null_value(ty), null: "true".into() }),
        Expr::Literal { value, ty } => Ok(Value::not_null(out.literals()?.value(e, None, value, *ty)?)),
        Expr::Parameter { value, ty, source } => {
            Ok(Value::not_null(out.literals()?.parameter(e, source.id, value, *ty)?))
        }
        Expr::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), left, right, .. } => {
            gen_logical(op, left, right, row, out)
        }
        Expr::Binary { op, left, right, ty } => gen_binary(op, left, right, ty, row, out),
        Expr::Not(x) => {
            let x = gen(x, row, out)?;
            Ok(Value { v: format!("(!{})", x.v), null: x.null })
        }
        Expr::Negate(x) if x.ty() == DataType::Interval => {
            let x = gen(x, row, out)?;
            let t = out.tmp("iv");
            out.line(format!("const Interval {t} = iv_neg({}, {});", x.v, error_flag(&x)));
            Ok(Value { v: t, null: x.null })
        }
        Expr::Negate(x) => {
            let wide = c_type(&x.ty()) == "__int128";
            let x = gen(x, row, out)?;
            let v = if wide { format!("i128_sub((__int128)0, {})", x.v) } else { format!("(-{})", x.v) };
            Ok(Value { v, null: x.null })
        }
        Expr::Abs(x) => {
            let ty = x.ty();
            let x = gen(x, row, out)?;
            if ty == DataType::Float64 {
                // (fabs: |-0.0| is 0.0, as the CPU backend's.)
                return Ok(Value { v: format!("fabs({})", x.v), null: x.null });
            }
            let t = out.tmp("t");
            out.line(format!("const {} {t} = {};", c_type(&ty), x.v));
            Ok(Value { v: format!("({t} < 0 ? -{t} : {t})"), null: x.null })
        }
        Expr::IsNull { expr, negated } => {
            let x = gen(expr, row, out)?;
            Ok(Value::not_null(if *negated { format!("(!{})", x.null) } else { x.null.clone() }))
        }
        Expr::Cast { expr, ty } => gen_cast(expr, ty, false, row, out),
        Expr::TryCast { expr, ty } => gen_cast(expr, ty, true, row, out),
        Expr::Like { expr, pattern, negated } => gen_like(e, expr, pattern, negated, row, out),
        Expr::Regex { expr, dfa, negated } => {
            let x = gen(expr, row, out)?;
            let k = out.literals()?.regex(e, dfa);
            let t = out.tmp("re");
            out.line(format!("const bool {t} = {};", dfa_call(k, &x.v)));
            Ok(Value { v: if *negated { format!("(!{t})") } else { t }, null: x.null })
        }
        Expr::RegexFind { expr, dfa, rewrite, global } => {
            let x = gen(expr, row, out)?;
            let k = out.literals()?.regex(e, dfa);
            let d = out.tmp("find");
            out.line(format!("const DfaFind {d} = {};", dfa_find_tables(k)));
            let call = match rewrite {
                None => format!("str_regexp_extract({d}, {})", x.v),
                Some(r) => {
                    let r = gen(r, row, out)?;
                    out.uses_arena = true;
                    format!("str_regexp_replace({}, {d}, {}, {}, {global})", crate::strings::ARENA, x.v, r.v)
                }
            };
            let t = out.tmp("s");
            out.line(format!("const Str {t} = {} ? {} : {call};", x.null, null_value(&DataType::Utf8)));
            Ok(Value { v: t, null: x.null })
        }
        Expr::Extract { field, expr } => gen_extract(field, expr, row, out),
        Expr::TimestampAdd { expr, .. } => {
            let x = gen(expr, row, out)?;
            let [months, days, micros] = [ConstantField::Months, ConstantField::Days, ConstantField::Micros]
                .map(|f| interval_amount(e, f, out).map(|a| a.unwrap_or_else(|| "0".into())));
            let t = out.tmp("ts");
            out.line(format!(
                "const int64_t {t} = ts_add_interval({}, {} /* months */, {} /* days */, {} /* microseconds */, {});",
                x.v,
                months?,
                days?,
                micros?,
                error_flag(&x)
            ));
            Ok(Value { v: t, null: x.null })
        }
        Expr::DateTrunc { unit, expr } => {
            let x = gen(expr, row, out)?;
            let t = out.tmp("ts");
            out.line(format!(
                "const int64_t {t} = ts_trunc({}, TRUNC_{}, {});",
                x.v,
                unit.name().to_ascii_uppercase(),
                error_flag(&x)
            ));
            Ok(Value { v: t, null: x.null })
        }
        Expr::Substring { expr, start, len } => {
            let s = gen(expr, row, out)?;
            let t = out.tmp("sub");
            let (has_len, l) = match len {
                Some(l) => ("true", *l),
                None => ("false", 0),
            };
            out.line(format!("const Str {t} = str_substring({}, {start}ll, {l}ll, {has_len});", s.v));
            Ok(Value { v: t, null: s.null })
        }
        Expr::RoundDouble { expr, digits } => {
            let x = gen(expr, row, out)?;
            let t = out.tmp("rnd");
            let m = crate::types::f64_literal(10f64.powi(digits.unsigned_abs() as i32));
            out.line(format!("const double {t} = round_f64({}, {m}, {});", x.v, *digits < 0));
            Ok(Value { v: t, null: x.null })
        }
        Expr::RoundTens { expr, tens, ty } => {
            // In 128 bits, then range-checked where the result is an integer type.
            let x = gen(expr, row, out)?;
            let scale = expr.ty().as_decimal().map_or(0, |(_, s)| s);
            let shift = scale as u32 + *tens as u32;
            let wide = out.tmp("rt");
            let value = if shift > 38 {
                "((__int128)0)".to_string()
            } else {
                format!(
                    "round_tens((__int128){}, {}, {})",
                    x.v,
                    pow10_literal(shift as u8, "__int128"),
                    pow10_literal(*tens, "__int128")
                )
            };
            out.line(format!("const __int128 {wide} = {value};"));
            if matches!(ty, DataType::Int32 | DataType::Int64) {
                let (lo, hi) = int_range_128(ty);
                out.line(format!(
                    "if (!{} && ({wide} < {lo} || {wide} > {hi})) raise_error(err, {});",
                    x.null,
                    out_of_range_code(ty)
                ));
            }
            let t = out.tmp("r");
            out.line(format!("const {} {t} = ({}){wide};", c_type(ty), c_type(ty)));
            Ok(Value { v: t, null: x.null })
        }
        Expr::Math { func, args } => crate::math::gen_math(*func, args, row, out),
        Expr::Quantile { op, q, args } => crate::quantile::gen_quantile(*op, q, args, row, out),
        Expr::Sketch { op, args } => crate::hyperloglog::gen_sketch(*op, args, row, out),
        Expr::StringFn { func, args } => crate::strings::gen_string(*func, args, row, out),
        Expr::ScalarSubqueryRows { ty } => {
            out.line("raise_error(err, ERR_SUBQUERY_ROWS);");
            Ok(Value::not_null(null_value(ty)))
        }
        Expr::Length(expr) => {
            let s = gen(expr, row, out)?;
            let t = out.tmp("len");
            out.line(format!("const int64_t {t} = str_chars({});", s.v));
            Ok(Value { v: t, null: s.null })
        }
        Expr::DateAdd { date, .. } => {
            let d = gen(date, row, out)?;
            // (Which of months and days is zero is part of the code's shape: see literals.rs.)
            let moved = match interval_amount(e, ConstantField::Months, out)? {
                Some(months) => format!("date_add_months({}, {months})", d.v),
                None => d.v.clone(),
            };
            let t = out.tmp("t");
            match interval_amount(e, ConstantField::Days, out)? {
                Some(days) => out.line(format!("const int32_t {t} = {moved} + {days};")),
                None => out.line(format!("const int32_t {t} = {moved};")),
            }
            Ok(Value { v: t, null: d.null })
        }
        Expr::Case { branches, else_expr, ty } => gen_case(branches, else_expr, ty, row, out),
        Expr::InSet { expr, set, negated } => {
            let x = gen(expr, row, out)?;
            crate::in_set::gen(&x, set, *negated, out)
        }
        Expr::InList { expr, list, negated } => gen_in_list(expr, list, negated, row, out),
    }
}

/// Where a cast's failures go: an error on the kernel's flag (CAST), or the result's NULL
/// flag (TRY_CAST: the local `bad`).
struct Failure {
    bad: Option<String>,
}

impl Failure {
    /// Fails where the (non-NULL) value meets C condition `cond`, with error `code`.
    fn check(&self, null: &str, cond: &str, code: i32, out: &mut Emitter) {
        match &self.bad {
            None => out.line(format!("if (!{null} && ({cond})) raise_error(err, {code});")),
            Some(bad) => out.line(format!("{bad} = {bad} || (!{null} && ({cond}));")),
        }
    }
}

/// CAST and TRY_CAST (`try_cast`: failures make NULL, except text the engine does not read).
fn gen_cast(expr: &Expr, ty: &DataType, try_cast: bool, row: &[Value], out: &mut Emitter) -> Result<Value> {
    let x = gen(expr, row, out)?;
    let failure = Failure { bad: try_cast.then(|| out.tmp("bad")) };
    if let Some(bad) = &failure.bad {
        out.line(format!("bool {bad} = false;"));
    }
    let from = expr.ty();
    let t = if from == DataType::Utf8 && *ty != DataType::Utf8 {
        let t = out.tmp("t");
        gen_text_cast(&x, ty, &t, &failure, out);
        t
    } else {
        let v = match (from, *ty) {
            (DataType::Date, DataType::Timestamp) if !try_cast => format!("ts_from_date({}, {})", x.v, error_flag(&x)),
            (DataType::Date, DataType::Timestamp) => {
                failure.check(&x.null, &format!("!ts_fits({}, 0)", x.v), KernelError::TimestampRange as i32, out);
                format!("ts_from_date({}, (int*)0)", x.v)
            }
            // Narrowing to a smaller integer (or a DATE's day number): range-checked in 128
            // bits, as the CPU backend's cast.
            (from, to) if narrows(&from, &to) => {
                let wide = out.tmp("w");
                let value = match from {
                    DataType::Decimal { scale, .. } => {
                        format!("div_round((__int128){}, {})", x.v, pow10_literal(scale, "__int128"))
                    }
                    _ => format!("((__int128){})", x.v),
                };
                let (lo, hi) = int_range_128(&to);
                out.line(format!("const __int128 {wide} = {value};"));
                failure.check(&x.null, &format!("{wide} < {lo} || {wide} > {hi}"), out_of_range_code(&to), out);
                format!("(({}){wide})", c_type(&to))
            }
            (DataType::Float64, DataType::Int32 | DataType::Int64 | DataType::Decimal { .. }) if !try_cast => {
                cast_double(&x.v, ty, &error_flag(&x))
            }
            (DataType::Float64, to @ (DataType::Int32 | DataType::Int64 | DataType::Decimal { .. })) => {
                failure.check(&x.null, &format!("!{}", double_fits(&x.v, &to)), out_of_range_code(&to), out);
                cast_double(&x.v, ty, "(int*)0")
            }
            (from, to) => cast(&x.v, &from, &to)?,
        };
        let t = out.tmp("t");
        out.line(format!("const {} {t} = {v};", c_type(ty)));
        // A decimal of fewer integer digits than the value may have: checked.
        if let (Some((p, s)), DataType::Decimal { precision, scale }) = (from.as_decimal(), *ty) {
            if from != DataType::Float64 && (p - s) as u32 + scale as u32 > precision as u32 {
                let limit = crate::types::i128_literal(10i128.pow(precision as u32));
                let cond = format!("(__int128){t} >= {limit} || (__int128){t} <= -{limit}");
                failure.check(&x.null, &cond, out_of_range_code(ty), out);
            }
        }
        t
    };
    let null = match &failure.bad {
        Some(bad) => format!("({} || {bad})", x.null),
        None => x.null,
    };
    Ok(Value { v: t, null })
}

/// CAST of text `x` to `ty` into the new local `t` (`text_cast.cu`): text that does not
/// read fails as `failure` says; text the engine does not read is always an error.
fn gen_text_cast(x: &Value, ty: &DataType, t: &str, failure: &Failure, out: &mut Emitter) {
    let status = out.tmp("st");
    let call = match ty {
        DataType::Int32 => format!("(int32_t)text_to_int({}, -2147483648ll, 2147483647ll, &{status})", x.v),
        DataType::Int64 => {
            format!("text_to_int({}, (-9223372036854775807ll - 1), 9223372036854775807ll, &{status})", x.v)
        }
        DataType::Float64 => format!("text_to_double({}, &{status})", x.v),
        DataType::Decimal { precision, scale } => format!(
            "text_to_decimal({}, {scale}, (unsigned __int128){}, &{status})",
            x.v,
            crate::types::i128_literal(10i128.pow(*precision as u32))
        ),
        DataType::Boolean => format!("text_to_bool({}, &{status})", x.v),
        DataType::Timestamp => format!("text_to_timestamp({}, &{status})", x.v),
        _ => format!("text_to_date({}, &{status})", x.v),
    };
    out.line(format!("int {status} = TEXT_OK;"));
    out.line(format!("{} {t} = 0;", c_type(ty)));
    out.line(format!("if (!{}) {t} = {call};", x.null));
    failure.check("false", &format!("{status} == TEXT_INVALID"), typed_code(KernelError::Conversion, ty), out);
    out.line(format!(
        "if ({status} == TEXT_UNSUPPORTED) raise_error(err, {});",
        typed_code(KernelError::TextUnsupported, ty)
    ));
}

/// C condition: DOUBLE `v` casts into integer or DECIMAL type `to` (`cast_double`'s range).
fn double_fits(v: &str, to: &DataType) -> String {
    let (kind, bounds) = double_target(to);
    format!("f64_{kind}_fits({v}, {bounds})")
}

/// How a DOUBLE casts to integer or DECIMAL type `to`: prelude.cu's functions' infix
/// (`f64_to_int` / `f64_int_fits`, `f64_to_scaled` / `f64_scaled_fits`) and their bounds
/// (the integer range, or 10^scale and 10^precision).
fn double_target(to: &DataType) -> (&'static str, String) {
    use crate::types::f64_literal;
    match to {
        DataType::Int32 => ("int", "-2147483648.0, 2147483648.0".into()),
        DataType::Decimal { precision, scale } => (
            "scaled",
            format!("{}, {}", f64_literal(10f64.powi(*scale as i32)), f64_literal(10f64.powi(*precision as i32))),
        ),
        _ => ("int", "-9223372036854775808.0, 9223372036854775808.0".into()),
    }
}

/// The parameter of interval amount `field` of `e` (a `DateAdd` or `TimestampAdd`), None
/// where it is not one (a zero amount of a `DateAdd`).
fn interval_amount(e: &Expr, field: ConstantField, out: &mut Emitter) -> Result<Option<String>> {
    match interval_constants(e).into_iter().find(|(f, _, _)| *f == field) {
        Some((f, value, ty)) => Ok(Some(out.literals()?.value(e, Some(f), &value, ty)?)),
        None => Ok(None),
    }
}

/// AND / OR, evaluated lazily: the right side only where the left does not decide.
fn gen_logical(op: &BinaryOp, left: &Expr, right: &Expr, row: &Row, out: &mut Emitter) -> Result<Value> {
    let l = gen(left, row, out)?;
    let (v, n) = (out.tmp("b"), out.tmp("bn"));
    out.line(format!("bool {v}, {n};"));
    // AND: a FALSE left side decides; OR: a TRUE left side decides.
    let decided =
        if *op == BinaryOp::And { format!("!{} && !({})", l.null, l.v) } else { format!("!{} && ({})", l.null, l.v) };
    out.open(format!("if ({decided})"));
    out.line(format!("{v} = {}; {n} = false;", *op == BinaryOp::Or));
    out.close_with("else");
    let r = gen(right, row, out)?;
    if *op == BinaryOp::And {
        out.line(format!("const bool f_ = (!{rn} && !({rv}));", rn = r.null, rv = r.v));
        out.line(format!("{n} = !f_ && ({} || {});", l.null, r.null));
        out.line(format!("{v} = !f_ && !{n};"));
    } else {
        out.line(format!("const bool t_ = (!{rn} && ({rv}));", rn = r.null, rv = r.v));
        out.line(format!("{n} = !t_ && ({} || {});", l.null, r.null));
        out.line(format!("{v} = t_;"));
    }
    out.close();
    Ok(Value { v, null: n })
}

/// Comparisons and arithmetic (`%` of integers or decimals by zero raises an error for
/// non-NULL operands).
fn gen_binary(op: &BinaryOp, left: &Expr, right: &Expr, ty: &DataType, row: &Row, out: &mut Emitter) -> Result<Value> {
    let l = gen(left, row, out)?;
    let r = gen(right, row, out)?;
    let null = or_null(&l, &r);
    let t = out.tmp("t");
    if op.is_comparison() {
        let sym = match op {
            BinaryOp::Eq => "==",
            BinaryOp::NotEq => "!=",
            s => s.symbol(),
        };
        let (a, b) = (&l.v, &r.v);
        let expr = match left.ty() {
            DataType::Utf8 => match op {
                BinaryOp::Eq => format!("str_eq({a}, {b})"),
                BinaryOp::NotEq => format!("!str_eq({a}, {b})"),
                _ => format!("(str_cmp({a}, {b}) {sym} 0)"),
            },
            // Normalized intervals (`iv_cmp`: 30 days are a month).
            DataType::Interval => format!("(iv_cmp({a}, {b}) {sym} 0)"),
            // SQL's order of DOUBLEs (`f64_cmp`: -0.0 = 0.0, NaN = NaN and above all).
            DataType::Float64 => match op {
                BinaryOp::Eq => format!("f64_eq({a}, {b})"),
                BinaryOp::NotEq => format!("!f64_eq({a}, {b})"),
                BinaryOp::Lt => format!("f64_lt({a}, {b})"),
                BinaryOp::Gt => format!("f64_lt({b}, {a})"),
                BinaryOp::LtEq => format!("!f64_lt({b}, {a})"),
                _ => format!("!f64_lt({a}, {b})"),
            },
            _ => format!("({a} {sym} {b})"),
        };
        out.line(format!("const bool {t} = {expr};"));
        return Ok(Value { v: t, null });
    }
    if let Some(call) = crate::interval::interval_call(op, left, right, &l, &r, &null) {
        out.line(format!("const {} {t} = {call};", c_type(ty)));
        return Ok(Value { v: t, null });
    }
    let ct = c_type(ty);
    let (a, b) = (format!("(({ct}){})", l.v), format!("(({ct}){})", r.v));
    match op {
        // DOUBLE `/` and `%` are IEEE's (inf, NaN), without an error (SQL's `/` always
        // divides DOUBLEs; a division of integers is `//`).
        BinaryOp::Mod if *ty == DataType::Float64 => out.line(format!("const {ct} {t} = fmod({a}, {b});")),
        // `%` of integers and decimals, `//` of integers: an error by zero. x % -1 is 0 and
        // the smallest integer // -1 overflows (C leaves both undefined).
        BinaryOp::Mod | BinaryOp::Div if *ty != DataType::Float64 => {
            out.line(format!("const bool {t}z = !({null}) && {b} == 0;"));
            out.line(format!("if ({t}z) raise_error(err, ERR_DIV_ZERO);"));
            if *op == BinaryOp::Div {
                let min = if *ty == DataType::Int32 { "(-2147483647 - 1)" } else { "(-9223372036854775807ll - 1)" };
                out.line(format!(
                    "if (!({null}) && {b} == -1 && {a} == {min}) raise_error(err, {});",
                    out_of_range_code(ty)
                ));
                let negated = format!("({ct})(0ull - (unsigned long long){a})");
                out.line(format!("const {ct} {t} = {t}z ? ({ct})0 : ({b} == -1 ? {negated} : {a} / {b});"));
            } else {
                out.line(format!("const {ct} {t} = ({t}z || {b} == -1) ? ({ct})0 : ({a} % {b});"));
            }
        }
        // (prelude.cu's i128_sub says why 128-bit subtraction is not `-`.)
        BinaryOp::Sub if ct == "__int128" => out.line(format!("const {ct} {t} = i128_sub({a}, {b});")),
        // INTEGER and BIGINT arithmetic in a wider type, checked against the result's range
        // (the CPU backend's overflow error).
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul if matches!(ty, DataType::Int32 | DataType::Int64) => {
            let (wide, lo, hi) = if *ty == DataType::Int32 {
                ("int64_t", "-2147483648ll", "2147483647ll")
            } else {
                ("__int128", "(__int128)(-9223372036854775807ll - 1)", "(__int128)9223372036854775807ll")
            };
            let w = if wide == "__int128" && *op == BinaryOp::Sub {
                format!("i128_sub(({wide}){a}, ({wide}){b})")
            } else {
                format!("({wide}){a} {} ({wide}){b}", op.symbol())
            };
            out.line(format!("const {wide} {t}w = {w};"));
            out.line(format!(
                "if (!({null}) && ({t}w < {lo} || {t}w > {hi})) raise_error(err, {});",
                out_of_range_code(ty)
            ));
            out.line(format!("const {ct} {t} = ({ct}){t}w;"));
        }
        // A DECIMAL product with fewer digits than its operands' sum (DuckDB keeps two 64-bit
        // decimals' product in 18 digits and caps all at 38): checked against 10^digits.
        BinaryOp::Mul if Expr::decimal_product_narrowed(left, right, ty) => {
            let code = out_of_range_code(ty);
            if ct == "int64_t" {
                let limit = format!("{}ll", 10i64.pow(ty.as_decimal().map_or(18, |(p, _)| p as u32)));
                out.line(format!("const __int128 {t}w = (__int128){a} * (__int128){b};"));
                out.line(format!("if (!({null}) && ({t}w <= -{limit} || {t}w >= {limit})) raise_error(err, {code});"));
                out.line(format!("const int64_t {t} = (int64_t){t}w;"));
            } else {
                out.line(format!("const __int128 {t} = dec128_mul({a}, {b}, {null}, err, {code});"));
            }
        }
        _ => out.line(format!("const {ct} {t} = {a} {} {b};", op.symbol())),
    }
    Ok(Value { v: t, null })
}

/// LIKE by the prelude's matcher (`like_kmp` handles `%…%` over Pivot-4 columns): the
/// pattern's bytes, their kinds and their count are kernel parameters.
fn gen_like(
    node: &Expr,
    expr: &Expr,
    pattern: &LikePattern,
    negated: &bool,
    row: &Row,
    out: &mut Emitter,
) -> Result<Value> {
    let x = gen(expr, row, out)?;
    let p = out.literals()?.pattern(node, pattern, false);
    let t = out.tmp("like");
    let like = format!(
        "like_match({}, {}, {}, {})",
        x.v,
        param_name(p, LiteralPart::Bytes),
        param_name(p, LiteralPart::Kinds),
        param_name(p, LiteralPart::Len)
    );
    let v = match &pattern.dfa {
        // The DFA where the executor passes one (`SET like_dfa`), else the wildcards.
        Some(_) => {
            out.literals()?.use_dfa(p);
            format!("({} != 0u ? {} : {like})", param_name(p, LiteralPart::DfaEntries), dfa_call(p, &x.v))
        }
        None => like,
    };
    out.line(format!("const bool {t} = {v};"));
    Ok(Value { v: if *negated { format!("(!{t})") } else { t }, null: x.null })
}

/// The walk of constant `k`'s DFA over string `s` (`<lit>_classes_` and `_next_` are the
/// tables' shared copies: `Literals::locals`).
pub fn dfa_call(k: usize, s: &str) -> String {
    let name = literal_name(k);
    format!(
        "dfa_match({s}, {name}_classes_, {name}_next_, {}, {})",
        param_name(k, LiteralPart::DfaColumns),
        param_name(k, LiteralPart::DfaStart)
    )
}

/// The find DFA tables of constant `k` (strings.cu's `DfaFind`; the shared copies as in
/// `dfa_call`).
fn dfa_find_tables(k: usize) -> String {
    let name = literal_name(k);
    format!(
        "{{{name}_classes_, {name}_next_, {}, {}}}",
        param_name(k, LiteralPart::DfaColumns),
        param_name(k, LiteralPart::DfaEntries)
    )
}

/// CASE: nested ifs, so only the taken branch is evaluated.
fn gen_case(
    branches: &[(Expr, Expr)],
    else_expr: &Option<Box<Expr>>,
    ty: &DataType,
    row: &Row,
    out: &mut Emitter,
) -> Result<Value> {
    let ct = c_type(ty);
    let (v, n) = (out.tmp("c"), out.tmp("cn"));
    out.line(format!("{ct} {v}; bool {n};"));
    let mut opened = 0;
    for (when, then) in branches {
        let w = gen(when, row, out)?;
        out.open(format!("if (!{} && ({}))", w.null, w.v));
        let t = gen(then, row, out)?;
        out.line(format!("{v} = {}; {n} = {};", t.v, t.null));
        out.close_with("else");
        opened += 1;
    }
    match else_expr {
        Some(e) => {
            let x = gen(e, row, out)?;
            out.line(format!("{v} = {}; {n} = {};", x.v, x.null));
        }
        None => out.line(format!("{v} = {}; {n} = true;", null_value(ty))),
    }
    for _ in 0..opened {
        out.close();
    }
    Ok(Value { v, null: n })
}

/// `x [NOT] IN (a, b, …)` over short lists (long literal lists are `InSet`s).
fn gen_in_list(expr: &Expr, list: &[Expr], negated: &bool, row: &Row, out: &mut Emitter) -> Result<Value> {
    let x = gen(expr, row, out)?;
    let ty = expr.ty();
    let (found, saw_null) = (out.tmp("in"), out.tmp("inn"));
    out.line(format!("bool {found} = false, {saw_null} = false;"));
    for item in list {
        let i = gen(item, row, out)?;
        let eq = crate::types::eq_call(&ty, &x.v, &i.v);
        if i.is_never_null() {
            out.line(format!("{found} = {found} || {eq};"));
        } else {
            out.line(format!("if ({}) {saw_null} = true; else {found} = {found} || {eq};", i.null));
        }
    }
    let null = format!("({} || (!{found} && {saw_null}))", x.null);
    let v = if *negated { format!("(!{found})") } else { found };
    Ok(Value { v, null })
}

/// EXTRACT: of a DATE's year, month or day directly; of other fields from a TIMESTAMP.
fn gen_extract(field: &DateField, expr: &Expr, row: &Row, out: &mut Emitter) -> Result<Value> {
    if expr.ty() == DataType::Date && field.is_day_field() {
        let d = gen(expr, row, out)?;
        let which = match field {
            DateField::Year => 0,
            DateField::Month => 1,
            _ => 2,
        };
        let t = out.tmp("ex");
        out.line(format!("const int64_t {t} = date_part({}, {which});", d.v));
        Ok(Value { v: t, null: d.null })
    } else {
        let x = gen(expr, row, out)?;
        // (The binder casts a DATE to TIMESTAMP for these fields; this covers others.)
        let ts = if expr.ty() == DataType::Date {
            format!("ts_from_date({}, {})", x.v, error_flag(&x))
        } else {
            x.v.clone()
        };
        let t = out.tmp("ex");
        if expr.ty() == DataType::Interval {
            match field {
                DateField::Epoch => out.line(format!("const double {t} = iv_epoch({});", x.v)),
                f => out.line(format!("const int64_t {t} = iv_part({}, {});", x.v, part_name(*f))),
            }
            return Ok(Value { v: t, null: x.null });
        }
        match field {
            // Seconds as DOUBLE: the microseconds divided once (as the CPU backend).
            DateField::Epoch => out.line(format!("const double {t} = (double){ts} / 1000000.0;")),
            f => out.line(format!("const int64_t {t} = ts_part({ts}, {});", part_name(*f))),
        }
        Ok(Value { v: t, null: x.null })
    }
}

/// The error flag a TIMESTAMP helper reports an out-of-range result to: none for a NULL
/// value (its bits mean nothing; the CPU backend raises no error for NULL either).
fn error_flag(x: &Value) -> String {
    if x.is_never_null() {
        "err".into()
    } else {
        format!("({} ? (int*)0 : err)", x.null)
    }
}

/// The prelude's name of an EXTRACT field of `ts_part` (EPOCH, a DOUBLE, is computed
/// inline and never passed to it).
fn part_name(f: DateField) -> &'static str {
    match f {
        DateField::Year => "PART_YEAR",
        DateField::Quarter => "PART_QUARTER",
        DateField::Month => "PART_MONTH",
        DateField::Day => "PART_DAY",
        DateField::Hour => "PART_HOUR",
        DateField::Minute => "PART_MINUTE",
        DateField::Second => "PART_SECOND",
        DateField::Millisecond => "PART_MILLISECOND",
        DateField::Microsecond => "PART_MICROSECOND",
        DateField::DayOfWeek => "PART_DOW",
        DateField::DayOfYear => "PART_DOY",
        DateField::Epoch => "PART_EPOCH",
        DateField::IsoDayOfWeek => "PART_ISODOW",
        DateField::Week => "PART_WEEK",
        DateField::IsoYear => "PART_ISOYEAR",
    }
}

fn pow10_literal(k: u8, c_ty: &str) -> String {
    let p = 10i128.pow(k as u32);
    if c_ty == "__int128" {
        crate::types::i128_literal(p)
    } else {
        format!("((int64_t){p}ll)")
    }
}

/// CAST of DOUBLE `v` to an integer type (half to even) or a DECIMAL (the scaled value
/// half away from zero), as `gpusql_common::semantics`; out of range raises an overflow
/// error on `err`.
fn cast_double(v: &str, to: &DataType, err: &str) -> String {
    let (kind, bounds) = double_target(to);
    format!("(({})f64_to_{kind}({v}, {bounds}, {err}, {}))", c_type(to), out_of_range_code(to))
}

/// The range of a 32-bit (INTEGER, DATE) or 64-bit integer type, as 128-bit C literals.
fn int_range_128(ty: &DataType) -> (&'static str, &'static str) {
    if c_type(ty) == "int32_t" {
        ("((__int128)(-2147483647 - 1))", "((__int128)2147483647)")
    } else {
        ("((__int128)(-9223372036854775807ll - 1))", "((__int128)9223372036854775807ll)")
    }
}

/// Whether a cast from the integer or decimal `from` to the integer or DATE `to` can leave
/// `to`'s range (the CPU backend's cast fails there: "INTEGER out of range", …).
fn narrows(from: &DataType, to: &DataType) -> bool {
    let bits = |t: &DataType| match t {
        DataType::Int32 | DataType::Date => Some(32),
        DataType::Int64 => Some(64),
        _ => None,
    };
    let Some(to_bits) = bits(to) else { return false };
    match from {
        DataType::Decimal { precision, scale } => (precision - scale) as u32 > if to_bits == 32 { 9 } else { 18 },
        _ => bits(from).is_some_and(|b| b > to_bits),
    }
}

/// C expression converting `v` from `from` to `to` (same rules as the CPU backend's cast).
pub fn cast(v: &str, from: &DataType, to: &DataType) -> Result<String> {
    use DataType::*;
    let ct = c_type(to);
    Ok(match (from, to) {
        _ if from == to => v.to_string(),
        // The nearest DOUBLE (as `semantics::decimal_to_f64`).
        (Decimal { scale, .. }, Float64) => format!(
            "decimal_to_f64((__int128){v}, {}, {})",
            pow10_literal(*scale, "__int128"),
            if *scale <= 22 { crate::types::f64_literal(10f64.powi(*scale as i32)) } else { "0.0".into() }
        ),
        (_, Float64) => format!("((double){v})"),
        (Int32 | Int64 | Decimal { .. }, Decimal { scale: s2, .. }) => {
            let s1 = from.scale();
            let wide = if c_type(from) == "__int128" || ct == "__int128" { "__int128" } else { "int64_t" };
            if *s2 >= s1 {
                format!("(({ct})(({wide}){v} * {}))", pow10_literal(s2 - s1, wide))
            } else {
                format!("(({ct})div_round((__int128){v}, {}))", pow10_literal(s1 - s2, "__int128"))
            }
        }
        (Decimal { scale, .. }, Int32 | Int64) => {
            format!("(({ct})div_round((__int128){v}, {}))", pow10_literal(*scale, "__int128"))
        }
        // (Range-checked: `gen` emits `cast_double` with the error flag.)
        (Float64, Int32 | Int64 | Decimal { .. }) => cast_double(v, to, "(int*)0"),
        (Int32 | Int64 | Date | Boolean, Int32 | Int64 | Date) => format!("(({ct}){v})"),
        // The day, floored (before 1970 too). DATE -> TIMESTAMP can overflow: `gen` emits
        // ts_from_date with the error flag.
        (Timestamp, Date) => format!("ts_to_date({v})"),
        _ => return Err(Error::not_supported(format!("cast from {from} to {to} on the GPU"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn division(ty: DataType) -> String {
        let col = |index: usize| Expr::Column { index, name: format!("c{index}"), ty, nullable: true };
        let e = Expr::Binary { op: BinaryOp::Div, left: Box::new(col(0)), right: Box::new(col(1)), ty };
        let row = [Value { v: "a".into(), null: "an".into() }, Value { v: "b".into(), null: "bn".into() }];
        let mut out = Emitter::default();
        let v = gen(&e, &row, &mut out).unwrap();
        format!("{}{}", out.code, v.v)
    }

    /// DOUBLE `/` is IEEE's (no error, no integer paths); `//` of integers checks its divisor.
    #[test]
    fn divisions_by_type() {
        let double = division(DataType::Float64);
        assert!(!double.contains("ERR_DIV_ZERO") && !double.contains("unsigned"), "{double}");
        assert!(double.contains("((double)a) / ((double)b)"), "{double}");
        let int = division(DataType::Int64);
        assert!(int.contains("ERR_DIV_ZERO") && int.contains("-9223372036854775807ll - 1"), "{int}");
    }

    fn cast_code(from: DataType, to: DataType) -> String {
        let e = Expr::Cast {
            expr: Box::new(Expr::Column { index: 0, name: "c0".into(), ty: from, nullable: true }),
            ty: to,
        };
        let row = [Value { v: "a".into(), null: "an".into() }];
        let mut out = Emitter::default();
        let v = gen(&e, &row, &mut out).unwrap();
        format!("{}{}", out.code, v.v)
    }

    #[test]
    fn narrowing_casts_are_range_checked() {
        // BIGINT -> INTEGER / DATE and wide DECIMAL -> INTEGER fail outside the range, as
        // the CPU backend's cast (they wrapped around before).
        for (from, to) in [
            (DataType::Int64, DataType::Int32),
            (DataType::Int64, DataType::Date),
            (DataType::Decimal { precision: 18, scale: 2 }, DataType::Int32),
            (DataType::Decimal { precision: 38, scale: 0 }, DataType::Int64),
        ] {
            let code = cast_code(from, to);
            assert!(
                code.contains("raise_error(err,") && code.contains("2147483647") || to == DataType::Int64,
                "{code}"
            );
            assert!(code.contains(&out_of_range_code(&to).to_string()), "{code}");
        }
        // Widening needs no check.
        assert!(!cast_code(DataType::Int32, DataType::Int64).contains("raise_error"));
        assert!(!cast_code(DataType::Decimal { precision: 9, scale: 2 }, DataType::Int32).contains("raise_error"));
    }
}
