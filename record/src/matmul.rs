//! `a @ b` with NumPy's `matmul` rules: 1-D operands gain a unit dimension, leading
//! dimensions broadcast as a stack of matrices, and booleans are an OR of ANDs.

use crate::base::{as_dtype, check_out, copy_into, deliver, recording, Target};
use crate::error::{Error, Result};
use hassium_core::{broadcast_shapes, promote, DType, Instr, Opcode, Scalar, Shape, View};

/// `a @ b` for 1-D and 2-D operands and stacks of matrices, as one `matmul` extension
/// instruction over operands broadcast to one batch shape (`hassium_core::matrices`),
/// into `out` (same-kind cast) or a fresh array. A right side of one column is still a
/// matmul here: the `matrix_vector` filter turns it into a multiply and a sum.
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
            t.record(Instr::extension(
                "matmul",
                res.clone(),
                [av.into(), bv.into()],
            ))?;
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
