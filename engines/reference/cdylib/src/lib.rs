//! Exports the reference engine through the engine ABI (see the package's Cargo.toml for
//! why this is its own package).

hassium_engine_abi::export_engine!(
    "reference",
    hassium_engine_reference::ReferenceEngine::create
);
