//! A matrix product whose right side is one column (`A @ v`, `v @ w`, a stack of them)
//! → a broadcast multiply into a temporary and a sum over `k`, then the temporary freed.
//!
//! Why: both instructions fuse into one reduction kernel, which also takes in whatever
//! lazily computed the operands; the `matmul` extension makes its operands memory first
//! and runs a GEMM shaped for blocks. Measured when this rewrite lived in the recorder
//! (2 cores): `v @ w` of 1M float64 went from 2.4–2.8 ms to 0.36 ms, a 2000×2000 matrix
//! times a vector from 2.6–2.9 ms to 1.5–1.8 ms.
//!
//! What is rewritten and why the values are NumPy's:
//! - `a` is `batch + (n, k)`, `b` is `batch + (k, 1)`, `out` is `batch + (n, 1)`, all in
//!   the loop dtype (the recorder casts first). A sum in that dtype is what NumPy's loops
//!   compute: integers wrap alike, float sums differ from BLAS's only in their order.
//! - `n == 1` (a row times a column) drops the unit axis, so the sum is one long
//!   reduction rather than a reduction of shape `(1, k)`, which runs on one thread.
//! - Not rewritten: float16 (NumPy's loop accumulates in float32; the extension does
//!   too), a single row on the left times a matrix (`x @ A`, whose sum would run down
//!   the columns; the cpu engine streams `A`'s rows for it), and batches with no ids to
//!   give for the temporary (`Batch::new_temp`).

use crate::{Filter, Result};
use hassium_core::{Batch, DType, Instr, Opcode, View};

pub struct MatrixVector;

/// The instructions replacing a matrix × column product, or `None` to keep `instr`.
fn rewrite(batch: &mut Batch, instr: &Instr) -> Option<Vec<Instr>> {
    if instr.op != Opcode::Extension || instr.method.as_deref() != Some("matmul") {
        return None;
    }
    let (a, b, out) = (
        instr.ins.first()?.as_view()?,
        instr.ins.get(1)?.as_view()?,
        &instr.out,
    );
    let nd = out.ndim();
    if nd < 2 || a.ndim() != nd || b.ndim() != nd || out.shape[nd - 1] != 1 {
        return None;
    }
    let dtype = out.dtype;
    if dtype == DType::Float16 || a.shape[nd - 1] == 0 || out.is_empty() {
        return None;
    }
    let column = b.index(nd - 1, 0).ok()?;
    let res = out.index(nd - 1, 0).ok()?;
    // batch + (n, k), the column broadcast along n; with n == 1, batch + (k).
    let (x, y, res) = if a.shape[nd - 2] == 1 {
        (a.index(nd - 2, 0).ok()?, column, res.index(nd - 2, 0).ok()?)
    } else {
        let row = column.expand_dims(nd - 2).ok()?;
        let y = row.broadcast_to(&a.shape).ok()?;
        (a.clone(), y, res)
    };
    let temp = batch.new_temp(dtype, x.nelem())?;
    let prod = View::contiguous(temp.id, dtype, &x.shape);
    let sum_axis = x.ndim() - 1;
    Some(vec![
        Instr::new(Opcode::Multiply, prod.clone(), [x.into(), y.into()]),
        Instr::new(Opcode::AddReduce, res, [prod.into()]).with_axis(sum_axis),
        Instr::system(Opcode::Free, &temp),
    ])
}

impl Filter for MatrixVector {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        if !batch.instrs.iter().any(|i| i.op == Opcode::Extension) {
            return Ok(());
        }
        let instrs = std::mem::take(&mut batch.instrs);
        let mut out = Vec::with_capacity(instrs.len() + 2);
        for instr in instrs {
            match rewrite(batch, &instr) {
                Some(seq) => out.extend(seq),
                None => out.push(instr),
            }
        }
        batch.instrs = out;
        Ok(())
    }
}
