//! CAST and TRY_CAST, typed literals (`DATE '…'`), and SQL type names.

use crate::bind_expr::{AtSpan, Context};
use crate::coerce::cast;
use crate::literal;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::Expr;
use sqlparser::ast::{self, Spanned};

impl Context<'_> {
    /// CAST(x AS type) and x::type.
    pub(crate) fn bind_cast(&self, x: &ast::Expr, data_type: &ast::DataType, whole: &ast::Expr) -> Result<Expr> {
        let ty = sql_type(data_type).map_err(|e| e.at_span(whole.span()))?;
        let inner = self.bind(x)?;
        let from = inner.ty();
        let mut cols = vec![];
        inner.columns(&mut cols);
        // Text <-> DATE / TIMESTAMP of constants only, evaluated here (the GPU makes no
        // strings from dates, parses none; constant folding leaves CASE branches).
        let constant_text = cols.is_empty()
            && !gpusql_plan::parameters::has_parameters(&inner)
            && matches!(
                (from, ty),
                (DataType::Utf8, DataType::Date | DataType::Timestamp)
                    | (DataType::Date | DataType::Timestamp | DataType::Interval, DataType::Utf8)
            );
        let unsupported = || Err(Error::not_supported(format!("CAST from {from} to {ty}")).at_span(whole.span()));
        match &inner {
            Expr::Literal { value: ScalarValue::Utf8(s), .. } => {
                let s = s.clone();
                cast_string_literal(inner, ty, &s)
            }
            Expr::Literal { value: ScalarValue::Null, .. } => Ok(cast(inner, ty)),
            _ if constant_text => {
                let value = gpusql_plan::eval::eval(&cast(inner, ty), &[]).map_err(|err| match err {
                    Error::Execution(m) => Error::Bind(m).at_span(whole.span()),
                    other => other,
                })?;
                Ok(Expr::literal(value, ty))
            }
            _ if ty == DataType::Utf8 && from != DataType::Utf8 => {
                crate::bind_string::as_text(inner).map_err(|e| e.at_span(whole.span()))
            }
            // Text columns read as numbers, BOOLEAN, DATE and TIMESTAMP (`text_cast`).
            _ if from == DataType::Utf8 && gpusql_common::text_cast::reads_as(&ty) => Ok(cast(inner, ty)),
            _ if from == DataType::Utf8 && ty != DataType::Utf8 => unsupported(),
            // DATE <-> TIMESTAMP; neither from or to numbers (DuckDB refuses those too).
            _ if matches!(
                (from, ty),
                (DataType::Date, DataType::Timestamp) | (DataType::Timestamp, DataType::Date)
            ) =>
            {
                Ok(cast(inner, ty))
            }
            _ if from != ty && matches!(from, DataType::Date | DataType::Timestamp) => unsupported(),
            _ if from != ty && ty == DataType::Timestamp => unsupported(),
            _ => Ok(cast(inner, ty)),
        }
    }

    /// TRY_CAST(x AS type): NULL where the value does not convert. Text reads as CAST reads
    /// it; numbers out of the type's range are NULL; casts that cannot fail are CASTs.
    pub(crate) fn bind_try_cast(&self, x: &ast::Expr, data_type: &ast::DataType, whole: &ast::Expr) -> Result<Expr> {
        let ty = sql_type(data_type).map_err(|e| e.at_span(whole.span()))?;
        let inner = self.bind(x)?;
        let from = inner.ty();
        let can_fail = match (from, ty) {
            _ if from == ty || matches!(inner, Expr::Literal { value: ScalarValue::Null, .. }) => false,
            (DataType::Utf8, to) => {
                if !gpusql_common::text_cast::reads_as(&to) {
                    return Err(Error::not_supported(format!("TRY_CAST from VARCHAR to {to}")).at_span(whole.span()));
                }
                true
            }
            (_, DataType::Utf8) | (DataType::Timestamp, DataType::Date) => false,
            (DataType::Date, DataType::Timestamp) => true,
            (f, t) if f.is_numeric() && t.is_numeric() => true,
            (DataType::Boolean, DataType::Int32 | DataType::Int64) => false,
            _ => return Err(Error::not_supported(format!("TRY_CAST from {from} to {ty}")).at_span(whole.span())),
        };
        if !can_fail {
            return self.bind_cast(x, data_type, whole);
        }
        Ok(Expr::TryCast { expr: Box::new(inner), ty })
    }
}

