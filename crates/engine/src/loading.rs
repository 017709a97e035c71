//! Putting tables into an engine: Arrow batches, generated TPC-H and SSB data, decoding,
//! string dictionaries and uploads ahead of the first query.

use super::*;

impl Engine {
    /// Registers a table from Arrow record batches; a table of that name already there
    /// is an error ([`Engine::register_batches_with`] can replace it).
    pub fn register_batches(&mut self, name: &str, batches: &[RecordBatch]) -> Result<()> {
        self.register_batches_with(name, batches, IfExists::Fail)
    }

    /// Registers a table from Arrow record batches; a taken name is an error or
    /// replaced, as `if_exists` says.
    pub fn register_batches_with(&mut self, name: &str, batches: &[RecordBatch], if_exists: IfExists) -> Result<()> {
        self.tables.register_batches(name, batches, if_exists)?;
        self.forget_gpu_copies(name);
        Ok(())
    }

    #[cfg(feature = "datagen")]
    /// Generates TPC-H at scale factor `sf` in-process and registers its 8 tables; where
    /// one of their names is taken, nothing is loaded and the error names them all.
    pub fn load_tpch(&mut self, sf: f64) -> Result<()> {
        self.load_tpch_with_progress(sf, IfExists::Fail, &|_, _| {})
    }

    #[cfg(feature = "datagen")]
    pub fn load_tpch_with_progress(
        &mut self,
        sf: f64,
        if_exists: IfExists,
        progress: &(dyn Fn(&str, usize) + Sync),
    ) -> Result<()> {
        self.register_generated("tpch", sf, &gpusql_datagen::TPCH_TABLES, if_exists, || {
            gpusql_datagen::tpch_with_progress(sf, progress)
        })
    }

    #[cfg(feature = "datagen")]
    /// Generates the Star Schema Benchmark at scale factor `sf` in-process and registers
    /// its 5 tables (lineorder, customer, supplier, part, date); where one of their names
    /// is taken (TPC-H's customer, part and supplier), nothing is loaded and the error
    /// names them all.
    pub fn load_ssb(&mut self, sf: f64) -> Result<()> {
        self.load_ssb_with_progress(sf, IfExists::Fail, &|_, _| {})
    }

    #[cfg(feature = "datagen")]
    pub fn load_ssb_with_progress(
        &mut self,
        sf: f64,
        if_exists: IfExists,
        progress: &(dyn Fn(&str, usize) + Sync),
    ) -> Result<()> {
        self.register_generated("ssb", sf, &gpusql_datagen::SSB_TABLES, if_exists, || {
            gpusql_datagen::ssb_with_progress(sf, progress)
        })
    }

    /// Registers generated data set `label` at `sf`, tables `names`: none where one name is
    /// taken (unless `if_exists` replaces). Read from the generated-data cache where it is
    /// kept there (`generated_cache`), else made by `generate` (and kept up to
    /// `generated_cache::MAX_SF`); then its string dictionaries are built in the background.
    #[cfg(feature = "datagen")]
    pub(crate) fn register_generated(
        &mut self,
        label: &str,
        sf: f64,
        names: &[&str],
        if_exists: IfExists,
        generate: impl FnOnce() -> std::result::Result<Vec<gpusql_datagen::GeneratedTable>, gpusql_datagen::DatagenError>,
    ) -> Result<()> {
        self.tables.check_names(names, if_exists)?;
        let start = std::time::Instant::now();
        let kept = generated_cache::set_dir(self.data_cache.as_deref(), label, sf);
        if let Some(tables) = kept.as_deref().and_then(|d| generated_cache::read(d, names)) {
            for (name, batches) in &tables {
                self.register_batches_with(name, batches, if_exists)?;
            }
            tracing::debug!(
                "read {label} SF {sf} from the generated-data cache in {:.0} ms",
                start.elapsed().as_secs_f64() * 1e3
            );
            self.build_dictionaries_in_background(names);
            return Ok(());
        }
        let tables = generate()?;
        tracing::debug!("generated {label} SF {sf} in {:.0} ms", start.elapsed().as_secs_f64() * 1e3);
        for t in &tables {
            self.register_batches_with(&t.name, &t.batches, if_exists)?;
        }
        if let Some(dir) = kept {
            let parts: Vec<_> =
                tables.iter().map(|t| (t.name.as_str(), t.schema.clone(), t.batches.as_slice())).collect();
            generated_cache::write(&dir, &parts);
        }
        self.build_dictionaries_in_background(names);
        Ok(())
    }

