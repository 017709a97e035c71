//! The one error type of the engine. Every failure a user can cause is one of these,
//! never a panic.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// SQL text that does not parse; line and column are 1-based.
    Syntax { message: String, line: u64, column: u64 },
    /// Names and types: unknown table/column, type mismatch, bad aggregate use.
    Plan(String),
    /// A name or value the user gave that is not valid outside a query's own names and
    /// types: an unknown setting, a value a setting does not take.
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
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn plan(msg: impl Into<String>) -> Self {
        Error::Plan(msg.into())
    }
    pub fn not_supported(what: impl Into<String>) -> Self {
        Error::NotSupported(what.into())
    }
    pub fn exec(msg: impl Into<String>) -> Self {
        Error::Execution(msg.into())
    }
}

fn gib(bytes: usize) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax { message, line, column } => {
                write!(f, "syntax error at line {line}, column {column}: {message}")
            }
            Error::Plan(m) | Error::InvalidInput(m) => write!(f, "{m}"),
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
