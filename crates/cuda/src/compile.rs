//! CUDA C++ → CUBIN with NVRTC.
//!
//! We compile for the device's exact architecture (`sm_90`, ...) and hand the driver
//! a CUBIN, so the driver's PTX JIT never runs. No GPU is needed to compile: CI uses
//! [`compile_cubin`] to check generated kernels.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys;

use crate::{libs, CudaError};

/// Name NVRTC uses for the source in its log ("gpusql_kernel.cu(12): error: ...").
const PROGRAM_NAME: &str = "gpusql_kernel.cu";

/// Options passed to NVRTC besides `--gpu-architecture`.
///
/// - `-std=c++17`: what the code generator writes.
/// - `--fmad=false`: no contraction of `a*b+c` into FMA, so floating-point results
///   round exactly like the CPU reference (SQL results must not depend on the device).
///   Division and sqrt stay IEEE-exact (NVRTC's defaults `--prec-div=true`,
///   `--prec-sqrt=true`, `--ftz=false`); no `--use_fast_math`.
/// - `--device-int128`: allows `__int128` in device code (DECIMAL arithmetic).
///
/// Part of the kernel-cache key, so changing them invalidates cached CUBINs.
pub const NVRTC_OPTIONS: &[&str] = &["-std=c++17", "--fmad=false", "--device-int128"];

/// How hard NVRTC optimizes a module. A query's modules are first compiled `Quick`, all at
/// once, so a new query starts soon; the `Full` build of the kernels it settles on follows
/// in the background and replaces them once ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// `--Ofast-compile=min` (NVRTC 12.8 and later): NVVM and ptxas skip some costlier
    /// passes. Over the 96 modules of TPC-H (2-core host): geomean 87 -> 73 ms, the
    /// heaviest 288 -> 231 ms (`=max`: 80 ms and 297 ms; `=mid`: 78 and 224).
    Quick,
    /// NVRTC's default optimization.
    Full,
}

impl Tier {
    /// The options this tier adds to [`NVRTC_OPTIONS`]. NVRTC before 12.8 has no
    /// `--Ofast-compile`: there both tiers are one.
    pub fn options(self) -> &'static [&'static str] {
        match self {
            Tier::Quick if nvrtc_version().is_ok_and(|v| v >= (12, 8)) => &["--Ofast-compile=min"],
            _ => &[],
        }
    }
}

/// NVRTC's (major, minor) version. Loads NVRTC if needed.
pub fn nvrtc_version() -> Result<(i32, i32), CudaError> {
    static VERSION: OnceLock<Result<(i32, i32), CudaError>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            libs::ensure_nvrtc_loaded()?;
            let (mut major, mut minor) = (0, 0);
            // SAFETY: NVRTC is loaded (checked above); plain out-parameters.
            let rc = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
            rc.result().map_err(|e| CudaError::Unavailable(format!("nvrtcVersion failed: {e:?}")))?;
            Ok((major, minor))
        })
        .clone()
}

/// Compiles `src` to a CUBIN for `arch` (`"sm_90"`). Kernels that the host looks up by
/// name must be `extern "C" __global__`.
///
/// On a compile error the returned [`CudaError::Nvrtc`] carries NVRTC's log and the
/// numbered source lines around each reported error.
pub fn compile_cubin(src: &str, arch: &str) -> Result<Vec<u8>, CudaError> {
    compile_cubin_tier(src, arch, Tier::Full)
}

/// [`compile_cubin`] at `tier`.
pub fn compile_cubin_tier(src: &str, arch: &str, tier: Tier) -> Result<Vec<u8>, CudaError> {
    if !arch.starts_with("sm_") || arch.len() < 5 {
        // compute_XX would give PTX only: no CUBIN to load.
        return Err(CudaError::Nvrtc {
            msg: format!("architecture must be a real GPU such as \"sm_90\", got {arch:?}"),
            log: String::new(),
        });
    }
    compile(src, arch, tier.options())?.cubin()
}

/// Where the compile time of one module goes (`gpusql bench compile`).
#[derive(Debug, Clone)]
pub struct CompileProfile {
    pub source_bytes: usize,
    pub ptx_bytes: usize,
    pub cubin_bytes: usize,
    /// NVRTC to PTX only (`compute_XX`): the C++ front end and NVVM's optimizer.
    pub to_ptx_ms: f64,
    /// NVRTC to CUBIN (`sm_XX`), as the engine compiles: the above plus ptxas.
    pub to_cubin_ms: f64,
    /// The same with ptxas at -O0 (what a quickly compiled first tier would cost).
    pub to_cubin_ptxas_o0_ms: f64,
}

