//! The `matmul` extension method (also the core of `dot` and `tensordot`): float types go
//! to the `gemm` crate's cache-blocked, multithreaded kernels, except one row times a
//! matrix, which streams the matrix's rows on every thread; integer types to a simple
//! row-parallel i-k-j loop with wrapping arithmetic (NumPy has no BLAS for them either).
//! A stack of matrices runs one product at a time. (A matrix times one column seldom
//! arrives here: the `matrix_vector` filter rewrites it as a multiply and a sum, which
//! fuse.)

use hassium_core::{matrices, DType, Error as CoreError, Instr, Operand, View};
use hassium_engine_abi::Buffers;
use rayon::prelude::*;

/// A base pointer of a view plus its element offset, checked to exist.
fn ptr(buffers: &Buffers, v: &View) -> Result<*mut u8, CoreError> {
    let b = buffers.get(v.base).ok_or_else(|| {
        CoreError::Invalid(format!("matmul: base {} has no host buffer", v.base.0))
    })?;
    // SAFETY: verify() checked the view lies inside its base; offset is in elements.
    Ok(unsafe { b.data.offset(v.offset * v.dtype.size() as isize) })
}

struct P(*mut u8);
// SAFETY: rows of the output are written by exactly one task each.
unsafe impl Send for P {}
unsafe impl Sync for P {}

impl P {
    /// Read through a method so closures capture the whole (Send) wrapper.
    fn get(&self) -> *mut u8 {
        self.0
    }
}

macro_rules! int_matmul {
    ($t:ty, $m:expr, $n:expr, $k:expr, $o:expr, $a:expr, $b:expr, $os:expr, $as_:expr, $bs:expr) => {{
        let (o, a, b) = (P($o), P($a), P($b));
        let (m, n, k) = ($m, $n, $k);
        let (os, as_, bs) = ($os, $as_, $bs);
        (0..m).into_par_iter().for_each(|i| {
            let (o, a, b) = (&o, &a, &b);
            let (o, a, b) = (o.0 as *mut $t, a.0 as *const $t, b.0 as *const $t);
            let mut row = vec![<$t>::default(); n];
            for p in 0..k {
                // SAFETY: indices stay inside the verified views.
                let x = unsafe { *a.offset(i as isize * as_[0] + p as isize * as_[1]) };
                for (j, r) in row.iter_mut().enumerate() {
                    let y = unsafe { *b.offset(p as isize * bs[0] + j as isize * bs[1]) };
                    *r = r.wrapping_add(x.wrapping_mul(y));
                }
            }
            for (j, r) in row.into_iter().enumerate() {
                // SAFETY: row i of the output belongs to this task.
                unsafe { *o.offset(i as isize * os[0] + j as isize * os[1]) = r };
            }
        });
    }};
}

/// Rows of `b` one partial of [`row_times_matrix`] covers: at least this many, and at
/// most [`ROW_PARTIALS`] partials in all. Both depend on `k` alone, so the order the
/// products are added in (and the result) is the same for any number of threads.
const ROWS_PER_PARTIAL: usize = 256;
const ROW_PARTIALS: usize = 64;
/// From this many output columns up, [`row_times_matrix`] splits the columns instead.
const WIDE_ROW: usize = 4096;

/// `out = x @ b` for one row `x` (k), a row-major `b` (k × n) and a contiguous `out` (n),
/// the shape gemm runs on one thread at a fraction of the memory bandwidth (a 1×2000 by
/// 2000×2000 float64 product took 2.6 ms against NumPy's 1.4 ms). Every task streams
/// whole rows of `b`: a wide `b` is split by columns, each task adding its columns over
/// all rows in order; a narrow one by fixed blocks of rows into partial rows, added up in
/// block order. The arithmetic is `out[j] += x[p] * b[p, j]`, rounded per operation.
fn row_times_matrix<T>(
    pool: &rayon::ThreadPool,
    threads: usize,
    k: usize,
    n: usize,
    x: (*const T, isize),
    b: (*const T, isize),
    out: *mut T,
) where
    T: Copy + Default + Send + Sync + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let (px, sx) = (P(x.0 as *mut u8), x.1);
    let (pb, sb) = (P(b.0 as *mut u8), b.1);
    let po = P(out as *mut u8);
    // SAFETY (all three helpers): the views were verified; `x` has k elements at stride
    // `sx`, row `p` of `b` has n contiguous elements at `p * sb`.
    let xs = |p: usize| unsafe { *(px.get() as *const T).offset(p as isize * sx) };
    let row = |p: usize| unsafe {
        std::slice::from_raw_parts((pb.get() as *const T).offset(p as isize * sb), n)
    };
    let add_rows = |acc: &mut [T], rows: std::ops::Range<usize>, cols: std::ops::Range<usize>| {
        for p in rows {
            let (v, r) = (xs(p), &row(p)[cols.clone()]);
            for (a, &y) in acc.iter_mut().zip(r) {
                *a = *a + v * y;
            }
        }
    };
    if n >= WIDE_ROW {
        let parts = threads.max(1) * 4;
        pool.install(|| {
            (0..parts).into_par_iter().for_each(|t| {
                let cols = n * t / parts..n * (t + 1) / parts;
                // SAFETY: the column ranges are disjoint parts of the contiguous output.
                let acc = unsafe {
                    std::slice::from_raw_parts_mut((po.get() as *mut T).add(cols.start), cols.len())
                };
                acc.fill(T::default());
                add_rows(acc, 0..k, cols);
            })
        });
        return;
    }
    let per = ROWS_PER_PARTIAL.max(k.div_ceil(ROW_PARTIALS));
    let blocks = k.div_ceil(per);
    let mut partials = vec![T::default(); blocks * n];
    pool.install(|| {
        partials.par_chunks_mut(n).enumerate().for_each(|(c, acc)| {
            add_rows(acc, c * per..((c + 1) * per).min(k), 0..n);
        })
    });
    // SAFETY: `out` has n contiguous elements.
    let out = unsafe { std::slice::from_raw_parts_mut(po.get() as *mut T, n) };
    out.fill(T::default());
    for acc in partials.chunks(n) {
        for (o, &a) in out.iter_mut().zip(acc) {
            *o = *o + a;
        }
    }
}

