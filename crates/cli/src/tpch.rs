//! Loading TPC-H into the engine, with a one-line progress display on stderr for large
//! scale factors (generation runs on all cores and takes a while from SF 1 up).

use gpusql::Engine;
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

struct Progress {
    sf: f64,
    rows: HashMap<String, usize>,
    last: Instant,
}

/// Generates and registers TPC-H at `sf`. With `verbose`, shows progress (when stderr is
/// a terminal) and a closing line with the row count and time.
pub fn load(engine: &mut Engine, sf: f64, verbose: bool) -> gpusql::Result<()> {
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
        let pct = (100.0 * total as f64 / expected_rows(p.sf)).min(100.0);
        let lineitem = p.rows.get("lineitem").copied().unwrap_or(0);
        eprint!("\rgenerating TPC-H SF {}: {pct:3.0}% ({total} rows; lineitem: {lineitem} rows)\x1b[K", p.sf);
        let _ = std::io::stderr().flush();
    };
    let result = engine.load_tpch_with_progress(sf, &progress);
    if live {
        eprint!("\r\x1b[K");
    }
    result?;
    if verbose {
        let rows: usize = TABLES.iter().filter_map(|n| engine.tables().get(n)).map(|t| t.rows).sum();
        eprintln!("loaded TPC-H SF {sf}: 8 tables, {rows} rows in {:.1} s", start.elapsed().as_secs_f64());
    }
    Ok(())
}
