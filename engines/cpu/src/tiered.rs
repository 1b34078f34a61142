//! The background compile thread of tiered execution: jobs arrive over a crossbeam
//! channel; finished kernels land in the shared memory cache, where the next execute call
//! finds them. Until then the engine interprets those kernels.
//!
//! The thread takes the hottest waiting job first: the one whose kernels ran interpreted
//! most often while they waited (`Shared::pending`), the oldest among equals. In arrival
//! order, a loop that starts after many one-off kernels (a program's set-up, or a test
//! suite's earlier tests) ran interpreted until all of them were compiled; the
//! differential suite's cold run kept a loop's kernel waiting over two minutes that way.
//!
//! A short script exits while its last kernels are still compiling. Killing those
//! compiles would lose them, and every later run of the script would interpret and
//! compile them again. So at process exit (a C `atexit` hook) the jobs not finished are
//! handed to a forked process that compiles them into the disk cache and exits, while the
//! script's process exits at once. That process holds a shared `flock` on
//! `<cache_dir>/finishing.lock` for its life: whoever needs the cache complete (the
//! benchmark harness, tests) takes the lock exclusively to wait for it. With
//! `finish_at_exit = false` the jobs are dropped instead (their compiles stopped): a test
//! suite's processes leave thousands of one-off kernels, and finishing them kept a cold CI
//! run's cores busy for over ten minutes after their stage.

use crate::cache::{DiskCache, Entry, KernelMemory};
use crate::compiler::Compiler;
use crossbeam_channel::{unbounded, Sender};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Instant;

/// One compile: a translation unit and the kernels it defines.
pub struct Job {
    pub source: String,
    pub entries: Vec<Entry>,
}

/// State shared between the engine and its compile thread.
#[derive(Default)]
pub struct Shared {
    pub memory: Mutex<KernelMemory>,
    /// Keys sent to the compile thread and not finished yet, each with the calls it ran
    /// interpreted while it waited: what orders the queue.
    pub pending: Mutex<HashMap<u128, u64>>,
    /// Keys whose compile failed: interpreted from then on (the error was logged).
    pub failed: Mutex<HashSet<u128>>,
    /// (kernels compiled, seconds) by the background thread.
    pub compiled: Mutex<(u64, f64)>,
    /// Jobs submitted and not finished, by submission number: what exit hands on.
    unfinished: Mutex<Vec<(u64, Arc<Job>)>>,
}

/// What the exit hook needs of one engine's compile thread.
struct Finisher {
    compiler: Compiler,
    disk: Arc<DiskCache>,
    shared: Arc<Shared>,
    /// Hand the unfinished jobs on (`finish_at_exit`), or only stop their compiles.
    hand_on: bool,
}

/// Every compile thread alive in this process (each removes itself when it ends).
static FINISHERS: Mutex<Vec<Arc<Finisher>>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();
/// Set by the exit hook: a compile it stopped is not a failure worth a warning.
static EXITING: AtomicBool = AtomicBool::new(false);

pub struct Tiered {
    tx: Sender<(u64, Arc<Job>)>,
    shared: Arc<Shared>,
    submitted: u64,
}

impl Tiered {
    /// [`Tiered::start`] in a forked child, for an engine whose compile thread shared
    /// `old` in the parent. That thread did not come along (the parent finishes its
    /// compiles itself), so it leaves the exit hook's registry. `None` when a parent
    /// thread held the registry's lock across the fork: it stays locked here, and the
    /// engine compiles in the foreground instead.
    pub fn start_after_fork(
        compiler: Compiler,
        disk: Arc<DiskCache>,
        shared: Arc<Shared>,
        hand_on: bool,
        old: &Arc<Shared>,
    ) -> Option<Tiered> {
        FINISHERS
            .try_lock()?
            .retain(|f| !Arc::ptr_eq(&f.shared, old));
        Some(Tiered::start(compiler, disk, shared, hand_on))
    }