/// Compiles `src` for `arch` (`sm_XX`) three ways, timing each (see `CompileProfile`).
pub fn compile_profile(src: &str, arch: &str) -> Result<CompileProfile, CudaError> {
    let timed = |arch: &str, extra: &[&str]| -> Result<(Program, f64), CudaError> {
        let t = std::time::Instant::now();
        let prog = compile(src, arch, extra)?;
        Ok((prog, t.elapsed().as_secs_f64() * 1e3))
    };
    let virtual_arch = arch.replacen("sm_", "compute_", 1);
    let (ptx_prog, to_ptx_ms) = timed(&virtual_arch, &[])?;
    let (cubin_prog, to_cubin_ms) = timed(arch, &[])?;
    let (_, to_cubin_ptxas_o0_ms) = timed(arch, &["--ptxas-options=-O0"])?;
    Ok(CompileProfile {
        source_bytes: src.len(),
        ptx_bytes: ptx_prog.ptx_len()?,
        cubin_bytes: cubin_prog.cubin()?.len(),
        to_ptx_ms,
        to_cubin_ms,
        to_cubin_ptxas_o0_ms,
    })
}

/// Compiles `src` for `arch` with the engine's options and `extra` ones.
fn compile(src: &str, arch: &str, extra: &[&str]) -> Result<Program, CudaError> {
    libs::ensure_nvrtc_loaded()?;
    let c_src = CString::new(src)
        .map_err(|_| CudaError::Nvrtc { msg: "kernel source contains a NUL byte".into(), log: String::new() })?;
    let c_name = CString::new(PROGRAM_NAME).unwrap_or_default();
    let prog = Program(
        nvrtc::create_program(&c_src, Some(&c_name))
            .map_err(|e| CudaError::Nvrtc { msg: format!("nvrtcCreateProgram failed: {e:?}"), log: String::new() })?,
    );

    let mut options = vec![format!("--gpu-architecture={arch}")];
    options.extend(NVRTC_OPTIONS.iter().chain(extra).map(|s| s.to_string()));
    // SAFETY: prog is a live program (destroyed only by Program's Drop); the
    // options contain no NUL bytes (cudarc's compile_program unwraps CString::new).
    let compiled = unsafe { nvrtc::compile_program(prog.0, &options) };
    let log = prog.log();
    if let Err(e) = compiled {
        let msg = if e.0 == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
            let n = log.lines().filter(|l| l.contains("): error")).count().max(1);
            format!("{arch}, {n} error(s)\n{}", error_excerpt(src, &log))
        } else {
            format!("{:?} (options: {})", e.0, options.join(" "))
        };
        return Err(CudaError::Nvrtc { msg, log });
    }
    if !log.trim().is_empty() {
        tracing::debug!(%log, "NVRTC warnings");
    }
    Ok(prog)
}

/// Owns an `nvrtcProgram`, destroying it on every exit path.
struct Program(sys::nvrtcProgram);

impl Program {
    fn log(&self) -> String {
        // SAFETY: live program.
        match unsafe { nvrtc::get_program_log(self.0) } {
            Ok(raw) => c_chars_to_string(&raw),
            Err(e) => format!("<could not read NVRTC log: {e:?}>"),
        }
    }

    fn ptx_len(&self) -> Result<usize, CudaError> {
        let mut size = 0usize;
        // SAFETY: live, successfully compiled program.
        unsafe { sys::nvrtcGetPTXSize(self.0, &mut size) }
            .result()
            .map_err(|e| CudaError::Nvrtc { msg: format!("nvrtcGetPTXSize failed: {:?}", e.0), log: String::new() })?;
        Ok(size)
    }

