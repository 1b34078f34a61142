//! Recording: NumPy 2's promotion, broadcasting and casting turned into bytecode.
//!
//! The bytecode is strict (every value input of an elementwise instruction has one dtype
//! and the output's shape); C callers are not. Each function here bridges the two for one
//! operation: it promotes, inserts `Identity` casts into temporaries, broadcasts with
//! stride-0 views, records the instruction(s), and frees the temporaries (so fusion can
//! contract them). Functions take the state already locked and return the result's view.

use crate::error::{Fail, Result};
use crate::state::State;
use crate::types::{default_sum_dtype, int_fits, is_comparison, no_loop, resolve_loop};
use hassium_core::{
    broadcast_shapes, fmt_requested_shape, fmt_shape, overlap, promote, promote_weak, BaseId,
    DType, Instr, OpClass, Opcode, Operand, Overlap, Scalar, ScalarKind, Shape, View,
};

/// A C scalar operand: "weak" as NEP 50 treats Python scalars, so `x * 0.5` keeps a
/// float32 array float32, as it would in NumPy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weak {
    Int(i64),
    Float(f64),
    Complex(f64, f64),
}

impl Weak {
    fn kind(self) -> ScalarKind {
        match self {
            Weak::Int(_) => ScalarKind::Int,
            Weak::Float(_) => ScalarKind::Float,
            Weak::Complex(..) => ScalarKind::Complex,
        }
    }

    /// The dtype the scalar has on its own (when no array takes part).
    fn default_dtype(self) -> DType {
        match self {
            Weak::Int(_) => DType::Int64,
            Weak::Float(_) => DType::Float64,
            Weak::Complex(..) => DType::Complex128,
        }
    }

    /// The value as a bytecode scalar of `dtype` (integers are range-checked before).
    pub fn to_scalar(self, dtype: DType) -> Scalar {
        match self {
            Weak::Int(v) => Scalar::Int64(v).cast(dtype),
            Weak::Float(v) => Scalar::Float64(v).cast(dtype),
            Weak::Complex(r, i) => Scalar::Complex128(r, i).cast(dtype),
        }
    }
}

/// An operand as it arrives from C, after its handle was looked up.
#[derive(Clone, Debug)]
pub enum Arg {
    Array(View),
    Weak(Weak),
}

impl Arg {
    fn view(&self) -> Option<&View> {
        match self {
            Arg::Array(v) => Some(v),
            Arg::Weak(_) => None,
        }
    }
}

/// Temporaries of one operation; freed when it is recorded, so the fuser may keep them in
/// registers instead of memory.
#[derive(Default)]
pub struct Temps(Vec<BaseId>);

impl Temps {
    pub fn view(&mut self, st: &mut State, dtype: DType, shape: &[usize]) -> View {
        let v = st.new_view(dtype, shape);
        self.0.push(v.base);
        v
    }

    pub fn free(self, st: &mut State) -> Result<()> {
        for id in self.0 {
            st.rt.free(id)?;
        }
        Ok(())
    }
}

fn record(st: &mut State, instr: Instr) -> Result<()> {
    st.rt.record(instr).map_err(Fail::from)
}

/// Records `out = src` with NumPy's `astype` conversion (shapes already agree).
pub fn copy_into(st: &mut State, out: &View, src: Operand) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    record(st, Instr::new(Opcode::Identity, out.clone(), [src]))
}

/// `src` as dtype `t`: itself, or a cast copy in a temporary.
fn cast(st: &mut State, temps: &mut Temps, src: &View, t: DType) -> Result<View> {
    if src.dtype == t {
        return Ok(src.clone());
    }
    let tmp = temps.view(st, t, &src.shape);
    copy_into(st, &tmp, src.clone().into())?;
    Ok(tmp)
}

/// NumPy 2's `result_type` of the operands: arrays promote, scalars are weak.
fn result_type(args: &[Arg]) -> DType {
    let strong = args
        .iter()
        .filter_map(|a| a.view().map(|v| v.dtype))
        .reduce(promote);
    let weak = args.iter().filter_map(|a| match a {
        Arg::Weak(w) => Some(*w),
        Arg::Array(_) => None,
    });
    match strong {
        Some(t) => weak.fold(t, |t, w| promote_weak(t, w.kind())),
        None => weak
            .map(Weak::default_dtype)
            .reduce(promote)
            .unwrap_or(DType::Float64),
    }
}

