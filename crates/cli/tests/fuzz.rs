//! The fuzzer in CI (no GPU): random queries on the CPU backend with the default settings
//! against the CPU backend planning with every technique in its naive form, and against
//! DuckDB where `python3 -c "import duckdb"` works (scripts/test.sh installs it); and
//! hostile input, in-process and through the shell. Bounded counts keep it to a minute or
//! two; `gpusql fuzz` runs the same at any size (docs/TESTING.md).

use gpusql::{BackendChoice, Engine};
use gpusql_cli::fuzz::{self, hostile, FuzzOptions};
use std::time::Duration;

fn engine() -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_tpch(0.01).unwrap();
    e
}

/// `queries` queries of seed `seed`, compared with DuckDB where it is installed.
fn options(seed: u64, queries: u64) -> FuzzOptions {
    FuzzOptions {
        seed,
        first: 0,
        queries,
        duckdb: None,
        reduce_for: Duration::from_secs(30),
        hang_after: Duration::from_secs(120),
        checkpoint: None,
        small_results: false,
        windows: false,
        verbose: false,
        time_limit: None,
        settings: vec![],
    }
}

#[test]
fn random_queries_agree() {
    let mut e = engine();
    let queries = std::env::var("GPUSQL_FUZZ_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(250);
    let opts = options(7, queries);
    let report = fuzz::run(&mut e, &opts).unwrap();
    let text = report.render(opts.seed);
    println!("{text}");
    assert!(report.failures.is_empty(), "{text}");
    // The generator must mostly draw queries the engine answers.
    assert!(report.answered * 2 > report.queries, "{text}");
}

/// The corner tables (`fuzz/corners.rs`: signed zeros, NaN, rounding ties, multi-byte
/// text, NULLs, an empty table) through the same three-way comparison.
#[test]
fn corner_queries_agree() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    let dir = std::env::temp_dir().join(format!("gpusql-corners-test-{}", std::process::id()));
    fuzz::corners::load(&mut e, &dir).unwrap();
    let queries = std::env::var("GPUSQL_FUZZ_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let opts = options(5, queries);
    let report = fuzz::run(&mut e, &opts).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = report.render(opts.seed);
    println!("{text}");
    assert!(report.failures.is_empty(), "{text}");
    assert!(report.answered * 2 > report.queries, "{text}");
}

#[test]
fn hostile_input_is_an_error_never_a_crash() {
    let mut e = engine();
    let schema = fuzz::schema_of(&mut e).unwrap();
    let shell = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gpusql"));
    let inputs = std::env::var("GPUSQL_FUZZ_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1500);
    let opts = hostile::CrashOptions {
        seed: 11,
        count: inputs,
        shell: Some(&shell),
        process_every: 25,
        hang_after: Duration::from_secs(20),
        time_limit: None,
    };
    let r = hostile::run(&mut e, &schema, &opts);
    assert!(r.failures.is_empty(), "{}", r.failures.join("\n"));
    assert!(r.through_shell > 0);
}
