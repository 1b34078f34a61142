//! What a selection (`x[m]` for a lazy boolean mask, `crate::deferred`) does without
//! being compacted: elementwise operators and ufuncs with scalars and with selections of
//! the same mask and shape, in-place operators, assignment through its own mask, its
//! shape, and reductions over its first axis. Each
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
/// a 0-d array, or a selection of the same shape by a mask of the same values (the same
/// view, or one computed alike: `ops::same_values`), as its whole array.
fn operand(p: &Parts, other: &Bound<'_, PyAny>) -> PyResult<Option<Arg>> {
    if let Ok(o) = other.downcast::<PyNdArray>() {
        let o = o.borrow();
        if let Some(q) = o.parts() {
            let same =
                q.whole.view.shape == p.whole.view.shape && ops::same_values(&q.mask, &p.mask)?;
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
    let Some(p) = slf.borrow().parts() else {
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
    inputs: &Bound<'_, pyo3::types::PyTuple>,
    dtype: Option<hassium_core::DType>,
) -> PyResult<Option<PyObject>> {
    let first = inputs.iter().find_map(|i| {
        let a = i.downcast::<PyNdArray>().ok()?;
        let p = a.borrow().parts();
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
    for i in inputs.iter() {
        match operand(&p, &i)? {
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

/// `a[m] = value` for a `value` that is a selection by a mask of `m`'s values (the same
/// view, or one computed alike: `ops::same_values`) of an array of `a`'s shape whose
/// dtype casts safely to `a`'s: a `where`, no count.
pub(super) fn assign(py: Python<'_>, a: &Arr, m: &Arr, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(v) = value.downcast::<PyNdArray>() else {
        return Ok(false);
    };
    let Some(p) = v.borrow().parts() else {
        return Ok(false);
    };
    if p.whole.view.shape != a.view.shape
        || !can_cast_safe(p.whole.dtype(), a.dtype())
        || !ops::same_values(&p.mask, m)?
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
    match me.parts() {
        Some(p) => Ok(p.whole.dtype()),
        None => Ok(me.arr()?.dtype()),
    }
}

/// The selection's shape: the mask's count (read back once, and remembered while the
/// mask is not written), then `whole`'s dimensions past the mask's. Nothing is compacted.
pub(super) fn shape(py: Python<'_>, p: &Parts) -> PyResult<Vec<usize>> {
    let mut s = vec![ops::mask_count(py, &p.mask)?];
    s.extend_from_slice(&p.whole.view.shape[p.mask.view.ndim()..]);
    Ok(s)
}

/// The selection's number of dimensions (no count needed).
pub(super) fn ndim(p: &Parts) -> usize {
    1 + p.whole.view.ndim() - p.mask.view.ndim()
}

/// `sel.sum()`, `prod`, `any`, `all` (NumPy's `add`, `multiply`, `logical_or`,
/// `logical_and` reductions) over axes that include the selection's first: the same
/// reduction of `where(mask, whole, identity)` over the mask's dimensions and the rest,
/// with no compaction and no count. The identity is the reduction's own (`-0.0` for a
/// float sum, so a sum of negative zeros keeps its sign), so the result is the
/// compacted array's up to the order of a float sum's terms, which no rule fixes.
/// `None` for other reductions, `out=`, axes that leave the first (the result's shape
/// would need the count), and `keepdims` with a mask of several dimensions.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce(
    py: Python<'_>,
    p: &Parts,
    name: &str,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Arr>> {
    use hassium_core::{Scalar, View};
    if out.is_some_and(|o| !o.is_none()) {
        return Ok(None);
    }
    let t = p.whole.dtype();
    let identity = match name {
        "add" if t.is_complex() => Scalar::Complex128(-0.0, -0.0).cast(t),
        "add" if t.is_inexact() => Scalar::Float64(-0.0).cast(t),
        "add" | "logical_or" => Scalar::zero(t),
        "multiply" | "logical_and" => Scalar::one(t),
        _ => return Ok(None),
    };
    let k = p.mask.view.ndim();
    let axes = super::reductions::parse_reduce_axes(axis, ndim(p))?;
    let whole_axes: Vec<usize> = match &axes {
        None => (0..p.whole.view.ndim()).collect(),
        Some(a) if a.contains(&0) => {
            let mut w: Vec<usize> = (0..k).collect();
            w.extend(a.iter().filter(|&&x| x > 0).map(|&x| x + k - 1));
            w
        }
        Some(_) => return Ok(None),
    };
    if keepdims && k > 1 {
        return Ok(None);
    }
    // The mask spread over `whole`'s trailing dimensions.
    let m = &p.mask.view;
    let rest = p.whole.view.ndim() - k;
    let mut shape = m.shape.to_vec();
    let mut strides = m.strides.to_vec();
    shape.extend_from_slice(&p.whole.view.shape[k..]);
    strides.extend(std::iter::repeat_n(0, rest));
    let spread = View {
        shape: shape.into(),
        strides: strides.into(),
        ..m.clone()
    };
    let cond = Arg::Array(p.mask.with_view(spread));
    let values = ops::where_(
        py,
        &cond,
        &Arg::Array(p.whole.clone()),
        &Arg::Typed(identity),
    )?;
    let spec = ops::ReduceSpec {
        name,
        axes: Some(whole_axes),
        dtype: crate::py::opt_dtype(dtype)?,
        keepdims,
        initial: super::reductions::opt_weak(initial)?,
    };
    Ok(Some(ops::reduce(py, &values, &spec, None)?))
}

/// [`reduce`] for `np.<ufunc>.reduce(a, …)` when `a` is a selection.
#[allow(clippy::too_many_arguments)]
pub fn reduce_selection(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    name: &str,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Arr>> {
    let Ok(a) = a.downcast::<PyNdArray>() else {
        return Ok(None);
    };
    let Some(p) = a.borrow().parts() else {
        return Ok(None);
    };
    reduce(py, &p, name, axis, dtype, out, keepdims, initial)
}
