//! In-process TPC-H data generation, SSB (the Star Schema Benchmark, see [`mod@ssb`]), and
//! the tables of the skew benchmarks (see [`skew`]).
//!
//! Wraps [`tpchgen`] / [`tpchgen_arrow`] (a Rust port of `dbgen`, byte-for-byte identical
//! output) and returns Arrow record batches with the fixed column types of [`tpch_schema`]:
//!
//! * every `*key` column: `Int64`
//! * `l_linenumber`, `p_size`, `ps_availqty`, `o_shippriority`: `Int32`
//! * every `DECIMAL(15,2)` column (prices, quantities, discounts, taxes, balances, costs):
//!   `Decimal128(15, 2)`
//! * dates: `Date32`
//! * `CHAR(n)` / `VARCHAR(n)`: `Utf8`, never padded
//!
//! All columns are non-nullable.
//!
//! Generation is split into parts (the `part` / `part_count` arguments of the tpchgen
//! generators) and the parts run in parallel on the rayon pool. The part count depends only
//! on the table and the scale factor, never on the number of threads, so the output,
//! including its batch boundaries, is deterministic.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow, SupplierArrow,
};

pub mod skew;
pub mod ssb;
pub use ssb::{ssb, ssb_schema, ssb_sizes, ssb_with_progress, SsbSizes, ORDERS_PER_BATCH, SSB_DATE_ROWS, SSB_TABLES};

/// The eight TPC-H tables, in the order [`tpch`] returns them.
pub const TPCH_TABLES: [&str; 8] =
    ["nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"];

/// Largest number of rows in one generated record batch.
pub const BATCH_SIZE: usize = 65_536;

/// One generated table.
#[derive(Debug, Clone)]
pub struct GeneratedTable {
    pub name: String,
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl GeneratedTable {
    /// Total number of rows over all batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    #[error("invalid scale factor {0}: it must be a finite number greater than 0")]
    InvalidScaleFactor(f64),
    #[error("scale factor {0} is too large for the generator")]
    ScaleFactorTooLarge(f64),
    #[error("unknown TPC-H table '{0}' (expected one of nation, region, part, supplier, partsupp, customer, orders, lineitem)")]
    UnknownTable(String),
    #[error("generating table {table}: {source}")]
    Arrow {
        table: String,
        #[source]
        source: ArrowError,
    },
    #[error("generating TPC-H table {table}: generator produced columns {got:?}, expected {expected:?}")]
    SchemaMismatch { table: String, got: Vec<String>, expected: Vec<String> },
    #[error("writing {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}: {source}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: ArrowError,
    },
}

