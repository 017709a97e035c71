//! gpusql: a JIT-compiling GPU SQL engine. This crate is the embedding API.
//!
//! ```no_run
//! let mut engine = gpusql::Engine::new(gpusql::BackendChoice::Auto)?;
//! engine.load_tpch(0.01)?;
//! let batches = engine.sql("select count(*) from lineitem")?;
//! # Ok::<(), gpusql::Error>(())
//! ```
//!
//! An [`Error`] about a place in the SQL text tells where: [`Error::position`] gives its
//! line and column (1-based, in the text given to `sql`/`execute`), and [`Error::kind`]
//! the error itself to match on (`Error::Syntax`, `Error::Bind`, `Error::NotSupported`, …).

mod files;
#[cfg(feature = "datagen")]
pub mod generated_cache;
mod gpu_slot;
mod kernels;
mod loading;
mod plan_cache;
mod row_text;
mod statement_thread;

pub use files::OpenedDirectory;
pub use gpusql_common::WriteOptions;
pub use gpusql_common::{CsvOptions, FileFormat, FileScan};
/// Writing query results and tables to files (what COPY … TO does).
pub use gpusql_storage::files::write::{write_batches, FileWriter, ROW_GROUP_ROWS};

use arrow::record_batch::RecordBatch;
use gpu_slot::{open_gpu, GpuSlot};
use gpusql_common::Catalog;
use gpusql_cuda::{CudaError, GpuDevice};
use gpusql_exec::gpu::GpuExecutor;
use gpusql_exec::gpu::PlanMemo;
pub use gpusql_exec::gpu::ProbeVariant;
use gpusql_plan::config::Selectivity;
pub use gpusql_plan::MultiMatch;
use gpusql_plan::{
    create_physical_plan_with, encode_string_columns, optimizer, place_replicated_tables, LogicalPlan, PhysicalPlan,
    SessionConfig, Source,
};
use gpusql_sql::{BoundStatement, ObjectKind};
pub use gpusql_storage::IfExists;
use gpusql_storage::TableStore;
pub use kernels::{compile_module, compile_profile, compile_util_module, strip_prelude};
use plan_cache::{CachedPlan, PlanCache, IN_PLACE_EXPRESSION_DEPTH};
use statement_thread::StatementThread;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use gpusql_codegen::merge_modules;
pub use gpusql_common::{CancelToken, DataType, Error, Result};
pub use gpusql_cuda::CompileProfile;
pub use gpusql_exec::{ExecStats, KernelStat};

/// Stops the kernel builds running in the background (dropping queued ones, waiting for
/// running ones). A program that ends with `std::process::exit` while an engine is alive
/// calls it first: NVRTC still running on another thread at exit crashes the process.
pub fn stop_background_compiles() {
    gpusql_cuda::compile_pool::stop_all();
}

/// Which backend runs queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when a CUDA driver and device are present, else the CPU reference backend.
    Auto,
    /// The GPU; fails when there is none.
    Gpu,
    /// The CPU reference backend.
    Cpu,
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(BackendChoice::Auto),
            "gpu" => Ok(BackendChoice::Gpu),
            "cpu" => Ok(BackendChoice::Cpu),
            other => Err(Error::InvalidInput(format!("unknown backend '{other}' (auto, gpu or cpu)"))),
        }
    }
}

/// What one statement produced.
#[derive(Debug, Clone)]
pub enum Output {
    /// Query rows.
    Rows { batches: Vec<RecordBatch>, stats: ExecStats },
    /// EXPLAIN text.
    Explain(String),
    /// DDL / DML confirmation ("CREATE TABLE", "INSERT 3").
    Done(String),
}

pub struct Engine {
    tables: TableStore,
    gpu: GpuSlot,
    /// The session's settings (`SET`); the GPU executor holds a copy kept equal.
    config: SessionConfig,
    /// Physical plans of SELECTs run before, by statement text.
    plans: PlanCache,
    /// Set from another thread to stop the running statement ([`Engine::cancel_handle`]);
    /// the executors hold clones.
    cancel: CancelToken,
    /// The thread statements run on (a big stack, kept: `statement_thread`).
    statements: Arc<StatementThread>,
    /// Where generated data sets are kept between runs (`generated_cache`).
    #[cfg(feature = "datagen")]
    data_cache: Option<std::path::PathBuf>,
}

