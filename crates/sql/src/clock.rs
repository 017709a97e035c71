//! current_date / today() and localtimestamp: the statement's time, read once per
//! statement (the first call while binding it; later calls in the same statement get the
//! same value), in the local time zone as DuckDB's (its `TimeZone` setting defaults to
//! the system's). A statement that read it must not be kept as a plan for its text or
//! shape: `read_by_statement` tells the engine so.

use chrono::{DateTime, Local};
use std::cell::Cell;

thread_local! {
    /// The time of the statement being bound on this thread, once read.
    static NOW: Cell<Option<DateTime<Local>>> = const { Cell::new(None) };
}

/// Forgets the last statement's time (binding of a statement starts).
pub fn start_statement() {
    NOW.with(|n| n.set(None));
}

/// Whether the statement bound last on this thread read the clock.
pub fn read_by_statement() -> bool {
    NOW.with(|n| n.get().is_some())
}

fn now() -> DateTime<Local> {
    NOW.with(|n| {
        let t = n.get().unwrap_or_else(Local::now);
        n.set(Some(t));
        t
    })
}

/// Today's day number (days since 1970-01-01) in the local time zone.
pub fn current_date() -> i32 {
    let d = now().date_naive();
    gpusql_common::date::days_from_civil(
        chrono::Datelike::year(&d) as i64,
        chrono::Datelike::month(&d),
        chrono::Datelike::day(&d),
    ) as i32
}

/// The local time as microseconds since 1970-01-01 00:00 (a TIMESTAMP without zone).
pub fn local_timestamp() -> i64 {
    now().naive_local().and_utc().timestamp_micros()
}
