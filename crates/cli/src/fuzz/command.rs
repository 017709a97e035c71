//! The `gpusql fuzz` command: options, parallel jobs (child processes over disjoint query
//! ranges, so a crash of one names its query), and the merged report.

use super::{hostile, FuzzOptions, FuzzReport};
use gpusql::{BackendChoice, Engine};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct FuzzArgs {
    /// auto (the GPU where there is one), gpu or cpu.
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Seed of the run; with --first, names each query exactly.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Index of the first query.
    #[arg(long, default_value_t = 0)]
    pub first: u64,
    /// Number of queries (or hostile inputs with --crash).
    #[arg(long, default_value_t = 1000)]
    pub queries: u64,
    /// The schema queries are drawn over: tpch or ssb (generated at --sf).
    #[arg(long, default_value = "tpch")]
    pub schema: String,
    #[arg(long, default_value_t = 0.01)]
    pub sf: f64,
    /// Compare with DuckDB too (default: where `python3 -c "import duckdb"` works).
    #[arg(long, conflicts_with = "no_duckdb")]
    pub duckdb: bool,
    #[arg(long)]
    pub no_duckdb: bool,
    /// Seconds spent reducing each failing query.
    #[arg(long, default_value_t = 60)]
    pub reduce_secs: u64,
    /// A query (or input) running longer than this many seconds is a failure (a hang).
    #[arg(long, default_value_t = 60)]
    pub hang_secs: u64,
    /// Row-returning queries get ORDER BY … LIMIT (for large scale factors).
    #[arg(long)]
    pub small_results: bool,
    /// Hostile input instead of valid queries: nothing may panic, abort or hang.
    #[arg(long)]
    pub crash: bool,
    /// Parallel child processes, each over its own range of queries.
    #[arg(long, default_value_t = 1)]
    pub jobs: u64,
    /// Write the report as JSON here too.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print each query before running it.
    #[arg(long)]
    pub print_queries: bool,
    /// Stop drawing queries after this many seconds (the report covers those run).
    #[arg(long, value_name = "SECS")]
    pub time_limit: Option<u64>,
}

fn open(args: &FuzzArgs, backend: BackendChoice) -> Result<Engine, String> {
    let mut engine = Engine::new(backend).map_err(|e| e.to_string())?;
    let loaded = match args.schema.as_str() {
        "tpch" => engine.load_tpch(args.sf),
        "ssb" => engine.load_ssb(args.sf),
        other => return Err(format!("--schema {other}: tpch or ssb")),
    };
    loaded.map_err(|e| e.to_string())?;
    Ok(engine)
}

