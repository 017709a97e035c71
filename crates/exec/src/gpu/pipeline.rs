//! Running one pipeline stage: its kernels chosen and loaded, its source's columns on
//! the GPU, its sink sized and allocated, its kernels bound and launched, and run again
//! with more room where the sink or the string arena overflowed (`run_pipeline`).

use super::bind::Binder;
use super::buffers::{self, Arg, BuiltTable, Column, Counted, Intermediate};
use super::capacity::{
    capacity_after_error, capacity_from_seen, group_capacity, Groups, SinkSizes, ARENA_BYTES_PER_ROW, ARENA_KEY_SALT,
    MAX_FIRST_ARENA_BYTES, MIN_ARENA_BYTES,
};
use super::compile::cache_name;
use super::device_store::{self, cuda_error, DeviceReplica, UploadStats};
use super::replay::{self, ReadBacks};
use super::{join, ptr, GpuExecutor, LaunchQueue, PlanMemo};
use crate::stats::{ExecStats, HostSteps, KernelStat};
use gpusql_codegen::literals::KernelLiteral;
use gpusql_codegen::{generate_pipeline, BuildHint, BuildPart, KernelError, KernelSpec, Param, Part, ReplicaPart};
use gpusql_common::{Error, Result};
use gpusql_cuda::{CacheHit, CudaFunction, CudaSlice, Tier};
use gpusql_plan::parameters::ParamValues;
use gpusql_plan::{JoinKind, Pipeline, PipelineOp, Sink, Source};
use gpusql_storage::host::HostTable;
use gpusql_storage::TableStore;
use std::collections::HashMap;
use std::sync::Arc;

