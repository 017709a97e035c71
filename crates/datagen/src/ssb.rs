//! In-process Star Schema Benchmark (SSB) data generation.
//!
//! The five tables of O'Neil, O'Neil and Chen, "Star Schema Benchmark" (revision 3), with
//! the cardinalities, value domains and distributions of the reference `ssb-dbgen` (the
//! TPC-H `dbgen` fork). The random numbers are our own (a SplitMix64
//! stream per row), so the rows are not byte-identical to `ssb-dbgen`'s, but every column
//! draws from the same domain with the same distribution:
//!
//! | table | rows | |
//! | --- | --- | --- |
//! | `lineorder` | ≈ 6,000,000 × SF | 1,500,000 × SF orders of 1–7 lines (uniform) |
//! | `customer` | 30,000 × SF | |
//! | `supplier` | 2,000 × SF | |
//! | `part` | 200,000 × ⌊1 + log₂ SF⌋ | for SF < 1: 200,000 × SF |
//! | `date` | 2,556 | 1992-01-01 .. 1998-12-30, one row per day (as `ssb-dbgen`: the spec's 7 years less a day) |
//!
//! Row counts of scaled tables are `round(base × SF)` and never less than one row, so any
//! SF > 0 works (SF 0.01: 300 customers, 20 suppliers, 2,000 parts, 15,000 orders).
//!
//! Types (all columns non-nullable):
//!
//! * every integer, key, date key (`yyyymmdd`), flag and money column: `Int32`. Money is
//!   in the whole units `ssb-dbgen` prints (cents of TPC-H's retail price):
//!   `lo_extendedprice = lo_quantity × rprice(lo_partkey)` with TPC-H's retail price
//!   `rprice(p) = 90000 + (p/10) mod 20001 + 100 × (p mod 1000)` (≤ 209,900, so
//!   `lo_extendedprice` ≤ 10,495,000), `lo_revenue = lo_extendedprice × (100 −
//!   lo_discount) / 100`, `lo_supplycost = 6 × rprice / 10`, `lo_ordtotalprice` = Σ over
//!   the order's lines of `revenue × (100 + lo_tax) / 100` (< 80,000,000); integer
//!   division throughout, as in `ssb-dbgen`. The largest value that grows with SF is
//!   `lo_orderkey`: TPC-H's sparse keys (8 of every 32), ≈ 4 × orders, i.e.
//!   600,000,000 at SF 100. Everything fits `Int32` up to SF 357; larger SFs are
//!   rejected with [`DatagenError::ScaleFactorTooLarge`] (and would need far more memory
//!   than an in-process generator should take anyway). No column needs `Int64`.
//! * strings: `Utf8`, never padded (but `c_city`/`s_city` are 10 characters by
//!   definition: the nation's first 9 characters, space-padded, then a digit, e.g.
//!   `'UNITED KI1'`, `'CHINA    3'`).
//!
//! Differences from `ssb-dbgen`, all deliberate:
//!
//! * `p_brand1` is `MFGR#` + mfgr digit + category digit + the brand number as two digits
//!   (`MFGR#1101` .. `MFGR#5540`), as the SSB specification defines it; `ssb-dbgen` prints
//!   brands 1–9 with one digit (`MFGR#111`). The standard queries select the same rows.
//! * the `date` table follows the real calendar: `d_dayofweek` is the day's name,
//!   `d_daynuminweek` is 1 (Sunday) .. 7 (Saturday), `d_lastdayinweekfl` marks Saturdays
//!   and `d_weekdayfl` Monday–Friday (`ssb-dbgen` shifts the names by one day). The flags
//!   are integers 0/1 (`ssb-dbgen` prints the characters '0'/'1').
//! * `lo_partkey` is uniform over all parts. (`ssb-dbgen` draws it from
//!   `1 .. 200,000 × (⌊ln SF⌋ + 1)` while it generates `200,000 × ⌊1 + log₂ SF⌋` parts, so
//!   at SF ≥ 2 some parts never sell; at SF 1 the two agree.)
//! * the date table has 2,556 rows at every SF (`ssb-dbgen` also scales it down for SF < 1).
//! * `c_address`/`s_address` are random strings of 6–24 characters from `[0-9a-zA-Z,.]`.
//!
//! Generation is deterministic: each row (each order, for `lineorder`) draws from its own
//! random stream, seeded by the table and row number only, so the data never depends on
//! the number of threads. Orders are split into fixed batches of [`ORDERS_PER_BATCH`]
//! orders (≤ 65,534 rows) that run in parallel on the rayon pool; the dimension tables are
//! split into batches of [`crate::BATCH_SIZE`] rows.

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, StringArray};
use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use crate::{DatagenError, GeneratedTable, BATCH_SIZE};

/// The five SSB tables, in the order [`ssb`] returns them.
pub const SSB_TABLES: [&str; 5] = ["lineorder", "customer", "supplier", "part", "date"];

/// Orders per generated `lineorder` batch: at most 7 lines each, so a batch holds at most
/// 65,534 rows (≤ [`crate::BATCH_SIZE`]).
pub const ORDERS_PER_BATCH: u64 = 9362;

/// Rows of the `date` table: 1992-01-01 .. 1998-12-30.
pub const SSB_DATE_ROWS: usize = 2556;

const ORDERS_PER_SF: f64 = 1_500_000.0;
const CUSTOMERS_PER_SF: f64 = 30_000.0;
const SUPPLIERS_PER_SF: f64 = 2_000.0;
const PARTS_BASE: f64 = 200_000.0;

