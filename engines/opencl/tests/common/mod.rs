//! Shared test support: host arrays for a batch, random fills with NaN/inf/extremes,
//! running the reference and OpenCL engines on copies (syncing every base back from the
//! device), and comparing with the CPU engine's tolerances (f64 1e-12, f32 1e-5 relative).
#![allow(dead_code)]

use hassium_core::{BaseId, Batch, DType, Kernel};
use hassium_engine_abi::Engine;
use hassium_engine_opencl::{OpenClConfig, OpenClEngine, SpecializePolicy};
use hassium_engine_reference::ReferenceEngine;

pub use hassium_engine_testkit::*;

/// An engine on the first OpenCL device with its program cache in `cache`.
pub fn config(spec: SpecializePolicy, cache: &std::path::Path) -> OpenClConfig {
    OpenClConfig {
        specialize: spec,
        cache_dir: Some(cache.to_path_buf()),
        ..OpenClConfig::default()
    }
}

pub fn engine(spec: SpecializePolicy, cache: &std::path::Path) -> OpenClEngine {
    OpenClEngine::new(config(spec, cache), None).expect("an OpenCL device (PoCL)")
}

/// Greedy-fused kernels of a batch, as the runtime would hand them down.
pub fn fused(b: &Batch) -> Vec<Kernel> {
    let mut f = hassium_fuser::create("greedy", &Default::default()).expect("greedy fuser");
    f.fuse(b, &hassium_core::Capabilities::all())
        .expect("fusion")
}

/// Makes every base's device values visible in `arrays`.
pub fn sync_all(engine: &mut dyn Engine, arrays: &mut Arrays, skip: &[BaseId]) {
    let bufs = arrays.buffers(skip);
    for hb in bufs.iter() {
        engine.sync(BaseId(hb.base), hb).expect("sync");
    }
}

/// Runs `kernels` on the reference engine and on `ocl` from the same inputs.
pub fn run_both(
    batch: &Batch,
    kernels: &[Kernel],
    inputs: &Arrays,
    ocl: &mut OpenClEngine,
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
    ocl.execute(batch, kernels, &got.buffers(&contracted))
        .expect("opencl engine");
    sync_all(ocl, &mut got, &contracted);
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
                    "base {} ({}) element {i}: reference {w:?}, opencl {g:?}",
                    id.0,
                    d.name()
                ));
            }
        }
    }
    None
}
