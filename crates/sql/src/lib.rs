//! SQL text -> bound logical plan. Parses with sqlparser, resolves names and types against
//! a catalog, and inserts the casts the type rules require. No optimization happens here.

mod audit;
mod bind_aggregate;
mod bind_aggregate_call;
mod bind_approx_count;
mod bind_cast;
mod bind_decorrelate;
mod bind_distinct_on;
mod bind_expr;
mod bind_from;
mod bind_grouping_sets;
mod bind_join;
mod bind_mark;
mod bind_math;
mod bind_order;
mod bind_pattern;
mod bind_quantile;
mod bind_scalar;
mod bind_select;
mod bind_select_list;
mod bind_set;
mod bind_string;
mod bind_string_agg;
mod bind_subquery;
mod bind_using;
mod bind_where;
mod bind_window;
mod clock;
mod coerce;
mod copy;
mod cte;
mod ddl;
pub mod depth;
pub mod dml;
mod functions;
mod literal;
mod outside_subqueries;
mod parameterize;
mod table_function;

pub use bind_select::bind_query;
/// Whether the statement bound last on this thread read the clock (current_date, …): its
/// plan holds that moment and must not be kept for its text.
pub use clock::read_by_statement as statement_read_clock;
pub use ddl::{ColumnDef, InsertRows, ObjectKind};
pub use parameterize::{parameterize, Parameterized};
/// A parsed statement (sqlparser's AST).
pub use sqlparser::ast::Statement;
pub use table_function::parse_type;

use gpusql_common::{Catalog, Error, FileScan, Result, ViewInfo, WriteOptions};
use gpusql_plan::LogicalPlan;

use sqlparser::dialect::GenericDialect;
use sqlparser::parser::{Parser, ParserError};

/// A statement after binding.
#[derive(Debug, Clone)]
pub enum BoundStatement {
    Query(LogicalPlan),
    /// EXPLAIN [VERBOSE] <query>: VERBOSE also shows the generated CUDA source.
    Explain {
        plan: LogicalPlan,
        verbose: bool,
    },
    CreateTable {
        name: String,
        columns: Vec<ColumnDef>,
        /// PRIMARY KEY and UNIQUE constraints (a primary key's columns are NOT NULL).
        unique_keys: Vec<gpusql_common::UniqueKey>,
        if_not_exists: bool,
        replace: bool,
    },
    /// CREATE TABLE … AS <query>: the query's result becomes the table.
    CreateTableAs {
        name: String,
        plan: LogicalPlan,
        if_not_exists: bool,
        replace: bool,
    },
    CreateView {
        view: ViewInfo,
        replace: bool,
    },
    Drop {
        kind: ObjectKind,
        names: Vec<String>,
        if_exists: bool,
    },
    Insert(InsertRows),
    /// INSERT INTO t [(cols)] <query>: `plan` yields every column of `table`, in order,
    /// of its types (the binder adds the casts and the NULLs of unlisted columns).
    InsertQuery {
        table: String,
        plan: LogicalPlan,
        on_conflict: gpusql_common::OnConflict,
    },
    /// UPDATE / DELETE (`dml.rs`): `plan` yields every row of `table` with its new values
    /// and, last, whether the row changed; the rows (DELETE: the unchanged ones) become
    /// the table's contents.
    ChangeRows {
        table: String,
        plan: LogicalPlan,
        change: dml::RowChange,
    },
    /// SHOW TABLES: the tables and views by name.
    ShowTables,
    /// DESCRIBE t / DESCRIBE <query>: each column's name, type and nullability.
    Describe {
        columns: Vec<(String, String, bool)>,
    },
    /// COPY t FROM 'file': the file's rows appended to `table` (its columns by position).
    CopyFrom {
        table: String,
        scan: FileScan,
    },
    /// COPY t / (query) TO 'file'.
    CopyTo {
        plan: LogicalPlan,
        path: String,
        options: WriteOptions,
    },
    /// SET <name> = <value>: a session setting of the engine (the value as written:
    /// identifier, string or number text).
    Set {
        name: String,
        value: String,
    },
    /// RESET <name>, or RESET ALL (None).
    Reset {
        name: Option<String>,
    },
    /// SHOW <name>, or SHOW ALL (None): settings with their values and docs.
    ShowSetting {
        name: Option<String>,
    },
}

/// Splits a script into statements and parses them; errors carry line and column.
/// Statements nested beyond [`depth::MAX_EXPRESSION_DEPTH`] are refused here, so later
/// passes may recurse over what this returns (given the stack `depth` documents).
pub fn parse(sql: &str) -> Result<Vec<Statement>> {
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(depth::PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .map_err(|e| syntax_error(e, sql))?;
    let stmts = match parser.parse_statements() {
        Ok(s) => s,
        Err(ParserError::RecursionLimitExceeded) => {
            let at = parser.peek_token_ref().span.start;
            return Err(depth::too_deep(Some((at.line, at.column))));
        }
        Err(e) => return Err(empty_in_list(sql, &dialect).unwrap_or_else(|| syntax_error(e, sql))),
    };
    if let Err(e) = stmts.iter().try_for_each(depth::check) {
        depth::dispose(stmts);
        return Err(e);
    }
    Ok(stmts)
}

/// Line and column just past the end of `sql` (where "found: EOF" errors point).
fn end_position(sql: &str) -> (u64, u64) {
    let trimmed = sql.trim_end();
    let line = trimmed.matches('\n').count() as u64 + 1;
    let col = trimmed.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1;
    (line, col)
}

/// `x IN ()`, which DuckDB reads (FALSE; NULL for a NULL x) and sqlparser's GenericDialect
/// does not parse: where the statement has one, the failed parse is refused by name at the
/// `IN`, rather than as a syntax error at its `)`.
fn empty_in_list(sql: &str, dialect: &GenericDialect) -> Option<Error> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(dialect, sql).tokenize_with_location().ok()?;
    let tokens: Vec<_> = tokens.into_iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    tokens.windows(3).find_map(|w| match (&w[0].token, &w[1].token, &w[2].token) {
        (Token::Word(word), Token::LParen, Token::RParen) if word.keyword == Keyword::IN => {
            let at = w[0].span.start;
            Some(Error::not_supported("an empty IN list (x IN ())").at(at.line, at.column))
        }
        _ => None,
    })
}

