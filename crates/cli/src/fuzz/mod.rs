//! `gpusql fuzz`: differential testing with random queries (SQLsmith / SQLancer style).
//!
//! Each generated query runs on the engine's backend (the GPU where there is one) with the
//! default settings, and on the CPU reference backend with every optimization setting at
//! its naive form (a different physical plan through different code), and on DuckDB where
//! its Python package is installed. The answers are compared as multisets; a query that
//! fails must fail alike on both backends with `not supported: …`. A failing query is
//! reduced to a small one that fails the same way and printed with the seed that draws it.
//!
//! `--crash` feeds hostile input instead (see `hostile.rs`).

pub mod command;
mod compare;
pub mod corners;
mod duckdb;
mod generate;
pub mod hostile;
pub mod reduce;
mod rng;

use compare::{diff, rows_of, Rows};
use generate::{ColumnInfo, Generator, SchemaInfo, TableInfo, Ty};
use gpusql::{DataType, Engine, Output};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The settings the CPU oracle plans with: every technique in its naive form.
const NAIVE_SETTINGS: &[(&str, &str)] = &[
    ("multi_match", "per-lane"),
    ("filter_order", "written"),
    ("lane_refill", "off"),
    ("selectivity", "guessed"),
    ("pivoted_strings", "off"),
    ("like_dfa", "off"),
    ("top_n", "off"),
    ("radix_sort", "off"),
    ("replicated_tables", "off"),
    ("key_bitmaps", "off"),
    ("early_bitmaps", "off"),
    ("dictionary_strings", "off"),
    ("band_joins", "off"),
    ("register_groups", "0"),
];

#[derive(Debug, Clone)]
pub struct FuzzOptions {
    pub seed: u64,
    /// Index of the first query (with `seed`, names a query exactly).
    pub first: u64,
    pub queries: u64,
    /// Compare with DuckDB (None: where it is installed).
    pub duckdb: Option<bool>,
    /// Time allowed to reduce each failure.
    pub reduce_for: Duration,
    /// A query running longer than this is reported as a hang and ends the run.
    pub hang_after: Duration,
    /// Written after every query (the report so far, as JSON), and beside it
    /// `<file>.hang` when the watchdog ends the run: `--jobs` resumes after that query.
    pub checkpoint: Option<PathBuf>,
    /// Row-returning queries get a LIMIT (for large scale factors).
    pub small_results: bool,
    /// Every query computes a window function or grouping sets.
    pub windows: bool,
    /// Print every query before running it.
    pub verbose: bool,
    /// Stop drawing queries after this long (the report covers those run).
    pub time_limit: Option<Duration>,
    /// Settings of the engine's own run (`--set`), after `FUZZ_SETTINGS`.
    pub settings: Vec<(String, String)>,
}

/// What one side answered.
#[derive(Debug, Clone)]
enum Outcome {
    Rows(Rows),
    Error(String),
    Panic(String),
}

/// A query the two sides disagree on.
#[derive(Debug, Clone)]
pub struct Failure {
    pub seed: u64,
    pub index: u64,
    pub class: String,
    pub sql: String,
    pub reduced: String,
    pub detail: String,
}

#[derive(Debug, Default)]
pub struct FuzzReport {
    pub queries: u64,
    pub answered: u64,
    pub checked_with_duckdb: u64,
    /// Refusals both backends gave, by message (positions and literals stripped).
    pub unsupported: BTreeMap<String, u64>,
    /// Errors both backends gave alike that are not refusals (e.g. numeric overflow).
    pub both_errors: BTreeMap<String, u64>,
    /// DuckDB refused what the engine answered, by DuckDB's message.
    pub duckdb_errors: BTreeMap<String, u64>,
    /// Queries the backend answered but the CPU oracle did not within the hang limit
    /// (index, SQL): not checked, and not counted as failures of the backend.
    pub oracle_timeouts: Vec<(u64, String)>,
    pub failures: Vec<Failure>,
    /// The index of the next query to run (a checkpoint's resume point).
    pub next: u64,
}

