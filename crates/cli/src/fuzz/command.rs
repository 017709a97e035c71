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
    /// The schema queries are drawn over: tpch or ssb (generated at --sf), or corners (small
    /// tables of signed zeros, NaN, rounding ties, multi-byte text and NULLs; `corners.rs`).
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
    /// Every query computes a window function or grouping sets (ROLLUP / CUBE / GROUPING
    /// SETS) at its top SELECT.
    #[arg(long)]
    pub windows: bool,
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
    /// A session setting of the engine's run (not the CPU oracle's), e.g.
    /// `--set radix_sort=always` (the small tables' sorts radix-sorted); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub settings: Vec<(String, String)>,
}

fn parse_setting(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("'{text}' is not NAME=VALUE"))?;
    Ok((name.trim().to_string(), value.trim().to_string()))
}

fn open(args: &FuzzArgs, backend: BackendChoice) -> Result<Engine, String> {
    let mut engine = Engine::new(backend).map_err(|e| e.to_string())?;
    let loaded = match args.schema.as_str() {
        "tpch" => engine.load_tpch(args.sf),
        "ssb" => engine.load_ssb(args.sf),
        "corners" => {
            let dir = std::env::temp_dir().join(format!("gpusql-fuzz-corners-{}", std::process::id()));
            super::corners::load(&mut engine, &dir)
        }
        other => return Err(format!("--schema {other}: tpch, ssb or corners")),
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
    // (The settings' names and values checked once, on a session without data.)
    if let Ok(mut bare) = Engine::new(BackendChoice::Cpu) {
        for (name, value) in &args.settings {
            if let Err(e) = bare.set(name, value) {
                eprintln!("Error: --set {name}={value}: {e}");
                return ExitCode::from(2);
            }
        }
    }
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
        let opts = hostile::CrashOptions {
            seed: args.seed.wrapping_add(args.first),
            count: args.queries,
            shell: exe.as_deref(),
            process_every: 20,
            hang_after: Duration::from_secs(args.hang_secs),
            time_limit: args.time_limit.map(Duration::from_secs),
        };
        let r = hostile::run(&mut engine, &schema, &opts);
        let v = json!({"crash": true, "inputs": r.inputs, "in_process": r.in_process, "through_shell": r.through_shell,
                       "slowest_ms": r.slowest.as_secs_f64() * 1e3, "failures": r.failures});
        (
            v,
            render_crash(
                &json!([{"inputs": r.inputs, "in_process": r.in_process, "through_shell": r.through_shell, "slowest_ms": r.slowest.as_secs_f64() * 1e3, "failures": r.failures}]),
            ),
        )
    } else {
        let opts = FuzzOptions {
            seed: args.seed,
            first: args.first,
            queries: args.queries,
            duckdb: if args.duckdb {
                Some(true)
            } else if args.no_duckdb {
                Some(false)
            } else {
                None
            },
            reduce_for: Duration::from_secs(args.reduce_secs),
            hang_after: Duration::from_secs(args.hang_secs),
            small_results: args.small_results,
            windows: args.windows,
            verbose: args.print_queries,
            time_limit: args.time_limit.map(Duration::from_secs),
            checkpoint: args.report.clone(),
            settings: args.settings.clone(),
        };
        match super::run(&mut engine, &opts) {
            Ok(r) => (r.to_json(args.seed), r.render(args.seed)),
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

/// One child process over queries `first..end` of job `k`.
struct Job {
    k: u64,
    first: u64,
    end: u64,
    child: std::process::Child,
}

/// The children of one `--jobs` run: where their reports and logs go, and how one starts.
struct Jobs<'a> {
    args: &'a FuzzArgs,
    exe: PathBuf,
    dir: PathBuf,
    started: std::time::Instant,
}

impl Jobs<'_> {
    fn report_of(&self, k: u64) -> PathBuf {
        self.dir.join(format!("job{k}.json"))
    }

    fn log_of(&self, k: u64) -> PathBuf {
        self.dir.join(format!("job{k}.log"))
    }

    /// Starts job `k` over queries `first..end` (None: out of time, or it did not start).
    fn spawn(&self, k: u64, first: u64, end: u64) -> Option<Job> {
        let args = self.args;
        let report = self.report_of(k);
        let _ = std::fs::remove_file(&report);
        let _ = std::fs::remove_file(super::hang_file(&report));
        let mut cmd = Command::new(&self.exe);
        cmd.args(["fuzz", "--backend", &args.backend, "--schema", &args.schema, "--sf", &args.sf.to_string()]);
        cmd.args(["--seed", &args.seed.to_string(), "--first", &first.to_string()]);
        cmd.args(["--queries", &(end - first).to_string(), "--jobs", "1"]);
        cmd.args(["--reduce-secs", &args.reduce_secs.to_string(), "--hang-secs", &args.hang_secs.to_string()]);
        cmd.arg("--report").arg(&report);
        for (name, value) in &args.settings {
            cmd.arg("--set").arg(format!("{name}={value}"));
        }
        if let Some(t) = args.time_limit {
            let left = t.saturating_sub(self.started.elapsed().as_secs());
            if left == 0 {
                return None;
            }
            cmd.args(["--time-limit", &left.to_string()]);
        }
        let flags = [
            (args.duckdb, "--duckdb"),
            (args.no_duckdb, "--no-duckdb"),
            (args.small_results, "--small-results"),
            (args.windows, "--windows"),
            (args.crash, "--crash"),
        ];
        cmd.args(flags.iter().filter(|(on, _)| *on).map(|(_, flag)| *flag));
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log_of(k)).ok();
        if let Some(l) = log {
            if let Ok(l2) = l.try_clone() {
                cmd.stdout(l).stderr(l2);
            }
        }
        match cmd.spawn() {
            Ok(child) => Some(Job { k, first, end, child }),
            Err(e) => {
                eprintln!("Error: starting job {k}: {e}");
                None
            }
        }
    }

    /// Records the query a child stopped inside (`stopped_at`): what its watchdog wrote,
    /// or, where it wrote nothing, that the process died.
    fn record_stop(&self, job: &Job, stopped_at: u64, status: std::process::ExitStatus, merged: &mut FuzzReport) {
        let hang = std::fs::read_to_string(super::hang_file(&self.report_of(job.k)))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
        let sql = hang.as_ref().and_then(|h| h["sql"].as_str()).unwrap_or_default().to_string();
        let failure = |class: &str, sql: String, detail: String| super::Failure {
            seed: self.args.seed,
            index: stopped_at,
            class: class.into(),
            reduced: sql.clone(),
            sql,
            detail,
        };
        merged.queries += 1;
        match hang.as_ref().and_then(|h| h["phase"].as_str()) {
            Some("oracle") => merged.oracle_timeouts.push((stopped_at, sql)),
            Some("reduce") => {} // the failure being reduced is in the checkpoint
            Some(_) => {
                merged.failures.push(failure("hang", sql, format!("still running after {} s", self.args.hang_secs)))
            }
            None => merged.failures.push(failure(
                "process died",
                String::new(),
                format!("{status}: {}", log_tail(&self.log_of(job.k))),
            )),
        }
    }
}

