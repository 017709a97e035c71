//! Type rules (DuckDB's, where they differ from PostgreSQL): the binder casts operands so
//! that every operator sees one type, and decides each result type here.

use gpusql_common::datatype::{INT64_DECIMAL_PRECISION, MAX_DECIMAL_PRECISION};
use gpusql_common::{date, DataType, Error, Result, ScalarValue};
use gpusql_plan::{BinaryOp, Expr};

pub fn cast(e: Expr, ty: DataType) -> Expr {
    if e.ty() == ty {
        return e;
    }
    // Typed NULL literals just change type.
    if let Expr::Literal { value: ScalarValue::Null, .. } = e {
        return Expr::literal(ScalarValue::Null, ty);
    }
    // To text through the string function both backends make (a set operation's NULL
    // column of type INTEGER beside a VARCHAR one, TPC-DS q27).
    if ty == DataType::Utf8 {
        if let Ok(text) = crate::bind_string::as_text(e.clone()) {
            return text;
        }
    }
    Expr::Cast { expr: Box::new(e), ty }
}

fn is_null_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal { value: ScalarValue::Null, .. })
}

/// Common type for comparing or combining two values (CASE branches, IN lists, =, <).
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(*a);
    }
    Some(match (a, b) {
        (Float64, t) | (t, Float64) if t.is_numeric() => Float64,
        (Int32, Int64) | (Int64, Int32) => Int64,
        // A DATE next to a TIMESTAMP is its midnight (DuckDB).
        (Date, Timestamp) | (Timestamp, Date) => Timestamp,
        (Decimal { .. }, _) | (_, Decimal { .. }) => {
            let (p1, s1) = a.as_decimal()?;
            let (p2, s2) = b.as_decimal()?;
            let scale = s1.max(s2);
            let int_digits = (p1 - s1).max(p2 - s2);
            DataType::decimal(int_digits + scale, scale)
        }
        _ => return None,
    })
}

/// The type of a value that is one of two types (CASE branches, COALESCE, the columns of
/// set operations, VALUES): `common_type`, except that decimals whose integer digits plus
/// scale pass 38 keep their integer digits and lose scale (DuckDB: DECIMAL(38,1) and
/// DECIMAL(12,3) make DECIMAL(38,1)); comparisons keep `common_type`'s scale.
pub fn result_type(a: &DataType, b: &DataType) -> Option<DataType> {
    let t = common_type(a, b)?;
    if let (Some((p1, s1)), Some((p2, s2)), DataType::Decimal { .. }) = (a.as_decimal(), b.as_decimal(), t) {
        let int_digits = (p1 - s1).max(p2 - s2);
        let scale = s1.max(s2);
        if int_digits as u16 + scale as u16 > gpusql_common::datatype::MAX_DECIMAL_PRECISION as u16 {
            let max = gpusql_common::datatype::MAX_DECIMAL_PRECISION;
            return Some(DataType::decimal(max, max.saturating_sub(int_digits)));
        }
    }
    Some(t)
}

/// Whether a value of type `from` may be stored in a column of type `to` (INSERT): the
/// same type, numbers, or a DATE into a TIMESTAMP (its midnight).
pub fn assignable(from: &DataType, to: &DataType) -> bool {
    from == to || (from.is_numeric() && to.is_numeric()) || (*from == DataType::Date && *to == DataType::Timestamp)
}

/// Brings two operands to a common type; a string literal next to a DATE or TIMESTAMP
/// becomes one, and next to a number a number of its type (DuckDB: `i = '42'`, `d =
/// '1.251'` compares with 1.25 for a DECIMAL(15,2)).
pub fn unify(l: Expr, r: Expr, what: &str) -> Result<(Expr, Expr, DataType)> {
    let l = string_to_date(l, &r)?;
    let r = string_to_date(r, &l)?;
    let l = string_to_number(l, &r)?;
    let r = string_to_number(r, &l)?;
    if is_null_literal(&l) {
        let t = r.ty();
        return Ok((cast(l, t), r, t));
    }
    if is_null_literal(&r) {
        let t = l.ty();
        return Ok((l, cast(r, t), t));
    }
    let (lt, rt) = (l.ty(), r.ty());
    let t = common_type(&lt, &rt).ok_or_else(|| Error::bind(format!("cannot {what} {lt} and {rt}")))?;
    Ok((cast(l, t), cast(r, t), t))
}

