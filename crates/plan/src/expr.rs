//! Bound expressions: every column reference is an index into the input schema and every
//! node knows its result type. The binder inserts explicit casts, so operators see operands
//! of one type (decimals at a common scale) and both backends stay simple.

use crate::hyperloglog::SketchOp;
use crate::literal_set::LiteralSet;
use crate::math::MathFunc;
use crate::parameters::ParamSource;
use crate::quantile::{QuantileFraction, QuantileOp};
use crate::regex::RegexDfa;
use crate::strings::StringFunc;
pub use gpusql_common::date::{DateField, TruncUnit};
use gpusql_common::{DataType, ScalarValue};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
}

impl BinaryOp {
    pub fn is_comparison(&self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::NotEq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq)
    }
    /// The comparison with its operands swapped: `a op b` is `b op.mirrored() a`.
    pub fn mirrored(&self) -> BinaryOp {
        match self {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            other => *other,
        }
    }
    pub fn is_arithmetic(&self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod)
    }
    pub fn symbol(&self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Column `index` of the input; `name` only for display.
    Column {
        index: usize,
        name: String,
        ty: DataType,
        nullable: bool,
    },
    Literal {
        value: ScalarValue,
        ty: DataType,
    },
    /// A constant of a statement planned once for all its literal values (a plan
    /// template, `parameters.rs`): `value` is this run's, computed from the statement's
    /// literals as `source` says. The planner takes no decision on it that a literal's
    /// value would drive (folding, pruning, sets), so the plan holds for any value;
    /// backends read it as a literal.
    Parameter {
        value: ScalarValue,
        ty: DataType,
        source: Arc<ParamSource>,
    },
    /// Operands have the same type for comparisons, + and - (the binder casts them);
    /// for * on decimals the scales add.
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        ty: DataType,
    },
    Not(Box<Expr>),
    Negate(Box<Expr>),
    /// ABS of a number (one node: a CASE would repeat its argument, and nested calls
    /// would grow exponentially).
    Abs(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// Conversions between numeric types (decimal rescale included) and to DOUBLE, and of
    /// text to numbers, BOOLEAN, DATE and TIMESTAMP (`gpusql_common::text_cast`).
    Cast {
        expr: Box<Expr>,
        ty: DataType,
    },
    /// TRY_CAST: as `Cast`, but NULL where the value does not convert (text that does not
    /// read as the type, a number out of its range). Text the engine does not read
    /// (`TextCast::Unsupported`) is still an error.
    TryCast {
        expr: Box<Expr>,
        ty: DataType,
    },
    /// Searched CASE; branches are evaluated lazily (a division in an untaken branch
    /// raises no error).
    Case {
        branches: Vec<(Expr, Expr)>,
        else_expr: Option<Box<Expr>>,
        ty: DataType,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `expr [NOT] IN (literals…)` of a long list, its items one sorted set (constant
    /// folding makes it from an `InList`; same NULL rules).
    InSet {
        expr: Box<Expr>,
        set: Arc<LiteralSet>,
        negated: bool,
    },
    /// DATE plus an interval of months and days (either may be negative).
    DateAdd {
        date: Box<Expr>,
        months: i32,
        days: i32,
    },
    /// TIMESTAMP plus an interval of months, days and microseconds (each may be negative;
    /// `date::add_interval`); an error outside the TIMESTAMP range.
    TimestampAdd {
        expr: Box<Expr>,
        months: i32,
        days: i32,
        micros: i64,
    },
    /// date_trunc(unit, TIMESTAMP) as TIMESTAMP (a DATE argument is cast to TIMESTAMP by the
    /// binder, as DuckDB's result is a TIMESTAMP too).
    DateTrunc {
        unit: TruncUnit,
        expr: Box<Expr>,
    },
    /// `expr [NOT] LIKE pattern`: the pattern compiled to bytes and wildcards.
    Like {
        expr: Box<Expr>,
        pattern: LikePattern,
        negated: bool,
    },
    /// `expr ~ 'pattern'`, regexp_matches, regexp_full_match, SIMILAR TO: the pattern
    /// compiled into a DFA (`regex.rs`; `dfa.full`: the whole string must match).
    Regex {
        expr: Box<Expr>,
        dfa: Arc<RegexDfa>,
        negated: bool,
    },
    /// regexp_extract(s, p [, 0 [, options]]): the first match of `p` in `s` ('' where
    /// none); regexp_replace(s, p, rewrite [, options]) where `rewrite` is given: the first
    /// match (`global`, option 'g': every match) replaced by it (a VARCHAR constant that
    /// `regex::check_rewrite` took). `dfa` finds the matches (`RegexDfa::new_find`).
    RegexFind {
        expr: Box<Expr>,
        dfa: Arc<RegexDfa>,
        rewrite: Option<Box<Expr>>,
        global: bool,
    },
    /// EXTRACT(field FROM date or timestamp) as BIGINT (epoch: DOUBLE). A DATE operand
    /// only with the fields of the day (`DateField::is_day_field`); the binder casts it to
    /// TIMESTAMP for the others.
    Extract {
        field: DateField,
        expr: Box<Expr>,
    },
    /// SUBSTRING(expr FROM start [FOR len]): 1-based, in characters (PostgreSQL rules for
    /// starts below 1).
    Substring {
        expr: Box<Expr>,
        start: i64,
        len: Option<i64>,
    },
    /// LENGTH(expr): characters (UTF-8 code points) as BIGINT.
    Length(Box<Expr>),
    /// ROUND of a DOUBLE to `digits` (>= 0) decimal places, halves away from zero, as
    /// DuckDB: v = x * 10^digits, (v >= 0 ? floor(v + 0.5) : ceil(v - 0.5)) / 10^digits,
    /// each operation rounded on its own (no fused multiply-add). DECIMAL and integer
    /// ROUND are casts, bound as such.
    RoundDouble {
        expr: Box<Expr>,
        digits: i32,
    },
    /// ROUND of an integer or DECIMAL to a multiple of 10^`tens` (digits = -tens < 0),
    /// halves away from zero, as DuckDB: the same integer type (an error where the result
    /// leaves it), or a DECIMAL of scale 0 (`round_tens_type`).
    RoundTens {
        expr: Box<Expr>,
        tens: u8,
        ty: DataType,
    },
    /// A math function (`math.rs`): DOUBLE arguments, except a DECIMAL for FLOOR / CEIL /
    /// TRUNC and a DECIMAL or integer for SIGN (the binder casts the others).
    Math {
        func: MathFunc,
        args: Vec<Expr>,
    },
    /// A function that makes or tests strings (`strings.rs`), arguments cast by the binder
    /// to `StringFunc::argument_types` (ToText's keeps its type).
    StringFn {
        func: StringFunc,
        args: Vec<Expr>,
    },
    /// Fails with `SUBQUERY_ROWS_ERROR` where evaluated: the branch of a CASE that finds a
    /// scalar subquery of more than one row (`bind_scalar.rs`); typed as the CASE.
    ScalarSubqueryRows {
        ty: DataType,
    },
    /// quantile_cont / quantile_disc arithmetic over a group's count `n` of non-NULL
    /// values (`quantile.rs`): a position (BIGINT) from `args` [n], or the interpolation
    /// of [lo, hi, n] (of lo's type). The fraction is part of the code's shape.
    Quantile {
        op: QuantileOp,
        q: QuantileFraction,
        args: Vec<Expr>,
    },
    /// approx_count_distinct's HyperLogLog arithmetic (`hyperloglog.rs`, DuckDB's): the
    /// register and rank of a value (INTEGER; NULL for NULL), or the estimate (BIGINT) from
    /// a group's histogram of register values.
    Sketch {
        op: SketchOp,
        args: Vec<Expr>,
    },
}

/// DuckDB's error for a scalar subquery that returns several rows.
pub const SUBQUERY_ROWS_ERROR: &str =
    "More than one row returned by a subquery used as an expression - scalar subqueries can only return a single row.";

/// Character range [from, to) of SUBSTRING(… FROM start FOR len) in a string of `chars`
/// characters (shared by both backends).
pub fn substring_range(chars: i64, start: i64, len: Option<i64>) -> (i64, i64) {
    let end = len.map_or(i64::MAX, |l| start.saturating_add(l.max(0)));
    let from = (start.max(1) - 1).min(chars);
    let to = (end.saturating_sub(1)).clamp(from, chars);
    (from, to)
}

/// A LIKE pattern: each element is a literal byte, `_` (any one character: a UTF-8 lead
/// byte and its continuation bytes) or `%` (any run of characters). Literal bytes come in
/// whole characters, so matching them byte by byte from a character's start is matching
/// characters.
#[derive(Debug, Clone, PartialEq)]
pub struct LikePattern {
    pub text: String,
    pub items: Vec<LikeItem>,
    /// The parameter the pattern's text is, in a plan template (`parameters.rs`; None: a
    /// literal pattern).
    pub source: Option<Arc<ParamSource>>,
    /// The pattern as a DFA (`regex.rs`: `%` any run of characters, `_` one character, the
    /// whole string matched), which the GPU walks instead of matching wildcards; None where
    /// its table would not fit in shared memory.
    pub dfa: Option<Arc<RegexDfa>>,
}

/// Patterns whose bytes between `%`s number at most this many (and no `_`, `%` at both
/// ends) are matched by lock-step KMP (codegen `like_kmp.rs`: positions are stored as
/// bytes); others by the byte matcher.
pub const KMP_MAX_BYTES: usize = 250;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LikeItem {
    Byte(u8),
    One,
    Any,
}

impl LikePattern {
    /// Compiles `text`; `escape` makes the next character literal.
    pub fn new(text: &str, escape: Option<char>) -> Result<LikePattern, String> {
        let mut items = vec![];
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                let lit =
                    chars.next().ok_or_else(|| format!("LIKE pattern '{text}' ends with its escape character"))?;
                items.extend(lit.to_string().bytes().map(LikeItem::Byte));
            } else if c == '%' {
                if items.last() != Some(&LikeItem::Any) {
                    items.push(LikeItem::Any);
                }
            } else if c == '_' {
                items.push(LikeItem::One);
            } else {
                items.extend(c.to_string().bytes().map(LikeItem::Byte));
            }
        }
        let dfa = RegexDfa::from_like(&items);
        Ok(LikePattern { text: text.to_string(), items, source: None, dfa })
    }

    /// What the generated code depends on: the order of `%`, `_` and runs of bytes,
    /// whether the bytes fit KMP, and the shared-memory size of the DFA's table (a
    /// parameter's new text must keep them).
    pub fn form(&self) -> (Vec<u8>, bool, Option<usize>) {
        let mut form = vec![];
        for i in &self.items {
            let k = match i {
                LikeItem::Byte(_) => b'b',
                LikeItem::One => b'_',
                LikeItem::Any => b'%',
            };
            if k != b'b' || form.last() != Some(&b'b') {
                form.push(k);
            }
        }
        let bytes = self.items.iter().filter(|i| matches!(i, LikeItem::Byte(_))).count();
        (form, bytes <= KMP_MAX_BYTES, self.dfa.as_ref().map(|d| d.shared_entries()))
    }

    /// Greedy wildcard matching with backtracking to the last `%` (the same algorithm as
    /// the CUDA `like_match`).
    pub fn matches(&self, s: &[u8]) -> bool {
        let p = &self.items;
        let (mut si, mut pi) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            match p.get(pi) {
                Some(LikeItem::Any) => {
                    star = Some((pi, si));
                    pi += 1;
                }
                Some(LikeItem::One) => {
                    si = next_char(s, si);
                    pi += 1;
                }
                Some(LikeItem::Byte(b)) if *b == s[si] => {
                    si += 1;
                    pi += 1;
                }
                _ => match star {
                    Some((sp, ss)) => {
                        pi = sp + 1;
                        si = next_char(s, ss);
                        star = Some((sp, si));
                    }
                    None => return false,
                },
            }
        }
        p[pi..].iter().all(|i| *i == LikeItem::Any)
    }
}

