//! Host access and lifetime: sync, data pointers, shape getters, copies out, flush, free,
//! statistics and the last error.

use crate::ctypes::*;
use crate::error::{guard, guard_status, last_error_ptr, last_status, Fail, Result};
use crate::state::{with_existing, with_state, State};
use hassium_core::{Scalar, View};
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

/// Makes `v`'s base current in host memory and returns the base's address, after checking
/// that the view lies inside it (views are checked when made; this guards the raw reads).
fn synced_base(st: &mut State, v: &View) -> Result<*mut u8> {
    st.rt.sync(v.base)?;
    let nelem = st.rt.base(v.base).map_or(0, |b| b.nelem);
    if let Some((lo, hi)) = v.extent() {
        if lo < 0 || hi >= nelem as isize {
            return Err(Fail::new(
                hs_status::HS_ERR_BOUNDS,
                "the view lies outside its base",
            ));
        }
    }
    Ok(st.rt.host_ptr(v.base)?)
}

/// [`synced_base`] for a read that copies the view's elements out and writes nothing:
/// only the view's extent is made current (`Runtime::sync_extent`; the cluster engine
/// brings home only the blocks holding it).
fn synced_extent(st: &mut State, v: &View) -> Result<*mut u8> {
    let nelem = st.rt.base(v.base).map_or(0, |b| b.nelem);
    match v.extent() {
        Some((lo, hi)) if lo >= 0 && hi < nelem as isize => {
            st.rt.sync_extent(v.base, lo as u64, hi as u64 + 1)?;
            Ok(st.rt.host_ptr(v.base)?)
        }
        _ => synced_base(st, v),
    }
}

/// Runs every recorded operation of `a`'s base so its values can be read on the host.
#[no_mangle]
pub extern "C" fn hs_sync(a: *const hs_array) -> hs_status {
    guard_status("hs_sync", || {
        with_state(|st| {
            let v = st.view(a, "the array")?;
            st.rt.sync(v.base).map_err(Fail::from)
        })
    })
}

/// A pointer to the first element of `a`'s view in host memory, after syncing it (so the
/// values are current). Elements are laid out by `hs_strides` (in elements, not bytes).
/// Writing through the pointer changes the array. The pointer stays valid until the last
/// handle of the base is freed; later operations on the base may change what it holds.
#[no_mangle]
pub extern "C" fn hs_data(a: *const hs_array) -> *mut c_void {
    guard("hs_data", null_mut(), || {
        with_state(|st| {
            let v = st.view(a, "the array")?;
            let p = synced_base(st, &v)?;
            // The memory may be written through the pointer: engines with device copies
            // must re-read it.
            st.rt.mark_host_written(v.base);
            let off = if v.is_empty() {
                0
            } else {
                v.offset * v.dtype.size() as isize
            };
            Ok(p.wrapping_offset(off) as *mut c_void)
        })
    })
}

/// Copies `a`'s elements in C order (whatever its strides) into `buf`, which must hold
/// exactly `hs_size(a)` elements of `hs_dtype_of(a)`: `nbytes` is checked against that.
/// The elements are in native byte order; `buf` need not be aligned (bytes are copied).
///
/// # Safety
/// `buf` points to `nbytes` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hs_copy_to(
    a: *const hs_array,
    buf: *mut c_void,
    nbytes: usize,
) -> hs_status {
    guard_status("hs_copy_to", || {
        with_state(|st| {
            let v = st.view(a, "the array")?;
            let size = v.dtype.size();
            let want = v.nelem() * size;
            if nbytes != want {
                return Err(Fail::shape(format!(
                    "the buffer holds {nbytes} bytes but the array needs {want} ({} elements of {})",
                    v.nelem(),
                    v.dtype.name()
                )));
            }
            if want == 0 {
                return Ok(());
            }
            if buf.is_null() {
                return Err(Fail::new(hs_status::HS_ERR_NULL, "buf is NULL"));
            }
            let base = synced_extent(st, &v)?;
            let dst = buf as *mut u8;
            if v.is_contiguous() {
                // SAFETY: the view lies inside the base (checked by synced_base) and spans
                // `want` contiguous bytes from its offset; `buf` holds `want` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(base.offset(v.offset * size as isize), dst, want)
                };
            } else {
                for (k, off) in v.offsets().enumerate() {
                    // SAFETY: every offset of the view lies inside the base (checked), and
                    // k < nelem so the destination element is inside `buf`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            base.offset(off * size as isize),
                            dst.add(k * size),
                            size,
                        )
                    };
                }
            }
            Ok(())
        })
    })
}

