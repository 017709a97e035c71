//! Comparing two answers as multisets of rows, with `check`'s tolerance for doubles
//! (floating-point sums in another order differ in the last digits).

use crate::check::{floats_close, slt_value};
use arrow::record_batch::RecordBatch;

/// Rows of values as text (`check`'s .slt rendering).
pub type Rows = Vec<Vec<String>>;

pub fn rows_of(batches: &[RecordBatch]) -> Rows {
    let mut rows = vec![];
    for b in batches {
        for r in 0..b.num_rows() {
            rows.push(b.columns().iter().map(|c| slt_value(c.as_ref(), r)).collect());
        }
    }
    rows
}

/// None when `a` and `b` hold the same rows (in any order), else what differs.
pub fn diff(a: &Rows, b: &Rows) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} rows vs {} rows{}", a.len(), b.len(), first_difference(a, b)));
    }
    // Sorted as text, rows line up when equal; doubles off in the last digits may sort
    // elsewhere, so then sorted by a key that rounds them (a decimal rounds too, so it
    // breaks ties by the exact text).
    let exact = |r: &Vec<String>| r.clone();
    let close = |r: &Vec<String>| r.iter().map(|v| rounded(v)).chain(r.iter().cloned()).collect::<Vec<_>>();
    let mut first = None;
    for key in [&exact as &dyn Fn(&Vec<String>) -> Vec<String>, &close] {
        let (mut a, mut b) = (a.clone(), b.clone());
        a.sort_by_cached_key(key);
        b.sort_by_cached_key(key);
        let mismatch = a
            .iter()
            .zip(&b)
            .find(|(x, y)| !(x.len() == y.len() && x.iter().zip(*y).all(|(p, q)| p == q || floats_close(p, q))));
        match mismatch {
            None => return None,
            Some((x, y)) => first = first.or(Some(format!("row {x:?} vs {y:?}"))),
        }
    }
    first
}

/// A double's text to 6 significant digits (other values unchanged).
fn rounded(v: &str) -> String {
    if v.contains('.') || v.contains('e') {
        if let Ok(x) = v.parse::<f64>() {
            return format!("{x:.5e}");
        }
    }
    v.to_string()
}

fn first_difference(a: &Rows, b: &Rows) -> String {
    let only = |x: &Rows, y: &Rows| x.iter().find(|r| !y.contains(r)).cloned();
    match (only(a, b), only(b, a)) {
        (Some(r), _) => format!("; e.g. {r:?} only in the first"),
        (None, Some(r)) => format!("; e.g. {r:?} only in the second"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&[&str]]) -> Rows {
        v.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
    }

    #[test]
    fn multisets_with_tolerance() {
        assert_eq!(diff(&rows(&[&["1", "a"], &["2", "b"]]), &rows(&[&["2", "b"], &["1", "a"]])), None);
        assert_eq!(diff(&rows(&[&["0.1000000001"]]), &rows(&[&["0.1"]])), None);
        assert!(diff(&rows(&[&["1"], &["1"]]), &rows(&[&["1"], &["2"]])).is_some());
        assert!(diff(&rows(&[&["1"]]), &rows(&[&["1"], &["1"]])).is_some());
        assert!(diff(&rows(&[&["NULL"]]), &rows(&[&["0"]])).is_some());
        // Decimals that round alike are still told apart, whatever the other columns.
        assert_eq!(
            diff(
                &rows(&[&["100898.76", "b"], &["100899.32", "a"]]),
                &rows(&[&["100899.32", "a"], &["100898.76", "b"]])
            ),
            None
        );
        assert_eq!(
            diff(&rows(&[&["0.30000000000000004", "x"], &["0.1", "y"]]), &rows(&[&["0.1", "y"], &["0.3", "x"]])),
            None
        );
    }
}
