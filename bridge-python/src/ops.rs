//! Recording operations: NumPy's promotion, broadcasting and casting turned into
//! bytecode. Every function here takes the runtime lock once and records a short run of
//! instructions; temporaries they create are freed before returning.

use crate::py::{self, UnsupportedError};
use crate::rt::{self, with_rt, Arr, OrPy, Write};
use crate::types::{self, can_cast, int_fits, resolve_loop, NoLoop};
use hassium_core::{
    broadcast_shapes, fmt_shape, overlap, promote, promote_weak, same_shape, BaseId, DType, Instr,
    Opcode, Operand, Operands, Overlap, Scalar, ScalarKind, Shape, View,
};
use hassium_vem::Runtime;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use smallvec::SmallVec;

/// A Python scalar: "weak" under NEP 50 (only its kind takes part in promotion).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weak {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

impl Weak {
    pub fn kind(self) -> ScalarKind {
        match self {
            Weak::Bool(_) => ScalarKind::Bool,
            Weak::Int(_) => ScalarKind::Int,
            Weak::Float(_) => ScalarKind::Float,
            Weak::Complex(..) => ScalarKind::Complex,
        }
    }

    /// The dtype NumPy gives the scalar on its own (`np.asarray(1)` is int64).
    pub fn default_dtype(self) -> DType {
        match self {
            Weak::Bool(_) => DType::Bool,
            Weak::Int(v) if v > i64::MAX as i128 && v <= u64::MAX as i128 => DType::UInt64,
            Weak::Int(_) => DType::Int64,
            Weak::Float(_) => DType::Float64,
            Weak::Complex(..) => DType::Complex128,
        }
    }

    /// The value as a bytecode scalar of `dtype` (callers range-check integers first).
    pub fn to_scalar(self, dtype: DType) -> Scalar {
        match self {
            Weak::Bool(b) => Scalar::Bool(b).cast(dtype),
            Weak::Int(v) => {
                if let Ok(i) = i64::try_from(v) {
                    Scalar::Int64(i).cast(dtype)
                } else if let Ok(u) = u64::try_from(v) {
                    Scalar::UInt64(u).cast(dtype)
                } else {
                    Scalar::Float64(v as f64).cast(dtype)
                }
            }
            Weak::Float(f) => Scalar::Float64(f).cast(dtype),
            Weak::Complex(r, i) => Scalar::Complex128(r, i).cast(dtype),
        }
    }
}

/// An operand as it arrives from Python.
#[derive(Clone, Debug)]
pub enum Arg {
    Array(Arr),
    /// A NumPy scalar: typed, promotes like a 0-d array.
    Typed(Scalar),
    Weak(Weak),
}

impl Arg {
    fn strong_dtype(&self) -> Option<DType> {
        match self {
            Arg::Array(a) => Some(a.dtype()),
            Arg::Typed(s) => Some(s.dtype()),
            Arg::Weak(_) => None,
        }
    }
}

/// NumPy 2's `result_type` of the operands (NEP 50: Python scalars are weak).
pub fn result_type(args: &[Arg]) -> DType {
    let strong = args.iter().filter_map(Arg::strong_dtype).reduce(promote);
    match strong {
        Some(mut t) => {
            for a in args {
                if let Arg::Weak(w) = a {
                    t = promote_weak(t, w.kind());
                }
            }
            t
        }
        None => args
            .iter()
            .filter_map(|a| match a {
                Arg::Weak(w) => Some(w.default_dtype()),
                _ => None,
            })
            .reduce(promote)
            .unwrap_or(DType::Float64),
    }
}

fn broadcast_all(args: &[Arg]) -> PyResult<Shape> {
    let mut shape: Shape = Shape::new();
    let mut first = true;
    for a in args {
        if let Arg::Array(x) = a {
            shape = if first {
                x.view.shape.clone()
            } else {
                broadcast_shapes(&shape, x.shape()).py()?
            };
            first = false;
        }
    }
    Ok(shape)
}

/// Checks Python integers against the type they will be cast to: NumPy 2 raises
/// `OverflowError` for arithmetic, and compares exactly (here: in a wider type).
fn check_weak_ints(op: Opcode, args: &[Arg], t: DType) -> PyResult<DType> {
    let mut t = t;
    for a in args {
        if let Arg::Weak(Weak::Int(v)) = *a {
            if !int_fits(v, t) {
                if types::is_comparison(op) {
                    let wide = if v >= i64::MIN as i128 && v <= i64::MAX as i128 {
                        DType::Int64
                    } else if v >= 0 && v <= u64::MAX as i128 {
                        DType::UInt64
                    } else {
                        DType::Float64
                    };
                    t = promote(t, wide);
                } else {
                    return Err(int_out_of_bounds(v, t));
                }
            }
        }
    }
    Ok(t)
}

/// NumPy's error for a Python integer that `t` cannot hold.
fn int_out_of_bounds(v: i128, t: DType) -> PyErr {
    PyOverflowError::new_err(format!("Python integer {v} out of bounds for {}", t.name()))
}

/// A Python integer stored into an integer array must fit it (NumPy 2's `OverflowError`);
/// into a bool or inexact array any value is taken.
fn check_stored_int(value: &Arg, t: DType) -> PyResult<()> {
    match *value {
        Arg::Weak(Weak::Int(v)) if t.is_integer() && !int_fits(v, t) => {
            Err(int_out_of_bounds(v, t))
        }
        _ => Ok(()),
    }
}