/// The value of a one-element array (any shape, any dtype) as a double (complex: its
/// real part). Syncs the array. `value` need not be aligned.
///
/// # Safety
/// `value` points to a writable double.
#[no_mangle]
pub unsafe extern "C" fn hs_item(a: *const hs_array, value: *mut f64) -> hs_status {
    guard_status("hs_item", || {
        if value.is_null() {
            return Err(Fail::new(hs_status::HS_ERR_NULL, "value is NULL"));
        }
        let x = with_state(|st| {
            let v = st.view(a, "the array")?;
            if v.nelem() != 1 {
                return Err(Fail::shape(format!(
                    "can only convert an array of size 1 to a scalar, not {}",
                    v.nelem()
                )));
            }
            let base = synced_extent(st, &v)?;
            let n = v.dtype.size();
            // SAFETY: the single element lies inside the base (checked by synced_base).
            let bytes =
                unsafe { std::slice::from_raw_parts(base.offset(v.offset * n as isize), n) };
            let s = Scalar::from_le_bytes(v.dtype, bytes)
                .ok_or_else(|| Fail::invalid("short element"))?;
            Ok(s.as_f64())
        })?;
        // SAFETY: checked non-NULL; writable by the caller's contract. C may pass a
        // pointer that is not 8-byte aligned (into a packed struct): write it unaligned.
        unsafe { value.write_unaligned(x) };
        Ok(())
    })
}

/// Number of dimensions (0 for a 0-d array, and on error).
#[no_mangle]
pub extern "C" fn hs_ndim(a: *const hs_array) -> usize {
    guard("hs_ndim", 0, || {
        with_state(|st| Ok(st.entry(a, "the array")?.view.ndim()))
    })
}

/// Number of elements (0 on error).
#[no_mangle]
pub extern "C" fn hs_size(a: *const hs_array) -> usize {
    guard("hs_size", 0, || {
        with_state(|st| Ok(st.entry(a, "the array")?.view.nelem()))
    })
}

/// The `hs_ndim(a)` extents; valid while the handle lives. NULL on error.
#[no_mangle]
pub extern "C" fn hs_shape(a: *const hs_array) -> *const usize {
    guard("hs_shape", null(), || {
        with_state(|st| Ok(st.entry(a, "the array")?.shape_ptr()))
    })
}

/// The `hs_ndim(a)` strides, in elements (not bytes), of the memory `hs_data` points
/// into; valid while the handle lives. NULL on error.
#[no_mangle]
pub extern "C" fn hs_strides(a: *const hs_array) -> *const isize {
    guard("hs_strides", null(), || {
        with_state(|st| Ok(st.entry(a, "the array")?.strides_ptr()))
    })
}

/// The element type (`HS_DTYPE_INVALID` on error).
#[no_mangle]
pub extern "C" fn hs_dtype_of(a: *const hs_array) -> hs_dtype {
    guard("hs_dtype_of", HS_DTYPE_INVALID, || {
        with_state(|st| Ok(hs_dtype::from_core(st.entry(a, "the array")?.view.dtype)))
    })
}

/// Drops a handle. When it was the last handle of its base (views share bases), the base's
/// memory is released after the operations recorded on it ran. `hs_free(NULL)` does
/// nothing, like `free(NULL)`; freeing a handle twice is `HS_ERR_FREED`.
#[no_mangle]
pub extern "C" fn hs_free(a: *mut hs_array) -> hs_status {
    if a.is_null() {
        return hs_status::HS_OK;
    }
    guard_status("hs_free", || with_state(|st| st.free_handle(a)))
}

/// Runs every recorded operation now (observing data flushes implicitly).
#[no_mangle]
pub extern "C" fn hs_flush() -> hs_status {
    guard_status("hs_flush", || {
        with_existing(|st| st.rt.flush().map_err(Fail::from)).unwrap_or(Ok(()))
    })
}

/// Prints the runtime's counters (instructions, kernels, cache hits, times) to stderr.
#[no_mangle]
pub extern "C" fn hs_stats_print() -> hs_status {
    guard_status("hs_stats_print", || {
        with_state(|st| {
            eprintln!("{}", st.rt.stats());
            Ok(())
        })
    })
}

/// The message of the most recent failed call on this thread, naming the function and
/// what was wrong ("" when none failed). Valid until the next failing call on the thread.
#[no_mangle]
pub extern "C" fn hs_last_error() -> *const c_char {
    last_error_ptr()
}

/// The status of the most recent failed call on this thread (`HS_OK` when none failed):
/// for functions that return a handle or a pointer, which report failure as NULL.
#[no_mangle]
pub extern "C" fn hs_last_status() -> hs_status {
    last_status()
}
