//! Values generated CUDA and Rust must agree on, defined once here: the prelude's
//! `#define`s of them are written from these constants.

use gpusql_common::strptime::Failure;
use gpusql_common::{DataType, FNV_OFFSET_BASIS, FNV_PRIME};
use std::sync::LazyLock;

/// Seed of the key hashes (`h_` in generated hash-table code and `entry_slot` in the
/// result-assembly module that rehashes probe tables: the two must agree).
pub const HASH_SEED: u64 = 0x9e3779b97f4a7c15;

/// Rows per block of one radix sort pass (radix_sort.cu): the host sizes the per-tile
/// digit counts by it.
pub const RADIX_TILE: usize = 2048;

/// The errors a kernel raises through its error flag (`raise_error(err, ERR_…)`); the
/// executor reads the first one after the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelError {
    DivisionByZero = 1,
    Overflow = 2,
    /// A hash table ran out of groups; the host grows it and runs the pipeline again.
    GroupsFull = 3,
    TimestampRange = 4,
    /// A scalar subquery returned more than one row (`Expr::ScalarSubqueryRows`).
    SubqueryRows = 5,
    /// The string arena ran out of room; the host makes it larger and runs the pipeline
    /// again (strings.cu's `arena_alloc`).
    ArenaFull = 6,
    /// lpad / rpad with an empty fill where the string is short (DuckDB's error).
    PaddingLeft = 7,
    PaddingRight = 8,
    /// Text that does not read as the type of a CAST (`text_cast.cu`'s TEXT_INVALID); the
    /// type in the upper bytes (`typed_code`).
    Conversion = 9,
    /// Text read by rules the engine does not follow (TEXT_UNSUPPORTED), with the type.
    TextUnsupported = 10,
    /// INTERVAL arithmetic out of its fields' ranges (`gpusql_common::interval`).
    IntervalRange = 11,
    /// ntile's argument is not above zero (DuckDB's error; `window.rs`).
    NtileArgument = 12,
    /// strptime's text that no format reads, or infinite (the
    /// `gpusql_common::strptime::Failure` in the upper bytes: `strptime_failure`).
    Strptime = 13,
}

impl KernelError {
    pub const ALL: [KernelError; 13] = [
        KernelError::DivisionByZero,
        KernelError::Overflow,
        KernelError::GroupsFull,
        KernelError::TimestampRange,
        KernelError::SubqueryRows,
        KernelError::ArenaFull,
        KernelError::PaddingLeft,
        KernelError::PaddingRight,
        KernelError::Conversion,
        KernelError::TextUnsupported,
        KernelError::IntervalRange,
        KernelError::NtileArgument,
        KernelError::Strptime,
    ];

    /// The error of flag value `code` (0 and unknown codes: none); its low byte is the
    /// kind, the rest details (`out_of_range_code`).
    pub fn from_code(code: i32) -> Option<KernelError> {
        Self::ALL.into_iter().find(|e| *e as i32 == code & 0xff)
    }

    /// Its name in CUDA.
    pub fn c_name(self) -> &'static str {
        match self {
            KernelError::DivisionByZero => "ERR_DIV_ZERO",
            KernelError::Overflow => "ERR_OVERFLOW",
            KernelError::GroupsFull => "ERR_GROUPS_FULL",
            KernelError::TimestampRange => "ERR_TIMESTAMP_RANGE",
            KernelError::SubqueryRows => "ERR_SUBQUERY_ROWS",
            KernelError::ArenaFull => "ERR_ARENA_FULL",
            KernelError::PaddingLeft => "ERR_PADDING_LEFT",
            KernelError::PaddingRight => "ERR_PADDING_RIGHT",
            KernelError::Conversion => "ERR_CONVERSION",
            KernelError::TextUnsupported => "ERR_TEXT_UNSUPPORTED",
            KernelError::IntervalRange => "ERR_INTERVAL_RANGE",
            KernelError::NtileArgument => "ERR_NTILE_ARGUMENT",
            KernelError::Strptime => "ERR_STRPTIME",
        }
    }
}

/// The flag value of an overflow of a value of type `ty` (INTEGER, BIGINT, DECIMAL): the
/// kind, then the type in the upper bytes, so the host's message names the type as the CPU
/// backend's does (`INTEGER out of range`).
pub fn out_of_range_code(ty: &DataType) -> i32 {
    typed_code(KernelError::Overflow, ty)
}

