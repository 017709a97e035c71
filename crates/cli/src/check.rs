//! Correctness suites: sqllogictest files and TPC-H / SSB / TPC-DS answers produced by DuckDB. Run by
//! `cargo test` on the CPU backend and by `gpusql check --backend gpu` on the device.

use arrow::array::{Array, Float64Array, TimestampMicrosecondArray};
use arrow::datatypes::DataType as ArrowType;
use arrow::record_batch::RecordBatch;
use arrow::util::display::array_value_to_string;
use gpusql::{BackendChoice, Engine, Error, Output};
use sqllogictest::{DBOutput, DefaultColumnType};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub backend: BackendChoice,
    /// TPC-H scale factor: data generated for the TPC-H answers (and loaded for .slt files
    /// at 0.01 regardless, which their expected values assume).
    pub sf: f64,
    /// Folder of DuckDB answers; default `<tpch_dir>/answers/sf<sf>`.
    pub answers_dir: Option<PathBuf>,
    /// Restrict TPC-H to these query numbers.
    pub queries: Option<Vec<u32>>,
    /// Also compile every query's kernels with NVRTC for this arch (CI, no GPU needed).
    pub compile_arch: Option<String>,
    /// SSB scale factor of the SSB answer checks (ssb/answers/sf<ssb_sf>).
    pub ssb_sf: f64,
    /// TPC-H read from this folder of files instead of generated at `sf`.
    pub data: Option<PathBuf>,
    /// Runs of each TPC-H and SSB query, every answer checked (later runs take the warm
    /// paths: kept plans, compiled kernels, buffers sized from the first run).
    pub runs: usize,
    /// A query of the answer suites still running after this long is cancelled and counted
    /// as failed (a hang must not stop the run).
    pub query_timeout: std::time::Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            backend: BackendChoice::Auto,
            sf: 0.01,
            answers_dir: None,
            queries: None,
            compile_arch: None,
            ssb_sf: 0.1,
            data: None,
            runs: 1,
            query_timeout: std::time::Duration::from_secs(300),
        }
    }
}

#[derive(Debug, Default)]
pub struct CheckReport {
    pub passed: Vec<String>,
    pub failed: Vec<(String, String)>,
    /// Checks not run, and why (e.g. "not supported: JOIN" for TPC-H queries outside the
    /// engine's current scope).
    pub skipped: Vec<(String, String)>,
    /// Print each check's line as it ends (the command line's check: a long run shows how
    /// far it got), so that `summary` ends the output.
    pub progress: bool,
}

impl CheckReport {
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }
    pub fn pass(&mut self, name: String) {
        self.print(&format!("ok      {name}"));
        self.passed.push(name);
    }
    pub fn fail(&mut self, name: String, why: String) {
        self.print(&format!("FAILED  {name}: {why}"));
        self.failed.push((name, why));
    }
    pub fn skip(&mut self, name: String, why: String) {
        self.print(&format!("skipped {name}: {why}"));
        self.skipped.push((name, why));
    }
    fn print(&self, line: &str) {
        if self.progress {
            println!("{line}");
        }
    }
    /// Every check's line, then the failures again and the counts.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for p in &self.passed {
            s.push_str(&format!("ok      {p}\n"));
        }
        for (n, why) in &self.skipped {
            s.push_str(&format!("skipped {n}: {why}\n"));
        }
        s.push_str(&self.summary());
        s
    }
    /// The failures and the counts.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (n, why) in &self.failed {
            s.push_str(&format!("FAILED  {n}: {why}\n"));
        }
        s.push_str(&format!(
            "{} passed, {} failed, {} skipped\n",
            self.passed.len(),
            self.failed.len(),
            self.skipped.len()
        ));
        s
    }
}

/// One engine per .slt file, with TPC-H SF 0.01 loaded (files may also create tables).
pub fn slt_engine(backend: BackendChoice) -> gpusql::Result<Engine> {
    let mut e = Engine::new(backend)?;
    e.load_tpch(0.01)?;
    Ok(e)
}

/// Runs every `*.slt` in `dir`; with `compile_arch`, also compiles every query's kernels.
pub fn run_slt_dir(dir: &Path, backend: BackendChoice, compile_arch: Option<&str>, report: &mut CheckReport) {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "slt")).collect()
        }
        Err(e) => {
            report.fail(dir.display().to_string(), format!("cannot read: {e}"));
            return;
        }
    };
    files.sort();
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        match run_slt_file_with(&f, backend, compile_arch) {
            Ok(()) => report.pass(format!("slt {name}")),
            Err(e) => report.fail(format!("slt {name}"), e),
        }
    }
}

