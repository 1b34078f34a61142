//! The back half of the runtime: the stack, host memory, and what a flush does with a
//! batch once it is cut (filters, fusion, execution, syncs). It holds nothing recording
//! needs, so a batch of small arrays can run on the pipeline's worker (see `pipeline`)
//! while the program records the next one.

use super::parts::singletons;
use super::poison::Poison;
use crate::memory::Block;
use crate::{Config, Error, HostMemory, Result, RuntimeStats, Stack};
use hassium_core::{verify, Base, BaseId, Batch, IdMap, IdSet, Instr, Kernel};
use hassium_engine_abi::HostBuffer;
use std::time::Instant;
use tracing::{debug_span, info_span};
use xxhash_rust::xxh3::xxh3_128;

/// Where the bases a filter adds are numbered from: far above any id the recorder will
/// reach, so a filter running on the worker never takes an id the recorder hands out
/// meanwhile.
const FILTER_TEMP_IDS: u64 = 1 << 62;

/// Bases of a batch's `sync` that a read needs only elements `[lo, hi)` of.
pub(super) type Extents = IdMap<(u64, u64)>;

/// One cut batch on its way down the stack, and what running it needs.
pub(super) struct Job {
    pub batch: Batch,
    pub extents: Extents,
    /// Every array the batch names is small (see `Core::run_batch`).
    pub small: bool,
    /// Remove dead code before the stack sees the batch, whatever its filters: a base
    /// kept as a recipe is computed into a temporary where the batch reads it, and
    /// where nothing does, that computation is dead (the runtime made it, and a small
    /// batch skips `dead_code`); so is a compaction whose result nothing reads
    /// (`Batch::in_range`).
    pub dead_code: bool,
    /// Set by [`Core::run`]: the bases the batch freed, whose instructions it then
    /// dropped. On the pipeline's worker the batch is still in that core's cache; the
    /// recorder walking a thousand 368-byte instructions it never touched again to find
    /// the frees was a tenth of a small-array loop's time.
    pub freed: Vec<BaseId>,
}

/// What the back half keeps of a base: its host memory, made on first use.
pub(super) struct Storage {
    pub block: Option<Block>,
    /// Written on the host (by a bridge) since an engine last saw it.
    pub host_dirty: bool,
}

/// The stack and everything a flush changes.
pub(super) struct Core {
    pub config: Config,
    pub stack: Stack,
    pub storage: IdMap<Storage>,
    pub memory: HostMemory,
    pub stats: RuntimeStats,
    /// Bases made invalid by an instruction that failed while it ran (see `poison`).
    pub poison: Poison,
    /// `$HASSIUM_DUMP`: where each fused batch is written as text and Graphviz.
    dump_dir: Option<std::path::PathBuf>,
    /// The next id a filter's temporary gets.
    next_temp_id: u64,
}

impl Core {
    pub fn new(config: Config, stack: Stack) -> Core {
        let stats = RuntimeStats {
            stack: stack.name.clone(),
            ..Default::default()
        };
        Core {
            config,
            stack,
            storage: IdMap::default(),
            memory: HostMemory::default(),
            stats,
            poison: Poison::default(),
            dump_dir: std::env::var_os("HASSIUM_DUMP").map(Into::into),
            next_temp_id: FILTER_TEMP_IDS,
        }
    }

    /// Whether `id` has host memory.
    pub fn has_block(&self, id: BaseId) -> bool {
        self.storage.get(&id).is_some_and(|s| s.block.is_some())
    }

    /// Notes that the host copy of `id` was written by a bridge.
    pub fn mark_host_written(&mut self, id: BaseId) {
        self.storage
            .entry(id)
            .or_insert(Storage {
                block: None,
                host_dirty: false,
            })
            .host_dirty = true;
    }

    /// Runs a cut batch down the stack, then ends the lives of the bases it frees (even
    /// when it failed: nothing is leaked, and the runtime stays usable).
    pub fn run(&mut self, job: &mut Job) -> Result<()> {
        let batch = &mut job.batch;
        let _span = info_span!("flush", instrs = batch.instrs.len()).entered();
        self.stats.flushes += 1;
        self.stats.instrs_flushed += batch.instrs.len() as u64;
        let cleaned = if job.dead_code {
            hassium_filters::Filter::apply(&mut hassium_filters::DeadCode, batch)
        } else {
            Ok(())
        };
        let result = (cleaned.map_err(Error::from))
            .and_then(|()| self.run_batch(batch, &mut job.extents, job.small));
        job.freed.clear();
        job.freed.extend(batch.freed());
        batch.instrs.clear();
        for &id in &job.freed {
            self.forget(id);
        }
        result
    }

