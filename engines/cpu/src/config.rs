//! The `[engines.cpu]` table, read by `hassium_engine_abi::read_config`: every key is
//! optional; an unknown key is an error that names it and the valid ones, so a typo does
//! not silently run with defaults.

use crate::error::{Error, Result};
pub use hassium_engine_abi::SpecializePolicy;
use hassium_engine_abi::{cache_location, read_config, read_value, CacheLocation};
use serde::{Deserialize, Deserializer};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuConfig {
    pub compiler: String,
    pub flags: Vec<String>,
    /// Worker threads; 0 = all cores.
    #[serde(deserialize_with = "threads")]
    pub threads: usize,
    pub specialize: SpecializePolicy,
    pub tiered: bool,
    /// With `tiered`, compiles not finished when the process exits are handed to a
    /// process left behind that finishes them into the disk cache (see `tiered.rs`);
    /// false drops them (a test suite's thousands of one-off kernels are not worth it).
    pub finish_at_exit: bool,
    /// Where kernels are kept (`""` in TOML: nowhere beyond the process).
    pub cache_dir: CacheLocation,
    /// Most bytes this build's kernel directory may hold; beyond it the least recently
    /// used libraries go (checked at most hourly, in the background). 0 = no limit.
    pub cache_max_bytes: u64,
    /// Kernels with fewer elements run on the calling thread.
    pub min_parallel_elems: usize,
    /// Kernels whose calls take less than this many seconds on one thread (as measured
    /// on their own earlier calls, scaled to the call's elements) run on the calling
    /// thread too: waking the pool costs more than sharing the work saves. 0 splits
    /// every call from `min_parallel_elems` elements up.
    #[serde(deserialize_with = "seconds")]
    pub min_parallel_seconds: f64,
    /// A kernel-cache miss after the first execute call is an error (tests prove a loop
    /// compiles once with it).
    pub strict_cache: bool,
    /// With `tiered`, new kernels costing at most this many element-operations run
    /// interpreted while they compile; bigger ones wait for the compiler, which is then
    /// much cheaper than interpreting (about 0.3 s of compiling vs ~30 ns per
    /// interpreted element-operation).
    pub interpret_limit: usize,
    /// With `tiered`, a new kernel that may run interpreted is compiled only once its
    /// calls have done this many element-operations in all (interpreted, about 30 ns
    /// each): one that stays under it costs less interpreted, every run, than the ~0.1 s
    /// compile would. A loop's kernels reach it within a few calls; a program's one-off
    /// set-up kernels, and a test suite's thousands, never do. 0 compiles every kernel
    /// at its first call.
    pub tier_up_work: usize,
}

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            compiler: "cc".into(),
            flags: ["-O2", "-fpeel-loops", "-march=native", "-fPIC", "-shared"]
                .map(String::from)
                .to_vec(),
            threads: 0,
            specialize: SpecializePolicy::default(),
            tiered: false,
            finish_at_exit: true,
            cache_dir: cache_location("~/.cache/hassium").unwrap_or_else(CacheLocation::NoHome),
            cache_max_bytes: 1 << 30,
            min_parallel_elems: 32768,
            // Measured on the 2-core build VM, where waking a sleeping pool thread takes
            // 20-80 us: a helper woken for a shorter call rarely arrives in time to take
            // a piece, and the wake-up itself costs the caller a few microseconds.
            min_parallel_seconds: 50e-6,
            strict_cache: false,
            interpret_limit: 4_000_000,
            tier_up_work: 100_000,
        }
    }
}

/// The most worker threads `threads` may ask for: 1024, or 4 per core on a larger
/// machine. Each thread costs a stack and a kernel task; `threads = 100000` made the
/// process start thousands and then hang.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    1024.max(4 * cores)
}

