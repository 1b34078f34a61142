//! Reductions and scans along one axis of any view.
//!
//! The outer loop walks the input with the axis removed (in lock step with the output);
//! the inner loop steps along the axis. Reductions collect the axis's values and fold
//! them: `add` with NumPy's pairwise summation for floats, the others in order from the
//! first element, an empty axis giving the table's identity. Scans run in order.

use crate::element::{logical, Elem};
use crate::memory::{Array, Memory, Walker};
use hassium_core::{Error, Identity, Instr, Opcode, Result, View};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    let input = instr
        .ins
        .first()
        .and_then(|o| o.as_view())
        .ok_or_else(|| Error::Invalid("input 0 must be an array view".into()))?;
    let axis = instr
        .axis
        .ok_or_else(|| Error::BadAxis("reduction needs an axis".into()))?;
    if axis >= input.ndim() {
        return Err(Error::BadAxis(format!(
            "axis {axis} is out of bounds for array of dimension {}",
            input.ndim()
        )));
    }
    let op = instr.op;
    with_dtype!(input.dtype, T => {
        if op.is_scan() {
            scan::<T>(instr, input, axis, mem)
        } else if op.is_arg_reduction() {
            arg_reduce::<T>(instr, input, axis, mem)
        } else {
            reduce::<T>(instr, input, axis, mem)
        }
    })
}

/// The values of `input` along `axis` starting at element offset `start`.
fn along<T: Elem>(
    src: &Array<T>,
    input: &View,
    axis: usize,
    start: isize,
    into: &mut Vec<T>,
) -> Result<()> {
    into.clear();
    let step = input.strides[axis];
    for j in 0..input.shape[axis] {
        into.push(src.read(start + j as isize * step)?);
    }
    Ok(())
}

fn short() -> Error {
    Error::ShapeMismatch("the output does not match the input without the reduced axis".into())
}

fn identity<T: Elem>(op: Opcode) -> Result<T> {
    match op.info().identity {
        Identity::Zero => Ok(T::zero()),
        Identity::One => Ok(T::one()),
        Identity::AllOnes => Ok(T::all_ones()),
        Identity::None => Err(Error::Invalid(format!(
            "zero-size array to reduction operation {} which has no identity",
            op.name().trim_end_matches(".reduce")
        ))),
    }
}

fn fold<T: Elem>(combine: Opcode, values: &[T]) -> Result<T> {
    let Some((&first, rest)) = values.split_first() else {
        return Err(Error::Invalid("internal: folding an empty axis".into()));
    };
    match combine {
        Opcode::Add => T::sum(values),
        Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor => {
            let mut acc = first.is_nonzero();
            for v in rest {
                acc = logical(combine, acc, v.is_nonzero())?;
            }
            Ok(T::from_bool(acc))
        }
        _ => rest
            .iter()
            .try_fold(first, |acc, &v| T::combine(combine, acc, v)),
    }
}

fn reduce<T: Elem>(instr: &Instr, input: &View, axis: usize, mem: &Memory) -> Result<()> {
    let op = instr.op;
    let combine = op
        .info()
        .combine
        .ok_or_else(|| Error::Invalid(format!("'{}' has no combining operation", op.name())))?;
    let src = mem.array::<T>(input)?;
    let out = mem.array::<T>(&instr.out)?;
    let mut outer = Walker::without_axis(input, axis)?;
    let mut values = Vec::with_capacity(input.shape[axis]);
    for o in Walker::of(&instr.out)? {
        let start = outer.next().ok_or_else(short)?;
        along(&src, input, axis, start, &mut values)?;
        let r = if values.is_empty() {
            identity::<T>(op)?
        } else {
            fold(combine, &values)?
        };
        out.write(o, r)?;
    }
    Ok(())
}

/// argmin/argmax: the first occurrence of the extreme; a NaN is the extreme (the first
/// NaN wins), as NumPy.
fn arg_reduce<T: Elem>(instr: &Instr, input: &View, axis: usize, mem: &Memory) -> Result<()> {
    let op = instr.op;
    // `better(v, best)`: NumPy's `!(v <= best)` for argmax, `!(v >= best)` for argmin,
    // which is also true when v is NaN.
    let worse = if op == Opcode::ArgmaxReduce {
        Opcode::LessEqual
    } else {
        Opcode::GreaterEqual
    };
    let src = mem.array::<T>(input)?;
    let out = mem.array::<i64>(&instr.out)?;
    let mut outer = Walker::without_axis(input, axis)?;
    let mut values = Vec::with_capacity(input.shape[axis]);
    for o in Walker::of(&instr.out)? {
        let start = outer.next().ok_or_else(short)?;
        along(&src, input, axis, start, &mut values)?;
        let Some(&first) = values.first() else {
            return Err(Error::Invalid(format!(
                "attempt to get {} of an empty sequence",
                op.name()
            )));
        };
        let (mut best, mut at) = (first, 0usize);
        if !first.is_nan() {
            for (j, &v) in values.iter().enumerate().skip(1) {
                if !T::compare(worse, v, best)? {
                    (best, at) = (v, j);
                    if v.is_nan() {
                        break;
                    }
                }
            }
        }
        out.write(o, at as i64)?;
    }
    Ok(())
}

/// cumsum/cumprod: `out[..., j, ...] = out[..., j-1, ...] op in[..., j, ...]`, in order.
/// Each input element is read before the output element at the same position is
/// written, so the identical in-place view works.
fn scan<T: Elem>(instr: &Instr, input: &View, axis: usize, mem: &Memory) -> Result<()> {
    let op = instr.op;
    let combine = op
        .info()
        .combine
        .ok_or_else(|| Error::Invalid(format!("'{}' has no combining operation", op.name())))?;
    let out_view = &instr.out;
    if out_view.shape != input.shape {
        return Err(Error::ShapeMismatch(
            "a scan's output must have its input's shape".into(),
        ));
    }
    let src = mem.array::<T>(input)?;
    let out = mem.array::<T>(out_view)?;
    let (si, so) = (input.strides[axis], out_view.strides[axis]);
    let outer_out = Walker::without_axis(out_view, axis)?;
    for (bi, bo) in Walker::without_axis(input, axis)?.zip(outer_out) {
        let mut acc: Option<T> = None;
        for j in 0..input.shape[axis] as isize {
            let v = src.read(bi + j * si)?;
            let next = match acc {
                None => v,
                Some(a) => T::combine(combine, a, v)?,
            };
            out.write(bo + j * so, next)?;
            acc = Some(next);
        }
    }
    Ok(())
}
