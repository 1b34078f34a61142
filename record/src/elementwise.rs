//! Elementwise operations and assignments: NumPy's type resolution (with `dtype=` and
//! `casting=`), broadcasting, and overlap handling, recorded as one instruction plus
//! the casts and copies it needs.

use crate::args::{
    broadcast_all, check_c_long, check_stored_int, check_weak_ints, result_type, Arg, Weak,
};
use crate::base::{
    check_casting, check_out, copy_into, finish, loop_operand, placeholder, private_copy,
    recording, Dest, Target,
};
use crate::error::{Call, Error, Result};
use hassium_core::resolve::{resolve_loop, resolve_loop_of, NoLoop};
use hassium_core::{fmt_shape, overlap, DType, Instr, Opcode, Operand, Operands, Overlap, View};

/// The error for a loop that `resolve_loop` refused, in NumPy's terms.
fn loop_error(op: Opcode, t: DType, e: NoLoop, nin: usize, call: Call) -> Error {
    match e {
        NoLoop::Message(m) => Error::Type(m),
        NoLoop::NoNumpyLoop => Error::NoLoop {
            ufunc: op.name(),
            types: vec![t; nin],
            call,
        },
        NoLoop::Unsupported => Error::Unsupported(format!(
            "hassium has no {} loop for {}; NumPy does",
            op.name(),
            t.name()
        )),
    }
}

/// Refuses a call with the wrong number of inputs.
pub fn check_nin(op: Opcode, n: usize) -> Result<()> {
    if n != op.nin() {
        return Err(Error::Value(format!(
            "{} takes {} inputs, got {n}",
            op.name(),
            op.nin()
        )));
    }
    Ok(())
}

/// What [`resolve`] depends on, packed, when that is only the opcode and the operands'
/// types: no `dtype=`, not a copy, and no Python int among the operands (whose value
/// NumPy range-checks). A strong operand counts by its dtype, a weak one by its kind.
fn resolve_key(op: Opcode, values: &[Arg], dtype: Option<DType>) -> Option<u64> {
    if dtype.is_some() || op == Opcode::Identity || values.len() > 3 {
        return None;
    }
    let mut key = (op as u64) << 32 | (values.len() as u64) << 24;
    for (k, a) in values.iter().enumerate() {
        let code = match a {
            Arg::Array(v) => v.dtype as u64,
            Arg::Typed(s) => s.dtype() as u64,
            Arg::Weak(Weak::Int(_)) => return None,
            Arg::Weak(w) => 0x80 | w.kind() as u64,
        };
        key |= code << (8 * k);
    }
    Some(key)
}

/// Recently resolved types by [`resolve_key`], direct-mapped: a loop records the same
/// few operations over and over, and resolving is a good part of recording one.
const RESOLVED_SLOTS: usize = 64;

type Resolved = std::cell::Cell<(u64, DType, DType)>;

thread_local! {
    static RESOLVED: [Resolved; RESOLVED_SLOTS] =
        const { [const { Resolved::new((u64::MAX, DType::Bool, DType::Bool)) }; RESOLVED_SLOTS] };
}

