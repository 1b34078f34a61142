//! The `matmul` extension over stacks of matrices: its operands are `batch + (n, k)`,
//! `batch + (k, m)` and `batch + (n, m)` with one batch shape (the recorder broadcasts
//! them to it), and an engine runs it as one 2-D product per batch index.

use crate::View;

/// The 2-D products `(a, b, out)` of a `matmul` whose views `verify` accepted, in C order
/// of the batch index; one for 2-D views, none for an empty batch.
pub fn matrices(a: &View, b: &View, out: &View) -> Vec<[View; 3]> {
    let batch = &out.shape[..out.ndim().saturating_sub(2)];
    let count: usize = batch.iter().product();
    let mut all = Vec::with_capacity(count);
    let mut idx = vec![0usize; batch.len()];
    for i in 0..count {
        if i > 0 {
            // The next batch index in C order.
            for d in (0..batch.len()).rev() {
                idx[d] += 1;
                if idx[d] < batch[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        let pick = |v: &View| {
            idx.iter().fold(v.clone(), |w, &j| {
                w.index(0, j as isize)
                    .expect("a batch index within the shape verify checked")
            })
        };
        all.push([pick(a), pick(b), pick(out)]);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BaseId, DType};

    #[test]
    fn a_stack_splits_into_its_matrices_in_c_order() {
        let a = View::contiguous(BaseId(1), DType::Float64, &[2, 3, 4, 5]);
        let b = View::contiguous(BaseId(2), DType::Float64, &[2, 3, 5, 1]);
        let o = View::contiguous(BaseId(3), DType::Float64, &[2, 3, 4, 1]);
        let m = matrices(&a, &b, &o);
        assert_eq!(m.len(), 6);
        let offsets: Vec<isize> = m.iter().map(|[x, _, _]| x.offset).collect();
        assert_eq!(offsets, [0, 20, 40, 60, 80, 100]);
        assert_eq!(m[4][1].offset, 4 * 5);
        assert_eq!(m[5][2].shape.as_slice(), &[4, 1]);
        assert_eq!(matrices(&m[0][0], &m[0][1], &m[0][2]).len(), 1);
        let e = View::contiguous(BaseId(3), DType::Float64, &[0, 4, 1]);
        assert!(matrices(&a, &b, &e).is_empty());
    }
}
