//! Builds the components of the stack in force from the configuration.

use crate::partitions::PartitionFiles;
use crate::{engine_dirs, Config, Error, Result};
use hassium_core::Supports;
use hassium_engine_abi::{engine_path, Engine, LoadedEngine};
use hassium_engine_reference::ReferenceEngine;
use hassium_filters::Filter;
use hassium_fuser::{FuseCache, Fuser, FuserOptions};

/// The filters, fuser and engine of one stack, plus the built-in reference engine that
/// takes whatever the stack's engine cannot run.
pub struct Stack {
    pub name: String,
    pub filters: Vec<(String, Box<dyn Filter>)>,
    pub fuser_name: String,
    pub fuser: Box<dyn Fuser>,
    /// Partitions by canonical batch key, so a loop pays for fusion once.
    pub cache: FuseCache,
    pub engine: Box<dyn Engine>,
    /// The engine's capabilities, with a quick test of one instruction.
    pub supports: Supports,
    pub fallback: ReferenceEngine,
}

impl Stack {
    /// Creates the stack named by `config.runtime.stack`.
    pub fn build(config: &Config) -> Result<Stack> {
        let name = config.runtime.stack.clone();
        let sc = config.stack();
        let filters = sc
            .filters
            .iter()
            .map(|f| Ok((f.clone(), hassium_filters::create(f)?)))
            .collect::<Result<Vec<_>>>()?;
        let fuser = hassium_fuser::create(
            &sc.fuser,
            &FuserOptions {
                optimal_budget: sc.optimal_budget,
            },
        )?;
        let engine = create_engine(config, &sc.engine)?;
        let caps = engine.capabilities();
        let mut cache = FuseCache::new();
        // Partitions are kept next to the engine's kernels, and not at all where the
        // engine keeps none (`cache_dir = ""`, or the built-in engines).
        let cache_dir = (config.engines.get(&sc.engine))
            .and_then(|e| e.options.get("cache_dir")?.as_str())
            .filter(|d| !d.is_empty());
        // The engine has checked the directory and warned about it already; partitions
        // are simply not kept where it is unusable.
        let files = cache_dir
            .and_then(|d| hassium_engine_abi::cache_location(d).ok())
            .and_then(|l| PartitionFiles::open(&l));
        if let Some(files) = files {
            let fuser_id = format!("{} {:?}", sc.fuser, sc.optimal_budget);
            cache.set_store(Box::new(files), &fuser_id);
        }
        Ok(Stack {
            name,
            filters,
            fuser_name: sc.fuser.clone(),
            fuser,
            cache,
            engine,
            supports: caps.checker(),
            fallback: ReferenceEngine::trusting(),
        })
    }
}

/// Creates engine `name` (and its child chain) from its section.
pub fn create_engine(config: &Config, name: &str) -> Result<Box<dyn Engine>> {
    let ec = config
        .engines
        .get(name)
        .ok_or_else(|| Error::Config(format!("{}: no section [engines.{name}]", config.source)))?;
    if ec.library == "builtin" {
        return Ok(Box::new(ReferenceEngine::trusting()));
    }
    let child = ec
        .child
        .as_deref()
        .map(|c| create_engine(config, c))
        .transpose()?;
    let path = engine_path(&ec.library, &engine_dirs())?;
    let engine = LoadedEngine::open(&path, &ec.options, child)?;
    Ok(Box::new(engine))
}
