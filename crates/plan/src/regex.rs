//! Regular expressions (`regexp_matches`, `regexp_full_match`, `~`, `SIMILAR TO`) as a
//! minimal DFA, the form seed 000's chapter 6 gives them on the GPU: the pattern is parsed
//! and compiled on the host (by `regex-automata`, which determinizes and minimizes), and
//! its transitions are copied into a dense table that both backends walk one byte per
//! step (`RegexDfa::matches`; the CUDA twin is `dfa_match` in prelude.cu).
//!
//! The table is ours, not regex-automata's, so the kernel needs none of its encodings:
//! - the bytes fall into classes that no state tells apart (`classes`, one byte each);
//! - states are numbered from 0: state 0 is the sink "no match possible", state 1 the sink
//!   "a match was found" (a DFA in a match state has seen a match end; for a yes/no answer
//!   nothing after it matters), both absorbing;
//! - row `s` of `next` holds the next state per class, then one more column: the state
//!   after the end of the input, which is 1 where a match ends there (`$`, `\b`).
//!
//! So a walk is `s = next[s * columns + classes[byte]]` until the string ends or `s <= 1`,
//! and the answer is `next[s * columns + classes_count] == 1`.
//!
//! The syntax is DuckDB's (RE2's). regex-syntax reads almost all of it the same; where the
//! two differ, the pattern is rewritten before it is parsed (`re2_to_rust`): `\d`, `\w`,
//! `\s` and `\b` are ASCII in RE2, `\Q…\E` quotes, and inside a bracket class `[`, `&&`,
//! `--` and `~~` are plain characters.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A regex DFA of more states than this, or of a table larger than `MAX_TABLE_ENTRIES`,
/// is refused (the table's entries are 16-bit state numbers).
const MAX_STATES: usize = 1 << 15;
const MAX_TABLE_ENTRIES: usize = 1 << 22;
/// Memory regex-automata may use while determinizing and for the DFA it builds.
const BUILD_LIMIT: usize = 64 << 20;

/// A DFA whose table has at most this many entries is copied into shared memory by each
/// block of a kernel (16 KiB of `uint16_t`); a larger one is read through the read-only
/// cache, and a LIKE pattern with one keeps its wildcard matcher.
pub const SHARED_TABLE_ENTRIES: usize = 8192;

/// LIKE patterns whose DFAs the process keeps (all are dropped when there are more).
const LIKE_DFAS_KEPT: usize = 1024;

/// DuckDB's options of regexp_matches (the third argument): letters applied in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegexOptions {
    /// 'i' (on) / 'c' (off).
    pub case_insensitive: bool,
    /// 's': `.` also matches a newline.
    pub dot_matches_newline: bool,
    /// 'l': the pattern is a literal string.
    pub literal: bool,
}

impl RegexOptions {
    /// Parses DuckDB's option letters (`regexp_matches(s, p, 'i')`).
    pub fn parse(letters: &str) -> Result<RegexOptions, RegexError> {
        let mut o = RegexOptions::default();
        for c in letters.chars() {
            match c {
                'c' => o.case_insensitive = false,
                'i' => o.case_insensitive = true,
                's' => o.dot_matches_newline = true,
                'l' => o.literal = true,
                // DuckDB's newline-sensitive modes: not implemented here.
                'm' | 'n' | 'p' => return Err(RegexError::NotSupported(format!("regex option '{c}'"))),
                'g' => {
                    return Err(RegexError::Invalid(
                        "Option 'g' (global replace) is only valid for regexp_replace".into(),
                    ))
                }
                _ => return Err(RegexError::Invalid(format!("Unrecognized Regex option {c}"))),
            }
        }
        Ok(o)
    }

    /// The letters that give these options (for display: `regexp_matches(x, 'p', 'i')`).
    pub fn letters(&self) -> String {
        let mut s = String::new();
        if self.case_insensitive {
            s.push('i');
        }
        if self.dot_matches_newline {
            s.push('s');
        }
        if self.literal {
            s.push('l');
        }
        s
    }
}

/// Why a pattern was not compiled.
#[derive(Debug, Clone, PartialEq)]
pub enum RegexError {
    /// The pattern or an option is invalid (DuckDB refuses it too).
    Invalid(String),
    /// Valid, but this engine does not implement it.
    NotSupported(String),
}

/// A compiled regular expression: the pattern as written and its DFA table (module doc).
#[derive(Debug, Clone)]
pub struct RegexDfa {
    pub pattern: String,
    pub options: RegexOptions,
    /// The whole string must match (regexp_full_match, SIMILAR TO), not some part of it.
    pub full: bool,
    /// The DFAs that find a match's bounds (`new_find`), not only whether there is one.
    pub find: bool,
    pub classes: [u8; 256],
    pub classes_count: usize,
    /// `states × (classes_count + 1)` next states, row by row.
    pub next: Vec<u16>,
    pub start: u16,
}

