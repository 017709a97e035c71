//! Tab completion in the shell: SQL keywords, the names of tables, views and columns
//! loaded now, meta-commands and their arguments, and file names (after `\open`, and
//! inside a quoted string: `FROM 'data/tr<Tab>`).

use crate::meta;
use crate::split::ends_open;
use gpusql::Engine;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::Context;

/// Keywords, functions and type names of the SQL the engine runs.
const KEYWORDS: &[&str] = &[
    "ALL",
    "AND",
    "AS",
    "ASC",
    "AVG",
    "BETWEEN",
    "BIGINT",
    "BOOLEAN",
    "BY",
    "CASE",
    "CAST",
    "COALESCE",
    "COPY",
    "COUNT",
    "CREATE",
    "CSV",
    "DATE",
    "DATE_PART",
    "DATE_TRUNC",
    "DAY",
    "DECIMAL",
    "DELIMITER",
    "DESC",
    "DESCRIBE",
    "DISTINCT",
    "DOUBLE",
    "DROP",
    "ELSE",
    "END",
    "ESCAPE",
    "EXISTS",
    "EXPLAIN",
    "EXTRACT",
    "FALSE",
    "FILTER",
    "FIRST",
    "FORMAT",
    "FROM",
    "GROUP",
    "HAVING",
    "HEADER",
    "HOUR",
    "IF",
    "IN",
    "INNER",
    "INSERT",
    "INTEGER",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "LAST",
    "LEFT",
    "LENGTH",
    "LIKE",
    "LIMIT",
    "MAX",
    "MIN",
    "MINUTE",
    "MONTH",
    "NOT",
    "NULL",
    "NULLIF",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "PARQUET",
    "QUARTER",
    "READ_ARROW",
    "READ_CSV",
    "READ_CSV_AUTO",
    "READ_PARQUET",
    "REPLACE",
    "RESET",
    "RIGHT",
    "ROUND",
    "SECOND",
    "SELECT",
    "SET",
    "SHOW",
    "SUBSTRING",
    "SUM",
    "TABLE",
    "TABLES",
    "THEN",
    "TIMESTAMP",
    "TO",
    "TRUE",
    "VALUES",
    "VARCHAR",
    "VERBOSE",
    "VIEW",
    "WHEN",
    "WHERE",
    "WITH",
    "YEAR",
];

/// Words after which a table name comes.
const BEFORE_TABLE: &[&str] = &["from", "join", "into", "table", "describe", "view", "exists", "copy"];

/// The names completion offers besides keywords: what the catalog holds now.
#[derive(Debug, Default, Clone)]
pub struct Vocabulary {
    /// Tables and views.
    pub tables: Vec<String>,
    /// (table, column) of every table.
    pub columns: Vec<(String, String)>,
}

impl Vocabulary {
    pub fn of(engine: &Engine) -> Vocabulary {
        let store = engine.tables();
        let mut v = Vocabulary::default();
        for name in store.names() {
            if let Some(t) = store.get(&name) {
                v.columns.extend(t.schema.fields.iter().map(|f| (name.clone(), f.name.clone())));
            }
            v.tables.push(name);
        }
        v.tables.extend(store.views().into_iter().map(|view| view.name));
        v
    }
}

/// What to complete at the cursor.
#[derive(Debug, PartialEq, Eq)]
pub enum Completion {
    /// Replace from byte `start` to the cursor with one of these.
    Words(usize, Vec<String>),
    /// A file or folder name.
    Files,
}

/// The completions of `line` with the cursor at byte `pos`.
pub fn complete(line: &str, pos: usize, vocab: &Vocabulary) -> Completion {
    let Some(before) = line.get(..pos) else { return Completion::Words(pos, vec![]) };
    let trimmed = before.trim_start();
    if trimmed.starts_with(['\\', '.']) {
        let lead = before.len() - trimmed.len();
        return match trimmed.find(char::is_whitespace) {
            None => Completion::Words(lead, matching(meta::names().into_iter().map(String::from), trimmed)),
            Some(i) => meta_argument(&trimmed[..i], &trimmed[i..], lead + i, vocab),
        };
    }
    if ends_open(before) {
        // In a string ('file.parquet') or a comment: file names, or nothing.
        return if open_quote(before) == Some('\'') { Completion::Files } else { Completion::Words(pos, vec![]) };
    }
    sql_words(before, vocab)
}

