//! Rejects malformed instructions before any engine sees them, naming the instruction.

use crate::methods::{ARGPARTITION, ARGSORT, MATMUL, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use crate::view::fmt_shape;
use crate::{
    overlap, Base, BaseId, Batch, DType, Error, IdMap, Instr, OpClass, Opcode, Operand, Overlap,
    Result, Scalar, View, MAX_DIMS,
};

/// Verifies every instruction of a batch.
pub fn verify(batch: &Batch) -> Result<()> {
    let bases: IdMap<Base> = batch.bases.iter().map(|(&id, &b)| (id, b)).collect();
    (0..batch.instrs.len()).try_for_each(|i| verify_at(batch, i, |id| bases.get(&id).copied()))
}

/// Verifies the instructions `kernels` name, and only those: what an engine is about to
/// execute. The runtime may hand a batch to its engine in several parts (to recycle
/// memory between them), so checking the whole batch on every call would repeat work.
pub fn verify_kernels(batch: &Batch, kernels: &[crate::Kernel]) -> Result<()> {
    let named = kernels.iter().map(|k| k.instrs.len()).sum::<usize>();
    // Each instruction looks up about three bases. A binary search of the batch's bases
    // costs several times a hash lookup, so when the kernels name much of the batch
    // (every call of a flush that is not cut into parts) the bases are hashed once first.
    if named * 4 >= batch.bases.len() {
        let bases: IdMap<Base> = batch.bases.iter().map(|(&id, &b)| (id, b)).collect();
        verify_kernels_in(batch, kernels, |id| bases.get(&id).copied())
    } else {
        verify_kernels_in(batch, kernels, |id| batch.base(id).copied())
    }
}

/// [`verify_kernels`] with the bases found by `lookup`: for an engine that already holds
/// a table of the call's bases (the reference engine's memory), which then need not be
/// built again from the batch.
pub fn verify_kernels_in(
    batch: &Batch,
    kernels: &[crate::Kernel],
    lookup: impl Fn(BaseId) -> Option<Base>,
) -> Result<()> {
    kernels
        .iter()
        .flat_map(|k| &k.instrs)
        .try_for_each(|&i| verify_at(batch, i, &lookup))
}

/// Verifies instruction `i` of `batch` against the batch's bases (found by `lookup`);
/// errors name it.
fn verify_at(batch: &Batch, i: usize, lookup: impl Fn(BaseId) -> Option<Base>) -> Result<()> {
    let instr = batch.instrs.get(i).ok_or_else(|| {
        Error::Invalid(format!(
            "a kernel names instruction {i} of a batch of {}",
            batch.instrs.len()
        ))
    })?;
    verify_instr(instr, lookup).map_err(|e| Error::InInstr {
        index: i,
        op: instr.op.name(),
        source: Box::new(e),
    })
}

/// Verifies one instruction against the bases `lookup` knows. The bridges call this at
/// record time so errors surface at the call site, not at a later flush.
pub fn verify_instr(instr: &Instr, lookup: impl Fn(BaseId) -> Option<Base>) -> Result<()> {
    // The common case, every view fitting its base, costs one lookup and a few compares;
    // the error (naming the operand) is built on the cold path.
    let check_view = |what: &dyn std::fmt::Display, v: &View| -> Result<()> {
        match lookup(v.base) {
            Some(base) if fits(v, &base) => Ok(()),
            base => Err(view_error(what, v, base)),
        }
    };
    check_view(&"output", &instr.out)?;
    // A stride of 0 over a longer axis writes one element through several indices (a
    // broadcast view): which write lands is up to the engine's order, and threads race.
    let out = &instr.out;
    if let Some(axis) = (0..out.ndim()).find(|&i| out.strides[i] == 0 && out.shape[i] > 1) {
        if !instr.op.is_system() {
            return Err(Error::Invalid(format!(
                "the output is a broadcast view (stride 0 along axis {axis} of length {}), \
                 which is read-only: write into a copy",
                out.shape[axis]
            )));
        }
    }
    for (k, op) in instr.ins.iter().enumerate() {
        if let Operand::View(v) = op {
            check_view(&format_args!("input {k}"), v)?;
        }
    }
    let info = instr.op.info();
    if instr.op.is_system() {
        return Ok(());
    }
    // An extension method's arity is its own (`verify_extension` checks it).
    if info.class != OpClass::Extension && instr.ins.len() != info.nin as usize {
        return Err(Error::Invalid(format!(
            "takes {} inputs, got {}",
            info.nin,
            instr.ins.len()
        )));
    }
    match info.class {
        OpClass::Elementwise => verify_elementwise(instr),
        OpClass::Reduce | OpClass::Scan => verify_reduce_scan(instr),
        OpClass::Generator => verify_generator(instr),
        OpClass::Index => verify_index(instr),
        OpClass::Extension => verify_extension(instr),
        OpClass::System => Ok(()),
    }
}

/// Whether `v` is a well-formed view of `base`: its dtype, at most `MAX_DIMS`
/// dimensions, and every element it reaches inside the base.
#[inline]
fn fits(v: &View, base: &Base) -> bool {
    v.dtype == base.dtype
        && v.ndim() <= MAX_DIMS
        && v.strides.len() == v.ndim()
        && v.extent()
            .is_none_or(|(lo, hi)| lo >= 0 && hi < base.nelem as isize)
}

/// Why `v` (named `what`) is not a view of `base` (`None`: no such base).
#[cold]
fn view_error(what: &dyn std::fmt::Display, v: &View, base: Option<Base>) -> Error {
    let Some(base) = base else {
        return Error::Invalid(format!("{what} names unknown base {}", v.base.0));
    };
    if v.dtype != base.dtype {
        return Error::DTypeNotAllowed(format!(
            "{what} has dtype {} but its base holds {}",
            v.dtype.name(),
            base.dtype.name()
        ));
    }
    if v.ndim() > MAX_DIMS || v.strides.len() != v.ndim() {
        return Error::Invalid(format!(
            "{what} has {} dimensions (at most {MAX_DIMS})",
            v.ndim()
        ));
    }
    let (lo, hi) = v.extent().unwrap_or((0, 0));
    Error::OutOfBounds(format!(
        "{what} reaches elements {lo}..={hi} outside its base of {} elements",
        base.nelem
    ))
}

fn dtype_error(op: Opcode, t: DType) -> Error {
    Error::DTypeNotAllowed(format!(
        "ufunc '{}' not supported for the input types ({})",
        op.name(),
        t.name()
    ))
}

fn shape_error(what: &str, got: &[usize], want: &[usize]) -> Error {
    Error::ShapeMismatch(format!(
        "{what} has shape {} but the output has shape {}",
        fmt_shape(got),
        fmt_shape(want)
    ))
}

/// Rejects an output that overlaps an input without being identical to it: engines may
/// then write before they read, so the bridge must copy the input first.
fn check_no_partial_overlap(instr: &Instr) -> Result<()> {
    for (k, v) in instr.ins.iter().enumerate() {
        if let Operand::View(v) = v {
            if overlap(&instr.out, v) == Overlap::Partial {
                return Err(Error::Overlap(format!(
                    "output overlaps input {k} without being identical to it"
                )));
            }
        }
    }
    Ok(())
}

fn verify_elementwise(instr: &Instr) -> Result<()> {
    let op = instr.op;
    // The value inputs share one dtype T; `where`'s first input is the boolean mask.
    let (mask, values) = if op == Opcode::Where {
        (Some(&instr.ins[0]), &instr.ins[1..])
    } else {
        (None, &instr.ins[..])
    };
    if let Some(m) = mask {
        if m.dtype() != DType::Bool {
            return Err(Error::DTypeNotAllowed(format!(
                "where's condition must be bool, got {}",
                m.dtype().name()
            )));
        }
    }
    let t = values[0].dtype();
    if let Some(other) = values.iter().find(|o| o.dtype() != t) {
        return Err(Error::DTypeNotAllowed(format!(
            "inputs must share one dtype, got {} and {}",
            t.name(),
            other.dtype().name()
        )));
    }
    let out_t = op.out_dtype(t).ok_or_else(|| dtype_error(op, t))?;
    if op == Opcode::Power && t.is_signed_integer() {
        if let Some(Operand::Scalar(e)) = values.get(1) {
            if e.as_i128().is_some_and(|e| e < 0) {
                return Err(Error::Invalid(crate::kernel::NEGATIVE_POWER.into()));
            }
        }
    }
    if op != Opcode::Identity && instr.out.dtype != out_t {
        return Err(Error::DTypeNotAllowed(format!(
            "output dtype must be {} for input {}, got {}",
            out_t.name(),
            t.name(),
            instr.out.dtype.name()
        )));
    }
    for (k, o) in instr.ins.iter().enumerate() {
        if let Operand::View(v) = o {
            if !crate::same_shape(&v.shape, &instr.out.shape) {
                return Err(shape_error(
                    &format!("input {k}"),
                    &v.shape,
                    &instr.out.shape,
                ));
            }
        }
    }
    check_no_partial_overlap(instr)
}

fn input_view(instr: &Instr, k: usize) -> Result<&View> {
    instr.ins[k]
        .as_view()
        .ok_or_else(|| Error::Invalid(format!("input {k} must be an array view, not a scalar")))
}

fn verify_reduce_scan(instr: &Instr) -> Result<()> {
    let op = instr.op;
    let input = input_view(instr, 0)?;
    let axis = instr
        .axis
        .ok_or_else(|| Error::BadAxis("reduction needs an axis".into()))?;
    if axis >= input.ndim() {
        return Err(Error::BadAxis(format!(
            "axis {axis} is out of bounds for array of dimension {}",
            input.ndim()
        )));
    }
    let t = input.dtype;
    let out_t = op.out_dtype(t).ok_or_else(|| dtype_error(op, t))?;
    if instr.out.dtype != out_t {
        return Err(Error::DTypeNotAllowed(format!(
            "output dtype must be {}, got {}",
            out_t.name(),
            instr.out.dtype.name()
        )));
    }
    let mut want = input.shape.clone();
    if op.is_reduction() {
        want.remove(axis);
        if input.shape[axis] == 0
            && op.info().identity == crate::Identity::None
            && !want.contains(&0)
        {
            return Err(Error::Invalid(format!(
                "zero-size array to reduction operation {} which has no identity",
                op.name().trim_end_matches(".reduce")
            )));
        }
    }
    if instr.out.shape != want {
        return Err(shape_error("expected result", &want, &instr.out.shape));
    }
    // A reduction's output may not share memory with its input at all; a scan may run in
    // place only on the identical view.
    match overlap(&instr.out, input) {
        Overlap::Disjoint => Ok(()),
        Overlap::Identical if op.is_scan() => Ok(()),
        _ => Err(Error::Overlap("output overlaps the input".into())),
    }
}

fn verify_generator(instr: &Instr) -> Result<()> {
    let op = instr.op;
    let t = instr.out.dtype;
    match op {
        Opcode::Range => {
            op.out_dtype(t).ok_or_else(|| dtype_error(op, t))?;
        }
        Opcode::Random => {
            if t != DType::UInt64 {
                return Err(Error::DTypeNotAllowed(format!(
                    "random produces uint64, not {}",
                    t.name()
                )));
            }
            for (k, o) in instr.ins.iter().enumerate() {
                if o.as_scalar().map(|s| s.dtype()) != Some(DType::UInt64) {
                    return Err(Error::Invalid(format!(
                        "random's input {k} (seed, stream) must be a uint64 scalar"
                    )));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn verify_index(instr: &Instr) -> Result<()> {
    let out = &instr.out;
    let check_idx = |v: &View| -> Result<()> {
        if v.dtype != DType::Int64 {
            return Err(Error::DTypeNotAllowed(format!(
                "index arrays must be int64, got {}",
                v.dtype.name()
            )));
        }
        Ok(())
    };
    match instr.op {
        Opcode::Gather => {
            let src = input_view(instr, 0)?;
            let idx = input_view(instr, 1)?;
            check_idx(idx)?;
            if src.ndim() != 1 {
                return Err(Error::ShapeMismatch("gather's source must be 1-D".into()));
            }
            if src.dtype != out.dtype {
                return Err(Error::DTypeNotAllowed(
                    "gather's source and output dtypes differ".into(),
                ));
            }
            if idx.shape != out.shape {
                return Err(shape_error("the index", &idx.shape, &out.shape));
            }
            if overlap(out, src) != Overlap::Disjoint || overlap(out, idx) != Overlap::Disjoint {
                return Err(Error::Overlap("gather's output overlaps an input".into()));
            }
        }
        Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => {
            if out.ndim() != 1 {
                return Err(Error::ShapeMismatch("scatter's target must be 1-D".into()));
            }
            let idx = input_view(instr, 0)?;
            check_idx(idx)?;
            let val = &instr.ins[1];
            if val.dtype() != out.dtype {
                return Err(Error::DTypeNotAllowed(
                    "scatter's values and target dtypes differ".into(),
                ));
            }
            if instr.op == Opcode::ScatterAdd && !instr.op.info().types.contains(out.dtype) {
                return Err(dtype_error(instr.op, out.dtype));
            }
            if let Operand::View(v) = val {
                if v.shape != idx.shape {
                    return Err(Error::ShapeMismatch(format!(
                        "values of shape {} do not match the index shape {}",
                        fmt_shape(&v.shape),
                        fmt_shape(&idx.shape)
                    )));
                }
            }
            if instr.op == Opcode::CondScatter {
                let m = input_view(instr, 2)?;
                if m.dtype != DType::Bool || m.shape != idx.shape {
                    return Err(Error::Invalid(
                        "cond_scatter's mask must be bool with the index's shape".into(),
                    ));
                }
            }
            for (k, o) in instr.ins.iter().enumerate() {
                if let Operand::View(v) = o {
                    if overlap(out, v) != Overlap::Disjoint {
                        return Err(Error::Overlap(format!(
                            "scatter's target overlaps input {k}"
                        )));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn verify_extension(instr: &Instr) -> Result<()> {
    let method = instr
        .method
        .as_deref()
        .ok_or_else(|| Error::Invalid("extension without a method name".into()))?;
    match method {
        MATMUL => {
            let ins = one_input(instr, method, 2)?;
            let (a, b) = (ins[0], ins[1]);
            let out = &instr.out;
            // A stack of matrices shares one batch shape (`hassium_core::matrices`).
            let nd = out.ndim();
            if nd < 2 || a.ndim() != nd || b.ndim() != nd {
                return Err(Error::ShapeMismatch(
                    "matmul's operands must be matrices or stacks of them, all of one rank".into(),
                ));
            }
            let batch = &out.shape[..nd - 2];
            if a.shape[..nd - 2] != *batch || b.shape[..nd - 2] != *batch {
                return Err(Error::ShapeMismatch(format!(
                    "matmul: stacks of shapes {}, {} -> {} differ",
                    fmt_shape(&a.shape),
                    fmt_shape(&b.shape),
                    fmt_shape(&out.shape)
                )));
            }
            let (n, k, k2, m) = (
                a.shape[nd - 2],
                a.shape[nd - 1],
                b.shape[nd - 2],
                b.shape[nd - 1],
            );
            if k != k2 || out.shape[nd - 2] != n || out.shape[nd - 1] != m {
                return Err(Error::ShapeMismatch(format!(
                    "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})"
                )));
            }
            if a.dtype != b.dtype
                || a.dtype != out.dtype
                || !Opcode::Extension.info().types.contains(a.dtype)
            {
                return Err(Error::DTypeNotAllowed(format!(
                    "matmul needs one numeric dtype, got {}, {} -> {}",
                    a.dtype.name(),
                    b.dtype.name(),
                    out.dtype.name()
                )));
            }
            if overlap(out, a) != Overlap::Disjoint || overlap(out, b) != Overlap::Disjoint {
                return Err(Error::Overlap("matmul's output overlaps an input".into()));
            }
            Ok(())
        }
        SORT | ARGSORT => {
            let (a, out) = (one_input(instr, method, 1)?[0], &instr.out);
            if a.ndim() == 0 || a.shape != out.shape {
                return Err(Error::ShapeMismatch(format!(
                    "{method}: input of shape {} and output of shape {} differ, or are 0-d",
                    fmt_shape(&a.shape),
                    fmt_shape(&out.shape)
                )));
            }
            let want = if method == SORT {
                a.dtype
            } else {
                DType::Int64
            };
            if out.dtype != want {
                return Err(Error::DTypeNotAllowed(format!(
                    "{method} of {} writes {}, not {}",
                    a.dtype.name(),
                    want.name(),
                    out.dtype.name()
                )));
            }
            // A sort may run in place (it reads a whole row before writing it back).
            match overlap(out, a) {
                Overlap::Disjoint => Ok(()),
                Overlap::Identical if method == SORT => Ok(()),
                _ => Err(Error::Overlap(format!(
                    "{method}'s output overlaps its input"
                ))),
            }
        }
        ARGPARTITION => {
            let (a, out) = (input_view(instr, 0)?, &instr.out);
            let k = match instr.ins.get(1) {
                Some(Operand::Scalar(Scalar::Int64(k))) if instr.ins.len() == 2 => *k,
                _ => {
                    return Err(Error::Invalid(
                        "argpartition takes a view and an int64 scalar".into(),
                    ))
                }
            };
            if a.ndim() == 0 || a.shape != out.shape || out.dtype != DType::Int64 {
                return Err(Error::ShapeMismatch(format!(
                    "argpartition: input of shape {} gives int64 of that shape, not {} {}",
                    fmt_shape(&a.shape),
                    out.dtype.name(),
                    fmt_shape(&out.shape)
                )));
            }
            let n = a.shape[a.ndim() - 1];
            if k < 0 || (n > 0 && k as u64 >= n as u64) {
                return Err(Error::Invalid(format!(
                    "argpartition: k = {k} outside an axis of length {n}"
                )));
            }
            if overlap(out, a) != Overlap::Disjoint {
                return Err(Error::Overlap(
                    "argpartition's output overlaps its input".into(),
                ));
            }
            Ok(())
        }
        SEARCHSORTED_LEFT | SEARCHSORTED_RIGHT => {
            let ins = one_input(instr, method, 2)?;
            let (hay, needles, out) = (ins[0], ins[1], &instr.out);
            if hay.ndim() != 1 || needles.shape != out.shape {
                return Err(Error::ShapeMismatch(format!(
                    "{method}: a 1-D sorted array and needles of the output's shape, got {}, {} -> {}",
                    fmt_shape(&hay.shape),
                    fmt_shape(&needles.shape),
                    fmt_shape(&out.shape)
                )));
            }
            if hay.dtype != needles.dtype || out.dtype != DType::Int64 {
                return Err(Error::DTypeNotAllowed(format!(
                    "{method} needs one dtype in and int64 out, got {}, {} -> {}",
                    hay.dtype.name(),
                    needles.dtype.name(),
                    out.dtype.name()
                )));
            }
            if overlap(out, hay) != Overlap::Disjoint || overlap(out, needles) != Overlap::Disjoint
            {
                return Err(Error::Overlap(format!(
                    "{method}'s output overlaps an input"
                )));
            }
            Ok(())
        }
        other => Err(Error::Invalid(format!(
            "unknown extension method '{other}'"
        ))),
    }
}

/// The `n` inputs of extension `method`, all views.
fn one_input<'a>(instr: &'a Instr, method: &str, n: usize) -> Result<Vec<&'a View>> {
    if instr.ins.len() != n {
        return Err(Error::Invalid(format!(
            "{method} takes {n} inputs, got {}",
            instr.ins.len()
        )));
    }
    (0..n).map(|k| input_view(instr, k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scalar, View};

    fn batch_with(n: usize) -> (Batch, View, View) {
        let mut b = Batch::default();
        for id in [1, 2] {
            b.bases.insert(
                BaseId(id),
                Base {
                    id: BaseId(id),
                    dtype: DType::Float64,
                    nelem: n,
                },
            );
        }
        (
            b,
            View::contiguous(BaseId(1), DType::Float64, &[n]),
            View::contiguous(BaseId(2), DType::Float64, &[n]),
        )
    }

    #[test]
    fn verify_kernels_checks_the_named_instructions_with_their_batch_index() {
        let (mut b, a, o) = batch_with(4);
        b.instrs.push(Instr::new(
            Opcode::Add,
            o.clone(),
            [a.clone().into(), a.clone().into()],
        ));
        // Instruction 1 names a base the batch does not have.
        let ghost = View::contiguous(BaseId(9), DType::Float64, &[4]);
        b.instrs
            .push(Instr::new(Opcode::Add, o, [ghost.into(), a.into()]));
        let k = |i: usize| crate::Kernel {
            instrs: crate::KernelInstrs::from_slice(&[i]),
            ..Default::default()
        };
        assert!(verify_kernels(&b, &[k(0)]).is_ok());
        let e = verify_kernels(&b, &[k(0), k(1)]).unwrap_err();
        assert!(matches!(e, Error::InInstr { index: 1, .. }), "{e}");
        assert!(
            verify_kernels(&b, &[k(5)]).is_err(),
            "a kernel past the batch's end"
        );
    }

    #[test]
    fn rejects_shape_mismatch_naming_the_instruction() {
        let (mut b, x, y) = batch_with(4);
        let short = y.slice(0, 0, 3, 1).unwrap();
        b.instrs.push(Instr::new(
            Opcode::Add,
            x.clone(),
            [x.clone().into(), x.clone().into()],
        ));
        b.instrs
            .push(Instr::new(Opcode::Add, x.clone(), [x.into(), short.into()]));
        let e = verify(&b).unwrap_err();
        assert!(e.to_string().starts_with("instruction 1 (add):"), "{e}");
        assert!(matches!(e.root(), Error::ShapeMismatch(_)));
    }

    #[test]
    fn rejects_a_broadcast_output_and_takes_a_broadcast_input() {
        let (mut b, x, y) = batch_with(4);
        let one = x.slice(0, 0, 1, 1).unwrap();
        let spread = one.broadcast_to(&[3, 4]).unwrap(); // strides (0, 0)
        let row = x.broadcast_to(&[3, 4]).unwrap(); // strides (0, 1)
        let grid = View::contiguous(BaseId(2), DType::Float64, &[2, 2]);
        // Reading a broadcast view is how broadcasting works.
        b.instrs.push(Instr::new(
            Opcode::Add,
            grid.clone(),
            [
                y.reshape(&[2, 2]).unwrap().into(),
                one.broadcast_to(&[2, 2]).unwrap().into(),
            ],
        ));
        assert!(verify(&b).is_ok());
        for out in [spread, row] {
            b.instrs.push(Instr::new(
                Opcode::Identity,
                out,
                [Operand::Scalar(Scalar::Float64(1.0))],
            ));
            let e = verify(&b).unwrap_err();
            assert!(e.to_string().contains("broadcast view"), "{e}");
            b.instrs.pop();
        }
        // Length-1 axes may have any stride.
        let single = one.broadcast_to(&[1, 1]).unwrap();
        b.instrs.push(Instr::new(
            Opcode::Identity,
            single,
            [Operand::Scalar(Scalar::Float64(1.0))],
        ));
        assert!(verify(&b).is_ok());
    }

    #[test]
    fn rejects_view_outside_its_base() {
        let (mut b, x, _) = batch_with(4);
        let mut big = x.clone();
        big.shape[0] = 5;
        b.instrs.push(Instr::new(
            Opcode::Negative,
            big.clone(),
            [x.clone().into()],
        ));
        assert!(matches!(
            verify(&b).unwrap_err().root(),
            Error::OutOfBounds(_)
        ));
        let mut neg = x.clone();
        neg.offset = -1;
        b.instrs[0] = Instr::new(Opcode::Negative, x.clone(), [neg.into()]);
        assert!(matches!(
            verify(&b).unwrap_err().root(),
            Error::OutOfBounds(_)
        ));
    }

    #[test]
    fn rejects_dtypes_the_opcode_does_not_take() {
        let mut b = Batch::default();
        b.bases.insert(
            BaseId(1),
            Base {
                id: BaseId(1),
                dtype: DType::Int32,
                nelem: 3,
            },
        );
        let v = View::contiguous(BaseId(1), DType::Int32, &[3]);
        b.instrs
            .push(Instr::new(Opcode::Sqrt, v.clone(), [v.clone().into()]));
        assert!(matches!(
            verify(&b).unwrap_err().root(),
            Error::DTypeNotAllowed(_)
        ));
        b.instrs[0] = Instr::new(
            Opcode::Add,
            v.clone(),
            [v.clone().into(), Scalar::Float64(1.0).into()],
        );
        assert!(matches!(
            verify(&b).unwrap_err().root(),
            Error::DTypeNotAllowed(_)
        ));
    }

    #[test]
    fn rejects_partial_overlap_but_allows_in_place() {
        let (mut b, x, _) = batch_with(8);
        let head = x.slice(0, 0, 7, 1).unwrap();
        let tail = x.slice(0, 1, 8, 1).unwrap();
        b.instrs.push(Instr::new(
            Opcode::Add,
            head.clone(),
            [head.clone().into(), Scalar::Float64(1.0).into()],
        ));
        verify(&b).unwrap();
        b.instrs.push(Instr::new(
            Opcode::Add,
            head.clone(),
            [tail.into(), Scalar::Float64(1.0).into()],
        ));
        assert!(matches!(verify(&b).unwrap_err().root(), Error::Overlap(_)));
    }

    #[test]
    fn rejects_axis_out_of_range_and_empty_min() {
        let (mut b, x, y) = batch_with(4);
        let out = View::contiguous(BaseId(2), DType::Float64, &[]);
        b.instrs
            .push(Instr::new(Opcode::AddReduce, out.clone(), [x.clone().into()]).with_axis(1));
        assert!(matches!(verify(&b).unwrap_err().root(), Error::BadAxis(_)));
        let empty = x.slice(0, 0, 0, 1).unwrap();
        b.instrs[0] = Instr::new(Opcode::MinimumReduce, out.clone(), [empty.into()]).with_axis(0);
        assert!(verify(&b).is_err());
        b.instrs[0] =
            Instr::new(Opcode::AddReduce, y.index(0, 0).unwrap(), [x.into()]).with_axis(0);
        verify(&b).unwrap();
    }

    #[test]
    fn a_signed_integer_to_a_negative_scalar_power_is_rejected_when_recorded() {
        let base = |id, dtype| Base {
            id: BaseId(id),
            dtype,
            nelem: 4,
        };
        for (dtype, exp, rejected) in [
            (DType::Int8, Scalar::Int8(-1), true),
            (DType::Int64, Scalar::Int64(i64::MIN), true),
            (DType::Int32, Scalar::Int32(0), false),
            (DType::UInt8, Scalar::UInt8(255), false),
            (DType::Float64, Scalar::Float64(-1.0), false),
        ] {
            let v = |id| View::contiguous(BaseId(id), dtype, &[4]);
            let i = Instr::new(Opcode::Power, v(2), [v(1).into(), exp.into()]);
            let got = verify_instr(&i, |id| Some(base(id.0, dtype)));
            if rejected {
                assert_eq!(
                    got,
                    Err(Error::Invalid(crate::NEGATIVE_POWER.into())),
                    "{dtype:?}"
                );
            } else {
                assert_eq!(got, Ok(()), "{dtype:?}");
            }
            // An exponent in an array is known only when the power runs.
            let arr = Instr::new(Opcode::Power, v(2), [v(1).into(), v(3).into()]);
            assert_eq!(verify_instr(&arr, |id| Some(base(id.0, dtype))), Ok(()));
            assert_eq!(arr.raises_on_negative_power(), dtype.is_signed_integer());
        }
    }
}
