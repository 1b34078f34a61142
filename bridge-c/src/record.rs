//! The C API's side of recording: C's conventions (an axis number with `HS_AXIS_ALL`,
//! `hs_op`'s one entry point for every opcode class, casts into `out` as `astype` would)
//! mapped onto `hassium_record`, which both bridges share.

use crate::ctypes::hs_status;
use crate::error::{Fail, Result};
use crate::state::State;
use hassium_core::{DType, OpClass, Opcode, Scalar, View};
pub use hassium_record::Arg;
use hassium_record::{Dest, ReduceSpec, Target, Weak};
use hassium_vem::Runtime;

impl Target for State {
    fn runtime(&mut self) -> &mut Runtime {
        &mut self.rt
    }
}

impl From<hassium_record::Error> for Fail {
    fn from(e: hassium_record::Error) -> Fail {
        use hassium_record::Error as E;
        let status = match e {
            E::Runtime(r) => return Fail::from(r),
            E::Bytecode(b) => return Fail::from(b),
            E::IntOutOfBounds { value, dtype } => {
                return Fail::new(
                    hs_status::HS_ERR_BOUNDS,
                    format!(
                        "integer scalar {value} is out of bounds for {}",
                        dtype.name()
                    ),
                )
            }
            E::Overflow(_) | E::Index(_) => hs_status::HS_ERR_BOUNDS,
            E::Type(_) | E::NoLoop { .. } | E::Casting { .. } | E::Unsupported(_) => {
                hs_status::HS_ERR_DTYPE
            }
            E::Shape(_) => hs_status::HS_ERR_SHAPE,
            E::Value(_) => hs_status::HS_ERR_INVALID,
            E::TooBig | E::NoMemory { .. } => hs_status::HS_ERR_NOMEM,
        };
        Fail::new(status, e.to_string())
    }
}

/// C's results are cast into `out` whatever its dtype, as `astype` would.
fn into(out: Option<&View>) -> Dest<'_> {
    Dest::into(out, "unsafe")
}

/// An elementwise opcode into `out` or a new array.
pub fn elementwise(st: &mut State, op: Opcode, args: &[Arg], out: Option<&View>) -> Result<View> {
    Ok(hassium_record::elementwise(st, op, args, &into(out), None)?)
}

/// Normalises an axis argument: `None` for [`crate::HS_AXIS_ALL`], else NumPy's rule
/// (negative counts from the end).
pub fn axis_arg(v: &View, axis: i64) -> Result<Option<usize>> {
    if axis == crate::HS_AXIS_ALL {
        return Ok(None);
    }
    let ax = isize::try_from(axis).map_err(|_| {
        Fail::new(
            hs_status::HS_ERR_AXIS,
            format!(
                "axis {axis} is out of bounds for array of dimension {}",
                v.ndim()
            ),
        )
    })?;
    Ok(Some(v.axis(ax)?))
}

/// A reduction along `axis` (or all axes), into `out` (of exactly the result's shape) or
/// a new array. argmin/argmax over all axes index the flattened array, as NumPy's do.
pub fn reduce(st: &mut State, op: Opcode, a: &View, axis: i64, out: Option<&View>) -> Result<View> {
    if !op.is_reduction() {
        return Err(Fail::invalid(format!("{} is not a reduction", op.name())));
    }
    let spec = ReduceSpec {
        op,
        name: op.name(),
        axes: axis_arg(a, axis)?.map(|ax| vec![ax]),
        dtype: None,
        keepdims: false,
        initial: None,
    };
    Ok(hassium_record::reduce(st, a, &spec, out)?)
}

/// A scan (cumsum, cumprod) along `axis`, or over the flattened array for
/// [`crate::HS_AXIS_ALL`], as NumPy's `cumsum(axis=None)`.
pub fn scan(st: &mut State, op: Opcode, a: &View, axis: i64, out: Option<&View>) -> Result<View> {
    let axis = axis_arg(a, axis)?;
    Ok(hassium_record::scan(st, op, a, axis, None, out)?)
}

/// `a @ b` with NumPy's `matmul` rules, into `out` or a new array.
pub fn matmul(st: &mut State, a: &View, b: &View, out: Option<&View>) -> Result<View> {
    Ok(hassium_record::matmul(st, a, b, out)?)
}