/// Checks a scalar about to be stored as an item of a `t` array (`a[i] = x`, `a.fill(x)`)
/// the way NumPy's setitem converts it, rather than casting it silently.
///
/// A float stored into an integer array goes through Python's `int()`: NaN is a
/// `ValueError`, ±inf and values beyond a C long are an `OverflowError`, and the rest is
/// truncated and then range-checked like a Python integer. NumPy float scalars take that
/// path into signed targets and are cast into unsigned ones (NumPy 2 does both; advanced
/// indexing casts them always, and its caller skips them). A Python complex cannot become
/// an integer or a float (`TypeError`); a NumPy complex is cast.
pub fn check_item(value: &Arg, t: DType) -> PyResult<()> {
    check_stored_int(value, t)?;
    let (f, python) = match *value {
        Arg::Weak(Weak::Complex(..)) if t.is_integer() || t.is_float() => {
            let conv = if t.is_integer() {
                "int() argument must be a string, a bytes-like object or a real number"
            } else {
                "float() argument must be a string or a real number"
            };
            return Err(PyTypeError::new_err(format!("{conv}, not 'complex'")));
        }
        Arg::Weak(Weak::Float(f)) => (f, true),
        Arg::Typed(s) if s.dtype().is_float() => (s.as_f64(), false),
        _ => return Ok(()),
    };
    if !t.is_integer() || !(python || t.is_signed_integer()) {
        return Ok(());
    }
    if f.is_nan() {
        return Err(PyValueError::new_err("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err(PyOverflowError::new_err(
            "cannot convert float infinity to integer",
        ));
    }
    // 2^63 and 2^64 are exact in f64. NumPy converts through a C long, [-2^63, 2^63), and
    // for uint64 through an unsigned long, up to 2^64.
    let top = if t == DType::UInt64 {
        2f64.powi(64)
    } else {
        2f64.powi(63)
    };
    let v = f.trunc();
    if v >= top || v < -(2f64.powi(63)) {
        return Err(PyOverflowError::new_err(
            "Python int too large to convert to C long",
        ));
    }
    let v = v as i128;
    if !int_fits(v, t) {
        return Err(int_out_of_bounds(v, t));
    }
    Ok(())
}

/// Temporaries created while recording one operation, freed at the end.
#[derive(Default)]
pub struct Temps(SmallVec<[BaseId; 4]>);

impl Temps {
    /// A new temporary contiguous view (not owned by any Python array).
    pub fn new_view(&mut self, rt: &mut Runtime, dtype: DType, shape: &[usize]) -> PyResult<View> {
        let n = crate::rt::checked_nelem(dtype, shape)?;
        let base = rt.new_base(dtype, n);
        self.0.push(base.id);
        Ok(View::contiguous(base.id, dtype, shape))
    }

    pub fn free(self, rt: &mut Runtime) -> PyResult<()> {
        for id in self.0 {
            rt.free(id).py()?;
        }
        Ok(())
    }
}

/// Records `out = src` with NumPy's `astype` conversion (shapes must match).
pub fn record_copy(rt: &mut Runtime, out: &View, src: Operand) -> PyResult<()> {
    rt::record(rt, Instr::new(Opcode::Identity, out.clone(), [src])).py()
}

/// `src` as a view of dtype `t`, casting into a temporary when the dtype differs.
fn as_dtype(rt: &mut Runtime, temps: &mut Temps, src: &View, t: DType) -> PyResult<View> {
    if src.dtype == t {
        return Ok(src.clone());
    }
    let tmp = temps.new_view(rt, t, &src.shape)?;
    record_copy(rt, &tmp, src.clone().into())?;
    Ok(tmp)
}

/// A private copy of `src` (same dtype), for inputs that partially overlap an output.
fn private_copy(rt: &mut Runtime, temps: &mut Temps, src: &View) -> PyResult<View> {
    let tmp = temps.new_view(rt, src.dtype, &src.shape)?;
    record_copy(rt, &tmp, src.clone().into())?;
    Ok(tmp)
}

fn loop_error(
    py: Python<'_>,
    op: Opcode,
    t: DType,
    e: NoLoop,
    nin: usize,
    call: py::Call,
) -> PyErr {
    match e {
        NoLoop::Message(m) => PyTypeError::new_err(m),
        NoLoop::NoNumpyLoop => py::no_loop_error(py, op.name(), &vec![t; nin], call),
        NoLoop::Unsupported => UnsupportedError::new_err(format!(
            "hassium has no {} loop for {}; NumPy does",
            op.name(),
            t.name()
        )),
    }
}

/// Where a result goes: a fresh array, or an existing one (`out=`, in-place operators).
pub struct Dest<'a> {
    pub out: Option<&'a Arr>,
    /// NumPy's `casting=` for the output ("same_kind" unless told).
    pub casting: &'a str,
}

impl Dest<'static> {
    pub const NEW: Dest<'static> = Dest {
        out: None,
        casting: "same_kind",
    };
}

