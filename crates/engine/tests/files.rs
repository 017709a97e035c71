//! Files as tables through the API: registering files, opening a folder as a database,
//! row-group pruning as EXPLAIN shows it, compressed CSV, the memory check, and that
//! tables over files are read-only. (The SQL
//! spellings and their error cases are in sql-tests/files.slt and files_errors.slt.)

use arrow::array::Int64Array;
use gpusql::{BackendChoice, Engine, IfExists};

fn engine() -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.load_tpch(0.01).unwrap();
    e
}

fn count(e: &mut Engine, sql: &str) -> i64 {
    let b = e.sql(sql).unwrap_or_else(|err| panic!("{sql}: {err}"));
    b[0].column(0).as_any().downcast_ref::<Int64Array>().expect("a count").value(0)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gpusql-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Three files of disjoint l_shipdate ranges, one row group each: a filter on the date
/// reads only the groups whose min/max can match, and says so.
#[test]
fn row_groups_outside_a_filter_are_skipped() {
    let mut e = engine();
    let d = temp_dir("prune");
    let p = d.display();
    for (name, cond) in [
        ("a", "l_shipdate < date '1994-01-01'"),
        ("b", "l_shipdate >= date '1994-01-01' AND l_shipdate < date '1996-01-01'"),
        ("c", "l_shipdate >= date '1996-01-01'"),
    ] {
        e.sql(&format!("COPY (SELECT l_orderkey, l_shipdate FROM lineitem WHERE {cond}) TO '{p}/{name}.parquet'"))
            .unwrap();
    }
    let q = format!("SELECT count(*) FROM read_parquet('{p}/*.parquet') WHERE l_shipdate >= date '1997-01-01'");
    let plan = e.execute(&format!("EXPLAIN {q}")).unwrap();
    let text = match &plan[0] {
        gpusql::Output::Explain(t) => t.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("row groups: 1 of 3 read (2 skipped by min/max statistics)"), "{text}");
    assert_eq!(count(&mut e, &q), count(&mut e, "SELECT count(*) FROM lineitem WHERE l_shipdate >= date '1997-01-01'"));
    // Nothing can match: no row group is read, and the answer is still right.
    let none = format!("SELECT count(*) FROM read_parquet('{p}/*.parquet') WHERE l_shipdate < date '1980-01-01'");
    assert_eq!(count(&mut e, &none), 0);
}

#[test]
fn register_files_and_open_a_folder() {
    let mut e = engine();
    let d = temp_dir("folder");
    let p = d.display();
    e.sql(&format!("COPY orders TO '{p}/orders.parquet'")).unwrap();
    e.sql(&format!("COPY (SELECT * FROM nation) TO '{p}/nation.csv'")).unwrap();
    std::fs::create_dir_all(d.join("parts")).unwrap();
    e.sql(&format!("COPY (SELECT * FROM region WHERE r_regionkey < 2) TO '{p}/parts/a.parquet'")).unwrap();
    e.sql(&format!("COPY (SELECT * FROM region WHERE r_regionkey >= 2) TO '{p}/parts/b.parquet'")).unwrap();
    std::fs::write(d.join("broken.parquet"), b"PAR1 this is not parquet").unwrap();
    // A zstd-compressed CSV beside them.
    let csv = std::fs::read(d.join("nation.csv")).unwrap();
    std::fs::write(d.join("nation_z.csv.zst"), zstd::encode_all(&csv[..], 3).unwrap()).unwrap();

    let mut db = Engine::new(BackendChoice::Cpu).unwrap();
    db.sql("CREATE TABLE orders (x INTEGER)").unwrap();
    // A table of the folder's names exists: nothing opens, the error names it.
    let err = db.open_directory(&d).unwrap_err().to_string();
    assert!(err.contains("table 'orders' already exists"), "{err}");
    assert!(db.tables().get("nation").is_none());
    let opened = db.open_directory_with(&d, IfExists::Replace).unwrap();
    assert_eq!(opened.tables, ["nation", "nation_z", "orders", "parts"]);
    assert!(
        opened.errors.iter().any(|m| m.contains("broken.parquet") && m.contains("not a readable Parquet file")),
        "{:?}",
        opened.errors
    );
    assert_eq!(count(&mut db, "SELECT count(*) FROM nation"), 25);
    assert_eq!(count(&mut db, "SELECT count(*) FROM nation_z WHERE n_regionkey = 1"), 5);
    assert_eq!(count(&mut db, "SELECT count(*) FROM parts"), 5);
    assert_eq!(count(&mut db, "SELECT count(*) FROM orders"), 15000, "replaced");

    db.register_parquet("o", &format!("{p}/orders.parquet")).unwrap();
    db.register_csv("n", &format!("{p}/nation.csv")).unwrap();
    assert_eq!(count(&mut db, "SELECT count(*) FROM o JOIN n ON o_custkey % 25 = n_nationkey"), 15000);
    let err = db.register_csv("o", &format!("{p}/nation.csv")).unwrap_err().to_string();
    assert_eq!(err, "table 'o' already exists");
    let before = count(&mut db, "SELECT count(*) FROM o");
    let broken = gpusql::FileScan::new(gpusql::FileFormat::Parquet, vec![format!("{p}/broken.parquet")]);
    assert!(db.register_files("o", &broken, IfExists::Replace).is_err());
    assert_eq!(count(&mut db, "SELECT count(*) FROM o"), before, "a failed registration changes nothing");
    // Tables over files are read-only; the message says how to change a copy.
    // (A CSV file is read whole into memory when registered: that table can be changed.)
    for change in ["DELETE FROM o WHERE o_orderkey < 10", "UPDATE o SET o_comment = 'x'"] {
        let err = db.sql(change).unwrap_err().to_string();
        assert!(err.contains("is read-only") && err.contains("CREATE TABLE"), "{err}");
    }
    assert_eq!(count(&mut db, "SELECT count(*) FROM o"), before);
    db.sql("CREATE TABLE o2 AS SELECT * FROM o").unwrap();
    db.sql("DELETE FROM o2 WHERE o_orderkey < 100").unwrap();
    assert!(count(&mut db, "SELECT count(*) FROM o2") < before);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn decoding_more_than_memory_is_an_error() {
    let err = gpusql_storage::host::check_memory(u64::MAX / 2, "big.parquet").unwrap_err().to_string();
    assert!(err.contains("big.parquet: decoding needs about") && err.contains("GiB are available"), "{err}");
    assert!(gpusql_storage::host::check_memory(1 << 20, "small").is_ok());
}

#[test]
fn a_file_changed_on_disk_is_read_again() {
    let mut e = engine();
    let d = temp_dir("changed");
    let f = d.join("t.parquet");
    e.sql(&format!("COPY (SELECT * FROM nation) TO '{}'", f.display())).unwrap();
    let q = format!("SELECT count(*) FROM '{}'", f.display());
    assert_eq!(count(&mut e, &q), 25);
    std::thread::sleep(std::time::Duration::from_millis(20));
    e.sql(&format!("COPY (SELECT * FROM nation WHERE n_nationkey < 3) TO '{}'", f.display())).unwrap();
    assert_eq!(count(&mut e, &q), 3);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Loading a table under a taken name is an error on every path (TPC-H and SSB share
/// customer, part and supplier: SSB's used to replace TPC-H's silently), unless the
/// caller asks to replace.
#[test]
fn loading_a_taken_name_is_an_error_unless_replacing() {
    let mut e = engine();
    let err = e.load_ssb(0.01).unwrap_err().to_string();
    assert_eq!(err, "tables 'customer', 'supplier' and 'part' already exist");
    assert!(e.tables().get("lineorder").is_none(), "nothing was loaded");
    assert_eq!(count(&mut e, "SELECT count(*) FROM customer"), 1500);
    assert!(e.load_tpch(0.01).unwrap_err().to_string().contains("'nation'"));
    let batches = e.sql("SELECT n_nationkey FROM nation").unwrap();
    assert_eq!(e.register_batches("region", &batches).unwrap_err().to_string(), "table 'region' already exists");
    e.register_batches_with("region", &batches, IfExists::Replace).unwrap();
    assert_eq!(count(&mut e, "SELECT count(*) FROM region"), 25);
    e.load_ssb_with_progress(0.01, IfExists::Replace, &|_, _| {}).unwrap();
    assert_eq!(count(&mut e, "SELECT count(*) FROM customer"), 300);
    // The hidden one-row table of SELECT without FROM is no table of the catalog's.
    assert!(!e.tables().names().iter().any(|n| n.starts_with("__")));
    assert!(e.register_batches(gpusql_common_one_row(), &batches).unwrap_err().to_string().contains("reserved"));
}

fn gpusql_common_one_row() -> &'static str {
    "__one_row"
}
