//! The differential fuzzer's query generator: random, valid, typed SELECTs over a
//! benchmark schema (SQLsmith's approach: walk the schema, grow expressions of the type a
//! place needs, draw literals from the data so that filters keep some rows).
//!
//! Every query has a deterministic answer as a multiset: ORDER BY covers every output
//! column wherever a LIMIT or OFFSET keeps part of the rows, there is no integer or decimal
//! division by a value that may be zero (DOUBLE division is IEEE's: inf, NaN), no SUM or
//! AVG of DOUBLEs (their rounding depends on the order rows are added in), and casts of
//! DOUBLEs to integers are guarded to values in range.

use super::rng::Rng;

/// The SQL types the generator distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Int,
    Dec,
    Float,
    Str,
    Date,
    Bool,
}

/// A column of a table of the schema, with literals drawn from its data.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    pub name: String,
    pub ty: Ty,
    /// SQL literals of values the column holds.
    pub samples: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct TableInfo {
    pub name: String,
    pub columns: Vec<ColumnInfo>,
    pub rows: usize,
}

/// Tables and the equalities that join them (foreign keys, both directions).
#[derive(Debug, Clone, Default)]
pub struct SchemaInfo {
    pub tables: Vec<TableInfo>,
    /// (table, column, table, column): joins along foreign keys, from either side.
    pub edges: Vec<(String, String, String, String)>,
    /// Whether edge i goes from a key to the rows that reference it (each row may meet
    /// many: lineitem → supplier → lineitem multiplies rows by thousands).
    pub fans_out: Vec<bool>,
}

/// TPC-H's and SSB's foreign keys, as (table, column, referenced table, column).
pub const FOREIGN_KEYS: &[(&str, &str, &str, &str)] = &[
    ("nation", "n_regionkey", "region", "r_regionkey"),
    ("customer", "c_nationkey", "nation", "n_nationkey"),
    ("supplier", "s_nationkey", "nation", "n_nationkey"),
    ("orders", "o_custkey", "customer", "c_custkey"),
    ("lineitem", "l_orderkey", "orders", "o_orderkey"),
    ("lineitem", "l_partkey", "part", "p_partkey"),
    ("lineitem", "l_suppkey", "supplier", "s_suppkey"),
    ("partsupp", "ps_partkey", "part", "p_partkey"),
    ("partsupp", "ps_suppkey", "supplier", "s_suppkey"),
    ("lineitem", "l_partkey", "partsupp", "ps_partkey"),
    // SSB
    ("lineorder", "lo_custkey", "customer", "c_custkey"),
    ("lineorder", "lo_partkey", "part", "p_partkey"),
    ("lineorder", "lo_suppkey", "supplier", "s_suppkey"),
    ("lineorder", "lo_orderdate", "date", "d_datekey"),
    ("lineorder", "lo_commitdate", "date", "d_datekey"),
    // corners (`corners.rs`): keys of INTEGER, DOUBLE (-0.0 = 0.0, NaN = NaN) and text.
    ("cf", "k", "cd", "k"),
    ("cf", "x", "cd", "x"),
    ("cf", "s", "cd", "s"),
];

impl SchemaInfo {
    /// The foreign keys among `tables`, both ways.
    pub fn with_foreign_keys(tables: Vec<TableInfo>) -> SchemaInfo {
        let has = |t: &str, c: &str| tables.iter().any(|x| x.name == t && x.columns.iter().any(|y| y.name == c));
        let (mut edges, mut fans_out) = (vec![], vec![]);
        for &(a, ac, b, bc) in FOREIGN_KEYS {
            if has(a, ac) && has(b, bc) {
                edges.push((a.into(), ac.into(), b.into(), bc.into()));
                edges.push((b.into(), bc.into(), a.into(), ac.into()));
                // (lineitem → partsupp on the part alone meets 4 suppliers' rows.)
                let partial = a == "lineitem" && b == "partsupp";
                fans_out.extend([partial, true]);
            }
        }
        SchemaInfo { tables, edges, fans_out }
    }

    fn table(&self, name: &str) -> &TableInfo {
        self.tables.iter().find(|t| t.name == name).expect("table of the schema")
    }
}

/// A column visible in a query's scope: `alias.name`.
#[derive(Debug, Clone)]
struct Visible {
    sql: String,
    ty: Ty,
    samples: Vec<String>,
}

/// A FROM item in scope: its alias, table (for join edges; None for derived tables) and
/// columns.
#[derive(Debug, Clone)]
struct Item {
    alias: String,
    table: Option<String>,
    columns: Vec<Visible>,
}

#[derive(Debug, Clone, Default)]
struct Scope {
    items: Vec<Item>,
}

impl Scope {
    fn columns(&self) -> impl Iterator<Item = &Visible> {
        self.items.iter().flat_map(|i| i.columns.iter())
    }
    fn of_type(&self, ty: Ty) -> Vec<&Visible> {
        self.columns().filter(|c| c.ty == ty).collect()
    }
}

/// Draws queries for one schema.
pub struct Generator<'a> {
    schema: &'a SchemaInfo,
    pub rng: Rng,
    next_alias: usize,
    /// Subquery nesting of the query being drawn.
    depth: usize,
    /// Draw row-returning queries so they stay small on large data (aggregates or LIMIT).
    pub small_results: bool,
    /// Every query computes a window function or grouping sets at its top SELECT.
    pub windows: bool,
}

