//! Host memory of bases: 64-byte aligned, allocated on first use, recycled by size.
//!
//! Small buffers come from the global allocator; large ones are anonymous mappings, so
//! pages a program never touches cost nothing. Freed buffers go to a pool keyed by their
//! rounded size, because array programs allocate the same sizes every iteration.

use crate::{Error, Result};
use std::alloc::Layout;
use std::collections::BTreeMap;

const ALIGN: usize = 64;
/// Buffers from this size up are anonymous mappings.
const MAP_THRESHOLD: usize = 1 << 20;
/// Most bytes kept in the pool for reuse.
const POOL_LIMIT: usize = 1 << 30;
/// A request missing its own class takes a pooled block of up to this many times its
/// size (see [`HostMemory::alloc`]).
const LARGER_BY: usize = 2;

/// One allocation.
pub enum Block {
    Heap {
        ptr: *mut u8,
        layout: Layout,
    },
    /// `size` bytes (its class) at `offset` into an anonymous mapping: a 2 MiB boundary
    /// for blocks of a huge page or more (see `map_block`).
    Map {
        map: memmap2::MmapMut,
        offset: usize,
        size: usize,
    },
}

// SAFETY: a Block exclusively owns its memory.
unsafe impl Send for Block {}

impl Block {
    pub fn as_ptr(&mut self) -> *mut u8 {
        match self {
            Block::Heap { ptr, .. } => *ptr,
            // SAFETY: `map_block` keeps `offset + size` within the mapping.
            Block::Map { map, offset, .. } => unsafe { map.as_mut_ptr().add(*offset) },
        }
    }
    fn capacity(&self) -> usize {
        match self {
            Block::Heap { layout, .. } => layout.size(),
            Block::Map { size, .. } => *size,
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Block::Heap { ptr, layout } = self {
            // SAFETY: allocated in `alloc` with this layout and freed only here.
            unsafe { std::alloc::dealloc(*ptr, *layout) }
        }
    }
}

/// Rounds a request so that near sizes share pool slots. Mapped sizes go up to one of 32
/// classes per power of two: a stencil's arrays (n², n(n+1), (n+2)²) then share one
/// class and recycle each other's buffers, where exact sizes left the pool missing and
/// every miss costs fresh pages. The slack (under 1/32) is never touched, and untouched
/// pages of a mapping cost no memory.
fn rounded(bytes: usize) -> usize {
    let b = bytes.max(ALIGN);
    if b <= 4096 {
        b.next_power_of_two()
    } else if b < MAP_THRESHOLD {
        b.div_ceil(4096) * 4096
    } else {
        let step = b.next_power_of_two() / 32;
        b.div_ceil(step) * step
    }
}

/// A block of `size` bytes in a fresh anonymous mapping. From one huge page up, the block
/// starts at a 2 MiB boundary and Linux is asked to back it with 2 MiB pages where
/// transparent huge pages are on `madvise` (the Debian default): a fresh 8 MB array then
/// costs 4 page faults instead of 2048, and its kernels miss the TLB less.
///
/// Alignment is ours: Linux 6.18 aligns an anonymous mapping only when its length is a
/// multiple of 2 MiB, which size classes mostly are not, and older kernels never do. A
/// mapping at a 4 KiB boundary kept its partial 2 MiB at either end in small pages: 93% of
/// shallow water's 81 MB was in huge pages. Once all of it was, its execute time fell from
/// 222 to 169 ms and the heat equation's from 159 to 143 ms (medians of 8 alternating runs
/// on the build VM; Black-Scholes, nbody and rosenbrock unchanged). So the mapping is one
/// huge page longer than needed, the block starts at the first boundary in it (the bytes
/// before are never touched, so they cost address space only), and the hint covers
/// `huge_span(size)`.
///
/// Only a hint, and first touch of huge pages is not always cheaper: on the build VM a
/// fresh 48 MB took 4–12 ms with huge pages freed seconds before and 95–155 ms with ones
/// the guest had since reported free to the host (virtio free-page reporting, which hands
/// back whole 2 MiB blocks), against a steady 12–38 ms with 4 KiB pages (README,
/// "Performance"). A failed hint changes nothing.
fn map_block(size: usize) -> std::io::Result<Block> {
    #[cfg(target_os = "linux")]
    if size >= HUGE_PAGE {
        let map = memmap2::MmapMut::map_anon(size.next_multiple_of(HUGE_PAGE) + HUGE_PAGE)?;
        let start = map.as_ptr() as usize;
        let offset = start.next_multiple_of(HUGE_PAGE) - start;
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, huge_span(size));
        return Ok(Block::Map { map, offset, size });
    }
    let map = memmap2::MmapMut::map_anon(size)?;
    Ok(Block::Map {
        map,
        offset: 0,
        size,
    })
}

