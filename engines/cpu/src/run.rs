//! Calling compiled kernels: argument packing and the split of `[begin, end)` across the
//! rayon pool.

use crate::cache::{Compiled, KernelFn};
use hassium_codegen::{Lowered, Plan};
use hassium_core::Error as CoreError;

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

/// Pieces of work a split call is cut into, per thread: small enough that the calling
/// thread, which takes pieces until none is left, rarely waits long for one a helper
/// took late.
const PIECES_PER_THREAD: usize = 4;

/// Runs `piece(i)` for every `i` in `0..n`, on the calling thread and on up to `helpers`
/// threads of `pool`, and returns the results in index order. The calling thread does
/// not wait for helpers to wake: it takes pieces itself until none is left, then waits
/// only for pieces a helper has started. Waking a sleeping pool thread took 20 to 80 us
/// on the 2-core build VM and sometimes over a millisecond (its other vCPU descheduled),
/// and `ThreadPool::install` also puts the caller to sleep until the last piece ends,
/// another wake-up; a split then cost more than it saved on calls of 100 us. Here a
/// helper that wakes late finds the work done, and the call takes about its one-thread
/// time.
fn share<F>(
    pool: &rayon::ThreadPool,
    helpers: usize,
    n: usize,
    piece: F,
) -> Vec<Result<(), CoreError>>
where
    F: Fn(usize) -> Result<(), CoreError> + Sync,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// What the caller and the helpers share: `piece` behind a pointer, since helpers
    /// are `'static` tasks and `piece` borrows the call's arguments.
    struct Shared {
        next: AtomicUsize,
        done: AtomicUsize,
        n: usize,
        piece: *const (),
        run: unsafe fn(*const (), usize) -> Result<(), CoreError>,
        results: Mutex<Vec<Option<Result<(), CoreError>>>>,
    }
    // SAFETY: `piece` points to a `Sync` closure, and is only used under the claim rule
    // of `take_pieces`.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    /// Calls the closure `f` points to.
    ///
    /// # Safety
    /// `f` must point to a live `F`.
    unsafe fn run<F: Fn(usize) -> Result<(), CoreError>>(
        f: *const (),
        i: usize,
    ) -> Result<(), CoreError> {
        // SAFETY: the caller's contract.
        let f = unsafe { &*(f as *const F) };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(i)))
            .unwrap_or_else(|_| Err(CoreError::Invalid("a kernel thread panicked".into())))
    }

    /// Takes pieces until none is left. A piece is only run after `next` handed it out,
    /// and the caller of `share` does not return (so `piece` stays alive) until `done`
    /// counts every piece: a helper that starts after the last piece was handed out never
    /// touches `piece`.
    fn take_pieces(s: &Shared) {
        loop {
            let i = s.next.fetch_add(1, Ordering::Relaxed);
            if i >= s.n {
                return;
            }
            // SAFETY: see above; `piece` is alive while pieces are outstanding.
            let r = unsafe { (s.run)(s.piece, i) };
            s.results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            s.done.fetch_add(1, Ordering::Release);
        }
    }

    if n <= 1 || helpers == 0 {
        // Nothing to share (a `Lagged` call on one thread): no counter, no allocation.
        return (0..n).map(piece).collect();
    }
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        n,
        piece: &piece as *const F as *const (),
        run: run::<F>,
        results: Mutex::new((0..n).map(|_| None).collect()),
    });
    for _ in 0..helpers.min(n.saturating_sub(1)) {
        let s = Arc::clone(&shared);
        pool.spawn(move || take_pieces(&s));
    }
    take_pieces(&shared);
    let mut spins = 0u32;
    while shared.done.load(Ordering::Acquire) < n {
        // A helper is finishing a piece it took: spin briefly, then let it have the core.
        if spins < 1 << 10 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    let results = std::mem::take(&mut *shared.results.lock().unwrap_or_else(|e| e.into_inner()));
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(CoreError::Invalid("a kernel piece did not run".into()))))
        .collect()
}

/// The first error in piece order, so the message does not depend on scheduling.
fn first_error(results: Vec<Result<(), CoreError>>) -> Result<(), CoreError> {
    results.into_iter().collect()
}

/// Calls `k` over `[0, extent)`: in pieces of whole `step`s shared across the pool when
/// `split` and there are two steps or more, else in one call. The first error in range
/// order wins.
fn call_split(
    pool: &rayon::ThreadPool,
    threads: usize,
    split: bool,
    extent: usize,
    step: usize,
    k: &Compiled,
    args: &Args,
) -> Result<(), CoreError> {
    let units = extent.div_ceil(step);
    if !split || threads <= 1 || units < 2 {
        return call(k.main, 0, extent, args, std::ptr::null_mut());
    }
    let rs = ranges(units, threads * PIECES_PER_THREAD);
    first_error(share(pool, threads - 1, rs.len(), |r| {
        let (b, e) = rs[r];
        let (b, e) = (b * step, (e * step).min(extent));
        call(k.main, b, e, args, std::ptr::null_mut())
    }))
}