/// The loop dtype `l` and output dtype `o` of elementwise `op` over `values`, with
/// NumPy's `dtype=` (the output's dtype, naming the loop) and its casting checks.
fn resolve(
    op: Opcode,
    values: &[Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> Result<(DType, DType)> {
    let Some(key) = resolve_key(op, values, dtype) else {
        return resolve_types(op, values, dest, dtype);
    };
    let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize;
    let seen = RESOLVED.with(|r| r[slot].get());
    if seen.0 == key {
        return Ok((seen.1, seen.2));
    }
    let (l, o) = resolve_types(op, values, dest, dtype)?;
    RESOLVED.with(|r| r[slot].set((key, l, o)));
    Ok((l, o))
}

/// [`resolve`] worked out.
fn resolve_types(
    op: Opcode,
    values: &[Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> Result<(DType, DType)> {
    let n = values.len();
    // `dtype=` fixes the output's dtype (NumPy's `signature=(None, ..., dtype)`). When the
    // inputs' own loop already gives it, as `less(ints, floats, dtype=bool)`, nothing
    // changes; otherwise the loop of that dtype computes, and it must give that dtype.
    // A weak int is range-checked against the loop it converts to: an integer loop takes
    // only its dtype's range (`add(uint8s, -1)` is NumPy's OverflowError), a float loop of
    // integer inputs takes any (`arctan2(uint8s, -1)` and `uint8s / -1` compute), and so
    // does the bool loop of the logical ufuncs, through a C long (`check_weak_ints`).
    let promoted = result_type(values);
    let weak_int = values.iter().any(|a| matches!(a, Arg::Weak(Weak::Int(_))));
    let float_loop = weak_int
        && !promoted.is_inexact()
        && resolve_loop(op, promoted).is_ok_and(|l| l.is_inexact());
    let natural = if float_loop {
        Ok(promoted)
    } else {
        check_weak_ints(op, values, promoted)
    };
    // NumPy's loop search takes strong inputs one by one (`resolve_loop_of`); a weak scalar
    // takes the type of the others, so with one it is their promotion's loop. Only an
    // opcode without a loop of the promotion looks further (no allocation otherwise:
    // this runs for every recorded operation).
    let loop_of = |t: DType| {
        if op.info().types.contains(t) {
            return resolve_loop(op, t);
        }
        match values
            .iter()
            .map(Arg::strong_dtype)
            .collect::<Option<Vec<_>>>()
        {
            Some(inputs) => resolve_loop_of(op, t, &inputs),
            None => resolve_loop(op, t),
        }
    };
    let mut dtype = dtype;
    if let (Some(d), Ok(t)) = (dtype, &natural) {
        match loop_of(*t) {
            Ok(l) if op.out_dtype(l) == Some(d) => dtype = None,
            // Complex ordering and the like: the package falls back to NumPy, `dtype=` too.
            Err(NoLoop::Unsupported) => {
                return Err(loop_error(op, *t, NoLoop::Unsupported, n, Call::Dtype(d)))
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
    if op == Opcode::Identity {
        // A plain copy: computed in the inputs' type, cast into the output's.
        return Ok((t, dest.out.map_or(t, |v| v.dtype)));
    }
    let call = dtype.map_or(Call::Plain, Call::Dtype);
    let l = if dtype.is_some() {
        resolve_loop(op, t)
    } else {
        loop_of(t)
    }
    .map_err(|e| loop_error(op, t, e, n, call))?;
    // Before any cast is checked: with no loop giving that dtype, NumPy says so first.
    let no_loop = |types: DType| Error::NoLoop {
        ufunc: op.name(),
        types: vec![types; n],
        call,
    };
    let o = op
        .out_dtype(l)
        .filter(|&o| dtype.is_none_or(|d| o == d))
        .ok_or_else(|| no_loop(l))?;
    if dtype.is_some() {
        if l != t {
            // `dtype=` names the loop; NumPy refuses when no loop has exactly that type.
            return Err(Error::NoLoop {
                ufunc: op.name(),
                types: vec![t; n],
                call: Call::Dtype(t),
            });
        }
        // The inputs are cast to the loop under the ufunc's casting rule (a weak scalar
        // as its default type): `add(floats, 1, dtype=int8)` is refused. A weak int
        // becomes a bool first, through a C long: `add(bools, 2**63, dtype=bool)` is
        // NumPy's OverflowError before its casting error.
        for a in values {
            if let (DType::Bool, Arg::Weak(Weak::Int(v))) = (l, a) {
                check_c_long(*v)?;
            }
        }
        for (i, a) in values.iter().enumerate() {
            check_casting(op.name(), Some(i), a.cast_from(), l, dest.casting)?;
        }
    }
    Ok((l, o))
}

/// Applies elementwise `op` with NumPy's type resolution and broadcasting, into
/// `dest.out` (cast under `dest.casting`) or a fresh array, whose view it returns.
/// `Where` takes its condition first (as bool) and promotes only the two values.
pub fn elementwise(
    t: &mut impl Target,
    op: Opcode,
    args: &[Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> Result<View> {
    check_nin(op, args.len())?;
    let (mask, values) = if op == Opcode::Where {
        (Some(&args[0]), &args[1..])
    } else {
        (None, args)
    };
    let (l, o) = resolve(op, values, dest, dtype)?;
    if let Some(out) = dest.out {
        // NumPy checks the casts with the loop, before the shapes broadcast.
        check_casting(op.name(), None, o, out.dtype, dest.casting)?;
    }
    let mut shape = broadcast_all(args)?;
    if let Some(out) = dest.out {
        check_out(op.name(), out, &shape, o, dest.casting)?;
        shape = out.shape.clone();
    }
    recording(t, |t, temps| {
        // Inputs are written over only when the result goes straight into `out`.
        let direct = dest.out.filter(|v| v.dtype == o);
        let mut ins = Operands::new();
        if let Some(m) = mask {
            ins.push(loop_operand(t, temps, m, DType::Bool, &shape, direct)?);
        }
        for a in values {
            ins.push(loop_operand(t, temps, a, l, &shape, direct)?);
        }
        // NumPy's float32/float64 power loops square for a scalar exponent of 2, take
        // the reciprocal for -1 and the square root for one half (so `power(-0.0, 0.5)`
        // is -0.0 and `power(-inf, 0.5)` NaN, where C's `pow` gives 0 and inf, and
        // `power(3.0, -1)` is 1/3 correctly rounded); an array exponent goes to `pow`.
        let fast = match (op, l, ins.get(1)) {
            (Opcode::Power, DType::Float32 | DType::Float64, Some(Operand::Scalar(s))) => {
                match s.as_f64() {
                    2.0 => Some(Opcode::Square),
                    -1.0 => Some(Opcode::Reciprocal),
                    0.5 => Some(Opcode::Sqrt),
                    _ => None,
                }
            }
            _ => None,
        };
        let op = match fast {
            Some(f) => {
                ins.truncate(1);
                f
            }
            None => op,
        };
        let instr = Instr {
            op,
            out: placeholder(o, &shape),
            ins,
            axis: None,
            method: None,
        };
        finish(t, temps, instr, dest.out)
    })
}

/// An array stored where it has more dimensions than fit loses its leading length-1
/// dimensions, as NumPy's assignment allows (`a[1] = row[None]`).
pub fn fit_value(v: &Arg, ndim: usize) -> Arg {
    let Arg::Array(a) = v else { return v.clone() };
    let mut view = a.clone();
    while view.ndim() > ndim && view.shape[0] == 1 {
        match view.index(0, 0) {
            Ok(w) => view = w,
            Err(_) => break,
        }
    }
    Arg::Array(view)
}

/// `dst[...] = src` with broadcasting and casting under `casting` (NumPy's `copyto`).
pub fn assign(t: &mut impl Target, dst: &View, src: &Arg, casting: &str) -> Result<()> {
    let src = fit_value(src, dst.ndim());
    check_stored_int(&src, dst.dtype)?;
    if let Some(f) = src.strong_dtype() {
        if hassium_core::resolve::can_cast(f, dst.dtype, casting) == Some(false) {
            return Err(Error::Type(format!(
                "Cannot cast array data from dtype('{}') to dtype('{}') according to the rule '{casting}'",
                f.name(),
                dst.dtype.name()
            )));
        }
    }
    let shape = &dst.shape;
    if let Arg::Array(a) = &src {
        a.broadcast_to(shape).map_err(|_| {
            Error::Shape(format!(
                "could not broadcast input array from shape {} into shape {}",
                fmt_shape(&a.shape),
                fmt_shape(shape)
            ))
        })?;
    }
    recording(t, |t, temps| {
        let op = match &src {
            Arg::Array(a) => {
                let mut v = a.broadcast_to(shape)?;
                if overlap(dst, &v) == Overlap::Partial {
                    v = private_copy(t, temps, a)?.broadcast_to(shape)?;
                }
                Operand::View(v)
            }
            Arg::Typed(s) => Operand::Scalar(*s),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(dst.dtype)),
        };
        copy_into(t, dst, op)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::BaseId;

    fn outcome(r: Result<(DType, DType)>) -> std::result::Result<(DType, DType), String> {
        r.map_err(|e| format!("{e:?}"))
    }

    /// The remembered types are the worked-out ones, for every elementwise opcode and
    /// every pair (or single) of operand types, asked twice so the second is a hit;
    /// errors are never remembered and stay the same error.
    #[test]
    fn remembered_types_are_the_worked_out_ones() {
        let array = |t| Arg::Array(View::contiguous(BaseId(1), t, &[3]));
        let mut operands: Vec<Arg> = DType::ALL.iter().map(|&t| array(t)).collect();
        operands.push(Arg::Weak(Weak::Bool(true)));
        operands.push(Arg::Weak(Weak::Float(0.5)));
        operands.push(Arg::Weak(Weak::Complex(0.5, 1.0)));
        operands.push(Arg::Weak(Weak::Int(7)));
        let dest = Dest::NEW;
        let mut hits = 0;
        for &op in Opcode::ALL {
            if op.class() != hassium_core::OpClass::Elementwise || op == Opcode::Where {
                continue;
            }
            let combos: Vec<Vec<Arg>> = match op.nin() {
                1 => operands.iter().map(|a| vec![a.clone()]).collect(),
                2 => operands
                    .iter()
                    .flat_map(|a| operands.iter().map(move |b| vec![a.clone(), b.clone()]))
                    .collect(),
                _ => continue,
            };
            for values in combos {
                let want = outcome(resolve_types(op, &values, &dest, None));
                for _ in 0..2 {
                    assert_eq!(outcome(resolve(op, &values, &dest, None)), want, "{op:?}");
                }
                hits += usize::from(resolve_key(op, &values, None).is_some() && want.is_ok());
            }
        }
        assert!(hits > 1000, "only {hits} remembered");
    }
}
