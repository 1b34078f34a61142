//! The `Engine` implementation: lower each kernel, decide whether the device runs it or
//! the child engine does, build what is new, then run in order, moving data lazily.

use crate::config::{Fp64, OpenClConfig, SpecializePolicy};
use crate::device::{choose, DeviceInfo, DISCOVERY};
use crate::error::{Error, Result};
use crate::memory::{Command, DeviceMemory};
use crate::program::{entry_name, Built, Job, Origin, Programs};
use hassium_codegen::{
    lower, prelude, render, render_unit, Lowered, Plan, Specialize, LANES, OPENCL, WIDE,
};
use hassium_core::{
    kernel_key, BaseId, Batch, Capabilities, DType, Error as CoreError, Kernel, KeyMode, Opcode,
};
use hassium_engine_abi::{
    precheck, slowest_kernels, Buffers, Engine, EngineContext, EngineStats, HostBuffer,
    KernelStats, MAX_KERNEL_STATS,
};
use hassium_engine_reference::ReferenceEngine;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT};
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128;

/// Work-group size when the config leaves it to the engine.
const DEFAULT_LOCAL: usize = 256;

/// The OpenCL engine. See the crate documentation.
pub struct OpenClEngine {
    cfg: OpenClConfig,
    info: DeviceInfo,
    mem: DeviceMemory,
    programs: Programs,
    child: Box<dyn Engine>,
    /// Whether float64 kernels run on the device.
    fp64: bool,
    /// `both` policy: dynamic kernel key → fixed keys built for it.
    fixed_variants: HashMap<u128, HashSet<u128>>,
    /// Four int64 words the kernels report index errors in.
    err: Buffer<u8>,
    calls: u64,
    stats: EngineStats,
    /// Time `sync` spent waiting for the queue and reading back (`sync_seconds` in stats).
    sync_seconds: f64,
    /// The process that created the context (see `check_process`).
    pid: u32,
    /// With `profile`, each kernel's calls, size and traffic; its device seconds come
    /// from the queue's profile (`DeviceMemory::kernel_times`).
    kernel_stats: HashMap<u128, KernelStats>,
}

// SAFETY: OpenCL handles may be used from any thread; the engine is used by one thread at
// a time (`&mut self`), which is all `Engine: Send` asks.
unsafe impl Send for OpenClEngine {}

/// What to do with one kernel of a batch.
enum Task {
    Device { lowered: Box<Lowered>, key: u128 },
    Child,
}

/// A kernel's argument values on the device (scalars and the `meta` array).
struct ArgBufs {
    scal: Buffer<u8>,
    scal_len: usize,
    meta: Buffer<u8>,
    meta_len: usize,
}

/// The options every program is built with on a device of `platform`: OpenCL C 1.2,
/// correctly rounded float32 division and sqrt where the device offers them (NumPy's are;
/// OpenCL allows 2.5 ulp unless asked), then the user's `build_options`.
///
/// On NVIDIA's platform the device assembler runs at `-cl-nv-opt-level=0` unless the user
/// names a level: at its default level, driver 580 (CUDA 13.0) on an H200 folded integer
/// negations into three-input minimums (`VIMNMX3`) that have no negate modifier, and
/// dropped them, so `min(-(a + b))` over a row came out as a minimum over both signs.
/// Level 0 builds that kernel right; Black-Scholes and the heat equation ran end to end
/// in the same time within the noise (0.83 s against 0.73 s, 0.82 s against 0.88 s).
fn build_options(platform: &str, correctly_rounded_fp32: bool, user: &str) -> String {
    let mut options = String::from("-cl-std=CL1.2");
    if correctly_rounded_fp32 {
        options.push_str(" -cl-fp32-correctly-rounded-divide-sqrt");
    }
    if platform.to_lowercase().contains("nvidia") && !user.contains("-cl-nv-opt-level") {
        options.push_str(" -cl-nv-opt-level=0");
    }
    if !user.is_empty() {
        options.push(' ');
        options.push_str(user);
    }
    options
}

