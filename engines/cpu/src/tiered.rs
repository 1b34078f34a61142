//! The background compile thread of tiered execution: jobs arrive over a crossbeam
//! channel; finished kernels land in the shared memory cache, where the next execute call
//! finds them. Until then the engine interprets those kernels.

use crate::cache::{Compiled, DiskCache, Entry};
use crate::compiler::Compiler;
use crossbeam_channel::{unbounded, Sender};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// One compile: a translation unit and the kernels it defines.
pub struct Job {
    pub source: String,
    pub entries: Vec<Entry>,
}

/// State shared between the engine and its compile thread.
#[derive(Default)]
pub struct Shared {
    pub memory: Mutex<HashMap<u128, Compiled>>,
    /// Keys sent to the compile thread and not finished yet.
    pub pending: Mutex<HashSet<u128>>,
    /// Keys whose compile failed: interpreted from then on (the error was logged).
    pub failed: Mutex<HashSet<u128>>,
    /// (kernels compiled, seconds) by the background thread.
    pub compiled: Mutex<(u64, f64)>,
}

pub struct Tiered {
    tx: Sender<Job>,
}

impl Tiered {
    pub fn start(compiler: Compiler, disk: Arc<DiskCache>, shared: Arc<Shared>) -> Tiered {
        let (tx, rx) = unbounded::<Job>();
        let spawned = std::thread::Builder::new()
            .name("hassium-cpu-compile".into())
            .spawn(move || {
                for job in rx {
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
                        Err(e) => {
                            tracing::warn!(
                                "background compile failed; those kernels stay interpreted: {e}"
                            );
                            shared.failed.lock().extend(keys.iter().copied());
                        }
                    }
                    let mut p = shared.pending.lock();
                    for k in keys {
                        p.remove(&k);
                    }
                }
            });
        if let Err(e) = spawned {
            // The receiver is gone with the closure, so `submit` reports false and the
            // engine compiles in the foreground.
            tracing::warn!("cannot start the background compile thread: {e}");
        }
        Tiered { tx }
    }

    /// Queues a job; false when the thread is gone (the caller compiles in the foreground).
    pub fn submit(&self, job: Job) -> bool {
        self.tx.send(job).is_ok()
    }
}
