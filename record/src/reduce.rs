//! Reductions (`sum`, `argmin`, `ufunc.reduce` over any axes, with `dtype=`, `keepdims=`,
//! `initial=`) and scans (`cumsum`, `ufunc.accumulate`), with NumPy's accumulator types.

use crate::args::Weak;
use crate::base::{as_dtype, check_out, copy_into, deliver, flatten, recording, Target};
use crate::error::{Call, Error, Result};
use hassium_core::resolve::{default_sum_dtype, resolve_loop, NoLoop};
use hassium_core::{DType, Identity, Instr, Opcode, Shape, View};

/// One reduction after the bridge has parsed its arguments.
pub struct ReduceSpec<'a> {
    pub op: Opcode,
    /// The name the caller used (`"sum"`, `"argmin"`, `"add"`), for error messages.
    pub name: &'a str,
    /// The input's axes to reduce, each once; `None`: all of them (for `argmin` and
    /// `argmax`, the flattened array, as NumPy's `axis=None`).
    pub axes: Option<Vec<usize>>,
    pub dtype: Option<DType>,
    pub keepdims: bool,
    pub initial: Option<Weak>,
}

/// The accumulation type of a reduction or scan of `t`: NumPy widens bool and small
/// integers for add and multiply, and reduces logically on bools.
fn accumulator(op: Opcode, t: DType) -> DType {
    match op.info().combine {
        Some(Opcode::Add | Opcode::Multiply) => default_sum_dtype(t),
        Some(Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor) => DType::Bool,
        _ => t,
    }
}

/// A reduction of `a` as successive single-axis reductions from the last axis down, into
/// `out` (of exactly the result's shape; cast unsafely, as NumPy does) or a fresh array.
pub fn reduce(
    t: &mut impl Target,
    a: &View,
    spec: &ReduceSpec<'_>,
    out: Option<&View>,
) -> Result<View> {
    let op = spec.op;
    let combine = op.info().combine;
    let arg = op.is_arg_reduction();
    let flat = arg && spec.axes.is_none() && a.ndim() != 1;
    let shape: Shape = if flat {
        Shape::from_slice(&[a.nelem()])
    } else {
        a.shape.clone()
    };
    let ndim = shape.len();
    let mut axes: Vec<usize> = match &spec.axes {
        _ if flat => vec![0],
        Some(ax) => ax.clone(),
        None => (0..ndim).collect(),
    };
    axes.sort_unstable();
    if let Some(&ax) = axes.iter().find(|&&ax| ax >= ndim) {
        return Err(hassium_core::Error::BadAxis(format!(
            "axis {ax} is out of bounds for array of dimension {ndim}"
        ))
        .into());
    }
    let acc = spec.dtype.unwrap_or_else(|| accumulator(op, a.dtype));
    let out_t = op
        .out_dtype(acc)
        .ok_or_else(|| match combine.map(|c| resolve_loop(c, acc)) {
            Some(Err(NoLoop::Unsupported)) | None => Error::Unsupported(format!(
                "hassium has no {} loop for {}",
                op.name(),
                acc.name()
            )),
            _ => Error::NoLoop {
                ufunc: combine.map_or(op.name(), |c| c.name()),
                types: vec![acc],
                call: Call::Reduce,
            },
        })?;
    let no_identity = op.info().identity == Identity::None;
    let empty_axis = axes.iter().any(|&ax| shape[ax] == 0);
    if empty_axis && no_identity && spec.initial.is_none() {
        return Err(Error::Value(if arg {
            format!("attempt to get {} of an empty sequence", spec.name)
        } else {
            format!(
                "zero-size array to reduction operation {} which has no identity",
                combine.map_or(spec.name, |c| c.name())
            )
        }));
    }
    let mut kept = shape.clone();
    for &ax in axes.iter().rev() {
        kept.remove(ax);
    }
    let keep: Shape = if flat {
        Shape::from_elem(1, a.ndim())
    } else {
        (0..ndim)
            .map(|i| if axes.contains(&i) { 1 } else { shape[i] })
            .collect()
    };
    if let Some(o) = out {
        let want = if spec.keepdims { &keep } else { &kept };
        if o.shape != *want {
            return Err(Error::Value(format!(
                "output parameter for reduction operation {} has the wrong number of dimensions: Found {} but expected {}",
                spec.name,
                o.ndim(),
                want.len()
            )));
        }
    }
    recording(t, |t, temps| {
        // NumPy sums float16 along the innermost axis pairwise in float32, rounding once;
        // along outer axes it adds in float16 step by step. Follow it.
        let inner = axes.last() == Some(&(ndim.saturating_sub(1)));
        let work = if acc == DType::Float16 && combine == Some(Opcode::Add) && inner {
            DType::Float32
        } else {
            acc
        };
        let work_out = op.out_dtype(work).unwrap_or(out_t);
        let src = if flat {
            flatten(t, temps, a)?
        } else {
            a.clone()
        };
        let mut cur = as_dtype(t, temps, &src, work)?;
        let to_out = out.is_some();
        let res = if empty_axis && no_identity {
            // NumPy returns `initial` for empty min/max reductions given one.
            let res = temps.result(t, to_out, out_t, &kept)?;
            let init = spec
                .initial
                .expect("checked above: an initial value is given");
            copy_into(t, &res, init.to_scalar(out_t).into())?;
            res
        } else if axes.is_empty() {
            let res = temps.result(t, to_out, out_t, &kept)?;
            copy_into(t, &res, cur.into())?;
            res
        } else {
            let mut res = None;
            for (k, &ax) in axes.iter().enumerate().rev() {
                let mut step_shape = cur.shape.clone();
                step_shape.remove(ax);
                let step_out = if k == 0 && work_out == out_t {
                    let r = temps.result(t, to_out, out_t, &step_shape)?;
                    res = Some(r.clone());
                    r
                } else {
                    temps.view(t, work_out, &step_shape)?
                };
                t.record(Instr::new(op, step_out.clone(), [cur.into()]).with_axis(ax))?;
                if k == 0 && work_out != out_t {
                    let r = temps.result(t, to_out, out_t, &step_shape)?;
                    copy_into(t, &r, step_out.clone().into())?;
                    res = Some(r);
                }
                cur = step_out;
            }
            // `axes` is non-empty, so the loop ran and its last step (k == 0) set `res`.
            res.expect("at least one axis reduced")
        };
        // An empty min/max reduction given `initial` was filled with it above.
        let filled = empty_axis && no_identity;
        if let (Some(init), Some(c)) = (spec.initial, combine) {
            if !filled && !res.is_empty() {
                let with = init.to_scalar(out_t).into();
                t.record(Instr::new(c, res.clone(), [res.clone().into(), with]))?;
            }
        }
        let res = if spec.keepdims {
            res.reshape(&keep)
                .expect("a contiguous result reshapes to its kept dimensions")
        } else {
            res
        };
        deliver(t, res, out)
    })
}