    /// The pipeline, in order. Each step's position is deliberate:
    /// 1. filters rewrite the batch first, so fusion sees the simplest program;
    /// 2. instructions the engine cannot run are split off to the reference engine;
    /// 3. the fuser (through its cache) cuts each part into kernels;
    /// 4. host memory is allocated only for bases that are not contracted;
    /// 5. the engine executes; then synced bases are made visible on the host.
    ///
    /// `small`: every array the batch names is small (see `SMALL_ARRAY_ELEMENTS`); the
    /// filters in `runtime.small_skip_filters` are then skipped.
    fn run_batch(&mut self, batch: &mut Batch, extents: &mut Extents, small: bool) -> Result<()> {
        if batch.instrs.is_empty() {
            // Only syncs (reading an element in a Python loop): nothing to rewrite, fuse
            // or execute.
            return self.sync_all(batch, extents);
        }
        let t = Instant::now();
        // Set here, after the flush's last base was made (`rewrite_generated` makes some).
        batch.next_id = self.next_temp_id;
        let skip = &self.config.runtime.small_skip_filters;
        for (name, filter) in &mut self.stack.filters {
            if small && skip.contains(name) {
                continue;
            }
            let _s = debug_span!("filter", name = name.as_str()).entered();
            filter.apply(batch)?;
        }
        self.check_filter_temps(batch)?;
        self.stats.filter_seconds += t.elapsed().as_secs_f64();
        if self.config.runtime.verify {
            verify(batch)?;
        }
        let supported = |i: &Instr| self.stack.supports.supports(i);
        if batch.instrs.iter().all(supported) {
            let (kernels, template) = self.fuse(batch)?;
            // Templates save decoding and re-hashing a call, which only shows next to
            // kernels over small arrays; a large batch's call would also keep every one
            // of its thousands of instructions on the engine side.
            let template = template.filter(|_| small);
            self.execute(batch, &kernels, false, template)?;
        } else {
            self.run_split(batch)?;
        }
        self.sync_all(batch, extents)
    }

    /// Checks the temporaries the filters added (`Batch::new_temp`): each must be freed
    /// within the batch (it then gets memory like any base, when the fuser does not keep
    /// it in registers, and dies with the batch).
    fn check_filter_temps(&mut self, batch: &Batch) -> Result<()> {
        if batch.next_id <= self.next_temp_id {
            return Ok(());
        }
        let freed: IdSet = batch.freed().collect();
        for (id, _) in batch.bases.iter() {
            if id.0 >= self.next_temp_id && !freed.contains(id) {
                return Err(hassium_core::Error::Invalid(format!(
                    "a filter added base {} without freeing it in the batch",
                    id.0
                ))
                .into());
            }
        }
        self.next_temp_id = batch.next_id;
        Ok(())
    }

    /// Makes the batch's synced bases current in host memory.
    fn sync_all(&mut self, batch: &Batch, extents: &mut Extents) -> Result<()> {
        for &id in &batch.sync {
            let extent = extents.remove(&id);
            if self.poison.contains(id) {
                continue; // its read raises instead (`Runtime::sync`)
            }
            let host = self.host_buffer_in(batch, id)?;
            match extent {
                Some((lo, hi)) => self.stack.engine.sync_extent(id, &host, lo, hi)?,
                None => self.stack.engine.sync(id, &host)?,
            }
        }
        Ok(())
    }

    /// Runs a batch that mixes instructions the engine can and cannot run: consecutive
    /// runs of each kind become their own batches, in program order, with data handed over
    /// through host memory. Frees are left to the end so nothing is contracted across parts.
    fn run_split(&mut self, batch: &Batch) -> Result<()> {
        let compute: Vec<&Instr> = batch.instrs.iter().filter(|i| !i.op.is_system()).collect();
        let mut start = 0;
        while start < compute.len() {
            let on_engine = self.stack.supports.supports(compute[start]);
            let mut end = start;
            while end < compute.len() && self.stack.supports.supports(compute[end]) == on_engine {
                end += 1;
            }
            let part = Batch {
                bases: batch.bases.clone(),
                instrs: compute[start..end].iter().map(|&i| i.clone()).collect(),
                sync: Vec::new(),
                next_id: 0,
                in_range: Default::default(),
            };
            let kernels = if on_engine {
                self.fuse(&part)?.0
            } else {
                self.stats.fallback_instrs += part.instrs.len() as u64;
                singletons(&part, 0..part.instrs.len()).collect()
            };
            self.execute(&part, &kernels, !on_engine, None)?;
            start = end;
        }
        Ok(())
    }

