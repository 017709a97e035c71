//! Scalar functions defined by other expressions, bound by rewriting the call:
//! COALESCE(a, b, …) = CASE WHEN a IS NOT NULL THEN a … ELSE last END, NULLIF(a, b) = CASE
//! WHEN a = b THEN NULL ELSE a END, and
//! YEAR / QUARTER / MONTH / DAY / HOUR / MINUTE / SECOND / … (d) = EXTRACT(… FROM d),
//! dayname / monthname (CASEs of the names), make_date (integer arithmetic), date_add(a, b)
//! = a + b. LENGTH, ROUND, date_trunc, date_part and last_day are bound in bind_expr with
//! the helpers below (which also checks the argument types of these date functions and
//! rewrites bool_and / bool_or). Aggregates with FILTER (WHERE c) aggregate
//! CASE WHEN c THEN arg END (NULL, which aggregates skip, where c is not TRUE).

use crate::bind_expr::AtSpan;
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::Expr;
use sqlparser::ast::{self, Spanned};

/// Parses an expression the binder writes itself (its parts are user expressions printed
/// back as SQL). The rewrites repeat arguments, so the work of nested calls doubles per
/// level: a recursion limit of 20 refuses them beyond ~18 levels. (sqlparser turns some
/// recursion-limit failures into other parses, caught by the end-of-input check.)
pub fn parse_expr(sql: &str, at: &impl Spanned) -> Result<ast::Expr> {
    parse_expr_within(sql, at, 20)
}

/// `parse_expr` with another recursion limit: for a rewrite that nests its parts deeply but
/// only once (an aggregate's, which cannot nest in another).
pub fn parse_expr_within(sql: &str, at: &impl Spanned, limit: usize) -> Result<ast::Expr> {
    let dialect = sqlparser::dialect::GenericDialect {};
    let parsed =
        sqlparser::parser::Parser::new(&dialect).with_recursion_limit(limit).try_with_sql(sql).and_then(|mut p| {
            let e = p.parse_expr()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(e)
        });
    // The text was printed from a parsed expression: what does not parse back is too deep.
    parsed.map_err(|_| Error::not_supported("COALESCE, NULLIF or date functions nested this deeply").at_span(at.span()))
}

/// The arguments of a call of plain expressions (no DISTINCT, ORDER BY, named or `*`
/// arguments), or None.
pub fn plain_arguments(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
    let ast::FunctionArguments::List(list) = &f.args else { return None };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    list.args
        .iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
            _ => None,
        })
        .collect()
}

/// Arguments of GREATEST / LEAST at most (each one more triples the rewritten text).
const MAX_GREATEST_ARGUMENTS: usize = 6;