impl OpenClEngine {
    /// The engine library's constructor (`export_engine!`).
    pub fn create(ctx: EngineContext) -> hassium_engine_abi::Result<Box<dyn Engine>> {
        hassium_engine_abi::init_engine_logging("opencl");
        let cfg = OpenClConfig::from_table(&ctx.config)?;
        Ok(Box::new(OpenClEngine::new(cfg, ctx.child)?))
    }

    /// An engine on the device `cfg` selects; what the device cannot do goes to `child`
    /// (the in-process reference engine when none is given).
    pub fn new(cfg: OpenClConfig, child: Option<Box<dyn Engine>>) -> Result<OpenClEngine> {
        let start = Instant::now();
        let (device, info) = choose(&cfg)?;
        let discovered = start.elapsed().as_secs_f64();
        let context = {
            let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
            Context::from_device(&device).map_err(|e| Error::cl("clCreateContext", e))?
        };
        // An in-order queue; with `profile`, one that times each command on the device.
        let properties = if cfg.profile {
            CL_QUEUE_PROFILING_ENABLE
        } else {
            0
        };
        // SAFETY: the device belongs to the context; the properties are valid ones.
        let queue = unsafe { CommandQueue::create(&context, device.id(), properties) }
            .map_err(|e| Error::cl("clCreateCommandQueue", e))?;
        let limit = if cfg.memory_limit > 0 {
            cfg.memory_limit
        } else {
            info.global_mem.max(1)
        };
        let mut mem = DeviceMemory::new(
            std::sync::Arc::new(context),
            queue,
            limit,
            &info.name,
            cfg.profile,
        );
        let err = mem.scratch(32, &HashSet::new())?;
        let options = build_options(
            &info.platform,
            device.single_fp_config().unwrap_or(0) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0,
            &cfg.build_options,
        );
        let local = if cfg.work_group_size > 0 {
            cfg.work_group_size
        } else {
            DEFAULT_LOCAL
        }
        .min(info.max_work_group_size);
        let programs = Programs::new(
            Device::new(device.id()),
            format!("{}|{}|{}", info.platform, info.name, info.driver),
            options,
            cfg.cache_dir.clone(),
            cfg.cache_max_bytes,
            local,
        );
        let fp64 = info.fp64 && cfg.fp64 == Fp64::Auto;
        tracing::info!("OpenCL engine on {}", info.summary());
        // Start-up is a fixed cost of every program (a driver's first context can take
        // a large part of a second), apart from the per-kernel compile and execute times.
        let mut stats = EngineStats::default();
        stats.extra.insert("discovery_seconds".into(), discovered);
        stats
            .extra
            .insert("startup_seconds".into(), start.elapsed().as_secs_f64());
        Ok(OpenClEngine {
            cfg,
            info,
            mem,
            programs,
            child: child.unwrap_or_else(|| Box::new(ReferenceEngine::new())),
            fp64,
            fixed_variants: HashMap::new(),
            err,
            calls: 0,
            stats,
            sync_seconds: 0.0,
            pid: std::process::id(),
            kernel_stats: HashMap::new(),
        })
    }

