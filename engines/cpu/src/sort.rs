//! The sorting extension methods (`hassium_core::methods`) for the integer, bool and
//! float32/64 dtypes; float16 and complex are left to the interpreter (the reference
//! engine's code, the oracle these must equal bit for bit).
//!
//! Each element is sorted by an integer key with NumPy's order (`SortElem::key`): floats
//! map to their bits turned so that integer order is numeric order, with `-0.0` equal to
//! `0.0` and every NaN equal and last. An unstable sort of (key, position) pairs is the
//! stable order, so short rows' `argsort` sorts pairs; rows of [`RADIX_ROW`] elements
//! and more are radix sorted (stable, a byte per pass), their keys carrying positions for
//! `argsort`. `sort` sorts values by key and then puts the equal-keyed values that differ
//! (zeros of either sign, NaN payloads) back in the order they came in, which is what a
//! stable sort gives. Rows are shared out among the threads; one long row is cut into a
//! chunk per thread, each radix sorted, and the chunks merged. The result does not depend
//! on the number of threads.

use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{DType, Error as CoreError, Instr, Operand, Scalar, View};
use hassium_engine_abi::Buffers;
use rayon::prelude::*;

/// An element type sorted here, and its key.
trait SortElem: Copy + Send + Sync + 'static {
    type Key: Ord + Copy + Send + Sync;
    /// Whether elements of equal key can differ (then `sort` restores their order).
    const DISTINCT_EQUALS: bool;
    /// Significant bytes of [`SortElem::ukey`].
    const BYTES: usize = std::mem::size_of::<Self>();
    fn key(self) -> Self::Key;
    /// The key as an unsigned integer of the same order, for the radix sort.
    fn ukey(self) -> u64;
    /// The element of a key (for floats: `+0.0` for either zero, one NaN for all).
    fn from_ukey(k: u64) -> Self;
}

macro_rules! unsigned_elem {
    ($($t:ty),*) => {$(
        impl SortElem for $t {
            type Key = $t;
            const DISTINCT_EQUALS: bool = false;
            fn key(self) -> $t {
                self
            }
            fn ukey(self) -> u64 {
                self as u64
            }
            fn from_ukey(k: u64) -> $t {
                k as $t
            }
        }
    )*};
}
unsigned_elem!(u8, u16, u32, u64);