/// The rewritten call, or None where `f` is not one of these functions.
pub fn rewrite_scalar_function(f: &ast::Function) -> Option<Result<ast::Expr>> {
    let name = f.name.to_string().to_ascii_lowercase();
    let field = date_function_field(&name);
    if field.is_none()
        && !matches!(
            name.as_str(),
            "coalesce"
                | "nullif"
                | "ifnull"
                | "mod"
                | "greatest"
                | "least"
                | "date_diff"
                | "datediff"
                | "date_sub"
                | "datesub"
                | "epoch_ms"
                | "epoch_us"
                | "epoch_ns"
                | "yearweek"
                | "isnan"
                | "isinf"
                | "isfinite"
                | "dayname"
                | "monthname"
                | "make_date"
                | "date_add"
                | "to_years"
                | "to_quarters"
                | "to_months"
                | "to_weeks"
                | "to_days"
                | "to_decades"
                | "to_centuries"
                | "to_millennia"
                | "to_hours"
                | "to_minutes"
                | "to_seconds"
                | "to_milliseconds"
                | "to_microseconds"
        )
    {
        return None;
    }
    let at = f.span();
    let Some(a) = plain_arguments(f) else {
        return Some(Err(Error::bind(format!("{name} takes plain arguments")).at_span(at)));
    };
    let wrong = |n: &str| Some(Err(Error::bind(format!("{name} takes {n}")).at_span(at)));
    let sql = match (name.as_str(), a.as_slice()) {
        ("coalesce", []) => return wrong("at least one argument"),
        ("coalesce", [rest @ .., last]) => {
            let whens: String = rest.iter().map(|x| format!(" WHEN ({x}) IS NOT NULL THEN ({x})")).collect();
            if whens.is_empty() {
                format!("({last})")
            } else {
                format!("CASE{whens} ELSE ({last}) END")
            }
        }
        ("nullif", [x, y]) => format!("CASE WHEN ({x}) = ({y}) THEN NULL ELSE ({x}) END"),
        ("mod", [x, y]) => format!("({x}) % ({y})"),
        ("ifnull", [x, y]) => format!("CASE WHEN ({x}) IS NOT NULL THEN ({x}) ELSE ({y}) END"),
        ("greatest" | "least", []) => return wrong("at least one argument"),
        // NULLs are skipped (NULL only where every argument is), as in DuckDB; each step
        // repeats the value so far three times, so the arguments are bounded.
        ("greatest" | "least", args) if args.len() > MAX_GREATEST_ARGUMENTS => {
            return Some(Err(
                Error::not_supported(format!("{name} of more than {MAX_GREATEST_ARGUMENTS} arguments")).at_span(at)
            ))
        }
        ("greatest" | "least", [first, rest @ ..]) => {
            let op = if name == "greatest" { ">=" } else { "<=" };
            rest.iter().fold(format!("({first})"), |acc, x| {
                format!("(CASE WHEN {acc} IS NULL THEN ({x}) WHEN ({x}) IS NULL THEN {acc} WHEN {acc} {op} ({x}) THEN {acc} ELSE ({x}) END)")
            })
        }
        ("date_diff" | "datediff", [unit, a, b]) => match date_diff(unit, a, b) {
            Some(sql) => sql,
            None => {
                return Some(Err(Error::not_supported(format!("{name} of unit {unit}")).at_span(unit.span())));
            }
        },
        ("date_diff" | "datediff", _) => return wrong("three arguments (a unit, a start and an end)"),
        ("date_sub" | "datesub", [unit, a, b]) => match date_sub(unit, a, b) {
            Some(sql) => sql,
            None => {
                return Some(Err(Error::not_supported(format!("{name} of unit {unit}")).at_span(unit.span())));
            }
        },
        ("date_sub" | "datesub", _) => return wrong("three arguments (a unit, a start and an end)"),
        // Microseconds since 1970-01-01 (milliseconds floored, as DuckDB; nanoseconds as
        // a BIGINT, so past 2262 out of range). The binder took DATE / TIMESTAMP only.
        ("epoch_us", [x]) => epoch_micros(x),
        ("epoch_ms", [x]) => {
            let us = epoch_micros(x);
            format!("(({us} - (({us} % 1000) + 1000) % 1000) // 1000)")
        }
        ("epoch_ns", [x]) => format!("({} * 1000)", epoch_micros(x)),
        // Intervals of whole months or days: the unit times the count, both 32-bit (DuckDB's
        // to_years … to_days cast the count to INTEGER and check the product).
        (
            "to_years" | "to_quarters" | "to_months" | "to_weeks" | "to_days" | "to_decades" | "to_centuries"
            | "to_millennia",
            [n],
        ) => {
            let unit = match name.as_str() {
                "to_years" => "1 year",
                "to_quarters" => "3 months",
                "to_months" => "1 month",
                "to_weeks" => "7 days",
                "to_days" => "1 day",
                "to_decades" => "10 years",
                "to_centuries" => "100 years",
                _ => "1000 years",
            };
            format!("(INTERVAL '{unit}' * CAST(({n}) AS INTEGER))")
        }
        // Intervals of microseconds (DuckDB's to_hours … to_microseconds keep them all in
        // the microseconds field): hours, minutes and microseconds from a BIGINT, seconds
        // and milliseconds from a DOUBLE (the product cast to BIGINT, as DuckDB).
        ("to_hours" | "to_minutes" | "to_microseconds", [n]) => {
            let scale = match name.as_str() {
                "to_hours" => " * 3600000000",
                "to_minutes" => " * 60000000",
                _ => "",
            };
            microseconds_interval(&format!("CAST(({n}) AS BIGINT){scale}"))
        }
        ("to_seconds" | "to_milliseconds", [x]) => {
            let scale = if name == "to_seconds" { "1000000" } else { "1000" };
            microseconds_interval(&format!("CAST(CAST(({x}) AS DOUBLE) * {scale} AS BIGINT)"))
        }
        ("yearweek", [d]) => format!("CAST(EXTRACT(ISOYEAR FROM ({d})) * 100 + EXTRACT(WEEK FROM ({d})) AS BIGINT)"),
        // (NaN equals NaN and is larger than every other DOUBLE, as in DuckDB.)
        ("isnan", [x]) => format!("(CAST(({x}) AS DOUBLE) = CAST('nan' AS DOUBLE))"),
        ("isinf", [x]) => format!("(abs(CAST(({x}) AS DOUBLE)) = CAST('inf' AS DOUBLE))"),
        ("isfinite", [x]) => format!("(abs(CAST(({x}) AS DOUBLE)) < CAST('inf' AS DOUBLE))"),
        ("dayname", [d]) => {
            let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
            let whens: String = names.iter().enumerate().map(|(k, n)| format!(" WHEN {k} THEN '{n}'")).collect();
            // (Days since 1970-01-01, a Thursday: DATE arithmetic, as EXTRACT(DOW) of a DATE
            // would convert it to a TIMESTAMP, whose range is smaller.)
            format!("CASE ((CAST(({d}) AS DATE) - DATE '1970-01-01') % 7 + 11) % 7{whens} END")
        }
        ("monthname", [d]) => {
            let whens: String = gpusql_common::date::MONTH_NAMES
                .iter()
                .enumerate()
                .map(|(k, n)| format!(" WHEN {} THEN '{n}'", k + 1))
                .collect();
            format!("CASE EXTRACT(MONTH FROM ({d})){whens} END")
        }
        ("make_date", [y, m, d]) => make_date(y, m, d),
        ("make_date", _) => return wrong("three arguments (year, month, day)"),
        // DuckDB's macro: a + b (DATE or TIMESTAMP and INTERVAL either way round; DATE
        // and days). An interval stays unparenthesized: the binder adds interval literals.
        ("date_add", [a, b]) => {
            let operand = |x: &ast::Expr| match x {
                ast::Expr::Interval(_) => x.to_string(),
                _ => format!("({x})"),
            };
            format!("({} + {})", operand(a), operand(b))
        }
        ("date_add", _) => return wrong("two arguments (a DATE or TIMESTAMP and an INTERVAL)"),
        (_, [d]) if field.is_some() => format!("EXTRACT({} FROM ({d}))", field.unwrap_or_default()),
        ("nullif" | "ifnull" | "mod", _) => return wrong("two arguments"),
        _ => return wrong("one argument"),
    };
    Some(parse_expr(&sql, f))
}

