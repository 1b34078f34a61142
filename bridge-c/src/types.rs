//! NumPy 2's type resolution for the C API: `hassium_core::resolve` (shared with the
//! Python bridge), with its refusals turned into the C API's dtype errors.

use crate::error::{Fail, Result};
use hassium_core::resolve::NoLoop;
use hassium_core::{DType, Opcode};

pub use hassium_core::resolve::{default_sum_dtype, is_comparison};

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
    hassium_core::resolve::resolve_loop(op, t).map_err(|e| match e {
        NoLoop::Message(m) => Fail::dtype(m),
        NoLoop::NoNumpyLoop | NoLoop::Unsupported => no_loop(op, t),
    })
}

/// True when the integer `v` fits `d` (floats and complex hold any integer).
pub fn int_fits(v: i64, d: DType) -> bool {
    hassium_core::resolve::int_fits(v.into(), d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn refusals_become_dtype_errors() {
        assert_eq!(resolve_loop(Opcode::Divide, Int16), Ok(Float64));
        assert_eq!(
            resolve_loop(Opcode::Subtract, Bool).unwrap_err().status,
            crate::hs_status::HS_ERR_DTYPE
        );
        let e = resolve_loop(Opcode::BitwiseAnd, Float64).unwrap_err();
        assert_eq!(e.status, crate::hs_status::HS_ERR_DTYPE);
        assert!(e.msg.contains("bitwise_and"), "{}", e.msg);
        assert!(!int_fits(300, UInt8));
        assert!(int_fits(i64::MAX, Float16));
    }
}
