//! The session's settings, each declared once: name, type, default and a one-line doc.
//! `SET name = value`, `RESET name`, `SHOW name` and `SHOW ALL` act on them; at start,
//! `GPUSQL_<NAME>` in the environment sets each (e.g. `GPUSQL_LANE_REFILL=off`). The
//! planner and both executors read them from here.

use crate::filter_plan::FilterOrder;
use crate::physical::MultiMatch;
use crate::replicated::ReplicatedTables;
use gpusql_common::{Error, Result};

/// A value a setting can take: how it is written and read back.
pub trait SettingValue: Sized {
    /// The values, as the docs and errors name them.
    const VALUES: &'static str;
    /// From its text (case-insensitive where words).
    fn parse(text: &str) -> Option<Self>;
    /// As `SHOW` prints it (parses back to the same value).
    fn show(&self) -> String;
}

/// One setting as `SHOW ALL` lists it.
#[derive(Debug, Clone, Copy)]
pub struct SettingInfo {
    pub name: &'static str,
    pub values: &'static str,
    pub doc: &'static str,
}

impl SettingInfo {
    /// The environment variable that sets it at start: `GPUSQL_<NAME>`.
    pub fn env_var(&self) -> String {
        format!("GPUSQL_{}", self.name.to_ascii_uppercase())
    }
}

macro_rules! session_config {
    ($( #[doc = $doc:literal] $name:ident : $ty:ty = $default:expr; )*) => {
        /// The session's settings (see the module doc).
        #[derive(Debug, Clone, PartialEq)]
        pub struct SessionConfig {
            $( #[doc = $doc] pub $name: $ty, )*
        }

        impl Default for SessionConfig {
            fn default() -> Self {
                SessionConfig { $( $name: $default, )* }
            }
        }

        impl SessionConfig {
            /// Every setting, in declaration order.
            pub const SETTINGS: &'static [SettingInfo] = &[
                $( SettingInfo { name: stringify!($name), values: <$ty as SettingValue>::VALUES, doc: $doc.trim_ascii() }, )*
            ];

            /// `SET name = value`.
            pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
                let name = name.to_ascii_lowercase();
                match name.as_str() {
                    $( stringify!($name) => {
                        self.$name = <$ty as SettingValue>::parse(value.trim()).ok_or_else(|| {
                            Error::InvalidInput(format!("{name} cannot be '{value}' ({})", <$ty as SettingValue>::VALUES))
                        })?;
                    } )*
                    _ => return Err(unknown(&name)),
                }
                Ok(())
            }

            /// `SHOW name`: the value as it would be written in `SET`.
            pub fn get(&self, name: &str) -> Result<String> {
                match name.to_ascii_lowercase().as_str() {
                    $( stringify!($name) => Ok(self.$name.show()), )*
                    other => Err(unknown(other)),
                }
            }

            /// `RESET name`: back to the default.
            pub fn reset(&mut self, name: &str) -> Result<()> {
                let default = SessionConfig::default();
                match name.to_ascii_lowercase().as_str() {
                    $( stringify!($name) => self.$name = default.$name, )*
                    other => return Err(unknown(other)),
                }
                Ok(())
            }
        }
    };
}

fn unknown(name: &str) -> Error {
    let known: Vec<&str> = SessionConfig::SETTINGS.iter().map(|s| s.name).collect();
    Error::InvalidInput(format!("unknown setting '{name}' (SHOW ALL lists them: {})", known.join(", ")))
}