/// `DATE '…'`, `TIMESTAMP '…'` and other `<type> '…'` literals.
pub(crate) fn typed_string(ts: &ast::TypedString) -> Result<Expr> {
    let text = match &ts.value.value {
        ast::Value::SingleQuotedString(s) => s.clone(),
        other => other.to_string(),
    };
    match &ts.data_type {
        ast::DataType::Date => literal::date_literal(&text),
        ast::DataType::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            literal::timestamp_literal(&text)
        }
        other => {
            let ty = sql_type(other)?;
            let lit = Expr::literal(ScalarValue::Utf8(text.clone()), DataType::Utf8);
            cast_string_literal(lit, ty, &text)
        }
    }
}

pub(crate) fn cast_string_literal(lit: Expr, ty: DataType, text: &str) -> Result<Expr> {
    match ty {
        DataType::Utf8 => Ok(lit),
        DataType::Date | DataType::Timestamp => literal::datetime_literal(text, ty),
        DataType::Interval => {
            let iv = literal::interval_text(text)
                .map_err(|_| Error::bind(format!("Could not convert string '{text}' to INTERVAL")))?;
            Ok(Expr::literal(ScalarValue::Interval(iv), ty))
        }
        // As a text column reads (`text_cast`); a DOUBLE beyond the GPU's exact reading is
        // read here on the host, correctly rounded as DuckDB reads it.
        _ => match gpusql_plan::eval::cast(ScalarValue::Utf8(text.to_string()), &DataType::Utf8, &ty) {
            Ok(v) => Ok(Expr::literal(v, ty)),
            Err(Error::NotSupported(_)) if ty == DataType::Float64 => text
                .trim()
                .replace('_', "")
                .parse::<f64>()
                .map(|f| Expr::literal(ScalarValue::Float64(f), ty))
                .map_err(|_| gpusql_common::text_cast::conversion_error(&ty, Some(text.as_bytes()))),
            Err(e) => Err(e),
        },
    }
}

/// SQL type names -> engine types.
pub fn sql_type(t: &ast::DataType) -> Result<DataType> {
    use ast::DataType as T;
    Ok(match t {
        T::Int(_) | T::Integer(_) | T::Int4(_) | T::SmallInt(_) | T::TinyInt(_) | T::Int2(_) => DataType::Int32,
        T::BigInt(_) | T::Int8(_) | T::Int64 => DataType::Int64,
        T::Double(_) | T::DoublePrecision | T::Float8 | T::Float64 => DataType::Float64,
        // DuckDB's FLOAT (REAL, FLOAT4, FLOAT(p ≤ 24)) is single precision: its values,
        // arithmetic and text differ from DOUBLE's, so it is refused rather than widened.
        T::Float(ast::ExactNumberInfo::Precision(p)) if *p > 24 => DataType::Float64,
        T::Float(_) | T::Real | T::Float4 => {
            return Err(Error::not_supported("type FLOAT (single precision; DOUBLE is supported)"))
        }
        T::Decimal(info) | T::Numeric(info) | T::Dec(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (18, 3),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s as u64),
            };
            if p == 0 || p > 38 || s > p {
                return Err(Error::bind(format!("invalid DECIMAL({p},{s}): precision 1..38, scale <= precision")));
            }
            DataType::decimal(p as u8, s as u8)
        }
        T::Date => DataType::Date,
        T::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone)
        | T::TimestampNtz(None)
        | T::Datetime(None) => DataType::Timestamp,
        T::Boolean | T::Bool => DataType::Boolean,
        T::Interval { fields: None, precision: None } => DataType::Interval,
        T::Varchar(_)
        | T::Char(_)
        | T::Character(_)
        | T::CharVarying(_)
        | T::CharacterVarying(_)
        | T::Text
        | T::String(_)
        | T::Nvarchar(_) => DataType::Utf8,
        other => return Err(Error::not_supported(format!("type {other}"))),
    })
}
