//! The thread statements run on: every pass recurses over expressions, which may nest
//! `gpusql_sql::depth::MAX_EXPRESSION_DEPTH` deep (and parentheses twice that), more than
//! the 2 MiB of a thread a library user may call from (crates/engine/tests/depth.rs runs
//! 1,000 levels from one). Only touched pages of the stack are committed.
//!
//! The engine keeps one such thread for its life: creating and joining a thread of this
//! stack per statement, and faulting in the pages it touched again each time, took
//! 80-170 µs a statement (2-core host), as much as a small query's kernels.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};

use gpusql_common::{Error, Result};

/// Stack of a statement thread.
pub(crate) const STATEMENT_STACK_BYTES: usize = 256 << 20;

type Job = Box<dyn FnOnce() + Send + 'static>;

thread_local! {
    /// Set on statement threads: a statement that starts another runs it in place.
    static ON_STATEMENT_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// An engine's statement thread. A caller holds `jobs` while its statement runs; a second
/// caller of the same engine at once (through `&Engine` on another thread) gets a thread
/// of its own for that statement, as every statement did before.
pub(crate) struct StatementThread {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
}

impl StatementThread {
    pub(crate) fn new() -> StatementThread {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("gpusql-statement".into())
            .stack_size(STATEMENT_STACK_BYTES)
            .spawn(move || {
                ON_STATEMENT_THREAD.with(|f| f.set(true));
                // Ends when the engine (the sender) is dropped. A job never unwinds out
                // (`run` catches its panics), so every job received is run.
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        // Without the thread (the system refused one), every statement gets its own.
        StatementThread { jobs: Mutex::new(started.ok().map(|_| tx)) }
    }

    /// Runs `f` on a thread of [`STATEMENT_STACK_BYTES`] of stack and waits for it,
    /// passing panics on.
    pub(crate) fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        if ON_STATEMENT_THREAD.with(|f| f.get()) {
            return Ok(f());
        }
        let Ok(jobs) = self.jobs.try_lock() else { return run_on_new_thread(f) };
        let Some(sender) = jobs.as_ref() else { return run_on_new_thread(f) };
        let (done, result) = mpsc::sync_channel::<std::thread::Result<R>>(1);
        let job = move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            let _ = done.send(r);
        };
        let job: Box<dyn FnOnce() + Send + '_> = Box::new(job);
        // SAFETY: the job borrows from this frame ('_), and this frame waits below until
        // the job has run: the worker runs every job it receives, in order, and nothing in
        // a job unwinds past `catch_unwind`. `result.recv()` returns once the job has sent
        // its result, after `f` and all it captured were consumed; only `done` is dropped
        // after that, and it borrows nothing. A job that could not be sent is handed back
        // in the error and dropped here.
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
        if let Err(mpsc::SendError(job)) = sender.send(job) {
            drop(job);
            return Err(Error::exec("the statement thread has stopped"));
        }
        match result.recv() {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(panic)) => resume_unwind(panic),
            // Not reached: the worker runs each job it takes, and the job always sends.
            Err(_) => Err(Error::exec("the statement thread stopped during a statement")),
        }
    }
}

/// A thread of [`STATEMENT_STACK_BYTES`] for one call.
fn run_on_new_thread<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R> {
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new().name("gpusql-statement".into()).stack_size(STATEMENT_STACK_BYTES);
        let handle = thread.spawn_scoped(s, f).map_err(|e| Error::exec(format!("starting a statement thread: {e}")))?;
        handle.join().map_err(|p| resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_run_on_one_kept_thread_with_a_big_stack() {
        let t = StatementThread::new();
        let id = |_: ()| std::thread::current().id();
        let first = t.run(|| id(())).unwrap();
        assert_ne!(first, std::thread::current().id());
        assert_eq!(t.run(|| id(())).unwrap(), first, "the same thread again");
        // A borrowed, mutated local comes back changed.
        let mut v = vec![1];
        t.run(|| v.push(2)).unwrap();
        assert_eq!(v, [1, 2]);
        // Nested: runs in place instead of waiting for itself.
        assert_eq!(t.run(|| t.run(|| id(())).unwrap()).unwrap(), first);
    }

    #[test]
    fn a_panic_reaches_the_caller_and_the_thread_goes_on() {
        let t = StatementThread::new();
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| t.run(|| panic!("boom"))));
        assert!(r.is_err());
        assert_eq!(t.run(|| 7).unwrap(), 7);
    }

    #[test]
    fn a_second_caller_at_once_gets_a_thread_of_its_own() {
        let t = StatementThread::new();
        let (entered, go) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|s| {
            let kept = s.spawn(|| {
                t.run(|| {
                    entered.wait();
                    go.wait();
                    std::thread::current().id()
                })
                .unwrap()
            });
            entered.wait();
            let other = t.run(|| std::thread::current().id()).unwrap();
            go.wait();
            assert_ne!(kept.join().unwrap(), other);
        });
    }
}
