//! Logical plan -> physical stages. Splits the plan into pipelines at its breakers
//! (aggregation, sorting, the final materialization) and lowers SQL aggregates onto
//! accumulator states.

use crate::band::band_search;
use crate::config::SessionConfig;
use crate::expr::{BinaryOp, Expr};
use crate::filter_plan::{FilterOrder, FilterPlan};
use crate::logical::{AggExpr, AggFunc, JoinKind, LogicalPlan, SortKey};
use crate::physical::*;
use crate::selectivity::{estimate, sample_rows, sample_selectivity, Estimates};
use gpusql_common::{DataType, Error, Field, Result, ScalarValue, Schema};

mod window;

/// Where the plan built so far stands.
enum Built {
    /// A pipeline still open for more operators.
    Open { source: Source, ops: Vec<PipelineOp> },
    /// A materialized, ordered intermediate with a column selection, offset and limit.
    Done { id: IntermediateId, schema: Schema, columns: Vec<usize>, skip: usize, fetch: Option<usize> },
}

struct Planner {
    multi_match: MultiMatch,
    filter_order: FilterOrder,
    lane_refill: Option<u32>,
    top_n: bool,
    max_cross_join_pairs: u64,
    band_joins: bool,
    merged_patterns: bool,
    like_dfa: bool,
    register_groups: Option<u32>,
    lane_group: bool,
    stages: Vec<Stage>,
    next_intermediate: IntermediateId,
    next_pipeline: usize,
    /// Aggregations planned so far, with the intermediate of their groups and the
    /// projection that finishes them: an equal aggregation met again (a CTE read several
    /// times, the finest level of grouping sets) reads those groups instead of aggregating
    /// again. (Pipelines only read intermediates, so several may read one.)
    aggregations: Vec<(LogicalPlan, IntermediateId, Schema, PipelineOp)>,
}

/// Default Lane Refill threshold: a warp goes on once 24 of its 32 lanes hold rows.
pub const LANE_REFILL_THRESHOLD: u32 = 24;
/// A Lane Refill operator is placed where the estimated fraction of active lanes since the
/// pipeline's start (or the last Lane Refill) has dropped to this or below (measured on
/// lineitem ⋈ part at SF 10: 1.1-1.5x faster at 2-20% selectivity, 5-9% slower at 50%).
const LANE_REFILL_MAX_ACTIVITY: f64 = 0.35;

pub fn create_physical_plan(plan: &LogicalPlan) -> Result<PhysicalPlan> {
    create_physical_plan_with(plan, &SessionConfig::default())
}

/// The physical plan under the session's planner settings (`multi_match`, `filter_order`,
/// `lane_refill`, `top_n`; replicated tables and dictionary strings are placed afterwards,
/// by `place_replicated_tables` and `encode_string_columns`, with a catalog that has them).
pub fn create_physical_plan_with(plan: &LogicalPlan, config: &SessionConfig) -> Result<PhysicalPlan> {
    let mut p = Planner {
        multi_match: config.multi_match,
        filter_order: config.filter_order,
        lane_refill: config.lane_refill.0,
        top_n: config.top_n,
        max_cross_join_pairs: config.max_cross_join_pairs,
        band_joins: config.band_joins,
        merged_patterns: config.merged_patterns,
        like_dfa: config.like_dfa,
        register_groups: config.register_groups.0,
        lane_group: config.lane_group,
        stages: vec![],
        next_intermediate: 0,
        next_pipeline: 0,
        aggregations: vec![],
    };
    let names: Vec<String> = plan.schema().fields.iter().map(|f| f.name.clone()).collect();
    let built = p.build(plan)?;
    let (id, schema, columns, skip, fetch) = match built {
        // Rows an earlier stage left as they are (a UNION ALL's): no copy.
        Built::Open { source: Source::Intermediate { id, schema }, ops } if ops.is_empty() => {
            let cols = (0..schema.len()).collect();
            (id, schema, cols, 0, None)
        }
        Built::Open { source, ops } => {
            let (id, schema) = p.materialize(source, ops);
            let cols = (0..schema.len()).collect();
            (id, schema, cols, 0, None)
        }
        Built::Done { id, schema, columns, skip, fetch } => (id, schema, columns, skip, fetch),
    };
    let plan = PhysicalPlan {
        stages: p.stages,
        result: id,
        result_schema: schema,
        columns,
        names,
        skip,
        fetch,
        parameters: Default::default(),
    };
    plan.check_consumption()?;
    Ok(plan)
}

