//! A generated value: a C expression for the value and one for "is NULL" ("false" when
//! the value cannot be NULL).

#[derive(Debug, Clone)]
pub struct Value {
    pub v: String,
    pub null: String,
}

impl Value {
    pub fn not_null(v: impl Into<String>) -> Self {
        Value { v: v.into(), null: "false".into() }
    }
    pub fn is_never_null(&self) -> bool {
        self.null == "false"
    }
}

/// Values of the current row's columns, as C expressions (loaded beforehand).
pub type Row = [Value];