impl Engine {
    /// Opens the engine. With `Auto` and no usable GPU, the CPU backend is used and
    /// `notice()` says why.
    pub fn new(choice: BackendChoice) -> Result<Engine> {
        // Each setting can also come from the environment (GPUSQL_<NAME>, e.g.
        // GPUSQL_LANE_REFILL=off), e.g. for benchmarks of the naive forms.
        let mut config = SessionConfig::default();
        for s in SessionConfig::SETTINGS {
            if let Ok(v) = std::env::var(s.env_var()) {
                config.set(s.name, &v).map_err(|e| Error::InvalidInput(format!("{}: {e}", s.env_var())))?;
            }
        }
        let cancel = CancelToken::new();
        let gpu = match choice {
            BackendChoice::Cpu => GpuSlot::ready(None),
            BackendChoice::Gpu => GpuSlot::ready(Some(
                open_gpu(config.clone(), cancel.clone()).map_err(|e| Error::Gpu(format!("--backend gpu: {e}")))?,
            )),
            BackendChoice::Auto => GpuSlot::opening(config.clone(), cancel.clone()),
        };
        let mut tables = TableStore::default();
        tables.sampling = config.selectivity == Selectivity::Sampled;
        Ok(Engine {
            tables,
            gpu,
            config,
            cancel,
            statements: Arc::new(StatementThread::new()),
            plans: PlanCache::default(),
            #[cfg(feature = "datagen")]
            data_cache: generated_cache::default_dir(),
        })
    }

    /// A handle that stops the statement running now when cancelled from another thread
    /// (the shell's Ctrl-C): the statement ends with [`Error::Cancelled`] at its next check
    /// (between stages and, on the CPU backend, every few thousand rows; a GPU kernel that
    /// has started runs to its end), changing nothing, and the engine and its tables stay
    /// usable. Each statement clears the flag when it starts: a request made while no
    /// statement runs is forgotten.
    pub fn cancel_handle(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Changes a session setting (`SET name = value`); `SHOW ALL` lists them with their
    /// values and docs (`gpusql_plan::config` declares them).
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        self.config.set(name, value)?;
        self.config_changed();
        Ok(())
    }

    /// `RESET name`, or every setting with None (`RESET ALL`).
    pub fn reset(&mut self, name: Option<&str>) -> Result<()> {
        match name {
            Some(n) => self.config.reset(n)?,
            None => self.config = SessionConfig::default(),
        }
        self.config_changed();
        Ok(())
    }

    /// The session's settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Passes the settings on to those that keep a copy.
    fn config_changed(&mut self) {
        self.plans = PlanCache::default();
        self.tables.sampling = self.config.selectivity == Selectivity::Sampled;
        let config = self.config.clone();
        if let Some(g) = self.gpu.get_mut() {
            g.config = config;
        }
    }

    /// How join probes with several matches per row use the warp.
    pub fn set_multi_match(&mut self, m: MultiMatch) {
        self.config.multi_match = m;
    }

    /// A line to show the user when `Auto` fell back to the CPU (waits for the GPU to
    /// open, to know).
    pub fn notice(&self) -> Option<&str> {
        self.gpu.get();
        self.gpu.notice.get().map(|s| s.as_str())
    }

    /// The notice, the first time it is asked for once the GPU has been waited for by
    /// some statement (never waits: a shell shows it after the statement that found out).
    pub fn new_notice(&self) -> Option<&str> {
        let n = self.gpu.notice.get()?;
        (!self.gpu.notice_shown.swap(true, Ordering::Relaxed)).then_some(n.as_str())
    }

    /// "gpu (NVIDIA H100 …)" or "cpu (reference backend)".
    pub fn backend(&self) -> String {
        match self.gpu.get() {
            Some(g) => format!("gpu ({})", g.dev.describe()),
            None => "cpu (reference backend)".into(),
        }
    }

    pub fn gpu_device(&self) -> Option<&Arc<GpuDevice>> {
        self.gpu.get().map(|g| &g.dev)
    }

    pub fn tables(&self) -> &TableStore {
        &self.tables
    }

