//! Finding and loading libcuda and libnvrtc.
//!
//! cudarc (with `dynamic-loading`) opens the CUDA libraries by soname on first use and
//! panics when they are missing. NVRTC in particular usually lives outside the
//! default library path (`/usr/local/cuda-13.0/targets/x86_64-linux/lib`, or a pip
//! wheel's `site-packages/nvidia/cu13/lib`). So we look for the libraries ourselves,
//! `dlopen` them by full path and keep them loaded forever. When cudarc later
//! `dlopen`s the soname (`libnvrtc.so.13`, `libcuda.so.1`) the dynamic loader finds the
//! already-loaded object and hands that back instead of searching the path.
//!
//! Only after that do we let cudarc touch the library (`is_culib_present()` first).

use std::env;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use libloading::Library;

use crate::CudaError;

/// NVRTC sonames we accept, best first: cudarc is built with CUDA 13.0 bindings,
/// whose NVRTC entry points are also present in CUDA 12.
const NVRTC_NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];
const LIBCUDA_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

/// Where distributions and container runtimes put the driver library.
const LIBCUDA_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/wsl/lib",
];

/// Path of the NVRTC library we would load, if any.
///
/// Search order: `$GPUSQL_NVRTC` (a file), then for each accepted soname in turn
/// (`.so.13`, `.so.12`, `.so`): `$CUDA_HOME`/`$CUDA_PATH` (`lib64`,
/// `targets/x86_64-linux/lib`), `/usr/local/cuda*/targets/x86_64-linux/lib`,
/// `/usr/local/cuda*/lib64`, and pip's `nvidia/cu13/lib` (or CUDA 12's
/// `nvidia/cuda_nvrtc/lib`) under Python site-packages directories.
pub fn find_nvrtc() -> Option<PathBuf> {
    nvrtc_candidates().into_iter().next()
}

/// Path of the driver library (`libcuda.so.1`) we would load, if any.
/// `$GPUSQL_LIBCUDA` (a file) wins; then the usual system and container directories.
pub fn find_libcuda() -> Option<PathBuf> {
    libcuda_candidates().into_iter().next()
}

/// Loads NVRTC (once per process) so that cudarc's NVRTC calls cannot panic.
/// Returns the path it was loaded from.
pub fn ensure_nvrtc_loaded() -> Result<PathBuf, CudaError> {
    static LOADED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let candidates = nvrtc_candidates();
            let loaded = load_first(&candidates, preload_nvrtc_builtins);
            // SAFETY: only dlopens the candidate names; never panics.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                let path = loaded.unwrap_or_else(|| PathBuf::from("libnvrtc.so (system library path)"));
                tracing::debug!(path = %path.display(), "NVRTC loaded");
                Ok(path)
            } else {
                Err(not_found_message(
                    "NVRTC (libnvrtc.so.13)",
                    &candidates,
                    "set GPUSQL_NVRTC to the library file, set CUDA_HOME, or `pip install nvidia-cuda-nvrtc`",
                ))
            }
        })
        .clone()
        .map_err(CudaError::Unavailable)
}

/// Loads the CUDA driver library (once per process) so that cudarc's driver calls
/// cannot panic. Returns the path it was loaded from.
pub fn ensure_driver_loaded() -> Result<PathBuf, CudaError> {
    static LOADED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let candidates = libcuda_candidates();
            let mut loaded = load_first(&candidates, |_| {});
            if loaded.is_none() {
                // Not in a known directory: let the loader search its own path
                // (ld.so.cache, LD_LIBRARY_PATH) for the soname.
                loaded = load_first(&[PathBuf::from("libcuda.so.1")], |_| {});
            }
            // SAFETY: only dlopens the candidate names; never panics.
            if unsafe { cudarc::driver::sys::is_culib_present() } {
                let path = loaded.unwrap_or_else(|| PathBuf::from("libcuda.so (system library path)"));
                tracing::debug!(path = %path.display(), "CUDA driver library loaded");
                Ok(path)
            } else {
                Err(not_found_message(
                    "the CUDA driver (libcuda.so.1)",
                    &candidates,
                    "is an NVIDIA driver installed? GPUSQL_LIBCUDA may name the library file",
                ))
            }
        })
        .clone()
        .map_err(CudaError::Unavailable)
}

