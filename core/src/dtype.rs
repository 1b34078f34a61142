//! Element types and NumPy 2 (NEP 50) type promotion.

use serde::{Deserialize, Serialize};

/// The 14 numeric dtypes NumPy programs use. Discriminants are stable: they cross the
/// engine ABI and are hashed into kernel keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum DType {
    Bool = 0,
    Int8 = 1,
    Int16 = 2,
    Int32 = 3,
    Int64 = 4,
    UInt8 = 5,
    UInt16 = 6,
    UInt32 = 7,
    UInt64 = 8,
    Float16 = 9,
    Float32 = 10,
    Float64 = 11,
    Complex64 = 12,
    Complex128 = 13,
}

/// The coarse family of a dtype, as NumPy's `dtype.kind` letters group them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Bool,
    Int,
    UInt,
    Float,
    Complex,
}

/// The kind of a Python scalar, which promotes "weakly" under NEP 50.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
    Complex,
}

impl DType {
    pub const ALL: [DType; 14] = [
        DType::Bool,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    pub fn from_u8(v: u8) -> Option<DType> {
        DType::ALL.get(v as usize).copied()
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        use DType::*;
        match self {
            Bool | Int8 | UInt8 => 1,
            Int16 | UInt16 | Float16 => 2,
            Int32 | UInt32 | Float32 => 4,
            Int64 | UInt64 | Float64 | Complex64 => 8,
            Complex128 => 16,
        }
    }

    /// NumPy's name for the dtype (`np.dtype(name)` accepts it).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            UInt8 => "uint8",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            Float16 => "float16",
            Float32 => "float32",
            Float64 => "float64",
            Complex64 => "complex64",
            Complex128 => "complex128",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn kind(self) -> Kind {
        use DType::*;
        match self {
            Bool => Kind::Bool,
            Int8 | Int16 | Int32 | Int64 => Kind::Int,
            UInt8 | UInt16 | UInt32 | UInt64 => Kind::UInt,
            Float16 | Float32 | Float64 => Kind::Float,
            Complex64 | Complex128 => Kind::Complex,
        }
    }

    pub fn is_bool(self) -> bool {
        self.kind() == Kind::Bool
    }
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Int | Kind::UInt)
    }
    pub fn is_signed_integer(self) -> bool {
        self.kind() == Kind::Int
    }
    pub fn is_unsigned_integer(self) -> bool {
        self.kind() == Kind::UInt
    }
    pub fn is_float(self) -> bool {
        self.kind() == Kind::Float
    }
    pub fn is_complex(self) -> bool {
        self.kind() == Kind::Complex
    }
    /// Float or complex: the types NumPy calls "inexact".
    pub fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The real component type: complex64 → float32, complex128 → float64, others unchanged.
    pub fn real(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    /// The complex type whose components are at least `self` (float16/32 → complex64).
    fn complex_of(self) -> DType {
        match self {
            DType::Float64 | DType::Complex128 => DType::Complex128,
            _ => DType::Complex64,
        }
    }

    fn int_of_size(signed: bool, size: usize) -> DType {
        match (signed, size) {
            (true, 1) => DType::Int8,
            (true, 2) => DType::Int16,
            (true, 4) => DType::Int32,
            (true, _) => DType::Int64,
            (false, 1) => DType::UInt8,
            (false, 2) => DType::UInt16,
            (false, 4) => DType::UInt32,
            (false, _) => DType::UInt64,
        }
    }

    /// The smallest float that holds every value of an integer (or bool) type exactly
    /// enough for NumPy's promotion table.
    fn min_float(self) -> DType {
        match self.size() {
            1 => DType::Float16,
            2 => DType::Float32,
            _ => DType::Float64,
        }
    }
}

/// NumPy 2's `np.result_type(a, b)` for two array dtypes.
pub fn promote(a: DType, b: DType) -> DType {
    use Kind::*;
    if a == b {
        return a;
    }
    let (ka, kb) = (a.kind(), b.kind());
    match (ka, kb) {
        (Bool, _) => b,
        (_, Bool) => a,
        (Int, Int) | (UInt, UInt) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        (Int, UInt) | (UInt, Int) => {
            let (s, u) = if ka == Int { (a, b) } else { (b, a) };
            if s.size() > u.size() {
                s
            } else if u.size() < 8 {
                DType::int_of_size(true, u.size() * 2)
            } else {
                DType::Float64
            }
        }
        (Int | UInt, Float | Complex) => promote(a.min_float(), b),
        (Float | Complex, Int | UInt) => promote(a, b.min_float()),
        (Float, Float) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        (Complex, Complex) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        (Float, Complex) => promote(a.complex_of(), b),
        (Complex, Float) => promote(a, b.complex_of()),
    }
}