/// The flag value of error `kind` about a value of type `ty`: the kind in the low byte,
/// the type in the upper ones (`code_type` reads it back).
pub fn typed_code(kind: KernelError, ty: &DataType) -> i32 {
    let (tag, p, s) = match ty {
        DataType::Int32 => (1, 0, 0),
        DataType::Int64 => (2, 0, 0),
        DataType::Decimal { precision, scale } => (3, *precision as i32, *scale as i32),
        DataType::Date => (4, 0, 0),
        DataType::Float64 => (5, 0, 0),
        DataType::Boolean => (6, 0, 0),
        _ => (0, 0, 0),
    };
    kind as i32 | tag << 8 | p << 16 | s << 24
}

/// The type `typed_code` put in `code`, if any.
pub fn code_type(code: i32) -> Option<DataType> {
    let (p, s) = (((code >> 16) & 0xff) as u8, ((code >> 24) & 0x7f) as u8);
    match (code >> 8) & 0xff {
        1 => Some(DataType::Int32),
        2 => Some(DataType::Int64),
        3 => Some(DataType::Decimal { precision: p, scale: s }),
        4 => Some(DataType::Date),
        5 => Some(DataType::Float64),
        6 => Some(DataType::Boolean),
        _ => None,
    }
}

/// The failure of a `KernelError::Strptime` flag value: in its upper bytes (codegen
/// `gen_strptime` raises `ERR_STRPTIME | status << 8`).
pub fn strptime_failure(code: i32) -> Option<Failure> {
    Failure::from_code(code >> 8)
}

/// The text every module starts with: the constants shared with the host and prelude.cu's
/// types and helpers. The library parts (`library_parts`) follow it only where a module
/// uses them: see `with_prelude`.
pub fn prelude() -> &'static str {
    static PRELUDE: LazyLock<String> = LazyLock::new(|| {
        let mut s = String::from("// ---- constants shared with the host (codegen/src/device_constants.rs) ----\n");
        for e in KernelError::ALL {
            s.push_str(&format!("#define {} {}\n", e.c_name(), e as i32));
        }
        s.push_str(&format!("#define HASH_SEED {HASH_SEED:#x}ull\n"));
        s.push_str(&format!("#define RADIX_TILE {RADIX_TILE}u\n"));
        s.push_str(&format!("#define STRFTIME_BYTES {}\n", gpusql_common::strftime::MAX_BYTES));
        s.push_str("#define STRPTIME_OK 0\n");
        for f in Failure::ALL {
            s.push_str(&format!("#define {} {}\n", f.c_name(), f as i32));
        }
        s.push_str(&format!("#define STR_HASH_BASIS {FNV_OFFSET_BASIS:#x}ull\n"));
        s.push_str(&format!("#define STR_HASH_PRIME {FNV_PRIME:#x}ull\n"));
        s.push_str(&format!("#define DFA_MATCH_FLAG {:#x}u\n", gpusql_plan::regex::MATCH_FLAG));
        s.push_str(&format!("#define DFA_FIND_CONTEXTS {}u\n", gpusql_plan::regex::FIND_CONTEXTS));
        s.push_str(
            include_str!("prelude.cu")
                .trim_end()
                .strip_suffix(PRELUDE_END)
                .expect("prelude.cu ends with its end marker"),
        );
        s
    });
    &PRELUDE
}

/// Where the library ends and a module's own code begins (`strip_prelude` shows what follows).
pub const PRELUDE_END: &str = "// ---- end of prelude ----";

/// A module's source: the prelude, the library parts `code` names (and the parts those
/// name), the end marker, then `code`.
///
/// Why: NVRTC parses and optimizes all it is given. With every part in the prelude (170 KB,
/// two thirds of it string functions, text casts and their tables) a numeric pipeline such
/// as TPC-H Q6's took 235 ms to compile (sm_90, quick tier, 2-core host) and made 39 KB of
/// PTX; with only the parts it uses, 125 ms and 16 KB. Each part sits in an include guard,
/// so modules merged into one program (`merge_modules`) keep one copy.
pub fn with_prelude(code: &str) -> String {
    let parts = library_parts();
    let mut needed = vec![false; parts.len()];
    let used = identifiers(code);
    for (i, part) in parts.iter().enumerate() {
        needed[i] = part.names.iter().any(|n| used.contains(n.as_str()));
    }
    // (A part names only parts before it: one pass from the last marks every one needed.)
    for i in (0..parts.len()).rev() {
        if needed[i] {
            for &d in &parts[i].needs {
                needed[d] = true;
            }
        }
    }
    let mut src = String::from(prelude());
    for (part, _) in parts.iter().zip(&needed).filter(|(_, n)| **n) {
        src.push_str(&part.text);
    }
    src.push_str(PRELUDE_END);
    src.push('\n');
    src.push_str(code);
    src
}

