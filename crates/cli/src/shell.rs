//! The interactive shell: line editing and history through rustyline on a terminal, plain
//! line reading when stdin is a pipe or file (scripts: `printf '...' | gpusql`).
//! Statements run once a line completes one with `;`; lines starting with `\` are
//! meta-commands. Errors are printed and the shell goes on.

use crate::format::Format;
use crate::session::Session;
use crate::split::{ends_open, split};
use comfy_table::{presets, Table};
use rustyline::error::ReadlineError;
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

const PROMPT: &str = "gpusql> ";
const CONTINUE: &str = "   ...> ";

const HELP: &str = "\
Statements end with ';' and may span lines. Meta-commands:
  \\q                 quit (or Ctrl-D)
  \\?                 this help
  \\d                 list tables (rows, size, files) and views
  \\d NAME            describe a table
  \\open DIR          open a folder of Parquet / CSV / Arrow files as tables
  \\timing [on|off]   toggle per-query timing on stderr
  \\format [table|csv|json]   set (or show) the output format
  \\cuda SQL          show the CUDA source a query compiles to (\\cuda+ includes the prelude)
  \\tpch SF           generate and load TPC-H at scale factor SF
Ctrl-C clears the current input.";

/// Where lines come from.
enum Input {
    Editor(Box<rustyline::DefaultEditor>, Option<PathBuf>),
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
            let config = rustyline::Config::builder().auto_add_history(false).history_ignore_space(true).build();
            match rustyline::DefaultEditor::with_config(config) {
                Ok(mut ed) => {
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

    fn remember(&mut self, entry: &str) {
        if let Input::Editor(ed, _) = self {
            let _ = ed.add_history_entry(entry.trim());
        }
    }

    fn save(&mut self) {
        if let Input::Editor(ed, Some(h)) = self {
            let _ = ed.save_history(h); // e.g. a read-only home: not worth failing over
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
    }
    let mut buf = String::new();
    let mut all_ok = true;
    loop {
        let prompt = if buf.trim().is_empty() { PROMPT } else { CONTINUE };
        let line = match input.read(prompt) {
            Line::Text(l) => l,
            Line::Interrupted => {
                buf.clear();
                continue;
            }
            Line::Eof => break,
            Line::Failed => {
                input.save();
                return false;
            }
        };
        // A backslash line is a meta-command, unless it continues an open string.
        if line.trim_start().starts_with('\\') && !ends_open(&buf) {
            input.remember(&line);
            match meta(session, line.trim()) {
                Meta::Quit => break,
                Meta::Ok => {}
                Meta::Failed => all_ok = false,
            }
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        // Run each complete statement; keep an unfinished tail for the next lines.
        let pieces = split(&buf);
        let done: usize = pieces.iter().filter(|p| p.terminated).map(|p| p.text.len()).sum();
        if done == 0 {
            continue;
        }
        let complete = buf[..done].to_string();
        buf.drain(..done);
        if buf.trim().is_empty() {
            buf.clear();
        }
        input.remember(&complete);
        all_ok &= session.run_script(&complete, None);
    }
    // Piped input may end without a final ';': run what is left, as for -c and -f.
    if !input.interactive() && !buf.trim().is_empty() {
        all_ok &= session.run_script(&buf, None);
    }
    input.save();
    all_ok || input.interactive()
}

enum Meta {
    Ok,
    Failed,
    Quit,
}

fn meta(session: &mut Session, line: &str) -> Meta {
    let (cmd, arg) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    // Users often end meta-commands with ';' out of habit.
    let arg = arg.trim_end_matches(';').trim_end();
    let result = match cmd {
        "\\q" | "\\quit" => return Meta::Quit,
        "\\?" | "\\h" | "\\help" => {
            println!("{HELP}");
            Ok(())
        }
        "\\d" => describe(session, arg),
        "\\timing" => timing(session, arg),
        "\\format" => set_format(session, arg),
        "\\cuda" => cuda(session, arg, false),
        "\\cuda+" => cuda(session, arg, true),
        "\\tpch" => load_tpch(session, arg),
        "\\open" => match arg {
            "" => Err("usage: \\open DIR (a folder of Parquet, CSV or Arrow files)".into()),
            dir => session.open_directory(std::path::Path::new(dir), gpusql::IfExists::Fail),
        },
        other => Err(format!("unknown command {other}; \\? lists the commands")),
    };
    match result {
        Ok(()) => Meta::Ok,
        Err(e) => {
            eprintln!("Error: {e}");
            Meta::Failed
        }
    }
}

fn describe(session: &Session, name: &str) -> Result<(), String> {
    let tables = session.engine.tables();
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    if name.is_empty() {
        let names = tables.names();
        let views = tables.views();
        if names.is_empty() && views.is_empty() {
            println!("No tables. Open a folder of files with \\open DIR, load TPC-H with \\tpch SF, or create one with CREATE TABLE.");
            return Ok(());
        }
        t.set_header(["table", "columns", "rows", "size", "source"]);
        for n in names {
            if let Some(h) = tables.get(&n) {
                let (size, source) = match h.files() {
                    Some(f) => {
                        let what = match f.paths.as_slice() {
                            [one] => one.clone(),
                            many => format!("{} files", many.len()),
                        };
                        (crate::timing::fmt_bytes(f.bytes as usize), format!("{} {what}", f.format))
                    }
                    None => (crate::timing::fmt_bytes(h.memory_bytes()), "memory".to_string()),
                };
                t.add_row([h.name.clone(), h.schema.len().to_string(), h.rows.to_string(), size, source]);
            }
        }
        for v in views {
            t.add_row([v.name.clone(), String::new(), String::new(), String::new(), "view".to_string()]);
        }
        println!("{t}");
        return Ok(());
    }
    let h = tables.get(name).ok_or_else(|| format!("unknown table '{name}'"))?;
    t.set_header(["column", "type", "nullable"]);
    for f in &h.schema.fields {
        t.add_row([f.name.clone(), f.ty.to_string(), if f.nullable { "yes" } else { "no" }.to_string()]);
    }
    println!("Table {} ({} rows)\n{t}", h.name, h.rows);
    Ok(())
}

fn timing(session: &mut Session, arg: &str) -> Result<(), String> {
    session.timing = match arg.to_ascii_lowercase().as_str() {
        "" => !session.timing,
        "on" => true,
        "off" => false,
        other => return Err(format!("\\timing takes on or off, not '{other}'")),
    };
    println!("Timing is {}.", if session.timing { "on" } else { "off" });
    Ok(())
}

fn set_format(session: &mut Session, arg: &str) -> Result<(), String> {
    if !arg.is_empty() {
        session.format = arg.parse::<Format>()?;
    }
    println!("Output format is {}.", session.format.name());
    Ok(())
}

fn cuda(session: &Session, sql: &str, with_prelude: bool) -> Result<(), String> {
    if sql.is_empty() {
        return Err("usage: \\cuda SELECT …".into());
    }
    let sources = session.engine.cuda_sources(sql).map_err(|e| e.to_string())?;
    for (name, src) in sources {
        let src = if with_prelude { src.as_str() } else { gpusql::strip_prelude(&src) };
        println!("-- {name} --\n{}", src.trim_end());
    }
    Ok(())
}

fn load_tpch(session: &mut Session, arg: &str) -> Result<(), String> {
    let sf: f64 =
        arg.parse().map_err(|_| format!("usage: \\tpch SF (a scale factor such as 0.1 or 1, not '{arg}')"))?;
    crate::tpch::load(&mut session.engine, sf, gpusql::IfExists::Fail, true)
        .map_err(|e| format!("{e} (DROP TABLE them first to load TPC-H again)"))
}