    pub fn start(
        compiler: Compiler,
        disk: Arc<DiskCache>,
        shared: Arc<Shared>,
        hand_on: bool,
    ) -> Tiered {
        let (tx, rx) = unbounded::<(u64, Arc<Job>)>();
        let finisher = Arc::new(Finisher {
            compiler: compiler.clone(),
            disk: disk.clone(),
            shared: shared.clone(),
            hand_on,
        });
        let thread_shared = shared.clone();
        let registered = finisher.clone();
        let spawned = std::thread::Builder::new()
            .name("hassium-cpu-compile".into())
            .spawn(move || {
                let shared = thread_shared;
                let mut waiting: Vec<(u64, Arc<Job>)> = Vec::new();
                loop {
                    if waiting.is_empty() {
                        match rx.recv() {
                            Ok(j) => waiting.push(j),
                            Err(_) => break,
                        }
                    }
                    waiting.extend(rx.try_iter());
                    let next = hottest(&waiting, &shared.pending.lock());
                    let (id, job) = waiting.remove(next);
                    let start = Instant::now();
                    let keys: Vec<u128> = job.entries.iter().map(|e| e.key).collect();
                    match disk.compile(&compiler, &job.source, &job.entries) {
                        Ok(done) => {
                            let n = done.len() as u64;
                            shared.memory.lock().extend(done);
                            let mut c = shared.compiled.lock();
                            c.0 += n;
                            c.1 += start.elapsed().as_secs_f64();
                        }
                        Err(_) if EXITING.load(Ordering::Relaxed) => {}
                        Err(e) => {
                            crate::compiler::report_failure(&compiler, &e);
                            shared.failed.lock().extend(keys.iter().copied());
                        }
                    }
                    shared.unfinished.lock().retain(|(j, _)| *j != id);
                    let mut p = shared.pending.lock();
                    for k in keys {
                        p.remove(&k);
                    }
                }
                FINISHERS.lock().retain(|f| !Arc::ptr_eq(f, &registered));
            });
        match spawned {
            Ok(_) => {
                FINISHERS.lock().push(finisher);
                HOOK.call_once(|| {
                    // SAFETY: registers a plain `extern "C" fn()`; failure only means no
                    // finishing at exit (kernels are compiled again by the next run).
                    unsafe { libc::atexit(finish_at_exit) };
                });
            }
            // The receiver is gone with the closure, so `submit` reports false and the
            // engine compiles in the foreground.
            Err(e) => tracing::warn!("cannot start the background compile thread: {e}"),
        }
        Tiered {
            tx,
            shared,
            submitted: 0,
        }
    }

    /// Queues a job; false when the thread is gone (the caller compiles in the foreground).
    pub fn submit(&mut self, job: Job) -> bool {
        self.submitted += 1;
        let id = self.submitted;
        let job = Arc::new(job);
        self.shared.unfinished.lock().push((id, job.clone()));
        if self.tx.send((id, job)).is_ok() {
            return true;
        }
        self.shared.unfinished.lock().retain(|(j, _)| *j != id);
        false
    }
}

/// The index in `waiting` (arrival order) of the job to compile next: the most calls
/// interpreted over its kernels, the first among equals.
fn hottest(waiting: &[(u64, Arc<Job>)], heat: &HashMap<u128, u64>) -> usize {
    let mut best = (0, 0u64);
    for (i, (_, job)) in waiting.iter().enumerate() {
        let h = job
            .entries
            .iter()
            .map(|e| heat.get(&e.key).copied().unwrap_or(0))
            .sum::<u64>();
        if h > best.1 {
            best = (i, h);
        }
    }
    best.0
}

/// The lock file a finishing process holds shared while it fills the cache under `root`.
pub fn finishing_lock(root: &Path) -> PathBuf {
    root.join("finishing.lock")
}

/// The `atexit` hook: hands every unfinished compile job to a forked process (or, for an
/// engine configured not to, stops its compiles).
extern "C" fn finish_at_exit() {
    // Ignore a panic here rather than unwind across the C boundary.
    let _ = std::panic::catch_unwind(finish_unfinished);
}

