//! `gpusql fuzz --crash`: malformed and hostile input. Nothing may panic, abort (stack
//! overflow) or hang; every error must be an error (a non-zero exit status from the shell).
//!
//! Inputs: token soup, valid queries cut short or with a token changed, huge literals and
//! lists, deep nesting and long flat chains, unterminated strings and comments; one in
//! `process_every` (and every invalid UTF-8 input) is also piped into a child `gpusql`
//! process, whose exit status and stderr are checked.

use super::generate::{Generator, SchemaInfo};
use super::rng::Rng;
use gpusql::Engine;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "ORDER",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "JOIN",
    "LEFT",
    "RIGHT",
    "FULL",
    "OUTER",
    "INNER",
    "CROSS",
    "ON",
    "USING",
    "AND",
    "OR",
    "NOT",
    "IN",
    "EXISTS",
    "BETWEEN",
    "LIKE",
    "IS",
    "NULL",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AS",
    "DISTINCT",
    "UNION",
    "ALL",
    "WITH",
    "INTERVAL",
    "DATE",
    "CAST",
    "EXTRACT",
    "SUBSTRING",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "(",
    ")",
    ",",
    ";",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "||",
    ".",
    "'",
    "\"",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "1e308",
    "0.000001",
    "'x'",
    "'1995-01-01'",
    "DATE '1995-13-45'",
    "lineitem",
    "orders",
    "customer",
    "nation",
    "region",
    "l_orderkey",
    "o_orderdate",
    "c_name",
    "n_name",
    "*/",
    "/*",
    "--",
    "\n",
    "CREATE",
    "TABLE",
    "DROP",
    "INSERT",
    "INTO",
    "VALUES",
    "COPY",
    "TO",
    "EXPLAIN",
    "SET",
    "DESCRIBE",
    "read_parquet('/nonexistent')",
    "'/dev/zero'",
    "é",
    "🦀",
    "\u{0}",
];

/// One hostile input (bytes: some are not UTF-8).
pub fn input(g: &mut Generator, rng: &mut Rng) -> Vec<u8> {
    let deep = |open: &str, close: &str, inner: &str, n: usize| {
        format!("SELECT {}{inner}{} FROM region", open.repeat(n), close.repeat(n))
    };
    let chain =
        |term: &str, op: &str, n: usize| format!("SELECT count(*) FROM region WHERE {}", vec![term; n].join(op));
    let depths = [48, 200, 999, 1000, 1001, 5000, 100_000];
    let lengths = [1000, 3000, 7000, 100_000];
    let text = match rng.below(16) {
        0..=2 => (0..1 + rng.below(40)).map(|_| *rng.pick(TOKENS).unwrap_or(&"x")).collect::<Vec<_>>().join(" "),
        3 | 4 => {
            let q = g.query();
            let cut = rng.below(q.len());
            q.char_indices().map(|(i, _)| i).take_while(|&i| i <= cut).last().map_or(q.clone(), |i| q[..i].to_string())
        }
        5 => {
            let q = g.query();
            let mut words: Vec<&str> = q.split(' ').collect();
            let i = rng.below(words.len());
            match rng.below(3) {
                0 => {
                    words.remove(i);
                }
                1 => words.insert(i, rng.pick(TOKENS).unwrap_or(&"x")),
                _ => words[i] = rng.pick(TOKENS).unwrap_or(&"x"),
            }
            words.join(" ")
        }
        6 => {
            let digits = *rng.pick(&[19, 20, 39, 40, 400, 5000]).unwrap_or(&40);
            let n = "9".repeat(digits);
            match rng.below(4) {
                0 => format!("SELECT {n} FROM region"),
                1 => format!("SELECT count(*) FROM lineitem WHERE l_quantity < {n}.{n}"),
                2 => format!("SELECT count(*) FROM lineitem WHERE l_orderkey = -{n}"),
                _ => format!("SELECT l_shipdate + INTERVAL '{n}' DAY FROM lineitem LIMIT 1"),
            }
        }
        7 => format!(
            "SELECT count(*) FROM customer WHERE c_name = '{}'",
            "x".repeat(*rng.pick(&[1000, 100_000, 1_000_000]).unwrap_or(&1000))
        ),
        8 => {
            let n = *rng.pick(&[1000, 10_000, 100_000]).unwrap_or(&1000);
            if rng.chance(0.5) {
                format!(
                    "SELECT count(*) FROM lineitem WHERE l_orderkey IN ({})",
                    (0..n).map(|i| (i * 7).to_string()).collect::<Vec<_>>().join(",")
                )
            } else {
                format!(
                    "SELECT count(*) FROM lineitem WHERE l_comment NOT IN ({})",
                    (0..n).map(|i| format!("'c{i}'")).collect::<Vec<_>>().join(",")
                )
            }
        }
        9 => {
            let n = *rng.pick(&depths).unwrap_or(&48);
            match rng.below(4) {
                0 => deep("(", ")", "1", n),
                1 => deep("abs(", ")", "r_regionkey", n),
                2 => deep("CASE WHEN TRUE THEN ", " ELSE 0 END", "1", n),
                _ => deep("-", "", "1", n),
            }
        }
        10 => {
            let n = *rng.pick(&lengths).unwrap_or(&3000);
            match rng.below(4) {
                0 => format!("SELECT {} FROM region", vec!["1"; n].join("+")),
                1 => chain("r_regionkey = 1", " OR ", n),
                2 => chain("r_regionkey <> 7", " AND ", n),
                _ => format!("SELECT {} FROM region", vec!["r_name"; n].join(" || ")),
            }
        }
        11 => {
            let n = *rng.pick(&[10, 50, 200, 1000]).unwrap_or(&10);
            format!(
                "SELECT count(*) FROM region WHERE r_regionkey IN {}",
                "(SELECT r_regionkey FROM region WHERE r_regionkey IN ".repeat(n) + "(1)" + &")".repeat(n)
            )
        }
        12 => {
            let q = g.query();
            match rng.below(3) {
                0 => format!("{q} /* unterminated"),
                1 => format!("{q} WHERE 'unterminated"),
                _ => format!("{q}; {q};;; ;"),
            }
        }
        13 => (0..1 + rng.below(200)).map(|_| char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('?')).collect(),
        _ => {
            // Invalid UTF-8 inside a query.
            let mut b = g.query().into_bytes();
            let at = rng.below(b.len() + 1);
            let bad: &[u8] = rng
                .pick(&[&[0xff][..], &[0xc3, 0x28], &[0xe2, 0x82], &[0xf0, 0x28, 0x8c, 0x28], &[0x80]])
                .copied()
                .unwrap_or(&[0xff]);
            b.splice(at..at, bad.iter().copied());
            return b;
        }
    };
    text.into_bytes()
}

