//! Reading C arguments: shapes from pointer + length, dtype and opcode numbers, operands.
//! Every check that C cannot express in its types happens here, once.

use crate::ctypes::*;
use crate::error::{Fail, Result};
use crate::record::{Arg, Weak};
use crate::state::State;
use hassium_core::{DType, Opcode, MAX_DIMS};

/// A C array of `n` elements as a slice; NULL is allowed only when `n` is 0.
///
/// # Safety
/// When non-NULL, `ptr` must point to `n` readable elements (the C caller's contract).
pub unsafe fn slice_arg<'a, T>(ptr: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Fail::new(hs_status::HS_ERR_NULL, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and, by the caller's contract, `n` elements long.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// A shape of `ndim` extents, checked against the dimension limit and for overflow.
///
/// # Safety
/// As [`slice_arg`].
pub unsafe fn shape_arg(ndim: usize, shape: *const usize) -> Result<Vec<usize>> {
    if ndim > MAX_DIMS {
        return Err(Fail::shape(format!(
            "{ndim} dimensions requested; at most {MAX_DIMS} are allowed"
        )));
    }
    // SAFETY: forwarded contract.
    let s = unsafe { slice_arg(shape, ndim, "shape") }?.to_vec();
    check_size(&s)?;
    Ok(s)
}

/// Refuses a shape whose byte count (at up to 16 bytes an element) would not fit an
/// `isize`, as NumPy refuses with "array is too big": every size computed from it later,
/// in elements or bytes, then fits without overflow. Zero extents count as one, as in
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
                format!("an array of shape {shape:?} is too large"),
            )
        })
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
        HS_OPERAND_INT => Arg::Weak(Weak::Int(o.int_value)),
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
