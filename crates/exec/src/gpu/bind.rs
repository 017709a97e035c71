//! A pipeline kernel's arguments: its query constants (literals, long IN lists) uploaded
//! as constant buffers kept by content (`GpuExecutor::constant_buffer`), and each kernel
//! parameter bound to the run's buffers (`Binder`, `bind_build`).

use super::buffers::{self, Arg, BuiltTable, Counter};
use super::device_store::{cuda_error, UploadStats};
use super::pipeline::SourceColumns;
use super::{ptr, GpuExecutor};
use gpusql_codegen::in_set::{self, InSetPart};
use gpusql_codegen::literals::{LiteralArg, LiteralData};
use gpusql_codegen::{BuildPart, KernelSpec, Param, Part, ReplicaPart};
use gpusql_common::{Error, Result};
use gpusql_cuda::{CudaSlice, GpuDevice};
use gpusql_plan::parameters::ParamValues;
use std::collections::HashMap;
use std::sync::Arc;

impl GpuExecutor {
    /// The query constants the kernel takes as parameters (`KernelSpec::literals`): their
    /// arguments, and the bytes of its string and pattern constants uploaded as one small
    /// buffer (per run of the pipeline; none where the kernel reads none).
    pub(super) fn upload_literals(
        &self,
        spec: &KernelSpec,
        params: &ParamValues,
        up: &mut UploadStats,
    ) -> Result<Literals> {
        // (A kept spec holds the values of the run it was generated for.)
        let data = match gpusql_codegen::literals::resolve(&spec.literals, params) {
            Some(literals) => LiteralData::new(&literals)?,
            None => LiteralData::new(&spec.literals)?,
        };
        let data = if self.config.like_dfa { data } else { data.without_like_dfas(&spec.literals) };
        if spec.literals.is_empty() {
            return Ok(Literals { data, buffer: None });
        }
        // (An empty string's buffer still has to exist: 16 bytes.)
        let mut bytes = data.bytes.clone();
        bytes.resize(bytes.len().max(16), 0);
        let buffer = self.constant_buffer(bytes, "query literals", up)?;
        Ok(Literals { data, buffer: Some(buffer) })
    }

    /// A buffer of `bytes` on the GPU that kernels only read, uploaded once and kept by
    /// content for the session: a string constant a kernel writes into its rows
    /// (`CASE ... THEN 'low'`) is a pointer into its literal buffer, read when the result
    /// is assembled, after the pipeline; and a repeated query uploads nothing.
    pub(super) fn constant_buffer(
        &self,
        bytes: Vec<u8>,
        what: &str,
        up: &mut UploadStats,
    ) -> Result<Arc<CudaSlice<u8>>> {
        let mut cache = self.constant_buffers.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = match cache.get(&bytes) {
            Some(b) => b.clone(),
            None => {
                up.bytes += bytes.len();
                let buffer = Arc::new(self.dev.upload(&bytes, what).map_err(cuda_error)?);
                cache.insert(bytes, buffer.clone());
                buffer
            }
        };
        self.hold(|h| h.buffers.push(buffer.clone()));
        Ok(buffer)
    }

    /// The literal sets of long IN lists, searched by the kernel.
    pub(super) fn upload_in_sets(&self, spec: &KernelSpec, up: &mut UploadStats) -> Result<InSets> {
        let mut in_sets: InSets = HashMap::new();
        for q in &spec.params {
            if let Param::InSet { index, part } = q {
                if *part != InSetPart::Len {
                    let bytes = in_set::buffer(&spec.in_sets[*index], *part);
                    in_sets.insert((*index, *part), self.constant_buffer(bytes, "IN list values", up)?);
                }
            }
        }
        Ok(in_sets)
    }
}

/// The literal sets of a pipeline's long IN lists on the GPU, by (set, part).
pub(super) type InSets = HashMap<(usize, InSetPart), Arc<CudaSlice<u8>>>;

/// A pipeline's query constants: their parameters' arguments, and the literal buffer on the
/// GPU their pointers point into.
pub(super) struct Literals {
    data: LiteralData,
    buffer: Option<Arc<CudaSlice<u8>>>,
}

/// The buffers of one run of a pipeline's kernels, which their parameters bind to.
pub(super) struct Binder<'a> {
    pub(super) dev: &'a GpuDevice,
    pub(super) n: usize,
    pub(super) sink: &'a buffers::SinkBuffers,
    pub(super) max_groups: usize,
    pub(super) source: &'a SourceColumns<'a>,
    pub(super) in_sets: &'a InSets,
    pub(super) literals: &'a Literals,
    pub(super) built: &'a HashMap<usize, BuiltTable>,
    pub(super) spec: &'a KernelSpec,
    /// The string arena and its size, where the kernel makes strings.
    pub(super) arena: Option<(&'a CudaSlice<u8>, usize)>,
}

