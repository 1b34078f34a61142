//! The element types and NumPy's per-element semantics, written once per family.
//!
//! [`Elem`] is implemented for the 14 element types by four macros/impls: signed and
//! unsigned integers (one macro), `bool`, binary floats (`f32`/`f64`, one macro; `f16`
//! computes in `f32` and rounds once, as NumPy does) and complex (one macro over
//! `num_complex::Complex<f32|f64>`). Each implementation answers "what does opcode X do
//! to these elements" with NumPy's exact rules; the interpreter loops in the other
//! modules are generic over it.

use half::f16;
use hassium_core::{DType, Error, Opcode, Result, Scalar};
use num_complex::Complex;

/// A value in transit through an `astype` cast: every element type converts to and from
/// this, so casts need 14 + 14 conversions instead of 14 × 14.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum CastVal {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Complex(f64, f64),
}

impl CastVal {
    pub(crate) fn of_scalar(s: &Scalar) -> CastVal {
        match *s {
            Scalar::Bool(v) => CastVal::Bool(v),
            Scalar::Int8(v) => CastVal::Int(v.into()),
            Scalar::Int16(v) => CastVal::Int(v.into()),
            Scalar::Int32(v) => CastVal::Int(v.into()),
            Scalar::Int64(v) => CastVal::Int(v),
            Scalar::UInt8(v) => CastVal::UInt(v.into()),
            Scalar::UInt16(v) => CastVal::UInt(v.into()),
            Scalar::UInt32(v) => CastVal::UInt(v.into()),
            Scalar::UInt64(v) => CastVal::UInt(v),
            Scalar::Float16(v) => CastVal::Float(v.to_f64()),
            Scalar::Float32(v) => CastVal::Float(v.into()),
            Scalar::Float64(v) => CastVal::Float(v),
            Scalar::Complex64(r, i) => CastVal::Complex(r.into(), i.into()),
            Scalar::Complex128(r, i) => CastVal::Complex(r, i),
        }
    }
}

/// The error for an opcode applied to a dtype it does not take (verify rejects these
/// first; this keeps the interpreter total).
pub(crate) fn unsupported<T>(op: Opcode, dtype: DType) -> Result<T> {
    Err(Error::DTypeNotAllowed(format!(
        "ufunc '{}' not supported for the input types ({})",
        op.name(),
        dtype.name()
    )))
}

/// NumPy's logical_and/or/xor on truth values (also the combiners of their reductions).
pub(crate) fn logical(op: Opcode, a: bool, b: bool) -> Result<bool> {
    Ok(match op {
        Opcode::LogicalAnd => a && b,
        Opcode::LogicalOr => a || b,
        Opcode::LogicalXor => a != b,
        _ => return unsupported(op, DType::Bool),
    })
}

/// The six comparisons for ordered types (IEEE semantics for floats: NaN compares false,
/// except `not_equal`).
fn compare_ordered<T: PartialOrd>(op: Opcode, a: T, b: T, dtype: DType) -> Result<bool> {
    Ok(match op {
        Opcode::Equal => a == b,
        Opcode::NotEqual => a != b,
        Opcode::Less => a < b,
        Opcode::LessEqual => a <= b,
        Opcode::Greater => a > b,
        Opcode::GreaterEqual => a >= b,
        _ => return unsupported(op, dtype),
    })
}

/// NumPy's pairwise summation (`pairwise_sum` in `loops_utils.h.src`): blocks of fewer
/// than 8 are summed in order, blocks up to 128 with 8 interleaved accumulators, larger
/// ones split in two at a multiple of 8. Keeps float sums within a few ulps of NumPy's.
/// `values` must not be empty.
pub(crate) fn pairwise<T: Copy>(values: &[T], add: &impl Fn(T, T) -> T) -> T {
    let n = values.len();
    if n < 8 {
        values[1..].iter().fold(values[0], |acc, &v| add(acc, v))
    } else if n <= 128 {
        let mut r = [values[0]; 8];
        r.copy_from_slice(&values[..8]);
        let whole = n - n % 8;
        for chunk in values[8..whole].chunks_exact(8) {
            for (acc, &v) in r.iter_mut().zip(chunk) {
                *acc = add(*acc, v);
            }
        }
        let mut res = add(
            add(add(r[0], r[1]), add(r[2], r[3])),
            add(add(r[4], r[5]), add(r[6], r[7])),
        );
        for &v in &values[whole..] {
            res = add(res, v);
        }
        res
    } else {
        let mut half = n / 2;
        half -= half % 8;
        add(
            pairwise(&values[..half], add),
            pairwise(&values[half..], add),
        )
    }
}

