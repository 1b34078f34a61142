//! The recorder's building blocks: where instructions go, the bases one operation
//! creates, and the steps every operation shares (cast an input, broadcast it, put the
//! result into `out=`).

use crate::args::Arg;
use crate::error::{Error, Result};
use hassium_core::resolve::can_cast;
use hassium_core::{
    broadcast_shapes, fmt_shape, overlap, same_shape, BaseId, DType, Instr, Opcode, Operand,
    Overlap, Shape, View,
};
use hassium_vem::Runtime;
use smallvec::SmallVec;

/// What the recorder records into: the runtime, seen through the bridge, which may watch
/// the instructions go by (the Python bridge syncs bases with live host views).
pub trait Target {
    fn runtime(&mut self) -> &mut Runtime;

    fn record(&mut self, instr: Instr) -> Result<()> {
        Ok(self.runtime().record(instr)?)
    }
}

impl Target for Runtime {
    fn runtime(&mut self) -> &mut Runtime {
        self
    }
}

/// Where a result goes: a fresh array, or an existing one (`out=`, in-place operators,
/// C's `hs_op`), into which it is cast under `casting`.
#[derive(Clone, Copy)]
pub struct Dest<'a> {
    pub out: Option<&'a View>,
    /// NumPy's `casting=` for the output ("same_kind" unless told).
    pub casting: &'a str,
}

impl Dest<'static> {
    pub const NEW: Dest<'static> = Dest {
        out: None,
        casting: "same_kind",
    };
}

impl<'a> Dest<'a> {
    pub fn into(out: Option<&'a View>, casting: &'a str) -> Dest<'a> {
        Dest { out, casting }
    }
}

/// The element count of a new array of `shape`, refused as NumPy refuses it at creation:
/// too many dimensions or bytes beyond an `isize` are a `ValueError`, more than the
/// system would allocate (see [`allocation_limit`]) a `MemoryError`. A lazy array
/// allocates only at its first use; without this, the error would come there.
pub fn checked_nelem(dtype: DType, shape: &[usize]) -> Result<usize> {
    check_ndim(shape.len())?;
    let n = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| {
            n.checked_mul(dtype.size())
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or(Error::TooBig)?;
    if n * dtype.size() > allocation_limit() {
        return Err(Error::NoMemory {
            dtype,
            shape: shape.to_vec(),
        });
    }
    Ok(n)
}

/// NumPy's error for more dimensions than an array may have, with Hassium's limit.
pub fn check_ndim(ndim: usize) -> Result<()> {
    if ndim > hassium_core::MAX_DIMS {
        return Err(Error::Value(format!(
            "maximum supported dimension for an ndarray is currently {}, found {ndim}",
            hassium_core::MAX_DIMS
        )));
    }
    Ok(())
}

/// The largest allocation Linux grants outright under its overcommit policy
/// (`vm.overcommit_memory`): memory plus swap under the default heuristic (0), the commit
/// limit under strict accounting (2, ignoring what is committed already), no limit when
/// it always overcommits (1) or where `/proc` does not say.
fn allocation_limit() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory");
        let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
            return usize::MAX;
        };
        let kib = |key: &str| -> Option<usize> {
            let line = info.lines().find(|l| l.starts_with(key))?;
            line[key.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        };
        let limit = match mode.as_deref().map(str::trim) {
            Ok("0") => kib("MemTotal:").zip(kib("SwapTotal:")).map(|(m, s)| m + s),
            Ok("2") => kib("CommitLimit:"),
            _ => None,
        };
        limit.map_or(usize::MAX, |k| k.saturating_mul(1024))
    })
}

/// A new contiguous base of `shape`, checked as NumPy checks a new array.
pub fn new_view(t: &mut impl Target, dtype: DType, shape: &[usize]) -> Result<View> {
    let n = checked_nelem(dtype, shape)?;
    let base = t.runtime().new_base(dtype, n);
    Ok(View::contiguous(base.id, dtype, shape))
}

/// The bases one operation creates: temporaries, freed once it is recorded (so the fuser
/// may keep them in registers), and fresh results, handed to the caller on success and
/// freed with the temporaries on failure, so that a refused operation leaves nothing.
#[derive(Default)]
pub struct Temps {
    tmp: SmallVec<[BaseId; 4]>,
    fresh: SmallVec<[BaseId; 2]>,
}

