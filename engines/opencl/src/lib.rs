//! Hassium's OpenCL engine.
//!
//! Kernels are the fused kernels every engine gets, rendered to OpenCL C by
//! `hassium-codegen`'s OpenCL dialect and built through `opencl3`, whose `dynamic` feature
//! loads libOpenCL at run time: the engine builds on machines without OpenCL and, there,
//! fails to start with a clear error instead of failing to load.
//!
//! Layout, in the order a kernel meets them: [`config`] reads `[engines.opencl]`;
//! [`device`] finds platforms and devices and picks one; `engine` decides per kernel
//! whether the device or the child engine runs it (fp64 without `cl_khr_fp64`, float16
//! without `cl_khr_fp16`, complex, extension methods but `sort` and `argsort`, and anything
//! codegen does not render go to the child), and sorts on the device (`engine/sort.rs`, a
//! bitonic sort); `program` builds and caches programs (memory and disk); `memory`
//! mirrors host buffers on the device and moves data lazily.

pub mod config;
pub mod device;
mod engine;
mod error;
mod memory;
mod program;

pub use config::{DeviceType, Fp64, OpenClConfig, Select, SpecializePolicy};
pub use device::{describe_devices, DeviceInfo};
pub use engine::OpenClEngine;
pub use error::{Error, Result};

hassium_engine_abi::export_engine!("opencl", OpenClEngine::create);

/// Lists the OpenCL platforms and devices for `python -m hassium --info` (the ABI's
/// optional `hassium_engine_describe` symbol).
#[no_mangle]
pub extern "C" fn hassium_engine_describe() -> *const std::ffi::c_char {
    static TEXT: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let text = std::panic::catch_unwind(describe_devices)
            .unwrap_or_else(|_| "OpenCL: listing devices failed".to_string());
        std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default()
    })
    .as_ptr()
}
