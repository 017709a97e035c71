//! The value semantics of the engine, defined once for the host: comparison of DOUBLEs,
//! rounding and casts of DOUBLEs, and the characters of UTF-8 text. They follow DuckDB
//! (2.0.1, the project's oracle). The CPU backend and constant folding call these; the GPU
//! backend's twins in `codegen/src/prelude.cu` carry the same names (`f64_cmp`,
//! `f64_key_bits`, `round_f64`, `f64_to_int`, `f64_to_scaled`, `utf8_continuation`), and
//! `sql-tests/value_semantics.slt` runs one grid of values through both backends.

use std::cmp::Ordering;

/// DOUBLE comparison as SQL sees it (comparisons, MIN/MAX, ORDER BY): `-0.0` equals
/// `0.0`, and NaN equals NaN and is greater than every other value (infinity included).
pub fn f64_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

/// The bits a DOUBLE group or join key is hashed and compared by: `-0.0` folded into
/// `0.0` and every NaN into one NaN, so that keys equal under [`f64_cmp`] are one key.
pub fn f64_key_bits(f: f64) -> u64 {
    if f == 0.0 {
        0
    } else if f.is_nan() {
        f64::NAN.to_bits()
    } else {
        f.to_bits()
    }
}

/// `round(x, digits)` of a DOUBLE: the binary value rounded half away from zero at
/// `digits` decimals (`round(2.675, 2)` is 2.67: 2.675 is 2.67499999… in binary, although
/// `2.675 * 100` rounds to 267.5), then divided back. Where the scaled value is not
/// finite, `x` itself (DuckDB's answers).
pub fn round_f64(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if digits >= 0 {
        let m = 10f64.powi(digits);
        let v = x * m;
        if !v.is_finite() {
            return x;
        }
        let mut r = v.round();
        // An apparent tie may be the product's rounding: the exact product is v + err.
        if (v - v.trunc()).abs() == 0.5 {
            let err = x.mul_add(m, -v);
            if err != 0.0 && (err > 0.0) != (v > 0.0) {
                r = v.trunc();
            }
        }
        r / m
    } else {
        let m = 10f64.powi(-digits);
        let r = (x / m).round() * m;
        if r.is_nan() {
            0.0
        } else if r.is_infinite() {
            x
        } else {
            r
        }
    }
}

/// CAST of a DOUBLE to an integer type: rounded half to even (DuckDB: `CAST(2.5 AS
/// INTEGER)` is 2, `CAST(-0.5 AS INTEGER)` is 0); None for NaN, infinities and values
/// beyond 64 bits (the caller checks the target type's range).
pub fn f64_to_int(x: f64) -> Option<i128> {
    let r = x.round_ties_even();
    (r.is_finite() && r.abs() < 9.3e18).then_some(r as i128)
}

/// CAST of a DOUBLE to a DECIMAL of scale `scale`: `x * 10^scale` rounded half away from
/// zero (DuckDB rounds the product: `CAST(2.675 AS DECIMAL(10, 2))` is 2.68); None where
/// it is not finite or beyond 38 digits.
pub fn f64_to_scaled(x: f64, scale: u8) -> Option<i128> {
    let r = (x * 10f64.powi(scale as i32)).round();
    (r.is_finite() && r.abs() < 1e38).then_some(r as i128)
}

/// A DECIMAL (unscaled `v`, `scale`) as the nearest DOUBLE (DuckDB's CAST: correctly
/// rounded, `1000000000000000.5` stays .5). Both operands of the division are exact below
/// 2^53; above, the decimal text is parsed (correctly rounded). The GPU's cast divides
/// the same way below 2^53 and may be one unit in the last place off above it.
pub fn decimal_to_f64(v: i128, scale: u8) -> f64 {
    if v.unsigned_abs() < 1 << 53 && scale <= 22 {
        v as f64 / 10f64.powi(scale as i32)
    } else {
        crate::scalar::format_decimal(v, scale).parse().unwrap_or(f64::NAN)
    }
}

/// Whether a byte continues a UTF-8 character (10xxxxxx): positions in text (`LIKE`'s
/// `_`, `length`, `substring`) count characters, which start at the other bytes.
pub fn utf8_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_compare_as_sql() {
        assert_eq!(f64_cmp(-0.0, 0.0), Ordering::Equal);
        assert_eq!(f64_cmp(f64::NAN, f64::NAN), Ordering::Equal);
        assert_eq!(f64_cmp(f64::NAN, f64::INFINITY), Ordering::Greater);
        assert_eq!(f64_cmp(-f64::NAN, 1.0), Ordering::Greater);
        assert_eq!(f64_key_bits(-0.0), f64_key_bits(0.0));
        assert_eq!(f64_key_bits(-f64::NAN), f64_key_bits(f64::NAN));
    }

    /// DuckDB 2.0.1's answers.
    #[test]
    fn rounding_follows_duckdb() {
        for (x, d, want) in [
            (2.675, 2, 2.67),
            (0.125, 2, 0.13),
            (-44.9995, 3, -44.999),
            (1.005, 2, 1.0),
            (2.5, 0, 3.0),
            (-2.5, 0, -3.0),
            (0.49999999999999994, 0, 0.0),
            (1234.5, -2, 1200.0),
            (1e300, 5, 1.0000000000000002e300),
            (123.456, 400, 123.456),
            (123.456, -400, 0.0),
            (1.7e308, -308, 1.7e308),
        ] {
            assert_eq!(round_f64(x, d), want, "round({x}, {d})");
        }
        assert_eq!(f64_to_int(2.5), Some(2));
        assert_eq!(f64_to_int(3.5), Some(4));
        assert_eq!(f64_to_int(-0.5), Some(0));
        assert_eq!(f64_to_int(f64::NAN), None);
        assert_eq!(f64_to_scaled(2.675, 2), Some(268));
        assert_eq!(decimal_to_f64(10000000000000005, 1), 1000000000000000.5);
        assert_eq!(decimal_to_f64(-25, 1), -2.5);
        assert_eq!(f64_to_scaled(-0.125, 2), Some(-13));
    }
}
