//! `sort`, `argsort`, `argpartition` and `searchsorted` as the extension methods of
//! `hassium_core::methods`: the sorted axis is moved last by a view (no copy), so one
//! instruction sorts every row of any axis.

use crate::base::{as_dtype, recording, Target};
use crate::error::{Error, Result};
use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{promote, DType, Instr, Operand, Scalar, View};

/// `view` with `axis` moved last.
fn axis_last(view: &View, axis: usize) -> Result<View> {
    let perm: Vec<usize> = (0..view.ndim())
        .filter(|&d| d != axis)
        .chain([axis])
        .collect();
    Ok(view.transpose(&perm)?)
}

fn check_axis(a: &View, axis: usize) -> Result<()> {
    if axis >= a.ndim() {
        return Err(hassium_core::Error::BadAxis(format!(
            "axis {axis} is out of bounds for array of dimension {}",
            a.ndim()
        ))
        .into());
    }
    Ok(())
}

/// A sorted copy of `a` along `axis` (stable, NaN last), or with `indices` the int64
/// positions that sort it (`argsort`), as a fresh C-ordered array of `a`'s shape.
pub fn sort(t: &mut impl Target, a: &View, axis: usize, indices: bool) -> Result<View> {
    check_axis(a, axis)?;
    let (method, dtype) = if indices {
        (ARGSORT, DType::Int64)
    } else {
        (SORT, a.dtype)
    };
    recording(t, |t, temps| {
        let res = temps.fresh(t, dtype, &a.shape)?;
        if !res.is_empty() {
            let out = axis_last(&res, axis)?;
            let src = axis_last(a, axis)?;
            t.record(Instr::extension(method, out, [src.into()]))?;
        }
        Ok(res)
    })
}

/// The int64 positions along `axis` of the `k + 1` smallest elements of `a` in the
/// stable sort order, then of the others in increasing order (`argpartition` for every
/// `kth <= k`; see `hassium_core::methods::ARGPARTITION`), as a fresh C-ordered array.
pub fn argpartition(t: &mut impl Target, a: &View, axis: usize, k: usize) -> Result<View> {
    check_axis(a, axis)?;
    let n = a.shape[axis];
    if k >= n.max(1) {
        return Err(Error::Value(format!("kth(={k}) out of bounds ({n})")));
    }
    recording(t, |t, temps| {
        let res = temps.fresh(t, DType::Int64, &a.shape)?;
        if !res.is_empty() {
            let out = axis_last(&res, axis)?;
            let src = axis_last(a, axis)?;
            let kth = Operand::Scalar(Scalar::Int64(k as i64));
            t.record(Instr::extension(ARGPARTITION, out, [src.into(), kth]))?;
        }
        Ok(res)
    })
}

/// Sorts `a` in place along `axis` (`ndarray.sort`).
pub fn sort_in_place(t: &mut impl Target, a: &View, axis: usize) -> Result<()> {
    check_axis(a, axis)?;
    if a.is_empty() {
        return Ok(());
    }
    let v = axis_last(a, axis)?;
    t.record(Instr::extension(SORT, v.clone(), [v.into()]))
}

/// Where each element of `needles` goes in the sorted 1-D `hay`: before equal elements
/// (`right` false) or after them, as an int64 array of `needles`' shape. Both are
/// compared in their common dtype.
pub fn searchsorted(t: &mut impl Target, hay: &View, needles: &View, right: bool) -> Result<View> {
    if hay.ndim() != 1 {
        return Err(Error::Value("object too deep for desired array".into()));
    }
    let common = promote(hay.dtype, needles.dtype);
    let method = if right {
        SEARCHSORTED_RIGHT
    } else {
        SEARCHSORTED_LEFT
    };
    recording(t, |t, temps| {
        let res = temps.fresh(t, DType::Int64, &needles.shape)?;
        if !res.is_empty() {
            let h = as_dtype(t, temps, hay, common)?;
            let n = as_dtype(t, temps, needles, common)?;
            t.record(Instr::extension(method, res.clone(), [h.into(), n.into()]))?;
        }
        Ok(res)
    })
}
