//! The `Engine` implementation: lower → look up → compile what is new (one compiler call
//! per execute) → run in order.

use crate::cache::{Compiled, DiskCache, Entry};
use crate::compiler::Compiler;
use crate::config::{CpuConfig, SpecializePolicy};
use crate::run::{self, Args};
use crate::tiered::{Job, Shared, Tiered};
use crate::{matmul, sort};
use hassium_codegen::{lower, render_unit, Binding, Lowered, Plan, Specialize, C99};
use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{
    kernel_key, BaseId, Batch, Capabilities, Error as CoreError, Kernel, KeyMode, Opcode,
};
use hassium_engine_abi::{
    slowest_kernels, Buffers, Engine, EngineContext, EngineStats, HostBuffer, KernelStats, Memo,
    Result, MAX_KERNEL_STATS,
};
use hassium_engine_reference::{execute_kernel, Memory};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128;

/// One run of a native kernel, for its statistics.
struct Run {
    instrs: u64,
    bytes: u64,
    elements: u64,
    simd_loops: Option<(u32, u32)>,
}

/// The CPU engine. See the crate documentation.
/// Bytes of contracted temporaries above which a new kernel is compiled before it runs
/// instead of interpreted meanwhile: the interpreter gives each its own memory, and a
/// fused loop of a few hundred temporaries over millions of elements would need gigabytes.
const INTERPRET_SCRATCH_LIMIT: usize = 256 << 20;

pub struct CpuEngine {
    cfg: CpuConfig,
    /// The directory the disk cache lives in (checked when the engine started).
    root: Option<hassium_engine_abi::CacheRoot>,
    threads: usize,
    pool: rayon::ThreadPool,
    /// The process that started `pool` and the compile thread, as
    /// `process_generation` numbers it (see `renew_after_fork`).
    process: u64,
    compiler: Option<Compiler>,
    disk: Option<Arc<DiskCache>>,
    shared: Arc<Shared>,
    tiered: Option<Tiered>,
    /// `both` policy: dynamic kernel key → the fixed kernel keys given code of their own.
    fixed_variants: FxHashMap<u128, FxHashSet<u128>>,
    /// Lowerings by fixed kernel key. A batch repeats a loop body hundreds of times, and
    /// the fuser cuts it into kernels of a few structures over different bases; lowering
    /// and hashing each again cost more than running it.
    patterns: FxHashMap<u128, Pattern>,
    /// Instructions of the kernels `patterns` holds: it is emptied beyond
    /// [`PATTERN_INSTRS`], which bounds its memory.
    pattern_instrs: usize,
    calls: u64,
    stats: EngineStats,
    /// Per compiled kernel (by cache key) and `matmul`: calls, time, bytes; the source of
    /// `kernels_run` and `bytes_moved`.
    kernel_stats: FxHashMap<u128, KernelStats>,
    /// Per compiled kernel (by cache key): how fast its calls ran, to choose which to
    /// split across the pool (see [`CpuEngine::split_calls`]).
    speeds: FxHashMap<u128, Speed>,
    /// Per kernel not compiled yet (by cache key): the element-operations its calls did
    /// interpreted, until they reach `tier_up_work` (see [`CpuEngine::defer_compile`]).
    interpreted_work: FxHashMap<u128, usize>,
    /// The traffic of the calls of lowered kernels that ran interpreted while they
    /// compiled: part of `bytes_moved`, which is then the same whether or not the
    /// compiler had finished (those calls' time is in `execute_seconds` already).
    interpreted_bytes: u64,
}

/// Kernels [`CpuEngine::defer_compile`] counts at most: beyond, it forgets them all (a
/// kernel forgotten only starts counting again).
const DEFERRED_KERNELS: usize = 1 << 20;

/// What earlier calls of one kernel showed about its speed, in nanoseconds per element
/// of calls from `min_parallel_elems` elements up (smaller calls never split, and their
/// time is mostly the call itself). The fastest call of each kind counts: a call is only
/// ever slowed (first touch of its pages, a busy machine), never sped up, by noise.
#[derive(Clone, Copy, Default)]
struct Speed {
    /// On the calling thread alone.
    serial: Option<f64>,
    /// Split across the pool.
    split: Option<f64>,
    /// Split calls since the last call on one thread.
    since_serial: u32,
}

/// A split call at least this many times `min_parallel_seconds` long shows that splitting
/// pays without a one-thread call to compare (waking the pool is then a small part of
/// it); after a shorter one the next call runs on one thread, to learn the kernel's speed.
const SURE_SPLIT: f64 = 20.0;

/// A kernel whose one-thread speed puts it within [`SURE_SPLIT`] of the limit runs on one
/// thread again after this many split calls, so one slow call on one thread (the
/// kernel's first, say) does not decide for good.
const RECHECK_EVERY: u32 = 64;

/// `kernel_stats` entry of the GEMM extension method (no kernel key is all ones).
const MATMUL_KEY: u128 = u128::MAX;
/// `kernel_stats` entry of the sorting extension methods.
const SORT_KEY: u128 = u128::MAX - 1;

