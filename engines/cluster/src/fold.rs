//! Combining a reduction's per-chunk partials in chunk order, exactly as the cpu engine's
//! `_fin` functions do: `acc = identity; acc = acc ⊕ p` for each partial in turn, in the
//! element type the generated C computes in. Every rank folds all partials itself, so
//! every rank holds the same bits.

use hassium_core::{DType, Opcode};

/// True when [`fold`] combines `op`'s partials of `t` exactly as the cpu engine does.
pub fn foldable(op: Opcode, t: DType) -> bool {
    use Opcode::*;
    match op {
        AddReduce => t != DType::Float16 && t != DType::Bool,
        MultiplyReduce | MinimumReduce | MaximumReduce => {
            !t.is_complex() && t != DType::Float16 && t != DType::Bool
        }
        BitwiseAndReduce | BitwiseOrReduce | BitwiseXorReduce => t.is_integer(),
        LogicalAndReduce | LogicalOrReduce | LogicalXorReduce => t == DType::Bool,
        _ => false,
    }
}

/// Folds `partials` (packed values of `t`, in chunk order) into `out` (one value of `t`).
/// `op` and `t` must be [`foldable`].
pub fn fold(op: Opcode, t: DType, partials: &[u8], out: &mut [u8]) {
    macro_rules! ints {
        ($ty:ty) => {{
            let values = partials
                .chunks_exact(std::mem::size_of::<$ty>())
                .map(|c| <$ty>::from_le_bytes(c.try_into().expect("element size")));
            let r: $ty = match op {
                Opcode::AddReduce => values.fold(0, |a: $ty, b| a.wrapping_add(b)),
                Opcode::MultiplyReduce => values.fold(1, |a: $ty, b| a.wrapping_mul(b)),
                Opcode::MinimumReduce => values.fold(<$ty>::MAX, |a, b| a.min(b)),
                Opcode::MaximumReduce => values.fold(<$ty>::MIN, |a, b| a.max(b)),
                Opcode::BitwiseAndReduce => values.fold(!0, |a, b| a & b),
                Opcode::BitwiseOrReduce => values.fold(0, |a, b| a | b),
                _ => values.fold(0, |a, b| a ^ b),
            };
            out.copy_from_slice(&r.to_le_bytes());
        }};
    }
    macro_rules! floats {
        ($ty:ty) => {{
            let values = partials
                .chunks_exact(std::mem::size_of::<$ty>())
                .map(|c| <$ty>::from_le_bytes(c.try_into().expect("element size")));
            // The C helpers: hs_max(a, b) = (a >= b || isnan(a)) ? a : b, hs_min likewise.
            let r: $ty = match op {
                Opcode::AddReduce => values.fold(0.0, |a, b| a + b),
                Opcode::MultiplyReduce => values.fold(1.0, |a, b| a * b),
                Opcode::MinimumReduce => {
                    values.fold(
                        <$ty>::INFINITY,
                        |a, b| if a <= b || a.is_nan() { a } else { b },
                    )
                }
                _ => values.fold(<$ty>::NEG_INFINITY, |a, b| {
                    if a >= b || a.is_nan() {
                        a
                    } else {
                        b
                    }
                }),
            };
            out.copy_from_slice(&r.to_le_bytes());
        }};
    }
    macro_rules! complex {
        ($ty:ty) => {{
            let n = std::mem::size_of::<$ty>();
            let (mut re, mut im): ($ty, $ty) = (0.0, 0.0);
            for c in partials.chunks_exact(2 * n) {
                re += <$ty>::from_le_bytes(c[..n].try_into().expect("element size"));
                im += <$ty>::from_le_bytes(c[n..].try_into().expect("element size"));
            }
            out[..n].copy_from_slice(&re.to_le_bytes());
            out[n..].copy_from_slice(&im.to_le_bytes());
        }};
    }
    match t {
        DType::Bool => {
            let values = partials.iter().map(|&b| b != 0);
            let r = match op {
                Opcode::LogicalAndReduce => {
                    let mut v = values;
                    v.all(|b| b)
                }
                Opcode::LogicalOrReduce => {
                    let mut v = values;
                    v.any(|b| b)
                }
                _ => values.fold(false, |a, b| a != b),
            };
            out[0] = u8::from(r);
        }
        DType::Int8 => ints!(i8),
        DType::Int16 => ints!(i16),
        DType::Int32 => ints!(i32),
        DType::Int64 => ints!(i64),
        DType::UInt8 => ints!(u8),
        DType::UInt16 => ints!(u16),
        DType::UInt32 => ints!(u32),
        DType::UInt64 => ints!(u64),
        DType::Float32 => floats!(f32),
        DType::Float64 => floats!(f64),
        DType::Complex64 => complex!(f32),
        DType::Complex128 => complex!(f64),
        DType::Float16 => unreachable!("float16 reductions are not folded"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn a_sum_folds_left_to_right_from_zero() {
        let p = [1e16, 1.0, -1e16, 1.0];
        let mut out = [0u8; 8];
        fold(Opcode::AddReduce, DType::Float64, &f64s(&p), &mut out);
        let want = ((((0.0 + 1e16) + 1.0) + -1e16) + 1.0f64).to_le_bytes();
        assert_eq!(out, want);
        // Zero partials of negative sign still give +0.0, as `0.0 + -0.0` does in C.
        fold(
            Opcode::AddReduce,
            DType::Float64,
            &f64s(&[-0.0, -0.0]),
            &mut out,
        );
        assert_eq!(f64::from_le_bytes(out).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn max_keeps_the_first_nan_like_the_c_helper() {
        let mut out = [0u8; 8];
        fold(
            Opcode::MaximumReduce,
            DType::Float64,
            &f64s(&[1.0, f64::NAN, 3.0]),
            &mut out,
        );
        assert!(f64::from_le_bytes(out).is_nan());
        fold(
            Opcode::MinimumReduce,
            DType::Float64,
            &f64s(&[2.0, -1.0, 3.0]),
            &mut out,
        );
        assert_eq!(f64::from_le_bytes(out), -1.0);
    }
}
