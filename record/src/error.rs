//! What recording can refuse, bridge-neutral: each bridge words it in its language (a
//! Python exception of NumPy's type, a C status with a message).

use hassium_core::DType;

/// How a ufunc was called, for the wording of "no loop" errors (NumPy's differ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Call {
    /// `ufunc(*inputs)`.
    Plain,
    /// `ufunc(*inputs, dtype=t)`: the loop was named.
    Dtype(DType),
    /// `ufunc.reduce(input)` (also `accumulate`: NumPy raises alike).
    Reduce,
}

#[derive(Debug)]
pub enum Error {
    /// The runtime refused an instruction or a base (also a bytecode error within).
    Runtime(hassium_vem::Error),
    /// A view operation refused (broadcast, index, reshape of a view).
    Bytecode(hassium_core::Error),
    /// An integer scalar that the operation's type cannot hold (NumPy 2's
    /// `OverflowError: Python integer 300 out of bounds for uint8`).
    IntOutOfBounds { value: i128, dtype: DType },
    /// A value that cannot be converted at all (NumPy's `OverflowError` from `int()`).
    Overflow(String),
    /// A type that the operation does not take (NumPy's `TypeError`).
    Type(String),
    /// Shapes that do not fit together (NumPy's `ValueError`).
    Shape(String),
    /// Any other bad argument value (NumPy's `ValueError`).
    Value(String),
    /// An index that does not fit the indexed array (NumPy's `IndexError`).
    Index(String),
    /// NumPy has no loop of `ufunc` for these types either (its `UFuncTypeError`).
    NoLoop {
        ufunc: &'static str,
        types: Vec<DType>,
        call: Call,
    },
    /// An input or output would be cast against `casting` (`input`: `None` for the output).
    Casting {
        ufunc: &'static str,
        input: Option<usize>,
        from: DType,
        to: DType,
        casting: String,
    },
    /// NumPy computes this but Hassium has no loop for it (the Python package falls back).
    Unsupported(String),
    /// An array whose bytes do not fit an `isize` (NumPy's `ValueError`).
    TooBig,
    /// An array larger than the system would allocate (NumPy's `MemoryError`).
    NoMemory { dtype: DType, shape: Vec<usize> },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<hassium_vem::Error> for Error {
    fn from(e: hassium_vem::Error) -> Error {
        Error::Runtime(e)
    }
}

impl From<hassium_core::Error> for Error {
    fn from(e: hassium_core::Error) -> Error {
        Error::Bytecode(e)
    }
}

impl std::fmt::Display for Error {
    /// The message in NumPy's words where NumPy has one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Runtime(e) => write!(f, "{e}"),
            Error::Bytecode(e) => write!(f, "{e}"),
            Error::IntOutOfBounds { value, dtype } => {
                write!(f, "integer {value} out of bounds for {}", dtype.name())
            }
            Error::Overflow(m)
            | Error::Type(m)
            | Error::Shape(m)
            | Error::Value(m)
            | Error::Index(m)
            | Error::Unsupported(m) => f.write_str(m),
            Error::NoLoop { ufunc, types, .. } => {
                let mut names: Vec<&str> = types.iter().map(|d| d.name()).collect();
                names.dedup();
                write!(
                    f,
                    "ufunc '{ufunc}' not supported for the input types ({})",
                    names.join(", ")
                )
            }
            Error::Casting {
                ufunc,
                input,
                from,
                to,
                casting,
            } => {
                let operand = input.map_or("output".to_string(), |i| format!("input {i}"));
                write!(
                    f,
                    "Cannot cast ufunc '{ufunc}' {operand} from dtype('{}') to dtype('{}') with casting rule '{casting}'",
                    from.name(),
                    to.name()
                )
            }
            Error::TooBig => f.write_str(
                "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.",
            ),
            Error::NoMemory { dtype, shape } => write!(
                f,
                "Unable to allocate an array with shape {} and data type {}",
                hassium_core::fmt_shape(shape),
                dtype.name()
            ),
        }
    }
}

impl std::error::Error for Error {}
