//! Types shared by every phase: SQL data types, scalar values, errors.
//! Kept free of heavy dependencies (only arrow's type enum for conversions).

pub mod datatype;
pub mod error;
pub mod scalar;
pub mod date;
pub mod schema;

pub use datatype::DataType;
pub use error::{Error, Result};
pub use scalar::ScalarValue;
pub use schema::{Catalog, DictionaryCatalog, Field, ReplicaCatalog, ReplicaMode, ReplicaRequest, ReplicaSummary, Schema, TableInfo, TableSample};