/// Runs `out = a @ b` for matrices or a stack of them, one 2-D product at a time;
/// `Ok(false)` when the dtype is not handled here (the caller interprets it).
pub fn matmul(
    pool: &rayon::ThreadPool,
    threads: usize,
    instr: &Instr,
    buffers: &Buffers,
) -> Result<bool, CoreError> {
    let (Some(Operand::View(a)), Some(Operand::View(b))) = (instr.ins.first(), instr.ins.get(1))
    else {
        return Ok(false);
    };
    let (o, nd) = (&instr.out, instr.out.ndim());
    if nd < 2 || a.ndim() != nd || b.ndim() != nd || a.dtype != b.dtype || a.dtype != o.dtype {
        return Ok(false);
    }
    if a.shape[..nd - 2] != o.shape[..nd - 2] || b.shape[..nd - 2] != o.shape[..nd - 2] {
        return Ok(false);
    }
    let (n, k, m) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    if nd > 2 && n.saturating_mul(k).saturating_mul(m) <= SMALL_PRODUCT {
        if o.is_empty() {
            return Ok(true);
        }
        return small_stack(pool, a, b, o, buffers);
    }
    for [a, b, o] in matrices(a, b, o) {
        if !product(pool, threads, &a, &b, &o, buffers)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Multiply-adds up to which the products of a stack are [`small_stack`]'s: below it a
/// gemm call's set-up costs more than the product (a stack of 1000 3×3 products took
/// 5.4 ms through gemm, against NumPy's 0.03 ms).
const SMALL_PRODUCT: usize = 16 * 16 * 16;

/// A stack of small products, the matrices shared out among the threads, each product a
/// plain loop adding `a[i, p] * b[p, j]` over `p` in order (integers wrapping as NumPy's
/// loops do); `Ok(false)` for the dtypes left to the interpreter (float16, complex).
/// Each matrix's place is computed from its batch index, not made as views: at 3×3 a
/// view per operand cost more than the product.
fn small_stack(
    pool: &rayon::ThreadPool,
    a: &View,
    b: &View,
    o: &View,
    buffers: &Buffers,
) -> Result<bool, CoreError> {
    let nd = o.ndim();
    let batch = &o.shape[..nd - 2];
    let count: usize = batch.iter().product();
    let (n, k, m) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    let (pa, pb, po) = (
        P(ptr(buffers, a)?),
        P(ptr(buffers, b)?),
        P(ptr(buffers, o)?),
    );
    // Element offset of matrix `t` (C order over the batch) in a view with `strides`.
    let place = |t: usize, strides: &[isize]| {
        let (mut rest, mut at) = (t, 0isize);
        for d in (0..batch.len()).rev() {
            at += (rest % batch[d]) as isize * strides[d];
            rest /= batch[d];
        }
        at
    };
    let (sa, sb, so) = (&a.strides, &b.strides, &o.strides);
    let (ai, ak) = (sa[nd - 2], sa[nd - 1]);
    let (bk, bj) = (sb[nd - 2], sb[nd - 1]);
    let (oi, oj) = (so[nd - 2], so[nd - 1]);
    // Matrices per task: enough that a task is not mostly scheduling.
    let per = (4096 / (n * k * m).max(1)).max(1);
    macro_rules! run {
        ($t:ty, $madd:expr) => {{
            pool.install(|| {
                (0..count.div_ceil(per)).into_par_iter().for_each(|task| {
                    let (pa, pb, po) = (
                        pa.get() as *const $t,
                        pb.get() as *const $t,
                        po.get() as *mut $t,
                    );
                    for t in task * per..((task + 1) * per).min(count) {
                        let (a0, b0, o0) = (place(t, sa), place(t, sb), place(t, so));
                        for i in 0..n as isize {
                            for j in 0..m as isize {
                                let mut acc = <$t>::default();
                                for p in 0..k as isize {
                                    // SAFETY: indices stay inside the verified views.
                                    let (x, y) = unsafe {
                                        (
                                            *pa.offset(a0 + i * ai + p * ak),
                                            *pb.offset(b0 + p * bk + j * bj),
                                        )
                                    };
                                    acc = $madd(acc, x, y);
                                }
                                // SAFETY: each matrix of the output stack belongs to one task.
                                unsafe { *po.offset(o0 + i * oi + j * oj) = acc };
                            }
                        }
                    }
                })
            });
            Ok(true)
        }};
    }
    // Integers wrap as NumPy's loops do.
    macro_rules! wrapping {
        ($t:ty) => {
            run!($t, |acc: $t, x: $t, y: $t| acc
                .wrapping_add(x.wrapping_mul(y)))
        };
    }
    match a.dtype {
        DType::Float64 => run!(f64, |acc: f64, x: f64, y: f64| acc + x * y),
        DType::Float32 => run!(f32, |acc: f32, x: f32, y: f32| acc + x * y),
        DType::Int64 => wrapping!(i64),
        DType::Int32 => wrapping!(i32),
        DType::Int16 => wrapping!(i16),
        DType::Int8 => wrapping!(i8),
        DType::UInt64 => wrapping!(u64),
        DType::UInt32 => wrapping!(u32),
        DType::UInt16 => wrapping!(u16),
        DType::UInt8 => wrapping!(u8),
        _ => Ok(false),
    }
}

/// One 2-D product `o = a @ b`; `Ok(false)` when the dtype is not handled here.
fn product(
    pool: &rayon::ThreadPool,
    threads: usize,
    a: &View,
    b: &View,
    o: &View,
    buffers: &Buffers,
) -> Result<bool, CoreError> {
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    if b.shape[0] != k || o.shape[0] != m || o.shape[1] != n {
        return Err(CoreError::ShapeMismatch(format!(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {} is different from {k})",
            b.shape[0]
        )));
    }
    if m == 0 || n == 0 {
        return Ok(true);
    }
    let (po, pa, pb) = (ptr(buffers, o)?, ptr(buffers, a)?, ptr(buffers, b)?);
    let (wo, wa, wb) = (P(po), P(pa), P(pb));
    let (os, as_, bs) = (o.strides.clone(), a.strides.clone(), b.strides.clone());
    if m == 1 && k > 0 && (n == 1 || os[1] == 1) && (n == 1 || bs[1] == 1) {
        match a.dtype {
            DType::Float64 => {
                let (x, y) = ((pa as *const f64, as_[1]), (pb as *const f64, bs[0]));
                row_times_matrix(pool, threads, k, n, x, y, po as *mut f64);
                return Ok(true);
            }
            DType::Float32 => {
                let (x, y) = ((pa as *const f32, as_[1]), (pb as *const f32, bs[0]));
                row_times_matrix(pool, threads, k, n, x, y, po as *mut f32);
                return Ok(true);
            }
            _ => {}
        }
    }
    // From 128³ multiply-adds (about 100 us on one core) up: below, splitting gained
    // nothing on the 2-core VM (a 64³ product took 25 us split, 22 us on one thread).
    let split = threads > 1 && m * n * k >= 128 * 128 * 128;
    let par = if split {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // A product on one thread runs here, without handing it to the pool and back.
    let run_on = |f: &(dyn Fn() + Sync)| {
        if split {
            pool.install(f)
        } else {
            f()
        }
    };
    macro_rules! float {
        ($t:ty, $zero:expr, $one:expr) => {
            run_on(&|| {
                // SAFETY: pointers and strides describe the verified views; with
                // read_dst = false the output is overwritten (k = 0 gives zeros).
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        wo.get() as *mut $t,
                        os[1],
                        os[0],
                        false,
                        wa.get() as *const $t,
                        as_[1],
                        as_[0],
                        wb.get() as *const $t,
                        bs[1],
                        bs[0],
                        $zero,
                        $one,
                        false,
                        false,
                        false,
                        par,
                    )
                }
            })
        };
    }
    match a.dtype {
        DType::Float64 => float!(f64, 0.0f64, 1.0f64),
        DType::Float32 => float!(f32, 0.0f32, 1.0f32),
        // float16 is left to the interpreter, which accumulates in float32 as NumPy does;
        // gemm's f16 kernel accumulates in f16 and drifts by several ulp.
        DType::Int64 => {
            pool.install(|| int_matmul!(i64, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::Int32 => {
            pool.install(|| int_matmul!(i32, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::Int16 => {
            pool.install(|| int_matmul!(i16, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::Int8 => {
            pool.install(|| int_matmul!(i8, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::UInt64 => {
            pool.install(|| int_matmul!(u64, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::UInt32 => {
            pool.install(|| int_matmul!(u32, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::UInt16 => {
            pool.install(|| int_matmul!(u16, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        DType::UInt8 => {
            pool.install(|| int_matmul!(u8, m, n, k, wo.get(), wa.get(), wb.get(), os, as_, bs))
        }
        _ => return Ok(false),
    }
    Ok(true)
}
