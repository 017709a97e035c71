//! A script (`-c` text, a `-f` file, what the shell read) as SQL statements and
//! meta-commands, in order.
//!
//! A meta-command (`\d`, `.tables`, …) stands where a statement could start: at the
//! start of the text or after a `;` (whitespace and comments before it are fine), and
//! runs to the end of its line. A backslash or dot anywhere else is SQL text, as is one
//! inside a string or comment.

use crate::split::{first_code, split, Piece};
use std::ops::Range;

/// Whether a statement starting with `c` is a meta-command (no SQL statement starts with
/// a backslash or a dot).
pub fn starts_meta(text: &str) -> bool {
    text.starts_with(['\\', '.'])
}

/// What a script holds, in order.
#[derive(Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A statement; its `text` is the script's with meta-commands blanked out, so its
    /// line and column are those of the whole script.
    Statement(Piece<'a>),
    /// A meta-command's line (from its `\` or `.` to the end of the line), and its line
    /// number in the script.
    Meta { text: &'a str, line: u64 },
}

pub struct Script<'a> {
    text: &'a str,
    /// `text` with every meta-command's bytes made spaces: the SQL left, at the same
    /// byte offsets, lines and columns.
    masked: String,
    metas: Vec<Range<usize>>,
}

impl<'a> Script<'a> {
    pub fn new(text: &'a str) -> Script<'a> {
        let metas = meta_ranges(text);
        let mut masked = String::with_capacity(text.len());
        let mut at = 0;
        for m in &metas {
            masked.push_str(&text[at..m.start]);
            masked.extend(std::iter::repeat_n(' ', m.len()));
            at = m.end;
        }
        masked.push_str(&text[at..]);
        Script { text, masked, metas }
    }

    /// The statements (non-blank pieces) and meta-commands in order.
    pub fn items(&self) -> Vec<Item<'_>> {
        let mut items = vec![];
        let mut metas = self.metas.iter().peekable();
        let mut offset = 0;
        for piece in split(&self.masked) {
            let code = first_code(piece.text).map(|c| offset + c);
            offset += piece.text.len();
            let Some(code) = code else { continue };
            while let Some(m) = metas.next_if(|m| m.start < code) {
                items.push(self.meta(m));
            }
            items.push(Item::Statement(piece));
        }
        items.extend(metas.map(|m| self.meta(m)));
        items
    }

    fn meta(&self, m: &Range<usize>) -> Item<'_> {
        let line = 1 + self.text[..m.start].bytes().filter(|&b| b == b'\n').count() as u64;
        Item::Meta { text: &self.text[m.clone()], line }
    }

    /// How many bytes from the start make complete statements and meta-commands (the
    /// rest is a statement without its `;` yet, or blank).
    pub fn complete_len(&self) -> usize {
        let mut end = 0;
        let mut offset = 0;
        for piece in split(&self.masked) {
            offset += piece.text.len();
            if piece.terminated {
                end = offset;
            }
        }
        self.metas.last().map_or(end, |m| end.max(m.end))
    }
}

/// The byte ranges of the meta-commands of `text`.
fn meta_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = vec![];
    let mut at = 0;
    'rest: while at < text.len() {
        let mut offset = at;
        for piece in split(&text[at..]) {
            if let Some(c) = first_code(piece.text) {
                let start = offset + c;
                if starts_meta(&text[start..]) {
                    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
                    ranges.push(start..end);
                    at = end;
                    continue 'rest;
                }
            }
            offset += piece.text.len();
        }
        break;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each item as text: statements from their first code on, meta-commands with their
    /// line.
    fn items(text: &str) -> Vec<String> {
        Script::new(text)
            .items()
            .into_iter()
            .map(|i| match i {
                Item::Statement(p) => format!("sql {}", p.text[first_code(p.text).unwrap_or(0)..].trim_end()),
                Item::Meta { text, line } => format!("meta {line}: {text}"),
            })
            .collect()
    }

    #[test]
    fn meta_commands_between_statements() {
        assert_eq!(items("\\d"), ["meta 1: \\d"]);
        assert_eq!(items(".tables"), ["meta 1: .tables"]);
        assert_eq!(
            items("select 1; \\d t;\nselect 2;\n.maxrows 5\n  -- c\n\\timing on\nselect 3"),
            [
                "sql select 1;",
                "meta 1: \\d t;",
                "sql select 2;",
                "meta 3: .maxrows 5",
                "meta 5: \\timing on",
                "sql select 3"
            ]
        );
    }

    #[test]
    fn backslashes_and_dots_inside_sql_are_sql() {
        assert_eq!(items("select '\\d';"), ["sql select '\\d';"]);
        assert_eq!(items("select 1\n\\d"), ["sql select 1\n\\d"]);
        assert_eq!(items("select a\n.5 from t;"), ["sql select a\n.5 from t;"]);
        assert_eq!(items("/* \\d */ select 1;"), ["sql select 1;"]);
        assert_eq!(items("select 1; -- \\d\n"), ["sql select 1;"]);
    }

    #[test]
    fn statements_keep_their_place_in_the_script() {
        let s = Script::new("\\timing\nselect 1;  select x");
        let pieces: Vec<_> = s
            .items()
            .into_iter()
            .filter_map(|i| match i {
                Item::Statement(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!((pieces[0].line, pieces[0].code_line), (1, 2));
        assert_eq!(pieces[1].absolute(1, 8), (2, 17));
    }

    #[test]
    fn complete_length() {
        assert_eq!(Script::new("select 1; sel").complete_len(), 9);
        assert_eq!(Script::new("select 1; \\d\n").complete_len(), 12);
        assert_eq!(Script::new("select 1").complete_len(), 0);
        assert_eq!(Script::new("\\d x; y\nselect").complete_len(), 7);
        // Multi-byte characters in a meta-command keep the byte offsets.
        let s = Script::new("\\d café\nselect 1;");
        assert_eq!(s.complete_len(), s.text.len());
        assert_eq!(s.items().len(), 2);
    }
}
