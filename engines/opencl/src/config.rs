//! The `[engines.opencl]` table. Every key is optional; an unknown key is an error that
//! names it and the valid ones, so a typo does not silently run with defaults.

use crate::error::{Error, Result};
use hassium_engine_abi::{cache_location, CacheLocation};

/// The largest `work_group_size` accepted: beyond every device's limit.
const MAX_WORK_GROUP: u64 = 1 << 16;
use std::path::PathBuf;

/// Which specialisations of a kernel are built (as in the CPU engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecializePolicy {
    /// Shapes, strides and offsets baked in: best code, one build per shape.
    Fixed,
    /// Shapes passed at run time in a `meta` buffer: one build serves every size.
    Dynamic,
    /// Fixed code until a kernel has been built for two shapes, then dynamic code for
    /// new shapes of it: a steady loop gets the best code, changing sizes stop paying a
    /// build each.
    Both,
}

/// How a device is chosen among those of the chosen platform(s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Select {
    /// Any (the first that matches the other criteria).
    Any,
    Index(usize),
    /// A case-insensitive substring of the name.
    Name(String),
}

/// The device types `device_type` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceType {
    All,
    Cpu,
    Gpu,
    Accelerator,
}

/// Whether float64 kernels run on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp64 {
    /// On the device when it reports `cl_khr_fp64`, else on the child engine.
    Auto,
    /// Always on the child engine, as on a device without `cl_khr_fp64` (for tests, and
    /// for GPUs whose fp64 is too slow to be worth it).
    Off,
}

#[derive(Clone, Debug)]
pub struct OpenClConfig {
    pub platform: Select,
    pub device: Select,
    pub device_type: DeviceType,
    /// Work-items per work-group; 0 = the driver's limit for each kernel, capped at 256.
    pub work_group_size: usize,
    pub specialize: SpecializePolicy,
    /// Where program binaries are cached; empty = no disk cache.
    pub cache_dir: Option<PathBuf>,
    /// Most bytes of program binaries kept in `<cache_dir>/opencl`; beyond it the least
    /// recently used go (checked at most hourly, in the background). 0 = no limit.
    pub cache_max_bytes: u64,
    pub fp64: Fp64,
    /// Bytes of device memory the engine may hold; 0 = the device's global memory size.
    /// Beyond it, idle buffers are evicted to the host first.
    pub memory_limit: u64,
    /// A program-cache miss after the first execute call is an error (tests use it to
    /// prove that a loop builds once).
    pub strict_cache: bool,
    /// New programs build on a background thread while their kernels run on the child
    /// engine (with the data moved there and back); later calls find them built.
    pub tiered: bool,
    /// Options appended to Hassium's own when programs are built (`-cl-nv-opt-level=1`,
    /// say); part of every program binary's cache key.
    pub build_options: String,
}

const KEYS: &[&str] = &[
    "platform",
    "device",
    "device_type",
    "work_group_size",
    "specialize",
    "cache_dir",
    "cache_max_bytes",
    "fp64",
    "memory_limit",
    "strict_cache",
    "tiered",
    "build_options",
];
/// Keys the runtime itself reads from an engine's table.
const RUNTIME_KEYS: &[&str] = &["library", "child"];

impl Default for OpenClConfig {
    fn default() -> Self {
        OpenClConfig {
            platform: Select::Any,
            device: Select::Any,
            device_type: DeviceType::All,
            work_group_size: 0,
            specialize: SpecializePolicy::Both,
            cache_dir: match cache_location("~/.cache/hassium") {
                Ok(CacheLocation::At(p)) => Some(p),
                _ => None,
            },
            cache_max_bytes: 1 << 30,
            fp64: Fp64::Auto,
            memory_limit: 0,
            strict_cache: false,
            tiered: false,
            build_options: String::new(),
        }
    }
}

/// A platform or device selector: an integer index, or a name substring. Environment
/// overrides arrive as strings, so a string of digits is an index too.
fn select(v: &toml::Value) -> Option<Select> {
    match v {
        toml::Value::Integer(i) => usize::try_from(*i).ok().map(Select::Index),
        toml::Value::String(s) => Some(Select::from_text(s)),
        _ => None,
    }
}

impl Select {
    /// A selector written as text: empty or `any`, a string of digits (an index), or a
    /// name substring.
    pub fn from_text(s: &str) -> Select {
        match s.parse::<usize>() {
            _ if s.is_empty() || s == "any" => Select::Any,
            Ok(i) => Select::Index(i),
            Err(_) => Select::Name(s.to_lowercase()),
        }
    }
}

