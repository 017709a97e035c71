//! Cancelling a running statement from another thread (the shell's Ctrl-C).
//!
//! A [`CancelToken`] is a shared flag. The engine owns one (`Engine::cancel_handle`),
//! clears it when a statement starts, and both executors check it between stages and,
//! on the CPU, every [`CHECK_EVERY`] rows of a pipeline; a set flag ends the statement
//! with [`Error::Cancelled`] and leaves the session as it was before the statement.

use crate::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Rows (or joined rows) a CPU loop runs between two looks at the flag.
pub const CHECK_EVERY: u32 = 1024;

/// A shared cancel flag; clones share it.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks the statement running now to stop (safe from any thread).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Clears a request (the engine does this when a statement starts).
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }

    /// `Err(Error::Cancelled)` once cancelled.
    pub fn check(&self) -> Result<(), Error> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Looks at a token every [`CHECK_EVERY`] calls of [`Ticker::tick`] (for row loops,
/// where one atomic load per row would be measurable).
#[derive(Debug)]
pub struct Ticker<'a> {
    token: &'a CancelToken,
    count: std::cell::Cell<u32>,
}

impl<'a> Ticker<'a> {
    pub fn new(token: &'a CancelToken) -> Ticker<'a> {
        Ticker { token, count: std::cell::Cell::new(0) }
    }

    pub fn tick(&self) -> Result<(), Error> {
        let n = self.count.get().wrapping_add(1);
        self.count.set(n);
        if n.is_multiple_of(CHECK_EVERY) {
            self.token.check()
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let t = CancelToken::new();
        let u = t.clone();
        assert!(t.check().is_ok());
        u.cancel();
        assert_eq!(t.check(), Err(Error::Cancelled));
        assert_eq!(Error::Cancelled.to_string(), "query cancelled");
        t.reset();
        assert!(!u.is_cancelled());
    }

    #[test]
    fn a_ticker_looks_every_so_often() {
        let t = CancelToken::new();
        let ticker = Ticker::new(&t);
        t.cancel();
        let first_error = (1..=CHECK_EVERY * 2).find(|_| ticker.tick().is_err());
        assert_eq!(first_error, Some(CHECK_EVERY));
    }
}
