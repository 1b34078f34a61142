//! The opcode set and its one metadata table. Every pass asks the table
//! (`op.class()`, `op.is_associative()`, …) instead of matching lists of opcodes.

use crate::{DType, TypeSet};
use serde::{Deserialize, Serialize};

/// Every operation of the bytecode. Discriminants are explicit and never reused: they are
/// hashed into kernel keys, cross the engine ABI and are the C API's opcode numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u16)]
pub enum Opcode {
    // --- elementwise: arithmetic -------------------------------------------------------
    Add = 1,
    Subtract = 2,
    Multiply = 3,
    Divide = 4,
    FloorDivide = 5,
    Remainder = 6,
    Power = 7,
    Negative = 8,
    Positive = 9,
    Absolute = 10,
    Sign = 11,
    Maximum = 12,
    Minimum = 13,
    Fmax = 14,
    Fmin = 15,
    /// C's `fmod`: the remainder with the dividend's sign (integers: 0 for a zero divisor).
    Fmod = 16,
    Copysign = 17,
    // --- elementwise: comparisons --------------------------------------------------------
    Equal = 20,
    NotEqual = 21,
    Less = 22,
    LessEqual = 23,
    Greater = 24,
    GreaterEqual = 25,
    // --- elementwise: logical and bitwise ------------------------------------------------
    LogicalAnd = 30,
    LogicalOr = 31,
    LogicalXor = 32,
    LogicalNot = 33,
    BitwiseAnd = 34,
    BitwiseOr = 35,
    BitwiseXor = 36,
    Invert = 37,
    LeftShift = 38,
    RightShift = 39,
    // --- elementwise: powers, exponentials, logarithms -----------------------------------
    Sqrt = 40,
    Cbrt = 41,
    Square = 42,
    Reciprocal = 43,
    Exp = 44,
    Exp2 = 45,
    Expm1 = 46,
    Log = 47,
    Log2 = 48,
    Log10 = 49,
    Log1p = 50,
    // --- elementwise: trigonometric and hyperbolic ---------------------------------------
    Sin = 55,
    Cos = 56,
    Tan = 57,
    Arcsin = 58,
    Arccos = 59,
    Arctan = 60,
    Arctan2 = 61,
    Hypot = 62,
    Sinh = 63,
    Cosh = 64,
    Tanh = 65,
    Arcsinh = 66,
    Arccosh = 67,
    Arctanh = 68,
    // --- elementwise: rounding, classification, complex parts ----------------------------
    Floor = 70,
    Ceil = 71,
    Trunc = 72,
    Rint = 73,
    IsNan = 74,
    IsInf = 75,
    IsFinite = 76,
    Real = 77,
    Imag = 78,
    Conj = 79,
    /// The sign bit (set for -0.0 and negative NaNs too).
    Signbit = 80,
    // --- elementwise: copy/cast and select ------------------------------------------------
    Identity = 85,
    Where = 86,
    // --- reductions along one axis (`axis` names it; the output drops that axis) ----------
    AddReduce = 100,
    MultiplyReduce = 101,
    MinimumReduce = 102,
    MaximumReduce = 103,
    LogicalAndReduce = 104,
    LogicalOrReduce = 105,
    LogicalXorReduce = 106,
    BitwiseAndReduce = 107,
    BitwiseOrReduce = 108,
    BitwiseXorReduce = 109,
    ArgminReduce = 110,
    ArgmaxReduce = 111,
    // --- scans along one axis --------------------------------------------------------------
    AddAccumulate = 120,
    MultiplyAccumulate = 121,
    /// Running minimum and maximum (NaN, once met, stays), as `np.minimum.accumulate`.
    MinimumAccumulate = 122,
    MaximumAccumulate = 123,
    // --- generators --------------------------------------------------------------------------
    /// out[i] = i, the row-major linear index within the output view.
    Range = 130,
    /// out[i] = Philox-4x32-10 of counter (i, stream) under key seed, as uint64:
    /// ins = [seed: u64 scalar, stream: u64 scalar].
    Random = 131,
    // --- indexing (index arrays are int64; negative indices count from the end) ------------
    /// out[k] = src[idx[k]]; ins = [src (1-D view), idx (shape of out)].
    Gather = 140,
    /// out[idx[k]] = val[k]; out is a 1-D view; ins = [idx, val].
    Scatter = 141,
    /// if mask[k] { out[idx[k]] = val[k] }; ins = [idx, val, mask].
    CondScatter = 142,
    /// out[idx[k]] += val[k], unbuffered (repeated indices accumulate), as `np.add.at`.
    ScatterAdd = 143,
    // --- system ------------------------------------------------------------------------------
    /// End of a base's life; `out` spans the base.
    Free = 150,
    /// Make the base's values visible in host memory; `out` spans the base.
    Sync = 151,
    /// Does nothing (a filter's placeholder).
    None = 152,
    // --- extension methods, resolved by `Instr::method` -------------------------------------
    Extension = 200,
}