/// Two DFAs of one pattern, options and kind are the same DFA.
impl PartialEq for RegexDfa {
    fn eq(&self, other: &RegexDfa) -> bool {
        self.pattern == other.pattern
            && self.options == other.options
            && self.full == other.full
            && self.find == other.find
    }
}

impl RegexDfa {
    pub fn new(pattern: &str, options: RegexOptions, full: bool) -> Result<RegexDfa, RegexError> {
        let (translated, config) = prepare(pattern, options)?;
        // Full match: anchored at the start, and `\z` after the pattern.
        let text = if full { format!("(?:{translated})\\z") } else { translated };
        let dfa = dense::Builder::new()
            .configure(dfa_config().start_kind(if full { StartKind::Anchored } else { StartKind::Unanchored }))
            .syntax(config)
            .build(&text)
            .map_err(|e| build_error(pattern, e))?;
        let anchored = if full { Anchored::Yes } else { Anchored::No };
        let start = dfa
            .start_state_forward(&Input::new(&b""[..]).anchored(anchored))
            .map_err(|e| RegexError::Invalid(format!("regular expression '{pattern}': {e}")))?;
        let (rows, start) = explore(&dfa, start).ok_or_else(|| too_large(pattern))?;
        let (classes, classes_count, next) = table(&rows, &[]).ok_or_else(|| too_large(pattern))?;
        Ok(RegexDfa { pattern: pattern.to_string(), options, full, find: false, classes, classes_count, next, start })
    }

    /// The DFAs that find where the leftmost-first match starts and ends (regexp_extract,
    /// regexp_replace), as regex-automata's own search does: a forward DFA of the pattern
    /// with a leading `.*?` reads from the search's start and sees each match end (the last
    /// one seen before it dies is the end); a reverse DFA of the reversed pattern, anchored
    /// at that end, reads backwards to the leftmost start. Both share one table (rows of
    /// the forward DFA, then of the reverse one; state 0 the dead state of both), and each
    /// entry carries `MATCH_FLAG` where its target is a match state: a match ends (or, in
    /// reverse, starts) before the byte just read. The last column is the flag after the
    /// end of the input. Start states depend on the byte before the search's start (`\b`,
    /// `^`): two tables of 257 start states (indexed by that byte, 256 where there is
    /// none) follow the rows, the forward one first (`RegexDfa::find_at`; `dfa_find` on
    /// the GPU).
    pub fn new_find(pattern: &str, options: RegexOptions) -> Result<RegexDfa, RegexError> {
        let (text, config) = prepare(pattern, options)?;
        let forward = dense::Builder::new()
            .configure(dfa_config().start_kind(StartKind::Unanchored))
            .syntax(config)
            .build(&text)
            .map_err(|e| build_error(pattern, e))?;
        let reverse = dense::Builder::new()
            .configure(dfa_config().start_kind(StartKind::Anchored).match_kind(MatchKind::All))
            .syntax(config)
            .thompson(thompson::Config::new().reverse(true))
            .build(&text)
            .map_err(|e| build_error(pattern, e))?;
        let invalid =
            |e: regex_automata::MatchError| RegexError::Invalid(format!("regular expression '{pattern}': {e}"));
        let mut rows = vec![Row { bytes: [0; 256], eoi: 0 }];
        let mut starts = vec![];
        for (dfa, forward) in [(&forward, true), (&reverse, false)] {
            let mut ids = HashMap::new();
            for context in 0..=256usize {
                let byte = [context as u8];
                let start = match (forward, context) {
                    (true, 256) => dfa.start_state_forward(&Input::new(&b""[..])),
                    (true, _) => dfa.start_state_forward(&Input::new(&byte[..]).range(1..)),
                    (false, 256) => dfa.start_state_reverse(&Input::new(&b""[..]).anchored(Anchored::Yes)),
                    (false, _) => dfa.start_state_reverse(&Input::new(&byte[..]).range(..0).anchored(Anchored::Yes)),
                }
                .map_err(invalid)?;
                // (Matches are seen one byte late: a start state is never a match state.)
                if dfa.is_match_state(start) {
                    return Err(RegexError::NotSupported(format!(
                        "regular expression '{pattern}' in regexp_extract / regexp_replace"
                    )));
                }
                starts.push(explore_into(dfa, start, &mut rows, &mut ids, false).ok_or_else(|| too_large(pattern))?);
            }
        }
        let (classes, classes_count, next) = table(&rows, &starts).ok_or_else(|| too_large(pattern))?;
        Ok(RegexDfa {
            pattern: pattern.to_string(),
            options,
            full: false,
            find: true,
            classes,
            classes_count,
            next,
            start: 0,
        })
    }

