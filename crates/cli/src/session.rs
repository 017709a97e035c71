//! A session: the engine plus the display settings, running statements and printing
//! their results. Shared by `-c`/`-f` and the interactive shell.

use crate::format::{write_batches, Format};
use crate::split::{split, Piece};
use crate::timing;
use gpusql::{Engine, Error, Output};
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

pub struct Session {
    pub engine: Engine,
    pub format: Format,
    pub timing: bool,
}

impl Session {
    /// Runs every statement of `text` in order, one at a time so that earlier results are
    /// printed even when a later statement fails; errors go to stderr and the remaining
    /// statements still run. Returns whether all succeeded. `file` names the script in
    /// error messages.
    pub fn run_script(&mut self, text: &str, file: Option<&Path>) -> bool {
        let mut ok = true;
        for piece in split(text).iter().filter(|p| !p.blank) {
            if let Err(e) = self.run_statement(piece.text) {
                eprintln!("Error: {}", describe_error(&e, piece, file));
                ok = false;
            }
        }
        ok
    }

    /// Runs one statement and prints what it produced.
    pub fn run_statement(&mut self, sql: &str) -> gpusql::Result<()> {
        let start = Instant::now();
        let outputs = self.engine.execute(sql);
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
                write_batches(&mut w, &batches, self.format)?;
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

    /// Opens a folder as a database (`gpusql DIR`, `\open DIR`): says on stderr which
    /// tables it made and what did not open.
    pub fn open_directory(&mut self, dir: &Path, if_exists: gpusql::IfExists) -> Result<(), String> {
        let start = Instant::now();
        let opened = self.engine.open_directory_with(dir, if_exists).map_err(|e| plain_error(&e))?;
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
        std::process::exit(0);
    }
    Err(Error::Io(format!("writing results: {e}")))
}

/// The message after "Error: ": syntax positions are made relative to the whole input
/// (the statement was cut out of it), and script errors name the file and line.
pub fn describe_error(e: &Error, piece: &Piece<'_>, file: Option<&Path>) -> String {
    let msg = match e {
        Error::Syntax { message, line, column } => {
            let (l, c) = piece.absolute(*line, *column);
            format!("syntax error at line {l}, column {c}: {message}")
        }
        other => shift_positions(&other.to_string(), piece),
    };
    match file {
        Some(f) if matches!(e, Error::Syntax { .. }) => format!("{}: {msg}", f.display()),
        Some(f) => format!("{}: {msg} (statement at line {})", f.display(), piece.code_line),
        None => msg,
    }
}

/// Binder errors carry their position only in the text, as "(line L, column C)";
/// rewrite those to positions in the whole input too.
fn shift_positions(msg: &str, piece: &Piece<'_>) -> String {
    const HEAD: &str = "(line ";
    let mut out = String::new();
    let mut rest = msg;
    while let Some(i) = rest.find(HEAD) {
        out.push_str(&rest[..i]);
        let tail = &rest[i + HEAD.len()..];
        let parsed = tail.split_once(", column ").and_then(|(l, after)| {
            let (c, after) = after.split_once(')')?;
            Some((l.parse::<u64>().ok()?, c.parse::<u64>().ok()?, after))
        });
        match parsed {
            Some((l, c, after)) => {
                let (l, c) = piece.absolute(l, c);
                out.push_str(&format!("(line {l}, column {c})"));
                rest = after;
            }
            None => {
                out.push_str(HEAD);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// An error outside any script (meta-commands, loading): same wording rules.
pub fn plain_error(e: &Error) -> String {
    match e {
        Error::Plan(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_messages_are_shifted() {
        let text = "select 1; select x\nfrom t;";
        let pieces = split(text);
        let e = Error::plan("unknown column 'x' (line 1, column 9)");
        assert_eq!(describe_error(&e, &pieces[1], None), "unknown column 'x' (line 1, column 18)");
        let e = Error::Syntax { message: "oops".into(), line: 2, column: 3 };
        assert_eq!(describe_error(&e, &pieces[1], None), "syntax error at line 2, column 3: oops");
        let e = Error::plan("bad (line 1, column x) (line 2, column 1)");
        assert_eq!(
            describe_error(&e, &pieces[1], Some(Path::new("a.sql"))),
            "a.sql: bad (line 1, column x) (line 2, column 1) (statement at line 1)"
        );
    }
}