/// Keeps a Lane Refill mark where the estimated lane activity since the pipeline's start (or
/// the last kept mark) has fallen to LANE_REFILL_MAX_ACTIVITY and work follows that full
/// warps do faster: a probe or filter, or a grouped aggregation's hash insert (DogQC
/// places it where "multiple succeeding operators" benefit). Not for a sink alone that
/// writes rows (materialize, hash build): measured slower, as those writes then reserve
/// their positions per warp instead of per block (TPC-H Q13's 15M-row build). Marks
/// become the cumulative activity.
fn place_lane_refills(ops: &mut Vec<PipelineOp>, sink: &Sink) {
    let sink_works = matches!(sink, Sink::Aggregate { keys, .. } if !keys.is_empty());
    let marked = std::mem::take(ops);
    let mut since = 1.0;
    for (i, op) in marked.iter().enumerate() {
        let PipelineOp::LaneRefill { threshold, activity } = op else {
            ops.push(op.clone());
            continue;
        };
        since *= activity;
        let rest = &marked[i + 1..];
        // A later mark with only projections between takes over (one buffer, not two).
        let next = rest.iter().find(|o| !matches!(o, PipelineOp::Project { .. }));
        if matches!(next, Some(PipelineOp::LaneRefill { .. })) {
            continue;
        }
        let work_follows =
            sink_works || rest.iter().any(|o| matches!(o, PipelineOp::HashProbe { .. } | PipelineOp::Filter(_)));
        if since <= LANE_REFILL_MAX_ACTIVITY && work_follows {
            ops.push(PipelineOp::LaneRefill { threshold: *threshold, activity: since });
            since = 1.0;
        }
    }
}

fn row_schema<'a>(source: &'a Source, ops: &'a [PipelineOp]) -> &'a Schema {
    ops.iter().rev().find_map(|op| op.schema()).unwrap_or_else(|| source.schema())
}

/// Whether `ops` leave the source's rows as they are: none, or projections of its columns
/// in order.
fn identity(source: &Source, ops: &[PipelineOp]) -> bool {
    let schema = source.schema();
    ops.iter().all(|op| match op {
        PipelineOp::Project { exprs, .. } => {
            exprs.len() == schema.len()
                && exprs.iter().enumerate().all(
                    |(i, e)| matches!(e, Expr::Column { index, ty, .. } if *index == i && *ty == schema.fields[i].ty),
                )
        }
        _ => false,
    })
}

fn column_expr(schema: &Schema, i: usize) -> Expr {
    let f = &schema.fields[i];
    Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
}

impl Planner {
    fn intermediate(&mut self) -> IntermediateId {
        self.next_intermediate += 1;
        self.next_intermediate - 1
    }

    /// Marks a place for a Lane Refill operator after an operator that keeps `activity` of
    /// its rows; `place_lane_refills` keeps the marks that pay off once the pipeline is
    /// complete.
    fn refill_candidate(&mut self, ops: &mut Vec<PipelineOp>, activity: f64) {
        if let Some(threshold) = self.lane_refill {
            if activity < 1.0 {
                ops.push(PipelineOp::LaneRefill { threshold, activity });
            }
        }
    }

    fn push_pipeline(&mut self, source: Source, mut ops: Vec<PipelineOp>, sink: Sink) {
        place_lane_refills(&mut ops, &sink);
        let id = self.next_pipeline;
        self.next_pipeline += 1;
        self.stages.push(Stage::Pipeline(Pipeline {
            id,
            source,
            ops,
            sink,
            replicated: vec![],
            dictionary_columns: vec![],
        }));
    }

    fn materialize(&mut self, source: Source, ops: Vec<PipelineOp>) -> (IntermediateId, Schema) {
        let schema = row_schema(&source, &ops).clone();
        let id = self.intermediate();
        self.push_pipeline(source, ops, Sink::Materialize { id, schema: schema.clone() });
        (id, schema)
    }

    /// Opens a pipeline on the input; a finished (sorted / limited) input is first sliced
    /// into a dense intermediate the pipeline scans.
    fn open(&mut self, input: &LogicalPlan) -> Result<(Source, Vec<PipelineOp>)> {
        match self.build(input)? {
            Built::Open { source, ops } => Ok((source, ops)),
            Built::Done { id, schema, columns, skip, fetch } => Ok(self.slice(id, &schema, columns, skip, fetch)),
        }
    }

    /// Rows [skip, skip + fetch) of a finished intermediate, `columns` of it, as a new
    /// dense intermediate a pipeline scans.
    fn slice(
        &mut self,
        id: IntermediateId,
        schema: &Schema,
        columns: Vec<usize>,
        skip: usize,
        fetch: Option<usize>,
    ) -> (Source, Vec<PipelineOp>) {
        self.slice_with(id, schema, columns, skip, fetch, false)
    }

