//! The interactive shell: line editing, history (saved after every statement) and tab
//! completion through rustyline on a terminal, plain line reading when stdin is a pipe or
//! file (scripts: `printf '...' | gpusql`). Statements run once a line completes one
//! with `;`; lines starting with `\` (or, between statements, `.`) are meta-commands.
//! Errors are printed and the shell goes on. On a terminal, Ctrl-C cancels the running
//! statement (`interrupt.rs`) and tables show at most 40 rows, fitted to the width.

use crate::complete::{ShellHelper, Vocabulary};
use crate::format::TableLayout;
use crate::interrupt::Interrupt;
use crate::meta::Flow;
use crate::script::{starts_meta, Script};
use crate::session::Session;
use crate::split::ends_open;
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

const PROMPT: &str = "gpusql> ";
const CONTINUE: &str = "   ...> ";

type Editor = rustyline::Editor<ShellHelper, FileHistory>;

/// Where lines come from.
enum Input {
    Editor(Box<Editor>, Option<PathBuf>),
    /// Standard input, and how many lines were read from it.
    Plain(std::io::StdinLock<'static>, usize),
}

enum Line {
    Text(String),
    Interrupted,
    Eof,
    /// The input could not be read (or was not UTF-8): the shell stops with a failure.
    Failed,
}

impl Input {
    fn open() -> Input {
        if std::io::stdin().is_terminal() {
            let config = rustyline::Config::builder()
                .auto_add_history(false)
                .history_ignore_space(true)
                .completion_type(rustyline::CompletionType::List)
                .build();
            match Editor::with_config(config) {
                Ok(mut ed) => {
                    ed.set_helper(Some(ShellHelper::new()));
                    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".gpusql_history"));
                    if let Some(h) = &history {
                        let _ = ed.load_history(h); // absent on first use
                    }
                    return Input::Editor(Box::new(ed), history);
                }
                Err(e) => eprintln!("notice: line editing unavailable ({e}); reading plain lines"),
            }
        }
        Input::Plain(std::io::stdin().lock(), 0)
    }

    fn interactive(&self) -> bool {
        matches!(self, Input::Editor(..))
    }

    /// Completion offers the tables and columns there are now.
    fn refresh(&mut self, session: &Session) {
        if let Input::Editor(ed, _) = self {
            if let Some(h) = ed.helper_mut() {
                h.vocab = Vocabulary::of(&session.engine);
            }
        }
    }

    fn read(&mut self, prompt: &str) -> Line {
        match self {
            Input::Editor(ed, _) => match ed.readline(prompt) {
                Ok(l) => Line::Text(l),
                Err(ReadlineError::Interrupted) => Line::Interrupted,
                Err(ReadlineError::Eof) => Line::Eof,
                Err(e) => {
                    eprintln!("Error: reading input: {e}");
                    Line::Failed
                }
            },
            Input::Plain(stdin, lines) => {
                let mut bytes = vec![];
                *lines += 1;
                let text = match stdin.read_until(b'\n', &mut bytes) {
                    Ok(0) => return Line::Eof,
                    Ok(_) => crate::utf8::decode(bytes, *lines),
                    Err(e) => Err(e.to_string()),
                };
                match text {
                    Ok(s) => Line::Text(s.trim_end_matches(['\n', '\r']).to_string()),
                    Err(e) => {
                        eprintln!("Error: standard input: {e}");
                        Line::Failed
                    }
                }
            }
        }
    }

    /// Adds an entry to the history and saves the history file at once (appending, so
    /// that a session that ends abruptly keeps its statements, and two sessions keep
    /// each other's).
    fn remember(&mut self, entry: &str) {
        if let Input::Editor(ed, history) = self {
            let _ = ed.add_history_entry(entry.trim());
            if let Some(h) = history {
                let _ = ed.append_history(h); // e.g. a read-only home: not worth failing over
            }
        }
    }
}

/// Runs the shell until `\q` or end of input. Returns whether every statement succeeded
/// (only meaningful for piped input; an interactive session always ends well).
pub fn run(session: &mut Session) -> bool {
    let mut input = Input::open();
    if input.interactive() {
        println!(
            "gpusql {} on {}. Type \\? for help, \\q to quit.",
            env!("CARGO_PKG_VERSION"),
            session.engine.backend()
        );
        session.max_rows = TableLayout::SHELL_MAX_ROWS;
        session.fit_width = true;
        let interrupt = Interrupt::new(session.engine.cancel_handle());
        match interrupt.install() {
            Ok(()) => session.interrupt = Some(interrupt),
            Err(e) => eprintln!("notice: {e}"),
        }
    }
    let mut buf = String::new();
    let mut all_ok = true;
    loop {
        input.refresh(session);
        let prompt = if buf.trim().is_empty() { PROMPT } else { CONTINUE };
        let line = match input.read(prompt) {
            Line::Text(l) => l,
            Line::Interrupted => {
                buf.clear();
                continue;
            }
            Line::Eof => break,
            Line::Failed => return false,
        };
        // A backslash line is a meta-command, unless it continues an open string; so is a
        // dot line between statements.
        let start = line.trim_start();
        let meta = if buf.trim().is_empty() { starts_meta(start) } else { start.starts_with('\\') && !ends_open(&buf) };
        if meta {
            input.remember(&line);
            match session.run_meta(start) {
                Ok(Flow::Quit) => break,
                Ok(Flow::Continue) => {}
                Err(e) => {
                    eprintln!("Error: {e}");
                    all_ok = false;
                }
            }
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        // Run each complete statement (and meta-commands after a ';' on the same line);
        // keep an unfinished tail for the next lines.
        let done = Script::new(&buf).complete_len();
        if done == 0 {
            continue;
        }
        let complete = buf[..done].to_string();
        buf.drain(..done);
        if buf.trim().is_empty() {
            buf.clear();
        }
        input.remember(&complete);
        let outcome = session.run_script(&complete, None);
        all_ok &= outcome.ok;
        if outcome.quit {
            break;
        }
    }
    // Piped input may end without a final ';': run what is left, as for -c and -f.
    if !input.interactive() && !buf.trim().is_empty() {
        all_ok &= session.run_script(&buf, None).ok;
    }
    all_ok || input.interactive()
}
