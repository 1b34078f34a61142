//! The sorting extension methods (`hassium_core::methods`) for the integer, bool and
//! float32/64 dtypes; float16 and complex are left to the interpreter (the reference
//! engine's code, the oracle these must equal bit for bit).
//!
//! Each element is sorted by an integer key with NumPy's order (`SortElem::key`): floats
//! map to their bits turned so that integer order is numeric order, with `-0.0` equal to
//! `0.0` and every NaN equal and last. An unstable sort of (key, position) pairs is the
//! stable order, so `argsort` sorts pairs; `sort` sorts values by key and then puts the
//! equal-keyed values that differ (zeros of either sign, NaN payloads) back in the order
//! they came in, which is what a stable sort gives. Rows are shared out among the
//! threads; one long row is sorted by all of them (rayon's parallel pattern-defeating
//! quicksort). The result does not depend on the number of threads.

use hassium_core::methods::{ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{DType, Error as CoreError, Instr, Operand, View};
use hassium_engine_abi::Buffers;
use rayon::prelude::*;

/// An element type sorted here, and its key.
trait SortElem: Copy + Send + Sync + 'static {
    type Key: Ord + Copy + Send + Sync;
    /// Whether elements of equal key can differ (then `sort` restores their order).
    const DISTINCT_EQUALS: bool;
    fn key(self) -> Self::Key;
}

macro_rules! exact_elem {
    ($($t:ty),*) => {$(
        impl SortElem for $t {
            type Key = $t;
            const DISTINCT_EQUALS: bool = false;
            fn key(self) -> $t {
                self
            }
        }
    )*};
}
exact_elem!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! float_elem {
    ($t:ty, $k:ty) => {
        impl SortElem for $t {
            type Key = $k;
            const DISTINCT_EQUALS: bool = true;
            fn key(self) -> $k {
                if self.is_nan() {
                    return <$k>::MAX;
                }
                // 0.0 for -0.0 too; the sign bit set means negative: invert all bits.
                let b = (self + 0.0).to_bits();
                let sign = 1 << (<$k>::BITS - 1);
                if b & sign != 0 {
                    !b
                } else {
                    b | sign
                }
            }
        }
    };
}
float_elem!(f32, u32);
float_elem!(f64, u64);