/// NumPy 2 refuses integer scalars that do not fit the array's type (`uint8 + 300`),
/// except in comparisons, which it evaluates exactly in a wider type.
fn check_weak_ints(op: Opcode, args: &[Arg], mut t: DType) -> Result<DType> {
    for a in args {
        if let Arg::Weak(Weak::Int(v)) = *a {
            if !int_fits(v, t) {
                if is_comparison(op) {
                    t = promote(t, DType::Int64);
                } else {
                    return Err(Fail::new(
                        crate::hs_status::HS_ERR_BOUNDS,
                        format!("integer scalar {v} is out of bounds for {}", t.name()),
                    ));
                }
            }
        }
    }
    Ok(t)
}

/// The broadcast shape of the array operands.
fn broadcast_args(args: &[Arg]) -> Result<Shape> {
    let mut shape: Option<Shape> = None;
    for v in args.iter().filter_map(Arg::view) {
        shape = Some(match shape {
            None => v.shape.clone(),
            Some(s) => broadcast_shapes(&s, &v.shape)?,
        });
    }
    Ok(shape.unwrap_or_default())
}

/// An input as an operand of dtype `l` broadcast to `shape`, privately copied when it
/// partially overlaps the output (the bytecode forbids that; NumPy handles it by copying).
fn operand(
    st: &mut State,
    temps: &mut Temps,
    a: &Arg,
    l: DType,
    shape: &[usize],
    out: Option<&View>,
) -> Result<Operand> {
    Ok(match a {
        Arg::Array(x) => {
            let mut v = cast(st, temps, x, l)?;
            if out.is_some_and(|o| overlap(o, &v) == Overlap::Partial) {
                let tmp = temps.view(st, l, &v.shape);
                copy_into(st, &tmp, v.into())?;
                v = tmp;
            }
            if v.shape.as_slice() != shape {
                v = v.broadcast_to(shape)?;
            }
            Operand::View(v)
        }
        Arg::Weak(w) => Operand::Scalar(w.to_scalar(l)),
    })
}

/// Checks that `out` can take a result of `shape` (NumPy's `out=` rule: the result
/// broadcasts to the output, never the other way round).
fn check_out_shape(out: &View, shape: &[usize]) -> Result<()> {
    match broadcast_shapes(&out.shape, shape) {
        Ok(b) if b == out.shape => Ok(()),
        _ => Err(Fail::shape(format!(
            "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
            fmt_shape(&out.shape),
            fmt_shape(shape)
        ))),
    }
}

/// Records `instr` whose result has dtype `o` and shape `shape` into `out` (casting and
/// broadcasting into it when needed) or into a new base. Returns the result's view.
fn finish(
    st: &mut State,
    temps: &mut Temps,
    mut instr: Instr,
    o: DType,
    shape: &[usize],
    out: Option<&View>,
) -> Result<View> {
    let direct = match out {
        None => st.new_view(o, shape),
        Some(v) if v.dtype == o && v.shape.as_slice() == shape => v.clone(),
        Some(_) => temps.view(st, o, shape),
    };
    let empty = direct.is_empty();
    instr.out = direct.clone();
    if !empty {
        record(st, instr)?;
    }
    match out {
        Some(v) if *v != direct => {
            let src = if v.shape.as_slice() == shape {
                direct
            } else {
                direct.broadcast_to(&v.shape)?
            };
            copy_into(st, v, src.into())?;
            Ok(v.clone())
        }
        _ => Ok(direct),
    }
}

/// A placeholder output; [`finish`] replaces it.
fn placeholder(dtype: DType) -> View {
    View::contiguous(BaseId(0), dtype, &[])
}

fn check_nin(op: Opcode, n: usize) -> Result<()> {
    if n != op.nin() {
        return Err(Fail::invalid(format!(
            "{} takes {} inputs, got {n}",
            op.name(),
            op.nin()
        )));
    }
    Ok(())
}

