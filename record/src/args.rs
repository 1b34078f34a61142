//! Operands as a bridge hands them over, and NumPy 2's rules for them: NEP 50 promotion
//! (Python scalars are weak), broadcasting, and the range checks of integer scalars.

use crate::error::{Error, Result};
use hassium_core::resolve::{int_fits, is_comparison};
use hassium_core::{
    broadcast_shapes, promote, promote_weak, same_shape, DType, Opcode, Scalar, ScalarKind,
};
use hassium_core::{Shape, View};

/// A scalar of the host language (a Python `int`, a C `double` operand): "weak" under
/// NEP 50, only its kind takes part in promotion, so `x * 0.5` keeps float32 float32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weak {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

impl Weak {
    pub fn kind(self) -> ScalarKind {
        match self {
            Weak::Bool(_) => ScalarKind::Bool,
            Weak::Int(_) => ScalarKind::Int,
            Weak::Float(_) => ScalarKind::Float,
            Weak::Complex(..) => ScalarKind::Complex,
        }
    }

    /// The dtype NumPy gives the scalar on its own (`np.asarray(1)` is int64).
    pub fn default_dtype(self) -> DType {
        match self {
            Weak::Bool(_) => DType::Bool,
            Weak::Int(v) if v > i64::MAX as i128 && v <= u64::MAX as i128 => DType::UInt64,
            Weak::Int(_) => DType::Int64,
            Weak::Float(_) => DType::Float64,
            Weak::Complex(..) => DType::Complex128,
        }
    }

    /// The value as a bytecode scalar of `dtype` (callers range-check integers first).
    pub fn to_scalar(self, dtype: DType) -> Scalar {
        match self {
            Weak::Bool(b) => Scalar::Bool(b).cast(dtype),
            Weak::Int(v) => {
                if let Ok(i) = i64::try_from(v) {
                    Scalar::Int64(i).cast(dtype)
                } else if let Ok(u) = u64::try_from(v) {
                    Scalar::UInt64(u).cast(dtype)
                } else {
                    Scalar::Float64(v as f64).cast(dtype)
                }
            }
            Weak::Float(f) => Scalar::Float64(f).cast(dtype),
            Weak::Complex(r, i) => Scalar::Complex128(r, i).cast(dtype),
        }
    }
}

/// An operand: a view of an array the bridge keeps alive for the call, a typed scalar
/// (NumPy's `np.float32(1)`, promoting like a 0-d array), or a weak one.
#[derive(Clone, Debug)]
pub enum Arg {
    Array(View),
    Typed(Scalar),
    Weak(Weak),
}

impl Arg {
    pub fn strong_dtype(&self) -> Option<DType> {
        match self {
            Arg::Array(v) => Some(v.dtype),
            Arg::Typed(s) => Some(s.dtype()),
            Arg::Weak(_) => None,
        }
    }