/// Applies the elementwise opcode `op` with NumPy's type resolution and broadcasting.
pub fn elementwise(
    py: Python<'_>,
    op: Opcode,
    args: &[Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> PyResult<Arr> {
    // `dtype=` fixes the output's dtype (NumPy's `signature=(None, ..., dtype)`). When the
    // inputs' own loop already gives it, as `less(ints, floats, dtype=bool)`, nothing
    // changes; otherwise the loop of that dtype computes, and it must give that dtype.
    let natural = check_weak_ints(op, args, result_type(args));
    let mut dtype = dtype;
    if let (Some(d), Ok(t)) = (dtype, &natural) {
        let t = *t;
        match resolve_loop(op, t) {
            Ok(l) if op.out_dtype(l) == Some(d) => dtype = None,
            // Complex ordering and the like: the package falls back to NumPy, `dtype=` too.
            Err(NoLoop::Unsupported) => {
                return Err(loop_error(
                    py,
                    op,
                    t,
                    NoLoop::Unsupported,
                    args.len(),
                    py::Call::Dtype(d),
                ))
            }
            _ => {}
        }
    }
    // (The inputs' own dtype is an error only without `dtype=`: NumPy takes
    // `add(int8s, 300, dtype=int64)`.)
    let t = match dtype {
        Some(d) => d,
        None => natural?,
    };
    let call = dtype.map_or(py::Call::Plain, py::Call::Dtype);
    let l = resolve_loop(op, t).map_err(|e| loop_error(py, op, t, e, args.len(), call))?;
    // Before any cast is checked: with no loop giving that dtype, NumPy says so first.
    let o = op
        .out_dtype(l)
        .filter(|&o| dtype.is_none_or(|d| o == d))
        .ok_or_else(|| py::no_loop_error(py, op.name(), &vec![l; args.len()], call))?;
    if dtype.is_some() {
        if l != t {
            // `dtype=` names the loop; NumPy refuses when no loop has exactly that type.
            return Err(py::no_loop_error(
                py,
                op.name(),
                &vec![t; args.len()],
                py::Call::Dtype(t),
            ));
        }
        // The inputs are cast to the loop under the ufunc's casting rule (a Python scalar
        // as its default type): `add(floats, 1, dtype=int8)` is refused.
        for (i, a) in args.iter().enumerate() {
            let from = match a {
                Arg::Weak(w) => w.default_dtype(),
                a => a
                    .strong_dtype()
                    .expect("arrays and typed scalars have a dtype"),
            };
            if can_cast(from, l, dest.casting) == Some(false) {
                return Err(py::casting_error(
                    py,
                    op.name(),
                    Some(i),
                    from,
                    l,
                    dest.casting,
                ));
            }
        }
    }
    let mut shape = broadcast_all(args)?;
    if let Some(out) = dest.out {
        check_out(py, op.name(), out, &shape, o, dest.casting)?;
        shape = out.view.shape.clone();
    }
    with_rt(|rt| {
        let mut temps = Temps::default();
        // Inputs are written over only when the result goes straight into `out`.
        let direct = dest.out.map(|a| &a.view).filter(|v| v.dtype == o);
        let mut ins = Operands::new();
        for a in args {
            ins.push(operand(rt, &mut temps, a, l, &shape, direct)?);
        }
        let instr = Instr {
            op,
            out: placeholder(o, &shape),
            ins,
            axis: None,
            method: None,
        };
        let result = finish(rt, &mut temps, instr, dest)?;
        temps.free(rt)?;
        Ok(result)
    })
}

/// An input as an operand of loop type `l`, broadcast to `shape`; copied when it partially
/// overlaps the output.
fn operand(
    rt: &mut Runtime,
    temps: &mut Temps,
    a: &Arg,
    l: DType,
    shape: &[usize],
    out: Option<&View>,
) -> PyResult<Operand> {
    Ok(match a {
        Arg::Array(x) => {
            let mut v = as_dtype(rt, temps, &x.view, l)?;
            if !same_shape(&v.shape, shape) {
                v = v.broadcast_to(shape).py()?;
            }
            if let Some(o) = out {
                if overlap(o, &v) == Overlap::Partial {
                    v = private_copy(rt, temps, &x.view)?.broadcast_to(shape).py()?;
                }
            }
            Operand::View(v)
        }
        Arg::Typed(s) => Operand::Scalar(s.cast(l)),
        Arg::Weak(w) => Operand::Scalar(w.to_scalar(l)),
    })
}

/// Validates an `out=` array: its shape must be the broadcast shape (or broadcast to it)
/// and the result must cast to it under `casting`.
pub fn check_out(
    py: Python<'_>,
    name: &str,
    out: &Arr,
    shape: &[usize],
    o: DType,
    casting: &str,
) -> PyResult<()> {
    let b = broadcast_shapes(out.shape(), shape).ok();
    if b.as_deref() != Some(out.shape()) {
        return Err(PyValueError::new_err(format!(
            "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
            fmt_shape(out.shape()),
            fmt_shape(&b.unwrap_or_else(|| shape.into()))
        )));
    }
    match can_cast(o, out.dtype(), casting) {
        Some(true) => Ok(()),
        Some(false) => Err(py::casting_error(py, name, None, o, out.dtype(), casting)),
        None => Err(PyValueError::new_err(format!(
            "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got '{casting}')"
        ))),
    }
}

/// The output slot of an instruction before `finish` picks its destination: only the
/// dtype and shape are read (strides are not computed: this is the hot path).
fn placeholder(dtype: DType, shape: &[usize]) -> View {
    View {
        base: BaseId(0),
        dtype,
        offset: 0,
        shape: Shape::from_slice(shape),
        strides: Default::default(),
    }
}

/// Records `instr` (whose `out` is a placeholder of the result's dtype and shape) into
/// the destination, casting and broadcasting into `out=` when one is given.
fn finish(rt: &mut Runtime, temps: &mut Temps, mut instr: Instr, dest: &Dest<'_>) -> PyResult<Arr> {
    let o = instr.out.dtype;
    let shape = instr.out.shape.clone();
    match dest.out {
        None => {
            let res = Arr::new(rt, o, &shape)?;
            instr.out = res.view.clone();
            rt::record(rt, instr).py()?;
            Ok(res)
        }
        Some(out) if out.dtype() == o && out.shape() == shape.as_slice() => {
            instr.out = out.view.clone();
            rt::record(rt, instr).py()?;
            Ok(out.clone())
        }
        Some(out) => {
            // Different dtype or a broadcasting output: compute, then cast into `out`.
            let tmp = temps.new_view(rt, o, &shape)?;
            instr.out = tmp.clone();
            rt::record(rt, instr).py()?;
            let src = if shape.as_slice() == out.shape() {
                tmp
            } else {
                tmp.broadcast_to(out.shape()).py()?
            };
            record_copy(rt, &out.view, src.into())?;
            Ok(out.clone())
        }
    }
}

/// `np.where(cond, x, y)`.
pub fn where_(py: Python<'_>, cond: &Arg, x: &Arg, y: &Arg) -> PyResult<Arr> {
    let xy = [x.clone(), y.clone()];
    let t = check_weak_ints(Opcode::Where, &xy, result_type(&xy))?;
    let shape = broadcast_all(&[cond.clone(), x.clone(), y.clone()])?;
    let _ = py;
    with_rt(|rt| {
        let mut temps = Temps::default();
        let c = operand(rt, &mut temps, cond, DType::Bool, &shape, None)?;
        let a = operand(rt, &mut temps, x, t, &shape, None)?;
        let b = operand(rt, &mut temps, y, t, &shape, None)?;
        let res = finish(
            rt,
            &mut temps,
            Instr::new(Opcode::Where, placeholder(t, &shape), [c, a, b]),
            &Dest::NEW,
        )?;
        temps.free(rt)?;
        Ok(res)
    })
}

/// An array stored where it has more dimensions than fit loses its leading length-1
/// dimensions, as NumPy's assignment allows (`a[1] = row[None]`); `None` when nothing is
/// dropped.
fn fit_value(v: &Arg, ndim: usize) -> Option<Arg> {
    let Arg::Array(a) = v else { return None };
    let mut view = a.view.clone();
    while view.ndim() > ndim && view.shape[0] == 1 {
        view = view.index(0, 0).ok()?;
    }
    (view.ndim() != a.view.ndim()).then(|| Arg::Array(a.with_view(view)))
}

/// `dst[...] = src` with broadcasting and casting (NumPy's `copyto`).
pub fn assign(py: Python<'_>, dst: &Arr, src: &Arg, casting: &str) -> PyResult<()> {
    dst.check_writeable(Write::Assign)?;
    let fitted = fit_value(src, dst.view.ndim());
    let src = fitted.as_ref().unwrap_or(src);
    check_stored_int(src, dst.dtype())?;
    let from = src.strong_dtype();
    if let Some(f) = from {
        if can_cast(f, dst.dtype(), casting) == Some(false) {
            return Err(PyTypeError::new_err(format!(
                "Cannot cast array data from dtype('{}') to dtype('{}') according to the rule '{casting}'",
                f.name(),
                dst.dtype().name()
            )));
        }
    }
    let shape = dst.view.shape.clone();
    if let Arg::Array(a) = src {
        a.view.broadcast_to(&shape).map_err(|_| {
            PyValueError::new_err(format!(
                "could not broadcast input array from shape {} into shape {}",
                fmt_shape(a.shape()),
                fmt_shape(&shape)
            ))
        })?;
    }
    let _ = py;
    with_rt(|rt| {
        let mut temps = Temps::default();
        let op = match src {
            Arg::Array(a) => {
                let mut v = a.view.broadcast_to(&shape).py()?;
                if overlap(&dst.view, &v) == Overlap::Partial {
                    v = private_copy(rt, &mut temps, &a.view)?
                        .broadcast_to(&shape)
                        .py()?;
                }
                Operand::View(v)
            }
            Arg::Typed(s) => Operand::Scalar(*s),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(dst.dtype())),
        };
        if !dst.view.is_empty() {
            record_copy(rt, &dst.view, op)?;
        }
        temps.free(rt)
    })
}

/// A copy of `a` as a fresh contiguous array of dtype `t` (`astype`, `copy`).
pub fn cast_copy(a: &Arr, t: DType) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, t, a.shape())?;
        if !a.view.is_empty() {
            record_copy(rt, &res.view, a.view.clone().into())?;
        }
        Ok(res)
    })
}