impl GpuExecutor {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_pipeline(
        &self,
        p: &Pipeline,
        params: &ParamValues,
        tables: &TableStore,
        inter: &HashMap<usize, Intermediate>,
        built: &HashMap<usize, BuiltTable>,
        stats: &mut ExecStats,
        memo: &PlanMemo,
        reads: &mut ReadBacks,
        arenas: &mut Vec<CudaSlice<u8>>,
    ) -> Result<(Produced, KernelStat, Option<gpusql_cuda::EndedTimer>)> {
        let mut steps = HostSteps::new(self.config.profile_host);
        let hints = self.build_hints(built);
        let selection = self.chunk_selection(p, tables)?;
        let rows = source_rows(p, tables, inter, selection.as_deref());
        let rows64 = rows as u64;
        let optimal = memo.spec(p.id, &hints, rows64, || generate_pipeline(p, &hints, rows64))?;
        steps.mark("codegen");
        let mut stat = KernelStat { name: format!("pipeline_{}", p.id), ..Default::default() };
        let kept = memo.function(&optimal, &optimal.entry).and_then(|func| match &optimal.init {
            Some(i) => Some((func, Some(memo.function(&optimal, &i.entry)?))),
            None => Some((func, None)),
        });
        let (spec, func, init) = match kept {
            Some((func, init)) => {
                stat.cache = cache_name(CacheHit::Memory);
                (optimal, func, init)
            }
            None => {
                let generic: Vec<BuildHint> = hints.iter().map(|h| BuildHint::generic(h.id)).collect();
                let (spec, tier) = self.choose_kernels(optimal, || {
                    memo.spec(p.id, &generic, rows64, || generate_pipeline(p, &generic, rows64))
                })?;
                let func = self.load(&spec.source, &spec.entry, tier, &mut stat)?;
                let init =
                    spec.init.as_ref().map(|i| self.load(&spec.source, &i.entry, tier, &mut stat)).transpose()?;
                if tier == Tier::Full {
                    memo.keep_function(&spec, &spec.entry, func.clone());
                    if let (Some(i), Some(f)) = (&spec.init, &init) {
                        memo.keep_function(&spec, &i.entry, f.clone());
                    }
                }
                (spec, func, init)
            }
        };
        steps.mark("load");

        let mut up = UploadStats::default();
        let source = match &p.source {
            Source::Table { table, columns, .. } => {
                let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
                // Decode what is not decoded yet of every column at once (in parallel).
                let decode = std::time::Instant::now();
                t.load(columns, selection.as_deref())?;
                stats.decode_ms += decode.elapsed().as_secs_f64() * 1e3;
                self.table_columns(p, &t, columns, selection.as_deref(), &spec, &mut up)?
            }
            Source::Intermediate { id, .. } => {
                let i = inter.get(id).ok_or_else(|| Error::exec(format!("intermediate #{id} missing")))?;
                SourceColumns { columns: i.columns.iter().map(Column::borrowed).collect(), ..Default::default() }
            }
        };
        // (`rows` is the intermediate's, or the table's of the selected chunks.)
        let n = rows;
        let in_sets = self.upload_in_sets(&spec, &mut up)?;
        let literals = self.upload_literals(&spec, params, &mut up)?;
        for q in &spec.params {
            if let Param::Build { id, part: BuildPart::Offsets } = q {
                built
                    .get(id)
                    .ok_or_else(|| Error::exec(format!("hash table #{id} missing")))?
                    .make_match_offsets(self)?;
            }
        }
        steps.mark("source");
        stats.upload_bytes += up.bytes;
        stats.upload_ms += up.ms;
        stat.bytes_read = bytes_read(&spec, &source.columns, n);
        if matches!(p.source, Source::Table { .. }) {
            stats.bytes_read += stat.bytes_read;
        }
        stat.rows_in = n;

        let (mut max_groups, group_bound) = group_capacity(p, n, built);
        let seen_key = SinkSizes::key(&spec.source, n);
        match self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).get(seen_key) {
            Some(seen) => max_groups = capacity_from_seen(p, seen, max_groups, group_bound),
            // The next run is sized by what this one finds: this run's log would not fit it.
            None => reads.unsettled(),
        }
        // The string arena (kernels that make strings): what the last run took, with room
        // to spare, or a guess of ARENA_BYTES_PER_ROW per row; a run that finds it too
        // small runs again with room for what it asked.
        let uses_arena = spec.params.contains(&Param::Arena);
        let arena_key = SinkSizes::key(&spec.source, n) ^ ARENA_KEY_SALT;
        let mut arena_bytes = match self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).get(arena_key) {
            Some(seen) => seen.saturating_add(seen / 4).max(MIN_ARENA_BYTES),
            None => n.saturating_mul(ARENA_BYTES_PER_ROW).clamp(MIN_ARENA_BYTES, MAX_FIRST_ARENA_BYTES),
        };
        loop {
            // Group ids and a build's row positions are 32-bit on the GPU.
            if matches!(p.sink, Sink::Aggregate { .. } | Sink::HashBuild { .. }) && max_groups > i32::MAX as usize {
                return Err(Error::not_supported(format!(
                    "hash tables of more than 2,147,483,647 groups or build rows on the GPU ({max_groups})"
                )));
            }
            let sink = buffers::SinkBuffers::allocate(&self.dev, &p.sink, max_groups)?;
            let arena = match uses_arena {
                true => Some(self.dev.alloc_unset::<u8>(arena_bytes, "string arena").map_err(cuda_error)?),
                false => None,
            };
            steps.mark("allocate");
            let binder = Binder {
                dev: &self.dev,
                n,
                sink: &sink,
                max_groups,
                source: &source,
                in_sets: &in_sets,
                literals: &literals,
                built,
                spec: &spec,
                arena: arena.as_ref().map(|a| (a, arena_bytes)),
            };
            let span = self.run_kernels(&func, init.as_ref(), &binder)?;
            steps.mark("kernels");
            let counted = sink.counted(&self.dev, reads, replay::site(("pipeline", p.id, n, max_groups)))?;
            // (A replay reads its stages' spans at the end: reading one waits for it.)
            let span = if reads.is_replay() {
                Some(span)
            } else {
                stat.ms += span.ms().map_err(cuda_error)?;
                None
            };
            let code = counted.error;
            let full_at = n.saturating_sub(counted.full_from_end as usize);
            let count = counted.rows;
            steps.mark("download counts");
            let groups = Groups { max: max_groups, bound: group_bound, count, full_at, rows: n };
            if KernelError::from_code(code) == Some(KernelError::ArenaFull) {
                // (A grouped aggregation stops early on an error: then what it asked for
                // is a lower bound.)
                arena_bytes =
                    counted.arena_used.max(arena_bytes.saturating_mul(4)).saturating_add(counted.arena_used / 4);
                tracing::debug!("pipeline_{}: string arena full, running again with {arena_bytes} bytes", p.id);
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            if let Some(grown) = capacity_after_error(p, code, &groups)? {
                max_groups = grown;
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            if matches!(p.sink, Sink::Materialize { .. } | Sink::HashBuild { .. }) && count > max_groups {
                // A multi-match join emitted more rows than the pipeline read: the rows past
                // the buffers were counted, not written; run again with room for all of them.
                tracing::debug!("pipeline_{}: {count} rows for {max_groups} rows of room, running again", p.id);
                max_groups = count;
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            let rows = match &p.sink {
                Sink::Aggregate { keys, .. } if keys.is_empty() => 1,
                Sink::Aggregate { .. } => count.min(max_groups),
                Sink::Materialize { .. } | Sink::HashBuild { .. } => count,
            };
            stat.rows_out = rows;
            self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).insert(seen_key, rows);
            if let Some(arena) = arena {
                self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).insert(arena_key, counted.arena_used);
                arenas.push(arena);
            }
            steps.print(&format!("pipeline_{} ({n} rows in, {rows} out, room for {max_groups})", p.id));
            if matches!(p.sink, Sink::HashBuild { .. }) {
                return Ok((Produced::Table(Box::new(sink), counted, build_key_range(p, tables)), stat, span));
            }
            return Ok((Produced::Rows(sink.into_intermediate(p.sink.schema().clone(), rows)), stat, span));
        }
    }

    /// Queues the init kernel (empty hash slots) and the pipeline kernel, back to back;
    /// returns their GPU span.
    fn run_kernels(
        &self,
        func: &CudaFunction,
        init: Option<&CudaFunction>,
        b: &Binder,
    ) -> Result<gpusql_cuda::EndedTimer> {
        let bind = |q: &Param| b.bind(q);
        let mut q = LaunchQueue::default();
        if let (Some(init_fn), Some(init_spec)) = (init, &b.spec.init) {
            let args = init_spec.params.iter().map(bind).collect::<Result<Vec<_>>>()?;
            q.push(init_fn.clone(), &args, b.sink.slot_count.max(b.max_groups), Some(self.grid_limit()));
        }
        let args = b.spec.params.iter().map(bind).collect::<Result<Vec<_>>>()?;
        q.push(func.clone(), &args, b.n, Some(self.resident_grid(func)));
        self.submit_queue(q)
    }

    /// What the code generator needs to know of the hash tables built so far.
    fn build_hints(&self, built: &HashMap<usize, BuiltTable>) -> Vec<BuildHint> {
        let mut hints: Vec<BuildHint> = built
            .iter()
            .map(|(id, t)| BuildHint {
                id: *id,
                multi: t.multi,
                slots: t.probe_slots(),
                shared_memory: self.config.shared_memory_probe_tables,
                direct_min: t.direct.as_ref().map(|d| d.min),
                bitmap: t.bitmap.as_ref().map(|m| (m.min, m.bits as u64)),
                early: self.config.early_bitmaps,
                generic: false,
            })
            .collect();
        // (In build order: the plan memo keys kernels by them.)
        hints.sort_by_key(|h| h.id);
        hints
    }

    /// A table scan narrowed by row-group pruning reads the kept chunks, unless the
    /// whole columns are resident already.
    fn chunk_selection(&self, p: &Pipeline, tables: &TableStore) -> Result<Option<Vec<usize>>> {
        Ok(match &p.source {
            Source::Table { table, columns, kept: Some(k), .. } => {
                let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
                (!columns.iter().all(|&c| self.store.is_resident(&t, c))).then(|| k.chunks.to_vec())
            }
            _ => None,
        })
    }

    /// A table's columns on the GPU, with the Pivot-4 copies LIKE kernels ask for and the
    /// replica placements (rows' slots) of the pipeline's replicated tables, each uploaded
    /// on first use.
    fn table_columns(
        &self,
        p: &Pipeline,
        t: &HostTable,
        columns: &[usize],
        selection: Option<&[usize]>,
        spec: &KernelSpec,
        up: &mut UploadStats,
    ) -> Result<SourceColumns<'static>> {
        let cols = columns
            .iter()
            .enumerate()
            .map(|(i, c)| match (selection, p.dictionary_encoded(i)) {
                (Some(sel), _) => self.store.column_chunks(&self.dev, t, *c, sel, up).map(Column::Table),
                (None, true) => self.store.dictionary(&self.dev, t, *c, up).map(Column::Dictionary),
                (None, false) => self.store.column(&self.dev, t, *c, up).map(Column::Table),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut pivots: HashMap<usize, u64> = HashMap::new();
        // (No copy where every LIKE pattern runs as a DFA: the kernel reads none.)
        let all_dfas = self.config.like_dfa
            && spec.literals.iter().all(|l| !matches!(l, KernelLiteral::Pattern(p) if p.dfa.is_none()));
        let pivot = self.config.pivoted_strings && selection.is_none() && !all_dfas;
        for q in spec.params.iter().filter(|_| pivot) {
            if let Param::Input { column, part: Part::Pivoted } = q {
                if let Some(piv) = self.store.pivoted(&self.dev, t, columns[*column], up, |c, k| self.pivot(c, k))? {
                    pivots.insert(*column, ptr(&piv.words, &self.dev));
                }
            }
        }
        let mut replicas = vec![];
        for r in &p.replicated {
            replicas.push(self.store.replica(&self.dev, t, r.request, up)?);
        }
        Ok(SourceColumns { columns: cols, pivots, replicas })
    }

    /// The Pivot-4 copy of resident string column `c` in `pieces` 4-byte pieces per row
    /// (`convert::pivot_pieces`).
    fn pivot(&self, c: &device_store::DeviceColumn, pieces: u32) -> Result<CudaSlice<u32>> {
        let offsets = c.offsets.as_ref().ok_or_else(|| Error::exec("pivoting a column that holds no strings"))?;
        let words = c.rows * pieces as usize;
        // (4 words of padding, as every uploaded column has.)
        let out = self.dev.alloc_zeros::<u32>(words + 4, "pivoted strings").map_err(cuda_error)?;
        let f = self.util("pivot_strings", &mut KernelStat::default())?;
        let args = [
            Arg::U64(ptr(&c.values, &self.dev)),
            Arg::U64(ptr(offsets, &self.dev)),
            Arg::U64(ptr(&out, &self.dev)),
            Arg::U64(c.rows as u64),
            Arg::U32(pieces),
        ];
        self.launch_untimed(&f, &args, words, Some(self.grid_limit()))?;
        Ok(out)
    }
}

