//! The shared differential suite (`hassium_engine_testkit::suite`) on the CPU engine:
//! every kernel compiled, nothing interpreted except complex numbers, with 1, 2 and 3
//! threads and each specialisation mode.

mod common;

use hassium_core::{Batch, Kernel};
use hassium_engine_abi::{Engine, EngineStats};
use hassium_engine_cpu::SpecializePolicy;
use hassium_engine_testkit::suite::{kernels_touching, Spec, Subject};
use std::path::Path;

struct Cpu;

impl Subject for Cpu {
    fn engine(&self, threads: usize, spec: Spec, cache: &Path) -> Box<dyn Engine> {
        let spec = match spec {
            Spec::Fixed => SpecializePolicy::Fixed,
            Spec::Dynamic => SpecializePolicy::Dynamic,
            Spec::Both => SpecializePolicy::Both,
        };
        Box::new(common::engine(threads, spec, cache))
    }

    fn not_native(&self, stats: &EngineStats) -> u64 {
        stats.interpreted
    }

    /// The C renderer has no complex arithmetic: those kernels are interpreted.
    fn expected_not_native(&self, batch: &Batch, kernels: &[Kernel]) -> u64 {
        kernels_touching(batch, kernels, |d| d.is_complex())
    }
}

hassium_engine_testkit::differential_suite!(Cpu);
