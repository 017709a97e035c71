//! What a query execution measured. GPU kernel times come from CUDA events; compile and
//! transfer times are kept apart from kernel time.

#[derive(Debug, Clone, Default)]
pub struct KernelStat {
    /// "pipeline_0", "sort #2", …
    pub name: String,
    /// Kernel time (CUDA events), all launches of this stage.
    pub ms: f64,
    /// NVRTC compile + module load time (0 on a cache hit).
    pub compile_ms: f64,
    /// "miss", "memory", "disk".
    pub cache: String,
    pub rows_in: usize,
    pub rows_out: usize,
    /// Bytes of columns this stage reads (the floor's numerator).
    pub bytes_read: usize,
    /// The stage's whole time on the host, from its start to its results (kernels,
    /// compile waits, allocations, launches, the downloads of counts and flags).
    pub wall_ms: f64,
}

#[derive(Debug, Clone, Default)]
pub struct ExecStats {
    pub backend: String,
    pub kernels: Vec<KernelStat>,
    pub compile_ms: f64,
    pub kernel_ms: f64,
    /// Decoding table data from files (first use of a column's row groups only).
    pub decode_ms: f64,
    /// Host -> GPU uploads of table columns (first use only).
    pub upload_bytes: usize,
    pub upload_ms: f64,
    /// GPU -> host result download and Arrow assembly.
    pub download_ms: f64,
    /// Choosing replicated shared-memory tables and dictionary-encoded string columns:
    /// their load-time placements and dictionaries on the host,
    /// where this query is the first to want them (else ~0). Planning time, not part of
    /// `total_ms` (execution).
    pub placement_ms: f64,
    pub total_ms: f64,
    /// Parsing, binding, optimizing and planning the statement (engine).
    pub plan_ms: f64,
    /// The plan was a kept one: of the same text, or of the same shape with other literal
    /// values (`plan_templates`).
    pub plan_kept: bool,
    /// The stages ran back to back with the counts of the plan's last run with these
    /// values, checked at the end (`replay_repeats`).
    pub replayed: bool,
    /// The replay was launched as one CUDA graph, captured from an earlier one
    /// (`graph_repeats`).
    pub graph: bool,
    /// Bytes of table columns the query's scans read.
    pub bytes_read: usize,
}

impl ExecStats {
    pub fn summary(&self) -> String {
        let placement =
            if self.placement_ms >= 0.05 { format!(", placement {:.1} ms", self.placement_ms) } else { String::new() };
        if self.kernels.is_empty() {
            return format!("{}: total {:.2} ms{placement}", self.backend, self.total_ms);
        }
        let decode = if self.decode_ms >= 0.05 { format!(", decode {:.1} ms", self.decode_ms) } else { String::new() };
        let rate = if self.upload_ms > 0.0 && self.upload_bytes > 0 {
            format!(", {:.1} GB/s", self.upload_bytes as f64 / (self.upload_ms * 1e6))
        } else {
            String::new()
        };
        format!(
            "{}: kernels {:.3} ms, compile {:.1} ms{decode}, upload {:.1} ms ({:.1} MB{rate}), download {:.2} ms{placement}, total {:.1} ms",
            self.backend,
            self.kernel_ms,
            self.compile_ms,
            self.upload_ms,
            self.upload_bytes as f64 / 1e6,
            self.download_ms,
            self.total_ms
        )
    }
}

/// The host wall time of each step of a stage, printed on stderr (`profile_host`).
pub struct HostSteps {
    enabled: bool,
    pub(crate) last: std::time::Instant,
    steps: Vec<(&'static str, f64)>,
}

impl HostSteps {
    pub fn new(enabled: bool) -> Self {
        HostSteps { enabled, last: std::time::Instant::now(), steps: vec![] }
    }

    /// Ends step `what` (it began at the previous mark).
    pub fn mark(&mut self, what: &'static str) {
        if self.enabled {
            let now = std::time::Instant::now();
            self.steps.push((what, (now - self.last).as_secs_f64() * 1e3));
            self.last = now;
        }
    }

    pub fn print(&self, stage: &str) {
        if self.enabled {
            let steps: Vec<String> = self.steps.iter().map(|(w, ms)| format!("{w} {ms:.3}")).collect();
            eprintln!("host ms of {stage}: {}", steps.join(", "));
        }
    }
}
