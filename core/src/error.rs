use thiserror::Error;

/// Errors of the bytecode layer. Messages follow NumPy's wording where NumPy has one, so
/// the bridges can pass them through unchanged.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    #[error("{0}")]
    ShapeMismatch(String),
    #[error("{0}")]
    OutOfBounds(String),
    #[error("{0}")]
    DTypeNotAllowed(String),
    #[error("{0}")]
    BadAxis(String),
    #[error("{0}")]
    Overlap(String),
    #[error("{0}")]
    Invalid(String),
    /// An instruction of a batch failed verification; names the instruction.
    #[error("instruction {index} ({op}): {source}")]
    InInstr {
        index: usize,
        op: &'static str,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// The innermost error, without the instruction wrapper.
    pub fn root(&self) -> &Error {
        match self {
            Error::InInstr { source, .. } => source.root(),
            e => e,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