/// One element type with NumPy's semantics for every opcode that takes it.
pub(crate) trait Elem: Copy + PartialEq + std::fmt::Debug + 'static {
    const DTYPE: DType;
    /// The component type: what `absolute`, `real` and `imag` return.
    type Real: Elem;

    /// Reads one element.
    ///
    /// # Safety
    /// `ptr` must be valid for reading `DTYPE.size()` bytes.
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: forwarded; every implementor but bool is valid for any bit pattern.
        unsafe { std::ptr::read_unaligned(ptr as *const Self) }
    }

    /// Writes one element.
    ///
    /// # Safety
    /// `ptr` must be valid for writing `DTYPE.size()` bytes.
    unsafe fn store(ptr: *mut u8, value: Self) {
        // SAFETY: forwarded.
        unsafe { std::ptr::write_unaligned(ptr as *mut Self, value) }
    }

    fn to_cast(self) -> CastVal;
    /// NumPy's `astype` into this type (see `cast.rs` for the out-of-range rules).
    fn from_cast(v: CastVal) -> Self;

    fn from_scalar(s: &Scalar) -> Self {
        Self::from_cast(CastVal::of_scalar(s))
    }
    fn from_bool(b: bool) -> Self {
        Self::from_cast(CastVal::Bool(b))
    }
    fn zero() -> Self {
        Self::from_cast(CastVal::Int(0))
    }
    fn one() -> Self {
        Self::from_cast(CastVal::Int(1))
    }
    /// Every bit set: the identity of `bitwise_and` (true for bool).
    fn all_ones() -> Self {
        Self::from_cast(CastVal::Int(-1))
    }

    /// NumPy truthiness (`x != 0`; NaN is true; complex is true when either part is).
    fn is_nonzero(self) -> bool;
    fn is_nan(self) -> bool {
        false
    }

    fn unary(op: Opcode, a: Self) -> Result<Self>;
    fn binary(op: Opcode, a: Self, b: Self) -> Result<Self>;
    /// `absolute`, `real`, `imag`.
    fn to_real(op: Opcode, a: Self) -> Result<Self::Real>;
    fn compare(op: Opcode, a: Self, b: Self) -> Result<bool>;
    /// `isnan`, `isinf`, `isfinite`; exact types are never NaN or infinite.
    fn classify(op: Opcode, _a: Self) -> Result<bool> {
        match op {
            Opcode::IsNan | Opcode::IsInf => Ok(false),
            Opcode::IsFinite => Ok(true),
            _ => unsupported(op, Self::DTYPE),
        }
    }

    /// `add.reduce` of a non-empty slice: in order for exact types, pairwise for floats.
    fn sum(values: &[Self]) -> Result<Self> {
        let mut acc = values.first().copied().unwrap_or_else(Self::zero);
        for &v in values.iter().skip(1) {
            acc = Self::binary(Opcode::Add, acc, v)?;
        }
        Ok(acc)
    }

    /// The inner product of matmul: sum of `a * b` over the pairs, from zero.
    fn dot(pairs: &[(Self, Self)]) -> Result<Self> {
        let mut acc = Self::zero();
        for &(a, b) in pairs {
            acc = Self::binary(Opcode::Add, acc, Self::binary(Opcode::Multiply, a, b)?)?;
        }
        Ok(acc)
    }
}

// --- bool ---------------------------------------------------------------------------------

impl Elem for bool {
    const DTYPE: DType = DType::Bool;
    type Real = bool;

