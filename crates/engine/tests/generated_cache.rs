//! Generated data sets kept on disk: the second load reads the first one's files and
//! gives the same tables and answers; a damaged file means generating again.

use gpusql::{BackendChoice, Engine};

fn engine(cache: &std::path::Path) -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.set_generated_data_cache(Some(cache.to_path_buf()));
    e
}

fn answer(e: &mut Engine, sql: &str) -> String {
    let batches = e.sql(sql).unwrap();
    arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string()
}

#[test]
fn a_kept_data_set_is_read_back_unchanged() {
    let root = std::env::temp_dir().join(format!("gpusql-generated-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let q = "SELECT l_returnflag, count(*), sum(l_extendedprice), min(l_comment) FROM lineitem GROUP BY 1 ORDER BY 1";
    let mut first = engine(&root);
    first.load_tpch(0.01).unwrap();
    let set = gpusql::generated_cache::set_dir(Some(&root), "tpch", 0.01).unwrap();
    assert!(set.join("lineitem.arrow").is_file(), "the data set was not kept");
    let mut second = engine(&root);
    second.load_tpch(0.01).unwrap();
    for t in gpusql_datagen::TPCH_TABLES {
        assert_eq!(first.tables().get(t).unwrap().rows, second.tables().get(t).unwrap().rows, "{t}");
    }
    assert_eq!(answer(&mut first, q), answer(&mut second, q));
    // A damaged file: generated again, same answer.
    std::fs::write(set.join("orders.arrow"), b"not arrow").unwrap();
    let mut third = engine(&root);
    third.load_tpch(0.01).unwrap();
    assert_eq!(
        answer(&mut first, "SELECT count(*), sum(o_totalprice) FROM orders"),
        answer(&mut third, "SELECT count(*), sum(o_totalprice) FROM orders")
    );
    // Beyond the largest kept scale factor, nothing is kept.
    assert!(gpusql::generated_cache::set_dir(Some(&root), "tpch", 10.0).is_none());
    let _ = std::fs::remove_dir_all(&root);
}
