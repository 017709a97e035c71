//! The shape of generated kernels where it carries a design decision (no GPU needed).

use gpusql::{BackendChoice, Engine, ProbeVariant};

/// SSB Q3.1 (supplier, customer and date probes; ~20% of rows pass the supplier and the
/// customer filter each): the customer probe's key bitmap is tested with the supplier's,
/// before the one Lane Refill, its key loaded from a prefetch register; the refill the plan
/// has after the customer probe is left out; the date probe (~4% of rows reach it) keeps
/// its own test.
#[test]
fn early_key_bitmaps_in_ssb_q31() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_ssb(0.1).unwrap();
    // (Global hash tables: small dimensions would otherwise be bank-replicated tables.)
    e.set("replicated_tables", "off").unwrap();
    let sql = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../ssb/q3.1.sql")).unwrap();
    let sources = e.cuda_sources_for(&sql, ProbeVariant::UniqueShared).unwrap();
    let probe = sources.iter().map(|(_, s)| s).find(|s| s.contains("Scan lineorder")).expect("the lineorder pipeline");
    let early = probe
        .lines()
        .find(|l| l.contains("with the key bitmaps of the later probes"))
        .unwrap_or_else(|| panic!("no early bitmap test:\n{probe}"));
    assert!(early.contains("lo_custkey") && !early.contains("lo_orderdate"), "{early}");
    assert_eq!(probe.matches("// ---- LaneRefill").count(), 2, "{probe}");
    assert!(
        probe.contains("left out, HashProbe #") && probe.contains("key bitmap was tested before an earlier refill"),
        "{probe}"
    );
    // Both keys come from prefetch registers; three bitmap tests in all (date's in its lookup).
    assert!(probe.contains("= pf0_cur_;") && probe.contains("= pf1_cur_;"), "{probe}");
    assert_eq!(probe.matches("_bitmap[bd_ >> 5]").count(), 3, "{probe}");
    // 32-bit keys: 32-bit bitmap offsets.
    assert!(probe.contains("const uint32_t bd_ = (uint32_t)(") && !probe.contains("const uint64_t bd_"), "{probe}");
}

/// The per-block group cache of a grouped aggregation: in SSB Q3.1, which ~4% of the
/// lineorder rows reach (150 groups), not in Q3.2, which ~0.2% reach (its shared memory
/// would cost the probes' L1 more than the few rows gain).
#[test]
fn group_cache_where_many_rows_reach_the_aggregation() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_ssb(0.1).unwrap();
    e.set("replicated_tables", "off").unwrap();
    let lineorder_kernel = |q: &str| {
        let sql = std::fs::read_to_string(format!("{}/../../ssb/{q}.sql", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let sources = e.cuda_sources_for(&sql, ProbeVariant::UniqueShared).unwrap();
        sources.into_iter().map(|(_, s)| s).find(|s| s.contains("Scan lineorder")).expect("the lineorder pipeline")
    };
    let q31 = lineorder_kernel("q3.1");
    assert!(
        q31.contains("a per-block cache of the groups its rows found")
            && q31.contains("ld_acquire_cta(&gc_gid_[gcs_])"),
        "{q31}"
    );
    let q32 = lineorder_kernel("q3.2");
    assert!(!q32.contains("gc_gid_"), "{q32}");
}

/// String group keys are hashed once a row: a row the group cache misses inserts into the
/// global table with the hash it looked the cache up with (hashing again would read the
/// strings' bytes again, and doubled the string-hash code NVRTC compiles).
#[test]
fn string_group_keys_are_hashed_once() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.sql("CREATE TABLE t (a VARCHAR, b VARCHAR, k BIGINT, n BIGINT)").unwrap();
    e.sql("INSERT INTO t VALUES ('x', 'y', 1, 1), ('x', 'z', 2, 2)").unwrap();
    let kernel_of = |e: &mut Engine, sql: &str| {
        let sources = e.cuda_sources(sql).unwrap();
        let kernel = sources.into_iter().map(|(_, s)| s).find(|s| s.contains("Scan t")).expect("the scan of t");
        kernel[gpusql_codegen_prelude_len(&kernel)..].to_string()
    };
    let strings = kernel_of(&mut e, "SELECT a, b, k, sum(n) FROM t GROUP BY a, b, k");
    assert!(strings.contains("gc_gid_"), "{strings}");
    assert_eq!(strings.matches("hash_str(").count(), 2, "{strings}");
    assert_eq!(strings.matches("uint64_t h_ = ").count(), 1, "{strings}");
    // Integer keys hash again on the miss path (measured faster: SSB Q3.1).
    let ints = kernel_of(&mut e, "SELECT k, n, count(*) FROM t GROUP BY k, n");
    assert!(ints.contains("gc_gid_"), "{ints}");
    assert_eq!(ints.matches("uint64_t h_ = ").count(), 2, "{ints}");
}