impl From<DatagenError> for gpusql_common::Error {
    fn from(e: DatagenError) -> Self {
        match e {
            DatagenError::InvalidScaleFactor(_)
            | DatagenError::ScaleFactorTooLarge(_)
            | DatagenError::UnknownTable(_) => gpusql_common::Error::InvalidInput(e.to_string()),
            _ => gpusql_common::Error::Io(e.to_string()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Nation,
    Region,
    Part,
    Supplier,
    PartSupp,
    Customer,
    Orders,
    LineItem,
}

impl Table {
    fn from_name(name: &str) -> Result<Table, DatagenError> {
        let t = match name.trim().to_ascii_lowercase().as_str() {
            "nation" => Table::Nation,
            "region" => Table::Region,
            "part" => Table::Part,
            "supplier" => Table::Supplier,
            "partsupp" => Table::PartSupp,
            "customer" => Table::Customer,
            "orders" => Table::Orders,
            "lineitem" => Table::LineItem,
            _ => return Err(DatagenError::UnknownTable(name.to_string())),
        };
        Ok(t)
    }

    fn name(self) -> &'static str {
        match self {
            Table::Nation => "nation",
            Table::Region => "region",
            Table::Part => "part",
            Table::Supplier => "supplier",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    /// Number of generator units (what tpchgen splits into parts) and how many of them go
    /// into one part. Units are rows, except partsupp (parts, 4 rows each) and lineitem
    /// (orders, 1..7 rows each). `None` for the fixed tables, which are never split (their
    /// generators ignore the part arguments).
    fn units_and_part_size(self, sf: f64) -> Option<(f64, f64)> {
        match self {
            Table::Nation | Table::Region => None,
            Table::Part => Some((200_000.0 * sf, 100_000.0)),
            Table::Supplier => Some((10_000.0 * sf, 100_000.0)),
            Table::PartSupp => Some((200_000.0 * sf, 50_000.0)),
            Table::Customer => Some((150_000.0 * sf, 100_000.0)),
            Table::Orders => Some((1_500_000.0 * sf, 100_000.0)),
            Table::LineItem => Some((1_500_000.0 * sf, 50_000.0)),
        }
    }

    /// Deterministic part count: a function of the table and scale factor only.
    fn num_parts(self, sf: f64) -> i32 {
        match self.units_and_part_size(sf) {
            None => 1,
            Some((units, per_part)) => (units / per_part).ceil().clamp(1.0, 1_000_000.0) as i32,
        }
    }
}

fn fields(cols: &[(&str, DataType)]) -> SchemaRef {
    Arc::new(Schema::new(cols.iter().map(|(n, t)| Field::new(*n, t.clone(), false)).collect::<Vec<_>>()))
}

fn schema_of(table: Table) -> SchemaRef {
    use DataType::{Date32, Int32, Int64, Utf8};
    let dec = DataType::Decimal128(15, 2);
    match table {
        Table::Nation => {
            fields(&[("n_nationkey", Int64), ("n_name", Utf8), ("n_regionkey", Int64), ("n_comment", Utf8)])
        }
        Table::Region => fields(&[("r_regionkey", Int64), ("r_name", Utf8), ("r_comment", Utf8)]),
        Table::Part => fields(&[
            ("p_partkey", Int64),
            ("p_name", Utf8),
            ("p_mfgr", Utf8),
            ("p_brand", Utf8),
            ("p_type", Utf8),
            ("p_size", Int32),
            ("p_container", Utf8),
            ("p_retailprice", dec),
            ("p_comment", Utf8),
        ]),
        Table::Supplier => fields(&[
            ("s_suppkey", Int64),
            ("s_name", Utf8),
            ("s_address", Utf8),
            ("s_nationkey", Int64),
            ("s_phone", Utf8),
            ("s_acctbal", dec),
            ("s_comment", Utf8),
        ]),
        Table::PartSupp => fields(&[
            ("ps_partkey", Int64),
            ("ps_suppkey", Int64),
            ("ps_availqty", Int32),
            ("ps_supplycost", dec),
            ("ps_comment", Utf8),
        ]),
        Table::Customer => fields(&[
            ("c_custkey", Int64),
            ("c_name", Utf8),
            ("c_address", Utf8),
            ("c_nationkey", Int64),
            ("c_phone", Utf8),
            ("c_acctbal", dec),
            ("c_mktsegment", Utf8),
            ("c_comment", Utf8),
        ]),
        Table::Orders => fields(&[
            ("o_orderkey", Int64),
            ("o_custkey", Int64),
            ("o_orderstatus", Utf8),
            ("o_totalprice", dec),
            ("o_orderdate", Date32),
            ("o_orderpriority", Utf8),
            ("o_clerk", Utf8),
            ("o_shippriority", Int32),
            ("o_comment", Utf8),
        ]),
        Table::LineItem => fields(&[
            ("l_orderkey", Int64),
            ("l_partkey", Int64),
            ("l_suppkey", Int64),
            ("l_linenumber", Int32),
            ("l_quantity", dec.clone()),
            ("l_extendedprice", dec.clone()),
            ("l_discount", dec.clone()),
            ("l_tax", dec),
            ("l_returnflag", Utf8),
            ("l_linestatus", Utf8),
            ("l_shipdate", Date32),
            ("l_commitdate", Date32),
            ("l_receiptdate", Date32),
            ("l_shipinstruct", Utf8),
            ("l_shipmode", Utf8),
            ("l_comment", Utf8),
        ]),
    }
}

/// The Arrow schema [`tpch_table`] produces for `name`, without generating anything.
pub fn tpch_schema(name: &str) -> Result<SchemaRef, DatagenError> {
    Ok(schema_of(Table::from_name(name)?))
}

fn check_sf(sf: f64) -> Result<(), DatagenError> {
    if !sf.is_finite() || sf <= 0.0 {
        return Err(DatagenError::InvalidScaleFactor(sf));
    }
    // tpchgen computes row counts as `(i32 base as f64 * sf) as i64` and keys as i64;
    // beyond this the 32-bit part arithmetic and key spaces are no longer meaningful.
    if sf > 100_000.0 {
        return Err(DatagenError::ScaleFactorTooLarge(sf));
    }
    Ok(())
}

type BatchIter = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;

/// The tpchgen-arrow batch iterator of one part (1-based) of `table`.
fn part_iter(table: Table, sf: f64, part: i32, parts: i32) -> BatchIter {
    match table {
        Table::Nation => Box::new(NationArrow::new(NationGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE)),
        Table::Region => Box::new(RegionArrow::new(RegionGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE)),
        Table::Part => Box::new(PartArrow::new(PartGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE)),
        Table::Supplier => {
            Box::new(SupplierArrow::new(SupplierGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE))
        }
        Table::PartSupp => {
            Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE))
        }
        Table::Customer => {
            Box::new(CustomerArrow::new(CustomerGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE))
        }
        Table::Orders => Box::new(OrderArrow::new(OrderGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE)),
        Table::LineItem => {
            Box::new(LineItemArrow::new(LineItemGenerator::new(sf, part, parts)).with_batch_size(BATCH_SIZE))
        }
    }
}

/// Casts a tpchgen-arrow batch (Utf8View strings) to the target schema.
fn convert_batch(table: Table, batch: RecordBatch, target: &SchemaRef) -> Result<RecordBatch, DatagenError> {
    let arrow_err = |source| DatagenError::Arrow { table: table.name().to_string(), source };
    let src = batch.schema();
    let names_match = src.fields().len() == target.fields().len()
        && src.fields().iter().zip(target.fields()).all(|(a, b)| a.name() == b.name());
    if !names_match {
        return Err(DatagenError::SchemaMismatch {
            table: table.name().to_string(),
            got: src.fields().iter().map(|f| f.name().clone()).collect(),
            expected: target.fields().iter().map(|f| f.name().clone()).collect(),
        });
    }
    // `safe: false`: a value that does not fit the target type is an error, not a NULL.
    let opts = CastOptions { safe: false, ..Default::default() };
    let cols = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(col, field)| -> Result<ArrayRef, DatagenError> {
            if col.data_type() == field.data_type() {
                Ok(Arc::clone(col))
            } else {
                cast_with_options(col, field.data_type(), &opts).map_err(arrow_err)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(Arc::clone(target), cols).map_err(arrow_err)
}

fn generate(
    table: Table,
    sf: f64,
    parts: i32,
    progress: &(dyn Fn(&str, usize) + Sync),
) -> Result<GeneratedTable, DatagenError> {
    let schema = schema_of(table);
    let rows = AtomicUsize::new(0);
    let per_part: Vec<Vec<RecordBatch>> = (1..=parts)
        .into_par_iter()
        .map(|part| {
            let mut out = Vec::new();
            for batch in part_iter(table, sf, part, parts) {
                let batch = batch.map_err(|source| DatagenError::Arrow { table: table.name().into(), source })?;
                let n = batch.num_rows();
                out.push(convert_batch(table, batch, &schema)?);
                let so_far = rows.fetch_add(n, Ordering::Relaxed) + n;
                progress(table.name(), so_far);
            }
            Ok(out)
        })
        .collect::<Result<_, DatagenError>>()?;
    Ok(GeneratedTable { name: table.name().to_string(), schema, batches: per_part.into_iter().flatten().collect() })
}

/// Generates one TPC-H table (`name` as in [`TPCH_TABLES`], case-insensitive).
pub fn tpch_table(name: &str, sf: f64) -> Result<GeneratedTable, DatagenError> {
    tpch_table_with_progress(name, sf, &|_, _| {})
}

/// [`tpch_table`] with a progress callback, called from the generating threads (in any
/// order) after each batch with the table name and the number of rows generated so far.
pub fn tpch_table_with_progress(
    name: &str,
    sf: f64,
    progress: &(dyn Fn(&str, usize) + Sync),
) -> Result<GeneratedTable, DatagenError> {
    check_sf(sf)?;
    let table = Table::from_name(name)?;
    generate(table, sf, table.num_parts(sf), progress)
}

/// Generates all eight TPC-H tables, in the order of [`TPCH_TABLES`].
pub fn tpch(sf: f64) -> Result<Vec<GeneratedTable>, DatagenError> {
    tpch_with_progress(sf, &|_, _| {})
}

/// [`tpch`] with a progress callback (see [`tpch_table_with_progress`]); tables are
/// generated concurrently, so calls for different tables interleave.
pub fn tpch_with_progress(
    sf: f64,
    progress: &(dyn Fn(&str, usize) + Sync),
) -> Result<Vec<GeneratedTable>, DatagenError> {
    check_sf(sf)?;
    TPCH_TABLES.par_iter().map(|name| tpch_table_with_progress(name, sf, progress)).collect()
}

/// Writes `<dir>/<name>.csv` for each table (creating `dir`): a header row, then one record
/// per row; RFC 4180 quoting (a field is quoted only if it holds a comma, quote or line
/// break; quotes are doubled), `\n` line ends, decimals at their exact scale (`17.00`),
/// dates `YYYY-MM-DD`, NULL as an empty field.
pub fn write_csv_dir(tables: &[GeneratedTable], dir: &Path) -> Result<(), DatagenError> {
    std::fs::create_dir_all(dir).map_err(|source| DatagenError::Io { path: dir.to_path_buf(), source })?;
    for t in tables {
        write_csv_file(t, &dir.join(format!("{}.csv", t.name)))?;
    }
    Ok(())
}

fn csv_bytes(batch: &RecordBatch, header: bool, path: &Path) -> Result<Vec<u8>, DatagenError> {
    let mut buf = Vec::with_capacity(batch.num_rows() * 128 + 256);
    {
        let mut w = arrow::csv::WriterBuilder::new()
            .with_header(header)
            .with_date_format("%Y-%m-%d".to_string())
            .with_null(String::new())
            .build(&mut buf);
        w.write(batch).map_err(|source| DatagenError::Csv { path: path.to_path_buf(), source })?;
    }
    Ok(buf)
}

fn write_csv_file(t: &GeneratedTable, path: &Path) -> Result<(), DatagenError> {
    let io_err = |source| DatagenError::Io { path: path.to_path_buf(), source };
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(io_err)?);
    // Header alone, from an empty batch, so that an empty table still gets one.
    out.write_all(&csv_bytes(&RecordBatch::new_empty(Arc::clone(&t.schema)), true, path)?).map_err(io_err)?;
    // Format batches in parallel, a bounded window at a time, and write them in order.
    let window = rayon::current_num_threads().max(1) * 2;
    for chunk in t.batches.chunks(window) {
        let bufs = chunk.par_iter().map(|b| csv_bytes(b, false, path)).collect::<Result<Vec<_>, _>>()?;
        for b in bufs {
            out.write_all(&b).map_err(io_err)?;
        }
    }
    out.flush().map_err(io_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, StringArray};

    const SF: f64 = 0.01;

    #[test]
    fn row_counts_sf001() {
        let tables = tpch(SF).unwrap();
        let got: Vec<(String, usize)> = tables.iter().map(|t| (t.name.clone(), t.num_rows())).collect();
        let want = [
            ("nation", 25),
            ("region", 5),
            ("part", 2000),
            ("supplier", 100),
            ("partsupp", 8000),
            ("customer", 1500),
            ("orders", 15000),
            ("lineitem", 60175),
        ];
        let want: Vec<(String, usize)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn column_types() {
        use DataType::*;
        let dec = Decimal128(15, 2);
        for t in tpch(SF).unwrap() {
            for f in t.schema.fields() {
                let n = f.name().as_str();
                let want = if n.ends_with("key") {
                    Int64
                } else if matches!(n, "l_linenumber" | "p_size" | "ps_availqty" | "o_shippriority") {
                    Int32
                } else if matches!(
                    n,
                    "l_quantity"
                        | "l_extendedprice"
                        | "l_discount"
                        | "l_tax"
                        | "p_retailprice"
                        | "s_acctbal"
                        | "ps_supplycost"
                        | "c_acctbal"
                        | "o_totalprice"
                ) {
                    dec.clone()
                } else if n.ends_with("date") {
                    Date32
                } else {
                    Utf8
                };
                assert_eq!(f.data_type(), &want, "{}.{n}", t.name);
                assert!(!f.is_nullable());
            }
            for b in &t.batches {
                assert_eq!(b.schema(), t.schema);
                assert!(b.num_rows() <= BATCH_SIZE);
            }
            assert_eq!(tpch_schema(&t.name).unwrap(), t.schema);
        }
    }

    #[test]
    fn deterministic() {
        let a = tpch(SF).unwrap();
        let b = tpch(SF).unwrap();
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.batches, y.batches, "table {}", x.name);
        }
    }

    /// Splitting into parts must not change the data (only batch boundaries).
    #[test]
    fn parts_do_not_change_data() {
        let noop = |_: &str, _: usize| {};
        for table in [Table::LineItem, Table::PartSupp, Table::Orders, Table::Supplier] {
            let one = generate(table, SF, 1, &noop).unwrap();
            let many = generate(table, SF, 7, &noop).unwrap();
            let cat = |t: &GeneratedTable| arrow::compute::concat_batches(&t.schema, &t.batches).unwrap();
            assert_eq!(cat(&one), cat(&many), "table {:?}", table);
        }
    }

    #[test]
    fn known_values() {
        let li = tpch_table("lineitem", SF).unwrap();
        let b = &li.batches[0];
        let fmt = arrow::util::display::ArrayFormatter::try_new(b.column(4).as_ref(), &Default::default()).unwrap();
        assert_eq!(fmt.value(0).to_string(), "17.00");
        let flag = b.column(8).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(flag.value(0), "N");
        // Fixed-width CHAR columns come unpadded. (Addresses and comments are random text
        // that may legitimately end in a space.)
        let nation = tpch_table("nation", SF).unwrap();
        let names = nation.batches[0].column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(names.value(0), "ALGERIA");
        for t in tpch(SF).unwrap() {
            for b in &t.batches {
                for (f, c) in b.schema().fields().iter().zip(b.columns()) {
                    if f.data_type() != &DataType::Utf8
                        || f.name().ends_with("comment")
                        || f.name().ends_with("address")
                    {
                        continue;
                    }
                    let s = c.as_any().downcast_ref::<StringArray>().unwrap();
                    assert_eq!(s.null_count(), 0);
                    for v in s.iter().flatten() {
                        assert!(!v.ends_with(' '), "{}.{} = {v:?} is padded", t.name, f.name());
                    }
                }
            }
        }
    }

    /// The progress callback's last report per table equals the table's rows.
    pub(crate) fn assert_progress_reaches_rows(
        generate: &dyn Fn(&(dyn Fn(&str, usize) + Sync)) -> Vec<GeneratedTable>,
    ) {
        let max = std::sync::Mutex::new(std::collections::HashMap::<String, usize>::new());
        let tables = generate(&|name, rows| {
            let mut m = max.lock().unwrap();
            let e = m.entry(name.to_string()).or_default();
            *e = (*e).max(rows);
        });
        let max = max.into_inner().unwrap();
        for t in &tables {
            assert_eq!(max[&t.name], t.num_rows(), "{}", t.name);
        }
    }

    #[test]
    fn progress_reaches_row_count() {
        assert_progress_reaches_rows(&|p| tpch_with_progress(SF, p).unwrap());
    }

    #[test]
    fn rejects_bad_input() {
        for sf in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(tpch(sf), Err(DatagenError::InvalidScaleFactor(_))));
            assert!(matches!(tpch_table("nation", sf), Err(DatagenError::InvalidScaleFactor(_))));
        }
        assert!(matches!(tpch_table("nope", 1.0), Err(DatagenError::UnknownTable(_))));
        assert_eq!(tpch_table("LineItem", 0.001).unwrap().name, "lineitem");
    }

