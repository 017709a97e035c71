//! LIKE '%s1%s2%…%' over a table column's Pivot-4 copy with lock-step KMP ([Sitaridi 2016]
//! §5.3.2, [Sitaridi & Ross 2015]: "KMP-hybrid"). The outer loop of `like_kmp_pivot4`
//! (prelude) reads one 4-byte piece per step, so the lanes of a warp read the same piece
//! column of consecutive rows together (coalesced, a small cache footprint); the inner loop
//! consumes the piece's bytes the KMP way, following failure links on a mismatch. Segments
//! are searched in order, each from where the previous one matched. Where the column has no
//! pivoted copy (too long or uneven strings, or `SET pivoted_strings = off`) the kernel
//! takes the byte matcher over offsets + bytes instead: a uniform branch on the copy's
//! pointer.

use crate::kernel_builder::KernelBuilder;
use crate::literals::{kmp_segments, literal_name, param_name, LiteralPart};
use crate::spec::{Param, Part};
use crate::value::Value;
use gpusql_plan::Expr;

/// Emits `term` when it is `col [NOT] LIKE '%…%'` over a pivotable table string column;
/// returns its value (None: not this form, the caller generates it the usual way). The
/// pattern's segments, failure links and segment ends are kernel parameters
/// (`literals.rs`), so patterns of this form share a kernel.
pub fn try_gen(k: &mut KernelBuilder, term: &Expr) -> Option<Value> {
    let Expr::Like { expr, pattern, negated } = term else { return None };
    let Expr::Column { index, .. } = &**expr else { return None };
    let source_col = k.pivot_source(*index)?;
    kmp_segments(pattern)?;
    let p = k.body().literals().ok()?.pattern(term, pattern, true);
    let piv = k.param(Param::Input { column: source_col, part: Part::Pivoted }, "const uint32_t* __restrict__");
    let x = k.row()[*index].clone();
    let t = k.body().tmp("kmp");
    let how = if pattern.dfa.is_some() { "its DFA where the executor passes one, else " } else { "" };
    k.body().line(format!(
        "// LIKE {}: {how}lock-step KMP over the Pivot-4 copy where the column has one",
        literal_name(p)
    ));
    k.body().line(format!("bool {t};"));
    if pattern.dfa.is_some() {
        // The DFA first, where the executor passes one (`SET like_dfa`): measured faster.
        k.body().literals().ok()?.use_dfa(p);
        let entries = param_name(p, LiteralPart::DfaEntries);
        k.body().open(format!("if ({entries} != 0u)"));
        let walk = crate::expr::dfa_call(p, &x.v);
        k.body().line(format!("{t} = {}{walk};", if *negated { "!" } else { "" }));
        k.body().close_with(format!("else if ({piv} != nullptr)"));
    } else {
        k.body().open(format!("if ({piv} != nullptr)"));
    }
    let part = |part| param_name(p, part);
    k.body().line(format!(
        "{t} = {}like_kmp_pivot4({piv}, n_rows, row, {}.len, {}, {}, {}, {});",
        if *negated { "!" } else { "" },
        x.v,
        part(LiteralPart::KmpBytes),
        part(LiteralPart::KmpNext),
        part(LiteralPart::KmpEnds),
        part(LiteralPart::KmpSegments),
    ));
    k.body().close_with("else");
    let fallback = k.eval(term).ok()?;
    k.body().line(format!("{t} = {};", fallback.v));
    k.body().close();
    Some(Value { v: t, null: x.null })
}

#[cfg(test)]
mod tests {
    use crate::literals::{kmp_segments, KmpSegments};
    use gpusql_plan::LikePattern;

    /// `like_kmp_pivot4` of the prelude, transliterated (one row, its pieces in order).
    fn kmp_pivot4(s: &[u8], seg: &KmpSegments) -> bool {
        let words: Vec<u32> = s
            .chunks(4)
            .map(|c| {
                let mut x = [0u8; 4];
                x[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(x)
            })
            .collect();
        let (pat, nxt, ends) = (&seg.bytes, &seg.next, &seg.ends);
        let len = s.len() as u32;
        let (mut sg, mut sb, mut se, mut j) = (0usize, 0u32, ends[0] as u32, 0u32);
        let mut i = 0u32;
        while i < len {
            let mut t = words[(i >> 2) as usize];
            let kn = (len - i).min(4);
            let mut k = 0;
            while k < kn {
                let cmp = pat[j as usize] == t as u8;
                if cmp || j == sb {
                    t >>= 8;
                    k += 1;
                } else {
                    j = nxt[j as usize] as u32;
                }
                j += cmp as u32;
                if j == se {
                    sg += 1;
                    if sg == ends.len() {
                        return true;
                    }
                    sb = se;
                    se = ends[sg] as u32;
                }
            }
            i += 4;
        }
        false
    }

    /// The segments found in order, each after the previous one (the reference).
    fn reference(s: &[u8], segs: &[&[u8]]) -> bool {
        let mut at = 0;
        for g in segs {
            match s[at..].windows(g.len()).position(|w| w == *g) {
                Some(p) => at += p + g.len(),
                None => return false,
            }
        }
        true
    }

    #[test]
    fn lock_step_kmp_matches_sequential_search() {
        // Small alphabets make borders and overlapping near-matches common.
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..20000 {
            let nsegs = 1 + rnd(3) as usize;
            let segs: Vec<Vec<u8>> =
                (0..nsegs).map(|_| (0..1 + rnd(5)).map(|_| b'a' + rnd(3) as u8).collect()).collect();
            let text: String = std::iter::once("%".to_string())
                .chain(segs.iter().map(|g| format!("{}%", String::from_utf8_lossy(g))))
                .collect();
            let pattern = LikePattern::new(&text, None).unwrap();
            let seg = kmp_segments(&pattern).expect("unanchored pattern without _");
            let s: Vec<u8> = (0..rnd(40)).map(|_| b'a' + rnd(3) as u8).collect();
            let refs: Vec<&[u8]> = segs.iter().map(|g| g.as_slice()).collect();
            assert_eq!(kmp_pivot4(&s, &seg), reference(&s, &refs), "{text} on {}", String::from_utf8_lossy(&s));
        }
    }

    #[test]
    fn only_unanchored_patterns_without_single_wildcards() {
        for (p, ok) in [
            ("%a%", true),
            ("%ab%c%", true),
            ("a%", false),
            ("%a", false),
            ("%a_b%", false),
            ("%", false),
            ("%%", false),
        ] {
            assert_eq!(kmp_segments(&LikePattern::new(p, None).unwrap()).is_some(), ok, "{p}");
        }
    }
}