fn finish_unfinished() {
    let work: Vec<(Arc<Finisher>, Vec<Arc<Job>>)> = FINISHERS
        .lock()
        .iter()
        .filter(|f| f.disk.persistent())
        .map(|f| {
            let jobs = f
                .shared
                .unfinished
                .lock()
                .iter()
                .map(|(_, j)| j.clone())
                .collect();
            (f.clone(), jobs)
        })
        .filter(|(_, jobs): &(_, Vec<Arc<Job>>)| !jobs.is_empty())
        .collect();
    if work.is_empty() {
        return;
    }
    EXITING.store(true, Ordering::Relaxed);
    // The compiles running now would be orphaned by the exit and leave their temporary
    // files behind; the finishing process does their jobs again from the start.
    for (f, _) in &work {
        f.disk.stop_running();
    }
    let work: Vec<_> = work.into_iter().filter(|(f, _)| f.hand_on).collect();
    if work.is_empty() {
        return;
    }
    let locks: Vec<i32> = work
        .iter()
        .filter_map(|(f, _)| f.disk.dir().parent().map(finishing_lock))
        .filter_map(|p| shared_lock(&p))
        .collect();
    // SAFETY: the child runs only code that takes no lock another thread may hold
    // (`compile_and_store`, std's process spawning, file I/O; glibc's malloc is safe
    // after fork) and leaves through `_exit`, so no atexit hook or destructor runs twice.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        detach(&locks);
        for (f, jobs) in &work {
            for job in jobs {
                let _ = f
                    .disk
                    .compile_and_store(&f.compiler, &job.source, &job.entries);
            }
            f.disk.remove_stale_temporaries();
        }
        // SAFETY: ends the child without running the parent's exit path again.
        unsafe { libc::_exit(0) };
    }
    // The parent (or a failed fork): the child has its own copies of the lock fds.
    for fd in locks {
        // SAFETY: fds this function opened.
        unsafe { libc::close(fd) };
    }
}

/// Opens `path` and takes a shared lock without waiting: the fd, or None (no lock file,
/// or someone waiting for the cache holds it: the finishing then cannot be waited for).
fn shared_lock(path: &Path) -> Option<i32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: plain syscalls on a NUL-terminated path and the fd they return.
    unsafe {
        let fd = libc::open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return None;
        }
        if libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) != 0 {
            libc::close(fd);
            return None;
        }
        Some(fd)
    }
}

/// In the finishing process: its own session at low priority, no terminal, and no fd of
/// the parent's but the locks, so nobody reading the parent's output waits for it.
fn detach(locks: &[i32]) {
    // SAFETY: plain syscalls in a single-threaded child.
    unsafe {
        libc::setsid();
        libc::nice(10);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
        }
        let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
            n if n > 0 => n.min(1 << 16) as i32,
            _ => 1024,
        };
        for fd in 3..max {
            if !locks.contains(&fd) {
                libc::close(fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(keys: &[u128]) -> Arc<Job> {
        let entries = keys
            .iter()
            .map(|&key| Entry {
                key,
                symbol: format!("hs_{key}"),
                has_fin: false,
            })
            .collect();
        Arc::new(Job {
            source: String::new(),
            entries,
        })
    }

    #[test]
    fn the_job_whose_kernels_ran_most_is_compiled_first_and_arrival_breaks_ties() {
        let waiting = vec![(1, job(&[10, 11])), (2, job(&[20])), (3, job(&[30, 31]))];
        let mut heat = HashMap::new();
        assert_eq!(hottest(&waiting, &heat), 0, "nothing ran: arrival order");
        heat.insert(20, 3);
        assert_eq!(hottest(&waiting, &heat), 1);
        heat.insert(30, 2);
        heat.insert(31, 2);
        assert_eq!(
            hottest(&waiting, &heat),
            2,
            "a job's kernels count together"
        );
        heat.insert(20, 4);
        assert_eq!(hottest(&waiting, &heat), 1, "the first among equals");
    }
}