/// One library part: its text in an include guard, the names it defines (its top-level
/// functions, structs, arrays and macros, less those the prelude also defines: overloads
/// such as `ld_cg` are found by their types' names) and the parts it names.
struct LibraryPart {
    text: String,
    names: Vec<String>,
    needs: Vec<usize>,
}

/// The library parts, in the order they compile: each may use the ones before it.
fn library_parts() -> &'static [LibraryPart] {
    static PARTS: LazyLock<Vec<LibraryPart>> = LazyLock::new(|| {
        let texts: [(&str, String); 6] = [
            ("INTERVAL", include_str!("interval.cu").to_string()),
            ("SKETCHES", include_str!("sketches.cu").to_string()),
            ("CASE_TABLES", string_tables()),
            ("STRINGS", include_str!("strings.cu").to_string()),
            ("TEXT_CAST", include_str!("text_cast.cu").to_string()),
            // (DOUBLE's text: Ryu's tables, ~40 KB.)
            ("DOUBLE_TEXT", [include_str!("double_text_tables.cu"), include_str!("double_text.cu")].concat()),
        ];
        let in_prelude = defined_names(prelude());
        let mut parts: Vec<LibraryPart> = vec![];
        for (guard, text) in texts {
            let names: Vec<String> = defined_names(&text).into_iter().filter(|n| !in_prelude.contains(n)).collect();
            let used = identifiers(&text);
            let needs =
                (0..parts.len()).filter(|&d| parts[d].names.iter().any(|n| used.contains(n.as_str()))).collect();
            let text = format!("#ifndef GPUSQL_{guard}\n#define GPUSQL_{guard}\n{}\n#endif\n", text.trim_end());
            parts.push(LibraryPart { text, names, needs });
        }
        parts
    });
    &PARTS
}

/// The names a CUDA text defines at its top level (lines that start in column 0, as the
/// .cu files write every definition): `#define`s, structs, and the function or array each
/// other line declares.
fn defined_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for line in text.lines() {
        let first = line.chars().next().unwrap_or(' ');
        if !(first.is_ascii_alphabetic() || first == '_' || first == '#') {
            continue;
        }
        let words: Vec<&str> =
            line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
        let name = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()
        } else if line.starts_with('#') || line.starts_with("template") || line.contains("operator") {
            None
        } else if line.starts_with("struct ") {
            words.iter().skip(1).find(|w| **w != "__align__" && !w.chars().all(|c| c.is_ascii_digit())).copied()
        } else {
            // (The word before the first '(' or '[': `__device__ Str str_left(Str s, …`.)
            let end = line.find(['(', '[']).unwrap_or(0);
            line[..end].trim_end().rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            names.insert(n.to_string());
        }
    }
    names
}

/// Every identifier-like word of `text`.
fn identifiers(text: &str) -> std::collections::HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// `case_map`'s tables as CUDA arrays (strings.cu's `map_case`, `is_trim_space`).
fn string_tables() -> String {
    use gpusql_common::case_map::{LOWER, TRIM_SPACES, UPPER};
    let mut s = String::from(
        "// ---- DuckDB's case mapping and trim set (common/src/case_map.rs) ----\n\
         struct CaseRange { uint32_t first, last, stride; int32_t delta; };\n",
    );
    for (name, table) in [("CASE_UPPER", &UPPER[..]), ("CASE_LOWER", &LOWER[..])] {
        let rows: Vec<String> = table.iter().map(|(f, l, st, d)| format!("{{{f:#x}u, {l:#x}u, {st}u, {d}}}")).collect();
        s.push_str(&format!("#define {name}_LEN {}\n", table.len()));
        s.push_str(&format!("__device__ const CaseRange {name}[{}] = {{{}}};\n", table.len(), rows.join(", ")));
    }
    let spaces: Vec<String> = TRIM_SPACES.iter().map(|c| format!("{c:#x}u")).collect();
    s.push_str(&format!("#define TRIM_SPACES_LEN {}\n", TRIM_SPACES.len()));
    s.push_str(&format!("__device__ const uint32_t TRIM_SPACES[{}] = {{{}}};\n", TRIM_SPACES.len(), spaces.join(", ")));
    s
}

