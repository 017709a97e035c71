//! `gpusql`: SQL from the command line (`-c`, `-f`), an interactive shell, the
//! correctness suites (`gpusql check`) and the TPC-H benchmark (`gpusql bench tpch`).
//!
//! Exit codes: 0 success; 1 a statement, check or benchmark query failed; 2 the engine
//! or its data could not be set up (e.g. `--backend gpu` without a GPU) or bad usage.

mod bench;
mod bench_compile;
mod bench_join;
mod bench_replicated;
mod complete;
mod datagen;
mod format;
mod interrupt;
mod meta;
mod paths;
mod progress;
mod script;
mod session;
mod shell;
mod split;
mod timing;
mod tpch;
mod utf8;

use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use format::Format;
use gpusql::{BackendChoice, Engine, IfExists};
use session::Session;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decoding Parquet allocates and frees large buffers per row group; glibc's malloc maps
/// and unmaps them each time (page faults and zeroing were most of the decode time), while
/// mimalloc keeps and reuses them.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "gpusql", version, about = "JIT-compiling GPU SQL engine")]
struct Cli {
    /// A folder to open as a database: each *.parquet, *.csv or *.arrow file (or folder of
    /// such parts) in it becomes a table named after it.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The same as DIR.
    #[arg(long = "db", value_name = "DIR", conflicts_with = "dir")]
    db: Option<PathBuf>,
    /// Generate and load TPC-H at this scale factor first.
    #[arg(long, value_name = "SF")]
    tpch: Option<f64>,
    /// Generate and load SSB (Star Schema Benchmark) at this scale factor first.
    #[arg(long, value_name = "SF")]
    ssb: Option<f64>,
    /// Let each data set (loaded in the order --tpch, --ssb, DIR) replace the tables of
    /// the same names an earlier one loaded; without it such a clash is an error.
    #[arg(long)]
    replace: bool,
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Result format on stdout: a text table; CSV (RFC 4180, header row, NULL as an empty
    /// field); or JSON, one object per line (decimals as strings at their exact scale).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Run SQL (one or more statements, and meta-commands such as \d or .tables at the
    /// start of a line or after a ';') and exit; repeatable, runs in order with -f.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    command: Vec<String>,
    /// Run the statements of a file and exit; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Vec<PathBuf>,
    /// Print execution statistics of each statement to stderr.
    #[arg(long)]
    timing: bool,
    /// Log more to stderr: -v info, -vv debug (RUST_LOG overrides).
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the sqllogictest files and the TPC-H answer checks.
    Check(CheckArgs),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        suite: BenchSuite,
    },
    /// Differential fuzzing: random queries on this backend and the CPU backend (and
    /// DuckDB where installed), compared; or hostile input with --crash.
    Fuzz(gpusql_cli::fuzz::command::FuzzArgs),
    /// Generate benchmark data and write it as CSV (one <table>.csv per table).
    Datagen {
        #[command(subcommand)]
        suite: DatagenSuite,
    },
}

#[derive(Subcommand)]
enum DatagenSuite {
    /// TPC-H (tpchgen), e.g. `gpusql datagen tpch --sf 1 --format parquet --out /tmp/tpch1`.
    Tpch(DatagenArgs),
    /// SSB, the Star Schema Benchmark, e.g. `gpusql datagen ssb --sf 1 --out /tmp/ssb1`.
    Ssb(DatagenArgs),
}

#[derive(clap::Args)]
struct DatagenArgs {
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// File format: CSV (one <table>.csv per table, with a header), Parquet (<table>.parquet,
    /// or a folder <table>/ of parts for large tables, written in parallel) or Arrow IPC.
    #[arg(long, value_enum, default_value_t = datagen::OutFormat::Csv)]
    format: datagen::OutFormat,
}

