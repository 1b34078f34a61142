//! `[engines.cluster]`.

use hassium_engine_abi::{read_config, Error, Result};
use serde::Deserialize;

/// The cluster engine's own keys (`library` and `child` are the runtime's).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// Bases of fewer bytes are kept whole on every rank instead of distributed.
    pub replicate_below: u64,
    /// Accepted and not used: this engine keeps nothing on disk, its child keeps its
    /// kernels under its own `cache_dir`. `HASSIUM_CACHE_DIR` sets the key on every engine
    /// loaded from a library, and made this one refuse to start.
    pub cache_dir: Option<String>,
}

impl Default for ClusterConfig {
    fn default() -> ClusterConfig {
        ClusterConfig {
            replicate_below: 65536,
            cache_dir: None,
        }
    }
}

impl ClusterConfig {
    pub fn from_table(t: &toml::Table) -> Result<ClusterConfig> {
        read_config(t).map_err(|e| Error::Other(format!("[engines.cluster] {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_dir_is_accepted_and_a_typo_is_not() {
        let t: toml::Table = "cache_dir = \"/tmp/x\"\nreplicate_below = 8"
            .parse()
            .unwrap();
        let c = ClusterConfig::from_table(&t).unwrap();
        assert_eq!(c.replicate_below, 8);
        let t: toml::Table = "replicate_belo = 8".parse().unwrap();
        let e = ClusterConfig::from_table(&t).unwrap_err().to_string();
        assert!(
            e.contains("replicate_belo") && e.contains("[engines.cluster]"),
            "{e}"
        );
    }
}
