//! The fuzzer's input: the calls and arguments its bytes decode into, and their decoding.

use crate::{MAX_ELEMS, TOO_LARGE};
use hassium::*;
use libfuzzer_sys::arbitrary::{self, Arbitrary};

/// Every opcode number the header defines.
#[rustfmt::skip]
const OPCODES: [hs_opcode; 97] = [
    HS_OP_ADD, HS_OP_SUBTRACT, HS_OP_MULTIPLY, HS_OP_DIVIDE, HS_OP_FLOOR_DIVIDE,
    HS_OP_REMAINDER, HS_OP_POWER, HS_OP_NEGATIVE, HS_OP_POSITIVE, HS_OP_ABSOLUTE, HS_OP_SIGN,
    HS_OP_MAXIMUM, HS_OP_MINIMUM, HS_OP_FMAX, HS_OP_FMIN, HS_OP_FMOD, HS_OP_COPYSIGN,
    HS_OP_EQUAL, HS_OP_NOT_EQUAL, HS_OP_LESS, HS_OP_LESS_EQUAL, HS_OP_GREATER,
    HS_OP_GREATER_EQUAL, HS_OP_LOGICAL_AND, HS_OP_LOGICAL_OR, HS_OP_LOGICAL_XOR,
    HS_OP_LOGICAL_NOT, HS_OP_BITWISE_AND, HS_OP_BITWISE_OR, HS_OP_BITWISE_XOR, HS_OP_INVERT,
    HS_OP_LEFT_SHIFT, HS_OP_RIGHT_SHIFT, HS_OP_SQRT, HS_OP_CBRT, HS_OP_SQUARE,
    HS_OP_RECIPROCAL, HS_OP_EXP, HS_OP_EXP2, HS_OP_EXPM1, HS_OP_LOG, HS_OP_LOG2, HS_OP_LOG10,
    HS_OP_LOG1P, HS_OP_SIN, HS_OP_COS, HS_OP_TAN, HS_OP_ARCSIN, HS_OP_ARCCOS, HS_OP_ARCTAN,
    HS_OP_ARCTAN2, HS_OP_HYPOT, HS_OP_SINH, HS_OP_COSH, HS_OP_TANH, HS_OP_ARCSINH,
    HS_OP_ARCCOSH, HS_OP_ARCTANH, HS_OP_FLOOR, HS_OP_CEIL, HS_OP_TRUNC, HS_OP_RINT,
    HS_OP_IS_NAN, HS_OP_IS_INF, HS_OP_IS_FINITE, HS_OP_REAL, HS_OP_IMAG, HS_OP_CONJ,
    HS_OP_SIGNBIT, HS_OP_IDENTITY, HS_OP_WHERE, HS_OP_ADD_REDUCE, HS_OP_MULTIPLY_REDUCE,
    HS_OP_MINIMUM_REDUCE, HS_OP_MAXIMUM_REDUCE, HS_OP_LOGICAL_AND_REDUCE,
    HS_OP_LOGICAL_OR_REDUCE, HS_OP_LOGICAL_XOR_REDUCE, HS_OP_BITWISE_AND_REDUCE,
    HS_OP_BITWISE_OR_REDUCE, HS_OP_BITWISE_XOR_REDUCE, HS_OP_ARGMIN_REDUCE,
    HS_OP_ARGMAX_REDUCE, HS_OP_ADD_ACCUMULATE, HS_OP_MULTIPLY_ACCUMULATE,
    HS_OP_MINIMUM_ACCUMULATE, HS_OP_MAXIMUM_ACCUMULATE, HS_OP_RANGE, HS_OP_RANDOM,
    HS_OP_GATHER, HS_OP_SCATTER, HS_OP_COND_SCATTER, HS_OP_SCATTER_ADD, HS_OP_FREE,
    HS_OP_SYNC, HS_OP_NONE, HS_OP_EXTENSION,
];

/// Extents far beyond memory, or overflowing the element count.
pub(crate) const HUGE: [usize; 5] = [usize::MAX, isize::MAX as usize, 1 << 62, 1 << 40, 1 << 33];

// ---------------------------------------------------------------------------------------
// The decoded input

/// Which handle an argument gets.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) enum H {
    /// A live handle, by index into the table (mod its length).
    Live(u8),
    /// NULL.
    Null,
    /// A handle that was freed, by index into the freed list.
    Stale(u8),
    /// A number that was never handed out (or, by chance, was).
    MadeUp(u64),
    /// The address of unrelated memory: a "handle of the wrong kind".
    Foreign,
}

/// An operand of an operation.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) enum Opnd {
    Arr(H),
    Int(i64),
    SmallInt(i8),
    Float(f64),
    Complex(f64, f64),
    /// An operand whose kind field is not one the header defines.
    BadKind(u32, H),
}

/// An element type number: mostly valid, sometimes not.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct Dt(u8);

/// An axis argument.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) enum Ax {
    Small(i8),
    All,
    Raw(i64),
}