/// What lowering gave one kernel structure for one specialisation: the lowered form (its
/// slots and scalars those of the first kernel seen) and its cache key, or `None` when
/// such kernels are interpreted.
type Lowering = Option<(Arc<Lowered>, u128)>;

/// Everything worked out once per kernel structure (one fixed kernel key).
#[derive(Default)]
struct Pattern {
    fixed: Option<Lowering>,
    dynamic: Option<Lowering>,
    /// The dynamic kernel key.
    dkey: Option<u128>,
}

impl Pattern {
    fn lowering(&mut self, spec: Specialize) -> &mut Option<Lowering> {
        match spec {
            Specialize::Fixed => &mut self.fixed,
            Specialize::Dynamic => &mut self.dynamic,
        }
    }
}

/// See `CpuEngine::pattern_instrs`: a few MB of lowered kernels at most.
const PATTERN_INSTRS: usize = 1 << 16;

/// What to do with one kernel of a batch.
enum Task {
    Native {
        lowered: Arc<Lowered>,
        /// This kernel's bases and scalars for `lowered`'s slots.
        binding: Binding,
        key: u128,
    },
    Matmul,
    /// `sort`, `argsort`, `searchsorted_*` (`crate::sort`).
    Sort,
    Interpret,
}

/// The engine's own worker threads (not rayon's global pool, which a program's other
/// libraries may size differently).
fn worker_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("hassium-cpu-{i}"))
        .build()
        .map_err(|e| engine_err(format!("cannot start {threads} worker threads: {e}")))
}

fn engine_err(msg: impl Into<String>) -> hassium_engine_abi::Error {
    hassium_engine_abi::Error::Engine {
        engine: "cpu".into(),
        message: msg.into(),
    }
}

impl CpuEngine {
    /// The engine library's constructor (`export_engine!`).
    pub fn create(ctx: EngineContext) -> Result<Box<dyn Engine>> {
        hassium_engine_abi::init_engine_logging("cpu");
        Ok(Box::new(CpuEngine::new(CpuConfig::from_table(
            &ctx.config,
        )?)?))
    }