/// `a` as a contiguous array: itself when it already is, else a copy.
pub fn contiguous(a: &Arr) -> PyResult<Arr> {
    if a.view.is_contiguous() {
        Ok(a.clone())
    } else {
        cast_copy(a, a.dtype())
    }
}

/// `a.reshape(shape)` (C order): a view when the strides allow, else a copy.
pub fn reshape(a: &Arr, shape: &[usize]) -> PyResult<Arr> {
    if let Some(v) = a.view.reshape(shape) {
        return Ok(a.with_view(v));
    }
    let c = cast_copy(a, a.dtype())?;
    let v = c
        .view
        .reshape(shape)
        .ok_or_else(|| PyValueError::new_err("cannot reshape"))?;
    Ok(c.with_view(v))
}

/// Resolves the unknown dimension in a requested shape, as NumPy's reshape does: any
/// negative entry is one (`-1` by convention; NumPy takes `-2` the same way).
pub fn resolve_shape(size: usize, from: &[usize], req: &[isize]) -> PyResult<Vec<usize>> {
    rt::check_ndim(req.len())?;
    let unknown: Vec<usize> = (0..req.len()).filter(|&i| req[i] < 0).collect();
    if unknown.len() > 1 {
        return Err(PyValueError::new_err(
            "can only specify one unknown dimension",
        ));
    }
    let known: usize = req
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let mut out: Vec<usize> = req.iter().map(|&d| d.max(0) as usize).collect();
    let err = || {
        PyValueError::new_err(format!(
            "cannot reshape array of size {size} into shape {}",
            hassium_core::fmt_requested_shape(&req.iter().map(|&d| d as i64).collect::<Vec<_>>())
        ))
    };
    if let Some(&u) = unknown.first() {
        if known == 0 || !size.is_multiple_of(known) {
            return Err(err());
        }
        out[u] = size / known;
    } else if known != size {
        return Err(err());
    }
    let _ = from;
    Ok(out)
}

