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
    let (mut a, mut b) = (a.clone(), b.clone());
    // Sorted by a key that rounds doubles, so rows equal within tolerance line up.
    let key = |r: &Vec<String>| r.iter().map(|v| rounded(v)).collect::<Vec<_>>();
    a.sort_by_cached_key(key);
    b.sort_by_cached_key(key);
    for (x, y) in a.iter().zip(&b) {
        let same = x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p == q || floats_close(p, q));
        if !same {
            return Some(format!("row {x:?} vs {y:?}"));
        }
    }
    None
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
    }
}