/// Runs a compiled kernel according to its plan, across the pool when `split` (the
/// engine's choice, see `CpuEngine::split_calls`) and the plan has pieces to share. The
/// first error in range order wins, so the message does not depend on scheduling.
///
/// `distinct`: the kernel is a scatter whose indices are distinct (a compaction's ranks,
/// `Batch::in_range`). A scatter's plan is `Serial` because two updates of one element
/// must land in program order; with distinct indices no two iterations touch one
/// element, so its rows are shared like a `Parallel` plan's (C runs both plans' loops
/// over `[begin, end)` alike).
pub fn execute(
    pool: &rayon::ThreadPool,
    threads: usize,
    split: bool,
    distinct: bool,
    lowered: &Lowered,
    k: &Compiled,
    args: &Args,
) -> Result<(), CoreError> {
    match lowered.plan {
        Plan::Empty => Ok(()),
        Plan::Serial { extent } => call_split(pool, threads, split && distinct, extent, 1, k, args),
        // Ranges are whole steps of the parallel loop: blocks of columns of a column
        // reduction or scan, which streams every row once per call (a split inside a
        // block would stream them once more per piece); `ALIGN` elements of a one-loop
        // kernel, so no element's vector or scalar path depends on the split.
        Plan::Parallel { extent, .. } => {
            call_split(pool, threads, split, extent, lowered.split_step(), k, args)
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
                let rs = ranges(chunks, threads * PIECES_PER_THREAD);
                first_error(share(pool, threads - 1, rs.len(), |r| {
                    let (b, e) = rs[r];
                    let p = &p;
                    call(k.main, b * chunk, (e * chunk).min(extent), args, p.0)
                }))?;
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
                ranges(extent, threads * PIECES_PER_THREAD)
            };
            let words = edge.div_ceil(16);
            let mut part = vec![0u128; rs.len() * words];
            let p = Part(part.as_mut_ptr() as *mut u8);
            // Each range's slice of `part`: its ring and held-back rows.
            let run = |f: KernelFn| {
                first_error(share(pool, threads - 1, rs.len(), |r| {
                    let (b, e) = rs[r];
                    let p = &p;
                    // SAFETY: `part` holds `words` u128 per range.
                    let slice = unsafe { p.0.add(r * words * 16) };
                    call(f, b, e, args, slice)
                }))
            };
            // Every range reads its rows' old values before any held-back row is written.
            run(k.main)?;
            run(fin)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn every_piece_runs_once_and_results_come_in_piece_order() {
        let p = pool(3);
        for helpers in 0..4 {
            for n in [0, 1, 2, 7, 64] {
                let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                let results = share(&p, helpers, n, |i| {
                    runs[i].fetch_add(1, Ordering::Relaxed);
                    match i % 5 {
                        3 => Err(CoreError::Invalid(format!("piece {i}"))),
                        _ => Ok(()),
                    }
                });
                assert_eq!(results.len(), n);
                assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
                for (i, r) in results.iter().enumerate() {
                    assert_eq!(r.is_err(), i % 5 == 3, "{helpers} helpers, piece {i}");
                }
                // The first error by piece, whichever thread ran into it first.
                match first_error(results) {
                    Err(e) => assert!(n > 3 && e.to_string().contains("piece 3"), "{e}"),
                    Ok(()) => assert!(n <= 3),
                }
            }
        }
    }

    #[test]
    fn the_caller_does_the_work_when_no_helper_is_free() {
        let p = pool(1);
        // The pool's only thread is busy until told to stop.
        let (stop, wait) = mpsc::channel::<()>();
        p.spawn(move || {
            let _ = wait.recv();
        });
        let me = std::thread::current().id();
        let results = share(&p, 1, 16, |_| {
            assert_eq!(std::thread::current().id(), me);
            Ok(())
        });
        assert!(results.iter().all(Result::is_ok));
        stop.send(()).unwrap();
    }

    #[test]
    fn a_panicking_piece_is_an_error_not_a_crash() {
        let p = pool(2);
        let results = share(&p, 1, 8, |i| {
            if i == 5 {
                panic!("piece 5");
            }
            Ok(())
        });
        assert!(results[5].is_err() && results.iter().filter(|r| r.is_err()).count() == 1);
    }
}
