//! The flush pipeline: a worker thread that runs a cut batch of small arrays down the
//! stack while the program records the next one. The batch goes over with the whole
//! back half of the runtime (`Core`) and comes back with it, so no state is ever shared:
//! whoever needs the back half waits for it (`Runtime::settle`).

use super::core::{Core, Job};
use crate::Result;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A batch handed to the worker, and the back half that runs it.
pub(super) struct Sent {
    pub core: Box<Core>,
    pub job: Job,
}

/// The same, run.
pub(super) struct Ran {
    pub core: Box<Core>,
    pub job: Job,
    /// The run's result, or the panic it ended in (re-raised by whoever waits).
    pub result: std::thread::Result<Result<()>>,
}

/// The worker thread and its two channels.
pub(super) struct Worker {
    jobs: Option<Sender<Sent>>,
    done: Receiver<Ran>,
    thread: Option<JoinHandle<()>>,
    /// The process that started the thread: a child forked from it has no such thread.
    pid: u32,
}

impl Worker {
    pub fn start() -> std::io::Result<Worker> {
        let (jobs, inbox) = channel::<Sent>();
        let (outbox, done) = channel::<Ran>();
        let thread = std::thread::Builder::new()
            .name("hassium-flush".into())
            .spawn(move || {
                while let Some(Sent { mut core, mut job }) = receive(&inbox, WORKER_SPIN) {
                    // The back half comes back even from a panic, which the waiting
                    // call re-raises; the thread lives on for the next batch.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        core.run(&mut job)
                    }));
                    if outbox.send(Ran { core, job, result }).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Worker {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
            pid: std::process::id(),
        })
    }

    /// Whether the thread exists in this process (not in a child forked after it started).
    pub fn here(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Hands a batch over; gives it back when the thread is gone.
    pub fn send(&self, sent: Sent) -> Option<Sent> {
        match &self.jobs {
            Some(tx) => tx.send(sent).err().map(|e| e.0),
            None => Some(sent),
        }
    }

    /// The batch handed over last, run; `None` when the thread died with it (a panic).
    pub fn wait(&self) -> Option<Ran> {
        receive(&self.done, SPIN)
    }
}

/// How long the recorder polls (yielding its core to any thread that has work) for the
/// batch it waits for before it sleeps: waking a sleeping thread takes tens of
/// microseconds, longer on a virtual machine, whose idle CPU the host must wake.
const SPIN: Duration = Duration::from_micros(200);

/// How long the worker polls for the next batch before it sleeps. A loop over small
/// arrays hands a batch over every few hundred microseconds, and waking the sleeping
/// worker each time cost the recorder ~13 µs in a futex call on a 2-vCPU virtual machine
/// (small_arrays: 8% of its time). Polling yields the core to any thread with work, so
/// on a busy machine it costs the recorder little (measured with two CPU hogs beside it:
/// no change beyond the noise); an idle program pays at most this much CPU per batch.
const WORKER_SPIN: Duration = Duration::from_micros(400);

/// The next message, polled for `spin` before blocking; `None` when the sender is gone.
fn receive<T>(rx: &Receiver<T>, spin: Duration) -> Option<T> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(m) => return Some(m),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        if start.elapsed() >= spin {
            return rx.recv().ok();
        }
        // Polling must not keep a thread that has work from a core (the other side of
        // the pipeline on a busy machine, a compiler the engine started).
        std::thread::yield_now();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            if self.here() {
                let _ = t.join();
            } else {
                // A forked child has no such thread: its handle is neither joined nor
                // detached.
                std::mem::forget(t);
            }
        }
    }
}

/// Whether handing batches over pays. On a busy machine the worker shares a core with
/// other work and the recorder ends up waiting for it: then batches run on the recorder's
/// thread for a while (`PAUSE` cuts) before the pipeline is tried again.
#[derive(Default)]
pub(super) struct Stalls {
    /// The last eight hand-overs, one bit each: set when the recorder waited for it.
    recent: u8,
    /// Cuts left to run on the recorder's thread.
    paused: u32,
    handed_at: Option<Instant>,
}

/// Cuts run on the recorder's thread after the pipeline stalled.
const PAUSE: u32 = 64;

impl Stalls {
    /// Whether the next cut may go to the worker (counts down a pause).
    pub fn allow(&mut self) -> bool {
        if self.paused == 0 {
            return true;
        }
        self.paused -= 1;
        false
    }

    pub fn handed(&mut self) {
        self.handed_at = Some(Instant::now());
    }

    /// The batch handed over last came back after the recorder, ready to cut the next,
    /// waited `waited` for it: a stall when that is a quarter of the time since the hand-over.
    pub fn back(&mut self, waited: Duration) {
        let Some(at) = self.handed_at.take() else {
            return;
        };
        let stalled = waited * 4 > at.elapsed();
        self.recent = (self.recent << 1) | u8::from(stalled);
        if self.recent.count_ones() >= 4 {
            self.recent = 0;
            self.paused = PAUSE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_pause_the_pipeline_and_it_is_tried_again() {
        let mut s = Stalls::default();
        for _ in 0..3 {
            assert!(s.allow());
            s.handed();
            s.back(Duration::from_secs(1));
        }
        assert!(s.allow(), "three stalls of eight do not pause it");
        s.handed();
        s.back(Duration::from_secs(1));
        for _ in 0..PAUSE {
            assert!(!s.allow());
        }
        assert!(s.allow(), "tried again after the pause");
        // A batch back before the recorder needed it is no stall.
        for _ in 0..16 {
            s.handed();
            s.back(Duration::ZERO);
            assert!(s.allow());
        }
    }
}
