//! Ctrl-C in the interactive shell. At the prompt the line editor reads it as a key (it
//! clears the line); while a statement runs, the first Ctrl-C cancels it through the
//! engine's cancel handle (the statement ends with "query cancelled" and the session
//! goes on), and a second one while the same thing still runs quits gpusql (exit status
//! 130), for work that does not look at the flag (a data load, a long GPU kernel).
//!
//! `-c`, `-f` and piped input keep the default: Ctrl-C ends the process.

use gpusql::CancelToken;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// What a Ctrl-C does, given what runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing runs (the prompt is the editor's business).
    Ignore,
    /// The first press during a statement: it has been asked to stop.
    Cancel,
    /// The first press during work that cannot be cancelled: say that a second quits.
    Warn,
    /// A second press during the same work: quit.
    Exit,
}

pub struct Interrupt {
    token: CancelToken,
    busy: AtomicBool,
    cancellable: AtomicBool,
    presses: AtomicU32,
}

/// While alive, Ctrl-C acts on the work it was made for ([`Interrupt::begin`]).
pub struct Busy<'a>(&'a Interrupt);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::SeqCst);
    }
}

impl Interrupt {
    pub fn new(token: CancelToken) -> Arc<Interrupt> {
        Arc::new(Interrupt {
            token,
            busy: AtomicBool::new(false),
            cancellable: AtomicBool::new(false),
            presses: AtomicU32::new(0),
        })
    }

    /// Makes Ctrl-C (SIGINT) call [`Interrupt::press`] for the rest of the process.
    pub fn install(self: &Arc<Self>) -> Result<(), String> {
        let me = self.clone();
        ctrlc::set_handler(move || match me.press() {
            Action::Exit => {
                eprintln!("\nInterrupted twice: quitting.");
                gpusql::stop_background_compiles();
                std::process::exit(130);
            }
            Action::Warn => eprint!("\r\x1b[K(this cannot be cancelled; press Ctrl-C again to quit gpusql)\n"),
            Action::Cancel | Action::Ignore => {}
        })
        .map_err(|e| format!("Ctrl-C will end gpusql ({e})"))
    }

    /// Work starts: a statement (`cancellable`: the engine looks at the flag) or other
    /// work such as a data load.
    pub fn begin(&self, cancellable: bool) -> Busy<'_> {
        self.presses.store(0, Ordering::SeqCst);
        self.cancellable.store(cancellable, Ordering::SeqCst);
        self.busy.store(true, Ordering::SeqCst);
        Busy(self)
    }

    /// A Ctrl-C: what it does now.
    pub fn press(&self) -> Action {
        if !self.busy.load(Ordering::SeqCst) {
            return Action::Ignore;
        }
        if self.presses.fetch_add(1, Ordering::SeqCst) > 0 {
            return Action::Exit;
        }
        if self.cancellable.load(Ordering::SeqCst) {
            self.token.cancel();
            Action::Cancel
        } else {
            Action::Warn
        }
    }

    /// What the progress line should say about Ctrl-C presses so far.
    pub fn state(&self) -> PressState {
        match (self.presses.load(Ordering::SeqCst), self.cancellable.load(Ordering::SeqCst)) {
            (0, true) => PressState::Cancellable,
            (0, false) => PressState::NotCancellable,
            (_, true) => PressState::Cancelling,
            (_, false) => PressState::Warned,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PressState {
    Cancellable,
    NotCancellable,
    Cancelling,
    Warned,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_press_cancels_and_the_second_quits() {
        let token = CancelToken::new();
        let i = Interrupt::new(token.clone());
        assert_eq!(i.press(), Action::Ignore);
        assert!(!token.is_cancelled());
        {
            let _busy = i.begin(true);
            assert_eq!(i.state(), PressState::Cancellable);
            assert_eq!(i.press(), Action::Cancel);
            assert!(token.is_cancelled());
            assert_eq!(i.state(), PressState::Cancelling);
            assert_eq!(i.press(), Action::Exit);
        }
        assert_eq!(i.press(), Action::Ignore);
        // The next statement starts afresh.
        token.reset();
        let _busy = i.begin(true);
        assert_eq!(i.press(), Action::Cancel);
    }

    #[test]
    fn work_that_cannot_be_cancelled_warns_first() {
        let token = CancelToken::new();
        let i = Interrupt::new(token.clone());
        let _busy = i.begin(false);
        assert_eq!(i.press(), Action::Warn);
        assert!(!token.is_cancelled());
        assert_eq!(i.state(), PressState::Warned);
        assert_eq!(i.press(), Action::Exit);
    }
}
