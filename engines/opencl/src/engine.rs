//! The engine: lower each kernel, decide whether the device runs it or the child engine
//! does, build what is new, then run in order, moving data lazily.

use crate::config::{Fp64, OpenClConfig, SpecializePolicy};
use crate::device::{choose, DeviceInfo, DISCOVERY};
use crate::error::{Error, Result};
use crate::memory::DeviceMemory;
use crate::program::Programs;
use hassium_codegen::{lower, render_unit, Plan, Specialize, OPENCL};
use hassium_core::{BaseId, Batch, Error as CoreError, Kernel};
use hassium_engine_abi::{precheck, Buffers, Engine, EngineContext, EngineStats, KernelStats};
use hassium_engine_reference::ReferenceEngine;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT};
use opencl3::memory::Buffer;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

mod abi;
mod plan;
mod run;
mod sort;

use plan::Task;

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
    /// The process that created the context (see `check_process`), and its number
    /// from `process_generation`.
    pid: u32,
    process: u64,
    /// With `profile`, each kernel's calls, size and traffic; its device seconds come
    /// from the queue's profile (`DeviceMemory::kernel_times`).
    kernel_stats: HashMap<u128, KernelStats>,
    /// The options programs are built with.
    build_options: BuildOptions,
    /// The sort program (`sort.rs`), built at the first sort.
    sort_program: Option<opencl3::program::Program>,
}

// SAFETY: OpenCL handles may be used from any thread; the engine is used by one thread at
// a time (`&mut self`), which is all `Engine: Send` asks.
unsafe impl Send for OpenClEngine {}

/// The options programs are built with on a device of `platform`: OpenCL C 1.2,
/// correctly rounded float32 division and sqrt where the device offers them (NumPy's are;
/// OpenCL allows 2.5 ulp unless asked), then the user's `build_options`. Two sets: the
/// usual one, and the cautious one for kernels that fold or chain integer minimums or
/// maximums (see `plan::cautious`), which differs only on NVIDIA's platform.
///
/// There the cautious set runs the device assembler at `-cl-nv-opt-level=0` unless the
/// user names a level: at its default level, driver 580 (CUDA 13.0) on an H200 folded
/// integer negations into three-input minimums (`VIMNMX3`) that have no negate modifier,
/// and dropped them, so `min(-(a + b))` over a row came out as a minimum over both signs.
/// Level 0 builds that kernel right, but halves the speed of every other kernel (4000²
/// heat equation, 50 steps, on the H200: 65 ms of execute time at level 0, 32 ms at the
/// default level), so only the kernels that can meet the fault pay for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BuildOptions {
    pub usual: String,
    pub cautious: String,
}

fn build_options(platform: &str, correctly_rounded_fp32: bool, user: &str) -> BuildOptions {
    let mut usual = String::from("-cl-std=CL1.2");
    if correctly_rounded_fp32 {
        usual.push_str(" -cl-fp32-correctly-rounded-divide-sqrt");
    }
    let mut cautious = usual.clone();
    if platform.to_lowercase().contains("nvidia") && !user.contains("-cl-nv-opt-level") {
        cautious.push_str(" -cl-nv-opt-level=0");
    }
    for options in [&mut usual, &mut cautious] {
        if !user.is_empty() {
            options.push(' ');
            options.push_str(user);
        }
    }
    BuildOptions { usual, cautious }
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
            options.clone(),
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
            process: hassium_engine_abi::process_generation(),
            kernel_stats: HashMap::new(),
            build_options: options,
            sort_program: None,
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
                Task::Sort => self.sort_on_device(batch, k)?,
                Task::Device { key, .. } if waiting.contains(key) => {
                    // Its program is building in the background: the child runs it now,
                    // counted as interpreted (as the CPU engine counts its tiered runs).
                    self.run_on_child(batch, k, buffers)?;
                    self.stats.interpreted += 1;
                }
                Task::Device { lowered, key, .. } => {
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

fn codegen_err(e: hassium_codegen::Error) -> Error {
    match e {
        hassium_codegen::Error::Value(m) => Error::Bytecode(CoreError::Invalid(m)),
        e => Error::Config(format!("codegen: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{build_options, BuildOptions};

    #[test]
    fn build_options_add_the_nvidia_workaround_to_the_cautious_set_unless_the_user_names_a_level() {
        let both = |o: &str| BuildOptions {
            usual: o.into(),
            cautious: o.into(),
        };
        assert_eq!(
            build_options("Portable Computing Language", false, ""),
            both("-cl-std=CL1.2")
        );
        assert_eq!(
            build_options("NVIDIA CUDA", true, ""),
            BuildOptions {
                usual: "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt".into(),
                cautious: "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -cl-nv-opt-level=0"
                    .into(),
            }
        );
        assert_eq!(
            build_options("NVIDIA CUDA", false, "-cl-nv-opt-level=3"),
            both("-cl-std=CL1.2 -cl-nv-opt-level=3")
        );
        assert_eq!(
            build_options("Portable Computing Language", false, "-cl-mad-enable"),
            both("-cl-std=CL1.2 -cl-mad-enable")
        );
    }
}
