//! Whether this is still the process an engine started in, without a system call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// Forks this process has been the child of, counted by an `atfork` handler.
static FORKS: AtomicU64 = AtomicU64::new(0);
static HANDLER: Once = Once::new();

extern "C" fn count_fork_in_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// A number that changes in the child each time a process forks (`fork`, `os.fork`,
/// multiprocessing's default start on Linux). An engine keeps the number it started
/// under and compares it on every call: one atomic load, where `getpid` was a system
/// call on every flush (6 000 of them in 6 000 flushes of a 100-element loop, whose
/// flush takes about 4 µs on the 2-core build VM).
///
/// The first call registers the handler, so an engine calls this when it starts: a fork
/// before that is no fork of that engine's process. A `vfork` or `posix_spawn` child
/// runs no handler, and runs no engine code either: it only calls `exec`.
pub fn process_generation() -> u64 {
    HANDLER.call_once(|| {
        // SAFETY: registers a handler that only increments an atomic, which is
        // async-signal-safe, as a child's handler must be.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(count_fork_in_child)) };
        if rc != 0 {
            tracing::warn!("pthread_atfork failed ({rc}): forks will go unnoticed");
        }
    });
    FORKS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_sees_a_new_generation_and_the_parent_does_not() {
        let before = process_generation();
        // SAFETY: the child only reads an atomic and leaves through `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = if process_generation() == before + 1 {
                0
            } else {
                1
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(process_generation(), before);
    }
}
