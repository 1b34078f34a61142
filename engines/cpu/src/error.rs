use thiserror::Error;

/// The CPU engine's own failures; they cross the ABI as `hassium_engine_abi::Error`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("[engines.cpu] {0}")]
    Config(String),
    /// The compiler ran and rejected the generated source; carries its stderr.
    #[error("compiling kernels with `{command}` failed:\n{stderr}")]
    Compile { command: String, stderr: String },
    #[error("kernel cache at {path}: {reason}")]
    Cache { path: String, reason: String },
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
}

impl From<Error> for hassium_engine_abi::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Bytecode(b) => hassium_engine_abi::Error::Bytecode(b),
            e => hassium_engine_abi::Error::Engine {
                engine: "cpu".into(),
                message: e.to_string(),
            },
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