    /// The device this engine runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// The directory of the program-binary cache, if any.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.programs.dir()
    }

    /// The OpenCL C source the engine would build for `kernel` (for dumps and tests).
    pub fn source_of(&self, batch: &Batch, kernel: &Kernel) -> Result<String> {
        let spec = match self.cfg.specialize {
            SpecializePolicy::Dynamic => Specialize::Dynamic,
            _ => Specialize::Fixed,
        };
        let l = lower(batch, kernel, spec).map_err(codegen_err)?;
        render_unit(&OPENCL, "", &[(&l, "hs_kernel".to_string())]).map_err(codegen_err)
    }

    /// Whether the device can hold every dtype the kernel touches.
    fn dtypes_ok(&self, batch: &Batch, kernel: &Kernel) -> bool {
        let ok = |d: DType| match d {
            DType::Float64 => self.fp64,
            DType::Float16 => self.info.fp16,
            DType::Complex64 | DType::Complex128 => false,
            _ => true,
        };
        kernel.instrs.iter().all(|&k| {
            let i = &batch.instrs[k];
            ok(i.out.dtype) && i.ins.iter().all(|o| ok(o.dtype()))
        })
    }

    fn key_of(batch: &Batch, kernel: &Kernel, mode: KeyMode, l: &Lowered) -> u128 {
        let mut bytes = kernel_key(batch, kernel, mode).0.to_le_bytes().to_vec();
        bytes.extend_from_slice(&l.signature().to_le_bytes());
        xxh3_128(&bytes)
    }

    /// Decides where a kernel runs and, on the device, which specialisation.
    fn plan(&mut self, batch: &Batch, kernel: &Kernel) -> Result<Task> {
        let extension = kernel
            .instrs
            .iter()
            .any(|&k| batch.instrs[k].op == Opcode::Extension);
        if extension || !self.dtypes_ok(batch, kernel) {
            return Ok(Task::Child);
        }
        let lowered = |spec| match lower(batch, kernel, spec) {
            Ok(l) => Ok(Some(l)),
            Err(hassium_codegen::Error::Value(m)) => Err(Error::Bytecode(CoreError::Invalid(m))),
            Err(e) => {
                tracing::debug!("kernel goes to the child engine: {e}");
                Ok(None)
            }
        };
        let max_bufs = (self.info.max_parameter_size / 8).saturating_sub(8).max(1);
        let task = |l: Option<Lowered>, mode| match l {
            Some(l) if l.slots.len() <= max_bufs && !l.is_lagged() => {
                let key = Self::key_of(batch, kernel, mode, &l);
                Task::Device {
                    lowered: Box::new(l),
                    key,
                }
            }
            _ => Task::Child,
        };
        Ok(match self.cfg.specialize {
            SpecializePolicy::Dynamic => task(lowered(Specialize::Dynamic)?, KeyMode::Dynamic),
            SpecializePolicy::Fixed => task(lowered(Specialize::Fixed)?, KeyMode::Fixed),
            SpecializePolicy::Both => {
                let Some(l) = lowered(Specialize::Fixed)? else {
                    return Ok(Task::Child);
                };
                let key = Self::key_of(batch, kernel, KeyMode::Fixed, &l);
                if !matches!(l.plan, Plan::Empty) {
                    let dkey = kernel_key(batch, kernel, KeyMode::Dynamic).0;
                    let known = self.programs.in_memory(key).is_some();
                    let variants = self.fixed_variants.entry(dkey).or_default();
                    if !known && !variants.contains(&key) && variants.len() >= 2 {
                        return Ok(task(lowered(Specialize::Dynamic)?, KeyMode::Dynamic));
                    }
                    variants.insert(key);
                }
                task(Some(l), KeyMode::Fixed)
            }
        })
    }

    /// Builds the programs of the device tasks not built yet, as one program.
    /// Builds the programs of `tasks` that are not built yet. With `tiered`, they build in
    /// the background instead, and the keys returned (those still building) run on the
    /// child engine this time.
    fn build(&mut self, tasks: &[Task]) -> Result<HashSet<u128>> {
        let mut waiting = HashSet::new();
        let mut jobs: Vec<Job> = Vec::new();
        let mut queued = HashSet::new();
        for t in tasks {
            let Task::Device { lowered, key } = t else {
                continue;
            };
            if matches!(lowered.plan, Plan::Empty) || !queued.insert(*key) {
                continue;
            }
            if self.programs.in_memory(*key).is_some() {
                self.stats.cache_hits_memory += 1;
                continue;
            }
            if self.programs.is_pending(*key) {
                waiting.insert(*key);
                continue;
            }
            let source = render(&OPENCL, lowered, &entry_name(*key)).map_err(codegen_err)?;
            jobs.push(Job {
                key: *key,
                has_fin: lowered.has_fin(),
                source,
            });
        }
        if jobs.is_empty() {
            return Ok(waiting);
        }
        if self.cfg.strict_cache && self.calls > 0 {
            return Err(Error::Config(format!(
                "strict_cache: {} kernel(s) missed the program cache after the first batch",
                jobs.len()
            )));
        }
        if self.cfg.tiered {
            let keys: Vec<u128> = jobs.iter().map(|j| j.key).collect();
            let ctx = self.mem.context.clone();
            if self
                .programs
                .build_in_background(ctx, &prelude(&OPENCL), jobs)
            {
                waiting.extend(keys);
                return Ok(waiting);
            }
            return Err(Error::Config(
                "tiered: cannot start a background build thread".into(),
            ));
        }
        let start = Instant::now();
        let _span = tracing::info_span!("compile", kernels = jobs.len()).entered();
        match self
            .programs
            .build(&self.mem.context, &prelude(&OPENCL), &jobs)?
        {
            Origin::Disk => self.stats.cache_hits_disk += jobs.len() as u64,
            Origin::Source => self.stats.kernels_compiled += jobs.len() as u64,
        }
        self.stats.compile_seconds += start.elapsed().as_secs_f64();
        Ok(waiting)
    }

    /// Runs one kernel on the child engine: its inputs (and partly written outputs) come
    /// home from the device first; afterwards the device copies of its outputs are stale.
    fn run_on_child(&mut self, batch: &Batch, kernel: &Kernel, buffers: &Buffers) -> Result<()> {
        self.mem.finish()?;
        let touched: Vec<BaseId> = kernel.reads.iter().chain(&kernel.writes).copied().collect();
        let mut lent = Buffers::default();
        for &id in &touched {
            self.mem.download(id, buffers.get(id))?;
        }
        for hb in buffers.iter() {
            // The child may keep copies of its own: everything it is handed is news.
            lent.insert(HostBuffer {
                host_dirty: 1,
                ..*hb
            });
        }
        self.child
            .execute(batch, std::slice::from_ref(kernel), &lent)?;
        for &id in &kernel.writes {
            if let Some(hb) = buffers.get(id) {
                self.child.sync(id, hb)?;
            }
            self.mem.host_written(id);
        }
        Ok(())
    }

    /// True when the kernel overwrites every element of `id` without reading it first, so
    /// a stale device copy need not be uploaded.
    fn overwrites(batch: &Batch, kernel: &Kernel, id: BaseId) -> bool {
        if kernel.reads.contains(&id) {
            return false;
        }
        let Some(base) = batch.base(id) else {
            return false;
        };
        kernel.instrs.iter().any(|&k| {
            let i = &batch.instrs[k];
            !i.reads_output()
                && i.out.base == id
                && i.out.offset == 0
                && i.out.nelem() == base.nelem
                && i.out.is_contiguous()
        })
    }

    /// Uploads a kernel's scalars and `meta` array without waiting: the queue is in
    /// order, so the kernel reads them after the writes, and the host copies stay alive
    /// until the queue drains.
    fn args(&mut self, l: &Lowered, pinned: &HashSet<BaseId>) -> Result<ArgBufs> {
        let scal: Vec<u8> = l.scalars.iter().flat_map(|s| s.to_le_bytes()).collect();
        let meta: Vec<u8> = l.meta.iter().flat_map(|m| m.to_le_bytes()).collect();
        let (scal_len, meta_len) = (scal.len(), meta.len());
        let mut scal_buf = self.mem.scratch(scal_len, pinned)?;
        self.mem.write_owned(&mut scal_buf, scal)?;
        let mut meta_buf = self.mem.scratch(meta_len, pinned)?;
        self.mem.write_owned(&mut meta_buf, meta)?;
        Ok(ArgBufs {
            scal: scal_buf,
            scal_len,
            meta: meta_buf,
            meta_len,
        })
    }

    /// Runs one built kernel on the device according to its plan.
    fn run_on_device(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        (l, key): (&Lowered, u128),
        built: &Built,
    ) -> Result<()> {
        let pinned: HashSet<BaseId> = l.slots.iter().copied().collect();
        for &id in &l.slots {
            let need = !Self::overwrites(batch, kernel, id);
            self.mem.prepare(id, need, &pinned)?;
        }
        let args = self.args(l, &pinned)?;
        let checks = kernel
            .instrs
            .iter()
            .any(|&k| batch.instrs[k].can_fail_when_run());
        if checks {
            self.mem.write_owned(&mut self.err, vec![0u8; 32])?;
        }
        let (part, part_len) = match l.plan {
            Plan::Partials { chunks, slots, .. } => {
                let n = chunks * slots.max(1) * 16;
                (Some(self.mem.scratch(n, &pinned)?), n)
            }
            _ => (None, 0),
        };
        let bufs: Vec<cl_mem> = l
            .slots
            .iter()
            .map(|id| self.mem.buffer(*id).map(|b| b.get()))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::Config("a kernel buffer vanished".into()))?;
        let part_mem = part.as_ref().map_or(self.err.get(), |p| p.get());
        let set = |k: &opencl3::kernel::Kernel, begin: i64, end: i64| -> Result<()> {
            let e = |e| Error::cl("clSetKernelArg", e);
            // SAFETY: the arguments follow the rendered signature: begin, end, one buffer
            // per slot, scal, meta, part, err; every buffer is live until the queue is
            // finished.
            unsafe {
                k.set_arg(0, &begin).map_err(e)?;
                k.set_arg(1, &end).map_err(e)?;
                let mut a = 2;
                for m in &bufs {
                    k.set_arg(a, m).map_err(e)?;
                    a += 1;
                }
                k.set_arg(a, &args.scal.get()).map_err(e)?;
                k.set_arg(a + 1, &args.meta.get()).map_err(e)?;
                k.set_arg(a + 2, &part_mem).map_err(e)?;
                k.set_arg(a + 3, &self.err.get()).map_err(e)?;
            }
            Ok(())
        };
        let mut launched = Vec::new();
        let mut launch = |k: &opencl3::kernel::Kernel, items: usize, local: usize| -> Result<()> {
            let local = local.max(1);
            let global = items.div_ceil(local).max(1) * local;
            // SAFETY: arguments were set above; sizes are consistent (global is a
            // multiple of local).
            let event = unsafe {
                self.mem.queue.enqueue_nd_range_kernel(
                    k.get(),
                    1,
                    std::ptr::null(),
                    [global].as_ptr(),
                    [local].as_ptr(),
                    &[],
                )
            }
            .map_err(|e| Error::cl("clEnqueueNDRangeKernel", e))?;
            launched.push(event);
            Ok(())
        };
        match l.plan {
            Plan::Empty => {}
            Plan::Lagged { .. } => {
                return Err(Error::Config(
                    "held-back writes reached the device; they belong to the child".into(),
                ))
            }
            // One work-item walks the whole range, in order (scatters' update order).
            Plan::Serial { extent } => {
                set(&built.main, 0, extent as i64)?;
                launch(&built.main, 1, 1)?;
            }
            Plan::Parallel { extent, inner } if l.group_rows() => {
                lanes_fit(built)?;
                set(&built.main, 0, extent as i64)?;
                // No wider than a row needs (`inner` bounds its length): every multiple
                // of LANES gives the same result.
                let wide = built
                    .local
                    .min(WIDE)
                    .min(inner.next_multiple_of(LANES))
                    .max(LANES);
                launch(&built.main, extent * wide, wide)?;
            }
            Plan::Parallel { extent, .. } => {
                set(&built.main, 0, extent as i64)?;
                let step = if l.outer_item_per_column() {
                    1
                } else {
                    l.parallel_step()
                };
                launch(&built.main, extent.div_ceil(step), built.local)?;
            }
            Plan::Partials { extent, chunks, .. } => {
                set(&built.main, 0, extent as i64)?;
                if l.group_partials() {
                    lanes_fit(built)?;
                    // Any multiple of LANES up to WIDE gives the same result; `local` is
                    // a power of two, so at least LANES is one.
                    let wide = built.local.clamp(LANES, WIDE);
                    launch(&built.main, chunks * wide, wide)?;
                } else if l.group_row_partials() {
                    let wide = built.local.min(WIDE);
                    launch(&built.main, chunks * wide, wide)?;
                } else if l.item_per_column() {
                    launch(&built.main, chunks * l.fin_columns(), built.local)?;
                } else {
                    launch(&built.main, chunks, built.local)?;
                }
                let fin = built
                    .fin
                    .as_ref()
                    .ok_or_else(|| Error::Config("partial reduction without a combiner".into()))?;
                set(fin, 0, chunks as i64)?;
                if l.group_fin() {
                    let wide = built.fin_local.min(WIDE);
                    launch(fin, wide, wide)?;
                } else if l.fin_columns() > 0 {
                    launch(fin, l.fin_columns(), built.fin_local)?;
                } else {
                    launch(fin, 1, 1)?;
                }
            }
        }
        for event in launched {
            self.mem.track_kernel(Command::Kernel, event, Some(key));
        }
        if self.cfg.profile {
            let elements = l.elements as u64;
            self.kernel_stats
                .entry(key)
                .or_insert_with(|| KernelStats {
                    key: format!("{key:032x}"),
                    instrs: kernel.instrs.len() as u64,
                    ..KernelStats::default()
                })
                .add(0.0, l.bytes, elements);
        }
        if checks {
            // The runtime stops a batch at its first failing kernel (later kernels may
            // overwrite what it read), so this read waits for the kernel to finish.
            let mut words = [0u8; 32];
            // SAFETY: 32 bytes into a 32-byte array; blocking.
            let event = unsafe {
                self.mem
                    .queue
                    .enqueue_read_buffer(&self.err, CL_BLOCKING, 0, &mut words, &[])
            }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e))?;
            self.mem.stats.waits += 1;
            self.mem.track(Command::Read, event);
            let w =
                |i: usize| i64::from_le_bytes(words[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
            if w(2) != 0 {
                let e = hassium_core::status_error(w(2), &[w(0), w(1)]);
                return Err(Error::Bytecode(kernel.error_in(batch, e)));
            }
        }
        self.mem.recycle(args.scal_len, args.scal);
        self.mem.recycle(args.meta_len, args.meta);
        if let Some(p) = part {
            self.mem.recycle(part_len, p);
        }
        for &id in &kernel.writes {
            self.mem.device_written(id);
        }
        self.stats.kernels_run += 1;
        self.stats.bytes_moved += l.bytes;
        Ok(())
    }

    fn execute_inner(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
    ) -> Result<()> {
        hassium_core::verify_kernels(batch, kernels)?;
        for hb in buffers.iter() {
            let nbytes = batch.base(BaseId(hb.base)).map_or(
                hb.nelem as usize * hb.dtype().map_or(1, |d| d.size()),
                |b| b.nbytes(),
            );
            self.mem.note_host(hb, nbytes);
        }
        let (from_source, from_disk, _failed) = self.programs.collect()?;
        self.stats.kernels_compiled += from_source;
        self.stats.cache_hits_disk += from_disk;
        let tasks = kernels
            .iter()
            .map(|k| self.plan(batch, k))
            .collect::<Result<Vec<_>>>()?;
        let waiting = self.build(&tasks)?;
        self.calls += 1;
        for (k, task) in kernels.iter().zip(&tasks) {
            match task {
                Task::Child => {
                    self.run_on_child(batch, k, buffers)?;
                    self.stats.fallbacks += 1;
                }
                Task::Device { key, .. } if waiting.contains(key) => {
                    // Its program is building in the background: the child runs it now,
                    // counted as interpreted (as the CPU engine counts its tiered runs).
                    self.run_on_child(batch, k, buffers)?;
                    self.stats.interpreted += 1;
                }
                Task::Device { lowered, key } => {
                    if matches!(lowered.plan, Plan::Empty) {
                        continue;
                    }
                    let b = self
                        .programs
                        .in_memory(*key)
                        .ok_or_else(|| Error::Config("a kernel was not built".into()))?;
                    // Indices and exponents that could stop the kernel part-way are
                    // checked on the host before anything is written (see `precheck`):
                    // read back those the device holds newer copies of (the in-order
                    // queue finishes their writers first).
                    let mut checked = precheck::checked_bases(batch, k).peekable();
                    if checked.peek().is_some() {
                        for id in checked {
                            self.mem.download(id, buffers.get(id))?;
                        }
                        precheck::check(batch, k, buffers).map_err(Error::Bytecode)?;
                    }
                    self.run_on_device(batch, k, (lowered, *key), &b)?;
                }
            }
        }
        self.mem.finish()
    }
}