    pub fn view(&self) -> Option<&View> {
        match self {
            Arg::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The dtype a ufunc casts this operand from (a weak scalar as its default type).
    pub fn cast_from(&self) -> DType {
        match self {
            Arg::Weak(w) => w.default_dtype(),
            Arg::Array(v) => v.dtype,
            Arg::Typed(s) => s.dtype(),
        }
    }
}

/// NumPy 2's `result_type` of the operands (NEP 50: weak scalars only add their kind).
pub fn result_type(args: &[Arg]) -> DType {
    let strong = args.iter().filter_map(Arg::strong_dtype).reduce(promote);
    let weak = args.iter().filter_map(|a| match a {
        Arg::Weak(w) => Some(*w),
        _ => None,
    });
    match strong {
        Some(t) => weak.fold(t, |t, w| promote_weak(t, w.kind())),
        None => weak
            .map(Weak::default_dtype)
            .reduce(promote)
            .unwrap_or(DType::Float64),
    }
}

/// The broadcast shape of the array operands (scalars broadcast to anything).
pub fn broadcast_all(args: &[Arg]) -> Result<Shape> {
    let mut views = args.iter().filter_map(Arg::view);
    let Some(first) = views.next() else {
        return Ok(Shape::new());
    };
    // Built only when the shapes differ: most operations combine arrays of one shape.
    let mut shape: Option<Shape> = None;
    for v in views {
        let so_far = shape.as_deref().unwrap_or(&first.shape);
        if !same_shape(so_far, &v.shape) {
            shape = Some(broadcast_shapes(so_far, &v.shape)?);
        }
    }
    Ok(shape.unwrap_or_else(|| Shape::from_slice(&first.shape)))
}

/// Checks integer scalars against the type they will be cast to: NumPy 2 refuses
/// `uint8 + 300`, except where its loops take any Python int. Comparisons of integers
/// evaluate it exactly in a wider type (a bool array has no such loop: bool with an int
/// compares in int64). The logical ufuncs take any input as a bool, by its truthiness:
/// a Python int that fits a C long (and no other), and one out of the others' range
/// makes the loop bool (`logical_and(int8s, 300)`). `where` wraps it into the result.
pub fn check_weak_ints(op: Opcode, args: &[Arg], mut t: DType) -> Result<DType> {
    if is_logical(op) {
        for a in args {
            if let Arg::Weak(Weak::Int(v)) = *a {
                check_c_long(v)?;
            }
        }
    }
    let fits = |a: &Arg| !matches!(*a, Arg::Weak(Weak::Int(v)) if !int_fits(v, t));
    if args.iter().all(fits) {
        return Ok(t);
    }
    if is_logical(op) {
        return Ok(DType::Bool);
    }
    if op == Opcode::Where {
        // NumPy's `where` casts a Python int to the result's dtype as C casts (wrapping),
        // once it is an int64 or a uint64: `where(True, 300, int8s)` is 44.
        let c_int = |v: i128| (i64::MIN as i128..=u64::MAX as i128).contains(&v);
        if args
            .iter()
            .any(|a| matches!(*a, Arg::Weak(Weak::Int(v)) if !c_int(v)))
        {
            return Err(Error::Overflow(
                "Python int too large to convert to C long".into(),
            ));
        }
        return Ok(t);
    }
    let strong = args.iter().filter_map(Arg::strong_dtype).reduce(promote);
    let exact = is_comparison(op) && strong != Some(DType::Bool);
    for a in args {
        if let Arg::Weak(Weak::Int(v)) = *a {
            if !int_fits(v, t) {
                if !exact {
                    return Err(Error::IntOutOfBounds { value: v, dtype: t });
                }
                let wide = if i64::try_from(v).is_ok() {
                    DType::Int64
                } else if u64::try_from(v).is_ok() {
                    DType::UInt64
                } else {
                    DType::Float64
                };
                t = promote(t, wide);
            }
        }
    }
    Ok(t)
}

/// `logical_and`, `logical_or` and `logical_xor`: NumPy casts any input to their bool
/// loop (`??->?`), whatever the casting rule.
pub fn is_logical(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor
    )
}

/// A Python int becomes a bool through a C long, as NumPy converts it: `OverflowError`
/// outside [-2**63, 2**63).
pub fn check_c_long(v: i128) -> Result<()> {
    if i64::try_from(v).is_err() {
        return Err(Error::Overflow(
            "Python int too large to convert to C long".into(),
        ));
    }
    Ok(())
}

/// An integer scalar stored into an integer array must fit it (NumPy 2's
/// `OverflowError`); into a bool or inexact array any value is taken.
pub fn check_stored_int(value: &Arg, t: DType) -> Result<()> {
    match *value {
        Arg::Weak(Weak::Int(v)) if t.is_integer() && !int_fits(v, t) => {
            Err(Error::IntOutOfBounds { value: v, dtype: t })
        }
        _ => Ok(()),
    }
}

/// Checks a scalar about to be stored as an item of a `t` array (`a[i] = x`, `a.fill(x)`)
/// the way NumPy's setitem converts it, rather than casting it silently.
///
/// A float stored into an integer array goes through Python's `int()`: NaN is a
/// `ValueError`, ±inf and values beyond a C long are an `OverflowError`, and the rest is
/// truncated and then range-checked like an integer scalar. Typed float scalars take that
/// path into signed targets and are cast into unsigned ones (NumPy 2 does both; advanced
/// indexing casts them always, and its caller skips them). A weak complex cannot become
/// an integer or a float (`TypeError`); a typed complex is cast.
pub fn check_item(value: &Arg, t: DType) -> Result<()> {
    check_stored_int(value, t)?;
    let (f, weak) = match *value {
        Arg::Weak(Weak::Complex(..)) if t.is_integer() || t.is_float() => {
            let conv = if t.is_integer() {
                "int() argument must be a string, a bytes-like object or a real number"
            } else {
                "float() argument must be a string or a real number"
            };
            return Err(Error::Type(format!("{conv}, not 'complex'")));
        }
        Arg::Weak(Weak::Float(f)) => (f, true),
        Arg::Typed(s) if s.dtype().is_float() => (s.as_f64(), false),
        _ => return Ok(()),
    };
    if !t.is_integer() || !(weak || t.is_signed_integer()) {
        return Ok(());
    }
    if f.is_nan() {
        return Err(Error::Value("cannot convert float NaN to integer".into()));
    }
    if f.is_infinite() {
        return Err(Error::Overflow(
            "cannot convert float infinity to integer".into(),
        ));
    }
    // 2^63 and 2^64 are exact in f64. NumPy converts through a C long, [-2^63, 2^63), and
    // for uint64 through an unsigned long, up to 2^64.
    let top = if t == DType::UInt64 {
        2f64.powi(64)
    } else {
        2f64.powi(63)
    };
    let v = f.trunc();
    if v >= top || v < -(2f64.powi(63)) {
        return Err(Error::Overflow(
            "Python int too large to convert to C long".into(),
        ));
    }
    let v = v as i128;
    if !int_fits(v, t) {
        return Err(Error::IntOutOfBounds { value: v, dtype: t });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    fn a(d: DType) -> Arg {
        Arg::Array(View::contiguous(hassium_core::BaseId(1), d, &[2]))
    }

    #[test]
    fn weak_scalars_promote_by_kind_only() {
        assert_eq!(
            result_type(&[a(Float32), Arg::Weak(Weak::Float(0.5))]),
            Float32
        );
        assert_eq!(
            result_type(&[a(Int8), Arg::Weak(Weak::Float(0.5))]),
            Float64
        );
        assert_eq!(result_type(&[a(UInt8), Arg::Weak(Weak::Int(3))]), UInt8);
        assert_eq!(result_type(&[Arg::Weak(Weak::Int(3))]), Int64);
        assert_eq!(
            result_type(&[Arg::Typed(Scalar::Float32(1.0)), a(Int8)]),
            Float32
        );
    }

    #[test]
    fn integer_scalars_are_range_checked_except_in_comparisons() {
        let x = [Arg::Weak(Weak::Int(300))];
        assert!(matches!(
            check_weak_ints(Opcode::Add, &x, UInt8),
            Err(Error::IntOutOfBounds {
                value: 300,
                dtype: UInt8
            })
        ));
        assert_eq!(check_weak_ints(Opcode::Less, &x, UInt8).unwrap(), Int64);
        let big = [Arg::Weak(Weak::Int(u64::MAX as i128))];
        assert_eq!(check_weak_ints(Opcode::Less, &big, Int8).unwrap(), Float64);
    }

    #[test]
    fn logical_ufuncs_take_any_int_that_fits_a_c_long_as_a_bool() {
        let x = [a(Int8), Arg::Weak(Weak::Int(300))];
        assert_eq!(check_weak_ints(Opcode::LogicalAnd, &x, Int8).unwrap(), Bool);
        let big = [a(UInt64), Arg::Weak(Weak::Int(1 << 63))];
        assert!(matches!(
            check_weak_ints(Opcode::LogicalXor, &big, UInt64),
            Err(Error::Overflow(_))
        ));
    }

    #[test]
    fn where_wraps_any_int_of_an_int64_or_a_uint64() {
        let x = [a(Int8), Arg::Weak(Weak::Int(300))];
        assert_eq!(check_weak_ints(Opcode::Where, &x, Int8).unwrap(), Int8);
        let big = [a(Int8), Arg::Weak(Weak::Int(1 << 64))];
        assert!(matches!(
            check_weak_ints(Opcode::Where, &big, Int8),
            Err(Error::Overflow(_))
        ));
    }

    #[test]
    fn bool_arrays_compare_with_ints_in_int64() {
        let x = [a(Bool), Arg::Weak(Weak::Int(1 << 63))];
        assert!(matches!(
            check_weak_ints(Opcode::Less, &x, Int64),
            Err(Error::IntOutOfBounds { .. })
        ));
    }

    #[test]
    fn items_convert_as_numpy_setitem_does() {
        assert!(matches!(
            check_item(&Arg::Weak(Weak::Float(f64::NAN)), Int32),
            Err(Error::Value(_))
        ));
        assert!(matches!(
            check_item(&Arg::Weak(Weak::Float(1e300)), Int64),
            Err(Error::Overflow(_))
        ));
        assert!(check_item(&Arg::Weak(Weak::Float(-3.7)), Int8).is_ok());
        assert!(check_item(&Arg::Typed(Scalar::Float64(-1.0)), UInt8).is_ok());
        assert!(matches!(
            check_item(&Arg::Weak(Weak::Complex(1.0, 0.0)), Float32),
            Err(Error::Type(_))
        ));
    }
}
