//! Cancelling a running statement from another thread (the shell's Ctrl-C): the statement
//! ends with `Error::Cancelled`, changes nothing, and the engine runs the next one.

use arrow::array::{Array, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use gpusql::{BackendChoice, CancelToken, Engine, Error};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows of `t`: the join below has ROWS² pairs, most of a minute on the CPU backend.
const ROWS: i64 = 20_000;
/// A join of every row with every row (`k` is 0 throughout) whose filter nothing passes:
/// it runs until every pair has been looked at.
const LONG: &str = "select count(*) from t a join t b on a.k = b.k where a.x + b.x < 0";

fn engine() -> Engine {
    let mut e = Engine::new(BackendChoice::Cpu).unwrap();
    let schema =
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false), Field::new("k", DataType::Int64, false)]));
    let columns: Vec<arrow::array::ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..ROWS)),
        Arc::new(Int64Array::from_iter_values((0..ROWS).map(|_| 0))),
    ];
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    e.register_batches("t", &[batch]).unwrap();
    e
}

/// Runs `f` while another thread cancels through `token` every 20 ms from `after` on
/// (again and again, so a request that came before the statement cleared the flag
/// still lands); returns what `f` returned and how long it ran after the first request.
fn cancelled_after<R>(token: CancelToken, after: Duration, f: impl FnOnce() -> R) -> (R, Duration) {
    let done = Arc::new(AtomicBool::new(false));
    let first = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let canceller = {
        let (done, first) = (done.clone(), first.clone());
        std::thread::spawn(move || {
            std::thread::sleep(after);
            while !done.load(Ordering::SeqCst) {
                first.lock().unwrap().get_or_insert_with(Instant::now);
                token.cancel();
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let r = f();
    let end = Instant::now();
    done.store(true, Ordering::SeqCst);
    canceller.join().unwrap();
    let first = first.lock().unwrap().unwrap_or(end);
    (r, end.saturating_duration_since(first))
}

fn count(e: &mut Engine, sql: &str) -> i64 {
    let b = e.sql(sql).unwrap();
    b[0].column(0).as_any().downcast_ref::<Int64Array>().unwrap().value(0)
}

#[test]
fn a_cancelled_query_stops_and_the_next_one_runs() {
    let mut e = engine();
    let token = e.cancel_handle();
    let (r, late) = cancelled_after(token, Duration::from_millis(300), || e.sql(LONG));
    let err = r.expect_err("the query ran to its end although it was cancelled");
    assert_eq!(err.kind(), &Error::Cancelled, "{err}");
    assert_eq!(err.to_string(), "query cancelled");
    assert!(late < Duration::from_secs(5), "the query stopped {late:?} after the cancel");
    // The session goes on: the same engine, its tables, the next statement.
    assert_eq!(count(&mut e, "select count(*) from t where x < 10"), 10);
    let b = e.sql("select x from t order by x desc limit 1").unwrap();
    assert_eq!(b[0].column(0).as_any().downcast_ref::<Int64Array>().unwrap().value(0), ROWS - 1);
}

#[test]
fn a_cancelled_create_table_as_creates_nothing() {
    let mut e = engine();
    let token = e.cancel_handle();
    let sql = "create table u as select a.x from t a join t b on a.k = b.k where a.x + b.x < 0";
    let (r, _) = cancelled_after(token, Duration::from_millis(300), || e.execute(sql));
    assert_eq!(r.unwrap_err().kind(), &Error::Cancelled);
    let err = e.sql("select count(*) from u").unwrap_err();
    assert!(err.to_string().contains("unknown table"), "{err}");
    e.sql("create table u as select x from t where x < 5").unwrap();
    assert_eq!(count(&mut e, "select count(*) from u"), 5);
}

/// A request made while no statement runs is forgotten: the next statement runs.
#[test]
fn a_cancel_between_statements_is_forgotten() {
    let mut e = engine();
    e.cancel_handle().cancel();
    assert_eq!(count(&mut e, "select count(*) from t"), ROWS);
}

/// Joins without an equality (a band join, a cross join) look at the flag as they pair
/// rows, as the hash join does.
#[test]
fn joins_without_an_equality_stop_when_cancelled() {
    let mut e = engine();
    e.execute("set max_cross_join_pairs = 10000000000").unwrap();
    for sql in [
        "select count(*) from t a join t b on a.x < b.x where a.x + b.x < 0",
        "select count(*) from t a left join t b on a.x <= b.x and b.x < a.x + 1000000 where a.x + b.x < 0",
        "select count(*) from t a, t b where a.x + b.x < 0",
    ] {
        let token = e.cancel_handle();
        let (r, late) = cancelled_after(token, Duration::from_millis(300), || e.sql(sql));
        let err = r.expect_err("the query ran to its end although it was cancelled");
        assert_eq!(err.kind(), &Error::Cancelled, "{sql}: {err}");
        assert!(late < Duration::from_secs(5), "{sql}: stopped {late:?} after the cancel");
    }
    assert_eq!(count(&mut e, "select count(*) from t where x < 10"), 10);
}