/// A reduction rendered for work-groups needs groups of `LANES` items.
fn lanes_fit(built: &Built) -> Result<()> {
    if built.limit < LANES {
        return Err(Error::Config(format!(
            "the device runs this reduction in work-groups of at most {} items; it needs {LANES}",
            built.limit
        )));
    }
    Ok(())
}

fn codegen_err(e: hassium_codegen::Error) -> Error {
    match e {
        hassium_codegen::Error::Value(m) => Error::Bytecode(CoreError::Invalid(m)),
        e => Error::Config(format!("codegen: {e}")),
    }
}

impl OpenClEngine {
    /// An error in a process forked from the one that created the engine: the driver's
    /// threads did not come along, and a call into the context there can wait forever.
    fn check_process(&self) -> Result<()> {
        let child = std::process::id();
        if child == self.pid {
            Ok(())
        } else {
            Err(Error::Forked {
                parent: self.pid,
                child,
            })
        }
    }

    /// `sync` once a read-back is needed: reads the device copy back (the blocking read
    /// waits for everything queued before it, the in-order queue's one wait), unless the
    /// bridge wrote the host copy itself.
    fn sync_inner(&mut self, base: BaseId, host: &HostBuffer) -> Result<()> {
        if host.host_dirty != 0 {
            // The bridge wrote the host copy: it is the current one, once nothing queued
            // still reads the old one.
            self.mem.finish()?;
            self.mem.host_written(base);
            return Ok(());
        }
        self.mem.download(base, Some(host))
    }
}