    /// `slice`, with each row's position as a last column where `position` says.
    fn slice_with(
        &mut self,
        id: IntermediateId,
        schema: &Schema,
        columns: Vec<usize>,
        skip: usize,
        fetch: Option<usize>,
        position: bool,
    ) -> (Source, Vec<PipelineOp>) {
        let mut fields: Vec<Field> = columns.iter().map(|c| schema.fields[*c].clone()).collect();
        if position {
            fields.push(Field::new(crate::logical::POSITION_COLUMN, DataType::Int64, false));
        }
        let schema = Schema::new(fields);
        let output = self.intermediate();
        self.stages.push(Stage::Slice { input: id, output, columns, skip, fetch, position, schema: schema.clone() });
        (Source::Intermediate { id: output, schema }, vec![])
    }

    /// Each row of the (ordered) input followed by its position: the finished input is
    /// sliced with positions; an open one is materialized first (its order then is the
    /// materialization's). Positions within groups of the first `partition` sort keys are
    /// the Sort stage's (`segments`).
    fn build_enumerate(&mut self, input: &LogicalPlan, partition: usize) -> Result<Built> {
        let built = self.build(input)?;
        if partition > 0 {
            let sorted = match (&built, self.stages.last_mut()) {
                (Built::Done { id, skip: 0, fetch: None, .. }, Some(Stage::Sort { output, keys, segments, .. }))
                    if output == id && keys.len() >= partition =>
                {
                    *segments = Some(partition);
                    true
                }
                _ => false,
            };
            if !sorted {
                return Err(Error::plan("positions within groups need an unlimited sort by the group keys below"));
            }
        }
        let (source, ops) = match built {
            Built::Open { source, ops } => {
                let (id, schema) = self.materialize(source, ops);
                let columns = (0..schema.len()).collect();
                self.slice_with(id, &schema, columns, 0, None, true)
            }
            Built::Done { id, schema, columns, skip, fetch } => {
                self.slice_with(id, &schema, columns, skip, fetch, true)
            }
        };
        Ok(Built::Open { source, ops })
    }

    /// string_agg's runs: over the dense, ordered rows an Enumerate slices (a pipeline
    /// between them would not keep their order on the GPU).
    fn build_concat_runs(
        &mut self,
        input: &LogicalPlan,
        keys: &[usize],
        value: usize,
        position: usize,
        separator: &str,
        schema: Schema,
    ) -> Result<Built> {
        if !matches!(input, LogicalPlan::Enumerate { .. }) {
            return Err(Error::plan("ConcatRuns reads the rows of an Enumerate"));
        }
        let id = match self.build(input)? {
            Built::Open { source: Source::Intermediate { id, .. }, ops } if ops.is_empty() => id,
            _ => return Err(Error::plan("an Enumerate's rows are a sliced intermediate")),
        };
        let output = self.intermediate();
        self.stages.push(Stage::ConcatRuns {
            input: id,
            output,
            keys: keys.to_vec(),
            value,
            position,
            separator: separator.to_string(),
            schema: schema.clone(),
        });
        Ok(Built::Open { source: Source::Intermediate { id: output, schema }, ops: vec![] })
    }