    unsafe fn load(ptr: *const u8) -> bool {
        // SAFETY: forwarded; read as a byte so any non-zero byte is true, never UB.
        unsafe { *ptr != 0 }
    }
    unsafe fn store(ptr: *mut u8, value: bool) {
        // SAFETY: forwarded.
        unsafe { *ptr = value as u8 }
    }
    fn to_cast(self) -> CastVal {
        CastVal::Bool(self)
    }
    fn from_cast(v: CastVal) -> bool {
        match v {
            CastVal::Bool(b) => b,
            CastVal::Int(i) => i != 0,
            CastVal::UInt(u) => u != 0,
            CastVal::Float(f) => f != 0.0,
            CastVal::Complex(r, i) => r != 0.0 || i != 0.0,
        }
    }
    fn is_nonzero(self) -> bool {
        self
    }
    fn unary(op: Opcode, a: bool) -> Result<bool> {
        match op {
            Opcode::Positive | Opcode::Floor | Opcode::Ceil | Opcode::Trunc | Opcode::Conj => Ok(a),
            Opcode::Invert => Ok(!a),
            _ => unsupported(op, DType::Bool),
        }
    }
    /// NumPy's bool loops: add is or, multiply is and, max/min are or/and.
    fn binary(op: Opcode, a: bool, b: bool) -> Result<bool> {
        match op {
            Opcode::Add | Opcode::Maximum | Opcode::Fmax | Opcode::BitwiseOr => Ok(a | b),
            Opcode::Multiply | Opcode::Minimum | Opcode::Fmin | Opcode::BitwiseAnd => Ok(a & b),
            Opcode::BitwiseXor => Ok(a ^ b),
            _ => unsupported(op, DType::Bool),
        }
    }
    fn to_real(op: Opcode, a: bool) -> Result<bool> {
        match op {
            Opcode::Absolute | Opcode::Real => Ok(a),
            Opcode::Imag => Ok(false),
            _ => unsupported(op, DType::Bool),
        }
    }
    fn compare(op: Opcode, a: bool, b: bool) -> Result<bool> {
        compare_ordered(op, a, b, DType::Bool)
    }
}

// --- integers -----------------------------------------------------------------------------