impl FuzzReport {
    pub fn render(&self, seed: u64) -> String {
        let mut s = format!(
            "fuzz: {} queries (seed {seed}): {} answered alike ({} also by DuckDB), {} refused alike, {} failed alike, {} FAILURES\n",
            self.queries,
            self.answered,
            self.checked_with_duckdb,
            self.unsupported.values().sum::<u64>(),
            self.both_errors.values().sum::<u64>(),
            self.failures.len()
        );
        let top = |m: &BTreeMap<String, u64>, title: &str, s: &mut String| {
            if m.is_empty() {
                return;
            }
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1));
            s.push_str(&format!("{title}:\n"));
            for (msg, n) in v.iter().take(25) {
                s.push_str(&format!("  {n:>6}  {msg}\n"));
            }
        };
        top(&self.unsupported, "refused by both backends", &mut s);
        top(&self.both_errors, "errors on both backends", &mut s);
        top(&self.duckdb_errors, "answered here, refused by DuckDB", &mut s);
        if !self.oracle_timeouts.is_empty() {
            s.push_str(&format!(
                "not checked: the CPU oracle ran past the hang limit on {} queries:\n",
                self.oracle_timeouts.len()
            ));
            for (index, sql) in self.oracle_timeouts.iter().take(10) {
                s.push_str(&format!("  [{index}] {sql}\n"));
            }
        }
        for f in &self.failures {
            s.push_str(&format!(
                "\nFAILURE [{}] (reproduce: gpusql fuzz --seed {} --first {} --queries 1 …)\n  query:   {}\n  reduced: {}\n  {}\n",
                f.class, f.seed, f.index, f.sql, f.reduced, f.detail
            ));
        }
        s
    }

    pub fn to_json(&self, seed: u64) -> Value {
        json!({
            "queries": self.queries, "answered": self.answered, "checked_with_duckdb": self.checked_with_duckdb,
            "unsupported": self.unsupported, "both_errors": self.both_errors, "duckdb_errors": self.duckdb_errors,
            "oracle_timeouts": self.oracle_timeouts, "next": self.next,
            "failures": self.failures.iter().map(|f| json!({"seed": seed, "index": f.index, "class": f.class, "sql": f.sql, "reduced": f.reduced, "detail": f.detail})).collect::<Vec<_>>(),
        })
    }

    pub fn from_json(v: &Value) -> FuzzReport {
        let counts = |k: &str| {
            v[k].as_object()
                .map(|m| m.iter().map(|(a, b)| (a.clone(), b.as_u64().unwrap_or(0))).collect())
                .unwrap_or_default()
        };
        let text = |f: &Value, k: &str| f[k].as_str().unwrap_or_default().to_string();
        FuzzReport {
            queries: v["queries"].as_u64().unwrap_or(0),
            answered: v["answered"].as_u64().unwrap_or(0),
            checked_with_duckdb: v["checked_with_duckdb"].as_u64().unwrap_or(0),
            unsupported: counts("unsupported"),
            both_errors: counts("both_errors"),
            duckdb_errors: counts("duckdb_errors"),
            oracle_timeouts: serde_json::from_value(v["oracle_timeouts"].clone()).unwrap_or_default(),
            failures: v["failures"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| Failure {
                    seed: f["seed"].as_u64().unwrap_or(0),
                    index: f["index"].as_u64().unwrap_or(0),
                    class: text(f, "class"),
                    sql: text(f, "sql"),
                    reduced: text(f, "reduced"),
                    detail: text(f, "detail"),
                })
                .collect(),
            next: v["next"].as_u64().unwrap_or(0),
        }
    }

    /// Adds another report's counts and failures (the jobs of one run).
    pub fn merge(&mut self, r: FuzzReport) {
        self.queries += r.queries;
        self.answered += r.answered;
        self.checked_with_duckdb += r.checked_with_duckdb;
        for (m, src) in [
            (&mut self.unsupported, r.unsupported),
            (&mut self.both_errors, r.both_errors),
            (&mut self.duckdb_errors, r.duckdb_errors),
        ] {
            for (msg, n) in src {
                *m.entry(msg).or_default() += n;
            }
        }
        self.oracle_timeouts.extend(r.oracle_timeouts);
        self.failures.extend(r.failures);
    }
}

/// A message without positions, numbers and quoted text, for counting alike errors.
fn error_shape(msg: &str) -> String {
    let msg = msg.split(" (line ").next().unwrap_or(msg);
    let mut out = String::new();
    let mut quoted = false;
    for ch in msg.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                if quoted {
                    out.push_str("'…'");
                }
            }
            _ if quoted => {}
            c if c.is_ascii_digit() => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            c => out.push(c),
        }
    }
    out.chars().take(160).collect()
}

/// Whether two errors say the same thing: alike shapes once quoted values are left out (the
/// GPU cannot name the value a CAST of text failed on; the CPU backend names it).
fn same_error(a: &str, b: &str) -> bool {
    let unquoted = |m: &str| error_shape(m).replace(" '…'", "");
    unquoted(a) == unquoted(b)
}