/// Records a generator filling a fresh array: `Range` (then `start + i*step`) for arange.
pub fn arange(start: Weak, step: Weak, n: usize, dtype: DType) -> PyResult<Arr> {
    with_rt(|rt| {
        let mut temps = Temps::default();
        // Compute in a type that holds the values exactly enough: int64 for integers,
        // float64 (or complex128) otherwise, then cast, as NumPy fills arange.
        let work = if dtype.is_integer() || dtype.is_bool() {
            DType::Int64
        } else if dtype.is_complex() {
            DType::Complex128
        } else {
            DType::Float64
        };
        let range_t = if work == DType::Complex128 {
            DType::Float64
        } else {
            work
        };
        let res = Arr::new(rt, dtype, &[n])?;
        let idx = if range_t == dtype {
            res.view.clone()
        } else {
            temps.new_view(rt, range_t, &[n])?
        };
        rt::record(rt, Instr::new(Opcode::Range, idx.clone(), [])).py()?;
        let idx = as_dtype(rt, &mut temps, &idx, work)?;
        let step_s = step.to_scalar(work);
        let start_s = start.to_scalar(work);
        let scaled = if step_s.is_one() {
            idx
        } else {
            let t = temps.new_view(rt, work, &[n])?;
            rt::record(
                rt,
                Instr::new(Opcode::Multiply, t.clone(), [idx.into(), step_s.into()]),
            )
            .py()?;
            t
        };
        let shifted = if start_s.is_zero() {
            scaled
        } else {
            let t = if work == dtype {
                res.view.clone()
            } else {
                temps.new_view(rt, work, &[n])?
            };
            rt::record(
                rt,
                Instr::new(Opcode::Add, t.clone(), [scaled.into(), start_s.into()]),
            )
            .py()?;
            t
        };
        if shifted != res.view {
            record_copy(rt, &res.view, shifted.into())?;
        }
        temps.free(rt)?;
        Ok(res)
    })
}

/// `np.full(shape, value, dtype)`.
pub fn full(shape: &[usize], value: Operand, dtype: DType) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, dtype, shape)?;
        if !res.view.is_empty() {
            record_copy(rt, &res.view, value)?;
        }
        Ok(res)
    })
}

/// `np.empty(shape, dtype)`: a base with no instruction yet.
pub fn empty(shape: &[usize], dtype: DType) -> PyResult<Arr> {
    with_rt(|rt| Arr::new(rt, dtype, shape))
}

/// uint64 random bits from the counter-based Philox opcode.
pub fn random_bits(shape: &[usize], seed: u64, stream: u64) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, DType::UInt64, shape)?;
        if !res.view.is_empty() {
            rt::record(
                rt,
                Instr::new(
                    Opcode::Random,
                    res.view.clone(),
                    [Scalar::UInt64(seed).into(), Scalar::UInt64(stream).into()],
                ),
            )
            .py()?;
        }
        Ok(res)
    })
}

/// A fresh array holding a copy of host bytes (C order, `dtype`), written directly into
/// the new base's memory: a new base has no pending instruction, so no flush is needed.
pub fn from_bytes(bytes: &[u8], dtype: DType, shape: &[usize]) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, dtype, shape)?;
        if !bytes.is_empty() {
            let ptr = rt.host_ptr(res.view.base).py()?;
            // SAFETY: the base holds exactly nelem*itemsize bytes == bytes.len() (the
            // caller passes a C-contiguous buffer of `shape` and `dtype`), freshly
            // allocated, so it cannot overlap `bytes`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
            rt.mark_host_written(res.view.base);
        }
        Ok(res)
    })
}

/// The error of the last failed sync, by base. NumPy's `asarray` swallows an error raised
/// by the buffer protocol and retries through `__array__`; by then the failed batch is
/// gone, so `__array__` re-raises the remembered error instead of exposing stale memory.
static FAILED_SYNC: parking_lot::Mutex<Option<(BaseId, PyErr)>> = parking_lot::Mutex::new(None);

/// Takes the remembered sync error of `a`'s base, if its last sync failed.
pub fn take_failed_sync(a: &Arr) -> Option<PyErr> {
    let mut g = FAILED_SYNC.lock();
    match g.take() {
        Some((id, e)) if id == a.view.base => Some(e),
        other => {
            *g = other;
            None
        }
    }
}

/// Forgets a remembered sync error of `a`'s base: its caller raises the error itself, so
/// nothing may raise it again later (the array is readable after a failed batch).
pub fn forget_failed_sync(a: &Arr) {
    let _ = take_failed_sync(a);
}

/// Makes `a`'s base readable on the host and returns a pointer to its first element (of
/// the view). The pointer stays valid while `a` is alive.
pub fn sync_ptr(a: &Arr) -> PyResult<*mut u8> {
    let result = with_rt(|rt| {
        rt.sync(a.view.base).py()?;
        let p = rt.host_ptr(a.view.base).py()?;
        // The exported memory may be written through the buffer: tell device engines.
        rt.mark_host_written(a.view.base);
        Ok(p.wrapping_offset(a.view.offset * a.dtype().size() as isize))
    });
    if result.is_ok() {
        *FAILED_SYNC.lock() = None;
    }
    result
}

/// [`sync_ptr`] for the buffer protocol: a failure is also remembered for the
/// `__array__` retry NumPy makes after swallowing it (see [`FAILED_SYNC`]).
pub fn sync_ptr_for_buffer(a: &Arr) -> PyResult<*mut u8> {
    let result = sync_ptr(a);
    if let Err(e) = &result {
        Python::with_gil(|py| *FAILED_SYNC.lock() = Some((a.view.base, e.clone_ref(py))));
    }
    result
}

/// Reads the single element of a size-1 view.
pub fn read_scalar(a: &Arr) -> PyResult<Scalar> {
    let p = sync_ptr(a)?;
    let n = a.dtype().size();
    // SAFETY: the view is non-empty and in bounds (verified when created); p points at its
    // first element of `n` bytes inside the synced base.
    let bytes = unsafe { std::slice::from_raw_parts(p, n) };
    Scalar::from_le_bytes(a.dtype(), bytes).ok_or_else(|| PyValueError::new_err("short element"))
}