/// How much of a `size`-byte block from a 2 MiB boundary is asked for in huge pages: all
/// of it, the last huge page included, when that page's unused part (touched memory all
/// the same) is at most an eighth of the block; otherwise its whole huge pages only, and
/// the rest stays in 4 KiB pages.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn huge_span(size: usize) -> usize {
    let up = size.next_multiple_of(HUGE_PAGE);
    if up - size <= size / 8 {
        up
    } else {
        size / HUGE_PAGE * HUGE_PAGE
    }
}

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// The pool of free blocks plus counters.
#[derive(Default)]
pub struct HostMemory {
    pool: BTreeMap<usize, Vec<Block>>,
    pooled_bytes: usize,
    pub allocated_bytes: usize,
    pub reused: u64,
    pub fresh: u64,
}

impl HostMemory {
    /// The bytes a request for `bytes` takes from the pool: its size class.
    pub fn block_bytes(bytes: usize) -> usize {
        rounded(bytes)
    }

    /// A block of at least `bytes` bytes; contents are unspecified (as `np.empty`), except
    /// that fresh mappings are zero.
    ///
    /// A request that misses its own class takes the smallest pooled block up to twice
    /// its size: arrays whose sizes change every iteration (what a shrinking mask
    /// selects, an LU's or a Gaussian elimination's trailing block) then reuse touched
    /// pages instead of faulting in fresh ones (zeroing them was a sixth of a Mandelbrot
    /// run's time). Heap blocks too: with exact classes only, each freed block of a
    /// shrinking loop stayed in the pool, never asked for again, while every new size
    /// came fresh from the allocator; a loop over a shrinking 400² block spent most of
    /// its kernel time in page faults and ran slower than NumPy. A pooled block is
    /// resident already, so this never adds memory; the bound keeps a small array from
    /// holding a large block that the next large request would then allocate afresh.
    pub fn alloc(&mut self, bytes: usize) -> Result<Block> {
        let size = rounded(bytes);
        let most = size * LARGER_BY;
        let class = self
            .pool
            .range_mut(size..=most)
            .find(|(_, blocks)| !blocks.is_empty())
            .map(|(&c, _)| c);
        if let Some(c) = class {
            let b = self
                .pool
                .get_mut(&c)
                .and_then(Vec::pop)
                .expect("found above");
            self.pooled_bytes -= c;
            self.reused += 1;
            return Ok(b);
        }
        self.fresh += 1;
        let oom = |e: String| Error::OutOfMemory(format!("cannot allocate {bytes} bytes: {e}"));
        let block = if size >= MAP_THRESHOLD {
            map_block(size).map_err(|e| oom(e.to_string()))?
        } else {
            let layout = Layout::from_size_align(size, ALIGN).map_err(|e| oom(e.to_string()))?;
            // SAFETY: layout has non-zero size.
            let ptr = unsafe { std::alloc::alloc(layout) };
            if ptr.is_null() {
                return Err(oom("the allocator returned null".into()));
            }
            Block::Heap { ptr, layout }
        };
        self.allocated_bytes += size;
        Ok(block)
    }