/// `unify` for `x IN (subquery)`: DuckDB compares two decimals there at the type a value of
/// either would take (`result_type`: past 38 digits the scale gives way, so 37.450 IN
/// (SELECT DECIMAL(38,0) 37) holds), where `=` keeps `common_type`'s scale.
pub fn unify_in_subquery(l: Expr, r: Expr) -> Result<(Expr, Expr, DataType)> {
    let (lt, rt) = (l.ty(), r.ty());
    if let (DataType::Decimal { .. }, DataType::Decimal { .. }, Some(t)) = (lt, rt, result_type(&lt, &rt)) {
        return Ok((cast(l, t), cast(r, t), t));
    }
    unify(l, r, "compare (IN)")
}

fn string_to_number(e: Expr, other: &Expr) -> Result<Expr> {
    match &e {
        Expr::Literal { value: ScalarValue::Utf8(s), .. } if other.ty().is_numeric() && !is_null_literal(other) => {
            let text = s.clone();
            crate::bind_cast::cast_string_literal(e, other.ty(), &text)
        }
        _ => Ok(e),
    }
}

fn string_to_date(e: Expr, other: &Expr) -> Result<Expr> {
    match (&e, other.ty()) {
        (Expr::Literal { value: ScalarValue::Utf8(s), .. }, DataType::Date) => {
            let d = date::parse_date(s.as_str())
                .and_then(|d| i32::try_from(d).ok())
                .ok_or_else(|| Error::bind(format!("invalid date '{s}'")))?;
            Ok(Expr::literal(ScalarValue::Date(d), DataType::Date))
        }
        (Expr::Literal { value: ScalarValue::Utf8(s), .. }, DataType::Timestamp) => {
            crate::literal::timestamp_literal(s)
        }
        (Expr::Literal { value: ScalarValue::Utf8(s), .. }, DataType::Interval) => {
            let text = s.clone();
            crate::bind_cast::cast_string_literal(e, DataType::Interval, &text)
        }
        // A parameter's text next to a DATE: the same conversion, made per run.
        (Expr::Parameter { ty: DataType::Utf8, .. }, ty @ (DataType::Date | DataType::Timestamp)) => {
            gpusql_plan::parameters::derived(Expr::Cast { expr: Box::new(e), ty })
        }
        _ => Ok(e),
    }
}

/// DuckDB's equality (`=`, `<>`, IS [NOT] DISTINCT FROM, IN) of a text expression and a
/// number, DATE, TIMESTAMP or BOOLEAN: the text is read as the other side's type (a CAST
/// of text, which fails on text that does not read). Ordering comparisons of the two are
/// errors, as in DuckDB.
pub fn text_for_equality(l: Expr, r: Expr) -> (Expr, Expr) {
    let reads = |e: &Expr| {
        !is_null_literal(e)
            && (e.ty().is_numeric() || matches!(e.ty(), DataType::Date | DataType::Timestamp | DataType::Boolean))
    };
    let text = |e: &Expr| e.ty() == DataType::Utf8 && !matches!(e, Expr::Literal { .. } | Expr::Parameter { .. });
    if text(&l) && reads(&r) {
        let ty = r.ty();
        (cast(l, ty), r)
    } else if text(&r) && reads(&l) {
        let ty = l.ty();
        (l, cast(r, ty))
    } else {
        (l, r)
    }
}

pub fn comparison(op: BinaryOp, l: Expr, r: Expr) -> Result<Expr> {
    let (l, r) = match op {
        BinaryOp::Eq | BinaryOp::NotEq => text_for_equality(l, r),
        _ => (l, r),
    };
    // DATE ± INTERVAL is a TIMESTAMP (DuckDB), the midnight of a date: next to a DATE, or
    // another such midnight, the dates compare alike, without a cast per row.
    let (l, r) = match (midnight_of(&l), midnight_of(&r)) {
        (Some(a), Some(b)) => (a.clone(), b.clone()),
        (Some(a), None) if r.ty() == DataType::Date => (a.clone(), r),
        (None, Some(b)) if l.ty() == DataType::Date => (l, b.clone()),
        _ => (l, r),
    };
    let (l, r, _) = unify(l, r, &format!("compare ({})", op.symbol()))?;
    Ok(Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty: DataType::Boolean })
}

/// The DATE whose midnight `e` is (a cast of a DATE to TIMESTAMP).
fn midnight_of(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Cast { expr, ty: DataType::Timestamp } if expr.ty() == DataType::Date => Some(expr),
        _ => None,
    }
}

pub fn logical(op: BinaryOp, l: Expr, r: Expr) -> Result<Expr> {
    for e in [&l, &r] {
        if e.ty() != DataType::Boolean && !is_null_literal(e) {
            return Err(Error::bind(format!("{} expects BOOLEAN operands, got {}", op.symbol(), e.ty())));
        }
    }
    Ok(Expr::Binary {
        op,
        left: Box::new(cast(l, DataType::Boolean)),
        right: Box::new(cast(r, DataType::Boolean)),
        ty: DataType::Boolean,
    })
}