    /// Runs every statement of `sql`; returns the batches of the last query.
    pub fn sql(&mut self, sql: &str) -> Result<Vec<RecordBatch>> {
        let mut last = vec![];
        for out in self.execute(sql)? {
            if let Output::Rows { batches, .. } = out {
                last = batches;
            }
        }
        Ok(last)
    }

    /// Runs every statement of `sql`, one Output each (the first error, or a cancel
    /// through [`Engine::cancel_handle`], ends the list: statements before it stay done).
    pub fn execute(&mut self, sql: &str) -> Result<Vec<Output>> {
        self.cancel.reset();
        // The very text of a query run before, of shallow expressions, runs here: handing
        // it to the statement thread and back costs two thread wake-ups (18-48 us: example
        // `thread_hop`), up to a tenth of a small query's warm time.
        if let Some(cached) = self.plans.get_shallow(self.tables.generation(), sql) {
            return Ok(vec![self.run_cached(&cached, std::time::Instant::now())?]);
        }
        let statements = Arc::clone(&self.statements);
        statements.run(|| self.execute_here(sql))?
    }

    fn execute_here(&mut self, sql: &str) -> Result<Vec<Output>> {
        let start = std::time::Instant::now();
        // The very text of one query run before: not even parsed again (0.2-0.5 ms).
        if let Some(cached) = self.plans.get(self.tables.generation(), sql) {
            return Ok(vec![self.run_cached(&cached, start)?]);
        }
        let mut steps = gpusql_exec::HostSteps::new(self.config.profile_host);
        let stmts = gpusql_sql::parse(sql)?;
        steps.mark("parse");
        steps.print("statements");
        let mut parse_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut outs = vec![];
        for s in &stmts {
            self.cancel.check()?;
            let start = std::time::Instant::now();
            let mut steps = gpusql_exec::HostSteps::new(self.config.profile_host);
            let key = matches!(s, gpusql_sql::Statement::Query(_)).then(|| s.to_string());
            let generation = self.tables.generation();
            let mut shaped = None;
            let kept = key.as_ref().and_then(|k| self.plans.get(generation, k)).or_else(|| {
                // The same shape with other values: its plan with these. (Shaped only
                // here: a statement of a known text needs no shape.)
                steps.mark("its text");
                shaped = self.shape_of(s);
                steps.mark("shape");
                let p = shaped.as_ref()?;
                let template = self.plans.get(generation, &p.shape)?;
                let plan = gpusql_plan::parameters::instantiate(&template.plan, &p.values)?;
                steps.mark("instantiate");
                let cached = Arc::new(CachedPlan { plan, memo: template.memo.clone(), shallow: template.shallow });
                self.plans.insert(generation, key.clone()?, cached.clone());
                Some(cached)
            });
            steps.print("a statement's plan");
            if let Some(cached) = kept {
                if stmts.len() == 1 {
                    self.plans.insert(generation, sql.to_string(), cached.clone());
                }
                let mut out = self.run_cached(&cached, start)?;
                if let Output::Rows { stats, .. } = &mut out {
                    stats.plan_ms += std::mem::take(&mut parse_ms);
                }
                outs.push(out);
                continue;
            }
            let (bound, mut shape) = self.bind_parameterized(s, shaped)?;
            // current_date and the like are the statement's moment: its plan is not kept.
            let reads_clock = gpusql_sql::statement_read_clock();
            let bind_ms = start.elapsed().as_secs_f64() * 1e3;
            let mut out = match (bound, key) {
                (BoundStatement::Query(plan), Some(key)) => {
                    let (out, mut cached) = match self.run_select(plan) {
                        // A template that plans or runs where its query as written would
                        // not is a gap in parameters (logged); the query runs as written.
                        Err(e @ (Error::NotSupported(_) | Error::Plan(_))) if shape.is_some() => {
                            tracing::warn!("plan template failed ({e}); planning the query as written");
                            shape = None;
                            let BoundStatement::Query(plan) = gpusql_sql::bind_statement(s, &self.tables)? else {
                                unreachable!("a query binds to a query")
                            };
                            self.run_select(plan)?
                        }
                        other => other?,
                    };
                    cached.shallow = gpusql_sql::depth::within(s, IN_PLACE_EXPRESSION_DEPTH);
                    if !reads_clock
                        && cached.plan.pipelines().all(|p| match &p.source {
                            Source::Table { table, .. } => self.tables.is_catalog_table(table),
                            Source::Intermediate { .. } => true,
                        })
                    {
                        let cached = Arc::new(cached);
                        if stmts.len() == 1 {
                            self.plans.insert(generation, sql.to_string(), cached.clone());
                        }
                        if let Some(shape) = shape {
                            self.plans.insert(generation, shape, cached.clone());
                        }
                        self.plans.insert(generation, key, cached);
                    }
                    out
                }
                (bound, _) => self.run(bound)?,
            };
            if let Output::Rows { stats, .. } = &mut out {
                stats.plan_ms += std::mem::take(&mut parse_ms) + bind_ms;
            }
            outs.push(out);
        }
        Ok(outs)
    }