    pub fn new(cfg: CpuConfig) -> Result<CpuEngine> {
        let threads = if cfg.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            cfg.threads
        };
        let pool = worker_pool(threads)?;
        let root = hassium_engine_abi::open_cache_root(&cfg.cache_dir);
        let memo = root.as_ref().map(|r| r.path.join("compilers"));
        let compiler = Compiler::probe_remembered(&cfg.compiler, &cfg.flags, memo.as_deref());
        if compiler.is_none() {
            tracing::warn!(
                "C compiler `{}` not found; kernels run interpreted (slow). Install a C compiler or set [engines.cpu] compiler",
                cfg.compiler
            );
        } else if root.is_none() {
            tracing::warn!("no directory for compiled kernels; kernels run interpreted (slow)");
        }
        let disk = match (&compiler, &root) {
            (Some(c), Some(r)) => Some(Arc::new(DiskCache::new(r, c, cfg.cache_max_bytes))),
            _ => None,
        };
        let shared = Arc::new(Shared::default());
        let tiered = match (&compiler, &disk, cfg.tiered) {
            // Finishing compiles at exit only helps a cache that outlives the process.
            (Some(c), Some(d), true) => Some(Tiered::start(
                c.clone(),
                d.clone(),
                shared.clone(),
                cfg.finish_at_exit && d.persistent(),
            )),
            _ => None,
        };
        Ok(CpuEngine {
            cfg,
            root,
            threads,
            pool,
            process: hassium_engine_abi::process_generation(),
            compiler,
            disk,
            shared,
            tiered,
            fixed_variants: FxHashMap::default(),
            patterns: FxHashMap::default(),
            pattern_instrs: 0,
            calls: 0,
            stats: EngineStats::default(),
            kernel_stats: FxHashMap::default(),
            speeds: FxHashMap::default(),
            interpreted_work: FxHashMap::default(),
            interpreted_bytes: 0,
        })
    }

    /// In a process forked from the one that made this engine (`os.fork`, multiprocessing's
    /// default start method on Linux): fork copies only the calling thread, so the worker
    /// pool and the compile thread are gone, and a lock one of them held stays held. A
    /// parallel kernel would wait forever for workers that do not exist. Starts new
    /// threads and new thread-shared state; the old ones are leaked, because dropping them
    /// would wait for those threads. Kernels already loaded stay usable (their libraries
    /// are mapped in this process too); compiles that were under way are submitted again
    /// when their kernels next run.
    fn renew_after_fork(&mut self) -> Result<()> {
        std::mem::forget(std::mem::replace(
            &mut self.pool,
            worker_pool(self.threads)?,
        ));
        let shared = Shared::default();
        if let Some(loaded) = self.shared.memory.try_lock() {
            shared
                .memory
                .lock()
                .extend(loaded.iter().map(|(k, c)| (*k, c.clone())));
        }
        if let Some(failed) = self.shared.failed.try_lock() {
            shared.failed.lock().extend(failed.iter().copied());
        }
        let old = std::mem::replace(&mut self.shared, Arc::new(shared));
        let disk = match (&self.compiler, &self.root) {
            (Some(c), Some(r)) => Some(Arc::new(DiskCache::new(r, c, self.cfg.cache_max_bytes))),
            _ => None,
        };
        std::mem::forget(std::mem::replace(&mut self.disk, disk));
        let tiered = match (&self.compiler, &self.disk, &self.tiered) {
            (Some(c), Some(d), Some(_)) => Tiered::start_after_fork(
                c.clone(),
                d.clone(),
                self.shared.clone(),
                self.cfg.finish_at_exit && self.disk.as_ref().is_some_and(|d| d.persistent()),
                &old,
            ),
            _ => None,
        };
        std::mem::forget(std::mem::replace(&mut self.tiered, tiered));
        std::mem::forget(old);
        self.process = hassium_engine_abi::process_generation();
        Ok(())
    }

    /// The directory of this engine's disk cache (none without a compiler).
    pub fn cache_dir(&self) -> Option<std::path::PathBuf> {
        self.disk.as_ref().map(|d| d.dir().to_path_buf())
    }

    /// Blocks until the background compiler has finished every queued kernel.
    pub fn wait_for_compiles(&self) {
        while !self.shared.pending.lock().is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// The source the engine would compile for `kernel` (for dumps and tests).
    pub fn source_of(
        &self,
        batch: &Batch,
        kernel: &Kernel,
    ) -> std::result::Result<String, hassium_codegen::Error> {
        let spec = if self.cfg.specialize == SpecializePolicy::Dynamic {
            Specialize::Dynamic
        } else {
            Specialize::Fixed
        };
        let l = lower(batch, kernel, spec)?;
        let decls = self.compiler.as_ref().map_or("", |c| c.decls());
        render_unit(&C99, decls, &[(&l, "hs_kernel".to_string())])
    }

    /// The cache key of a kernel with kernel key `kkey` lowered as `l`.
    fn key_of(kkey: u128, l: &Lowered) -> u128 {
        let mut bytes = [0u8; 32];
        bytes[..16].copy_from_slice(&kkey.to_le_bytes());
        bytes[16..].copy_from_slice(&l.signature().to_le_bytes());
        xxh3_128(&bytes)
    }

    fn cached(&mut self, key: u128) -> Option<Compiled> {
        if let Some(c) = self.shared.memory.lock().get(&key).cloned() {
            return Some(c);
        }
        let c = self.disk.as_ref()?.load(key)?;
        self.shared.memory.lock().insert(key, c.clone());
        self.stats.cache_hits_disk += 1;
        Some(c)
    }

    /// The remembered work for the kernel structure with fixed kernel key `fkey`.
    fn pattern(&mut self, fkey: u128, kernel: &Kernel) -> &mut Pattern {
        if !self.patterns.contains_key(&fkey) {
            self.pattern_instrs += kernel.instrs.len();
            if self.pattern_instrs > PATTERN_INSTRS {
                self.patterns.clear();
                self.pattern_instrs = kernel.instrs.len();
            }
        }
        self.patterns.entry(fkey).or_default()
    }

    /// The dynamic kernel key of a kernel with fixed key `fkey`.
    fn dkey(&mut self, batch: &Batch, kernel: &Kernel, fkey: u128) -> u128 {
        *self
            .pattern(fkey, kernel)
            .dkey
            .get_or_insert_with(|| kernel_key(batch, kernel, KeyMode::Dynamic).0)
    }

    /// Whether a call of kernel `key` over `elements` elements is split across the pool:
    /// never below `min_parallel_elems`; then only when it would take at least
    /// `min_parallel_seconds` on one thread, as far as the kernel's earlier calls tell
    /// (its first call splits, as if it were slow).
    fn split_calls(&self, key: u128, elements: usize) -> bool {
        if self.threads <= 1 || elements < self.cfg.min_parallel_elems {
            return false;
        }
        let least = self.cfg.min_parallel_seconds * 1e9;
        if least <= 0.0 {
            return true;
        }
        let n = elements as f64;
        let Some(speed) = self.speeds.get(&key) else {
            return true;
        };
        match (speed.serial, speed.split) {
            (Some(ns), _) if ns * n < SURE_SPLIT * least && speed.since_serial >= RECHECK_EVERY => {
                false
            }
            (Some(ns), _) => ns * n >= least,
            (None, Some(ns)) => ns * n >= SURE_SPLIT * least,
            (None, None) => true,
        }
    }

    /// Notes how long a call of kernel `key` over `elements` elements took (`split`: on
    /// the pool), for [`CpuEngine::split_calls`].
    fn note_speed(&mut self, key: u128, elements: usize, split: bool, seconds: f64) {
        if elements < self.cfg.min_parallel_elems.max(1) {
            return;
        }
        let ns = seconds * 1e9 / elements as f64;
        let speed = self.speeds.entry(key).or_default();
        let (fastest, since) = if split {
            (&mut speed.split, speed.since_serial.saturating_add(1))
        } else {
            (&mut speed.serial, 0)
        };
        *fastest = Some(fastest.map_or(ns, |f: f64| f.min(ns)));
        speed.since_serial = since;
    }

    /// Counts one native run (a compiled kernel, or `MATMUL_KEY`) that started at `ran`;
    /// the engine's `kernels_run` and `bytes_moved` are these counts summed.
    fn count_run(&mut self, key: u128, run: Run, ran: Instant) {
        let seconds = ran.elapsed().as_secs_f64();
        self.kernel_stats
            .entry(key)
            .or_insert_with(|| KernelStats {
                key: match key {
                    MATMUL_KEY => "matmul".into(),
                    SORT_KEY => "sort".into(),
                    _ => format!("{key:032x}"),
                },
                instrs: run.instrs,
                simd_loops: run.simd_loops,
                ..KernelStats::default()
            })
            .add(seconds, run.bytes, run.elements);
    }

    /// Lowers a kernel as `spec` says, or reuses the lowering of an earlier kernel of the
    /// same structure (fixed kernel key `fkey`) with this kernel's bases and scalars.
    fn lowered(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        fkey: u128,
        spec: Specialize,
    ) -> std::result::Result<Task, hassium_engine_abi::Error> {
        if let Some(known) = self.pattern(fkey, kernel).lowering(spec).clone() {
            let Some((lowered, key)) = known else {
                return Ok(Task::Interpret);
            };
            if let Some(binding) = lowered.rebind(batch, kernel) {
                return Ok(Task::Native {
                    lowered,
                    binding,
                    key,
                });
            }
            // Not reached for a kernel with this key; lowering it afresh is still right.
        }
        let lowering = match lower(batch, kernel, spec) {
            Ok(l) => {
                let kkey = match spec {
                    Specialize::Fixed => fkey,
                    Specialize::Dynamic => self.dkey(batch, kernel, fkey),
                };
                let key = Self::key_of(kkey, &l);
                Some((Arc::new(l), key))
            }
            Err(hassium_codegen::Error::Value(m)) => {
                return Err(hassium_engine_abi::Error::Bytecode(CoreError::Invalid(m)))
            }
            Err(e) => {
                tracing::debug!("interpreting a kernel: {e}");
                None
            }
        };
        *self.pattern(fkey, kernel).lowering(spec) = Some(lowering.clone());
        Ok(match lowering {
            Some((lowered, key)) => Task::Native {
                binding: Binding {
                    slots: lowered.slots.clone(),
                    scalars: lowered.scalars.clone(),
                },
                lowered,
                key,
            },
            None => Task::Interpret,
        })
    }

    /// Verifies the call's kernels and returns their fixed keys. A fixed key holds every
    /// view and the size and dtype of every base, everything verification looks at, so a
    /// kernel whose structure `patterns` knows (planned, hence verified, in an earlier
    /// call) is not verified again: in a loop of small arrays that was about 7% of the work
    /// of every operation.
    fn verify(&self, batch: &Batch, kernels: &[Kernel]) -> Result<Vec<u128>> {
        let n = batch.instrs.len();
        if kernels.iter().any(|k| k.instrs.iter().any(|&i| i >= n)) {
            // Names an instruction the batch lacks: verification says which.
            hassium_core::verify_kernels(batch, kernels)?;
        }
        let fkeys: Vec<u128> = (kernels.iter())
            .map(|k| kernel_key(batch, k, KeyMode::Fixed).0)
            .collect();
        let unseen: Vec<Kernel> = (kernels.iter().zip(&fkeys))
            .filter(|(_, f)| !self.patterns.contains_key(f))
            .map(|(k, _)| k.clone())
            .collect();
        hassium_core::verify_kernels(batch, &unseen)?;
        Ok(fkeys)
    }

    /// Lowers a kernel (fixed key `fkey`) as the specialisation policy says.
    fn plan(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        fkey: u128,
    ) -> std::result::Result<Task, hassium_engine_abi::Error> {
        let single = (kernel.instrs.len() == 1).then(|| &batch.instrs[kernel.instrs[0]]);
        if single
            .is_some_and(|i| i.op == Opcode::Extension && i.method.as_deref() == Some("matmul"))
        {
            return Ok(Task::Matmul);
        }
        if single.is_some_and(|i| {
            i.op == Opcode::Extension
                && matches!(
                    i.method.as_deref(),
                    Some(SORT | ARGSORT | ARGPARTITION | SEARCHSORTED_LEFT | SEARCHSORTED_RIGHT)
                )
        }) {
            return Ok(Task::Sort);
        }
        if self.compiler.is_none() {
            return Ok(Task::Interpret);
        }
        if self.cfg.specialize == SpecializePolicy::Dynamic {
            return self.lowered(batch, kernel, fkey, Specialize::Dynamic);
        }
        if self.cfg.specialize == SpecializePolicy::Fixed {
            return self.lowered(batch, kernel, fkey, Specialize::Fixed);
        }
        // `both`: the first two shapes of a structure get code of their own, every later
        // one the shared dynamic code. Decided before lowering, so a loop whose shapes
        // change every iteration (LU's shrinking slices) lowers each kernel once, not
        // once fixed to learn its key and again dynamic.
        let dkey = self.dkey(batch, kernel, fkey);
        let variants = self.fixed_variants.entry(dkey).or_default();
        if !variants.contains(&fkey) && variants.len() >= 2 {
            return self.lowered(batch, kernel, fkey, Specialize::Dynamic);
        }
        let task = self.lowered(batch, kernel, fkey, Specialize::Fixed)?;
        if let Task::Native { lowered, .. } = &task {
            if !matches!(lowered.plan, Plan::Empty) {
                self.fixed_variants.entry(dkey).or_default().insert(fkey);
            }
        }
        Ok(task)
    }

    fn interpret(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        buffers: &Buffers,
        mem: &mut Option<Memory>,
    ) -> Result<()> {
        let m = match mem {
            Some(m) => m,
            None => {
                let mut m = Memory::new();
                // SAFETY: the engine ABI guarantees each host buffer for this call.
                unsafe { m.insert_host(buffers)? };
                mem.insert(m)
            }
        };
        for id in &kernel.contracted {
            if !m.contains(*id) {
                let base = batch.base(*id).ok_or_else(|| {
                    engine_err(format!("contracted base {} is not in the batch", id.0))
                })?;
                m.insert_scratch(base)?;
            }
        }
        execute_kernel(batch, kernel, m)?;
        self.stats.interpreted += 1;
        Ok(())
    }

    /// Whether a new kernel (cache key `key`) that may run interpreted runs so this call
    /// without being compiled: with tiering, until its calls, this one's `work`
    /// element-operations included, have done `tier_up_work`. A background compile is
    /// not free: on two cores, a cold test suite's one-off kernels kept both cores
    /// compiling for its whole run. The caller forgets the key's count when this says no.
    fn defer_compile(&mut self, key: u128, work: usize) -> bool {
        let limit = self.cfg.tier_up_work;
        if self.tiered.is_none() || limit == 0 || work >= limit {
            return false;
        }
        if self.interpreted_work.len() >= DEFERRED_KERNELS {
            self.interpreted_work.clear();
        }
        let done = self.interpreted_work.entry(key).or_insert(0);
        *done = done.saturating_add(work);
        *done < limit
    }

    /// Compiles every kernel in `todo` with one compiler call: in the background (the
    /// kernels run interpreted meanwhile) when tiered and `background`, else now.
    fn compile(&mut self, todo: Vec<(u128, Arc<Lowered>)>, background: bool) -> Result<()> {
        let (Some(compiler), Some(disk)) = (self.compiler.clone(), self.disk.clone()) else {
            return Ok(());
        };
        let names: Vec<String> = todo.iter().map(|(k, _)| format!("hs_{k:032x}")).collect();
        let units: Vec<(&Lowered, String)> = todo
            .iter()
            .zip(&names)
            .map(|((_, l), n)| (&**l, n.clone()))
            .collect();
        let source =
            render_unit(&C99, compiler.decls(), &units).map_err(|e| engine_err(e.to_string()))?;
        let entries: Vec<Entry> = todo
            .iter()
            .zip(&names)
            .map(|((k, l), n)| Entry {
                key: *k,
                symbol: n.clone(),
                has_fin: l.has_fin(),
            })
            .collect();
        if let Some(t) = self.tiered.as_mut().filter(|_| background) {
            self.shared
                .pending
                .lock()
                .extend(entries.iter().map(|e| (e.key, 0)));
            if t.submit(Job {
                source: source.clone(),
                entries: entries.clone(),
            }) {
                return Ok(());
            }
            let mut p = self.shared.pending.lock();
            for e in &entries {
                p.remove(&e.key);
            }
        }
        let start = Instant::now();
        let _span = tracing::info_span!("compile", kernels = entries.len()).entered();
        let done = match disk.compile(&compiler, &source, &entries) {
            Ok(done) => done,
            // A broken compiler: these kernels run interpreted, as without one.
            Err(e) => {
                crate::compiler::report_failure(&compiler, &e);
                (self.shared.failed.lock()).extend(entries.iter().map(|e| e.key));
                return Ok(());
            }
        };
        self.stats.compile_seconds += start.elapsed().as_secs_f64();
        self.stats.kernels_compiled += done.len() as u64;
        self.shared.memory.lock().extend(done);
        Ok(())
    }

    fn args<'a>(lowered: &'a Lowered, binding: &Binding, buffers: &Buffers) -> Result<Args<'a>> {
        let bufs = binding
            .slots
            .iter()
            .map(|id| {
                buffers
                    .get(*id)
                    .map(|b| b.data)
                    .ok_or_else(|| engine_err(format!("base {} has no host buffer", id.0)))
            })
            .collect::<Result<Vec<_>>>()?;
        let scal = binding
            .scalars
            .iter()
            .map(|s| u128::from_le_bytes(s.to_le_bytes()))
            .collect();
        Ok(Args {
            bufs,
            scal,
            meta: &lowered.meta,
        })
    }

    /// Executes verified kernels whose fixed keys are `fkeys`; `start` is when the call
    /// began (for the execute time).
    fn run(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
        fkeys: &[u128],
        start: Instant,
    ) -> Result<()> {
        if hassium_engine_abi::process_generation() != self.process {
            self.renew_after_fork()?;
        }
        // 1. Decide each kernel's path and gather the new ones.
        let mut tasks = Vec::with_capacity(kernels.len());
        let mut todo: Vec<(u128, Arc<Lowered>)> = Vec::new();
        let mut queued = HashSet::new();
        // Element-operations the new kernels would cost interpreted: tiering pays off only
        // when that is cheaper than waiting for the compiler.
        let mut new_work = 0usize;
        let mut work_of: HashMap<u128, usize> = HashMap::new();
        let mut foreground = HashSet::new();
        for (k, &fkey) in kernels.iter().zip(fkeys) {
            let task = self.plan(batch, k, fkey)?;
            if let Task::Native { lowered, key, .. } = &task {
                if !matches!(lowered.plan, Plan::Empty) && !queued.contains(key) {
                    // Looked up only after a memory miss: off the cache-hit path.
                    let in_memory = self.shared.memory.lock().contains_key(key);
                    let deferred = !in_memory && self.interpreted_work.contains_key(key);
                    if in_memory {
                        self.stats.cache_hits_memory += 1;
                    } else if deferred
                        || (self.cached(*key).is_none()
                            && !self.shared.pending.lock().contains_key(key)
                            && !self.shared.failed.lock().contains(key))
                    {
                        // (A key `interpreted_work` holds missed the disk when first seen;
                        // it is not looked for there again on every call.)
                        let work = lowered.elements.saturating_mul(k.instrs.len());
                        // The interpreter gives every contracted base memory of its own.
                        let scratch: usize = (k.contracted.iter())
                            .filter_map(|id| batch.base(*id))
                            .map(|b| b.nelem.saturating_mul(b.dtype.size()))
                            .fold(0, usize::saturating_add);
                        let interpretable =
                            !lowered.order_sensitive() && scratch <= INTERPRET_SCRATCH_LIMIT;
                        let defer = interpretable && self.defer_compile(*key, work);
                        if !defer {
                            self.interpreted_work.remove(key);
                        }
                        // A deferred kernel another process has compiled meanwhile loads.
                        let loaded = !defer && deferred && self.cached(*key).is_some();
                        if !(defer || loaded) {
                            queued.insert(*key);
                            work_of.insert(*key, work);
                            new_work = new_work.saturating_add(work);
                            todo.push((*key, lowered.clone()));
                            if scratch > INTERPRET_SCRATCH_LIMIT {
                                foreground.insert(*key);
                            }
                        }
                    }
                }
            }
            tasks.push(task);
        }
        // 2. Compile them together (or hand them to the background thread).
        if !todo.is_empty() {
            if self.cfg.strict_cache && self.calls > 0 {
                return Err(engine_err(format!(
                    "strict_cache: {} kernel(s) missed the cache after the first batch",
                    todo.len()
                )));
            }
            // A kernel whose result depends on its summation order is never interpreted
            // while it compiles: the interpreter sums in another order, and a result
            // must not depend on whether the compiler had finished.
            // Nor one whose interpretation would materialise more temporaries than
            // INTERPRET_SCRATCH_LIMIT.
            let (ordered, free): (Vec<_>, Vec<_>) = todo
                .into_iter()
                .partition(|(key, l)| l.order_sensitive() || foreground.contains(key));
            if !ordered.is_empty() {
                self.compile(ordered, false)?;
            }
            if !free.is_empty() {
                if new_work <= self.cfg.interpret_limit {
                    self.compile(free, true)?;
                } else {
                    // The cheapest kernels, up to the limit together, run interpreted
                    // while they compile; the batch waits only for the others (a loop
                    // body cut into cells has a few large ones and many small ones).
                    let mut free = free;
                    free.sort_by_key(|(key, _)| work_of.get(key).copied().unwrap_or(usize::MAX));
                    let mut budget = self.cfg.interpret_limit;
                    let split = free
                        .iter()
                        .take_while(|(key, _)| {
                            let w = work_of.get(key).copied().unwrap_or(usize::MAX);
                            budget.checked_sub(w).map(|b| budget = b).is_some()
                        })
                        .count();
                    let wait = free.split_off(split);
                    if !free.is_empty() {
                        self.compile(free, true)?;
                    }
                    self.compile(wait, false)?;
                }
            }
        }
        self.calls += 1;
        // 3. Run in order.
        let mut mem: Option<Memory> = None;
        for (k, task) in kernels.iter().zip(tasks) {
            hassium_engine_abi::precheck::check(batch, k, buffers)?;
            match task {
                Task::Matmul => {
                    let instr = &batch.instrs[k.instrs[0]];
                    let ran = Instant::now();
                    let done = matmul::matmul(&self.pool, self.threads, instr, buffers)
                        .map_err(|e| k.error_in(batch, e))?;
                    if done {
                        // Per matrix of the stack: n×k + k×m read, n×m written.
                        let v = &instr.out;
                        let nd = v.ndim();
                        let (n, m) = (v.shape[nd - 2], v.shape[nd - 1]);
                        let kk = instr.ins[0].as_view().map_or(0, |a| a.shape[nd - 1]);
                        let count = (v.nelem()).checked_div(n * m).unwrap_or(0);
                        let bytes = (count * (n * kk + kk * m + n * m) * v.dtype.size()) as u64;
                        let elements = (v.nelem() * kk) as u64;
                        let run = Run {
                            instrs: 1,
                            bytes,
                            elements,
                            simd_loops: None,
                        };
                        self.count_run(MATMUL_KEY, run, ran);
                    } else {
                        self.interpret(batch, k, buffers, &mut mem)?;
                    }
                }
                Task::Sort => {
                    let instr = &batch.instrs[k.instrs[0]];
                    let ran = Instant::now();
                    let done =
                        sort::run(&self.pool, instr, buffers).map_err(|e| k.error_in(batch, e))?;
                    if done {
                        let v = &instr.out;
                        let read: usize = instr.input_views().map(|v| v.nelem()).sum();
                        let bytes = (read * instr.ins[0].dtype().size()
                            + v.nelem() * v.dtype.size())
                            as u64;
                        let run = Run {
                            instrs: 1,
                            bytes,
                            elements: v.nelem() as u64,
                            simd_loops: None,
                        };
                        self.count_run(SORT_KEY, run, ran);
                    } else {
                        self.interpret(batch, k, buffers, &mut mem)?;
                    }
                }
                Task::Interpret => self.interpret(batch, k, buffers, &mut mem)?,
                Task::Native {
                    lowered,
                    binding,
                    key,
                } => {
                    if matches!(lowered.plan, Plan::Empty) {
                        continue;
                    }
                    let kept = self.shared.memory.lock().get(&key).cloned();
                    let compiled = match kept {
                        Some(c) => Some(c),
                        // The memory was emptied since step 1 (`KernelMemory`): back from
                        // disk, unless the kernel never got there.
                        None if !self.shared.pending.lock().contains_key(&key)
                            && !self.shared.failed.lock().contains(&key)
                            && !self.interpreted_work.contains_key(&key) =>
                        {
                            self.cached(key)
                        }
                        None => None,
                    };
                    match compiled {
                        Some(c) => {
                            let args = Self::args(&lowered, &binding, buffers)?;
                            let split = self.split_calls(key, lowered.elements);
                            let distinct = distinct_scatter(batch, k);
                            let ran = Instant::now();
                            run::execute(
                                &self.pool,
                                self.threads,
                                split,
                                distinct,
                                &lowered,
                                &c,
                                &args,
                            )
                            .map_err(|e| k.error_in(batch, e))?;
                            let took = ran.elapsed().as_secs_f64();
                            self.note_speed(key, lowered.elements, split, took);
                            let run = Run {
                                instrs: k.instrs.len() as u64,
                                bytes: lowered.bytes,
                                elements: lowered.elements as u64,
                                simd_loops: c.simd_loops,
                            };
                            self.count_run(key, run, ran);
                        }
                        None => {
                            if let Some(calls) = self.shared.pending.lock().get_mut(&key) {
                                *calls += 1;
                            }
                            self.interpret(batch, k, buffers, &mut mem)?;
                            self.interpreted_bytes += lowered.bytes;
                        }
                    }
                }
            }
        }
        self.stats.execute_seconds += start.elapsed().as_secs_f64();
        Ok(())
    }
}

