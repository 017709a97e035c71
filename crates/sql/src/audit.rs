//! Nothing the binder receives is silently ignored: every field of the sqlparser structs
//! it binds (queries, SELECT, FROM items, joins, ORDER BY, functions, INSERT, CREATE
//! TABLE / VIEW, WITH) is named here in a destructuring without `..`, and is either
//! bound elsewhere (said so beside it) or refused with `not supported: <what>` at its
//! place when it is set. A sqlparser upgrade that adds a field fails to compile here, and
//! `tests/ast_audit.rs` checks that these destructurings name every field sqlparser's
//! sources declare.

use crate::bind_expr::AtSpan;
use gpusql_common::{Error, Result};
use sqlparser::ast::{self, Spanned};
use sqlparser::tokenizer::Span;

/// Whether a field holds something other than its "not written" default.
pub trait Set {
    fn set(&self) -> bool;
}

impl Set for bool {
    fn set(&self) -> bool {
        *self
    }
}

impl<T> Set for Option<T> {
    fn set(&self) -> bool {
        self.is_some()
    }
}

impl<T> Set for Vec<T> {
    fn set(&self) -> bool {
        !self.is_empty()
    }
}

/// `not supported: <what>` at `at` for the first field in `fields` that is set.
fn refuse(fields: &[(bool, &str)], at: Span) -> Result<()> {
    match fields.iter().find(|(set, _)| *set) {
        Some((_, what)) => Err(Error::not_supported(*what).at_span(at)),
        None => Ok(()),
    }
}

