use crate::Result;
use hassium_core::Batch;

/// A rewrite of a batch that keeps its meaning (what `Sync`ed bases hold afterwards).
pub trait Filter: Send {
    fn apply(&mut self, batch: &mut Batch) -> Result<()>;
}

type Make = fn() -> Box<dyn Filter>;

/// Every filter by its TOML name.
pub const REGISTRY: &[(&str, Make)] = &[];

/// Creates the filter registered as `name`.
pub fn create(name: &str) -> Result<Box<dyn Filter>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make())
        .ok_or_else(|| crate::Error::UnknownFilter {
            name: name.to_string(),
            valid: REGISTRY.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
        })
}
