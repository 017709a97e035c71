//! The nearest known names to an unknown one, for error messages ("did you mean …?").

/// ` (did you mean 'x'?)` or ` (did you mean 'x' or 'y'?)`: the candidates closest to
/// `name` by edit distance (case-insensitive), within a third of its length (at least one
/// edit); empty where none is that close.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let name = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = vec![];
    for c in candidates {
        let d = edit_distance(&name, &c.to_lowercase());
        if d <= limit && !scored.iter().any(|(_, s)| s.eq_ignore_ascii_case(c)) {
            scored.push((d, c));
        }
    }
    let Some(best) = scored.iter().map(|(d, _)| *d).min() else { return String::new() };
    let names: Vec<String> = scored.iter().filter(|(d, _)| *d == best).take(3).map(|(_, c)| format!("'{c}'")).collect();
    format!(" (did you mean {}?)", names.join(" or "))
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names() {
        assert_eq!(did_you_mean("lineitm", ["lineitem", "orders"]), " (did you mean 'lineitem'?)");
        assert_eq!(did_you_mean("L_QUANTIY", ["l_quantity", "l_tax"]), " (did you mean 'l_quantity'?)");
        assert_eq!(did_you_mean("x", ["a", "b", "region"]), " (did you mean 'a' or 'b'?)");
        assert_eq!(did_you_mean("zzzzzz", ["lineitem"]), "");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
