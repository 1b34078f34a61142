//! The shared differential suite (`hassium_engine_testkit::suite`) on the OpenCL engine
//! (PoCL where there is no GPU), in each specialisation mode. What the device cannot run
//! goes to the child engine and is counted: complex numbers, matmul, float16 on a
//! device without cl_khr_fp16 (PoCL has none), and kernels with held-back writes; it is
//! compared all the same.

mod common;

use hassium_core::{Batch, DType, Kernel, Opcode};
use hassium_engine_abi::{Engine, EngineStats};
use hassium_engine_opencl::SpecializePolicy;
use hassium_engine_testkit::suite::{kernels_touching, Spec, Subject};
use std::path::Path;
use std::sync::OnceLock;

struct OpenCl;

/// Whether the test device has cl_khr_fp16 (asked once).
fn device_fp16() -> bool {
    static FP16: OnceLock<bool> = OnceLock::new();
    *FP16.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        common::engine(SpecializePolicy::Fixed, dir.path())
            .device()
            .fp16
    })
}

impl Subject for OpenCl {
    fn engine(&self, _threads: usize, spec: Spec, cache: &Path) -> Box<dyn Engine> {
        let spec = match spec {
            Spec::Fixed => SpecializePolicy::Fixed,
            Spec::Dynamic => SpecializePolicy::Dynamic,
            Spec::Both => SpecializePolicy::Both,
        };
        Box::new(common::engine(spec, cache))
    }

    fn not_native(&self, stats: &EngineStats) -> u64 {
        stats.fallbacks
    }

    fn expected_not_native(&self, batch: &Batch, kernels: &[Kernel]) -> u64 {
        let fp16 = device_fp16();
        let matmul = kernels
            .iter()
            .filter(|k| {
                k.instrs
                    .iter()
                    .any(|&i| batch.instrs[i].op == Opcode::Extension)
            })
            .count() as u64;
        // Held-back writes need a pass after every work-item: the child runs them.
        let lagged = kernels
            .iter()
            .filter(|k| {
                hassium_codegen::lower(batch, k, hassium_codegen::Specialize::Fixed)
                    .is_ok_and(|l| l.is_lagged())
            })
            .count() as u64;
        matmul
            + lagged
            + kernels_touching(batch, kernels, |d| {
                d.is_complex() || (d == DType::Float16 && !fp16)
            })
    }

    /// PoCL generates and links a work-group function for each kernel at its first
    /// launch, about 0.15 s each on 2 cores with its cache cold: the ~3 600 elementwise
    /// kernels of one instruction each took 10 of the suite's 15 minutes.
    fn elementwise_per_kernel(&self) -> usize {
        16
    }
}

hassium_engine_testkit::differential_suite!(OpenCl);
