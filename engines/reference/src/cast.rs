//! `identity`: copy with NumPy `astype` semantics between any two dtypes.
//!
//! Every conversion goes through [`CastVal`](crate::element::CastVal):
//! - bool → anything: 0 or 1; anything → bool: nonzero (NaN is true; complex if either
//!   part is nonzero).
//! - integer → integer: two's-complement wrap (`int64(300) → uint8` is 44).
//! - float → integer: truncation toward zero through a 64-bit integer, then wrapping into
//!   narrower targets. That is what NumPy does on x86 for every value in the int32
//!   range, and for 64-bit targets in the int64 range (`-1.0 → uint8` is 255,
//!   `-1.0 → uint64` is 2**64-1, `300.0 → uint8` is 44). NumPy leaves NaN, inf and
//!   other out-of-range values undefined and warns ("invalid value encountered in cast");
//!   on x86 it converts to int8/16/32 through int32, so `3e9 → int32` is INT_MIN there
//!   and -1294967296 here. Here they follow Rust's `as`, without a warning: NaN becomes
//!   0 and the value saturates to the int64 range (the uint64 range for non-negative
//!   values into uint64) before wrapping.
//!   `hassium_core::Scalar::cast` agrees except that it saturates negative values into
//!   uint64 to 0.
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
