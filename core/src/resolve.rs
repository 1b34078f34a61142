//! NumPy 2's type resolution, shared by the C and Python bridges: which loop (input
//! dtype) an elementwise opcode runs for a promoted input type, casting rules by name, the
//! accumulator type of sums, and the range of integer scalars. Both bridges follow
//! NumPy's `ufunc.resolve_dtypes`; the Python bridge's tests check these rules against it
//! exhaustively.

use crate::{promote, DType, Kind, Opcode};

/// The order in which NumPy's ufunc loops are listed (`np.add.types`): a loop is chosen as
/// the first whose input type every input casts to safely.
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

/// Why no loop exists for an opcode and input type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoLoop {
    /// NumPy has a dedicated message (boolean `-`, unary `-`).
    Message(String),
    /// NumPy has no loop either: `UFuncNoLoopError`.
    NoNumpyLoop,
    /// NumPy has a loop but the opcode set does not (complex `maximum`, …): the package
    /// falls back to NumPy.
    Unsupported,
}

/// NumPy's safe casting: every value of `from` is representable in `to`.
pub fn can_cast_safe(from: DType, to: DType) -> bool {
    promote(from, to) == to
}

fn kind_rank(d: DType) -> u8 {
    match d.kind() {
        Kind::Bool => 0,
        Kind::UInt => 1,
        Kind::Int => 2,
        Kind::Float => 3,
        Kind::Complex => 4,
    }
}

/// NumPy's casting rules by name ("no", "equiv", "safe", "same_kind", "unsafe").
pub fn can_cast(from: DType, to: DType, casting: &str) -> Option<bool> {
    Some(match casting {
        "no" | "equiv" => from == to,
        "safe" => can_cast_safe(from, to),
        // Within a kind any size goes; unsigned → signed is the same kind, signed →
        // unsigned is not (NumPy's `np.can_cast('i1', 'u1', 'same_kind')` is False).
        "same_kind" => can_cast_safe(from, to) || kind_rank(from) <= kind_rank(to),
        "unsafe" => true,
        _ => return None,
    })
}

/// The types NumPy has loops for where they differ from the opcode's own set (NumPy has
/// complex comparisons and min/max; the opcode set does not).
fn numpy_has_loop(op: Opcode, t: DType) -> bool {
    use Opcode::*;
    matches!(
        op,
        Maximum | Minimum | Fmax | Fmin | Less | LessEqual | Greater | GreaterEqual
    ) && t.is_complex()
}