fn not_found_message(what: &str, tried: &[PathBuf], hint: &str) -> String {
    if tried.is_empty() {
        format!("{what} not found; {hint}")
    } else {
        let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        format!("{what} could not be loaded (tried {}); {hint}", tried.join(", "))
    }
}

/// dlopens the first candidate that loads and leaks its handle, so the library
/// stays mapped for the life of the process (cudarc holds `&'static` symbols).
fn load_first(candidates: &[PathBuf], before: impl Fn(&Path)) -> Option<PathBuf> {
    for path in candidates {
        before(path);
        // SAFETY: loading a shared library runs its initialisers; these are
        // NVIDIA's own libraries, which is what cudarc would load anyway.
        match unsafe { Library::new(path) } {
            Ok(lib) => {
                std::mem::forget(lib);
                return Some(path.clone());
            }
            Err(e) => tracing::debug!(path = %path.display(), error = %e, "could not load"),
        }
    }
    None
}

/// NVRTC dlopens `libnvrtc-builtins.so.<major>.<minor>` by soname at compile time.
/// libnvrtc has no RPATH, so when it lives outside the loader's path (pip wheels,
/// `/usr/local/cuda/...`) that lookup fails unless the builtins are already loaded.
fn preload_nvrtc_builtins(nvrtc: &Path) {
    let Some(dir) = nvrtc.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("libnvrtc-builtins.so.") {
            // SAFETY: as in load_first.
            if let Ok(lib) = unsafe { Library::new(entry.path()) } {
                std::mem::forget(lib);
            }
        }
    }
}

fn nvrtc_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = env_path("GPUSQL_NVRTC") {
        if p.is_file() {
            out.push(p);
        } else {
            tracing::warn!(path = %p.display(), "GPUSQL_NVRTC does not name a file; searching elsewhere");
        }
    }
    let mut dirs = toolkit_lib_dirs();
    let cheap_python = python_lib_dirs(&cheap_site_dirs());
    dirs.extend(cheap_python);
    push_existing(&mut out, &dirs, NVRTC_NAMES);
    if out.is_empty() {
        // Only ask the Python interpreter (a subprocess) when nothing cheaper worked.
        let dirs = python_lib_dirs(interpreter_site_dirs());
        push_existing(&mut out, &dirs, NVRTC_NAMES);
    }
    out
}

fn libcuda_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = env_path("GPUSQL_LIBCUDA") {
        if p.is_file() {
            out.push(p);
        }
    }
    let dirs: Vec<PathBuf> = LIBCUDA_DIRS.iter().map(PathBuf::from).collect();
    push_existing(&mut out, &dirs, LIBCUDA_NAMES);
    out
}

/// For each name in preference order, every directory holding that file.
fn push_existing(out: &mut Vec<PathBuf>, dirs: &[PathBuf], names: &[&str]) {
    for name in names {
        for dir in dirs {
            let p = dir.join(name);
            if p.is_file() && !out.contains(&p) {
                out.push(p);
            }
        }
    }
}

fn env_path(var: &str) -> Option<PathBuf> {
    env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Library directories of CUDA toolkits: `$CUDA_HOME`, `$CUDA_PATH`, then
/// `/usr/local/cuda*` (newest version first).
fn toolkit_lib_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"].iter().filter_map(|v| env_path(v)).collect();
    let mut local: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().and_then(OsStr::to_str).is_some_and(|n| n.starts_with("cuda")))
                .collect()
        })
        .unwrap_or_default();
    // "cuda-13.0" before "cuda-12.4"; the unversioned "cuda" symlink sorts last.
    local.sort_by_key(|p| std::cmp::Reverse(version_of(p)));
    roots.extend(local);
    let mut dirs = Vec::new();
    for root in &roots {
        dirs.push(root.join("targets/x86_64-linux/lib"));
        dirs.push(root.join("lib64"));
        dirs.push(root.join("lib"));
    }
    dirs
}

