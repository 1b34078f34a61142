//! What `python -m hassium --info` and `hassium.info()` report: the configuration in
//! force, every stack and engine (and whether each engine's library is found), the
//! cache directories, and the stack a running runtime uses. Built here so that every
//! bridge reports the same thing; a bridge only converts the JSON value.

use crate::{engine_dirs, Config, Result, Runtime};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// Where engine `name`'s library is (or `builtin`), after checking its children's too.
fn engine_found(config: &Config, name: &str, dirs: &[PathBuf]) -> Result<String, String> {
    let ec = config
        .engines
        .get(name)
        .ok_or_else(|| format!("no section [engines.{name}]"))?;
    let own = if ec.library == "builtin" {
        "builtin".to_string()
    } else {
        hassium_engine_abi::engine_path(&ec.library, dirs)
            .map(|p| p.display().to_string())
            .map_err(|e| e.to_string())?
    };
    if let Some(child) = &ec.child {
        engine_found(config, child, dirs)?;
    }
    Ok(own)
}

/// The stacks whose engine libraries can be found (so `HASSIUM_STACK=name` would work).
pub fn available_stacks() -> Result<Vec<String>> {
    let config = Config::load()?;
    let dirs = engine_dirs();
    Ok(config
        .stacks
        .iter()
        .filter(|(_, sc)| engine_found(&config, &sc.engine, &dirs).is_ok())
        .map(|(n, _)| n.clone())
        .collect())
}

/// One engine's entry: its library and child, where it was found (with the devices it
/// describes) or why not, its compiler and its cache directory as resolved.
fn engine_info(config: &Config, name: &str, dirs: &[PathBuf], caches: &mut Vec<String>) -> Value {
    let ec = &config.engines[name];
    let mut e = Map::new();
    e.insert("library".into(), json!(ec.library));
    e.insert("child".into(), json!(ec.child));
    match engine_found(config, name, dirs) {
        Ok(p) => {
            e.insert("found".into(), json!(true));
            if p != "builtin" {
                if let Some(text) = hassium_engine_abi::describe(Path::new(&p)) {
                    e.insert("devices".into(), json!(text));
                }
            }
            e.insert("path".into(), json!(p));
        }
        Err(msg) => {
            e.insert("found".into(), json!(false));
            e.insert("error".into(), json!(msg));
        }
    }
    if let Some(cc) = ec.options.get("compiler").and_then(|v| v.as_str()) {
        let described = hassium_engine_abi::describe_compiler(cc);
        e.insert("compiler".into(), json!(described));
    }
    if let Some(c) = ec.options.get("cache_dir").and_then(|v| v.as_str()) {
        // Where it resolves to (XDG rules), as the engine will use it.
        use hassium_engine_abi::CacheLocation;
        let c = match hassium_engine_abi::cache_location(c) {
            Ok(CacheLocation::At(p)) => p.display().to_string(),
            Ok(CacheLocation::Off) => "none".to_string(),
            Ok(CacheLocation::NoHome(why)) => format!("none ({why})"),
            Err(why) => format!("invalid ({why})"),
        };
        e.insert("cache_dir".into(), json!(c));
        caches.push(c);
    }
    Value::Object(e)
}

/// The whole report; `running` is the runtime when one exists.
pub fn info(running: Option<&Runtime>) -> Result<Value> {
    let config = Config::load()?;
    let dirs = engine_dirs();
    let stacks: Map<String, Value> = config
        .stacks
        .iter()
        .map(|(name, sc)| {
            let available = engine_found(&config, &sc.engine, &dirs).is_ok();
            let s = json!({
                "filters": sc.filters,
                "fuser": sc.fuser,
                "engine": sc.engine,
                "available": available,
            });
            (name.clone(), s)
        })
        .collect();
    let mut caches = Vec::new();
    let engines: Map<String, Value> = config
        .engines
        .keys()
        .map(|name| (name.clone(), engine_info(&config, name, &dirs, &mut caches)))
        .collect();
    caches.sort();
    caches.dedup();
    let mut d = Map::new();
    d.insert("config_source".into(), json!(config.source));
    d.insert("stack".into(), json!(config.runtime.stack));
    d.insert(
        "flush_threshold".into(),
        json!(config.runtime.flush_threshold),
    );
    let small = config.runtime.small_flush_threshold;
    d.insert("small_flush_threshold".into(), json!(small));
    let skip = &config.runtime.small_skip_filters;
    d.insert("small_skip_filters".into(), json!(skip));
    if let Some(text) = engines.get("opencl").and_then(|e| e.get("devices")) {
        d.insert("opencl_devices".into(), text.clone());
    }
    if let Some(text) = engines.get("cluster").and_then(|e| e.get("devices")) {
        d.insert("cluster".into(), text.clone());
    }
    d.insert("stacks".into(), Value::Object(stacks));
    d.insert("engines".into(), Value::Object(engines));
    d.insert("cache_dirs".into(), json!(caches));
    let dirs: Vec<String> = dirs.iter().map(|p| p.display().to_string()).collect();
    d.insert("engine_dirs".into(), json!(dirs));
    if let Some(rt) = running {
        d.insert("running_stack".into(), json!(rt.stack_name()));
        d.insert("running_engine".into(), json!(rt.engine_name()));
    }
    Ok(Value::Object(d))
}
