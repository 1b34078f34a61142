//! Elementwise opcodes: one loop over the output's index space, inputs read in lock step.
//!
//! Inputs have the output's shape (broadcasts arrive as stride-0 views) or are scalars.
//! Each element is read before its output element is written, so in-place operation on
//! the identical view is correct.

use crate::element::{logical, Elem};
use crate::memory::{Input, Memory, Walker};
use hassium_core::{DType, Error, Instr, Opcode, Operand, Result, View};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    match instr.op {
        Opcode::Identity => crate::cast::run(instr, mem),
        Opcode::Where => {
            let t = value_dtype(instr, 1)?;
            with_dtype!(t, T => select::<T>(instr, mem))
        }
        _ => {
            let t = value_dtype(instr, 0)?;
            with_dtype!(t, T => typed::<T>(instr, mem))
        }
    }
}

fn value_dtype(instr: &Instr, k: usize) -> Result<DType> {
    instr.ins.get(k).map(Operand::dtype).ok_or_else(|| {
        Error::Invalid(format!(
            "takes {} inputs, got {}",
            instr.op.nin(),
            instr.ins.len()
        ))
    })
}

/// Picks the element-level operation for input type `T` by the opcode's output rule.
fn typed<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let op = instr.op;
    match op {
        Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor => {
            map::<T, bool, 2>(instr, mem, |[a, b]| {
                logical(op, a.is_nonzero(), b.is_nonzero())
            })
        }
        Opcode::LogicalNot => map::<T, bool, 1>(instr, mem, |[a]| Ok(!a.is_nonzero())),
        Opcode::Equal
        | Opcode::NotEqual
        | Opcode::Less
        | Opcode::LessEqual
        | Opcode::Greater
        | Opcode::GreaterEqual => map::<T, bool, 2>(instr, mem, |[a, b]| T::compare(op, a, b)),
        Opcode::IsNan | Opcode::IsInf | Opcode::IsFinite | Opcode::Signbit => {
            map::<T, bool, 1>(instr, mem, |[a]| T::classify(op, a))
        }
        Opcode::Absolute | Opcode::Real | Opcode::Imag => {
            map::<T, T::Real, 1>(instr, mem, |[a]| T::to_real(op, a))
        }
        _ if op.nin() == 1 => map::<T, T, 1>(instr, mem, |[a]| T::unary(op, a)),
        // The common arithmetic gets a loop per opcode: the element operation is then
        // inlined with its opcode known instead of dispatched on it per element.
        Opcode::Add => map::<T, T, 2>(instr, mem, |[a, b]| T::binary(Opcode::Add, a, b)),
        Opcode::Subtract => map::<T, T, 2>(instr, mem, |[a, b]| T::binary(Opcode::Subtract, a, b)),
        Opcode::Multiply => map::<T, T, 2>(instr, mem, |[a, b]| T::binary(Opcode::Multiply, a, b)),
        Opcode::Divide => map::<T, T, 2>(instr, mem, |[a, b]| T::binary(Opcode::Divide, a, b)),
        _ if op.nin() == 2 => map::<T, T, 2>(instr, mem, |[a, b]| T::binary(op, a, b)),
        _ => Err(Error::Invalid(format!(
            "'{}' is not an elementwise operation",
            op.name()
        ))),
    }
}

/// `out[i] = f(in0[i], …, in{N-1}[i])` over the output's index space.
pub(crate) fn map<T: Elem, U: Elem, const N: usize>(
    instr: &Instr,
    mem: &Memory,
    f: impl Fn([T; N]) -> Result<U>,
) -> Result<()> {
    if instr.ins.len() != N {
        return Err(Error::Invalid(format!(
            "takes {N} inputs, got {}",
            instr.ins.len()
        )));
    }
    let out = mem.array::<U>(&instr.out)?;
    if let Some(linear) = Linear::<T, N>::of(instr, mem)? {
        let dst = out.element_ptr(instr.out.offset) as *mut u8;
        // A constant is read through a step of 0 from its slot, so the loop has no
        // branch per lane.
        let size = T::DTYPE.size();
        let lanes: [(*const u8, usize); N] = std::array::from_fn(|k| match linear.starts[k] {
            p if p.is_null() => ((&linear.consts[k] as *const T).cast::<u8>(), 0),
            p => (p, size),
        });
        // Same order as the strided walk below: element i is read, then written.
        for i in 0..instr.out.nelem() {
            // SAFETY: `Memory::array` checked that every view, the output's included,
            // lies in its buffer, and a contiguous view of n elements addresses exactly
            // its start plus 0..n; a constant's step is 0, so it is read at its slot.
            let args = std::array::from_fn(|k| unsafe { T::load(lanes[k].0.add(i * lanes[k].1)) });
            let value = f(args)?;
            unsafe { U::store(dst.add(i * U::DTYPE.size()), value) };
        }
        return Ok(());
    }
    let mut inputs = instr
        .ins
        .iter()
        .map(|o| Input::<T>::new(mem, o))
        .collect::<Result<Vec<_>>>()?;
    for off in Walker::of(&instr.out)? {
        let mut args = [T::zero(); N];
        for (arg, input) in args.iter_mut().zip(&mut inputs) {
            *arg = input.next()?;
        }
        out.write(off, f(args)?)?;
    }
    Ok(())
}

/// The inputs of an instruction whose output and view inputs are all contiguous views of
/// one shape: element `i` of a view input is at its offset plus `i`, so no walker is
/// needed. This is the common case, and the one where walking costs most next to the work:
/// the lanes are fixed arrays of `N`, so the per-element loop has no enum to match and no
/// vector to index, only one address and step per input.
struct Linear<T, const N: usize> {
    /// The constants' values (a view input's slot is unused).
    consts: [T; N],
    /// The address of element 0 of each view input; null for a constant.
    starts: [*const u8; N],
}

impl<T: Elem, const N: usize> Linear<T, N> {
    fn of(instr: &Instr, mem: &Memory) -> Result<Option<Self>> {
        let out = &instr.out;
        let fits = |v: &View| v.shape == out.shape && v.is_contiguous();
        if instr.ins.len() != N
            || !out.is_contiguous()
            || !instr.ins.iter().all(|o| o.as_view().is_none_or(fits))
        {
            return Ok(None);
        }
        let mut lanes = Linear {
            consts: [T::zero(); N],
            starts: [std::ptr::null(); N],
        };
        for (k, o) in instr.ins.iter().enumerate() {
            match o {
                Operand::View(v) => lanes.starts[k] = mem.array::<T>(v)?.element_ptr(v.offset),
                Operand::Scalar(_) => lanes.consts[k] = Input::<T>::new(mem, o)?.next()?,
            }
        }
        Ok(Some(lanes))
    }
}

/// `where(mask, a, b)`.
fn select<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let [m, a, b] = &instr.ins[..] else {
        return Err(Error::Invalid(format!(
            "takes 3 inputs, got {}",
            instr.ins.len()
        )));
    };
    let out = mem.array::<T>(&instr.out)?;
    let mut mask = Input::<bool>::new(mem, m)?;
    let (mut a, mut b) = (Input::<T>::new(mem, a)?, Input::<T>::new(mem, b)?);
    for off in Walker::of(&instr.out)? {
        let (c, x, y) = (mask.next()?, a.next()?, b.next()?);
        out.write(off, if c { x } else { y })?;
    }
    Ok(())
}
