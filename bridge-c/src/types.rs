//! NumPy 2's type resolution for the C API: which loop dtype an opcode runs for the
//! promoted input type, the accumulator type of sums, and the range of integer scalars.
//!
//! The same rules as the Python bridge's `types.rs`, minus what only Python needs (its
//! exception kinds and fallback to NumPy); both follow NumPy's `ufunc.resolve_dtypes`.

use crate::error::{Fail, Result};
use hassium_core::{promote, DType, Kind, Opcode};

/// NumPy lists ufunc loops in this order (`np.add.types`) and picks the first loop whose
/// type every input casts to safely.
const LOOP_ORDER: [DType; 14] = [
    DType::Bool,
    DType::Int8,
    DType::UInt8,
    DType::Int16,
    DType::UInt16,
    DType::Int32,
    DType::UInt32,
    DType::Int64,
    DType::UInt64,
    DType::Float16,
    DType::Float32,
    DType::Float64,
    DType::Complex64,
    DType::Complex128,
];

/// NumPy's safe casting: every value of `from` is representable in `to`.
pub fn can_cast_safe(from: DType, to: DType) -> bool {
    promote(from, to) == to
}

/// The error NumPy raises when no loop exists, in its words.
pub fn no_loop(op: Opcode, t: DType) -> Fail {
    Fail::dtype(format!(
        "ufunc '{}' not supported for the input types ({})",
        op.name(),
        t.name()
    ))
}

/// The loop dtype NumPy picks for elementwise `op` when its inputs promote to `t`.
pub fn resolve_loop(op: Opcode, t: DType) -> Result<DType> {
    use Opcode::*;
    if t == DType::Bool {
        match op {
            Subtract => return Err(Fail::dtype(
                "numpy boolean subtract is not supported, use bitwise_xor or logical_xor instead",
            )),
            Negative => {
                return Err(Fail::dtype(
                    "numpy boolean negative is not supported, use invert or logical_not instead",
                ))
            }
            Positive | Sign => return Err(no_loop(op, t)),
            // NumPy's conjugate has no bool loop; bool goes to int8.
            Conj => return Ok(DType::Int8),
            _ => {}
        }
    }
    // True division of integers runs in float64 (NumPy's 'dd->d' for every integer type).
    if op == Divide && !t.is_inexact() {
        return Ok(DType::Float64);
    }
    let types = op.info().types;
    LOOP_ORDER
        .iter()
        .copied()
        .find(|&l| types.contains(l) && can_cast_safe(t, l))
        .ok_or_else(|| no_loop(op, t))
}

/// NumPy's accumulator type for `sum`/`prod`/`cumsum`/`cumprod`: bool and integers widen
/// to the 64-bit integer of their signedness.
pub fn default_sum_dtype(t: DType) -> DType {
    match t.kind() {
        Kind::Bool | Kind::Int => DType::Int64,
        Kind::UInt => DType::UInt64,
        _ => t,
    }
}

/// True when the integer `v` fits `d` (floats and complex hold any integer).
pub fn int_fits(v: i64, d: DType) -> bool {
    let v = v as i128;
    let (lo, hi): (i128, i128) = match d {
        DType::Bool => (0, 1),
        DType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DType::UInt8 => (0, u8::MAX.into()),
        DType::UInt16 => (0, u16::MAX.into()),
        DType::UInt32 => (0, u32::MAX.into()),
        DType::UInt64 => (0, u64::MAX.into()),
        _ => return true,
    };
    lo <= v && v <= hi
}

/// True for the six comparisons, which NumPy 2 evaluates exactly even for integer
/// scalars outside the array's range.
pub fn is_comparison(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn unary_math_on_integers_uses_the_smallest_safe_float() {
        assert_eq!(resolve_loop(Opcode::Sqrt, Int8), Ok(Float16));
        assert_eq!(resolve_loop(Opcode::Sqrt, Int32), Ok(Float64));
        assert_eq!(resolve_loop(Opcode::Exp, Float32), Ok(Float32));
    }

    #[test]
    fn integer_division_runs_in_float64_and_bool_subtract_is_refused() {
        assert_eq!(resolve_loop(Opcode::Divide, Int16), Ok(Float64));
        assert_eq!(
            resolve_loop(Opcode::Subtract, Bool).unwrap_err().status,
            crate::hs_status::HS_ERR_DTYPE
        );
        assert_eq!(resolve_loop(Opcode::Power, Bool), Ok(Int8));
        assert!(resolve_loop(Opcode::BitwiseAnd, Float64).is_err());
    }

    #[test]
    fn integer_scalars_are_range_checked() {
        assert!(!int_fits(300, UInt8));
        assert!(!int_fits(-1, UInt64));
        assert!(int_fits(-128, Int8));
        assert!(int_fits(i64::MAX, Float16));
    }
}
