//! Boolean-mask indexing on the engine: `a[mask]` (a compaction) and `a[mask] = v`
//! (an expansion), for a mask over `a`'s leading dimensions.
//!
//! How many elements a mask selects sizes the compaction's result, and NumPy's
//! assignment checks the values against it, so those two need the count: a caller
//! records [`mask_positions`] (the running count of selected entries, whose last element
//! is the count), reads that one element, and records the compaction or assignment with
//! it. Nothing else leaves the engine: the mask is never brought to host memory, and no
//! index array is built there. An assignment of a scalar, or of values that broadcast
//! along the selection, needs no count ([`mask_assign_needs_count`]).
//!
//! The selected element at mask position `r` and inner offset `j` goes to (comes from)
//! result element `(positions[r] - 1) * inner + j`. A masked scatter checks only the
//! indices its mask selects; the gather of an assignment clamps the others to 0.

use crate::args::{check_stored_int, Arg};
use crate::base::{as_dtype, flatten, operand, private_copy, recording, Target, Temps};
use crate::create::generate;
use crate::elementwise::fit_value;
use crate::error::{Error, Result};
use crate::reduce::scan;
use hassium_core::{fmt_shape, overlap, DType, Instr, Opcode, Operand, Overlap, Scalar, View};

/// Checks that `mask` indexes `a`'s leading dimensions, with NumPy's error.
pub fn check_mask(a: &View, mask: &View) -> Result<()> {
    if mask.ndim() > a.ndim() {
        return Err(Error::Index(format!(
            "too many indices for array: array is {}-dimensional, but {} were indexed",
            a.ndim(),
            mask.ndim()
        )));
    }
    if let Some(axis) = mask.shape.iter().zip(&a.shape).position(|(m, s)| m != s) {
        return Err(Error::Index(format!(
            "boolean index did not match indexed array along axis {axis}; size of axis is {} but size of corresponding boolean axis is {}",
            a.shape[axis], mask.shape[axis]
        )));
    }
    Ok(())
}

/// The running count of `mask`'s true entries in C order (inclusive), as a fresh int64
/// array of the mask's shape: its last element is how many the mask selects.
pub fn mask_positions(t: &mut impl Target, mask: &View) -> Result<View> {
    let flat = scan(
        t,
        Opcode::AddAccumulate,
        mask,
        None,
        Some(DType::Int64),
        None,
    )?;
    Ok(flat
        .reshape(&mask.shape)
        .expect("a fresh array reshapes to any shape of its size"))
}

/// `v` (whose dimensions are `a`'s leading ones, or `a`'s trailing ones with `lead`
/// leading dimensions missing) broadcast to `a`'s shape with stride-0 dimensions.
fn spread(v: &View, shape: &[usize], lead: usize) -> View {
    let mut w = v.clone();
    let k = v.ndim();
    w.shape = shape.into();
    w.strides = (0..shape.len())
        .map(|d| {
            if d >= lead && d < lead + k {
                v.strides[d - lead]
            } else {
                0
            }
        })
        .collect();
    w
}

/// The int64 result positions of `a`'s elements under the mask (see the module's text),
/// in a temporary of `a`'s shape; below 0 where the mask selects nothing yet unless
/// `clamp`.
fn result_index(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &View,
    pos: &View,
    clamp: bool,
) -> Result<View> {
    let k = pos.ndim();
    let inner: usize = a.shape[k..].iter().product();
    let idx = temps.view(t, DType::Int64, &a.shape)?;
    let p = spread(pos, &a.shape, 0);
    t.record(Instr::new(
        Opcode::Subtract,
        idx.clone(),
        [p.into(), Scalar::Int64(1).into()],
    ))?;
    if clamp {
        t.record(Instr::new(
            Opcode::Maximum,
            idx.clone(),
            [idx.clone().into(), Scalar::Int64(0).into()],
        ))?;
    }
    if inner > 1 {
        t.record(Instr::new(
            Opcode::Multiply,
            idx.clone(),
            [idx.clone().into(), Scalar::Int64(inner as i64).into()],
        ))?;
        let j = temps.view(t, DType::Int64, &a.shape[k..])?;
        generate(t, Opcode::Range, &j, &[])?;
        t.record(Instr::new(
            Opcode::Add,
            idx.clone(),
            [idx.clone().into(), spread(&j, &a.shape, k).into()],
        ))?;
    }
    Ok(idx)
}