/// make_date(y, m, d) of integers: the day number of the proleptic Gregorian date (years
/// counted astronomically: 0 is 1 BC), with years shifted by 5,880,000 (a multiple of 400)
/// so that truncating division floors for every year of DuckDB's DATE range
/// (-5877641-06-25 … 5881580-07-10). A date that does not exist or lies outside that
/// range becomes day 2^31, whose conversion to DATE fails ("DATE out of range", DuckDB's
/// "Date out of range: y-m-d"); NULL arguments give NULL.
fn make_date(y: &ast::Expr, m: &ast::Expr, d: &ast::Expr) -> String {
    let big = |x: &ast::Expr| format!("CAST(({x}) AS BIGINT)");
    let (yb, mb, db) = (big(y), big(m), big(d));
    let leap = format!("(({y}) % 4 = 0 AND (({y}) % 100 <> 0 OR ({y}) % 400 = 0))");
    let month_days = format!(
        "CASE WHEN ({m}) = 2 THEN CASE WHEN {leap} THEN 29 ELSE 28 END WHEN ({m}) IN (4, 6, 9, 11) THEN 30 ELSE 31 END"
    );
    let valid = format!(
        "({m}) BETWEEN 1 AND 12 AND ({d}) BETWEEN 1 AND {month_days} AND {yb} * 10000 + {mb} * 100 + {db} BETWEEN -58776409375 AND 58815800710"
    );
    let shifted = format!("({yb} - CASE WHEN ({m}) <= 2 THEN 1 ELSE 0 END + 5880000)");
    let day_of_year = format!("(153 * CASE WHEN ({m}) > 2 THEN ({m}) - 3 ELSE ({m}) + 9 END + 2) // 5 + {db} - 1");
    let days =
        format!("365 * {shifted} + {shifted} // 4 - {shifted} // 100 + {shifted} // 400 + {day_of_year} - 2148345368");
    format!(
        "DATE '1970-01-01' + CASE WHEN ({y}) IS NULL OR ({m}) IS NULL OR ({d}) IS NULL OR ({valid}) THEN {days} ELSE 2147483648 END"
    )
}

