//! A session: the engine plus the display settings, running statements and
//! meta-commands and printing their results. Shared by `-c`/`-f` and the interactive shell.

use crate::format::{write_batches, Format, TableLayout};
use crate::interrupt::Interrupt;
use crate::meta;
use crate::progress::Progress;
use crate::script::{Item, Script};
use crate::split::Piece;
use crate::timing;
use gpusql::{Engine, Error, Output};
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub struct Session {
    pub engine: Engine,
    pub format: Format,
    pub timing: bool,
    /// Rows beyond which a table shows its first and last halves (0: all; `\maxrows`).
    pub max_rows: usize,
    /// Whether tables are fitted to the terminal's width (where stdout is one).
    pub fit_width: bool,
    /// Ctrl-C's handling, where the shell installed it (statements mark themselves busy).
    pub interrupt: Option<Arc<Interrupt>>,
}

/// What running a script came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Every statement and meta-command succeeded.
    pub ok: bool,
    /// A `\q` asked to quit (what followed it did not run).
    pub quit: bool,
}

impl Session {
    /// A session that prints every row of every result (`-c`, `-f`, piped input).
    pub fn new(engine: Engine, format: Format, timing: bool) -> Session {
        Session { engine, format, timing, max_rows: 0, fit_width: false, interrupt: None }
    }

    /// Runs the statements and meta-commands of `text` in order, one at a time so that
    /// earlier results are printed even when a later statement fails; errors go to stderr
    /// (with the line they point at, if they do) and what follows still runs, except after
    /// a cancelled statement (Ctrl-C) or `\q`. `file` names the script in error messages.
    pub fn run_script(&mut self, text: &str, file: Option<&Path>) -> Outcome {
        let mut ok = true;
        let script = Script::new(text);
        for item in script.items() {
            match item {
                Item::Statement(piece) => {
                    let Err(e) = self.run_statement(piece.text) else { continue };
                    ok = false;
                    if e.kind() == &Error::Cancelled {
                        eprintln!("Error: {e}");
                        return Outcome { ok, quit: false };
                    }
                    // The statement was cut out of `text`: its error's place moves into `text`.
                    let e = e.map_position(|line, column| piece.absolute(line, column));
                    eprintln!("Error: {}", describe_error(&e, &piece, file));
                    if let Some(pointer) = e.position().and_then(|p| point_at(text, p)) {
                        eprintln!("{pointer}");
                    }
                }
                Item::Meta { text, line } => match self.run_meta(text) {
                    Ok(meta::Flow::Continue) => {}
                    Ok(meta::Flow::Quit) => return Outcome { ok, quit: true },
                    Err(e) => {
                        ok = false;
                        match file {
                            Some(f) => eprintln!("Error: {}: {e} (line {line})", f.display()),
                            None => eprintln!("Error: {e}"),
                        }
                    }
                },
            }
        }
        Outcome { ok, quit: false }
    }

    /// Runs one meta-command line (`\d t`, `.mode csv`).
    pub fn run_meta(&mut self, line: &str) -> Result<meta::Flow, String> {
        let interrupt = self.interrupt.clone();
        let _busy = interrupt.as_ref().map(|i| i.begin(false));
        meta::run(self, line)
    }

    /// Runs one statement and prints what it produced.
    pub fn run_statement(&mut self, sql: &str) -> gpusql::Result<()> {
        let interrupt = self.interrupt.clone();
        let _busy = interrupt.as_ref().map(|i| i.begin(true));
        let start = Instant::now();
        let outputs = {
            let _progress = Progress::start("running", interrupt.clone());
            self.engine.execute(sql)
        };
        if let Some(n) = self.engine.new_notice() {
            eprintln!("{n}");
        }
        let outputs = outputs?;
        let wall_ms = start.elapsed().as_secs_f64() * 1e3;
        for out in outputs {
            self.print_output(out, wall_ms).or_else(handle_write_error)?;
        }
        Ok(())
    }

    fn print_output(&self, out: Output, wall_ms: f64) -> io::Result<()> {
        let stdout = io::stdout();
        let mut w = io::BufWriter::new(stdout.lock());
        match out {
            Output::Rows { batches, stats } => {
                write_batches(&mut w, &batches, self.format, &self.table_layout())?;
                w.flush()?;
                if self.timing {
                    eprintln!("{}", timing::report(&stats, wall_ms));
                }
            }
            Output::Explain(text) => {
                writeln!(w, "{}", text.trim_end())?;
                w.flush()?;
                self.print_time(wall_ms);
            }
            Output::Done(tag) => {
                if self.format.is_data_only() {
                    eprintln!("{tag}");
                } else {
                    writeln!(w, "{tag}")?;
                    w.flush()?;
                }
                self.print_time(wall_ms);
            }
        }
        Ok(())
    }

    /// How tables are cut down: the row limit, and the terminal's width where stdout is
    /// one and the session fits tables to it.
    fn table_layout(&self) -> TableLayout {
        let width = (self.fit_width && io::stdout().is_terminal())
            .then(|| comfy_table::Table::new().width().map(usize::from))
            .flatten();
        TableLayout { max_rows: self.max_rows, width }
    }

