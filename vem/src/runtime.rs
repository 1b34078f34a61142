//! The runtime: records instructions into a queue and cuts it into batches. What runs a
//! batch down the stack (and owns host memory) is its back half, `core`; a batch of
//! small arrays may run on the pipeline's worker while recording goes on (`pipeline`).

use crate::config::SMALL_ARRAY_ELEMENTS;
use crate::flush_point::FlushPoint;
use crate::{Config, Error, Result, RuntimeStats, Stack};
use hassium_core::{sort_dedup, IdMap};
use hassium_core::{verify_instr, Base, BaseId, Bases, Batch, DType, Instr, Opcode, View};

mod core;
mod generated;
mod parts;
mod pipeline;
mod poison;

use self::core::{Core, Job};
use pipeline::{Sent, Stalls, Worker};

/// What the recorder keeps of a base (its memory is the back half's, see `core`).
struct BaseState {
    base: Base,
    /// A `Free` is queued: the base may no longer be named by new instructions.
    freed: bool,
    /// The generator instructions that fill it, when it is kept as those instead of
    /// memory (see `generated`).
    recipe: Option<generated::Recipe>,
}

/// One Hassium runtime: a queue of recorded instructions over bases it owns.
pub struct Runtime {
    config: Config,
    /// The back half; `None` while the pipeline's worker runs a batch with it.
    core: Option<Box<Core>>,
    /// The pipeline's worker, started at the first batch it takes.
    worker: Option<Worker>,
    /// Whether batches of small arrays go to the worker (see [`Runtime::pipelines`]).
    pipeline: bool,
    /// Whether the worker keeps up (see `pipeline::Stalls`).
    stalls: Stalls,
    /// What the batch on the worker materialised (see `generated`), for when it is back.
    in_flight: Vec<(BaseId, generated::Recipe)>,
    /// The error of a batch the worker ran, raised by the next call that can fail.
    failure: Option<Error>,
    stack_name: String,
    engine_name: String,
    bases: IdMap<BaseState>,
    queue: Vec<Instr>,
    /// A batch's instruction vector, emptied, for the queue after next: a queue that
    /// regrew from empty each flush would move every instruction several times.
    spare: Vec<Instr>,
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
    instrs_recorded: u64,
    /// Live bases kept as recipes.
    recipes: usize,
    /// The queue holds a generator (`Range`, `Random`), so the flush looks for new
    /// recipes.
    queue_has_generator: bool,
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
        let pipeline = Runtime::pipelines(&config);
        Ok(Runtime {
            stack_name: stack.name.clone(),
            engine_name: stack.engine.name().to_string(),
            core: Some(Box::new(Core::new(config.clone(), stack))),
            config,
            worker: None,
            pipeline,
            stalls: Stalls::default(),
            in_flight: Vec::new(),
            failure: None,
            bases: IdMap::default(),
            queue: Vec::new(),
            spare: Vec::new(),
            queue_max_elems: 0,
            flush_point: FlushPoint::default(),
            sync: Vec::new(),
            sync_extents: IdMap::default(),
            next_id: 1,
            in_range: Default::default(),
            instrs_recorded: 0,
            recipes: 0,
            queue_has_generator: false,
        })
    }

    /// Whether batches of small arrays run on the pipeline's worker: `runtime.pipeline`,
    /// except on a stack that starts MPI (the cluster engine's rank 0 talks to the other
    /// ranks from the thread that started MPI).
    fn pipelines(config: &Config) -> bool {
        config.runtime.pipeline && !config.stack_starts_mpi()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The name of the stack in force.
    pub fn stack_name(&self) -> &str {
        &self.stack_name
    }

    /// The name of the engine in force.
    pub fn engine_name(&self) -> &str {
        &self.engine_name
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

    /// Notes that the queued index instruction writing `id` has indices in range and
    /// distinct by construction (see `Batch::in_range`).
    pub fn note_in_range(&mut self, id: BaseId) {
        self.in_range.push(id);
    }

    /// Appends one instruction after checking it, so errors surface at the call site.
    /// Flushes once the queue has reached the configured threshold, at the next low point
    /// of the live arrays (see `flush_point`). Inlined into the recorder: an instruction
    /// is a few hundred bytes, which every call that is not inlined copies.
    #[inline]
    pub fn record(&mut self, instr: Instr) -> Result<()> {
        if instr.op == Opcode::Free {
            return self.free(instr.out.base);
        }
        verify_instr(&instr, |id| self.base(id))?;
        let elems = (instr.input_views().map(View::nelem)).fold(instr.out.nelem(), usize::max);
        self.queue_max_elems = self.queue_max_elems.max(elems);
        self.queue_has_generator |= generated::is_generator(instr.op);
        self.queue.push(instr);
        self.instrs_recorded += 1;
        let rc = &self.config.runtime;
        let threshold = if self.queue_max_elems <= SMALL_ARRAY_ELEMENTS {
            rc.small_flush_threshold.min(rc.flush_threshold)
        } else {
            rc.flush_threshold
        };
        if self.flush_point.record(self.queue.len(), threshold) {
            self.settle_before_cut()?;
            self.cut(true)?;
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
        self.instrs_recorded += 1;
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
    ///
    /// A read of part of a base that nothing queued writes runs nothing queued (see
    /// [`Runtime::sync_alone`]).
    fn sync_part(&mut self, id: BaseId, extent: Option<(u64, u64)>) -> Result<()> {
        let state = self.live(id)?;
        if let Some((lo, hi)) = extent {
            if state.recipe.is_none()
                && self.sync.is_empty()
                && !self.queue.is_empty()
                && !self.queue.iter().any(|i| i.out.base == id)
            {
                return self.sync_alone(id, lo, hi);
            }
        }
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

    /// Makes elements `[lo, hi)` of `id` current on the host for a read that copies them
    /// out, when no queued instruction writes `id`: its values are final already, so the
    /// queue is left to grow. A loop reading coefficients (`w[j] * x[j:j + n]`, one
    /// scalar per iteration) otherwise cut the queue at every read, one kernel per
    /// iteration where the iterations fuse into one. The batch the pipeline's worker may
    /// hold is waited for (it may write `id`); the engine then syncs the extent in a
    /// batch of that sync alone, as after a flush. Only for reads: a caller that wrote
    /// through the host pointer would overtake the queued instructions that read `id`.
    fn sync_alone(&mut self, id: BaseId, lo: u64, hi: u64) -> Result<()> {
        self.settle()?;
        let base = self.live(id)?.base;
        let mut extents = core::Extents::default();
        extents.insert(id, (lo, hi));
        let mut job = Job {
            batch: Batch {
                bases: Bases::from_sorted(vec![base]),
                instrs: Vec::new(),
                sync: vec![id],
                next_id: 0,
                in_range: Vec::new(),
            },
            extents,
            small: true,
            dead_code: false,
            freed: Vec::new(),
        };
        self.home().run(&mut job)?;
        self.readable(id)
    }

    /// The error a read of `id` raises, if any (see `poison`).
    fn readable(&mut self, id: BaseId) -> Result<()> {
        let poison = &mut self.core()?.poison;
        if poison.is_empty() {
            return Ok(());
        }
        poison.read(id).map_err(Error::Bytecode)
    }

    /// The host address of a base's data, allocating it if it has none. Valid until the
    /// base is freed; its contents are current only after [`Runtime::sync`]. A base kept
    /// as a recipe is written out first, since whoever asks may read it.
    pub fn host_ptr(&mut self, id: BaseId) -> Result<*mut u8> {
        if self.live(id)?.recipe.is_some() {
            self.sync(id)?;
        }
        if self.core()?.poison.contains(id) {
            self.readable(id)?;
        }
        self.host_block(id)
    }

    /// The host address of any base the runtime still holds, including one whose `Free`
    /// is queued but not yet flushed (the batch that frees it may still write it).
    fn host_block(&mut self, id: BaseId) -> Result<*mut u8> {
        let base = (self.bases.get(&id).map(|s| s.base))
            .ok_or_else(|| Error::UnknownBase(format!("base {} does not exist", id.0)))?;
        Ok(self.core()?.host_buffer(base)?.data)
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
        self.settle()?;
        if !self.queue.is_empty() {
            self.flush()?;
        }
        // Every byte is overwritten: a recipe need not be written out first, and an array
        // an earlier failure made invalid is valid again.
        self.drop_recipe(id);
        self.core()?.poison.clear(id);
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
        if self.bases.contains_key(&id) {
            self.home().mark_host_written(id);
        }
    }

    /// The counters of this runtime and its engine.
    pub fn stats(&mut self) -> RuntimeStats {
        let recorded = self.instrs_recorded;
        let core = self.home();
        let mut s = core.stats.clone();
        s.instrs_recorded = recorded;
        s.engine = core.stack.engine.stats();
        s.host_bytes_allocated = core.memory.allocated_bytes as u64;
        s
    }

    /// Waits for the batch on the pipeline's worker, if any, keeping its error for the
    /// next call that can raise it: before a fork, whose child would lack that thread.
    pub fn quiesce(&mut self) {
        self.settle_quietly();
    }

    /// Runs every queued instruction down the stack, and waits for it.
    pub fn flush(&mut self) -> Result<()> {
        self.settle()?;
        self.cut(false)
    }

    /// The back half, home (see [`Runtime::settle`]).
    fn core(&mut self) -> Result<&mut Core> {
        self.settle()?;
        Ok(self.home())
    }

    /// The back half, home; an error of the batch it brings back is kept for the next
    /// call that can raise it.
    fn home(&mut self) -> &mut Core {
        self.settle_quietly();
        self.core
            .as_deref_mut()
            .expect("the back half is home once settled")
    }

    /// Waits for the batch on the pipeline's worker, if any, and raises its error (or
    /// one an earlier call kept).
    fn settle(&mut self) -> Result<()> {
        self.settle_quietly();
        match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// [`Runtime::settle`] before the queue is cut again, noting whether the recorder had
    /// to wait for the worker (see `pipeline::Stalls`).
    fn settle_before_cut(&mut self) -> Result<()> {
        if self.core.is_none() {
            let t = std::time::Instant::now();
            self.settle_quietly();
            self.stalls.back(t.elapsed());
        }
        self.settle()
    }

    /// [`Runtime::settle`], keeping the error for later.
    fn settle_quietly(&mut self) {
        if self.core.is_some() {
            return;
        }
        let worker = (self.worker.as_ref())
            .filter(|w| w.here())
            .expect("hassium: the process forked while a batch ran on the flush thread");
        let ran = worker
            .wait()
            .expect("hassium: the flush thread ended while it held a batch");
        self.core = Some(ran.core);
        let result = match ran.result {
            Ok(r) => r,
            // A panic on the worker is a panic of the call that waits for it, as it would
            // have been of the call that flushed.
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let materialised = std::mem::take(&mut self.in_flight);
        if let Err(e) = self.finish(result, ran.job, materialised) {
            self.failure.get_or_insert(e);
        }
    }

    /// Cuts the queue into a batch and runs it down the stack: on the pipeline's worker
    /// when `pipelined` allows and every array is small (see [`Runtime::pipelines`]),
    /// else here. The back half must be home.
    fn cut(&mut self, pipelined: bool) -> Result<()> {
        self.flush_point.flushed();
        if self.queue.is_empty() && self.sync.is_empty() {
            return Ok(());
        }
        let mut batch = Batch {
            bases: Bases::default(),
            instrs: std::mem::replace(&mut self.queue, std::mem::take(&mut self.spare)),
            sync: std::mem::take(&mut self.sync),
            next_id: 0,
            in_range: std::mem::take(&mut self.in_range),
        };
        let core = self
            .core
            .as_deref_mut()
            .expect("cut with the back half home");
        if !core.poison.is_empty() {
            // What reads an array an earlier failure made invalid is not run, and is
            // invalid in turn.
            let bases = &self.bases;
            (core.poison).filter(&mut batch.instrs, |id| bases.get(&id).map(|s| s.base.nelem));
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
        let dead_code = adopted || !batch.in_range.is_empty();
        let mut job = Job {
            extents: std::mem::take(&mut self.sync_extents),
            small,
            dead_code,
            batch,
            freed: Vec::new(),
        };
        if pipelined && small && job.batch.sync.is_empty() && self.pipeline && self.stalls.allow() {
            match self.hand_over(job) {
                None => {
                    self.in_flight = materialised;
                    self.stalls.handed();
                    return Ok(());
                }
                Some(back) => job = back,
            }
        }
        let core = self
            .core
            .as_deref_mut()
            .expect("cut with the back half home");
        let result = core.run(&mut job);
        self.finish(result, job, materialised)
    }

    /// Sends `job` with the back half to the pipeline's worker (started on first use, and
    /// again in a process forked since); gives the job back when there is no worker.
    fn hand_over(&mut self, job: Job) -> Option<Job> {
        if self.worker.as_ref().is_some_and(|w| !w.here()) {
            self.worker = None;
        }
        if self.worker.is_none() {
            match Worker::start() {
                Ok(w) => self.worker = Some(w),
                Err(e) => {
                    tracing::warn!("no flush thread ({e}): batches run on the caller's");
                    self.pipeline = false;
                    return Some(job);
                }
            }
        }
        let (Some(worker), Some(mut core)) = (&self.worker, self.core.take()) else {
            return Some(job);
        };
        core.stats.flushes_pipelined += 1;
        let Some(sent) = worker.send(Sent { core, job }) else {
            return None; // on its way
        };
        // The thread is gone: this batch and the next run here.
        let mut core = sent.core;
        core.stats.flushes_pipelined -= 1;
        self.core = Some(core);
        self.pipeline = false;
        Some(sent.job)
    }

    /// What the recorder does once a batch ran: puts back the recipes a failed batch was
    /// to materialise, forgets the bases the batch freed (frees take effect even when
    /// it failed), and keeps its instruction vector for a later queue.
    fn finish(
        &mut self,
        result: Result<()>,
        job: Job,
        materialised: Vec<(BaseId, generated::Recipe)>,
    ) -> Result<()> {
        if result.is_err() {
            self.restore_recipes(materialised);
        }
        // `Core::run` listed the frees and emptied the instruction vector.
        for id in job.freed {
            if let Some(s) = self.bases.remove(&id) {
                if s.recipe.is_some() {
                    self.recipes -= 1;
                }
            }
        }
        let instrs = job.batch.instrs;
        debug_assert!(instrs.is_empty());
        if instrs.capacity() > self.spare.capacity() {
            self.spare = instrs;
        }
        result
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if self.core.is_none() && self.worker.as_ref().is_some_and(Worker::here) {
            self.settle_quietly();
        }
        if let Some(e) = self.failure.take() {
            eprintln!("hassium: a flush failed and nothing read its results: {e}");
        }
        if self.core.is_none() {
            return;
        }
        self.home().poison.warn_unreported();
        if std::env::var_os("HASSIUM_STATS").is_some_and(|v| v != "0") {
            eprintln!("{}", self.stats());
        }
    }
}
