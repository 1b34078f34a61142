//! Arrays made by recording: ranges, fills, random bits, copies and reshapes.

use crate::args::Weak;
use crate::base::{check_ndim, copy_into, recording, Target};
use crate::error::{Error, Result};
use hassium_core::{fmt_requested_shape, DType, Instr, Opcode, Operand, Scalar, View};

/// `np.arange`-like: `start + i*step` for i in 0..n as `dtype`, computed in a type that
/// holds the values exactly enough (int64 for integers and bools, start and step
/// truncated; complex128 for complex; float64 otherwise) and then cast, as NumPy fills.
pub fn arange(
    t: &mut impl Target,
    start: Weak,
    step: Weak,
    n: usize,
    dtype: DType,
) -> Result<View> {
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
    recording(t, |t, temps| {
        let res = temps.fresh(t, dtype, &[n])?;
        if n == 0 {
            return Ok(res);
        }
        let idx = if range_t == dtype {
            res.clone()
        } else {
            temps.view(t, range_t, &[n])?
        };
        t.record(Instr::new(Opcode::Range, idx.clone(), []))?;
        let idx = crate::base::as_dtype(t, temps, &idx, work)?;
        let (step, start) = (step.to_scalar(work), start.to_scalar(work));
        let scaled = if step.is_one() {
            idx
        } else {
            let s = temps.view(t, work, &[n])?;
            t.record(Instr::new(
                Opcode::Multiply,
                s.clone(),
                [idx.into(), step.into()],
            ))?;
            s
        };
        let shifted = if start.is_zero() {
            scaled
        } else {
            let s = if work == dtype {
                res.clone()
            } else {
                temps.view(t, work, &[n])?
            };
            t.record(Instr::new(
                Opcode::Add,
                s.clone(),
                [scaled.into(), start.into()],
            ))?;
            s
        };
        if shifted != res {
            copy_into(t, &res, shifted.into())?;
        }
        Ok(res)
    })
}

/// `np.full(shape, value, dtype)` (the value is converted as `astype` would).
pub fn full(t: &mut impl Target, shape: &[usize], value: Operand, dtype: DType) -> Result<View> {
    recording(t, |t, temps| {
        let res = temps.fresh(t, dtype, shape)?;
        copy_into(t, &res, value)?;
        Ok(res)
    })
}

/// uint64 random bits of the counter-based Philox opcode.
pub fn random_bits(t: &mut impl Target, shape: &[usize], seed: u64, stream: u64) -> Result<View> {
    recording(t, |t, temps| {
        let res = temps.fresh(t, DType::UInt64, shape)?;
        if !res.is_empty() {
            let key = [Scalar::UInt64(seed).into(), Scalar::UInt64(stream).into()];
            t.record(Instr::new(Opcode::Random, res.clone(), key))?;
        }
        Ok(res)
    })
}

/// Uniform float64 in [0, 1): the top 53 bits of Philox's uint64 output times 2^-53, as
/// NumPy's generators turn bits into doubles.
pub fn uniform(t: &mut impl Target, shape: &[usize], seed: u64, stream: u64) -> Result<View> {
    recording(t, |t, temps| {
        let res = temps.fresh(t, DType::Float64, shape)?;
        if res.is_empty() {
            return Ok(res);
        }
        let bits = temps.view(t, DType::UInt64, shape)?;
        let key = [Scalar::UInt64(seed).into(), Scalar::UInt64(stream).into()];
        t.record(Instr::new(Opcode::Random, bits.clone(), key))?;
        let top = temps.view(t, DType::UInt64, shape)?;
        let shift = Scalar::UInt64(11).into();
        t.record(Instr::new(
            Opcode::RightShift,
            top.clone(),
            [bits.into(), shift],
        ))?;
        let float = temps.view(t, DType::Float64, shape)?;
        copy_into(t, &float, top.into())?;
        let scale = Scalar::Float64(1.0 / (1u64 << 53) as f64).into();
        t.record(Instr::new(
            Opcode::Multiply,
            res.clone(),
            [float.into(), scale],
        ))?;
        Ok(res)
    })
}

/// A C-contiguous copy of `a` as `dtype` (`astype`, `copy`).
pub fn cast_copy(t: &mut impl Target, a: &View, dtype: DType) -> Result<View> {
    full(t, &a.shape, a.clone().into(), dtype)
}

/// Resolves the unknown dimension of a requested shape as NumPy's reshape does: any
/// negative entry is one (`-1` by convention; NumPy takes `-2` the same way).
pub fn resolve_shape(size: usize, req: &[i64]) -> Result<Vec<usize>> {
    check_ndim(req.len())?;
    let bad = || {
        Error::Shape(format!(
            "cannot reshape array of size {size} into shape {}",
            fmt_requested_shape(req)
        ))
    };
    let unknown: Vec<usize> = (0..req.len()).filter(|&i| req[i] < 0).collect();
    if unknown.len() > 1 {
        return Err(Error::Shape(
            "can only specify one unknown dimension".into(),
        ));
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
    Ok(shape)
}

/// `a.reshape(shape)` in C order (`shape` resolved, of `a`'s size): a view of `a` when
/// its strides allow, else a reshaped fresh copy.
pub fn reshape(t: &mut impl Target, a: &View, shape: &[usize]) -> Result<View> {
    if let Some(v) = a.reshape(shape) {
        return Ok(v);
    }
    let c = cast_copy(t, a, a.dtype)?;
    Ok(c.reshape(shape)
        .expect("a contiguous copy reshapes to any shape of its size"))
}

/// A generator (`Range`, `Random` with its seed and stream) filling `out`.
pub fn generate(t: &mut impl Target, op: Opcode, out: &View, key: &[u64]) -> Result<()> {
    if op.class() != hassium_core::OpClass::Generator {
        return Err(Error::Value(format!("{} is not a generator", op.name())));
    }
    crate::elementwise::check_nin(op, key.len())?;
    if out.is_empty() {
        return Ok(());
    }
    let key: Vec<Operand> = key.iter().map(|&k| Scalar::UInt64(k).into()).collect();
    t.record(Instr::new(op, out.clone(), key))
}
