//! C types, NULL values, constants of the code's shape and per-type helper names for
//! generated CUDA.

use gpusql_common::{DataType, Error, Result};

/// The C type a value of `ty` has in registers and in fixed-width GPU columns.
pub fn c_type(ty: &DataType) -> &'static str {
    match ty {
        DataType::Boolean => "bool",
        DataType::Int32 | DataType::Date => "int32_t",
        DataType::Int64 | DataType::Timestamp => "int64_t",
        DataType::Float64 => "double",
        DataType::Decimal { precision, .. } if *precision <= 18 => "int64_t",
        DataType::Decimal { .. } => "__int128",
        DataType::Interval => "Interval",
        DataType::Utf8 => "Str",
    }
}

/// The zero of C type `ct` (a structure's all-zero value).
pub fn c_zero(ct: &str) -> String {
    match ct {
        "Str" => "make_str(\"\", 0)".into(),
        "Interval" => "make_iv(0, 0, 0)".into(),
        _ => format!("({ct})0"),
    }
}

/// The initializer of a local of C type `ct` (before a value is assigned).
pub fn c_init(ct: &str) -> &'static str {
    match ct {
        "Str" => " = make_str(\"\", 0)",
        "Interval" => " = make_iv(0, 0, 0)",
        _ => " = 0",
    }
}

/// The value a NULL of type `ty` holds in generated code (the type's zero; its NULL flag
/// is the constant `true`). Other literals are kernel parameters (`literals.rs`).
pub fn null_value(ty: &DataType) -> String {
    match ty {
        DataType::Utf8 => "make_str(\"\", 0)".into(),
        DataType::Interval => "make_iv(0, 0, 0)".into(),
        _ => format!("(({})0)", c_type(ty)),
    }
}

/// A `double` constant of the code's shape, exact (its bits; infinities too).
pub fn f64_literal(x: f64) -> String {
    format!("__longlong_as_double({:#x}ll)", x.to_bits())
}

/// An `int64_t` constant of the code's shape.
pub fn i64_literal(x: i64) -> String {
    if x == i64::MIN {
        "((int64_t)(-9223372036854775807ll - 1))".into()
    } else {
        format!("((int64_t){x}ll)")
    }
}

/// An `__int128` constant of the code's shape (a power of ten that rescales a decimal);
/// the query's literals are kernel parameters (`literals.rs`).
pub fn i128_literal(x: i128) -> String {
    if x >= i64::MIN as i128 && x <= i64::MAX as i128 {
        format!("((__int128){})", i64_literal(x as i64))
    } else {
        let u = x as u128;
        format!("((__int128)(((unsigned __int128){}ull << 64) | {}ull))", (u >> 64) as u64, u as u64)
    }
}

/// Expression hashing one value of `ty` to 64 bits.
pub fn hash_call(ty: &DataType, v: &str) -> String {
    match c_type(ty) {
        "Str" => format!("hash_str({v})"),
        "double" => format!("hash_f64({v})"),
        "__int128" => format!("hash_i128({v})"),
        "Interval" => format!("hash_iv({v})"),
        _ => format!("hash_u64((uint64_t)(int64_t)({v}))"),
    }
}

/// SQL equality of two values of `ty` (DOUBLEs: `-0.0 = 0.0`, NaN = NaN).
pub fn eq_call(ty: &DataType, a: &str, b: &str) -> String {
    match ty {
        DataType::Utf8 => format!("str_eq({a}, {b})"),
        DataType::Float64 => format!("f64_eq({a}, {b})"),
        DataType::Interval => format!("iv_eq({a}, {b})"),
        _ => format!("({a} == {b})"),
    }
}

/// The C condition that `a` sorts before `b`, of C type `ct`, in SQL's order (DOUBLEs:
/// `f64_lt`, NaN above every number).
pub fn less_call(ct: &str, a: &str, b: &str) -> String {
    match ct {
        "double" => format!("f64_lt({a}, {b})"),
        "Interval" => format!("iv_lt({a}, {b})"),
        _ => format!("{a} < {b}"),
    }
}

/// Bytes of a value of C type `ct` (as generated code declares it).
pub fn c_size(ct: &str) -> usize {
    match ct {
        "bool" => 1,
        "int32_t" | "uint32_t" => 4,
        "__int128" | "Str" | "Interval" => 16,
        _ => 8,
    }
}

/// Suffix of the prelude's reduction/atomic helpers for an accumulator C type.
pub fn helper_suffix(c_ty: &str, what: &str) -> Result<&'static str> {
    Ok(match c_ty {
        "__int128" => "i128",
        "int64_t" => "i64",
        "int32_t" => "i32",
        "double" => "f64",
        "Str" => "str",
        "Interval" => "iv",
        other => return Err(Error::not_supported(format!("{what} on values of C type {other} on the GPU"))),
    })
}

/// Largest and smallest value of a C type in SQL's order (MIN/MAX identities).
pub fn c_max(c_ty: &str) -> &'static str {
    match c_ty {
        "int32_t" => "((int32_t)2147483647)",
        "int64_t" => "((int64_t)9223372036854775807ll)",
        "__int128" => "I128_MAX",
        "Str" => "STR_NONE",
        "Interval" => "IV_NONE",
        // NaN: SQL orders it above +inf (`f64_cmp`), so MIN of NaNs alone stays NaN.
        _ => "__longlong_as_double(0x7ff8000000000000ll)",
    }
}

pub fn c_min(c_ty: &str) -> &'static str {
    match c_ty {
        "int32_t" => "((int32_t)(-2147483647 - 1))",
        "int64_t" => "((int64_t)(-9223372036854775807ll - 1))",
        "__int128" => "I128_MIN",
        "Str" => "STR_NONE",
        "Interval" => "IV_NONE",
        _ => "__longlong_as_double(0xfff0000000000000ll)",
    }
}