/// What kind of loop an opcode needs; fusion and code generation branch on this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    Elementwise,
    Reduce,
    Scan,
    Generator,
    Index,
    System,
    Extension,
}

/// How the output dtype follows from the (common) input dtype `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutRule {
    /// out is `T`.
    Same,
    /// out is bool (comparisons, logical ops, classification).
    Bool,
    /// out is `T`'s real component type (abs, real, imag of complex).
    Real,
    /// out is int64 (argmin, argmax).
    Index,
    /// out may be any dtype (identity casts).
    Any,
}

/// The neutral element a reduction starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    Zero,
    One,
    /// No identity: reducing an empty axis is an error (min, max, argmin, argmax).
    None,
    /// All bits set (bitwise and).
    AllOnes,
}

/// One row of the opcode table.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// NumPy's name for the operation (the ufunc name for elementwise and reductions).
    pub name: &'static str,
    pub class: OpClass,
    /// Number of inputs (operands after the output).
    pub nin: u8,
    /// Input dtypes the opcode accepts (all inputs share one type, but `where`'s mask).
    pub types: TypeSet,
    pub out: OutRule,
    /// For reductions and scans: the elementwise opcode that combines two elements.
    pub combine: Option<Opcode>,
    pub identity: Identity,
    /// `op(a, op(b, c)) == op(op(a, b), c)`; lets reductions split across threads.
    pub associative: bool,
    pub commutative: bool,
}

const fn row(name: &'static str, class: OpClass, nin: u8, types: TypeSet, out: OutRule) -> OpInfo {
    OpInfo {
        name,
        class,
        nin,
        types,
        out,
        combine: None,
        identity: Identity::None,
        associative: false,
        commutative: false,
    }
}

const fn ew(name: &'static str, nin: u8, types: TypeSet, out: OutRule) -> OpInfo {
    row(name, OpClass::Elementwise, nin, types, out)
}

/// An associative, commutative binary operation with its identity.
const fn monoid(name: &'static str, types: TypeSet, out: OutRule, identity: Identity) -> OpInfo {
    OpInfo {
        identity,
        associative: true,
        commutative: true,
        ..ew(name, 2, types, out)
    }
}

const fn reduce(
    name: &'static str,
    combine: Opcode,
    types: TypeSet,
    out: OutRule,
    identity: Identity,
) -> OpInfo {
    OpInfo {
        combine: Some(combine),
        identity,
        associative: true,
        commutative: true,
        ..row(name, OpClass::Reduce, 1, types, out)
    }
}

const fn scan(name: &'static str, combine: Opcode, identity: Identity) -> OpInfo {
    OpInfo {
        combine: Some(combine),
        identity,
        associative: true,
        ..row(name, OpClass::Scan, 1, TypeSet::NUMERIC, OutRule::Same)
    }
}

const ALL: TypeSet = TypeSet::ALL;
const NUM: TypeSet = TypeSet::NUMERIC;
const NUM_B: TypeSet = TypeSet::NUMERIC.union(TypeSet::BOOL);
const REAL_B: TypeSet = TypeSet::REAL.union(TypeSet::BOOL);
const INT_B: TypeSet = TypeSet::INT.union(TypeSet::BOOL);
const INEXACT: TypeSet = TypeSet::INEXACT;
const FLOAT: TypeSet = TypeSet::FLOAT;