    /// Returns a block to the pool (or to the system when the pool is full).
    pub fn release(&mut self, block: Block) {
        let size = block.capacity();
        if self.pooled_bytes + size <= POOL_LIMIT {
            self.pooled_bytes += size;
            self.pool.entry(size).or_default().push(block);
        } else {
            self.allocated_bytes -= size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_large_sizes_share_a_class_and_small_ones_stay_exact() {
        // The interior, a face grid and the padded grid of a 1000² stencil.
        let n = 1000 * 8;
        let class = rounded(1000 * n);
        assert_eq!(rounded(1001 * n), class);
        assert_eq!(rounded(1002 * 1002 * 8), class);
        assert!(class >= 1002 * 1002 * 8 && class - 1000 * n < 1000 * n / 32);
        assert_ne!(rounded(1100 * n), class);
        assert_eq!(rounded(5000), 8192);
        assert_eq!(rounded(100), 128);
        let mut m = HostMemory::default();
        let a = m.alloc(1001 * n).unwrap();
        m.release(a);
        let _b = m.alloc(1000 * n).unwrap();
        assert_eq!((m.reused, m.fresh), (1, 1));
    }

    #[test]
    fn a_request_takes_a_pooled_block_up_to_twice_its_size() {
        let mut m = HostMemory::default();
        let mb = 1 << 20;
        let a = m.alloc(5 * mb).unwrap();
        m.release(a);
        // A selection that shrank by a third reuses the block...
        let mut b = m.alloc(5 * mb - 5 * mb / 3).unwrap();
        assert_eq!((m.reused, m.fresh), (1, 1));
        assert!(b.capacity() >= 5 * mb);
        let p = b.as_ptr();
        m.release(b);
        // ...and one of under half the size does not.
        let _c = m.alloc(5 * mb / 2 - mb / 4).unwrap();
        assert_eq!((m.reused, m.fresh), (1, 2));
        let mut d = m.alloc(3 * mb).unwrap();
        assert_eq!((d.as_ptr(), m.reused), (p, 2));
        // Heap blocks alike: a shrinking small array reuses the last one's block, one
        // of under half its size does not.
        let e = m.alloc(300_000).unwrap();
        m.release(e);
        let f = m.alloc(250_000).unwrap();
        assert_eq!((m.reused, m.fresh), (3, 3));
        assert!(f.capacity() >= 300_000);
        m.release(f);
        let _g = m.alloc(100_000).unwrap();
        assert_eq!((m.reused, m.fresh), (3, 4));
    }

    #[test]
    fn blocks_are_aligned_and_recycled() {
        let mut m = HostMemory::default();
        let mut a = m.alloc(100).unwrap();
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        let p = a.as_ptr();
        m.release(a);
        let mut b = m.alloc(90).unwrap();
        assert_eq!(b.as_ptr(), p);
        assert_eq!(m.reused, 1);
        let mut big = m.alloc(3 << 20).unwrap();
        assert_eq!(big.as_ptr() as usize % ALIGN, 0);
        let p = big.as_ptr();
        m.release(big);
        let mut again = m.alloc(3 << 20).unwrap();
        assert_eq!(again.as_ptr(), p);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_start_at_a_huge_page_and_are_whole() {
        let mut m = HostMemory::default();
        for bytes in [2 << 20, 1001 * 1000 * 8, (5 << 20) + 4096, 33 << 20] {
            let mut b = m.alloc(bytes).unwrap();
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE, 0, "{bytes} bytes");
            // Every byte of the class is there to write and read back.
            let size = b.capacity();
            assert!(size >= bytes);
            // SAFETY: the block owns `size` bytes from its pointer.
            let s = unsafe { std::slice::from_raw_parts_mut(b.as_ptr(), size) };
            s[0] = 1;
            s[size - 1] = 2;
            assert_eq!((s[0], s[size - 1]), (1, 2));
        }
    }

    #[test]
    fn the_huge_page_hint_covers_the_tail_only_when_little_is_wasted() {
        let mb = 1 << 20;
        // 8 MB arrays: the last huge page is mostly used.
        assert_eq!(huge_span(1001 * 1000 * 8), 8 * mb);
        assert_eq!(huge_span(8 * mb), 8 * mb);
        // 2.1 MB: a second huge page would be nearly all waste.
        assert_eq!(huge_span(2 * mb + 100 * 1024), 2 * mb);
        // From 16 MiB up the tail is always covered (at most 2 MiB over an eighth).
        assert_eq!(huge_span(17 * mb), 18 * mb);
    }
}