/// Order dates are uniform over the first 2,406 days (1992-01-01 .. 1998-08-02), as in
/// dbgen: the 7 years minus the longest ship + receipt delay (121 + 30 days).
const ORDER_DATE_DAYS: u32 = 2406;
/// Days from 1970-01-01 to 1992-01-01.
const EPOCH_1992: i32 = 8035;

/// Row counts of one SSB scale factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsbSizes {
    /// Orders; `lineorder` has 1–7 rows per order (≈ 4 × orders).
    pub orders: u64,
    pub customer: u64,
    pub supplier: u64,
    pub part: u64,
    pub date: u64,
}

/// The row counts [`ssb`] generates at `sf` (lineorder: the number of orders).
pub fn ssb_sizes(sf: f64) -> Result<SsbSizes, DatagenError> {
    if !sf.is_finite() || sf <= 0.0 {
        return Err(DatagenError::InvalidScaleFactor(sf));
    }
    let scaled = |base: f64| ((base * sf).round() as u64).max(1);
    let part = if sf >= 1.0 { (PARTS_BASE * (1.0 + sf.log2()).floor()) as u64 } else { scaled(PARTS_BASE) };
    let sizes = SsbSizes {
        orders: scaled(ORDERS_PER_SF),
        customer: scaled(CUSTOMERS_PER_SF),
        supplier: scaled(SUPPLIERS_PER_SF),
        part,
        date: SSB_DATE_ROWS as u64,
    };
    // Every key (the sparse order key is the largest) must fit Int32.
    if sparse_order_key(sizes.orders) > i32::MAX as u64 {
        return Err(DatagenError::ScaleFactorTooLarge(sf));
    }
    Ok(sizes)
}

/// Generates the five SSB tables, in the order of [`SSB_TABLES`].
pub fn ssb(sf: f64) -> Result<Vec<GeneratedTable>, DatagenError> {
    ssb_with_progress(sf, &|_, _| {})
}

/// [`ssb`] with a progress callback, called from the generating threads (in any order)
/// after each batch with the table name and the number of rows generated so far. Tables
/// are generated concurrently, so calls for different tables interleave.
pub fn ssb_with_progress(
    sf: f64,
    progress: &(dyn Fn(&str, usize) + Sync),
) -> Result<Vec<GeneratedTable>, DatagenError> {
    let sizes = ssb_sizes(sf)?;
    let cal = Calendar::new();
    SSB_TABLES.par_iter().map(|&name| generate_table(name, &sizes, &cal, progress)).collect()
}

/// The Arrow schema of SSB table `name` (as in [`SSB_TABLES`]), or `None` for another name.
pub fn ssb_schema(name: &str) -> Option<SchemaRef> {
    use DataType::{Int32, Utf8};
    let cols: &[(&str, DataType)] = match name {
        "lineorder" => &[
            ("lo_orderkey", Int32),
            ("lo_linenumber", Int32),
            ("lo_custkey", Int32),
            ("lo_partkey", Int32),
            ("lo_suppkey", Int32),
            ("lo_orderdate", Int32),
            ("lo_orderpriority", Utf8),
            ("lo_shippriority", Int32),
            ("lo_quantity", Int32),
            ("lo_extendedprice", Int32),
            ("lo_ordtotalprice", Int32),
            ("lo_discount", Int32),
            ("lo_revenue", Int32),
            ("lo_supplycost", Int32),
            ("lo_tax", Int32),
            ("lo_commitdate", Int32),
            ("lo_shipmode", Utf8),
        ],
        "customer" => &[
            ("c_custkey", Int32),
            ("c_name", Utf8),
            ("c_address", Utf8),
            ("c_city", Utf8),
            ("c_nation", Utf8),
            ("c_region", Utf8),
            ("c_phone", Utf8),
            ("c_mktsegment", Utf8),
        ],
        "supplier" => &[
            ("s_suppkey", Int32),
            ("s_name", Utf8),
            ("s_address", Utf8),
            ("s_city", Utf8),
            ("s_nation", Utf8),
            ("s_region", Utf8),
            ("s_phone", Utf8),
        ],
        "part" => &[
            ("p_partkey", Int32),
            ("p_name", Utf8),
            ("p_mfgr", Utf8),
            ("p_category", Utf8),
            ("p_brand1", Utf8),
            ("p_color", Utf8),
            ("p_type", Utf8),
            ("p_size", Int32),
            ("p_container", Utf8),
        ],
        "date" => &[
            ("d_datekey", Int32),
            ("d_date", Utf8),
            ("d_dayofweek", Utf8),
            ("d_month", Utf8),
            ("d_year", Int32),
            ("d_yearmonthnum", Int32),
            ("d_yearmonth", Utf8),
            ("d_daynuminweek", Int32),
            ("d_daynuminmonth", Int32),
            ("d_daynuminyear", Int32),
            ("d_monthnuminyear", Int32),
            ("d_weeknuminyear", Int32),
            ("d_sellingseason", Utf8),
            ("d_lastdayinweekfl", Int32),
            ("d_lastdayinmonthfl", Int32),
            ("d_holidayfl", Int32),
            ("d_weekdayfl", Int32),
        ],
        _ => return None,
    };
    Some(Arc::new(Schema::new(cols.iter().map(|(n, t)| Field::new(*n, t.clone(), false)).collect::<Vec<_>>())))
}

// ---------------------------------------------------------------------------------------
// Vocabularies (TPC-H's dists.dss, which ssb-dbgen reads)

/// The 25 TPC-H nations and their region (index into [`REGIONS`]).
const NATIONS: [(&str, usize); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];

