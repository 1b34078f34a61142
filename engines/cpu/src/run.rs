//! Calling compiled kernels: argument packing and the split of `[begin, end)` across the
//! rayon pool.

use crate::cache::{Compiled, KernelFn};
use hassium_codegen::{Lowered, Plan};
use hassium_core::Error as CoreError;
use rayon::prelude::*;

/// The raw arguments of one kernel call, shared by the pool's threads.
pub struct Args<'a> {
    pub bufs: Vec<*mut u8>,
    /// 16 bytes per scalar slot (u128 keeps them aligned).
    pub scal: Vec<u128>,
    pub meta: &'a [i64],
}

// SAFETY: the pointers describe host buffers the runtime lends for the whole execute call;
// the kernel plan guarantees threads write disjoint elements (Parallel) or disjoint
// partial slots (Partials), so sharing them across the pool is sound.
unsafe impl Send for Args<'_> {}
unsafe impl Sync for Args<'_> {}

struct Part(*mut u8);
// SAFETY: each chunk (or range of a `Lagged` plan) writes only its own slots of the
// partials buffer.
unsafe impl Send for Part {}
unsafe impl Sync for Part {}

fn call(f: KernelFn, begin: usize, end: usize, a: &Args, part: *mut u8) -> Result<(), CoreError> {
    let mut err = [0i64; 4];
    // SAFETY: the arguments match the lowered kernel the function was compiled from
    // (same signature hash), buffers are live for the call, `part` is large enough.
    let status = unsafe {
        f(
            begin as i64,
            end as i64,
            a.bufs.as_ptr(),
            a.scal.as_ptr() as *const u8,
            a.meta.as_ptr(),
            part,
            err.as_mut_ptr(),
        )
    };
    match status {
        0 => Ok(()),
        s => Err(hassium_core::status_error(s.into(), &err)),
    }
}

/// Splits `[0, n)` into at most `parts` contiguous, nearly equal ranges.
fn ranges(n: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts)
        .map(|p| (n * p / parts, n * (p + 1) / parts))
        .filter(|(a, b)| a < b)
        .collect()
}

/// Runs a compiled kernel according to its plan, across the pool when `split` (the
/// engine's choice, see `CpuEngine::split_calls`) and the plan has pieces to share. The
/// first error in range order wins, so the message does not depend on scheduling.
pub fn execute(
    pool: &rayon::ThreadPool,
    threads: usize,
    split: bool,
    lowered: &Lowered,
    k: &Compiled,
    args: &Args,
) -> Result<(), CoreError> {
    match lowered.plan {
        Plan::Empty => Ok(()),
        Plan::Serial { extent } => call(k.main, 0, extent, args, std::ptr::null_mut()),
        Plan::Parallel { extent, .. } => {
            // Ranges are whole steps of the parallel loop: blocks of columns of a column
            // reduction or scan, which streams every row once per call (a split inside
            // a block would stream them once more per piece); `ALIGN` elements of a
            // one-loop kernel, so no element's vector or scalar path depends on the split.
            let step = lowered.split_step();
            let units = extent.div_ceil(step);
            if !split || threads <= 1 || units < 2 {
                return call(k.main, 0, extent, args, std::ptr::null_mut());
            }
            let rs = ranges(units, threads * 4);
            pool.install(|| {
                rs.par_iter()
                    .map(|&(b, e)| {
                        let (b, e) = (b * step, (e * step).min(extent));
                        call(k.main, b, e, args, std::ptr::null_mut())
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .collect::<Result<(), _>>()
            })
        }
        Plan::Partials {
            extent,
            chunks,
            slots,
            chunk,
            ..
        } => {
            let mut part = vec![0u128; chunks * slots.max(1)];
            let p = Part(part.as_mut_ptr() as *mut u8);
            let fin = k.fin.ok_or_else(|| {
                CoreError::Invalid("partial reduction without a combining function".into())
            })?;
            if !split || threads <= 1 || chunks < 2 {
                call(k.main, 0, extent, args, p.0)?;
            } else {
                // Ranges are whole chunks, so every chunk's partial is the same whatever
                // the split; `fin` combines them in chunk order.
                let rs = ranges(chunks, threads * 4);
                pool.install(|| {
                    rs.par_iter()
                        .map(|&(b, e)| {
                            let p = &p;
                            call(k.main, b * chunk, (e * chunk).min(extent), args, p.0)
                        })
                        .collect::<Vec<_>>()
                        .into_iter()
                        .collect::<Result<(), _>>()
                })?;
            }
            call(fin, 0, chunks, args, p.0)
        }
        Plan::Lagged { extent, edge, .. } => {
            let fin = k.fin.ok_or_else(|| {
                CoreError::Invalid("held-back writes without a finishing function".into())
            })?;
            let rs = if !split || threads <= 1 || extent < 2 {
                vec![(0, extent)]
            } else {
                ranges(extent, threads * 4)
            };
            let words = edge.div_ceil(16);
            let mut part = vec![0u128; rs.len() * words];
            let p = Part(part.as_mut_ptr() as *mut u8);
            // Each range's slice of `part`: its ring and held-back rows.
            let run = |f: KernelFn| {
                pool.install(|| {
                    rs.par_iter()
                        .enumerate()
                        .map(|(r, &(b, e))| {
                            let p = &p;
                            // SAFETY: `part` holds `words` u128 per range.
                            let slice = unsafe { p.0.add(r * words * 16) };
                            call(f, b, e, args, slice)
                        })
                        .collect::<Vec<_>>()
                        .into_iter()
                        .collect::<Result<(), _>>()
                })
            };
            // Every range reads its rows' old values before any held-back row is written.
            run(k.main)?;
            run(fin)
        }
    }
}
