//! Types shared by every phase: SQL data types, scalar values, errors.
//! Kept free of heavy dependencies (only arrow's type enum for conversions).

pub mod cancel;
pub mod case_map;
pub mod constraints;
pub mod datatype;
pub mod date;
pub mod double_text;
pub mod error;
pub mod files;
pub mod interval;
pub mod scalar;
pub mod schema;
pub mod semantics;
pub mod strftime;
pub mod string_hash;
pub mod strptime;
pub mod suggest;
pub mod text_cast;
pub mod xorshift;

pub use cancel::{CancelToken, Ticker};
pub use constraints::{OnConflict, UniqueKey};
pub use datatype::DataType;
pub use error::{Error, Result};
pub use files::{Compression, CsvOptions, FileFormat, FileScan, WriteOptions};
pub use interval::Interval;
pub use scalar::ScalarValue;
pub use schema::{
    one_row_schema, Catalog, ColumnStatistics, DictionaryCatalog, Field, ReplicaCatalog, ReplicaMode, ReplicaRequest,
    ReplicaSummary, SampleRows, Schema, TableInfo, TableSample, TableStatistics, ViewInfo, ONE_ROW_TABLE,
    VALUES_TABLE_PREFIX,
};
pub use string_hash::{str_hash32, FNV_OFFSET_BASIS, FNV_PRIME};