/// An elementwise opcode with NumPy's type resolution and broadcasting, into `out` (whose
/// dtype the result is cast to) or into a new array.
pub fn elementwise(st: &mut State, op: Opcode, args: &[Arg], out: Option<&View>) -> Result<View> {
    check_nin(op, args.len())?;
    let (mask, values) = if op == Opcode::Where {
        (Some(&args[0]), &args[1..])
    } else {
        (None, args)
    };
    let t = check_weak_ints(op, values, result_type(values))?;
    let (l, o) = if op == Opcode::Identity {
        (t, out.map_or(t, |v| v.dtype))
    } else {
        let l = resolve_loop(op, t)?;
        (l, op.out_dtype(l).ok_or_else(|| no_loop(op, l))?)
    };
    let mut shape = broadcast_args(args)?;
    if let Some(v) = out {
        check_out_shape(v, &shape)?;
        shape = v.shape.clone();
    }
    let mut temps = Temps::default();
    let direct = out.filter(|v| v.dtype == o);
    let mut ins = Vec::with_capacity(args.len());
    if let Some(m) = mask {
        ins.push(operand(st, &mut temps, m, DType::Bool, &shape, direct)?);
    }
    for a in values {
        ins.push(operand(st, &mut temps, a, l, &shape, direct)?);
    }
    let res = finish(
        st,
        &mut temps,
        Instr::new(op, placeholder(o), ins),
        o,
        &shape,
        out,
    )?;
    temps.free(st)?;
    Ok(res)
}

/// Normalises an axis argument: `None` for [`crate::HS_AXIS_ALL`], else NumPy's rule
/// (negative counts from the end).
pub fn axis_arg(v: &View, axis: i64) -> Result<Option<usize>> {
    if axis == crate::HS_AXIS_ALL {
        return Ok(None);
    }
    let ax = isize::try_from(axis).map_err(|_| {
        Fail::new(
            crate::hs_status::HS_ERR_AXIS,
            format!(
                "axis {axis} is out of bounds for array of dimension {}",
                v.ndim()
            ),
        )
    })?;
    Ok(Some(v.axis(ax)?))
}

/// `v` as a 1-D view of its elements in C order (copied when the strides do not allow a
/// view).
fn flatten(st: &mut State, temps: &mut Temps, v: &View) -> Result<View> {
    let n = v.nelem();
    if let Some(f) = v.reshape(&[n]) {
        return Ok(f);
    }
    let tmp = temps.view(st, v.dtype, &v.shape);
    copy_into(st, &tmp, v.clone().into())?;
    Ok(tmp
        .reshape(&[n])
        .expect("a contiguous view reshapes to 1-D"))
}

/// The loop dtype of a reduction or scan of input type `t`: NumPy widens small integers
/// for sums and products, and reduces logically on bools.
fn reduce_loop(op: Opcode, t: DType) -> Result<DType> {
    let combine = op.info().combine;
    let t = match combine {
        Some(Opcode::Add | Opcode::Multiply) => default_sum_dtype(t),
        Some(Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor) => DType::Bool,
        _ => t,
    };
    let l = match combine {
        Some(c) => resolve_loop(c, t)?,
        None => t,
    };
    if op.out_dtype(l).is_none() {
        return Err(no_loop(op, l));
    }
    Ok(l)
}