/// Whether `kernel` is one masked scatter whose indices the recorder built in range and
/// distinct (a compaction's ranks, `Batch::in_range`): its rows may run on several
/// threads (see `run::execute`).
fn distinct_scatter(batch: &Batch, kernel: &Kernel) -> bool {
    match kernel.instrs.as_slice() {
        [i] => batch.instrs.get(*i).is_some_and(|instr| {
            instr.op == Opcode::CondScatter && batch.in_range.contains(&instr.out.base)
        }),
        _ => false,
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::all()
    }

    fn execute(&mut self, batch: &Batch, kernels: &[Kernel], buffers: &Buffers) -> Result<()> {
        let start = Instant::now();
        let fkeys = self.verify(batch, kernels)?;
        self.run(batch, kernels, buffers, &fkeys, start)
    }

    /// Keeps the kernels' fixed keys in `memo`: a template's later calls have the same
    /// structure, hence the same keys, and that structure passed verification on the
    /// first call. Hashing every kernel of the call was a tenth of a small-array loop's
    /// flush.
    fn execute_again(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
        memo: &mut Memo,
    ) -> Result<()> {
        let start = Instant::now();
        let known = (memo.as_ref())
            .and_then(|m| m.downcast_ref::<Vec<u128>>())
            .filter(|f| f.len() == kernels.len());
        match known {
            // Borrowed from the memo, not cloned: this is every replayed flush.
            Some(fkeys) => self.run(batch, kernels, buffers, fkeys, start),
            None => {
                let fkeys = self.verify(batch, kernels)?;
                let ran = self.run(batch, kernels, buffers, &fkeys, start);
                *memo = Some(Box::new(fkeys));
                ran
            }
        }
    }

    /// Results are written straight into host buffers: nothing to copy.
    fn sync(&mut self, _base: BaseId, _host: &HostBuffer) -> Result<()> {
        Ok(())
    }

    fn free(&mut self, _base: BaseId) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        let mut s = self.stats.clone();
        s.kernels_run = self.kernel_stats.values().map(|k| k.calls).sum();
        s.bytes_moved = self
            .kernel_stats
            .values()
            .map(|k| k.bytes_moved)
            .sum::<u64>()
            + self.interpreted_bytes;
        let (n, secs) = *self.shared.compiled.lock();
        s.kernels_compiled += n;
        s.compile_seconds += secs;
        if s.execute_seconds > 0.0 {
            s.extra.insert(
                "gb_per_s".into(),
                s.bytes_moved as f64 / s.execute_seconds / 1e9,
            );
        }
        s.extra.insert("threads".into(), self.threads as f64);
        s.kernels = slowest_kernels(self.kernel_stats.values().cloned(), MAX_KERNEL_STATS);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(threads: usize, least: f64) -> CpuEngine {
        CpuEngine::new(CpuConfig {
            threads,
            min_parallel_elems: 1000,
            min_parallel_seconds: least,
            cache_dir: hassium_engine_abi::CacheLocation::Off,
            ..CpuConfig::default()
        })
        .expect("cpu engine")
    }

    #[test]
    fn calls_split_only_when_one_thread_would_take_longer_than_waking_the_pool() {
        let mut e = engine(2, 50e-6);
        let k = 7;
        // Too few elements, whatever is known; a kernel never seen splits.
        assert!(!e.split_calls(k, 999));
        assert!(e.split_calls(k, 50_000));
        // A short split call (waking the pool, mostly): the next runs on one thread...
        e.note_speed(k, 50_000, true, 60e-6);
        assert!(!e.split_calls(k, 50_000));
        // ...which takes 12 us: that size stays on one thread, ten times as many split.
        e.note_speed(k, 50_000, false, 12e-6);
        assert!(!e.split_calls(k, 50_000));
        assert!(!e.split_calls(k, 200_000));
        assert!(e.split_calls(k, 500_000));
        // The fastest one-thread call counts: a slow one (first touch) changes nothing.
        e.note_speed(k, 50_000, false, 400e-6);
        assert!(!e.split_calls(k, 200_000));
        // Calls below `min_parallel_elems` are mostly call overhead: not counted.
        e.note_speed(k, 10, false, 1.0);
        assert!(e.split_calls(k, 500_000));

        // A split call long enough to show that splitting pays: no one-thread probe.
        let sure = 8;
        e.note_speed(sure, 1_000_000, true, 2e-3);
        assert!(e.split_calls(sure, 1_000_000));
        assert!(e.split_calls(sure, 500_000));
        // A tenth of the size would take 200 us split: not sure, so probed on one thread.
        assert!(!e.split_calls(sure, 100_000));

        // Split on the one-thread estimate, but within `SURE_SPLIT` of the limit: one
        // call in `RECHECK_EVERY` runs on one thread again, then splitting resumes.
        let near = 9;
        e.note_speed(near, 100_000, false, 60e-6);
        for _ in 0..RECHECK_EVERY {
            assert!(e.split_calls(near, 100_000));
            e.note_speed(near, 100_000, true, 40e-6);
        }
        assert!(!e.split_calls(near, 100_000));
        e.note_speed(near, 100_000, false, 70e-6);
        assert!(e.split_calls(near, 100_000));
    }

    #[test]
    fn one_thread_never_splits_and_no_limit_always_does() {
        let mut one = engine(1, 50e-6);
        assert!(!one.split_calls(1, 10_000_000));
        let mut every = engine(2, 0.0);
        every.note_speed(1, 50_000, false, 1e-9);
        assert!(every.split_calls(1, 1000));
        assert!(!every.split_calls(1, 999));
        one.note_speed(1, 50_000, false, 1.0);
        assert!(!one.split_calls(1, 50_000));
    }
}
