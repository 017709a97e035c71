//! Golden text of the generated CUDA: for each operator, a small query whose kernels show
//! it, compared byte for byte with `tests/golden/kernels/<operator>.cu`. A change to the
//! code generator shows here as a diff to review; after reviewing it,
//! `GPUSQL_BLESS=1 cargo test -p gpusql --test golden_kernels` writes the new text.
//!
//! `GPUSQL_KERNEL_DUMP=DIR` instead writes the kernels of all 22 TPC-H and 13 SSB queries,
//! every join probe in each form it takes at run time, to DIR (`diff -r` two dumps to see
//! that a restructuring of the code generator changed no kernel). No GPU needed.

use gpusql::{BackendChoice, Engine};
use std::path::{Path, PathBuf};

/// (golden file, schema, query): one operator each (the schema at SF 0.01).
const CASES: &[(&str, &str, &str)] = &[
    ("scan_filter_project", "tpch", "SELECT l_orderkey, l_extendedprice * (1 - l_discount) FROM lineitem WHERE l_shipdate >= DATE '1995-01-01' AND l_quantity < 10"),
    ("global_aggregate", "tpch", "SELECT sum(l_extendedprice * l_discount), count(*) FROM lineitem WHERE l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"),
    ("hash_aggregate", "tpch", "SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*) FROM lineitem GROUP BY l_returnflag, l_linestatus"),
    ("count_distinct_decimal128", "tpch", "SELECT count(DISTINCT l_suppkey), min(l_quantity * 2 - abs(l_tax)) FROM lineitem"),
    ("hash_join_unique", "tpch", "SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey WHERE c_acctbal > 0 GROUP BY n_name"),
    ("hash_join_repeated_keys", "tpch", "SELECT p_name, ps_supplycost FROM part JOIN partsupp ON p_partkey = ps_partkey WHERE ps_availqty < 100"),
    ("left_join", "tpch", "SELECT c_custkey, count(o_orderkey) FROM customer LEFT JOIN orders ON c_custkey = o_custkey GROUP BY c_custkey"),
    ("anti_join", "tpch", "SELECT count(*) FROM customer WHERE NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)"),
    ("mark_join", "tpch", "SELECT count(*) FROM customer WHERE c_custkey IN (SELECT o_custkey FROM orders WHERE o_totalprice > 400000) OR c_acctbal < 0"),
    ("scalar_subquery", "tpch", "SELECT count(*) FROM part WHERE p_retailprice > (SELECT avg(p_retailprice) FROM part)"),
    ("like", "tpch", "SELECT count(*) FROM part WHERE p_name LIKE '%green%' AND p_type NOT LIKE 'PROMO%'"),
    ("in_set", "tpch", "SELECT count(*) FROM lineitem WHERE l_suppkey IN (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181)"),
    ("top_n", "tpch", "SELECT o_orderkey, o_totalprice FROM orders ORDER BY o_totalprice DESC, o_orderkey LIMIT 10"),
    ("replicated_group_table", "ssb", "SELECT d_year, sum(lo_revenue) FROM lineorder JOIN date ON lo_orderdate = d_datekey GROUP BY d_year"),
    ("lane_refill_group_cache", "ssb", "@ssb/q3.1.sql"),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The kernels as one text: each module's generated part (the shared prelude is
/// hand-written: prelude.cu), headed by its name.
fn kernels_text(sources: Vec<(String, String)>) -> String {
    let mut text = String::new();
    for (name, src) in sources {
        text.push_str(&format!("// ==================== module {name} ====================\n"));
        text.push_str(gpusql::strip_prelude(&src));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

fn engines() -> (Engine, Engine) {
    let mut tpch = Engine::new(BackendChoice::Cpu).unwrap();
    tpch.load_tpch(0.01).unwrap();
    let mut ssb = Engine::new(BackendChoice::Cpu).unwrap();
    ssb.load_ssb(0.01).unwrap();
    (tpch, ssb)
}

#[test]
fn generated_kernels_match_their_golden_text() {
    let (tpch, ssb) = engines();
    if let Some(dir) = std::env::var_os("GPUSQL_KERNEL_DUMP") {
        return dump_all(&tpch, &ssb, Path::new(&dir));
    }
    let bless = std::env::var_os("GPUSQL_BLESS").is_some_and(|v| v == "1");
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/kernels");
    let mut failures = vec![];
    for (name, schema, sql) in CASES {
        let e = if *schema == "ssb" { &ssb } else { &tpch };
        let sql = match sql.strip_prefix('@') {
            Some(file) => std::fs::read_to_string(repo().join(file)).unwrap(),
            None => sql.to_string(),
        };
        let sources = e.cuda_sources(&sql).unwrap_or_else(|err| panic!("{name}: {err}"));
        let actual = format!("// {schema} SF 0.01: {}\n{}", sql.trim().replace('\n', "\n// "), kernels_text(sources));
        let golden = golden_dir.join(format!("{name}.cu"));
        if bless {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&golden, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if actual != expected {
            let line = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
            let show = |t: &str| t.lines().nth(line).unwrap_or("(end of text)").to_string();
            failures.push(format!(
                "{}: differs at line {}:\n  now:    {}\n  golden: {}",
                golden.display(),
                line + 1,
                show(&actual),
                show(&expected)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "generated CUDA changed (review the diff, then GPUSQL_BLESS=1 to accept it):\n{}",
        failures.join("\n")
    );
}

/// Every TPC-H and SSB query's kernels, in every probe form, one file per query.
fn dump_all(tpch: &Engine, ssb: &Engine, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    for (e, dir) in [(tpch, "tpch"), (ssb, "ssb")] {
        for f in std::fs::read_dir(repo().join(dir))
            .unwrap()
            .map(|f| f.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        {
            let sql = std::fs::read_to_string(&f).unwrap();
            let text = kernels_text(e.all_cuda_sources(&sql).unwrap_or_else(|err| panic!("{}: {err}", f.display())));
            std::fs::write(out.join(format!("{dir}_{}.cu", f.file_stem().unwrap().to_string_lossy())), text).unwrap();
        }
    }
}
