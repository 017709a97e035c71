//! Table storage. Tables live on the host as chunks of Arrow arrays (`host`; the
//! catalog, the CPU backend's input), read from files where they come from files
//! (`files`), and are uploaded to GPU memory column by column on first use, then stay
//! resident (`device`, through `upload`).

pub mod catalog;
pub mod convert;
pub mod device;
pub mod files;
pub mod host;
pub mod replica;
pub mod string_dictionary;
pub mod upload;

pub use catalog::{IfExists, TableStore};
pub use device::{DeviceColumn, DeviceStore};
pub use host::{ChunkSource, FilesInfo, HostTable};
