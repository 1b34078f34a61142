//! The opcode set and its one metadata table. Every pass asks the table
//! (`op.class()`, `op.is_associative()`, …) instead of matching lists of opcodes.

use crate::{DType, TypeSet};
use serde::{Deserialize, Serialize};

/// The opcode table: one row per opcode, its discriminant and its properties. It
/// defines [`Opcode`] (discriminants are explicit and never reused: they are hashed into
/// kernel keys, cross the engine ABI and are the C API's opcode numbers), [`Opcode::ALL`]
/// and the rows [`Opcode::info`] reads. Everything else that lists opcodes (the C API's
/// `HS_OP_*` constants, the Python bridge's ufuncs and their aliases, the tests) is
/// generated from it or reads it.
macro_rules! opcodes {
    ($( $(#[$meta:meta])* $name:ident = $num:literal => $row:expr, )*) => {
        /// Every operation of the bytecode (see the table, `opcodes!`, for each one's
        /// properties).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[repr(u16)]
        pub enum Opcode {
            $( $(#[$meta])* $name = $num, )*
        }

        impl Opcode {
            /// Every opcode, in discriminant order.
            pub const ALL: &'static [Opcode] = &[ $( Opcode::$name, )* ];

            /// The table row of `self`; fills [`INFO`] at compile time.
            const fn row_of(self) -> OpInfo {
                use Identity as I;
                use OutRule::*;
                match self {
                    $( Opcode::$name => $row, )*
                }
            }
        }
    };
}

opcodes! {
    // --- elementwise: arithmetic -------------------------------------------------------
    Add = 1 => monoid("add", NUM_B, Same, I::Zero),
    Subtract = 2 => ew("subtract", 2, NUM, Same),
    Multiply = 3 => monoid("multiply", NUM_B, Same, I::One),
    Divide = 4 => alias(&["true_divide"], ew("divide", 2, INEXACT, Same)),
    FloorDivide = 5 => ew("floor_divide", 2, TypeSet::REAL, Same),
    Remainder = 6 => alias(&["mod"], ew("remainder", 2, TypeSet::REAL, Same)),
    Power = 7 => alias(&["pow"], ew("power", 2, NUM, Same)),
    Negative = 8 => ew("negative", 1, NUM, Same),
    Positive = 9 => ew("positive", 1, NUM, Same),
    Absolute = 10 => alias(&["abs"], ew("absolute", 1, NUM_B, Real)),
    Sign = 11 => ew("sign", 1, NUM, Same),
    Maximum = 12 => monoid("maximum", REAL_B, Same, I::None),
    Minimum = 13 => monoid("minimum", REAL_B, Same, I::None),
    Fmax = 14 => monoid("fmax", REAL_B, Same, I::None),
    Fmin = 15 => monoid("fmin", REAL_B, Same, I::None),
    /// C's `fmod`: the remainder with the dividend's sign (integers: 0 for a zero divisor).
    Fmod = 16 => ew("fmod", 2, TypeSet::REAL, Same),
    Copysign = 17 => ew("copysign", 2, FLOAT, Same),
    /// The float next to x1 towards x2 (C's `nextafter`; float16 as NumPy's half loop).
    Nextafter = 18 => ew("nextafter", 2, FLOAT, Same),
    // --- elementwise: comparisons --------------------------------------------------------
    Equal = 20 => OpInfo {
        commutative: true,
        ..ew("equal", 2, ALL, Bool)
    },
    NotEqual = 21 => OpInfo {
        commutative: true,
        ..ew("not_equal", 2, ALL, Bool)
    },
    Less = 22 => ew("less", 2, REAL_B, Bool),
    LessEqual = 23 => ew("less_equal", 2, REAL_B, Bool),
    Greater = 24 => ew("greater", 2, REAL_B, Bool),
    GreaterEqual = 25 => ew("greater_equal", 2, REAL_B, Bool),
    // --- elementwise: logical and bitwise ------------------------------------------------
    LogicalAnd = 30 => monoid("logical_and", ALL, Bool, I::One),
    LogicalOr = 31 => monoid("logical_or", ALL, Bool, I::Zero),
    LogicalXor = 32 => monoid("logical_xor", ALL, Bool, I::Zero),
    LogicalNot = 33 => ew("logical_not", 1, ALL, Bool),
    BitwiseAnd = 34 => monoid("bitwise_and", INT_B, Same, I::AllOnes),
    BitwiseOr = 35 => monoid("bitwise_or", INT_B, Same, I::Zero),
    BitwiseXor = 36 => monoid("bitwise_xor", INT_B, Same, I::Zero),
    Invert = 37 => alias(&["bitwise_not", "bitwise_invert"], ew("invert", 1, INT_B, Same)),
    LeftShift = 38 => alias(&["bitwise_left_shift"], ew("left_shift", 2, TypeSet::INT, Same)),
    RightShift = 39 => alias(&["bitwise_right_shift"], ew("right_shift", 2, TypeSet::INT, Same)),
    // --- elementwise: powers, exponentials, logarithms -----------------------------------
    Sqrt = 40 => ew("sqrt", 1, INEXACT, Same),
    Cbrt = 41 => ew("cbrt", 1, FLOAT, Same),
    Square = 42 => ew("square", 1, NUM, Same),
    Reciprocal = 43 => ew("reciprocal", 1, NUM, Same),
    Exp = 44 => ew("exp", 1, INEXACT, Same),
    Exp2 = 45 => ew("exp2", 1, INEXACT, Same),
    Expm1 = 46 => ew("expm1", 1, INEXACT, Same),
    Log = 47 => ew("log", 1, INEXACT, Same),
    Log2 = 48 => ew("log2", 1, INEXACT, Same),
    Log10 = 49 => ew("log10", 1, INEXACT, Same),
    Log1p = 50 => ew("log1p", 1, INEXACT, Same),
    /// x1 * 2**x2, exactly (C's `ldexp`; the result rounds once, to a subnormal too). The
    /// exponent x2 is an integer carried in x1's dtype, so the row keeps one input type:
    /// it is truncated and clamped to +-10000 (beyond which every result is 0 or inf), a
    /// NaN reading as -10000. `np.ldexp` casts its integer exponent (int32 or int64
    /// loops) to the float: rounding only above 2**24 or 2**53, where results saturate.
    Ldexp = 51 => plain("ldexp", 2, FLOAT, Same),
    /// The exponent e of C's `frexp` (x = m * 2**e, 0.5 <= |m| < 1; 0 for zeros,
    /// infinities and NaN) as a value of x's dtype (exact: |e| <= 1074), to keep the
    /// table's one rule for outputs; `np.frexp` casts it to int32 and takes the mantissa
    /// as `ldexp(x, -e)`, exact.
    FrexpExponent = 52 => plain("frexp_exponent", 1, FLOAT, Same),
    // --- elementwise: trigonometric and hyperbolic ---------------------------------------
    Sin = 55 => ew("sin", 1, INEXACT, Same),
    Cos = 56 => ew("cos", 1, INEXACT, Same),
    Tan = 57 => ew("tan", 1, INEXACT, Same),
    Arcsin = 58 => alias(&["asin"], ew("arcsin", 1, INEXACT, Same)),
    Arccos = 59 => alias(&["acos"], ew("arccos", 1, INEXACT, Same)),
    Arctan = 60 => alias(&["atan"], ew("arctan", 1, INEXACT, Same)),
    Arctan2 = 61 => alias(&["atan2"], ew("arctan2", 2, FLOAT, Same)),
    Hypot = 62 => OpInfo {
        commutative: true,
        ..ew("hypot", 2, FLOAT, Same)
    },
    Sinh = 63 => ew("sinh", 1, INEXACT, Same),
    Cosh = 64 => ew("cosh", 1, INEXACT, Same),
    Tanh = 65 => ew("tanh", 1, INEXACT, Same),
    Arcsinh = 66 => alias(&["asinh"], ew("arcsinh", 1, INEXACT, Same)),
    Arccosh = 67 => alias(&["acosh"], ew("arccosh", 1, INEXACT, Same)),
    Arctanh = 68 => alias(&["atanh"], ew("arctanh", 1, INEXACT, Same)),
    // --- elementwise: rounding, classification, complex parts ----------------------------
    Floor = 70 => ew("floor", 1, REAL_B, Same),
    Ceil = 71 => ew("ceil", 1, REAL_B, Same),
    Trunc = 72 => ew("trunc", 1, REAL_B, Same),
    Rint = 73 => ew("rint", 1, INEXACT, Same),
    IsNan = 74 => ew("isnan", 1, ALL, Bool),
    IsInf = 75 => ew("isinf", 1, ALL, Bool),
    IsFinite = 76 => ew("isfinite", 1, ALL, Bool),
    Real = 77 => plain("real", 1, ALL, Real),
    Imag = 78 => plain("imag", 1, ALL, Real),
    Conj = 79 => alias(&["conj"], ew("conjugate", 1, NUM_B, Same)),
    /// The sign bit (set for -0.0 and negative NaNs too).
    Signbit = 80 => ew("signbit", 1, FLOAT, Bool),
    // --- elementwise: integer number theory ---------------------------------------------
    /// NumPy's gcd: of the magnitudes (as unsigned, so |MIN| is 2**(bits-1)), by Euclid;
    /// never negative but where the magnitude wraps (gcd(MIN, 0) is MIN).
    Gcd = 81 => OpInfo {
        commutative: true,
        ..ew("gcd", 2, TypeSet::INT, Same)
    },
    /// NumPy's lcm: |a| / gcd * |b| in unsigned arithmetic, wrapping to the type; 0 when
    /// either is 0.
    Lcm = 82 => OpInfo {
        commutative: true,
        ..ew("lcm", 2, TypeSet::INT, Same)
    },
    // --- elementwise: copy/cast and select ------------------------------------------------
    Identity = 85 => plain("identity", 1, ALL, Any),
    Where = 86 => plain("where", 3, ALL, Same),
    // --- reductions along one axis (`axis` names it; the output drops that axis) ----------
    AddReduce = 100 => reduce("add.reduce", Opcode::Add, NUM_B, Same, I::Zero),
    MultiplyReduce = 101 => reduce("multiply.reduce", Opcode::Multiply, NUM_B, Same, I::One),
    MinimumReduce = 102 => reduce("minimum.reduce", Opcode::Minimum, REAL_B, Same, I::None),
    MaximumReduce = 103 => reduce("maximum.reduce", Opcode::Maximum, REAL_B, Same, I::None),
    LogicalAndReduce = 104 => reduce(
        "logical_and.reduce",
        Opcode::LogicalAnd,
        TypeSet::BOOL,
        Same,
        I::One,
    ),
    LogicalOrReduce = 105 => reduce(
        "logical_or.reduce",
        Opcode::LogicalOr,
        TypeSet::BOOL,
        Same,
        I::Zero,
    ),
    LogicalXorReduce = 106 => reduce(
        "logical_xor.reduce",
        Opcode::LogicalXor,
        TypeSet::BOOL,
        Same,
        I::Zero,
    ),
    BitwiseAndReduce = 107 => reduce(
        "bitwise_and.reduce",
        Opcode::BitwiseAnd,
        INT_B,
        Same,
        I::AllOnes,
    ),
    BitwiseOrReduce = 108 => reduce("bitwise_or.reduce", Opcode::BitwiseOr, INT_B, Same, I::Zero),
    BitwiseXorReduce = 109 => reduce(
        "bitwise_xor.reduce",
        Opcode::BitwiseXor,
        INT_B,
        Same,
        I::Zero,
    ),
    ArgminReduce = 110 => OpInfo {
        combine: None,
        ..reduce("argmin", Opcode::Minimum, REAL_B, Index, I::None)
    },
    ArgmaxReduce = 111 => OpInfo {
        combine: None,
        ..reduce("argmax", Opcode::Maximum, REAL_B, Index, I::None)
    },
    // --- scans along one axis --------------------------------------------------------------
    AddAccumulate = 120 => scan("add.accumulate", Opcode::Add, I::Zero),
    MultiplyAccumulate = 121 => scan("multiply.accumulate", Opcode::Multiply, I::One),
    /// Running minimum and maximum (NaN, once met, stays), as `np.minimum.accumulate`.
    MinimumAccumulate = 122 => OpInfo {
        types: REAL_B,
        ..scan("minimum.accumulate", Opcode::Minimum, I::None)
    },
    MaximumAccumulate = 123 => OpInfo {
        types: REAL_B,
        ..scan("maximum.accumulate", Opcode::Maximum, I::None)
    },
    // --- generators --------------------------------------------------------------------------
    /// out[i] = i, the row-major linear index within the output view.
    Range = 130 => row("range", OpClass::Generator, 0, TypeSet::REAL, Same),
    /// out[i] = Philox-4x32-10 of counter (i, stream) under key seed, as uint64:
    /// ins = [seed: u64 scalar, stream: u64 scalar].
    Random = 131 => row("random", OpClass::Generator, 2, TypeSet::UINT, Same),
    // --- indexing (index arrays are int64; negative indices count from the end) ------------
    /// out[k] = src[idx[k]]; ins = [src (1-D view), idx (shape of out)].
    Gather = 140 => row("gather", OpClass::Index, 2, ALL, Same),
    /// out[idx[k]] = val[k]; out is a 1-D view; ins = [idx, val].
    Scatter = 141 => row("scatter", OpClass::Index, 2, ALL, Same),
    /// if mask[k] { out[idx[k]] = val[k] }; ins = [idx, val, mask].
    CondScatter = 142 => row("cond_scatter", OpClass::Index, 3, ALL, Same),
    /// out[idx[k]] += val[k], unbuffered (repeated indices accumulate), as `np.add.at`.
    ScatterAdd = 143 => row("scatter_add", OpClass::Index, 2, NUM_B, Same),
    // --- system ------------------------------------------------------------------------------
    /// End of a base's life; `out` spans the base.
    Free = 150 => row("free", OpClass::System, 0, ALL, Same),
    /// Make the base's values visible in host memory; `out` spans the base.
    Sync = 151 => row("sync", OpClass::System, 0, ALL, Same),
    /// Does nothing (a filter's placeholder).
    None = 152 => row("none", OpClass::System, 0, ALL, Same),
    // --- extension methods, resolved by `Instr::method` -------------------------------------
    Extension = 200 => row("extension", OpClass::Extension, 2, NUM, Same),
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
    /// An elementwise opcode NumPy has as the ufunc `name` (`np.add`): the Python bridge
    /// makes one ufunc object of it.
    pub ufunc: bool,
    /// Other names NumPy gives the same ufunc (`np.abs is np.absolute`).
    pub aliases: &'static [&'static str],
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
        ufunc: false,
        aliases: &[],
    }
}

/// An elementwise opcode that is NumPy's ufunc `name`.
const fn ew(name: &'static str, nin: u8, types: TypeSet, out: OutRule) -> OpInfo {
    OpInfo {
        ufunc: true,
        ..row(name, OpClass::Elementwise, nin, types, out)
    }
}

/// An elementwise opcode NumPy has no ufunc for (`where`, `real`).
const fn plain(name: &'static str, nin: u8, types: TypeSet, out: OutRule) -> OpInfo {
    row(name, OpClass::Elementwise, nin, types, out)
}

/// `info` with NumPy's other names for it.
const fn alias(aliases: &'static [&'static str], info: OpInfo) -> OpInfo {
    OpInfo { aliases, ..info }
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
    /// The opcode with this discriminant (the C API's opcode numbers).
    pub fn from_u16(v: u16) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| *o as u16 == v)
    }

    /// The elementwise opcode of NumPy's ufunc `name`, or of one of its aliases.
    pub fn ufunc_named(name: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| {
            let i = o.info();
            i.ufunc && (i.name == name || i.aliases.contains(&name))
        })
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

/// The C API's name of `op`'s constant: `HS_OP_` and the variant in capitals, words split
/// by `_` (`AddReduce` → `HS_OP_ADD_REDUCE`).
pub fn opcode_c_name(op: Opcode) -> String {
    let mut s = String::from("HS_OP_");
    for (i, c) in format!("{op:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

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