/// The schema the generator draws from: the engine's tables, with literals sampled from
/// their first rows.
pub fn schema_of(engine: &mut Engine) -> gpusql::Result<SchemaInfo> {
    let mut tables = vec![];
    let names = engine.tables().names();
    for name in names {
        let Some(t) = engine.tables().get(&name) else { continue };
        let (fields, rows) = (t.schema.fields.clone(), t.rows);
        let mut columns = vec![];
        for f in fields {
            let ty = match f.ty {
                DataType::Int32 | DataType::Int64 => Ty::Int,
                DataType::Decimal { .. } => Ty::Dec,
                DataType::Float64 => Ty::Float,
                DataType::Utf8 => Ty::Str,
                DataType::Date => Ty::Date,
                DataType::Boolean => Ty::Bool,
                _ => continue,
            };
            let batches = engine.sql(&format!("SELECT DISTINCT {} FROM {name} LIMIT 40", f.name))?;
            if ty == Ty::Float {
                columns.push(ColumnInfo { name: f.name.clone(), ty, samples: double_literals(&batches) });
                continue;
            }
            let samples = rows_of(&batches)
                .into_iter()
                .filter_map(|r| r.into_iter().next())
                .filter(|v| v != "NULL")
                .map(|v| match ty {
                    Ty::Str if v == "(empty)" => "''".to_string(),
                    Ty::Str => format!("'{}'", v.replace('\'', "''")),
                    Ty::Date => format!("DATE '{v}'"),
                    _ => v,
                })
                .collect();
            columns.push(ColumnInfo { name: f.name.clone(), ty, samples });
        }
        tables.push(TableInfo { name, columns, rows });
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(SchemaInfo::with_foreign_keys(tables))
}

/// SQL literals of the DOUBLEs in the first column of `batches`, exactly (the shortest
/// text that reads back as the value: `1e300`, `-0.0`), NaN and infinities as casts.
fn double_literals(batches: &[arrow::record_batch::RecordBatch]) -> Vec<String> {
    let mut out = vec![];
    for b in batches {
        let Some(a) = b.column(0).as_any().downcast_ref::<arrow::array::Float64Array>() else { continue };
        for v in a.iter().flatten() {
            out.push(if v.is_nan() {
                "'nan'::DOUBLE".to_string()
            } else if v.is_infinite() {
                format!("'{}inf'::DOUBLE", if v < 0.0 { "-" } else { "" })
            } else {
                format!("{v:?}::DOUBLE")
            });
        }
    }
    out
}

/// The seed of query `index` of a run seeded `seed`.
fn query_seed(seed: u64, index: u64) -> u64 {
    rng::Rng::new(seed.wrapping_mul(0x100_0000_01b3) ^ index).next_u64()
}

/// Panics' messages, caught per query (the default hook would print each to stderr).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{msg}{at}"));
    }));
}

fn caught<T>(f: impl FnOnce() -> gpusql::Result<T>) -> Result<T, Outcome> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Outcome::Error(e.to_string())),
        Err(_) => Err(Outcome::Panic(LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default())),
    }
}

/// Settings of both runs: cross joins of more than 10^7 row pairs are refused (the
/// TPC-H schema at SF 0.01 pairs lineitem with orders at 9 * 10^8, which the CPU
/// backend would take minutes over).
const FUZZ_SETTINGS: &[(&str, &str)] = &[("max_cross_join_pairs", "10000000")];

fn apply_fuzz_settings(engine: &mut Engine, extra: &[(String, String)]) {
    for (k, v) in FUZZ_SETTINGS {
        let _ = engine.set(k, v);
    }
    for (k, v) in extra {
        let _ = engine.set(k, v);
    }
}

/// The engine's answer with its own backend and default settings (and `--set`'s).
fn run_primary(engine: &mut Engine, sql: &str, settings: &[(String, String)]) -> Outcome {
    apply_fuzz_settings(engine, settings);
    match caught(|| engine.execute(sql)) {
        Ok(outs) => match outs.into_iter().last() {
            Some(Output::Rows { batches, .. }) => Outcome::Rows(rows_of(&batches)),
            _ => Outcome::Error("not a query".into()),
        },
        Err(o) => o,
    }
}

/// The CPU backend's answer over the plan made with the naive settings.
fn run_oracle(engine: &mut Engine, sql: &str) -> Outcome {
    for (k, v) in NAIVE_SETTINGS.iter().chain(FUZZ_SETTINGS) {
        let _ = engine.set(k, v);
    }
    let out = caught(|| {
        let plan = engine.plan(sql)?;
        engine.execute_plan_cpu(&plan)
    });
    let _ = engine.reset(None);
    match out {
        Ok((batches, _)) => Outcome::Rows(rows_of(&batches)),
        Err(o) => o,
    }
}