/// A reduction along `axis` (or all axes, one at a time from the last), into `out` or a new
/// array. argmin/argmax over all axes index the flattened array, as NumPy's do.
pub fn reduce(st: &mut State, op: Opcode, a: &View, axis: i64, out: Option<&View>) -> Result<View> {
    if !op.is_reduction() {
        return Err(Fail::invalid(format!("{} is not a reduction", op.name())));
    }
    let axis = axis_arg(a, axis)?;
    let l = reduce_loop(op, a.dtype)?;
    let o = op.out_dtype(l).ok_or_else(|| no_loop(op, l))?;
    let mut temps = Temps::default();
    let mut cur = cast(st, &mut temps, a, l)?;
    let axes: Vec<usize> = match axis {
        Some(ax) => vec![ax],
        None if op.is_arg_reduction() && cur.ndim() != 1 => {
            cur = flatten(st, &mut temps, &cur)?;
            vec![0]
        }
        None => (0..cur.ndim()).rev().collect(),
    };
    if cur.ndim() == 0 && axes.is_empty() {
        // Reducing a 0-d array over "all" of its (no) axes is the value itself.
        let res = finish(
            st,
            &mut temps,
            Instr::new(Opcode::Identity, placeholder(o), [cur.into()]),
            o,
            &[],
            out,
        )?;
        temps.free(st)?;
        return Ok(res);
    }
    let mut result = None;
    for (k, &ax) in axes.iter().enumerate() {
        let mut shape = cur.shape.clone();
        shape.remove(ax);
        let instr = Instr::new(op, placeholder(o), [cur.clone().into()]).with_axis(ax);
        if k + 1 == axes.len() {
            if let Some(v) = out {
                check_out_shape(v, &shape)?;
            }
            result = Some(finish(st, &mut temps, instr, o, &shape, out)?);
        } else {
            cur = finish(st, &mut temps, instr, o, &shape, None)?;
            temps.0.push(cur.base);
        }
    }
    temps.free(st)?;
    Ok(result.expect("at least one axis is reduced"))
}

/// A scan (cumsum, cumprod) along `axis`, or over the flattened array for
/// [`crate::HS_AXIS_ALL`], as NumPy's `cumsum(axis=None)`.
pub fn scan(st: &mut State, op: Opcode, a: &View, axis: i64, out: Option<&View>) -> Result<View> {
    if !op.is_scan() {
        return Err(Fail::invalid(format!("{} is not a scan", op.name())));
    }
    let axis = axis_arg(a, axis)?;
    let l = reduce_loop(op, a.dtype)?;
    let mut temps = Temps::default();
    let mut cur = cast(st, &mut temps, a, l)?;
    let ax = match axis {
        Some(ax) => ax,
        None => {
            cur = flatten(st, &mut temps, &cur)?;
            0
        }
    };
    let shape = cur.shape.clone();
    if let Some(v) = out {
        check_out_shape(v, &shape)?;
    }
    let res = finish(
        st,
        &mut temps,
        Instr::new(op, placeholder(l), [cur.into()]).with_axis(ax),
        l,
        &shape,
        out,
    )?;
    temps.free(st)?;
    Ok(res)
}

/// `a @ b` for 2-D arrays (the `matmul` extension method), in their promoted dtype.
pub fn matmul(st: &mut State, a: &View, b: &View, out: Option<&View>) -> Result<View> {
    if a.ndim() != 2 || b.ndim() != 2 {
        return Err(Fail::shape(format!(
            "matmul needs 2-D operands, got shapes {} and {}",
            fmt_shape(&a.shape),
            fmt_shape(&b.shape)
        )));
    }
    if a.shape[1] != b.shape[0] {
        return Err(Fail::shape(format!(
            "matmul: shapes {} and {} are not aligned: {} (dim 1) != {} (dim 0)",
            fmt_shape(&a.shape),
            fmt_shape(&b.shape),
            a.shape[1],
            b.shape[0]
        )));
    }
    let t = promote(a.dtype, b.dtype);
    if !Opcode::Extension.info().types.contains(t) {
        return Err(Fail::dtype(format!(
            "matmul not supported for the input types ({})",
            t.name()
        )));
    }
    let shape = [a.shape[0], b.shape[1]];
    if let Some(v) = out {
        check_out_shape(v, &shape)?;
    }
    let mut temps = Temps::default();
    let res = if a.shape[1] == 0 {
        // An empty inner dimension sums nothing: the product is all zeros.
        let zero = Operand::Scalar(Scalar::zero(t));
        finish(
            st,
            &mut temps,
            Instr::new(Opcode::Identity, placeholder(t), [zero]),
            t,
            &shape,
            out,
        )?
    } else {
        let x = cast(st, &mut temps, a, t)?;
        let y = cast(st, &mut temps, b, t)?;
        let instr = Instr::extension("matmul", placeholder(t), [x.into(), y.into()]);
        finish(st, &mut temps, instr, t, &shape, out)?
    };
    temps.free(st)?;
    Ok(res)
}

/// An array operand as a view of `t`, broadcast to `shape`; a scalar as a constant of `t`.
fn index_operand(
    st: &mut State,
    temps: &mut Temps,
    a: &Arg,
    t: DType,
    shape: &[usize],
) -> Result<Operand> {
    operand(st, temps, a, t, shape, None)
}