#[derive(clap::Args)]
struct CheckArgs {
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// TPC-H scale factor of the answer checks.
    #[arg(long, default_value_t = 0.01)]
    sf: f64,
    /// Folder of *.slt files (default: sql-tests/ found from here or the executable).
    #[arg(long, value_name = "DIR")]
    slt_dir: Option<PathBuf>,
    /// Folder of qNN.sql files (default: tpch/ found likewise).
    #[arg(long, value_name = "DIR")]
    tpch_dir: Option<PathBuf>,
    /// Folder of expected answers (default: <tpch-dir>/answers/sf<SF>).
    #[arg(long, value_name = "DIR")]
    answers_dir: Option<PathBuf>,
    /// Only these TPC-H queries, e.g. 1,6.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    queries: Option<Vec<u32>>,
    /// Also compile every query's kernels with NVRTC for this arch, e.g. sm_90.
    #[arg(long, value_name = "ARCH")]
    compile_arch: Option<String>,
    /// SSB scale factor of the SSB answer checks (ssb/answers/sf<SF>).
    #[arg(long, default_value_t = 0.1)]
    ssb_sf: f64,
    /// Runs of each TPC-H and SSB query, every answer checked (runs after the first take
    /// the warm paths: kept plans, compiled kernels, buffers sized from earlier runs).
    #[arg(long, default_value_t = 1, value_name = "N")]
    runs: usize,
    /// Read TPC-H from this folder of files (as `gpusql datagen tpch --format parquet`
    /// writes them) instead of generating it; the answers must match (--answers-dir).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Also run TPC-DS: tpcds/qNN.sql over <DIR>/data/*.parquet against <DIR>/answers
    /// (both made by `scripts/tpcds_data.py --sf 1 --out DIR`); --queries selects them too.
    #[arg(long, value_name = "DIR")]
    tpcds: Option<PathBuf>,
    /// Only these suites (default: slt, tpch, ssb, and tpcds when --tpcds is given).
    #[arg(long, value_delimiter = ',', value_name = "SUITE,...")]
    suites: Option<Vec<CheckSuite>>,
    /// Seconds after which a TPC-H, SSB or TPC-DS query is cancelled and counted as failed.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    query_timeout: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckSuite {
    Slt,
    Tpch,
    Ssb,
    Tpcds,
}

#[derive(Subcommand)]
enum BenchSuite {
    /// TPC-H queries: cold and warm timings against the bandwidth floor.
    Tpch(BenchArgs),
    /// SSB (Star Schema Benchmark) queries, likewise.
    Ssb(BenchArgs),
    /// TPC-DS queries (tpcds/qNN.sql), likewise, over the Parquet files
    /// `scripts/tpcds_data.py --sf SF --out DIR` writes (--data DIR/data).
    Tpcds(BenchArgs),
    /// Push-down parallelism vs. per-lane probing on a Zipf-skewed multi-match join.
    SkewJoin(SkewArgs),
    /// Bank-replicated shared-memory tables vs. global hash tables on a Zipf-skewed
    /// group-by and probe.
    SkewGroup(SkewGroupArgs),
    /// Where a new query's NVRTC compile time goes, per module (needs no GPU).
    Compile(CompileArgs),
}

#[derive(clap::Args)]
struct CompileArgs {
    /// tpch, ssb or tpcds (the query files under that folder).
    #[arg(long, default_value = "tpch")]
    suite: String,
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Threads for the parallel compile of each query's modules.
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(1, |n| n.get()))]
    threads: usize,
    /// Only these queries, e.g. 1,6 or 1.1,4.3.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    queries: Option<Vec<String>>,
    /// TPC-DS's folder, as made by scripts/tpcds_data.py (--suite tpcds).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
}

#[derive(clap::Args)]
struct SkewGroupArgs {
    #[arg(long, default_value_t = 100_000_000)]
    rows: usize,
    /// Distinct values of the fact column (the dimension's rows).
    #[arg(long, default_value_t = 1024)]
    values: usize,
    #[command(flatten)]
    skew: SkewRuns,
}

/// What the skew benchmarks share.
#[derive(clap::Args)]
struct SkewRuns {
    /// Zipf exponents of the skewed column (the fact column / the build keys).
    #[arg(long, value_delimiter = ',', default_value = "0,0.5,1,1.5")]
    zipf: Vec<f64>,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
}

#[derive(clap::Args)]
struct SkewArgs {
    #[arg(long, default_value_t = 100_000_000)]
    probe_rows: usize,
    #[arg(long, default_value_t = 1 << 20)]
    build_rows: usize,
    /// Distinct key values (probe keys uniform over them).
    #[arg(long, default_value_t = 1 << 20)]
    keys: usize,
    #[command(flatten)]
    skew: SkewRuns,
}

