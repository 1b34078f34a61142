use thiserror::Error;

/// Why a kernel could not be rendered. `Unsupported` is not a failure of the program: the
/// engine runs such kernels on its interpreter instead.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The kernel uses something the renderer does not emit (complex dtypes, an extension
    /// method, a fusion structure outside the supported shapes); names what.
    #[error("codegen does not render {0}")]
    Unsupported(String),
    /// The kernel is malformed (shapes that do not agree with its iteration shape, …).
    #[error("malformed kernel: {0}")]
    Malformed(String),
    /// The program asks for something NumPy refuses (NumPy's `ValueError` wording).
    #[error("{0}")]
    Value(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
