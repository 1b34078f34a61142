//! The runtime: records instructions, owns host memory, and runs the stack at each flush.

use crate::config::SMALL_ARRAY_ELEMENTS;
use crate::flush_point::FlushPoint;
use crate::memory::Block;
use crate::{Config, Error, HostMemory, Result, RuntimeStats, Stack};
use hassium_core::{sort_dedup, IdMap, IdSet};
use hassium_core::{
    verify, verify_instr, Base, BaseId, Bases, Batch, DType, Instr, Kernel, Opcode, View,
};
use hassium_engine_abi::HostBuffer;
use std::time::Instant;
use tracing::{debug_span, info_span};
use xxhash_rust::xxh3::xxh3_128;

mod generated;
mod parts;
mod poison;

use parts::singletons;
use poison::Poison;

struct BaseState {
    base: Base,
    block: Option<Block>,
    /// Written on the host (by a bridge) since an engine last saw it.
    host_dirty: bool,
    /// A `Free` is queued: the base may no longer be named by new instructions.
    freed: bool,
    /// The generator instructions that fill it, when it is kept as those instead of
    /// memory (see `generated`).
    recipe: Option<generated::Recipe>,
}

/// One Hassium runtime: a queue of recorded instructions over bases it owns.
pub struct Runtime {
    config: Config,
    stack: Stack,
    bases: IdMap<BaseState>,
    queue: Vec<Instr>,
    /// The most elements any view of the queued instructions has: while it is small,
    /// the queue flushes at `small_flush_threshold`.
    queue_max_elems: usize,
    /// Where a full queue is cut (at a low point of the live arrays).
    flush_point: FlushPoint,
    sync: Vec<BaseId>,
    /// Bases of `sync` a read needs only part of: elements `[lo, hi)` (see
    /// [`Runtime::sync_extent`]); a base not here is synced whole.
    sync_extents: IdMap<(u64, u64)>,
    next_id: u64,
    /// Bases of queued index instructions whose indices the recorder built in range
    /// (see `Batch::in_range`), handed to the next flush's batch.
    in_range: Vec<BaseId>,
    memory: HostMemory,
    stats: RuntimeStats,
    /// `$HASSIUM_DUMP`: where each fused batch is written as text and Graphviz.
    dump_dir: Option<std::path::PathBuf>,
    /// Live bases kept as recipes.
    recipes: usize,
    /// The queue holds a generator (`Range`, `Random`), so the flush looks for new
    /// recipes.
    queue_has_generator: bool,
    /// Bases made invalid by an instruction that failed while it ran (see `poison`).
    poison: Poison,
}

