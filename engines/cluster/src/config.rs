//! `[engines.cluster]`.

use hassium_engine_abi::{read_config, Error, Result};
use serde::Deserialize;

/// The cluster engine's own keys (`library` and `child` are the runtime's).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// Bases of fewer bytes are kept whole on every rank instead of distributed.
    pub replicate_below: u64,
}

impl Default for ClusterConfig {
    fn default() -> ClusterConfig {
        ClusterConfig {
            replicate_below: 65536,
        }
    }
}

impl ClusterConfig {
    pub fn from_table(t: &toml::Table) -> Result<ClusterConfig> {
        read_config(t).map_err(|e| Error::Other(format!("[engines.cluster] {e}")))
    }
}