const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];

const SEGMENTS: [&str; 5] = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"];

const PRIORITIES: [&str; 5] = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"];

const SHIP_MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];

const TYPE_1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
const TYPE_2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
const TYPE_3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];

const CONTAINER_1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
const CONTAINER_2: [&str; 8] = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];

#[rustfmt::skip]
const COLORS: [&str; 92] = [
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
    "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate",
    "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger",
    "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod",
    "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender",
    "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium", "metallic",
    "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid",
    "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red",
    "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky",
    "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise",
    "violet", "wheat", "white", "yellow",
];

/// Characters of the random address strings (64 of them, like dbgen's v-strings).
const ADDRESS_CHARS: &[u8; 64] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.";

const WEEKDAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// dbgen's selling seasons, checked in this order: (name, first month, last month).
const SEASONS: [(&str, u32, u32); 5] =
    [("Christmas", 11, 12), ("Summer", 5, 8), ("Winter", 1, 3), ("Spring", 4, 4), ("Fall", 9, 10)];

/// dbgen's holidays (month, day).
const HOLIDAYS: [(u32, u32); 10] =
    [(12, 24), (1, 1), (2, 20), (4, 20), (5, 20), (7, 20), (8, 20), (9, 20), (10, 20), (11, 20)];

// ---------------------------------------------------------------------------------------
// Random numbers

const SEED: u64 = 0x5353_425f_6770_7573; // "SSB_gpus"
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64, one independent stream per (table, row).
struct Rng(u64);

impl Rng {
    #[inline]
    fn new(stream: u64, row: u64) -> Rng {
        Rng(mix64(SEED ^ mix64(stream.wrapping_mul(GOLDEN) ^ row.wrapping_mul(0xd1b5_4a32_d192_ed03))))
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }

    /// Uniform in `0 .. n` (n ≥ 1).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo ..= hi`.
    #[inline]
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    #[inline]
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
    }
}

const STREAM_LINEORDER: u64 = 1;
const STREAM_CUSTOMER: u64 = 2;
const STREAM_SUPPLIER: u64 = 3;
const STREAM_PART: u64 = 4;

// ---------------------------------------------------------------------------------------
// Column builders

/// A Utf8 column built in place: no allocation per value.
struct StrCol {
    offsets: Vec<i32>,
    bytes: Vec<u8>,
}

impl StrCol {
    fn with_capacity(rows: usize, avg_len: usize) -> StrCol {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        StrCol { offsets, bytes: Vec::with_capacity(rows * avg_len) }
    }

    #[inline]
    fn push(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.end_value();
    }

    /// Ends the value whose bytes were written to `self.bytes` directly.
    #[inline]
    fn end_value(&mut self) {
        self.offsets.push(self.bytes.len() as i32);
    }

    fn finish(self) -> ArrayRef {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        Arc::new(StringArray::new(offsets, Buffer::from_vec(self.bytes), None))
    }
}

fn int_col(v: Vec<i32>) -> ArrayRef {
    Arc::new(Int32Array::from(v))
}

fn batch(name: &str, schema: &SchemaRef, cols: Vec<ArrayRef>) -> Result<RecordBatch, DatagenError> {
    RecordBatch::try_new(Arc::clone(schema), cols)
        .map_err(|source| DatagenError::Arrow { table: name.to_string(), source })
}

// ---------------------------------------------------------------------------------------
// Calendar

