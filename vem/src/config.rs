//! The TOML configuration: search order, environment overrides, and validation at load.

use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The documented default configuration, built in.
pub const DEFAULT_CONFIG: &str = include_str!("../../config/hassium.toml");

/// A configuration file longer than this is not one.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The range of `flush_threshold` and `small_flush_threshold`: at least one instruction,
/// and not so many that the queue alone takes gigabytes (~half a kilobyte each).
const FLUSH_THRESHOLDS: std::ops::RangeInclusive<usize> = 1..=1 << 20;

/// Environment variables that are not `HASSIUM_<SECTION>_<KEY>` overrides.
const RESERVED_ENV: &[&str] = &[
    "STACK",
    "CONFIG",
    "LOG",
    "STATS",
    "DUMP",
    "FALLBACK",
    "ENGINE_PATH",
    "CACHE_DIR",
];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub runtime: RuntimeConfig,
    pub stacks: BTreeMap<String, StackConfig>,
    pub engines: BTreeMap<String, EngineConfig>,
    /// Where the configuration came from (a path, or "built-in default").
    #[serde(skip)]
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    pub stack: String,
    #[serde(default = "default_flush_threshold")]
    pub flush_threshold: usize,
    /// The threshold while every array the queue names is small: see
    /// [`SMALL_ARRAY_ELEMENTS`].
    #[serde(default = "default_small_flush_threshold")]
    pub small_flush_threshold: usize,
    /// Filters of the stack skipped on a batch whose arrays are all small: analysing an
    /// instruction costs more than computing a few thousand elements, so the rewrites
    /// that only save arithmetic lose there. Empty: every filter always runs.
    #[serde(default = "default_small_skip_filters")]
    pub small_skip_filters: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    /// Run batches of small arrays on a worker thread while the program records the next
    /// one (see the runtime's `pipeline`).
    #[serde(default = "default_pipeline")]
    pub pipeline: bool,
}

fn default_pipeline() -> bool {
    true
}

/// Arrays of at most this many elements count as small for `small_flush_threshold`: a
/// batch of them fits the processor's cache whether fused or not, so fusing more of it
/// saves little memory traffic, while the batch itself (~half a kilobyte per
/// instruction) competes with them for that cache.
pub const SMALL_ARRAY_ELEMENTS: usize = 16 * 1024;

fn default_flush_threshold() -> usize {
    4096
}

fn default_small_flush_threshold() -> usize {
    1024
}

fn default_small_skip_filters() -> Vec<String> {
    [
        "piecewise",
        "update_cells",
        "simplify",
        "cse",
        "dead_code",
        "rematerialize",
    ]
    .map(String::from)
    .to_vec()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    #[serde(default)]
    pub filters: Vec<String>,
    #[serde(default = "default_fuser")]
    pub fuser: String,
    pub engine: String,
    /// Node budget of the `optimal` fuser.
    #[serde(default)]
    pub optimal_budget: Option<u64>,
}

fn default_fuser() -> String {
    "greedy".into()
}

/// An engine's section: `library` and `child` are the runtime's; every other key is the
/// engine's own and is checked by the engine when it is created.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub library: String,
    pub child: Option<String>,
    pub options: toml::Table,
}

impl<'de> Deserialize<'de> for EngineConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut options = toml::Table::deserialize(d)?;
        let library = match options.remove("library") {
            Some(toml::Value::String(s)) => s,
            Some(_) => return Err(D::Error::custom("`library` must be a string")),
            None => return Err(D::Error::custom("missing key `library`")),
        };
        let child = match options.remove("child") {
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => return Err(D::Error::custom("`child` must be a string")),
            None => None,
        };
        Ok(EngineConfig {
            library,
            child,
            options,
        })
    }
}

fn names<'a>(it: impl IntoIterator<Item = &'a str>) -> String {
    it.into_iter().collect::<Vec<_>>().join(", ")
}

