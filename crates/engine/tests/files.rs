//! Files as tables through the API: registering files, opening a folder as a database,
//! row-group pruning as EXPLAIN shows it, compressed CSV, and the memory check. (The SQL
//! spellings and their error cases are in sql-tests/files.slt and files_errors.slt.)

use arrow::array::Int64Array;
use gpusql::{BackendChoice, Engine};

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
    for (name, cond) in [("a", "l_shipdate < date '1994-01-01'"), ("b", "l_shipdate >= date '1994-01-01' AND l_shipdate < date '1996-01-01'"), ("c", "l_shipdate >= date '1996-01-01'")] {
        e.sql(&format!("COPY (SELECT l_orderkey, l_shipdate FROM lineitem WHERE {cond}) TO '{p}/{name}.parquet'")).unwrap();
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
    let opened = db.open_directory(&d).unwrap();
    assert_eq!(opened.tables, ["nation", "nation_z", "parts"]);
    assert!(opened.errors.iter().any(|m| m.contains("broken.parquet") && m.contains("not a readable Parquet file")), "{:?}", opened.errors);
    assert!(opened.errors.iter().any(|m| m.contains("a table named 'orders' already exists")), "{:?}", opened.errors);
    assert_eq!(count(&mut db, "SELECT count(*) FROM nation"), 25);
    assert_eq!(count(&mut db, "SELECT count(*) FROM nation_z WHERE n_regionkey = 1"), 5);
    assert_eq!(count(&mut db, "SELECT count(*) FROM parts"), 5);
    assert_eq!(count(&mut db, "SELECT count(*) FROM orders"), 0, "the existing table stays");

    db.register_parquet("o", &format!("{p}/orders.parquet")).unwrap();
    db.register_csv("n", &format!("{p}/nation.csv")).unwrap();
    assert_eq!(count(&mut db, "SELECT count(*) FROM o JOIN n ON o_custkey % 25 = n_nationkey"), 15000);
    let before = count(&mut db, "SELECT count(*) FROM o");
    assert!(db.register_parquet("o", &format!("{p}/broken.parquet")).is_err());
    assert_eq!(count(&mut db, "SELECT count(*) FROM o"), before, "a failed registration changes nothing");
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
