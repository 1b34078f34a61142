/// What fusion did so far, for `hassium.stats()` / `HASSIUM_STATS=1` (the runtime adds
/// its own counters and prints them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FuseStats {
    /// Batches fused (cache hits included).
    pub batches: u64,
    /// Instructions in those batches, system instructions included.
    pub instrs_seen: u64,
    /// Kernels produced.
    pub kernels: u64,
    /// Bases contracted (summed over kernels).
    pub contracted: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Hits served by the partition store (counted in `cache_hits` too).
    pub store_hits: u64,
    /// Wall time spent in fusion and cache lookups.
    pub fuse_seconds: f64,
}

impl FuseStats {
    /// Fraction of batches served by the fuse cache (0 when none was seen).
    pub fn hit_rate(&self) -> f64 {
        let n = self.cache_hits + self.cache_misses;
        if n == 0 {
            0.0
        } else {
            self.cache_hits as f64 / n as f64
        }
    }
}