    /// The batch's kernels and, when they came through the fuse cache, the template key
    /// of their structure (see `Engine::execute_keyed`).
    fn fuse(&mut self, batch: &Batch) -> Result<(Vec<Kernel>, Option<u128>)> {
        let _s = debug_span!("fuse").entered();
        let t = Instant::now();
        let stack = &mut self.stack;
        let (kernels, template) = if stack.fuser.worth_caching() {
            let f = stack.cache.get_or_fuse_keyed(
                batch,
                stack.supports.capabilities(),
                stack.fuser.as_mut(),
            )?;
            self.stats.fuse_cache_store_hits += u64::from(f.from_store);
            if f.hit {
                self.stats.fuse_cache_hits += 1;
            } else {
                self.stats.fuse_cache_misses += 1;
            }
            let template = template_key(&[f.key.0, f.serial.into()]);
            (f.kernels, Some(template))
        } else {
            (
                stack.fuser.fuse(batch, stack.supports.capabilities())?,
                None,
            )
        };
        self.stats.fuse_seconds += t.elapsed().as_secs_f64();
        if let Some(dir) = &self.dump_dir {
            // Number kernels like the `dump` filter numbered the batch they came from;
            // without that filter in the stack, claim a fresh number for each fused part.
            let has_dump_filter = self.stack.filters.iter().any(|(name, _)| name == "dump");
            let n = if has_dump_filter {
                hassium_core::dump::dump_index()
            } else {
                hassium_core::dump::next_dump_index()
            };
            if let Err(e) = hassium_filters::write_kernels(dir, n, batch, &kernels) {
                tracing::warn!("HASSIUM_DUMP: {e}");
            }
        }
        Ok((kernels, template))
    }

    /// Ends a freed base's life here: the engine drops its copies and its memory goes
    /// back to the pool (the recorder forgets its own record of it).
    pub fn forget(&mut self, id: BaseId) {
        if !self.poison.is_empty() {
            self.poison.clear(id);
        }
        let _ = self.stack.engine.free(id);
        if let Some(b) = self.storage.remove(&id).and_then(|s| s.block) {
            self.memory.release(b);
        }
    }

    /// The host buffer of a base `batch` names (see [`Core::host_buffer`]).
    pub fn host_buffer_in(&mut self, batch: &Batch, id: BaseId) -> Result<HostBuffer> {
        let base = *batch
            .base(id)
            .ok_or_else(|| Error::UnknownBase(format!("base {} does not exist", id.0)))?;
        self.host_buffer(base)
    }

    /// A base's host buffer as engines receive it, allocating its memory if it has none
    /// (one lookup: executing a batch of small kernels asks for thousands).
    pub fn host_buffer(&mut self, base: Base) -> Result<HostBuffer> {
        let s = self.storage.entry(base.id).or_insert(Storage {
            block: None,
            host_dirty: false,
        });
        let block = match &mut s.block {
            Some(b) => b,
            none => none.insert(self.memory.alloc(base.nbytes())?),
        };
        Ok(HostBuffer {
            base: base.id.0,
            data: block.as_ptr(),
            nelem: base.nelem as u64,
            dtype: base.dtype as u8,
            host_dirty: s.host_dirty as u8,
        })
    }

    /// Executes `kernels` in order. Where bases freed by this batch die after a kernel
    /// and together hold at least [`RECYCLE_BYTES`], the run is cut there and their memory
    /// goes back to the pool (and the engine's buffers are released), so that a loop body
    /// recorded many times into one batch reuses one set of buffers instead of touching
    /// fresh pages every iteration. Freed bases that no kernel touches die before the
    /// first kernel: an array the last batch wrote because the program still held it, and
    /// which this batch only drops, lends its memory to this batch's new arrays. A loop
    /// that flushes every iteration (a convergence test reads a scalar each time) and
    /// rebinds `new = ...` then keeps one block for `new`, not two taking turns.
    ///
    /// `template` (from `fuse`) names the structure of `batch` and `kernels`; each part
    /// run is a template of its own.
    fn execute(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        on_fallback: bool,
        template: Option<u128>,
    ) -> Result<()> {
        let plan = if on_fallback {
            Recycling::whole(kernels.len())
        } else {
            self.recycle_points(batch, kernels)
        };
        for id in plan.unused {
            self.forget(id);
        }
        let mut start = 0;
        for (end, dying) in plan.cuts {
            let part = template.map(|t| template_key(&[t, start as u128, end as u128]));
            self.run_part(batch, &kernels[start..end], on_fallback, part)?;
            for id in dying {
                self.forget(id);
            }
            start = end;
        }
        Ok(())
    }