impl Expr {
    /// Whether `left × right` of type `ty` is a DECIMAL product typed with fewer digits than
    /// its operands have together (DuckDB keeps two 64-bit decimals' product in 18 digits
    /// and caps every product at 38), so that it can overflow.
    pub fn decimal_product_narrowed(left: &Expr, right: &Expr, ty: &DataType) -> bool {
        match (left.ty(), right.ty(), ty) {
            (
                DataType::Decimal { precision: p1, .. },
                DataType::Decimal { precision: p2, .. },
                DataType::Decimal { precision, .. },
            ) => p1 as u16 + p2 as u16 > *precision as u16,
            _ => false,
        }
    }

    pub fn ty(&self) -> DataType {
        match self {
            Expr::Column { ty, .. }
            | Expr::ScalarSubqueryRows { ty }
            | Expr::Literal { ty, .. }
            | Expr::Parameter { ty, .. }
            | Expr::Binary { ty, .. }
            | Expr::Cast { ty, .. }
            | Expr::TryCast { ty, .. }
            | Expr::Case { ty, .. } => *ty,
            Expr::Not(_)
            | Expr::IsNull { .. }
            | Expr::InList { .. }
            | Expr::InSet { .. }
            | Expr::Like { .. }
            | Expr::Regex { .. } => DataType::Boolean,
            Expr::Extract { field: DateField::Epoch, .. } => DataType::Float64,
            Expr::Extract { .. } | Expr::Length(_) => DataType::Int64,
            Expr::RoundDouble { .. } => DataType::Float64,
            Expr::RoundTens { ty, .. } => *ty,
            Expr::Substring { .. } | Expr::RegexFind { .. } => DataType::Utf8,
            Expr::Negate(e) | Expr::Abs(e) => e.ty(),
            Expr::Math { func, args } => func.result_type(args[0].ty()),
            Expr::Quantile { op: QuantileOp::Interpolate, args, .. } => args[0].ty(),
            Expr::Quantile { .. } | Expr::Sketch { op: SketchOp::Estimate | SketchOp::GroupHash, .. } => {
                DataType::Int64
            }
            Expr::Sketch { .. } => DataType::Int32,
            Expr::StringFn { func, .. } => func.result_type(),
            Expr::DateAdd { .. } => DataType::Date,
            Expr::TimestampAdd { .. } | Expr::DateTrunc { .. } => DataType::Timestamp,
        }
    }