#[derive(clap::Args)]
struct BenchArgs {
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Only these queries, e.g. 1,6 (TPC-H) or 1.1,4.3 (SSB); default: every query file.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    queries: Option<Vec<String>>,
    /// Warm runs per query (after one cold run).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Write the results as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the results as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Folder of qNN.sql files (default: tpch/ found from here or the executable).
    #[arg(long, value_name = "DIR")]
    query_dir: Option<PathBuf>,
    /// Read the tables from this folder of files (Parquet, CSV, Arrow) instead of
    /// generating them; --sf is then only a label.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Run each query first with no compiled kernel cached, as a never-seen query (the
    /// disk cache is not used; the helper module compiled at start is kept).
    #[arg(long)]
    cold: bool,
    /// A folder of the query files with other literals (e.g. tpch/variants): each runs
    /// once after its query, timing the first run of a query differing only in literals.
    #[arg(long, value_name = "DIR")]
    variants: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    Auto,
    Gpu,
    Cpu,
}

impl From<Backend> for BackendChoice {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Auto => BackendChoice::Auto,
            Backend::Gpu => BackendChoice::Gpu,
            Backend::Cpu => BackendChoice::Cpu,
        }
    }
}

/// One -c or -f argument, kept in command-line order.
enum Script {
    Sql(String),
    File(PathBuf),
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    init_tracing(cli.verbose);
    if cli.cmd.is_some() {
        reject_run_options(&matches);
    }
    match cli.cmd {
        Some(Cmd::Check(args)) => run_check(args),
        Some(Cmd::Fuzz(args)) => gpusql_cli::fuzz::command::main(args),
        Some(Cmd::Bench { suite: BenchSuite::Tpch(args) }) => run_bench(bench::Suite::Tpch, args),
        Some(Cmd::Bench { suite: BenchSuite::Ssb(args) }) => run_bench(bench::Suite::Ssb, args),
        Some(Cmd::Bench { suite: BenchSuite::Tpcds(args) }) => run_bench(bench::Suite::Tpcds, args),
        Some(Cmd::Bench { suite: BenchSuite::SkewJoin(args) }) => run_skew_join(args),
        Some(Cmd::Bench { suite: BenchSuite::Compile(a) }) => {
            print_report(bench_compile::run(&bench_compile::CompileOptions {
                suite: a.suite,
                arch: a.arch,
                threads: a.threads,
                queries: a.queries,
                data: a.data,
            }))
        }
        Some(Cmd::Bench { suite: BenchSuite::SkewGroup(args) }) => run_skew_group(args),
        Some(Cmd::Datagen { suite: DatagenSuite::Tpch(a) }) => {
            datagen::run(datagen::Suite::Tpch, a.sf, &a.out, a.format)
        }
        Some(Cmd::Datagen { suite: DatagenSuite::Ssb(a) }) => datagen::run(datagen::Suite::Ssb, a.sf, &a.out, a.format),
        None => {
            // Interleave -c and -f by their position on the command line.
            let at = |id: &str| matches.indices_of(id).map(|i| i.collect::<Vec<_>>()).unwrap_or_default();
            let mut scripts: Vec<(usize, Script)> =
                at("command").into_iter().zip(cli.command.clone().into_iter().map(Script::Sql)).collect();
            scripts.extend(at("file").into_iter().zip(cli.file.clone().into_iter().map(Script::File)));
            scripts.sort_by_key(|(i, _)| *i);
            run_sql(&cli, scripts.into_iter().map(|(_, s)| s).collect())
        }
    }
}

/// The options of the SQL mode mean nothing to a subcommand (it has its own --backend);
/// say so rather than silently ignore them. (clap's args_conflicts_with_subcommands would
/// also reject the global -v.)
fn reject_run_options(matches: &clap::ArgMatches) {
    for id in ["dir", "db", "tpch", "ssb", "replace", "backend", "format", "command", "file", "timing"] {
        if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            let msg = format!("--{id} is an option of the SQL mode; put subcommand options after the subcommand name");
            Cli::command().error(clap::error::ErrorKind::ArgumentConflict, msg).exit();
        }
    }
}

