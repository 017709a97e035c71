//! Kernel cache: loaded modules in memory, CUBINs on disk.
//!
//! Key = sha256(cache format, source, arch, NVRTC version, NVRTC options, tier). The memory
//! level holds loaded `CudaModule`s (so a repeated query neither compiles nor
//! reloads); the disk level holds CUBIN files so a new process skips NVRTC. The disk
//! is an optimisation only: any disk problem degrades to memory-only caching.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::CudaModule;
use sha2::{Digest, Sha256};
use std::hash::{BuildHasherDefault, Hasher};

use crate::compile::{compile_cubin_tier, Tier, NVRTC_OPTIONS};
use crate::CudaError;

/// Bump when the on-disk format or the meaning of a key changes.
const CACHE_FORMAT: &str = "gpusql-kernel-cache-v1";

/// Where a kernel came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheHit {
    /// Module already loaded in this process.
    Memory,
    /// CUBIN read from the disk cache (no NVRTC run), then loaded.
    Disk,
    /// Compiled with NVRTC, then loaded.
    Miss,
}

/// What getting a kernel cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompileStats {
    pub cache_hit: CacheHit,
    /// NVRTC time (0 unless `cache_hit == Miss`).
    pub compile_ms: f64,
    /// Module load + function lookup time (disk read included for `Disk`).
    pub load_ms: f64,
}

pub struct KernelCache {
    dir: Option<PathBuf>,
    /// Cleared after the first failed write so a read-only disk is not retried.
    disk_writable: AtomicBool,
    /// Off: the disk level is neither read nor written (`set_disk_enabled`).
    disk_enabled: AtomicBool,
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// Keys of sources seen before: a stage loads several kernels of one module, and the
    /// executor's helper module on every hash build and sort, so the sha256 of ~30 KB of
    /// source (tens of microseconds) is computed once per source, not per load.
    keys: Mutex<HashMap<String, [Option<String>; 2], BuildHasherDefault<SourceHasher>>>,
}

/// A fast non-cryptographic hash of kernel sources for the key memo (four independent
/// multiply-rotate lanes over 8-byte words); equal hashes are confirmed by comparing the
/// sources, so a collision costs a comparison, never a wrong kernel.
#[derive(Default)]
pub struct SourceHasher(u64);

impl Hasher for SourceHasher {
    fn write(&mut self, bytes: &[u8]) {
        const M: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut lanes = [self.0 ^ bytes.len() as u64, M, M.rotate_left(17), M.rotate_left(41)];
        let mut chunks = bytes.chunks_exact(32);
        for c in &mut chunks {
            for (k, lane) in lanes.iter_mut().enumerate() {
                let w = u64::from_le_bytes(c[k * 8..k * 8 + 8].try_into().unwrap_or_default());
                *lane = (*lane ^ w).wrapping_mul(M).rotate_left(29);
            }
        }
        let mut h = lanes.iter().fold(0u64, |h, l| (h ^ l).wrapping_mul(M).rotate_left(31));
        for &b in chunks.remainder() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCache").field("dir", &self.dir).field("modules", &self.memory_len()).finish()
    }
}

impl Default for KernelCache {
    fn default() -> Self {
        Self::with_default_dir()
    }
}