/// date_diff(unit, a, b): the unit boundaries from a to b, as DuckDB (years, quarters and
/// months by their numbers; days between the dates; weeks are days // 7; hours, minutes
/// and seconds count from the days). None for a unit that is not a literal of these.
fn date_diff(unit: &ast::Expr, a: &ast::Expr, b: &ast::Expr) -> Option<String> {
    use gpusql_common::date::DateField as F;
    let ast::Expr::Value(v) = unit else { return None };
    let ast::Value::SingleQuotedString(text) = &v.value else { return None };
    let part = |f: &str| format!("(EXTRACT({f} FROM ({b})) - EXTRACT({f} FROM ({a})))");
    let days = format!("CAST(CAST(({b}) AS DATE) - CAST(({a}) AS DATE) AS BIGINT)");
    let hours = format!("({days} * 24 + {})", part("HOUR"));
    let minutes = format!("({hours} * 60 + {})", part("MINUTE"));
    Some(match F::parse(text)? {
        F::Year => part("YEAR"),
        F::Quarter => format!("({} * 4 + {})", part("YEAR"), part("QUARTER")),
        F::Month => format!("({} * 12 + {})", part("YEAR"), part("MONTH")),
        F::Week => format!("({days} // 7)"),
        F::Day => days,
        F::Hour => hours,
        F::Minute => minutes,
        F::Second => format!("({minutes} * 60 + {})", part("SECOND")),
        _ => return None,
    })
}

/// The microseconds of a timestamp's time of day (`x` a TIMESTAMP expression).
fn time_of_day(x: &str) -> String {
    format!(
        "(EXTRACT(HOUR FROM {x}) * 3600000000 + EXTRACT(MINUTE FROM {x}) * 60000000 + EXTRACT(MICROSECOND FROM {x}))"
    )
}

/// The microseconds from 1970-01-01 to a DATE or TIMESTAMP, as a BIGINT: the days between
/// their dates, and the time of day.
fn epoch_micros(x: &ast::Expr) -> String {
    let ts = format!("CAST(({x}) AS TIMESTAMP)");
    format!("(CAST(CAST({ts} AS DATE) - DATE '1970-01-01' AS BIGINT) * 86400000000 + {})", time_of_day(&ts))
}

