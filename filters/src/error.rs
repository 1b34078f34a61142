use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown filter '{name}'; valid filters: {valid}")]
    UnknownFilter { name: String, valid: String },
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
    #[error("{0}")]
    Io(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
