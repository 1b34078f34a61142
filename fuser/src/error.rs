use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown fuser '{name}'; valid fusers: {valid}")]
    UnknownFuser { name: String, valid: String },
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