/// `a[mask]`: the selected elements (rows, for a mask over fewer dimensions) in C order,
/// as a fresh array of shape `(count,) + a.shape[mask.ndim:]`. `pos` is
/// [`mask_positions`] of the mask and `count` its last element.
pub fn compress(
    t: &mut impl Target,
    a: &View,
    mask: &View,
    pos: &View,
    count: usize,
) -> Result<View> {
    check_mask(a, mask)?;
    let k = mask.ndim();
    let mut shape = vec![count];
    shape.extend_from_slice(&a.shape[k..]);
    recording(t, |t, temps| {
        let out = temps.fresh(t, a.dtype, &shape)?;
        if out.is_empty() || a.is_empty() {
            return Ok(out);
        }
        let idx = result_index(t, temps, a, pos, false)?;
        let m = operand(
            t,
            temps,
            &Arg::Array(mask.clone()),
            DType::Bool,
            &mask.shape,
            None,
        )?;
        let Operand::View(m) = m else {
            unreachable!("an array operand stays a view")
        };
        let flat = out
            .reshape(&[out.nelem()])
            .expect("fresh arrays are contiguous");
        t.record(Instr::new(
            Opcode::CondScatter,
            flat,
            [idx.into(), a.clone().into(), spread(&m, &a.shape, 0).into()],
        ))?;
        Ok(out)
    })
}

/// The shape `a[mask]` has when `count` elements are selected.
fn selection_shape(a: &View, mask: &View, count: usize) -> Vec<usize> {
    let mut shape = vec![count];
    shape.extend_from_slice(&a.shape[mask.ndim()..]);
    shape
}

/// Whether [`mask_assign`] of `values` needs the mask's count: only when the values
/// have a leading dimension of their own along the selection (not a scalar, and not
/// broadcast along it).
pub fn mask_assign_needs_count(a: &View, mask: &View, values: &Arg) -> bool {
    let ndim = 1 + a.ndim() - mask.ndim().min(a.ndim());
    match fit_value(values, ndim) {
        Arg::Array(v) => v.ndim() == ndim && v.shape[0] != 1,
        _ => false,
    }
}

/// `a[mask] = values`, NumPy's boolean-mask assignment: values cast to `a`'s dtype and
/// broadcast to the selection's shape. `selected` is the mask's positions and count,
/// which [`mask_assign_needs_count`] says whether it needs.
pub fn mask_assign(
    t: &mut impl Target,
    a: &View,
    mask: &View,
    selected: Option<(&View, usize)>,
    values: &Arg,
) -> Result<()> {
    check_mask(a, mask)?;
    let k = mask.ndim();
    let res_ndim = 1 + a.ndim() - k;
    let values = fit_value(values, res_ndim);
    check_stored_int(&values, a.dtype)?;
    let gathered = mask_assign_needs_count(a, mask, &values);
    if let Arg::Array(v) = &values {
        // Without a count, the values broadcast along the selection: check the rest.
        let count = match selected {
            Some((_, c)) => c,
            None if gathered => {
                return Err(Error::Value(
                    "hassium: internal error: a boolean-mask assignment needs its count".into(),
                ))
            }
            None => 1,
        };
        let shape = selection_shape(a, mask, count);
        if v.broadcast_to(&shape).is_err() {
            return Err(if res_ndim == 1 && v.ndim() == 1 {
                Error::Value(format!(
                    "NumPy boolean array indexing assignment cannot assign {} input values to the {count} output values where the mask is true",
                    v.shape[0]
                ))
            } else {
                Error::Shape(format!(
                    "shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
                    fmt_shape(&v.shape),
                    fmt_shape(&shape)
                ))
            });
        }
    }
    if a.is_empty() || selected.is_some_and(|(_, c)| c == 0) {
        return Ok(());
    }
    recording(t, |t, temps| {
        let m = operand(
            t,
            temps,
            &Arg::Array(mask.clone()),
            DType::Bool,
            &mask.shape,
            Some(a),
        )?;
        let Operand::View(m) = m else {
            unreachable!("an array operand stays a view")
        };
        let v: Operand = match &values {
            Arg::Array(v) if gathered => {
                let (pos, count) = selected.expect("checked above");
                let shape = selection_shape(a, mask, count);
                let mut src = as_dtype(t, temps, v, a.dtype)?.broadcast_to(&shape)?;
                if src.base == a.base {
                    src = private_copy(t, temps, &src)?;
                }
                let src = flatten(t, temps, &src)?;
                let idx = result_index(t, temps, a, pos, true)?;
                let g = temps.view(t, a.dtype, &a.shape)?;
                t.record(Instr::new(
                    Opcode::Gather,
                    g.clone(),
                    [src.into(), idx.into()],
                ))?;
                g.into()
            }
            Arg::Array(v) => {
                // Broadcast along the selection: one row of values for every selected one.
                let row = if v.ndim() == res_ndim {
                    v.index(0, 0)?
                } else {
                    v.clone()
                };
                let mut src = as_dtype(t, temps, &row, a.dtype)?;
                if overlap(a, &src) == Overlap::Partial {
                    src = private_copy(t, temps, &src)?;
                }
                src.broadcast_to(&a.shape)?.into()
            }
            Arg::Typed(s) => Operand::Scalar(s.cast(a.dtype)),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(a.dtype)),
        };
        t.record(Instr::new(
            Opcode::Where,
            a.clone(),
            [spread(&m, &a.shape, 0).into(), v, a.clone().into()],
        ))
    })
}