fn threads<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<usize, D::Error> {
    let max = max_threads();
    let range = format!("an integer from 0 (all cores) to {max}");
    read_value(d, &range, |v| {
        let n = usize::try_from(v.as_integer()?).ok()?;
        (n <= max).then_some(n)
    })
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    read_value(d, "a number of seconds from 0 to 1", |v| {
        let s = v.as_float().or_else(|| v.as_integer().map(|i| i as f64))?;
        (0.0..=1.0).contains(&s).then_some(s)
    })
}

impl CpuConfig {
    pub fn from_table(t: &toml::Table) -> Result<CpuConfig> {
        read_config(t).map_err(Error::Config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_itself_and_the_valid_keys() {
        let t: toml::Table = "thread = 2".parse().unwrap();
        let e = CpuConfig::from_table(&t).unwrap_err().to_string();
        assert!(
            e.contains("`thread`") && e.contains("threads") && e.contains("strict_cache"),
            "{e}"
        );
    }

    #[test]
    fn a_value_of_the_wrong_kind_names_its_key_and_what_is_valid() {
        for (bad, want) in [
            ("specialize = \"fast\"", "`fixed`, `dynamic`, `both`"),
            ("tiered = 1", "a boolean"),
            ("flags = \"-O2\"", "a sequence"),
            ("cache_max_bytes = -1", "u64"),
            (
                "min_parallel_seconds = -1e-6",
                "a number of seconds from 0 to 1",
            ),
            (
                "min_parallel_seconds = 2",
                "a number of seconds from 0 to 1",
            ),
            (
                "min_parallel_seconds = \"fast\"",
                "a number of seconds from 0 to 1",
            ),
        ] {
            let t: toml::Table = bad.parse().unwrap();
            let e = CpuConfig::from_table(&t).unwrap_err().to_string();
            let key = bad.split(' ').next().unwrap();
            assert!(
                e.starts_with(&format!("[engines.cpu] `{key}`")) && e.contains(want),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn thread_counts_beyond_the_bound_name_the_key_and_the_range() {
        for bad in ["threads = 100000", "threads = -1", "threads = \"8\""] {
            let t: toml::Table = bad.parse().unwrap();
            let e = CpuConfig::from_table(&t).unwrap_err().to_string();
            assert!(
                e.contains("`threads`") && e.contains(&format!("to {}", max_threads())),
                "{bad}: {e}"
            );
        }
        let t: toml::Table = "threads = 1024".parse().unwrap();
        assert_eq!(CpuConfig::from_table(&t).unwrap().threads, 1024);
    }

    #[test]
    fn a_relative_cache_dir_is_an_error_and_an_empty_one_is_off() {
        let t: toml::Table = "cache_dir = \"cache\"".parse().unwrap();
        let e = CpuConfig::from_table(&t).unwrap_err().to_string();
        assert!(e.contains("cache_dir") && e.contains("absolute"), "{e}");
        let t: toml::Table = "cache_dir = \"\"".parse().unwrap();
        let c = CpuConfig::from_table(&t).unwrap();
        assert_eq!(c.cache_dir, CacheLocation::Off);
    }

    #[test]
    fn library_and_child_are_accepted_and_defaults_fill_the_rest() {
        let t: toml::Table = "library = \"x.so\"\nchild = \"cpu\"\nspecialize = \"dynamic\""
            .parse()
            .unwrap();
        let c = CpuConfig::from_table(&t).unwrap();
        assert_eq!(c.specialize, SpecializePolicy::Dynamic);
        assert_eq!(c.compiler, "cc");
    }

    #[test]
    fn the_built_in_compiler_and_flags_are_the_shipped_configs() {
        // An engine table that names no flags (a user's own config, or the C API's) must
        // compile kernels as the shipped config does.
        let shipped: toml::Table = include_str!("../../../config/hassium.toml")
            .parse()
            .unwrap();
        let cpu = shipped["engines"]["cpu"].as_table().unwrap();
        let c = CpuConfig::from_table(cpu).unwrap();
        let d = CpuConfig::default();
        assert_eq!((c.compiler, c.flags), (d.compiler, d.flags));
    }
}
