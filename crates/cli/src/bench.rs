//! `gpusql bench tpch`: cold and warm timings of the TPC-H queries against the memory
//! bandwidth floor.
//!
//! The floor of a query is the time the device needs just to read the columns it scans
//! (bytes read / measured device copy bandwidth); `ratio` = kernel time / floor says how
//! far the generated kernels are from that bound. On the CPU backend there are no kernels
//! and no device: the execution time is the backend's whole execution time and the floor
//! columns stay empty.

use crate::format::csv_field;
use crate::timing::{fmt_bytes, gbps};
use comfy_table::{presets, CellAlignment, Table};
use gpusql::{Engine, Error, ExecStats, Output};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which benchmark: its data and its query files.
#[derive(Clone, Copy, PartialEq)]
pub enum Suite {
    /// tpch/q01.sql … q22.sql over TPC-H.
    Tpch,
    /// ssb/q1.1.sql … q4.3.sql over the Star Schema Benchmark.
    Ssb,
    /// tpcds/q01.sql … q99.sql over TPC-DS files (`--data`: scripts/tpcds_data.py writes
    /// them; the engine has no TPC-DS generator).
    Tpcds,
}

pub struct BenchOptions {
    pub suite: Suite,
    pub sf: f64,
    /// Query names without the `q` and `.sql`: "1", "6" (TPC-H), "1.1", "4.3" (SSB).
    pub queries: Option<Vec<String>>,
    pub runs: usize,
    pub query_dir: PathBuf,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    /// Tables from this folder of files instead of generated ones.
    pub data: Option<PathBuf>,
    /// Each query's first run starts with no compiled kernel cached (memory and disk,
    /// but the helper module compiled when the session opened): a never-seen query.
    pub cold: bool,
    /// A folder of the same query files with other literals (tpch/variants): each is run
    /// once after its query's warm runs, the first run of a query differing only in
    /// literals.
    pub variants: Option<PathBuf>,
}

