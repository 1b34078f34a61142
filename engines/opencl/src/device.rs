//! Finding OpenCL platforms and devices, choosing one from the config, and describing
//! them (for `python -m hassium --info` and for the errors that list what was found).

use crate::config::{DeviceType, OpenClConfig, Select};
use crate::error::{Error, Result};
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED;
use opencl3::platform::{get_platforms, Platform};
use std::fmt::Write;
use std::sync::Mutex;

/// Serialises driver discovery and context creation across threads (see `platforms`).
pub(crate) static DISCOVERY: Mutex<()> = Mutex::new(());

/// What the engine needs to know about its device, read once at start.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub platform: String,
    pub name: String,
    pub driver: String,
    pub version: String,
    pub kind: &'static str,
    pub fp64: bool,
    pub fp16: bool,
    pub max_work_group_size: usize,
    pub global_mem: u64,
    pub max_alloc: u64,
    /// Bytes of kernel arguments the device accepts (bounds the buffers per kernel).
    pub max_parameter_size: usize,
}

fn kind_name(t: u64) -> &'static str {
    if t & CL_DEVICE_TYPE_GPU != 0 {
        "gpu"
    } else if t & CL_DEVICE_TYPE_CPU != 0 {
        "cpu"
    } else if t & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    }
}

impl DeviceInfo {
    pub fn read(platform: &Platform, d: &Device) -> Result<DeviceInfo> {
        let q = |call: &str, e| Error::cl(call, e);
        let ext = d
            .extensions()
            .map_err(|e| q("clGetDeviceInfo(EXTENSIONS)", e))?;
        let has = |x: &str| ext.split_whitespace().any(|e| e == x);
        Ok(DeviceInfo {
            platform: platform.name().unwrap_or_default(),
            name: d.name().map_err(|e| q("clGetDeviceInfo(NAME)", e))?,
            driver: d.driver_version().unwrap_or_default(),
            version: d.version().unwrap_or_default(),
            kind: kind_name(d.dev_type().unwrap_or(0)),
            fp64: has("cl_khr_fp64"),
            fp16: has("cl_khr_fp16"),
            max_work_group_size: d.max_work_group_size().unwrap_or(1).max(1),
            global_mem: d.global_mem_size().unwrap_or(0),
            max_alloc: d.max_mem_alloc_size().unwrap_or(u64::MAX),
            max_parameter_size: d.max_parameter_size().unwrap_or(1024),
        })
    }

    /// One line: name, type, driver, and the extensions that decide fallbacks.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}, OpenCL {}, driver {}, {} MiB, fp64 {}, fp16 {})",
            self.name,
            self.kind,
            self.version.trim_start_matches("OpenCL "),
            self.driver,
            self.global_mem >> 20,
            if self.fp64 { "yes" } else { "no" },
            if self.fp16 { "yes" } else { "no" },
        )
    }
}

fn type_mask(t: DeviceType) -> u64 {
    match t {
        DeviceType::All => CL_DEVICE_TYPE_ALL,
        DeviceType::Cpu => CL_DEVICE_TYPE_CPU,
        DeviceType::Gpu => CL_DEVICE_TYPE_GPU,
        DeviceType::Accelerator => CL_DEVICE_TYPE_ACCELERATOR,
    }
}

/// Every platform with all its devices. An ICD loader with no platform answers
/// `CL_PLATFORM_NOT_FOUND_KHR`; a machine without libOpenCL answers a load failure: both
/// become `NoPlatform` with a hint.
fn platforms() -> Result<Vec<(Platform, Vec<Device>)>> {
    // Some drivers (PoCL among them) initialise on the first discovery call and are not
    // safe against two threads doing it at once.
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let list = get_platforms().map_err(|e| {
        Error::NoPlatform(if e.0 == DLOPEN_RUNTIME_LOAD_FAILED {
            "libOpenCL.so.1 cannot be loaded (install an ICD loader such as ocl-icd-libopencl1 \
             and a driver such as pocl-opencl-icd, or name the library in OPENCL_DYLIB_PATH)"
                .into()
        } else {
            format!(
                "the OpenCL loader lists none ({}); install a driver such as pocl-opencl-icd",
                opencl3::error_codes::error_text(e.0)
            )
        })
    })?;
    if list.is_empty() {
        return Err(Error::NoPlatform(
            "the OpenCL loader lists none; install a driver such as pocl-opencl-icd".into(),
        ));
    }
    Ok(list
        .into_iter()
        .map(|p| {
            let devs = p
                .get_devices(CL_DEVICE_TYPE_ALL)
                .unwrap_or_default()
                .into_iter()
                .map(Device::new)
                .collect();
            (p, devs)
        })
        .collect())
}

/// A listing of every platform and device, one per line, with the indices the config's
/// `platform` and `device` keys take.
pub fn describe_devices() -> String {
    match platforms() {
        Err(e) => e.to_string(),
        Ok(list) => describe(&list),
    }
}

fn describe(list: &[(Platform, Vec<Device>)]) -> String {
    let mut s = String::new();
    for (pi, (p, devs)) in list.iter().enumerate() {
        let _ = writeln!(
            s,
            "platform {pi}: {} ({})",
            p.name().unwrap_or_default(),
            p.version().unwrap_or_default()
        );
        if devs.is_empty() {
            let _ = writeln!(s, "  (no devices)");
        }
        for (di, d) in devs.iter().enumerate() {
            match DeviceInfo::read(p, d) {
                Ok(info) => {
                    let _ = writeln!(s, "  device {di}: {}", info.summary());
                }
                Err(e) => {
                    let _ = writeln!(s, "  device {di}: unreadable ({e})");
                }
            }
        }
    }
    s.trim_end().to_string()
}

fn matches(sel: &Select, index: usize, name: &str) -> bool {
    match sel {
        Select::Any => true,
        Select::Index(i) => *i == index,
        Select::Name(n) => name.to_lowercase().contains(n.as_str()),
    }
}

/// The device the config asks for: the first (platform, device) pair, in platform then
/// device order, that matches the platform selector, the device selector and the type.
pub fn choose(cfg: &OpenClConfig) -> Result<(Device, DeviceInfo)> {
    let list = platforms()?;
    let mask = type_mask(cfg.device_type);
    for (pi, (p, devs)) in list.iter().enumerate() {
        if !matches(&cfg.platform, pi, &p.name().unwrap_or_default()) {
            continue;
        }
        // Device indices count within the requested type, as `clGetDeviceIDs` does.
        let typed: Vec<&Device> = devs
            .iter()
            .filter(|d| d.dev_type().unwrap_or(0) & mask != 0)
            .collect();
        for (di, d) in typed.into_iter().enumerate() {
            if !matches(&cfg.device, di, &d.name().unwrap_or_default()) {
                continue;
            }
            if !d.available().unwrap_or(true) {
                continue;
            }
            let info = DeviceInfo::read(p, d)?;
            return Ok((Device::new(d.id()), info));
        }
    }
    Err(Error::NoDevice {
        wanted: format!(
            "platform {}, device {}, device_type {}",
            show(&cfg.platform),
            show(&cfg.device),
            format!("{:?}", cfg.device_type).to_lowercase()
        ),
        found: describe(&list),
    })
}

fn show(s: &Select) -> String {
    match s {
        Select::Any => "any".into(),
        Select::Index(i) => i.to_string(),
        Select::Name(n) => format!("\"{n}\""),
    }
}
