//! The `[engines.opencl]` table, read by `hassium_engine_abi::read_config`: every key is
//! optional; an unknown key is an error that names it and the valid ones, so a typo does
//! not silently run with defaults.

use crate::error::{Error, Result};
pub use hassium_engine_abi::SpecializePolicy;
use hassium_engine_abi::{cache_location, read_config, read_value, CacheLocation};
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

/// The largest `work_group_size` accepted: beyond every device's limit.
const MAX_WORK_GROUP: u64 = 1 << 16;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceType {
    All,
    Cpu,
    Gpu,
    Accelerator,
}

/// Whether float64 kernels run on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fp64 {
    /// On the device when it reports `cl_khr_fp64`, else on the child engine.
    Auto,
    /// Always on the child engine, as on a device without `cl_khr_fp64` (for tests, and
    /// for GPUs whose fp64 is too slow to be worth it).
    Off,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenClConfig {
    pub platform: Select,
    pub device: Select,
    pub device_type: DeviceType,
    /// Work-items per work-group; 0 = the driver's limit for each kernel, capped at 256.
    #[serde(deserialize_with = "work_group_size")]
    pub work_group_size: usize,
    pub specialize: SpecializePolicy,
    /// Where program binaries are cached; empty = no disk cache.
    #[serde(deserialize_with = "cache_path")]
    pub cache_dir: Option<PathBuf>,
    /// Most bytes of program binaries kept in `<cache_dir>/opencl`; beyond it the least
    /// recently used go (checked at most hourly, in the background). 0 = no limit.
    pub cache_max_bytes: u64,
    pub fp64: Fp64,
    /// Bytes of device memory the engine may hold; 0 = the device's global memory size.
    /// Beyond it, idle buffers are evicted to the host first.
    #[serde(deserialize_with = "count")]
    pub memory_limit: u64,
    /// A program-cache miss after the first execute call is an error (tests use it to
    /// prove that a loop builds once).
    #[serde(deserialize_with = "flag")]
    pub strict_cache: bool,
    /// New programs build on a background thread while their kernels run on the child
    /// engine (with the data moved there and back); later calls find them built.
    #[serde(deserialize_with = "flag")]
    pub tiered: bool,
    /// Options appended to Hassium's own when programs are built (`-cl-nv-opt-level=1`,
    /// say); part of every program binary's cache key.
    #[serde(deserialize_with = "trimmed")]
    pub build_options: String,
    /// Times every command on the device (a queue with profiling) and reports the sums
    /// in the statistics (`device_kernel_seconds`, `device_write_seconds`,
    /// `device_read_seconds`) and each kernel's device time (the slowest kernels).
    /// Costs a little per command.
    #[serde(deserialize_with = "flag")]
    pub profile: bool,
}

impl Default for OpenClConfig {
    fn default() -> Self {
        OpenClConfig {
            platform: Select::Any,
            device: Select::Any,
            device_type: DeviceType::All,
            work_group_size: 0,
            specialize: SpecializePolicy::default(),
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
            profile: false,
        }
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

/// A platform or device selector: an integer index, or a name substring. Environment
/// overrides arrive as strings, so a string of digits is an index too.
impl<'de> Deserialize<'de> for Select {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        read_value(d, "an index or a name substring", |v| match v {
            toml::Value::Integer(i) => usize::try_from(*i).ok().map(Select::Index),
            toml::Value::String(s) => Some(Select::from_text(s)),
            _ => None,
        })
    }
}

// Counts and flags may come as strings, as environment overrides that are not TOML do.

fn count<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    read_value(d, "an integer ≥ 0", to_count)
}

fn to_count(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    read_value(d, "true or false", |v| match v {
        toml::Value::Boolean(b) => Some(*b),
        toml::Value::String(s) => s.parse().ok(),
        _ => None,
    })
}

fn work_group_size<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<usize, D::Error> {
    let want = format!("0 or a power of two up to {MAX_WORK_GROUP}");
    read_value(d, &want, |v| {
        let n = to_count(v)?;
        (n == 0 || n.is_power_of_two() && n <= MAX_WORK_GROUP).then_some(n as usize)
    })
}

/// `cache_dir`: a directory, or none for `""` and for a `~/` path without a home.
fn cache_path<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<PathBuf>, D::Error> {
    Ok(match CacheLocation::deserialize(d)? {
        CacheLocation::At(p) => Some(p),
        CacheLocation::Off | CacheLocation::NoHome(_) => None,
    })
}

fn trimmed<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(String::deserialize(d)?.trim().into())
}

impl OpenClConfig {
    pub fn from_table(t: &toml::Table) -> Result<OpenClConfig> {
        read_config(t).map_err(Error::Config)
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
    fn a_bad_value_names_its_key_and_what_is_valid() {
        for (bad, want) in [
            ("fp64 = \"on\"", "`auto` or `off`"),
            (
                "device_type = \"dsp\"",
                "`all`, `cpu`, `gpu`, `accelerator`",
            ),
            ("specialize = \"fast\"", "`fixed`, `dynamic`, `both`"),
            ("tiered = \"yes\"", "true or false"),
            ("memory_limit = -1", "an integer ≥ 0"),
            ("platform = 1.5", "an index or a name substring"),
        ] {
            let t: toml::Table = bad.parse().unwrap();
            let e = OpenClConfig::from_table(&t).unwrap_err().to_string();
            let key = bad.split(' ').next().unwrap();
            assert!(
                e.starts_with(&format!("[engines.opencl] `{key}`")) && e.contains(want),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn flags_and_counts_may_be_strings_and_runtime_keys_pass() {
        let t: toml::Table =
            "library = \"x.so\"\nchild = \"cpu\"\ntiered = \"true\"\nmemory_limit = \"4096\""
                .parse()
                .unwrap();
        let c = OpenClConfig::from_table(&t).unwrap();
        assert!(c.tiered && !c.strict_cache);
        assert_eq!((c.memory_limit, c.work_group_size), (4096, 0));
        assert_eq!(c.specialize, SpecializePolicy::Both);
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
