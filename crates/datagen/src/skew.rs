//! The data of the skew benchmarks (`gpusql bench skew-join`, `gpusql bench skew-group`):
//! two-column `Int32` tables, one column drawn uniformly or from a Zipf distribution.
//!
//! The draws come from a small generator (`gpusql_common::xorshift`), so the same
//! sizes and exponents give the same rows everywhere, whatever the versions of the
//! dependencies. A benchmark's tables share one generator, drawn in the order the
//! benchmark asks for them: the table for an exponent depends on the exponents before it.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use gpusql_common::xorshift::XorShift64Star;

/// The sizes of the skew-join benchmark's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewJoinSizes {
    /// Rows of `probe(k, v)`.
    pub probe_rows: usize,
    /// Rows of `build(k, w)`.
    pub build_rows: usize,
    /// Keys of both: 1..=keys (at least 1).
    pub keys: usize,
}

/// The probe table of the skew join, `probe(k, v)`: `probe_rows` rows, `k` uniform over
/// 1..=keys, `v` the row number; and the generator of its build tables, which goes on
/// drawing where the probe table stopped.
pub fn skew_join(sizes: &SkewJoinSizes) -> (RecordBatch, SkewJoinBuilds) {
    let mut rng = XorShift64Star(0x9E3779B97F4A7C15);
    let keys: Vec<i32> = (0..sizes.probe_rows).map(|_| (rng.next_u64() % sizes.keys as u64) as i32 + 1).collect();
    let values: Vec<i32> = (0..sizes.probe_rows as i32).collect();
    (table("k", "v", keys, values), SkewJoinBuilds { rng, sizes: *sizes })
}

/// The build tables of the skew join, one per Zipf exponent, in the benchmark's order.
pub struct SkewJoinBuilds {
    rng: XorShift64Star,
    sizes: SkewJoinSizes,
}

/// A build table of the skew join and how skewed it came out.
pub struct SkewJoinBuild {
    /// `build(k, w)`.
    pub batch: RecordBatch,
    /// Rows of its most frequent key.
    pub max_duplicates: usize,
}

impl SkewJoinBuilds {
    /// The next build table, `build(k, w)`: `build_rows` rows, `k` drawn from Zipf(z) over
    /// 1..=keys, `w` = row % 1000.
    pub fn build(&mut self, z: f64) -> SkewJoinBuild {
        let keys = zipf_keys(self.sizes.build_rows, self.sizes.keys, z, &mut self.rng);
        let mut counts = HashMap::new();
        for k in &keys {
            *counts.entry(*k).or_insert(0usize) += 1;
        }
        let max_duplicates = counts.values().copied().max().unwrap_or(0);
        let w: Vec<i32> = (0..self.sizes.build_rows).map(|i| (i % 1000) as i32).collect();
        SkewJoinBuild { batch: table("k", "w", keys, w), max_duplicates }
    }
}

/// The sizes of the skew-group benchmark's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewGroupSizes {
    /// Rows of `fact(a, b)`.
    pub rows: usize,
    /// Distinct values of `fact.a`, the rows of `dim(k, w)` (at least 1).
    pub values: usize,
}

/// The dimension table of the skew-group benchmark, `dim(k, w)`: k = 1..=values,
/// w = k % 100; and the generator of its fact tables.
pub fn skew_group(sizes: &SkewGroupSizes) -> (RecordBatch, SkewGroupFacts) {
    let k: Vec<i32> = (1..=sizes.values as i32).collect();
    let w: Vec<i32> = k.iter().map(|k| k % 100).collect();
    (table("k", "w", k, w), SkewGroupFacts { rng: XorShift64Star(0x5DEECE66D), sizes: *sizes })
}

/// The fact tables of the skew-group benchmark, one per Zipf exponent, in the
/// benchmark's order.
pub struct SkewGroupFacts {
    rng: XorShift64Star,
    sizes: SkewGroupSizes,
}

impl SkewGroupFacts {
    /// The next fact table, `fact(a, b)`: `rows` rows, `a` drawn from Zipf(z) over
    /// 1..=values, `b` = row % 1000.
    pub fn fact(&mut self, z: f64) -> RecordBatch {
        let a = zipf_keys(self.sizes.rows, self.sizes.values, z, &mut self.rng);
        let b: Vec<i32> = (0..self.sizes.rows).map(|i| (i % 1000) as i32).collect();
        table("a", "b", a, b)
    }
}

/// Two non-nullable `Int32` columns.
fn table(name_k: &str, name_v: &str, keys: Vec<i32>, values: Vec<i32>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new(name_k, DataType::Int32, false),
        Field::new(name_v, DataType::Int32, false),
    ]));
    let cols: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(keys)), Arc::new(Int32Array::from(values))];
    RecordBatch::try_new(schema, cols).expect("two equal-length columns")
}

/// Keys 1..=n drawn with P(k) ~ 1/k^z (inverse CDF by binary search).
fn zipf_keys(rows: usize, n: usize, z: f64, rng: &mut XorShift64Star) -> Vec<i32> {
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for k in 1..=n {
        acc += 1.0 / (k as f64).powf(z);
        cdf.push(acc);
    }
    (0..rows)
        .map(|_| {
            let u = rng.unit() * acc;
            (cdf.partition_point(|c| *c < u) + 1).min(n) as i32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(b: &RecordBatch, i: usize) -> Vec<i32> {
        b.column(i).as_any().downcast_ref::<Int32Array>().expect("Int32").values().to_vec()
    }

    /// The benchmarks' published numbers were measured on these rows: a change to the
    /// generator (seed, draw order, Zipf sampling) changes them and must be noticed.
    #[test]
    fn generated_values_are_pinned() {
        let (probe, mut builds) = skew_join(&SkewJoinSizes { probe_rows: 8, build_rows: 8, keys: 100 });
        assert_eq!(probe.schema().field(0).name(), "k");
        assert_eq!(column(&probe, 0), [11, 88, 13, 18, 78, 27, 46, 45]);
        assert_eq!(column(&probe, 1), [0, 1, 2, 3, 4, 5, 6, 7]);
        // Each build table draws on where the previous one stopped.
        let uniform = builds.build(0.0);
        assert_eq!(column(&uniform.batch, 0), [54, 83, 1, 74, 16, 93, 8, 34]);
        assert_eq!(uniform.max_duplicates, 1);
        let skewed = builds.build(1.5);
        assert_eq!(column(&skewed.batch, 0), [1, 1, 13, 1, 3, 4, 5, 1]);
        assert_eq!(skewed.max_duplicates, 4);

        let (dim, mut facts) = skew_group(&SkewGroupSizes { rows: 8, values: 1024 });
        assert_eq!(dim.num_rows(), 1024);
        assert_eq!(column(&dim, 1)[..3], [1, 2, 3]);
        assert_eq!(column(&facts.fact(0.5), 0), [76, 2, 30, 639, 292, 832, 41, 2]);
        let fact = facts.fact(1.0);
        assert_eq!(column(&fact, 0), [3, 404, 17, 20, 6, 1, 16, 617]);
        assert_eq!(column(&fact, 1), [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