/// Runs a sorting method natively; `Ok(false)` for what is left to the interpreter.
pub fn run(pool: &rayon::ThreadPool, instr: &Instr, buffers: &Buffers) -> Result<bool, CoreError> {
    let Some(method) = instr.method.as_deref() else {
        return Ok(false);
    };
    let Some(a) = instr.ins.first().and_then(Operand::as_view) else {
        return Ok(false);
    };
    macro_rules! typed {
        ($f:ident $(, $arg:expr)*) => {
            match a.dtype {
                DType::Bool | DType::UInt8 => $f::<u8>($($arg),*),
                DType::UInt16 => $f::<u16>($($arg),*),
                DType::UInt32 => $f::<u32>($($arg),*),
                DType::UInt64 => $f::<u64>($($arg),*),
                DType::Int8 => $f::<i8>($($arg),*),
                DType::Int16 => $f::<i16>($($arg),*),
                DType::Int32 => $f::<i32>($($arg),*),
                DType::Int64 => $f::<i64>($($arg),*),
                DType::Float32 => $f::<f32>($($arg),*),
                DType::Float64 => $f::<f64>($($arg),*),
                // Refused before the macro is used.
                _ => {}
            }
        };
    }
    if matches!(
        a.dtype,
        DType::Float16 | DType::Complex64 | DType::Complex128
    ) {
        return Ok(false);
    }
    let out = &instr.out;
    match method {
        SORT | ARGSORT => {
            if a.shape != out.shape || a.ndim() == 0 {
                return Ok(false);
            }
            let (src, dst) = (Strided::of(a, buffers)?, Strided::of(out, buffers)?);
            pool.install(|| {
                if method == SORT {
                    typed!(sort_rows, &src, &dst)
                } else {
                    typed!(argsort_rows, &src, &dst)
                }
            });
        }
        SEARCHSORTED_LEFT | SEARCHSORTED_RIGHT => {
            let Some(needles) = instr.ins.get(1).and_then(Operand::as_view) else {
                return Ok(false);
            };
            if a.ndim() != 1 || needles.shape != out.shape || needles.dtype != a.dtype {
                return Ok(false);
            }
            let right = method == SEARCHSORTED_RIGHT;
            let (hay, nd, dst) = (
                Strided::of(a, buffers)?,
                Strided::of(needles, buffers)?,
                Strided::of(out, buffers)?,
            );
            pool.install(|| typed!(search, &hay, &nd, &dst, right));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// A view over its host buffer: the first element's address, and the element offsets
/// at which its rows (all axes but the last) start.
struct Strided {
    data: usize,
    rows: Vec<isize>,
    len: usize,
    stride: isize,
}

impl Strided {
    fn of(v: &View, buffers: &Buffers) -> Result<Strided, CoreError> {
        let b = buffers.get(v.base).ok_or_else(|| {
            CoreError::Invalid(format!("sort: base {} has no host buffer", v.base.0))
        })?;
        let nd = v.ndim();
        let (len, stride) = match nd {
            0 => (1, 0),
            _ => (v.shape[nd - 1], v.strides[nd - 1]),
        };
        let outer = &v.shape[..nd.saturating_sub(1)];
        let count: usize = outer.iter().product();
        let mut rows = Vec::with_capacity(count);
        let mut index = vec![0usize; outer.len()];
        let mut at = v.offset;
        for _ in 0..count {
            rows.push(at);
            for d in (0..outer.len()).rev() {
                index[d] += 1;
                at += v.strides[d];
                if index[d] < outer[d] {
                    break;
                }
                at -= v.strides[d] * outer[d] as isize;
                index[d] = 0;
            }
        }
        Ok(Strided {
            data: b.data as usize,
            rows,
            len,
            stride,
        })
    }

    /// Element `j` of row `r`, as a `T` pointer.
    fn at<T>(&self, r: usize, j: usize) -> *mut T {
        (self.data as *mut T).wrapping_offset(self.rows[r] + j as isize * self.stride)
    }

    fn read_row<T: Copy>(&self, r: usize, into: &mut Vec<T>) {
        into.clear();
        // SAFETY: verification checked the view lies inside its base.
        into.extend((0..self.len).map(|j| unsafe { *self.at::<T>(r, j) }));
    }

    fn write_row<T: Copy>(&self, r: usize, values: impl Iterator<Item = T>) {
        for (j, v) in values.enumerate() {
            // SAFETY: as in `read_row`; each row of an output is written by one task.
            unsafe { *self.at::<T>(r, j) = v };
        }
    }
}

/// Below this many elements a row is sorted by one thread.
const PARALLEL_ROW: usize = 1 << 15;

fn sort_rows<T: SortElem>(src: &Strided, dst: &Strided) {
    let one = |r: usize, row: &mut Vec<T>, parallel: bool| {
        src.read_row(r, row);
        sort_values(row, parallel);
        dst.write_row(r, row.iter().copied());
    };
    if src.rows.len() == 1 || src.len >= PARALLEL_ROW {
        let mut row = Vec::with_capacity(src.len);
        for r in 0..src.rows.len() {
            one(r, &mut row, src.len >= PARALLEL_ROW);
        }
    } else {
        (0..src.rows.len())
            .into_par_iter()
            .for_each_init(|| Vec::with_capacity(src.len), |row, r| one(r, row, false));
    }
}

/// Sorts `row` by key, equal-keyed values in their original order.
fn sort_values<T: SortElem>(row: &mut [T], parallel: bool) {
    // The values whose key others share while differing from them, in input order:
    // zeros (either sign) and NaNs. Any float equal to zero is a zero.
    let (mut zeros, mut nans) = (Vec::new(), Vec::new());
    let (zero, nan) = (zero_key::<T>(), nan_key::<T>());
    if T::DISTINCT_EQUALS {
        for &v in row.iter() {
            let k = v.key();
            if Some(k) == zero {
                zeros.push(v);
            } else if Some(k) == nan {
                nans.push(v);
            }
        }
    }
    if parallel {
        row.par_sort_unstable_by_key(|v| v.key());
    } else {
        row.sort_unstable_by_key(|v| v.key());
    }
    for (key, kept) in [(zero, zeros), (nan, nans)] {
        if let (Some(key), false) = (key, kept.is_empty()) {
            let start = row.partition_point(|v| v.key() < key);
            row[start..start + kept.len()].copy_from_slice(&kept);
        }
    }
}

/// The key of zero, for the types whose zeros differ (`-0.0`).
fn zero_key<T: SortElem>() -> Option<T::Key> {
    T::DISTINCT_EQUALS.then(|| float_of::<T>(0.0)).flatten()
}

/// The key of NaN, for the types that have it.
fn nan_key<T: SortElem>() -> Option<T::Key> {
    T::DISTINCT_EQUALS
        .then(|| float_of::<T>(f64::NAN))
        .flatten()
}

fn float_of<T: SortElem>(x: f64) -> Option<T::Key> {
    use std::any::Any;
    let f64v: &dyn Any = &x;
    let f32v: &dyn Any = &(x as f32);
    f64v.downcast_ref::<T>()
        .or_else(|| f32v.downcast_ref::<T>())
        .map(|v| v.key())
}

fn argsort_rows<T: SortElem>(src: &Strided, dst: &Strided) {
    let one = |r: usize, row: &mut Vec<T>, pairs: &mut Vec<(T::Key, u64)>, parallel: bool| {
        src.read_row(r, row);
        pairs.clear();
        pairs.extend(row.iter().enumerate().map(|(j, v)| (v.key(), j as u64)));
        // The position breaks ties: the unstable sort gives the stable order.
        if parallel {
            pairs.par_sort_unstable();
        } else {
            pairs.sort_unstable();
        }
        dst.write_row(r, pairs.iter().map(|&(_, j)| j as i64));
    };
    if src.rows.len() == 1 || src.len >= PARALLEL_ROW {
        let (mut row, mut pairs) = (Vec::new(), Vec::new());
        for r in 0..src.rows.len() {
            one(r, &mut row, &mut pairs, src.len >= PARALLEL_ROW);
        }
    } else {
        (0..src.rows.len()).into_par_iter().for_each_init(
            || (Vec::new(), Vec::new()),
            |(row, pairs), r| one(r, row, pairs, false),
        );
    }
}

/// Needles searched per task.
const SEARCH_CHUNK: usize = 4096;

fn search<T: SortElem>(hay: &Strided, needles: &Strided, dst: &Strided, right: bool) {
    let mut row: Vec<T> = Vec::new();
    hay.read_row(0, &mut row);
    let keys: Vec<T::Key> = row.iter().map(|v| v.key()).collect();
    let (rows, len) = (needles.rows.len(), needles.len);
    let total = rows * len;
    (0..total.div_ceil(SEARCH_CHUNK))
        .into_par_iter()
        .for_each(|c| {
            for i in c * SEARCH_CHUNK..total.min((c + 1) * SEARCH_CHUNK) {
                let (r, j) = (i / len, i % len);
                // SAFETY: inside the verified needle and output views; one task per element.
                let k = unsafe { *needles.at::<T>(r, j) }.key();
                let at = if right {
                    keys.partition_point(|&h| h <= k)
                } else {
                    keys.partition_point(|&h| h < k)
                };
                unsafe { *dst.at::<i64>(r, j) = at as i64 };
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_order_as_numpy_does() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -5e-324,
            0.0,
            5e-324,
            1.0,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(w[0].key() < w[1].key(), "{} < {}", w[0], w[1]);
        }
        assert_eq!((-0.0f64).key(), 0.0f64.key());
        assert_eq!(f64::NAN.key(), (-f64::NAN).key());
        assert!(f64::INFINITY.key() < f64::NAN.key());
        assert_eq!((-0.0f32).key(), 0.0f32.key());
        assert!((-1.0f32).key() < (-0.5f32).key());
    }

    #[test]
    fn sorting_values_keeps_equal_zeros_and_nans_in_order() {
        let nan2 = f64::from_bits(f64::NAN.to_bits() | 1);
        let mut row = vec![1.0, 0.0, f64::NAN, -0.0, -2.0, nan2, 0.0];
        sort_values(&mut row, false);
        let bits: Vec<u64> = row.iter().map(|v| v.to_bits()).collect();
        let want: Vec<u64> = [-2.0, 0.0, -0.0, 0.0, 1.0, f64::NAN, nan2]
            .iter()
            .map(|v: &f64| v.to_bits())
            .collect();
        assert_eq!(bits, want);
    }
}
