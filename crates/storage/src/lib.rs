//! Table storage. Tables live on the host as chunks of Arrow arrays (`host`; the
//! catalog, the CPU backend's input), read from files where they come from files
//! (`files`). Nothing here needs CUDA: the GPU executor uploads columns on first use and
//! keeps them resident (`gpusql_exec::gpu::device_store`).

pub mod catalog;
pub mod constraints;
pub mod convert;
pub mod files;
pub mod host;
pub mod replica;
pub mod string_dictionary;

pub use catalog::{IfExists, TableStore};
pub use host::{ChunkSource, FilesInfo, HostTable};