pub fn run_slt_file(path: &Path, backend: BackendChoice) -> Result<(), String> {
    run_slt_file_with(path, backend, None)
}

/// Runs a .slt file; with `compile_arch`, also compiles every query's kernels with NVRTC.
pub fn run_slt_file_with(path: &Path, backend: BackendChoice, compile_arch: Option<&str>) -> Result<(), String> {
    let engine = slt_engine(backend).map_err(|e| e.to_string())?;
    let mut cell = Some(SltDb { engine, compile_arch: compile_arch.map(str::to_string), compiled: 0 });
    let mut runner = sqllogictest::Runner::new(move || {
        let db = cell.take();
        async move { db.ok_or_else(|| SltError("one connection per file".into())) }
    });
    runner.with_validator(float_tolerant_validator);
    // `$DATA`: the folder of small files the tests read (beside the .slt files).
    let data = path.parent().unwrap_or(Path::new(".")).join("data");
    runner.set_var("DATA".into(), data.canonicalize().unwrap_or(data).display().to_string());
    runner.run_file(path).map_err(|e| e.display(false).to_string())
}

/// Compares rows as text, except numbers with a decimal point or exponent, which may
/// differ in the last digits (floating-point sums in another order on the GPU).
fn float_tolerant_validator(normalizer: sqllogictest::Normalizer, actual: &[Vec<String>], expected: &[String]) -> bool {
    let actual: Vec<String> = actual.iter().map(|r| r.iter().map(&normalizer).collect::<Vec<_>>().join(" ")).collect();
    let expected: Vec<String> = expected.iter().map(normalizer).collect();
    actual.len() == expected.len()
        && actual.iter().zip(&expected).all(|(a, e)| {
            let (a, e): (Vec<&str>, Vec<&str>) = (a.split_whitespace().collect(), e.split_whitespace().collect());
            a.len() == e.len() && a.iter().zip(&e).all(|(x, y)| x == y || floats_close(x, y))
        })
}

pub fn floats_close(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        _ => false,
    }
}

#[derive(Debug)]
pub struct SltError(String);
impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SltError {}

struct SltDb {
    engine: Engine,
    compile_arch: Option<String>,
    compiled: usize,
}

impl sqllogictest::DB for SltDb {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        if let Some(arch) = &self.compile_arch {
            if is_query(sql) {
                // Queries that fail to plan are expected errors; the runner checks those.
                if let Ok(plan) = self.engine.plan(sql) {
                    let _ = plan;
                    self.compiled +=
                        self.engine.compile_kernels(sql, arch).map_err(|e| SltError(format!("NVRTC: {e}")))?;
                }
            }
        }
        let outs = self.engine.execute(sql).map_err(|e| SltError(e.to_string()))?;
        match outs.into_iter().last() {
            Some(Output::Rows { batches, .. }) => Ok(slt_rows(&batches)),
            Some(Output::Explain(text)) => Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Text],
                rows: text.lines().map(|l| vec![l.to_string()]).collect(),
            }),
            Some(Output::Done(msg)) => {
                let n = msg.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
                Ok(DBOutput::StatementComplete(n))
            }
            None => Ok(DBOutput::StatementComplete(0)),
        }
    }

    fn engine_name(&self) -> &str {
        "gpusql"
    }
}

fn is_query(sql: &str) -> bool {
    let w = sql.trim_start().get(..7).unwrap_or("").to_ascii_lowercase();
    w.starts_with("select") || w.starts_with("explain")
}

fn slt_rows(batches: &[RecordBatch]) -> DBOutput<DefaultColumnType> {
    let mut types = vec![];
    let mut rows = vec![];
    if let Some(b) = batches.first() {
        types = b
            .schema()
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                ArrowType::Int32 | ArrowType::Int64 => DefaultColumnType::Integer,
                ArrowType::Float64 | ArrowType::Decimal128(..) => DefaultColumnType::FloatingPoint,
                _ => DefaultColumnType::Text,
            })
            .collect();
    }
    for b in batches {
        for r in 0..b.num_rows() {
            rows.push(b.columns().iter().map(|c| slt_value(c.as_ref(), r)).collect());
        }
    }
    DBOutput::Rows { types, rows }
}