impl Opcode {
    /// Every opcode, in discriminant order.
    pub const ALL: &'static [Opcode] = &[
        Opcode::Add,
        Opcode::Subtract,
        Opcode::Multiply,
        Opcode::Divide,
        Opcode::FloorDivide,
        Opcode::Remainder,
        Opcode::Power,
        Opcode::Negative,
        Opcode::Positive,
        Opcode::Absolute,
        Opcode::Sign,
        Opcode::Maximum,
        Opcode::Minimum,
        Opcode::Fmax,
        Opcode::Fmin,
        Opcode::Fmod,
        Opcode::Copysign,
        Opcode::Equal,
        Opcode::NotEqual,
        Opcode::Less,
        Opcode::LessEqual,
        Opcode::Greater,
        Opcode::GreaterEqual,
        Opcode::LogicalAnd,
        Opcode::LogicalOr,
        Opcode::LogicalXor,
        Opcode::LogicalNot,
        Opcode::BitwiseAnd,
        Opcode::BitwiseOr,
        Opcode::BitwiseXor,
        Opcode::Invert,
        Opcode::LeftShift,
        Opcode::RightShift,
        Opcode::Sqrt,
        Opcode::Cbrt,
        Opcode::Square,
        Opcode::Reciprocal,
        Opcode::Exp,
        Opcode::Exp2,
        Opcode::Expm1,
        Opcode::Log,
        Opcode::Log2,
        Opcode::Log10,
        Opcode::Log1p,
        Opcode::Sin,
        Opcode::Cos,
        Opcode::Tan,
        Opcode::Arcsin,
        Opcode::Arccos,
        Opcode::Arctan,
        Opcode::Arctan2,
        Opcode::Hypot,
        Opcode::Sinh,
        Opcode::Cosh,
        Opcode::Tanh,
        Opcode::Arcsinh,
        Opcode::Arccosh,
        Opcode::Arctanh,
        Opcode::Floor,
        Opcode::Ceil,
        Opcode::Trunc,
        Opcode::Rint,
        Opcode::IsNan,
        Opcode::IsInf,
        Opcode::IsFinite,
        Opcode::Real,
        Opcode::Imag,
        Opcode::Conj,
        Opcode::Signbit,
        Opcode::Identity,
        Opcode::Where,
        Opcode::AddReduce,
        Opcode::MultiplyReduce,
        Opcode::MinimumReduce,
        Opcode::MaximumReduce,
        Opcode::LogicalAndReduce,
        Opcode::LogicalOrReduce,
        Opcode::LogicalXorReduce,
        Opcode::BitwiseAndReduce,
        Opcode::BitwiseOrReduce,
        Opcode::BitwiseXorReduce,
        Opcode::ArgminReduce,
        Opcode::ArgmaxReduce,
        Opcode::AddAccumulate,
        Opcode::MultiplyAccumulate,
        Opcode::MinimumAccumulate,
        Opcode::MaximumAccumulate,
        Opcode::Range,
        Opcode::Random,
        Opcode::Gather,
        Opcode::Scatter,
        Opcode::CondScatter,
        Opcode::ScatterAdd,
        Opcode::Free,
        Opcode::Sync,
        Opcode::None,
        Opcode::Extension,
    ];

    /// The opcode with this discriminant (the C API's opcode numbers).
    pub fn from_u16(v: u16) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| *o as u16 == v)
    }

    /// The opcode NumPy knows by `name` (ufunc names; reductions as `add.reduce`).
    pub fn from_name(name: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.info().name == name)
    }

    /// The table row (a copy from a static table, so hot paths asking an opcode's class
    /// pay one indexed load, not a match).
    #[inline]
    pub fn info(self) -> OpInfo {
        INFO[self as usize]
    }

    /// The table row. This match is the one place that knows opcode properties; it fills
    /// [`INFO`] at compile time.
    const fn row_of(self) -> OpInfo {
        use Identity as I;
        use OutRule::*;
        match self {
            Opcode::Add => monoid("add", NUM_B, Same, I::Zero),
            Opcode::Subtract => ew("subtract", 2, NUM, Same),
            Opcode::Multiply => monoid("multiply", NUM_B, Same, I::One),
            Opcode::Divide => ew("divide", 2, INEXACT, Same),
            Opcode::FloorDivide => ew("floor_divide", 2, TypeSet::REAL, Same),
            Opcode::Remainder => ew("remainder", 2, TypeSet::REAL, Same),
            Opcode::Power => ew("power", 2, NUM, Same),
            Opcode::Negative => ew("negative", 1, NUM, Same),
            Opcode::Positive => ew("positive", 1, NUM, Same),
            Opcode::Absolute => ew("absolute", 1, NUM_B, Real),
            Opcode::Sign => ew("sign", 1, NUM, Same),
            Opcode::Maximum => monoid("maximum", REAL_B, Same, I::None),
            Opcode::Minimum => monoid("minimum", REAL_B, Same, I::None),
            Opcode::Fmax => monoid("fmax", REAL_B, Same, I::None),
            Opcode::Fmin => monoid("fmin", REAL_B, Same, I::None),
            Opcode::Fmod => ew("fmod", 2, TypeSet::REAL, Same),
            Opcode::Copysign => ew("copysign", 2, FLOAT, Same),
            Opcode::Equal => OpInfo {
                commutative: true,
                ..ew("equal", 2, ALL, Bool)
            },
            Opcode::NotEqual => OpInfo {
                commutative: true,
                ..ew("not_equal", 2, ALL, Bool)
            },
            Opcode::Less => ew("less", 2, REAL_B, Bool),
            Opcode::LessEqual => ew("less_equal", 2, REAL_B, Bool),
            Opcode::Greater => ew("greater", 2, REAL_B, Bool),
            Opcode::GreaterEqual => ew("greater_equal", 2, REAL_B, Bool),
            Opcode::LogicalAnd => monoid("logical_and", ALL, Bool, I::One),
            Opcode::LogicalOr => monoid("logical_or", ALL, Bool, I::Zero),
            Opcode::LogicalXor => monoid("logical_xor", ALL, Bool, I::Zero),
            Opcode::LogicalNot => ew("logical_not", 1, ALL, Bool),
            Opcode::BitwiseAnd => monoid("bitwise_and", INT_B, Same, I::AllOnes),
            Opcode::BitwiseOr => monoid("bitwise_or", INT_B, Same, I::Zero),
            Opcode::BitwiseXor => monoid("bitwise_xor", INT_B, Same, I::Zero),
            Opcode::Invert => ew("invert", 1, INT_B, Same),
            Opcode::LeftShift => ew("left_shift", 2, TypeSet::INT, Same),
            Opcode::RightShift => ew("right_shift", 2, TypeSet::INT, Same),
            Opcode::Sqrt => ew("sqrt", 1, INEXACT, Same),
            Opcode::Cbrt => ew("cbrt", 1, FLOAT, Same),
            Opcode::Square => ew("square", 1, NUM, Same),
            Opcode::Reciprocal => ew("reciprocal", 1, NUM, Same),
            Opcode::Exp => ew("exp", 1, INEXACT, Same),
            Opcode::Exp2 => ew("exp2", 1, INEXACT, Same),
            Opcode::Expm1 => ew("expm1", 1, INEXACT, Same),
            Opcode::Log => ew("log", 1, INEXACT, Same),
            Opcode::Log2 => ew("log2", 1, INEXACT, Same),
            Opcode::Log10 => ew("log10", 1, INEXACT, Same),
            Opcode::Log1p => ew("log1p", 1, INEXACT, Same),
            Opcode::Sin => ew("sin", 1, INEXACT, Same),
            Opcode::Cos => ew("cos", 1, INEXACT, Same),
            Opcode::Tan => ew("tan", 1, INEXACT, Same),
            Opcode::Arcsin => ew("arcsin", 1, INEXACT, Same),
            Opcode::Arccos => ew("arccos", 1, INEXACT, Same),
            Opcode::Arctan => ew("arctan", 1, INEXACT, Same),
            Opcode::Arctan2 => ew("arctan2", 2, FLOAT, Same),
            Opcode::Hypot => OpInfo {
                commutative: true,
                ..ew("hypot", 2, FLOAT, Same)
            },
            Opcode::Sinh => ew("sinh", 1, INEXACT, Same),
            Opcode::Cosh => ew("cosh", 1, INEXACT, Same),
            Opcode::Tanh => ew("tanh", 1, INEXACT, Same),
            Opcode::Arcsinh => ew("arcsinh", 1, INEXACT, Same),
            Opcode::Arccosh => ew("arccosh", 1, INEXACT, Same),
            Opcode::Arctanh => ew("arctanh", 1, INEXACT, Same),
            Opcode::Floor => ew("floor", 1, REAL_B, Same),
            Opcode::Ceil => ew("ceil", 1, REAL_B, Same),
            Opcode::Trunc => ew("trunc", 1, REAL_B, Same),
            Opcode::Rint => ew("rint", 1, INEXACT, Same),
            Opcode::IsNan => ew("isnan", 1, ALL, Bool),
            Opcode::IsInf => ew("isinf", 1, ALL, Bool),
            Opcode::IsFinite => ew("isfinite", 1, ALL, Bool),
            Opcode::Real => ew("real", 1, ALL, Real),
            Opcode::Imag => ew("imag", 1, ALL, Real),
            Opcode::Conj => ew("conjugate", 1, NUM_B, Same),
            Opcode::Signbit => ew("signbit", 1, FLOAT, Bool),
            Opcode::Identity => ew("identity", 1, ALL, Any),
            Opcode::Where => ew("where", 3, ALL, Same),
            Opcode::AddReduce => reduce("add.reduce", Opcode::Add, NUM_B, Same, I::Zero),
            Opcode::MultiplyReduce => {
                reduce("multiply.reduce", Opcode::Multiply, NUM_B, Same, I::One)
            }
            Opcode::MinimumReduce => {
                reduce("minimum.reduce", Opcode::Minimum, REAL_B, Same, I::None)
            }
            Opcode::MaximumReduce => {
                reduce("maximum.reduce", Opcode::Maximum, REAL_B, Same, I::None)
            }
            Opcode::LogicalAndReduce => reduce(
                "logical_and.reduce",
                Opcode::LogicalAnd,
                TypeSet::BOOL,
                Same,
                I::One,
            ),
            Opcode::LogicalOrReduce => reduce(
                "logical_or.reduce",
                Opcode::LogicalOr,
                TypeSet::BOOL,
                Same,
                I::Zero,
            ),
            Opcode::LogicalXorReduce => reduce(
                "logical_xor.reduce",
                Opcode::LogicalXor,
                TypeSet::BOOL,
                Same,
                I::Zero,
            ),
            Opcode::BitwiseAndReduce => reduce(
                "bitwise_and.reduce",
                Opcode::BitwiseAnd,
                INT_B,
                Same,
                I::AllOnes,
            ),
            Opcode::BitwiseOrReduce => {
                reduce("bitwise_or.reduce", Opcode::BitwiseOr, INT_B, Same, I::Zero)
            }
            Opcode::BitwiseXorReduce => reduce(
                "bitwise_xor.reduce",
                Opcode::BitwiseXor,
                INT_B,
                Same,
                I::Zero,
            ),
            Opcode::ArgminReduce => OpInfo {
                combine: None,
                ..reduce("argmin", Opcode::Minimum, REAL_B, Index, I::None)
            },
            Opcode::ArgmaxReduce => OpInfo {
                combine: None,
                ..reduce("argmax", Opcode::Maximum, REAL_B, Index, I::None)
            },
            Opcode::AddAccumulate => scan("add.accumulate", Opcode::Add, I::Zero),
            Opcode::MultiplyAccumulate => scan("multiply.accumulate", Opcode::Multiply, I::One),
            Opcode::MinimumAccumulate => OpInfo {
                types: REAL_B,
                ..scan("minimum.accumulate", Opcode::Minimum, I::None)
            },
            Opcode::MaximumAccumulate => OpInfo {
                types: REAL_B,
                ..scan("maximum.accumulate", Opcode::Maximum, I::None)
            },
            Opcode::Range => row("range", OpClass::Generator, 0, TypeSet::REAL, Same),
            Opcode::Random => row("random", OpClass::Generator, 2, TypeSet::UINT, Same),
            Opcode::Gather => row("gather", OpClass::Index, 2, ALL, Same),
            Opcode::Scatter => row("scatter", OpClass::Index, 2, ALL, Same),
            Opcode::CondScatter => row("cond_scatter", OpClass::Index, 3, ALL, Same),
            Opcode::ScatterAdd => row("scatter_add", OpClass::Index, 2, NUM_B, Same),
            Opcode::Free => row("free", OpClass::System, 0, ALL, Same),
            Opcode::Sync => row("sync", OpClass::System, 0, ALL, Same),
            Opcode::None => row("none", OpClass::System, 0, ALL, Same),
            Opcode::Extension => row("extension", OpClass::Extension, 2, NUM, Same),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }
    #[inline]
    pub fn class(self) -> OpClass {
        INFO[self as usize].class
    }
    pub fn nin(self) -> usize {
        self.info().nin as usize
    }
    pub fn is_elementwise(self) -> bool {
        self.class() == OpClass::Elementwise
    }
    pub fn is_reduction(self) -> bool {
        self.class() == OpClass::Reduce
    }
    pub fn is_scan(self) -> bool {
        self.class() == OpClass::Scan
    }
    pub fn is_generator(self) -> bool {
        self.class() == OpClass::Generator
    }
    pub fn is_system(self) -> bool {
        self.class() == OpClass::System
    }
    pub fn is_associative(self) -> bool {
        self.info().associative
    }
    pub fn is_commutative(self) -> bool {
        self.info().commutative
    }
    /// True for argmin/argmax, which reduce to an index rather than a value.
    pub fn is_arg_reduction(self) -> bool {
        self.info().out == OutRule::Index
    }

    /// The output dtype for input dtype `t`, or `None` when the opcode does not take `t`.
    /// For [`OutRule::Any`] it returns `t` (any output is allowed).
    pub fn out_dtype(self, t: DType) -> Option<DType> {
        let info = self.info();
        if !info.types.contains(t) {
            return None;
        }
        Some(match info.out {
            OutRule::Same | OutRule::Any => t,
            OutRule::Bool => DType::Bool,
            OutRule::Real => t.real(),
            OutRule::Index => DType::Int64,
        })
    }
}

