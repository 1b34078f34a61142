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

// elementwise: arithmetic
pub const HS_OP_ADD: hs_opcode = hs_opcode(1);
pub const HS_OP_SUBTRACT: hs_opcode = hs_opcode(2);
pub const HS_OP_MULTIPLY: hs_opcode = hs_opcode(3);
pub const HS_OP_DIVIDE: hs_opcode = hs_opcode(4);
pub const HS_OP_FLOOR_DIVIDE: hs_opcode = hs_opcode(5);
pub const HS_OP_REMAINDER: hs_opcode = hs_opcode(6);
pub const HS_OP_POWER: hs_opcode = hs_opcode(7);
pub const HS_OP_NEGATIVE: hs_opcode = hs_opcode(8);
pub const HS_OP_POSITIVE: hs_opcode = hs_opcode(9);
pub const HS_OP_ABSOLUTE: hs_opcode = hs_opcode(10);
pub const HS_OP_SIGN: hs_opcode = hs_opcode(11);
pub const HS_OP_MAXIMUM: hs_opcode = hs_opcode(12);
pub const HS_OP_MINIMUM: hs_opcode = hs_opcode(13);
pub const HS_OP_FMAX: hs_opcode = hs_opcode(14);
pub const HS_OP_FMIN: hs_opcode = hs_opcode(15);
/// C's `fmod`: the remainder with the dividend's sign (integers: 0 for a zero divisor).
pub const HS_OP_FMOD: hs_opcode = hs_opcode(16);
pub const HS_OP_COPYSIGN: hs_opcode = hs_opcode(17);
// elementwise: comparisons
pub const HS_OP_EQUAL: hs_opcode = hs_opcode(20);
pub const HS_OP_NOT_EQUAL: hs_opcode = hs_opcode(21);
pub const HS_OP_LESS: hs_opcode = hs_opcode(22);
pub const HS_OP_LESS_EQUAL: hs_opcode = hs_opcode(23);
pub const HS_OP_GREATER: hs_opcode = hs_opcode(24);
pub const HS_OP_GREATER_EQUAL: hs_opcode = hs_opcode(25);
// elementwise: logical and bitwise
pub const HS_OP_LOGICAL_AND: hs_opcode = hs_opcode(30);
pub const HS_OP_LOGICAL_OR: hs_opcode = hs_opcode(31);
pub const HS_OP_LOGICAL_XOR: hs_opcode = hs_opcode(32);
pub const HS_OP_LOGICAL_NOT: hs_opcode = hs_opcode(33);
pub const HS_OP_BITWISE_AND: hs_opcode = hs_opcode(34);
pub const HS_OP_BITWISE_OR: hs_opcode = hs_opcode(35);
pub const HS_OP_BITWISE_XOR: hs_opcode = hs_opcode(36);
pub const HS_OP_INVERT: hs_opcode = hs_opcode(37);
pub const HS_OP_LEFT_SHIFT: hs_opcode = hs_opcode(38);
pub const HS_OP_RIGHT_SHIFT: hs_opcode = hs_opcode(39);
// elementwise: powers, exponentials, logarithms
pub const HS_OP_SQRT: hs_opcode = hs_opcode(40);
pub const HS_OP_CBRT: hs_opcode = hs_opcode(41);
pub const HS_OP_SQUARE: hs_opcode = hs_opcode(42);
pub const HS_OP_RECIPROCAL: hs_opcode = hs_opcode(43);
pub const HS_OP_EXP: hs_opcode = hs_opcode(44);
pub const HS_OP_EXP2: hs_opcode = hs_opcode(45);
pub const HS_OP_EXPM1: hs_opcode = hs_opcode(46);
pub const HS_OP_LOG: hs_opcode = hs_opcode(47);
pub const HS_OP_LOG2: hs_opcode = hs_opcode(48);
pub const HS_OP_LOG10: hs_opcode = hs_opcode(49);
pub const HS_OP_LOG1P: hs_opcode = hs_opcode(50);
// elementwise: trigonometric and hyperbolic
pub const HS_OP_SIN: hs_opcode = hs_opcode(55);
pub const HS_OP_COS: hs_opcode = hs_opcode(56);
pub const HS_OP_TAN: hs_opcode = hs_opcode(57);
pub const HS_OP_ARCSIN: hs_opcode = hs_opcode(58);
pub const HS_OP_ARCCOS: hs_opcode = hs_opcode(59);
pub const HS_OP_ARCTAN: hs_opcode = hs_opcode(60);
pub const HS_OP_ARCTAN2: hs_opcode = hs_opcode(61);
pub const HS_OP_HYPOT: hs_opcode = hs_opcode(62);
pub const HS_OP_SINH: hs_opcode = hs_opcode(63);
pub const HS_OP_COSH: hs_opcode = hs_opcode(64);
pub const HS_OP_TANH: hs_opcode = hs_opcode(65);
pub const HS_OP_ARCSINH: hs_opcode = hs_opcode(66);
pub const HS_OP_ARCCOSH: hs_opcode = hs_opcode(67);
pub const HS_OP_ARCTANH: hs_opcode = hs_opcode(68);
// elementwise: rounding, classification, complex parts
pub const HS_OP_FLOOR: hs_opcode = hs_opcode(70);
pub const HS_OP_CEIL: hs_opcode = hs_opcode(71);
pub const HS_OP_TRUNC: hs_opcode = hs_opcode(72);
pub const HS_OP_RINT: hs_opcode = hs_opcode(73);
pub const HS_OP_IS_NAN: hs_opcode = hs_opcode(74);
pub const HS_OP_IS_INF: hs_opcode = hs_opcode(75);
pub const HS_OP_IS_FINITE: hs_opcode = hs_opcode(76);
pub const HS_OP_REAL: hs_opcode = hs_opcode(77);
pub const HS_OP_IMAG: hs_opcode = hs_opcode(78);
pub const HS_OP_CONJ: hs_opcode = hs_opcode(79);
/// The sign bit, as bool (set for -0.0 and negative NaNs too).
pub const HS_OP_SIGNBIT: hs_opcode = hs_opcode(80);
// elementwise: copy/cast and select
pub const HS_OP_IDENTITY: hs_opcode = hs_opcode(85);
pub const HS_OP_WHERE: hs_opcode = hs_opcode(86);
// reductions along one axis (`axis` names it; the output drops that axis)
pub const HS_OP_ADD_REDUCE: hs_opcode = hs_opcode(100);
pub const HS_OP_MULTIPLY_REDUCE: hs_opcode = hs_opcode(101);
pub const HS_OP_MINIMUM_REDUCE: hs_opcode = hs_opcode(102);
pub const HS_OP_MAXIMUM_REDUCE: hs_opcode = hs_opcode(103);
pub const HS_OP_LOGICAL_AND_REDUCE: hs_opcode = hs_opcode(104);
pub const HS_OP_LOGICAL_OR_REDUCE: hs_opcode = hs_opcode(105);
pub const HS_OP_LOGICAL_XOR_REDUCE: hs_opcode = hs_opcode(106);
pub const HS_OP_BITWISE_AND_REDUCE: hs_opcode = hs_opcode(107);
pub const HS_OP_BITWISE_OR_REDUCE: hs_opcode = hs_opcode(108);
pub const HS_OP_BITWISE_XOR_REDUCE: hs_opcode = hs_opcode(109);
pub const HS_OP_ARGMIN_REDUCE: hs_opcode = hs_opcode(110);
pub const HS_OP_ARGMAX_REDUCE: hs_opcode = hs_opcode(111);
// scans along one axis
pub const HS_OP_ADD_ACCUMULATE: hs_opcode = hs_opcode(120);
pub const HS_OP_MULTIPLY_ACCUMULATE: hs_opcode = hs_opcode(121);
pub const HS_OP_MINIMUM_ACCUMULATE: hs_opcode = hs_opcode(122);
pub const HS_OP_MAXIMUM_ACCUMULATE: hs_opcode = hs_opcode(123);
// generators
pub const HS_OP_RANGE: hs_opcode = hs_opcode(130);
pub const HS_OP_RANDOM: hs_opcode = hs_opcode(131);
// indexing (index arrays are int64; negative indices count from the end)
pub const HS_OP_GATHER: hs_opcode = hs_opcode(140);
pub const HS_OP_SCATTER: hs_opcode = hs_opcode(141);
pub const HS_OP_COND_SCATTER: hs_opcode = hs_opcode(142);
pub const HS_OP_SCATTER_ADD: hs_opcode = hs_opcode(143);
// system
pub const HS_OP_FREE: hs_opcode = hs_opcode(150);
pub const HS_OP_SYNC: hs_opcode = hs_opcode(151);
pub const HS_OP_NONE: hs_opcode = hs_opcode(152);
// extension methods, resolved by `Instr::method`
pub const HS_OP_EXTENSION: hs_opcode = hs_opcode(200);