    /// Which freed bases die before the batch's kernels end, and where (see [`Recycling`]).
    /// Only bases freed in this batch and not synced by it die early; the last use of one
    /// that a kernel touches is the last kernel that reads or writes it.
    fn recycle_points(&self, batch: &Batch, kernels: &[Kernel]) -> Recycling {
        let nbytes = |id: &BaseId| batch.base(*id).map_or(0, Base::nbytes);
        // Early deaths need RECYCLE_BYTES of dead bases: a batch of small arrays, whose
        // frees together hold less, keeps them to its end, and need not be looked at
        // more closely.
        let freed_bytes: usize = batch.freed().map(|id| nbytes(&id)).sum();
        if freed_bytes < RECYCLE_BYTES {
            return Recycling::whole(kernels.len());
        }
        let freed: IdSet = batch
            .freed()
            .filter(|id| !batch.sync.contains(id))
            .collect();
        let mut last_use: IdMap<usize> =
            IdMap::with_capacity_and_hasher(freed.len(), Default::default());
        for (k, kernel) in kernels.iter().enumerate() {
            for &id in kernel.reads.iter().chain(&kernel.writes) {
                if freed.contains(&id) {
                    last_use.insert(id, k);
                }
            }
        }
        // Only those holding memory: the rest (temporaries the kernels contract) have
        // nothing to lend, and die with the batch as before.
        let mut unused: Vec<BaseId> = (freed.iter())
            .filter(|id| !last_use.contains_key(id))
            .filter(|id| self.has_block(**id))
            .copied()
            .collect();
        // Forgotten in id order, so the pool hands out the same blocks run after run.
        unused.sort_unstable();
        if kernels.len() < 2 {
            return Recycling {
                unused,
                ..Recycling::whole(kernels.len())
            };
        }
        // By kernel: one sorted list, not a vector per kernel (a batch of small kernels
        // would allocate one for nearly every kernel).
        let mut dying: Vec<(usize, BaseId)> = last_use.into_iter().map(|(id, k)| (k, id)).collect();
        dying.sort_unstable();
        let mut parts = Vec::new();
        let mut pending = Vec::new();
        let mut bytes = 0;
        let mut at = 0;
        while at < dying.len() {
            let k = dying[at].0;
            while let Some(&(_, id)) = dying.get(at).filter(|d| d.0 == k) {
                bytes += nbytes(&id);
                pending.push(id);
                at += 1;
            }
            if bytes >= RECYCLE_BYTES && k + 1 < kernels.len() {
                parts.push((k + 1, std::mem::take(&mut pending)));
                bytes = 0;
            }
        }
        parts.push((kernels.len(), Vec::new()));
        Recycling {
            unused,
            cuts: parts,
        }
    }
}

/// A template key (see `Core::fuse`) made of `parts` (at most three): their xxh3-128.
/// On the stack, since every flush of a loop computes one per part.
fn template_key(parts: &[u128]) -> u128 {
    let mut bytes = [0u8; 48];
    for (chunk, p) in bytes.chunks_exact_mut(16).zip(parts) {
        chunk.copy_from_slice(&p.to_le_bytes());
    }
    debug_assert!(parts.len() <= 3);
    xxh3_128(&bytes[..16 * parts.len().min(3)])
}

/// When the bases a batch frees die while it runs (see `Core::execute`).
struct Recycling {
    /// Freed bases holding memory that no kernel touches: they die before the first one.
    unused: Vec<BaseId>,
    /// `(end, bases that die in kernels[..end])`, the last entry ending at the number of
    /// kernels: the run is cut after each `end` and those bases die there.
    cuts: Vec<(usize, Vec<BaseId>)>,
}

impl Recycling {
    /// One run of all `kernels` kernels, every freed base dying at the end of the batch.
    fn whole(kernels: usize) -> Recycling {
        Recycling {
            unused: Vec::new(),
            cuts: vec![(kernels, Vec::new())],
        }
    }
}

/// Bytes of dead bases worth cutting a batch's kernel run for, to reuse their memory.
const RECYCLE_BYTES: usize = 1 << 20;
