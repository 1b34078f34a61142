//! Gathers and scatters: index arrays cast to int64, values cast to the target's dtype
//! and broadcast to the index's shape.

use crate::args::{check_stored_int, Arg};
use crate::base::{as_dtype, finish, operand, placeholder, private_copy, recording, Target};
use crate::elementwise::fit_value;
use crate::error::{Error, Result};
use hassium_core::{fmt_shape, DType, Instr, Opcode, Operand, View};

fn index_shape(idx: &Arg) -> Result<&View> {
    idx.view()
        .ok_or_else(|| Error::Value("the index must be an array, not a scalar".into()))
}

/// `src_flat[idx]`: the elements of `src` at the flat (C-order) positions `idx`, into
/// `out` or a fresh array of the index's shape.
pub fn gather(t: &mut impl Target, src: &View, idx: &Arg, out: Option<&View>) -> Result<View> {
    let shape = index_shape(idx)?.shape.clone();
    if let Some(o) = out {
        crate::base::check_out("gather", o, &shape, src.dtype, "unsafe")?;
    }
    recording(t, |t, temps| {
        let i = operand(t, temps, idx, DType::Int64, &shape, None)?;
        let instr = Instr::new(
            Opcode::Gather,
            placeholder(src.dtype, &shape),
            [src.clone().into(), i],
        );
        finish(t, temps, instr, out)
    })
}

/// `target_flat[idx] = values` (`Scatter`), `+=` (`ScatterAdd`, NumPy's `add.at`), or
/// where `cond` holds (`CondScatter`). Values are cast to the target's dtype and
/// broadcast to the index's shape; values sharing the target's base are copied first.
pub fn scatter(
    t: &mut impl Target,
    op: Opcode,
    target: &View,
    idx: &Arg,
    values: &Arg,
    cond: Option<&Arg>,
) -> Result<()> {
    let idx_shape = index_shape(idx)?.shape.clone();
    let values = fit_value(values, idx_shape.len());
    let d = target.dtype;
    check_stored_int(&values, d)?;
    if let Arg::Array(a) = &values {
        a.broadcast_to(&idx_shape).map_err(|_| {
            Error::Shape(format!(
                "shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
                fmt_shape(&a.shape),
                fmt_shape(&idx_shape)
            ))
        })?;
    }
    if (op == Opcode::CondScatter) != cond.is_some() {
        return Err(Error::Value(format!(
            "{} takes {} inputs",
            op.name(),
            op.nin()
        )));
    }
    if target.is_empty() || idx_shape.iter().product::<usize>() == 0 {
        return Ok(());
    }
    recording(t, |t, temps| {
        let i = operand(t, temps, idx, DType::Int64, &idx_shape, None)?;
        let v = match &values {
            Arg::Array(a) => {
                let mut v = as_dtype(t, temps, a, d)?;
                if v.base == target.base {
                    v = private_copy(t, temps, &v)?;
                }
                Operand::View(v.broadcast_to(&idx_shape)?)
            }
            Arg::Typed(s) => Operand::Scalar(s.cast(d)),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(d)),
        };
        let mut ins = vec![i, v];
        if let Some(c) = cond {
            ins.push(operand(t, temps, c, DType::Bool, &idx_shape, None)?);
        }
        t.record(Instr::new(op, target.clone(), ins))
    })
}