impl Config {
    /// Loads the configuration in force: the first file of the search order, then the
    /// environment's overrides, then validation.
    pub fn load() -> Result<Config> {
        let (text, source) = match Self::find_file() {
            Some(path) => {
                // Without blocking and regular files only: a FIFO as the config file
                // hung the process.
                let cannot = |e: &dyn std::fmt::Display| {
                    Error::Config(format!("{}: cannot read: {e}", path.display()))
                };
                let bytes = hassium_engine_abi::read_regular(&path, MAX_CONFIG_BYTES)
                    .map_err(|e| cannot(&e))?;
                let text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
                (text, path.display().to_string())
            }
            None => (DEFAULT_CONFIG.to_string(), "built-in default".to_string()),
        };
        Self::from_toml(&text, &source, std::env::vars())
    }

    /// The first existing file of the search order.
    pub fn find_file() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("HASSIUM_CONFIG") {
            return Some(PathBuf::from(p));
        }
        let local = PathBuf::from("hassium.toml");
        if local.is_file() {
            return Some(local);
        }
        // XDG rules: only absolute homes, never a path under the working directory.
        let p = hassium_engine_abi::config_home()?
            .join("hassium")
            .join("hassium.toml");
        p.is_file().then_some(p)
    }

    /// Parses `text` (named `source` in errors), applies `HASSIUM_*` overrides from `env`
    /// and validates every name.
    pub fn from_toml(
        text: &str,
        source: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            Error::Config(format!("{source}: {}", e.message().trim()))
        })?;
        let env: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| k.starts_with("HASSIUM_"))
            .collect();
        apply_overrides(&mut table, &env, source)?;
        let mut config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    Error::Config(format!("{source}: {}", e.message().trim()))
                })?;
        config.source = source.to_string();
        if let Some((_, s)) = env.iter().find(|(k, _)| k == "HASSIUM_STACK") {
            config.runtime.stack = s.clone();
        }
        if let Some((_, dir)) = env.iter().find(|(k, _)| k == "HASSIUM_CACHE_DIR") {
            for e in config.engines.values_mut() {
                if e.options.contains_key("cache_dir") || e.library != "builtin" {
                    e.options
                        .insert("cache_dir".into(), toml::Value::String(dir.clone()));
                }
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks every component name, so a typo fails at load rather than at the first flush.
    pub fn validate(&self) -> Result<()> {
        let src = &self.source;
        for (key, n) in [
            ("flush_threshold", self.runtime.flush_threshold),
            ("small_flush_threshold", self.runtime.small_flush_threshold),
        ] {
            if !FLUSH_THRESHOLDS.contains(&n) {
                return Err(Error::Config(format!(
                    "{src}: runtime.{key} = {n} is out of range; it must be from {} to {}",
                    FLUSH_THRESHOLDS.start(),
                    FLUSH_THRESHOLDS.end()
                )));
            }
        }
        if !self.stacks.contains_key(&self.runtime.stack) {
            return Err(Error::Config(format!(
                "{src}: runtime.stack = \"{}\" names no stack; valid stacks: {}",
                self.runtime.stack,
                names(self.stacks.keys().map(String::as_str))
            )));
        }
        for f in &self.runtime.small_skip_filters {
            if !hassium_filters::REGISTRY.iter().any(|(n, _)| n == f) {
                return Err(Error::Config(format!(
                    "{src}: runtime.small_skip_filters: unknown filter \"{f}\"; valid filters: {}",
                    names(hassium_filters::REGISTRY.iter().map(|(n, _)| *n))
                )));
            }
        }
        for (name, stack) in &self.stacks {
            for f in &stack.filters {
                if !hassium_filters::REGISTRY.iter().any(|(n, _)| n == f) {
                    return Err(Error::Config(format!(
                        "{src}: stacks.{name}.filters: unknown filter \"{f}\"; valid filters: {}",
                        names(hassium_filters::REGISTRY.iter().map(|(n, _)| *n))
                    )));
                }
            }
            if !hassium_fuser::REGISTRY
                .iter()
                .any(|(n, _)| *n == stack.fuser)
            {
                return Err(Error::Config(format!(
                    "{src}: stacks.{name}.fuser: unknown fuser \"{}\"; valid fusers: {}",
                    stack.fuser,
                    names(hassium_fuser::REGISTRY.iter().map(|(n, _)| *n))
                )));
            }
            if !self.engines.contains_key(&stack.engine) {
                return Err(Error::Config(format!(
                    "{src}: stacks.{name}.engine: unknown engine \"{}\"; valid engines: {}",
                    stack.engine,
                    names(self.engines.keys().map(String::as_str))
                )));
            }
        }
        for (name, engine) in &self.engines {
            // Follow the child chain: every link must exist and the chain must end.
            let mut seen = vec![name.as_str()];
            let mut cur = engine;
            while let Some(child) = &cur.child {
                let next = self.engines.get(child).ok_or_else(|| {
                    Error::Config(format!(
                        "{src}: engines.{name}.child: unknown engine \"{child}\"; valid engines: {}",
                        names(self.engines.keys().map(String::as_str))
                    ))
                })?;
                if seen.contains(&child.as_str()) {
                    return Err(Error::Config(format!(
                        "{src}: engines.{name}.child: the chain {} -> {child} loops",
                        seen.join(" -> ")
                    )));
                }
                seen.push(child);
                cur = next;
            }
        }
        Ok(())
    }

    /// The stack in force.
    pub fn stack(&self) -> &StackConfig {
        &self.stacks[&self.runtime.stack]
    }

    /// Whether the stack in force loads the cluster engine (its library, or a child's),
    /// whose start initialises MPI. Open MPI sets environment variables as it starts, so
    /// no other thread may read the environment meanwhile (NumPy's OpenBLAS does as it
    /// loads; spawning the C compiler does): such a runtime is created where it is first
    /// needed, never on a background thread.
    pub fn stack_starts_mpi(&self) -> bool {
        let mut engine = Some(&self.stack().engine);
        let mut hops = 0;
        while let Some(cfg) = engine.and_then(|name| self.engines.get(name)) {
            if cfg.library.contains("hassium_engine_cluster") {
                return true;
            }
            hops += 1;
            // `validate` refused loops; the bound only keeps this safe without it.
            if hops > self.engines.len() {
                break;
            }
            engine = cfg.child.as_ref();
        }
        false
    }
}

/// Applies `HASSIUM_<SECTION>_<KEY>=value` overrides. Values are parsed as TOML values
/// (`1`, `true`, `["-O2"]`), else taken as strings.
fn apply_overrides(table: &mut toml::Table, env: &[(String, String)], source: &str) -> Result<()> {
    // Section paths, longest first so ENGINES_CPU_X is not read as a key of ENGINES.
    let mut sections: Vec<(String, Vec<String>)> =
        vec![("RUNTIME_".into(), vec!["runtime".into()])];
    for group in ["stacks", "engines"] {
        if let Some(toml::Value::Table(t)) = table.get(group) {
            for name in t.keys() {
                let prefix = format!(
                    "{}_{}_",
                    group.to_uppercase(),
                    name.to_uppercase().replace('-', "_")
                );
                sections.push((prefix, vec![group.into(), name.clone()]));
            }
        }
    }
    sections.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    for (var, value) in env {
        let rest = &var["HASSIUM_".len()..];
        if RESERVED_ENV.contains(&rest) {
            continue;
        }
        let Some((prefix, path)) = sections.iter().find(|(p, _)| rest.starts_with(p.as_str()))
        else {
            continue;
        };
        let key = rest[prefix.len()..].to_lowercase();
        let parsed: toml::Value = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        let mut t = &mut *table;
        for seg in path {
            t = match t
                .entry(seg.clone())
                .or_insert_with(|| toml::Value::Table(Default::default()))
            {
                toml::Value::Table(t) => t,
                _ => {
                    return Err(Error::Config(format!(
                        "{source}: `{}` is not a table",
                        path.join(".")
                    )))
                }
            };
        }
        t.insert(key, parsed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, env: &[(&str, &str)]) -> Result<Config> {
        Config::from_toml(
            text,
            "test.toml",
            env.iter().map(|(a, b)| (a.to_string(), b.to_string())),
        )
    }

    #[test]
    fn default_config_loads() {
        let c = load(DEFAULT_CONFIG, &[]).unwrap();
        assert_eq!(c.runtime.stack, "cpu");
        assert_eq!(c.engines["opencl"].child.as_deref(), Some("cpu"));
    }

    #[test]
    fn environment_overrides_keys_and_stack() {
        let c = load(
            DEFAULT_CONFIG,
            &[
                ("HASSIUM_RUNTIME_FLUSH_THRESHOLD", "7"),
                ("HASSIUM_ENGINES_CPU_THREADS", "1"),
                ("HASSIUM_STACK", "reference"),
            ],
        )
        .unwrap();
        assert_eq!(c.runtime.flush_threshold, 7);
        assert_eq!(c.engines["cpu"].options["threads"].as_integer(), Some(1));
        assert_eq!(c.runtime.stack, "reference");
    }

    #[test]
    fn only_the_cluster_stack_starts_mpi() {
        for (stack, mpi) in [("cluster", true), ("cpu", false), ("opencl", false)] {
            let c = load(DEFAULT_CONFIG, &[("HASSIUM_STACK", stack)]).unwrap();
            assert_eq!(c.stack_starts_mpi(), mpi, "{stack}");
        }
        // Through a child: an OpenCL engine whose child is the cluster engine.
        let c = load(
            DEFAULT_CONFIG,
            &[
                ("HASSIUM_STACK", "opencl"),
                ("HASSIUM_ENGINES_OPENCL_CHILD", "cluster"),
            ],
        )
        .unwrap();
        assert!(c.stack_starts_mpi());
    }

    #[test]
    fn a_typo_in_a_key_names_file_and_key() {
        let bad = DEFAULT_CONFIG.replace("flush_threshold", "flush_treshold");
        let e = load(&bad, &[]).unwrap_err().to_string();
        assert!(
            e.contains("test.toml") && e.contains("flush_treshold"),
            "{e}"
        );
    }

    #[test]
    fn unknown_component_names_list_the_valid_choices() {
        let e = load(DEFAULT_CONFIG, &[("HASSIUM_STACK", "gpu")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"gpu\"") && e.contains("valid stacks: cluster, cpu, opencl, reference"),
            "{e}"
        );
        let bad = DEFAULT_CONFIG.replace("fuser = \"singleton\"", "fuser = \"singelton\"");
        let e = load(&bad, &[]).unwrap_err().to_string();
        assert!(
            e.contains("stacks.reference.fuser") && e.contains("singleton"),
            "{e}"
        );
        let e = load(DEFAULT_CONFIG, &[("HASSIUM_STACKS_CPU_ENGINE", "gpu")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown engine \"gpu\""), "{e}");
    }

    #[test]
    fn flush_thresholds_out_of_range_name_the_key_and_the_range() {
        for (var, key) in [
            ("HASSIUM_RUNTIME_FLUSH_THRESHOLD", "runtime.flush_threshold"),
            (
                "HASSIUM_RUNTIME_SMALL_FLUSH_THRESHOLD",
                "runtime.small_flush_threshold",
            ),
        ] {
            for bad in ["0", "100000000000"] {
                let e = load(DEFAULT_CONFIG, &[(var, bad)]).unwrap_err().to_string();
                assert!(e.contains(key) && e.contains("from 1 to 1048576"), "{e}");
            }
        }
    }

    #[test]
    fn child_chains_must_end() {
        let bad = DEFAULT_CONFIG.replace("[engines.cpu]\n", "[engines.cpu]\nchild = \"opencl\"\n");
        let e = load(&bad, &[]).unwrap_err().to_string();
        assert!(e.contains("loops"), "{e}");
    }
}
