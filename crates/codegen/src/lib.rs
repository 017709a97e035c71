//! Produce/consume code generation: each pipeline becomes one fused CUDA kernel. Every
//! operator's code begins with a comment naming it, so EXPLAIN and the source read side
//! by side. The executor binds the kernel's parameters from `KernelSpec::params`.
//!
//! Layout: `pipeline` assembles a kernel from the operators in `ops/` (one file each),
//! which write into a `KernelBuilder`; `expr` generates expressions; `hash_table` and
//! `in_set` are device data structures operators share; `literals` passes the query's
//! constants as kernel parameters; `spec` is what the executor gets back;
//! `device_constants` are the values Rust and CUDA share. Modules only import
//! downwards in that order (no cycles).

mod device_constants;
mod emit;
mod expr;
mod hash_table;
mod hyperloglog;
pub mod in_set;
mod interval;
mod kernel_builder;
pub mod literals;
mod math;
mod ops;
mod pipeline;
mod quantile;
pub mod sort;
mod spec;
mod strings;
pub mod types;
mod value;
pub mod window;

pub use device_constants::{code_type, merge_modules, prelude, strptime_failure, KernelError, HASH_SEED, RADIX_TILE};
pub use ops::lane_refill::payload_columns_read;
pub use pipeline::generate_pipeline;
pub use spec::*;
pub use types::c_type;