impl KernelCache {
    /// A cache with CUBINs stored in `dir` (created if needed). If the directory
    /// cannot be created, the cache is memory-only.
    pub fn new(dir: Option<PathBuf>) -> Self {
        let dir = dir.and_then(|d| match std::fs::create_dir_all(&d) {
            Ok(()) => Some(d),
            Err(e) => {
                tracing::warn!(dir = %d.display(), error = %e, "kernel disk cache disabled");
                None
            }
        });
        KernelCache {
            dir,
            disk_writable: AtomicBool::new(true),
            disk_enabled: AtomicBool::new(true),
            modules: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::default()),
        }
    }

    pub fn memory_only() -> Self {
        Self::new(None)
    }

    /// A cache in [`KernelCache::default_dir`].
    pub fn with_default_dir() -> Self {
        Self::new(Self::default_dir())
    }

    /// `$GPUSQL_CACHE_DIR` (empty or `none` disables the disk cache), else
    /// `$XDG_CACHE_HOME/gpusql/kernels`, else `~/.cache/gpusql/kernels`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(v) = std::env::var_os("GPUSQL_CACHE_DIR") {
            if v.is_empty() || v == "none" {
                return None;
            }
            return Some(PathBuf::from(v));
        }
        let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
        if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").and_then(abs) {
            return Some(xdg.join("gpusql/kernels"));
        }
        std::env::var_os("HOME").and_then(abs).map(|h| h.join(".cache/gpusql/kernels"))
    }

    /// The disk directory in use, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// `key(source, …)`, remembered per source and tier (the arch and NVRTC version of one
    /// device do not change).
    pub fn key_memo(&self, source: &str, arch: &str, nvrtc_version: (i32, i32), tier: Tier) -> String {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let i = tier as usize;
        if let Some(k) = keys.get(source).and_then(|k| k[i].as_ref()) {
            return k.clone();
        }
        let k = Self::key(source, arch, nvrtc_version, tier);
        keys.entry(source.to_string()).or_default()[i] = Some(k.clone());
        k
    }

    /// Hex sha256 identifying a compiled kernel.
    pub fn key(source: &str, arch: &str, nvrtc_version: (i32, i32), tier: Tier) -> String {
        let mut h = Sha256::new();
        let options = NVRTC_OPTIONS.iter().chain(tier.options()).copied().collect::<Vec<_>>().join(" ");
        for part in [CACHE_FORMAT, arch, &format!("{nvrtc_version:?}"), &options] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        h.update(source.as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A module loaded earlier under `key`.
    pub fn get_module(&self, key: &str) -> Option<Arc<CudaModule>> {
        self.lock().get(key).cloned()
    }

    /// Remembers a loaded module. If another thread got there first, returns its
    /// module (and drops `module`) so everyone shares one.
    pub fn insert_module(&self, key: &str, module: Arc<CudaModule>) -> Arc<CudaModule> {
        self.lock().entry(key.to_string()).or_insert(module).clone()
    }

    /// Number of modules held in memory.
    pub fn memory_len(&self) -> usize {
        self.lock().len()
    }

    /// Drops all loaded modules (functions already handed out stay valid).
    pub fn clear_memory(&self) {
        self.lock().clear();
    }

    /// Drops the loaded modules whose key `keep` rejects.
    pub fn retain_modules(&self, keep: impl Fn(&str) -> bool) {
        self.lock().retain(|k, _| keep(k));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CudaModule>>> {
        // A panic elsewhere while holding the lock leaves the map usable.
        self.modules.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cubin_path(&self, key: &str) -> Option<PathBuf> {
        let enabled = self.disk_enabled.load(Ordering::Relaxed);
        self.dir.as_ref().filter(|_| enabled).map(|d| d.join(format!("{key}.cubin")))
    }

    /// Turns the disk level off (or on again): `gpusql bench --cold` measures first runs
    /// with nothing cached, without touching the user's cache folder.
    pub fn set_disk_enabled(&self, on: bool) {
        self.disk_enabled.store(on, Ordering::Relaxed);
    }

    /// The CUBIN stored under `key`, if present and plausibly valid (ELF magic).
    pub fn read_cubin(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.cubin_path(key)?;
        let bytes = std::fs::read(&path).ok()?;
        if bytes.starts_with(b"\x7fELF") {
            Some(bytes)
        } else {
            self.remove_cubin(key);
            None
        }
    }

    /// Stores a CUBIN; failures only log (and turn further writes off).
    pub fn write_cubin(&self, key: &str, cubin: &[u8]) {
        static TMP_SEQ: AtomicU64 = AtomicU64::new(0);
        let Some(path) = self.cubin_path(key) else {
            return;
        };
        if !self.disk_writable.load(Ordering::Relaxed) {
            return;
        }
        // Write to a unique temp name, then rename: readers never see a partial file.
        let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("tmp.{}.{seq}", std::process::id()));
        let result = std::fs::write(&tmp, cubin).and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            if self.disk_writable.swap(false, Ordering::Relaxed) {
                tracing::warn!(path = %path.display(), error = %e, "kernel disk cache not writable; caching in memory only");
            }
        }
    }

    /// Stores one CUBIN under each of `keys` (a program merged from several modules, whose
    /// keys all name it): one file, hard-linked under the other keys (a copy where links
    /// fail), so a merged program costs its size on disk once.
    pub fn write_cubin_shared(&self, keys: &[String], cubin: &[u8]) {
        let Some((first, rest)) = keys.split_first() else { return };
        self.write_cubin(first, cubin);
        let Some(target) = self.cubin_path(first).filter(|p| p.is_file()) else { return };
        for k in rest {
            let Some(path) = self.cubin_path(k) else { return };
            let _ = std::fs::remove_file(&path);
            if std::fs::hard_link(&target, &path).is_err() {
                self.write_cubin(k, cubin);
            }
        }
    }

    /// Whether a CUBIN is stored under `key` (not read: see `read_cubin`).
    pub fn has_cubin(&self, key: &str) -> bool {
        self.cubin_path(key).is_some_and(|p| p.is_file())
    }

    /// Deletes a stored CUBIN (e.g. one the driver refused to load).
    pub fn remove_cubin(&self, key: &str) {
        if let Some(path) = self.cubin_path(key) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The CUBIN for `key`: from disk, else compiled with NVRTC and stored.
    /// Returns the bytes, `Disk` or `Miss`, and the NVRTC time in ms.
    /// Needs no GPU.
    pub fn cubin(
        &self,
        key: &str,
        source: &str,
        arch: &str,
        tier: Tier,
    ) -> Result<(Vec<u8>, CacheHit, f64), CudaError> {
        if let Some(bytes) = self.read_cubin(key) {
            return Ok((bytes, CacheHit::Disk, 0.0));
        }
        let t = Instant::now();
        let bytes = compile_cubin_tier(source, arch, tier)?;
        let compile_ms = t.elapsed().as_secs_f64() * 1e3;
        self.write_cubin(key, &bytes);
        Ok((bytes, CacheHit::Miss, compile_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("gpusql-cache-test-{tag}-{}", std::process::id()))
    }

    #[test]
    fn key_depends_on_everything() {
        let k = KernelCache::key("src", "sm_90", (13, 0), Tier::Full);
        assert_eq!(k.len(), 64);
        assert_ne!(k, KernelCache::key("src2", "sm_90", (13, 0), Tier::Full));
        assert_ne!(k, KernelCache::key("src", "sm_80", (13, 0), Tier::Full));
        assert_ne!(k, KernelCache::key("src", "sm_90", (13, 1), Tier::Full));
        assert_eq!(k, KernelCache::key("src", "sm_90", (13, 0), Tier::Full));
        if !Tier::Quick.options().is_empty() {
            assert_ne!(k, KernelCache::key("src", "sm_90", (13, 0), Tier::Quick));
        }
    }

    #[test]
    fn disk_roundtrip_and_garbage_rejected() {
        let dir = temp_dir("roundtrip");
        let cache = KernelCache::new(Some(dir.clone()));
        assert_eq!(cache.dir(), Some(dir.as_path()));
        let key = KernelCache::key("x", "sm_90", (13, 0), Tier::Full);
        assert!(cache.read_cubin(&key).is_none());
        cache.write_cubin(&key, b"\x7fELFpayload");
        assert_eq!(cache.read_cubin(&key).as_deref(), Some(&b"\x7fELFpayload"[..]));
        cache.write_cubin(&key, b"garbage");
        assert!(cache.read_cubin(&key).is_none(), "non-ELF file is ignored");
        assert!(!dir.join(format!("{key}.cubin")).exists(), "and removed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_shared_cubin_is_found_under_every_key() {
        let dir = temp_dir("shared");
        let cache = KernelCache::new(Some(dir.clone()));
        let keys: Vec<String> =
            ["a", "b", "c"].iter().map(|s| KernelCache::key(s, "sm_90", (13, 0), Tier::Full)).collect();
        cache.write_cubin_shared(&keys, b"\x7fELF merged");
        for k in &keys {
            assert_eq!(cache.read_cubin(k).as_deref(), Some(&b"\x7fELF merged"[..]));
        }
        // Removing one key's file leaves the others.
        cache.remove_cubin(&keys[0]);
        assert!(!cache.has_cubin(&keys[0]) && cache.has_cubin(&keys[2]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unusable_dir_means_memory_only() {
        // A path under a regular file can never be a directory.
        let file = temp_dir("file");
        std::fs::write(&file, b"not a dir").ok();
        let cache = KernelCache::new(Some(file.join("kernels")));
        assert!(cache.dir().is_none());
        cache.write_cubin("k", b"\x7fELF");
        assert!(cache.read_cubin("k").is_none());
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn cubin_compiles_then_hits_disk() {
        if crate::libs::ensure_nvrtc_loaded().is_err() {
            assert!(std::env::var("GPUSQL_REQUIRE_NVRTC").map_or(true, |v| v != "1"), "NVRTC required");
            println!("skipped: no NVRTC");
            return;
        }
        let dir = temp_dir("compile");
        let cache = KernelCache::new(Some(dir.clone()));
        let src = "extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = 1; }";
        let Ok(version) = crate::compile::nvrtc_version() else { panic!("nvrtc version") };
        let key = KernelCache::key(src, "sm_90", version, Tier::Full);
        assert!(!cache.has_cubin(&key));
        let (a, hit_a, ms) = cache.cubin(&key, src, "sm_90", Tier::Full).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(hit_a, CacheHit::Miss);
        assert!(ms > 0.0);
        assert!(cache.has_cubin(&key));
        let (b, hit_b, _) = cache.cubin(&key, src, "sm_90", Tier::Full).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(hit_b, CacheHit::Disk);
        assert_eq!(a, b);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
