//! approx_count_distinct as DuckDB 2.0.1 computes it, so both backends give its answers:
//! each value hashed by DuckDB's hash of its physical type (`duckdb_hash`), the hash's low
//! `P` bits choosing one of `M` registers and the rest giving a rank (1 + trailing zeros),
//! each register the largest rank it saw, and the count estimated from the histogram of
//! register values by Ertl's estimator ("New cardinality estimation algorithms for
//! HyperLogLog sketches", arXiv:1702.01284, algorithm 6, DuckDB's `HyperLogLogP<10>`).
//! The binder plans the registers as an aggregation (`sql/src/bind_approx_count.rs`);
//! `Expr::Sketch` computes registers, ranks and the estimate here on the CPU and in
//! prelude.cu's `hll_*` / `duck_hash_*` twins on the GPU.

use gpusql_common::{DataType, Error, Result, ScalarValue};

/// Index bits of the hash.
pub const P: u32 = 10;
/// Registers.
pub const M: usize = 1 << P;
/// Rank bits: a register holds 0 (never set) to Q + 1.
pub const Q: usize = 64 - P as usize;

/// What an `Expr::Sketch` computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SketchOp {
    /// The register a value goes to (INTEGER in [0, M)).
    Register,
    /// The rank it brings there (INTEGER in [1, Q + 1]).
    Rank,
    /// From the histogram of a group's registers (Q + 1 BIGINT arguments: how many hold
    /// 0, 1, …, Q), the estimated count (BIGINT).
    Estimate,
    /// A BIGINT hash of the arguments, equal for values that group together (NULL one
    /// value): a cheap leading sort key that keeps each group's rows together (the
    /// quantiles' sort), in an order of the backend's own.
    GroupHash,
}

impl SketchOp {
    pub fn name(&self) -> &'static str {
        match self {
            SketchOp::Register => "hll_register",
            SketchOp::Rank => "hll_rank",
            SketchOp::Estimate => "hll_estimate",
            SketchOp::GroupHash => "group_hash",
        }
    }
}

/// DuckDB's MurmurHash64 (its `Hash` of a 64-bit value).
pub fn murmur64(mut x: u64) -> u64 {
    x ^= x >> 32;
    x = x.wrapping_mul(0xd6e8feb86659fd93);
    x ^= x >> 32;
    x = x.wrapping_mul(0xd6e8feb86659fd93);
    x ^ (x >> 32)
}

/// DuckDB's hash of a string's bytes: 8-byte little-endian blocks (the last zero-padded)
/// mixed into a seed of the length, then MurmurHash64.
pub fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = 0xe17a1465u64 ^ (b.len() as u64).wrapping_mul(0xc6a4a7935bd1e995);
    for block in b.chunks(8) {
        let mut word = [0u8; 8];
        word[..block.len()].copy_from_slice(block);
        h ^= u64::from_le_bytes(word);
        h = h.wrapping_mul(0xd6e8feb86659fd93);
    }
    murmur64(h)
}

/// DuckDB's hash of a non-NULL value by its physical type: 32-bit integers (INTEGER,
/// DATE, BOOLEAN, DECIMALs of up to 9 digits) zero-extended from their 32 bits, 64-bit
/// ones (BIGINT, TIMESTAMP, DECIMALs of up to 18 digits) as they are, wider DECIMALs as
/// the hashes of both halves XORed, DOUBLEs by their bits with -0.0 as 0.0 and every NaN
/// as one, strings by `hash_bytes`.
pub fn duckdb_hash(v: &ScalarValue, ty: &DataType) -> Option<u64> {
    let narrow = |x: i64| murmur64(x as u32 as u64);
    Some(match (v, ty) {
        (ScalarValue::Null, _) => return None,
        (ScalarValue::Int32(x), _) | (ScalarValue::Date(x), _) => narrow(*x as i64),
        (ScalarValue::Boolean(b), _) => narrow(*b as i64),
        (ScalarValue::Int64(x), _) | (ScalarValue::Timestamp(x), _) => murmur64(*x as u64),
        (ScalarValue::Float64(x), _) => {
            let x = if *x == 0.0 {
                0.0
            } else if x.is_nan() {
                f64::NAN
            } else {
                *x
            };
            murmur64(x.to_bits())
        }
        (ScalarValue::Decimal(x), DataType::Decimal { precision, .. }) if *precision <= 9 => narrow(*x as i64),
        (ScalarValue::Decimal(x), DataType::Decimal { precision, .. }) if *precision <= 18 => {
            murmur64(*x as i64 as u64)
        }
        (ScalarValue::Decimal(x), _) => murmur64(*x as u64) ^ murmur64((*x >> 64) as u64),
        (ScalarValue::Utf8(s), _) => hash_bytes(s.as_bytes()),
        // The normalized fields' hashes (DuckDB's `Hash(interval_t)`).
        (ScalarValue::Interval(iv), _) => {
            let (months, days, micros) = iv.normalized();
            murmur64(days as u64) ^ murmur64(months as u64) ^ murmur64(micros as u64)
        }
    })
}

