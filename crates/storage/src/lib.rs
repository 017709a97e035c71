//! Table storage. Tables live on the host as Arrow arrays (the catalog, the CPU backend's
//! input) and are uploaded to GPU memory column by column on first use, then stay
//! resident (`device`).

pub mod convert;
pub mod device;
pub mod host;
pub mod replica;
pub mod string_dictionary;

pub use device::{DeviceColumn, DeviceStore};
pub use host::{HostTable, TableStore};