    /// Query `s` with its literals as parameters, where `plan_templates` is on and it has
    /// some.
    fn shape_of(&self, s: &gpusql_sql::Statement) -> Option<gpusql_sql::Parameterized> {
        self.config.plan_templates.then(|| gpusql_sql::parameterize(s)).flatten()
    }

    /// Binds `s`: with its literals as parameters where it has a shape (`shaped`) and that
    /// binds (and its plan may keep them: it reads no table pruned by file statistics,
    /// which judge literals only), else as written. The shape, where parameters were used.
    fn bind_parameterized(
        &self,
        s: &gpusql_sql::Statement,
        shaped: Option<gpusql_sql::Parameterized>,
    ) -> Result<(BoundStatement, Option<String>)> {
        if let Some(p) = shaped {
            // (Binding with parameters can fail where a literal was needed, e.g. a
            // constant a function folds; the statement binds as written then.)
            if let Ok(BoundStatement::Query(plan)) = p.bind(&self.tables) {
                if !reads_file_statistics(&plan) {
                    return Ok((BoundStatement::Query(plan), Some(p.shape)));
                }
            }
        }
        Ok((gpusql_sql::bind_statement(s, &self.tables)?, None))
    }

    /// Runs a kept plan (found at `start`).
    fn run_cached(&mut self, cached: &CachedPlan, start: std::time::Instant) -> Result<Output> {
        self.cancel.check()?;
        let plan_ms = start.elapsed().as_secs_f64() * 1e3;
        let run = std::time::Instant::now();
        let (batches, mut stats) = self.execute_recovering(&cached.plan, &cached.memo)?;
        if self.config.profile_host {
            eprintln!(
                "host ms of a kept plan's statement: find the plan {plan_ms:.3}, run {:.3} (executor {:.3})",
                run.elapsed().as_secs_f64() * 1e3,
                stats.total_ms
            );
        }
        stats.plan_ms = plan_ms;
        stats.plan_kept = true;
        Ok(Output::Rows { batches, stats })
    }

