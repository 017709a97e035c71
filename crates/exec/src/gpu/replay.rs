//! Replaying a repeated run. Between stages the host waits for what the GPU found: a
//! sink's row count (to size the next stage and its buffers), a hash build's key count
//! and whether keys repeat (to shape the table and the probes that read it). A stage's
//! host work (~40-80 us: buffers, kernel lookup, binding, launching) then leaves the GPU
//! idle, stage after stage.
//!
//! A plan run again with the same parameter values over the same tables finds the same
//! values. So a run that waited logs each value it read back (`ReadBacks::waiting`), and
//! the next such run takes them from the log instead of waiting (`ReadBacks::replay`):
//! its stages are launched back to back while the GPU works. Each value read back is
//! still copied, on the GPU in stream order, into an audit buffer that comes back with the
//! result's first download and is compared with the log (`check`) before anything sized
//! by the logged values is trusted. Any difference, or host state that differs where a
//! value is read (other rows in, other buffer sizes), makes the replay fail: its result
//! is dropped and the query runs again the usual way (`GpuExecutor::execute_with`).

use gpusql_common::{Error, Result};
use gpusql_cuda::cudarc::driver::DeviceRepr;
use gpusql_cuda::{CudaSlice, GpuDevice};
use gpusql_plan::parameters::ParamValues;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::buffers::{bytes_to, COUNTERS};
use super::device_store::cuda_error;
use super::ptr;

/// One value read back: where it was read (a hash of the host state that decided the
/// launches it came from) and its bytes.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    site: u64,
    bytes: Vec<u8>,
}

/// The values a run read back, in order, and the parameter values it ran with.
#[derive(Debug)]
pub struct RunLog {
    params: ParamValues,
    entries: Vec<Entry>,
}

impl RunLog {
    /// Whether a run with `params` reads back what this one did (the plan and its tables
    /// being the same: the plan memo holding the log lives while they do).
    pub fn fits(&self, params: &ParamValues) -> bool {
        self.params == *params
    }

    /// A copy with the first nonzero row count of a sink's counters lowered by one
    /// (`PlanMemo::skew_last_run`).
    pub(crate) fn with_first_count_lowered(&self) -> Option<RunLog> {
        let mut entries = self.entries.clone();
        let e = entries.iter_mut().find(|e| e.bytes.len() == 8 * COUNTERS && e.bytes[..8] != [0; 8])?;
        let rows = u64::from_le_bytes(e.bytes[..8].try_into().ok()?) - 1;
        e.bytes[..8].copy_from_slice(&rows.to_le_bytes());
        Some(RunLog { params: self.params.clone(), entries })
    }
}

