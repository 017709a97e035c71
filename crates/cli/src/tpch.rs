//! Loading TPC-H (and SSB) into the engine, with a one-line progress display on stderr for
//! large scale factors (generation runs on all cores and takes a while from SF 1 up).

use gpusql::{Engine, IfExists};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Rows per unit of scale factor (lineitem approximately); nation and region are fixed.
const ROWS_PER_SF: [(&str, f64); 6] = [
    ("lineitem", 6_001_215.0),
    ("orders", 1_500_000.0),
    ("partsupp", 800_000.0),
    ("part", 200_000.0),
    ("customer", 150_000.0),
    ("supplier", 10_000.0),
];

const TABLES: [&str; 8] = ["nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"];

fn expected_rows(sf: f64) -> f64 {
    30.0 + ROWS_PER_SF.iter().map(|(_, n)| n * sf).sum::<f64>()
}

/// SSB rows at `sf` (lineorder approximately: 4 lines per order).
fn ssb_expected_rows(sf: f64) -> f64 {
    gpusql_datagen::ssb_sizes(sf).map_or(1.0, |s| (4 * s.orders + s.customer + s.supplier + s.part + s.date) as f64)
}

type Loader = fn(&mut Engine, f64, IfExists, &(dyn Fn(&str, usize) + Sync)) -> gpusql::Result<()>;

/// What [`load_with`] loads: TPC-H or SSB.
struct Bench {
    label: &'static str,
    tables: &'static [&'static str],
    fact: &'static str,
    expected_rows: fn(f64) -> f64,
    load: Loader,
}

struct Progress {
    sf: f64,
    rows: HashMap<String, usize>,
    last: Instant,
}

/// Generates and registers TPC-H at `sf` (tables of the same names are an error or
/// replaced, as `if_exists` says). With `verbose`, shows progress (when stderr is a
/// terminal) and a closing line with the row count and time.
pub fn load(engine: &mut Engine, sf: f64, if_exists: IfExists, verbose: bool) -> gpusql::Result<()> {
    let bench = Bench {
        label: "TPC-H",
        tables: &TABLES,
        fact: "lineitem",
        expected_rows,
        load: Engine::load_tpch_with_progress,
    };
    load_with(&bench, engine, sf, if_exists, verbose)
}

/// Generates and registers SSB (the Star Schema Benchmark) at `sf`, like [`load`].
pub fn load_ssb(engine: &mut Engine, sf: f64, if_exists: IfExists, verbose: bool) -> gpusql::Result<()> {
    let bench = Bench {
        label: "SSB",
        tables: &gpusql_datagen::SSB_TABLES,
        fact: "lineorder",
        expected_rows: ssb_expected_rows,
        load: Engine::load_ssb_with_progress,
    };
    load_with(&bench, engine, sf, if_exists, verbose)
}

fn load_with(bench: &Bench, engine: &mut Engine, sf: f64, if_exists: IfExists, verbose: bool) -> gpusql::Result<()> {
    let start = Instant::now();
    let live = verbose && std::io::stderr().is_terminal();
    let state = Mutex::new(Progress { sf, rows: HashMap::new(), last: start });
    let progress = |table: &str, so_far: usize| {
        if !live {
            return;
        }
        let Ok(mut p) = state.lock() else { return };
        // Batches of one table finish on several threads, out of order: keep the largest.
        let n = p.rows.entry(table.to_string()).or_insert(0);
        *n = (*n).max(so_far);
        if p.last.elapsed() < Duration::from_millis(100) {
            return;
        }
        p.last = Instant::now();
        let total: usize = p.rows.values().sum();
        let pct = (100.0 * total as f64 / (bench.expected_rows)(p.sf)).min(100.0);
        let fact = p.rows.get(bench.fact).copied().unwrap_or(0);
        eprint!(
            "\rgenerating {} SF {}: {pct:3.0}% ({total} rows; {}: {fact} rows)\x1b[K",
            bench.label, p.sf, bench.fact
        );
        let _ = std::io::stderr().flush();
    };
    let result = (bench.load)(engine, sf, if_exists, &progress);
    if live {
        eprint!("\r\x1b[K");
    }
    result?;
    if verbose {
        let rows: usize = bench.tables.iter().filter_map(|n| engine.tables().get(n)).map(|t| t.rows).sum();
        let (label, n) = (bench.label, bench.tables.len());
        eprintln!("loaded {label} SF {sf}: {n} tables, {rows} rows in {:.1} s", start.elapsed().as_secs_f64());
    }
    Ok(())
}
