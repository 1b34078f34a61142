//! Creating arrays: empty, zeros, ones, full, from a host buffer, range, random.
//! Each returns a new handle, or NULL with `hs_last_error()` set.

use crate::args::{dtype_arg, shape_arg};
use crate::ctypes::*;
use crate::error::{guard, Result};
use crate::record;
use crate::state::{with_state, State};
use hassium_core::{Scalar, View};
use std::ptr::null_mut;

/// Runs `make` on the locked state and registers its result as a new handle.
pub(crate) fn new_handle(
    name: &str,
    make: impl FnOnce(&mut State) -> Result<View>,
) -> *mut hs_array {
    guard(name, null_mut(), || {
        with_state(|st| {
            let v = make(st)?;
            Ok(st.new_handle(v))
        })
    })
}

/// A new C-contiguous array whose contents are undefined until written (like `np.empty`).
///
/// # Safety
/// `shape` points to `ndim` extents (it may be NULL when `ndim` is 0: a 0-d array).
#[no_mangle]
pub unsafe extern "C" fn hs_empty(
    dtype: hs_dtype,
    ndim: usize,
    shape: *const usize,
) -> *mut hs_array {
    new_handle("hs_empty", |st| {
        let d = dtype_arg(dtype)?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        Ok(st.new_view(d, &s))
    })
}

/// A new array with every element set to `value` (cast to `dtype` as `astype` would).
///
/// # Safety
/// As [`hs_empty`].
#[no_mangle]
pub unsafe extern "C" fn hs_full(
    dtype: hs_dtype,
    ndim: usize,
    shape: *const usize,
    value: f64,
) -> *mut hs_array {
    new_handle("hs_full", |st| {
        let d = dtype_arg(dtype)?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        record::full(st, d, &s, Scalar::Float64(value))
    })
}

/// A new array of zeros.
///
/// # Safety
/// As [`hs_empty`].
#[no_mangle]
pub unsafe extern "C" fn hs_zeros(
    dtype: hs_dtype,
    ndim: usize,
    shape: *const usize,
) -> *mut hs_array {
    new_handle("hs_zeros", |st| {
        let d = dtype_arg(dtype)?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        record::full(st, d, &s, Scalar::zero(d))
    })
}

/// A new array of ones.
///
/// # Safety
/// As [`hs_empty`].
#[no_mangle]
pub unsafe extern "C" fn hs_ones(
    dtype: hs_dtype,
    ndim: usize,
    shape: *const usize,
) -> *mut hs_array {
    new_handle("hs_ones", |st| {
        let d = dtype_arg(dtype)?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        record::full(st, d, &s, Scalar::one(d))
    })
}

/// A new array holding a copy of `data`: C-contiguous elements of `dtype` in the
/// machine's native byte order (the C API has no byte-order flag: swap big-endian file or
/// network data first), as many as `shape` holds. Neither `data` nor `shape` need be
/// aligned for their types; both are copied. The buffer may be reused as soon as this
/// returns.
///
/// # Safety
/// `shape` as in [`hs_empty`]; `data` points to the product of `shape` elements of
/// `dtype` (it may be NULL when that product is 0).
#[no_mangle]
pub unsafe extern "C" fn hs_from_buffer(
    dtype: hs_dtype,
    ndim: usize,
    shape: *const usize,
    data: *const std::ffi::c_void,
) -> *mut hs_array {
    new_handle("hs_from_buffer", |st| {
        let d = dtype_arg(dtype)?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        let nbytes = s.iter().product::<usize>() * d.size();
        // SAFETY: the caller's contract above: `data` holds `nbytes` bytes.
        let bytes = unsafe { crate::args::slice_arg(data as *const u8, nbytes, "data") }?;
        let v = st.new_view(d, &s);
        if nbytes > 0 {
            // A new base has no pending instruction, so its host memory can be written
            // directly, without the flush `write_host` would do.
            let ptr = st.rt.host_ptr(v.base)?;
            // SAFETY: the fresh block holds exactly `nbytes` bytes and cannot overlap the
            // caller's buffer.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, nbytes) };
            st.rt.mark_host_written(v.base);
        }
        Ok(v)
    })
}

/// A new 1-D array of `n` elements `start + i*step` (like `np.arange`), computed in int64
/// for integer dtypes (start and step truncated toward zero) and in float64 otherwise.
/// An `n` no array can hold (`SIZE_MAX`) is `HS_ERR_NOMEM`.
#[no_mangle]
pub extern "C" fn hs_range(dtype: hs_dtype, start: f64, step: f64, n: usize) -> *mut hs_array {
    new_handle("hs_range", |st| {
        let d = dtype_arg(dtype)?;
        if d.is_complex() {
            return Err(crate::error::Fail::dtype(
                "hs_range makes real arrays, not complex128/complex64",
            ));
        }
        crate::args::check_size(&[n])?;
        record::range(st, d, start, step, n)
    })
}

/// A new float64 array uniform in [0, 1), from the counter-based Philox generator: the
/// same `seed` and `stream` give the same numbers on every engine and machine.
///
/// # Safety
/// As [`hs_empty`].
#[no_mangle]
pub unsafe extern "C" fn hs_random(
    seed: u64,
    stream: u64,
    ndim: usize,
    shape: *const usize,
) -> *mut hs_array {
    new_handle("hs_random", |st| {
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        record::random(st, seed, stream, &s)
    })
}