/// Every opcode's row, indexed by discriminant (gaps hold `none`'s row).
static INFO: [OpInfo; 256] = {
    let mut t = [Opcode::None.row_of(); 256];
    let mut k = 0;
    while k < Opcode::ALL.len() {
        let op = Opcode::ALL[k];
        t[op as usize] = op.row_of();
        k += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discriminants_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &op in Opcode::ALL {
            assert!(seen.insert(op as u16), "{op:?}");
            assert_eq!(Opcode::from_u16(op as u16), Some(op));
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
    }

    #[test]
    fn reductions_name_an_elementwise_combiner() {
        for &op in Opcode::ALL {
            if let Some(c) = op.info().combine {
                assert!(op.is_reduction() || op.is_scan());
                assert!(c.is_elementwise() && c.nin() == 2, "{op:?}");
            }
        }
    }

    #[test]
    fn output_types_follow_the_rules() {
        assert_eq!(
            Opcode::Absolute.out_dtype(DType::Complex64),
            Some(DType::Float32)
        );
        assert_eq!(Opcode::Less.out_dtype(DType::Int8), Some(DType::Bool));
        assert_eq!(Opcode::Divide.out_dtype(DType::Int8), None);
        assert_eq!(
            Opcode::ArgmaxReduce.out_dtype(DType::Float32),
            Some(DType::Int64)
        );
        assert_eq!(Opcode::Subtract.out_dtype(DType::Bool), None);
    }
}
