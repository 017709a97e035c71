//! The CPU reference backend's time and memory stay bounded where a naive row-at-a-time
//! evaluation blew up: long IN lists (a set searched per row, not a scan of the list),
//! joins an aggregate or a LIMIT reduces (rows streamed into the sink, not materialized).
//! The bounds are generous (a loaded machine); the old paths took minutes or gigabytes.

use arrow::array::{Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use gpusql::{BackendChoice, Engine};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(15);

/// Table `t` of `rows` rows: k = i % keys, v = i, s = 's<i>'.
fn engine(rows: i64, keys: i64) -> Engine {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let k = Int64Array::from_iter_values((0..rows).map(|i| i % keys));
    let v = Int64Array::from_iter_values(0..rows);
    let s = StringArray::from_iter_values((0..rows).map(|i| format!("s{i}")));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(k), Arc::new(v), Arc::new(s)]).unwrap();
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.register_batches("t", &[batch]).unwrap();
    e
}

fn ints(e: &mut Engine, sql: &str) -> Vec<Vec<i64>> {
    let batches = e.sql(sql).unwrap_or_else(|err| panic!("{}: {err}", &sql[..sql.len().min(200)]));
    let mut rows = vec![];
    for b in batches {
        for r in 0..b.num_rows() {
            rows.push(
                (0..b.num_columns())
                    .map(|c| b.column(c).as_any().downcast_ref::<Int64Array>().expect("BIGINT").value(r))
                    .collect(),
            );
        }
    }
    rows
}

/// The process's peak resident memory (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// 100,000 rows against 50,000 integers and 5,000 strings: ~5e9 comparisons as a scan
/// of the list per row (minutes), a binary search per row as a set.
#[test]
fn long_in_lists_are_searched_not_scanned() {
    let mut e = engine(100_000, 1000);
    let list: Vec<String> = (0..50_000).map(|i| (i * 2).to_string()).collect();
    let start = Instant::now();
    assert_eq!(ints(&mut e, &format!("SELECT count(*) FROM t WHERE v IN ({})", list.join(", "))), vec![vec![50_000]]);
    assert_eq!(
        ints(&mut e, &format!("SELECT count(*) FROM t WHERE v NOT IN ({}, NULL)", list.join(", "))),
        vec![vec![0]]
    );
    let strings: Vec<String> = (0..5_000).map(|i| format!("'s{}'", i * 3)).collect();
    assert_eq!(
        ints(&mut e, &format!("SELECT count(*) FROM t WHERE s NOT IN ({})", strings.join(", "))),
        vec![vec![95_000]]
    );
    assert!(start.elapsed() < BOUND, "took {:?}", start.elapsed());
}

/// 12,000 rows on 4 keys join into 36 million matches: counted, grouped and limited
/// without holding them (materialized they took ~4 GB).
#[test]
fn joins_stream_into_their_sink() {
    let mut e = engine(12_000, 4);
    let start = Instant::now();
    assert_eq!(ints(&mut e, "SELECT count(*) FROM t a JOIN t b ON a.k = b.k"), vec![vec![36_000_000]]);
    assert_eq!(
        ints(
            &mut e,
            "SELECT a.k, count(*), CAST(sum(a.v) AS BIGINT) FROM t a JOIN t b ON a.k = b.k GROUP BY a.k ORDER BY a.k"
        ),
        (0..4).map(|k| vec![k, 9_000_000, 3000 * (0..3000).map(|i| i * 4 + k).sum::<i64>()]).collect::<Vec<_>>()
    );
    assert_eq!(ints(&mut e, "SELECT a.v, b.v FROM t a JOIN t b ON a.k = b.k LIMIT 5").len(), 5);
    assert_eq!(
        ints(&mut e, "SELECT count(*) FROM (SELECT a.v FROM t a JOIN t b ON a.k = b.k LIMIT 7) x"),
        vec![vec![7]]
    );
    assert!(start.elapsed() < BOUND, "took {:?}", start.elapsed());
    if let Some(peak) = peak_rss() {
        assert!(peak < 1 << 30, "peak resident memory {} MiB", peak >> 20);
    }
}

/// A top-N over a join keeps only its N smallest rows while the join streams; ties keep
/// the rows that came first, as a sort of all rows would.
#[test]
fn top_n_over_a_join_keeps_the_first_n_in_order() {
    let mut e = engine(1_000, 4);
    let got = ints(&mut e, "SELECT a.v, b.v FROM t a JOIN t b ON a.k = b.k ORDER BY a.v + b.v DESC, a.v LIMIT 2000");
    let mut all: Vec<Vec<i64>> =
        (0..1000).flat_map(|a| (0..1000).filter(move |b| a % 4 == b % 4).map(move |b| vec![a, b])).collect();
    all.sort_by_key(|r| (-(r[0] + r[1]), r[0]));
    assert_eq!(got.len(), 2000);
    // (Rows of equal keys in any order.)
    let key = |r: &Vec<i64>| (-(r[0] + r[1]), r[0]);
    assert_eq!(got.iter().map(key).collect::<Vec<_>>(), all[..2000].iter().map(key).collect::<Vec<_>>());
    let mut g = got.clone();
    let mut w = all[..2000].to_vec();
    g.sort();
    w.sort();
    assert_eq!(g, w);
}

/// `SHOW ALL`: one row per setting, with its value, the values it takes, its environment
/// variable and its doc; `SET` changes the value it shows.
#[test]
fn show_all_lists_every_setting_with_its_doc() {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    e.sql("SET multi_match = per-lane").unwrap();
    let batches = e.sql("SHOW ALL").unwrap();
    let b = &batches[0];
    let col = |i: usize| b.column(i).as_any().downcast_ref::<StringArray>().unwrap().clone();
    let (names, values, envs, docs) = (col(0), col(1), col(3), col(4));
    assert_eq!(b.num_rows(), gpusql_plan::SessionConfig::SETTINGS.len());
    for i in 0..b.num_rows() {
        assert!(!docs.value(i).is_empty(), "{}", names.value(i));
        assert_eq!(envs.value(i), format!("GPUSQL_{}", names.value(i).to_ascii_uppercase()));
    }
    let mm = (0..b.num_rows()).find(|&i| names.value(i) == "multi_match").unwrap();
    assert_eq!(values.value(mm), "per-lane");
    assert!(names.iter().flatten().any(|n| n == "dump_kernels") && names.iter().flatten().any(|n| n == "lane_refill"));
}