    /// Builds the string dictionaries of tables `names` on another thread, so that the
    /// first query over a column does not: at TPC-H SF 10 they took 0.1-0.5 s of a first
    /// query's planning each (Q01's two flags: 0.49 s). A query that needs one being built
    /// waits for that column's only (`HostTable` keeps one cell per column).
    #[cfg(feature = "datagen")]
    pub(crate) fn build_dictionaries_in_background(&self, names: &[&str]) {
        if !self.config.dictionary_strings {
            return;
        }
        let tables: Vec<_> = names.iter().filter_map(|n| self.tables.get(n)).collect();
        // On a quarter of the cores: a query started meanwhile keeps the rest for its own
        // parallel work (on all of them, a first query right after loading SF 10 waited
        // behind the dictionaries of columns it did not read: Q12 2.1 s).
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get() / 4).max(1);
        let build = move || {
            let build_all = || tables.iter().for_each(|t| build_string_dictionaries(t));
            match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(pool) => pool.install(build_all),
                Err(_) => build_all(),
            }
        };
        if let Err(e) = std::thread::Builder::new().name("gpusql-dictionaries".into()).spawn(build) {
            tracing::warn!(error = %e, "cannot start building the string dictionaries: queries build them on first use");
        }
    }

    /// Where generated data sets are kept between runs (`generated_cache`; None: not kept).
    /// Defaults to `generated_cache::default_dir()`.
    #[cfg(feature = "datagen")]
    pub fn set_generated_data_cache(&mut self, dir: Option<std::path::PathBuf>) {
        self.data_cache = dir;
    }

    /// Drops the GPU's copies of a table that was replaced.
    pub(crate) fn forget_gpu_copies(&self, name: &str) {
        if let Some(g) = self.gpu.ready.get().and_then(|g| g.as_ref()) {
            g.store.forget_table(name);
        }
    }

    /// Decodes every column of every table read from files now (benchmarks measure the
    /// decoding apart from the upload and the queries).
    pub fn decode_all(&self) -> Result<()> {
        for name in self.tables.names() {
            if let Some(t) = self.tables.get(&name) {
                t.load(&(0..t.schema.len()).collect::<Vec<_>>(), None)?;
            }
        }
        Ok(())
    }

    /// Builds the string dictionaries of every table's string columns now (on the host:
    /// the load-time encoding queries would otherwise build on first use), so that
    /// benchmarks time them apart from the uploads.
    pub fn build_dictionaries(&self) {
        if !self.config.dictionary_strings {
            return;
        }
        for name in self.tables.names() {
            if let Some(t) = self.tables.get(&name) {
                build_string_dictionaries(&t);
            }
        }
    }

    /// Uploads every column of every table to the GPU now, in the layout queries read
    /// (a string column with a dictionary as its codes), so that benchmarks measure warm
    /// runs. Returns the bytes uploaded.
    pub fn warm_up_gpu(&self) -> Result<usize> {
        let Some(g) = self.gpu.get() else { return Ok(0) };
        let mut stats = gpusql_exec::gpu::device_store::UploadStats::default();
        for name in self.tables.names() {
            if let Some(t) = self.tables.get(&name) {
                for c in 0..t.schema.len() {
                    let dictionary = self.config.dictionary_strings
                        && t.schema.fields[c].ty == DataType::Utf8
                        && t.string_dictionary(c).is_some();
                    if dictionary {
                        g.store.dictionary(&g.dev, &t, c, &mut stats)?;
                    } else {
                        g.store.column(&g.dev, &t, c, &mut stats)?;
                    }
                }
            }
        }
        Ok(stats.bytes)
    }
}

/// Builds (and keeps) the dictionary of each string column of `t` that has few values.
pub(crate) fn build_string_dictionaries(t: &gpusql_storage::host::HostTable) {
    for c in 0..t.schema.len() {
        if t.schema.fields[c].ty == DataType::Utf8 {
            t.string_dictionary(c);
        }
    }
}
