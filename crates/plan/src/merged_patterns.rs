//! Several pattern tests of one string joined by OR in a filter's conjunct (`s LIKE '%a%' OR
//! s ~ 'b+' OR …`) as one DFA: seed 000 ch. 6's multi-pattern matching. Each test becomes a piece of one regular
//! expression that searches anywhere in the string (a LIKE or a full match anchored with
//! `\A…\z`, options as inline flags), their alternation is compiled once
//! (`RegexDfa::new`), and the string is walked once instead of once per test. The DFA of
//! an alternation accepts exactly where one of its pieces does, and a NULL string is NULL in
//! each test and in the merged one, so the answer is the OR's. Tests stay apart where one
//! is negated, a plan template's parameter (its pattern changes per run) or a LIKE without
//! a DFA; the tests of one string join a merged one in order while its table fits in shared
//! memory (`SHARED_TABLE_ENTRIES`), and the next starts another;
//! LIKE tests only where LIKE runs as a DFA anyway (`SET like_dfa`). `SET merged_patterns`
//! switches it (on by default).

use crate::expr::{BinaryOp, Expr, LikeItem};
use crate::regex::{RegexDfa, RegexOptions, SHARED_TABLE_ENTRIES};
use gpusql_common::DataType;
use std::sync::Arc;

/// The filter `predicate` with each of its conjuncts that is an OR of two or more pattern
/// tests of one string merged into one test (LIKE tests among them where `likes`).
pub fn merge_pattern_disjunctions(predicate: Expr, likes: bool) -> Expr {
    let merged = predicate.conjuncts().into_iter().map(|c| match c {
        Expr::Binary { op: BinaryOp::Or, .. } => {
            let mut terms = vec![];
            flatten_or(c, &mut terms);
            merge_or(terms, likes)
        }
        other => other,
    });
    merged
        .reduce(|a, b| Expr::Binary { op: BinaryOp::And, left: Box::new(a), right: Box::new(b), ty: DataType::Boolean })
        .expect("a predicate has a conjunct")
}

/// The piece of a merged expression that `test` contributes, and the string it tests; None
/// where it cannot be merged.
fn piece(test: &Expr, likes: bool) -> Option<(String, &Expr)> {
    match test {
        Expr::Like { expr, pattern, negated: false } if likes && pattern.source.is_none() && pattern.dfa.is_some() => {
            Some((format!("\\A(?s:{})\\z", like_regex(&pattern.items)), expr))
        }
        Expr::Regex { expr, dfa, negated: false } if !dfa.find => {
            let RegexOptions { case_insensitive, dot_matches_newline, literal } = dfa.options;
            let body = if literal { regex_syntax::escape(&dfa.pattern) } else { dfa.pattern.clone() };
            let flags =
                format!("{}{}", if case_insensitive { "i" } else { "" }, if dot_matches_newline { "s" } else { "" });
            let group = if flags.is_empty() { format!("(?:{body})") } else { format!("(?{flags}:{body})") };
            Some((if dfa.full { format!("\\A{group}\\z") } else { group }, expr))
        }
        _ => None,
    }
}

/// LIKE's items as a regular expression (without the `(?s)` the caller puts around it):
/// `%` any run of characters, `_` one, the other bytes literal.
pub fn like_regex(items: &[LikeItem]) -> String {
    let mut regex = String::new();
    let mut literal = vec![];
    let flush = |literal: &mut Vec<u8>, regex: &mut String| {
        regex.push_str(&regex_syntax::escape(&String::from_utf8_lossy(literal)));
        literal.clear();
    };
    for item in items {
        match item {
            LikeItem::Byte(b) => literal.push(*b),
            LikeItem::One => {
                flush(&mut literal, &mut regex);
                regex.push('.');
            }
            LikeItem::Any => {
                flush(&mut literal, &mut regex);
                regex.push_str(".*");
            }
        }
    }
    flush(&mut literal, &mut regex);
    regex
}