impl Temps {
    /// A temporary contiguous view.
    pub fn view(&mut self, t: &mut impl Target, dtype: DType, shape: &[usize]) -> Result<View> {
        let v = new_view(t, dtype, shape)?;
        self.tmp.push(v.base);
        Ok(v)
    }

    /// A fresh contiguous array that the caller will own.
    pub fn fresh(&mut self, t: &mut impl Target, dtype: DType, shape: &[usize]) -> Result<View> {
        let v = new_view(t, dtype, shape)?;
        self.fresh.push(v.base);
        Ok(v)
    }

    /// A result array: fresh for the caller, or a temporary when it will be copied into
    /// an `out=` array.
    pub fn result(
        &mut self,
        t: &mut impl Target,
        into_out: bool,
        dtype: DType,
        shape: &[usize],
    ) -> Result<View> {
        if into_out {
            self.view(t, dtype, shape)
        } else {
            self.fresh(t, dtype, shape)
        }
    }

    /// Ends the operation: frees the temporaries, and the fresh arrays too when it failed.
    pub fn close<R>(self, t: &mut impl Target, r: Result<R>) -> Result<R> {
        let mut freed = Ok(());
        let fresh = if r.is_err() { &self.fresh[..] } else { &[] };
        for &id in self.tmp.iter().chain(fresh) {
            freed = freed.and(t.runtime().free(id).map_err(Error::from));
        }
        let v = r?;
        freed.map(|()| v)
    }
}

/// Runs one operation's recording with its own [`Temps`], closed whatever happens.
pub fn recording<T: Target, R>(
    t: &mut T,
    f: impl FnOnce(&mut T, &mut Temps) -> Result<R>,
) -> Result<R> {
    let mut temps = Temps::default();
    let r = f(t, &mut temps);
    temps.close(t, r)
}

/// Records `out = src` with NumPy's `astype` conversion (shapes already agree); nothing
/// for an empty output.
pub fn copy_into(t: &mut impl Target, out: &View, src: Operand) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    t.record(Instr::new(Opcode::Identity, out.clone(), [src]))
}

/// `src` as dtype `d`: itself, or a cast copy in a temporary.
pub fn as_dtype(t: &mut impl Target, temps: &mut Temps, src: &View, d: DType) -> Result<View> {
    if src.dtype == d {
        return Ok(src.clone());
    }
    let tmp = temps.view(t, d, &src.shape)?;
    copy_into(t, &tmp, src.clone().into())?;
    Ok(tmp)
}

/// A private copy of `src` (same dtype), for inputs that partially overlap an output.
pub fn private_copy(t: &mut impl Target, temps: &mut Temps, src: &View) -> Result<View> {
    let tmp = temps.view(t, src.dtype, &src.shape)?;
    copy_into(t, &tmp, src.clone().into())?;
    Ok(tmp)
}

/// `v` as a 1-D view of its elements in C order (copied when the strides do not allow a
/// view).
pub fn flatten(t: &mut impl Target, temps: &mut Temps, v: &View) -> Result<View> {
    let n = v.nelem();
    if let Some(f) = v.reshape(&[n]) {
        return Ok(f);
    }
    let c = private_copy(t, temps, v)?;
    Ok(c.reshape(&[n]).expect("a contiguous view reshapes to 1-D"))
}

/// An input as an operand of dtype `l` broadcast to `shape`; privately copied when it
/// partially overlaps the output (the bytecode forbids that; NumPy copies too). A cast
/// is made at the input's own shape, then broadcast (for a gather's indices, whose
/// instruction runs alone, the smaller array).
pub fn operand(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &Arg,
    l: DType,
    shape: &[usize],
    out: Option<&View>,
) -> Result<Operand> {
    cast_operand(t, temps, a, l, shape, out, 1)
}

/// How much larger than an input an elementwise loop may be for the input's cast to be
/// made at the loop's shape (see [`loop_operand`]).
pub const CAST_SPREAD: usize = 8;

/// [`operand`] for an elementwise instruction. An input the loop broadcasts to at most
/// [`CAST_SPREAD`] times its size is cast after broadcasting: the cast then has the
/// loop's shape and fuses into it, where a cast at the input's shape is a kernel of its
/// own that writes its result to memory (`points * mask[:, None]`: a float64 copy of
/// the mask per use). A larger spread (a scalar array, a row against a matrix) keeps
/// the small cast.
pub fn loop_operand(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &Arg,
    l: DType,
    shape: &[usize],
    out: Option<&View>,
) -> Result<Operand> {
    cast_operand(t, temps, a, l, shape, out, CAST_SPREAD)
}