    fn build(&mut self, plan: &LogicalPlan) -> Result<Built> {
        match plan {
            LogicalPlan::CrossJoin { .. } => Err(Error::not_supported("cross joins")),
            LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } => {
                let conditions = residual.clone().map(Expr::conjuncts).unwrap_or_default();
                self.build_join(probe, build, probe_keys, build_keys, *kind, residual.as_ref(), &conditions)
            }
            LogicalPlan::Scan { table, table_schema, projection, chunks, statistics, .. } => {
                let schema = Schema::new(projection.iter().map(|i| table_schema.fields[*i].clone()).collect());
                let kept = chunks.as_ref().map(|c| KeptChunks {
                    chunks: c.clone(),
                    total: statistics.as_ref().map_or(c.len(), |s| s.chunks.len()),
                });
                Ok(Built::Open {
                    source: Source::Table { table: table.clone(), columns: projection.clone(), schema, kept },
                    ops: vec![],
                })
            }
            LogicalPlan::Filter { input, predicate } => {
                let (source, mut ops) = match &**input {
                    // An inner join's other conditions are this filter: a band join searches by them.
                    LogicalPlan::Join {
                        probe,
                        build,
                        probe_keys,
                        build_keys,
                        kind: JoinKind::Inner,
                        residual: None,
                    } => {
                        let conditions = predicate.clone().conjuncts();
                        let joined =
                            self.build_join(probe, build, probe_keys, build_keys, JoinKind::Inner, None, &conditions)?;
                        let Built::Open { source, ops } = joined else {
                            unreachable!("a join leaves its pipeline open")
                        };
                        (source, ops)
                    }
                    _ => self.open(input)?,
                };
                // The sample rows reaching this filter, drawn once for all its term sets.
                let sample = sample_rows(input);
                let selectivity = |terms: &[Expr]| sample_selectivity(sample.as_deref(), terms);
                let merged;
                let predicate = match self.merged_patterns {
                    true => {
                        merged = crate::merged_patterns::merge_pattern_disjunctions(predicate.clone(), self.like_dfa);
                        &merged
                    }
                    false => predicate,
                };
                let plan = FilterPlan::plan(predicate, row_schema(&source, &ops), self.filter_order, &selectivity);
                ops.push(PipelineOp::Filter(plan));
                self.refill_candidate(&mut ops, selectivity(&predicate.clone().conjuncts()));
                Ok(Built::Open { source, ops })
            }
            LogicalPlan::Project { input, exprs, .. } => self.build_project(input, exprs, plan.schema()),
            LogicalPlan::Aggregate { input, group_by, aggs, group_names } => {
                if let Some(a) = aggs.iter().find(|a| a.func.planned_by_binder()) {
                    return Err(Error::plan(format!("{} reached the planner (the binder plans it)", a.func.name())));
                }
                if let Some((_, id, schema, finish)) = self.aggregations.iter().find(|(p, ..)| p == plan) {
                    let source = Source::Intermediate { id: *id, schema: schema.clone() };
                    return Ok(Built::Open { source, ops: vec![finish.clone()] });
                }
                let (source, ops) = self.open(input)?;
                let lowered = lower_aggregates(group_by, group_names, aggs);
                let id = self.intermediate();
                let agg_schema = lowered.state_schema.clone();
                self.push_pipeline(
                    source,
                    ops,
                    Sink::Aggregate {
                        id,
                        keys: group_by.clone(),
                        states: lowered.states,
                        schema: agg_schema.clone(),
                        register_groups: self.register_groups,
                        lane_group: self.lane_group,
                    },
                );
                let finish = PipelineOp::Project { exprs: lowered.finalize, schema: plan.schema() };
                self.aggregations.push((plan.clone(), id, agg_schema.clone(), finish.clone()));
                Ok(Built::Open { source: Source::Intermediate { id, schema: agg_schema }, ops: vec![finish] })
            }
            LogicalPlan::Sort { input, keys } => self.build_sort(input, keys),
            LogicalPlan::Limit { input, skip, fetch } => self.build_limit(input, *skip, *fetch),
            LogicalPlan::Union { inputs, schema } => self.build_union(inputs, schema),
            LogicalPlan::Repeat { input, times } => self.build_repeat(input, times),
            LogicalPlan::Enumerate { input, partition } => self.build_enumerate(input, *partition),
            LogicalPlan::Window { input, windows } => self.build_window(input, windows),
            LogicalPlan::ConcatRuns { input, keys, value, position, separator } => {
                self.build_concat_runs(input, keys, *value, *position, separator, plan.schema())
            }
        }
    }

    /// A join on constant keys pairs every probe row with every build row (a cross join,
    /// or a one-row relation): refused where the pairs are estimated past the session's
    /// `max_cross_join_pairs` (the same estimate on both backends).
    fn check_cross_join(&self, probe: &LogicalPlan, build: &LogicalPlan, probe_keys: &[Expr]) -> Result<()> {
        if !probe_keys.iter().all(|k| matches!(k, Expr::Literal { .. })) {
            return Ok(());
        }
        let rows = |p: &LogicalPlan| crate::selectivity::rows_at_most(p).max(1.0);
        let pairs = rows(probe) * rows(build);
        if pairs > self.max_cross_join_pairs as f64 {
            return Err(Error::InvalidInput(format!(
                "a join without an equality condition would form about {:.0} row pairs ({:.0} x {:.0} estimated rows), more than max_cross_join_pairs ({}); add an equality between the tables, or SET max_cross_join_pairs higher",
                pairs,
                rows(probe),
                rows(build),
                self.max_cross_join_pairs
            )));
        }
        Ok(())
    }

    /// Whether intermediate `id` is read by a stage planned so far or is among `also`.
    fn read_elsewhere(&self, id: IntermediateId, also: &[IntermediateId]) -> bool {
        also.contains(&id) || self.stages.iter().any(|s| s.intermediate_inputs().contains(&id))
    }

    /// UNION ALL: each arm materializes its rows (unless they are an intermediate already),
    /// then one stage copies them into one intermediate that the next pipeline scans.
    fn build_union(&mut self, inputs: &[LogicalPlan], schema: &Schema) -> Result<Built> {
        let mut ids = vec![];
        for arm in inputs {
            let (source, ops) = self.open(arm)?;
            // An arm that is an intermediate as it stands (an aggregation's groups: the
            // partial aggregates of `union_pushdown`) is concatenated without a copy, the
            // Concat consuming it; unless something else reads it too (an aggregation
            // planned once for identical subtrees: `SELECT 1 UNION SELECT 2 UNION SELECT 1`).
            match source {
                Source::Intermediate { id, .. } if identity(&source, &ops) && !self.read_elsewhere(id, &ids) => {
                    // Identical subtrees planned later compute their own.
                    self.aggregations.retain(|(_, a, ..)| *a != id);
                    ids.push(id)
                }
                _ => ids.push(self.materialize(source, ops).0),
            }
        }
        let output = self.intermediate();
        self.stages.push(Stage::Concat { inputs: ids, output, schema: schema.clone() });
        Ok(Built::Open { source: Source::Intermediate { id: output, schema: schema.clone() }, ops: vec![] })
    }

    /// Materializes the input with the repeat count as a last column, then repeats rows.
    fn build_repeat(&mut self, input: &LogicalPlan, times: &Expr) -> Result<Built> {
        let (source, mut ops) = self.open(input)?;
        let in_schema = row_schema(&source, &ops).clone();
        let width = in_schema.len();
        let mut exprs: Vec<Expr> = (0..width).map(|i| column_expr(&in_schema, i)).collect();
        exprs.push(times.clone());
        let mut fields = in_schema.fields.clone();
        fields.push(Field::new("__times", times.ty(), times.nullable()));
        push_project(&mut ops, exprs, Schema::new(fields));
        let (id, _) = self.materialize(source, ops);
        let output = self.intermediate();
        let columns: Vec<usize> = (0..width).collect();
        self.stages.push(Stage::Repeat { input: id, output, times: width, columns, schema: in_schema.clone() });
        Ok(Built::Open { source: Source::Intermediate { id: output, schema: in_schema }, ops: vec![] })
    }

    /// The build side's pipeline ends in its hash table (a band join's: in its sorted
    /// band table); the probe side's pipeline goes on through the probe. `conditions`: the
    /// join's other conditions (over the probe row, then the build row), which a join
    /// without an equality may search by (`crate::band`).
    #[allow(clippy::too_many_arguments)]
    fn build_join(
        &mut self,
        probe: &LogicalPlan,
        build: &LogicalPlan,
        probe_keys: &[Expr],
        build_keys: &[Expr],
        kind: JoinKind,
        residual: Option<&Expr>,
        conditions: &[Expr],
    ) -> Result<Built> {
        let constant_keys = probe_keys.iter().all(|k| matches!(k, Expr::Literal { .. }));
        // (A one-row side, an uncorrelated scalar subquery, has nothing to search.)
        let searchable = constant_keys && self.band_joins && !build.yields_exactly_one_row();
        let band = match kind {
            JoinKind::Inner | JoinKind::Semi | JoinKind::Anti | JoinKind::Mark if searchable => {
                band_search(conditions, probe.schema().len(), &build.schema())
            }
            _ => None,
        };
        // A band join with both bounds visits only its bands' rows: no cross join to refuse.
        if !band.as_ref().is_some_and(|b| b.two_sided()) {
            self.check_cross_join(probe, build, probe_keys)?;
        }
        // The build side first: its own pipeline ends in the hash table.
        let (bsource, mut bops) = self.open(build)?;
        let build_schema = row_schema(&bsource, &bops).clone();
        let id = self.intermediate();
        match &band {
            Some(band) => {
                // Rows with a NULL bound match nothing; the rest sorted by the key column.
                let not_null: Vec<Expr> = band
                    .bounded_columns()
                    .into_iter()
                    .filter(|c| build_schema.fields[*c].nullable)
                    .map(|c| Expr::IsNull { expr: Box::new(column_expr(&build_schema, c)), negated: true })
                    .collect();
                if let Some(test) = not_null.into_iter().reduce(|a, b| Expr::Binary {
                    op: BinaryOp::And,
                    left: Box::new(a),
                    right: Box::new(b),
                    ty: DataType::Boolean,
                }) {
                    bops.push(PipelineOp::Filter(FilterPlan::written(&test)));
                }
                let (rows, _) = self.materialize(bsource, bops);
                let (sorted, dense) = (self.intermediate(), self.intermediate());
                let key = SortColumn { column: band.key, asc: true, nulls_first: false };
                let schema = build_schema.clone();
                self.stages.push(Stage::Sort {
                    input: rows,
                    output: sorted,
                    keys: vec![key],
                    schema,
                    limit: None,
                    segments: None,
                });
                let columns = (0..build_schema.len()).collect();
                let (skip, fetch, schema) = (0, None, build_schema.clone());
                self.stages.push(Stage::Slice {
                    input: sorted,
                    output: dense,
                    columns,
                    skip,
                    fetch,
                    position: false,
                    schema,
                });
                let (key, max, schema) = (band.key, band.max_column(), build_schema.clone());
                self.stages.push(Stage::BandTable { input: dense, output: id, key, max, schema });
            }
            None => self.push_pipeline(
                bsource,
                bops,
                Sink::HashBuild { id, keys: build_keys.to_vec(), schema: build_schema.clone() },
            ),
        }
        let (source, mut ops) = self.open(probe)?;
        let mut fields = row_schema(&source, &ops).fields.clone();
        match kind {
            JoinKind::Inner => fields.extend(build_schema.fields.iter().cloned()),
            // Unmatched rows carry NULLs in the build columns.
            JoinKind::Left => fields.extend(build_schema.fields.iter().map(|f| Field::new(f.name.clone(), f.ty, true))),
            JoinKind::Mark => fields.push(Field::new(crate::logical::MARK_COLUMN, DataType::Boolean, false)),
            JoinKind::Semi | JoinKind::Anti => {}
        }
        ops.push(PipelineOp::HashProbe {
            build: id,
            keys: probe_keys.to_vec(),
            build_schema,
            schema: Schema::new(fields),
            // A row of a two-sided band join has few candidates (its bands): each lane walks
            // its own, where push-down parallelism would run the warp once per lane.
            multi_match: if band.as_ref().is_some_and(|b| b.two_sided()) {
                MultiMatch::PerLane
            } else {
                self.multi_match
            },
            kind,
            residual: residual.cloned(),
            band: band.map(Box::new),
        });
        // The share of probe rows with a match: about the share of its base table the
        // build side keeps (a foreign key finds its row unless a filter removed it).
        let kept = estimate(build, Estimates::Measured).1;
        let activity = match kind {
            JoinKind::Inner | JoinKind::Semi => kept,
            // How many probe keys the build lacks is not known: say half.
            JoinKind::Anti => 0.5,
            JoinKind::Left | JoinKind::Mark => 1.0,
        };
        self.refill_candidate(&mut ops, activity);
        Ok(Built::Open { source, ops })
    }

    fn build_project(&mut self, input: &LogicalPlan, exprs: &[Expr], schema: Schema) -> Result<Built> {
        match self.build(input)? {
            Built::Open { source, mut ops } => {
                push_project(&mut ops, exprs.to_vec(), schema);
                Ok(Built::Open { source, ops })
            }
            // Above a sort a column selection keeps the order; computed expressions
            // run in a pipeline over the sliced rows (whose materialization keeps
            // the order within a block of 256 rows; SQL leaves it open without an
            // ORDER BY above).
            Built::Done { id, schema: s, columns, skip, fetch } => {
                let picks: Option<Vec<usize>> = exprs
                    .iter()
                    .map(|e| if let Expr::Column { index, .. } = e { Some(columns[*index]) } else { None })
                    .collect();
                match picks {
                    Some(sel) => Ok(Built::Done { id, schema: s, columns: sel, skip, fetch }),
                    None => {
                        let (source, mut ops) = self.slice(id, &s, columns, skip, fetch);
                        push_project(&mut ops, exprs.to_vec(), schema);
                        Ok(Built::Open { source, ops })
                    }
                }
            }
        }
    }

    /// Materializes the input (with computed sort keys as extra columns) and sorts it.
    fn build_sort(&mut self, input: &LogicalPlan, keys: &[SortKey]) -> Result<Built> {
        let (source, mut ops) = self.open(input)?;
        let in_schema = row_schema(&source, &ops).clone();
        let width = in_schema.len();
        // Sort keys become columns of the materialized rows.
        let mut extra = vec![];
        let mut sort_cols = vec![];
        for k in keys {
            let column = match &k.expr {
                Expr::Column { index, .. } => *index,
                e => {
                    extra.push(e.clone());
                    width + extra.len() - 1
                }
            };
            sort_cols.push(SortColumn { column, asc: k.asc, nulls_first: k.nulls_first });
        }
        if !extra.is_empty() {
            let mut exprs: Vec<Expr> = (0..width).map(|i| column_expr(&in_schema, i)).collect();
            let mut fields = in_schema.fields.clone();
            for (n, e) in extra.iter().enumerate() {
                fields.push(Field::new(format!("__sort{n}"), e.ty(), e.nullable()));
                exprs.push(e.clone());
            }
            ops.push(PipelineOp::Project { exprs, schema: Schema::new(fields) });
        }
        let (input_id, schema) = self.materialize(source, ops);
        let output = self.intermediate();
        self.stages.push(Stage::Sort {
            input: input_id,
            output,
            keys: sort_cols,
            schema: schema.clone(),
            limit: None,
            segments: None,
        });
        Ok(Built::Done { id: output, schema, columns: (0..width).collect(), skip: 0, fetch: None })
    }

    /// A window on the finished input (materialized first if still open).
    fn build_limit(&mut self, input: &LogicalPlan, skip: usize, fetch: Option<usize>) -> Result<Built> {
        let (id, schema, columns, s0, f0) = match self.build(input)? {
            Built::Open { source, ops } => {
                let (id, schema) = self.materialize(source, ops);
                let cols = (0..schema.len()).collect();
                (id, schema, cols, 0, None)
            }
            Built::Done { id, schema, columns, skip, fetch } => (id, schema, columns, skip, fetch),
        };
        // LIMIT of a LIMIT: offsets add, the tighter fetch wins.
        let remaining = f0.map(|f| f.saturating_sub(skip));
        let fetch = match (remaining, fetch) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // A sort right below only needs the first offset + count rows: a top-N.
        if let (Some(f), Some(Stage::Sort { output, limit, .. })) = (fetch, self.stages.last_mut()) {
            if *output == id && self.top_n {
                *limit = Some(s0 + skip + f);
            }
        }
        Ok(Built::Done { id, schema, columns, skip: s0 + skip, fetch })
    }
}

