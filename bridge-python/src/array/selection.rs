//! What a selection (`x[m]` for a lazy boolean mask, `crate::deferred`) does without
//! being compacted: elementwise operators with scalars and with selections of the same
//! mask and shape, in-place operators, and assignment through its own mask. Each
//! function returns `None` (or `false`) when it does not apply, and the caller then takes
//! the general path, which compacts the selection: that path also raises NumPy's errors,
//! so an operation the lifted form refuses is tried there again.

use super::{wrap, wrap_selection, PyNdArray};
use crate::convert::{numpy_scalar, weak_of};
use crate::deferred::{Parts, Selection};
use crate::ops::{self, Arg, Dest};
use crate::rt::{self, Arr, Write};
use hassium_core::resolve::can_cast_safe;
use hassium_core::{OpClass, Opcode};
use pyo3::prelude::*;

/// `a[m]` for a lazy boolean mask `m` over `a`'s leading dimensions: a selection, or the
/// compacted array when the host may write `a` or `m` behind the runtime's back.
pub(super) fn select(py: Python<'_>, a: &Arr, m: &Arr) -> PyResult<PyObject> {
    ops::check_mask(py, a, m)?;
    if rt::host_viewed(a.view.base) || rt::host_viewed(m.view.base) {
        return wrap(py, ops::compress(py, a, m)?);
    }
    wrap_selection(py, Selection::new(a.clone(), m.clone()))
}

/// Whether `op` on whole arrays of dtype `t` may stand for `op` on their selections: an
/// elementwise opcode that cannot fail when run, whatever the unselected elements hold.
/// A power of integers can (a negative exponent raises).
fn liftable(op: Opcode, t: hassium_core::DType) -> bool {
    op.class() == OpClass::Elementwise && (op != Opcode::Power || t.is_inexact())
}

/// `other` as an operand of an operation on the selection `p`: a Python or NumPy scalar,
/// a 0-d array, or a selection of the same mask and shape (its whole array).
fn operand(p: &Parts, other: &Bound<'_, PyAny>) -> PyResult<Option<Arg>> {
    if let Ok(o) = other.downcast::<PyNdArray>() {
        let o = o.borrow();
        if let Some(q) = o.selection().and_then(|s| s.parts()) {
            let same = q.mask.view == p.mask.view && q.whole.view.shape == p.whole.view.shape;
            return Ok(same.then_some(Arg::Array(q.whole)));
        }
        let a = o.arr()?;
        return Ok((a.view.ndim() == 0).then(|| Arg::Array(a.clone())));
    }
    if let Some(w) = weak_of(other)? {
        return Ok(Some(Arg::Weak(w)));
    }
    Ok(numpy_scalar(other)?.map(Arg::Typed))
}

/// `slf op other` (`other op slf` when `reflected`; `op slf` without `other`) as a
/// selection of `slf`'s mask, when `slf` is a selection and the operation lifts.
pub(super) fn lifted(
    slf: &Bound<'_, PyNdArray>,
    op: Opcode,
    other: Option<&Bound<'_, PyAny>>,
    reflected: bool,
) -> PyResult<Option<PyObject>> {
    let Some(p) = slf.borrow().selection().and_then(|s| s.parts()) else {
        return Ok(None);
    };
    if !liftable(op, p.whole.dtype()) {
        return Ok(None);
    }
    let me = Arg::Array(p.whole.clone());
    let args = match other {
        None => vec![me],
        Some(o) => match operand(&p, o)? {
            None => return Ok(None),
            Some(x) if reflected => vec![x, me],
            Some(x) => vec![me, x],
        },
    };
    let py = slf.py();
    match ops::elementwise(py, op, &args, &Dest::NEW, None) {
        Ok(whole) => Ok(Some(wrap_selection(py, Selection::new(whole, p.mask))?)),
        Err(_) => Ok(None),
    }
}

/// `np.<ufunc>(inputs…)` without `out=` as a selection, when an input is a selection and
/// every other one a scalar or a selection by the same mask (see [`lifted`]).
pub fn lifted_ufunc(
    py: Python<'_>,
    op: Opcode,
    inputs: &[Bound<'_, PyAny>],
    dtype: Option<hassium_core::DType>,
) -> PyResult<Option<PyObject>> {
    let first = inputs.iter().find_map(|i| {
        let a = i.downcast::<PyNdArray>().ok()?;
        let p = a.borrow().selection().and_then(|s| s.parts());
        p
    });
    let Some(p) = first else {
        return Ok(None);
    };
    // A power is lifted only in an inexact loop (the first selection's dtype, and the
    // one `dtype=` asks for).
    let int_loop = dtype.is_some_and(|t| !t.is_inexact());
    if !liftable(op, p.whole.dtype()) || (op == Opcode::Power && int_loop) {
        return Ok(None);
    }
    let mut args = Vec::with_capacity(inputs.len());
    for i in inputs {
        match operand(&p, i)? {
            Some(a) => args.push(a),
            None => return Ok(None),
        }
    }
    match ops::elementwise(py, op, &args, &Dest::NEW, dtype) {
        Ok(whole) => Ok(Some(wrap_selection(py, Selection::new(whole, p.mask))?)),
        Err(_) => Ok(None),
    }
}

/// `slf op= other` on a selection: the operation computed anew into a fresh whole array
/// of the selection's dtype (under "same_kind", as in place), which the selection then
/// stands for. Its source is not written: a selection is a copy.
pub(super) fn lifted_in_place(
    slf: &Bound<'_, PyNdArray>,
    op: Opcode,
    other: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let Some(sel) = slf.borrow().selection().cloned() else {
        return Ok(false);
    };
    let Some(p) = sel.parts() else {
        return Ok(false);
    };
    if !liftable(op, p.whole.dtype()) {
        return Ok(false);
    }
    let mut args = vec![Arg::Array(p.whole.clone())];
    if let Some(o) = other {
        match operand(&p, o)? {
            Some(x) => args.push(x),
            None => return Ok(false),
        }
    }
    let py = slf.py();
    let fresh = ops::empty(&p.whole.view.shape, p.whole.dtype())?;
    let dest = Dest {
        out: Some(&fresh),
        casting: "same_kind",
    };
    if ops::elementwise(py, op, &args, &dest, None).is_err() {
        return Ok(false);
    }
    sel.set_whole(fresh);
    Ok(true)
}

/// `a[m] = value` for a `value` that is a selection by this very mask (same view, not
/// written since) of an array of `a`'s shape whose dtype casts safely to `a`'s: a
/// `where`, no count.
pub(super) fn assign(py: Python<'_>, a: &Arr, m: &Arr, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(v) = value.downcast::<PyNdArray>() else {
        return Ok(false);
    };
    let Some(p) = v.borrow().selection().and_then(|s| s.parts()) else {
        return Ok(false);
    };
    if p.mask.view != m.view
        || p.whole.view.shape != a.view.shape
        || !can_cast_safe(p.whole.dtype(), a.dtype())
    {
        return Ok(false);
    }
    a.check_writeable(Write::Assign)?;
    ops::mask_assign_whole(py, a, m, &p.whole)?;
    Ok(true)
}

/// The dtype of `slf`, without compacting a selection.
pub(super) fn dtype_of(slf: &Bound<'_, PyNdArray>) -> PyResult<hassium_core::DType> {
    let me = slf.borrow();
    match me.selection().and_then(|s| s.parts()) {
        Some(p) => Ok(p.whole.dtype()),
        None => Ok(me.arr()?.dtype()),
    }
}