pub struct CrashReport {
    pub inputs: u64,
    pub in_process: u64,
    pub through_shell: u64,
    pub slowest: Duration,
    pub failures: Vec<String>,
}

/// How a crash run goes.
#[derive(Clone, Copy)]
pub struct CrashOptions<'a> {
    pub seed: u64,
    /// Hostile inputs to feed.
    pub count: u64,
    /// The `gpusql` binary that every `process_every`-th input, and every input that is
    /// not UTF-8, is also piped to (its shell reading standard input).
    pub shell: Option<&'a std::path::Path>,
    pub process_every: u64,
    /// An input running longer than this is a hang.
    pub hang_after: Duration,
    /// Stop feeding inputs after this long.
    pub time_limit: Option<Duration>,
}

/// Feeds hostile inputs to `engine` (and some to the shell: `CrashOptions`).
pub fn run(engine: &mut Engine, schema: &SchemaInfo, opts: &CrashOptions<'_>) -> CrashReport {
    let CrashOptions { seed, count, shell, process_every, hang_after, time_limit } = *opts;
    let start = Instant::now();
    super::quiet_panics();
    let watchdog = super::Watchdog::start(hang_after, None);
    let mut rng = Rng::new(seed);
    let mut g = Generator::new(schema, seed ^ 0x5eed);
    let mut report =
        CrashReport { inputs: 0, in_process: 0, through_shell: 0, slowest: Duration::ZERO, failures: vec![] };
    for i in 0..count {
        if time_limit.is_some_and(|t| start.elapsed() > t) {
            break;
        }
        let bytes = input(&mut g, &mut rng);
        report.inputs += 1;
        let shown = || String::from_utf8_lossy(&bytes).chars().take(300).collect::<String>();
        let text = std::str::from_utf8(&bytes).ok();
        if let Some(sql) = text {
            // A costly but valid input is cancelled at half the hang limit; one that goes on
            // past the limit ignored its cancel: a hang. (Settings are set again each time:
            // an input may be a SET.)
            super::apply_fuzz_settings(engine, &[]);
            watchdog.begin(&shown());
            let start = Instant::now();
            let out = super::caught(|| crate::check::with_time_limit(engine, hang_after / 2, |e| e.execute(sql)));
            report.slowest = report.slowest.max(start.elapsed());
            watchdog.end();
            report.in_process += 1;
            if let Err(super::Outcome::Panic(m)) = out {
                report.failures.push(format!("input {i}: panic {m}: {}", shown()));
            }
        }
        if text.is_none() || (process_every > 0 && i % process_every == 0) {
            let Some(exe) = shell else { continue };
            report.through_shell += 1;
            if let Some(problem) = through_shell(exe, &bytes, hang_after) {
                report.failures.push(format!("input {i}: {problem}: {}", shown()));
            }
        }
    }
    report
}

/// Pipes `bytes` into `gpusql --backend cpu` (no tables: parsing and binding); None when
/// it behaved: no panic or signal, a non-zero status where it printed an error.
fn through_shell(exe: &std::path::Path, bytes: &[u8], limit: Duration) -> Option<String> {
    let mut child = Command::new(exe)
        .args(["--backend", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let data = bytes.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                return Some(format!("shell still running after {:.0} s", limit.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Some(e.to_string()),
        }
    };
    let _ = writer.join();
    let mut stderr = String::new();
    use std::io::Read;
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    if stderr.contains("panicked") || stderr.contains("overflowed its stack") {
        return Some(format!("shell crashed ({status}): {}", stderr.lines().next().unwrap_or_default()));
    }
    match status.code() {
        None => Some(format!("shell killed by a signal ({status})")),
        Some(0) if stderr.contains("Error") => {
            Some(format!("shell printed an error but exited 0: {}", stderr.lines().next().unwrap_or_default()))
        }
        Some(101) => Some("shell exit 101 (panic)".into()),
        _ => None,
    }
}
