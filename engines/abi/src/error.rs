use thiserror::Error;

/// Errors crossing the engine boundary.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The library could not be opened or lacks the entry symbol.
    #[error("{path}: not a Hassium engine: {reason}")]
    NotAnEngine { path: String, reason: String },
    #[error("{path}: engine ABI version {found}, but this runtime speaks version {expected}; rebuild the engine")]
    VersionMismatch {
        path: String,
        found: u32,
        expected: u32,
    },
    /// The engine reported a failure; the message is the engine's own.
    #[error("{engine}: {message}")]
    Engine { engine: String, message: String },
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
    #[error("{0}")]
    Other(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