/// date_sub(unit, a, b): the complete units from a to b, as DuckDB (BIGINT; negative
/// where b is before a). Units of a fixed length: the microseconds between them divided
/// by it, truncated. Months (and the years, quarters, decades, centuries and millennia
/// made of them): the month numbers' difference, one fewer where b's day and time of day
/// come before a's (for a before b; the other way round, the negated count from b to a).
/// Where b is its month's last day and a's day is later, a counts as that day (DuckDB:
/// 01-31 to 02-29 is one month). None for a unit that is not a literal of these.
fn date_sub(unit: &ast::Expr, a: &ast::Expr, b: &ast::Expr) -> Option<String> {
    let ast::Expr::Value(v) = unit else { return None };
    let ast::Value::SingleQuotedString(text) = &v.value else { return None };
    let unit = gpusql_common::date::unit_name(text)?;
    let micros = format!("({} - {})", epoch_micros(b), epoch_micros(a));
    let (a, b) = (format!("CAST(({a}) AS TIMESTAMP)"), format!("CAST(({b}) AS TIMESTAMP)"));
    let fixed = |per: i64| Some(format!("({micros} // {per})"));
    let months_per = match unit {
        "microsecond" => return fixed(1),
        "millisecond" => return fixed(1_000),
        "second" => return fixed(1_000_000),
        "minute" => return fixed(60_000_000),
        "hour" => return fixed(3_600_000_000),
        "day" => return fixed(86_400_000_000),
        "week" => return fixed(7 * 86_400_000_000),
        "month" => 1,
        "quarter" => 3,
        "year" => 12,
        "decade" => 120,
        "century" => 1200,
        "millennium" => 12000,
        _ => return None,
    };
    // Complete months from s to e, for s <= e.
    let forward = |s: &str, e: &str| {
        let field = |f: &str, x: &str| format!("EXTRACT({f} FROM {x})");
        let (ds, de) = (field("DAY", s), field("DAY", e));
        let (ts, te) = (time_of_day(s), time_of_day(e));
        let month_end = format!("EXTRACT(DAY FROM last_day({e}))");
        format!(
            "((({ye}) - ({ys})) * 12 + ({me}) - ({ms}) - CASE WHEN {de} = {month_end} AND {ds} > {de} THEN CASE WHEN {te} < {ts} THEN 1 ELSE 0 END WHEN {de} < {ds} OR ({de} = {ds} AND {te} < {ts}) THEN 1 ELSE 0 END)",
            ye = field("YEAR", e),
            ys = field("YEAR", s),
            me = field("MONTH", e),
            ms = field("MONTH", s),
        )
    };
    let months = format!("CASE WHEN {a} <= {b} THEN {} ELSE -{} END", forward(&a, &b), forward(&b, &a));
    Some(format!("CAST(({months}) // {months_per} AS BIGINT)"))
}

/// last_day(d): the first day of d's month (a DATE), which the binder moves a month on
/// and a day back (`Expr::DateAdd`: DATE arithmetic, no TIMESTAMP range on the way, as
/// DuckDB's). None for another function.
pub fn last_day_month_start(f: &ast::Function) -> Option<Result<ast::Expr>> {
    Some(
        single_argument(f, &["last_day"])?
            .and_then(|d| parse_expr(&format!("CAST(({d}) AS DATE) - (EXTRACT(DAY FROM ({d})) - 1)"), f)),
    )
}

/// The EXTRACT field of a function of one DATE / TIMESTAMP (DuckDB's names).
fn date_function_field(name: &str) -> Option<&'static str> {
    Some(match name {
        "year" => "YEAR",
        "quarter" => "QUARTER",
        "month" => "MONTH",
        "day" | "dayofmonth" => "DAY",
        "hour" => "HOUR",
        "minute" => "MINUTE",
        "second" => "SECOND",
        "millisecond" => "MILLISECOND",
        "microsecond" => "MICROSECOND",
        "dayofweek" | "weekday" => "DAYOFWEEK",
        "dayofyear" => "DAYOFYEAR",
        "epoch" => "EPOCH",
        "week" | "weekofyear" => "WEEK",
        "isodow" => "ISODOW",
        "isoyear" => "ISOYEAR",
        _ => return None,
    })
}

/// The two arguments of `name`(a, b) where the name is one of `names` (None: another
/// function).
fn two_arguments<'a>(f: &'a ast::Function, names: &[&str]) -> Option<Result<(&'a ast::Expr, &'a ast::Expr)>> {
    let name = f.name.to_string().to_ascii_lowercase();
    if !names.contains(&name.as_str()) {
        return None;
    }
    Some(match plain_arguments(f).as_deref() {
        Some([a, b]) => Ok((*a, *b)),
        _ => Err(Error::bind(format!("{name} takes two arguments")).at_span(f.span())),
    })
}

/// date_trunc('unit', x): the unit and the value.
pub fn date_trunc_arguments(f: &ast::Function) -> Option<Result<(&ast::Expr, &ast::Expr)>> {
    two_arguments(f, &["date_trunc", "datetrunc"])
}

/// date_part('field', x): the field and the value.
pub fn date_part_arguments(f: &ast::Function) -> Option<Result<(&ast::Expr, &ast::Expr)>> {
    two_arguments(f, &["date_part", "datepart"])
}