    /// Whether the expression can evaluate to NULL (conservative).
    pub fn nullable(&self) -> bool {
        match self {
            Expr::Column { nullable, .. } => *nullable,
            Expr::Literal { value, .. } | Expr::Parameter { value, .. } => value.is_null(),
            Expr::IsNull { .. } | Expr::Sketch { op: SketchOp::Estimate | SketchOp::GroupHash, .. } => false,
            Expr::TryCast { .. } | Expr::StringFn { func: StringFunc::TryStrptime, .. } => true,
            // (NULL values are skipped; only a NULL separator makes NULL.)
            Expr::StringFn { func: StringFunc::ConcatWs, args } => args[0].nullable(),
            Expr::Case { branches, else_expr, .. } => {
                else_expr.as_ref().is_none_or(|e| e.nullable()) || branches.iter().any(|(_, t)| t.nullable())
            }
            _ => self.children().iter().any(|c| c.nullable()),
        }
    }

    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column { .. } | Expr::Literal { .. } | Expr::Parameter { .. } | Expr::ScalarSubqueryRows { .. } => {
                vec![]
            }
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::Not(e)
            | Expr::Negate(e)
            | Expr::Abs(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::TryCast { expr: e, .. }
            | Expr::Like { expr: e, .. }
            | Expr::Regex { expr: e, .. } => vec![e],
            Expr::Extract { expr, .. }
            | Expr::Substring { expr, .. }
            | Expr::Length(expr)
            | Expr::RoundDouble { expr, .. }
            | Expr::RoundTens { expr, .. } => vec![expr],
            Expr::InSet { expr, .. } => vec![expr],
            Expr::RegexFind { expr, rewrite, .. } => std::iter::once(&**expr).chain(rewrite.as_deref()).collect(),
            Expr::TimestampAdd { expr, .. } | Expr::DateTrunc { expr, .. } => vec![expr],
            Expr::DateAdd { date, .. } => vec![date],
            Expr::Case { branches, else_expr, .. } => {
                let mut v: Vec<&Expr> = branches.iter().flat_map(|(w, t)| [w, t]).collect();
                if let Some(e) = else_expr {
                    v.push(e);
                }
                v
            }
            Expr::InList { expr, list, .. } => std::iter::once(&**expr).chain(list.iter()).collect(),
            Expr::Math { args, .. }
            | Expr::StringFn { args, .. }
            | Expr::Quantile { args, .. }
            | Expr::Sketch { args, .. } => args.iter().collect(),
        }
    }

    /// Rebuilds the expression bottom-up with `f` applied to every node after its children.
    pub fn transform(self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let mut t = |e: Box<Expr>| Box::new(e.transform(f));
        let rebuilt = match self {
            Expr::Binary { op, left, right, ty } => Expr::Binary { op, left: t(left), right: t(right), ty },
            Expr::Not(e) => Expr::Not(t(e)),
            Expr::Negate(e) => Expr::Negate(t(e)),
            Expr::Abs(e) => Expr::Abs(t(e)),
            Expr::IsNull { expr, negated } => Expr::IsNull { expr: t(expr), negated },
            Expr::Cast { expr, ty } => Expr::Cast { expr: t(expr), ty },
            Expr::TryCast { expr, ty } => Expr::TryCast { expr: t(expr), ty },
            Expr::DateAdd { date, months, days } => Expr::DateAdd { date: t(date), months, days },
            Expr::TimestampAdd { expr, months, days, micros } => {
                Expr::TimestampAdd { expr: t(expr), months, days, micros }
            }
            Expr::DateTrunc { unit, expr } => Expr::DateTrunc { unit, expr: t(expr) },
            Expr::Like { expr, pattern, negated } => Expr::Like { expr: t(expr), pattern, negated },
            Expr::Regex { expr, dfa, negated } => Expr::Regex { expr: t(expr), dfa, negated },
            Expr::RegexFind { expr, dfa, rewrite, global } => {
                Expr::RegexFind { expr: t(expr), dfa, rewrite: rewrite.map(&mut t), global }
            }
            Expr::InSet { expr, set, negated } => Expr::InSet { expr: t(expr), set, negated },
            Expr::Extract { field, expr } => Expr::Extract { field, expr: t(expr) },
            Expr::Substring { expr, start, len } => Expr::Substring { expr: t(expr), start, len },
            Expr::Length(expr) => Expr::Length(t(expr)),
            Expr::RoundDouble { expr, digits } => Expr::RoundDouble { expr: t(expr), digits },
            Expr::RoundTens { expr, tens, ty } => Expr::RoundTens { expr: t(expr), tens, ty },
            Expr::Math { func, args } => Expr::Math { func, args: args.into_iter().map(|e| e.transform(f)).collect() },
            Expr::StringFn { func, args } => {
                Expr::StringFn { func, args: args.into_iter().map(|e| e.transform(f)).collect() }
            }
            Expr::Quantile { op, q, args } => {
                Expr::Quantile { op, q, args: args.into_iter().map(|e| e.transform(f)).collect() }
            }
            Expr::Sketch { op, args } => Expr::Sketch { op, args: args.into_iter().map(|e| e.transform(f)).collect() },
            Expr::Case { branches, else_expr, ty } => Expr::Case {
                branches: branches.into_iter().map(|(w, th)| (w.transform(f), th.transform(f))).collect(),
                else_expr: else_expr.map(|e| Box::new(e.transform(f))),
                ty,
            },
            Expr::InList { expr, list, negated } => {
                Expr::InList { expr: t(expr), list: list.into_iter().map(|e| e.transform(f)).collect(), negated }
            }
            leaf => leaf,
        };
        f(rebuilt)
    }

    /// Whether `f` holds for this node or any below it.
    pub fn any(&self, f: &dyn Fn(&Expr) -> bool) -> bool {
        f(self) || self.children().into_iter().any(|c| c.any(f))
    }

    /// Column indices this expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        if let Expr::Column { index, .. } = self {
            if !out.contains(index) {
                out.push(*index);
            }
        }
        for c in self.children() {
            c.columns(out);
        }
    }

    /// Renumbers column references through `map` (old index -> new index).
    pub fn remap_columns(self, map: &dyn Fn(usize) -> usize) -> Expr {
        self.transform(&mut |e| match e {
            Expr::Column { index, name, ty, nullable } => Expr::Column { index: map(index), name, ty, nullable },
            other => other,
        })
    }

    /// Column `index` of `schema`, with its name, type and nullability.
    pub fn column_of(schema: &gpusql_common::Schema, index: usize) -> Expr {
        let f = &schema.fields[index];
        Expr::Column { index, name: f.name.clone(), ty: f.ty, nullable: f.nullable }
    }

    pub fn literal(value: ScalarValue, ty: DataType) -> Expr {
        Expr::Literal { value, ty }
    }

    pub fn is_literal(&self) -> bool {
        matches!(self, Expr::Literal { .. })
    }

    /// Splits a conjunction into its terms.
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::Binary { op: BinaryOp::And, left, right, .. } => {
                let mut v = left.conjuncts();
                v.extend(right.conjuncts());
                v
            }
            e => vec![e],
        }
    }
}

