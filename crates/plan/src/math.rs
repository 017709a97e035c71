//! The math functions of numbers (`Expr::Math`): their SQL names, argument counts, result
//! types and values, one definition for both backends. DOUBLE functions are the C library's
//! (the CUDA twin of each is the function of the same name, `MathFunc::cuda_name`); IEEE
//! results outside the domain as DuckDB's (`sqrt(-1)` NaN, `ln(0)` -inf, no error).
//! FLOOR / CEIL / TRUNC of a DECIMAL stay exact: the scaled integer divided by 10^scale,
//! rounded down, up or toward zero, a DECIMAL of scale 0 (DuckDB's type).

use gpusql_common::{DataType, ScalarValue};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFunc {
    Sqrt,
    Cbrt,
    /// Natural logarithm (`ln`).
    Ln,
    /// `log10`, and DuckDB's one-argument `log`.
    Log10,
    Log2,
    Exp,
    Floor,
    Ceil,
    Trunc,
    /// -1, 0 or 1 (0 for ±0.0 and NaN, as DuckDB).
    Sign,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Degrees,
    Radians,
    /// `power(x, y)`, `pow(x, y)`.
    Power,
    Atan2,
}

impl MathFunc {
    /// The function a SQL name calls (lower case), if it is one of these.
    pub fn from_name(name: &str) -> Option<MathFunc> {
        use MathFunc::*;
        Some(match name {
            "sqrt" => Sqrt,
            "cbrt" => Cbrt,
            "ln" => Ln,
            "log" | "log10" => Log10,
            "log2" => Log2,
            "exp" => Exp,
            "floor" => Floor,
            "ceil" | "ceiling" => Ceil,
            "trunc" => Trunc,
            "sign" => Sign,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "asin" => Asin,
            "acos" => Acos,
            "atan" => Atan,
            "degrees" => Degrees,
            "radians" => Radians,
            "power" | "pow" => Power,
            "atan2" => Atan2,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        use MathFunc::*;
        match self {
            Sqrt => "sqrt",
            Cbrt => "cbrt",
            Ln => "ln",
            Log10 => "log10",
            Log2 => "log2",
            Exp => "exp",
            Floor => "floor",
            Ceil => "ceil",
            Trunc => "trunc",
            Sign => "sign",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Degrees => "degrees",
            Radians => "radians",
            Power => "power",
            Atan2 => "atan2",
        }
    }

    pub fn arity(&self) -> usize {
        match self {
            MathFunc::Power | MathFunc::Atan2 => 2,
            _ => 1,
        }
    }

    /// FLOOR, CEIL and TRUNC: exact on DECIMALs (scale 0 out), the others take DOUBLE.
    pub fn keeps_decimal(&self) -> bool {
        matches!(self, MathFunc::Floor | MathFunc::Ceil | MathFunc::Trunc)
    }

    /// The result type for an argument of type `arg` (after the binder's casts: DOUBLE, or
    /// a DECIMAL or integer for `keeps_decimal` and SIGN).
    pub fn result_type(&self, arg: DataType) -> DataType {
        match (self, arg) {
            // DuckDB's TINYINT; this engine's smallest integer.
            (MathFunc::Sign, _) => DataType::Int32,
            (f, DataType::Decimal { precision, .. }) if f.keeps_decimal() => DataType::decimal(precision, 0),
            _ => DataType::Float64,
        }
    }

    /// The C function of a DOUBLE argument in CUDA (and the C library): `cuda_name(x)` or
    /// `cuda_name(x, y)`. SIGN and the angle conversions are prelude.cu's.
    pub fn cuda_name(&self) -> &'static str {
        match self {
            MathFunc::Ln => "log",
            MathFunc::Sign => "f64_sign",
            MathFunc::Degrees => "f64_degrees",
            MathFunc::Radians => "f64_radians",
            MathFunc::Power => "pow",
            // The SQL name is the C function's.
            f => f.name(),
        }
    }

    /// The value of a DOUBLE call (`y` only for the functions of two arguments).
    pub fn apply_f64(&self, x: f64, y: f64) -> f64 {
        use MathFunc::*;
        match self {
            Sqrt => x.sqrt(),
            Cbrt => x.cbrt(),
            Ln => x.ln(),
            Log10 => x.log10(),
            Log2 => x.log2(),
            Exp => x.exp(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Trunc => x.trunc(),
            Sign => f64_sign(x),
            Sin => x.sin(),
            Cos => x.cos(),
            Tan => x.tan(),
            Asin => x.asin(),
            Acos => x.acos(),
            Atan => x.atan(),
            // (prelude.cu's f64_degrees / f64_radians: the same two operations.)
            Degrees => x * (180.0 / std::f64::consts::PI),
            Radians => x * (std::f64::consts::PI / 180.0),
            Power => x.powf(y),
            Atan2 => x.atan2(y),
        }
    }

    /// FLOOR / CEIL / TRUNC of a scaled integer `v` of scale `scale`; SIGN of an integer.
    pub fn apply_scaled(&self, v: i128, scale: u8) -> i128 {
        let p = 10i128.pow(scale as u32);
        match self {
            MathFunc::Floor => v.div_euclid(p),
            MathFunc::Ceil => -(-v).div_euclid(p),
            MathFunc::Sign => v.signum(),
            _ => v / p,
        }
    }

    /// The call over evaluated arguments (NULL in, NULL out).
    pub fn eval(&self, args: &[ScalarValue], arg_ty: DataType) -> ScalarValue {
        use ScalarValue as S;
        if args.iter().any(|a| a.is_null()) {
            return S::Null;
        }
        match (&args[0], arg_ty) {
            (S::Float64(x), _) => {
                let y = match args.get(1) {
                    Some(S::Float64(y)) => *y,
                    _ => 0.0,
                };
                let v = self.apply_f64(*x, y);
                if *self == MathFunc::Sign {
                    S::Int32(v as i32)
                } else {
                    S::Float64(v)
                }
            }
            (v, t) => {
                let scale = t.as_decimal().map_or(0, |(_, s)| s);
                let r = self.apply_scaled(v.as_i128().unwrap_or(0), scale);
                match self.result_type(t) {
                    DataType::Int32 => S::Int32(r as i32),
                    _ => S::Decimal(r),
                }
            }
        }
    }
}

/// SIGN of a DOUBLE: 0 for ±0.0 and NaN.
pub fn f64_sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// ROUND(x, -tens)'s type for an integer or DECIMAL x, as DuckDB: integers keep theirs; a
/// DECIMAL(p, s) becomes DECIMAL(p, 0), with one more digit for the carry where s is 0
/// (999 -> 1000) unless every value rounds to 0 (tens >= p).
pub fn round_tens_type(x: DataType, tens: u8) -> Option<DataType> {
    match x {
        DataType::Int32 | DataType::Int64 => Some(x),
        DataType::Decimal { precision, scale: 0 } if tens < precision => {
            Some(DataType::decimal((precision + 1).min(38), 0))
        }
        DataType::Decimal { precision, .. } => Some(DataType::decimal(precision, 0)),
        _ => None,
    }
}

/// ROUND(x, -tens) of the scaled integer `v` (scale `scale`): the nearest multiple of
/// 10^tens, halves away from zero, at scale 0. None where it leaves 128 bits.
pub fn round_tens(v: i128, scale: u8, tens: u8) -> Option<i128> {
    let shift = scale as u32 + tens as u32;
    // |v| < 10^38.2: past 10^39 every value rounds to 0.
    if shift > 38 {
        return Some(0);
    }
    let q = 10i128.pow(shift);
    let (mut d, r) = (v / q, (v % q).abs());
    if r >= q - r {
        d += v.signum();
    }
    d.checked_mul(10i128.pow(tens as u32))
}