/// One reduction specification after argument parsing.
pub struct ReduceSpec<'a> {
    pub name: &'a str,
    pub axes: Option<Vec<usize>>,
    pub dtype: Option<DType>,
    pub keepdims: bool,
    pub initial: Option<Weak>,
}

/// `np.<ufunc>.reduce` / `sum`/`prod`/`min`/`max`/`any`/`all`/`argmin`/`argmax` along
/// `axes` (None: all), as successive single-axis reductions from the last axis down.
pub fn reduce(py: Python<'_>, a: &Arr, spec: &ReduceSpec<'_>, out: Option<&Arr>) -> PyResult<Arr> {
    let op = types::reduce_opcode(spec.name).ok_or_else(|| {
        UnsupportedError::new_err(format!("hassium cannot reduce with '{}'", spec.name))
    })?;
    let combine = op.info().combine;
    let arg = op.is_arg_reduction();
    let ndim = a.view.ndim();
    let mut axes: Vec<usize> = spec.axes.clone().unwrap_or_else(|| (0..ndim).collect());
    axes.sort_unstable();
    // The accumulation type: NumPy widens bool/small ints for add and multiply; logical
    // reductions work on bools; `dtype=` overrides.
    let t = match (spec.dtype, combine) {
        (Some(d), _) => d,
        (None, Some(Opcode::Add | Opcode::Multiply)) => types::default_sum_dtype(a.dtype()),
        (None, Some(Opcode::LogicalAnd | Opcode::LogicalOr | Opcode::LogicalXor)) => DType::Bool,
        _ => a.dtype(),
    };
    let out_t = op
        .out_dtype(t)
        .ok_or_else(|| match combine.map(|c| resolve_loop(c, t)) {
            Some(Err(NoLoop::Unsupported)) | None => UnsupportedError::new_err(format!(
                "hassium has no {} loop for {}",
                op.name(),
                t.name()
            )),
            _ => py::no_loop_error(
                py,
                combine.map_or(op.name(), |c| c.name()),
                &[t],
                py::Call::Reduce,
            ),
        })?;
    let empty_axis = axes.iter().any(|&ax| a.view.shape[ax] == 0);
    if empty_axis && op.info().identity == hassium_core::Identity::None && spec.initial.is_none() {
        let what = if arg {
            spec.name.to_string()
        } else {
            combine.map_or(spec.name, |c| c.name()).to_string()
        };
        return Err(PyValueError::new_err(if arg {
            format!("attempt to get {what} of an empty sequence")
        } else {
            format!("zero-size array to reduction operation {what} which has no identity")
        }));
    }
    let mut kept: Shape = a.view.shape.clone();
    for &ax in axes.iter().rev() {
        kept.remove(ax);
    }
    if let Some(o) = out {
        let want: Shape = if spec.keepdims {
            keep_shape(a.shape(), &axes)
        } else {
            kept.clone()
        };
        if o.shape() != want.as_slice() {
            return Err(PyValueError::new_err(format!(
                "output parameter for reduction operation {} has the wrong number of dimensions: Found {} but expected {}",
                spec.name,
                o.view.ndim(),
                want.len()
            )));
        }
        // NumPy casts a reduction's result into `out=` unsafely (a float sum into an
        // int8 `out` is its value cast), so any dtype is accepted.
    }
    let res = with_rt(|rt| {
        let mut temps = Temps::default();
        // NumPy sums float16 along the innermost axis pairwise in float32, rounding once;
        // along outer axes it adds in float16 step by step. Follow it.
        let inner = axes.last() == Some(&(ndim.saturating_sub(1)));
        let work = if t == DType::Float16 && combine == Some(Opcode::Add) && inner {
            DType::Float32
        } else {
            t
        };
        let work_out = op.out_dtype(work).unwrap_or(out_t);
        let mut cur = as_dtype(rt, &mut temps, &a.view, work)?;
        let result = if empty_axis
            && spec.initial.is_some()
            && op.info().identity == hassium_core::Identity::None
        {
            // NumPy returns `initial` for empty min/max reductions given one.
            let res = Arr::new(rt, out_t, &kept)?;
            if !res.view.is_empty() {
                record_copy(
                    rt,
                    &res.view,
                    spec.initial
                        .map(|w| w.to_scalar(out_t))
                        .unwrap_or(Scalar::zero(out_t))
                        .into(),
                )?;
            }
            res
        } else if axes.is_empty() {
            let res = Arr::new(rt, out_t, &kept)?;
            if !res.view.is_empty() {
                record_copy(rt, &res.view, cur.into())?;
            }
            res
        } else {
            let mut res = None;
            for (k, &ax) in axes.iter().enumerate().rev() {
                let mut shape = cur.shape.clone();
                shape.remove(ax);
                let step_out = if k == 0 && work_out == out_t {
                    let r = Arr::new(rt, out_t, &shape)?;
                    let v = r.view.clone();
                    res = Some(r);
                    v
                } else {
                    temps.new_view(rt, work_out, &shape)?
                };
                rt::record(
                    rt,
                    Instr::new(op, step_out.clone(), [cur.into()]).with_axis(ax),
                )
                .py()?;
                if k == 0 && work_out != out_t {
                    let r = Arr::new(rt, out_t, &shape)?;
                    if !r.view.is_empty() {
                        record_copy(rt, &r.view, step_out.clone().into())?;
                    }
                    res = Some(r);
                }
                cur = step_out;
            }
            // `axes` is non-empty, so the loop ran and its last step (k == 0) set `res`.
            res.expect("at least one axis reduced")
        };
        if let (Some(init), Some(c)) = (spec.initial, combine) {
            let filled_with_initial =
                empty_axis && op.info().identity == hassium_core::Identity::None;
            if !filled_with_initial && !result.view.is_empty() {
                rt::record(
                    rt,
                    Instr::new(
                        c,
                        result.view.clone(),
                        [result.view.clone().into(), init.to_scalar(out_t).into()],
                    ),
                )
                .py()?;
            }
        }
        temps.free(rt)?;
        Ok(result)
    })?;
    let res = if spec.keepdims {
        let shape = keep_shape(a.shape(), &axes);
        let v = res
            .view
            .reshape(&shape)
            .ok_or_else(|| PyValueError::new_err("keepdims reshape"))?;
        res.with_view(v)
    } else {
        res
    };
    match out {
        Some(o) => {
            assign(py, o, &Arg::Array(res), "unsafe")?;
            Ok(o.clone())
        }
        None => Ok(res),
    }
}

