//! The element types and NumPy's per-element semantics, written once per family.
//!
//! [`Elem`] is implemented for the 14 element types by four macros/impls: signed and
//! unsigned integers (one macro), `bool`, binary floats (`f32`/`f64`, one macro; `f16`
//! computes in `f32` and rounds once, as NumPy does) and complex (one macro over
//! `num_complex::Complex<f32|f64>`). Each implementation answers "what does opcode X do
//! to these elements" with NumPy's exact rules; the interpreter loops in the other
//! modules are generic over it.
//!
//! This file holds what every family shares: the trait, [`CastVal`], the comparisons and
//! pairwise summation. One file per family implements it: `boolean.rs`, `integer.rs`,
//! `float.rs` (`f32`/`f64`), `float16.rs` and `complex.rs`.

use hassium_core::{DType, Error, Opcode, Result, Scalar};

mod boolean;
mod complex;
mod float;
mod float16;
mod integer;

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

    /// NumPy's sort order: ascending, NaN after every number (complex overrides this).
    fn sort_less(a: Self, b: Self) -> bool {
        if a.is_nan() {
            return false;
        }
        b.is_nan() || Self::compare(Opcode::Less, a, b).unwrap_or(false)
    }

    fn unary(op: Opcode, a: Self) -> Result<Self>;
    fn binary(op: Opcode, a: Self, b: Self) -> Result<Self>;
    /// A reduction's or scan's step `a op b`: `binary`, except where NumPy's reduce loop
    /// computes otherwise (complex overrides the product).
    fn combine(op: Opcode, a: Self, b: Self) -> Result<Self> {
        Self::binary(op, a, b)
    }
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