/// The OR of `terms` with the mergeable tests of each string as one.
fn merge_or(terms: Vec<Expr>, likes: bool) -> Expr {
    // The mergeable tests, grouped by the string they test (in order of first appearance).
    let mut groups: Vec<(Expr, Vec<usize>)> = vec![];
    for (i, t) in terms.iter().enumerate() {
        if let Some((_, s)) = piece(t, likes) {
            match groups.iter_mut().find(|(g, _)| g == s) {
                Some((_, members)) => members.push(i),
                None => groups.push((s.clone(), vec![i])),
            }
        }
    }
    let mut replaced: Vec<Option<Expr>> = terms.iter().map(|_| None).collect();
    let mut dropped = vec![false; terms.len()];
    for (s, members) in groups.into_iter().filter(|(_, m)| m.len() > 1) {
        // In order, each test joins the current set while their DFA fits; a set of two or
        // more becomes one test.
        let mut flush = |set: &[usize], dfa: Option<RegexDfa>| {
            if let (true, Some(dfa)) = (set.len() > 1, dfa) {
                replaced[set[0]] = Some(Expr::Regex { expr: Box::new(s.clone()), dfa: Arc::new(dfa), negated: false });
                for &i in &set[1..] {
                    dropped[i] = true;
                }
            }
        };
        let (mut set, mut pieces, mut dfa): (Vec<usize>, Vec<String>, Option<RegexDfa>) = (vec![], vec![], None);
        for i in members {
            let Some((p, _)) = piece(&terms[i], likes) else { continue };
            let candidate = [pieces.as_slice(), std::slice::from_ref(&p)].concat();
            match RegexDfa::new(&candidate.join("|"), RegexOptions::default(), false) {
                Ok(d) if d.next.len() <= SHARED_TABLE_ENTRIES => {
                    set.push(i);
                    pieces = candidate;
                    dfa = Some(d);
                }
                _ => {
                    flush(&set, dfa.take());
                    (set, pieces) = (vec![i], vec![p]);
                }
            }
        }
        flush(&set, dfa);
    }
    let kept = terms.into_iter().zip(replaced).zip(dropped).filter(|(_, d)| !d).map(|((t, r), _)| r.unwrap_or(t));
    kept.reduce(|a, b| Expr::Binary { op: BinaryOp::Or, left: Box::new(a), right: Box::new(b), ty: DataType::Boolean })
        .expect("an OR has terms")
}

fn flatten_or(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => {
            flatten_or(*left, out);
            flatten_or(*right, out);
        }
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::LikePattern;
    use gpusql_common::ScalarValue;

    fn col() -> Expr {
        Expr::Column { index: 0, ty: DataType::Utf8, nullable: true, name: "s".into() }
    }
    fn like(p: &str) -> Expr {
        Expr::Like { expr: Box::new(col()), pattern: LikePattern::new(p, None).unwrap(), negated: false }
    }
    fn regex(p: &str, o: &str, full: bool) -> Expr {
        let dfa = RegexDfa::new(p, RegexOptions::parse(o).unwrap(), full).unwrap();
        Expr::Regex { expr: Box::new(col()), dfa: Arc::new(dfa), negated: false }
    }
    fn or(a: Expr, b: Expr) -> Expr {
        Expr::Binary { op: BinaryOp::Or, left: Box::new(a), right: Box::new(b), ty: DataType::Boolean }
    }
    fn truth(e: &Expr, s: Option<&str>) -> ScalarValue {
        let row = [s.map_or(ScalarValue::Null, |s| ScalarValue::Utf8(s.into()))];
        crate::eval::eval(e, &row).unwrap()
    }

    /// The merged test answers as the OR of its tests on strings that each piece decides.
    #[test]
    fn merged_tests_answer_as_the_or() {
        let tests = [
            like("%fur%ly%"),
            like("a_c"),
            regex("^x+$", "", false),
            regex("QUICK", "i", false),
            regex("a.b", "s", true),
            regex("1.5", "l", false),
            like("%100\\%%"),
        ];
        let or_all = tests.iter().cloned().reduce(or).unwrap();
        let merged = merge_pattern_disjunctions(or_all.clone(), true);
        assert!(matches!(merged, Expr::Regex { .. }), "{merged}");
        for s in
            ["the furiously", "abc", "aéc", "xx", "x", "a quick fox", "a\nb", "a\nbc", "1.5", "125", "x100%", "", "fur"]
        {
            assert_eq!(truth(&merged, Some(s)), truth(&or_all, Some(s)), "{s:?}");
        }
        assert_eq!(truth(&merged, None), ScalarValue::Null);
    }

    /// Other terms stay where they are; negated tests and other strings are not merged.
    #[test]
    fn only_tests_of_one_string_merge() {
        let other = Expr::Like {
            expr: Box::new(Expr::Column { index: 1, ty: DataType::Utf8, nullable: true, name: "t".into() }),
            pattern: LikePattern::new("%a%", None).unwrap(),
            negated: false,
        };
        let negated =
            Expr::Like { expr: Box::new(col()), pattern: LikePattern::new("%b%", None).unwrap(), negated: true };
        let e = or(or(like("%a%"), other.clone()), or(negated.clone(), like("%c%")));
        let merged = merge_pattern_disjunctions(e, true);
        let mut terms = vec![];
        flatten_or(merged, &mut terms);
        assert_eq!(terms.len(), 3);
        assert!(matches!(&terms[0], Expr::Regex { .. }));
        assert_eq!(terms[1], other);
        assert_eq!(terms[2], negated);
    }
}
