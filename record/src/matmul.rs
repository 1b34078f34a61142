//! `a @ b` with NumPy's `matmul` rules: 1-D operands gain a unit dimension, leading
//! dimensions broadcast as a stack of matrices, and booleans are an OR of ANDs.

use crate::base::{as_dtype, check_out, copy_into, deliver, recording, Target, Temps};
use crate::error::{Error, Result};
use hassium_core::{broadcast_shapes, promote, DType, Instr, Opcode, Scalar, Shape, View};

/// A matrix product whose right side is one column (vector·vector, matrix·vector,
/// batched or not) recorded as a broadcast multiply and a sum over `k`: both fuse into
/// one reduction kernel, which also takes in whatever lazily computed the operands,
/// where the matrix-product extension made them memory first and then ran a GEMM shaped
/// for blocks (`v @ w` of 1M float64: 2.4–2.8 ms, now 0.36 ms; a 2000×2000 matrix times a
/// vector: 2.6–2.9 ms, now 1.5–1.8 ms). A single row on the left (`x @ A`) stays with the
/// extension, whose cpu engine streams the matrix's rows for it: recorded like this, its
/// sum would run down the columns, which was slower (2.9–3.2 ms against 2.6 then).
/// `a` is `batch + (n, k)`, `b` is `batch + (k, 1)`, `out` is `batch + (n, 1)`, all in the
/// loop dtype; a sum in that dtype is what NumPy's loops compute (integers wrap alike,
/// float sums differ from BLAS's only in their order). Not for float16, whose NumPy loop
/// accumulates in float32.
fn record_matrix_vector(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &View,
    b: &View,
    out: &View,
) -> Result<()> {
    let nd = a.ndim();
    let column = b.index(nd - 1, 0)?;
    let res = out.index(nd - 1, 0)?;
    // batch + (n, k), the column broadcast along n; with n == 1 the unit axis is dropped,
    // as a reduction of shape (1, k) would run on one thread.
    let (x, y, res) = if a.shape[nd - 2] == 1 {
        (a.index(nd - 2, 0)?, column, res.index(nd - 2, 0)?)
    } else {
        let row = column.expand_dims(nd - 2)?;
        (a.clone(), row.broadcast_to(&a.shape)?, res)
    };
    let sum_axis = x.ndim() - 1;
    let prod = temps.view(t, a.dtype, &x.shape)?;
    t.record(Instr::new(
        Opcode::Multiply,
        prod.clone(),
        [x.into(), y.into()],
    ))?;
    t.record(Instr::new(Opcode::AddReduce, res, [prod.into()]).with_axis(sum_axis))
}

/// The batch's matrices one at a time, each one `matmul` extension instruction.
fn record_batched(
    t: &mut impl Target,
    batch: &[usize],
    a: &View,
    b: &View,
    res: &View,
) -> Result<()> {
    let nb: usize = batch.iter().product();
    let mut idx = vec![0usize; batch.len()];
    for i in 0..nb {
        if i > 0 {
            let mut d = batch.len();
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                if idx[d] < batch[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        let pick = |v: &View| {
            let mut w = v.clone();
            for &j in idx.iter() {
                w = w
                    .index(0, j as isize)
                    .expect("index within the broadcast batch shape");
            }
            w
        };
        let (x, y) = (pick(a).into(), pick(b).into());
        t.record(Instr::extension("matmul", pick(res), [x, y]))?;
    }
    Ok(())
}

/// `a @ b` for 1-D and 2-D operands and stacks of matrices (each 2-D product is one
/// `matmul` extension instruction, unless the right side is one column:
/// [`record_matrix_vector`]), into `out` (same-kind cast) or a fresh array.
pub fn matmul(t: &mut impl Target, a: &View, b: &View, out: Option<&View>) -> Result<View> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::Shape(
            "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)".into(),
        ));
    }
    let dt = promote(a.dtype, b.dtype);
    let av = if a.ndim() == 1 {
        a.expand_dims(0)?
    } else {
        a.clone()
    };
    let bv = if b.ndim() == 1 {
        b.expand_dims(1)?
    } else {
        b.clone()
    };
    let (n, k) = (av.shape[av.ndim() - 2], av.shape[av.ndim() - 1]);
    let (k2, m) = (bv.shape[bv.ndim() - 2], bv.shape[bv.ndim() - 1]);
    if k != k2 {
        return Err(Error::Shape(format!(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})"
        )));
    }
    // NumPy's boolean matmul is an OR of ANDs: the count of true products, which cannot
    // wrap in a type wider than k, is non-zero exactly where it is true.
    let lt = match dt {
        DType::Bool if k < i32::MAX as usize => DType::Int32,
        DType::Bool => DType::Int64,
        _ => dt,
    };
    if !Opcode::Extension.info().types.contains(lt) {
        return Err(Error::Type(format!(
            "matmul not supported for the input types ({})",
            dt.name()
        )));
    }
    let batch = broadcast_shapes(&av.shape[..av.ndim() - 2], &bv.shape[..bv.ndim() - 2])?;
    let full: Shape = batch.iter().copied().chain([n, m]).collect();
    let mut final_shape: Shape = batch.clone();
    if a.ndim() > 1 {
        final_shape.push(n);
    }
    if b.ndim() > 1 {
        final_shape.push(m);
    }
    if let Some(o) = out {
        check_out("matmul", o, &final_shape, dt, "same_kind")?;
    }
    recording(t, |t, temps| {
        let av = as_dtype(t, temps, &av, lt)?;
        let bv = as_dtype(t, temps, &bv, lt)?;
        let ash: Shape = batch.iter().copied().chain([n, k]).collect();
        let bsh: Shape = batch.iter().copied().chain([k, m]).collect();
        let av = av.broadcast_to(&ash)?;
        let bv = bv.broadcast_to(&bsh)?;
        let direct = out.is_none() && dt == lt;
        let res = temps.result(t, !direct, lt, &full)?;
        if k == 0 {
            // An empty inner dimension sums nothing: the product is all zeros.
            copy_into(t, &res, Scalar::zero(lt).into())?;
        } else if !res.is_empty() {
            if m == 1 && lt != DType::Float16 {
                record_matrix_vector(t, temps, &av, &bv, &res)?;
            } else {
                record_batched(t, &batch, &av, &bv, &res)?;
            }
        }
        let res = res
            .reshape(&final_shape)
            .expect("a contiguous product reshapes to its final shape");
        let res = if dt == DType::Bool {
            let b = temps.result(t, out.is_some(), DType::Bool, &final_shape)?;
            if !b.is_empty() {
                let zero = Scalar::zero(lt).into();
                t.record(Instr::new(Opcode::NotEqual, b.clone(), [res.into(), zero]))?;
            }
            b
        } else {
            res
        };
        deliver(t, res, out)
    })
}
