//! PRIMARY KEY and UNIQUE constraints of tables made by CREATE TABLE, and what an INSERT
//! does with a row whose key a row of the table already has.

/// A PRIMARY KEY or UNIQUE constraint: no two rows have the same values in `columns`
/// (rows with a NULL among them never clash; a primary key's columns are NOT NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueKey {
    pub columns: Vec<usize>,
    pub primary: bool,
}

/// What an INSERT does with a row whose key clashes with a row of the table, or with an
/// earlier row of the same INSERT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnConflict {
    /// `INSERT`: a constraint error, nothing inserted.
    #[default]
    Error,
    /// `INSERT OR IGNORE`, `ON CONFLICT DO NOTHING`: the new row is left out.
    Ignore,
    /// `INSERT OR REPLACE`: the table's row is replaced by the new one (of several new
    /// rows with one key, the first).
    Replace,
}
