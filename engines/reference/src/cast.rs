//! `identity`: copy with NumPy `astype` semantics between any two dtypes.
//!
//! Every conversion goes through [`CastVal`](crate::element::CastVal):
//! - bool → anything: 0 or 1; anything → bool: nonzero (NaN is true; complex if either
//!   part is nonzero).
//! - integer → integer: two's-complement wrap (`int64(300) → uint8` is 44).
//! - float → integer: as NumPy's loops convert on x86-64, NaN, infinities and values out
//!   of range included (C leaves those undefined; every engine and tier reproduces these
//!   so a result does not depend on which ran): truncation into int32 for 8-32-bit targets
//!   and then wrapping (`300.7 → int8` is 44, `3e10 → int32` is INT32_MIN), into int64
//!   for 64-bit ones, with INT_MIN for what does not fit; see
//!   `hassium_core::float_to_int`. NumPy warns ("invalid value encountered in cast"); we
//!   do not. Known difference: NumPy converts a float16 NaN or infinity into uint32 as 0
//!   (its half loop goes through int64), here as from float32 (2^31 for NaN and -inf).
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