/// Integer semantics (two's complement wrapping, Python's floor-division signs, NumPy's
/// shifts). `$neg` tells whether a value is negative (always false for unsigned types).
macro_rules! int_elem {
    ($t:ty, $dt:ident, $cast:ident, $neg:expr) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$dt;
            type Real = $t;

            fn to_cast(self) -> CastVal {
                CastVal::$cast(self as _)
            }
            fn from_cast(v: CastVal) -> $t {
                match v {
                    CastVal::Bool(b) => b as $t,
                    CastVal::Int(i) => i as $t,
                    CastVal::UInt(u) => u as $t,
                    // As NumPy on x86-64, out of range too (see `float_to_int`).
                    CastVal::Float(f) | CastVal::Complex(f, _) => {
                        hassium_core::float_to_int(f, DType::$dt) as $t
                    }
                }
            }
            fn is_nonzero(self) -> bool {
                self != 0
            }
            fn unary(op: Opcode, a: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                Ok(match op {
                    Opcode::Negative => a.wrapping_neg(),
                    Opcode::Positive
                    | Opcode::Floor
                    | Opcode::Ceil
                    | Opcode::Trunc
                    | Opcode::Conj => a,
                    Opcode::Sign => ((a > 0) as $t).wrapping_sub(neg(a) as $t),
                    Opcode::Square => a.wrapping_mul(a),
                    // NumPy computes 1.0 / x and truncates: 1 and -1 are their own
                    // reciprocals, everything else (including 0) gives 0.
                    Opcode::Reciprocal => {
                        if a == 1 || (neg(a) && a == !0) {
                            a
                        } else {
                            0
                        }
                    }
                    Opcode::Invert => !a,
                    _ => return unsupported(op, DType::$dt),
                })
            }
            #[inline]
            fn binary(op: Opcode, a: $t, b: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                const BITS: u64 = <$t>::BITS as u64;
                Ok(match op {
                    Opcode::Add => a.wrapping_add(b),
                    Opcode::Subtract => a.wrapping_sub(b),
                    Opcode::Multiply => a.wrapping_mul(b),
                    // Division by zero gives 0 (NumPy warns and returns 0).
                    Opcode::FloorDivide => {
                        if b == 0 {
                            0
                        } else {
                            let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
                            if r != 0 && neg(r) != neg(b) {
                                q.wrapping_sub(1)
                            } else {
                                q
                            }
                        }
                    }
                    // C's remainder (the dividend's sign); 0 for a zero divisor.
                    Opcode::Fmod => {
                        if b == 0 {
                            0
                        } else {
                            a.wrapping_rem(b)
                        }
                    }
                    // The remainder takes the divisor's sign, as in Python.
                    Opcode::Remainder => {
                        if b == 0 {
                            0
                        } else {
                            let r = a.wrapping_rem(b);
                            if r != 0 && neg(r) != neg(b) {
                                r.wrapping_add(b)
                            } else {
                                r
                            }
                        }
                    }
                    Opcode::Power => {
                        if neg(b) {
                            return Err(Error::Invalid(hassium_core::NEGATIVE_POWER.into()));
                        }
                        let (mut base, mut e, mut acc) = (a, b as u64, 1 as $t);
                        while e > 0 {
                            if e & 1 == 1 {
                                acc = acc.wrapping_mul(base);
                            }
                            base = base.wrapping_mul(base);
                            e >>= 1;
                        }
                        acc
                    }
                    Opcode::Maximum | Opcode::Fmax => a.max(b),
                    Opcode::Minimum | Opcode::Fmin => a.min(b),
                    Opcode::BitwiseAnd => a & b,
                    Opcode::BitwiseOr => a | b,
                    Opcode::BitwiseXor => a ^ b,
                    // NumPy (npy_lshift/npy_rshift): a count outside 0..bits (negative
                    // counts read as huge unsigned ones) shifts everything out: 0, or -1
                    // for an arithmetic right shift of a negative value.
                    Opcode::LeftShift => {
                        if (b as u64) < BITS {
                            a.wrapping_shl(b as u32)
                        } else {
                            0
                        }
                    }
                    Opcode::RightShift => {
                        if (b as u64) < BITS {
                            a.wrapping_shr(b as u32)
                        } else if neg(a) {
                            !0
                        } else {
                            0
                        }
                    }
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                match op {
                    // abs(MIN) wraps to MIN, as in NumPy.
                    Opcode::Absolute => Ok(if neg(a) { a.wrapping_neg() } else { a }),
                    Opcode::Real => Ok(a),
                    Opcode::Imag => Ok(0),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: $t, b: $t) -> Result<bool> {
                compare_ordered(op, a, b, DType::$dt)
            }
        }
    };
}

int_elem!(i8, Int8, Int, |x| x < 0);
int_elem!(i16, Int16, Int, |x| x < 0);
int_elem!(i32, Int32, Int, |x| x < 0);
int_elem!(i64, Int64, Int, |x| x < 0);
int_elem!(u8, UInt8, UInt, |_| false);
int_elem!(u16, UInt16, UInt, |_| false);
int_elem!(u32, UInt32, UInt, |_| false);
int_elem!(u64, UInt64, UInt, |_| false);

// --- binary floats ------------------------------------------------------------------------

/// IEEE floats with NumPy's rules where C and NumPy differ (floor_divide/remainder,
/// NaN-propagating maximum/minimum, sign of zero and NaN).
macro_rules! float_elem {
    ($t:ident, $dt:ident) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$dt;
            type Real = $t;

            fn to_cast(self) -> CastVal {
                CastVal::Float(self as f64)
            }
            fn from_cast(v: CastVal) -> $t {
                match v {
                    CastVal::Bool(b) => b as u8 as $t,
                    CastVal::Int(i) => i as $t,
                    CastVal::UInt(u) => u as $t,
                    CastVal::Float(f) | CastVal::Complex(f, _) => f as $t,
                }
            }
            fn is_nonzero(self) -> bool {
                self != 0.0
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn unary(op: Opcode, a: $t) -> Result<$t> {
                Ok(match op {
                    Opcode::Negative => -a,
                    Opcode::Positive | Opcode::Conj => a,
                    // NumPy: NaN stays NaN, both zeros give +0.
                    Opcode::Sign => {
                        if a > 0.0 {
                            1.0
                        } else if a < 0.0 {
                            -1.0
                        } else if a == 0.0 {
                            0.0
                        } else {
                            a
                        }
                    }
                    Opcode::Sqrt => a.sqrt(),
                    Opcode::Cbrt => a.cbrt(),
                    Opcode::Square => a * a,
                    Opcode::Reciprocal => 1.0 / a,
                    Opcode::Exp => a.exp(),
                    Opcode::Exp2 => a.exp2(),
                    Opcode::Expm1 => a.exp_m1(),
                    Opcode::Log => a.ln(),
                    Opcode::Log2 => a.log2(),
                    Opcode::Log10 => a.log10(),
                    Opcode::Log1p => a.ln_1p(),
                    Opcode::Sin => a.sin(),
                    Opcode::Cos => a.cos(),
                    Opcode::Tan => a.tan(),
                    Opcode::Arcsin => a.asin(),
                    Opcode::Arccos => a.acos(),
                    Opcode::Arctan => a.atan(),
                    Opcode::Sinh => a.sinh(),
                    Opcode::Cosh => a.cosh(),
                    Opcode::Tanh => a.tanh(),
                    Opcode::Arcsinh => a.asinh(),
                    Opcode::Arccosh => a.acosh(),
                    Opcode::Arctanh => a.atanh(),
                    Opcode::Floor => a.floor(),
                    Opcode::Ceil => a.ceil(),
                    Opcode::Trunc => a.trunc(),
                    Opcode::Rint => a.round_ties_even(),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            #[inline]
            fn binary(op: Opcode, a: $t, b: $t) -> Result<$t> {
                /// NumPy's `npy_divmod`: fmod, then moved to the divisor's sign, with
                /// the quotient snapped to the nearest integer.
                fn divmod(a: $t, b: $t) -> ($t, $t) {
                    let m = a % b;
                    if b == 0.0 {
                        return (a / b, m);
                    }
                    let mut div = (a - m) / b;
                    let mut m = m;
                    if m != 0.0 {
                        if (b < 0.0) != (m < 0.0) {
                            m += b;
                            div -= 1.0;
                        }
                    } else {
                        m = (0.0 as $t).copysign(b);
                    }
                    let floordiv = if div != 0.0 {
                        let f = div.floor();
                        if div - f > 0.5 {
                            f + 1.0
                        } else {
                            f
                        }
                    } else {
                        (0.0 as $t).copysign(a / b)
                    };
                    (floordiv, m)
                }
                /// C's `nextafter` (NumPy's float and double loops call it): `b` when the
                /// two are equal (0.0 towards -0.0 is -0.0), from a zero the smallest
                /// subnormal with `b`'s sign, else the neighbour of `a` towards `b`: one up
                /// in `a`'s magnitude bits away from zero (the largest finite value steps
                /// to infinity), one down towards it. A NaN comes out of `a + b`, as
                /// glibc's, so it keeps the NaN operand's sign.
                fn next_toward(a: $t, b: $t) -> $t {
                    if a.is_nan() || b.is_nan() {
                        return a + b;
                    }
                    if a == b {
                        return b;
                    }
                    if a == 0.0 {
                        return <$t>::from_bits(1).copysign(b);
                    }
                    let bits = a.to_bits();
                    <$t>::from_bits(if (b > a) == (a > 0.0) {
                        bits + 1
                    } else {
                        bits - 1
                    })
                }
                Ok(match op {
                    Opcode::Add => a + b,
                    Opcode::Subtract => a - b,
                    Opcode::Multiply => a * b,
                    Opcode::Divide => a / b,
                    Opcode::FloorDivide => {
                        if b == 0.0 {
                            a / b
                        } else {
                            divmod(a, b).0
                        }
                    }
                    Opcode::Remainder => {
                        if b == 0.0 {
                            a % b
                        } else {
                            divmod(a, b).1
                        }
                    }
                    Opcode::Power => a.powf(b),
                    // maximum/minimum propagate NaN (either side) and give the second
                    // operand on ties (so maximum(-0.0, 0.0) is 0.0, as NumPy); fmax/fmin
                    // ignore NaN and give the first operand on ties (C's fmax).
                    Opcode::Maximum => {
                        if a > b || a.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Minimum => {
                        if a < b || a.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Fmax => {
                        if b.is_nan() || a >= b {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Fmin => {
                        if b.is_nan() || a <= b {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Arctan2 => a.atan2(b),
                    Opcode::Hypot => a.hypot(b),
                    // Rust's `%` on floats is C's fmod (exact, NaN for a zero divisor).
                    Opcode::Fmod => a % b,
                    Opcode::Copysign => a.copysign(b),
                    Opcode::Nextafter => next_toward(a, b),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: $t) -> Result<$t> {
                match op {
                    Opcode::Absolute => Ok(a.abs()),
                    Opcode::Real => Ok(a),
                    Opcode::Imag => Ok(0.0),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: $t, b: $t) -> Result<bool> {
                compare_ordered(op, a, b, DType::$dt)
            }
            fn classify(op: Opcode, a: $t) -> Result<bool> {
                match op {
                    Opcode::IsNan => Ok(a.is_nan()),
                    Opcode::IsInf => Ok(a.is_infinite()),
                    Opcode::IsFinite => Ok(a.is_finite()),
                    Opcode::Signbit => Ok(a.is_sign_negative()),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn sum(values: &[$t]) -> Result<$t> {
                // NumPy starts from the identity, so a sum of negative zeros is +0.0.
                Ok(if values.is_empty() {
                    0.0
                } else {
                    0.0 + pairwise(values, &|x, y| x + y)
                })
            }
        }
    };
}

float_elem!(f32, Float32);
float_elem!(f64, Float64);

/// float16 computes every operation in f32 and rounds the result once, as NumPy's half
/// loops do (reductions and matmul accumulate in f32 and round at the end).
impl Elem for f16 {
    const DTYPE: DType = DType::Float16;
    type Real = f16;

    fn to_cast(self) -> CastVal {
        CastVal::Float(self.to_f64())
    }
    fn from_cast(v: CastVal) -> f16 {
        match v {
            CastVal::Bool(b) => f16::from_f32(b as u8 as f32),
            CastVal::Int(i) => f16::from_f64(i as f64),
            CastVal::UInt(u) => f16::from_f64(u as f64),
            CastVal::Float(f) | CastVal::Complex(f, _) => f16::from_f64(f),
        }
    }
    fn is_nonzero(self) -> bool {
        self.to_f32() != 0.0
    }
    fn is_nan(self) -> bool {
        f16::is_nan(self)
    }
    fn unary(op: Opcode, a: f16) -> Result<f16> {
        match <f32 as Elem>::unary(op, a.to_f32()) {
            Ok(v) => Ok(f16::from_f32(v)),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn binary(op: Opcode, a: f16, b: f16) -> Result<f16> {
        // A float16 neighbour is not a float32 one rounded.
        if op == Opcode::Nextafter {
            return Ok(f16_next_toward(a, b));
        }
        match <f32 as Elem>::binary(op, a.to_f32(), b.to_f32()) {
            Ok(v) => Ok(f16::from_f32(v)),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn to_real(op: Opcode, a: f16) -> Result<f16> {
        match op {
            Opcode::Absolute => Ok(f16::from_f32(a.to_f32().abs())),
            Opcode::Real => Ok(a),
            Opcode::Imag => Ok(f16::ZERO),
            _ => unsupported(op, DType::Float16),
        }
    }
    fn compare(op: Opcode, a: f16, b: f16) -> Result<bool> {
        compare_ordered(op, a.to_f32(), b.to_f32(), DType::Float16)
    }
    fn classify(op: Opcode, a: f16) -> Result<bool> {
        match <f32 as Elem>::classify(op, a.to_f32()) {
            Ok(v) => Ok(v),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn sum(values: &[f16]) -> Result<f16> {
        let wide: Vec<f32> = values.iter().map(|v| v.to_f32()).collect();
        <f32 as Elem>::sum(&wide).map(f16::from_f32)
    }
    fn dot(pairs: &[(f16, f16)]) -> Result<f16> {
        let acc = pairs
            .iter()
            .fold(0.0f32, |acc, (a, b)| acc + a.to_f32() * b.to_f32());
        Ok(f16::from_f32(acc))
    }
}

/// NumPy's `npy_half_nextafter`, which parts from C's `nextafter` (the float and double
/// loops) in two places: equal operands give `a` (0.0 towards -0.0 stays 0.0), and any NaN
/// gives the one NaN it knows, 0x7e00. Otherwise as C: from a zero the smallest subnormal
/// with `b`'s sign, else one step of `a`'s magnitude bits away from or towards zero.
fn f16_next_toward(a: f16, b: f16) -> f16 {
    if a.is_nan() || b.is_nan() {
        return f16::NAN;
    }
    if a == b {
        return a;
    }
    if a.to_f32() == 0.0 {
        return f16::from_bits((b.to_bits() & 0x8000) | 1);
    }
    let bits = a.to_bits();
    f16::from_bits(if (b > a) == (a.to_f32() > 0.0) {
        bits + 1
    } else {
        bits - 1
    })
}

// --- complex ------------------------------------------------------------------------------

/// Complex numbers with NumPy's formulas where they are not the textbook ones (Smith's
/// division, `nc_pow`'s integer powers, NumPy 2's `sign`, `expm1`/`log1p`); the
/// transcendental functions are num-complex's principal branches.
macro_rules! complex_elem {
    ($f:ident, $dt:ident, $ops:ident) => {
        /// Complex formulas NumPy spells out itself (`npy_math_complex`, `loops.c.src`).
        mod $ops {
            use num_complex::Complex;

            /// The textbook product, no rescaling (as NumPy).
            pub(super) fn mul(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
            }

            /// Smith's division, as NumPy's complex divide loop; 0 / 0 gives NaN and
            /// x / 0 a complex infinity.
            pub(super) fn div(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                let (br_abs, bi_abs) = (b.re.abs(), b.im.abs());
                if br_abs >= bi_abs {
                    if br_abs == 0.0 && bi_abs == 0.0 {
                        Complex::new(a.re / br_abs, a.im / br_abs)
                    } else {
                        let rat = b.im / b.re;
                        let scl = 1.0 / (b.re + b.im * rat);
                        Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
                    }
                } else {
                    let rat = b.re / b.im;
                    let scl = 1.0 / (b.im + b.re * rat);
                    Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
                }
            }

            fn sqrt(re: $f, im: $f) -> Complex<$f> {
                Complex::new(re, im).sqrt()
            }

            // Inverse functions by Kahan's formulas ("Branch cuts for complex elementary
            // functions", 1987). They form 1 - z as (1 - x, -y) rather than by complex
            // subtraction, so the sign of a zero imaginary part picks the side of the
            // branch cut as C99 (and NumPy) do: arcsin(2+0j) = pi/2 + 1.3169579j.

            pub(super) fn asin(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new((x / (s1m * s1p).re).atan(), (s1m.conj() * s1p).im.asinh())
            }

            pub(super) fn acos(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new(2.0 * s1m.re.atan2(s1p.re), (s1p.conj() * s1m).im.asinh())
            }

            pub(super) fn acosh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (sm1, sp1) = (sqrt(x - 1.0, y), sqrt(x + 1.0, y));
                Complex::new((sm1.conj() * sp1).re.asinh(), 2.0 * sm1.im.atan2(sp1.re))
            }

            /// asinh(z) = -i asin(iz).
            pub(super) fn asinh(z: Complex<$f>) -> Complex<$f> {
                let w = asin(Complex::new(-z.im, z.re));
                Complex::new(w.im, -w.re)
            }

            /// atanh(z) = (log1p(4x / ((1-x)^2 + y^2)) / 4, atan2(2y, (1-x)(1+x) - y^2) / 2),
            /// which keeps precision near 0 and the C99 signs on the cuts.
            pub(super) fn atanh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let d = (1.0 - x) * (1.0 - x) + y * y;
                Complex::new(
                    (4.0 * x / d).ln_1p() / 4.0,
                    (2.0 * y).atan2((1.0 - x) * (1.0 + x) - y * y) / 2.0,
                )
            }

            /// atan(z) = -i atanh(iz).
            pub(super) fn atan(z: Complex<$f>) -> Complex<$f> {
                let w = atanh(Complex::new(-z.im, z.re));
                Complex::new(w.im, -w.re)
            }

            /// NumPy's `nc_pow`: x**0 is 1, 0**x is 0 for real positive x and NaN
            /// otherwise, small integer exponents multiply exactly, the rest is
            /// exp(b ln a).
            pub(super) fn pow(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                let one = Complex::new(1.0, 0.0);
                if b.re == 0.0 && b.im == 0.0 {
                    return one;
                }
                if a.re == 0.0 && a.im == 0.0 {
                    return if b.re > 0.0 && b.im == 0.0 {
                        Complex::new(0.0, 0.0)
                    } else {
                        Complex::new($f::NAN, $f::NAN)
                    };
                }
                if b.im == 0.0 && b.re == b.re.trunc() && b.re.abs() < 100.0 {
                    let n = b.re as i64;
                    match n {
                        1 => return a,
                        2 => return mul(a, a),
                        3 => return mul(mul(a, a), a),
                        _ => {
                            let (mut e, mut p, mut acc) = (n.unsigned_abs(), a, one);
                            loop {
                                if e & 1 == 1 {
                                    acc = mul(acc, p);
                                }
                                e >>= 1;
                                if e == 0 {
                                    break;
                                }
                                p = mul(p, p);
                            }
                            return if n < 0 { div(one, acc) } else { acc };
                        }
                    }
                }
                a.powc(b)
            }
        }

        impl Elem for Complex<$f> {
            const DTYPE: DType = DType::$dt;
            type Real = $f;

            fn to_cast(self) -> CastVal {
                CastVal::Complex(self.re as f64, self.im as f64)
            }
            fn from_cast(v: CastVal) -> Complex<$f> {
                match v {
                    CastVal::Bool(b) => Complex::new(b as u8 as $f, 0.0),
                    CastVal::Int(i) => Complex::new(i as $f, 0.0),
                    CastVal::UInt(u) => Complex::new(u as $f, 0.0),
                    CastVal::Float(f) => Complex::new(f as $f, 0.0),
                    CastVal::Complex(r, i) => Complex::new(r as $f, i as $f),
                }
            }
            fn is_nonzero(self) -> bool {
                self.re != 0.0 || self.im != 0.0
            }
            fn is_nan(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
            fn unary(op: Opcode, a: Complex<$f>) -> Result<Complex<$f>> {
                use std::$f::consts::{LN_2, LOG10_E, LOG2_E};
                let c = Complex::new;
                Ok(match op {
                    Opcode::Negative => -a,
                    Opcode::Positive => a,
                    Opcode::Conj => a.conj(),
                    // NumPy 2: z / |z|, 0 for 0, with its rules for infinities and NaN.
                    Opcode::Sign => {
                        let abs = a.re.hypot(a.im);
                        if abs.is_nan() {
                            c($f::NAN, $f::NAN)
                        } else if abs.is_infinite() {
                            if a.re.is_infinite() {
                                if a.im.is_infinite() {
                                    c($f::NAN, $f::NAN)
                                } else {
                                    c(if a.re > 0.0 { 1.0 } else { -1.0 }, 0.0)
                                }
                            } else {
                                c(0.0, if a.im > 0.0 { 1.0 } else { -1.0 })
                            }
                        } else if abs == 0.0 {
                            c(0.0, 0.0)
                        } else {
                            c(a.re / abs, a.im / abs)
                        }
                    }
                    Opcode::Sqrt => a.sqrt(),
                    Opcode::Square => $ops::mul(a, a),
                    Opcode::Reciprocal => {
                        if a.im.abs() <= a.re.abs() {
                            let r = a.im / a.re;
                            let d = a.re + a.im * r;
                            c(1.0 / d, -r / d)
                        } else {
                            let r = a.re / a.im;
                            let d = a.re * r + a.im;
                            c(r / d, -1.0 / d)
                        }
                    }
                    Opcode::Exp => a.exp(),
                    Opcode::Exp2 => (a * LN_2).exp(),
                    Opcode::Expm1 => {
                        let h = (a.im / 2.0).sin();
                        c(
                            a.re.exp_m1() * a.im.cos() - 2.0 * h * h,
                            a.re.exp() * a.im.sin(),
                        )
                    }
                    Opcode::Log => a.ln(),
                    Opcode::Log2 => a.ln() * LOG2_E,
                    Opcode::Log10 => a.ln() * LOG10_E,
                    Opcode::Log1p => {
                        let l = (a.re + 1.0).hypot(a.im);
                        c(l.ln(), a.im.atan2(a.re + 1.0))
                    }
                    Opcode::Sin => a.sin(),
                    Opcode::Cos => a.cos(),
                    Opcode::Tan => a.tan(),
                    Opcode::Arcsin => $ops::asin(a),
                    Opcode::Arccos => $ops::acos(a),
                    Opcode::Arctan => $ops::atan(a),
                    Opcode::Sinh => a.sinh(),
                    Opcode::Cosh => a.cosh(),
                    Opcode::Tanh => a.tanh(),
                    Opcode::Arcsinh => $ops::asinh(a),
                    Opcode::Arccosh => $ops::acosh(a),
                    Opcode::Arctanh => $ops::atanh(a),
                    Opcode::Rint => c(a.re.round_ties_even(), a.im.round_ties_even()),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn binary(op: Opcode, a: Complex<$f>, b: Complex<$f>) -> Result<Complex<$f>> {
                Ok(match op {
                    Opcode::Add => a + b,
                    Opcode::Subtract => a - b,
                    Opcode::Multiply => $ops::mul(a, b),
                    Opcode::Divide => $ops::div(a, b),
                    Opcode::Power => $ops::pow(a, b),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: Complex<$f>) -> Result<$f> {
                match op {
                    Opcode::Absolute => Ok(a.re.hypot(a.im)),
                    Opcode::Real => Ok(a.re),
                    Opcode::Imag => Ok(a.im),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: Complex<$f>, b: Complex<$f>) -> Result<bool> {
                match op {
                    Opcode::Equal => Ok(a == b),
                    Opcode::NotEqual => Ok(a != b),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn classify(op: Opcode, a: Complex<$f>) -> Result<bool> {
                match op {
                    Opcode::IsNan => Ok(a.re.is_nan() || a.im.is_nan()),
                    Opcode::IsInf => Ok(a.re.is_infinite() || a.im.is_infinite()),
                    Opcode::IsFinite => Ok(a.re.is_finite() && a.im.is_finite()),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn sum(values: &[Complex<$f>]) -> Result<Complex<$f>> {
                let zero = Complex::new(0.0, 0.0);
                Ok(if values.is_empty() {
                    zero
                } else {
                    zero + pairwise(values, &|x, y| x + y)
                })
            }
        }
    };
}

complex_elem!(f32, Complex64, complex64_ops);
complex_elem!(f64, Complex128, complex128_ops);
