use thiserror::Error;

/// Errors of the runtime. Bridges map the variants onto their own error conventions
/// (NumPy exception types, C status codes).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is wrong; the message names the file, the key and the valid choices.
    #[error("{0}")]
    Config(String),
    /// An instruction was rejected when recorded.
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
    /// A flush failed; names the engine and, where known, the instruction.
    #[error("{0}")]
    Engine(#[from] hassium_engine_abi::Error),
    #[error("{0}")]
    Fuser(#[from] hassium_fuser::Error),
    #[error("{0}")]
    Filter(#[from] hassium_filters::Error),
    /// A handle the caller passed names no live base.
    #[error("{0}")]
    UnknownBase(String),
    #[error("{0}")]
    OutOfMemory(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