/// Why the two answers make a failure (None: they agree, or refuse alike).
fn judge(primary: &Outcome, oracle: &Outcome) -> Option<(String, String)> {
    match (primary, oracle) {
        (Outcome::Panic(m), _) => Some((format!("panic: {}", error_shape(m)), m.clone())),
        (_, Outcome::Panic(m)) => Some((format!("panic on the CPU oracle: {}", error_shape(m)), m.clone())),
        (Outcome::Rows(a), Outcome::Rows(b)) => diff(a, b).map(|d| ("wrong answer".to_string(), d)),
        (Outcome::Error(a), Outcome::Error(b)) if same_error(a, b) => None,
        (Outcome::Error(a), Outcome::Error(b)) => Some(("different errors".into(), format!("{a} | CPU: {b}"))),
        (Outcome::Error(a), Outcome::Rows(_)) => {
            Some((format!("error where the CPU answers: {}", error_shape(a)), a.clone()))
        }
        (Outcome::Rows(_), Outcome::Error(b)) => {
            Some((format!("CPU error where the backend answers: {}", error_shape(b)), b.clone()))
        }
    }
}

/// Runs the differential fuzzer over the tables loaded in `engine`.
pub fn run(engine: &mut Engine, opts: &FuzzOptions) -> gpusql::Result<FuzzReport> {
    quiet_panics();
    let schema = schema_of(engine)?;
    let mut duck = match opts.duckdb {
        Some(false) => None,
        want => {
            if DuckDb::available() {
                Some(start_duckdb(engine)?)
            } else if want == Some(true) {
                return Err(gpusql::Error::InvalidInput(
                    "--duckdb: python3 cannot import duckdb (pip install duckdb)".into(),
                ));
            } else {
                None
            }
        }
    };
    let watchdog = Watchdog::start(opts.hang_after, opts.checkpoint.as_deref().map(hang_file));
    let mut report = FuzzReport { next: opts.first, ..FuzzReport::default() };
    let start = Instant::now();
    for index in opts.first..opts.first + opts.queries {
        if opts.time_limit.is_some_and(|t| start.elapsed() > t) {
            break;
        }
        let mut g = Generator::new(&schema, query_seed(opts.seed, index));
        g.small_results = opts.small_results;
        g.windows = opts.windows;
        let sql = g.query();
        if opts.verbose {
            eprintln!("[{index}] {sql}");
        }
        if let Some(path) = &opts.checkpoint {
            report.next = index;
            let _ = std::fs::write(path, report.to_json(opts.seed).to_string());
        }
        watchdog.begin_at(index, Phase::Primary, &sql);
        let primary = run_primary(engine, &sql, &opts.settings);
        watchdog.begin_at(index, Phase::Oracle, &sql);
        let oracle = run_oracle(engine, &sql);
        watchdog.end();
        report.queries += 1;
        // A run-time error of the CPU oracle alone may come of its evaluation order (the
        // written order of a filter's terms: `x + 2147483647 > 0 AND x IS NULL`); SQL leaves
        // the order open, so DuckDB's answer decides then.
        let order_error =
            matches!((&primary, &oracle), (Outcome::Rows(_), Outcome::Error(e)) if e.starts_with("execution error"));
        let duckdb_agrees = |d: &mut DuckDb, sql: &str| match (&primary, d.query(sql)) {
            (Outcome::Rows(ours), Ok(theirs)) => diff(ours, &theirs).is_none(),
            _ => false,
        };
        if order_error && duck.as_mut().is_some_and(|d| duckdb_agrees(d, &sql)) {
            report.answered += 1;
            report.checked_with_duckdb += 1;
            continue;
        }
        if let Some((class, detail)) = judge(&primary, &oracle) {
            let reduced = reduce::reduce(&sql, opts.reduce_for, &mut |q| {
                watchdog.begin_at(index, Phase::Reduce, q);
                let (p, o) = (run_primary(engine, q, &opts.settings), run_oracle(engine, q));
                watchdog.end();
                judge(&p, &o).is_some_and(|(c, _)| c == class)
            });
            report.failures.push(Failure { seed: opts.seed, index, class, sql, reduced, detail });
            continue;
        }
        match (&primary, duck.as_mut()) {
            (Outcome::Rows(ours), Some(d)) => {
                report.answered += 1;
                match d.query(&sql) {
                    Ok(theirs) => {
                        report.checked_with_duckdb += 1;
                        if let Some(detail) = diff(ours, &theirs) {
                            let reduced = reduce::reduce(&sql, opts.reduce_for, &mut |q| match (
                                run_primary(engine, q, &opts.settings),
                                d.query(q),
                            ) {
                                (Outcome::Rows(a), Ok(b)) => diff(&a, &b).is_some(),
                                _ => false,
                            });
                            report.failures.push(Failure {
                                seed: opts.seed,
                                index,
                                class: "differs from DuckDB".into(),
                                sql,
                                reduced,
                                detail,
                            });
                        }
                    }
                    Err(e) => *report.duckdb_errors.entry(error_shape(&e)).or_default() += 1,
                }
            }
            (Outcome::Rows(_), None) => report.answered += 1,
            (Outcome::Error(e), _) if e.starts_with("not supported") => {
                *report.unsupported.entry(error_shape(e)).or_default() += 1
            }
            (Outcome::Error(e), Some(d)) if e.starts_with("execution error") => {
                // A run-time error of both backends (division by zero, a value out of
                // range) where DuckDB answers is a wrong answer too.
                if let Ok(rows) = d.query(&sql) {
                    report.failures.push(Failure {
                        seed: opts.seed,
                        index,
                        class: "error where DuckDB answers".into(),
                        reduced: sql.clone(),
                        sql,
                        detail: format!("{e} | DuckDB: {} rows", rows.len()),
                    });
                    continue;
                }
                *report.both_errors.entry(error_shape(e)).or_default() += 1
            }
            (Outcome::Error(e), _) => *report.both_errors.entry(error_shape(e)).or_default() += 1,
            (Outcome::Panic(_), _) => {}
        }
    }
    report.next = opts.first + report.queries;
    if let Some(path) = &opts.checkpoint {
        let _ = std::fs::write(path, report.to_json(opts.seed).to_string());
    }
    Ok(report)
}