fn shape_of(a: &Arg, what: &str) -> Result<Shape> {
    a.view()
        .map(|v| v.shape.clone())
        .ok_or_else(|| Fail::invalid(format!("{what} must be an array, not a scalar")))
}

/// The opcodes outside the elementwise families, as `hs_op` gives them: generators fill
/// `out`; gather/scatter take index arrays (cast to int64) and values (cast to the
/// target's dtype); reductions and scans take their input and `axis`.
pub fn other(
    st: &mut State,
    op: Opcode,
    args: &[Arg],
    out: Option<&View>,
    axis: i64,
) -> Result<View> {
    let need_out = || Fail::invalid(format!("{} needs an output array: use hs_op", op.name()));
    match op.class() {
        OpClass::Elementwise => elementwise(st, op, args, out),
        OpClass::Reduce | OpClass::Scan => {
            check_nin(op, args.len())?;
            let a = args[0]
                .view()
                .ok_or_else(|| Fail::invalid("input 0 must be an array, not a scalar"))?
                .clone();
            if op.is_scan() {
                scan(st, op, &a, axis, out)
            } else {
                reduce(st, op, &a, axis, out)
            }
        }
        OpClass::Generator => {
            check_nin(op, args.len())?;
            let out = out.ok_or_else(need_out)?;
            let ins = args
                .iter()
                .enumerate()
                .map(|(k, a)| match a {
                    // Seeds and streams are 64-bit patterns: an int64 -1 means all bits set.
                    Arg::Weak(Weak::Int(v)) => Ok(Operand::Scalar(Scalar::UInt64(*v as u64))),
                    _ => Err(Fail::invalid(format!(
                        "input {k} of {} must be an integer scalar",
                        op.name()
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            if !out.is_empty() {
                record(st, Instr::new(op, out.clone(), ins))?;
            }
            Ok(out.clone())
        }
        OpClass::Index => {
            check_nin(op, args.len())?;
            let mut temps = Temps::default();
            let res = if op == Opcode::Gather {
                let src = args[0]
                    .view()
                    .ok_or_else(|| Fail::invalid("the source must be an array"))?
                    .clone();
                let idx_shape = shape_of(&args[1], "the index")?;
                let idx = index_operand(st, &mut temps, &args[1], DType::Int64, &idx_shape)?;
                let instr = Instr::new(op, placeholder(src.dtype), [src.clone().into(), idx]);
                finish(st, &mut temps, instr, src.dtype, &idx_shape, out)?
            } else {
                let target = out.ok_or_else(need_out)?.clone();
                let idx_shape = shape_of(&args[0], "the index")?;
                let mut ins = vec![
                    index_operand(st, &mut temps, &args[0], DType::Int64, &idx_shape)?,
                    index_operand(st, &mut temps, &args[1], target.dtype, &idx_shape)?,
                ];
                if op == Opcode::CondScatter {
                    ins.push(index_operand(
                        st,
                        &mut temps,
                        &args[2],
                        DType::Bool,
                        &idx_shape,
                    )?);
                }
                if !target.is_empty() && idx_shape.iter().product::<usize>() > 0 {
                    record(st, Instr::new(op, target.clone(), ins))?;
                }
                target
            };
            temps.free(st)?;
            Ok(res)
        }
        OpClass::Extension => Err(Fail::invalid(
            "extension methods have their own functions: use hs_matmul",
        )),
        OpClass::System => Err(Fail::invalid(format!(
            "{} is run by the runtime: use hs_free, hs_sync or hs_flush",
            op.name()
        ))),
    }
}

/// `np.full(shape, value, dtype)`.
pub fn full(st: &mut State, dtype: DType, shape: &[usize], value: Scalar) -> Result<View> {
    let v = st.new_view(dtype, shape);
    copy_into(st, &v, Operand::Scalar(value.cast(dtype)))?;
    Ok(v)
}

/// `np.arange`-like: `start + i*step` for i in 0..n, computed in int64 for integer dtypes
/// (start and step truncated) and in float64 otherwise, then cast to `dtype`.
pub fn range(st: &mut State, dtype: DType, start: f64, step: f64, n: usize) -> Result<View> {
    crate::args::check_size(&[n])?;
    let work = if dtype.is_integer() || dtype.is_bool() {
        DType::Int64
    } else {
        DType::Float64
    };
    let res = st.new_view(dtype, &[n]);
    if n == 0 {
        return Ok(res);
    }
    let mut temps = Temps::default();
    let idx = temps.view(st, work, &[n]);
    record(st, Instr::new(Opcode::Range, idx.clone(), []))?;
    let (start, step) = (
        Scalar::Float64(start).cast(work),
        Scalar::Float64(step).cast(work),
    );
    let scaled = temps.view(st, work, &[n]);
    record(
        st,
        Instr::new(Opcode::Multiply, scaled.clone(), [idx.into(), step.into()]),
    )?;
    let dest = if work == dtype {
        res.clone()
    } else {
        temps.view(st, work, &[n])
    };
    record(
        st,
        Instr::new(Opcode::Add, dest.clone(), [scaled.into(), start.into()]),
    )?;
    if dest != res {
        copy_into(st, &res, dest.into())?;
    }
    temps.free(st)?;
    Ok(res)
}

/// Uniform float64 in [0, 1): the top 53 bits of Philox's uint64 output times 2^-53, as
/// NumPy's generators turn bits into doubles.
pub fn random(st: &mut State, seed: u64, stream: u64, shape: &[usize]) -> Result<View> {
    let res = st.new_view(DType::Float64, shape);
    if res.is_empty() {
        return Ok(res);
    }
    let mut temps = Temps::default();
    let bits = temps.view(st, DType::UInt64, shape);
    record(
        st,
        Instr::new(
            Opcode::Random,
            bits.clone(),
            [Scalar::UInt64(seed).into(), Scalar::UInt64(stream).into()],
        ),
    )?;
    let top = temps.view(st, DType::UInt64, shape);
    record(
        st,
        Instr::new(
            Opcode::RightShift,
            top.clone(),
            [bits.into(), Scalar::UInt64(11).into()],
        ),
    )?;
    let float = temps.view(st, DType::Float64, shape);
    copy_into(st, &float, top.into())?;
    let scale = Scalar::Float64(1.0 / (1u64 << 53) as f64);
    record(
        st,
        Instr::new(Opcode::Multiply, res.clone(), [float.into(), scale.into()]),
    )?;
    temps.free(st)?;
    Ok(res)
}

/// A C-contiguous copy of `v` with dtype `dtype` (`astype`, `copy`).
pub fn astype(st: &mut State, v: &View, dtype: DType) -> Result<View> {
    let res = st.new_view(dtype, &v.shape);
    copy_into(st, &res, v.clone().into())?;
    Ok(res)
}

/// `reshape` with NumPy's rules (one negative entry, `-1` by convention, is inferred): a
/// view when the strides allow it, else a copy.
pub fn reshape(st: &mut State, v: &View, req: &[i64]) -> Result<View> {
    let size = v.nelem();
    let unknown: Vec<usize> = (0..req.len()).filter(|&i| req[i] < 0).collect();
    let bad = || {
        Fail::shape(format!(
            "cannot reshape array of size {size} into shape {}",
            fmt_requested_shape(req)
        ))
    };
    crate::args::check_ndim(req.len())?;
    if unknown.len() > 1 {
        return Err(Fail::shape("can only specify one unknown dimension"));
    }
    let known = req
        .iter()
        .filter(|&&d| d >= 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))
        .ok_or_else(bad)?;
    let mut shape: Vec<usize> = req.iter().map(|&d| d.max(0) as usize).collect();
    match unknown.first() {
        Some(&u) if known != 0 && size.is_multiple_of(known) => shape[u] = size / known,
        Some(_) => return Err(bad()),
        None if known != size => return Err(bad()),
        None => {}
    }
    crate::args::check_size(&shape)?;
    if let Some(r) = v.reshape(&shape) {
        return Ok(r);
    }
    let c = astype(st, v, v.dtype)?;
    Ok(c.reshape(&shape)
        .expect("a contiguous copy reshapes to any shape of its size"))
}