/// Runs `jobs` children of this binary over consecutive ranges of queries and merges their
/// reports. A child stopped by its watchdog is started again after the query it stopped
/// on (the query is a failure, or unchecked where only the CPU oracle was slow); a child
/// that dies otherwise (abort, signal) is a failure naming its query and is resumed too.
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
    let jobs = Jobs { args, exe, dir, started: std::time::Instant::now() };
    let started = jobs.started;
    let spawn = |k: u64, first: u64, end: u64| jobs.spawn(k, first, end);
    let per = args.queries.div_ceil(args.jobs);
    let mut running: Vec<Job> = (0..args.jobs)
        .filter_map(|k| {
            let first = args.first + k * per;
            let end = (first + per).min(args.first + args.queries);
            (first < end).then(|| spawn(k, first, end)).flatten()
        })
        .collect();
    let mut merged = FuzzReport::default();
    let mut crash_reports = vec![];
    let mut dead = vec![];
    // Children stop drawing queries at the time limit; one still inside a query then is
    // stopped at the limit plus a grace period, and what it finished counts.
    let deadline = args.time_limit.map(|t| started + Duration::from_secs(t + 20));
    let mut out_of_time = false;
    while !running.is_empty() {
        std::thread::sleep(Duration::from_millis(100));
        if !out_of_time && deadline.is_some_and(|d| std::time::Instant::now() > d) {
            out_of_time = true;
            for job in &mut running {
                let _ = job.child.kill();
            }
        }
        let mut still = vec![];
        for mut job in running {
            let status = match job.child.try_wait() {
                Ok(None) => {
                    still.push(job);
                    continue;
                }
                Ok(Some(s)) => s,
                Err(e) => {
                    dead.push(format!("job {} (queries {}..{}): {e}", job.k, job.first, job.end));
                    continue;
                }
            };
            let report = jobs.report_of(job.k);
            let text = std::fs::read_to_string(&report).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if out_of_time && text.is_none() {
                continue; // stopped while loading its tables
            }
            if args.crash {
                match text {
                    Some(v) => crash_reports.push(v),
                    None => dead.push(format!(
                        "job {} (inputs {}..{}) ended without a report ({status:?}): {}",
                        job.k,
                        job.first,
                        job.end,
                        log_tail(&jobs.log_of(job.k))
                    )),
                }
                continue;
            }
            let r = text
                .as_ref()
                .map(FuzzReport::from_json)
                .unwrap_or(FuzzReport { next: job.first, ..FuzzReport::default() });
            let stopped_at = r.next;
            merged.merge(r);
            // 0 and 1 are a finished run (1: with failures, or stopped by --time-limit).
            if matches!(status.code(), Some(0 | 1)) || out_of_time {
                continue;
            }
            // Stopped inside query `stopped_at`: record it, go on after it.
            jobs.record_stop(&job, stopped_at, status, &mut merged);
            if stopped_at + 1 < job.end {
                still.extend(spawn(job.k, stopped_at + 1, job.end));
            }
        }
        running = still;
    }
    let mut ok = dead.is_empty();
    if args.crash {
        print!("{}", render_crash(&Value::Array(crash_reports.clone())));
        ok &= crash_reports.iter().all(|v| v["failures"].as_array().is_some_and(|f| f.is_empty()));
    } else {
        print!("{}", merged.render(args.seed));
        ok &= merged.failures.is_empty();
        if let Some(path) = &args.report {
            let _ = std::fs::write(path, merged.to_json(args.seed).to_string());
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

/// The last lines a child wrote, for a failure that has nothing else to say.
fn log_tail(path: &std::path::Path) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(5).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

fn render_crash(reports: &Value) -> String {
    let all = reports.as_array().cloned().unwrap_or_default();
    let sum = |k: &str| all.iter().map(|v| v[k].as_u64().unwrap_or(0)).sum::<u64>();
    let slowest = all.iter().map(|v| v["slowest_ms"].as_f64().unwrap_or(0.0)).fold(0.0, f64::max);
    let failures: Vec<String> = all
        .iter()
        .flat_map(|v| v["failures"].as_array().cloned().unwrap_or_default())
        .map(|f| f.as_str().unwrap_or_default().to_string())
        .collect();
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
