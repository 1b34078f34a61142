//! The flush pipeline: a worker thread that runs a cut batch of small arrays down the
//! stack while the program records the next one. The batch goes over with the whole
//! back half of the runtime (`Core`) and comes back with it, so no state is ever shared:
//! whoever needs the back half waits for it (`Runtime::settle`).

use super::core::{Core, Job};
use crate::Result;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

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
                while let Ok(Sent { mut core, mut job }) = inbox.recv() {
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
        self.done.recv().ok()
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