/// A scan along `axis`, or over the flattened array for `None` (NumPy's
/// `cumsum(axis=None)`), in `dtype` or NumPy's accumulator, into `out` (cast unsafely)
/// or a fresh array.
pub fn scan(
    t: &mut impl Target,
    op: Opcode,
    a: &View,
    axis: Option<usize>,
    dtype: Option<DType>,
    out: Option<&View>,
) -> Result<View> {
    if !op.is_scan() {
        return Err(Error::Value(format!("{} is not a scan", op.name())));
    }
    let acc = dtype.unwrap_or_else(|| accumulator(op, a.dtype));
    op.out_dtype(acc).ok_or_else(|| {
        Error::Unsupported(format!(
            "hassium has no {} loop for {}",
            op.name(),
            acc.name()
        ))
    })?;
    let shape: Shape = match axis {
        Some(ax) if ax >= a.ndim() => {
            return Err(hassium_core::Error::BadAxis(format!(
                "axis {ax} is out of bounds for array of dimension {}",
                a.ndim()
            ))
            .into())
        }
        Some(_) => a.shape.clone(),
        None => Shape::from_slice(&[a.nelem()]),
    };
    if let Some(o) = out {
        check_out(op.name(), o, &shape, acc, "unsafe")?;
    }
    recording(t, |t, temps| {
        let src = match axis {
            Some(_) => a.clone(),
            None => flatten(t, temps, a)?,
        };
        let res = temps.result(t, out.is_some(), acc, &shape)?;
        if !res.is_empty() {
            copy_into(t, &res, src.into())?;
            let instr = Instr::new(op, res.clone(), [res.clone().into()]);
            t.record(instr.with_axis(axis.unwrap_or(0)))?;
        }
        deliver(t, res, out)
    })
}