/// The constants of an expression that are not `Expr` nodes themselves (see
/// `ConstantNames::field`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConstantField {
    /// The pattern of an `Expr::Like` or `Expr::Regex`.
    Pattern,
    /// The set of an `Expr::InSet`.
    Set,
    /// The months, days and microseconds of an `Expr::DateAdd` / `Expr::TimestampAdd`.
    Months,
    Days,
    Micros,
}

/// How `Expr::display_with` shows the constants of a query (literals, LIKE patterns, IN
/// sets, interval amounts): a code generator that passes them to its kernel as
/// parameters prints the parameters' names instead of the values, so that the kernel's
/// text does not depend on them. None: the value, as `Display` prints it.
pub trait ConstantNames {
    /// What stands for literal `e` (an `Expr::Literal` or `Expr::Parameter`).
    fn literal(&self, e: &Expr) -> Option<String>;
    /// What stands for constant `field` of node `e`.
    fn field(&self, e: &Expr, field: ConstantField) -> Option<String>;
    /// What stands for the name of a column (the name of a computed column spells its
    /// expression, constants included: `sum(CASE WHEN (nation = 'BRAZIL') …)`).
    fn column(&self, _name: &str) -> Option<String> {
        None
    }
}

/// An expression displayed with `ConstantNames` (`Expr::display_with`).
pub struct ExprDisplay<'a> {
    expr: &'a Expr,
    names: Option<&'a dyn ConstantNames>,
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.write(f, self.names)
    }
}

