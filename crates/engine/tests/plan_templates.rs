//! Plan templates (`SET plan_templates`, plan `parameters.rs`): a SELECT is planned with its
//! literals as parameters and its plan kept by its shape, so a query that differs only in
//! them runs the kept plan with its own values. These check, on the CPU backend (the GPU
//! runs the same plans, binding the parameters as kernel constants), that a query run
//! through another query's template answers exactly what it answers planned on its own,
//! errors included, and that it really took the kept plan.

use gpusql::{BackendChoice, Engine, Output};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn tpch(templates: bool) -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_tpch(0.01).unwrap();
    e.set("plan_templates", if templates { "on" } else { "off" }).unwrap();
    e
}

/// The answer of the last statement of `sql` as text (or its error), and whether its plan
/// was a kept one.
fn answer(e: &mut Engine, sql: &str) -> (String, bool) {
    match e.execute(sql) {
        Ok(outs) => match outs.into_iter().last() {
            Some(Output::Rows { batches, stats }) => {
                (arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string(), stats.plan_kept)
            }
            other => (format!("{other:?}"), false),
        },
        Err(err) => (format!("error: {err}"), false),
    }
}

/// Runs `first`, then `then` on one engine (templates on), and `then` on an engine that
/// plans each text with its values: the answers must be equal. Returns whether `then` ran
/// a kept plan.
fn through_template(with: &mut Engine, without: &mut Engine, first: &str, then: &str) -> bool {
    answer(with, first);
    let (got, kept) = answer(with, then);
    let (want, _) = answer(without, then);
    assert_eq!(got, want, "{then}\nafter\n{first}");
    kept
}

#[test]
fn tpch_variants_run_the_originals_plans_with_their_values() {
    let (mut with, mut without) = (tpch(true), tpch(false));
    let mut kept = vec![];
    for q in 1..=22 {
        let original = read(&repo().join(format!("tpch/q{q:02}.sql")));
        let variant = read(&repo().join(format!("tpch/variants/q{q:02}.sql")));
        if through_template(&mut with, &mut without, &original, &variant) {
            kept.push(q);
        }
        // And back: the original through the plan its variant used.
        through_template(&mut with, &mut without, &variant, &original);
    }
    // Those whose variants change only literals a parameter may take (Q1 changes an
    // interval, Q19 one of two places a literal was written: new shapes, planned anew).
    let want: Vec<u32> = (1..=22).filter(|q| ![1, 19].contains(q)).collect();
    assert_eq!(kept, want);
}

