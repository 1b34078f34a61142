//! The CPU engine as the shared test support needs it: a configuration and an engine
//! with its cache in a given directory. Inputs, running against the reference engine and
//! comparing come from `hassium-engine-testkit`.
#![allow(dead_code)]

use hassium_engine_cpu::{CpuConfig, CpuEngine, SpecializePolicy};

#[allow(unused_imports)]
pub use hassium_engine_testkit::*;

pub fn config(threads: usize, spec: SpecializePolicy, cache: &std::path::Path) -> CpuConfig {
    CpuConfig {
        threads,
        specialize: spec,
        cache_dir: hassium_engine_abi::CacheLocation::At(cache.to_path_buf()),
        min_parallel_elems: 1,
        min_parallel_seconds: 0.0,
        flags: ["-O1", "-march=native", "-fPIC", "-shared"]
            .map(String::from)
            .to_vec(),
        ..CpuConfig::default()
    }
}

pub fn engine(threads: usize, spec: SpecializePolicy, cache: &std::path::Path) -> CpuEngine {
    CpuEngine::new(config(threads, spec, cache)).expect("cpu engine")
}