/// NEP 50 promotion of an array dtype with a Python scalar of the given kind: the
/// scalar is "weak" and only its kind matters (value overflow is the bridge's check).
pub fn promote_weak(array: DType, scalar: ScalarKind) -> DType {
    match scalar {
        ScalarKind::Bool => array,
        ScalarKind::Int => {
            if array.is_bool() {
                DType::Int64
            } else {
                array
            }
        }
        ScalarKind::Float => {
            if array.is_inexact() {
                array
            } else {
                DType::Float64
            }
        }
        ScalarKind::Complex => match array.kind() {
            Kind::Complex => array,
            Kind::Float => array.complex_of(),
            _ => DType::Complex128,
        },
    }
}

/// A set of dtypes as a bit mask indexed by discriminant; the opcode table uses it to say
/// which input types an opcode accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TypeSet(pub u16);

impl TypeSet {
    pub const NONE: TypeSet = TypeSet(0);
    pub const BOOL: TypeSet = TypeSet(1);
    pub const SINT: TypeSet = TypeSet(0b1_1110);
    pub const UINT: TypeSet = TypeSet(0b1_1110_0000);
    pub const INT: TypeSet = TypeSet(Self::SINT.0 | Self::UINT.0);
    pub const FLOAT: TypeSet = TypeSet(0b1110_0000_0000);
    pub const COMPLEX: TypeSet = TypeSet(0b11_0000_0000_0000);
    pub const INEXACT: TypeSet = TypeSet(Self::FLOAT.0 | Self::COMPLEX.0);
    pub const REAL: TypeSet = TypeSet(Self::INT.0 | Self::FLOAT.0);
    pub const NUMERIC: TypeSet = TypeSet(Self::INT.0 | Self::INEXACT.0);
    pub const ALL: TypeSet = TypeSet(0b11_1111_1111_1111);

    pub const fn union(self, other: TypeSet) -> TypeSet {
        TypeSet(self.0 | other.0)
    }
    pub fn contains(self, d: DType) -> bool {
        self.0 & (1 << d as u8) != 0
    }
    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |d| self.contains(*d))
    }
    pub fn without(self, other: TypeSet) -> TypeSet {
        TypeSet(self.0 & !other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_matches_numpy_table_samples() {
        assert_eq!(promote(Int8, UInt8), Int16);
        assert_eq!(promote(Int64, UInt64), Float64);
        assert_eq!(promote(UInt32, Int32), Int64);
        assert_eq!(promote(Int16, Float16), Float32);
        assert_eq!(promote(UInt8, Float16), Float16);
        assert_eq!(promote(Int32, Float32), Float64);
        assert_eq!(promote(Float64, Complex64), Complex128);
        assert_eq!(promote(Float16, Complex64), Complex64);
        assert_eq!(promote(Int16, Complex64), Complex64);
        assert_eq!(promote(Int32, Complex64), Complex128);
        assert_eq!(promote(Bool, Int8), Int8);
        assert_eq!(promote(Bool, Bool), Bool);
    }

    #[test]
    fn promotion_is_commutative() {
        for a in DType::ALL {
            for b in DType::ALL {
                assert_eq!(promote(a, b), promote(b, a), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn weak_scalars_keep_the_array_type() {
        assert_eq!(promote_weak(Float32, ScalarKind::Float), Float32);
        assert_eq!(promote_weak(Int8, ScalarKind::Int), Int8);
        assert_eq!(promote_weak(Int8, ScalarKind::Float), Float64);
        assert_eq!(promote_weak(Bool, ScalarKind::Int), Int64);
        assert_eq!(promote_weak(Float32, ScalarKind::Complex), Complex64);
        assert_eq!(promote_weak(UInt16, ScalarKind::Complex), Complex128);
    }

    #[test]
    fn typesets_partition_the_dtypes() {
        for d in DType::ALL {
            let n = [
                TypeSet::BOOL,
                TypeSet::SINT,
                TypeSet::UINT,
                TypeSet::FLOAT,
                TypeSet::COMPLEX,
            ]
            .iter()
            .filter(|s| s.contains(d))
            .count();
            assert_eq!(n, 1, "{d:?}");
        }
    }
}