fn bin(op: BinaryOp, l: Expr, r: Expr, ty: DataType) -> Expr {
    Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty }
}

pub fn arithmetic(op: BinaryOp, l: Expr, r: Expr) -> Result<Expr> {
    use DataType::*;
    let (lt, rt) = (l.ty(), r.ty());
    let err = || Error::bind(format!("operator {} is not defined for {lt} and {rt}", op.symbol()));
    // Dates: date ± days, date - date.
    match (op, lt, rt) {
        (BinaryOp::Add, Date, Int32 | Int64) => {
            return Ok(Expr::DateAdd { date: Box::new(l), months: 0, days: 0 }.with_days(r))
        }
        (BinaryOp::Add, Int32 | Int64, Date) => {
            return Ok(Expr::DateAdd { date: Box::new(r), months: 0, days: 0 }.with_days(l))
        }
        (BinaryOp::Sub, Date, Int32 | Int64) => {
            let neg = Expr::Negate(Box::new(cast(r, Int32)));
            return Ok(Expr::DateAdd { date: Box::new(l), months: 0, days: 0 }.with_days(neg));
        }
        (BinaryOp::Sub, Date, Date) => return Ok(bin(op, cast(l, Int64), cast(r, Int64), Int64)),
        _ => {}
    }
    if let Some(e) = interval_arithmetic(op, l.clone(), r.clone())? {
        return Ok(e);
    }
    if !lt.is_numeric() && !is_null_literal(&l) || !rt.is_numeric() && !is_null_literal(&r) {
        return Err(err());
    }
    let (l, r) = (if is_null_literal(&l) { cast(l, rt) } else { l }, if is_null_literal(&r) { cast(r, lt) } else { r });
    let (lt, rt) = (l.ty(), r.ty());
    Ok(match op {
        // `/` divides as DOUBLE (DuckDB).
        BinaryOp::Div => bin(op, cast(l, Float64), cast(r, Float64), Float64),
        _ if lt == Float64 || rt == Float64 => bin(op, cast(l, Float64), cast(r, Float64), Float64),
        BinaryOp::Mul if matches!(lt, Decimal { .. }) || matches!(rt, Decimal { .. }) => {
            let (p1, s1) = lt.as_decimal().ok_or_else(err)?;
            let (p2, s2) = rt.as_decimal().ok_or_else(err)?;
            let (l, r) = (cast(l, DataType::decimal(p1, s1)), cast(r, DataType::decimal(p2, s2)));
            bin(op, l, r, decimal_product(p1, s1, p2, s2)?)
        }
        _ if matches!(lt, Decimal { .. }) || matches!(rt, Decimal { .. }) => {
            let t = common_type(&lt, &rt).ok_or_else(err)?;
            let (p, s) = t.as_decimal().ok_or_else(err)?;
            let out = if op == BinaryOp::Mod { t } else { DataType::decimal(p + 1, s) };
            bin(op, cast(l, t), cast(r, t), out)
        }
        _ => {
            let t = common_type(&lt, &rt).ok_or_else(err)?;
            bin(op, cast(l, t), cast(r, t), t)
        }
    })
}

/// The type of DECIMAL(p1,s1) × DECIMAL(p2,s2), as DuckDB types it: p1+p2 digits at scale
/// s1+s2, except that two 64-bit decimals keep a 64-bit product (DECIMAL(18, s1+s2), an
/// overflow error past 18 digits) where its scale fits, and no product has more than 38.
fn decimal_product(p1: u8, s1: u8, p2: u8, s2: u8) -> Result<DataType> {
    let scale = s1 + s2;
    if scale > MAX_DECIMAL_PRECISION {
        return Err(Error::bind(format!(
            "Needed scale {scale} to accurately represent the multiplication result, but this is out of \
             range of the DECIMAL type. Max scale is {MAX_DECIMAL_PRECISION}; could not perform an accurate \
             multiplication. Either add a cast to DOUBLE, or add an explicit cast to a decimal with a lower scale."
        )));
    }
    let width = p1 + p2;
    let width = if width > INT64_DECIMAL_PRECISION
        && p1.max(p2) <= INT64_DECIMAL_PRECISION
        && scale < INT64_DECIMAL_PRECISION
    {
        INT64_DECIMAL_PRECISION
    } else {
        width
    };
    Ok(DataType::decimal(width, scale))
}

