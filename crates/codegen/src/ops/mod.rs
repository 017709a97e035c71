//! The operators of a pipeline kernel, one file each. A pipeline is generated
//! produce/consume style: its source (`scan`) produces the row, each operator consumes the
//! row it is given and leaves the row the next one consumes, and a sink (materialize,
//! hash build, aggregate) consumes the last. The code of all of them lands in one row loop
//! (`KernelBuilder`), so a row stays in registers from the scan to the sink.

pub mod aggregate;
pub mod band_probe;
pub mod common;
pub mod filter;
pub mod hash_build;
pub mod hash_probe;
pub mod lane_refill;
pub mod like_kmp;
pub mod materialize;
pub mod project;
pub mod scan;

use crate::kernel_builder::KernelBuilder;
use crate::spec::InitKernel;
use gpusql_common::Result;

/// An operator between a pipeline's source and its sink.
pub trait Operator {
    /// Emits its code for the current row (a comment naming it first). It uses the row's
    /// columns through `KernelBuilder::load_columns` and `eval`, and leaves the row the
    /// next operator consumes: the same row with fewer active lanes (a filter, a join),
    /// with columns appended (a join's build columns, a mark), or a new row (a projection).
    fn consume(&self, k: &mut KernelBuilder) -> Result<()>;
}

/// The end of a pipeline: writes each row that reaches it somewhere (rows, groups, a hash
/// table). Returns the init kernel its tables need before the pipeline runs, if any.
pub trait SinkOperator {
    fn consume(&self, k: &mut KernelBuilder, entry: &str) -> Result<Option<InitKernel>>;
}