#[test]
fn values_the_plan_cannot_take_are_planned_as_written() {
    let (mut with, mut without) = (tpch(true), tpch(false));
    let cases: &[(&str, &str)] = &[
        // A text next to a DATE converts per run; an invalid one fails as it does unkept.
        (
            "SELECT count(*) AS n FROM orders WHERE o_orderdate < '1995-01-01'",
            "SELECT count(*) AS n FROM orders WHERE o_orderdate < '1996-06-30'",
        ),
        (
            "SELECT count(*) AS n FROM orders WHERE o_orderdate < '1995-01-01'",
            "SELECT count(*) AS n FROM orders WHERE o_orderdate < '1995-13-45'",
        ),
        // A constant condition, true then false.
        ("SELECT count(*) AS n FROM nation WHERE 1 = 1", "SELECT count(*) AS n FROM nation WHERE 1 = 2"),
        // Arithmetic folded at plan time, with a value it overflows on.
        (
            "SELECT sum(l_quantity) AS s FROM lineitem WHERE l_orderkey < 1000 + 2000",
            "SELECT sum(l_quantity) AS s FROM lineitem WHERE l_orderkey < 2147483647 + 1",
        ),
        // Division by zero in a constant.
        (
            "SELECT count(*) AS n FROM lineitem WHERE l_quantity > 10 / 2",
            "SELECT count(*) AS n FROM lineitem WHERE l_quantity > 10 / 0",
        ),
        // CASE parts, IN items (repeated), BETWEEN bounds, HAVING.
        (
            "SELECT n_name, CASE WHEN n_regionkey = 1 THEN 'one' ELSE 'other' END AS r FROM nation \
             WHERE n_nationkey IN (1, 2, 3) OR n_nationkey BETWEEN 20 AND 22 ORDER BY n_name",
            "SELECT n_name, CASE WHEN n_regionkey = 3 THEN 'three' ELSE 'rest' END AS r FROM nation \
             WHERE n_nationkey IN (5, 5, 7) OR n_nationkey BETWEEN 0 AND 1 ORDER BY n_name",
        ),
        (
            "SELECT l_returnflag, sum(l_quantity) AS q FROM lineitem GROUP BY l_returnflag \
             HAVING sum(l_quantity) > 100 ORDER BY 1",
            "SELECT l_returnflag, sum(l_quantity) AS q FROM lineitem GROUP BY l_returnflag \
             HAVING sum(l_quantity) > 20000 ORDER BY 1",
        ),
        // Other types: another shape.
        (
            "SELECT count(*) AS n FROM lineitem WHERE l_quantity < 24",
            "SELECT count(*) AS n FROM lineitem WHERE l_quantity < 24.5",
        ),
        // A scalar subquery with parameters, over rows and over none.
        (
            "SELECT count(*) AS n FROM customer WHERE c_acctbal > \
             (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00 AND c_nationkey = 3)",
            "SELECT count(*) AS n FROM customer WHERE c_acctbal > \
             (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00 AND c_nationkey = 99)",
        ),
        // Strings: equal to a dictionary-encoded column, ordered, concatenated.
        (
            "SELECT count(*) AS n FROM customer WHERE c_mktsegment = 'BUILDING' AND c_name > 'Customer#000000500'",
            "SELECT count(*) AS n FROM customer WHERE c_mktsegment = 'NOSUCH' AND c_name > 'Customer#000001000'",
        ),
        ("SELECT 'a' || 'b' AS ab, 1 + 2 AS three", "SELECT 'c' || 'd' AS ab, 3 + 4 AS three"),
        // Days added to a DATE.
        (
            "SELECT count(*) AS n FROM orders WHERE o_orderdate + 5 < DATE '1995-01-01'",
            "SELECT count(*) AS n FROM orders WHERE o_orderdate + 30 < DATE '1995-02-01'",
        ),
        // LIKE patterns: another of the same form, then of another form (planned anew).
        (
            "SELECT count(*) AS n FROM part WHERE p_type LIKE '%BRASS' AND p_name NOT LIKE '%green%'",
            "SELECT count(*) AS n FROM part WHERE p_type LIKE '%TIN' AND p_name NOT LIKE '%blue%'",
        ),
        (
            "SELECT count(*) AS n FROM part WHERE p_type LIKE '%BRASS' AND p_name NOT LIKE '%green%'",
            "SELECT count(*) AS n FROM part WHERE p_type LIKE 'PROMO_%' AND p_name NOT LIKE 'b%'",
        ),
        (
            "SELECT count(*) AS n FROM part WHERE p_name LIKE '%a%b%'",
            "SELECT count(*) AS n FROM part WHERE p_name LIKE '%aa%bb%'",
        ),
        // LIKE tests of one column joined by OR (merged into one DFA): the patterns stay
        // literals, so other patterns are a new shape.
        (
            "SELECT count(*) AS n FROM part WHERE p_name LIKE '%green%' OR p_name LIKE '%blue%' OR p_size < 5",
            "SELECT count(*) AS n FROM part WHERE p_name LIKE '%red%' OR p_name LIKE 'ivory%' OR p_size < 10",
        ),
        // Numbers that are ordinals, limits or function arguments stay as written.
        (
            "SELECT n_name, substring(n_name, 1, 3) AS s FROM nation ORDER BY 2, 1 LIMIT 5",
            "SELECT n_name, substring(n_name, 2, 2) AS s FROM nation ORDER BY 1, 2 LIMIT 3",
        ),
    ];
    for (first, then) in cases {
        through_template(&mut with, &mut without, first, then);
    }
}

#[test]
fn a_repeated_shape_keeps_its_plan_and_kernels() {
    let mut e = tpch(true);
    let q =
        |d: &str| format!("SELECT count(*) AS n FROM lineitem WHERE l_shipdate >= DATE '{d}' AND l_discount > 0.05");
    let (_, kept) = answer(&mut e, &q("1994-01-01"));
    assert!(!kept);
    for d in ["1995-01-01", "1996-01-01"] {
        let (_, kept) = answer(&mut e, &q(d));
        assert!(kept, "{d}");
    }
    // Off: each text is planned.
    e.set("plan_templates", "off").unwrap();
    let (_, kept) = answer(&mut e, &q("1997-01-01"));
    assert!(!kept);
}

/// A template's kernels are the ones its query planned with its values generates: its
/// parameters are kernel constants, as literals are. (So EXPLAIN VERBOSE, which shows a
/// plan made for the values, shows the kernels that run.)
#[test]
fn template_plans_generate_the_kernels_of_plans_made_for_their_values() {
    let (with, without) = (tpch(true), tpch(false));
    let mut failures = vec![];
    for q in 1..=22 {
        let original = read(&repo().join(format!("tpch/q{q:02}.sql")));
        let variant = read(&repo().join(format!("tpch/variants/q{q:02}.sql")));
        let mut differs = None;
        for sql in [original, variant] {
            let (a, b) = (with.all_cuda_sources(&sql).unwrap(), without.all_cuda_sources(&sql).unwrap());
            let names = |m: &[(String, String)]| m.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
            if names(&a) != names(&b) {
                differs = Some(format!("modules {:?} vs {:?}", names(&a), names(&b)));
            }
            for ((na, sa), (_, sb)) in a.iter().zip(&b) {
                if let Some((la, lb)) = sa.lines().zip(sb.lines()).find(|(x, y)| x != y) {
                    differs.get_or_insert(format!("{na}: template {la:?}, planned for its values {lb:?}"));
                }
            }
        }
        if let Some(d) = differs {
            failures.push(format!("q{q:02} {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