/// (major, minor) parsed from a "cuda-13.0" style directory name; (0, 0) if none.
fn version_of(p: &Path) -> (u32, u32) {
    let name = p.file_name().and_then(OsStr::to_str).unwrap_or("");
    let ver = name.trim_start_matches("cuda").trim_start_matches('-');
    let mut it = ver.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// Where NVIDIA's pip wheels put NVRTC inside a site-packages directory.
fn python_lib_dirs(sites: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for site in sites {
        dirs.push(site.join("nvidia/cu13/lib"));
        dirs.push(site.join("nvidia/cuda_nvrtc/lib"));
    }
    dirs
}

/// Site-packages directories found without running Python: `$GPUSQL_PYTHON_SITE`
/// (a `:`-separated list), the active virtualenv, `./.venv`, and `~/.local`.
fn cheap_site_dirs() -> Vec<PathBuf> {
    let mut sites = Vec::new();
    if let Some(list) = env::var_os("GPUSQL_PYTHON_SITE") {
        sites.extend(env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    let mut prefixes = Vec::new();
    if let Some(venv) = env_path("VIRTUAL_ENV") {
        prefixes.push(venv);
    }
    if let Ok(cwd) = env::current_dir() {
        prefixes.push(cwd.join(".venv"));
    }
    if let Some(home) = env_path("HOME") {
        prefixes.push(home.join(".local"));
    }
    for prefix in prefixes {
        sites.extend(python_site_packages_under(&prefix.join("lib")));
    }
    sites
}

/// `<lib>/python3*/site-packages` for every Python 3 version present.
fn python_site_packages_under(lib: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}

/// `site.getsitepackages()` of `python3`, asked at most once per process.
fn interpreter_site_dirs() -> &'static [PathBuf] {
    static SITES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    SITES.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import site\nfor p in site.getsitepackages(): print(p)"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect(),
            _ => Vec::new(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_never_panics() {
        // On machines without CUDA these return None / Err; with CUDA, real paths.
        let nvrtc = find_nvrtc();
        let cuda = find_libcuda();
        println!("nvrtc: {nvrtc:?}, libcuda: {cuda:?}");
        match ensure_driver_loaded() {
            Ok(p) => println!("driver loaded from {}", p.display()),
            Err(e) => {
                assert!(matches!(e, CudaError::Unavailable(_)));
                println!("{e}");
            }
        }
        match ensure_nvrtc_loaded() {
            Ok(p) => println!("nvrtc loaded from {}", p.display()),
            Err(e) => {
                assert!(matches!(e, CudaError::Unavailable(_)));
                assert!(nvrtc.is_none() || e.to_string().contains("could not be loaded"));
            }
        }
    }

    #[test]
    fn toolkit_dirs_sort_newest_first() {
        let mut v = [
            PathBuf::from("/usr/local/cuda"),
            PathBuf::from("/usr/local/cuda-12.4"),
            PathBuf::from("/usr/local/cuda-13.0"),
        ];
        v.sort_by_key(|p| std::cmp::Reverse(version_of(p)));
        assert_eq!(v[0], PathBuf::from("/usr/local/cuda-13.0"));
        assert_eq!(v[2], PathBuf::from("/usr/local/cuda"));
    }

    #[test]
    fn missing_env_file_is_ignored() {
        // A GPUSQL_NVRTC that names nothing must not break discovery.
        assert!(!Path::new("/definitely/not/here/libnvrtc.so.13").is_file());
        let dirs = python_lib_dirs(&[PathBuf::from("/nonexistent")]);
        let mut out = Vec::new();
        push_existing(&mut out, &dirs, NVRTC_NAMES);
        assert!(out.is_empty());
    }
}