/// A stable sort of `a` along `axis` (NaN last), or with `indices` the int64 order that
/// sorts it; [`crate::HS_AXIS_ALL`] sorts the flattened array.
pub fn sort(st: &mut State, a: &View, axis: i64, indices: bool) -> Result<View> {
    match axis_arg(a, axis)? {
        Some(ax) => Ok(hassium_record::sort(st, a, ax, indices)?),
        None => {
            let flat = reshape(st, a, &[-1])?;
            Ok(hassium_record::sort(st, &flat, 0, indices)?)
        }
    }
}

/// Where each element of `needles` goes in the sorted 1-D `hay` (before equal elements,
/// or after them with `right`), as int64.
pub fn searchsorted(st: &mut State, hay: &View, needles: &View, right: bool) -> Result<View> {
    Ok(hassium_record::searchsorted(st, hay, needles, right)?)
}

fn array<'a>(a: &'a Arg, what: &str) -> Result<&'a View> {
    a.view()
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
    if op.class() != OpClass::Elementwise {
        hassium_record::check_nin(op, args.len())?;
    }
    match op.class() {
        OpClass::Elementwise => elementwise(st, op, args, out),
        OpClass::Reduce | OpClass::Scan => {
            let a = array(&args[0], "input 0")?.clone();
            if op.is_scan() {
                scan(st, op, &a, axis, out)
            } else {
                reduce(st, op, &a, axis, out)
            }
        }
        OpClass::Generator => {
            let out = out.ok_or_else(need_out)?;
            let key = args
                .iter()
                .enumerate()
                .map(|(k, a)| match a {
                    // Seeds and streams are 64-bit patterns: an int64 -1 means all bits set.
                    Arg::Weak(Weak::Int(v)) => Ok(*v as u64),
                    _ => Err(Fail::invalid(format!(
                        "input {k} of {} must be an integer scalar",
                        op.name()
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            hassium_record::generate(st, op, out, &key)?;
            Ok(out.clone())
        }
        OpClass::Index if op == Opcode::Gather => {
            let src = array(&args[0], "the source")?.clone();
            array(&args[1], "the index")?;
            Ok(hassium_record::gather(st, &src, &args[1], out)?)
        }
        OpClass::Index => {
            let target = out.ok_or_else(need_out)?;
            array(&args[0], "the index")?;
            hassium_record::scatter(st, op, target, &args[0], &args[1], args.get(2))?;
            Ok(target.clone())
        }
        OpClass::Extension => Err(Fail::invalid(
            "extension methods have their own functions: use hs_matmul, hs_sort, hs_argsort or hs_searchsorted",
        )),
        OpClass::System => Err(Fail::invalid(format!(
            "{} is run by the runtime: use hs_free, hs_sync or hs_flush",
            op.name()
        ))),
    }
}

/// `np.full(shape, value, dtype)`.
pub fn full(st: &mut State, dtype: DType, shape: &[usize], value: Scalar) -> Result<View> {
    Ok(hassium_record::full(st, shape, value.into(), dtype)?)
}

/// `np.arange`-like: `start + i*step` for i in 0..n, computed in int64 for integer dtypes
/// (start and step truncated) and in float64 otherwise, then cast to `dtype`.
pub fn range(st: &mut State, dtype: DType, start: f64, step: f64, n: usize) -> Result<View> {
    crate::args::check_size(&[n])?;
    let (start, step) = (Weak::Float(start), Weak::Float(step));
    Ok(hassium_record::arange(st, start, step, n, dtype)?)
}

/// Uniform float64 in [0, 1) from the Philox stream `(seed, stream)`.
pub fn random(st: &mut State, seed: u64, stream: u64, shape: &[usize]) -> Result<View> {
    Ok(hassium_record::uniform(st, shape, seed, stream)?)
}

/// A C-contiguous copy of `v` with dtype `dtype` (`astype`, `copy`).
pub fn astype(st: &mut State, v: &View, dtype: DType) -> Result<View> {
    Ok(hassium_record::cast_copy(st, v, dtype)?)
}

/// `reshape` with NumPy's rules (one negative entry, `-1` by convention, is inferred): a
/// view when the strides allow it, else a copy.
pub fn reshape(st: &mut State, v: &View, req: &[i64]) -> Result<View> {
    crate::args::check_ndim(req.len())?;
    let shape = hassium_record::resolve_shape(v.nelem(), req)?;
    crate::args::check_size(&shape)?;
    Ok(hassium_record::reshape(st, v, &shape)?)
}