fn cast_operand(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &Arg,
    l: DType,
    shape: &[usize],
    out: Option<&View>,
    spread: usize,
) -> Result<Operand> {
    Ok(match a {
        Arg::Array(x) => {
            let broadcast = !same_shape(&x.shape, shape);
            let loop_elems = shape.iter().product::<usize>();
            let mut v = if x.dtype != l
                && broadcast
                && loop_elems <= spread.saturating_mul(x.nelem().max(1))
            {
                as_dtype(t, temps, &x.broadcast_to(shape)?, l)?
            } else {
                let v = as_dtype(t, temps, x, l)?;
                if broadcast {
                    v.broadcast_to(shape)?
                } else {
                    v
                }
            };
            if out.is_some_and(|o| overlap(o, &v) == Overlap::Partial) {
                // Only a view of `l` already (no cast copy) can overlap the output.
                v = private_copy(t, temps, x)?.broadcast_to(shape)?;
            }
            Operand::View(v)
        }
        Arg::Typed(s) => Operand::Scalar(s.cast(l)),
        Arg::Weak(w) => Operand::Scalar(w.to_scalar(l)),
    })
}

/// Checks an output for a result of `shape` and dtype `o`: the result must broadcast to
/// it (never the other way round) and cast to it under `casting`.
pub fn check_out(
    ufunc: &'static str,
    out: &View,
    shape: &[usize],
    o: DType,
    casting: &str,
) -> Result<()> {
    let b = broadcast_shapes(&out.shape, shape).ok();
    if b.as_deref() != Some(&out.shape[..]) {
        return Err(Error::Shape(format!(
            "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
            fmt_shape(&out.shape),
            fmt_shape(&b.unwrap_or_else(|| shape.into()))
        )));
    }
    check_casting(ufunc, None, o, out.dtype, casting)
}

/// NumPy's casting check of one ufunc operand (`input`: `None` for the output).
pub fn check_casting(
    ufunc: &'static str,
    input: Option<usize>,
    from: DType,
    to: DType,
    casting: &str,
) -> Result<()> {
    match can_cast(from, to, casting) {
        Some(true) => Ok(()),
        Some(false) => Err(Error::Casting {
            ufunc,
            input,
            from,
            to,
            casting: casting.to_string(),
        }),
        None => Err(Error::Value(format!(
            "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got '{casting}')"
        ))),
    }
}

/// The output slot of an instruction before [`finish`] picks its destination: only the
/// dtype and shape are read (strides are not computed: this is the hot path).
pub fn placeholder(dtype: DType, shape: &[usize]) -> View {
    View {
        base: BaseId(0),
        dtype,
        offset: 0,
        shape: Shape::from_slice(shape),
        strides: Default::default(),
    }
}

/// Records `instr` (whose `out` is a placeholder of the result's dtype and shape) into
/// `out` when given, casting and broadcasting into it, or into a fresh array. Returns
/// the view the result is in.
pub fn finish(
    t: &mut impl Target,
    temps: &mut Temps,
    mut instr: Instr,
    out: Option<&View>,
) -> Result<View> {
    let o = instr.out.dtype;
    let shape = instr.out.shape.clone();
    let direct = match out {
        None => temps.fresh(t, o, &shape)?,
        Some(v) if v.dtype == o && same_shape(&v.shape, &shape) => v.clone(),
        Some(_) => temps.view(t, o, &shape)?,
    };
    instr.out = direct.clone();
    if !direct.is_empty() {
        t.record(instr)?;
    }
    match out {
        Some(v) if *v != direct => deliver(t, direct, Some(v)),
        _ => Ok(direct),
    }
}

/// The view an operation returns: `res` itself, or `out` after `res` is copied
/// (broadcast and cast) into it.
pub fn deliver(t: &mut impl Target, res: View, out: Option<&View>) -> Result<View> {
    let Some(o) = out else { return Ok(res) };
    let src = if same_shape(&o.shape, &res.shape) {
        res
    } else {
        res.broadcast_to(&o.shape)?
    };
    copy_into(t, o, src.into())?;
    Ok(o.clone())
}
