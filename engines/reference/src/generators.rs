//! range and random: values that depend only on an element's row-major position.

use crate::element::{CastVal, Elem};
use crate::memory::{Memory, Walker};
use hassium_core::{philox, Error, Instr, Opcode, Result, Scalar};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    match instr.op {
        Opcode::Range => with_dtype!(instr.out.dtype, T => range::<T>(instr, mem)),
        Opcode::Random => random(instr, mem),
        op => Err(Error::Invalid(format!(
            "'{}' is not a generator",
            op.name()
        ))),
    }
}

/// `out[i] = i` cast to the output dtype (wrapping for narrow integers, rounding for
/// floats, like `np.arange(n).astype(dtype)`).
fn range<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let out = mem.array::<T>(&instr.out)?;
    for (i, off) in Walker::of(&instr.out)?.enumerate() {
        out.write(off, T::from_cast(CastVal::UInt(i as u64)))?;
    }
    Ok(())
}

/// `out[i] = philox::random_u64(seed, stream, i)`.
fn random(instr: &Instr, mem: &Memory) -> Result<()> {
    let word = |k: usize| match instr.ins.get(k).and_then(|o| o.as_scalar()) {
        Some(Scalar::UInt64(v)) => Ok(*v),
        _ => Err(Error::Invalid(format!(
            "random's input {k} (seed, stream) must be a uint64 scalar"
        ))),
    };
    let (seed, stream) = (word(0)?, word(1)?);
    let out = mem.array::<u64>(&instr.out)?;
    for (i, off) in Walker::of(&instr.out)?.enumerate() {
        out.write(off, philox::random_u64(seed, stream, i as u64))?;
    }
    Ok(())
}
