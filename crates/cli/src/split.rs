//! Splits SQL text into statements at top-level `;`, skipping quotes and comments.
//!
//! The engine parses whole scripts, but the CLI runs statements one at a time so that
//! earlier results print even when a later statement fails, and the shell needs to know
//! when the input holds a complete statement. The lexing here only has to agree with the
//! engine's dialect (sqlparser's GenericDialect) on where strings, quoted identifiers and
//! comments begin and end: `'…'` with `''` escapes, `"…"`, `` `…` ``, `--` to end of line
//! and non-nested `/* … */`.

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The text from just after the previous `;` up to and including this one's `;`
    /// (leading whitespace and comments included, so positions stay computable).
    pub text: &'a str,
    /// 1-based line and column of `text`'s first character in the whole input.
    pub line: u64,
    pub column: u64,
    /// Line of the statement's first character that is not whitespace or comment.
    pub code_line: u64,
    /// Whether the statement ended with `;` (the last piece may not).
    pub terminated: bool,
    /// Whether it holds anything but whitespace and comments.
    pub blank: bool,
}

impl Piece<'_> {
    /// Maps a 1-based (line, column) inside `text` to one in the whole input.
    pub fn absolute(&self, line: u64, column: u64) -> (u64, u64) {
        if line <= 1 {
            (self.line, self.column + column.saturating_sub(1))
        } else {
            (self.line + line - 1, column)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    Quote(char),
    LineComment,
    BlockComment,
}

/// Whether the text ends inside a string, quoted identifier or block comment (the shell
/// then keeps reading lines and does not treat a leading `\` as a meta-command).
pub fn ends_open(text: &str) -> bool {
    matches!(scan(text, |_, _| {}), State::Quote(_) | State::BlockComment)
}

/// Byte offset of the first character of `text` that is not whitespace or comment.
pub fn first_code(text: &str) -> Option<usize> {
    let mut first = None;
    scan(text, |i, ev| {
        if ev == Event::Code && first.is_none() {
            first = Some(i);
        }
    });
    first
}

/// Splits `text` into statements. Blank trailing text comes back as a blank,
/// unterminated piece; callers skip blank pieces.
pub fn split(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = vec![];
    let mut start = 0;
    let (mut line, mut column) = (1u64, 1u64);
    let mut start_pos = (1u64, 1u64);
    let mut blank = true;
    let mut code_line = 1;
    let mut ends = vec![];
    scan(text, |i, ev| ends.push((i, ev)));
    let mut ends = ends.into_iter().peekable();
    for (i, ch) in text.char_indices() {
        while let Some(&(j, ev)) = ends.peek() {
            if j > i {
                break;
            }
            ends.next();
            match ev {
                Event::Code if j == i => {
                    if blank {
                        code_line = line;
                    }
                    blank = false;
                }
                Event::End if j == i => {
                    let end = i + ch.len_utf8();
                    pieces.push(Piece {
                        text: &text[start..end],
                        line: start_pos.0,
                        column: start_pos.1,
                        code_line: if blank { start_pos.0 } else { code_line },
                        terminated: true,
                        blank,
                    });
                    start = end;
                    blank = true;
                }
                _ => {}
            }
        }
        if ch == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
        if start == i + ch.len_utf8() {
            start_pos = (line, column);
        }
    }
    if start < text.len() || pieces.is_empty() {
        pieces.push(Piece {
            text: &text[start..],
            line: start_pos.0,
            column: start_pos.1,
            code_line: if blank { start_pos.0 } else { code_line },
            terminated: false,
            blank,
        });
    }
    pieces
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A character that is part of a statement (not whitespace, not a comment).
    Code,
    /// A top-level `;`.
    End,
}

/// Walks the text once, reporting statement characters and terminators by byte offset;
/// returns the state at the end.
fn scan(text: &str, mut emit: impl FnMut(usize, Event)) -> State {
    let mut state = State::Normal;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        match state {
            State::Normal => match c {
                ';' => emit(i, Event::End),
                '-' if next == Some('-') => {
                    chars.next();
                    state = State::LineComment;
                }
                '/' if next == Some('*') => {
                    chars.next();
                    state = State::BlockComment;
                }
                '\'' | '"' | '`' => {
                    emit(i, Event::Code);
                    state = State::Quote(c);
                }
                c if c.is_whitespace() => {}
                _ => emit(i, Event::Code),
            },
            State::Quote(q) => {
                if c == q {
                    // A doubled quote is an escaped quote, not the end.
                    if next == Some(q) {
                        chars.next();
                    } else {
                        state = State::Normal;
                    }
                }
            }
            State::LineComment => {
                if c == '\n' {
                    state = State::Normal;
                }
            }
            State::BlockComment => {
                if c == '*' && next == Some('/') {
                    chars.next();
                    state = State::Normal;
                }
            }
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<(String, bool, bool)> {
        split(s).into_iter().map(|p| (p.text.to_string(), p.terminated, p.blank)).collect()
    }

    #[test]
    fn splits_at_top_level_semicolons() {
        assert_eq!(
            texts("select 1; select ';' ; -- a;b\nselect \"x;\" /* ; */;"),
            vec![
                ("select 1;".into(), true, false),
                (" select ';' ;".into(), true, false),
                (" -- a;b\nselect \"x;\" /* ; */;".into(), true, false),
            ]
        );
    }

    #[test]
    fn unterminated_and_blank_tails() {
        assert_eq!(
            texts("select 1; select 2"),
            vec![("select 1;".into(), true, false), (" select 2".into(), false, false)]
        );
        assert_eq!(
            texts("select 1; -- done\n"),
            vec![("select 1;".into(), true, false), (" -- done\n".into(), false, true)]
        );
        assert_eq!(texts(""), vec![("".into(), false, true)]);
        assert_eq!(texts("select 'it''s;'"), vec![("select 'it''s;'".into(), false, false)]);
    }

    #[test]
    fn positions_map_back() {
        let p = split("select 1;\n  select x\nfrom t;");
        assert_eq!((p[1].line, p[1].column), (1, 10));
        // "from" is on line 3 of the input, line 2 of the piece.
        assert_eq!(p[1].absolute(3, 1), (3, 1));
        assert_eq!(p[1].absolute(2, 3), (2, 3));
        assert_eq!(p[1].absolute(1, 4), (1, 13));
    }

    #[test]
    fn code_line_skips_comments() {
        let p = split("-- c\nselect 1;\n\n /* x\n */ select 2");
        assert_eq!((p[0].code_line, p[1].code_line), (2, 5));
    }

    #[test]
    fn first_code_skips_whitespace_and_comments() {
        assert_eq!(first_code("  -- c\n /* d */ \\d"), Some(16));
        assert_eq!(first_code(" 'x'"), Some(1));
        assert_eq!(first_code(" -- only a comment"), None);
    }

    #[test]
    fn open_states() {
        assert!(ends_open("select 'abc"));
        assert!(ends_open("select /* x"));
        assert!(!ends_open("select 1 -- x"));
        assert!(!ends_open("select 'a''b'"));
    }
}
