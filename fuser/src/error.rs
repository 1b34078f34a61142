use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown fuser '{name}'; valid fusers: {valid}")]
    UnknownFuser { name: String, valid: String },
    /// A partition breaks a fusion rule (reported by [`crate::check_partition`]).
    #[error("illegal partition: {0}")]
    IllegalPartition(String),
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
    #[error("cannot write the dump: {0}")]
    Io(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