/// Completions of a meta-command's argument: `args` is the text after `cmd` (from byte
/// `at` of the line) up to the cursor.
fn meta_argument(cmd: &str, args: &str, at: usize, vocab: &Vocabulary) -> Completion {
    let word_start = args.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let first = args[..word_start].trim().is_empty();
    let word = &args[word_start..];
    let words =
        |list: Vec<String>| Completion::Words(at + word_start, if first { matching(list, word) } else { vec![] });
    match cmd {
        "\\d" => words(vocab.tables.clone()),
        "\\open" | ".open" => Completion::Files,
        "\\format" | ".mode" => words(["table", "csv", "json"].map(String::from).to_vec()),
        "\\timing" | ".timer" => words(["on", "off"].map(String::from).to_vec()),
        "\\cuda" | "\\cuda+" => match sql_words(args, vocab) {
            Completion::Words(start, w) => Completion::Words(at + start, w),
            files => files,
        },
        _ => Completion::Words(at + args.len(), vec![]),
    }
}

/// Completions of the SQL word before the cursor (the end of `before`).
fn sql_words(before: &str, vocab: &Vocabulary) -> Completion {
    let word_len: usize =
        before.chars().rev().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.')).map(char::len_utf8).sum();
    let start = before.len() - word_len;
    let word = &before[start..];
    if let Some((qualifier, _)) = word.rsplit_once('.') {
        // t.col: the columns of table t, or of every table (t may be an alias).
        let of_table: Vec<&(String, String)> =
            vocab.columns.iter().filter(|(t, _)| t.eq_ignore_ascii_case(qualifier)).collect();
        let columns: Vec<&(String, String)> =
            if of_table.is_empty() { vocab.columns.iter().collect() } else { of_table };
        let names = columns.into_iter().map(|(_, c)| format!("{qualifier}.{}", identifier(c)));
        return Completion::Words(start, matching(names, word));
    }
    let previous = before[..start].split_whitespace().last().unwrap_or("").to_ascii_lowercase();
    let previous = previous.trim_start_matches(['(', ',']);
    if BEFORE_TABLE.contains(&previous) {
        return Completion::Words(start, matching(vocab.tables.iter().map(|t| identifier(t)), word));
    }
    if word.is_empty() {
        return Completion::Words(start, vec![]);
    }
    let upper = word.chars().any(|c| c.is_ascii_uppercase());
    let keywords = KEYWORDS.iter().map(|k| if upper { k.to_string() } else { k.to_ascii_lowercase() });
    let names = vocab.tables.iter().chain(vocab.columns.iter().map(|(_, c)| c)).map(|n| identifier(n));
    Completion::Words(start, matching(keywords.chain(names), word))
}

/// The candidates that start with `prefix` (ignoring case), sorted, each once.
fn matching(candidates: impl IntoIterator<Item = String>, prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    let mut out: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.trim_start_matches('"').to_lowercase().starts_with(prefix.trim_start_matches('"')))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A name as SQL text: as it is where it is a plain identifier, else double-quoted.
fn identifier(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The quote character of the string or quoted identifier `text` ends inside.
fn open_quote(text: &str) -> Option<char> {
    let mut quote = None;
    let mut chars = text.chars().peekable();
    let mut comment = false;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if comment => comment = c != '\n',
            None if c == '-' && chars.peek() == Some(&'-') => comment = true,
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None => {}
        }
    }
    quote
}

/// The shell's rustyline helper: completion only (no hints, colours or validation).
pub struct ShellHelper {
    pub vocab: Vocabulary,
    files: FilenameCompleter,
}