/// Adds a projection; one that only picks columns of a preceding projection is merged
/// into it (no second copy of the row in the kernel).
fn push_project(ops: &mut Vec<PipelineOp>, exprs: Vec<Expr>, schema: Schema) {
    if let Some(PipelineOp::Project { exprs: prev, .. }) = ops.last() {
        let picks: Option<Vec<Expr>> = exprs
            .iter()
            .map(|e| if let Expr::Column { index, .. } = e { Some(prev[*index].clone()) } else { None })
            .collect();
        if let Some(merged) = picks {
            ops.pop();
            ops.push(PipelineOp::Project { exprs: merged, schema });
            return;
        }
    }
    ops.push(PipelineOp::Project { exprs, schema });
}

struct Lowered {
    states: Vec<AggState>,
    state_schema: Schema,
    finalize: Vec<Expr>,
}

/// AVG = SUM / COUNT, and SUM/MIN/MAX are NULL when their COUNT is 0; states shared by
/// several aggregates (e.g. SUM(x) and AVG(x)) are computed once.
fn lower_aggregates(group_by: &[Expr], group_names: &[String], aggs: &[AggExpr]) -> Lowered {
    let mut states: Vec<AggState> = vec![];
    let nkeys = group_by.len();
    let mut add = |st: AggState| -> usize {
        if let Some(i) = states.iter().position(|s| *s == st) {
            return i;
        }
        states.push(st);
        states.len() - 1
    };
    struct Pending {
        agg: AggExpr,
        main: usize,
        count: Option<usize>,
    }
    let mut pending = vec![];
    for a in aggs {
        let arg_nullable = a.arg.as_ref().is_some_and(|e| e.nullable());
        // The COUNT state serves COUNT and AVG, and tells SUM/MIN/MAX when they are NULL;
        // with group keys and a never-NULL argument every group has rows, so it is skipped.
        let needs_count = matches!(a.func, AggFunc::Count | AggFunc::Avg) || arg_nullable || nkeys == 0;
        // COUNT of a never-NULL argument is COUNT(*): one shared state.
        let count_arg = a.arg.clone().filter(|e| e.nullable());
        let count = needs_count.then(|| add(AggState { func: StateFunc::Count, arg: count_arg, ty: DataType::Int64 }));
        let main = match a.func {
            AggFunc::Count => count.unwrap_or_default(),
            AggFunc::Sum | AggFunc::Avg => {
                let arg_ty = a.arg.as_ref().map(|e| e.ty()).unwrap_or(DataType::Int64);
                let ty =
                    if arg_ty == DataType::Float64 { DataType::Float64 } else { DataType::decimal(38, arg_ty.scale()) };
                add(AggState { func: StateFunc::Sum, arg: a.arg.clone(), ty })
            }
            // (Statistics never get here: see the check before `lower_aggregates`.)
            _ => {
                let func = if a.func == AggFunc::Min { StateFunc::Min } else { StateFunc::Max };
                add(AggState { func, arg: a.arg.clone(), ty: a.ty })
            }
        };
        pending.push(Pending { agg: a.clone(), main, count });
    }
    let mut fields: Vec<Field> =
        group_by.iter().zip(group_names).map(|(e, n)| Field::new(n.clone(), e.ty(), e.nullable())).collect();
    for s in &states {
        // A state holds its identity when its COUNT is 0; the finalize step turns that into NULL.
        fields.push(Field::new(s.to_string(), s.ty, false));
    }
    let state_schema = Schema::new(fields);
    let col = |i: usize| column_expr(&state_schema, nkeys + i);
    let mut finalize: Vec<Expr> = (0..nkeys).map(|i| column_expr(&state_schema, i)).collect();
    for p in pending {
        let value = match p.agg.func {
            AggFunc::Count => {
                finalize.push(col(p.main));
                continue;
            }
            AggFunc::Avg => Expr::Binary {
                op: BinaryOp::Div,
                left: Box::new(Expr::Cast { expr: Box::new(col(p.main)), ty: DataType::Float64 }),
                right: Box::new(Expr::Cast { expr: Box::new(col(p.count.unwrap_or(p.main))), ty: DataType::Float64 }),
                ty: DataType::Float64,
            },
            _ => {
                let c = col(p.main);
                if c.ty() == p.agg.ty {
                    c
                } else {
                    Expr::Cast { expr: Box::new(c), ty: p.agg.ty }
                }
            }
        };
        let value = match p.count {
            None => strip_nullable(value),
            Some(count) => {
                let is_empty = Expr::Binary {
                    op: BinaryOp::Eq,
                    left: Box::new(col(count)),
                    right: Box::new(Expr::literal(ScalarValue::Int64(0), DataType::Int64)),
                    ty: DataType::Boolean,
                };
                let ty = value.ty();
                Expr::Case {
                    branches: vec![(is_empty, Expr::literal(ScalarValue::Null, ty))],
                    else_expr: Some(Box::new(value)),
                    ty,
                }
            }
        };
        finalize.push(value);
    }
    Lowered { states, state_schema, finalize }
}

