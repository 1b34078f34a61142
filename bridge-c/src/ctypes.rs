//! The types C sees. Enumerations that C passes *in* (dtypes, opcodes, operand kinds) are
//! `uint32_t` newtypes with named constants rather than Rust enums: a C caller can pass any
//! integer, and an out-of-range value in a Rust enum would be undefined behaviour before
//! Hassium could even check it. Statuses only flow out, so they are a real enum.

use hassium_core::{DType, Opcode};

/// The result of every call that can fail. `hs_last_error()` says what and where.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hs_status {
    HS_OK = 0,
    /// A handle or pointer argument was NULL.
    HS_ERR_NULL = 1,
    /// A handle was already freed with `hs_free`.
    HS_ERR_FREED = 2,
    /// Shapes do not broadcast, or do not match what the operation needs.
    HS_ERR_SHAPE = 3,
    /// The operation does not take this dtype, or the dtype number is unknown.
    HS_ERR_DTYPE = 4,
    /// An axis is out of range for the array.
    HS_ERR_AXIS = 5,
    /// An index or view lies outside its array, or a scalar outside its type's range.
    HS_ERR_BOUNDS = 6,
    /// An output overlaps an input in a way the operation cannot handle.
    HS_ERR_OVERLAP = 7,
    /// The configuration (hassium.toml, HASSIUM_* variables) is wrong.
    HS_ERR_CONFIG = 8,
    /// The engine failed to load or to run a batch.
    HS_ERR_ENGINE = 9,
    /// Any other invalid argument (unknown opcode, wrong operand count, bad handle value).
    HS_ERR_INVALID = 10,
    /// Host memory could not be allocated.
    HS_ERR_NOMEM = 11,
}

/// An array handle. Opaque: obtained from a creation function or an operation, given
/// back with `hs_free`.
pub struct hs_array {
    _opaque: [u8; 0],
}

/// An element type; values mirror hassium_core::DType.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hs_dtype(pub u32);

pub const HS_BOOL: hs_dtype = hs_dtype(0);
pub const HS_INT8: hs_dtype = hs_dtype(1);
pub const HS_INT16: hs_dtype = hs_dtype(2);
pub const HS_INT32: hs_dtype = hs_dtype(3);
pub const HS_INT64: hs_dtype = hs_dtype(4);
pub const HS_UINT8: hs_dtype = hs_dtype(5);
pub const HS_UINT16: hs_dtype = hs_dtype(6);
pub const HS_UINT32: hs_dtype = hs_dtype(7);
pub const HS_UINT64: hs_dtype = hs_dtype(8);
pub const HS_FLOAT16: hs_dtype = hs_dtype(9);
pub const HS_FLOAT32: hs_dtype = hs_dtype(10);
pub const HS_FLOAT64: hs_dtype = hs_dtype(11);
pub const HS_COMPLEX64: hs_dtype = hs_dtype(12);
pub const HS_COMPLEX128: hs_dtype = hs_dtype(13);
/// Returned by `hs_dtype_of` for an invalid handle.
pub const HS_DTYPE_INVALID: hs_dtype = hs_dtype(255);

impl hs_dtype {
    pub fn to_core(self) -> Option<DType> {
        u8::try_from(self.0).ok().and_then(DType::from_u8)
    }
    pub fn from_core(d: DType) -> hs_dtype {
        hs_dtype(d as u32)
    }
}

/// What an `hs_operand` holds.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hs_operand_kind(pub u32);

pub const HS_OPERAND_ARRAY: hs_operand_kind = hs_operand_kind(0);
pub const HS_OPERAND_INT: hs_operand_kind = hs_operand_kind(1);
pub const HS_OPERAND_FLOAT: hs_operand_kind = hs_operand_kind(2);
pub const HS_OPERAND_COMPLEX: hs_operand_kind = hs_operand_kind(3);

/// One input of an operation: an array, or a scalar constant. Scalars are "weak" as
/// Python numbers are in NumPy 2: `hs_multiply(hs_arr(x), hs_float(0.5))` keeps a float32
/// `x` float32. Build operands with `hs_arr`, `hs_int`, `hs_float`, `hs_complex`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hs_operand {
    pub kind: hs_operand_kind,
    /// The array, for `HS_OPERAND_ARRAY`.
    pub array: *const hs_array,
    /// The value, for `HS_OPERAND_INT`.
    pub int_value: i64,
    /// The value (real part), for `HS_OPERAND_FLOAT` and `HS_OPERAND_COMPLEX`.
    pub real: f64,
    /// The imaginary part, for `HS_OPERAND_COMPLEX`.
    pub imag: f64,
}

/// Reductions and scans over every axis (the flattened array): NumPy's `axis=None`.
pub const HS_AXIS_ALL: i64 = i64::MIN;

/// An omitted `start` or `stop` of `hs_slice`: Python's `None` in `a[start:stop:step]`.
pub const HS_NONE: i64 = i64::MIN;

/// An operation; values mirror hassium_core::Opcode (the bytecode's own numbers).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hs_opcode(pub u32);

impl hs_opcode {
    pub fn to_core(self) -> Option<Opcode> {
        u16::try_from(self.0).ok().and_then(Opcode::from_u16)
    }
}

// `HS_OP_ADD` … one constant per opcode, generated from the opcode table by build.rs
// (the header's `#define`s are generated from the same table, see tests/header.rs).
include!(concat!(env!("OUT_DIR"), "/opcodes.rs"));