    fn run(&mut self, stmt: BoundStatement) -> Result<Output> {
        match stmt {
            BoundStatement::Query(plan) => Ok(self.run_select(plan)?.0),
            BoundStatement::Explain { plan, verbose } => Ok(Output::Explain(self.explain(plan, verbose)?)),
            BoundStatement::CreateTable { name, columns, unique_keys, if_not_exists, replace } => {
                if self.make_room(&name, if_not_exists, replace)? {
                    let fields =
                        columns.into_iter().map(|c| gpusql_common::Field::new(c.name, c.ty, c.nullable)).collect();
                    self.tables.create_table(&name, fields, unique_keys)?;
                }
                Ok(Output::Done("CREATE TABLE".into()))
            }
            BoundStatement::CreateTableAs { name, plan, if_not_exists, replace } => {
                if !self.make_room(&name, if_not_exists, replace)? {
                    return Ok(Output::Done("CREATE TABLE".into()));
                }
                // (Like DuckDB's, the new table's columns have no NOT NULL constraints.)
                let schema = gpusql_common::Schema::new(
                    plan.schema().fields.into_iter().map(|f| gpusql_common::Field { nullable: true, ..f }).collect(),
                );
                let (batches, _) = self.run_query(plan)?;
                let n = self.tables.create_table_as(&name, schema, &batches)?;
                Ok(Output::Done(format!("CREATE TABLE ({n} rows)")))
            }
            BoundStatement::CreateView { view, replace } => {
                self.tables.create_view(view, replace)?;
                Ok(Output::Done("CREATE VIEW".into()))
            }
            BoundStatement::Drop { kind, names, if_exists } => {
                self.drop_objects(kind, &names, if_exists)?;
                Ok(Output::Done(if kind == ObjectKind::Table { "DROP TABLE" } else { "DROP VIEW" }.into()))
            }
            BoundStatement::Set { name, value } => {
                self.set(&name, &value)?;
                Ok(Output::Done("SET".into()))
            }
            BoundStatement::Reset { name } => {
                self.reset(name.as_deref())?;
                Ok(Output::Done("RESET".into()))
            }
            BoundStatement::ShowSetting { name } => rows_output(self.show_settings(name.as_deref())?),
            BoundStatement::Insert(ins) => {
                let n = self.tables.insert_rows(&ins.table, &ins.rows, ins.on_conflict)?;
                Ok(Output::Done(format!("INSERT {n}")))
            }
            BoundStatement::InsertQuery { table, plan, on_conflict } => {
                let (batches, _) = self.run_query(plan)?;
                let n = self.tables.insert_batches(&table, &batches, on_conflict)?;
                Ok(Output::Done(format!("INSERT {n}")))
            }
            BoundStatement::ChangeRows { table, plan, change } => {
                self.tables.check_writable(&table)?;
                let (batches, _) = self.run_query(plan)?;
                let delete = change == gpusql_sql::dml::RowChange::Delete;
                let (rows, changed) = split_changed(batches, delete)?;
                self.tables.replace_rows(&table, &rows)?;
                Ok(Output::Done(format!("{} {changed}", if delete { "DELETE" } else { "UPDATE" })))
            }
            BoundStatement::ShowTables => {
                let mut names: Vec<String> = self.tables.names();
                names.extend(self.tables.views().into_iter().map(|v| v.name));
                names.sort_by_key(|n| n.to_ascii_lowercase());
                rows_output(string_batch(&["name"], &[names.iter().map(|n| Some(n.as_str())).collect()])?)
            }
            BoundStatement::Describe { columns } => rows_output(describe(&columns)?),
            BoundStatement::CopyFrom { table, scan } => {
                let n = self.tables.copy_from(&table, &scan)?;
                Ok(Output::Done(format!("COPY {n}")))
            }
            BoundStatement::CopyTo { plan, path, options } => {
                let (batches, schema) = self.run_query(plan)?;
                let n = gpusql_storage::files::write::write_batches(
                    std::path::Path::new(&path),
                    &options,
                    schema,
                    &batches,
                )?;
                Ok(Output::Done(format!("COPY {n}")))
            }
        }
    }

    /// Plans and runs a SELECT: its output, and its plan with what running it taught.
    fn run_select(&mut self, plan: LogicalPlan) -> Result<(Output, CachedPlan)> {
        let start = std::time::Instant::now();
        let optimized = optimizer::optimize(plan)?;
        let optimize_ms = start.elapsed().as_secs_f64() * 1e3;
        let decode_ms = self.decode_scans(&optimized)?;
        let (physical, placement_ms) = self.physical_plan(&optimized)?;
        tracing::debug!("physical plan:\n{physical}");
        let plan_ms = start.elapsed().as_secs_f64() * 1e3 - decode_ms;
        if self.config.profile_host {
            eprintln!(
                "host ms of planning: optimize {optimize_ms:.3}, physical plan {:.3} (placements and dictionaries {placement_ms:.3})",
                plan_ms - optimize_ms
            );
        }
        let memo = Arc::new(PlanMemo::default());
        let (batches, mut stats) = self.execute_recovering(&physical, &memo)?;
        stats.plan_ms = plan_ms;
        stats.placement_ms = placement_ms;
        stats.decode_ms += decode_ms;
        tracing::info!("{}", stats.summary());
        Ok((Output::Rows { batches, stats }, CachedPlan { plan: physical, memo, shallow: false }))
    }

    /// EXPLAIN's text: the logical and physical plans (VERBOSE: and the CUDA sources).
    fn explain(&self, plan: LogicalPlan, verbose: bool) -> Result<String> {
        let optimized = optimizer::optimize(plan)?;
        let (physical, _) = self.physical_plan(&optimized)?;
        let mut text = format!("Logical plan:\n{optimized}Physical plan:\n{physical}");
        if verbose {
            for (name, src) in GpuExecutor::sources(&physical, ProbeVariant::RepeatedKeys)? {
                text.push_str(&format!("\n-- CUDA source of {name} --\n{}", strip_prelude(&src)));
            }
        }
        Ok(text)
    }