pub fn main(args: FuzzArgs) -> ExitCode {
    let backend: BackendChoice = match args.backend.parse() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.jobs > 1 {
        return run_jobs(&args);
    }
    let mut engine = match open(&args, backend) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("fuzz: {} backend, {} SF {}", engine.backend(), args.schema, args.sf);
    let (report, text) = if args.crash {
        let schema = match super::schema_of(&mut engine) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("Error: {e}");
                return ExitCode::from(2);
            }
        };
        let exe = std::env::current_exe().ok();
        let r = hostile::run(&mut engine, &schema, args.seed.wrapping_add(args.first), args.queries, exe.as_deref(), 20, Duration::from_secs(args.hang_secs), args.time_limit.map(Duration::from_secs));
        let v = json!({"crash": true, "inputs": r.inputs, "in_process": r.in_process, "through_shell": r.through_shell,
                       "slowest_ms": r.slowest.as_secs_f64() * 1e3, "failures": r.failures});
        (v, render_crash(&json!([{"inputs": r.inputs, "in_process": r.in_process, "through_shell": r.through_shell, "slowest_ms": r.slowest.as_secs_f64() * 1e3, "failures": r.failures}])))
    } else {
        let opts = FuzzOptions {
            seed: args.seed,
            first: args.first,
            queries: args.queries,
            duckdb: if args.duckdb { Some(true) } else if args.no_duckdb { Some(false) } else { None },
            reduce_for: Duration::from_secs(args.reduce_secs),
            hang_after: Duration::from_secs(args.hang_secs),
            small_results: args.small_results,
            verbose: args.print_queries,
            time_limit: args.time_limit.map(Duration::from_secs),
        };
        match super::run(&mut engine, &opts) {
            Ok(r) => (to_json(&r, args.seed), r.render(args.seed)),
            Err(e) => {
                eprintln!("Error: {e}");
                return ExitCode::from(2);
            }
        }
    };
    print!("{text}");
    if let Some(path) = &args.report {
        if let Err(e) = std::fs::write(path, report.to_string()) {
            eprintln!("Error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if report["failures"].as_array().is_some_and(|f| f.is_empty()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn to_json(r: &FuzzReport, seed: u64) -> Value {
    json!({
        "queries": r.queries, "answered": r.answered, "checked_with_duckdb": r.checked_with_duckdb,
        "unsupported": r.unsupported, "both_errors": r.both_errors, "duckdb_errors": r.duckdb_errors,
        "failures": r.failures.iter().map(|f| json!({"seed": seed, "index": f.index, "class": f.class, "sql": f.sql, "reduced": f.reduced, "detail": f.detail})).collect::<Vec<_>>(),
    })
}

fn from_json(v: &Value) -> FuzzReport {
    let counts = |k: &str| v[k].as_object().map(|m| m.iter().map(|(a, b)| (a.clone(), b.as_u64().unwrap_or(0))).collect()).unwrap_or_default();
    FuzzReport {
        queries: v["queries"].as_u64().unwrap_or(0),
        answered: v["answered"].as_u64().unwrap_or(0),
        checked_with_duckdb: v["checked_with_duckdb"].as_u64().unwrap_or(0),
        unsupported: counts("unsupported"),
        both_errors: counts("both_errors"),
        duckdb_errors: counts("duckdb_errors"),
        failures: v["failures"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| super::Failure {
                        seed: f["seed"].as_u64().unwrap_or(0),
                        index: f["index"].as_u64().unwrap_or(0),
                        class: f["class"].as_str().unwrap_or_default().into(),
                        sql: f["sql"].as_str().unwrap_or_default().into(),
                        reduced: f["reduced"].as_str().unwrap_or_default().into(),
                        detail: f["detail"].as_str().unwrap_or_default().into(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Runs `jobs` children of this binary over consecutive ranges of queries and merges their
/// reports. A child that dies (abort, hang) is a failure naming its range.
fn run_jobs(args: &FuzzArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    let dir = std::env::temp_dir().join(format!("gpusql-fuzz-jobs-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let per = args.queries.div_ceil(args.jobs);
    let mut children = vec![];
    for k in 0..args.jobs {
        let first = args.first + k * per;
        let count = per.min((args.first + args.queries).saturating_sub(first));
        if count == 0 {
            break;
        }
        let report = dir.join(format!("job{k}.json"));
        let log = std::fs::File::create(dir.join(format!("job{k}.log"))).ok();
        let mut cmd = Command::new(&exe);
        cmd.args(["fuzz", "--backend", &args.backend, "--schema", &args.schema, "--sf", &args.sf.to_string(), "--seed", &args.seed.to_string()]);
        cmd.args(["--first", &first.to_string(), "--queries", &count.to_string(), "--jobs", "1"]);
        cmd.args(["--reduce-secs", &args.reduce_secs.to_string(), "--hang-secs", &args.hang_secs.to_string()]);
        cmd.arg("--report").arg(&report);
        if let Some(t) = args.time_limit {
            cmd.args(["--time-limit", &t.to_string()]);
        }
        for (on, flag) in [(args.duckdb, "--duckdb"), (args.no_duckdb, "--no-duckdb"), (args.small_results, "--small-results"), (args.crash, "--crash")] {
            if on {
                cmd.arg(flag);
            }
        }
        if let Some(l) = log {
            if let Ok(l2) = l.try_clone() {
                cmd.stdout(l).stderr(l2);
            }
        }
        match cmd.spawn() {
            Ok(c) => children.push((k, first, count, report, c)),
            Err(e) => eprintln!("Error: starting job {k}: {e}"),
        }
    }
    let mut merged = FuzzReport::default();
    let mut crash_reports = vec![];
    let mut dead = vec![];
    for (k, first, count, report, mut child) in children {
        let status = child.wait();
        let text = std::fs::read_to_string(&report).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
        match text {
            Some(v) if args.crash => crash_reports.push(v),
            Some(v) => {
                let r = from_json(&v);
                merged.queries += r.queries;
                merged.answered += r.answered;
                merged.checked_with_duckdb += r.checked_with_duckdb;
                for (m, src) in [(&mut merged.unsupported, r.unsupported), (&mut merged.both_errors, r.both_errors), (&mut merged.duckdb_errors, r.duckdb_errors)] {
                    for (msg, n) in src {
                        *m.entry(msg).or_default() += n;
                    }
                }
                merged.failures.extend(r.failures);
            }
            None => {
                let log = std::fs::read_to_string(dir.join(format!("job{k}.log"))).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                dead.push(format!("job {k} (queries {first}..{}) ended without a report ({status:?}): {}", first + count, tail.into_iter().rev().collect::<Vec<_>>().join(" / ")));
            }
        }
    }
    let mut ok = dead.is_empty();
    if args.crash {
        print!("{}", render_crash(&Value::Array(crash_reports.clone())));
        ok &= crash_reports.iter().all(|v| v["failures"].as_array().is_some_and(|f| f.is_empty()));
    } else {
        print!("{}", merged.render(args.seed));
        ok &= merged.failures.is_empty();
        if let Some(path) = &args.report {
            let _ = std::fs::write(path, to_json(&merged, args.seed).to_string());
        }
    }
    for d in &dead {
        println!("FAILURE [job died] {d}");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn render_crash(reports: &Value) -> String {
    let all = reports.as_array().cloned().unwrap_or_default();
    let sum = |k: &str| all.iter().map(|v| v[k].as_u64().unwrap_or(0)).sum::<u64>();
    let slowest = all.iter().map(|v| v["slowest_ms"].as_f64().unwrap_or(0.0)).fold(0.0, f64::max);
    let failures: Vec<String> = all.iter().flat_map(|v| v["failures"].as_array().cloned().unwrap_or_default()).map(|f| f.as_str().unwrap_or_default().to_string()).collect();
    let mut s = format!(
        "fuzz --crash: {} hostile inputs ({} in-process, {} through the shell), slowest {:.0} ms, {} FAILURES\n",
        sum("inputs"),
        sum("in_process"),
        sum("through_shell"),
        slowest,
        failures.len()
    );
    for f in failures {
        s.push_str(&format!("FAILURE {f}\n"));
    }
    s
}
