//! Executes physical plans: on the GPU (`gpu`: generated kernels over GPU-resident
//! columns) or on the CPU reference backend (`cpu`: the same stages, row at a time, the
//! oracle in tests).

pub mod cpu;
pub mod gpu;
pub mod stats;

pub use stats::{ExecStats, HostSteps, KernelStat};
