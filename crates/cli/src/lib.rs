//! Library part of the `gpusql` binary: the suite runner shared by `gpusql check` (on the
//! GPU machine, where there is no cargo) and the workspace tests.

pub mod check;
pub mod fuzz;