pub fn register(hash: u64) -> i32 {
    (hash & (M as u64 - 1)) as i32
}

pub fn rank(hash: u64) -> i32 {
    (((hash >> P) | (1u64 << Q)).trailing_zeros() + 1) as i32
}

/// Ertl's σ (DuckDB's `HLLSigma`, from Redis).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

/// Ertl's τ (DuckDB's `HLLTau`).
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// The estimate from `c`: how many registers hold 0, 1, …, Q (algorithm 6, in DuckDB's
/// order of operations).
pub fn estimate(c: &[i64]) -> i64 {
    let m = M as f64;
    let mut z = m * tau((m - c[Q] as f64) / m);
    for k in (1..=Q).rev() {
        z += c[k] as f64;
        z *= 0.5;
    }
    z += m * sigma(c[0] as f64 / m);
    // 1 / (2 ln 2), DuckDB's constant (the same double).
    const ALPHA: f64 = 0.721_347_520_444_481_7;
    (ALPHA * m * m / z).round() as i64
}

/// `GroupHash` of values of their types: DuckDB's hash of each (NULL as 0), mixed in order
/// (prelude.cu's `group_hash_step`).
pub fn group_hash<'a>(values: impl Iterator<Item = (&'a ScalarValue, &'a DataType)>) -> u64 {
    values.fold(GROUP_HASH_SEED, |h, (v, ty)| murmur64(h ^ duckdb_hash(v, ty).unwrap_or(0)))
}

/// The first value `group_hash` mixes into.
pub const GROUP_HASH_SEED: u64 = 0x2545f4914f6cdd1d;

/// `Expr::Sketch` over one row's argument values (`types`: the arguments' types).
pub fn eval(op: SketchOp, args: &[ScalarValue], types: &[DataType]) -> Result<ScalarValue> {
    let ty = &types[0];
    match op {
        SketchOp::Register | SketchOp::Rank => Ok(match duckdb_hash(&args[0], ty) {
            None => ScalarValue::Null,
            Some(h) => ScalarValue::Int32(if op == SketchOp::Register { register(h) } else { rank(h) }),
        }),
        SketchOp::GroupHash => Ok(ScalarValue::Int64(group_hash(args.iter().zip(types)) as i64)),
        SketchOp::Estimate => {
            let counts = args
                .iter()
                .map(|a| match a {
                    ScalarValue::Int64(n) => Ok(*n),
                    ScalarValue::Null => Ok(0),
                    other => Err(Error::exec(format!("hll_estimate of {other:?}"))),
                })
                .collect::<Result<Vec<i64>>>()?;
            Ok(ScalarValue::Int64(estimate(&counts)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_distinct(hashes: impl Iterator<Item = u64>) -> i64 {
        let mut k = vec![0i32; M];
        for h in hashes {
            let r = register(h) as usize;
            k[r] = k[r].max(rank(h));
        }
        let mut c = vec![0i64; Q + 2];
        for r in k {
            c[r as usize] += 1;
        }
        estimate(&c)
    }

    #[test]
    fn hashes_are_duckdbs() {
        // DuckDB 2.0.1: SELECT hash(DATE '2020-01-01'), hash(TIMESTAMP '2020-01-01 00:00:01'),
        // hash(true), hash(false).
        assert_eq!(duckdb_hash(&ScalarValue::Date(18262), &DataType::Date), Some(3044828828311488314));
        let ts = ScalarValue::Timestamp(1577836801000000);
        assert_eq!(duckdb_hash(&ts, &DataType::Timestamp), Some(3765633964306565959));
        assert_eq!(duckdb_hash(&ScalarValue::Boolean(true), &DataType::Boolean), Some(4717996019076358352));
        assert_eq!(duckdb_hash(&ScalarValue::Boolean(false), &DataType::Boolean), Some(0));
    }

    #[test]
    fn estimates_are_duckdbs() {
        // DuckDB 2.0.1: approx_count_distinct(x), (x::DOUBLE) over range(n).
        let ints = |n: i64| count_distinct((0..n).map(|x| murmur64(x as u64)));
        let doubles = |n: i64| count_distinct((0..n).map(|x| murmur64((x as f64).to_bits())));
        let texts = |n: i64| count_distinct((0..n).map(|x| hash_bytes(x.to_string().as_bytes())));
        assert_eq!((ints(10), ints(1000), ints(1_000_000)), (10, 978, 982272));
        assert_eq!((doubles(1000), doubles(1_000_000)), (999, 959438));
        assert_eq!((texts(1000), texts(1_000_000)), (988, 1018125));
        assert_eq!(count_distinct(std::iter::empty()), 0);
    }
}
