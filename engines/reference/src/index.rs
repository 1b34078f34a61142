//! gather, scatter, cond_scatter and scatter_add over int64 index arrays.
//!
//! Indices may be negative (counting from the end). Every index is checked before any
//! element is written, so an out-of-range index fails with NumPy's message and leaves the
//! output untouched.

use crate::element::Elem;
use crate::memory::{Input, Memory, Walker};
use hassium_core::{Error, Instr, Opcode, Operand, Result, View};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    let t = instr.out.dtype;
    match instr.op {
        Opcode::Gather => with_dtype!(t, T => gather::<T>(instr, mem)),
        Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => {
            with_dtype!(t, T => scatter::<T>(instr, mem))
        }
        op => Err(Error::Invalid(format!(
            "'{}' is not an indexing operation",
            op.name()
        ))),
    }
}

fn view_input(instr: &Instr, k: usize) -> Result<&View> {
    instr
        .ins
        .get(k)
        .and_then(Operand::as_view)
        .ok_or_else(|| Error::Invalid(format!("input {k} must be an array view")))
}

fn one_dim(view: &View, what: &str) -> Result<(usize, isize)> {
    match (view.shape.as_slice(), view.strides.as_slice()) {
        ([n], [s]) => Ok((*n, *s)),
        _ => Err(Error::ShapeMismatch(format!("{what} must be 1-D"))),
    }
}

/// The element offset of index `i` into a 1-D view of `n` elements, or NumPy's error.
fn resolve(i: i64, n: usize, offset: isize, stride: isize) -> Result<isize> {
    let j = if i < 0 {
        i as i128 + n as i128
    } else {
        i as i128
    };
    if j < 0 || j >= n as i128 {
        return Err(Error::OutOfBounds(format!(
            "index {i} is out of bounds for axis 0 with size {n}"
        )));
    }
    Ok(offset + j as isize * stride)
}

/// The target offsets of every selected index (all of them unless a mask says otherwise),
/// in row-major order of the index array; `None` where the mask is false.
fn targets(
    instr: &Instr,
    mem: &Memory,
    n: usize,
    offset: isize,
    stride: isize,
) -> Result<Vec<Option<isize>>> {
    let idx = view_input(instr, 0)?;
    let idx_arr = mem.array::<i64>(idx)?;
    let mut mask = match instr.op {
        Opcode::CondScatter => Some(Input::<bool>::new(
            mem,
            &Operand::View(view_input(instr, 2)?.clone()),
        )?),
        _ => None,
    };
    let mut out = Vec::with_capacity(idx.nelem());
    for off in Walker::of(idx)? {
        let selected = match &mut mask {
            Some(m) => m.next()?,
            None => true,
        };
        out.push(if selected {
            Some(resolve(idx_arr.read(off)?, n, offset, stride)?)
        } else {
            None
        });
    }
    Ok(out)
}

/// `out[k] = src[idx[k]]`.
fn gather<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let src_view = view_input(instr, 0)?;
    let idx = view_input(instr, 1)?;
    let (n, stride) = one_dim(src_view, "gather's source")?;
    if idx.shape != instr.out.shape {
        return Err(Error::ShapeMismatch(
            "gather's index must have the output's shape".into(),
        ));
    }
    let src = mem.array::<T>(src_view)?;
    let idx_arr = mem.array::<i64>(idx)?;
    let from = Walker::of(idx)?
        .map(|off| resolve(idx_arr.read(off)?, n, src_view.offset, stride))
        .collect::<Result<Vec<_>>>()?;
    let out = mem.array::<T>(&instr.out)?;
    for (o, f) in Walker::of(&instr.out)?.zip(from) {
        out.write(o, src.read(f)?)?;
    }
    Ok(())
}

/// `out[idx[k]] = val[k]` (last write wins for repeated indices), the masked form, and
/// `np.add.at`'s unbuffered `out[idx[k]] += val[k]` (repeated indices accumulate).
fn scatter<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let (n, stride) = one_dim(&instr.out, "scatter's target")?;
    let to = targets(instr, mem, n, instr.out.offset, stride)?;
    let val = instr
        .ins
        .get(1)
        .ok_or_else(|| Error::Invalid("scatter takes the values as input 1".into()))?;
    let mut val = Input::<T>::new(mem, val)?;
    let out = mem.array::<T>(&instr.out)?;
    for t in to {
        let v = val.next()?;
        let Some(t) = t else { continue };
        let new = if instr.op == Opcode::ScatterAdd {
            T::binary(Opcode::Add, out.read(t)?, v)?
        } else {
            v
        };
        out.write(t, new)?;
    }
    Ok(())
}
