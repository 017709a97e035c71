//! `gpusql bench skew-group`: bank-replicated shared-memory tables ([Sitaridi 2016] ch. 3)
//! against the global hash table, on the paper's two star-schema queries over a fact
//! column with Zipf-distributed values:
//!
//! fact(a, b): `rows` rows, `a` drawn from Zipf(z) over 1..=values, `b` = row % 1000.
//! dim(k, w): k = 1..=values, w = k % 100.
//! - group-by (writes): `select a, count(*), sum(b) from fact group by a`
//! - probe (reads): `select count(*), sum(w) from fact, dim where fact.a = dim.k and dim.w < 50`
//!
//! Each query runs with `replicated_tables` = all (replicated copies), single (one copy
//! per value) and off; the answers must agree.

use crate::bench_join::{table, zipf_keys, Rng};
use gpusql::{Engine, Output};

pub struct ReplicatedOptions {
    pub rows: usize,
    pub values: usize,
    pub zipf: Vec<f64>,
    pub runs: usize,
}

const QUERIES: [(&str, &str); 2] = [
    ("group-by", "select a, count(*), sum(b) from fact group by a"),
    ("probe", "select count(*), sum(w) from fact, dim where fact.a = dim.k and dim.w < 50"),
];

/// Median warm kernel ms of `sql` (and its answer), after one cold run whose total ms
/// (placement and upload included) is returned too.
fn time(engine: &mut Engine, sql: &str, runs: usize) -> Result<(f64, f64, String), String> {
    let (mut ms, mut cold, mut answer) = (vec![], 0.0, String::new());
    for i in 0..=runs {
        let outs = engine.execute(sql).map_err(|e| e.to_string())?;
        if let Some(Output::Rows { batches, stats }) = outs.into_iter().last() {
            if i == 0 {
                cold = stats.total_ms;
                // (Groups come in no particular order: compare them sorted.)
                let text = arrow::util::pretty::pretty_format_batches(&batches).map_err(|e| e.to_string())?.to_string();
                let mut lines: Vec<&str> = text.lines().collect();
                lines.sort_unstable();
                answer = lines.join("\n");
            } else {
                ms.push(if stats.kernels.is_empty() { stats.total_ms } else { stats.kernel_ms });
            }
        }
    }
    ms.sort_by(f64::total_cmp);
    Ok((ms[ms.len() / 2], cold, answer))
}

pub fn run(mut engine: Engine, o: &ReplicatedOptions) -> Result<String, String> {
    let mut rng = Rng(0x5DEECE66D);
    let dim_k: Vec<i32> = (1..=o.values as i32).collect();
    let dim_w: Vec<i32> = dim_k.iter().map(|k| k % 100).collect();
    engine.register_batches("dim", &[table("k", "w", dim_k, dim_w)]).map_err(|e| e.to_string())?;
    engine.warm_up_gpu().map_err(|e| e.to_string())?;
    let mut out = format!(
        "replicated shared-memory tables on {}: fact {} rows, a ~ Zipf(z) over {} values, {} warm runs, kernel ms median\n",
        engine.backend(),
        o.rows,
        o.values,
        o.runs
    );
    out.push_str("global: hash table in global memory (replicated_tables = off); single: shared-memory table, one copy per value;\nreplicated: bank-replicated copies (replicated_tables = all; the default replicates group tables only); 1st run: total ms of the first replicated run (placement, upload, compile)\n");
    out.push_str(&format!(
        "{:>9} {:>6} {:>10} {:>10} {:>10} {:>9} {:>9} {:>13} {:>11}\n",
        "query", "zipf", "global ms", "single ms", "repl. ms", "vs global", "vs single", "copies/slots", "1st run ms"
    ));
    for &z in &o.zipf {
        let a = zipf_keys(o.rows, o.values, z, &mut rng);
        let b: Vec<i32> = (0..o.rows).map(|i| (i % 1000) as i32).collect();
        engine
            .register_batches_with("fact", &[table("a", "b", a, b)], gpusql::IfExists::Replace)
            .map_err(|e| e.to_string())?;
        for (name, sql) in QUERIES {
            engine.set("replicated_tables", "all").map_err(|e| e.to_string())?;
            let plan = engine.plan(sql).map_err(|e| e.to_string())?;
            let Some(r) = plan.pipelines().flat_map(|p| p.replicated.iter()).next().cloned() else {
                return Err(format!("{name}: the planner chose no replicated table:\n{plan}"));
            };
            let mut ms = vec![];
            let mut answers: Vec<String> = vec![];
            let mut cold = 0.0;
            for setting in ["all", "single", "off"] {
                engine.set("replicated_tables", setting).map_err(|e| e.to_string())?;
                let (t, first, answer) = time(&mut engine, sql, o.runs)?;
                if setting == "all" {
                    cold = first;
                }
                if answers.first().is_some_and(|a| *a != answer) {
                    return Err(format!(
                        "{name}, zipf {z}: answers differ (replicated_tables = {setting}):\n{}\n{answer}",
                        answers[0]
                    ));
                }
                answers.push(answer);
                ms.push(t);
            }
            let (on, single, off) = (ms[0], ms[1], ms[2]);
            let copies = format!("{}/{}", r.summary.copies, r.summary.slots);
            out.push_str(&format!("{name:>9} {z:>6.2} {off:>10.3} {single:>10.3} {on:>10.3} {:>8.2}x {:>8.2}x {copies:>13} {cold:>11.1}\n", off / on, single / on));
        }
    }
    Ok(out)
}
