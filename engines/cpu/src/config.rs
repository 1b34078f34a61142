//! The `[engines.cpu]` table. Every key is optional; an unknown key is an error that names
//! it and the valid ones, so a typo does not silently run with defaults.

use crate::error::{Error, Result};
use hassium_engine_abi::{cache_location, CacheLocation};

/// Which specialisations of a kernel are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecializePolicy {
    /// Shapes, strides and offsets baked in: best code, one compile per shape.
    Fixed,
    /// Shapes passed at run time: one compile per structure, reused across sizes.
    Dynamic,
    /// Fixed code for each new shape, until a kernel has been compiled fixed for two
    /// different shapes; from then on new shapes of that kernel use dynamic code (shapes
    /// seen before keep their fixed code). A steady loop gets the best code and compiles
    /// once; a program whose sizes keep changing stops paying a compile per size.
    Both,
}

#[derive(Clone, Debug)]
pub struct CpuConfig {
    pub compiler: String,
    pub flags: Vec<String>,
    /// Worker threads; 0 = all cores.
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
    /// A kernel-cache miss after the first execute call is an error (tests prove a loop
    /// compiles once with it).
    pub strict_cache: bool,
    /// With `tiered`, new kernels costing at most this many element-operations run
    /// interpreted while they compile; bigger ones wait for the compiler, which is then
    /// much cheaper than interpreting (about 0.3 s of compiling vs ~30 ns per
    /// interpreted element-operation).
    pub interpret_limit: usize,
}

const KEYS: &[&str] = &[
    "compiler",
    "flags",
    "threads",
    "specialize",
    "tiered",
    "finish_at_exit",
    "cache_dir",
    "cache_max_bytes",
    "min_parallel_elems",
    "strict_cache",
    "interpret_limit",
];
/// Keys the runtime itself reads from an engine's table.
const RUNTIME_KEYS: &[&str] = &["library", "child"];

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            compiler: "cc".into(),
            flags: ["-O2", "-fpeel-loops", "-march=native", "-fPIC", "-shared"]
                .map(String::from)
                .to_vec(),
            threads: 0,
            specialize: SpecializePolicy::Both,
            tiered: false,
            finish_at_exit: true,
            cache_dir: cache_location("~/.cache/hassium").unwrap_or_else(CacheLocation::NoHome),
            cache_max_bytes: 1 << 30,
            min_parallel_elems: 32768,
            strict_cache: false,
            interpret_limit: 4_000_000,
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

impl CpuConfig {
    pub fn from_table(t: &toml::Table) -> Result<CpuConfig> {
        let mut c = CpuConfig::default();
        for (k, v) in t {
            let bad = |want: &str| Error::Config(format!("`{k}` must be {want}, got {v}"));
            match k.as_str() {
                "compiler" => c.compiler = v.as_str().ok_or_else(|| bad("a string"))?.to_string(),
                "flags" => {
                    let a = v.as_array().ok_or_else(|| bad("an array of strings"))?;
                    c.flags = a
                        .iter()
                        .map(|x| {
                            x.as_str()
                                .map(String::from)
                                .ok_or_else(|| bad("an array of strings"))
                        })
                        .collect::<Result<_>>()?;
                }
                "threads" => {
                    let max = max_threads();
                    let range = format!("an integer from 0 (all cores) to {max}");
                    c.threads = v
                        .as_integer()
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|n| *n <= max)
                        .ok_or_else(|| bad(&range))?
                }
                "specialize" => {
                    c.specialize = match v.as_str() {
                        Some("fixed") => SpecializePolicy::Fixed,
                        Some("dynamic") => SpecializePolicy::Dynamic,
                        Some("both") => SpecializePolicy::Both,
                        _ => return Err(bad("one of \"fixed\", \"dynamic\", \"both\"")),
                    }
                }
                "tiered" => c.tiered = v.as_bool().ok_or_else(|| bad("true or false"))?,
                "finish_at_exit" => {
                    c.finish_at_exit = v.as_bool().ok_or_else(|| bad("true or false"))?
                }
                "cache_dir" => {
                    let s = v.as_str().ok_or_else(|| bad("a string"))?;
                    c.cache_dir = cache_location(s).map_err(Error::Config)?
                }
                "cache_max_bytes" => {
                    c.cache_max_bytes =
                        u64::try_from(v.as_integer().ok_or_else(|| bad("an integer"))?)
                            .map_err(|_| bad("≥ 0"))?
                }
                "interpret_limit" => {
                    c.interpret_limit =
                        usize::try_from(v.as_integer().ok_or_else(|| bad("an integer"))?)
                            .map_err(|_| bad("≥ 0"))?
                }
                "min_parallel_elems" => {
                    c.min_parallel_elems =
                        usize::try_from(v.as_integer().ok_or_else(|| bad("an integer"))?)
                            .map_err(|_| bad("≥ 0"))?
                }
                "strict_cache" => {
                    c.strict_cache = v.as_bool().ok_or_else(|| bad("true or false"))?
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
        let t: toml::Table = "thread = 2".parse().unwrap();
        let e = CpuConfig::from_table(&t).unwrap_err().to_string();
        assert!(
            e.contains("`thread`") && e.contains("threads") && e.contains("strict_cache"),
            "{e}"
        );
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
