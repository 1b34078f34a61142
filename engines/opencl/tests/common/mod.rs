//! The OpenCL engine as the shared test support needs it: a configuration and an engine
//! on the first device (PoCL where there is no GPU) with its program cache in a given
//! directory. Inputs, running against the reference engine (syncing every base back from
//! the device) and comparing come from `hassium-engine-testkit`.
#![allow(dead_code)]

use hassium_engine_opencl::{OpenClConfig, OpenClEngine, Select, SpecializePolicy};

#[allow(unused_imports)]
pub use hassium_engine_testkit::*;

/// An engine on the first OpenCL device with its program cache in `cache`, or on the
/// platform `$HASSIUM_ENGINES_OPENCL_PLATFORM` names (an index or part of its name, as
/// the runtime reads it): a machine with both PoCL and a GPU tests the GPU that way.
pub fn config(spec: SpecializePolicy, cache: &std::path::Path) -> OpenClConfig {
    let platform = std::env::var("HASSIUM_ENGINES_OPENCL_PLATFORM")
        .map_or(Select::Any, |p| Select::from_text(&p));
    OpenClConfig {
        platform,
        specialize: spec,
        cache_dir: Some(cache.to_path_buf()),
        ..OpenClConfig::default()
    }
}

pub fn engine(spec: SpecializePolicy, cache: &std::path::Path) -> OpenClEngine {
    OpenClEngine::new(config(spec, cache), None).expect("an OpenCL device (PoCL)")
}