    /// The leftmost-first match of a find DFA (`new_find`) that starts at or after `from`
    /// (a char boundary of `s`), as (start, end): the walk `dfa_find` does on the GPU.
    pub fn find_at(&self, s: &[u8], from: usize) -> Option<(usize, usize)> {
        let columns = self.classes_count + 1;
        let starts = self.next.len() - 2 * FIND_CONTEXTS;
        let step = |state: usize, b: u8| self.next[state * columns + self.classes[b as usize] as usize];
        let flag = |e: u16| e & MATCH_FLAG != 0;
        let context = |i: usize| if i < s.len() { s[i] as usize } else { FIND_CONTEXTS - 1 };
        let before = |i: usize| if i > 0 { s[i - 1] as usize } else { FIND_CONTEXTS - 1 };
        let mut state = self.next[starts + before(from)] as usize;
        let mut end = None;
        for (i, &b) in s.iter().enumerate().skip(from) {
            let e = step(state, b);
            if flag(e) {
                end = Some(i);
            }
            state = (e & !MATCH_FLAG) as usize;
            if state == 0 {
                break;
            }
        }
        if state != 0 && flag(self.next[state * columns + columns - 1]) {
            end = Some(s.len());
        }
        let end = end?;
        let mut state = self.next[starts + FIND_CONTEXTS + context(end)] as usize;
        let mut start = end;
        for i in (from..end).rev() {
            let e = step(state, s[i]);
            if flag(e) {
                start = i + 1;
            }
            state = (e & !MATCH_FLAG) as usize;
            if state == 0 {
                break;
            }
        }
        if state != 0 {
            let e = if from > 0 { step(state, s[from - 1]) } else { self.next[state * columns + columns - 1] };
            if flag(e) {
                start = from;
            }
        }
        Some((start, end))
    }

    /// Whether `s` matches (the walk of the module doc; `dfa_match` on the GPU).
    pub fn matches(&self, s: &[u8]) -> bool {
        let columns = self.classes_count + 1;
        let mut state = self.start as usize;
        for &b in s {
            if state <= 1 {
                break;
            }
            state = self.next[state * columns + self.classes[b as usize] as usize] as usize;
        }
        self.next[state * columns + self.classes_count] == 1
    }

    /// regexp_extract(s, p): the first match of a find DFA, or nothing.
    pub fn extract<'a>(&self, s: &'a [u8]) -> &'a [u8] {
        self.find_at(s, 0).map_or(&s[..0], |(b, e)| &s[b..e])
    }

    /// regexp_replace(s, p, rewrite [, 'g']) with a find DFA, as RE2's Replace and
    /// GlobalReplace: the first match (`global`: each match, left to right) replaced by
    /// `rewrite` (checked by `check_rewrite`). After a match, the search goes on at its end;
    /// an empty match where the last match ended is not taken, and the next character is
    /// copied instead. `strings.cu`'s `str_regexp_replace` is the GPU's twin.
    pub fn replace(&self, s: &[u8], rewrite: &[u8], global: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        let (mut p, mut last_end) = (0, None);
        while p <= s.len() {
            let Some((b, e)) = self.find_at(s, p) else { break };
            out.extend_from_slice(&s[p..b]);
            if b == e && last_end == Some(b) {
                // (A UTF-8 character: the text is valid UTF-8.)
                let n = if p < s.len() { utf8_width(s[p]).min(s.len() - p) } else { 1 };
                out.extend_from_slice(&s[p.min(s.len())..(p + n).min(s.len())]);
                p += n;
                continue;
            }
            apply_rewrite(&mut out, rewrite, &s[b..e]);
            p = e;
            last_end = Some(e);
            if !global {
                break;
            }
        }
        if p < s.len() {
            out.extend_from_slice(&s[p..]);
        }
        out
    }

    /// LIKE's pattern (`%` any run of characters, `_` one character, the other items
    /// literal bytes in whole characters) as a DFA of the whole string; None where its table
    /// would not fit in shared memory (`SHARED_TABLE_ENTRIES`). Built once per pattern in
    /// the process (a build takes ~1 ms, and a plan template compiles its pattern per run).
    pub fn from_like(items: &[crate::expr::LikeItem]) -> Option<Arc<RegexDfa>> {
        let regex = format!("(?s){}", crate::merged_patterns::like_regex(items));
        static BUILT: Mutex<Option<HashMap<String, Option<Arc<RegexDfa>>>>> = Mutex::new(None);
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        let built = built.get_or_insert_with(HashMap::new);
        if let Some(dfa) = built.get(&regex) {
            return dfa.clone();
        }
        let dfa = RegexDfa::new(&regex, RegexOptions::default(), true).ok();
        let dfa = dfa.filter(|d| d.next.len() <= SHARED_TABLE_ENTRIES).map(Arc::new);
        if built.len() >= LIKE_DFAS_KEPT {
            built.clear();
        }
        built.insert(regex, dfa.clone());
        dfa
    }

    /// The entries of the table's shared-memory copy: its size rounded up to a power of two,
    /// so patterns of similar sizes share a kernel.
    pub fn shared_entries(&self) -> usize {
        self.next.len().next_power_of_two().max(256)
    }

    /// The number of states (the two sinks included).
    pub fn states(&self) -> usize {
        self.next.len() / (self.classes_count + 1)
    }
}