session_config! {
    /// How join probes with several matches per row use the warp: push-down parallelism ([Funke & Teubner 2020] §3) or each lane its own matches.
    multi_match: MultiMatch = MultiMatch::PushDown;
    /// The order of a conjunction's terms: by rank (sampled selectivity and cost), as written, or ranked with branch-free groups from the cost model ([Sitaridi 2016] ch. 4; measured 5-14% slower on TPC-H).
    filter_order: FilterOrder = FilterOrder::Ranked;
    /// Lane Refill ([Funke et al. 2018]): warps whose lanes thinned out after a filter or probe refill from a shared buffer once this many of 32 lanes hold rows.
    lane_refill: LaneRefill = LaneRefill(Some(crate::planner::LANE_REFILL_THRESHOLD));
    /// Selectivities of filter terms: sampled from the table, or guessed from the operator (= 0.1, other comparisons 1/3).
    selectivity: Selectivity = Selectivity::Sampled;
    /// String columns copied to the GPU in the Pivot-4 layout for LIKE ([Sitaridi & Ross 2015]), or contiguous.
    pivoted_strings: bool = true;
    /// LIKE patterns run on the GPU as a DFA walked from shared memory (seed 000 ch. 6; measured at TPC-H SF 10 on the H200: l_comment LIKE '%fur%ly%' 1.26 ms against 3.4 ms by lock-step KMP over the Pivot-4 copy and 7.2 ms by the byte matcher), or by those matchers (off). A pattern whose DFA would not fit in shared memory keeps them.
    like_dfa: bool = true;
    /// Pattern tests of one string joined by OR in a filter (`s LIKE '%a%' OR s ~ 'b+'`) run as one DFA (seed 000 ch. 6's multi-pattern matching), the string walked once; off: each test on its own.
    merged_patterns: bool = true;
    /// GROUP BY on the GPU: the groups with the first ids (at most N; fewer where their states would take more than 48 registers) accumulate in each thread's registers and are combined by warp reductions when the thread's rows end, not by an atomic per row. auto: 4 where a state is a DOUBLE SUM, MIN or MAX (whose shared-memory atomics are compare-and-swap loops) and none is a string's or interval's MIN or MAX; measured on the H100 at SF 10, 4 groups: sum of doubles 2.2 -> 0.75 ms, DECIMAL sums alone 0.59 -> 0.88, MIN/MAX of strings 1.7 -> 4.7.
    register_groups: RegisterGroups = RegisterGroups(None);
    /// GROUP BY on the GPU, where the keys are dictionary codes and no groups are kept in registers (`register_groups`): each lane keeps the partial states of the first group it meets in its registers (rows of other groups take the warp's atomics), flushed once when its rows end. A group that holds most of a block's rows (sorted or skewed data, a filter that leaves one group) then costs no atomic per row: measured on the H100 at SF 10, one group 0.74 -> 0.47 ms, UNION ALL q01 1.28 -> 1.09; 4 groups mixed in every warp up to 14% slower.
    lane_group: bool = true;
    /// ORDER BY ... LIMIT sorts only the rows it keeps.
    top_n: bool = true;
    /// ORDER BY (and the sorts of windows) on the GPU by an LSD radix sort of the keys encoded as bytes, 8 bits a pass, passes whose byte is the same in every row skipped (on: inputs of more than 4,096 rows, which otherwise rank-sort; always: every input, for tests); off: a bitonic sort by a generated comparator. Top-N of at most 1,024 rows, INTERVAL keys and keys longer than 256 bytes use the bitonic sort either way.
    radix_sort: RadixSort = RadixSort::On;
    /// The most row pairs a join without an equality (a cross join; its other conditions filter the pairs) may be estimated to form before it is refused: each pair is work, on the GPU (the warp walks the small side for each row) and more so on the CPU backend.
    max_cross_join_pairs: u64 = 10_000_000_000;
    /// Joins without an equality whose conditions bound a column of one side by the other (`x BETWEEN r.lo AND r.hi`, `a.t < b.t`) sort that side and binary-search the rows each row can match (off: every row walks the whole other side, as a cross join under a filter).
    band_joins: bool = true;
    /// GROUP BY and probes keyed by a column of few distinct values use shared-memory tables ([Sitaridi 2016] ch. 3): group tables bank-replicated and probe tables one copy per value (on); both replicated (all); both one copy (single); or global hash tables (off).
    replicated_tables: ReplicatedTables = ReplicatedTables::On;
    /// Hash builds over dense integer keys also set a bitmap of the keys present, which probes test before the table.
    key_bitmaps: bool = true;
    /// Probes test the key bitmaps of later probes too, before the first Lane Refill.
    early_bitmaps: bool = true;
    /// Scans read string columns of few distinct values as 2-byte codes into a dictionary built on first use.
    dictionary_strings: bool = true;
    /// Small probe tables copied into shared memory, in pipelines without replicated tables (measured ±3% on SSB SF 20: tables that fit already stay in L1).
    shared_memory_probe_tables: bool = false;
    /// Direct-mapped tables for dense integer join keys (measured slower on SSB SF 20, Q3.1 1.32 -> 1.65 ms: a direct table skips the key bitmap).
    direct_tables: bool = false;
    /// A new query's kernels compile at once on all cores, quickly optimized and with join probes that fit any table, while its first stages run; the fully optimized kernels it settles on compile in the background and replace them when ready (off: each kernel compiles fully optimized when its stage runs).
    compile_ahead: bool = true;
    /// A SELECT is planned with its literals (numbers, strings, dates compared or computed with) as parameters and its plan kept by its shape, so a query differing only in them runs that plan with its values: no parsing into a new plan, no kernel generated or compiled (off: each text is planned with its values).
    plan_templates: bool = true;
    /// A query run again with the same literal values over unchanged tables launches its stages back to back: the row counts and hash-table shapes each stage would wait for are taken from its last run, the GPU's are checked against them once at the end, and on any difference the query runs again the usual way (off: each stage waits for its counts).
    replay_repeats: bool = true;
    /// A replayed query is captured as one CUDA graph, launched whole when it runs again with the same values: no host work between its stages (off: each replay launches stage by stage). Needs replay_repeats.
    graph_repeats: bool = true;
    /// How many NVRTC programs the kernels a new query compiles ahead are merged into, the prelude once in each (0: a program per kernel). On the H100 host NVRTC compiles one program at a time whatever the threads, and each costs ~40 ms besides its kernels: TPC-H SF 10 first runs took 246-261 ms (geomean) as a program per kernel, 140-152 ms as two, 109 ms as one. Where NVRTC scales with cores, 2-4 may be faster.
    compile_programs: u64 = 1;
    /// Freed GPU memory the allocation pool keeps between queries for the next one's tables and buffers, in MiB. Memory given back must be mapped again when a later query needs it: TPC-H Q21 at SF 10 frees ~8 GB a run, and trimming it to 4096 cost 8 ms a run, growing again 5 ms more.
    pool_keep_mb: u64 = 16384;
    /// Times every kernel launch on its own (synchronizing after each), on stderr.
    profile_launches: bool = false;
    /// Logs the host time of each step of each stage (and of parsing and planning) and each queue of launches beside its GPU span, and a captured CUDA graph's node kinds and each launch's GPU span, on stderr.
    profile_host: bool = false;
    /// A folder every loaded kernel's CUDA source is written to (empty: none).
    dump_kernels: Folder = Folder(String::new());
}