/// A query's clauses other than its body (`bind_select::bind_query` binds WITH, the body,
/// ORDER BY and LIMIT / OFFSET).
pub fn query(q: &ast::Query) -> Result<()> {
    let ast::Query {
        with,
        body,
        order_by,
        limit_clause: _,
        fetch,
        locks,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = q;
    let at = body.span();
    refuse(
        &[
            (fetch.set(), "FETCH"),
            (locks.set(), "FOR UPDATE / FOR SHARE"),
            (for_clause.set(), "FOR XML / FOR JSON"),
            (settings.set(), "SETTINGS"),
            (format_clause.set(), "FORMAT"),
            (pipe_operators.set(), "pipe operators (|>)"),
        ],
        at,
    )?;
    if let Some(w) = with {
        let ast::With { with_token: _, recursive, cte_tables } = w;
        refuse(&[(*recursive, "WITH RECURSIVE")], at)?;
        for cte in cte_tables {
            let ast::Cte { alias, query: _, from, materialized, closing_paren_token: _ } = cte;
            table_alias(alias)?;
            refuse(&[(from.set(), "FROM in a CTE"), (materialized.set(), "MATERIALIZED CTEs")], alias.name.span)?;
        }
    }
    if let Some(ob) = order_by {
        let ast::OrderBy { kind, interpolate } = ob;
        refuse(&[(interpolate.set(), "INTERPOLATE")], at)?;
        if let ast::OrderByKind::Expressions(exprs) = kind {
            exprs.iter().try_for_each(order_by_expr)?;
        }
    }
    Ok(())
}

/// One ORDER BY item (`bind_order::bind_order_by` binds the expression and options).
pub fn order_by_expr(o: &ast::OrderByExpr) -> Result<()> {
    let ast::OrderByExpr { expr, options, with_fill } = o;
    let ast::OrderByOptions { sort: _, nulls_first: _ } = options;
    refuse(&[(with_fill.set(), "WITH FILL")], expr.span())
}

/// A SELECT's clauses that other dialects have. Bound by `bind_select`: `distinct`
/// (DISTINCT ON in `bind_distinct_on`), `projection`, `from`, `selection`, `group_by`, `having`,
/// `flavor` (FROM-first); `named_window`, `qualify` and `window_before_qualify` by
/// `bind_window.rs` with `bind_select`.
pub fn select(s: &ast::Select) -> Result<()> {
    let ast::Select {
        select_token,
        optimizer_hints,
        distinct: _,
        select_modifiers,
        top,
        top_before_distinct: _,
        projection: _,
        exclude,
        into,
        from,
        lateral_views,
        prewhere,
        selection: _,
        connect_by,
        group_by: _,
        cluster_by,
        distribute_by,
        sort_by,
        having: _,
        named_window: _,
        qualify: _,
        window_before_qualify: _,
        value_table_mode,
        flavor: _,
    } = s;
    let at = select_token.0.span;
    refuse(
        &[
            (optimizer_hints.set(), "optimizer hints"),
            (select_modifiers.set(), "SELECT modifiers (HIGH_PRIORITY, STRAIGHT_JOIN, …)"),
            (top.set(), "TOP"),
            (exclude.set(), "EXCLUDE after the select list (write * EXCLUDE (…))"),
            (into.set(), "SELECT … INTO"),
            (lateral_views.set(), "LATERAL VIEW"),
            (prewhere.set(), "PREWHERE"),
            (connect_by.set(), "CONNECT BY"),
            (cluster_by.set(), "CLUSTER BY"),
            (distribute_by.set(), "DISTRIBUTE BY"),
            (sort_by.set(), "SORT BY"),
            (value_table_mode.set(), "SELECT AS VALUE / AS STRUCT"),
        ],
        at,
    )?;
    for twj in from {
        let ast::TableWithJoins { relation, joins } = twj;
        table_factor(relation)?;
        for j in joins {
            let ast::Join { relation, global, join_operator: _ } = j;
            refuse(&[(*global, "GLOBAL joins")], relation.span())?;
            table_factor(relation)?;
        }
    }
    Ok(())
}

/// A FROM item: a table, file or table function (name, alias and arguments bound by
/// `bind_select::bind_table`), or a subquery; other kinds are refused there.
pub fn table_factor(t: &ast::TableFactor) -> Result<()> {
    let at = t.span();
    match t {
        ast::TableFactor::Table {
            name: _,
            alias,
            args,
            with_hints,
            version,
            with_ordinality,
            partitions,
            json_path,
            sample,
            index_hints,
        } => {
            if let Some(a) = alias {
                table_alias(a)?;
            }
            if let Some(table_args) = args {
                let ast::TableFunctionArgs { args: _, settings } = table_args;
                refuse(&[(settings.set(), "SETTINGS of a table function")], at)?;
            }
            refuse(
                &[
                    (with_hints.set(), "table hints (WITH (…))"),
                    (version.set(), "time travel (FOR SYSTEM_TIME / AT)"),
                    (*with_ordinality, "WITH ORDINALITY"),
                    (partitions.set(), "PARTITION (…)"),
                    (json_path.set(), "JSON paths in FROM"),
                    (sample.set(), "TABLESAMPLE / USING SAMPLE"),
                    (index_hints.set(), "index hints"),
                ],
                at,
            )
        }
        ast::TableFactor::Derived { lateral: _, subquery: _, alias, sample } => {
            if let Some(a) = alias {
                table_alias(a)?;
            }
            refuse(&[(sample.set(), "TABLESAMPLE / USING SAMPLE")], at)
        }
        _ => Ok(()),
    }
}

/// `AS t (a, b)`: names only (`bind_select` binds them).
fn table_alias(a: &ast::TableAlias) -> Result<()> {
    let ast::TableAlias { explicit: _, name, columns, at } = a;
    refuse(&[(at.set(), "AT in a table alias")], name.span)?;
    for c in columns {
        let ast::TableAliasColumnDef { name, data_type } = c;
        refuse(&[(data_type.set(), "types in a table alias's column list")], name.span)?;
    }
    Ok(())
}

/// A function call: the name and arguments are bound by `bind_expr` and `functions.rs`,
/// DISTINCT / ALL and FILTER of aggregates by `bind_expr::bind_aggregate`.
pub fn function(f: &ast::Function) -> Result<()> {
    let ast::Function { name, uses_odbc_syntax, parameters, args, within_group, filter, null_treatment, over } = f;
    let at = name.span();
    let aggregate = crate::bind_aggregate_call::is_aggregate_name(&name.to_string());
    refuse(&[(filter.is_some() && !aggregate, "FILTER of a function that is not an aggregate")], at)?;
    refuse(
        &[
            (*uses_odbc_syntax, "ODBC function syntax ({fn …})"),
            (!matches!(parameters, ast::FunctionArguments::None), "parametric functions (f(p)(x))"),
            (within_group.set() && !crate::bind_quantile::is_quantile_name(&name.to_string()), "WITHIN GROUP"),
            (null_treatment.set(), "IGNORE NULLS / RESPECT NULLS"),
            // (The select list's, QUALIFY's and ORDER BY's are cut out before binding:
            // `bind_window.rs`.)
            (over.set(), "window functions in this clause"),
        ],
        at,
    )?;
    if let ast::FunctionArguments::List(list) = args {
        let ast::FunctionArgumentList { duplicate_treatment, args: _, clauses } = list;
        refuse(
            &[(duplicate_treatment.is_some() && !aggregate, "DISTINCT / ALL in a function that is not an aggregate")],
            at,
        )?;
        // string_agg binds its ORDER BY and refuses the other clauses by name; the
        // aggregates that no order changes check theirs (`check_ignored_order`).
        let name = name.to_string();
        let order_ignored = crate::bind_aggregate_call::ignores_order(&name);
        let allowed = |c: &ast::FunctionArgumentClause| {
            crate::bind_string_agg::is_string_agg_name(&name)
                || (order_ignored && matches!(c, ast::FunctionArgumentClause::OrderBy(_)))
        };
        if let Some(c) = clauses.iter().find(|c| !allowed(c)) {
            return Err(Error::not_supported(format!("{c} in a function's arguments")).at_span(at));
        }
    }
    Ok(())
}

/// INSERT's clauses of other dialects (`ddl::bind_insert` binds the table, columns,
/// source and the conflict handling: `or`, `replace_into`, `on`).
pub fn insert(i: &ast::Insert) -> Result<()> {
    let ast::Insert {
        insert_token,
        optimizer_hints,
        or: _,
        ignore,
        into: _,
        table: _,
        table_alias,
        columns: _,
        overwrite,
        source: _,
        assignments,
        partitioned,
        after_columns,
        has_table_keyword,
        on: _,
        returning,
        output,
        replace_into: _,
        priority,
        insert_alias,
        settings,
        format_clause,
        multi_table_insert_type,
        multi_table_into_clauses,
        multi_table_when_clauses,
        multi_table_else_clause,
    } = i;
    refuse(
        &[
            (optimizer_hints.set(), "optimizer hints"),
            (*ignore, "INSERT IGNORE (write INSERT OR IGNORE)"),
            (table_alias.set(), "an alias of the INSERT's table"),
            (*overwrite, "INSERT OVERWRITE"),
            (assignments.set(), "INSERT … SET"),
            (partitioned.set(), "PARTITION in INSERT"),
            (after_columns.set(), "columns after PARTITION"),
            (*has_table_keyword, "INSERT INTO TABLE"),
            (returning.set(), "RETURNING"),
            (output.set(), "OUTPUT"),
            (priority.set(), "INSERT priorities"),
            (insert_alias.set(), "INSERT … AS alias"),
            (settings.set(), "SETTINGS"),
            (format_clause.set(), "FORMAT"),
            (multi_table_insert_type.set(), "multi-table INSERT"),
            (multi_table_into_clauses.set(), "multi-table INSERT"),
            (multi_table_when_clauses.set(), "multi-table INSERT"),
            (multi_table_else_clause.set(), "multi-table INSERT"),
        ],
        insert_token.0.span,
    )
}

/// CREATE TABLE's clauses of other dialects (`ddl::bind_create_table` binds OR REPLACE,
/// IF NOT EXISTS, the name, the columns, the constraints and AS query).
pub fn create_table(ct: &ast::CreateTable) -> Result<()> {
    let ast::CreateTable {
        or_replace: _,
        temporary,
        unlogged,
        external,
        dynamic,
        global,
        if_not_exists: _,
        transient,
        volatile,
        iceberg,
        snapshot,
        name,
        columns: _,
        constraints: _,
        hive_distribution,
        hive_formats,
        table_options,
        file_format,
        location,
        query: _,
        without_rowid,
        like,
        clone,
        version,
        comment,
        on_commit,
        on_cluster,
        primary_key,
        order_by,
        partition_by,
        cluster_by,
        clustered_by,
        inherits,
        partition_of,
        for_values,
        strict,
        copy_grants,
        enable_schema_evolution,
        change_tracking,
        data_retention_time_in_days,
        max_data_extension_time_in_days,
        default_ddl_collation,
        with_aggregation_policy,
        with_row_access_policy,
        with_storage_lifecycle_policy,
        with_tags,
        external_volume,
        with_connection,
        base_location,
        catalog,
        catalog_sync,
        storage_serialization_policy,
        target_lag,
        warehouse,
        refresh_mode,
        initialize,
        require_user,
        diststyle,
        distkey,
        sortkey,
        backup,
        multiset,
        fallback,
        with_data,
    } = ct;
    refuse(
        &[
            (*temporary, "TEMPORARY tables"),
            (*unlogged, "UNLOGGED tables"),
            (*external, "EXTERNAL tables"),
            (*dynamic, "DYNAMIC tables"),
            (global.set(), "GLOBAL / LOCAL tables"),
            (*transient, "TRANSIENT tables"),
            (*volatile, "VOLATILE tables"),
            (*iceberg, "ICEBERG tables"),
            (*snapshot, "SNAPSHOT tables"),
            (!matches!(hive_distribution, ast::HiveDistributionStyle::NONE), "PARTITIONED BY / SKEWED BY"),
            (hive_formats.set(), "ROW FORMAT / STORED AS"),
            (!matches!(table_options, ast::CreateTableOptions::None), "table options (WITH / ENGINE / …)"),
            (file_format.set(), "STORED AS"),
            (location.set(), "LOCATION"),
            (*without_rowid, "WITHOUT ROWID"),
            (like.set(), "CREATE TABLE … LIKE"),
            (clone.set(), "CREATE TABLE … CLONE"),
            (version.set(), "time travel"),
            (comment.set(), "COMMENT"),
            (on_commit.set(), "ON COMMIT"),
            (on_cluster.set(), "ON CLUSTER"),
            (primary_key.set(), "PRIMARY KEY as a table option (write it after the columns)"),
            (order_by.set(), "ORDER BY in CREATE TABLE"),
            (partition_by.set(), "PARTITION BY"),
            (cluster_by.set(), "CLUSTER BY"),
            (clustered_by.set(), "CLUSTERED BY"),
            (inherits.set(), "INHERITS"),
            (partition_of.set(), "PARTITION OF"),
            (for_values.set(), "FOR VALUES"),
            (*strict, "STRICT tables"),
            (*copy_grants, "COPY GRANTS"),
            (enable_schema_evolution.set(), "ENABLE_SCHEMA_EVOLUTION"),
            (change_tracking.set(), "CHANGE_TRACKING"),
            (data_retention_time_in_days.set(), "DATA_RETENTION_TIME_IN_DAYS"),
            (max_data_extension_time_in_days.set(), "MAX_DATA_EXTENSION_TIME_IN_DAYS"),
            (default_ddl_collation.set(), "DEFAULT_DDL_COLLATION"),
            (with_aggregation_policy.set(), "WITH AGGREGATION POLICY"),
            (with_row_access_policy.set(), "WITH ROW ACCESS POLICY"),
            (with_storage_lifecycle_policy.set(), "WITH STORAGE LIFECYCLE POLICY"),
            (with_tags.set(), "WITH TAG"),
            (external_volume.set(), "EXTERNAL_VOLUME"),
            (with_connection.set(), "WITH CONNECTION"),
            (base_location.set(), "BASE_LOCATION"),
            (catalog.set(), "CATALOG"),
            (catalog_sync.set(), "CATALOG_SYNC"),
            (storage_serialization_policy.set(), "STORAGE_SERIALIZATION_POLICY"),
            (target_lag.set(), "TARGET_LAG"),
            (warehouse.set(), "WAREHOUSE"),
            (refresh_mode.set(), "REFRESH_MODE"),
            (initialize.set(), "INITIALIZE"),
            (*require_user, "REQUIRE USER"),
            (diststyle.set(), "DISTSTYLE"),
            (distkey.set(), "DISTKEY"),
            (sortkey.set(), "SORTKEY"),
            (backup.set(), "BACKUP"),
            (multiset.set(), "MULTISET / SET tables"),
            (fallback.set(), "FALLBACK"),
            (with_data.set(), "WITH [NO] DATA"),
        ],
        name.span(),
    )
}

/// CREATE VIEW's clauses of other dialects (`ddl::bind_create_view` binds OR REPLACE,
/// MATERIALIZED (refused there), the name, the column names and the query).
pub fn create_view(v: &ast::CreateView) -> Result<()> {
    let ast::CreateView {
        or_alter,
        or_replace: _,
        materialized: _,
        secure,
        name,
        name_before_not_exists: _,
        columns,
        query: _,
        options,
        cluster_by,
        comment,
        with_no_schema_binding,
        if_not_exists,
        temporary,
        copy_grants,
        to,
        params,
    } = v;
    refuse(
        &[
            (*or_alter, "CREATE OR ALTER VIEW"),
            (*secure, "SECURE views"),
            (!matches!(options, ast::CreateTableOptions::None), "view options"),
            (cluster_by.set(), "CLUSTER BY"),
            (comment.set(), "COMMENT"),
            (*with_no_schema_binding, "WITH NO SCHEMA BINDING"),
            (*if_not_exists, "CREATE VIEW IF NOT EXISTS"),
            (*temporary, "TEMPORARY views"),
            (*copy_grants, "COPY GRANTS"),
            (to.set(), "TO in CREATE VIEW"),
            (params.set(), "view parameters (ALGORITHM, DEFINER, …)"),
        ],
        name.span(),
    )?;
    for c in columns {
        let ast::ViewColumnDef { name, data_type, options } = c;
        refuse(
            &[(data_type.set(), "types in a view's column list"), (options.set(), "column options of a view")],
            name.span,
        )?;
    }
    Ok(())
}
