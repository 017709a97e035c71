//! Deeply nested and very long expressions: 1,000 levels of nesting run (CPU backend, and
//! the GPU's kernels are generated and, where NVRTC is present, compiled); deeper ones and
//! chains of any length are refused with an error, never a stack overflow, also when the
//! engine is called from a thread with a small stack (2 MiB, Rust's default for spawned
//! threads).

use arrow::array::{Array, Int64Array};
use gpusql::{BackendChoice, Engine};

const LEVELS: usize = 1000;

fn engine() -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.sql("create table t (x integer not null)").unwrap();
    e.sql("insert into t values (1), (2), (3)").unwrap();
    e
}

/// Runs `f` on a thread of 2 MiB of stack.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap()
}

/// The first value of the first column of `sql`'s answer, as an i64.
fn first_i64(e: &mut Engine, sql: &str) -> i64 {
    let batches = e.sql(sql).unwrap_or_else(|err| panic!("{}…: {err}", &sql[..60]));
    let col = arrow::compute::cast(batches[0].column(0), &arrow::datatypes::DataType::Int64).unwrap();
    let a = col.as_any().downcast_ref::<Int64Array>().unwrap();
    assert!(!a.is_empty());
    a.value(0)
}

/// The kernels of `sql` compile with NVRTC (where it is installed).
fn kernels_compile(e: &Engine, sql: &str) {
    assert!(!e.cuda_sources(sql).unwrap().is_empty());
    match e.compile_kernels(sql, "sm_90") {
        Ok(_) => {}
        Err(gpusql::Error::Gpu(m))
            if m.contains("NVRTC")
                && m.contains("not found")
                && std::env::var("GPUSQL_REQUIRE_NVRTC").as_deref() != Ok("1") => {}
        Err(err) => panic!("{err}"),
    }
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn a_thousand_levels_run() {
    on_small_stack(|| {
        let mut e = engine();
        // 1,000 levels of each kind (x = 1 in the first row).
        let cases = [
            (format!("select {} from t order by x", nested("(", "x", ")", 2 * LEVELS)), 1),
            (format!("select {} from t order by x", nested("abs(", "x", ")", LEVELS)), 1),
            (format!("select {} from t order by x", nested("case when true then ", "x", " else 0 end", LEVELS)), 1),
            (format!("select {} from t order by x", vec!["x"; LEVELS + 1].join(" + ")), LEVELS as i64 + 1),
            (format!("select {} from t order by x", nested("(x + ", "x", ")", LEVELS)), LEVELS as i64 + 1),
            (format!("select {} from t order by x", nested("-(", "x", ")", LEVELS)), 1),
            (format!("select count(*) from t where {}", vec!["x = 2"; LEVELS].join(" or ")), 1),
            (format!("select sum({}) from t", vec!["x"; LEVELS].join(" + ")), 6 * LEVELS as i64),
        ];
        for (sql, want) in cases {
            assert_eq!(first_i64(&mut e, &sql), want, "{}", &sql[..60]);
            kernels_compile(&e, &sql);
        }
    });
}

#[test]
fn deeper_expressions_and_long_chains_are_refused() {
    on_small_stack(|| {
        let mut e = engine();
        let chain = |op: &str, n: usize| format!("select count(*) from t where {}", vec!["x = 1"; n].join(op));
        let cases = [
            format!("select {} from t", vec!["1"; 3000].join("+")),
            format!("select {} from t", vec!["1"; 100_000].join("+")),
            chain(" or ", 3000),
            chain(" and ", 7000),
            chain(" or ", 100_000),
            format!("select {} from t", nested("(", "1", ")", 100_000)),
            format!("select {} from t", nested("abs(", "x", ")", 3000)),
            format!("select {} from t", nested("(x + ", "x", ")", 3000)),
            format!("select {} from t", nested("- ", "x", "", 100_000)),
            vec!["select x from t"; 5000].join(" union all "),
        ];
        for sql in cases {
            let err = e.sql(&sql).unwrap_err().to_string();
            assert!(err.contains("nested too deeply (the limit is 1000 levels)"), "{err}");
        }
        // The position, where it is known: the first term of the part beyond the limit.
        let err =
            e.sql(&format!("select 1 from t\nwhere {}", vec!["x = 1"; 3000].join(" or "))).unwrap_err().to_string();
        assert!(err.starts_with("syntax error at line 2, column 7: expression nested too deeply"), "{err}");
        let err = e.sql(&format!("select {}", nested("(", "1", ")", 100_000))).unwrap_err().to_string();
        assert!(err.starts_with("syntax error at line 1, column "), "{err}");
        // The engine is still usable.
        assert_eq!(first_i64(&mut e, "select count(*) from t"), 3);
    });
}

/// The statement thread costs microseconds, not milliseconds.
#[test]
fn a_statement_costs_little_more_than_its_work() {
    let mut e = engine();
    e.sql("select 1").unwrap();
    let start = std::time::Instant::now();
    for _ in 0..200 {
        e.sql("set top_n = on").unwrap();
    }
    let per = start.elapsed().as_secs_f64() / 200.0;
    eprintln!("{:.1} µs per SET", per * 1e6);
    assert!(per < 2e-3, "{per} s per SET");
}

/// A kept plan run again by its text runs on the caller's thread where its statement is
/// shallow (`IN_PLACE_EXPRESSION_DEPTH`, 32 levels), on the statement thread otherwise:
/// either way a thread of 256 KiB of stack is enough.
#[test]
fn kept_plans_of_shallow_statements_run_on_a_small_stack() {
    const IN_PLACE: usize = 32;
    let mut e = engine();
    let cases: Vec<(String, i64)> = [IN_PLACE, IN_PLACE + 1]
        .into_iter()
        .flat_map(|levels| {
            [
                (format!("select {} from t order by x", nested("abs(", "x", ")", levels)), 1),
                (
                    format!("select {} from t order by x", nested("case when x > 0 then ", "x", " else 0 end", levels)),
                    1,
                ),
                (format!("select {} from t order by x", vec!["x"; levels + 1].join(" + ")), levels as i64 + 1),
                (
                    format!("select max({}) from t where x > 0", nested("(x + ", "x", ")", levels - 1)),
                    3 * levels as i64,
                ),
            ]
        })
        .collect();
    // Planned on the statement thread (their first run), kept.
    for (sql, want) in &cases {
        assert_eq!(first_i64(&mut e, sql), *want, "{sql}");
    }
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            for _ in 0..2 {
                for (sql, want) in &cases {
                    assert_eq!(first_i64(&mut e, sql), *want, "{sql}");
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
