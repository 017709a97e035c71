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

/// The CUDA helpers every generated module starts with: the shared constants, the
/// hand-written `prelude.cu`, `interval.cu` and `sketches.cu`, DuckDB's case tables and trim set (`gpusql_common::case_map`)
/// and the string functions of `strings.cu`.
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
        let (prelude, end) = include_str!("prelude.cu")
            .rsplit_once("// ---- end of prelude ----")
            .expect("prelude.cu ends with its end marker");
        s.push_str(prelude);
        s.push_str(include_str!("interval.cu"));
        s.push_str(include_str!("sketches.cu"));
        s.push_str(&string_tables());
        s.push_str(include_str!("strings.cu"));
        s.push_str(include_str!("text_cast.cu"));
        s.push_str("// ---- end of prelude ----");
        s.push_str(end);
        s
    });
    &PRELUDE
}

/// DOUBLE's text (double_text.cu and its tables): ~40 KB that NVRTC would otherwise parse
/// in every module (10,500 modules of the CI compile check took 350 s longer with them in
/// the prelude), so only a module that writes a double carries it, after the prelude. The
/// guard keeps one copy where modules are merged into one program (`merge_modules`).
pub fn double_text() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        format!(
            "#ifndef GPUSQL_DOUBLE_TEXT\n#define GPUSQL_DOUBLE_TEXT\n{}{}#endif\n",
            include_str!("double_text_tables.cu"),
            include_str!("double_text.cu")
        )
    });
    &TEXT
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
        let a = format!("{}extern \"C\" __global__ void __launch_bounds__(256) pipeline_0(int x) {{}}\n", prelude());
        let b = format!("{}extern \"C\" __global__ void pipeline_1(int x) {{}}\n", prelude());
        let m = merge_modules(&[&a, &b]).unwrap();
        assert_eq!(m.matches("end of prelude").count(), 1);
        assert!(m.contains("pipeline_0(") && m.contains("pipeline_1("));
        assert_eq!(merge_modules(&[&a, &a]), None, "a kernel defined twice");
        assert_eq!(merge_modules(&[&a, "extern \"C\" __global__ void k() {}"]), None, "no prelude");
    }
}