/// (year, month 1-12, day 1-31) of a day number counted from 1970-01-01.
fn civil_from_days(z: i32) -> (i32, u32, u32) {
    // Howard Hinnant's algorithm.
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u32;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe as i32 + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `yyyymmdd` of every day of the date table (day 0 = 1992-01-01).
struct Calendar {
    datekey: Vec<i32>,
}

impl Calendar {
    fn new() -> Calendar {
        let datekey = (0..SSB_DATE_ROWS as i32)
            .map(|k| {
                let (y, m, d) = civil_from_days(EPOCH_1992 + k);
                y * 10_000 + m as i32 * 100 + d as i32
            })
            .collect();
        Calendar { datekey }
    }
}

// ---------------------------------------------------------------------------------------
// Tables

/// TPC-H's sparse order key: of every 32 keys the first 8 are used.
fn sparse_order_key(i: u64) -> u64 {
    ((i >> 3) << 5) | (i & 7)
}

/// TPC-H's part retail price in cents (`rpb_routine` in dbgen).
#[inline]
fn retail_price(partkey: i64) -> i64 {
    90_000 + (partkey / 10) % 20_001 + 100 * (partkey % 1000)
}

fn generate_table(
    name: &str,
    sizes: &SsbSizes,
    cal: &Calendar,
    progress: &(dyn Fn(&str, usize) + Sync),
) -> Result<GeneratedTable, DatagenError> {
    let schema = ssb_schema(name).expect("SSB table name");
    let rows = AtomicUsize::new(0);
    let report = |n: usize| {
        let so_far = rows.fetch_add(n, Ordering::Relaxed) + n;
        progress(name, so_far);
    };
    // (number of units, units per batch); a unit is an order for lineorder, else a row.
    let (units, per_batch) = match name {
        "lineorder" => (sizes.orders, ORDERS_PER_BATCH),
        "customer" => (sizes.customer, BATCH_SIZE as u64),
        "supplier" => (sizes.supplier, BATCH_SIZE as u64),
        "part" => (sizes.part, BATCH_SIZE as u64),
        _ => (sizes.date, BATCH_SIZE as u64),
    };
    let nbatches = units.div_ceil(per_batch);
    let batches = (0..nbatches)
        .into_par_iter()
        .map(|b| {
            // Units are numbered from 1, like dbgen's keys.
            let first = b * per_batch + 1;
            let last = ((b + 1) * per_batch).min(units);
            let cols = match name {
                "lineorder" => lineorder_cols(first, last, sizes, cal),
                "customer" => customer_cols(first, last),
                "supplier" => supplier_cols(first, last),
                "part" => part_cols(first, last),
                _ => date_cols(first, last),
            };
            let rb = batch(name, &schema, cols)?;
            report(rb.num_rows());
            Ok(rb)
        })
        .collect::<Result<Vec<_>, DatagenError>>()?;
    Ok(GeneratedTable { name: name.to_string(), schema, batches })
}

/// The lineorder rows of orders `first ..= last`.
fn lineorder_cols(first: u64, last: u64, sizes: &SsbSizes, cal: &Calendar) -> Vec<ArrayRef> {
    // 4 lines per order on average, with a standard deviation of 2·√orders lines: reserve
    // 5 of those more, so that the columns (almost) never grow and waste their capacity.
    let orders = (last - first + 1) as f64;
    let cap = (4.0 * orders + 10.0 * orders.sqrt()) as usize + 64;
    let v = || Vec::<i32>::with_capacity(cap);
    let (mut okey, mut lnum, mut cust, mut part, mut supp, mut odate) = (v(), v(), v(), v(), v(), v());
    let (mut shipprio, mut qty, mut eprice, mut ototal, mut disc, mut rev) = (v(), v(), v(), v(), v(), v());
    let (mut scost, mut tax, mut cdate) = (v(), v(), v());
    // Average lengths 8.4 and 4.3 bytes.
    let mut prio = StrCol::with_capacity(cap, 9);
    let mut smode = StrCol::with_capacity(cap, 5);
    let ncust = sizes.customer as i64;
    let nsupp = sizes.supplier as i64;
    let npart = sizes.part as i64;
    for i in first..=last {
        let mut r = Rng::new(STREAM_LINEORDER, i);
        let key = sparse_order_key(i) as i32;
        let day = r.below(ORDER_DATE_DAYS as u64) as usize;
        let date = cal.datekey[day];
        // dbgen: a third of the customers (keys divisible by 3) never order.
        let mut c = r.range(1, ncust);
        if c % 3 == 0 {
            c = if c < ncust { c + 1 } else { c - 1 };
        }
        let priority = r.pick(&PRIORITIES);
        let lines = r.range(1, 7) as i32;
        let mut total: i64 = 0;
        for line in 1..=lines {
            let p = r.range(1, npart);
            let s = r.range(1, nsupp);
            let q = r.range(1, 50);
            let d = r.range(0, 10);
            let t = r.range(0, 8);
            let commit = day + r.range(30, 90) as usize;
            let mode = r.pick(&SHIP_MODES);
            let price = retail_price(p);
            let ext = price * q;
            let revenue = ext * (100 - d) / 100;
            total += revenue * (100 + t) / 100;
            okey.push(key);
            lnum.push(line);
            cust.push(c as i32);
            part.push(p as i32);
            supp.push(s as i32);
            odate.push(date);
            prio.push(priority);
            shipprio.push(0);
            qty.push(q as i32);
            eprice.push(ext as i32);
            disc.push(d as i32);
            rev.push(revenue as i32);
            scost.push((6 * price / 10) as i32);
            tax.push(t as i32);
            cdate.push(cal.datekey[commit]);
            smode.push(mode);
        }
        ototal.extend(std::iter::repeat_n(total as i32, lines as usize));
    }
    vec![
        int_col(okey),
        int_col(lnum),
        int_col(cust),
        int_col(part),
        int_col(supp),
        int_col(odate),
        prio.finish(),
        int_col(shipprio),
        int_col(qty),
        int_col(eprice),
        int_col(ototal),
        int_col(disc),
        int_col(rev),
        int_col(scost),
        int_col(tax),
        int_col(cdate),
        smode.finish(),
    ]
}

/// Appends a random address of 6–24 characters (dbgen: V_STR of average length 15).
fn push_address(col: &mut StrCol, r: &mut Rng) {
    let len = r.range(6, 24);
    for _ in 0..len {
        col.bytes.push(ADDRESS_CHARS[r.below(64) as usize]);
    }
    col.end_value();
}

/// Appends dbgen's city: the nation's first 9 characters, space-padded, then a digit.
fn push_city(col: &mut StrCol, nation: &str, digit: u64) {
    let n = nation.as_bytes();
    let prefix = &n[..n.len().min(9)];
    col.bytes.extend_from_slice(prefix);
    col.bytes.extend(std::iter::repeat_n(b' ', 9 - prefix.len()));
    col.bytes.push(b'0' + digit as u8);
    col.end_value();
}

/// Appends dbgen's phone number: country code 10 + nation, then three random groups.
fn push_phone(col: &mut StrCol, nation: usize, r: &mut Rng) {
    let (a, b, c) = (r.range(100, 999), r.range(100, 999), r.range(1000, 9999));
    write!(col.bytes, "{:02}-{a:03}-{b:03}-{c:04}", 10 + nation).expect("write to Vec");
    col.end_value();
}

/// Key, name, address, city, nation, region, phone: the columns customer and supplier share.
struct Party {
    key: Vec<i32>,
    name: StrCol,
    address: StrCol,
    city: StrCol,
    nation: StrCol,
    region: StrCol,
    phone: StrCol,
}

impl Party {
    fn with_capacity(n: usize) -> Party {
        Party {
            key: Vec::with_capacity(n),
            name: StrCol::with_capacity(n, 18),
            address: StrCol::with_capacity(n, 15),
            city: StrCol::with_capacity(n, 10),
            nation: StrCol::with_capacity(n, 8),
            region: StrCol::with_capacity(n, 6),
            phone: StrCol::with_capacity(n, 15),
        }
    }

    fn push(&mut self, tag: &str, key: u64, r: &mut Rng) {
        self.key.push(key as i32);
        write!(self.name.bytes, "{tag}#{key:09}").expect("write to Vec");
        self.name.end_value();
        push_address(&mut self.address, r);
        let n = r.below(NATIONS.len() as u64) as usize;
        let (nation, region) = NATIONS[n];
        push_city(&mut self.city, nation, r.below(10));
        self.nation.push(nation);
        self.region.push(REGIONS[region]);
        push_phone(&mut self.phone, n, r);
    }

    fn finish(self) -> Vec<ArrayRef> {
        vec![
            int_col(self.key),
            self.name.finish(),
            self.address.finish(),
            self.city.finish(),
            self.nation.finish(),
            self.region.finish(),
            self.phone.finish(),
        ]
    }
}

fn customer_cols(first: u64, last: u64) -> Vec<ArrayRef> {
    let n = (last - first + 1) as usize;
    let mut party = Party::with_capacity(n);
    let mut segment = StrCol::with_capacity(n, 9);
    for i in first..=last {
        let mut r = Rng::new(STREAM_CUSTOMER, i);
        party.push("Customer", i, &mut r);
        segment.push(r.pick(&SEGMENTS));
    }
    let mut cols = party.finish();
    cols.push(segment.finish());
    cols
}

fn supplier_cols(first: u64, last: u64) -> Vec<ArrayRef> {
    let mut party = Party::with_capacity((last - first + 1) as usize);
    for i in first..=last {
        let mut r = Rng::new(STREAM_SUPPLIER, i);
        party.push("Supplier", i, &mut r);
    }
    party.finish()
}

fn part_cols(first: u64, last: u64) -> Vec<ArrayRef> {
    let n = (last - first + 1) as usize;
    let mut key = Vec::with_capacity(n);
    let mut name = StrCol::with_capacity(n, 14);
    let mut mfgr = StrCol::with_capacity(n, 6);
    let mut category = StrCol::with_capacity(n, 7);
    let mut brand = StrCol::with_capacity(n, 9);
    let mut color = StrCol::with_capacity(n, 6);
    let mut ptype = StrCol::with_capacity(n, 20);
    let mut size = Vec::with_capacity(n);
    let mut container = StrCol::with_capacity(n, 7);
    for i in first..=last {
        let mut r = Rng::new(STREAM_PART, i);
        key.push(i as i32);
        // Three distinct colors: the first is p_color, the other two make p_name (dbgen
        // draws three and splits off the first).
        let nc = COLORS.len() as u64;
        let c0 = r.below(nc);
        let mut c1 = r.below(nc);
        while c1 == c0 {
            c1 = r.below(nc);
        }
        let mut c2 = r.below(nc);
        while c2 == c0 || c2 == c1 {
            c2 = r.below(nc);
        }
        color.push(COLORS[c0 as usize]);
        write!(name.bytes, "{} {}", COLORS[c1 as usize], COLORS[c2 as usize]).expect("write to Vec");
        name.end_value();
        let m = r.range(1, 5);
        let c = r.range(1, 5);
        let b = r.range(1, 40);
        write!(mfgr.bytes, "MFGR#{m}").expect("write to Vec");
        mfgr.end_value();
        write!(category.bytes, "MFGR#{m}{c}").expect("write to Vec");
        category.end_value();
        write!(brand.bytes, "MFGR#{m}{c}{b:02}").expect("write to Vec");
        brand.end_value();
        let (t1, t2, t3) = (r.pick(&TYPE_1), r.pick(&TYPE_2), r.pick(&TYPE_3));
        write!(ptype.bytes, "{t1} {t2} {t3}").expect("write to Vec");
        ptype.end_value();
        size.push(r.range(1, 50) as i32);
        let (k1, k2) = (r.pick(&CONTAINER_1), r.pick(&CONTAINER_2));
        write!(container.bytes, "{k1} {k2}").expect("write to Vec");
        container.end_value();
    }
    vec![
        int_col(key),
        name.finish(),
        mfgr.finish(),
        category.finish(),
        brand.finish(),
        color.finish(),
        ptype.finish(),
        int_col(size),
        container.finish(),
    ]
}

/// Date rows `first ..= last` (row 1 = 1992-01-01).
fn date_cols(first: u64, last: u64) -> Vec<ArrayRef> {
    let n = (last - first + 1) as usize;
    let v = || Vec::<i32>::with_capacity(n);
    let (mut datekey, mut year, mut yearmonthnum, mut daynuminweek) = (v(), v(), v(), v());
    let (mut daynuminmonth, mut daynuminyear, mut monthnuminyear, mut weeknuminyear) = (v(), v(), v(), v());
    let (mut lastdayinweek, mut lastdayinmonth, mut holiday, mut weekday) = (v(), v(), v(), v());
    let mut date = StrCol::with_capacity(n, 16);
    let mut dayofweek = StrCol::with_capacity(n, 8);
    let mut month = StrCol::with_capacity(n, 7);
    let mut yearmonth = StrCol::with_capacity(n, 7);
    let mut season = StrCol::with_capacity(n, 6);
    for row in first..=last {
        let days = EPOCH_1992 + (row - 1) as i32;
        let (y, m, d) = civil_from_days(days);
        // 1970-01-01 was a Thursday; 0 = Sunday.
        let wd = (days + 4).rem_euclid(7) as usize;
        let doy = days - days_from_civil_jan1(y) + 1;
        let mname = gpusql_common::date::MONTH_NAMES[m as usize - 1];
        datekey.push(y * 10_000 + m as i32 * 100 + d as i32);
        write!(date.bytes, "{mname} {d}, {y}").expect("write to Vec");
        date.end_value();
        dayofweek.push(WEEKDAYS[wd]);
        month.push(mname);
        year.push(y);
        yearmonthnum.push(y * 100 + m as i32);
        write!(yearmonth.bytes, "{}{y}", &mname[..3]).expect("write to Vec");
        yearmonth.end_value();
        daynuminweek.push(wd as i32 + 1);
        daynuminmonth.push(d as i32);
        daynuminyear.push(doy);
        monthnuminyear.push(m as i32);
        // dbgen: day-of-year / 7 + 1 (1 .. 53).
        weeknuminyear.push(doy / 7 + 1);
        let s = SEASONS.iter().find(|(_, lo, hi)| (*lo..=*hi).contains(&m)).map_or("", |s| s.0);
        season.push(s);
        lastdayinweek.push((wd == 6) as i32);
        lastdayinmonth.push((d == days_in_month(y, m)) as i32);
        holiday.push(HOLIDAYS.contains(&(m, d)) as i32);
        weekday.push((1..=5).contains(&wd) as i32);
    }
    vec![
        int_col(datekey),
        date.finish(),
        dayofweek.finish(),
        month.finish(),
        int_col(year),
        int_col(yearmonthnum),
        yearmonth.finish(),
        int_col(daynuminweek),
        int_col(daynuminmonth),
        int_col(daynuminyear),
        int_col(monthnuminyear),
        int_col(weeknuminyear),
        season.finish(),
        int_col(lastdayinweek),
        int_col(lastdayinmonth),
        int_col(holiday),
        int_col(weekday),
    ]
}

/// Day number (from 1970-01-01) of January 1 of `y`.
fn days_from_civil_jan1(y: i32) -> i32 {
    // Valid for the years the date table covers (and any year after 1900 and before 2100).
    let y0 = y - 1970;
    365 * y0 + (y - 1969).div_euclid(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;
    use std::collections::HashSet;

    fn table<'a>(tables: &'a [GeneratedTable], name: &str) -> &'a GeneratedTable {
        tables.iter().find(|t| t.name == name).unwrap()
    }

    /// One whole column as i32 values.
    fn ints(t: &GeneratedTable, col: &str) -> Vec<i32> {
        let i = t.schema.index_of(col).unwrap();
        t.batches.iter().flat_map(|b| b.column(i).as_primitive::<Int32Type>().values().to_vec()).collect()
    }

    fn strs(t: &GeneratedTable, col: &str) -> Vec<String> {
        let i = t.schema.index_of(col).unwrap();
        t.batches
            .iter()
            .flat_map(|b| {
                let a = b.column(i).as_string::<i32>();
                (0..a.len()).map(|k| a.value(k).to_string()).collect::<Vec<_>>()
            })
            .collect()
    }

    fn counts(tables: &[GeneratedTable]) -> Vec<(String, usize)> {
        tables.iter().map(|t| (t.name.clone(), t.num_rows())).collect()
    }

    #[test]
    fn sizes() {
        let s = ssb_sizes(1.0).unwrap();
        assert_eq!((s.orders, s.customer, s.supplier, s.part, s.date), (1_500_000, 30_000, 2_000, 200_000, 2556));
        let s = ssb_sizes(20.0).unwrap();
        assert_eq!((s.orders, s.customer, s.supplier, s.part), (30_000_000, 600_000, 40_000, 1_000_000));
        assert_eq!(ssb_sizes(2.0).unwrap().part, 400_000);
        assert_eq!(ssb_sizes(100.0).unwrap().part, 1_400_000);
        let s = ssb_sizes(0.01).unwrap();
        assert_eq!((s.orders, s.customer, s.supplier, s.part), (15_000, 300, 20, 2_000));
        let s = ssb_sizes(1e-9).unwrap();
        assert_eq!((s.orders, s.customer, s.supplier, s.part, s.date), (1, 1, 1, 1, 2556));
        assert!(ssb_sizes(357.0).is_ok());
        assert!(matches!(ssb_sizes(358.0), Err(DatagenError::ScaleFactorTooLarge(_))));
        for sf in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(ssb(sf), Err(DatagenError::InvalidScaleFactor(_))));
        }
    }

    #[test]
    fn row_counts_sf001() {
        let tables = ssb(0.01).unwrap();
        let got = counts(&tables);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, SSB_TABLES);
        assert_eq!(
            &got[1..],
            &[
                ("customer".to_string(), 300),
                ("supplier".to_string(), 20),
                ("part".to_string(), 2_000),
                ("date".to_string(), 2556),
            ]
        );
        // 15,000 orders of 4 lines on average (standard deviation ≈ 245 rows).
        let lo = got[0].1;
        assert!((58_500..=61_500).contains(&lo), "lineorder rows {lo}");
        assert_eq!(ints(&tables[0], "lo_orderkey").iter().collect::<HashSet<_>>().len(), 15_000);
    }

    #[test]
    fn row_counts_sf1() {
        let tables = ssb(1.0).unwrap();
        let got = counts(&tables);
        assert_eq!(
            &got[1..],
            &[
                ("customer".to_string(), 30_000),
                ("supplier".to_string(), 2_000),
                ("part".to_string(), 200_000),
                ("date".to_string(), 2556),
            ]
        );
        // 1.5M orders × 4 lines (standard deviation ≈ 2,450 rows).
        let lo = got[0].1;
        assert!((5_988_000..=6_012_000).contains(&lo), "lineorder rows {lo}");
        let keys = ints(&tables[0], "lo_orderkey");
        assert_eq!(*keys.last().unwrap(), sparse_order_key(1_500_000) as i32);
    }

    #[test]
    fn schema_and_batches() {
        for t in ssb(0.01).unwrap() {
            assert_eq!(ssb_schema(&t.name).unwrap(), t.schema);
            for f in t.schema.fields() {
                assert!(!f.is_nullable());
                assert!(matches!(f.data_type(), DataType::Int32 | DataType::Utf8));
                if f.name().ends_with("key") {
                    assert_eq!(f.data_type(), &DataType::Int32, "{}.{}", t.name, f.name());
                }
            }
            for b in &t.batches {
                assert_eq!(b.schema(), t.schema);
                assert!(b.num_rows() <= BATCH_SIZE && b.num_rows() > 0);
                assert!(b.columns().iter().all(|c| c.null_count() == 0));
            }
        }
        assert!(ssb_schema("lineitem").is_none());
    }

    #[test]
    fn value_domains() {
        let tables = ssb(0.05).unwrap();
        let sizes = ssb_sizes(0.05).unwrap();
        let lo = table(&tables, "lineorder");
        let date = table(&tables, "date");
        let datekeys: Vec<i32> = ints(date, "d_datekey");
        assert_eq!(datekeys[0], 19920101);
        assert_eq!(*datekeys.last().unwrap(), 19981230);
        assert!(datekeys.windows(2).all(|w| w[0] < w[1]));
        let dk: HashSet<i32> = datekeys.iter().copied().collect();
        let in_range = |col: &str, lo_v: i32, hi_v: i32| {
            let v = ints(lo, col);
            let (mn, mx) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
            assert_eq!((mn, mx), (lo_v, hi_v), "{col}: min/max");
            v
        };
        let qty = in_range("lo_quantity", 1, 50);
        let disc = in_range("lo_discount", 0, 10);
        in_range("lo_tax", 0, 8);
        in_range("lo_linenumber", 1, 7);
        in_range("lo_shippriority", 0, 0);
        in_range("lo_suppkey", 1, sizes.supplier as i32);
        let parts = ints(lo, "lo_partkey");
        assert!(parts.iter().all(|&p| p >= 1 && p <= sizes.part as i32));
        let custs = ints(lo, "lo_custkey");
        assert!(custs.iter().all(|&c| c >= 1 && c <= sizes.customer as i32 && c % 3 != 0));
        let odate = ints(lo, "lo_orderdate");
        let cdate = ints(lo, "lo_commitdate");
        assert!(odate.iter().all(|d| dk.contains(d)));
        assert!(cdate.iter().all(|d| dk.contains(d)));
        assert_eq!(*odate.iter().min().unwrap(), 19920101);
        assert_eq!(*odate.iter().max().unwrap(), 19980802);
        assert!(odate.iter().zip(&cdate).all(|(o, c)| c > o));
        let ext = ints(lo, "lo_extendedprice");
        let rev = ints(lo, "lo_revenue");
        let cost = ints(lo, "lo_supplycost");
        for k in 0..ext.len() {
            let price = retail_price(parts[k] as i64);
            assert_eq!(ext[k] as i64, price * qty[k] as i64);
            assert_eq!(rev[k] as i64, ext[k] as i64 * (100 - disc[k] as i64) / 100);
            assert_eq!(cost[k] as i64, 6 * price / 10);
        }
        let prio: HashSet<String> = strs(lo, "lo_orderpriority").into_iter().collect();
        assert_eq!(prio, PRIORITIES.iter().map(|s| s.to_string()).collect());
        let modes: HashSet<String> = strs(lo, "lo_shipmode").into_iter().collect();
        assert_eq!(modes, SHIP_MODES.iter().map(|s| s.to_string()).collect());

        let part = table(&tables, "part");
        let mfgr = strs(part, "p_mfgr");
        let cat = strs(part, "p_category");
        let brand = strs(part, "p_brand1");
        for k in 0..mfgr.len() {
            assert!(cat[k].starts_with(&mfgr[k]) && cat[k].len() == 7, "{}", cat[k]);
            assert!(brand[k].starts_with(&cat[k]) && brand[k].len() == 9, "{}", brand[k]);
            let b: u32 = brand[k][7..].parse().unwrap();
            assert!((1..=40).contains(&b));
        }
        assert_eq!(mfgr.iter().collect::<HashSet<_>>().len(), 5);
        assert_eq!(cat.iter().collect::<HashSet<_>>().len(), 25);
        assert_eq!(brand.iter().collect::<HashSet<_>>().len(), 1000);
        assert_eq!(strs(part, "p_type").iter().collect::<HashSet<_>>().len(), 150);
        assert_eq!(strs(part, "p_container").iter().collect::<HashSet<_>>().len(), 40);
        assert!(strs(part, "p_name").iter().all(|n| n.split(' ').count() == 2));
        let size = ints(part, "p_size");
        assert_eq!((*size.iter().min().unwrap(), *size.iter().max().unwrap()), (1, 50));

        let cust = table(&tables, "customer");
        let city = strs(cust, "c_city");
        let nation = strs(cust, "c_nation");
        let region = strs(cust, "c_region");
        for k in 0..city.len() {
            assert_eq!(city[k].len(), 10);
            let prefix = format!("{:<9}", &nation[k][..nation[k].len().min(9)]);
            assert_eq!(&city[k][..9], prefix);
            assert!(city[k].as_bytes()[9].is_ascii_digit());
            let n = NATIONS.iter().find(|n| n.0 == nation[k]).unwrap();
            assert_eq!(REGIONS[n.1], region[k]);
        }
        assert!(city.iter().any(|c| c == "UNITED KI1" || c == "UNITED KI5"));
        assert_eq!(strs(cust, "c_name")[0], "Customer#000000001");
        let phone = strs(cust, "c_phone");
        assert!(phone.iter().all(|p| p.len() == 15 && p.as_bytes()[2] == b'-'));
        assert_eq!(strs(table(&tables, "supplier"), "s_name")[0], "Supplier#000000001");
    }

    #[test]
    fn date_table() {
        let tables = ssb(0.001).unwrap();
        let d = table(&tables, "date");
        let row = |key: i32| ints(d, "d_datekey").iter().position(|&k| k == key).unwrap();
        let col = |c: &str, r: usize| ints(d, c)[r];
        let scol = |c: &str, r: usize| strs(d, c)[r].clone();
        let r = row(19920101);
        assert_eq!(scol("d_date", r), "January 1, 1992");
        assert_eq!(scol("d_dayofweek", r), "Wednesday");
        assert_eq!(scol("d_month", r), "January");
        assert_eq!(scol("d_yearmonth", r), "Jan1992");
        assert_eq!(scol("d_sellingseason", r), "Winter");
        assert_eq!(
            [
                "d_year",
                "d_yearmonthnum",
                "d_daynuminweek",
                "d_daynuminmonth",
                "d_daynuminyear",
                "d_monthnuminyear",
                "d_weeknuminyear",
                "d_lastdayinweekfl",
                "d_lastdayinmonthfl",
                "d_holidayfl",
                "d_weekdayfl",
            ]
            .map(|c| col(c, r)),
            [1992, 199201, 4, 1, 1, 1, 1, 0, 0, 1, 1]
        );
        let r = row(19971231);
        assert_eq!(scol("d_dayofweek", r), "Wednesday");
        assert_eq!(scol("d_yearmonth", r), "Dec1997");
        assert_eq!(scol("d_sellingseason", r), "Christmas");
        assert_eq!(col("d_daynuminyear", r), 365);
        assert_eq!(col("d_weeknuminyear", r), 53);
        assert_eq!(col("d_lastdayinmonthfl", r), 1);
        let r = row(19960229);
        assert_eq!(col("d_daynuminyear", r), 60);
        assert_eq!(col("d_lastdayinmonthfl", r), 1);
        let r = row(19980704); // a Saturday
        assert_eq!(scol("d_dayofweek", r), "Saturday");
        assert_eq!((col("d_lastdayinweekfl", r), col("d_weekdayfl", r)), (1, 0));
        // Each year has 365 or 366 rows, 1998 ends on the 30th.
        let years = ints(d, "d_year");
        for (y, n) in [(1992, 366), (1993, 365), (1996, 366), (1998, 364)] {
            assert_eq!(years.iter().filter(|&&v| v == y).count(), n, "{y}");
        }
    }

    #[test]
    fn deterministic_and_thread_independent() {
        let a = ssb(0.02).unwrap();
        let b = ssb(0.02).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let c = pool.install(|| ssb(0.02)).unwrap();
        for ((x, y), z) in a.iter().zip(&b).zip(&c) {
            assert_eq!(x.batches, y.batches, "{}", x.name);
            assert_eq!(x.batches, z.batches, "{}", x.name);
        }
        assert_ne!(a[0].batches[0], ssb(0.03).unwrap()[0].batches[0]);
    }

    #[test]
    fn progress_reaches_row_count() {
        crate::tests::assert_progress_reaches_rows(&|p| ssb_with_progress(0.01, p).unwrap());
    }

    /// Q1.1: d_year = 1993 and lo_discount between 1 and 3 and lo_quantity < 25 selects
    /// ≈ 365/2406 × 3/11 × 24/50 ≈ 1.99% of lineorder.
    #[test]
    fn q11_selectivity() {
        let tables = ssb(0.1).unwrap();
        let lo = table(&tables, "lineorder");
        let (date, disc, qty) = (ints(lo, "lo_orderdate"), ints(lo, "lo_discount"), ints(lo, "lo_quantity"));
        let hits =
            (0..date.len()).filter(|&k| date[k] / 10_000 == 1993 && (1..=3).contains(&disc[k]) && qty[k] < 25).count();
        let sel = hits as f64 / date.len() as f64;
        assert!((0.015..=0.025).contains(&sel), "Q1.1 selectivity {sel}");
    }

    #[test]
    fn calendar_helpers() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(EPOCH_1992), (1992, 1, 1));
        assert_eq!(civil_from_days(EPOCH_1992 + 2555), (1998, 12, 30));
        assert_eq!(days_from_civil_jan1(1992), EPOCH_1992);
        assert_eq!(days_from_civil_jan1(1970), 0);
        assert_eq!(sparse_order_key(1), 1);
        assert_eq!(sparse_order_key(7), 7);
        assert_eq!(sparse_order_key(8), 32);
        assert_eq!(retail_price(155_190), 124_519);
    }
}
