//! Extension methods: the sorting ones are `sort.rs`'s; `matmul` is here, for matrices
//! and stacks of them, of one numeric dtype, with a plain triple loop (integers wrap; float16
//! accumulates in f32).

use crate::element::Elem;
use crate::memory::Memory;
use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{matrices, Error, Instr, Operand, Result, View};

pub(crate) fn run(instr: &Instr, mem: &Memory) -> Result<()> {
    match instr.method.as_deref() {
        Some("matmul") => with_dtype!(instr.out.dtype, T => matmul::<T>(instr, mem)),
        Some(m @ (SORT | ARGSORT | ARGPARTITION | SEARCHSORTED_LEFT | SEARCHSORTED_RIGHT)) => {
            crate::sort::run(m, instr, mem)
        }
        Some(other) => Err(Error::Invalid(format!(
            "unknown extension method '{other}'"
        ))),
        None => Err(Error::Invalid("extension without a method name".into())),
    }
}

/// `out (m, n) = a (m, k) @ b (k, n)`, for each matrix of a stack.
fn matmul<T: Elem>(instr: &Instr, mem: &Memory) -> Result<()> {
    let views: Vec<&View> = instr.ins.iter().filter_map(Operand::as_view).collect();
    let [a, b] = views[..] else {
        return Err(Error::Invalid("matmul needs two views".into()));
    };
    let (o, nd) = (&instr.out, instr.out.ndim());
    if nd < 2 || a.ndim() != nd || b.ndim() != nd {
        return Err(Error::ShapeMismatch(
            "matmul's operands must be matrices or stacks of them, all of one rank".into(),
        ));
    }
    if a.shape[..nd - 2] != o.shape[..nd - 2] || b.shape[..nd - 2] != o.shape[..nd - 2] {
        return Err(Error::ShapeMismatch(
            "matmul's stacks differ in shape".into(),
        ));
    }
    for [a, b, c] in matrices(a, b, &instr.out) {
        product::<T>(&a, &b, &c, mem)?;
    }
    Ok(())
}

fn product<T: Elem>(a: &View, b: &View, c: &View, mem: &Memory) -> Result<()> {
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    if b.shape[0] != k || c.shape[0] != m || c.shape[1] != n {
        return Err(Error::ShapeMismatch(format!(
            "matmul: shapes ({m},{k}) @ ({},{n}) -> ({},{})",
            b.shape[0], c.shape[0], c.shape[1]
        )));
    }
    let (aa, ba, ca) = (mem.array::<T>(a)?, mem.array::<T>(b)?, mem.array::<T>(c)?);
    let at = |v: &View, i: usize, j: usize| {
        v.offset + i as isize * v.strides[0] + j as isize * v.strides[1]
    };
    let mut pairs = Vec::with_capacity(k);
    for i in 0..m {
        for j in 0..n {
            pairs.clear();
            for p in 0..k {
                pairs.push((aa.read(at(a, i, p))?, ba.read(at(b, p, j))?));
            }
            ca.write(at(c, i, j), T::dot(&pairs)?)?;
        }
    }
    Ok(())
}