/// Text of one value as .slt files expect it: NULL, (empty), decimals at scale, doubles
/// rounded to 9 decimals without trailing zeros.
pub fn slt_value(a: &dyn Array, r: usize) -> String {
    if a.is_null(r) {
        return "NULL".into();
    }
    if let Some(f) = a.as_any().downcast_ref::<Float64Array>() {
        return format_double(f.value(r));
    }
    if let Some(t) = a.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        return gpusql_common::date::format_timestamp(t.value(r));
    }
    if let Some(d) = a.as_any().downcast_ref::<arrow::array::Date32Array>() {
        return gpusql_common::date::format_date(d.value(r) as i64);
    }
    if let Some(iv) = a.as_any().downcast_ref::<arrow::array::IntervalMonthDayNanoArray>() {
        return gpusql_common::interval::interval_of(iv.value(r)).to_text();
    }
    let s = array_value_to_string(a, r).unwrap_or_default();
    if s.is_empty() {
        "(empty)".into()
    } else {
        s
    }
}

pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        // (DuckDB's text, and Python's.)
        return "nan".into();
    }
    if !v.is_finite() {
        return v.to_string();
    }
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// TPC-H: every `qNN.sql` with an answer `qNN.csv` (DuckDB, same data) is run and compared.
pub fn run_tpch(tpch_dir: &Path, opts: &CheckOptions, report: &mut CheckReport) {
    let answers = opts.answers_dir.clone().unwrap_or_else(|| tpch_dir.join("answers").join(format!("sf{}", opts.sf)));
    let names: Vec<String> = (1..=22u32)
        .filter(|q| opts.queries.as_ref().is_none_or(|qs| qs.contains(q)))
        .map(|q| format!("q{q:02}"))
        .collect();
    let load = |e: &mut Engine| match &opts.data {
        Some(dir) => {
            let opened = e.open_directory(dir)?;
            match opened.errors.first() {
                Some(err) => Err(gpusql::Error::Io(err.clone())),
                None => Ok(()),
            }
        }
        None => e.load_tpch(opts.sf),
    };
    run_answers("tpch", tpch_dir, &answers, &names, Some(opts.sf), &load, opts, report);
}

/// SSB: every `q<N.M>.sql` under `ssb_dir` with an answer under `answers/sf<ssb_sf>`.
pub fn run_ssb(ssb_dir: &Path, opts: &CheckOptions, report: &mut CheckReport) {
    let answers = ssb_dir.join("answers").join(format!("sf{}", opts.ssb_sf));
    let mut names: Vec<String> = std::fs::read_dir(ssb_dir)
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".sql").map(str::to_string)).collect())
        .unwrap_or_default();
    names.sort();
    let load = |e: &mut Engine| e.load_ssb(opts.ssb_sf);
    run_answers("ssb", ssb_dir, &answers, &names, Some(opts.ssb_sf), &load, opts, report);
}

/// TPC-DS: every `qNN.sql` under `query_dir` over the Parquet tables of `<root>/data`,
/// compared with `<root>/answers/qNN.csv` (both written by scripts/tpcds_data.py).
pub fn run_tpcds(query_dir: &Path, root: &Path, opts: &CheckOptions, report: &mut CheckReport) {
    let mut names: Vec<String> = std::fs::read_dir(query_dir)
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".sql").map(str::to_string)).collect())
        .unwrap_or_default();
    names.sort();
    if let Some(qs) = &opts.queries {
        names.retain(|n| n[1..].parse::<u32>().is_ok_and(|q| qs.contains(&q)));
    }
    let data = root.join("data");
    let load = |e: &mut Engine| {
        let opened = e.open_directory(&data)?;
        match opened.errors.first() {
            Some(err) => Err(gpusql::Error::Io(err.clone())),
            None => Ok(()),
        }
    };
    run_answers("tpcds", query_dir, &root.join("answers"), &names, None, &load, opts, report);
}