/// Where a value is read back: the reading step and the host state its launches
/// depended on (pipeline, rows in, buffer sizes, ...).
pub fn site(parts: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// How one run of a plan reads values back from the GPU.
pub(crate) struct ReadBacks(Mode);

enum Mode {
    /// Waits for each value; keeps them in `log` where there is one.
    Wait { log: Option<Vec<Entry>>, settled: bool },
    /// Takes each value from `log`, copying the GPU's into `audit` to check at the end.
    Replay { log: Arc<RunLog>, next: usize, audit: Arc<CudaSlice<u8>>, at: usize },
}

impl ReadBacks {
    /// Waits for each value, and logs it where `record` (for a later replay).
    pub fn waiting(record: bool) -> Self {
        ReadBacks(Mode::Wait { log: record.then(Vec::new), settled: true })
    }

    /// Takes the values from `log` (which a waiting run logged for the same parameter values).
    pub fn replay(dev: &GpuDevice, log: Arc<RunLog>) -> Result<Self> {
        let bytes: usize = log.entries.iter().map(|e| e.bytes.len()).sum();
        let audit = dev.alloc_unset::<u8>(bytes.max(1), "replay audit").map_err(cuda_error)?;
        Ok(ReadBacks(Mode::Replay { log, next: 0, audit: Arc::new(audit), at: 0 }))
    }

    /// A replay's state where it is now, to go on from here more than once: a captured
    /// graph's runs each go on from the end of the captured stages (the result's download
    /// reads back values too), copying into the same audit buffer.
    pub fn resume(&self) -> Self {
        match &self.0 {
            Mode::Replay { log, next, audit, at } => {
                ReadBacks(Mode::Replay { log: log.clone(), next: *next, audit: audit.clone(), at: *at })
            }
            Mode::Wait { .. } => ReadBacks::waiting(false),
        }
    }

    /// Reads `src` back at `site`: downloads it (waiting for the GPU), or in a replay
    /// returns the logged value and queues a copy of the GPU's to check at the end.
    pub fn read<T: DeviceRepr + Copy>(&mut self, dev: &GpuDevice, site: u64, src: &CudaSlice<T>) -> Result<Vec<T>> {
        // SAFETY: `src` holds its `len` values and lives until the copy has run.
        unsafe { self.read_at(dev, site, ptr(src, dev), src.len()) }
    }

    /// `read` of the `n` values of T at device address `src`.
    ///
    /// # Safety
    /// `src` points to `n` values of T in a buffer that lives until the GPU has run the
    /// work queued so far (frees are stream-ordered).
    pub unsafe fn read_at<T: DeviceRepr + Copy>(
        &mut self,
        dev: &GpuDevice,
        site: u64,
        src: u64,
        n: usize,
    ) -> Result<Vec<T>> {
        let size = n * std::mem::size_of::<T>();
        match &mut self.0 {
            Mode::Wait { log, .. } => {
                // SAFETY: the caller's promise.
                let bytes = unsafe { dev.download_many(&[(src, size)]) }.map_err(cuda_error)?;
                let bytes = bytes.into_iter().next().unwrap_or_default();
                if bytes.len() != size {
                    return Err(Error::exec("a value read back came short"));
                }
                if let Some(log) = log {
                    log.push(Entry { site, bytes: bytes.clone() });
                }
                Ok(bytes_to(&bytes, n))
            }
            Mode::Replay { log, next, audit, at } => {
                let entry = match log.entries.get(*next) {
                    Some(e) if e.site == site && e.bytes.len() == size => e,
                    _ => return Err(diverged()),
                };
                *next += 1;
                // SAFETY: `audit` holds the log's bytes in order, so [at, at + size) lies
                // in it; `src` holds `size` bytes (the caller's promise). Both are alive
                // until the copy has run (frees are stream-ordered).
                unsafe { dev.copy_device(ptr(&**audit, dev) + *at as u64, src, size) }.map_err(cuda_error)?;
                *at += size;
                Ok(bytes_to(&entry.bytes, n))
            }
        }
    }

    /// A stage was sized without an earlier run's sizes, or ran again with more room: the
    /// next run sizes it otherwise (and a replay would repeat the overflow), so this run's
    /// log is not kept; the next run, sized by this one, logs a settled run.
    pub fn unsettled(&mut self) {
        if let Mode::Wait { settled, .. } = &mut self.0 {
            *settled = false;
        }
    }

    /// In a replay: the audit buffer's bytes to download at the end (with the result's
    /// first round trip: one wait for both), for `check`.
    pub fn audit_range(&self, dev: &GpuDevice) -> Option<(u64, usize)> {
        match &self.0 {
            Mode::Replay { audit, at, .. } => Some((ptr(&**audit, dev), *at)),
            Mode::Wait { .. } => None,
        }
    }

    /// Checks the audit buffer's bytes `gpu` against the log: Err where the GPU found other
    /// values than those the replay ran with. Before anything sized by them is trusted
    /// (the result's rows are read within buffers sized by the logged counts, so reading
    /// them first is safe; a string's bytes are not).
    pub fn check(&self, gpu: &[u8]) -> Result<()> {
        let Mode::Replay { log, next, .. } = &self.0 else { return Ok(()) };
        let logged = log.entries.iter().flat_map(|e| e.bytes.iter().copied());
        if *next != log.entries.len() || !gpu.iter().copied().eq(logged) {
            return Err(diverged());
        }
        Ok(())
    }

    /// A replay's log with its first row count lowered (`PlanMemo::skew_last_run`).
    pub(crate) fn skew(&mut self) {
        if let Mode::Replay { log, .. } = &mut self.0 {
            if let Some(skewed) = log.with_first_count_lowered() {
                *log = Arc::new(skewed);
            }
        }
    }

    /// A replay of a run with `params`.
    pub fn fits(&self, params: &ParamValues) -> bool {
        matches!(&self.0, Mode::Replay { log, .. } if log.fits(params))
    }

    pub fn is_replay(&self) -> bool {
        matches!(self.0, Mode::Replay { .. })
    }

    /// The log of a recording run whose stages each ran once, for `params`.
    pub fn into_log(self, params: &ParamValues) -> Option<RunLog> {
        match self.0 {
            Mode::Wait { log: Some(entries), settled: true } => Some(RunLog { params: params.clone(), entries }),
            _ => None,
        }
    }
}

fn diverged() -> Error {
    Error::exec("a replayed run diverged from its log")
}