impl ShellHelper {
    pub fn new() -> ShellHelper {
        ShellHelper { vocab: Vocabulary::default(), files: FilenameCompleter::new() }
    }
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        match complete(line, pos, &self.vocab) {
            Completion::Files => self.files.complete(line, pos, ctx),
            Completion::Words(start, words) => {
                Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
            }
        }
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}
impl Highlighter for ShellHelper {}
impl Validator for ShellHelper {}
impl rustyline::Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary {
        Vocabulary {
            tables: vec!["lineitem".into(), "orders".into(), "My Table".into()],
            columns: vec![
                ("lineitem".into(), "l_quantity".into()),
                ("lineitem".into(), "l_orderkey".into()),
                ("orders".into(), "o_orderkey".into()),
                ("orders".into(), "o_orderdate".into()),
            ],
        }
    }

    fn words(line: &str) -> (usize, Vec<String>) {
        match complete(line, line.len(), &vocab()) {
            Completion::Words(start, w) => (start, w),
            Completion::Files => panic!("files for {line}"),
        }
    }

    #[test]
    fn keywords_in_the_case_typed() {
        assert_eq!(words("sel"), (0, vec!["select".to_string()]));
        assert_eq!(words("SEL"), (0, vec!["SELECT".to_string()]));
        assert_eq!(words("select * fr"), (9, vec!["from".to_string()]));
        assert_eq!(words("select count(*) from lineitem gro").1, ["group"]);
    }

    #[test]
    fn tables_and_columns() {
        assert_eq!(words("select * from "), (14, vec!["\"My Table\"".into(), "lineitem".into(), "orders".into()]));
        assert_eq!(words("select * from o").1, ["orders"]);
        assert_eq!(words("select * from lineitem join ord").1, ["orders"]);
        assert_eq!(words("select l_q").1, ["l_quantity"]);
        // Columns of every table, and tables, among the keywords.
        assert_eq!(
            words("select o").1,
            ["o_orderdate", "o_orderkey", "offset", "on", "or", "order", "orders", "outer"]
        );
        // Qualified: the table's columns; an alias: every table's.
        assert_eq!(words("select orders.o_").1, ["orders.o_orderdate", "orders.o_orderkey"]);
        assert_eq!(words("select x.l_").1, ["x.l_orderkey", "x.l_quantity"]);
        assert_eq!(words("select sum(l_qu").1, ["l_quantity"]);
        // Nothing typed: nothing offered (but after FROM, every table).
        assert_eq!(words("select ").1, Vec::<String>::new());
    }

    #[test]
    fn meta_commands_and_their_arguments() {
        assert_eq!(words("\\ti"), (0, vec!["\\timing".to_string()]));
        assert_eq!(words("  .ta"), (2, vec![".tables".to_string()]));
        assert!(words("\\").1.contains(&"\\maxrows".to_string()));
        assert_eq!(words("\\d line"), (3, vec!["lineitem".to_string()]));
        assert_eq!(words(".mode c"), (6, vec!["csv".to_string()]));
        assert_eq!(words("\\timing o"), (8, vec!["off".to_string(), "on".to_string()]));
        assert_eq!(words("\\cuda select l_q"), (13, vec!["l_quantity".to_string()]));
        assert_eq!(words("\\q ").1, Vec::<String>::new());
        assert_eq!(complete("\\open da", 8, &vocab()), Completion::Files);
    }

    #[test]
    fn inside_strings_and_comments() {
        assert_eq!(complete("select * from 'da", 17, &vocab()), Completion::Files);
        assert_eq!(words("select \"l_q").1, Vec::<String>::new());
        assert_eq!(words("select 1 /* sel").1, Vec::<String>::new());
        assert_eq!(words("select 'it''s' fr").1, ["from"]);
    }

    #[test]
    fn any_cursor_position_is_safe() {
        let line = "select é, l_q from lineitem where x = 'ü";
        for pos in 0..=line.len() + 2 {
            let _ = complete(line, pos, &vocab());
        }
    }
}
