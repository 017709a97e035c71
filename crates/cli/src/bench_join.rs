//! `gpusql bench skew-join`: push-down parallelism against per-lane probing on a join whose
//! build keys repeat with Zipf-distributed multiplicities (the expansion-divergence
//! workload of [Funke & Teubner 2020] §5.1): with per-lane probing the lane holding a hot
//! key walks all its matches while the rest of its warp idles.
//!
//! probe(k, v): `probe_rows` rows, keys uniform over 1..=keys.
//! build(k, w): `build_rows` rows, keys drawn from Zipf(z) over 1..=keys.
//! Query: `select count(*), sum(w) from probe, build where probe.k = build.k`.

use arrow::array::{ArrayRef, Int32Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use gpusql::{Engine, MultiMatch, Output};
use std::sync::Arc;

pub struct SkewOptions {
    pub probe_rows: usize,
    pub build_rows: usize,
    pub keys: usize,
    pub zipf: Vec<f64>,
    pub runs: usize,
}

/// xorshift64*: a small deterministic generator (the data must not depend on a crate's
/// algorithm changes).
pub(crate) struct Rng(pub u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(crate) fn table(name_k: &str, name_v: &str, keys: Vec<i32>, values: Vec<i32>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new(name_k, DataType::Int32, false),
        Field::new(name_v, DataType::Int32, false),
    ]));
    let cols: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(keys)), Arc::new(Int32Array::from(values))];
    RecordBatch::try_new(schema, cols).expect("two equal-length columns")
}

/// Keys 1..=n drawn with P(k) ~ 1/k^z (inverse CDF by binary search).
pub(crate) fn zipf_keys(rows: usize, n: usize, z: f64, rng: &mut Rng) -> Vec<i32> {
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

pub fn run(mut engine: Engine, o: &SkewOptions) -> Result<String, String> {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let probe_keys: Vec<i32> = (0..o.probe_rows).map(|_| (rng.next() % o.keys as u64) as i32 + 1).collect();
    let probe_vals: Vec<i32> = (0..o.probe_rows as i32).collect();
    engine.register_batches("probe", &[table("k", "v", probe_keys, probe_vals)]).map_err(|e| e.to_string())?;
    engine.warm_up_gpu().map_err(|e| e.to_string())?;
    let sql = "select count(*), sum(w) from probe, build where probe.k = build.k";
    let mut out = format!(
        "skew join on {}: probe {} rows (uniform keys 1..{}), build {} rows (Zipf keys), {} warm runs, kernel ms median\n",
        engine.backend(),
        o.probe_rows,
        o.keys,
        o.build_rows,
        o.runs
    );
    out.push_str(&format!(
        "{:>6} {:>12} {:>14} {:>14} {:>8}\n",
        "zipf", "max dup", "push-down ms", "per-lane ms", "factor"
    ));
    for &z in &o.zipf {
        let build_keys = zipf_keys(o.build_rows, o.keys, z, &mut rng);
        let mut counts = std::collections::HashMap::new();
        for k in &build_keys {
            *counts.entry(*k).or_insert(0usize) += 1;
        }
        let max_dup = counts.values().copied().max().unwrap_or(0);
        let w: Vec<i32> = (0..o.build_rows).map(|i| (i % 1000) as i32).collect();
        engine
            .register_batches_with("build", &[table("k", "w", build_keys, w)], gpusql::IfExists::Replace)
            .map_err(|e| e.to_string())?;
        let mut times = vec![];
        let mut answers = vec![];
        for mode in [MultiMatch::PushDown, MultiMatch::PerLane] {
            engine.set_multi_match(mode);
            let mut ms = vec![];
            for i in 0..=o.runs {
                let outs = engine.execute(sql).map_err(|e| e.to_string())?;
                if let Some(Output::Rows { batches, stats }) = outs.into_iter().last() {
                    if i > 0 {
                        ms.push(if stats.kernels.is_empty() { stats.total_ms } else { stats.kernel_ms });
                    }
                    answers.push(
                        arrow::util::pretty::pretty_format_batches(&batches).map_err(|e| e.to_string())?.to_string(),
                    );
                }
            }
            ms.sort_by(f64::total_cmp);
            times.push(ms[ms.len() / 2]);
        }
        if answers.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("zipf {z}: the two probe forms disagree:\n{}", answers.join("\n")));
        }
        out.push_str(&format!(
            "{z:>6.2} {max_dup:>12} {:>14.3} {:>14.3} {:>7.2}x\n",
            times[0],
            times[1],
            times[1] / times[0]
        ));
    }
    Ok(out)
}
