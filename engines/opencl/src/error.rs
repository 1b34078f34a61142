use thiserror::Error;

/// The OpenCL engine's own failures; they cross the ABI as `hassium_engine_abi::Error`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("[engines.opencl] {0}")]
    Config(String),
    /// libOpenCL could not be loaded or lists no platform: the engine cannot start.
    #[error("no OpenCL platform: {0}")]
    NoPlatform(String),
    /// The configured device selection matched nothing; lists what was found.
    #[error("no OpenCL device matches {wanted}; found:\n{found}")]
    NoDevice { wanted: String, found: String },
    /// An OpenCL call failed; names the call and the error code.
    #[error("{call} failed: {code}")]
    Cl { call: String, code: String },
    /// The driver rejected the generated source; carries its build log.
    #[error("building an OpenCL program for {device} failed:\n{log}")]
    Build { device: String, log: String },
    /// Device memory ran out even after evicting every idle buffer to the host.
    #[error("out of device memory on {device}: {detail}")]
    OutOfMemory { device: String, detail: String },
    #[error("program cache at {path}: {reason}")]
    Cache { path: String, reason: String },
    /// Used in a process forked from the one that created the engine.
    #[error("the OpenCL engine was started by process {parent} and cannot run in this process ({child}), forked from it: OpenCL contexts and queues do not survive fork. Start worker processes with multiprocessing's \"spawn\" or \"forkserver\" method, or use the cpu stack in them (`python -m hassium` starts the engine at launch; HASSIUM_PRESTART=0 starts it at the first operation)")]
    Forked { parent: u32, child: u32 },
    #[error("{0}")]
    Bytecode(#[from] hassium_core::Error),
    #[error("{0}")]
    Child(#[from] hassium_engine_abi::Error),
}

impl Error {
    /// Wraps an OpenCL error code from `call`.
    pub(crate) fn cl(call: &str, e: opencl3::error_codes::ClError) -> Error {
        let code = e.0;
        Error::Cl {
            call: call.to_string(),
            code: format!("{} ({code})", opencl3::error_codes::error_text(code)),
        }
    }
}

impl From<Error> for hassium_engine_abi::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Bytecode(b) => hassium_engine_abi::Error::Bytecode(b),
            Error::Child(c) => c,
            e => hassium_engine_abi::Error::Engine {
                engine: "opencl".into(),
                message: e.to_string(),
            },
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