impl Engine for OpenClEngine {
    fn name(&self) -> &str {
        "opencl"
    }

    /// What the device and the child together run: every kernel the device cannot run
    /// (fp64 without `cl_khr_fp64`, complex, matmul, …) goes to the child, so the fuser may
    /// build anything the child accepts. Kernels are bounded by the device's argument
    /// space (one pointer per buffer).
    fn capabilities(&self) -> Capabilities {
        let mut c = self.child.capabilities();
        let max_bufs = (self.info.max_parameter_size / 8).saturating_sub(8).max(1);
        c.max_kernel_operands = c.max_kernel_operands.min(max_bufs);
        // A held-back row needs a second pass after every work-item has read its old
        // values: one launch has no such barrier, so these stay two kernels here.
        c.lagged_writes = false;
        c
    }

    fn execute(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
    ) -> hassium_engine_abi::Result<()> {
        self.check_process()?;
        let start = Instant::now();
        let r = self.execute_inner(batch, kernels, buffers);
        if r.is_err() {
            // Leave the queue idle so the next call starts clean.
            let _ = self.mem.finish();
        }
        self.stats.execute_seconds += start.elapsed().as_secs_f64();
        Ok(r?)
    }

    fn sync(&mut self, base: BaseId, host: &HostBuffer) -> hassium_engine_abi::Result<()> {
        if host.host_dirty == 0 && self.mem.host_current(base) {
            // Nothing to read back and nothing queued can change that: no need to wait
            // for the queue (an element read in a Python loop syncs every time).
            return Ok(());
        }
        self.check_process()?;
        let start = Instant::now();
        let r = self.sync_inner(base, host);
        // Waiting for queued kernels and reading results back: execute only enqueues.
        self.sync_seconds += start.elapsed().as_secs_f64();
        Ok(r?)
    }

