//! A worker's freed mappings, kept for the next base of the same size.
//!
//! A worker maps each base anew (rank 0's bases are the host's). A fresh mapping costs a
//! page fault and a zeroed page for every page a kernel first writes: for a program that
//! makes new arrays of the same sizes every step, as most do, that was most of a worker's
//! time in a memory-bound kernel (2-4x rank 0's for the same block). A mapping freed and
//! reused keeps its pages. Its old contents are what a new, unwritten array holds, as in
//! NumPy's `empty`.

use memmap2::MmapMut;

/// Mapping bytes kept at most (their touched pages stay resident).
const KEEP_BYTES: usize = 2 << 30;

#[derive(Default)]
pub struct Pool {
    /// Most recently freed last.
    free: Vec<MmapMut>,
    bytes: usize,
}

impl Pool {
    /// A kept mapping of exactly `len` bytes, the most recently freed.
    pub fn take(&mut self, len: usize) -> Option<MmapMut> {
        let at = self.free.iter().rposition(|m| m.len() == len)?;
        let m = self.free.remove(at);
        self.bytes -= m.len();
        Some(m)
    }

    /// Keeps `m` for reuse, unmapping the oldest kept ones beyond [`KEEP_BYTES`].
    pub fn give(&mut self, m: MmapMut) {
        if m.len() > KEEP_BYTES {
            return;
        }
        self.bytes += m.len();
        self.free.push(m);
        while self.bytes > KEEP_BYTES {
            let old = self.free.remove(0);
            self.bytes -= old.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_the_same_size_and_keeps_a_bounded_amount() {
        let mut p = Pool::default();
        let mut a = MmapMut::map_anon(4096).unwrap();
        a[0] = 7;
        p.give(a);
        assert!(p.take(8192).is_none());
        let b = p.take(4096).expect("kept");
        assert_eq!(b[0], 7, "the same pages come back");
        assert!(p.take(4096).is_none());
        for _ in 0..3 {
            p.give(MmapMut::map_anon(KEEP_BYTES / 2).unwrap());
        }
        assert_eq!(p.bytes, KEEP_BYTES);
        assert_eq!(p.free.len(), 2);
    }
}
