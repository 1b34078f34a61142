//! A worker's memory for its bases: mappings aligned for huge pages, and freed ones kept
//! for the next base of the same size.
//!
//! Rank 0's bases are the host's, which vem's allocator places at 2 MiB boundaries with a
//! huge-page hint and recycles. A worker mapped each base anew in 4 KiB pages, and paid a
//! page fault and a zeroed page for every page a kernel first wrote: for a program that
//! makes new arrays of the same sizes every step, as most do, a worker's memory-bound
//! kernels ran 2-4x slower than rank 0's on the same block, and a stencil over a grid
//! it kept still ran 1.3-1.9x slower in small pages. So a worker maps as the host does,
//! and a freed mapping is reused with its pages. Its old contents are what a new,
//! unwritten array holds, as in NumPy's `empty`.

use memmap2::MmapMut;

/// Mapping bytes kept at most (their touched pages stay resident).
const KEEP_BYTES: usize = 2 << 30;
/// Mappings kept at most: Linux allows a process 65 530 (`vm.max_map_count`), and a
/// long session frees many small bases (the differential suite ran a worker out of
/// them, and its next mapping failed).
const KEEP_COUNT: usize = 256;
const HUGE_PAGE: usize = 2 << 20;

/// `len` bytes in an anonymous mapping, starting at a 2 MiB boundary when `len` is at
/// least that (the hint asks for huge pages under `madvise`; a failed hint changes
/// nothing).
pub struct Mapping {
    map: MmapMut,
    offset: usize,
    len: usize,
}

impl Mapping {
    fn new(len: usize) -> std::io::Result<Mapping> {
        let len = len.max(1);
        if len < HUGE_PAGE {
            return Ok(Mapping {
                map: MmapMut::map_anon(len)?,
                offset: 0,
                len,
            });
        }
        let map = MmapMut::map_anon(len.next_multiple_of(HUGE_PAGE) + HUGE_PAGE)?;
        let start = map.as_ptr() as usize;
        let offset = start.next_multiple_of(HUGE_PAGE) - start;
        #[cfg(target_os = "linux")]
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, len);
        Ok(Mapping { map, offset, len })
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes_mut().as_mut_ptr()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map[self.offset..self.offset + self.len]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.offset..self.offset + self.len]
    }
}

#[derive(Default)]
pub struct Pool {
    /// Most recently freed last.
    free: Vec<Mapping>,
    bytes: usize,
}

impl Pool {
    /// Memory for a base of `len` bytes: the most recently freed mapping of that length,
    /// or a new one.
    pub fn take(&mut self, len: usize) -> std::io::Result<Mapping> {
        let len = len.max(1);
        match self.free.iter().rposition(|m| m.len == len) {
            Some(at) => {
                let m = self.free.remove(at);
                self.bytes -= m.len;
                Ok(m)
            }
            None => Mapping::new(len),
        }
    }

    /// Keeps `m` for reuse, unmapping the oldest kept ones beyond [`KEEP_BYTES`] or
    /// [`KEEP_COUNT`].
    pub fn give(&mut self, m: Mapping) {
        if m.len > KEEP_BYTES {
            return;
        }
        self.bytes += m.len;
        self.free.push(m);
        while self.bytes > KEEP_BYTES || self.free.len() > KEEP_COUNT {
            let old = self.free.remove(0);
            self.bytes -= old.len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_the_same_size_and_keeps_a_bounded_amount() {
        let mut p = Pool::default();
        let mut a = p.take(4096).unwrap();
        a.bytes_mut()[0] = 7;
        let at = a.as_mut_ptr();
        p.give(a);
        assert_eq!(p.take(8192).unwrap().bytes().len(), 8192);
        let mut b = p.take(4096).expect("kept");
        assert_eq!(b.as_mut_ptr(), at, "the same pages come back");
        assert_eq!(b.bytes()[0], 7);
        for _ in 0..3 {
            p.give(Mapping::new(KEEP_BYTES / 2).unwrap());
        }
        assert_eq!(p.bytes, KEEP_BYTES);
        assert_eq!(p.free.len(), 2);
        for _ in 0..2 * KEEP_COUNT {
            p.give(Mapping::new(4096).unwrap());
        }
        assert_eq!(p.free.len(), KEEP_COUNT);
    }

    #[test]
    fn large_mappings_start_at_a_huge_page_boundary() {
        let mut m = Mapping::new(3 * HUGE_PAGE + 5).unwrap();
        assert_eq!(m.as_mut_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(m.bytes().len(), 3 * HUGE_PAGE + 5);
        m.bytes_mut()[3 * HUGE_PAGE + 4] = 1;
    }
}