/// `off`, `on` (the default threshold) or a threshold of 1 to 32 lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneRefill(pub Option<u32>);

/// How many groups a GROUP BY keeps in registers: `auto` (None: the code generator's
/// choice by the states' types), `off` (0), or at most N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterGroups(pub Option<u32>);

/// When sorts on the GPU radix-sort: inputs above the rank sort's size, every input, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RadixSort {
    On,
    Always,
    Off,
}

/// Filter selectivities: sampled or guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selectivity {
    Sampled,
    Guessed,
}

/// A folder path; empty for none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder(pub String);

impl Folder {
    pub fn path(&self) -> Option<std::path::PathBuf> {
        (!self.0.is_empty()).then(|| std::path::PathBuf::from(&self.0))
    }
}

/// `text` as one of `words` (case-insensitive, `_` read as `-`).
fn word<T: Copy>(text: &str, words: &[(&str, T)]) -> Option<T> {
    let t = text.to_ascii_lowercase().replace('_', "-");
    words.iter().find(|(w, _)| *w == t).map(|(_, v)| *v)
}

/// The first of `words` naming `v`.
fn name_of<T: PartialEq>(v: &T, words: &[(&'static str, T)]) -> String {
    words.iter().find(|(_, x)| x == v).map_or_else(String::new, |(w, _)| w.to_string())
}

const ON_OFF: &[(&str, bool)] =
    &[("on", true), ("off", false), ("true", true), ("false", false), ("1", true), ("0", false)];
const MULTI_MATCH: &[(&str, MultiMatch)] = &[("push-down", MultiMatch::PushDown), ("per-lane", MultiMatch::PerLane)];
const FILTER_ORDER: &[(&str, FilterOrder)] =
    &[("ranked", FilterOrder::Ranked), ("written", FilterOrder::Written), ("optimized", FilterOrder::Optimized)];
const REPLICATED: &[(&str, ReplicatedTables)] = &[
    ("on", ReplicatedTables::On),
    ("all", ReplicatedTables::All),
    ("single", ReplicatedTables::Single),
    ("off", ReplicatedTables::Off),
];
const RADIX_SORT: &[(&str, RadixSort)] = &[
    ("on", RadixSort::On),
    ("always", RadixSort::Always),
    ("off", RadixSort::Off),
    ("true", RadixSort::On),
    ("false", RadixSort::Off),
];
const SELECTIVITY: &[(&str, Selectivity)] = &[("sampled", Selectivity::Sampled), ("guessed", Selectivity::Guessed)];

/// A setting whose values are words: parsed and shown through its word table.
macro_rules! word_setting {
    ($ty:ty, $words:expr, $values:literal) => {
        impl SettingValue for $ty {
            const VALUES: &'static str = $values;
            fn parse(text: &str) -> Option<Self> {
                word(text, $words)
            }
            fn show(&self) -> String {
                name_of(self, $words)
            }
        }
    };
}

word_setting!(bool, ON_OFF, "on or off");
word_setting!(MultiMatch, MULTI_MATCH, "push-down or per-lane");
word_setting!(FilterOrder, FILTER_ORDER, "ranked, written or optimized");
word_setting!(ReplicatedTables, REPLICATED, "on, all, single or off");
word_setting!(Selectivity, SELECTIVITY, "sampled or guessed");
word_setting!(RadixSort, RADIX_SORT, "on, always or off");

impl SettingValue for LaneRefill {
    const VALUES: &'static str = "on, off, or a threshold of 1 to 32 lanes";
    fn parse(text: &str) -> Option<Self> {
        match text.parse::<u32>() {
            Ok(0) => Some(LaneRefill(None)),
            Ok(t) => (t <= 32).then_some(LaneRefill(Some(t))),
            Err(_) => word(text, ON_OFF).map(|on| LaneRefill(on.then_some(crate::planner::LANE_REFILL_THRESHOLD))),
        }
    }
    fn show(&self) -> String {
        match self.0 {
            None => "off".into(),
            Some(t) if t == crate::planner::LANE_REFILL_THRESHOLD => "on".into(),
            Some(t) => t.to_string(),
        }
    }
}

impl SettingValue for RegisterGroups {
    const VALUES: &'static str = "auto, off, or a number of groups";
    fn parse(text: &str) -> Option<Self> {
        match text.parse::<u32>() {
            Ok(n) => Some(RegisterGroups(Some(n))),
            Err(_) if text.eq_ignore_ascii_case("auto") => Some(RegisterGroups(None)),
            Err(_) => word(text, ON_OFF).filter(|on| !on).map(|_| RegisterGroups(Some(0))),
        }
    }
    fn show(&self) -> String {
        match self.0 {
            None => "auto".into(),
            Some(0) => "off".into(),
            Some(n) => n.to_string(),
        }
    }
}

impl SettingValue for u64 {
    const VALUES: &'static str = "a whole number";
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl SettingValue for Folder {
    const VALUES: &'static str = "a folder, or '' for none";
    fn parse(text: &str) -> Option<Self> {
        Some(Folder(text.to_string()))
    }
    fn show(&self) -> String {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_shows_a_value_that_sets_it_back() {
        let c = SessionConfig::default();
        for s in SessionConfig::SETTINGS {
            let shown = c.get(s.name).unwrap();
            let mut d = SessionConfig::default();
            d.set(s.name, &shown).unwrap();
            assert_eq!(d, c, "{}", s.name);
            assert!(!s.doc.is_empty() && !s.values.is_empty(), "{}", s.name);
        }
    }

    #[test]
    fn values_as_the_docs_write_them() {
        let mut c = SessionConfig::default();
        c.set("multi_match", "per-lane").unwrap();
        assert_eq!(c.multi_match, MultiMatch::PerLane);
        c.set("MULTI_MATCH", "Push_Down").unwrap();
        assert_eq!(c.multi_match, MultiMatch::PushDown);
        c.set("lane_refill", "16").unwrap();
        assert_eq!(c.get("lane_refill").unwrap(), "16");
        c.set("lane_refill", "off").unwrap();
        assert_eq!(c.lane_refill, LaneRefill(None));
        c.reset("lane_refill").unwrap();
        assert_eq!(c.get("lane_refill").unwrap(), "on");
        let e = c.set("lane_refill", "33").unwrap_err().to_string();
        assert!(e.contains("a threshold of 1 to 32"), "{e}");
        let e = c.set("no_such", "on").unwrap_err().to_string();
        assert!(e.contains("unknown setting 'no_such'") && e.contains("multi_match"), "{e}");
    }
}
