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
    /// An instruction failed while it ran, on the values it read: an index out of range
    /// in a gather or scatter, an integer raised to a negative power. The engine ran the
    /// call's kernels in order and stopped there: every kernel before the one holding
    /// instruction `index` completed, that kernel may have written part of its outputs,
    /// and none after it ran. The runtime completes the rest of the batch and marks what
    /// depends on the failure as invalid (vem's `poison`), so no array reads back
    /// garbage. Names the instruction, as `InInstr` does.
    #[error("instruction {index} ({op}): {source}")]
    Failed {
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
            Error::InInstr { source, .. } | Error::Failed { source, .. } => source.root(),
            e => e,
        }
    }

    /// The failing instruction of a run-time failure (see [`Error::Failed`]).
    pub fn failed_instr(&self) -> Option<usize> {
        match self {
            Error::Failed { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// The kind of the innermost error as a number that crosses the engine ABI with its
    /// message; [`Error::from_kind`] turns the two back into the error.
    pub fn kind(&self) -> u32 {
        match self.root() {
            Error::ShapeMismatch(_) => 1,
            Error::OutOfBounds(_) => 2,
            Error::DTypeNotAllowed(_) => 3,
            Error::BadAxis(_) => 4,
            Error::Overlap(_) => 5,
            _ => 0,
        }
    }

    /// The error of kind `kind` (from [`Error::kind`]) with message `msg`.
    pub fn from_kind(kind: u32, msg: String) -> Error {
        match kind {
            1 => Error::ShapeMismatch(msg),
            2 => Error::OutOfBounds(msg),
            3 => Error::DTypeNotAllowed(msg),
            4 => Error::BadAxis(msg),
            5 => Error::Overlap(msg),
            _ => Error::Invalid(msg),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