fn keep_shape(shape: &[usize], axes: &[usize]) -> Shape {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect()
}

/// `np.<ufunc>.accumulate` along one axis (`cumsum`, `cumprod`, running extremes).
pub fn accumulate(
    py: Python<'_>,
    a: &Arr,
    name: &str,
    axis: usize,
    dtype: Option<DType>,
    out: Option<&Arr>,
) -> PyResult<Arr> {
    let op = types::accumulate_opcode(name).ok_or_else(|| {
        UnsupportedError::new_err(format!("hassium cannot accumulate with '{name}'"))
    })?;
    // NumPy widens bool and small ints for add and multiply only (as `np.sum` does).
    let t = dtype.unwrap_or_else(|| match op.info().combine {
        Some(Opcode::Add | Opcode::Multiply) => types::default_sum_dtype(a.dtype()),
        _ => a.dtype(),
    });
    op.out_dtype(t).ok_or_else(|| {
        UnsupportedError::new_err(format!(
            "hassium has no {} loop for {}",
            op.name(),
            t.name()
        ))
    })?;
    let res = with_rt(|rt| {
        let temps = Temps::default();
        let res = Arr::new(rt, t, a.shape())?;
        if !res.view.is_empty() {
            record_copy(rt, &res.view, a.view.clone().into())?;
            rt::record(
                rt,
                Instr::new(op, res.view.clone(), [res.view.clone().into()]).with_axis(axis),
            )
            .py()?;
        }
        temps.free(rt)?;
        Ok(res)
    })?;
    match out {
        Some(o) => {
            // NumPy scans in the natural type and casts into `out` unsafely.
            check_out(py, name, o, a.shape(), t, "unsafe")?;
            assign(py, o, &Arg::Array(res), "unsafe")?;
            Ok(o.clone())
        }
        None => Ok(res),
    }
}

/// `out = src_flat[idx]` where `src` is a 1-D view and `idx` an int64 view of out's shape.
pub fn gather(src: &View, idx: &View) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, src.dtype, &idx.shape)?;
        if !res.view.is_empty() {
            rt::record(
                rt,
                Instr::new(
                    Opcode::Gather,
                    res.view.clone(),
                    [src.clone().into(), idx.clone().into()],
                ),
            )
            .py()?;
        }
        Ok(res)
    })
}

/// `target_1d[idx] = values` (or `+=` with `accumulate`), values cast to the target dtype
/// and broadcast to the index shape; values sharing the target's base are copied first.
pub fn scatter(target: &Arr, idx: &View, values: &Arg, accumulate: bool) -> PyResult<()> {
    // `np.add.at` writes as an output (NumPy 2.4 itself writes into a read-only array).
    target.check_writeable(if accumulate {
        Write::Output
    } else {
        Write::Assign
    })?;
    let fitted = fit_value(values, idx.ndim());
    let values = fitted.as_ref().unwrap_or(values);
    let t = target.dtype();
    let op = if accumulate {
        Opcode::ScatterAdd
    } else {
        Opcode::Scatter
    };
    check_stored_int(values, t)?;
    if let Arg::Array(a) = values {
        a.view.broadcast_to(&idx.shape).map_err(|_| {
            PyValueError::new_err(format!(
                "shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
                fmt_shape(a.shape()),
                fmt_shape(&idx.shape)
            ))
        })?;
    }
    with_rt(|rt| {
        let mut temps = Temps::default();
        if idx.is_empty() {
            return Ok(());
        }
        let val = match values {
            Arg::Array(a) => {
                let mut v = a.view.clone();
                if v.dtype != t || v.base == target.view.base {
                    let c = temps.new_view(rt, t, &v.shape)?;
                    record_copy(rt, &c, v.into())?;
                    v = c;
                }
                Operand::View(v.broadcast_to(&idx.shape).py()?)
            }
            Arg::Typed(s) => Operand::Scalar(s.cast(t)),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(t)),
        };
        rt::record(
            rt,
            Instr::new(op, target.view.clone(), [idx.clone().into(), val]),
        )
        .py()?;
        temps.free(rt)
    })
}

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
    rt: &mut Runtime,
    temps: &mut Temps,
    a: &View,
    b: &View,
    out: &View,
) -> PyResult<()> {
    let nd = a.ndim();
    let column = b.index(nd - 1, 0).py()?;
    let res = out.index(nd - 1, 0).py()?;
    // batch + (n, k), the column broadcast along n; with n == 1 the unit axis is dropped,
    // as a reduction of shape (1, k) would run on one thread.
    let (x, y, res) = if a.shape[nd - 2] == 1 {
        (a.index(nd - 2, 0).py()?, column, res.index(nd - 2, 0).py()?)
    } else {
        let row = column.expand_dims(nd - 2).py()?;
        (a.clone(), row.broadcast_to(&a.shape).py()?, res)
    };
    let sum_axis = x.ndim() - 1;
    let prod = temps.new_view(rt, a.dtype, &x.shape)?;
    rt::record(
        rt,
        Instr::new(Opcode::Multiply, prod.clone(), [x.into(), y.into()]),
    )
    .py()?;
    rt::record(
        rt,
        Instr::new(Opcode::AddReduce, res, [prod.into()]).with_axis(sum_axis),
    )
    .py()
}

