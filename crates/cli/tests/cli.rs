//! The gpusql binary's handling of its input and data-set flags.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn gpusql(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpusql"))
        .args(["--backend", "cpu"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Invalid UTF-8 on standard input stops the shell with an error naming the line, and a
/// failure status (it used to end the input silently, with status 0).
#[test]
fn invalid_utf8_on_stdin_is_an_error() {
    let o = gpusql(&[], b"select 1 as a;\nselect '\xff' as b;\nselect 2 as c;\n");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("Error: standard input: invalid UTF-8 at line 2, column 9"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains('a') && !out.contains(" c "), "{out}");
}

#[test]
fn invalid_utf8_in_a_script_file_is_an_error() {
    let dir = std::env::temp_dir().join(format!("gpusql-cli-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.sql");
    std::fs::write(&file, b"select 1;\n\nselect 'caf\xe9';\n").unwrap();
    let o = gpusql(&["-f", file.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bad.sql: invalid UTF-8 at line 3, column 12"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// TPC-H and SSB share table names: loading both is an error naming the tables and the
/// way out, not SSB's `customer` silently answering TPC-H queries.
#[test]
fn data_sets_with_clashing_tables_are_refused() {
    let o = gpusql(&["--tpch", "0.01", "--ssb", "0.01", "-c", "select count(*) from customer"], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("customer, supplier, part") && err.contains("--replace"), "{err}");
    assert!(o.stdout.is_empty());
    // With --replace, SSB's tables replace TPC-H's of the same names (SSB SF 0.01: 300
    // customers; TPC-H: 1500).
    let o = gpusql(
        &[
            "--tpch",
            "0.01",
            "--ssb",
            "0.01",
            "--replace",
            "--format",
            "csv",
            "-c",
            "select count(*) from customer; select count(*) from orders",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "count(*)\n300\ncount(*)\n15000\n");
}

/// An error with a place in the statement: the message, then the line it points at with a
/// caret under the column (in the whole input, not the statement cut out of it).
#[test]
fn errors_point_at_their_place() {
    let o = gpusql(&["--format", "csv", "-c", "select 1 as a; select nope"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "Error: unknown column 'nope' (line 1, column 23)\n\
         LINE 1: select 1 as a; select nope\n\
         \x20                             ^\n"
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a\n1\n");

    // The shell counts lines from the start of the statement entered.
    let o = gpusql(&[], b"select 1 as a;\nselect 2 as b\n  from (select 3) s where;\n");
    assert_eq!(
        stderr(&o),
        "Error: syntax error at line 2, column 26: Expected: an expression, found: ;\n\
         LINE 2:   from (select 3) s where;\n\
         \x20                                ^\n"
    );

    let dir = std::env::temp_dir().join(format!("gpusql-cli-caret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("q.sql");
    std::fs::write(&file, "select 1;\n\nselect abs('x');\n").unwrap();
    let o = gpusql(&["-f", file.to_str().unwrap()], b"");
    let err = stderr(&o);
    let (first, rest) = err.split_once('\n').unwrap();
    assert!(
        first.ends_with("q.sql: abs needs a number, got VARCHAR (line 3, column 8) (statement at line 3)"),
        "{err}"
    );
    assert_eq!(rest, "LINE 3: select abs('x');\n               ^\n");
    std::fs::remove_dir_all(&dir).unwrap();

    // No place, no caret.
    let o = gpusql(&["-c", "set no_such_setting = 1"], b"");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Meta-commands run from -c, -f and piped input as in the shell: on a line of their own
/// or after a ';', in order with the statements around them.
#[test]
fn meta_commands_run_from_scripts() {
    let o = gpusql(&["-c", "create table t (a integer)", "-c", "\\d", "-c", "select 1 as one; \\d t"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let (listing, rest) = out.split_once("table").unwrap();
    assert!(listing.starts_with("CREATE TABLE\n"), "{out}");
    assert!(rest.contains("memory"), "{out}");
    let (one, described) = rest.split_once("(1 row)").unwrap();
    assert!(one.contains("one"), "{out}");
    assert!(described.contains("Table t (0 rows)") && described.contains("INTEGER"), "{out}");

    // Dot forms, and settings that later statements use.
    let o = gpusql(&["-c", ".tables\n.mode csv\nselect 2 as b;\n.maxrows 1"], b"");
    assert!(stdout(&o).starts_with("No tables."), "{}", stdout(&o));
    // (In CSV and JSON, stdout carries only data: confirmations go to stderr.)
    assert!(stdout(&o).ends_with("\nb\n2\n"), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "Output format is csv.\nTables show at most 1 rows: the first and last ones, with the total below.\n"
    );

    // A backslash inside a statement or a string is SQL.
    let o = gpusql(&["--format", "csv", "-c", "select '\\d' as s"], b"");
    assert_eq!(stdout(&o), "s\n\\d\n", "{}", stderr(&o));

    // Errors: an unknown command fails the run, and what follows still runs; \q stops.
    let o = gpusql(&["--format", "csv", "-c", "\\nope\nselect 3 as c; \\q\nselect 4 as d"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "Error: unknown command \\nope; \\? lists the commands\n");
    assert_eq!(stdout(&o), "c\n3\n");

    // A script file names itself and the line.
    let dir = std::env::temp_dir().join(format!("gpusql-cli-meta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.sql");
    std::fs::write(&file, "select 1;\n\\format xml\n").unwrap();
    let o = gpusql(&["-f", file.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).ends_with("m.sql: unknown format 'xml' (table, csv or json) (line 2)\n"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();

    // Piped into the shell.
    let o = gpusql(&[], b"create table u (a integer);\n.tables\nselect 5 as e; \\format csv\nselect 6 as f;\n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(" u ") && out.contains("(1 row)") && out.ends_with("f\n6\n"), "{out}");
}

/// -c and -f print every row (whatever the terminal) unless told otherwise; \maxrows
/// cuts tables down to their first and last rows, never CSV or JSON.
#[test]
fn long_results_are_cut_only_when_asked() {
    let all = gpusql(&["--tpch", "0.01", "-c", "select n_nationkey from nation order by 1"], b"");
    let out = stdout(&all);
    assert_eq!(out.lines().filter(|l| l.starts_with('│')).count(), 1 + 25, "{out}");
    assert!(out.ends_with("(25 rows)\n"), "{out}");
    let cut = gpusql(&["--tpch", "0.01", "-c", "\\maxrows 4", "-c", "select n_nationkey from nation order by 1"], b"");
    let out = stdout(&cut);
    let shown: Vec<&str> = out.lines().filter(|l| l.starts_with('│')).map(|l| l.trim_matches(['│', ' '])).collect();
    assert_eq!(shown, ["n_nationkey", "0", "1", "…", "23", "24"], "{out}");
    assert!(out.ends_with("(25 rows, 4 shown)\n"), "{out}");
    let csv = gpusql(&["--tpch", "0.01", "-c", ".mode csv\n.maxrows 4\nselect n_nationkey from nation"], b"");
    assert_eq!(stdout(&csv).lines().count(), 1 + 25, "{}", stdout(&csv));
}