macro_rules! signed_elem {
    ($($t:ty => $u:ty),*) => {$(
        impl SortElem for $t {
            type Key = $t;
            const DISTINCT_EQUALS: bool = false;
            fn key(self) -> $t {
                self
            }
            fn ukey(self) -> u64 {
                // The sign bit flipped: negative numbers first, in order.
                ((self as $u) ^ (1 << (<$u>::BITS - 1))) as u64
            }
            fn from_ukey(k: u64) -> $t {
                ((k as $u) ^ (1 << (<$u>::BITS - 1))) as $t
            }
        }
    )*};
}
signed_elem!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);

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
            fn ukey(self) -> u64 {
                self.key() as u64
            }
            fn from_ukey(k: u64) -> $t {
                let (k, sign) = (k as $k, 1 << (<$k>::BITS - 1));
                if k == <$k>::MAX {
                    <$t>::NAN
                } else if k & sign != 0 {
                    <$t>::from_bits(k & !sign)
                } else {
                    <$t>::from_bits(!k)
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
            let sort = || {
                if method == SORT {
                    typed!(sort_rows, &src, &dst)
                } else {
                    typed!(argsort_rows, &src, &dst)
                }
            };
            // A small sort runs on one thread (`serial`): here, without the wake-ups of
            // handing it to the pool and back, which cost more than the sort.
            if serial(&src) {
                sort();
            } else {
                pool.install(sort);
            }
        }
        ARGPARTITION => {
            let Some(&Operand::Scalar(Scalar::Int64(k))) = instr.ins.get(1) else {
                return Ok(false);
            };
            if a.shape != out.shape || a.ndim() == 0 || k < 0 || k as usize >= a.shape[a.ndim() - 1]
            {
                return Ok(false);
            }
            let (src, dst) = (Strided::of(a, buffers)?, Strided::of(out, buffers)?);
            let k = k as usize;
            if src.rows.len() == 1 || src.rows.len() * src.len < PARALLEL_ROW {
                typed!(argpartition_rows, &src, &dst, k, false);
            } else {
                pool.install(|| typed!(argpartition_rows, &src, &dst, k, true));
            }
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
            if nd.rows.len() * nd.len <= SEARCH_CHUNK {
                typed!(search, &hay, &nd, &dst, right);
            } else {
                pool.install(|| typed!(search, &hay, &nd, &dst, right));
            }
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
        let rows = v.row_starts();
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

/// Whether sorting `src` uses one thread: a row below [`PARALLEL_ROW`] alone, or rows of
/// fewer elements than that in all (the row functions then run no parallel iterator,
/// so they may be called outside the pool).
fn serial(src: &Strided) -> bool {
    src.len < PARALLEL_ROW && (src.rows.len() == 1 || src.rows.len() * src.len < PARALLEL_ROW)
}

fn sort_rows<T: SortElem>(src: &Strided, dst: &Strided) {
    let one = |r: usize, row: &mut Vec<T>, parallel: bool| {
        src.read_row(r, row);
        sort_values(row, parallel);
        dst.write_row(r, row.iter().copied());
    };
    if serial(src) || src.len >= PARALLEL_ROW {
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
    if row.len() >= RADIX_ROW {
        let mut keys: Vec<u64> = row.iter().map(|v| v.ukey()).collect();
        radix_sort(&mut keys, &mut Vec::<u32>::new(), T::BYTES, parallel);
        for (v, &k) in row.iter_mut().zip(&keys) {
            *v = T::from_ukey(k);
        }
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

/// From this many elements a row is radix sorted, below it by comparisons.
const RADIX_ROW: usize = 256;

/// Least-significant-digit radix sort of `keys` by their low `bytes` bytes, carrying
/// `payload` along when it is not empty; stable. A pass is skipped when all keys share
/// its digit. `parallel`: the threads each sort one contiguous chunk, and the sorted
/// chunks are merged pairwise (on equal keys the earlier chunk's first), which is the
/// sequential result.
fn radix_sort<P: Copy + Default + Send + Sync>(
    keys: &mut Vec<u64>,
    payload: &mut Vec<P>,
    bytes: usize,
    parallel: bool,
) {
    let n = keys.len();
    let threads = if parallel {
        rayon::current_num_threads().clamp(1, 64)
    } else {
        1
    };
    if threads < 2 || n < 2 * RADIX_ROW {
        radix_chunk(keys, payload, bytes);
        return;
    }
    let carry = !payload.is_empty();
    let len = n.div_ceil(threads);
    {
        let mut kc: Vec<&mut [u64]> = keys.chunks_mut(len).collect();
        let mut pc: Vec<&mut [P]> = if carry {
            payload.chunks_mut(len).collect()
        } else {
            (0..kc.len()).map(|_| <&mut [P]>::default()).collect()
        };
        kc.par_iter_mut().zip(pc.par_iter_mut()).for_each(|(k, p)| {
            let (mut kv, mut pv) = (k.to_vec(), p.to_vec());
            radix_chunk(&mut kv, &mut pv, bytes);
            k.copy_from_slice(&kv);
            p.copy_from_slice(&pv);
        });
    }
    // Merge runs of `width` pairwise until one is left.
    let (mut k2, mut p2) = (vec![0u64; n], vec![P::default(); if carry { n } else { 0 }]);
    let mut width = len;
    while width < n {
        {
            let (ks, ps) = (&keys[..], &payload[..]);
            let mut kd: Vec<&mut [u64]> = k2.chunks_mut(2 * width).collect();
            let mut pd: Vec<&mut [P]> = if carry {
                p2.chunks_mut(2 * width).collect()
            } else {
                (0..kd.len()).map(|_| <&mut [P]>::default()).collect()
            };
            kd.par_iter_mut()
                .zip(pd.par_iter_mut())
                .enumerate()
                .for_each(|(c, (kout, pout))| {
                    let lo = c * 2 * width;
                    let mid = (lo + width).min(n);
                    let hi = (lo + 2 * width).min(n);
                    merge(ks, ps, (lo, mid, hi), kout, pout, carry);
                });
        }
        std::mem::swap(keys, &mut k2);
        if carry {
            std::mem::swap(payload, &mut p2);
        }
        width *= 2;
    }
}

/// Merges the sorted runs `[lo, mid)` and `[mid, hi)` of `keys` (and `payload`) into
/// `kout`/`pout`, the left run first on equal keys.
fn merge<P: Copy>(
    keys: &[u64],
    payload: &[P],
    (lo, mid, hi): (usize, usize, usize),
    kout: &mut [u64],
    pout: &mut [P],
    carry: bool,
) {
    let (mut i, mut j) = (lo, mid);
    for o in 0..hi - lo {
        let left = j >= hi || (i < mid && keys[i] <= keys[j]);
        let from = if left { i } else { j };
        kout[o] = keys[from];
        if carry {
            pout[o] = payload[from];
        }
        if left {
            i += 1;
        } else {
            j += 1;
        }
    }
}

/// The sequential radix sort of [`radix_sort`]: every digit's counts from one read of
/// the keys, then a stable scatter per digit that varies. Digits are 8 bits for short
/// rows (256 counters per pass), 11 for long ones (six passes over 64-bit keys): from
/// 4 096 keys alone, from 65 536 with a payload, whose second stream of scattered
/// writes makes 2 048 destinations slower than the two passes saved (a 20 000-element
/// float64 row: keys alone 25% faster with 11 bits, with indices 35% slower).
fn radix_chunk<P: Copy + Default>(keys: &mut Vec<u64>, payload: &mut Vec<P>, bytes: usize) {
    let n = keys.len();
    let Some(&first) = keys.first() else { return };
    let carry = !payload.is_empty();
    let bits = if n < (if carry { 1 << 16 } else { 1 << 12 }) {
        8
    } else {
        11
    };
    let (digits, mask) = (1usize << bits, (1u64 << bits) - 1);
    let passes = (8 * bytes).div_ceil(bits);
    let mut counts = vec![0usize; passes * digits];
    let mut differ = 0u64;
    for &k in keys.iter() {
        differ |= k ^ first;
        for d in 0..passes {
            counts[d * digits + ((k >> (d * bits)) & mask) as usize] += 1;
        }
    }
    let (mut k2, mut p2) = (vec![0u64; n], vec![P::default(); if carry { n } else { 0 }]);
    let mut at = vec![0usize; digits];
    for d in 0..passes {
        let shift = d * bits;
        if (differ >> shift) & mask == 0 {
            continue;
        }
        let mut total = 0;
        for (a, &c) in at.iter_mut().zip(&counts[d * digits..(d + 1) * digits]) {
            *a = total;
            total += c;
        }
        for (i, &k) in keys.iter().enumerate() {
            let b = ((k >> shift) & mask) as usize;
            let o = at[b];
            at[b] += 1;
            k2[o] = k;
            if carry {
                p2[o] = payload[i];
            }
        }
        std::mem::swap(keys, &mut k2);
        if carry {
            std::mem::swap(payload, &mut p2);
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
        if row.len() >= RADIX_ROW && row.len() <= u32::MAX as usize {
            let mut keys: Vec<u64> = row.iter().map(|v| v.ukey()).collect();
            let mut at: Vec<u32> = (0..row.len() as u32).collect();
            radix_sort(&mut keys, &mut at, T::BYTES, parallel);
            dst.write_row(r, at.iter().map(|&j| j as i64));
            return;
        }
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
    if serial(src) || src.len >= PARALLEL_ROW {
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

/// `argpartition` of each row: the positions of its `k + 1` smallest (key, position)
/// pairs, sorted, then the others in increasing order (`hassium_core::methods`). For a
/// `k` small beside the row, a bounded max-heap of the best pairs so far, which most
/// elements leave at one comparison with its top; otherwise a selection of the `k`-th
/// key and one pass that takes what is below it (and equal keys by position).
fn argpartition_rows<T: SortElem>(src: &Strided, dst: &Strided, k: usize, parallel: bool) {
    let one = |r: usize, row: &mut Vec<T>, keys: &mut Vec<u64>| {
        src.read_row(r, row);
        keys.clear();
        keys.extend(row.iter().map(|v| v.ukey()));
        let n = keys.len();
        let mut first: Vec<(u64, usize)> = Vec::with_capacity(k + 1);
        if (k + 1) * 64 <= n {
            let mut heap = std::collections::BinaryHeap::with_capacity(k + 1);
            for (j, &key) in keys.iter().enumerate() {
                if heap.len() <= k {
                    heap.push((key, j));
                } else if heap.peek().is_some_and(|&top| (key, j) < top) {
                    heap.pop();
                    heap.push((key, j));
                }
            }
            first.extend(heap.into_sorted_vec());
        } else {
            let mut scratch = keys.clone();
            let kth = *scratch.select_nth_unstable(k).1;
            let mut equal = k + 1 - keys.iter().filter(|&&key| key < kth).count();
            for (j, &key) in keys.iter().enumerate() {
                if key < kth {
                    first.push((key, j));
                } else if key == kth && equal > 0 {
                    first.push((key, j));
                    equal -= 1;
                }
            }
            first.sort_unstable();
        }
        let mut chosen = vec![false; n];
        for &(_, j) in &first {
            chosen[j] = true;
        }
        let rest = (0..n).filter(|&j| !chosen[j]);
        let order = first.iter().map(|&(_, j)| j).chain(rest);
        dst.write_row(r, order.map(|j| j as i64));
    };
    if parallel {
        (0..src.rows.len()).into_par_iter().for_each_init(
            || (Vec::new(), Vec::new()),
            |(row, keys), r| one(r, row, keys),
        );
    } else {
        let (mut row, mut keys) = (Vec::new(), Vec::new());
        for r in 0..src.rows.len() {
            one(r, &mut row, &mut keys);
        }
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
    let chunk = |c: usize| {
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
    };
    let chunks = total.div_ceil(SEARCH_CHUNK);
    if chunks <= 1 {
        // Called outside the pool for so few needles (see `run`).
        (0..chunks).for_each(chunk);
    } else {
        (0..chunks).into_par_iter().for_each(chunk);
    }
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

    /// A small deterministic generator of varied bits.
    fn bits(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect()
    }

    #[test]
    fn the_radix_sort_equals_a_stable_comparison_sort_in_every_mode() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (n, mask) in [
            (1000, u64::MAX),
            (5000, 0xff00_0000_00ff),
            (3, 7),
            (70_000, 0xfff),
        ] {
            let keys = bits(n, n as u64 + 1);
            let keys: Vec<u64> = keys.iter().map(|k| k & mask).collect();
            let mut want: Vec<(u64, u32)> = keys.iter().copied().zip(0..).collect();
            want.sort_by_key(|p| p.0);
            for parallel in [false, true] {
                let (mut k, mut at): (Vec<u64>, Vec<u32>) = (keys.clone(), (0..n as u32).collect());
                pool.install(|| radix_sort(&mut k, &mut at, 8, parallel));
                let got: Vec<(u64, u32)> = k.into_iter().zip(at).collect();
                assert_eq!(got, want, "n {n} parallel {parallel}");
            }
        }
    }

    #[test]
    fn keys_turn_back_into_their_elements() {
        for x in [
            -3.5f64,
            -0.0,
            0.0,
            1e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
            7.25,
        ] {
            assert_eq!(f64::from_ukey(x.ukey()).to_bits(), (x + 0.0).to_bits());
        }
        assert!(f64::from_ukey(f64::NAN.ukey()).is_nan());
        for x in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(i64::from_ukey(x.ukey()), x);
        }
        assert!((-1i8).ukey() < 0i8.ukey() && (-1.0f32).ukey() < (-0.5f32).ukey());
    }

    #[test]
    fn long_rows_sort_by_radix_with_zeros_and_nans_in_input_order() {
        let raw = bits(3000, 9);
        let mut row: Vec<f64> = raw
            .iter()
            .map(|&b| match b % 9 {
                0 => -0.0,
                1 => 0.0,
                2 => f64::from_bits(f64::NAN.to_bits() | (b % 3)),
                _ => (b % 2001) as f64 - 1000.0,
            })
            .collect();
        let mut want = row.clone();
        want.sort_by_key(|a| a.key());
        sort_values(&mut row, false);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&row), bits(&want));
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