use duckdb::DuckDb;

/// Writes the engine's tables as Parquet for DuckDB and starts it over them.
fn start_duckdb(engine: &mut Engine) -> gpusql::Result<DuckDb> {
    let dir = std::env::temp_dir().join(format!("gpusql-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| gpusql::Error::Io(format!("{}: {e}", dir.display())))?;
    for name in engine.tables().names() {
        let path = dir.join(format!("{name}.parquet"));
        engine.execute(&format!("COPY {name} TO '{}' (FORMAT parquet)", path.display()))?;
    }
    DuckDb::start(&dir).map_err(gpusql::Error::Io)
}

/// What was running when the watchdog fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The backend under test.
    Primary,
    /// The CPU oracle (slow is not wrong: the query goes unchecked).
    Oracle,
    /// Reducing a failure already recorded.
    Reduce,
    /// A hostile input (crash mode).
    Input,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Primary => "primary",
            Phase::Oracle => "oracle",
            Phase::Reduce => "reduce",
            Phase::Input => "input",
        }
    }
}

/// Where the watchdog records the query it stopped (beside the checkpoint).
pub fn hang_file(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.as_os_str().to_owned();
    name.push(".hang");
    PathBuf::from(name)
}

/// The query a watchdog stopped, as `<checkpoint>.hang` holds it:
/// `{"index": N, "phase": "primary"|"oracle"|"reduce"|"input", "sql": "…"}`.
fn hang_json(r: &Running) -> Value {
    json!({"index": r.index, "phase": r.phase.name(), "sql": r.sql})
}

struct Running {
    since: Instant,
    index: u64,
    phase: Phase,
    sql: String,
}

/// Ends the process when a query runs longer than allowed (a hang cannot be interrupted
/// from inside), naming the query, and writing it to the hang file if there is one.
struct Watchdog {
    current: Arc<Mutex<Option<Running>>>,
}

impl Watchdog {
    fn start(limit: Duration, hang_file: Option<PathBuf>) -> Watchdog {
        let current: Arc<Mutex<Option<Running>>> = Arc::default();
        let watched = current.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            if let Some(r) = watched.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                if r.since.elapsed() > limit {
                    eprintln!(
                        "FAILURE [hang]: still running after {:.0} s ({}, query {}): {}",
                        limit.as_secs_f64(),
                        r.phase.name(),
                        r.index,
                        r.sql
                    );
                    if let Some(path) = &hang_file {
                        let _ = std::fs::write(path, hang_json(r).to_string());
                    }
                    std::process::exit(3);
                }
            }
        });
        Watchdog { current }
    }

    fn begin(&self, sql: &str) {
        self.begin_at(0, Phase::Input, sql);
    }

    fn begin_at(&self, index: u64, phase: Phase, sql: &str) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Running { since: Instant::now(), index, phase, sql: sql.to_string() });
    }

    fn end(&self) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