fn syntax_error(e: ParserError, sql: &str) -> Error {
    let msg = match e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
        ParserError::RecursionLimitExceeded => "expression nested too deeply".to_string(),
    };
    // sqlparser appends " at Line: L, Column: C"; lift the position out of the text.
    if let Some(pos) = msg.rfind(" at Line: ") {
        let tail = &msg[pos + " at Line: ".len()..];
        let mut parts = tail.split(", Column: ");
        let line = parts.next().and_then(|l| l.trim().parse().ok());
        let column = parts.next().and_then(|c| c.trim().parse().ok());
        if let (Some(line), Some(column)) = (line, column) {
            return Error::Syntax(msg[..pos].to_string()).at(line, column);
        }
    }
    let (line, column) = if msg.contains("found: EOF") { end_position(sql) } else { (1, 1) };
    Error::Syntax(msg).at(line, column)
}

pub fn bind_statement(stmt: &Statement, catalog: &dyn Catalog) -> Result<BoundStatement> {
    clock::start_statement();
    match stmt {
        Statement::Query(q) => Ok(BoundStatement::Query(bind_query(q, catalog)?)),
        Statement::Explain {
            describe_alias: sqlparser::ast::DescribeAlias::Describe | sqlparser::ast::DescribeAlias::Desc,
            statement,
            ..
        } => match &**statement {
            Statement::Query(q) => Ok(ddl::describe(&bind_query(q, catalog)?.schema(), &[])),
            other => Err(Error::not_supported(format!("DESCRIBE of {}", statement_kind(other)))),
        },
        Statement::Explain { statement, verbose, analyze, .. } => {
            if *analyze {
                return Err(Error::not_supported("EXPLAIN ANALYZE (use the timing display instead)"));
            }
            match &**statement {
                Statement::Query(q) => Ok(BoundStatement::Explain { plan: bind_query(q, catalog)?, verbose: *verbose }),
                other => Err(Error::not_supported(format!("EXPLAIN of {}", statement_kind(other)))),
            }
        }
        Statement::CreateTable(ct) => ddl::bind_create_table(ct, catalog),
        Statement::CreateView(v) => ddl::bind_create_view(v, catalog),
        Statement::Drop { object_type, if_exists, names, .. } => ddl::bind_drop(object_type, *if_exists, names),
        Statement::Insert(ins) => ddl::bind_insert(ins, catalog),
        Statement::Update(u) => dml::bind_update(u, catalog),
        Statement::Delete(d) => dml::bind_delete(d, catalog),
        Statement::ShowTables { .. } => Ok(BoundStatement::ShowTables),
        Statement::ExplainTable {
            describe_alias: sqlparser::ast::DescribeAlias::Describe | sqlparser::ast::DescribeAlias::Desc,
            table_name,
            ..
        } => ddl::bind_describe_table(table_name, catalog),
        Statement::Copy { source, to, target, options, legacy_options, .. } => {
            copy::bind_copy(source, *to, target, options, legacy_options, catalog)
        }
        Statement::Set(sqlparser::ast::Set::SingleAssignment { variable, values, .. }) => {
            let [value] = values.as_slice() else { return Err(Error::not_supported("SET with several values")) };
            let value = match value {
                sqlparser::ast::Expr::Value(v) => match &v.value {
                    sqlparser::ast::Value::SingleQuotedString(s) | sqlparser::ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                },
                sqlparser::ast::Expr::Identifier(i) => i.value.clone(),
                // A word with hyphens (`per-lane`, `push-down`) parses as a subtraction:
                // the value is its text without the spaces the parser put around them.
                other => other.to_string().split_whitespace().collect(),
            };
            Ok(BoundStatement::Set { name: variable.to_string().to_ascii_lowercase(), value })
        }
        Statement::Reset(r) => match &r.reset {
            sqlparser::ast::Reset::ALL => Ok(BoundStatement::Reset { name: None }),
            sqlparser::ast::Reset::ConfigurationParameter(p) => {
                Ok(BoundStatement::Reset { name: Some(p.to_string().to_ascii_lowercase()) })
            }
            sqlparser::ast::Reset::SessionAuthorization => Err(Error::not_supported("RESET SESSION AUTHORIZATION")),
        },
        Statement::ShowVariable { variable } => {
            let name = variable.iter().map(|i| i.value.to_ascii_lowercase()).collect::<Vec<_>>().join(".");
            Ok(BoundStatement::ShowSetting { name: (name != "all").then_some(name) })
        }
        other => Err(Error::not_supported(format!("statement {}", statement_kind(other)))),
    }
}

fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// Parses and binds a single statement.
pub fn bind_sql(sql: &str, catalog: &dyn Catalog) -> Result<Vec<BoundStatement>> {
    parse(sql)?.iter().map(|s| bind_statement(s, catalog)).collect()
}
