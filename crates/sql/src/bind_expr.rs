//! Binding of scalar and aggregate expressions against a scope.

use crate::bind_aggregate_call::is_aggregate_name;
use crate::bind_cast::typed_string;
use crate::coerce::{self, cast};
use crate::literal;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr};
use sqlparser::ast::{self, BinaryOperator, Spanned, UnaryOperator};
use sqlparser::tokenizer::Span;
use std::cell::RefCell;

/// A column visible to expressions: `qualifier.name`.
#[derive(Debug, Clone)]
pub struct ScopeField {
    pub qualifier: String,
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
    /// Named only as `qualifier.name` and left out of `*`: a column a JOIN … USING merged
    /// into one (`bind_using.rs`).
    pub hidden: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub fields: Vec<ScopeField>,
    /// Columns of files the engine cannot read (qualifier, name, type): naming one is
    /// `not supported`, not an unknown column.
    pub unsupported: Vec<(String, String, String)>,
}

/// Grouped context: expressions may use group keys and aggregates; the bound result refers
/// to the Aggregate node's output (keys, then aggregates).
pub struct AggContext<'a> {
    pub base: &'a Scope,
    pub keys: Vec<Expr>,
    pub key_names: Vec<String>,
    pub aggs: RefCell<Vec<AggExpr>>,
    /// Scalar subqueries of the select list / HAVING / ORDER BY, joined after the
    /// aggregation: placeholder name, type, nullability. They bind to columns
    /// `POST_AGGREGATE + k`, renumbered once the number of aggregates is known.
    pub post: Vec<(String, DataType, bool)>,
}

impl AggContext<'_> {
    /// Whether the GROUP BY has grouping sets (its keys are then NULL in some rows).
    pub fn has_grouping_sets(&self) -> bool {
        self.post.iter().any(|(n, _, _)| n == crate::bind_grouping_sets::GROUPING_ID)
    }
}

/// First placeholder column index of the values joined after an aggregation.
pub const POST_AGGREGATE: usize = 1 << 40;

pub enum Context<'a> {
    Plain(&'a Scope),
    Grouped(&'a AggContext<'a>),
}

/// Places an error at a node of the statement's syntax tree: where `span` starts.
pub trait AtSpan {
    fn at_span(self, span: Span) -> Self;
}

impl AtSpan for Error {
    /// Line 0 is sqlparser's mark of a node without a place (one the parser made up): the
    /// error stays unplaced then.
    fn at_span(self, span: Span) -> Error {
        if span.start.line == 0 {
            self
        } else {
            self.at(span.start.line, span.start.column)
        }
    }
}

/// Whether binding failed on a name not in scope; in a subquery, that may be a column of
/// the outer query (a correlation).
pub fn is_unknown_column(e: &Error) -> bool {
    matches!(e.kind(), Error::Bind(m) if m.contains("unknown column"))
}