    /// DROP TABLE / DROP VIEW of `names`, in order (those before an error stay dropped).
    fn drop_objects(&mut self, kind: ObjectKind, names: &[String], if_exists: bool) -> Result<()> {
        for name in names {
            let dropped = match kind {
                ObjectKind::Table if self.tables.view(name).is_some() => {
                    return Err(Error::bind(format!("'{name}' is a view (DROP VIEW {name})")))
                }
                ObjectKind::View if self.tables.table(name).is_some() => {
                    return Err(Error::bind(format!("'{name}' is a table (DROP TABLE {name})")))
                }
                ObjectKind::Table => self.drop_table(name),
                ObjectKind::View => self.tables.drop_view(name),
            };
            if !dropped && !if_exists {
                let what = if kind == ObjectKind::Table { "table" } else { "view" };
                return Err(Error::bind(format!("unknown {what} '{name}'")));
            }
        }
        Ok(())
    }

    /// SHOW `name` (its value), or SHOW ALL (every setting, its values, environment
    /// variable and description).
    fn show_settings(&self, name: Option<&str>) -> Result<RecordBatch> {
        if let Some(n) = name {
            return string_batch(&[n], &[vec![Some(self.config.get(n)?.as_str())]]);
        }
        let settings = SessionConfig::SETTINGS;
        let values: Vec<String> = settings.iter().map(|s| self.config.get(s.name).unwrap_or_default()).collect();
        let envs: Vec<String> = settings.iter().map(|s| s.env_var()).collect();
        string_batch(
            &["name", "value", "values", "environment", "description"],
            &[
                settings.iter().map(|s| Some(s.name)).collect(),
                values.iter().map(|v| Some(v.as_str())).collect(),
                settings.iter().map(|s| Some(s.values)).collect(),
                envs.iter().map(|v| Some(v.as_str())).collect(),
                settings.iter().map(|s| Some(s.doc)).collect(),
            ],
        )
    }

    /// Before CREATE TABLE `name`: whether to create it (false: it exists and IF NOT
    /// EXISTS was given); OR REPLACE drops the old one; otherwise a clash is an error.
    fn make_room(&mut self, name: &str, if_not_exists: bool, replace: bool) -> Result<bool> {
        if self.tables.table(name).is_some() {
            if if_not_exists {
                return Ok(false);
            }
            if replace {
                self.drop_table(name);
            }
        }
        self.tables.check_new_name(name)?;
        Ok(true)
    }

    /// Drops a table and its GPU copies.
    fn drop_table(&mut self, name: &str) -> bool {
        if let Some(g) = self.gpu.get() {
            g.store.forget_table(name);
        }
        self.tables.drop_table(name)
    }

    /// Runs a bound query: its batches and their Arrow schema.
    fn run_query(&mut self, plan: LogicalPlan) -> Result<(Vec<RecordBatch>, arrow::datatypes::SchemaRef)> {
        let optimized = optimizer::optimize(plan)?;
        self.decode_scans(&optimized)?;
        let (physical, _) = self.physical_plan(&optimized)?;
        let (batches, _) = self.execute_recovering(&physical, &PlanMemo::default())?;
        let schema = batches.first().map(|b| b.schema()).ok_or_else(|| Error::exec("a query returned no batch"))?;
        Ok((batches, schema))
    }