/// The argument of LENGTH / CHAR_LENGTH / CHARACTER_LENGTH (None: another function).
pub fn length_argument(f: &ast::Function) -> Option<Result<&ast::Expr>> {
    single_argument(f, &["length", "char_length", "character_length"])
}

/// The argument of `name`(x) where the name is one of `names` (None: another function).
pub fn single_argument<'a>(f: &'a ast::Function, names: &[&str]) -> Option<Result<&'a ast::Expr>> {
    let name = f.name.to_string().to_ascii_lowercase();
    if !names.contains(&name.as_str()) {
        return None;
    }
    Some(match plain_arguments(f).as_deref() {
        Some([x]) => Ok(*x),
        _ => Err(Error::bind(format!("{name} takes one argument")).at_span(f.span())),
    })
}

/// The arguments of ROUND(x [, digits]), digits an integer literal (None: another
/// function).
pub fn round_arguments(f: &ast::Function) -> Option<Result<(&ast::Expr, i32)>> {
    if !f.name.to_string().eq_ignore_ascii_case("round") {
        return None;
    }
    let at = f.span();
    let digits = |d: &ast::Expr| -> Result<i32> {
        let text = d.to_string();
        text.parse::<i32>().map_err(|_| {
            Error::not_supported(format!("ROUND with digits that are not an integer literal ({text})")).at_span(at)
        })
    };
    Some(match plain_arguments(f).as_deref() {
        Some([x]) => Ok((*x, 0)),
        Some([x, d]) => digits(d).map(|n| (*x, n)),
        _ => Err(Error::bind("round takes one or two arguments").at_span(at)),
    })
}

/// ROUND(x, digits) as DuckDB types it: a DOUBLE stays DOUBLE (`Expr::RoundDouble`);
/// negative digits of an integer or DECIMAL are `Expr::RoundTens`; a DECIMAL(p, s) with
/// 0 <= digits < s becomes DECIMAL(p, digits), a cast (which rounds halves away from zero),
/// and is unchanged otherwise; integers are unchanged.
pub fn bind_round(x: Expr, digits: i32, at: &ast::Expr) -> Result<Expr> {
    let unsupported = |what: &str| Err(Error::not_supported(format!("ROUND {what}")).at_span(at.span()));
    match x.ty() {
        DataType::Float64 => Ok(Expr::RoundDouble { expr: Box::new(x), digits }),
        t if digits < 0 => {
            let tens = u8::try_from(digits.unsigned_abs()).unwrap_or(u8::MAX);
            match gpusql_plan::math::round_tens_type(t, tens) {
                Some(ty) => Ok(Expr::RoundTens { expr: Box::new(x), tens, ty }),
                None => unsupported(&format!("of {t}")),
            }
        }
        DataType::Decimal { precision, scale } if (digits as u8) < scale => {
            Ok(crate::coerce::cast(x, DataType::Decimal { precision, scale: digits as u8 }))
        }
        DataType::Decimal { .. } | DataType::Int32 | DataType::Int64 => Ok(x),
        t => unsupported(&format!("of {t}")),
    }
}

/// The argument an aggregate with FILTER (WHERE `filter`) aggregates instead of `arg`
/// (None: COUNT(*)).
pub fn filtered_argument(arg: Option<&ast::Expr>, filter: &ast::Expr, at: &ast::Function) -> Result<ast::Expr> {
    let value = arg.map_or("1".to_string(), |x| format!("({x})"));
    parse_expr(&format!("CASE WHEN ({filter}) THEN {value} END"), at)
}

/// An INTERVAL of `micros` (a BIGINT) microseconds. An interval times an integer takes a
/// 32-bit factor (as DuckDB's), so the count goes in three parts of 2^32, 2^16 and one
/// microseconds; truncating division gives them all the count's sign, so no partial sum
/// passes the total.
fn microseconds_interval(micros: &str) -> String {
    format!(
        "(INTERVAL '4294967296 microseconds' * (({micros}) // 4294967296) \
         + INTERVAL '65536 microseconds' * (({micros}) % 4294967296 // 65536) \
         + INTERVAL '1 microsecond' * (({micros}) % 65536))"
    )
}