    fn free(&mut self, base: BaseId) -> hassium_engine_abi::Result<()> {
        if self.check_process().is_err() {
            // Releasing device memory from a forked process could wait forever: leak it
            // (the parent owns it).
            return Ok(());
        }
        self.mem.free(base);
        self.child.free(base)
    }

    fn stats(&self) -> EngineStats {
        let mut s = self.stats.clone();
        s.extra.insert("sync_seconds".into(), self.sync_seconds);
        let m = self.mem.stats;
        if s.execute_seconds > 0.0 {
            s.extra.insert(
                "gb_per_s".into(),
                s.bytes_moved as f64 / s.execute_seconds / 1e9,
            );
        }
        s.extra
            .insert("bytes_to_device".into(), m.bytes_to_device as f64);
        s.extra
            .insert("bytes_to_host".into(), m.bytes_to_host as f64);
        s.extra.insert("evictions".into(), m.evictions as f64);
        s.extra
            .insert("device_pool_hits".into(), m.pool_hits as f64);
        s.extra
            .insert("device_allocations".into(), m.allocations as f64);
        s.extra
            .insert("device_bytes_held".into(), self.mem.held() as f64);
        s.extra
            .insert("device_buffers_pooled".into(), self.mem.pooled() as f64);
        s.extra
            .insert("fp64_on_device".into(), f64::from(u8::from(self.fp64)));
        // What the host asked of the queue: the per-kernel round trips a GPU pays for.
        for (name, v) in [
            ("launches", m.launches),
            ("writes", m.writes),
            ("reads", m.reads),
            ("waits", m.waits),
        ] {
            s.extra.insert(name.into(), v as f64);
        }
        if self.cfg.profile {
            // The slowest kernels by their device time, as the cpu engine lists them.
            let timed = self.kernel_stats.iter().map(|(key, k)| {
                let mut k = k.clone();
                k.seconds = self.mem.kernel_times.get(key).copied().unwrap_or(0.0);
                if k.seconds > 0.0 {
                    k.gb_per_s = k.bytes_moved as f64 / k.seconds / 1e9;
                }
                k
            });
            s.kernels = slowest_kernels(timed, MAX_KERNEL_STATS);
            s.extra
                .insert("device_kernel_seconds".into(), m.kernel_seconds);
            s.extra
                .insert("device_write_seconds".into(), m.write_seconds);
            s.extra.insert("device_read_seconds".into(), m.read_seconds);
        }
        let child = self.child.stats();
        s.extra
            .insert("child_kernels_run".into(), child.kernels_run as f64);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::build_options;

    #[test]
    fn build_options_add_the_nvidia_workaround_unless_the_user_names_a_level() {
        assert_eq!(
            build_options("Portable Computing Language", false, ""),
            "-cl-std=CL1.2"
        );
        assert_eq!(
            build_options("NVIDIA CUDA", true, ""),
            "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -cl-nv-opt-level=0"
        );
        assert_eq!(
            build_options("NVIDIA CUDA", false, "-cl-nv-opt-level=3"),
            "-cl-std=CL1.2 -cl-nv-opt-level=3"
        );
        assert_eq!(
            build_options("Portable Computing Language", false, "-cl-mad-enable"),
            "-cl-std=CL1.2 -cl-mad-enable"
        );
    }
}
