//! The `--timing` / `\timing` report: the engine's summary line plus one line per kernel.

use gpusql::ExecStats;
use std::fmt::Write;

/// GB/s (10^9 bytes) for `bytes` in `ms`, None when there is no time to divide by.
pub fn gbps(bytes: usize, ms: f64) -> Option<f64> {
    (ms > 0.0 && bytes > 0).then(|| bytes as f64 / (ms * 1e6))
}

pub fn fmt_bytes(bytes: usize) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// Multi-line report for stderr. `wall_ms` is what the CLI measured around the whole
/// statement (parse, plan, execute), which the engine's stats do not cover.
pub fn report(stats: &ExecStats, wall_ms: f64) -> String {
    let mut s = stats.summary();
    if !stats.kernels.is_empty() {
        let w = stats.kernels.iter().map(|k| k.name.len()).max().unwrap_or(0).max(6);
        let _ = write!(
            s,
            "\n  {:<w$} {:>10} {:>12} {:>12} {:>10} {:>9} {:>11}  cache",
            "kernel", "ms", "rows in", "rows out", "read", "GB/s", "compile ms"
        );
        for k in &stats.kernels {
            let rate = gbps(k.bytes_read, k.ms).map_or("-".into(), |g| format!("{g:.1}"));
            let _ = write!(
                s,
                "\n  {:<w$} {:>10.3} {:>12} {:>12} {:>10} {:>9} {:>11.1}  {}",
                k.name,
                k.ms,
                k.rows_in,
                k.rows_out,
                fmt_bytes(k.bytes_read),
                rate,
                k.compile_ms,
                k.cache
            );
        }
        if let Some(g) = gbps(stats.bytes_read, stats.kernel_ms) {
            let _ = write!(
                s,
                "\n  query read {} in {:.3} ms of kernels: {g:.1} GB/s",
                fmt_bytes(stats.bytes_read),
                stats.kernel_ms
            );
        }
    }
    let plan = if stats.plan_kept { "a kept plan" } else { "planned" };
    let replayed = match (stats.replayed, stats.graph) {
        (true, true) => "; stages replayed as one CUDA graph",
        (true, false) => "; stages replayed",
        _ => "",
    };
    let _ = write!(s, "\nTime: {wall_ms:.3} ms (wall, parse to result; {plan}: {:.2} ms{replayed})", stats.plan_ms);
    s
}