fn count(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

impl OpenClConfig {
    pub fn from_table(t: &toml::Table) -> Result<OpenClConfig> {
        let mut c = OpenClConfig::default();
        for (k, v) in t {
            let bad = |want: &str| Error::Config(format!("`{k}` must be {want}, got {v}"));
            let flag = |v: &toml::Value| match v {
                toml::Value::Boolean(b) => Some(*b),
                toml::Value::String(s) => s.parse().ok(),
                _ => None,
            };
            match k.as_str() {
                "platform" => {
                    c.platform = select(v).ok_or_else(|| bad("an index or a name substring"))?
                }
                "device" => {
                    c.device = select(v).ok_or_else(|| bad("an index or a name substring"))?
                }
                "device_type" => {
                    c.device_type = match v.as_str() {
                        Some("all") => DeviceType::All,
                        Some("cpu") => DeviceType::Cpu,
                        Some("gpu") => DeviceType::Gpu,
                        Some("accelerator") => DeviceType::Accelerator,
                        _ => return Err(bad("one of \"all\", \"cpu\", \"gpu\", \"accelerator\"")),
                    }
                }
                "work_group_size" => {
                    let n = count(v).ok_or_else(|| bad("an integer ≥ 0"))?;
                    if n != 0 && !n.is_power_of_two() || n > MAX_WORK_GROUP {
                        return Err(bad(&format!("0 or a power of two up to {MAX_WORK_GROUP}")));
                    }
                    c.work_group_size = n as usize;
                }
                "specialize" => {
                    c.specialize = match v.as_str() {
                        Some("fixed") => SpecializePolicy::Fixed,
                        Some("dynamic") => SpecializePolicy::Dynamic,
                        Some("both") => SpecializePolicy::Both,
                        _ => return Err(bad("one of \"fixed\", \"dynamic\", \"both\"")),
                    }
                }
                "cache_dir" => {
                    let s = v.as_str().ok_or_else(|| bad("a string"))?;
                    c.cache_dir = match cache_location(s).map_err(Error::Config)? {
                        CacheLocation::At(p) => Some(p),
                        CacheLocation::Off | CacheLocation::NoHome(_) => None,
                    };
                }
                "cache_max_bytes" => {
                    c.cache_max_bytes =
                        u64::try_from(v.as_integer().ok_or_else(|| bad("an integer"))?)
                            .map_err(|_| bad("≥ 0"))?
                }
                "fp64" => {
                    c.fp64 = match v.as_str() {
                        Some("auto") => Fp64::Auto,
                        Some("off") => Fp64::Off,
                        _ => return Err(bad("\"auto\" or \"off\"")),
                    }
                }
                "memory_limit" => c.memory_limit = count(v).ok_or_else(|| bad("an integer ≥ 0"))?,
                "strict_cache" => c.strict_cache = flag(v).ok_or_else(|| bad("true or false"))?,
                "tiered" => c.tiered = flag(v).ok_or_else(|| bad("true or false"))?,
                "build_options" => {
                    c.build_options = v.as_str().ok_or_else(|| bad("a string"))?.trim().into()
                }
                k if RUNTIME_KEYS.contains(&k) => {}
                k => {
                    return Err(Error::Config(format!(
                        "unknown key `{k}`; valid keys: {}",
                        KEYS.join(", ")
                    )));
                }
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_itself_and_the_valid_keys() {
        let t: toml::Table = "devise = 0".parse().unwrap();
        let e = OpenClConfig::from_table(&t).unwrap_err().to_string();
        assert!(e.contains("`devise`") && e.contains("device_type"), "{e}");
    }

    #[test]
    fn selectors_accept_indices_names_and_digit_strings() {
        let t: toml::Table = "platform = \"Portable\"\ndevice = \"1\"\ndevice_type = \"cpu\""
            .parse()
            .unwrap();
        let c = OpenClConfig::from_table(&t).unwrap();
        assert_eq!(c.platform, Select::Name("portable".into()));
        assert_eq!(c.device, Select::Index(1));
        assert_eq!(c.device_type, DeviceType::Cpu);
    }

    #[test]
    fn build_options_must_be_text() {
        let t: toml::Table = "build_options = \" -cl-mad-enable \"".parse().unwrap();
        assert_eq!(
            OpenClConfig::from_table(&t).unwrap().build_options,
            "-cl-mad-enable"
        );
        let t: toml::Table = "build_options = 7".parse().unwrap();
        let e = OpenClConfig::from_table(&t).unwrap_err().to_string();
        assert!(e.contains("build_options") && e.contains("a string"), "{e}");
    }

    #[test]
    fn work_group_size_must_be_a_power_of_two() {
        let t: toml::Table = "work_group_size = 100".parse().unwrap();
        assert!(OpenClConfig::from_table(&t).is_err());
        let t: toml::Table = "work_group_size = 1048576".parse().unwrap();
        let e = OpenClConfig::from_table(&t).unwrap_err().to_string();
        assert!(
            e.contains("work_group_size") && e.contains("up to 65536"),
            "{e}"
        );
    }
}
