//! GPU access for gpusql: finding the CUDA libraries, compiling generated CUDA C++
//! with NVRTC straight to CUBIN, caching compiled kernels, and a `GpuDevice` that
//! wraps a cudarc context + stream with memory accounting and timing.
//!
//! Nothing in this crate panics when CUDA is missing: cudarc loads libcuda/libnvrtc
//! lazily and panics if they are absent, so every entry point first finds and loads
//! the libraries itself (see [`libs`]) and returns [`CudaError::Unavailable`] when
//! they are not there.

pub mod cache;
pub mod compile;
pub mod compile_pool;
pub mod device;
pub mod graph;
pub mod libs;
pub mod staging;
pub mod timer;

pub use cache::{CacheHit, CompileStats, KernelCache};
pub use compile::{compile_cubin, compile_cubin_tier, compile_profile, nvrtc_version, CompileProfile, Tier};
pub use compile_pool::Priority;
pub use device::GpuDevice;
pub use graph::Graph;
pub use staging::{Piece, STAGING_BYTES};
pub use timer::{EndedTimer, GpuTimer};

/// The cudarc version this crate is built against, re-exported so callers use
/// exactly the same types.
pub use cudarc;
pub use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};

const GIB: f64 = (1u64 << 30) as f64;

/// Formats a byte count as GiB with two decimals ("1.20").
fn gib(bytes: usize) -> String {
    format!("{:.2}", bytes as f64 / GIB)
}

/// Errors of the CUDA layer. The engine converts these into its own error type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudaError {
    /// No usable GPU: libcuda or libnvrtc missing, no device, driver init failed.
    #[error("GPU unavailable: {0}")]
    Unavailable(String),
    /// NVRTC rejected the source. `msg` holds a summary and the numbered source lines
    /// around each error; `log` is NVRTC's full log.
    #[error("NVRTC compilation failed: {msg}\n--- NVRTC log ---\n{log}")]
    Nvrtc { msg: String, log: String },
    /// Any other CUDA driver failure (launch, copy, module load, ...).
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// GPU memory exhausted; names what did not fit.
    #[error("GPU out of memory: {what} needs {} GiB, {} GiB free", gib(*.requested), gib(*.free))]
    OutOfMemory { what: String, requested: usize, free: usize },
}

impl CudaError {
    /// Wraps a driver error with the operation that failed.
    pub(crate) fn driver(context: &str, err: cudarc::driver::DriverError) -> Self {
        CudaError::Driver(format!("{context}: {}", describe_driver_error(err)))
    }
}

/// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
/// Only call once libcuda is loaded (cudarc's error formatting calls into it).
pub(crate) fn describe_driver_error(err: cudarc::driver::DriverError) -> String {
    match err.error_string() {
        Ok(s) => format!("{:?} ({})", err.0, s.to_string_lossy()),
        Err(_) => format!("{:?}", err.0),
    }
}