/// `-v` info, `-vv` debug for the engine's crates (their targets all start with
/// "gpusql"; other crates such as sqlparser stay at warn, they are very chatty), `-vvv`
/// debug everywhere; RUST_LOG wins when set.
fn init_tracing(verbose: u8) {
    use std::io::IsTerminal;
    let default = match verbose {
        0 => "warn",
        1 => "warn,gpusql=info",
        2 => "warn,gpusql=debug",
        _ => "debug,gpusql=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Opens the engine, printing the CPU-fallback notice once.
fn open_engine(backend: Backend) -> Result<Engine, ExitCode> {
    open_engine_with(backend, true)
}

/// Opens the engine; with `wait`, waits for the GPU and prints the CPU-fallback notice
/// now, else the GPU opens in the background and the session prints the notice after the
/// statement that first needs it.
fn open_engine_with(backend: Backend, wait: bool) -> Result<Engine, ExitCode> {
    match Engine::new(backend.into()) {
        Ok(e) => {
            if wait {
                if let Some(n) = e.notice() {
                    eprintln!("{n}");
                }
            }
            Ok(e)
        }
        Err(e) => {
            eprintln!("Error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

fn run_sql(cli: &Cli, scripts: Vec<Script>) -> ExitCode {
    // The interactive shell shows the backend in its banner: it waits for the GPU anyway.
    let mut engine = match open_engine_with(cli.backend, scripts.is_empty()) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let if_exists = if cli.replace { IfExists::Replace } else { IfExists::Fail };
    // Which data set loaded each table so far, for a clash's error message.
    let mut loaded: Vec<(String, &str)> = vec![];
    type Load = fn(&mut Engine, f64, IfExists, bool) -> gpusql::Result<()>;
    let sets: [(&str, &str, Option<f64>, &[&str], Load); 2] = [
        ("TPC-H", "--tpch", cli.tpch, &gpusql_datagen::TPCH_TABLES, tpch::load),
        ("SSB", "--ssb", cli.ssb, &gpusql_datagen::SSB_TABLES, tpch::load_ssb),
    ];
    for (label, flag, sf, tables, load) in sets {
        let Some(sf) = sf else { continue };
        if !cli.replace {
            if let Some(msg) = clash_message(label, tables, &loaded) {
                eprintln!("Error: {msg}");
                return ExitCode::from(2);
            }
        }
        if let Err(e) = load(&mut engine, sf, if_exists, sf >= 1.0) {
            eprintln!("Error: loading {label}: {e}");
            return ExitCode::from(2);
        }
        loaded.extend(tables.iter().map(|t| (t.to_string(), flag)));
    }
    let mut session = Session::new(engine, cli.format, cli.timing);
    if let Some(dir) = cli.dir.as_ref().or(cli.db.as_ref()) {
        if let Err(e) = session.open_directory(dir, if_exists) {
            let hint = if loaded.is_empty() {
                ""
            } else {
                " (loaded by --tpch / --ssb; pass --replace to let the folder's tables replace them)"
            };
            eprintln!("Error: {e}{hint}");
            return ExitCode::from(2);
        }
    }
    let ok = if scripts.is_empty() {
        shell::run(&mut session)
    } else {
        let mut ok = true;
        for s in scripts {
            let outcome = match s {
                Script::Sql(sql) => session.run_script(&sql, None),
                Script::File(path) => {
                    match std::fs::read(&path).map_err(|e| e.to_string()).and_then(|b| utf8::decode(b, 1)) {
                        Ok(text) => session.run_script(&text, Some(&path)),
                        Err(e) => {
                            eprintln!("Error: {}: {e}", path.display());
                            session::Outcome { ok: false, quit: false }
                        }
                    }
                }
            };
            ok &= outcome.ok;
            if outcome.quit {
                break;
            }
        }
        ok
    };
    // Exit without tearing the engine down: freeing every GPU buffer, the pinned staging
    // memory and the host tables one by one took ~350 ms at TPC-H SF 10, which the
    // operating system and the driver do at once when the process ends.
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::mem::forget(session);
    gpusql::stop_background_compiles();
    std::process::exit(if ok { 0 } else { 1 })
}

/// Where data set `label` would load tables that an earlier flag loaded: what clashes
/// and what to do.
fn clash_message(label: &str, tables: &[&str], loaded: &[(String, &str)]) -> Option<String> {
    let clashes: Vec<(&str, &str)> =
        tables.iter().filter_map(|t| loaded.iter().find(|(l, _)| l == t).map(|(_, by)| (*t, *by))).collect();
    let (_, by) = clashes.first()?;
    let names: Vec<&str> = clashes.iter().map(|(t, _)| *t).collect();
    Some(format!(
        "{label}'s tables {} clash with the tables of the same names {by} loaded. Query one data set per run, or pass --replace to let {label}'s tables replace them.",
        names.join(", ")
    ))
}

fn run_check(args: CheckArgs) -> ExitCode {
    let dirs = paths::resolve_dir(args.slt_dir.as_deref(), "sql-tests", "--slt-dir")
        .and_then(|s| paths::resolve_dir(args.tpch_dir.as_deref(), "tpch", "--tpch-dir").map(|t| (s, t)));
    let (slt_dir, tpch_dir) = match dirs {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    // Fail early and clearly on an unusable backend (the suites open their own engines).
    if let Err(code) = open_engine(args.backend) {
        return code;
    }
    let opts = gpusql_cli::check::CheckOptions {
        backend: args.backend.into(),
        sf: args.sf,
        answers_dir: args.answers_dir,
        data: args.data,
        queries: args.queries,
        compile_arch: args.compile_arch,
        ssb_sf: args.ssb_sf,
        runs: args.runs,
        query_timeout: std::time::Duration::from_secs(args.query_timeout),
    };
    let suites = args.suites.unwrap_or_else(|| {
        let mut all = vec![CheckSuite::Slt, CheckSuite::Tpch, CheckSuite::Ssb];
        all.extend(args.tpcds.is_some().then_some(CheckSuite::Tpcds));
        all
    });
    let mut report = gpusql_cli::check::CheckReport { progress: true, ..Default::default() };
    for suite in suites {
        match suite {
            CheckSuite::Slt => {
                gpusql_cli::check::run_slt_dir(&slt_dir, opts.backend, opts.compile_arch.as_deref(), &mut report)
            }
            CheckSuite::Tpch => gpusql_cli::check::run_tpch(&tpch_dir, &opts, &mut report),
            CheckSuite::Ssb => match tpch_dir.parent().map(|p| p.join("ssb")).filter(|p| p.is_dir()) {
                Some(ssb) => gpusql_cli::check::run_ssb(&ssb, &opts, &mut report),
                None => report.skip("ssb".into(), "no ssb/ folder beside tpch/".into()),
            },
            CheckSuite::Tpcds => match (&args.tpcds, tpch_dir.parent().map(|p| p.join("tpcds"))) {
                (Some(root), Some(queries)) if queries.is_dir() => {
                    gpusql_cli::check::run_tpcds(&queries, root, &opts, &mut report)
                }
                (None, _) => report.fail("tpcds".into(), "needs --tpcds DIR".into()),
                _ => report.fail("tpcds".into(), "no tpcds/ folder beside tpch/".into()),
            },
        }
    }
    print!("{}", report.summary());
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_skew_join(args: SkewArgs) -> ExitCode {
    let engine = match open_engine(args.skew.backend) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let opts = bench_join::SkewOptions {
        data: gpusql_datagen::skew::SkewJoinSizes {
            probe_rows: args.probe_rows,
            build_rows: args.build_rows,
            keys: args.keys.max(1),
        },
        zipf: args.skew.zipf,
        runs: args.skew.runs.max(1),
    };
    print_report(bench_join::run(engine, &opts))
}

fn run_skew_group(args: SkewGroupArgs) -> ExitCode {
    let engine = match open_engine(args.skew.backend) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let opts = bench_replicated::ReplicatedOptions {
        data: gpusql_datagen::skew::SkewGroupSizes { rows: args.rows, values: args.values.max(1) },
        zipf: args.skew.zipf,
        runs: args.skew.runs.max(1),
    };
    print_report(bench_replicated::run(engine, &opts))
}

/// Prints a benchmark's report, or its error.
fn print_report(report: Result<String, String>) -> ExitCode {
    match report {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_bench(suite: bench::Suite, args: BenchArgs) -> ExitCode {
    let dir_name = match suite {
        bench::Suite::Tpch => "tpch",
        bench::Suite::Ssb => "ssb",
        bench::Suite::Tpcds => "tpcds",
    };
    let query_dir = match paths::resolve_dir(args.query_dir.as_deref(), dir_name, "--query-dir") {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    let engine = match open_engine(args.backend) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let opts = bench::BenchOptions {
        suite,
        sf: args.sf,
        queries: args.queries,
        runs: args.runs as usize,
        query_dir,
        json: args.json,
        csv: args.csv,
        data: args.data,
        cold: args.cold,
        variants: args.variants,
    };
    match bench::run(engine, &opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::from(2)
        }
    }
}