/// Runs `<dir>/<name>.sql` for each name on freshly loaded data and compares with
/// `<answers>/<name>.csv` (DuckDB, same data).
#[allow(clippy::too_many_arguments)]
fn run_answers(
    suite: &str,
    dir: &Path,
    answers: &Path,
    names: &[String],
    sf: Option<f64>,
    load: &dyn Fn(&mut Engine) -> gpusql::Result<()>,
    opts: &CheckOptions,
    report: &mut CheckReport,
) {
    if !answers.is_dir() {
        report.skip(suite.into(), format!("no answers in {}", answers.display()));
        return;
    }
    let mut engine = match Engine::new(opts.backend).and_then(|mut e| load(&mut e).map(|_| e)) {
        Ok(e) => e,
        Err(e) => {
            report.fail(suite.into(), e.to_string());
            return;
        }
    };
    for q in names {
        let name = match sf {
            Some(sf) => format!("{suite} {q} sf{sf}"),
            None => format!("{suite} {q}"),
        };
        let sql = match std::fs::read_to_string(dir.join(format!("{q}.sql"))) {
            Ok(s) => s,
            Err(e) => {
                report.fail(name, format!("query file: {e}"));
                continue;
            }
        };
        let expected = match std::fs::read_to_string(answers.join(format!("{q}.csv"))) {
            Ok(s) => s,
            Err(_) => {
                report.skip(name, "no answer file".into());
                continue;
            }
        };
        if let Some(arch) = &opts.compile_arch {
            match engine.compile_kernels(&sql, arch) {
                Ok(_) => {}
                Err(e) if matches!(e.kind(), Error::NotSupported(_)) => {}
                Err(e) => {
                    report.fail(name, format!("NVRTC: {e}"));
                    continue;
                }
            }
        }
        let runs = opts.runs.max(1);
        for run in 1..=runs {
            let name = if runs > 1 { format!("{name} run {run}") } else { name.clone() };
            match sql_with_timeout(&mut engine, &sql, opts.query_timeout) {
                Ok(batches) => match compare_answer(&batches, &expected) {
                    Ok(()) => report.pass(name),
                    Err(e) => report.fail(name, e),
                },
                Err(e) if matches!(e.kind(), Error::NotSupported(_)) => {
                    report.skip(name, e.to_string());
                    break;
                }
                Err(e) => report.fail(name, e.to_string()),
            }
        }
    }
}

/// `engine.sql(sql)`, cancelled once it has run for `limit`.
fn sql_with_timeout(engine: &mut Engine, sql: &str, limit: std::time::Duration) -> gpusql::Result<Vec<RecordBatch>> {
    with_time_limit(engine, limit, |e| e.sql(sql))
}

/// Runs `f` on `engine`, cancelling the statement it runs once `limit` has passed; a
/// cancelled statement is an error that says how long it ran.
pub fn with_time_limit<T>(
    engine: &mut Engine,
    limit: std::time::Duration,
    f: impl FnOnce(&mut Engine) -> gpusql::Result<T>,
) -> gpusql::Result<T> {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let cancel = engine.cancel_handle();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            cancel.cancel();
        }
    });
    let out = f(engine);
    let _ = done.send(());
    let _ = watchdog.join();
    match out {
        Err(e) if matches!(e.kind(), Error::Cancelled) => {
            Err(Error::Execution(format!("still running after {} s (cancelled)", limit.as_secs())))
        }
        out => out,
    }
}

/// Compares a result with DuckDB's CSV answer (header row; decimals exact, doubles to a
/// relative 1e-9). Rows in the order given; where that differs, the same rows in another
/// order pass too: an ORDER BY may leave ties, which two engines may order differently
/// (the TPC-H queries have none; some TPC-DS queries do).
pub fn compare_answer(batches: &[RecordBatch], expected_csv: &str) -> Result<(), String> {
    let mut lines = expected_csv.lines();
    let header = parse_csv_line(lines.next().unwrap_or(""));
    let expected: Vec<Vec<String>> = lines.map(parse_csv_line).collect();
    let mut actual: Vec<Vec<String>> = vec![];
    let mut width = 0;
    for b in batches {
        width = b.num_columns();
        for r in 0..b.num_rows() {
            actual.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            String::new()
                        } else {
                            array_value_to_string(c.as_ref(), r).unwrap_or_default()
                        }
                    })
                    .collect(),
            );
        }
    }
    if width != header.len() && !actual.is_empty() {
        return Err(format!("{width} columns, expected {}", header.len()));
    }
    if actual.len() != expected.len() {
        return Err(format!("{} rows, expected {}", actual.len(), expected.len()));
    }
    let first_difference = |actual: &[Vec<String>], expected: &[Vec<String>]| {
        for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
            for (j, (x, y)) in a.iter().zip(e).enumerate() {
                if x != y && !floats_close(x, y) {
                    return Some(format!(
                        "row {} column {} ({}): got '{x}', expected '{y}'",
                        i + 1,
                        j + 1,
                        header.get(j).map_or("?", String::as_str)
                    ));
                }
            }
        }
        None
    };
    let Some(difference) = first_difference(&actual, &expected) else { return Ok(()) };
    let (mut a, mut e) = (actual, expected);
    a.sort();
    e.sort();
    match first_difference(&a, &e) {
        None => Ok(()),
        Some(_) => Err(difference),
    }
}

/// Splits one RFC 4180 line (answers hold no embedded newlines).
fn parse_csv_line(line: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}
