//! Views: new handles onto the same base (no data is copied), except where NumPy itself
//! copies (`hs_reshape` of a view whose strides do not allow it, `hs_astype`, `hs_copy`).
//! A view keeps its base alive: freeing the original handle first is fine.

use crate::args::{dtype_arg, shape_arg, slice_arg};
use crate::create::new_handle;
use crate::ctypes::*;
use crate::error::{Fail, Result};
use crate::record::{self, axis_arg};
use hassium_core::View;

/// Python's `slice.indices(n)`: clamps `start`/`stop` into range, resolves negatives and
/// the omitted (`HS_NONE`) ends, so any slice of any array is valid (possibly empty).
fn slice_indices(n: usize, start: i64, stop: i64, step: i64) -> Result<(isize, isize, isize)> {
    if step == 0 {
        return Err(Fail::invalid("slice step cannot be zero"));
    }
    let n = n as i128;
    let (start, stop, step) = (start as i128, stop as i128, step as i128);
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let norm = |v: i128, default: i128| -> i128 {
        if v == HS_NONE as i128 {
            default
        } else if v < 0 {
            (v + n).max(lo)
        } else {
            v.min(hi)
        }
    };
    let (start, stop) = if step > 0 {
        (norm(start, 0), norm(stop, n))
    } else {
        (norm(start, n - 1), norm(stop, -1))
    };
    let step = isize::try_from(step).map_err(|_| Fail::invalid("slice step is too large"))?;
    Ok((start as isize, stop as isize, step))
}

fn axis_of(v: &View, axis: i64) -> Result<usize> {
    axis_arg(v, axis)?.ok_or_else(|| {
        Fail::new(
            hs_status::HS_ERR_AXIS,
            "HS_AXIS_ALL names no single axis; pass an axis number",
        )
    })
}

/// `a[start:stop:step]` along `axis`, with Python's semantics: negative values count from
/// the end, out-of-range bounds are clamped, `HS_NONE` is an omitted bound (so
/// `hs_slice(a, 0, HS_NONE, HS_NONE, -1)` reverses). `axis` may be negative.
#[no_mangle]
pub extern "C" fn hs_slice(
    a: *const hs_array,
    axis: i64,
    start: i64,
    stop: i64,
    step: i64,
) -> *mut hs_array {
    new_handle("hs_slice", |st| {
        let v = st.view(a, "the array")?;
        let ax = axis_of(&v, axis)?;
        let (b, e, s) = slice_indices(v.shape[ax], start, stop, step)?;
        Ok(v.slice(ax, b, e, s)?)
    })
}

/// `a[..., i, ...]`: drops `axis`, taking element `i` along it (negative counts from the
/// end; out of range is `HS_ERR_BOUNDS`).
#[no_mangle]
pub extern "C" fn hs_index(a: *const hs_array, axis: i64, i: i64) -> *mut hs_array {
    new_handle("hs_index", |st| {
        let v = st.view(a, "the array")?;
        let ax = axis_of(&v, axis)?;
        let i = isize::try_from(i).map_err(|_| {
            Fail::new(
                hs_status::HS_ERR_BOUNDS,
                format!("index {i} is out of bounds for axis {ax}"),
            )
        })?;
        Ok(v.index(ax, i)?)
    })
}

/// Permutes the axes: `perm` holds `hs_ndim(a)` distinct axis numbers (negative count from
/// the end); NULL reverses them (`a.T`).
///
/// # Safety
/// `perm` is NULL or points to `hs_ndim(a)` values.
#[no_mangle]
pub unsafe extern "C" fn hs_transpose(a: *const hs_array, perm: *const i64) -> *mut hs_array {
    new_handle("hs_transpose", |st| {
        let v = st.view(a, "the array")?;
        if perm.is_null() {
            return Ok(v.reversed_axes());
        }
        // SAFETY: the caller's contract above.
        let p = unsafe { slice_arg(perm, v.ndim(), "perm") }?;
        let axes = p
            .iter()
            .map(|&ax| axis_of(&v, ax))
            .collect::<Result<Vec<usize>>>()?;
        Ok(v.transpose(&axes)?)
    })
}

/// `a.reshape(shape)` in C order; one extent may be negative (-1 by convention): it is
/// inferred. A view when the strides allow it, else a copy (as NumPy does).
///
/// # Safety
/// `shape` points to `ndim` values (NULL when `ndim` is 0).
#[no_mangle]
pub unsafe extern "C" fn hs_reshape(
    a: *const hs_array,
    ndim: usize,
    shape: *const i64,
) -> *mut hs_array {
    new_handle("hs_reshape", |st| {
        let v = st.view(a, "the array")?;
        // SAFETY: the caller's contract above.
        let req = unsafe { slice_arg(shape, ndim, "shape") }?;
        record::reshape(st, &v, &req)
    })
}

/// `np.broadcast_to(a, shape)`: a read-only view with stride-0 dimensions (writing into
/// it, through `hs_assign` or as an `hs_op` output, is `HS_ERR_INVALID`).
///
/// # Safety
/// `shape` points to `ndim` extents (NULL when `ndim` is 0).
#[no_mangle]
pub unsafe extern "C" fn hs_broadcast_to(
    a: *const hs_array,
    ndim: usize,
    shape: *const usize,
) -> *mut hs_array {
    new_handle("hs_broadcast_to", |st| {
        let v = st.view(a, "the array")?;
        // SAFETY: the caller's contract above.
        let s = unsafe { shape_arg(ndim, shape) }?;
        Ok(v.broadcast_to(&s)?)
    })
}

/// A new C-contiguous copy of `a` converted to `dtype` (NumPy's `astype`).
#[no_mangle]
pub extern "C" fn hs_astype(a: *const hs_array, dtype: hs_dtype) -> *mut hs_array {
    new_handle("hs_astype", |st| {
        let v = st.view(a, "the array")?;
        let d = dtype_arg(dtype)?;
        record::astype(st, &v, d)
    })
}

/// A new C-contiguous copy of `a`.
#[no_mangle]
pub extern "C" fn hs_copy(a: *const hs_array) -> *mut hs_array {
    new_handle("hs_copy", |st| {
        let v = st.view(a, "the array")?;
        record::astype(st, &v, v.dtype)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_indices_follow_python() {
        assert_eq!(slice_indices(5, HS_NONE, HS_NONE, -1).unwrap(), (4, -1, -1));
        assert_eq!(slice_indices(5, -2, HS_NONE, 1).unwrap(), (3, 5, 1));
        assert_eq!(slice_indices(5, 1, 100, 2).unwrap(), (1, 5, 2));
        assert_eq!(slice_indices(5, -100, 2, 1).unwrap(), (0, 2, 1));
        assert_eq!(slice_indices(5, 10, HS_NONE, -1).unwrap(), (4, -1, -1));
        assert!(slice_indices(5, 0, 1, 0).is_err());
    }
}