/// The length of the UTF-8 character that starts with byte `b`.
fn utf8_width(b: u8) -> usize {
    match b {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// Checks regexp_replace's rewrite string as RE2 does: a backslash is followed by a digit
/// or a backslash. `\0` (the match) is taken; `\1`..`\9` (capture groups, which the
/// DFAs do not track) are not supported.
pub fn check_rewrite(rewrite: &str) -> Result<(), RegexError> {
    let b = rewrite.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            match b.get(i + 1) {
                Some(b'\\' | b'0') => {}
                Some(d) if d.is_ascii_digit() => {
                    return Err(RegexError::NotSupported(format!(
                        "regexp_replace with a capture group in its replacement (\\{})",
                        *d as char
                    )))
                }
                _ => {
                    return Err(RegexError::Invalid(
                        "Invalid replacement string for regexp_replace: Rewrite schema error: '\\' must be followed by a digit or '\\'.".into(),
                    ))
                }
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Appends `rewrite` (checked) with `\0` replaced by `matched` and `\\` by a backslash.
fn apply_rewrite(out: &mut Vec<u8>, rewrite: &[u8], matched: &[u8]) {
    let mut i = 0;
    while i < rewrite.len() {
        if rewrite[i] == b'\\' && i + 1 < rewrite.len() {
            if rewrite[i + 1] == b'0' {
                out.extend_from_slice(matched);
            } else {
                out.push(rewrite[i + 1]);
            }
            i += 2;
        } else {
            out.push(rewrite[i]);
            i += 1;
        }
    }
}

/// RE2 refuses counted repetitions above 1000 (`a{1001}`).
const MAX_REPETITION: u32 = 1000;

/// The largest count of a counted repetition in `pattern` (parsed without error before).
fn largest_repetition(pattern: &str) -> Option<u32> {
    use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
    struct Largest(Option<u32>);
    impl regex_syntax::ast::Visitor for Largest {
        type Output = Option<u32>;
        type Err = ();
        fn finish(self) -> Result<Option<u32>, ()> {
            Ok(self.0)
        }
        fn visit_pre(&mut self, ast: &Ast) -> Result<(), ()> {
            if let Ast::Repetition(r) = ast {
                if let RepetitionKind::Range(range) = &r.op.kind {
                    let n = match *range {
                        RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => n,
                        RepetitionRange::Bounded(_, n) => n,
                    };
                    self.0 = self.0.max(Some(n));
                }
            }
            Ok(())
        }
    }
    let ast = regex_syntax::ast::parse::Parser::new().parse(pattern).ok()?;
    regex_syntax::ast::visit(&ast, Largest(None)).ok().flatten()
}

/// One state's transitions in our numbering: per byte, and at the end of the input.
struct Row {
    bytes: [u16; 256],
    eoi: u16,
}

/// The states reachable from `start`, renumbered (0 and 1 the sinks; match states all
/// become 1, whose row is all 1s). None when there are too many.
fn explore(dfa: &dense::DFA<Vec<u32>>, start: regex_automata::util::primitives::StateID) -> Option<(Vec<Row>, u16)> {
    let mut rows = vec![Row { bytes: [0; 256], eoi: 0 }, Row { bytes: [1; 256], eoi: 1 }];
    let start = explore_into(dfa, start, &mut rows, &mut HashMap::new(), true)?;
    Some((rows, start))
}

/// In a find DFA's table (`RegexDfa::new_find`): the bit of an entry whose target is a
/// match state (state numbers take the other 15).
pub const MATCH_FLAG: u16 = 0x8000;
/// The start states of a find DFA per search position: one per byte before it, and one
/// where there is none.
pub const FIND_CONTEXTS: usize = 257;

/// Numbers the states reachable from `start` into `rows` (shared by the DFAs of one table;
/// `ids` this DFA's numbering; row 0 the dead state): where `collapse`, every match state
/// is state 1 (the sink "a match was found", row 1); otherwise match states stay states
/// and the entries that lead to them carry `MATCH_FLAG`. The number of `start`, or None
/// when there are too many states.
fn explore_into(
    dfa: &dense::DFA<Vec<u32>>,
    start: regex_automata::util::primitives::StateID,
    rows: &mut Vec<Row>,
    ids: &mut HashMap<regex_automata::util::primitives::StateID, u16>,
    collapse: bool,
) -> Option<u16> {
    let mut queue = vec![];
    let mut id_of = |s, rows: &mut Vec<Row>, queue: &mut Vec<_>| -> Option<u16> {
        if dfa.is_dead_state(s) || dfa.is_quit_state(s) {
            return Some(0);
        }
        if collapse && dfa.is_match_state(s) {
            return Some(1);
        }
        if let Some(&id) = ids.get(&s) {
            return Some(id);
        }
        if rows.len() >= MAX_STATES {
            return None;
        }
        let id = rows.len() as u16;
        rows.push(Row { bytes: [0; 256], eoi: 0 });
        ids.insert(s, id);
        queue.push((s, id));
        Some(id)
    };
    let flag = |t| if !collapse && dfa.is_match_state(t) { MATCH_FLAG } else { 0 };
    let start_id = id_of(start, rows, &mut queue)?;
    while let Some((s, id)) = queue.pop() {
        for b in 0..=255u8 {
            let t = dfa.next_state(s, b);
            rows[id as usize].bytes[b as usize] = id_of(t, rows, &mut queue)? | flag(t);
        }
        let matched = dfa.is_match_state(dfa.next_eoi_state(s));
        rows[id as usize].eoi = match (collapse, matched) {
            (_, false) => 0,
            (true, true) => 1,
            (false, true) => MATCH_FLAG,
        };
    }
    Some(start_id)
}

/// The byte classes of `rows` and their table (a row per state, a column per class and
/// one for the end of the input), followed by `extra`; None when it is too large.
fn table(rows: &[Row], extra: &[u16]) -> Option<([u8; 256], usize, Vec<u16>)> {
    let (classes, classes_count) = byte_classes(rows);
    let columns = classes_count + 1;
    if rows.len() * columns + extra.len() > MAX_TABLE_ENTRIES {
        return None;
    }
    // Each class's representative byte: the first byte of the class.
    let mut representative = vec![0u8; classes_count];
    for b in (0..256usize).rev() {
        representative[classes[b] as usize] = b as u8;
    }
    let mut next = Vec::with_capacity(rows.len() * columns + extra.len());
    for row in rows {
        next.extend(representative.iter().map(|&b| row.bytes[b as usize]));
        next.push(row.eoi);
    }
    next.extend_from_slice(extra);
    Some((classes, classes_count, next))
}

/// `pattern` in regex-syntax's spelling (`re2_to_rust`; escaped where `options.literal`),
/// checked, with the syntax configuration of `options`.
fn prepare(pattern: &str, options: RegexOptions) -> Result<(String, syntax::Config), RegexError> {
    let (translated, positions) =
        if options.literal { (regex_syntax::escape(pattern), vec![]) } else { re2_to_rust(pattern) };
    // Parsed first on its own, for an error with the position in the pattern as written.
    if let Err(e) = regex_syntax::ParserBuilder::new().build().parse(&translated) {
        return Err(RegexError::Invalid(syntax_message(&e, pattern, &positions)));
    }
    if let Some(n) = largest_repetition(&translated).filter(|&n| n > MAX_REPETITION) {
        return Err(RegexError::Invalid(format!("invalid repetition size: {{{n}}} in '{pattern}'")));
    }
    let config = syntax::Config::new()
        .unicode(true)
        .utf8(true)
        .case_insensitive(options.case_insensitive)
        .dot_matches_new_line(options.dot_matches_newline);
    Ok((translated, config))
}

/// The determinization settings of every DFA here (minimal, ASCII word boundaries, the
/// memory limits).
fn dfa_config() -> dense::Config {
    dense::Config::new()
        .minimize(true)
        .unicode_word_boundary(false)
        .dfa_size_limit(Some(BUILD_LIMIT))
        .determinize_size_limit(Some(BUILD_LIMIT))
}

fn build_error(pattern: &str, e: dense::BuildError) -> RegexError {
    let m = e.to_string();
    if m.contains("Unicode word boundar") {
        RegexError::NotSupported("a Unicode word boundary in a regular expression".into())
    } else if m.contains("exceeded") || m.contains("limit") {
        too_large(pattern)
    } else {
        RegexError::Invalid(format!("invalid regular expression '{pattern}': {m}"))
    }
}

fn too_large(pattern: &str) -> RegexError {
    RegexError::NotSupported(format!("regular expression '{pattern}': its DFA is too large"))
}

/// Bytes that every state sends to the same next state share a class.
fn byte_classes(rows: &[Row]) -> ([u8; 256], usize) {
    let mut classes = [0u8; 256];
    let mut seen: HashMap<Vec<u16>, u8> = HashMap::new();
    for (b, class) in classes.iter_mut().enumerate() {
        let column: Vec<u16> = rows.iter().map(|r| r.bytes[b]).collect();
        let n = seen.len() as u8;
        *class = *seen.entry(column).or_insert(n);
    }
    (classes, seen.len())
}

/// A parse error with its position in the pattern as written (1-based characters).
fn syntax_message(e: &regex_syntax::Error, pattern: &str, positions: &[usize]) -> String {
    let (kind, at) = match e {
        regex_syntax::Error::Parse(p) => (p.kind().to_string(), p.span().start.offset),
        regex_syntax::Error::Translate(t) => (t.kind().to_string(), t.span().start.offset),
        other => (other.to_string(), 0),
    };
    let original = positions.get(at).copied().unwrap_or_else(|| pattern.chars().count());
    format!("invalid regular expression '{pattern}' at position {}: {kind}", original + 1)
}

/// The ASCII classes RE2 means by `\d`, `\w`, `\s` (`\s` without `\v`), as class items.
fn perl_class(c: char) -> Option<(&'static str, bool)> {
    match c {
        'd' => Some(("0-9", false)),
        'D' => Some(("0-9", true)),
        'w' => Some(("0-9A-Za-z_", false)),
        'W' => Some(("0-9A-Za-z_", true)),
        's' => Some((r"\t\n\x0C\r ", false)),
        'S' => Some((r"\t\n\x0C\r ", true)),
        _ => None,
    }
}

/// `pattern` in RE2's syntax rewritten into regex-syntax's (module doc), with the
/// character index in `pattern` of each byte of the result (for error positions).
pub fn re2_to_rust(pattern: &str) -> (String, Vec<usize>) {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut at = vec![];
    let mut push = |out: &mut String, s: &str, i: usize| {
        out.push_str(s);
        at.extend(std::iter::repeat_n(i, s.len()));
    };
    let mut in_class = false;
    // Index of the character after the class's `[` (and `^`): a `]` there is literal.
    let mut class_start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let n = chars[i + 1];
            if n == 'Q' {
                // \Q…\E: every character up to \E (or the end) stands for itself.
                let mut j = i + 2;
                while j < chars.len() && !(chars[j] == '\\' && chars.get(j + 1) == Some(&'E')) {
                    push(&mut out, &regex_syntax::escape(&chars[j].to_string()), j);
                    j += 1;
                }
                i = if j < chars.len() { j + 2 } else { j };
                continue;
            }
            if let Some((items, negated)) = perl_class(n) {
                // (Inside a class, a negated one is a nested class.)
                let s = match (in_class, negated) {
                    (true, false) => items.to_string(),
                    (_, true) => format!("[^{items}]"),
                    (false, false) => format!("[{items}]"),
                };
                push(&mut out, &s, i);
            } else if !in_class && (n == 'b' || n == 'B') {
                push(&mut out, &format!("(?-u:\\{n})"), i);
            } else {
                let mut s = String::from('\\');
                s.push(n);
                push(&mut out, &s, i);
            }
            i += 2;
            continue;
        }
        if !in_class {
            if c == '[' {
                in_class = true;
                push(&mut out, "[", i);
                i += 1;
                if chars.get(i) == Some(&'^') {
                    push(&mut out, "^", i);
                    i += 1;
                }
                class_start = i;
                continue;
            }
            push(&mut out, &c.to_string(), i);
            i += 1;
            continue;
        }
        // Inside a bracket class.
        if c == ']' && i != class_start {
            in_class = false;
            push(&mut out, "]", i);
        } else if c == ']' {
            push(&mut out, r"\]", i);
        } else if c == '[' && chars.get(i + 1) == Some(&':') {
            // A POSIX class [:name:] (ASCII in both).
            let end = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == ':' && chars[j + 1] == ']');
            let end = end.map_or(chars.len(), |j| j + 2);
            let s: String = chars[i..end].iter().collect();
            push(&mut out, &s, i);
            i = end;
            continue;
        } else if matches!(c, '[' | '&' | '~') || (c == '-' && chars.get(i + 1) == Some(&'-')) {
            push(&mut out, &format!("\\{c}"), i);
        } else {
            push(&mut out, &c.to_string(), i);
        }
        i += 1;
    }
    (out, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        RegexDfa::new(p, RegexOptions::default(), false).unwrap().matches(s.as_bytes())
    }

    #[test]
    fn searches_anywhere_and_full() {
        assert!(m("b", "abc"));
        assert!(!m("^b", "abc"));
        assert!(m("fur.*ly", "the furiously quick"));
        assert!(!m("fur.*ly", "fur"));
        assert!(m("", ""));
        assert!(m("c$", "abc"));
        assert!(!m("a$", "abc"));
        let full = RegexDfa::new("a.c", RegexOptions::default(), true).unwrap();
        assert!(full.matches(b"abc") && !full.matches(b"abcd") && !full.matches(b"xabc"));
        let alt = RegexDfa::new("a|ab", RegexOptions::default(), true).unwrap();
        assert!(alt.matches(b"ab") && alt.matches(b"a") && !alt.matches(b"abb"));
    }

    #[test]
    fn re2_semantics() {
        // `.` is one character (UTF-8), not a newline unless 's'.
        assert!(m("^.$", "é"));
        assert!(!m("a.b", "a\nb"));
        let s = RegexOptions::parse("s").unwrap();
        assert!(RegexDfa::new("a.b", s, false).unwrap().matches(b"a\nb"));
        // \d \w \s are ASCII; \b is an ASCII word boundary.
        assert!(!m(r"\d", "٣") && m(r"\d", "x7"));
        assert!(!m(r"\w", "é") && m(r"[\w]", "_"));
        assert!(!m(r"a\sb", "a\x0bb") && m(r"a\sb", "a b"));
        assert!(m(r"[^\S]", " ") && !m(r"^[^\S]$", "x"));
        assert!(m(r"\bb", "éb") && m(r"\Bb", "ab"));
        // Unicode classes and case folding.
        assert!(m(r"\pL", "é") && !m("[[:alpha:]]", "é"));
        assert!(m("(?i)s", "ſ"));
        let i = RegexOptions::parse("ci").unwrap();
        assert!(RegexDfa::new("A", i, false).unwrap().matches(b"abc"));
        assert!(!RegexDfa::new("A", RegexOptions::parse("ic").unwrap(), false).unwrap().matches(b"abc"));
        // \Q…\E and literal bracket characters.
        assert!(m(r"a\Q.*\E", "xa.*") && !m(r"a\Q.*\E", "abc"));
        assert!(m("[[]", "[") && m("[a&&b]", "&") && m("[]a]", "]"));
        let l = RegexOptions::parse("l").unwrap();
        assert!(RegexDfa::new(".", l, false).unwrap().matches(b"a.c"));
        assert!(!RegexDfa::new(".", l, false).unwrap().matches(b"abc"));
    }

    #[test]
    fn errors_name_the_position() {
        let e = RegexDfa::new("ab(", RegexOptions::default(), false).unwrap_err();
        assert!(matches!(&e, RegexError::Invalid(m) if m.contains("position 3")), "{e:?}");
        let e = RegexDfa::new(r"\d(", RegexOptions::default(), true).unwrap_err();
        assert!(matches!(&e, RegexError::Invalid(m) if m.contains("position 3")), "{e:?}");
        assert!(matches!(RegexOptions::parse("x"), Err(RegexError::Invalid(_))));
        assert!(matches!(RegexOptions::parse("m"), Err(RegexError::NotSupported(_))));
    }

    #[test]
    fn like_patterns_as_dfas() {
        for (pattern, yes, no) in [
            ("%fur%ly%", "the furiously", "fur"),
            ("a_c", "aéc", "aéé"),
            ("%100\\%%", "x100%y", "100"),
            ("", "", "a"),
            ("%", "any\nthing", ""),
            ("_%_", "ab", "a"),
            ("[a]%", "[a]x", "a"),
        ] {
            let p = crate::expr::LikePattern::new(pattern, Some('\\')).unwrap();
            let dfa = p.dfa.as_ref().expect("a small DFA");
            for s in [yes, no] {
                assert_eq!(dfa.matches(s.as_bytes()), p.matches(s.as_bytes()), "{pattern} on {s:?}");
            }
            assert!(dfa.matches(yes.as_bytes()), "{pattern} on {yes:?}");
        }
    }

    /// The DFA of random LIKE patterns answers as the wildcard matcher on random strings
    /// (small alphabets with a 2-byte character and a newline, so `_` and `%` meet them).
    #[test]
    fn like_dfas_match_the_wildcard_matcher() {
        let mut rnd = xorshift(0x9e3779b97f4a7c15);
        let alphabet = ['a', 'b', 'é', '\n', '.'];
        for _ in 0..3000 {
            let pattern: String = (0..rnd(7))
                .map(|_| match rnd(7) {
                    0 => '%',
                    1 => '_',
                    _ => alphabet[rnd(alphabet.len() as u64) as usize],
                })
                .collect();
            let p = crate::expr::LikePattern::new(&pattern, None).unwrap();
            let dfa = p.dfa.clone().expect("a small DFA");
            for _ in 0..20 {
                let s: String = (0..rnd(9)).map(|_| alphabet[rnd(alphabet.len() as u64) as usize]).collect();
                assert_eq!(dfa.matches(s.as_bytes()), p.matches(s.as_bytes()), "{pattern:?} on {s:?}");
            }
        }
    }

    /// Draws below `n` (xorshift64).
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    fn find(p: &str) -> RegexDfa {
        RegexDfa::new_find(p, RegexOptions::default()).unwrap()
    }

    /// regexp_extract / regexp_replace answers DuckDB 2.0.1 gave (RE2's semantics).
    #[test]
    fn extract_and_replace_as_duckdb() {
        let ex = |p: &str, s: &str| String::from_utf8(find(p).extract(s.as_bytes()).to_vec()).unwrap();
        let re = |p: &str, s: &str, r: &str, g: bool| {
            String::from_utf8(find(p).replace(s.as_bytes(), r.as_bytes(), g)).unwrap()
        };
        assert_eq!(ex("[0-9]+", "abc123def456"), "123");
        assert_eq!(ex("[0-9]+", "abc"), "");
        assert_eq!(ex("[a-z]+", "abc123"), "abc");
        assert_eq!(re("x*", "abc", "-", false), "-abc");
        assert_eq!(re("x*", "abc", "-", true), "-a-b-c-");
        assert_eq!(re("a*", "baaa", "-", true), "-b-");
        assert_eq!(re("^a", "aaa", "b", true), "baa");
        assert_eq!(re("[^a-z]", "héllo wörld", "_", true), "h_llo_w_rld");
        assert_eq!(re("", "héllo", "-", true), "-h-é-l-l-o-");
        assert_eq!(re("b", "abc", r"\\", false), r"a\c");
        assert_eq!(re("b", "abc", r"[\0]", false), "a[b]c");
        assert_eq!(re(r"\bb", "foo bar", "B", true), "foo Bar");
        assert_eq!(re("ab", "abab", "X", true), "XX");
        assert_eq!(re("b|", "abab", "X", true), "XaXaX");
        let i = RegexOptions::parse("i").unwrap();
        assert_eq!(RegexDfa::new_find("x", i).unwrap().replace(b"aXbX", b"-", true), b"a-b-");
        assert!(check_rewrite(r"\x").is_err() && check_rewrite(r"a\0\\").is_ok());
        assert!(matches!(check_rewrite(r"\1"), Err(RegexError::NotSupported(_))));
    }

    /// The find DFAs' matches are the `regex` crate's (leftmost-first, as RE2) for random
    /// patterns over a small alphabet, from every start position.
    #[test]
    fn find_dfas_match_the_regex_crate() {
        let mut rnd = xorshift(0x2545f4914f6cdd1d);
        let atoms = ["a", "b", "é", ".", "[ab]", "(?:ab|a)", "(?:|b)", "\\b", "^", "$", " ", "[^a]"];
        let ops = ["", "", "*", "+", "?", "*?", "{1,2}"];
        let alphabet = ['a', 'b', 'é', ' '];
        for _ in 0..2000 {
            let pattern: String = (0..1 + rnd(4))
                .map(|_| format!("{}{}", atoms[rnd(atoms.len() as u64) as usize], ops[rnd(ops.len() as u64) as usize]))
                .collect::<Vec<_>>()
                .join(if rnd(5) == 0 { "|" } else { "" });
            // (In RE2's spelling: `\\b` is ASCII.)
            let Ok(reference) = regex::Regex::new(&re2_to_rust(&pattern).0) else { continue };
            let dfa = find(&pattern);
            for _ in 0..10 {
                let s: String = (0..rnd(8)).map(|_| alphabet[rnd(alphabet.len() as u64) as usize]).collect();
                for from in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                    let want = reference.find_at(&s, from).map(|m| (m.start(), m.end()));
                    assert_eq!(dfa.find_at(s.as_bytes(), from), want, "{pattern:?} on {s:?} from {from}");
                }
            }
        }
    }

    #[test]
    fn tables_are_small() {
        // (`.` matches a whole UTF-8 character: the states and classes of its byte ranges.)
        let d = RegexDfa::new("fur.*ly", RegexOptions::default(), false).unwrap();
        assert!(d.next.len() * 2 <= 1024, "{} states, {} classes", d.states(), d.classes_count);
    }
}