/// A bound or step of a slice, or an index.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) enum Ix {
    Small(i8),
    None,
    Raw(i64),
}

/// A shape argument: extents (small, mostly), sometimes a huge one, sometimes a NULL
/// pointer with a nonzero count.
#[derive(Arbitrary, Debug, Clone)]
pub(crate) struct ShapeArg {
    dims: Vec<u8>,
    pub(crate) null_ptr: bool,
}

/// An opcode: one the header defines (by index), or now and then any number.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct OpSel(u8, u32);

impl OpSel {
    pub(crate) fn get(self) -> hs_opcode {
        if self.0 < 0xf0 {
            OPCODES[self.0 as usize % OPCODES.len()]
        } else {
            hs_opcode(self.1)
        }
    }
}

/// Which typed helper a call uses.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct Which(pub(crate) u8);

#[derive(Arbitrary, Debug, Clone)]
pub(crate) enum Call {
    Empty(Dt, ShapeArg),
    Zeros(Dt, ShapeArg),
    Ones(Dt, ShapeArg),
    Full(Dt, ShapeArg, f64),
    FromBuffer(Dt, ShapeArg, u8, bool),
    Range(Dt, f64, f64, u16),
    RangeHuge(Dt, u8),
    Random(u64, u64, ShapeArg),
    Slice(H, Ax, Ix, Ix, Ix),
    Index(H, Ax, Ix),
    Transpose(H, Option<Vec<i8>>),
    Reshape(H, Vec<Ix>, bool),
    BroadcastTo(H, ShapeArg),
    Astype(H, Dt),
    Copy(H),
    Op(OpSel, H, Vec<Opnd>, Ax, bool),
    OpNew(OpSel, Vec<Opnd>, Ax, bool),
    Assign(H, Opnd),
    Binary(Which, Opnd, Opnd),
    Unary(Which, H),
    Where(Opnd, Opnd, Opnd),
    Matmul(H, H),
    Reduce(Which, H, Ax),
    Sync(H),
    Data(H, Option<u8>),
    CopyTo(H, i8, bool),
    Item(H, bool),
    Meta(H),
    Flush,
    Free(H),
}

// ---------------------------------------------------------------------------------------
// Decoding arguments

impl Dt {
    pub(crate) fn get(self) -> hs_dtype {
        match self.0 % 18 {
            d @ 0..=13 => hs_dtype(d as u32),
            14 => HS_DTYPE_INVALID,
            15 => hs_dtype(14),
            16 => hs_dtype(u32::MAX),
            _ => hs_dtype(256 + 1),
        }
    }
}

impl Ax {
    pub(crate) fn get(self) -> i64 {
        match self {
            Ax::Small(a) => i64::from(a % 20),
            Ax::All => HS_AXIS_ALL,
            Ax::Raw(a) => a,
        }
    }
}

impl Ix {
    pub(crate) fn get(self) -> i64 {
        match self {
            Ix::Small(i) => i64::from(i),
            Ix::None => HS_NONE,
            Ix::Raw(i) => i,
        }
    }
}

impl ShapeArg {
    /// The extents, capped at 20 dimensions. Small extents are kept to [`MAX_ELEMS`]
    /// elements in all; `0xf8..` bytes stand for huge extents (which only creation of
    /// uninitialised arrays, views and refused calls get to see).
    pub(crate) fn extents(&self) -> Vec<usize> {
        let mut n = 1usize;
        self.dims
            .iter()
            .take(20)
            .map(|&b| {
                if b >= 0xfb {
                    return HUGE[(b - 0xfb) as usize];
                }
                let e = match b % 32 {
                    0..=19 => (b % 5) as usize,
                    20..=27 => (b % 17) as usize,
                    _ => 1,
                };
                let e = if n.saturating_mul(e) > MAX_ELEMS {
                    1
                } else {
                    e
                };
                n *= e.max(1);
                e
            })
            .collect()
    }
}

/// The element count of a shape, `None` when it overflows.
pub(crate) fn count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// The work an operation over a shape may do: its element count with zero extents
/// counted as ones, because a reduction over an empty axis makes a result of all the
/// other extents.
pub(crate) fn work(shape: &[usize]) -> usize {
    shape
        .iter()
        .fold(1usize, |a, &d| a.saturating_mul(d.max(1)))
}

/// True for a shape every creation function must refuse: its extents (zeros counted as
/// ones, since the strides multiply them) make more than [`TOO_LARGE`] elements.
pub(crate) fn too_large(shape: &[usize]) -> bool {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d.max(1)))
        .is_none_or(|n| n > TOO_LARGE)
}

pub(crate) fn dtype_size(d: hs_dtype) -> usize {
    match d.0 {
        0 | 1 | 5 => 1,
        2 | 6 | 9 => 2,
        3 | 7 | 10 => 4,
        4 | 8 | 11 | 12 => 8,
        13 => 16,
        _ => 0,
    }
}
