//! The whole message of a GPU error that lacks the failing row's text.
//!
//! A kernel reports a failed strptime or text cast by an error code: it knows that a row
//! failed and how, but the host never sees the row's text. DuckDB's message names the text
//! (and strptime's format): `Could not parse string "x" according to format specifier
//! "%d/%m/%Y"`. So after such an error the CPU backend runs the same plan, for at most
//! `CPU_RUN_LIMIT`, and where it fails the same way its message is the query's error;
//! otherwise (too slow, cancelled, or another error first) the GPU's shorter message is.

use gpusql_common::strptime::Failure;
use gpusql_common::{CancelToken, Error};
use gpusql_plan::PhysicalPlan;
use gpusql_storage::TableStore;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the CPU backend may look for the message before the GPU's is given.
const CPU_RUN_LIMIT: Duration = Duration::from_secs(5);

/// Whether `e` is one of the GPU's messages without the row's text (capacity.rs's
/// `error_of`: strptime's failures and text casts' conversion errors).
pub(crate) fn lacks_row_text(e: &Error) -> bool {
    let Error::Execution(m) = e.kind() else { return false };
    let short = |e: Error| matches!(e, Error::Execution(s) if s == *m);
    short(Failure::NoMatch.error())
        || short(Failure::DateRange.error())
        || m.strip_prefix("Could not convert string to ").is_some_and(|ty| !ty.contains('\''))
}

/// The CPU backend's error for `plan` where it is `gpu_error` with the row's text, else
/// `gpu_error`. The engine's own cancel flag (Ctrl-C) also ends the CPU run.
pub(crate) fn with_row_text(plan: &PhysicalPlan, tables: &TableStore, cancel: &CancelToken, gpu_error: Error) -> Error {
    let local = CancelToken::new();
    let done = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if cancel.is_cancelled() || start.elapsed() > CPU_RUN_LIMIT {
                    local.cancel();
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let run = gpusql_exec::cpu::execute_cancellable(plan, tables, &local);
        done.store(true, Ordering::Relaxed);
        run
    });
    match run {
        Err(e) if same_failure(&gpu_error, &e) => e,
        _ => gpu_error,
    }
}

/// Both execution errors and their messages' first three words alike ("Could not parse",
/// "Date out of", "Could not convert"): the same failure, one of them with the text.
fn same_failure(gpu: &Error, cpu: &Error) -> bool {
    match (gpu.kind(), cpu.kind()) {
        (Error::Execution(a), Error::Execution(b)) => a.split(' ').take(3).eq(b.split(' ').take(3)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Engine};

    #[test]
    fn the_gpus_short_messages_are_recognised() {
        assert!(lacks_row_text(&Failure::NoMatch.error()));
        assert!(lacks_row_text(&Failure::DateRange.error()));
        let ty = gpusql_common::DataType::Int32;
        assert!(lacks_row_text(&gpusql_common::text_cast::conversion_error(&ty, None)));
        assert!(!lacks_row_text(&gpusql_common::text_cast::conversion_error(&ty, Some(b"x"))));
        assert!(!lacks_row_text(&Error::exec("division by zero")));
    }

    #[test]
    fn the_cpu_run_gives_the_message_with_the_text() {
        let mut e = Engine::new(BackendChoice::Cpu).unwrap();
        e.sql("CREATE TABLE t AS SELECT * FROM (VALUES ('2020-01-02'), ('x')) v(s)").unwrap();
        let plan = e.plan("SELECT strptime(s, '%Y-%m-%d') FROM t").unwrap();
        let err = with_row_text(&plan, &e.tables, &e.cancel, Failure::NoMatch.error());
        let text = err.to_string();
        let whole = "execution error: Could not parse string \"x\" according to format specifier \"%Y-%m-%d\"";
        assert!(text.starts_with(whole), "{text}");
        // Another failure first (here none: the plan answers) leaves the GPU's message.
        let fine = e.plan("SELECT strptime(s, '%Y-%m-%d') FROM t WHERE s <> 'x'").unwrap();
        assert_eq!(with_row_text(&fine, &e.tables, &e.cancel, Failure::NoMatch.error()), Failure::NoMatch.error());
        let cast = e.plan("SELECT CAST(s AS INTEGER) FROM t").unwrap();
        let short = gpusql_common::text_cast::conversion_error(&gpusql_common::DataType::Int32, None);
        assert!(with_row_text(&cast, &e.tables, &e.cancel, short).to_string().contains("'2020-01-02'"));
    }
}