impl Binder<'_> {
    pub(super) fn bind(&self, q: &Param) -> Result<Arg> {
        let (dev, sink, n, max_groups) = (self.dev, self.sink, self.n, self.max_groups);
        Ok(match q {
            Param::RowCount => Arg::U64(n as u64),
            Param::ErrorFlag => Arg::U64(sink.counter_ptr(Counter::Error, dev)),
            Param::Arena => Arg::U64(self.arena.map_or(0, |(a, _)| ptr(a, dev))),
            Param::ArenaCapacity => Arg::U64(self.arena.map_or(0, |(_, bytes)| bytes as u64)),
            Param::ArenaUsed => Arg::U64(sink.counter_ptr(Counter::ArenaUsed, dev)),
            Param::Input { column, part: Part::Pivoted } => {
                Arg::U64(self.source.pivots.get(column).copied().unwrap_or(0))
            }
            Param::Input { column, part } => Arg::U64(self.source.columns[*column].ptr(*part, dev)?),
            Param::Output { column, part } => Arg::U64(sink.output_ptr(*column, *part, dev)?),
            Param::OutCount => Arg::U64(sink.counter_ptr(Counter::Rows, dev)),
            Param::OutCapacity => Arg::U64(max_groups as u64),
            Param::State { index } => Arg::U64(sink.state_ptr(*index, dev)?),
            Param::HashSlots => Arg::U64(sink.slots.as_ref().map(|s| ptr(s, dev)).unwrap_or(0)),
            Param::HashMask => Arg::U32((sink.slot_count.max(1) - 1) as u32),
            Param::MaxGroups => Arg::U32(max_groups as u32),
            Param::GroupKey { key, .. } => Arg::U64(ptr(&sink.group_keys[*key].values, dev)),
            Param::GroupRows => Arg::U64(sink.group_rows.as_ref().map_or(0, |s| ptr(s, dev))),
            Param::RowGroup => Arg::U64(sink.row_group.as_ref().map_or(0, |s| ptr(s, dev))),
            Param::GroupCount => Arg::U64(sink.counter_ptr(Counter::Groups, dev)),
            Param::MultiFlag => Arg::U64(sink.counter_ptr(Counter::RepeatedKeys, dev)),
            Param::Build { id, part } => {
                let t = self.built.get(id).ok_or_else(|| Error::exec(format!("hash table #{id} missing")))?;
                bind_build(t, *part, dev)?
            }
            Param::InSet { index, part: InSetPart::Len } => Arg::U32(self.spec.in_sets[*index].values.len() as u32),
            Param::InSet { index, part } => Arg::U64(self.in_sets.get(&(*index, *part)).map_or(0, |b| ptr(b, dev))),
            Param::Literal { index, part } => match self.literals.data.arg(*index, *part)? {
                LiteralArg::U32(x) => Arg::U32(x),
                LiteralArg::U64(x) => Arg::U64(x),
                LiteralArg::Buffer(offset) => {
                    let buffer = self.literals.buffer.as_ref().ok_or_else(|| Error::exec("literal buffer missing"))?;
                    Arg::U64(ptr(buffer, dev) + offset as u64)
                }
            },
            Param::Replica { index, part } => {
                let r = self
                    .source
                    .replicas
                    .get(*index)
                    .ok_or_else(|| Error::exec(format!("replicated table {index} missing")))?;
                match part {
                    ReplicaPart::RowSlots => Arg::U64(ptr(&r.row_slots, dev)),
                    ReplicaPart::SlotValues => Arg::U64(ptr(&r.slot_values, dev)),
                    ReplicaPart::SlotCodes => Arg::U64(ptr(&r.slot_codes, dev)),
                }
            }
        })
    }
}

fn bind_build(t: &BuiltTable, part: BuildPart, dev: &GpuDevice) -> Result<Arg> {
    Ok(match part {
        BuildPart::Slots => Arg::U64(ptr(&t.slots, dev)),
        BuildPart::SlotMask => Arg::U32((t.slot_count.max(1) - 1) as u32),
        BuildPart::Mask => Arg::U32((t.probe_slots().max(1) - 1) as u32),
        BuildPart::Key(k) => Arg::U64(ptr(&t.keys[k].values, dev)),
        BuildPart::Offsets => Arg::U64(ptr(t.match_offsets()?, dev)),
        BuildPart::Counts => Arg::U64(ptr(&t.counts, dev)),
        BuildPart::Direct => {
            Arg::U64(ptr(&t.direct.as_ref().ok_or_else(|| Error::exec("direct table missing"))?.table, dev))
        }
        BuildPart::Bitmap => {
            Arg::U64(ptr(&t.bitmap.as_ref().ok_or_else(|| Error::exec("key bitmap missing"))?.words, dev))
        }
        BuildPart::BandMax => {
            Arg::U64(ptr(&t.band_max.as_ref().ok_or_else(|| Error::exec("band running maximum missing"))?.values, dev))
        }
        BuildPart::Entries => {
            Arg::U64(ptr(t.entries.as_ref().ok_or_else(|| Error::exec("hash table entries missing"))?, dev))
        }
        BuildPart::Payload { column, part } => {
            match t.payload.get(column).ok_or_else(|| Error::exec("payload column missing"))? {
                Some(c) => match part {
                    Part::Validity => {
                        Arg::U64(ptr(c.validity.as_ref().ok_or_else(|| Error::exec("payload validity missing"))?, dev))
                    }
                    _ => Arg::U64(ptr(&c.values, dev)),
                },
                // Declared by the probe kernel but never loaded (`payload_columns_read`).
                None => Arg::U64(0),
            }
        }
    })
}
