//! Where a full queue is cut: at a low point of the program's working set.
//!
//! A queue that reaches its threshold in the middle of a loop iteration flushes with the
//! iteration's temporaries still alive in the program, and every one of them must then
//! be written to memory — arrays that fusion would otherwise have kept in registers, in
//! fresh buffers (shallow water, 20 steps of a 1000² grid: 14 extra 8 MB arrays at its
//! one threshold flush, 50 ms of writes and page faults in a 300 ms run). So past the
//! threshold the queue waits for the bytes held by live arrays to come down to the least
//! they were over the last half-threshold of instructions — a loop shorter than that has
//! passed its own low point there, the boundary between iterations — and flushes at
//! twice the threshold whatever happens, for programs whose working set only grows.

#[derive(Default)]
pub(crate) struct FlushPoint {
    /// Bytes of bases created and not yet freed.
    live: usize,
    /// The least `live` since the last recorded instruction (frees lower it between two).
    low: usize,
    /// `low` at each recorded instruction of the queue.
    lows: Vec<usize>,
    /// Once the threshold is reached: the level to wait for.
    target: Option<usize>,
}

impl FlushPoint {
    pub fn created(&mut self, bytes: usize) {
        self.live += bytes;
    }

    pub fn freed(&mut self, bytes: usize) {
        self.live = self.live.saturating_sub(bytes);
        self.low = self.low.min(self.live);
    }

    /// An instruction was recorded and the queue holds `queued`: flush now?
    pub fn record(&mut self, queued: usize, threshold: usize) -> bool {
        self.lows.push(self.low);
        let low = std::mem::replace(&mut self.low, self.live);
        if queued < threshold {
            return false;
        }
        if queued >= threshold.saturating_mul(2) {
            return true;
        }
        let lows = &self.lows;
        let target = *self.target.get_or_insert_with(|| {
            let window = lows.len().saturating_sub(threshold / 2);
            lows[window..].iter().copied().min().unwrap_or(0)
        });
        low <= target
    }

    /// The queue was flushed.
    pub fn flushed(&mut self) {
        self.lows.clear();
        self.target = None;
        self.low = self.live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop of 10 instructions whose temporaries (100 bytes each) die at its end.
    fn iteration(f: &mut FlushPoint, queued: &mut usize, threshold: usize) -> Option<usize> {
        for k in 0..10 {
            f.created(100);
            *queued += 1;
            if f.record(*queued, threshold) {
                return Some(k);
            }
        }
        for _ in 0..10 {
            f.freed(100);
        }
        None
    }

    #[test]
    fn a_full_queue_flushes_at_the_next_iteration_boundary() {
        let mut f = FlushPoint::default();
        f.created(1000); // the loop's state, alive throughout
        let mut queued = 0;
        let mut cut = None;
        for _ in 0..10 {
            if let Some(k) = iteration(&mut f, &mut queued, 45) {
                cut = Some((queued, k));
                break;
            }
        }
        // 45 reached inside the 5th iteration; the cut waits for the 6th one's start.
        assert_eq!(cut, Some((51, 0)));
    }

    #[test]
    fn a_growing_working_set_flushes_at_twice_the_threshold() {
        let mut f = FlushPoint::default();
        let flushed_at = (1..).find(|&n| {
            f.created(8);
            f.record(n, 100)
        });
        assert_eq!(flushed_at, Some(200));
        f.flushed();
        assert!(!f.record(1, 100));
    }
}