    /// Decodes, before planning, what a query's scans of tables read from files will read:
    /// the columns each scan projects, of the row groups pruning kept, all at once on all
    /// cores (planning then takes its samples and dictionaries from them, and execution
    /// finds them decoded). Returns the ms it took.
    fn decode_scans(&self, plan: &LogicalPlan) -> Result<f64> {
        let start = std::time::Instant::now();
        let mut stack = vec![plan];
        while let Some(p) = stack.pop() {
            if let LogicalPlan::Scan { table, projection, chunks, .. } = p {
                if let Some(t) = self.tables.get(table).filter(|t| t.files().is_some()) {
                    t.load(projection, chunks.as_deref().map(|c| c.as_slice()))?;
                }
            }
            stack.extend(p.inputs());
            self.cancel.check()?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    fn plan_query(&self, plan: LogicalPlan) -> Result<PhysicalPlan> {
        Ok(self.physical_plan(&optimizer::optimize(plan)?)?.0)
    }

    /// The physical plan of an optimized logical plan, with the replicated tables and
    /// dictionary-encoded string columns chosen, and the ms that took (the load-time
    /// placements and dictionaries computed for it, on first use).
    fn physical_plan(&self, optimized: &LogicalPlan) -> Result<(PhysicalPlan, f64)> {
        let mut physical = create_physical_plan_with(optimized, &self.config)?;
        let start = std::time::Instant::now();
        place_replicated_tables(&mut physical, &self.tables, self.config.replicated_tables);
        encode_string_columns(&mut physical, &self.tables, self.config.dictionary_strings);
        Ok((physical, start.elapsed().as_secs_f64() * 1e3))
    }

    /// Plans a query (SQL text of one SELECT) without running it, as `execute` would: with
    /// its literals as parameters where `plan_templates` is on and it has some.
    pub fn plan(&self, sql: &str) -> Result<PhysicalPlan> {
        self.statements.run(|| self.plan_here(sql))?
    }

    fn plan_here(&self, sql: &str) -> Result<PhysicalPlan> {
        let stmts = gpusql_sql::parse(sql)?;
        let [stmt] = stmts.as_slice() else { return Err(Error::InvalidInput("expected exactly one statement".into())) };
        match self.bind_parameterized(stmt, self.shape_of(stmt))?.0 {
            BoundStatement::Query(p) | BoundStatement::Explain { plan: p, .. } => self.plan_query(p),
            _ => Err(Error::InvalidInput("expected a query".into())),
        }
    }

    pub fn execute_plan(&self, plan: &PhysicalPlan) -> Result<(Vec<RecordBatch>, ExecStats)> {
        self.cancel.reset();
        self.statements.run(|| self.run_plan(plan, &PlanMemo::default()))?
    }

    fn run_plan(&self, plan: &PhysicalPlan, memo: &PlanMemo) -> Result<(Vec<RecordBatch>, ExecStats)> {
        self.cancel.check()?;
        match self.gpu.get() {
            Some(g) => match g.execute_with(plan, &self.tables, memo) {
                Err(e) if row_text::lacks_row_text(&e) => {
                    Err(row_text::with_row_text(plan, &self.tables, &self.cancel, e))
                }
                run => run,
            },
            None => gpusql_exec::cpu::execute_cancellable(plan, &self.tables, &self.cancel),
        }
    }

    /// `run_plan`, and after a GPU failure that broke the CUDA context (a kernel fault is
    /// sticky: every later call of the context fails): the executor, its resident columns
    /// and loaded kernels are dropped, the device is reset and opened again, and the next
    /// query uploads what it reads. After an illegal address the driver refuses a new
    /// context in the same process (NVIDIA: "the process must be terminated and
    /// relaunched"); the session then goes on on the CPU reference backend, and the
    /// failed query's error and the engine's notice say so.
    fn execute_recovering(&mut self, plan: &PhysicalPlan, memo: &PlanMemo) -> Result<(Vec<RecordBatch>, ExecStats)> {
        let result = self.run_plan(plan, memo);
        let Err(e) = &result else { return result };
        let Some(g) = self.gpu.get() else { return result };
        if g.dev.is_usable() {
            return result;
        }
        let ordinal = g.dev.ordinal();
        drop(self.gpu.ready.take());
        let reopened =
            GpuDevice::reset_device(ordinal).and_then(|_| open_gpu(self.config.clone(), self.cancel.clone()));
        let what = match reopened {
            Ok(g) => {
                let _ = self.gpu.ready.set(Some(g));
                "the GPU context was lost and has been re-created; the next query uploads its columns again".to_string()
            }
            Err(r) => {
                let why = format!(
                    "the GPU context was lost and could not be re-created in this process ({r}); the session goes on on the CPU reference backend: restart it to use the GPU again"
                );
                let _ = self.gpu.notice.set(format!("notice: {why}"));
                self.gpu.notice_shown.store(false, Ordering::Relaxed);
                let _ = self.gpu.ready.set(None);
                why
            }
        };
        tracing::warn!("{e}: {what}");
        Err(Error::Gpu(format!("{e} ({what})")))
    }

    /// Runs a plan on the CPU reference backend whatever the engine's backend.
    pub fn execute_plan_cpu(&self, plan: &PhysicalPlan) -> Result<(Vec<RecordBatch>, ExecStats)> {
        self.cancel.reset();
        self.statements.run(|| gpusql_exec::cpu::execute_cancellable(plan, &self.tables, &self.cancel))?
    }
}

/// The rows of an UPDATE / DELETE plan without its last column, which says whether the row
/// changed: every row (UPDATE) or the unchanged ones (DELETE), and how many changed.
fn split_changed(batches: Vec<RecordBatch>, delete: bool) -> Result<(Vec<RecordBatch>, usize)> {
    let mut changed = 0;
    let mut out = vec![];
    for b in batches {
        let last = b.num_columns() - 1;
        let flag = b.column(last).as_any().downcast_ref::<arrow::array::BooleanArray>().cloned();
        let flag = flag.ok_or_else(|| Error::exec("UPDATE / DELETE: the changed-row column is not BOOLEAN"))?;
        changed += flag.true_count();
        let rows = b.project(&(0..last).collect::<Vec<_>>())?;
        out.push(if delete { arrow::compute::filter_record_batch(&rows, &arrow::compute::not(&flag)?)? } else { rows });
    }
    Ok((out, changed))
}

/// A statement's rows in one batch (SHOW, DESCRIBE: no execution statistics).
fn rows_output(batch: RecordBatch) -> Result<Output> {
    Ok(Output::Rows { batches: vec![batch], stats: ExecStats::default() })
}

/// DESCRIBE's rows, in DuckDB's columns (key, default and extra are always NULL here).
fn describe(columns: &[(String, String, bool)]) -> Result<RecordBatch> {
    let names = columns.iter().map(|c| Some(c.0.as_str())).collect();
    let types = columns.iter().map(|c| Some(c.1.as_str())).collect();
    let nulls = columns.iter().map(|c| Some(if c.2 { "YES" } else { "NO" })).collect();
    let none = vec![None; columns.len()];
    string_batch(
        &["column_name", "column_type", "null", "key", "default", "extra"],
        &[names, types, nulls, none.clone(), none.clone(), none],
    )
}

/// A batch of text columns (SHOW TABLES, DESCRIBE).
fn string_batch(names: &[&str], columns: &[Vec<Option<&str>>]) -> Result<RecordBatch> {
    let fields: Vec<arrow::datatypes::Field> =
        names.iter().map(|n| arrow::datatypes::Field::new(*n, arrow::datatypes::DataType::Utf8, true)).collect();
    let arrays: Vec<arrow::array::ArrayRef> = columns
        .iter()
        .map(|c| std::sync::Arc::new(arrow::array::StringArray::from(c.clone())) as arrow::array::ArrayRef)
        .collect();
    Ok(RecordBatch::try_new(std::sync::Arc::new(arrow::datatypes::Schema::new(fields)), arrays)?)
}

/// Whether `plan` scans a table with per-chunk statistics (row-group pruning reads them).
fn reads_file_statistics(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Scan { statistics: Some(_), .. })
        || plan.inputs().into_iter().any(reads_file_statistics)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An embedder learns where a statement went wrong without reading the message.
    #[test]
    fn errors_carry_their_place_and_kind() {
        let mut engine = Engine::new(BackendChoice::Cpu).unwrap();
        let schema = arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "a",
            arrow::datatypes::DataType::Int64,
            false,
        )]);
        let a = arrow::array::Int64Array::from(vec![1, 2]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(a)]).unwrap();
        engine.register_batches("t", &[batch]).unwrap();

        let e = engine.sql("select a,\n  nope from t").unwrap_err();
        assert_eq!(e.position(), Some((2, 3)));
        assert!(matches!(e.kind(), Error::Bind(m) if m == "unknown column 'nope'"), "{e:?}");
        assert_eq!(e.to_string(), "unknown column 'nope' (line 2, column 3)");

        let e = engine.sql("select a from t where").unwrap_err();
        assert!(matches!(e.kind(), Error::Syntax(_)), "{e:?}");
        assert_eq!(e.position(), Some((1, 22)));

        let e = engine.set("no_such_setting", "1").unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)) && e.position().is_none(), "{e:?}");
    }
}
