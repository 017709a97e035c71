//! Finding the repository's data folders (`tpch/`, `sql-tests/`) from wherever the
//! binary runs: a checkout (cargo run), or a copied tree on a machine without cargo.

use std::path::{Path, PathBuf};

/// `name` under the current directory or one of its ancestors, else under an ancestor of
/// the executable (target/release/gpusql sits two levels below the repository root).
pub fn find_repo_dir(name: &str) -> Option<PathBuf> {
    let from_cwd = std::env::current_dir().ok();
    let from_exe = std::env::current_exe().ok().and_then(|p| p.canonicalize().ok());
    [from_cwd, from_exe].into_iter().flatten().find_map(|start| search_up(&start, name))
}

fn search_up(start: &Path, name: &str) -> Option<PathBuf> {
    start.ancestors().map(|a| a.join(name)).find(|p| p.is_dir())
}

/// The folder given on the command line, else the one found by [`find_repo_dir`].
pub fn resolve_dir(given: Option<&Path>, name: &str, flag: &str) -> Result<PathBuf, String> {
    match given {
        Some(p) if p.is_dir() => Ok(p.to_path_buf()),
        Some(p) => Err(format!("{}: not a directory", p.display())),
        None => find_repo_dir(name)
            .ok_or_else(|| format!("cannot find the '{name}' folder in the current directory, its parents or the executable's; pass {flag} DIR")),
    }
}