/// DuckDB's INTERVAL arithmetic: TIMESTAMP - TIMESTAMP (an INTERVAL: the microseconds
/// between them as days and the rest), TIMESTAMP ± INTERVAL and INTERVAL + TIMESTAMP (a
/// DATE as its midnight: a TIMESTAMP), INTERVAL ± INTERVAL, INTERVAL times an integer
/// (BIGINT) or another number (DOUBLE), INTERVAL divided by a number (DOUBLE). The
/// interval is the right operand of a TIMESTAMP and the left of a number. None where
/// neither operand is an INTERVAL (nor both TIMESTAMPs).
fn interval_arithmetic(op: BinaryOp, l: Expr, r: Expr) -> Result<Option<Expr>> {
    use DataType::*;
    let (l, r) = match (is_null_literal(&l), is_null_literal(&r)) {
        (true, false) if r.ty() == Interval => (cast(l, Interval), r),
        (false, true) if l.ty() == Interval => (l, cast(r, Interval)),
        _ => (l, r),
    };
    let (lt, rt) = (l.ty(), r.ty());
    let timestamp = |e: Expr| cast(e, Timestamp);
    let number = |t: DataType| t.is_numeric();
    Ok(Some(match (op, lt, rt) {
        (BinaryOp::Sub, Timestamp, Timestamp | Date) | (BinaryOp::Sub, Date, Timestamp) => {
            bin(op, timestamp(l), timestamp(r), Interval)
        }
        (BinaryOp::Add | BinaryOp::Sub, Timestamp | Date, Interval) => bin(op, timestamp(l), r, Timestamp),
        (BinaryOp::Add, Interval, Timestamp | Date) => bin(op, timestamp(r), l, Timestamp),
        (BinaryOp::Add | BinaryOp::Sub, Interval, Interval) => bin(op, l, r, Interval),
        (BinaryOp::Mul, Interval, Int32 | Int64) => bin(op, l, cast(r, Int64), Interval),
        (BinaryOp::Mul, Int32 | Int64, Interval) => bin(op, r, cast(l, Int64), Interval),
        (BinaryOp::Mul, Interval, t) if number(t) => bin(op, l, cast(r, Float64), Interval),
        (BinaryOp::Mul, t, Interval) if number(t) => bin(op, r, cast(l, Float64), Interval),
        (BinaryOp::Div, Interval, t) if number(t) => bin(op, l, cast(r, Float64), Interval),
        (_, Interval, _) | (_, _, Interval) => {
            return Err(Error::bind(format!("operator {} is not defined for {lt} and {rt}", op.symbol())))
        }
        _ => return Ok(None),
    }))
}

/// `a // b` of integers: INTEGER or BIGINT, truncated toward zero (an error by zero and for
/// the smallest value // -1, as DuckDB). DuckDB's `//` of DOUBLEs and DECIMALs (a DOUBLE
/// division that fails by zero) is refused.
pub fn integer_division(l: Expr, r: Expr) -> Result<Expr> {
    let integer = |e: &Expr| matches!(e.ty(), DataType::Int32 | DataType::Int64) || is_null_literal(e);
    if !integer(&l) || !integer(&r) {
        return Err(Error::not_supported(format!("// of {} and {} (only of integers)", l.ty(), r.ty())));
    }
    let (lt, rt) = (l.ty(), r.ty());
    let (l, r) = (if is_null_literal(&l) { cast(l, rt) } else { l }, if is_null_literal(&r) { cast(r, lt) } else { r });
    let t = common_type(&l.ty(), &r.ty()).ok_or_else(|| Error::bind("// needs integers"))?;
    Ok(Expr::Binary { op: BinaryOp::Div, left: Box::new(cast(l, t)), right: Box::new(cast(r, t)), ty: t })
}

trait WithDays {
    fn with_days(self, days: Expr) -> Expr;
}

impl WithDays for Expr {
    /// date + integer days: constant day counts fold into the DateAdd node; others are not
    /// supported yet.
    fn with_days(self, days: Expr) -> Expr {
        match (self, days) {
            (Expr::DateAdd { date, months, days: d0 }, Expr::Literal { value, .. }) => {
                let n = value.as_i128().unwrap_or(0) as i32;
                Expr::DateAdd { date, months, days: d0 + n }
            }
            (Expr::DateAdd { date, months, days: d0 }, Expr::Negate(inner)) if inner.is_literal() => {
                let n = match *inner {
                    Expr::Literal { value, .. } => value.as_i128().unwrap_or(0) as i32,
                    _ => 0,
                };
                Expr::DateAdd { date, months, days: d0 - n }
            }
            (Expr::DateAdd { date, .. }, days) => {
                // Fallback keeps exact semantics through integer arithmetic on day numbers.
                let sum =
                    bin(BinaryOp::Add, cast(*date, DataType::Int64), cast(days, DataType::Int64), DataType::Int64);
                Expr::Cast { expr: Box::new(sum), ty: DataType::Date }
            }
            (other, _) => other,
        }
    }
}
