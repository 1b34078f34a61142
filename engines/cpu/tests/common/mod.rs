//! Shared test support: host arrays for a batch, random fills with NaN/inf/extremes,
//! running the reference and CPU engines on copies, and comparing the results with the
//! differential suite's tolerances.
#![allow(dead_code)]

use hassium_core::{BaseId, Batch, DType, Kernel};
use hassium_engine_abi::Engine;
use hassium_engine_cpu::{CpuConfig, CpuEngine, SpecializePolicy};
use hassium_engine_reference::ReferenceEngine;

pub use hassium_engine_testkit::*;

pub fn config(threads: usize, spec: SpecializePolicy, cache: &std::path::Path) -> CpuConfig {
    CpuConfig {
        threads,
        specialize: spec,
        cache_dir: cache.to_path_buf(),
        min_parallel_elems: 1,
        flags: ["-O1", "-march=native", "-fPIC", "-shared"]
            .map(String::from)
            .to_vec(),
        ..CpuConfig::default()
    }
}

/// Runs `kernels` on the reference engine and on `cpu` from the same inputs.
pub fn run_both(
    batch: &Batch,
    kernels: &[Kernel],
    inputs: &Arrays,
    cpu: &mut CpuEngine,
) -> (Arrays, Arrays) {
    let contracted: Vec<BaseId> = kernels
        .iter()
        .flat_map(|k| k.contracted.iter().copied())
        .collect();
    let mut want = inputs.clone();
    ReferenceEngine::new()
        .execute(batch, kernels, &want.buffers(&contracted))
        .expect("reference engine");
    let mut got = inputs.clone();
    cpu.execute(batch, kernels, &got.buffers(&contracted))
        .expect("cpu engine");
    (want, got)
}

fn tol(d: DType) -> f64 {
    match d {
        DType::Float64 | DType::Complex128 => 1e-12,
        DType::Float32 | DType::Complex64 => 1e-5,
        _ => 2e-3,
    }
}

fn close(d: DType, a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs()
        <= tol(d)
            * a.abs()
                .max(b.abs())
                .max(if d == DType::Float16 { 1e-3 } else { 1e-300 })
}

/// Compares every element of `bases`; returns a description of the first difference.
pub fn diff(want: &Arrays, got: &Arrays, bases: &[BaseId]) -> Option<String> {
    for &id in bases {
        let (d, n, _) = want.0[&id];
        for i in 0..n {
            let (w, g) = (want.get(id, i), got.get(id, i));
            let ok = match (w.as_i128(), g.as_i128()) {
                (Some(a), Some(b)) => a == b,
                _ => {
                    let ((wr, wi), (gr, gi)) = (w.as_c128(), g.as_c128());
                    close(d, wr, gr) && close(d, wi, gi)
                }
            };
            if !ok {
                return Some(format!(
                    "base {} ({}) element {i}: reference {w:?}, cpu {g:?}",
                    id.0,
                    d.name()
                ));
            }
        }
    }
    None
}

pub fn engine(threads: usize, spec: SpecializePolicy, cache: &std::path::Path) -> CpuEngine {
    CpuEngine::new(config(threads, spec, cache)).expect("cpu engine")
}
