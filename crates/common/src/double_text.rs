//! DOUBLE as text, as DuckDB 2.0.1 writes it (CAST(x AS VARCHAR), `||`, concat): the
//! shortest digits that read back as the same double, the closest to it where several
//! are and the even one of a tie (Ryu, by the `ryu` crate; Rust's own `{:e}` breaks ties
//! upwards: 2^-25 is 2.9802322387695312e-08 here and in DuckDB), in fixed notation for
//! decimal exponents -4 to 15 (`100.0`, `0.0001`) and else scientific (`1e+16`,
//! `1.5e-05`); `nan`, `inf`, `-inf`, `-0.0`. codegen's `double_text.cu` is the GPU's twin,
//! tested against this over every binary exponent.
//!
//! Every NaN is `nan`. DuckDB writes `-nan` for a NaN whose sign bit is set, which x86
//! gives 0/0 and inf - inf; which NaN an operation makes is the hardware's (the GPU's
//! differ), and this engine treats all NaNs as one value (`semantics::f64_key_bits`), so
//! its text does not depend on the sign: a known difference from DuckDB.

/// DuckDB's text of `x`.
pub fn double_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, exp) = shortest_digits(x.abs());
    let len = digits.len() as i32;
    let body = if (-4..16).contains(&exp) {
        if exp >= len - 1 {
            format!("{digits}{}.0", "0".repeat((exp - (len - 1)) as usize))
        } else if exp >= 0 {
            let (int, frac) = digits.split_at(exp as usize + 1);
            format!("{int}.{frac}")
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{dot}e{esign}{:02}", exp.abs())
    };
    format!("{sign}{body}")
}

/// The shortest digits of a finite `x > 0` (no leading or trailing zeros) and the decimal
/// exponent of the first, from ryu's text (`1e16`, `0.0001`, `1.5e-7`, `123.0`).
fn shortest_digits(x: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(x);
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().expect("ryu's exponent is an integer")),
        None => (text, 0),
    };
    let point = mantissa.find('.').unwrap_or(mantissa.len()) as i32;
    let all: String = mantissa.chars().filter(|c| *c != '.').collect();
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0').to_string();
    (digits, point - 1 - leading as i32 + exp)
}

#[cfg(test)]
mod tests {
    use super::double_text;

    #[test]
    fn duckdb_answers() {
        // (Each answer is DuckDB 2.0.1's CAST(x::DOUBLE AS VARCHAR).)
        let cases: &[(f64, &str)] = &[
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.5e300, "1.5e+300"),
            (2.5e-300, "2.5e-300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (123.456, "123.456"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1.0 / 3.0, "0.3333333333333333"),
            (-1e-7, "-1e-07"),
            (9007199254740993.0, "9007199254740992.0"),
            (1e100, "1e+100"),
            (1e7, "10000000.0"),
            (123e-7, "1.23e-05"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            // ties between two shortest candidates go to the even one
            (2f64.powi(-25), "2.9802322387695312e-08"),
            (f64::from_bits(0x4300000000000002), "562949953421312.2"),
        ];
        for (x, text) in cases {
            assert_eq!(double_text(*x), *text, "{x:e}");
        }
    }
}