/// A long IN list is a sorted set the kernel binary-searches in a buffer, not a comparison
/// per item in its source (10,000 of them made NVRTC take minutes): the source stays the
/// size of a short list's, whatever the list's length.
#[test]
fn long_in_lists_are_kernel_buffers_not_source() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.sql("CREATE TABLE t (k BIGINT, s VARCHAR)").unwrap();
    let ints: Vec<String> = (0..10_000).map(|i| (i * 7).to_string()).collect();
    let strings: Vec<String> = (0..10_000).map(|i| format!("'v{i}'")).collect();
    let sql = format!("SELECT count(*) FROM t WHERE k IN ({}) AND s NOT IN ({})", ints.join(", "), strings.join(", "));
    let sources = e.cuda_sources(&sql).unwrap();
    let kernel = sources.iter().map(|(_, s)| s).find(|s| s.contains("Scan t")).expect("the scan of t");
    let body = &kernel[gpusql_codegen_prelude_len(kernel)..];
    assert!(body.len() < 20_000, "{} bytes of kernel source:\n{}", body.len(), &body[..body.len().min(4000)]);
    assert!(
        body.contains("in_sorted(inset0_values, inset0_len, ")
            && body.contains("in_sorted_str(inset1_offsets, inset1_bytes, inset1_len, "),
        "{body}"
    );
    // EXPLAIN names a few values and the count.
    let text = match &e.execute(&format!("EXPLAIN {sql}")).unwrap()[0] {
        gpusql::Output::Explain(t) => t.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("k#0 IN (0, 7, 14, … 10000 distinct values)"), "{text}");
}

/// Where the generated part of a module starts (after the shared prelude).
fn gpusql_codegen_prelude_len(src: &str) -> usize {
    src.find("// ======== Pipeline").unwrap_or(0)
}

/// An aggregation the plan holds several times is run once and its groups read by each
/// use: the finest level of a ROLLUP (every level combines its partial states) and a CTE
/// read twice each scan lineitem / orders once.
#[test]
fn equal_aggregations_are_run_once() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_tpch(0.01).unwrap();
    let mut physical = |sql: &str| match &e.execute(&format!("EXPLAIN {sql}")).unwrap()[0] {
        gpusql::Output::Explain(t) => t[t.find("Physical plan:").expect("a physical plan")..].to_string(),
        other => panic!("{other:?}"),
    };
    let rollup = physical(
        "SELECT l_returnflag, l_linestatus, sum(l_quantity), count(*) FROM lineitem \
         GROUP BY ROLLUP (l_returnflag, l_linestatus)",
    );
    assert_eq!(rollup.matches("Scan lineitem").count(), 1, "{rollup}");
    assert_eq!(rollup.matches("Scan intermediate #0 ").count(), 3, "{rollup}");
    let cte = physical(
        "WITH t AS (SELECT o_custkey, count(*) n FROM orders GROUP BY o_custkey) \
         SELECT count(*) FROM t a JOIN t b ON a.o_custkey = b.o_custkey + 1",
    );
    assert_eq!(cte.matches("Scan orders").count(), 1, "{cte}");
}