fn init_logging() {
    if let Ok(filter) = std::env::var("HASSIUM_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
}

impl Runtime {
    /// A runtime with the configuration in force (search order and environment).
    pub fn new() -> Result<Runtime> {
        Runtime::with_config(Config::load()?)
    }

    pub fn with_config(config: Config) -> Result<Runtime> {
        init_logging();
        let stack = Stack::build(&config)?;
        let stats = RuntimeStats {
            stack: stack.name.clone(),
            ..Default::default()
        };
        Ok(Runtime {
            config,
            stack,
            bases: IdMap::default(),
            queue: Vec::new(),
            queue_max_elems: 0,
            flush_point: FlushPoint::default(),
            sync: Vec::new(),
            sync_extents: IdMap::default(),
            next_id: 1,
            in_range: Default::default(),
            memory: HostMemory::default(),
            stats,
            dump_dir: std::env::var_os("HASSIUM_DUMP").map(Into::into),
            recipes: 0,
            queue_has_generator: false,
            poison: Poison::default(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The name of the stack in force.
    pub fn stack_name(&self) -> &str {
        &self.stack.name
    }

    /// The name of the engine in force.
    pub fn engine_name(&self) -> &str {
        self.stack.engine.name()
    }

    /// A new base of `nelem` elements; no memory is allocated until it is written.
    pub fn new_base(&mut self, dtype: DType, nelem: usize) -> Base {
        let base = self.insert_base(dtype, nelem, false);
        self.flush_point.created(base.nbytes());
        base
    }

    /// A base under a fresh id, without memory; `freed` when its `Free` is queued with it.
    fn insert_base(&mut self, dtype: DType, nelem: usize, freed: bool) -> Base {
        let id = BaseId(self.next_id);
        self.next_id += 1;
        let base = Base { id, dtype, nelem };
        let state = BaseState {
            base,
            block: None,
            host_dirty: false,
            freed,
            recipe: None,
        };
        self.bases.insert(id, state);
        base
    }

    /// The metadata of a live base.
    pub fn base(&self, id: BaseId) -> Option<Base> {
        self.bases.get(&id).filter(|s| !s.freed).map(|s| s.base)
    }

    fn live(&self, id: BaseId) -> Result<&BaseState> {
        match self.bases.get(&id) {
            Some(s) if !s.freed => Ok(s),
            Some(_) => Err(Error::UnknownBase(format!(
                "base {} was already freed",
                id.0
            ))),
            None => Err(Error::UnknownBase(format!("base {} does not exist", id.0))),
        }
    }

    /// Number of instructions waiting for the next flush.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The instructions waiting for the next flush, in program order (what the recorder
    /// may look back at to rewrite what it records next).
    pub fn queued_instrs(&self) -> &[Instr] {
        &self.queue
    }

    /// Notes that the queued index instruction writing `id` has indices in range by
    /// construction (see `Batch::in_range`).
    pub fn note_in_range(&mut self, id: BaseId) {
        self.in_range.push(id);
    }

    /// Appends one instruction after checking it, so errors surface at the call site.
    /// Flushes once the queue has reached the configured threshold, at the next low point
    /// of the live arrays (see `flush_point`).
    pub fn record(&mut self, instr: Instr) -> Result<()> {
        if instr.op == Opcode::Free {
            return self.free(instr.out.base);
        }
        verify_instr(&instr, |id| self.base(id))?;
        let elems = (instr.input_views().map(View::nelem)).fold(instr.out.nelem(), usize::max);
        self.queue_max_elems = self.queue_max_elems.max(elems);
        self.queue_has_generator |= generated::is_generator(instr.op);
        self.queue.push(instr);
        self.stats.instrs_recorded += 1;
        let rc = &self.config.runtime;
        let threshold = if self.queue_max_elems <= SMALL_ARRAY_ELEMENTS {
            rc.small_flush_threshold.min(rc.flush_threshold)
        } else {
            rc.flush_threshold
        };
        if self.flush_point.record(self.queue.len(), threshold) {
            self.flush()?;
        }
        Ok(())
    }

    /// Records the end of a base's life; its memory returns to the pool at the next flush.
    pub fn free(&mut self, id: BaseId) -> Result<()> {
        let base = match self.bases.get_mut(&id) {
            Some(s) if !s.freed => {
                s.freed = true;
                self.flush_point.freed(s.base.nbytes());
                s.base
            }
            // `live` says why: freed already, or never made.
            _ => return self.live(id).map(|_| ()),
        };
        self.queue.push(Instr::system(Opcode::Free, &base));
        self.stats.instrs_recorded += 1;
        Ok(())
    }

    /// Makes a base's current values readable through [`Runtime::host_ptr`]: queues it for
    /// sync and flushes.
    ///
    /// Fails with the error of an instruction that failed while it ran when `id` depends
    /// on it (see `poison`).
    pub fn sync(&mut self, id: BaseId) -> Result<()> {
        self.sync_part(id, None)
    }

    /// [`Runtime::sync`] for a read of elements `[lo, hi)` of the base alone, which the
    /// caller copies out and never writes: an engine holding the base in parts (the
    /// cluster) then brings only the parts holding those elements to the host. The rest
    /// of the host memory may stay stale; [`Runtime::sync`] makes all of it current.
    pub fn sync_extent(&mut self, id: BaseId, lo: u64, hi: u64) -> Result<()> {
        self.sync_part(id, Some((lo, hi)))
    }

    /// Queues `id` for sync, whole or elements `[lo, hi)` of it, and flushes. A base still
    /// queued (a flush failed before its sync) keeps the union of what was asked.
    fn sync_part(&mut self, id: BaseId, extent: Option<(u64, u64)>) -> Result<()> {
        self.live(id)?;
        let queued = self.sync.contains(&id);
        match extent {
            None => {
                self.sync_extents.remove(&id);
            }
            Some(e) if !queued => {
                self.sync_extents.insert(id, e);
            }
            Some((lo, hi)) => {
                if let Some(e) = self.sync_extents.get_mut(&id) {
                    *e = (e.0.min(lo), e.1.max(hi));
                }
            }
        }
        if !queued {
            self.sync.push(id);
        }
        self.flush()?;
        self.readable(id)
    }

    /// The error a read of `id` raises, if any (see `poison`).
    fn readable(&mut self, id: BaseId) -> Result<()> {
        if self.poison.is_empty() {
            return Ok(());
        }
        self.poison.read(id).map_err(Error::Bytecode)
    }

    /// The host address of a base's data, allocating it if it has none. Valid until the
    /// base is freed; its contents are current only after [`Runtime::sync`]. A base kept
    /// as a recipe is written out first, since whoever asks may read it.
    pub fn host_ptr(&mut self, id: BaseId) -> Result<*mut u8> {
        if self.live(id)?.recipe.is_some() {
            self.sync(id)?;
        }
        if self.poison.contains(id) {
            self.readable(id)?;
        }
        self.host_block(id)
    }

    /// The host address of any base the runtime still holds, including one whose `Free`
    /// is queued but not yet flushed (the batch that frees it may still write it).
    fn host_block(&mut self, id: BaseId) -> Result<*mut u8> {
        Ok(self.host_buffer(id)?.data)
    }

    /// Copies `bytes` into a base's host memory (e.g. from a NumPy array or a C buffer).
    /// Pending instructions are flushed first, so the write lands after them.
    pub fn write_host(&mut self, id: BaseId, bytes: &[u8]) -> Result<()> {
        let nbytes = self.live(id)?.base.nbytes();
        if bytes.len() != nbytes {
            return Err(Error::Bytecode(hassium_core::Error::ShapeMismatch(
                format!(
                    "buffer of {} bytes does not fit base {} of {nbytes} bytes",
                    bytes.len(),
                    id.0
                ),
            )));
        }
        if !self.queue.is_empty() {
            self.flush()?;
        }
        // Every byte is overwritten: a recipe need not be written out first, and an array
        // an earlier failure made invalid is valid again.
        self.drop_recipe(id);
        self.poison.clear(id);
        let ptr = self.host_ptr(id)?;
        if nbytes > 0 {
            // SAFETY: the block holds at least nbytes bytes and does not overlap `bytes`
            // (it is runtime-owned memory).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, nbytes) };
        }
        self.mark_host_written(id);
        Ok(())
    }

    /// Tells engines that keep device copies that the host copy of `id` changed.
    pub fn mark_host_written(&mut self, id: BaseId) {
        if let Some(s) = self.bases.get_mut(&id) {
            s.host_dirty = true;
        }
    }

    /// The counters of this runtime and its engine.
    pub fn stats(&self) -> RuntimeStats {
        let mut s = self.stats.clone();
        s.engine = self.stack.engine.stats();
        s.host_bytes_allocated = self.memory.allocated_bytes as u64;
        s
    }

    /// Runs every queued instruction down the stack.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_point.flushed();
        if self.queue.is_empty() && self.sync.is_empty() {
            return Ok(());
        }
        let _span = info_span!("flush", instrs = self.queue.len()).entered();
        let mut batch = Batch {
            bases: Bases::default(),
            instrs: std::mem::take(&mut self.queue),
            sync: std::mem::take(&mut self.sync),
            next_id: 0,
            in_range: std::mem::take(&mut self.in_range),
        };
        if !self.poison.is_empty() {
            // What reads an array an earlier failure made invalid is not run, and is
            // invalid in turn.
            let bases = &self.bases;
            (self.poison).filter(&mut batch.instrs, |id| bases.get(&id).map(|s| s.base.nelem));
        }
        let (materialised, adopted) = if self.recipes > 0 || self.queue_has_generator {
            self.rewrite_generated(&mut batch.instrs, &batch.sync)
        } else {
            (Vec::new(), false)
        };
        self.queue_has_generator = false;
        let small = self.queue_max_elems <= SMALL_ARRAY_ELEMENTS;
        self.queue_max_elems = 0;
        // Every id a batch names, sorted once: `Bases` is then filled in order.
        let mut ids: Vec<BaseId> = Vec::with_capacity(3 * batch.instrs.len() + batch.sync.len());
        for i in &batch.instrs {
            ids.push(i.out.base);
            ids.extend(i.ins.iter().filter_map(|o| o.base()));
        }
        ids.extend_from_slice(&batch.sync);
        sort_dedup(&mut ids);
        batch.bases = Bases::from_sorted(
            (ids.into_iter())
                .filter_map(|id| self.bases.get(&id).map(|s| s.base))
                .collect(),
        );
        // A base kept as a recipe is computed into a temporary where the batch reads it;
        // where nothing does, that computation is dead. Removed here, whatever the
        // stack's filters: the runtime made it, and a small batch skips `dead_code`.
        // So is a compaction whose result nothing reads (`Batch::in_range`).
        let cleaned = if adopted || !batch.in_range.is_empty() {
            hassium_filters::Filter::apply(&mut hassium_filters::DeadCode, &mut batch)
        } else {
            Ok(())
        };
        self.stats.flushes += 1;
        self.stats.instrs_flushed += batch.instrs.len() as u64;
        let result = cleaned
            .map_err(Error::from)
            .and_then(|()| self.run_batch(&mut batch, small));
        if result.is_err() {
            self.restore_recipes(materialised);
        }
        // Frees take effect even when the batch failed: nothing is leaked, and the
        // runtime stays usable.
        for id in batch.freed().collect::<Vec<_>>() {
            self.forget(id);
        }
        // The next batch records into this one's instruction vector: a queue that regrew
        // from empty each flush would move every instruction several times.
        if self.queue.is_empty() {
            self.queue = std::mem::take(&mut batch.instrs);
            self.queue.clear();
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
    /// `small`: every array the batch names is small (see [`SMALL_ARRAY_ELEMENTS`]); the
    /// filters in `runtime.small_skip_filters` are then skipped.
    fn run_batch(&mut self, batch: &mut Batch, small: bool) -> Result<()> {
        if batch.instrs.is_empty() {
            // Only syncs (reading an element in a Python loop): nothing to rewrite, fuse
            // or execute.
            return self.sync_all(batch);
        }
        let t = Instant::now();
        // Set here, after the flush's last base was made (`rewrite_generated` makes some).
        batch.next_id = self.next_id;
        let skip = &self.config.runtime.small_skip_filters;
        for (name, filter) in &mut self.stack.filters {
            if small && skip.contains(name) {
                continue;
            }
            let _s = debug_span!("filter", name = name.as_str()).entered();
            filter.apply(batch)?;
        }
        self.adopt_filter_temps(batch)?;
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
        self.sync_all(batch)
    }

    /// Takes in the temporaries the filters added (`Batch::new_temp`): each must be freed
    /// within the batch, and gets a base state so that it has memory when the fuser does
    /// not keep it in registers.
    fn adopt_filter_temps(&mut self, batch: &Batch) -> Result<()> {
        if batch.next_id <= self.next_id {
            return Ok(());
        }
        let freed: IdSet = batch.freed().collect();
        for (id, base) in batch.bases.iter() {
            if id.0 < self.next_id || self.bases.contains_key(id) {
                continue;
            }
            if !freed.contains(id) {
                return Err(hassium_core::Error::Invalid(format!(
                    "a filter added base {} without freeing it in the batch",
                    id.0
                ))
                .into());
            }
            let state = BaseState {
                base: *base,
                block: None,
                host_dirty: false,
                freed: false,
                recipe: None,
            };
            self.bases.insert(*id, state);
        }
        self.next_id = batch.next_id;
        Ok(())
    }

    /// Makes the batch's synced bases current in host memory.
    fn sync_all(&mut self, batch: &Batch) -> Result<()> {
        for &id in &batch.sync {
            let extent = self.sync_extents.remove(&id);
            if self.poison.contains(id) {
                continue; // its read raises instead (`Runtime::sync`)
            }
            let host = self.host_buffer(id)?;
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

    /// Ends a freed base's life: the engine drops its copies, its memory goes back to the
    /// pool, and a recipe it was kept as is gone.
    fn forget(&mut self, id: BaseId) {
        if !self.poison.is_empty() {
            self.poison.clear(id);
        }
        if let Some(mut s) = self.bases.remove(&id) {
            if s.recipe.is_some() {
                self.recipes -= 1;
            }
            let _ = self.stack.engine.free(id);
            if let Some(b) = s.block.take() {
                self.memory.release(b);
            }
        }
    }

    /// A base's host buffer as engines receive it, allocating its memory if it has none
    /// (one lookup: executing a batch of small kernels asks for thousands).
    fn host_buffer(&mut self, id: BaseId) -> Result<HostBuffer> {
        let s = self
            .bases
            .get_mut(&id)
            .ok_or_else(|| Error::UnknownBase(format!("base {} does not exist", id.0)))?;
        let block = match &mut s.block {
            Some(b) => b,
            none => none.insert(self.memory.alloc(s.base.nbytes())?),
        };
        Ok(HostBuffer {
            base: id.0,
            data: block.as_ptr(),
            nelem: s.base.nelem as u64,
            dtype: s.base.dtype as u8,
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
        // Early deaths need RECYCLE_BYTES of dead bases: a batch of small arrays, whose
        // frees together hold less, keeps them to its end, and need not be looked at
        // more closely.
        let freed_bytes: usize = (batch.freed())
            .filter_map(|id| self.bases.get(&id))
            .map(|s| s.base.nbytes())
            .sum();
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
            .filter(|id| self.bases.get(id).is_some_and(|s| s.block.is_some()))
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
                bytes += self.bases.get(&id).map_or(0, |s| s.base.nbytes());
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

/// A template key (see `Runtime::fuse`) made of `parts` (at most three): their xxh3-128.
/// On the stack, since every flush of a loop computes one per part.
fn template_key(parts: &[u128]) -> u128 {
    let mut bytes = [0u8; 48];
    for (chunk, p) in bytes.chunks_exact_mut(16).zip(parts) {
        chunk.copy_from_slice(&p.to_le_bytes());
    }
    debug_assert!(parts.len() <= 3);
    xxh3_128(&bytes[..16 * parts.len().min(3)])
}

/// When the bases a batch frees die while it runs (see `Runtime::execute`).
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

impl Drop for Runtime {
    fn drop(&mut self) {
        self.poison.warn_unreported();
        if std::env::var_os("HASSIUM_STATS").is_some_and(|v| v != "0") {
            eprintln!("{}", self.stats());
        }
    }
}