/// The byte position of the character after the one starting at `i`.
fn next_char(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() && gpusql_common::semantics::utf8_continuation(s[j]) {
        j += 1;
    }
    j
}

impl Expr {
    /// The expression as a user wrote it, near enough for an error message: `Display`'s
    /// text without the column numbers (`(x % 0)`, not `(x#0 % 0)`).
    pub fn user_text(&self) -> String {
        let text = self.to_string();
        let mut out = String::with_capacity(text.len());
        let (mut chars, mut quoted) = (text.chars().peekable(), false);
        while let Some(c) = chars.next() {
            quoted ^= c == '\'';
            if c == '#' && !quoted && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The expression as `Display` prints it, but its constants as `names` says.
    pub fn display_with<'a>(&'a self, names: &'a dyn ConstantNames) -> ExprDisplay<'a> {
        ExprDisplay { expr: self, names: Some(names) }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, names: Option<&dyn ConstantNames>) -> fmt::Result {
        fn with<'a>(expr: &'a Expr, names: Option<&'a dyn ConstantNames>) -> ExprDisplay<'a> {
            ExprDisplay { expr, names }
        }
        let show = |e| with(e, names);
        let field = |field: ConstantField, value: &dyn fmt::Display| match names.and_then(|n| n.field(self, field)) {
            Some(name) => name,
            None => value.to_string(),
        };
        match self {
            Expr::Column { name, index, .. } => {
                let shown = names.and_then(|n| n.column(name));
                write!(f, "{}#{index}", shown.as_deref().unwrap_or(name))
            }
            Expr::Literal { value, ty } | Expr::Parameter { value, ty, .. } => {
                match names.and_then(|n| n.literal(self)) {
                    Some(name) => write!(f, "{name}"),
                    None => match value {
                        ScalarValue::Null => write!(f, "NULL"),
                        ScalarValue::Utf8(_) => write!(f, "{value}"),
                        ScalarValue::Date(_) => write!(f, "DATE '{}'", value.display(ty)),
                        ScalarValue::Timestamp(_) => write!(f, "TIMESTAMP '{}'", value.display(ty)),
                        v => write!(f, "{}", v.display(ty)),
                    },
                }
            }
            // (A DIVISION of integers is `//`; `/` always divides DOUBLEs.)
            Expr::Binary { op: BinaryOp::Div, left, right, ty } if *ty != DataType::Float64 => {
                write!(f, "({} // {})", show(left), show(right))
            }
            Expr::Binary { op, left, right, .. } => write!(f, "({} {} {})", show(left), op.symbol(), show(right)),
            Expr::Not(e) => write!(f, "NOT {}", show(e)),
            Expr::Negate(e) => write!(f, "-{}", show(e)),
            Expr::Abs(e) => write!(f, "abs({})", show(e)),
            Expr::IsNull { expr, negated } => {
                write!(f, "{} IS {}NULL", show(expr), if *negated { "NOT " } else { "" })
            }
            Expr::Cast { expr, ty } => write!(f, "CAST({} AS {ty})", show(expr)),
            Expr::TryCast { expr, ty } => write!(f, "TRY_CAST({} AS {ty})", show(expr)),
            Expr::DateAdd { date, months, days } => write!(
                f,
                "({} + {} months {} days)",
                show(date),
                field(ConstantField::Months, months),
                field(ConstantField::Days, days)
            ),
            Expr::TimestampAdd { expr, months, days, micros } => write!(
                f,
                "({} + {} months {} days {} us)",
                show(expr),
                field(ConstantField::Months, months),
                field(ConstantField::Days, days),
                field(ConstantField::Micros, micros)
            ),
            Expr::DateTrunc { unit, expr } => write!(f, "date_trunc('{}', {})", unit.name(), show(expr)),
            Expr::Extract { field, expr } => write!(f, "EXTRACT({field:?} FROM {})", show(expr)),
            Expr::Length(expr) => write!(f, "LENGTH({})", show(expr)),
            Expr::RoundDouble { expr, digits } => write!(f, "ROUND({}, {digits})", show(expr)),
            Expr::RoundTens { expr, tens, .. } => write!(f, "ROUND({}, -{tens})", show(expr)),
            Expr::ScalarSubqueryRows { .. } => write!(f, "error('more than one row in a scalar subquery')"),
            Expr::Math { func, args } => {
                let args: Vec<String> = args.iter().map(|a| show(a).to_string()).collect();
                write!(f, "{}({})", func.name(), args.join(", "))
            }
            Expr::Quantile { op, q, args } => {
                let args: Vec<String> = args.iter().map(|a| show(a).to_string()).collect();
                write!(f, "{}({}, {q})", op.name(), args.join(", "))
            }
            Expr::Sketch { op, args } => {
                let args: Vec<String> = args.iter().map(|a| show(a).to_string()).collect();
                write!(f, "{}({})", op.name(), args.join(", "))
            }
            Expr::StringFn { func: StringFunc::ToText, args } => write!(f, "CAST({} AS VARCHAR)", show(&args[0])),
            Expr::StringFn { func: StringFunc::Concat, args } => {
                let args: Vec<String> = args.iter().map(|a| show(a).to_string()).collect();
                write!(f, "({})", args.join(" || "))
            }
            Expr::StringFn { func, args } => {
                let args: Vec<String> = args.iter().map(|a| show(a).to_string()).collect();
                write!(f, "{}({})", func.name(), args.join(", "))
            }
            Expr::Substring { expr, start, len } => match len {
                Some(l) => write!(f, "SUBSTRING({} FROM {start} FOR {l})", show(expr)),
                None => write!(f, "SUBSTRING({} FROM {start})", show(expr)),
            },
            Expr::Like { expr, pattern, negated } => {
                let quoted = format!("'{}'", pattern.text.replace('\'', "''"));
                let pattern = field(ConstantField::Pattern, &quoted);
                write!(f, "{} {}LIKE {pattern}", show(expr), if *negated { "NOT " } else { "" })
            }
            Expr::Regex { expr, dfa, negated } => {
                let name = if dfa.full { "regexp_full_match" } else { "regexp_matches" };
                let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
                let pattern = field(ConstantField::Pattern, &quote(&dfa.pattern));
                let options = dfa.options.letters();
                let options = if options.is_empty() { String::new() } else { format!(", {}", quote(&options)) };
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{not}{name}({}, {pattern}{options})", show(expr))
            }
            Expr::RegexFind { expr, dfa, rewrite, global } => {
                let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
                let pattern = field(ConstantField::Pattern, &quote(&dfa.pattern));
                let letters = format!("{}{}", dfa.options.letters(), if *global { "g" } else { "" });
                let options = if letters.is_empty() { String::new() } else { format!(", {}", quote(&letters)) };
                match rewrite {
                    Some(r) => write!(f, "regexp_replace({}, {pattern}, {}{options})", show(expr), show(r)),
                    None if letters.is_empty() => write!(f, "regexp_extract({}, {pattern})", show(expr)),
                    None => write!(f, "regexp_extract({}, {pattern}, 0{options})", show(expr)),
                }
            }
            Expr::Case { branches, else_expr, .. } => {
                write!(f, "CASE")?;
                for (w, t) in branches {
                    write!(f, " WHEN {} THEN {}", show(w), show(t))?;
                }
                if let Some(e) = else_expr {
                    write!(f, " ELSE {}", show(e))?;
                }
                write!(f, " END")
            }
            Expr::InList { expr, list, negated } => {
                let items: Vec<String> = list.iter().map(|e| show(e).to_string()).collect();
                write!(f, "{} {}IN ({})", show(expr), if *negated { "NOT " } else { "" }, items.join(", "))
            }
            Expr::InSet { expr, set, negated } => {
                let set = field(ConstantField::Set, set);
                write!(f, "{} {}IN ({set})", show(expr), if *negated { "NOT " } else { "" })
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, None)
    }
}