    /// Opens a folder as a database (`gpusql DIR`, `\open DIR`): says on stderr which
    /// tables it made and what did not open.
    pub fn open_directory(&mut self, dir: &Path, if_exists: gpusql::IfExists) -> Result<(), String> {
        let start = Instant::now();
        let opened = {
            let _progress = Progress::start(&format!("opening {}", dir.display()), self.interrupt.clone());
            self.engine.open_directory_with(dir, if_exists).map_err(|e| e.to_string())?
        };
        for e in &opened.errors {
            eprintln!("warning: {e}");
        }
        if opened.tables.is_empty() {
            return Err(format!("{} holds no Parquet, CSV or Arrow files that open", dir.display()));
        }
        eprintln!(
            "Opened {}: {} tables ({}) in {:.0} ms",
            dir.display(),
            opened.tables.len(),
            opened.tables.join(", "),
            start.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }

    fn print_time(&self, wall_ms: f64) {
        if self.timing {
            eprintln!("Time: {wall_ms:.3} ms");
        }
    }
}

/// A closed stdout (`gpusql ... | head`) ends the program quietly, as other command-line
/// tools do; other write failures are reported as errors.
fn handle_write_error(e: io::Error) -> gpusql::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        gpusql::stop_background_compiles();
        std::process::exit(0);
    }
    Err(Error::Io(format!("writing results: {e}")))
}

/// The message after "Error: " (the error's place already moved into the whole input):
/// script errors name the file, and the statement's line where the message has no
/// line of its own.
pub fn describe_error(e: &Error, piece: &Piece<'_>, file: Option<&Path>) -> String {
    match file {
        Some(f) if matches!(e.kind(), Error::Syntax(_)) && e.position().is_some() => format!("{}: {e}", f.display()),
        Some(f) => format!("{}: {e} (statement at line {})", f.display(), piece.code_line),
        None => e.to_string(),
    }
}

/// The widest part of a source line shown under an error; longer lines are cut around
/// the error's column.
const SHOWN_CHARS: usize = 100;

/// The line of `text` at `position` (1-based line, column) with a caret under the column,
/// as PostgreSQL and DuckDB show it:
///
/// ```text
/// LINE 2: from t where nope = 1
///                      ^
/// ```
fn point_at(text: &str, (line, column): (u64, u64)) -> Option<String> {
    let source: Vec<char> = text.lines().nth(usize::try_from(line).ok()?.checked_sub(1)?)?.chars().collect();
    let at = usize::try_from(column).ok()?.checked_sub(1)?;
    let (start, end) = if source.len() <= SHOWN_CHARS {
        (0, source.len())
    } else {
        let start = at.saturating_sub(SHOWN_CHARS / 2).min(source.len() - SHOWN_CHARS);
        (start, start + SHOWN_CHARS)
    };
    let mut shown: String = source[start..end].iter().collect();
    let mut head = format!("LINE {line}: ");
    if start > 0 {
        head.push_str("...");
    }
    if end < source.len() {
        shown.push_str("...");
    }
    // Under a tab, a tab: the caret lines up however wide the terminal makes tabs.
    let pad: String = source[start..at.clamp(start, end)].iter().map(|&c| if c == '\t' { '\t' } else { ' ' }).collect();
    Some(format!("{head}{shown}\n{}{pad}^", " ".repeat(head.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::split;

    #[test]
    fn positions_are_moved_into_the_whole_input() {
        let text = "select 1; select x\nfrom t;";
        let pieces = split(text);
        let moved = |e: Error| e.map_position(|l, c| pieces[1].absolute(l, c));
        let e = moved(Error::bind("unknown column 'x'").at(1, 9));
        assert_eq!(describe_error(&e, &pieces[1], None), "unknown column 'x' (line 1, column 18)");
        let e = moved(Error::Syntax("oops".into()).at(2, 3));
        assert_eq!(describe_error(&e, &pieces[1], None), "syntax error at line 2, column 3: oops");
        assert_eq!(
            describe_error(&e, &pieces[1], Some(Path::new("a.sql"))),
            "a.sql: syntax error at line 2, column 3: oops"
        );
        let e = Error::bind("bad");
        assert_eq!(describe_error(&e, &pieces[1], Some(Path::new("a.sql"))), "a.sql: bad (statement at line 1)");
    }

    #[test]
    fn the_caret_sits_under_the_column() {
        let text = "select 1;\nselect\tnope from t";
        assert_eq!(point_at(text, (2, 8)).unwrap(), "LINE 2: select\tnope from t\n              \t^");
        assert_eq!(point_at(text, (1, 10)).unwrap(), "LINE 1: select 1;\n                 ^");
        assert_eq!(point_at(text, (3, 1)), None);
    }

    #[test]
    fn a_long_line_is_cut_around_the_column() {
        let text = format!("select {} nope", "a, ".repeat(100));
        let column = text.find("nope").unwrap() as u64 + 1;
        let pointer = point_at(&text, (1, column)).unwrap();
        let (line, caret) = pointer.split_once('\n').unwrap();
        assert!(line.starts_with("LINE 1: ...") && !line.ends_with("..."), "{line}");
        assert_eq!(&line[caret.len() - 1..caret.len() + 3], "nope");
        assert!(line.chars().count() < 120);
    }
}
