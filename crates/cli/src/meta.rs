//! Meta-commands: `\d`, `\timing`, … and the DuckDB-style dot forms of some of them
//! (`.tables`, `.mode csv`, `.maxrows 100`). They run in the shell and in `-c` / `-f`
//! scripts alike (see `script.rs` for where a script may hold one).

use crate::format::{Format, TableLayout};
use crate::session::Session;
use comfy_table::{presets, Table};

/// A meta-command: its names (the first is the one help shows first), its arguments and
/// what it does.
pub struct Command {
    pub names: &'static [&'static str],
    pub args: &'static str,
    pub help: &'static str,
}

pub const COMMANDS: &[Command] = &[
    Command { names: &["\\q", "\\quit", ".quit", ".exit"], args: "", help: "quit (or Ctrl-D)" },
    Command { names: &["\\?", "\\h", "\\help", ".help"], args: "", help: "this help" },
    Command { names: &["\\d", ".tables"], args: "", help: "list tables (rows, size, files) and views" },
    Command { names: &["\\d"], args: "NAME", help: "describe a table" },
    Command {
        names: &["\\open", ".open"],
        args: "DIR",
        help: "open a folder of Parquet / CSV / Arrow files as tables",
    },
    Command { names: &["\\timing", ".timer"], args: "[on|off]", help: "toggle per-query timing on stderr" },
    Command { names: &["\\format", ".mode"], args: "[table|csv|json]", help: "set (or show) the output format" },
    Command {
        names: &["\\maxrows", ".maxrows"],
        args: "[N]",
        help: "show at most N rows of a table, the first and last halves (0: all)",
    },
    Command {
        names: &["\\cuda", "\\cuda+"],
        args: "SQL",
        help: "show the CUDA source a query compiles to (\\cuda+ includes the prelude)",
    },
    Command { names: &["\\tpch"], args: "SF", help: "generate and load TPC-H at scale factor SF" },
];

/// Every meta-command name, each once (for completion).
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = COMMANDS.iter().flat_map(|c| c.names.iter().copied()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn help() -> String {
    let mut s = String::from(
        "Statements end with ';' and may span lines. Meta-commands (on a line of their own, or after a ';'):\n",
    );
    for c in COMMANDS {
        let shown = c.names.iter().map(|n| if c.args.is_empty() { n.to_string() } else { format!("{n} {}", c.args) });
        let shown: Vec<String> = shown.collect();
        s.push_str(&format!("  {:<34} {}\n", shown.join(", "), c.help));
    }
    s.push_str(
        "Tab completes keywords, tables, columns and commands. Ctrl-C clears the input, or cancels the running query.",
    );
    s
}

/// What the caller does after a meta-command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// Runs a meta-command line (`\d lineitem`, `.mode csv`); an error is the message to
/// show after "Error: ".
pub fn run(session: &mut Session, line: &str) -> Result<Flow, String> {
    let line = line.trim();
    let (cmd, arg) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    // Users often end meta-commands with ';' out of habit.
    let cmd = cmd.strip_suffix(';').unwrap_or(cmd);
    let arg = arg.trim_end_matches(';').trim_end();
    match cmd {
        "\\q" | "\\quit" | ".quit" | ".exit" => return Ok(Flow::Quit),
        "\\?" | "\\h" | "\\help" | ".help" => println!("{}", help()),
        "\\d" => describe(session, arg)?,
        ".tables" => describe(session, "")?,
        "\\timing" | ".timer" => timing(session, arg)?,
        "\\format" | ".mode" => set_format(session, arg)?,
        "\\maxrows" | ".maxrows" => max_rows(session, arg)?,
        "\\cuda" => cuda(session, arg, false)?,
        "\\cuda+" => cuda(session, arg, true)?,
        "\\tpch" => load_tpch(session, arg)?,
        "\\open" | ".open" => match arg {
            "" => return Err(format!("usage: {cmd} DIR (a folder of Parquet, CSV or Arrow files)")),
            dir => session.open_directory(std::path::Path::new(dir), gpusql::IfExists::Fail)?,
        },
        other => return Err(format!("unknown command {other}; \\? lists the commands")),
    }
    Ok(Flow::Continue)
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

/// A confirmation: on stdout, or on stderr where stdout carries only data (CSV, JSON), as
/// for "INSERT 3".
fn status(session: &Session, line: &str) {
    if session.format.is_data_only() {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

fn timing(session: &mut Session, arg: &str) -> Result<(), String> {
    session.timing = match arg.to_ascii_lowercase().as_str() {
        "" => !session.timing,
        "on" => true,
        "off" => false,
        other => return Err(format!("\\timing takes on or off, not '{other}'")),
    };
    status(session, &format!("Timing is {}.", if session.timing { "on" } else { "off" }));
    Ok(())
}

fn set_format(session: &mut Session, arg: &str) -> Result<(), String> {
    if !arg.is_empty() {
        session.format = arg.parse::<Format>()?;
    }
    status(session, &format!("Output format is {}.", session.format.name()));
    Ok(())
}

fn max_rows(session: &mut Session, arg: &str) -> Result<(), String> {
    if !arg.is_empty() {
        session.max_rows = arg.parse::<usize>().map_err(|_| {
            format!(
                "\\maxrows takes a number of rows (0: all), not '{arg}' (the shell's default is {})",
                TableLayout::SHELL_MAX_ROWS
            )
        })?;
    }
    match session.max_rows {
        0 => status(session, "Tables show all rows."),
        n => status(session, &format!("Tables show at most {n} rows: the first and last ones, with the total below.")),
    }
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
    crate::tpch::load(&mut session.engine, sf, gpusql::IfExists::Fail, true).map_err(|e| {
        let m = e.to_string();
        if m.contains("already exist") {
            format!("{m} (DROP TABLE them first to load TPC-H again)")
        } else {
            m
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_command() {
        let h = help();
        for name in names() {
            assert!(h.contains(name), "{name} missing from\n{h}");
        }
    }
}