/// One source holding the kernels of every generated module in `modules` (each the
/// prelude, then its kernels), with the prelude once, for NVRTC to compile as one program:
/// on the engine's GPU host a program's fixed cost outweighed what compiling modules on
/// separate threads gained (docs/BENCHMARKS.md, "Compile time"). `None` when a module does
/// not start with the prelude or two define the same kernel.
pub fn merge_modules(modules: &[&str]) -> Option<String> {
    let prelude = prelude();
    let mut merged = String::from(prelude);
    let mut kernels = std::collections::HashSet::new();
    for m in modules {
        let body = m.strip_prefix(prelude)?;
        for rest in body.split("__global__ void ").skip(1) {
            // (`__launch_bounds__(256) pipeline_0(…`)
            let rest =
                rest.strip_prefix("__launch_bounds__(").and_then(|r| r.split_once(") ")).map_or(rest, |(_, r)| r);
            if !kernels.insert(rest.split('(').next().unwrap_or_default()) {
                return None;
            }
        }
        merged.push_str(body);
    }
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_round_trips_and_is_defined_for_cuda() {
        for e in KernelError::ALL {
            assert_eq!(KernelError::from_code(e as i32), Some(e));
            assert!(prelude().contains(&format!("#define {} {}\n", e.c_name(), e as i32)));
        }
        assert_eq!(KernelError::from_code(0), None);
        for f in Failure::ALL {
            let code = KernelError::Strptime as i32 | (f as i32) << 8;
            assert_eq!(KernelError::from_code(code), Some(KernelError::Strptime));
            assert_eq!(strptime_failure(code), Some(f));
            assert!(prelude().contains(&format!("#define {} {}\n", f.c_name(), f as i32)));
        }
    }

    #[test]
    fn merged_modules_hold_the_prelude_once_and_every_kernel() {
        let a = with_prelude("extern \"C\" __global__ void __launch_bounds__(256) pipeline_0(int x) {}\n");
        let b = with_prelude("extern \"C\" __global__ void pipeline_1(Str s) { str_upper(a, s); }\n");
        let c = with_prelude("extern \"C\" __global__ void pipeline_2(Str s) { str_lower(a, s); }\n");
        let m = merge_modules(&[&a, &b, &c]).unwrap();
        assert_eq!(m.matches("constants shared with the host").count(), 1);
        // (The string functions in both b and c: defined twice in the text, once to NVRTC.)
        assert_eq!(m.matches("#ifndef GPUSQL_STRINGS").count(), 2);
        assert!(m.contains("pipeline_0(") && m.contains("pipeline_1(") && m.contains("pipeline_2("));
        assert_eq!(merge_modules(&[&a, &a]), None, "a kernel defined twice");
        assert_eq!(merge_modules(&[&a, "extern \"C\" __global__ void k() {}"]), None, "no prelude");
    }

    /// The guards' names, to tell which parts a module carries.
    fn parts_of(src: &str) -> Vec<&str> {
        src.lines().filter_map(|l| l.strip_prefix("#ifndef GPUSQL_")).collect()
    }

    #[test]
    fn a_module_carries_the_library_parts_it_names_and_theirs() {
        assert!(parts_of(&with_prelude("x = a + b;")).is_empty());
        // (str_upper reads the case tables; strings.cu writes intervals as text.)
        assert_eq!(parts_of(&with_prelude("str_upper(a, s)")), ["INTERVAL", "CASE_TABLES", "STRINGS"]);
        assert_eq!(parts_of(&with_prelude("Interval v = iv_add(a, b, err);")), ["INTERVAL"]);
        assert_eq!(
            parts_of(&with_prelude("str_from_f64(a, x)")),
            ["INTERVAL", "CASE_TABLES", "STRINGS", "DOUBLE_TEXT"]
        );
        assert!(parts_of(&with_prelude("text_to_date(s, &st)")).contains(&"TEXT_CAST"));
        // Overloads of the prelude's own functions do not pull a part in by their name.
        assert!(parts_of(&with_prelude("ld_cg(p); bcast(v, 0);")).is_empty());
        let src = with_prelude("y = hll_estimate(c);");
        assert!(src.ends_with(&format!("{PRELUDE_END}\ny = hll_estimate(c);")), "the code follows the marker");
    }

    #[test]
    fn every_top_level_definition_of_a_part_is_found() {
        // Each line of a part that starts in column 0 and declares something yields its name.
        let names = defined_names("#define TEXT_OK 0\nstruct __align__(16) Interval {\n__device__ __forceinline__ Interval make_iv(int32_t m) {\n__device__ const char DAYS[7][10] = {};\ntemplate <typename T>\n__device__ T pick(T a) {\n    int inner(int);\n}\n");
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["DAYS", "Interval", "TEXT_OK", "make_iv", "pick"]);
        for part in library_parts() {
            assert!(!part.names.is_empty());
            assert!(
                part.names.iter().all(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')),
                "{:?}",
                part.names
            );
        }
    }
}
