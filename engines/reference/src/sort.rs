//! The sorting extension methods (`hassium_core::methods`): `sort`, `argsort`,
//! `argpartition` and `searchsorted_left`/`_right`, along the last axis, in NumPy's order
//! ([`Elem::sort_less`]). Plain and obviously right: every row is read into a vector,
//! sorted with the standard library's stable sort, and written back; a search is a binary
//! search per needle.

use crate::element::Elem;
use crate::memory::{Memory, Walker};
use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{Error, Instr, Operand, Result, Scalar, View};
use std::cmp::Ordering;

pub(crate) fn run(method: &str, instr: &Instr, mem: &Memory) -> Result<()> {
    let input = |k: usize| {
        instr
            .ins
            .get(k)
            .and_then(Operand::as_view)
            .ok_or_else(|| Error::Invalid(format!("{method}: input {k} must be a view")))
    };
    let a = input(0)?;
    match method {
        SORT => with_dtype!(a.dtype, T => sort::<T>(a, &instr.out, mem, false)),
        ARGSORT => with_dtype!(a.dtype, T => sort::<T>(a, &instr.out, mem, true)),
        ARGPARTITION => {
            let Some(Operand::Scalar(Scalar::Int64(k))) = instr.ins.get(1) else {
                return Err(Error::Invalid(
                    "argpartition: k must be an int64 scalar".into(),
                ));
            };
            let k =
                usize::try_from(*k).map_err(|_| Error::Invalid("argpartition: k < 0".into()))?;
            with_dtype!(a.dtype, T => argpartition::<T>(a, &instr.out, mem, k))
        }
        SEARCHSORTED_LEFT | SEARCHSORTED_RIGHT => {
            let right = method == SEARCHSORTED_RIGHT;
            with_dtype!(a.dtype, T => search::<T>(a, input(1)?, &instr.out, mem, right))
        }
        other => Err(Error::Invalid(format!(
            "unknown extension method '{other}'"
        ))),
    }
}

/// A total order from NumPy's `less` (stable sorts treat incomparable as equal).
fn order<T: Elem>(a: &T, b: &T) -> Ordering {
    if T::sort_less(*a, *b) {
        Ordering::Less
    } else if T::sort_less(*b, *a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// The rows of `view` (all axes but the last): each row's start offset, its length and
/// its stride.
fn rows(view: &View) -> Result<(Walker, usize, isize)> {
    let last = view
        .ndim()
        .checked_sub(1)
        .ok_or_else(|| Error::ShapeMismatch("a sort needs at least one dimension".into()))?;
    Ok((
        Walker::without_axis(view, last)?,
        view.shape[last],
        view.strides[last],
    ))
}

/// Sorts `a` into `out` along the last axis: the values, or (`indices`) the int64
/// positions they came from.
fn sort<T: Elem>(a: &View, out: &View, mem: &Memory, indices: bool) -> Result<()> {
    if a.shape != out.shape {
        return Err(Error::ShapeMismatch("sort: input and output differ".into()));
    }
    if a.is_empty() {
        return Ok(());
    }
    let src = mem.array::<T>(a)?;
    let (ins, n, s) = rows(a)?;
    let (outs, _, os) = rows(out)?;
    let mut row: Vec<(T, i64)> = Vec::with_capacity(n);
    for (i0, o0) in ins.zip(outs) {
        row.clear();
        for j in 0..n {
            row.push((src.read(i0 + j as isize * s)?, j as i64));
        }
        row.sort_by(|x, y| order(&x.0, &y.0));
        if indices {
            let dst = mem.array::<i64>(out)?;
            for (j, &(_, k)) in row.iter().enumerate() {
                dst.write(o0 + j as isize * os, k)?;
            }
        } else {
            let dst = mem.array::<T>(out)?;
            for (j, &(v, _)) in row.iter().enumerate() {
                dst.write(o0 + j as isize * os, v)?;
            }
        }
    }
    Ok(())
}

/// The positions of the `k + 1` first elements of each row's stable sort, in that
/// order, then the positions of the rest in increasing order.
fn argpartition<T: Elem>(a: &View, out: &View, mem: &Memory, k: usize) -> Result<()> {
    if a.shape != out.shape {
        return Err(Error::ShapeMismatch(
            "argpartition: input and output differ".into(),
        ));
    }
    if a.is_empty() {
        return Ok(());
    }
    let src = mem.array::<T>(a)?;
    let dst = mem.array::<i64>(out)?;
    let (ins, n, s) = rows(a)?;
    let (outs, _, os) = rows(out)?;
    if k >= n {
        return Err(Error::Invalid(format!("argpartition: k = {k} >= {n}")));
    }
    for (i0, o0) in ins.zip(outs) {
        let mut row: Vec<(T, usize)> = (0..n)
            .map(|j| Ok((src.read(i0 + j as isize * s)?, j)))
            .collect::<Result<_>>()?;
        row.sort_by(|x, y| order(&x.0, &y.0));
        let mut first: Vec<usize> = row[..=k].iter().map(|&(_, j)| j).collect();
        let mut chosen = vec![false; n];
        for &j in &first {
            chosen[j] = true;
        }
        first.extend((0..n).filter(|&j| !chosen[j]));
        for (p, &j) in first.iter().enumerate() {
            dst.write(o0 + p as isize * os, j as i64)?;
        }
    }
    Ok(())
}

/// For each needle, the number of elements of the sorted 1-D `hay` before it goes:
/// those `< v` (left) or `<= v` (right).
fn search<T: Elem>(
    hay: &View,
    needles: &View,
    out: &View,
    mem: &Memory,
    right: bool,
) -> Result<()> {
    let ([n], [s]) = (hay.shape.as_slice(), hay.strides.as_slice()) else {
        return Err(Error::ShapeMismatch(
            "searchsorted: the sorted array must be 1-D".into(),
        ));
    };
    if needles.shape != out.shape {
        return Err(Error::ShapeMismatch(
            "searchsorted: needles and output differ".into(),
        ));
    }
    let h = mem.array::<T>(hay)?;
    let sorted: Vec<T> = (0..*n)
        .map(|j| h.read(hay.offset + j as isize * s))
        .collect::<Result<_>>()?;
    let src = mem.array::<T>(needles)?;
    let dst = mem.array::<i64>(out)?;
    for (i, o) in Walker::of(needles)?.zip(Walker::of(out)?) {
        let v = src.read(i)?;
        let at = if right {
            sorted.partition_point(|&x| !T::sort_less(v, x))
        } else {
            sorted.partition_point(|&x| T::sort_less(x, v))
        };
        dst.write(o, at as i64)?;
    }
    Ok(())
}