/// `a @ b` for 1-D and 2-D operands, and stacks of matrices by looping over the leading
/// dimensions (each 2-D product is one `matmul` extension instruction, unless the right
/// side is one column: [`record_matrix_vector`]).
pub fn matmul(py: Python<'_>, a: &Arr, b: &Arr, out: Option<&Arr>) -> PyResult<Arr> {
    if a.view.ndim() == 0 || b.view.ndim() == 0 {
        return Err(PyValueError::new_err(
            "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
        ));
    }
    let t = promote(a.dtype(), b.dtype());
    let av = if a.view.ndim() == 1 {
        a.view.expand_dims(0).py()?
    } else {
        a.view.clone()
    };
    let bv = if b.view.ndim() == 1 {
        b.view.expand_dims(1).py()?
    } else {
        b.view.clone()
    };
    let (n, k) = (av.shape[av.ndim() - 2], av.shape[av.ndim() - 1]);
    let (k2, m) = (bv.shape[bv.ndim() - 2], bv.shape[bv.ndim() - 1]);
    if k != k2 {
        return Err(PyValueError::new_err(format!(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})"
        )));
    }
    // NumPy's boolean matmul is an OR of ANDs: the count of true products, which cannot
    // wrap in a type wider than k, is non-zero exactly where it is true.
    let lt = match t {
        DType::Bool if k < i32::MAX as usize => DType::Int32,
        DType::Bool => DType::Int64,
        _ => t,
    };
    let batch = broadcast_shapes(&av.shape[..av.ndim() - 2], &bv.shape[..bv.ndim() - 2]).py()?;
    let mut full: Shape = batch.clone();
    full.push(n);
    full.push(m);
    let mut final_shape: Shape = batch.clone();
    if a.view.ndim() > 1 {
        final_shape.push(n);
    }
    if b.view.ndim() > 1 {
        final_shape.push(m);
    }
    let res = with_rt(|rt| {
        let mut temps = Temps::default();
        let av = as_dtype(rt, &mut temps, &av, lt)?;
        let bv = as_dtype(rt, &mut temps, &bv, lt)?;
        let mut ash: Shape = batch.clone();
        ash.extend([n, k]);
        let mut bsh: Shape = batch.clone();
        bsh.extend([k, m]);
        let av = av.broadcast_to(&ash).py()?;
        let bv = bv.broadcast_to(&bsh).py()?;
        let res = Arr::new(rt, lt, &full)?;
        if res.view.is_empty() {
            return Ok(res);
        }
        if k == 0 {
            record_copy(rt, &res.view, Scalar::zero(lt).into())?;
        } else if m == 1 && lt != DType::Float16 {
            record_matrix_vector(rt, &mut temps, &av, &bv, &res.view)?;
        } else {
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
                rt::record(
                    rt,
                    Instr::extension(
                        "matmul",
                        pick(&res.view),
                        [pick(&av).into(), pick(&bv).into()],
                    ),
                )
                .py()?;
            }
        }
        temps.free(rt)?;
        Ok(res)
    })?;
    let v = res
        .view
        .reshape(&final_shape)
        .ok_or_else(|| PyValueError::new_err("matmul reshape"))?;
    let mut res = res.with_view(v);
    if t == DType::Bool {
        res = elementwise(
            py,
            Opcode::NotEqual,
            &[Arg::Array(res), Arg::Typed(Scalar::zero(lt))],
            &Dest::NEW,
            None,
        )?;
    }
    match out {
        Some(o) => {
            check_out(py, "matmul", o, &final_shape, t, "same_kind")?;
            assign(py, o, &Arg::Array(res), "unsafe")?;
            Ok(o.clone())
        }
        None => Ok(res),
    }
}

/// Flushes everything recorded so far.
pub fn flush() -> PyResult<()> {
    with_rt(|rt| rt.flush().py())
}

/// Records an in-place `Where(mask, value, a) -> a` (boolean-mask assignment of a scalar).
pub fn masked_fill(a: &Arr, mask: &Arr, value: &Arg) -> PyResult<()> {
    a.check_writeable(Write::Assign)?;
    let t = a.dtype();
    let shape = a.view.shape.clone();
    if mask.shape() != shape.as_slice() {
        return Err(hassium_index_mismatch(mask.shape(), &shape));
    }
    check_stored_int(value, t)?;
    with_rt(|rt| {
        let mut temps = Temps::default();
        if a.view.is_empty() {
            return Ok(());
        }
        let m = operand(
            rt,
            &mut temps,
            &Arg::Array(mask.clone()),
            DType::Bool,
            &shape,
            Some(&a.view),
        )?;
        let v = operand(rt, &mut temps, value, t, &shape, Some(&a.view))?;
        rt::record(
            rt,
            Instr::new(Opcode::Where, a.view.clone(), [m, v, a.view.clone().into()]),
        )
        .py()?;
        temps.free(rt)
    })
}

fn hassium_index_mismatch(mask: &[usize], shape: &[usize]) -> PyErr {
    let axis = mask
        .iter()
        .zip(shape)
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    pyo3::exceptions::PyIndexError::new_err(format!(
        "boolean index did not match indexed array along axis {axis}; size of axis is {} but size of corresponding boolean axis is {}",
        shape.get(axis).copied().unwrap_or(0),
        mask.get(axis).copied().unwrap_or(0)
    ))
}
