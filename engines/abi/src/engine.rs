use crate::{Buffers, HostBuffer, Memo, Result};
use hassium_core::{BaseId, Batch, Capabilities, Kernel};
use serde::{Deserialize, Serialize};

/// What an engine is created with.
pub struct EngineContext {
    /// The engine's TOML section (`[engines.NAME]`), already merged with overrides.
    pub config: toml::Table,
    /// The engine this one hands what it cannot do to, when the config names one.
    pub child: Option<Box<dyn Engine>>,
}

/// Counters an engine reports for `hassium.stats()`; engines fill what applies to them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EngineStats {
    pub kernels_run: u64,
    pub kernels_compiled: u64,
    pub cache_hits_memory: u64,
    pub cache_hits_disk: u64,
    pub interpreted: u64,
    pub fallbacks: u64,
    pub compile_seconds: f64,
    pub execute_seconds: f64,
    pub bytes_moved: u64,
    /// Anything engine-specific, as name → value.
    pub extra: std::collections::BTreeMap<String, f64>,
    /// Per compiled kernel, for engines that time kernels one by one: the most
    /// time-consuming first, at most [`MAX_KERNEL_STATS`].
    #[serde(default)]
    pub kernels: Vec<KernelStats>,
}

/// Most kernels [`EngineStats::kernels`] lists.
pub const MAX_KERNEL_STATS: usize = 100;

/// One compiled kernel's counters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelStats {
    /// The kernel's cache key in hex (its function is `hs_<key>`).
    pub key: String,
    /// Instructions fused into it.
    pub instrs: u64,
    /// Elements of its iteration space (of the last call).
    pub elements: u64,
    pub calls: u64,
    pub seconds: f64,
    /// Bytes its calls must move at least (the engine's estimate).
    pub bytes_moved: u64,
    pub gb_per_s: f64,
    /// The simd loops of its compiled code that the compiler vectorised, and how many it
    /// has, from the compiler's own report; `None` where the engine does not know (no
    /// report from this compiler, or an entry cached before it was recorded).
    #[serde(default)]
    pub simd_loops: Option<(u32, u32)>,
}

impl KernelStats {
    /// Counts one call.
    pub fn add(&mut self, seconds: f64, bytes: u64, elements: u64) {
        self.calls += 1;
        self.seconds += seconds;
        self.bytes_moved += bytes;
        self.elements = elements;
        if self.seconds > 0.0 {
            self.gb_per_s = self.bytes_moved as f64 / self.seconds / 1e9;
        }
    }
}

/// The `n` entries of `kernels` that took longest, longest first.
pub fn slowest_kernels(kernels: impl Iterator<Item = KernelStats>, n: usize) -> Vec<KernelStats> {
    let mut v: Vec<KernelStats> = kernels.collect();
    v.sort_by(|a, b| {
        b.seconds
            .total_cmp(&a.seconds)
            .then_with(|| a.key.cmp(&b.key))
    });
    v.truncate(n);
    v
}

/// An execution engine: the one verb `execute`, plus the memory hooks.
///
/// The contract (from cphVB): the engine may assume it owns a batch's outputs while the
/// batch runs; the runtime reads a base only after `sync`; `free` ends a base's life
/// everywhere. Kernels cover the batch's non-system instructions in an order that
/// respects dependencies; `Free`/`Sync` instructions are the runtime's business.
pub trait Engine: Send {
    /// The engine's name as configured (used in error messages).
    fn name(&self) -> &str;
    fn capabilities(&self) -> Capabilities;
    fn execute(&mut self, batch: &Batch, kernels: &[Kernel], buffers: &Buffers) -> Result<()>;
    /// `execute` for a call the runtime marked as template `key`: calls with one key have
    /// one structure (one fuse-cache key), differing only in bases and scalar values. A
    /// loaded engine sends a repeated key's bindings instead of the call (see
    /// `template.rs`); an in-process engine just executes.
    fn execute_keyed(
        &mut self,
        key: u128,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
    ) -> Result<()> {
        let _ = key;
        self.execute(batch, kernels, buffers)
    }
    /// `execute` for a call of a template: `memo` is what this method left there on the
    /// template's earlier calls (`None` on the first), whose batches had this one's
    /// structure (every view, base size and dtype) over other bases and scalar values.
    /// An engine may keep there what it derived from the structure alone, such as the
    /// kernels' keys and that they passed verification.
    fn execute_again(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
        memo: &mut Memo,
    ) -> Result<()> {
        let _ = memo;
        self.execute(batch, kernels, buffers)
    }
    /// Makes the base's current values visible in `host`.
    fn sync(&mut self, base: BaseId, host: &HostBuffer) -> Result<()>;
    /// Makes elements `[lo, hi)` of the base current in `host`, for a read of those alone
    /// (a scalar, an element): the rest of `host` may stay stale until a `sync`. The
    /// runtime never marks a base so read as written by the host. An engine that cannot
    /// do less than the whole base syncs it.
    fn sync_extent(&mut self, base: BaseId, host: &HostBuffer, lo: u64, hi: u64) -> Result<()> {
        let _ = (lo, hi);
        self.sync(base, host)
    }
    /// Forgets everything the engine holds for `base`.
    fn free(&mut self, base: BaseId) -> Result<()>;
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
}
