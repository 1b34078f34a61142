//! The shared differential suite (`hassium_engine_testkit::suite`) on the CPU engine:
//! every kernel compiled, nothing interpreted except the complex operations the C codegen
//! does not render (math functions, reductions), with 1, 2 and 3 threads and each
//! specialisation mode.

mod common;

use hassium_core::{Batch, Kernel};
use hassium_engine_abi::{Engine, EngineStats};
use hassium_engine_cpu::SpecializePolicy;
use hassium_engine_testkit::suite::{Spec, Subject};
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

    /// The C renderer renders complex arithmetic, not complex math functions or
    /// reductions: kernels with those are interpreted.
    fn expected_not_native(&self, batch: &Batch, kernels: &[Kernel]) -> u64 {
        let complex = |i: &hassium_core::Instr| {
            i.out.dtype.is_complex() || i.ins.iter().any(|o| o.dtype().is_complex())
        };
        kernels
            .iter()
            .filter(|k| {
                k.instrs.iter().any(|&n| {
                    let i = &batch.instrs[n];
                    complex(i) && !hassium_codegen::complex_renders(i.op)
                })
            })
            .count() as u64
    }
}

hassium_engine_testkit::differential_suite!(Cpu);
