//! `identity`: copy with NumPy `astype` semantics between any two dtypes.
//!
//! Every conversion goes through [`CastVal`](crate::element::CastVal):
//! - bool → anything: 0 or 1; anything → bool: nonzero (NaN is true; complex if either
//!   part is nonzero).
//! - integer → integer: two's-complement wrap (`int64(300) → uint8` is 44).
//! - float → integer: truncation toward zero. Out-of-range values and NaN follow Rust's
//!   `as` through the widest integer of the target's signedness: the value saturates to
//!   the int64 (uint64 for a uint64 target) range, NaN becomes 0, then narrower targets
//!   wrap (`-1.0 → uint8` is 255, `300.0 → uint8` is 44). NumPy leaves these undefined
//!   (x86 gives INT_MIN); this rule matches `hassium_core::Scalar::cast`, so a constant
//!   folded by a filter equals the engine's result.
//! - complex → real: the imaginary part is dropped (NumPy warns; we do not).
//! - to float16: one correctly rounded step from the exact source value.

use crate::element::Elem;
use crate::elementwise::map;
use crate::memory::Memory;
use hassium_core::{Error, Instr, Result};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    let from = instr
        .ins
        .first()
        .ok_or_else(|| Error::Invalid("identity takes 1 input, got 0".into()))?
        .dtype();
    with_dtype!(from, S => with_dtype!(instr.out.dtype, D => cast::<S, D>(instr, mem)))
}

fn cast<S: Elem, D: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    map::<S, D, 1>(instr, mem, |[a]| Ok(D::from_cast(a.to_cast())))
}