/// A pipeline whose sink overflowed runs again: its first run's span counts, and the run's
/// log would replay the overflow (`ReadBacks::unsettled`).
fn ran_again(span: Option<gpusql_cuda::EndedTimer>, stat: &mut KernelStat, reads: &mut ReadBacks) -> Result<()> {
    if let Some(span) = span {
        stat.ms += span.ms().map_err(cuda_error)?;
    }
    reads.unsettled();
    Ok(())
}

/// Rows a pipeline's source holds (of the kept chunks, for a pruned scan).
fn source_rows(
    p: &Pipeline,
    tables: &TableStore,
    inter: &HashMap<usize, Intermediate>,
    selection: Option<&[usize]>,
) -> usize {
    match &p.source {
        Source::Table { table, .. } => tables.get(table).map_or(0, |t| match selection {
            Some(s) => s.iter().map(|&k| t.chunk_rows(k)).sum(),
            None => t.rows,
        }),
        Source::Intermediate { id, .. } => inter.get(id).map_or(0, |i| i.rows),
    }
}

/// Bytes the kernel reads: the source columns its code loads (+ the 2-byte slot per row
/// of each replicated table the code reads).
fn bytes_read(spec: &KernelSpec, src: &[Column], n: usize) -> usize {
    let read_cols = &spec.source_columns_read;
    let columns: usize = src.iter().enumerate().filter(|(i, _)| read_cols.contains(i)).map(|(_, c)| c.bytes(n)).sum();
    columns
        + spec.params.iter().filter(|q| matches!(q, Param::Replica { part: ReplicaPart::RowSlots, .. })).count() * 2 * n
}

