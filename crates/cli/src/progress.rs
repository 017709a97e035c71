//! A one-line spinner on stderr with the elapsed time, for statements and loads that run
//! longer than a second; cleared when they end. Only where stderr is a terminal.
//!
//! The line is redrawn in place (`\r`, text, clear to the end of the line) with the
//! cursor left after the text, so what the terminal echoes meanwhile (`^C`, keys typed
//! ahead) lands on that line and is cleared with it. (indicatif pads its line to the
//! terminal's width so that such echoes land on the next line, which its clearing then
//! misses: the spinner stayed on the screen after a Ctrl-C.)

use crate::interrupt::{Interrupt, PressState};
use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long work runs before the line appears.
const DELAY: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Shows the line while alive (from [`DELAY`] on); dropping it clears the line.
pub struct Progress {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts timing `what` ("running", "opening data/"); `interrupt` says what Ctrl-C
    /// does (the line says so).
    pub fn start(what: &str, interrupt: Option<Arc<Interrupt>>) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { stop: None, thread: None };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let what = what.to_string();
        let thread = std::thread::Builder::new().name("gpusql-progress".into()).spawn(move || {
            let start = Instant::now();
            let width = terminal_width();
            let mut shown = false;
            let mut frame = 0;
            // Until the sender is dropped.
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                let state = interrupt.as_ref().map(|i| i.state());
                let pressed = matches!(state, Some(PressState::Cancelling | PressState::Warned));
                if !shown && start.elapsed() < DELAY && !pressed {
                    continue;
                }
                shown = true;
                frame = (frame + 1) % SPINNER.len();
                let text = format!("{} {}", SPINNER[frame], message(&what, start.elapsed(), state));
                let text: String = text.chars().take(width.saturating_sub(1)).collect();
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r{text}\x1b[K");
                let _ = err.flush();
            }
            if shown {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K");
                let _ = err.flush();
            }
        });
        Progress { stop: Some(stop), thread: thread.ok() }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Columns of the terminal on stderr (80 where unknown).
fn terminal_width() -> usize {
    let mut probe = comfy_table::Table::new();
    probe.use_stderr();
    probe.width().map_or(80, usize::from)
}

/// The line's text after the spinner.
fn message(what: &str, elapsed: Duration, state: Option<PressState>) -> String {
    let secs = elapsed.as_secs_f64();
    match state {
        Some(PressState::Cancellable) => format!("{what}… {secs:.1} s (Ctrl-C cancels)"),
        Some(PressState::Cancelling) => format!("cancelling… {secs:.1} s (Ctrl-C again quits gpusql)"),
        Some(PressState::Warned) => format!("{what}… {secs:.1} s (cannot be cancelled: Ctrl-C again quits gpusql)"),
        Some(PressState::NotCancellable) | None => format!("{what}… {secs:.1} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let t = Duration::from_millis(2345);
        assert_eq!(message("running", t, None), "running… 2.3 s");
        assert_eq!(message("running", t, Some(PressState::Cancellable)), "running… 2.3 s (Ctrl-C cancels)");
        assert_eq!(
            message("running", t, Some(PressState::Cancelling)),
            "cancelling… 2.3 s (Ctrl-C again quits gpusql)"
        );
    }

    /// Without a terminal (as under `cargo test`) nothing is shown and dropping is quick.
    #[test]
    fn starts_and_stops() {
        let p = Progress::start("running", None);
        drop(p);
    }
}
