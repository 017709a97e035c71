//! The one error type of the engine. Every failure a user can cause is one of these,
//! never a panic.
//!
//! An error about a place in the statement's text is wrapped in [`Error::At`], which
//! holds the place as numbers (so a caller can move it, e.g. into a whole script, or
//! point at it); [`Error::kind`] looks through the wrapper to the error itself.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// SQL text that does not parse, or nests expressions too deeply to be processed.
    Syntax(String),
    /// A statement whose names or types do not check: unknown table or column, an
    /// ambiguous name, mismatched types, a wrong number of arguments, an aggregate where
    /// none may be, a constant that does not convert to its type.
    Bind(String),
    /// A name or value the user gave outside a statement's own names and types: an
    /// unknown setting or a value it does not take, a table name already taken, a file
    /// option that does not apply, an unknown backend or data set table.
    InvalidInput(String),
    /// Valid SQL that this engine does not implement (yet).
    NotSupported(String),
    /// Runtime failures of a query: division by zero, overflow, bad cast.
    Execution(String),
    /// The GPU or its libraries: no driver, NVRTC compile failure, launch failure.
    Gpu(String),
    /// GPU memory exhausted; names what did not fit.
    OutOfMemory { what: String, requested: usize, free: usize },
    /// Files, data generation, anything outside the query.
    Io(String),
    /// Planning failed where it should not have: an invariant of the planner, optimizer
    /// or executor broke. A bug, not something the user did.
    Plan(String),
    /// The statement was cancelled (`CancelToken::cancel`, the shell's Ctrl-C) before it
    /// finished; nothing it would have changed was changed.
    Cancelled,
    /// `error` at a place in the statement's text: 1-based line and column, counted in
    /// characters (as sqlparser counts them). Never wraps another `At`.
    At { error: Box<Error>, line: u64, column: u64 },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn bind(msg: impl Into<String>) -> Self {
        Error::Bind(msg.into())
    }
    pub fn plan(msg: impl Into<String>) -> Self {
        Error::Plan(msg.into())
    }
    pub fn not_supported(what: impl Into<String>) -> Self {
        Error::NotSupported(what.into())
    }
    pub fn exec(msg: impl Into<String>) -> Self {
        Error::Execution(msg.into())
    }

    /// This error at (`line`, `column`), unless it already has a place: the innermost
    /// place, where the error arose, is the most precise one.
    pub fn at(self, line: u64, column: u64) -> Self {
        match self {
            Error::At { .. } => self,
            error => Error::At { error: Box::new(error), line, column },
        }
    }

    /// Where in the statement's text the error is: (line, column), 1-based.
    pub fn position(&self) -> Option<(u64, u64)> {
        match self {
            Error::At { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    /// The error without its place: the variant to match on.
    pub fn kind(&self) -> &Error {
        match self {
            Error::At { error, .. } => error.kind(),
            other => other,
        }
    }

    /// The error without its place, owned, and the place.
    pub fn into_parts(self) -> (Error, Option<(u64, u64)>) {
        match self {
            Error::At { error, line, column } => (error.into_parts().0, Some((line, column))),
            other => (other, None),
        }
    }

    /// The error with its place moved by `f` (e.g. from a statement into the script it
    /// was cut from).
    pub fn map_position(self, f: impl FnOnce(u64, u64) -> (u64, u64)) -> Self {
        match self.into_parts() {
            (error, Some((line, column))) => {
                let (line, column) = f(line, column);
                Error::At { error: Box::new(error), line, column }
            }
            (error, None) => error,
        }
    }

    /// The error with its place written into its message, as Display writes it, for a
    /// place in some other text than the statement's (a view's query).
    pub fn position_into_message(self) -> Self {
        match self.into_parts() {
            (error, Some((line, column))) => error.map_message(|m| format!("{m} (line {line}, column {column})")),
            (error, None) => error,
        }
    }

    /// The error with `f` applied to its message (and its place kept). Out-of-memory
    /// errors and cancellations, which have no message of their own, stay as they are.
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        match self {
            Error::Syntax(m) => Error::Syntax(f(m)),
            Error::Bind(m) => Error::Bind(f(m)),
            Error::InvalidInput(m) => Error::InvalidInput(f(m)),
            Error::NotSupported(m) => Error::NotSupported(f(m)),
            Error::Execution(m) => Error::Execution(f(m)),
            Error::Gpu(m) => Error::Gpu(f(m)),
            Error::Io(m) => Error::Io(f(m)),
            Error::Plan(m) => Error::Plan(f(m)),
            Error::At { error, line, column } => Error::At { error: Box::new(error.map_message(f)), line, column },
            other @ (Error::OutOfMemory { .. } | Error::Cancelled) => other,
        }
    }
}

fn gib(bytes: usize) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax(m) => write!(f, "syntax error: {m}"),
            Error::Bind(m) | Error::InvalidInput(m) | Error::Plan(m) => write!(f, "{m}"),
            Error::NotSupported(m) => write!(f, "not supported: {m}"),
            Error::Execution(m) => write!(f, "execution error: {m}"),
            Error::Gpu(m) => write!(f, "GPU error: {m}"),
            Error::OutOfMemory { what, requested, free } => write!(
                f,
                "GPU out of memory: {what} needs {:.2} GiB, {:.2} GiB free (use a smaller scale factor or the CPU backend)",
                gib(*requested),
                gib(*free)
            ),
            Error::Io(m) => write!(f, "I/O error: {m}"),
            Error::Cancelled => write!(f, "query cancelled"),
            Error::At { error, line, column } => match error.kind() {
                Error::Syntax(m) => write!(f, "syntax error at line {line}, column {column}: {m}"),
                inner => write!(f, "{inner} (line {line}, column {column})"),
            },
        }
    }
}

impl std::error::Error for Error {}

impl From<arrow::error::ArrowError> for Error {
    fn from(e: arrow::error::ArrowError) -> Self {
        Error::Execution(format!("arrow: {e}"))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_kept_apart_from_the_message() {
        let e = Error::bind("unknown column 'x'").at(1, 8);
        assert_eq!(e.to_string(), "unknown column 'x' (line 1, column 8)");
        assert_eq!(e.position(), Some((1, 8)));
        assert_eq!(e.kind(), &Error::bind("unknown column 'x'"));
        // The innermost place wins.
        assert_eq!(e.clone().at(2, 1).position(), Some((1, 8)));
        let moved = e.map_position(|l, c| (l + 1, c + 10));
        assert_eq!(moved.to_string(), "unknown column 'x' (line 2, column 18)");
        let s = Error::Syntax("Expected: an expression, found: =".into()).at(2, 18);
        assert_eq!(s.to_string(), "syntax error at line 2, column 18: Expected: an expression, found: =");
        assert_eq!(Error::not_supported("ILIKE").at(1, 3).to_string(), "not supported: ILIKE (line 1, column 3)");
        assert_eq!(Error::bind("x").position(), None);
    }
}