/// A pipeline's source on the GPU.
#[derive(Default)]
pub(super) struct SourceColumns<'a> {
    pub(super) columns: Vec<Column<'a>>,
    /// Pivot-4 copies of string columns, by source column.
    pub(super) pivots: HashMap<usize, u64>,
    /// Replica placements of the pipeline's replicated tables.
    pub(super) replicas: Vec<Arc<DeviceReplica>>,
}

/// What a pipeline's sink produced.
pub(super) enum Produced {
    Rows(Intermediate),
    /// A hash build's raw buffers and what it counted (rows, keys), to be grouped by key,
    /// and what is known of its key before the build (for the key bitmap).
    Table(Box<buffers::SinkBuffers>, Counted, Option<join::KeyRange>),
}

/// For a hash build whose single key is a column of the table it scans: that column's
/// value range and the table's rows (known on the host, so the key bitmap needs no
/// reduction on the GPU and no wait for it).
fn build_key_range(p: &Pipeline, tables: &TableStore) -> Option<join::KeyRange> {
    // (Not for a scan of some row groups: the range would cover every row group.)
    let (Source::Table { table, columns, kept: None, .. }, Sink::HashBuild { keys, .. }) = (&p.source, &p.sink) else {
        return None;
    };
    let [gpusql_plan::Expr::Column { index, .. }] = keys.as_slice() else { return None };
    let t = tables.get(table)?;
    let (min, max) = t.column_range(columns[sink_source_column(p, columns.len(), *index)?])?;
    Some(join::KeyRange { min, max, table_rows: t.rows })
}

/// The source column (index into the scanned columns) that column `index` of the row
/// reaching the sink of `p` holds unchanged, if any: probes append build columns and
/// projections rearrange the row, so the sink's key index is not the source's.
fn sink_source_column(p: &Pipeline, source_columns: usize, index: usize) -> Option<usize> {
    let mut map: Vec<Option<usize>> = (0..source_columns).map(Some).collect();
    for op in &p.ops {
        match op {
            PipelineOp::Project { exprs, .. } => {
                map = exprs
                    .iter()
                    .map(|e| {
                        if let gpusql_plan::Expr::Column { index, .. } = e {
                            map.get(*index).copied().flatten()
                        } else {
                            None
                        }
                    })
                    .collect();
            }
            PipelineOp::HashProbe { kind: JoinKind::Inner | JoinKind::Left, schema, .. } => {
                map.resize(schema.len(), None)
            }
            PipelineOp::HashProbe { .. } | PipelineOp::Filter(_) | PipelineOp::LaneRefill { .. } => {}
        }
    }
    map.get(index).copied().flatten()
}
