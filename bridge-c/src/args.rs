//! Reading C arguments: shapes from pointer + length, dtype and opcode numbers, operands.
//! Every check that C cannot express in its types happens here, once.

use crate::ctypes::*;
use crate::error::{Fail, Result};
use crate::state::State;
use hassium_core::{DType, Opcode, MAX_DIMS};
use hassium_record::{Arg, Weak};
use std::borrow::Cow;

/// A C array of `n` elements; NULL is allowed only when `n` is 0.
///
/// C gives no alignment guarantee Rust can rely on: a pointer into a packed struct or a
/// byte buffer (`(int64_t *)(bytes + 1)`) is legal C to pass, but a Rust slice over it
/// would be undefined behaviour. Such an array is copied element by element with
/// unaligned reads; an aligned one is borrowed.
///
/// # Safety
/// When non-NULL, `ptr` must point to `n` readable elements (the C caller's contract).
pub unsafe fn slice_arg<'a, T: Copy>(ptr: *const T, n: usize, what: &str) -> Result<Cow<'a, [T]>> {
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if ptr.is_null() {
        return Err(Fail::new(hs_status::HS_ERR_NULL, format!("{what} is NULL")));
    }
    if ptr.is_aligned() {
        // SAFETY: non-NULL, aligned and, by the caller's contract, `n` elements long.
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(ptr, n) }));
    }
    // SAFETY: by the caller's contract, elements 0..n are readable; `read_unaligned`
    // needs no alignment.
    Ok(Cow::Owned(
        (0..n)
            .map(|i| unsafe { ptr.add(i).read_unaligned() })
            .collect(),
    ))
}

/// Refuses more dimensions than a view may have, in the words every C function uses.
pub fn check_ndim(ndim: usize) -> Result<()> {
    if ndim > MAX_DIMS {
        return Err(Fail::shape(format!(
            "{ndim} dimensions requested; at most {MAX_DIMS} are allowed"
        )));
    }
    Ok(())
}

/// Refuses a shape whose element count (times the widest element, 16 bytes) does not fit
/// in an `isize`: views address elements with signed offsets, so a bigger array could
/// not be indexed (and could not be allocated anyway). Zero extents count as one, as in
/// NumPy, because the strides of a contiguous array multiply the other extents even when
/// one is zero: `(0, 2**40, 2**40)` has no elements but strides that overflow.
pub fn check_size(shape: &[usize]) -> Result<()> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d.max(1)))
        .filter(|&n| n <= isize::MAX as usize / 16)
        .map(drop)
        .ok_or_else(|| {
            Fail::new(
                hs_status::HS_ERR_NOMEM,
                format!(
                    "an array of shape {shape:?} is too large (at most {} elements)",
                    isize::MAX as usize / 16
                ),
            )
        })
}

/// A shape of `ndim` extents, checked against the dimension limit and for overflow.
///
/// # Safety
/// As [`slice_arg`].
pub unsafe fn shape_arg(ndim: usize, shape: *const usize) -> Result<Vec<usize>> {
    check_ndim(ndim)?;
    // SAFETY: forwarded contract.
    let s = unsafe { slice_arg(shape, ndim, "shape") }?.into_owned();
    check_size(&s)?;
    Ok(s)
}

pub fn dtype_arg(d: hs_dtype) -> Result<DType> {
    d.to_core().ok_or_else(|| {
        Fail::dtype(format!(
            "unknown dtype number {} (valid: 0..=13, see hs_dtype)",
            d.0
        ))
    })
}

pub fn opcode_arg(op: hs_opcode) -> Result<Opcode> {
    op.to_core()
        .ok_or_else(|| Fail::invalid(format!("unknown opcode number {} (see hs_opcode)", op.0)))
}

/// An operand's handle looked up, or its scalar value.
pub fn operand_arg(st: &State, o: &hs_operand, what: &str) -> Result<Arg> {
    Ok(match o.kind {
        HS_OPERAND_ARRAY => Arg::Array(st.view(o.array, what)?),
        HS_OPERAND_INT => Arg::Weak(Weak::Int(o.int_value.into())),
        HS_OPERAND_FLOAT => Arg::Weak(Weak::Float(o.real)),
        HS_OPERAND_COMPLEX => Arg::Weak(Weak::Complex(o.real, o.imag)),
        k => {
            return Err(Fail::invalid(format!(
                "{what} has unknown operand kind {}",
                k.0
            )))
        }
    })
}

/// The operands of a call, named "operand 0", "operand 1", … in errors.
pub fn operands_arg(st: &State, ops: &[hs_operand]) -> Result<Vec<Arg>> {
    ops.iter()
        .enumerate()
        .map(|(k, o)| operand_arg(st, o, &format!("operand {k}")))
        .collect()
}
