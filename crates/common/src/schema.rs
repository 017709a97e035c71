//! Columns and schemas of tables and plan nodes, and the catalog interface the binder uses.

use crate::DataType;

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
}

impl Field {
    pub fn new(name: impl Into<String>, ty: DataType, nullable: bool) -> Self {
        Field { name: name.into(), ty, nullable }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    pub fields: Vec<Field>,
}

impl Schema {
    pub fn new(fields: Vec<Field>) -> Self {
        Schema { fields }
    }
    pub fn len(&self) -> usize {
        self.fields.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name.eq_ignore_ascii_case(name))
    }
}

/// What the binder and planner know about a stored table.
#[derive(Debug, Clone)]
pub struct TableInfo {
    pub name: String,
    pub schema: Schema,
    pub row_count: usize,
}

/// Name resolution for the binder; implemented by the engine's catalog.
pub trait Catalog {
    fn table(&self, name: &str) -> Option<TableInfo>;
}