/// Whether an AST expression contains a subquery.
pub fn contains_subquery(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if matches!(x, ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. }) {
            found = true;
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// Whether an AST expression contains an aggregate call.
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if let ast::Expr::Function(f) = x {
            if is_aggregate_name(&f.name.to_string()) && f.over.is_none() {
                found = true;
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

impl Scope {
    pub fn resolve(&self, qualifier: Option<&str>, name: &str, span: Span) -> Result<Expr> {
        let matches: Vec<(usize, &ScopeField)> = self
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.name.eq_ignore_ascii_case(name)
                    && match qualifier {
                        Some(q) => f.qualifier.eq_ignore_ascii_case(q),
                        None => !f.hidden,
                    }
            })
            .collect();
        let full = match qualifier {
            Some(q) => format!("{q}.{name}"),
            None => name.to_string(),
        };
        match matches.as_slice() {
            [(i, f)] => Ok(Expr::Column { index: *i, name: f.name.clone(), ty: f.ty, nullable: f.nullable }),
            [] => {
                match self.unsupported.iter().find(|(q, n, _)| {
                    n.eq_ignore_ascii_case(name) && qualifier.is_none_or(|x| q.eq_ignore_ascii_case(x))
                }) {
                    Some((_, n, t)) => Err(Error::not_supported(format!("column {n} of type {t}")).at_span(span)),
                    None => {
                        let names = self
                            .fields
                            .iter()
                            .filter(|f| !f.hidden && qualifier.is_none_or(|q| f.qualifier.eq_ignore_ascii_case(q)));
                        let hint = gpusql_common::suggest::did_you_mean(name, names.map(|f| f.name.as_str()));
                        Err(Error::bind(format!("unknown column '{full}'{hint}")).at_span(span))
                    }
                }
            }
            _ => Err(Error::bind(format!("column reference '{full}' is ambiguous")).at_span(span)),
        }
    }
}

impl<'a> Context<'a> {
    pub(crate) fn base(&self) -> &Scope {
        match self {
            Context::Plain(s) => s,
            Context::Grouped(g) => g.base,
        }
    }

    pub fn bind(&self, e: &ast::Expr) -> Result<Expr> {
        if let Context::Grouped(g) = self {
            if let ast::Expr::Identifier(id) = e {
                if let Some(k) = g.post.iter().position(|(n, _, _)| *n == id.value) {
                    let (name, ty, nullable) = g.post[k].clone();
                    return Ok(Expr::Column { index: POST_AGGREGATE + k, name, ty, nullable });
                }
            }
            // An aggregate call becomes a reference to its output column.
            if let ast::Expr::Function(f) = e {
                if crate::bind_aggregate_call::ignores_order(&f.name.to_string()) {
                    Context::Plain(g.base).check_ignored_order(f)?;
                }
                if let Some(grouping) = self.grouping_call(f) {
                    return grouping;
                }
                if let Some(rewritten) = self.bool_aggregate(f).or_else(|| self.interval_average(f)) {
                    return self.bind(&rewritten?);
                }
                if is_aggregate_name(&f.name.to_string()) {
                    let agg = Context::Plain(g.base).bind_aggregate(f)?;
                    let mut aggs = g.aggs.borrow_mut();
                    let j = aggs.iter().position(|a| *a == agg).unwrap_or_else(|| {
                        aggs.push(agg.clone());
                        aggs.len() - 1
                    });
                    return Ok(Expr::Column {
                        index: g.keys.len() + j,
                        name: agg.to_string(),
                        ty: agg.ty,
                        nullable: agg.func != AggFunc::Count,
                    });
                }
            }
            // A group key (matched after binding) becomes a reference to the key column.
            if !contains_aggregate(e) {
                if let Ok(bound) = Context::Plain(g.base).bind(e) {
                    if let Some(k) = g.keys.iter().position(|k| *k == bound) {
                        return Ok(Expr::Column {
                            index: k,
                            name: g.key_names[k].clone(),
                            ty: bound.ty(),
                            // (A grouping set without the key has NULL there.)
                            nullable: bound.nullable() || g.has_grouping_sets(),
                        });
                    }
                    if let Expr::Column { name, .. } = &bound {
                        return Err(Error::bind(format!(
                            "column '{name}' must appear in the GROUP BY clause or be used in an aggregate function"
                        ))
                        .at_span(e.span()));
                    }
                }
            }
        }
        self.bind_node(e)
    }

    fn bind_node(&self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        match e {
            A::Identifier(id) => self.base().resolve(None, &id.value, id.span),
            A::CompoundIdentifier(parts) => match parts.as_slice() {
                [t, c] => self.base().resolve(Some(&t.value), &c.value, c.span),
                _ => Err(Error::not_supported(format!("qualified name {e}")).at_span(e.span())),
            },
            A::Value(v) => literal::value(&v.value),
            A::TypedString(ts) => typed_string(ts),
            A::Nested(inner) => self.bind(inner),
            A::UnaryOp { op, expr } => self.bind_unary(*op, expr, e),
            A::BinaryOp { left, op, right } => self.bind_binary(left, op, right, e),
            A::IsNull(x) => Ok(Expr::IsNull { expr: Box::new(self.bind(x)?), negated: false }),
            A::IsNotNull(x) => Ok(Expr::IsNull { expr: Box::new(self.bind(x)?), negated: true }),
            A::IsTrue(x) => self.bind_is_truth(x, true, false, e),
            A::IsNotTrue(x) => self.bind_is_truth(x, true, true, e),
            A::IsFalse(x) => self.bind_is_truth(x, false, false, e),
            A::IsNotFalse(x) => self.bind_is_truth(x, false, true, e),
            A::IsDistinctFrom(a, b) | A::IsNotDistinctFrom(a, b) => {
                // NULL is not distinct from NULL, and distinct from any value; otherwise `<>`
                // (NaN is not distinct from NaN, -0.0 not from 0.0).
                let (l, r) = (self.bind(a)?, self.bind(b)?);
                let differ =
                    coerce::comparison(BinaryOp::NotEq, l.clone(), r.clone()).map_err(|x| x.at_span(e.span()))?;
                let is_null = |x: Expr, negated| Expr::IsNull { expr: Box::new(x), negated };
                let distinct = Expr::Case {
                    branches: vec![
                        (is_null(l.clone(), false), is_null(r.clone(), true)),
                        (is_null(r, false), Expr::literal(ScalarValue::Boolean(true), DataType::Boolean)),
                    ],
                    else_expr: Some(Box::new(differ)),
                    ty: DataType::Boolean,
                };
                Ok(if matches!(e, A::IsNotDistinctFrom(..)) { Expr::Not(Box::new(distinct)) } else { distinct })
            }
            A::Between { expr, negated, low, high } => {
                let v = self.bind(expr)?;
                let lo = coerce::comparison(BinaryOp::GtEq, v.clone(), self.bind(low)?)?;
                let hi = coerce::comparison(BinaryOp::LtEq, v, self.bind(high)?)?;
                let both = coerce::logical(BinaryOp::And, lo, hi)?;
                Ok(if *negated { Expr::Not(Box::new(both)) } else { both })
            }
            A::InList { expr, list, negated } => self.bind_in_list(expr, list, *negated),
            A::Case { operand, conditions, else_result, .. } => {
                self.bind_case(operand.as_deref(), conditions, else_result.as_deref(), e)
            }
            A::Cast { expr, data_type, kind, format } => {
                if format.is_some() {
                    return Err(Error::not_supported("CAST … FORMAT").at_span(e.span()));
                }
                match kind {
                    ast::CastKind::Cast | ast::CastKind::DoubleColon => self.bind_cast(expr, data_type, e),
                    ast::CastKind::TryCast | ast::CastKind::SafeCast => self.bind_try_cast(expr, data_type, e),
                }
            }
            A::Interval(iv) => {
                let iv = literal::interval(iv).map_err(|err| err.at_span(e.span()))?;
                Ok(Expr::literal(ScalarValue::Interval(iv), DataType::Interval))
            }
            A::Function(f) => self.bind_function(f, e),
            A::Floor { expr, field } => self.bind_floor_ceil(gpusql_plan::MathFunc::Floor, expr, field, e),
            A::Ceil { expr, field } => self.bind_floor_ceil(gpusql_plan::MathFunc::Ceil, expr, field, e),
            A::Like { negated, any, expr, pattern, escape_char } => {
                if *any {
                    return Err(Error::not_supported("LIKE ANY").at_span(e.span()));
                }
                self.bind_like(expr, pattern, escape_char.as_deref(), *negated, false, e)
            }
            A::ILike { negated, any, expr, pattern, escape_char } => {
                if *any {
                    return Err(Error::not_supported("ILIKE ANY").at_span(e.span()));
                }
                self.bind_like(expr, pattern, escape_char.as_deref(), *negated, true, e)
            }
            A::SimilarTo { negated, expr, pattern, escape_char } => {
                self.bind_similar_to(expr, pattern, escape_char.as_deref(), *negated, e)
            }
            A::Position { expr, r#in } => {
                let args = vec![self.bind(r#in)?, self.bind(expr)?];
                crate::bind_string::typed_call(gpusql_plan::StringFunc::Position, "position", args)
                    .map_err(|err| err.at_span(e.span()))
            }
            A::Extract { field, expr, .. } => {
                let name = match field {
                    // EXTRACT('year' FROM …)
                    ast::DateTimeField::Custom(id) => id.value.clone(),
                    other => other.to_string(),
                };
                self.bind_extract(&name, expr, e)
            }
            A::Substring { expr, substring_from, substring_for, .. } => {
                self.bind_substring(expr, substring_from.as_deref(), substring_for.as_deref(), e)
            }
            A::Trim { expr, trim_where, trim_what, trim_characters } => {
                self.bind_trim(expr, trim_where.as_ref(), trim_what.as_deref(), trim_characters.as_deref(), e)
            }
            A::Subquery(_) | A::Exists { .. } | A::InSubquery { .. } => {
                Err(Error::not_supported("subqueries").at_span(e.span()))
            }
            other => Err(Error::not_supported(format!("expression {other}")).at_span(other.span())),
        }
    }

    /// `x IS [NOT] TRUE | FALSE`: never NULL (a NULL x is neither TRUE nor FALSE).
    fn bind_is_truth(&self, x: &ast::Expr, truth: bool, negated: bool, whole: &ast::Expr) -> Result<Expr> {
        let v = self.bind(x)?;
        expect_bool(&v, "IS TRUE / IS FALSE").map_err(|e| e.at_span(whole.span()))?;
        let v = cast(v, DataType::Boolean);
        let test = if truth { v } else { Expr::Not(Box::new(v)) };
        let lit = |b: bool| Expr::literal(ScalarValue::Boolean(b), DataType::Boolean);
        Ok(Expr::Case {
            branches: vec![(test, lit(!negated))],
            else_expr: Some(Box::new(lit(negated))),
            ty: DataType::Boolean,
        })
    }

    /// NOT, unary minus (folded into number literals) and plus.
    fn bind_unary(&self, op: UnaryOperator, x: &ast::Expr, whole: &ast::Expr) -> Result<Expr> {
        let inner = self.bind(x)?;
        match op {
            UnaryOperator::Not => {
                expect_bool(&inner, "NOT")?;
                Ok(Expr::Not(Box::new(cast(inner, DataType::Boolean))))
            }
            UnaryOperator::Minus => match inner {
                Expr::Literal { value: ScalarValue::Int32(v), .. } => {
                    Ok(Expr::literal(ScalarValue::Int32(-v), DataType::Int32))
                }
                Expr::Literal { value: ScalarValue::Int64(v), .. } => {
                    Ok(Expr::literal(ScalarValue::Int64(-v), DataType::Int64))
                }
                Expr::Literal { value: ScalarValue::Decimal(v), ty } => Ok(Expr::literal(ScalarValue::Decimal(-v), ty)),
                Expr::Literal { value: ScalarValue::Interval(iv), ty } => {
                    Ok(Expr::literal(ScalarValue::Interval(iv.checked_neg().map_err(|e| e.at_span(whole.span()))?), ty))
                }
                other if other.ty().is_numeric() || other.ty() == DataType::Interval => {
                    Ok(Expr::Negate(Box::new(other)))
                }
                other => Err(Error::bind(format!("cannot negate {}", other.ty())).at_span(whole.span())),
            },
            UnaryOperator::Plus => Ok(inner),
            other => Err(Error::not_supported(format!("operator {other}")).at_span(whole.span())),
        }
    }

    /// `x [NOT] IN (a, b, …)`: the value and the items in one common type.
    fn bind_in_list(&self, x: &ast::Expr, list: &[ast::Expr], negated: bool) -> Result<Expr> {
        let mut v = self.bind(x)?;
        let mut items = list.iter().map(|x| self.bind(x)).collect::<Result<Vec<_>>>()?;
        for item in items.iter_mut() {
            let (a, b) = coerce::text_for_equality(v.clone(), item.clone());
            let (a, b, _) = coerce::unify(a, b, "compare (IN)")?;
            v = a;
            *item = b;
        }
        // A second pass gives every item the final common type.
        let ty = v.ty();
        let items = items.into_iter().map(|i| cast(i, ty)).collect();
        Ok(Expr::InList { expr: Box::new(v), list: items, negated })
    }

    /// CASE [operand] WHEN … THEN … [ELSE …] END: the branches in one common type (NULLs
    /// take any; all NULL: INTEGER).
    fn bind_case(
        &self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        let operand = operand.map(|o| self.bind(o)).transpose()?;
        let mut branches = vec![];
        for cw in conditions {
            let cond = match &operand {
                Some(op) => coerce::comparison(BinaryOp::Eq, op.clone(), self.bind(&cw.condition)?)?,
                None => {
                    let c = self.bind(&cw.condition)?;
                    expect_bool(&c, "CASE WHEN")?;
                    cast(c, DataType::Boolean)
                }
            };
            branches.push((cond, self.bind(&cw.result)?));
        }
        let else_expr = else_result.map(|x| self.bind(x)).transpose()?;
        let mut ty: Option<DataType> = None;
        for t in branches.iter().map(|(_, t)| t).chain(else_expr.iter()) {
            if matches!(t, Expr::Literal { value: ScalarValue::Null, .. }) {
                continue;
            }
            ty = Some(match ty {
                None => t.ty(),
                Some(prev) => coerce::result_type(&prev, &t.ty()).ok_or_else(|| {
                    Error::bind(format!("CASE branches of types {prev} and {}", t.ty())).at_span(whole.span())
                })?,
            });
        }
        let ty = ty.unwrap_or(DataType::Int32);
        Ok(Expr::Case {
            branches: branches.into_iter().map(|(c, t)| (c, cast(t, ty))).collect(),
            else_expr: else_expr.map(|x| Box::new(cast(x, ty))),
            ty,
        })
    }

    /// Scalar function calls: those defined by other expressions (`functions.rs`), ROUND,
    /// date_trunc, date_part, length and abs. Aggregates are bound before (`bind`).
    fn bind_function(&self, f: &ast::Function, whole: &ast::Expr) -> Result<Expr> {
        crate::audit::function(f)?;
        if let Some(value) = clock_function(f) {
            return value;
        }
        self.check_date_function_arguments(f)?;
        if let Some(rewritten) = crate::functions::rewrite_scalar_function(f) {
            return self.bind(&rewritten?);
        }
        if let Some(start) = crate::functions::last_day_month_start(f) {
            let start = self.bind(&start?)?;
            return Ok(Expr::DateAdd { date: Box::new(start), months: 1, days: -1 });
        }
        if let Some(args) = crate::functions::round_arguments(f) {
            let (x, digits) = args?;
            let v = self.bind(x)?;
            return crate::functions::bind_round(v, digits, whole);
        }
        if let Some(args) = crate::functions::date_trunc_arguments(f) {
            let (unit, x) = args?;
            return self.bind_date_trunc(unit, x, whole);
        }
        if let Some(args) = crate::functions::date_part_arguments(f) {
            let (field, x) = args?;
            let field = match self.bind(field)? {
                Expr::Literal { value: ScalarValue::Utf8(s), .. } => s,
                _ => {
                    return Err(Error::not_supported("date_part with a field that is not a string literal")
                        .at_span(whole.span()))
                }
            };
            return self.bind_extract(&field, x, whole);
        }
        if let Some(arg) = crate::functions::length_argument(f) {
            let s = self.bind(arg?)?;
            if s.ty() != DataType::Utf8 && !matches!(s, Expr::Literal { value: ScalarValue::Null, .. }) {
                return Err(Error::bind(format!("{} needs VARCHAR, got {}", f.name, s.ty())).at_span(whole.span()));
            }
            return Ok(Expr::Length(Box::new(coerce::cast(s, DataType::Utf8))));
        }
        if let Some(arg) = crate::functions::single_argument(f, &["abs"]) {
            return match self.bind(arg?)? {
                null @ Expr::Literal { value: ScalarValue::Null, .. } => Ok(null),
                x if x.ty().is_numeric() => Ok(Expr::Abs(Box::new(x))),
                x => Err(Error::bind(format!("abs needs a number, got {}", x.ty())).at_span(whole.span())),
            };
        }
        if let Some(math) = self.bind_math_function(f, whole) {
            return math;
        }
        if let Some(regex) = self.bind_regex_function(f, whole) {
            return regex;
        }
        if let Some(string) = self.bind_string_function(f, whole) {
            return string;
        }
        let name = f.name.to_string();
        if is_aggregate_name(&name) {
            Err(Error::bind(format!("aggregate function {name} is not allowed here")).at_span(whole.span()))
        } else {
            Err(Error::not_supported(format!("function {name}")).at_span(whole.span()))
        }
    }

    /// SUBSTRING(s FROM start [FOR len]): start and length integer constants.
    fn bind_substring(
        &self,
        x: &ast::Expr,
        from: Option<&ast::Expr>,
        len: Option<&ast::Expr>,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        let s = self.bind(x)?;
        if s.ty() != DataType::Utf8 {
            return Err(Error::bind(format!("SUBSTRING needs VARCHAR, got {}", s.ty())).at_span(whole.span()));
        }
        let int = |x: Option<&ast::Expr>| -> Result<Option<i64>> {
            match x {
                None => Ok(None),
                Some(x) => match self.bind(x)? {
                    Expr::Literal { value, ty } if ty.is_integer() => Ok(value.as_i128().map(|v| v as i64)),
                    _ => Err(Error::not_supported("SUBSTRING with non-constant positions").at_span(x.span())),
                },
            }
        };
        let start = int(from)?.unwrap_or(1);
        // PostgreSQL and DuckDB disagree on negative starts (DuckDB counts from the end).
        if start < 0 {
            return Err(Error::not_supported("SUBSTRING with a negative start").at_span(whole.span()));
        }
        Ok(Expr::Substring { expr: Box::new(s), start, len: int(len)? })
    }

    /// EXTRACT(field FROM x), date_part('field', x) and year(x), hour(x), …: BIGINT fields
    /// of a DATE, TIMESTAMP or INTERVAL (epoch: DOUBLE). A DATE keeps its day-number path
    /// for year, month and day; for the other fields it is seen as its midnight (DuckDB:
    /// hour 0).
    fn bind_extract(&self, field_name: &str, x: &ast::Expr, whole: &ast::Expr) -> Result<Expr> {
        let at = whole.span();
        let field = gpusql_plan::DateField::parse(field_name)
            .ok_or_else(|| Error::not_supported(format!("EXTRACT({field_name})")).at_span(at))?;
        let v = self.bind(x)?;
        let v = match v.ty() {
            _ if matches!(v, Expr::Literal { value: ScalarValue::Null, .. }) => cast(v, DataType::Timestamp),
            DataType::Date if field.is_day_field() => v,
            DataType::Date | DataType::Timestamp => cast(v, DataType::Timestamp),
            // The fields an interval has (`interval::part`; DuckDB's error for the others).
            DataType::Interval => {
                let has = gpusql_common::interval::part(&Default::default(), field).is_some();
                if !has && field != gpusql_plan::DateField::Epoch {
                    let name = field_name.to_ascii_lowercase();
                    return Err(
                        Error::not_supported(format!("\"interval\" units \"{name}\" not recognized")).at_span(at)
                    );
                }
                v
            }
            t => return Err(Error::bind(format!("EXTRACT needs a DATE, TIMESTAMP or INTERVAL, got {t}")).at_span(at)),
        };
        Ok(Expr::Extract { field, expr: Box::new(v) })
    }

    /// date_trunc('unit', x): a TIMESTAMP (of a DATE too, as in DuckDB).
    fn bind_date_trunc(&self, unit: &ast::Expr, x: &ast::Expr, whole: &ast::Expr) -> Result<Expr> {
        let at = whole.span();
        let v = self.bind(x)?;
        let v = match v.ty() {
            _ if matches!(v, Expr::Literal { value: ScalarValue::Null, .. }) => cast(v, DataType::Timestamp),
            DataType::Date | DataType::Timestamp => cast(v, DataType::Timestamp),
            t => return Err(Error::bind(format!("date_trunc needs a DATE or TIMESTAMP, got {t}")).at_span(at)),
        };
        let unit = match self.bind(unit)? {
            Expr::Literal { value: ScalarValue::Utf8(s), .. } => s,
            Expr::Literal { value: ScalarValue::Null, .. } => {
                return Ok(Expr::literal(ScalarValue::Null, DataType::Timestamp))
            }
            _ => return Err(Error::not_supported("date_trunc with a unit that is not a string literal").at_span(at)),
        };
        let unit = gpusql_plan::TruncUnit::parse(&unit).ok_or_else(|| {
            Error::bind(format!("date_trunc: unknown unit '{unit}' (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond)")).at_span(at)
        })?;
        Ok(Expr::DateTrunc { unit, expr: Box::new(v) })
    }

    fn bind_binary(&self, left: &ast::Expr, op: &BinaryOperator, right: &ast::Expr, whole: &ast::Expr) -> Result<Expr> {
        // `^` is DuckDB's power, which binds tighter than * and +; the parser ranks it below
        // them (`2 * 3 ^ 2` reads as `(2 * 3) ^ 2`), so an operand it grouped that way is
        // refused rather than computed in another order.
        if let BinaryOperator::BitwiseXor = op {
            let grouped = |x: &ast::Expr, chain: bool| match x {
                ast::Expr::BinaryOp { op: BinaryOperator::BitwiseXor, .. } => !chain,
                ast::Expr::BinaryOp { .. } => true,
                _ => false,
            };
            if grouped(left, true) || grouped(right, false) {
                return Err(Error::not_supported(
                    "^ beside another operator without parentheses (write 2 * (3 ^ 2) or (2 * 3) ^ 2)",
                )
                .at_span(whole.span()));
            }
        }
        // date / timestamp ± interval, interval + date / timestamp
        let with_interval = match (op, left, right) {
            (BinaryOperator::Plus | BinaryOperator::Minus, x, ast::Expr::Interval(iv)) => Some((x, iv)),
            (BinaryOperator::Plus, ast::Expr::Interval(iv), x) => Some((x, iv)),
            _ => None,
        };
        let bound = match with_interval {
            Some((x, _)) => Some(self.bind(x)?),
            None => None,
        };
        // (An interval beside another interval, or beside a number, is interval arithmetic.)
        let with_interval = with_interval
            .filter(|_| bound.as_ref().is_some_and(|v| matches!(v.ty(), DataType::Date | DataType::Timestamp)));
        if let (Some((_, iv)), Some(v)) = (with_interval, bound) {
            let iv = literal::interval(iv).map_err(|e| with_position(e, whole))?;
            let iv =
                if *op == BinaryOperator::Minus { iv.checked_neg().map_err(|e| with_position(e, whole))? } else { iv };
            return match v.ty() {
                // A TIMESTAMP (DuckDB's type), computed as a DATE where the interval has no
                // time part: comparisons with dates then compare dates (coerce::comparison).
                DataType::Date if iv.micros == 0 => {
                    Ok(cast(Expr::DateAdd { date: Box::new(v), months: iv.months, days: iv.days }, DataType::Timestamp))
                }
                DataType::Date | DataType::Timestamp => Ok(Expr::TimestampAdd {
                    expr: Box::new(cast(v, DataType::Timestamp)),
                    months: iv.months,
                    days: iv.days,
                    micros: iv.micros,
                }),
                t => Err(Error::bind(format!("interval arithmetic needs a DATE or TIMESTAMP, got {t}"))
                    .at_span(whole.span())),
            };
        }
        if let Some(regex) = self.bind_regex_operator(left, op, right) {
            return regex;
        }
        // PostgreSQL's spellings of [NOT] [I]LIKE.
        let like = match op {
            BinaryOperator::PGLikeMatch => Some((false, false)),
            BinaryOperator::PGILikeMatch => Some((false, true)),
            BinaryOperator::PGNotLikeMatch => Some((true, false)),
            BinaryOperator::PGNotILikeMatch => Some((true, true)),
            _ => None,
        };
        if let Some((negated, ignore_case)) = like {
            return self.bind_like(left, right, None, negated, ignore_case, whole);
        }
        let l = self.bind(left)?;
        let r = self.bind(right)?;
        let at = |r: Result<Expr>| r.map_err(|e| with_position(e, whole));
        match op {
            BinaryOperator::Plus => at(coerce::arithmetic(BinaryOp::Add, l, r)),
            BinaryOperator::Minus => at(coerce::arithmetic(BinaryOp::Sub, l, r)),
            BinaryOperator::Multiply => at(coerce::arithmetic(BinaryOp::Mul, l, r)),
            BinaryOperator::Divide => at(coerce::arithmetic(BinaryOp::Div, l, r)),
            BinaryOperator::Modulo => at(coerce::arithmetic(BinaryOp::Mod, l, r)),
            BinaryOperator::DuckIntegerDivide => at(coerce::integer_division(l, r)),
            BinaryOperator::Eq => at(coerce::comparison(BinaryOp::Eq, l, r)),
            BinaryOperator::NotEq => at(coerce::comparison(BinaryOp::NotEq, l, r)),
            BinaryOperator::Lt => at(coerce::comparison(BinaryOp::Lt, l, r)),
            BinaryOperator::LtEq => at(coerce::comparison(BinaryOp::LtEq, l, r)),
            BinaryOperator::Gt => at(coerce::comparison(BinaryOp::Gt, l, r)),
            BinaryOperator::GtEq => at(coerce::comparison(BinaryOp::GtEq, l, r)),
            BinaryOperator::And => at(coerce::logical(BinaryOp::And, l, r)),
            BinaryOperator::Or => at(coerce::logical(BinaryOp::Or, l, r)),
            BinaryOperator::StringConcat => at(crate::bind_string::concat(l, r)),
            BinaryOperator::BitwiseXor => crate::bind_math::power_operator(l, r, whole),
            other => Err(Error::not_supported(format!("operator {other}")).at_span(whole.span())),
        }
    }

    /// The types the functions rewritten as text (`functions.rs`) of DATE / TIMESTAMP or
    /// integer arguments take, checked first so that an error names the function.
    fn check_date_function_arguments(&self, f: &ast::Function) -> Result<()> {
        let name = f.name.to_string().to_ascii_lowercase();
        let at = f.span();
        let is_null = |x: &Expr| matches!(x, Expr::Literal { value: ScalarValue::Null, .. });
        match (name.as_str(), crate::functions::plain_arguments(f).as_deref()) {
            ("epoch_ms" | "epoch_us" | "epoch_ns", Some([x])) if self.bind(x)?.ty().is_numeric() => {
                Err(Error::not_supported(format!("{name} of a number (the TIMESTAMP it makes)")).at_span(at))
            }
            ("dayname" | "monthname" | "last_day" | "epoch_ms" | "epoch_us" | "epoch_ns" | "yearweek", Some([x])) => {
                match self.bind(x)? {
                    v if is_null(&v) || matches!(v.ty(), DataType::Date | DataType::Timestamp) => Ok(()),
                    v => Err(Error::bind(format!("{name} needs a DATE or TIMESTAMP, got {}", v.ty())).at_span(at)),
                }
            }
            ("isnan" | "isinf" | "isfinite", Some([x])) => match self.bind(x)? {
                v if is_null(&v) || v.ty().is_numeric() => Ok(()),
                v => Err(Error::bind(format!("{name} needs a number, got {}", v.ty())).at_span(at)),
            },
            ("make_date", Some(args @ [_, _, _])) => {
                for x in args {
                    let v = self.bind(x)?;
                    if !is_null(&v) && !v.ty().is_integer() {
                        return Err(Error::bind(format!(
                            "make_date needs integers (year, month, day), got {}",
                            v.ty()
                        ))
                        .at_span(x.span()));
                    }
                }
                Ok(())
            }
            ("date_sub" | "datesub", Some([_, a, b])) => {
                for x in [a, b] {
                    let v = self.bind(x)?;
                    if !is_null(&v) && !matches!(v.ty(), DataType::Date | DataType::Timestamp) {
                        return Err(
                            Error::bind(format!("{name} needs a DATE or TIMESTAMP, got {}", v.ty())).at_span(x.span())
                        );
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The functions of no arguments that read the statement's time: current_date and
/// today() (DATE), localtimestamp (TIMESTAMP), in the local time zone (`clock.rs`); those
/// of types the engine lacks (TIMESTAMP WITH TIME ZONE, TIME) are refused. None for
/// another function.
fn clock_function(f: &ast::Function) -> Option<Result<Expr>> {
    let name = f.name.to_string().to_ascii_lowercase();
    let at = f.span();
    let no_arguments = match &f.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::List(l) => l.args.is_empty(),
        ast::FunctionArguments::Subquery(_) => false,
    };
    let refuse = |what: &str| Some(Err(Error::not_supported(what.to_string()).at_span(at)));
    match name.as_str() {
        // (DuckDB's forms: `localtimestamp` without parentheses, `today()` and
        // `current_localtimestamp()` with.)
        "localtimestamp" if !matches!(f.args, ast::FunctionArguments::None) => None,
        "today" | "current_localtimestamp" if matches!(f.args, ast::FunctionArguments::None) => None,
        "current_date" | "today" | "localtimestamp" | "current_localtimestamp" if !no_arguments => {
            Some(Err(Error::bind(format!("{name} takes no arguments")).at_span(at)))
        }
        "current_date" | "today" => {
            Some(Ok(Expr::literal(ScalarValue::Date(crate::clock::current_date()), DataType::Date)))
        }
        "localtimestamp" | "current_localtimestamp" => {
            Some(Ok(Expr::literal(ScalarValue::Timestamp(crate::clock::local_timestamp()), DataType::Timestamp)))
        }
        "now" | "current_timestamp" | "get_current_timestamp" | "transaction_timestamp" => {
            refuse(&format!("{name}() (TIMESTAMP WITH TIME ZONE)"))
        }
        "current_time" | "localtime" | "get_current_time" => refuse(&format!("{name} (TIME)")),
        _ => None,
    }
}

/// A type error of an operator's operands, placed at the operator's expression.
fn with_position(e: Error, at: &ast::Expr) -> Error {
    match e.kind() {
        Error::Bind(_) | Error::NotSupported(_) => e.at_span(at.span()),
        _ => e,
    }
}

fn expect_bool(e: &Expr, what: &str) -> Result<()> {
    match e.ty() {
        DataType::Boolean => Ok(()),
        _ if matches!(e, Expr::Literal { value: ScalarValue::Null, .. }) => Ok(()),
        t => Err(Error::bind(format!("{what} expects BOOLEAN, got {t}"))),
    }
}