    fn cubin(&self) -> Result<Vec<u8>, CudaError> {
        let fail = |what: &str, e: sys::nvrtcResult| CudaError::Nvrtc {
            msg: format!("{what} failed: {e:?}"),
            log: String::new(),
        };
        let mut size = 0usize;
        // SAFETY: live, successfully compiled program; buffer sized as NVRTC asks.
        unsafe { sys::nvrtcGetCUBINSize(self.0, &mut size) }.result().map_err(|e| fail("nvrtcGetCUBINSize", e.0))?;
        if size == 0 {
            return Err(fail("nvrtcGetCUBINSize (empty CUBIN)", sys::nvrtcResult::NVRTC_SUCCESS));
        }
        let mut buf = vec![0u8; size];
        // SAFETY: as above; buf has `size` bytes.
        unsafe { sys::nvrtcGetCUBIN(self.0, buf.as_mut_ptr() as *mut c_char) }
            .result()
            .map_err(|e| fail("nvrtcGetCUBIN", e.0))?;
        Ok(buf)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program, destroyed only here.
        if let Err(e) = unsafe { nvrtc::destroy_program(self.0) } {
            tracing::warn!("nvrtcDestroyProgram failed: {e:?}");
        }
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// 1-based source lines NVRTC reports errors on: "gpusql_kernel.cu(12): error: ...".
fn error_lines(log: &str) -> Vec<usize> {
    let prefix = format!("{PROGRAM_NAME}(");
    let mut lines = Vec::new();
    for l in log.lines() {
        let Some(rest) = l.strip_prefix(&prefix) else {
            continue;
        };
        let Some((num, tail)) = rest.split_once(')') else {
            continue;
        };
        if !tail.contains("error") {
            continue;
        }
        if let Ok(n) = num.trim().parse::<usize>() {
            if !lines.contains(&n) {
                lines.push(n);
            }
        }
    }
    lines
}

/// The numbered source lines around each error line (±3, merged, at most 8 regions),
/// error lines marked with `>>`.
fn error_excerpt(src: &str, log: &str) -> String {
    const CONTEXT: usize = 3;
    const MAX_REGIONS: usize = 8;
    let src_lines: Vec<&str> = src.lines().collect();
    let errs = error_lines(log);
    if errs.is_empty() || src_lines.is_empty() {
        return String::from("(no source line reported)");
    }
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut sorted = errs.clone();
    sorted.sort_unstable();
    for &e in &sorted {
        let lo = e.saturating_sub(CONTEXT).max(1);
        let hi = (e + CONTEXT).min(src_lines.len());
        match ranges.last_mut() {
            Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
            _ => ranges.push((lo, hi)),
        }
    }
    let width = src_lines.len().to_string().len();
    let mut out = String::new();
    for (i, &(lo, hi)) in ranges.iter().take(MAX_REGIONS).enumerate() {
        if i > 0 {
            out.push_str("  ...\n");
        }
        for n in lo..=hi.max(lo) {
            let Some(text) = src_lines.get(n - 1) else {
                break;
            };
            let mark = if errs.contains(&n) { ">>" } else { "  " };
            out.push_str(&format!("{mark} {n:>width$} | {text}\n"));
        }
    }
    if ranges.len() > MAX_REGIONS {
        out.push_str(&format!("  ... ({} more error regions)\n", ranges.len() - MAX_REGIONS));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skips (returns false) when NVRTC is absent, unless GPUSQL_REQUIRE_NVRTC=1.
    fn nvrtc_or_skip() -> bool {
        match libs::ensure_nvrtc_loaded() {
            Ok(_) => true,
            Err(e) => {
                if std::env::var("GPUSQL_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                    panic!("GPUSQL_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
                }
                println!("skipped: no NVRTC ({e})");
                false
            }
        }
    }

    const GOOD: &str = r#"
extern "C" __global__ void sum_i128(const long long* in, unsigned long long* out, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __int128 wide = (__int128)in[i] * (__int128)1000000007LL;
    atomicAdd(out, (unsigned long long)(wide >> 3));
}
"#;

    #[test]
    fn compiles_int128_and_atomics() {
        if !nvrtc_or_skip() {
            return;
        }
        println!("NVRTC {:?}", nvrtc_version());
        for arch in ["sm_80", "sm_90"] {
            let cubin = compile_cubin(GOOD, arch).unwrap_or_else(|e| panic!("{e}"));
            assert!(cubin.starts_with(b"\x7fELF"), "CUBIN is an ELF image");
        }
    }

    #[test]
    fn compile_error_has_log_and_source_excerpt() {
        if !nvrtc_or_skip() {
            return;
        }
        let bad = "extern \"C\" __global__ void k(int* p) {\n    int a = 1;\n    p[0] = a + undefined_name;\n}\n";
        let err = compile_cubin(bad, "sm_90").expect_err("must not compile");
        let CudaError::Nvrtc { msg, log } = &err else { panic!("wrong error: {err}") };
        assert!(log.contains("error"), "log: {log}");
        assert!(log.contains("undefined_name"), "log: {log}");
        assert!(msg.contains(">> 3 |     p[0] = a + undefined_name;"), "msg: {msg}");
        println!("{err}");
    }

    #[test]
    fn graph_kernels_compile() {
        if !nvrtc_or_skip() {
            return;
        }
        compile_cubin(include_str!("graph_kernels.cu"), "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn rejects_virtual_arch() {
        assert!(matches!(compile_cubin(GOOD, "compute_90"), Err(CudaError::Nvrtc { .. })));
    }

    #[test]
    fn excerpt_marks_and_merges() {
        let src = (1..=20).map(|i| format!("line{i}")).collect::<Vec<_>>().join("\n");
        let log = "gpusql_kernel.cu(5): error: bad\ngpusql_kernel.cu(7): error: worse\n\
                   gpusql_kernel.cu(18): warning: meh\n";
        assert_eq!(error_lines(log), vec![5, 7]);
        let ex = error_excerpt(&src, log);
        assert!(ex.contains(">>  5 | line5"), "{ex}");
        assert!(ex.contains("    2 | line2"), "{ex}");
        assert!(ex.contains("   10 | line10"), "{ex}");
        assert!(!ex.contains("line11"), "{ex}");
        assert!(!ex.contains("..."), "one merged region: {ex}");
    }
}