mod aggregates;
mod functions;
mod windows;

impl<'a> Generator<'a> {
    pub fn new(schema: &'a SchemaInfo, seed: u64) -> Generator<'a> {
        Generator { schema, rng: Rng::new(seed), next_alias: 0, depth: 0, small_results: false, windows: false }
    }

    /// One query.
    pub fn query(&mut self) -> String {
        self.next_alias = 0;
        self.depth = 0;
        if !self.windows && self.rng.chance(0.15) {
            self.set_operation(None)
        } else {
            self.select(None)
        }
    }

    /// Two or three SELECTs of the same column types under UNION [ALL], INTERSECT [ALL] or
    /// EXCEPT [ALL] (an arm now and then in parentheses); at the top, ORDER BY every
    /// column and a LIMIT now and then. `single`: one column of that type (IN).
    fn set_operation(&mut self, single: Option<Ty>) -> String {
        let types: Vec<Ty> = match single {
            Some(t) => vec![t],
            None => {
                let present: Vec<Ty> = [Ty::Int, Ty::Dec, Ty::Float, Ty::Str, Ty::Date]
                    .into_iter()
                    .filter(|t| self.schema.tables.iter().any(|tb| tb.columns.iter().any(|c| c.ty == *t)))
                    .collect();
                (0..1 + self.rng.below(3)).map(|_| self.rng.pick(&present).copied().unwrap_or(Ty::Int)).collect()
            }
        };
        let top = self.depth == 0;
        self.depth += 1;
        let mut sql = self.arm(&types);
        for _ in 0..1 + self.rng.chance(0.3) as usize {
            let ops = ["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"];
            let op = *self.rng.pick(&ops).unwrap_or(&"UNION");
            let arm = self.arm(&types);
            let arm = if self.rng.chance(0.2) { format!("({arm})") } else { arm };
            sql = format!("{sql} {op} {arm}");
        }
        self.depth -= 1;
        if top && (self.rng.chance(0.3) || self.small_results) {
            let keys: Vec<String> =
                (1..=types.len()).map(|i| format!("{i}{}", if self.rng.chance(0.3) { " DESC" } else { "" })).collect();
            sql.push_str(&format!(" ORDER BY {} LIMIT {}", keys.join(", "), 1 + self.rng.below(20)));
        }
        sql
    }

    /// One arm of a set operation: a SELECT of `types` (plain, DISTINCT, or aggregates
    /// grouped by a column).
    fn arm(&mut self, types: &[Ty]) -> String {
        let (from, scope) = self.join_clause();
        // (Aggregates only where every type has a column to aggregate.)
        let aggregate = self.rng.chance(0.25) && types.iter().all(|t| !scope.of_type(*t).is_empty());
        let mut outputs = vec![];
        for (i, ty) in types.iter().enumerate() {
            let e = if aggregate { self.aggregate(&scope, Some(*ty)) } else { self.expr(&scope, *ty, 2) };
            outputs.push(format!("{e} AS c{i}"));
        }
        let distinct = if !aggregate && self.rng.chance(0.2) { "DISTINCT " } else { "" };
        let mut sql = format!("SELECT {distinct}{} FROM {from}", outputs.join(", "));
        let conds: Vec<String> = (0..self.rng.below(3)).map(|_| self.predicate(&scope, 2, false)).collect();
        if !conds.is_empty() {
            sql.push_str(&format!(" WHERE {}", conds.join(" AND ")));
        }
        if aggregate && self.rng.chance(0.6) {
            let ty = self.any_type(&scope);
            if let Some(c) = self.column(&scope, ty) {
                sql.push_str(&format!(" GROUP BY {}", c.sql));
            }
        }
        sql
    }

    fn alias(&mut self) -> String {
        self.next_alias += 1;
        format!("t{}", self.next_alias)
    }

    /// A SELECT; `single` asks for one output column of that type (IN / scalar subqueries).
    fn select(&mut self, single: Option<(Ty, bool)>) -> String {
        self.depth += 1;
        let (from, scope) = self.join_clause();
        let mut sql = String::from("SELECT ");
        let mut conds = vec![];
        for _ in 0..self.rng.below(3) {
            conds.push(self.predicate(&scope, 2, true));
        }
        let aggregate = match single {
            Some((_, scalar)) => scalar,
            None => self.rng.chance(0.45),
        };
        let mut outputs: Vec<String> = vec![];
        let mut group_by: Vec<String> = vec![];
        let mut having = None;
        let mut distinct = false;
        if aggregate {
            let n_groups = if single.is_some() { 0 } else { self.rng.below(3) };
            for _ in 0..n_groups {
                // (A column or an expression over one: a bare integer would be a position.)
                let ty = self.any_type(&scope);
                match self.column(&scope, ty) {
                    Some(c) if self.rng.chance(0.7) => group_by.push(c.sql),
                    Some(_) => group_by.push(self.expr(&scope, ty, 1)),
                    None => {}
                }
            }
            outputs.extend(group_by.iter().cloned());
            // GROUPING () of the keys now and then (where grouping sets make it vary).
            if !group_by.is_empty() && self.rng.chance(0.1) {
                outputs.push(format!("grouping({})", group_by.join(", ")));
            }
            let n_aggs = if single.is_some() { 1 } else { 1 + self.rng.below(3) };
            for _ in 0..n_aggs {
                let want = single.map(|s| s.0);
                outputs.push(self.aggregate(&scope, want));
            }
            if !group_by.is_empty() && self.rng.chance(0.25) {
                let a = self.aggregate(&scope, Some(Ty::Int));
                let k = self.rng.below(5);
                having = Some(format!("{a} > {k}"));
            }
        } else {
            let n = if single.is_some() { 1 } else { 1 + self.rng.below(4) };
            for _ in 0..n {
                let ty = match single {
                    Some((t, _)) => t,
                    None => self.any_type(&scope),
                };
                outputs.push(self.expr(&scope, ty, 2));
            }
            distinct = self.rng.chance(0.2);
        }
        // With `windows`, the top SELECT has grouping sets (half of those with keys) or windows.
        let focus = self.windows && self.depth == 1 && single.is_none();
        let force_sets = focus && !group_by.is_empty() && self.rng.chance(0.5);
        // Window functions now and then (over the groups where the SELECT aggregates).
        if single.is_none() && ((focus && !force_sets) || self.rng.chance(0.2)) {
            for _ in 0..1 + self.rng.below(2) {
                let groups = aggregate.then_some(group_by.as_slice());
                outputs.push(self.window(&scope, groups));
            }
        }
        if distinct {
            sql.push_str("DISTINCT ");
        }
        let names: Vec<String> = outputs.iter().enumerate().map(|(i, e)| format!("{e} AS c{i}")).collect();
        sql.push_str(&names.join(", "));
        sql.push_str(" FROM ");
        sql.push_str(&from);
        if !conds.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conds.join(" AND "));
        }
        if !group_by.is_empty() {
            sql.push_str(" GROUP BY ");
            sql.push_str(&self.grouping_sets(&group_by, force_sets));
        }
        if let Some(h) = having {
            sql.push_str(" HAVING ");
            sql.push_str(&h);
        }
        // ORDER BY every output column, so that LIMIT keeps a determined multiset.
        let limited = single.is_none()
            && self.depth == 1
            && (self.rng.chance(0.3) || (self.small_results && !(aggregate && group_by.is_empty())));
        if limited || (single.is_none() && self.rng.chance(0.15)) {
            let keys: Vec<String> = (1..=outputs.len())
                .map(|i| format!("{i}{}", if self.rng.chance(0.3) { " DESC" } else { "" }))
                .collect();
            sql.push_str(" ORDER BY ");
            sql.push_str(&keys.join(", "));
            if limited {
                sql.push_str(&format!(" LIMIT {}", 1 + self.rng.below(20)));
                if self.rng.chance(0.2) {
                    sql.push_str(&format!(" OFFSET {}", self.rng.below(5)));
                }
            }
        }
        self.depth -= 1;
        sql
    }

    /// GROUP BY's list: the keys as written, or now and then ROLLUP / CUBE / GROUPING SETS
    /// of them (each set's rows carry NULL in the keys outside it); always those with `force`.
    fn grouping_sets(&mut self, keys: &[String], force: bool) -> String {
        let list = keys.join(", ");
        if !force && !self.rng.chance(0.15) {
            return list;
        }
        match self.rng.below(if keys.len() > 1 { 4 } else { 3 }) {
            0 => format!("ROLLUP ({list})"),
            1 => format!("CUBE ({list})"),
            2 => format!("GROUPING SETS (({list}), ({}), ())", keys[0]),
            _ => format!("{}, ROLLUP ({})", keys[0], keys[1..].join(", ")),
        }
    }

    /// FROM with 1-4 items joined along foreign keys (inner, left, or listed with the
    /// equality in WHERE, which the optimizer must turn into a join).
    fn join_clause(&mut self) -> (String, Scope) {
        let mut scope = Scope::default();
        let first = self.join_item();
        let mut sql = first.0;
        scope.items.push(first.1);
        let joins = if self.depth > 1 { self.rng.below(2) } else { self.rng.below(4) };
        // A join that fans out only first (customer → orders), so results stay near the
        // size of the tables (lineitem → supplier → lineitem would be 600x lineitem).
        for _ in 0..joins {
            // An edge from a table already in scope.
            let mut candidates = vec![];
            for item in &scope.items {
                candidates
                    .extend(self.edges_from(item).into_iter().filter(|(_, _, fans)| !*fans || scope.items.len() == 1));
            }
            // Now and then a band join instead (no equality: a column bounded by the new
            // table's), once per FROM and between small tables only: its pairs grow as the
            // product of the sides.
            if scope.items.len() == 1 && self.rng.chance(0.12) {
                if let Some((on, item, table)) = self.band_join(&scope) {
                    let kind = *self.rng.pick(&["JOIN", "LEFT JOIN", "INNER JOIN"]).unwrap_or(&"JOIN");
                    sql.push_str(&format!(" {kind} {table} AS {} ON {on}", item.alias));
                    scope.items.push(item);
                    continue;
                }
            }
            let Some((left_alias, (_, lc, rt, rc), _)) = self.rng.pick(&candidates).cloned() else { break };
            let alias = self.alias();
            let item = self.table_item(&rt, &alias);
            let kind = match self.rng.below(14) {
                0..=4 => "JOIN",
                5..=8 => "LEFT JOIN",
                9 => "INNER JOIN",
                10 | 11 => "RIGHT JOIN",
                _ => "FULL JOIN",
            };
            // USING where the key has one name and the left side one table (else ambiguous).
            if lc == rc && scope.items.len() == 1 && self.rng.chance(0.25) {
                sql.push_str(&format!(" {kind} {rt} AS {alias} USING ({lc})"));
                scope.items.push(item);
                continue;
            }
            let mut on = format!("{left_alias}.{lc} = {alias}.{rc}");
            if self.rng.chance(0.15) {
                let extra = self.compare(&Scope { items: vec![item.clone()] }, 1);
                on.push_str(&format!(" AND {extra}"));
            }
            // A condition over both sides (no key: it decides which pairs match).
            if self.rng.chance(0.1) {
                let mut both = scope.clone();
                both.items.push(item.clone());
                let extra = self.compare(&both, 1);
                on.push_str(&format!(" AND {extra}"));
            }
            sql.push_str(&format!(" {kind} {rt} AS {alias} ON {on}"));
            scope.items.push(item);
        }
        (sql, scope)
    }

    /// A band join's ON and its new table: an expression of `scope` between two columns of
    /// the table, or past one; None where the tables are large or share no ordered type.
    fn band_join(&mut self, scope: &Scope) -> Option<(String, Item, String)> {
        const MAX_PAIRS: usize = 1_000_000;
        let left_rows: usize =
            scope.items.iter().filter_map(|i| i.table.as_ref()).map(|t| self.schema.table(t).rows).product();
        let small: Vec<String> = self
            .schema
            .tables
            .iter()
            .filter(|t| t.rows.max(1).saturating_mul(left_rows.max(1)) <= MAX_PAIRS)
            .map(|t| t.name.clone())
            .collect();
        let table = self.rng.pick(&small)?.clone();
        let alias = self.alias();
        let item = self.table_item(&table, &alias);
        let right = Scope { items: vec![item.clone()] };
        let types: Vec<Ty> = [Ty::Int, Ty::Dec, Ty::Date, Ty::Float]
            .into_iter()
            .filter(|t| !scope.of_type(*t).is_empty() && !right.of_type(*t).is_empty())
            .collect();
        let ty = *self.rng.pick(&types)?;
        let x = self.expr(scope, ty, 1);
        let (lo, hi) = (self.column(&right, ty)?.sql, self.column(&right, ty)?.sql);
        let on = match self.rng.below(4) {
            0 => format!("{x} BETWEEN {lo} AND {hi}"),
            1 => format!("{x} >= {lo} AND {x} < {hi}"),
            2 => format!("{lo} < {x} AND {hi} >= {x}"),
            _ => format!("{x} {} {lo}", self.rng.pick(&["<", "<=", ">", ">="]).unwrap_or(&"<")),
        };
        Some((on, item, table))
    }

    /// A table, or (sometimes) a derived table over one.
    fn join_item(&mut self) -> (String, Item) {
        let t = self.rng.pick(&self.schema.tables).expect("a table").name.clone();
        let alias = self.alias();
        if self.depth == 1 && self.rng.chance(0.12) {
            // (SELECT some columns FROM t WHERE …) AS alias
            let inner_alias = self.alias();
            let inner = self.table_item(&t, &inner_alias);
            let scope = Scope { items: vec![inner.clone()] };
            let cond = self.predicate(&scope, 1, false);
            let mut cols = inner.columns.clone();
            self.rng.shuffle(&mut cols);
            cols.truncate(1 + self.rng.below(cols.len().min(5)));
            let list: Vec<String> = cols.iter().map(|c| c.sql.clone()).collect();
            let visible = cols
                .iter()
                .map(|c| Visible {
                    sql: format!("{alias}.{}", c.sql.split('.').nth(1).unwrap_or(&c.sql)),
                    ty: c.ty,
                    samples: c.samples.clone(),
                })
                .collect();
            let sql = format!("(SELECT {} FROM {t} AS {inner_alias} WHERE {cond}) AS {alias}", list.join(", "));
            // Keeps the table name so joins along its keys still apply where the key survived.
            return (sql, Item { alias, table: Some(t), columns: visible });
        }
        let item = self.table_item(&t, &alias);
        (format!("{t} AS {alias}"), item)
    }

    /// The join edges from `item` whose column it shows (a derived table may not).
    fn edges_from(&self, item: &Item) -> Vec<(String, (String, String, String, String), bool)> {
        let Some(t) = &item.table else { return vec![] };
        let shows = |c: &str| item.columns.iter().any(|v| v.sql == format!("{}.{c}", item.alias));
        let edges = self.schema.edges.iter().zip(&self.schema.fans_out);
        edges.filter(|(e, _)| &e.0 == t && shows(&e.1)).map(|(e, f)| (item.alias.clone(), e.clone(), *f)).collect()
    }

    fn table_item(&self, table: &str, alias: &str) -> Item {
        let t = self.schema.table(table);
        let columns = t
            .columns
            .iter()
            .map(|c| Visible { sql: format!("{alias}.{}", c.name), ty: c.ty, samples: c.samples.clone() })
            .collect();
        Item { alias: alias.into(), table: Some(table.into()), columns }
    }

    fn any_type(&mut self, scope: &Scope) -> Ty {
        let present: Vec<Ty> = [Ty::Int, Ty::Dec, Ty::Str, Ty::Date, Ty::Float]
            .into_iter()
            .filter(|t| !scope.of_type(*t).is_empty())
            .collect();
        self.rng.pick(&present).copied().unwrap_or(Ty::Int)
    }

    fn column(&mut self, scope: &Scope, ty: Ty) -> Option<Visible> {
        let cols = scope.of_type(ty);
        self.rng.pick(&cols).map(|c| (*c).clone())
    }

    fn literal(&mut self, scope: &Scope, ty: Ty) -> String {
        if ty == Ty::Float && self.rng.chance(0.25) {
            return self.rng.pick(super::corners::DOUBLES).map_or("0.0::DOUBLE", |v| v).to_string();
        }
        if let Some(c) = self.column(scope, ty) {
            if let Some(s) = self.rng.pick(&c.samples) {
                return s.clone();
            }
        }
        match ty {
            Ty::Int => self.rng.below(100).to_string(),
            Ty::Dec => format!("{}.{:02}", self.rng.below(1000), self.rng.below(100)),
            Ty::Float => format!("{}.5", self.rng.below(100)),
            Ty::Str => "'x'".into(),
            Ty::Date => format!(
                "DATE '{}-{:02}-{:02}'",
                1992 + self.rng.below(7),
                1 + self.rng.below(12),
                1 + self.rng.below(28)
            ),
            Ty::Bool => "TRUE".into(),
        }
    }

    /// An expression of type `ty` over `scope`.
    fn expr(&mut self, scope: &Scope, ty: Ty, budget: usize) -> String {
        let leaf = |g: &mut Generator, scope: &Scope| match g.column(scope, ty) {
            Some(c) if !g.rng.chance(0.15) => c.sql,
            _ => g.literal(scope, ty),
        };
        if budget == 0 || self.rng.chance(0.5) {
            return leaf(self, scope);
        }
        let b = budget - 1;
        match (ty, self.rng.below(9)) {
            (Ty::Int, 0) => format!("({} + {})", self.expr(scope, Ty::Int, b), self.expr(scope, Ty::Int, b)),
            (Ty::Int, 1) => format!("({} - {})", self.expr(scope, Ty::Int, b), self.rng.below(10)),
            (Ty::Int, 2) if !scope.of_type(Ty::Date).is_empty() => {
                let f = *self
                    .rng
                    .pick(&[
                        "YEAR", "MONTH", "DAY", "QUARTER", "DOW", "WEEK", "ISODOW", "ISOYEAR", "yearweek", "epoch_ms",
                    ])
                    .unwrap_or(&"YEAR");
                let d = self.expr(scope, Ty::Date, b);
                match f {
                    "yearweek" | "epoch_ms" => format!("{f}({d})"),
                    _ => format!("EXTRACT({f} FROM {d})"),
                }
            }
            (Ty::Int, 3) if !scope.of_type(Ty::Str).is_empty() => match self.rng.below(4) {
                0 => format!("strpos({}, {})", self.expr(scope, Ty::Str, b), self.literal(scope, Ty::Str)),
                1 => format!("ascii({})", self.expr(scope, Ty::Str, b)),
                _ => format!("LENGTH({})", self.expr(scope, Ty::Str, b)),
            },
            (Ty::Int, 6) if !scope.of_type(Ty::Float).is_empty() => {
                // Half to even, guarded to the type's range (NaN and inf are not).
                let t = *self.rng.pick(&["INTEGER", "BIGINT"]).unwrap_or(&"BIGINT");
                let x = self.expr(scope, Ty::Float, b);
                format!("CAST(CASE WHEN abs({x}) < 1e9 THEN {x} END AS {t})")
            }
            (Ty::Int, 7) if self.rng.chance(0.2) => {
                let f = *self.rng.pick(&["day", "hour", "minute", "second", "month", "year"]).unwrap_or(&"day");
                format!("EXTRACT({f} FROM {})", self.interval(scope, b))
            }
            (Ty::Int, 7) => match self.rng.below(4) {
                3 if !scope.of_type(Ty::Date).is_empty() => {
                    let unit = *self.rng.pick(&["year", "quarter", "month", "week", "day"]).unwrap_or(&"day");
                    // date_diff counts boundaries, date_sub complete units.
                    let f = *self.rng.pick(&["date_diff", "date_sub"]).unwrap_or(&"date_diff");
                    format!("{f}('{unit}', {}, {})", self.expr(scope, Ty::Date, b), self.expr(scope, Ty::Date, b))
                }
                0 if !scope.of_type(Ty::Float).is_empty() => format!("sign({})", self.expr(scope, Ty::Float, b)),
                // (Divisors are non-zero constants: a column's zero errs where the order of
                // evaluation reaches it, which SQL leaves open.)
                _ => {
                    let d = *self.rng.pick(&[-3i64, -2, -1, 1, 2, 3, 7]).unwrap_or(&2);
                    format!("({} // {d})", self.expr(scope, Ty::Int, b))
                }
            },
            (Ty::Dec, 8) => {
                let f = *self.rng.pick(&["floor", "ceil", "trunc"]).unwrap_or(&"floor");
                format!("{f}({})", self.expr(scope, Ty::Dec, b))
            }
            (Ty::Dec, 0) => format!("({} + {})", self.expr(scope, Ty::Dec, b), self.expr(scope, Ty::Dec, b)),
            (Ty::Dec, 1) => format!("({} * {})", self.expr(scope, Ty::Dec, b), self.rng.below(5)),
            (Ty::Dec, 2) => format!("({} - {})", self.expr(scope, Ty::Dec, b), self.expr(scope, Ty::Dec, b)),
            (Ty::Dec, 3) => format!("ABS({})", self.expr(scope, Ty::Dec, b)),
            (Ty::Dec, 6) => format!("ROUND({}, {})", self.expr(scope, Ty::Dec, b), self.rng.below(3)),
            (Ty::Dec, 7) if !scope.of_type(Ty::Float).is_empty() => {
                let x = self.expr(scope, Ty::Float, b);
                format!("CAST(CASE WHEN abs({x}) < 1e9 THEN {x} END AS DECIMAL(18,3))")
            }
            (Ty::Float, 0) => format!("({} + {})", self.expr(scope, Ty::Float, b), self.expr(scope, Ty::Float, b)),
            (Ty::Float, 1) => {
                let op = *self.rng.pick(&["-", "*", "/"]).unwrap_or(&"-");
                format!("({} {op} {})", self.expr(scope, Ty::Float, b), self.expr(scope, Ty::Float, b))
            }
            (Ty::Float, 2) => {
                let digits = self.rng.below(7) as i64 - 2;
                format!("ROUND({}, {digits})", self.expr(scope, Ty::Float, b))
            }
            (Ty::Float, 3) => match self.rng.below(3) {
                0 => format!("ABS({})", self.expr(scope, Ty::Float, b)),
                // (A space: `--` of a negative literal would start a comment.)
                1 => format!("(- {})", self.expr(scope, Ty::Float, b)),
                _ => format!("ROUND({})", self.expr(scope, Ty::Float, b)),
            },
            // The math functions both backends compute exactly (IEEE's sqrt, one rounded
            // product); ln, exp, sin, … differ from the C library by CUDA's documented ulps,
            // which floor() or a comparison could magnify, so .slt files test those.
            (Ty::Float, 7 | 8) => {
                let f = *self.rng.pick(&["sqrt", "floor", "ceil", "trunc", "degrees", "radians"]).unwrap_or(&"sqrt");
                format!("{f}({})", self.expr(scope, Ty::Float, b))
            }
            (Ty::Float, 6) => {
                let from = if !scope.of_type(Ty::Dec).is_empty() && self.rng.chance(0.5) { Ty::Dec } else { Ty::Int };
                format!("CAST({} AS DOUBLE)", self.expr(scope, from, b))
            }
            (Ty::Str, 0) => {
                let from = 1 + self.rng.below(4);
                let len = 1 + self.rng.below(8);
                format!("SUBSTRING({} FROM {from} FOR {len})", self.expr(scope, Ty::Str, b))
            }
            (Ty::Str, 1) if self.rng.chance(0.3) => format!("CAST({} AS VARCHAR)", self.interval(scope, b)),
            (Ty::Str, 1..=3 | 6..=8) => self.string_function(scope, b),
            (Ty::Date, 1) if self.rng.chance(0.3) => {
                format!(
                    "CAST(CAST({} AS TIMESTAMP) + {} AS DATE)",
                    self.expr(scope, Ty::Date, b),
                    self.interval(scope, b)
                )
            }
            (Ty::Date, 0 | 1) => {
                let unit = *self.rng.pick(&["DAY", "MONTH", "YEAR"]).unwrap_or(&"DAY");
                let op = if self.rng.chance(0.5) { "+" } else { "-" };
                format!("({} {op} INTERVAL '{}' {unit})", self.expr(scope, Ty::Date, b), 1 + self.rng.below(40))
            }
            (_, 4) => format!(
                "CASE WHEN {} THEN {} ELSE {} END",
                self.predicate(scope, b, false),
                self.expr(scope, ty, b),
                self.expr(scope, ty, b)
            ),
            (_, 5) => format!("COALESCE({}, {})", self.expr(scope, ty, b), self.literal(scope, ty)),
            (Ty::Int | Ty::Date, 8) => self.text_cast(scope, ty, b),
            _ => leaf(self, scope),
        }
    }

    /// A comparison of two values of one type.
    fn compare(&mut self, scope: &Scope, budget: usize) -> String {
        let ty = self.any_type(scope);
        let op = *self.rng.pick(&["=", "<>", "<", "<=", ">", ">="]).unwrap_or(&"=");
        let left = self.expr(scope, ty, budget);
        let right = if self.rng.chance(0.7) { self.literal(scope, ty) } else { self.expr(scope, ty, budget) };
        format!("{left} {op} {right}")
    }

    /// A condition over `scope`; `subqueries`: IN / EXISTS / scalar subqueries may appear.
    fn predicate(&mut self, scope: &Scope, budget: usize, subqueries: bool) -> String {
        let pick = self.rng.below(if subqueries && self.depth < 3 { 14 } else { 10 });
        let b = budget.saturating_sub(1);
        match pick {
            2 if self.rng.chance(0.15) => {
                let op = *self.rng.pick(&["=", "<>", "<", "<=", ">", ">="]).unwrap_or(&"=");
                format!("{} {op} {}", self.interval(scope, b), self.interval(scope, b))
            }
            0..=2 => self.compare(scope, b),
            3 => {
                let ty = self.any_type(scope);
                let (lo, hi) = (self.literal(scope, ty), self.literal(scope, ty));
                format!("{} BETWEEN {lo} AND {hi}", self.expr(scope, ty, b))
            }
            4 => {
                let ty = self.any_type(scope);
                let items: Vec<String> = (0..1 + self.rng.below(5)).map(|_| self.literal(scope, ty)).collect();
                let not = if self.rng.chance(0.3) { "NOT " } else { "" };
                format!("{} {not}IN ({})", self.expr(scope, ty, b), items.join(", "))
            }
            5 if !scope.of_type(Ty::Str).is_empty() => {
                let c = self.column(scope, Ty::Str).expect("a string column");
                let sample = self.rng.pick(&c.samples).cloned().unwrap_or_else(|| "'a'".into());
                let text: String = sample.trim_matches('\'').replace("''", "'");
                let chars: Vec<char> = text.chars().filter(|ch| *ch != '%' && *ch != '_' && *ch != '\'').collect();
                let (a, len) = (self.rng.below(chars.len().max(1)), 1 + self.rng.below(4));
                let mut piece: Vec<char> = chars.iter().skip(a).take(len).copied().collect();
                // `_` is one character (of any length in bytes).
                if !piece.is_empty() && self.rng.chance(0.4) {
                    let at = self.rng.below(piece.len());
                    piece[at] = '_';
                }
                if self.rng.chance(0.3) {
                    return self.regex_predicate(&c.sql, &chars);
                }
                let piece: String = piece.into_iter().collect();
                let pattern = match self.rng.below(7) {
                    0 => format!("{piece}%"),
                    1 => format!("%{piece}"),
                    2 => format!("%{piece}%"),
                    3 => format!("%{piece}%_"),
                    4 => format!("_{piece}"),
                    5 => piece,
                    _ => "_".repeat(1 + self.rng.below(4)),
                };
                let not = if self.rng.chance(0.25) { "NOT " } else { "" };
                let like = if self.rng.chance(0.25) { "ILIKE" } else { "LIKE" };
                format!("{} {not}{like} '{pattern}'", c.sql)
            }
            6 if !scope.of_type(Ty::Str).is_empty() && self.rng.chance(0.3) => {
                let f = *self.rng.pick(&["starts_with", "ends_with", "contains"]).unwrap_or(&"contains");
                format!("{f}({}, {})", self.expr(scope, Ty::Str, b), self.literal(scope, Ty::Str))
            }
            6 if !scope.of_type(Ty::Float).is_empty() && self.rng.chance(0.2) => {
                let f = *self.rng.pick(&["isnan", "isinf", "isfinite"]).unwrap_or(&"isnan");
                format!("{f}({})", self.expr(scope, Ty::Float, b))
            }
            6 => {
                let ty = self.any_type(scope);
                let not = if self.rng.chance(0.5) { "NOT " } else { "" };
                format!("{} IS {not}NULL", self.expr(scope, ty, b))
            }
            7 if budget > 0 => format!("({} OR {})", self.predicate(scope, b, false), self.predicate(scope, b, false)),
            8 if budget > 0 => format!("NOT ({})", self.predicate(scope, b, false)),
            9 if budget > 0 => format!("({} AND {})", self.predicate(scope, b, false), self.predicate(scope, b, false)),
            10 => self.in_subquery(scope),
            11 => self.exists(scope),
            12 | 13 => self.scalar_subquery_compare(scope),
            _ => self.compare(scope, b),
        }
    }

    /// A regular-expression test of string column `column` (`~`, `!~`, `~*`, regexp_matches
    /// with options, regexp_full_match, SIMILAR TO), its pattern built around characters of
    /// a sample value (`chars`).
    fn regex_predicate(&mut self, column: &str, chars: &[char]) -> String {
        let a = self.rng.below(chars.len().max(1));
        let len = 1 + self.rng.below(3);
        let piece: String = chars
            .iter()
            .skip(a)
            .take(len)
            .map(|ch| if ch.is_ascii_punctuation() { format!("\\{ch}") } else { ch.to_string() })
            .collect();
        let class: String = chars.iter().skip(a).take(len).filter(|ch| ch.is_alphanumeric()).collect();
        let class = if class.is_empty() { "a-z".to_string() } else { class };
        let pattern = match self.rng.below(12) {
            0 => format!("^{piece}"),
            1 => format!("{piece}$"),
            2 => format!("{piece}.*{piece}"),
            3 => format!("[{class}]+"),
            4 => format!("^.{{1,{len}}}$"),
            5 => format!("{piece}|^$"),
            6 => "\\d".to_string(),
            7 => "\\w\\s".to_string(),
            8 => format!("(?i){piece}"),
            9 => format!("\\b{piece}"),
            10 => format!("[^{class}]"),
            _ => piece,
        };
        match self.rng.below(7) {
            0 => format!("{column} ~ '{pattern}'"),
            1 => format!("{column} !~ '{pattern}'"),
            2 => format!("{column} ~* '{pattern}'"),
            3 => {
                let options = *self.rng.pick(&["i", "s", "c", "ic"]).unwrap_or(&"i");
                format!("regexp_matches({column}, '{pattern}', '{options}')")
            }
            4 => format!("regexp_full_match({column}, '{pattern}')"),
            5 => format!("{column} SIMILAR TO '{pattern}'"),
            _ => format!("regexp_matches({column}, '{pattern}')"),
        }
    }

    /// `x [NOT] IN (SELECT y FROM …)` for a column x with a join edge when there is one.
    fn in_subquery(&mut self, scope: &Scope) -> String {
        let ty = self.any_type(scope);
        let x = self.expr(scope, ty, 0);
        let sub = if self.rng.chance(0.15) { self.set_operation(Some(ty)) } else { self.select(Some((ty, false))) };
        let not = if self.rng.chance(0.3) { "NOT " } else { "" };
        format!("{x} {not}IN ({sub})")
    }

    /// `[NOT] EXISTS (SELECT … FROM t WHERE t.fk = outer.key AND …)`.
    fn exists(&mut self, scope: &Scope) -> String {
        let mut candidates = vec![];
        for item in &scope.items {
            candidates.extend(self.edges_from(item));
        }
        let Some((outer, (_, oc, it, ic), _)) = self.rng.pick(&candidates).cloned() else {
            return self.compare(scope, 1);
        };
        self.depth += 1;
        let alias = self.alias();
        let item = self.table_item(&it, &alias);
        let inner = Scope { items: vec![item] };
        // Now and then a correlation that is not an equality (decorrelated through the
        // outer side's distinct values), alone or beside another branch.
        let op = if self.rng.chance(0.3) { *self.rng.pick(&["<", ">", "<=", ">=", "<>"]).unwrap_or(&"<") } else { "=" };
        let mut cond = format!("{alias}.{ic} {op} {outer}.{oc}");
        if op != "=" && self.rng.chance(0.3) {
            cond = format!("({cond} OR {})", self.predicate(&inner, 1, false));
        }
        if self.rng.chance(0.6) {
            cond.push_str(&format!(" AND {}", self.predicate(&inner, 1, false)));
        }
        self.depth -= 1;
        // Or a correlated `x [NOT] IN (SELECT y …)` over the same rows (its NULL rules differ
        // from EXISTS's: a NULL y or x makes NOT IN unknown).
        let shared: Vec<Ty> = [Ty::Int, Ty::Dec, Ty::Str, Ty::Date, Ty::Float]
            .into_iter()
            .filter(|t| !scope.of_type(*t).is_empty() && !inner.of_type(*t).is_empty())
            .collect();
        if let Some(ty) = self.rng.pick(&shared).copied().filter(|_| self.rng.chance(0.3)) {
            let x = self.expr(scope, ty, 0);
            if let Some(y) = self.column(&inner, ty) {
                let not = if self.rng.chance(0.5) { "NOT " } else { "" };
                return format!("{x} {not}IN (SELECT {} FROM {it} AS {alias} WHERE {cond})", y.sql);
            }
        }
        if self.rng.chance(0.25) {
            let cmp = *self.rng.pick(&["=", "<", ">"]).unwrap_or(&">");
            let n = self.rng.below(4);
            return format!("(SELECT count(*) FROM {it} AS {alias} WHERE {cond}) {cmp} {n}");
        }
        let not = if self.rng.chance(0.4) { "NOT " } else { "" };
        format!("{not}EXISTS (SELECT * FROM {it} AS {alias} WHERE {cond})")
    }

    /// `x op (SELECT agg FROM …)`, correlated along a join edge or not.
    fn scalar_subquery_compare(&mut self, scope: &Scope) -> String {
        let ty = if self.rng.chance(0.5) { Ty::Int } else { self.any_type(scope) };
        let sub = self.select(Some((ty, true)));
        let x = self.expr(scope, ty, 0);
        let op = *self.rng.pick(&["=", "<", ">", "<>"]).unwrap_or(&"=");
        format!("{x} {op} ({sub})")
    }
}

#[cfg(test)]
mod tests {
    use super::Generator;
    use gpusql::{BackendChoice, Engine};

    #[test]
    fn the_windows_focus_draws_a_window_or_grouping_sets_every_time() {
        let mut e = Engine::new(BackendChoice::Cpu).unwrap();
        e.sql("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a', 2.5::DECIMAL(6,2), DATE '2020-01-01', 1.5::DOUBLE)) v(i, s, d, dt, f)")
            .unwrap();
        let schema = super::super::schema_of(&mut e).unwrap();
        let (mut windows, mut sets) = (0, 0);
        for seed in 0..400 {
            let mut g = Generator::new(&schema, seed);
            g.windows = true;
            let sql = g.query();
            let w = sql.contains(" OVER (");
            let s = ["ROLLUP (", "CUBE (", "GROUPING SETS ("].iter().any(|k| sql.contains(k));
            assert!(w || s, "seed {seed}: {sql}");
            windows += w as usize;
            sets += s as usize;
        }
        // Both kinds are drawn.
        assert!(windows > 100 && sets > 40, "{windows} with windows, {sets} with grouping sets");
    }
}