    #[test]
    fn csv_output() {
        let dir = std::env::temp_dir().join(format!("gpusql-datagen-test-{}", std::process::id()));
        let tables = vec![tpch_table("region", SF).unwrap(), tpch_table("orders", SF).unwrap()];
        write_csv_dir(&tables, &dir).unwrap();
        let region = std::fs::read_to_string(dir.join("region.csv")).unwrap();
        let mut lines = region.lines();
        assert_eq!(lines.next(), Some("r_regionkey,r_name,r_comment"));
        assert!(lines.next().unwrap().starts_with("0,AFRICA,"));
        let orders = std::fs::read_to_string(dir.join("orders.csv")).unwrap();
        let mut lines = orders.lines();
        assert_eq!(
            lines.next(),
            Some("o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_orderpriority,o_clerk,o_shippriority,o_comment")
        );
        // dbgen's first order at SF 0.01 (the comment ends in a space, kept unquoted).
        assert_eq!(
            lines.next(),
            Some("1,370,O,172799.49,1996-01-02,5-LOW,Clerk#000000951,0,nstructions sleep furiously among ")
        );
        // A comment holding a comma is quoted.
        assert_eq!(
            lines.next(),
            Some("2,781,O,38426.09,1996-12-01,1-URGENT,Clerk#000000880,0,\" foxes. pending accounts at the pending, silent asymptot\"")
        );
        // An empty table still gets its header.
        let empty = GeneratedTable { name: "empty".into(), schema: tpch_schema("nation").unwrap(), batches: vec![] };
        write_csv_dir(&[empty], &dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("empty.csv")).unwrap(),
            "n_nationkey,n_name,n_regionkey,n_comment\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