/// State columns are marked nullable in general; where every group has a value, say so.
fn strip_nullable(e: Expr) -> Expr {
    e.transform(&mut |e| match e {
        Expr::Column { index, name, ty, .. } => Expr::Column { index, name, ty, nullable: false },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter() -> PipelineOp {
        let e = Expr::Literal { value: ScalarValue::Boolean(true), ty: DataType::Boolean };
        PipelineOp::Filter(FilterPlan::written(&e))
    }

    fn mark(activity: f64) -> PipelineOp {
        PipelineOp::LaneRefill { threshold: LANE_REFILL_THRESHOLD, activity }
    }

    fn project() -> PipelineOp {
        PipelineOp::Project { exprs: vec![], schema: Schema::new(vec![]) }
    }

    fn sink(grouped: bool) -> Sink {
        let key = Expr::Literal { value: ScalarValue::Int64(1), ty: DataType::Int64 };
        Sink::Aggregate {
            id: 0,
            keys: if grouped { vec![key] } else { vec![] },
            states: vec![],
            schema: Schema::new(vec![]),
            register_groups: None,
            lane_group: true,
        }
    }

    /// The kept Lane Refill operators (position, activity) after placing `ops`' marks.
    fn placed(ops: Vec<PipelineOp>, grouped: bool) -> Vec<(usize, f64)> {
        let mut ops = ops;
        place_lane_refills(&mut ops, &sink(grouped));
        ops.iter()
            .enumerate()
            .filter_map(
                |(i, o)| if let PipelineOp::LaneRefill { activity, .. } = o { Some((i, *activity)) } else { None },
            )
            .collect()
    }

    #[test]
    fn lane_refill_placement() {
        // Selective enough and a filter follows: kept, with its activity.
        assert_eq!(placed(vec![filter(), mark(0.1), filter()], false), vec![(1, 0.1)]);
        // Activity accumulates across marks until it drops to the limit.
        assert_eq!(placed(vec![filter(), mark(0.6), filter(), mark(0.5), filter()], false), vec![(2, 0.3)]);
        // Not selective enough.
        assert!(placed(vec![filter(), mark(0.5), filter()], true).is_empty());
        // Nothing but a global aggregate follows: no work for full warps.
        assert!(placed(vec![filter(), mark(0.1), project()], false).is_empty());
        // A grouped aggregation's hash insert counts as work.
        assert_eq!(placed(vec![filter(), mark(0.1), project()], true), vec![(1, 0.1)]);
        // Two marks with only a projection between: the later one takes over.
        assert_eq!(placed(vec![filter(), mark(0.5), project(), mark(0.5), filter()], false), vec![(2, 0.25)]);
    }
}