/// What one query measured. Times in ms; warm figures are over the warm runs.
#[derive(Default)]
struct QueryResult {
    name: String,
    /// "ok", "skipped" (not supported by the engine) or "failed".
    status: &'static str,
    note: String,
    rows: usize,
    cold_compile_ms: f64,
    /// Where the cold run's kernels came from: "miss", "disk", "memory" (distinct values).
    cold_cache: String,
    cold_exec_ms: f64,
    cold_wall_ms: f64,
    /// Largest compile time of a warm run: 0 when every kernel came from the cache.
    warm_compile_ms: f64,
    exec_ms_median: f64,
    exec_ms_min: f64,
    exec_ms_max: f64,
    bytes_read: usize,
    achieved_gbps: Option<f64>,
    floor_ms: Option<f64>,
    ratio: Option<f64>,
    upload_ms: f64,
    download_ms: f64,
    wall_ms_median: f64,
    /// The executor's whole time (kernels, their launches and the host work between
    /// them, result download), median over the warm runs; wall - this = parse and plan.
    executor_ms_median: f64,
    /// The wall ms of the first run of the query's variant (other literals), if any.
    variant_first_ms: Option<f64>,
    plan_ms_median: f64,
    /// The first run's time by part: plan, compile (waits), kernels, upload, placement,
    /// download, executor total.
    cold_parts: Vec<(&'static str, f64)>,
    /// Each stage's host wall ms (`KernelStat::wall_ms`), median over the warm runs.
    stage_wall_ms_median: Vec<f64>,
    /// Each stage's kernel ms (pipelines, sorts: `KernelStat`s, in plan order), median
    /// over the warm runs: where the query's time goes, builds included.
    stage_ms_median: Vec<(String, f64)>,
}

struct Setup {
    device: String,
    gpu: bool,
    bandwidth_gbps: Option<f64>,
    load_s: f64,
    /// Decoding the files' columns (with --data), apart from the upload.
    decode_s: f64,
    /// Building the string dictionaries (host), apart from the upload.
    dictionaries_s: f64,
    upload_bytes: usize,
    upload_ms: f64,
    date: String,
}

/// Runs the benchmark; returns whether no query failed (skips are fine).
pub fn run(mut engine: Engine, opts: &BenchOptions) -> Result<bool, String> {
    let files = query_files(opts.suite, &opts.query_dir, opts.queries.as_deref())?;
    let setup = prepare(&mut engine, opts)?;
    let mut results = vec![];
    for (name, path) in files {
        if opts.cold {
            engine.forget_kernels(false);
        }
        let mut r = bench_query(&mut engine, &name, &path, opts.runs, setup.bandwidth_gbps);
        if let Some(v) = opts.variants.as_ref().map(|d| d.join(path.file_name().unwrap_or_default())) {
            if r.status == "ok" && v.is_file() {
                match std::fs::read_to_string(&v)
                    .map_err(|e| e.to_string())
                    .and_then(|sql| run_once(&mut engine, &sql).map_err(|e| e.to_string()))
                {
                    Ok(run) => r.variant_first_ms = Some(run.wall_ms),
                    Err(e) => r.note = format!("variant: {e}"),
                }
            }
        }
        match r.status {
            // Everything the closing table shows per query, printed as it finishes: a run
            // stopped early still reports the queries it ran.
            "ok" => eprintln!(
                "{name}: {:.3} ms of kernels, warm wall {:.3} ms, first run {:.1} ms",
                r.exec_ms_median, r.wall_ms_median, r.cold_wall_ms
            ),
            _ => eprintln!("{name}: {}", r.status),
        }
        results.push(r);
    }
    println!("{}", render_table(&setup, opts, &results));
    if let Some(p) = &opts.json {
        std::fs::write(p, serde_json::to_string_pretty(&to_json(&setup, opts, &results)).unwrap_or_default() + "\n")
            .map_err(|e| format!("writing {}: {e}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &opts.csv {
        std::fs::write(p, to_csv(&setup, opts, &results)).map_err(|e| format!("writing {}: {e}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(results.iter().all(|r| r.status != "failed"))
}

/// `qNN.sql` files of the query folder, in query order, restricted to `only`.
/// The suite's query files, in order (all of them, or the named ones).
fn query_files(suite: Suite, dir: &Path, only: Option<&[String]>) -> Result<Vec<(String, PathBuf)>, String> {
    let name_of = |q: &str| match suite {
        Suite::Tpch | Suite::Tpcds => q.parse::<u32>().map(|n| format!("q{n:02}")).unwrap_or_else(|_| format!("q{q}")),
        Suite::Ssb => format!("q{q}"),
    };
    let mut names: Vec<String> = match only {
        Some(q) => q.iter().map(|q| name_of(q.trim_start_matches('q'))).collect(),
        None => std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".sql")).map(str::to_string))
            .filter(|n| n.starts_with('q'))
            .collect(),
    };
    // Natural order: q1.2 < q1.10, q02 < q10.
    names.sort_by_key(|n| n[1..].split('.').map(|p| p.parse::<u32>().unwrap_or(u32::MAX)).collect::<Vec<_>>());
    if names.is_empty() {
        return Err(format!("no query files in {}", dir.display()));
    }
    Ok(names.into_iter().map(|n| (n.clone(), dir.join(format!("{n}.sql")))).collect())
}

/// Loads the data (generated, or opened from files and decoded), uploads it and measures
/// the device.
fn prepare(engine: &mut Engine, opts: &BenchOptions) -> Result<Setup, String> {
    let start = Instant::now();
    match (&opts.data, opts.suite) {
        (Some(dir), _) => {
            let opened = engine.open_directory(dir).map_err(|e| e.to_string())?;
            if !opened.errors.is_empty() {
                return Err(opened.errors.join("; "));
            }
            eprintln!("opened {} tables from {}", opened.tables.len(), dir.display());
            Ok(())
        }
        (None, Suite::Tpch) => crate::tpch::load(engine, opts.sf, gpusql::IfExists::Fail, true),
        (None, Suite::Ssb) => crate::tpch::load_ssb(engine, opts.sf, gpusql::IfExists::Fail, true),
        (None, Suite::Tpcds) => {
            return Err("TPC-DS reads its tables from files: --data DIR/data, as `python3 scripts/tpcds_data.py \
                 --sf SF --out DIR` writes them"
                .into())
        }
    }
    .map_err(|e| e.to_string())?;
    let load_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    engine.decode_all().map_err(|e| e.to_string())?;
    let decode_s = start.elapsed().as_secs_f64();
    if opts.data.is_some() {
        eprintln!("decoded every column in {decode_s:.2} s");
    }
    let start = Instant::now();
    engine.build_dictionaries();
    let dictionaries_s = start.elapsed().as_secs_f64();
    eprintln!("built the string dictionaries in {dictionaries_s:.2} s");

    // Upload every column now so warm runs measure kernels, not transfers.
    let start = Instant::now();
    let upload_bytes = engine.warm_up_gpu().map_err(|e| e.to_string())?;
    let upload_ms = start.elapsed().as_secs_f64() * 1e3;

    let gpu = engine.gpu_device().is_some();
    let bandwidth_gbps = match engine.gpu_device().map(|d| d.measure_copy_bandwidth()) {
        Some(Ok(bw)) => Some(bw),
        Some(Err(e)) => {
            eprintln!("warning: could not measure the copy bandwidth ({e}); no floors");
            None
        }
        None => None,
    };
    let device = match engine.gpu_device() {
        Some(d) => d.describe(),
        None => "cpu (reference backend)".to_string(),
    };
    if gpu {
        let rate = gbps(upload_bytes, upload_ms).map_or("-".into(), |g| format!("{g:.1} GB/s"));
        eprintln!("uploaded {} in {upload_ms:.1} ms ({rate})", fmt_bytes(upload_bytes));
        if let Some(bw) = bandwidth_gbps {
            eprintln!("device copy bandwidth: {bw:.0} GB/s");
        }
    }
    Ok(Setup {
        device,
        gpu,
        bandwidth_gbps,
        load_s,
        decode_s,
        dictionaries_s,
        upload_bytes,
        upload_ms,
        date: utc_now(),
    })
}

/// One execution of a query file's statements; stats are summed over its queries.
struct Run {
    stats: ExecStats,
    rows: usize,
    wall_ms: f64,
}

fn run_once(engine: &mut Engine, sql: &str) -> gpusql::Result<Run> {
    let start = Instant::now();
    let outputs = engine.execute(sql)?;
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut stats = ExecStats::default();
    let mut rows = 0;
    for out in outputs {
        if let Output::Rows { batches, stats: s } = out {
            rows = batches.iter().map(|b| b.num_rows()).sum();
            add_stats(&mut stats, &s);
        }
    }
    Ok(Run { stats, rows, wall_ms })
}

fn add_stats(acc: &mut ExecStats, s: &ExecStats) {
    acc.backend.clone_from(&s.backend);
    acc.kernels.extend(s.kernels.iter().cloned());
    acc.compile_ms += s.compile_ms;
    acc.kernel_ms += s.kernel_ms;
    acc.upload_bytes += s.upload_bytes;
    acc.upload_ms += s.upload_ms;
    acc.download_ms += s.download_ms;
    acc.total_ms += s.total_ms;
    acc.plan_ms += s.plan_ms;
    acc.placement_ms += s.placement_ms;
    acc.decode_ms += s.decode_ms;
    acc.bytes_read += s.bytes_read;
}

/// Kernel time on the GPU; the whole execution on the CPU backend, which has no kernels.
fn exec_ms(s: &ExecStats) -> f64 {
    if s.kernels.is_empty() {
        s.total_ms
    } else {
        s.kernel_ms
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn bench_query(engine: &mut Engine, name: &str, path: &Path, runs: usize, bandwidth: Option<f64>) -> QueryResult {
    let mut r = QueryResult { name: name.to_string(), status: "failed", ..Default::default() };
    let sql = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            r.note = format!("{}: {e}", path.display());
            return r;
        }
    };
    let cold = match run_once(engine, &sql) {
        Ok(c) => c,
        Err(e) => {
            if matches!(e.kind(), Error::NotSupported(_)) {
                r.status = "skipped";
            }
            r.note = e.to_string();
            return r;
        }
    };
    r.rows = cold.rows;
    r.cold_compile_ms = cold.stats.compile_ms;
    let mut caches: Vec<&str> = cold.stats.kernels.iter().map(|k| k.cache.as_str()).collect();
    caches.dedup();
    caches.sort_unstable();
    caches.dedup();
    r.cold_cache = caches.join("+");
    r.cold_exec_ms = exec_ms(&cold.stats);
    r.cold_wall_ms = cold.wall_ms;
    let c = &cold.stats;
    r.cold_parts = vec![
        ("plan", c.plan_ms),
        ("compile", c.compile_ms),
        ("kernels", c.kernel_ms),
        ("upload", c.upload_ms),
        ("decode", c.decode_ms),
        ("placement", c.placement_ms),
        ("download", c.download_ms),
        ("executor", c.total_ms),
    ];
    // The first run may have used quickly compiled kernels; warm runs time the full ones.
    engine.wait_for_compiles();

    let mut warm = vec![];
    for _ in 0..runs {
        match run_once(engine, &sql) {
            Ok(w) => warm.push(w),
            Err(e) => {
                r.note = format!("warm run: {e}");
                return r;
            }
        }
    }
    let mut exec: Vec<f64> = warm.iter().map(|w| exec_ms(&w.stats)).collect();
    r.exec_ms_median = median(&mut exec);
    r.exec_ms_min = exec.first().copied().unwrap_or(0.0);
    r.exec_ms_max = exec.last().copied().unwrap_or(0.0);
    r.warm_compile_ms = warm.iter().map(|w| w.stats.compile_ms).fold(0.0, f64::max);
    r.bytes_read = warm.first().map_or(0, |w| w.stats.bytes_read);
    r.upload_ms = median(&mut warm.iter().map(|w| w.stats.upload_ms).collect::<Vec<_>>());
    r.download_ms = median(&mut warm.iter().map(|w| w.stats.download_ms).collect::<Vec<_>>());
    r.wall_ms_median = median(&mut warm.iter().map(|w| w.wall_ms).collect::<Vec<_>>());
    r.executor_ms_median = median(&mut warm.iter().map(|w| w.stats.total_ms).collect::<Vec<_>>());
    r.plan_ms_median = median(&mut warm.iter().map(|w| w.stats.plan_ms).collect::<Vec<_>>());
    r.stage_wall_ms_median = warm.first().map_or(vec![], |w| {
        (0..w.stats.kernels.len())
            .map(|i| {
                median(&mut warm.iter().filter_map(|x| x.stats.kernels.get(i).map(|k| k.wall_ms)).collect::<Vec<_>>())
            })
            .collect()
    });
    r.stage_ms_median = warm.first().map_or(vec![], |w| {
        (0..w.stats.kernels.len())
            .map(|i| {
                (
                    w.stats.kernels[i].name.clone(),
                    median(&mut warm.iter().filter_map(|x| x.stats.kernels.get(i).map(|k| k.ms)).collect::<Vec<_>>()),
                )
            })
            .collect()
    });
    r.achieved_gbps = gbps(r.bytes_read, r.exec_ms_median);
    if let Some(bw) = bandwidth.filter(|b| *b > 0.0 && r.bytes_read > 0) {
        let floor = r.bytes_read as f64 / (bw * 1e6);
        r.floor_ms = Some(floor);
        r.ratio = Some(r.exec_ms_median / floor);
    }
    r.status = "ok";
    r
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn render_table(setup: &Setup, opts: &BenchOptions, results: &[QueryResult]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    let exec = if setup.gpu { "kernel ms" } else { "exec ms" };
    t.set_header(vec![
        "query".to_string(),
        "first run ms".into(),
        format!("{exec} (median)"),
        "min".into(),
        "max".into(),
        "compile ms cold".into(),
        "cache".into(),
        "compile ms warm".into(),
        "read".into(),
        "GB/s".into(),
        "floor ms".into(),
        "ratio".into(),
        "upload ms".into(),
        "download ms".into(),
        "wall ms".into(),
    ]);
    for r in results.iter().filter(|r| r.status == "ok") {
        t.add_row(vec![
            r.name.clone(),
            format!("{:.1}", r.cold_wall_ms),
            format!("{:.3}", r.exec_ms_median),
            format!("{:.3}", r.exec_ms_min),
            format!("{:.3}", r.exec_ms_max),
            format!("{:.1}", r.cold_compile_ms),
            if r.cold_cache.is_empty() { "-".into() } else { r.cold_cache.clone() },
            format!("{:.1}", r.warm_compile_ms),
            fmt_bytes(r.bytes_read),
            opt(r.achieved_gbps, 1),
            opt(r.floor_ms, 3),
            opt(r.ratio, 2),
            format!("{:.2}", r.upload_ms),
            format!("{:.2}", r.download_ms),
            format!("{:.2}", r.wall_ms_median),
        ]);
    }
    for i in (1..15).filter(|&i| i != 6) {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let label = match opts.suite {
        Suite::Tpch => "TPC-H",
        Suite::Ssb => "SSB",
        Suite::Tpcds => "TPC-DS",
    };
    let mut s = format!(
        "{label} SF {} on {}, {} warm run{}{}",
        opts.sf,
        setup.device,
        opts.runs,
        if opts.runs == 1 { "" } else { "s" },
        if opts.cold { "; first runs with no kernel cached (--cold)" } else { "" }
    );
    if setup.gpu {
        s.push_str(&format!(
            "; copy bandwidth {} GB/s; uploaded {} in {:.1} ms",
            opt(setup.bandwidth_gbps, 0),
            fmt_bytes(setup.upload_bytes),
            setup.upload_ms
        ));
    } else {
        s.push_str(" (CPU backend: execution time, no kernels or floors)");
    }
    s.push_str(&format!("\n{t}"));
    // Skipped and failed queries go below the table: their messages can be long.
    for r in results.iter().filter(|r| r.status != "ok") {
        s.push_str(&format!("\n{} {}: {}", r.name, r.status, shorten(&r.note, 110)));
    }
    s
}

/// First line of `s`, cut to `max` characters.
fn shorten(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= max && !s.contains('\n') {
        return line.to_string();
    }
    line.chars().take(max).collect::<String>() + "…"
}

/// Rounds for the JSON and CSV files: more digits than timing noise would only mislead.
fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

fn query_json(r: &QueryResult) -> Value {
    if r.status != "ok" {
        let mut v = query_json(&QueryResult { status: "ok", ..Default::default() });
        if let Value::Object(m) = &mut v {
            m.values_mut().for_each(|x| *x = Value::Null);
            m.insert("query".into(), r.name.clone().into());
            m.insert("status".into(), r.status.into());
            m.insert("note".into(), r.note.clone().into());
        }
        return v;
    }
    let ms = |x: f64| round(x, 4);
    json!({
        "query": r.name, "status": r.status, "note": r.note, "rows": r.rows,
        "cold_compile_ms": ms(r.cold_compile_ms), "cold_cache": r.cold_cache,
        "cold_exec_ms": ms(r.cold_exec_ms), "cold_wall_ms": ms(r.cold_wall_ms),
        "warm_compile_ms": ms(r.warm_compile_ms),
        "exec_ms_median": ms(r.exec_ms_median), "exec_ms_min": ms(r.exec_ms_min), "exec_ms_max": ms(r.exec_ms_max),
        "bytes_read": r.bytes_read, "achieved_gbps": r.achieved_gbps.map(|g| round(g, 2)),
        "floor_ms": r.floor_ms.map(ms), "ratio": r.ratio.map(|x| round(x, 3)),
        "upload_ms": ms(r.upload_ms), "download_ms": ms(r.download_ms), "wall_ms_median": ms(r.wall_ms_median),
        "executor_ms_median": ms(r.executor_ms_median),
        "variant_first_ms": r.variant_first_ms.map(ms),
        "plan_ms_median": ms(r.plan_ms_median),
        "cold_parts_ms": r.cold_parts.iter().map(|(n, t)| (n.to_string(), json!(ms(*t)))).collect::<serde_json::Map<_, _>>(),
        "stage_wall_ms_median": r.stage_wall_ms_median.iter().map(|t| ms(*t)).collect::<Vec<_>>(),
        "stage_ms_median": r.stage_ms_median.iter().map(|(n, t)| json!([n, ms(*t)])).collect::<Vec<_>>(),
    })
}

fn to_json(setup: &Setup, opts: &BenchOptions, results: &[QueryResult]) -> Value {
    json!({
        "date": setup.date,
        "device": setup.device,
        "exec_ms_is": if setup.gpu { "sum of kernel times (CUDA events)" } else { "CPU backend execution time" },
        "sf": opts.sf,
        "runs": opts.runs,
        "bandwidth_gbps": setup.bandwidth_gbps.map(|b| round(b, 1)),
        "data": opts.data.as_ref().map(|d| d.display().to_string()),
        "datagen_s": round(setup.load_s, 3),
        "decode_s": round(setup.decode_s, 3),
        "dictionaries_s": round(setup.dictionaries_s, 3),
        "upload_bytes": setup.upload_bytes,
        "upload_ms": round(setup.upload_ms, 3),
        "upload_gbps": gbps(setup.upload_bytes, setup.upload_ms).map(|g| round(g, 2)),
        "queries": results.iter().map(query_json).collect::<Vec<_>>(),
    })
}

const CSV_FIELDS: [&str; 19] = [
    "query",
    "status",
    "note",
    "rows",
    "cold_compile_ms",
    "cold_cache",
    "cold_exec_ms",
    "cold_wall_ms",
    "warm_compile_ms",
    "exec_ms_median",
    "exec_ms_min",
    "exec_ms_max",
    "bytes_read",
    "achieved_gbps",
    "floor_ms",
    "ratio",
    "upload_ms",
    "download_ms",
    "wall_ms_median",
];

/// One row per query with the run's context repeated, so files of several runs concatenate.
fn to_csv(setup: &Setup, opts: &BenchOptions, results: &[QueryResult]) -> String {
    let mut s = format!("date,device,sf,runs,bandwidth_gbps,{}\n", CSV_FIELDS.join(","));
    let bw = setup.bandwidth_gbps.map_or(String::new(), |b| round(b, 1).to_string());
    for r in results {
        let q = query_json(r);
        let cells: Vec<String> = CSV_FIELDS
            .iter()
            .map(|f| match &q[*f] {
                Value::Null => String::new(),
                Value::String(s) => csv_field(s).into_owned(),
                v => v.to_string(),
            })
            .collect();
        s.push_str(&format!(
            "{},{},{},{},{bw},{}\n",
            setup.date,
            csv_field(&setup.device),
            opts.sf,
            opts.runs,
            cells.join(",")
        ));
    }
    s
}

/// The current UTC time as ISO 8601 (no date library needed for one timestamp).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = gpusql_common::date::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