/// The loop dtype NumPy picks for `op` when all inputs have (promoted) type `t`.
pub fn resolve_loop(op: Opcode, t: DType) -> Result<DType, NoLoop> {
    use Opcode::*;
    if t == DType::Bool {
        match op {
            Subtract => {
                return Err(NoLoop::Message(
                    "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.".into(),
                ))
            }
            Negative => {
                return Err(NoLoop::Message(
                    "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.".into(),
                ))
            }
            // NumPy 2 has no bool loop for these and does not take int8's either.
            Positive | Sign | Gcd | Lcm => return Err(NoLoop::NoNumpyLoop),
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
    // A loop of `t` itself is the one the search below finds: a type `t` casts to safely
    // is never listed before `t` (`loop_order_lists_safe_targets_after_their_sources`).
    // Nearly every call takes this path, and the search costs a dozen promotions.
    if types.contains(t) {
        return Ok(t);
    }
    if let Some(l) = LOOP_ORDER
        .iter()
        .copied()
        .find(|&l| types.contains(l) && can_cast_safe(t, l))
    {
        return Ok(l);
    }
    if numpy_has_loop(op, t) {
        Err(NoLoop::Unsupported)
    } else {
        Err(NoLoop::NoNumpyLoop)
    }
}

/// The loop dtype NumPy picks for `op` over inputs of the dtypes `inputs` (all strong:
/// arrays and NumPy scalars), whose promotion is `t`. NumPy looks for the first loop that
/// every input casts to safely, one input at a time: where `op` has a loop of `t` that is
/// the one, but where it has none, the inputs may reach an earlier loop than their
/// promotion does — `arctan2(uint8, int8)` runs float16's loop, which each casts to
/// safely, where int16 (their promotion) would take float32's.
pub fn resolve_loop_of(op: Opcode, t: DType, inputs: &[DType]) -> Result<DType, NoLoop> {
    let types = op.info().types;
    // Divide's integer loops all give float64 ('bb->d' ... 'QQ->d'): `resolve_loop`'s rule.
    if types.contains(t) || inputs.len() < 2 || op == Opcode::Divide || t == DType::Bool {
        return resolve_loop(op, t);
    }
    LOOP_ORDER
        .iter()
        .copied()
        .find(|&l| types.contains(l) && inputs.iter().all(|&x| can_cast_safe(x, l)))
        .map_or_else(|| resolve_loop(op, t), Ok)
}

/// NumPy's default accumulator type for `sum`/`prod`/`cumsum`/`cumprod`: bool and
/// integers narrower than the platform integer widen to int64 (unsigned to uint64).
pub fn default_sum_dtype(t: DType) -> DType {
    match t.kind() {
        Kind::Bool => DType::Int64,
        Kind::Int => DType::Int64,
        Kind::UInt => DType::UInt64,
        _ => t,
    }
}

/// The inclusive range of an integer dtype.
pub fn int_range(d: DType) -> Option<(i128, i128)> {
    use DType::*;
    Some(match d {
        Bool => (0, 1),
        Int8 => (i8::MIN as i128, i8::MAX as i128),
        Int16 => (i16::MIN as i128, i16::MAX as i128),
        Int32 => (i32::MIN as i128, i32::MAX as i128),
        Int64 => (i64::MIN as i128, i64::MAX as i128),
        UInt8 => (0, u8::MAX as i128),
        UInt16 => (0, u16::MAX as i128),
        UInt32 => (0, u32::MAX as i128),
        UInt64 => (0, u64::MAX as i128),
        _ => return None,
    })
}

/// True when a Python integer fits an integer dtype (floats and complex hold any).
pub fn int_fits(v: i128, d: DType) -> bool {
    match int_range(d) {
        Some((lo, hi)) => lo <= v && v <= hi,
        None => true,
    }
}

/// True for the comparison opcodes, which NumPy 2 evaluates exactly even for Python
/// integers outside the array's range.
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
    fn loop_order_lists_safe_targets_after_their_sources() {
        for (i, &later) in LOOP_ORDER.iter().enumerate() {
            for &earlier in &LOOP_ORDER[..i] {
                assert!(
                    !can_cast_safe(later, earlier),
                    "{later:?} casts safely to {earlier:?}, which is listed before it"
                );
            }
        }
    }

    #[test]
    fn integer_true_division_runs_in_float64() {
        assert_eq!(resolve_loop(Opcode::Divide, Int8), Ok(Float64));
        assert_eq!(resolve_loop(Opcode::Divide, Bool), Ok(Float64));
        assert_eq!(resolve_loop(Opcode::Divide, Float32), Ok(Float32));
    }

    #[test]
    fn unary_math_on_small_ints_uses_the_smallest_safe_float() {
        assert_eq!(resolve_loop(Opcode::Sqrt, Int8), Ok(Float16));
        assert_eq!(resolve_loop(Opcode::Sqrt, UInt16), Ok(Float32));
        assert_eq!(resolve_loop(Opcode::Sqrt, Int64), Ok(Float64));
        assert_eq!(resolve_loop(Opcode::Sqrt, UInt64), Ok(Float64));
    }

    #[test]
    fn mixed_inputs_take_the_first_loop_each_casts_to_safely() {
        use Opcode::{Add, Arctan2, Divide, Hypot};
        // Their promotion (int16, int32) has no loop: each input casts to float16 / float32.
        assert_eq!(resolve_loop_of(Arctan2, Int16, &[UInt8, Int8]), Ok(Float16));
        assert_eq!(resolve_loop_of(Hypot, Int32, &[UInt16, Int16]), Ok(Float32));
        assert_eq!(resolve_loop_of(Hypot, Int32, &[Int8, UInt16]), Ok(Float32));
        // A loop of the promotion is the first one the inputs reach.
        assert_eq!(resolve_loop_of(Add, Int16, &[UInt8, Int8]), Ok(Int16));
        assert_eq!(resolve_loop_of(Divide, Int16, &[UInt8, Int8]), Ok(Float64));
        assert_eq!(
            resolve_loop_of(Arctan2, Float64, &[UInt64, Int64]),
            Ok(Float64)
        );
    }

    #[test]
    fn bool_arithmetic_follows_numpy() {
        assert_eq!(resolve_loop(Opcode::Add, Bool), Ok(Bool));
        assert_eq!(resolve_loop(Opcode::Power, Bool), Ok(Int8));
        assert_eq!(resolve_loop(Opcode::FloorDivide, Bool), Ok(Int8));
        assert!(matches!(
            resolve_loop(Opcode::Subtract, Bool),
            Err(NoLoop::Message(_))
        ));
        assert!(matches!(
            resolve_loop(Opcode::Negative, Bool),
            Err(NoLoop::Message(_))
        ));
        assert_eq!(resolve_loop(Opcode::Sign, Bool), Err(NoLoop::NoNumpyLoop));
        assert_eq!(resolve_loop(Opcode::Conj, Bool), Ok(Int8));
    }

    #[test]
    fn complex_ordering_is_unsupported_not_an_error() {
        assert_eq!(
            resolve_loop(Opcode::Maximum, Complex64),
            Err(NoLoop::Unsupported)
        );
        assert_eq!(
            resolve_loop(Opcode::BitwiseAnd, Float64),
            Err(NoLoop::NoNumpyLoop)
        );
    }

    #[test]
    fn same_kind_casting_matches_numpy() {
        assert_eq!(can_cast(Int8, UInt8, "same_kind"), Some(false));
        assert_eq!(can_cast(UInt8, Int8, "same_kind"), Some(true));
        assert_eq!(can_cast(Float64, Int8, "same_kind"), Some(false));
        assert_eq!(can_cast(Float64, Float16, "same_kind"), Some(true));
        assert_eq!(can_cast(Int64, Float64, "safe"), Some(true));
        assert_eq!(can_cast(Int64, Float64, "bogus"), None);
    }

    #[test]
    fn integers_are_range_checked_and_sums_widen() {
        assert!(!int_fits(300, UInt8));
        assert!(!int_fits(-1, UInt64));
        assert!(int_fits(-128, Int8));
        assert!(int_fits(1 << 70, Float32));
        assert_eq!(default_sum_dtype(UInt8), UInt64);
        assert_eq!(default_sum_dtype(Bool), Int64);
        assert_eq!(default_sum_dtype(Float32), Float32);
    }
}
