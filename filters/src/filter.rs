use crate::{
    ContractReductions, Cse, DeadCode, Dump, ExpandPowk, MatrixVector, Piecewise, Rematerialize,
    Result, Simplify, UpdateCells,
};
use hassium_core::Batch;

/// A rewrite of a batch that keeps its meaning: every base that stays observable (not
/// freed in the batch, or synced) holds the same values afterwards, and the batch still
/// passes `verify`.
pub trait Filter: Send {
    fn apply(&mut self, batch: &mut Batch) -> Result<()>;
}

type Make = fn() -> Box<dyn Filter>;

/// Every filter by its TOML name (= file name = struct name in snake case). A sensible
/// order is the one listed: matrix × vector products and powers first (they create
/// multiplications `simplify` may clean), `cse` before `dead_code` (it leaves dead
/// producers behind).
pub const REGISTRY: &[(&str, Make)] = &[
    ("matrix_vector", || Box::new(MatrixVector)),
    ("expand_powk", || Box::new(ExpandPowk)),
    ("piecewise", || Box::new(Piecewise::default())),
    ("update_cells", || Box::new(UpdateCells::default())),
    ("simplify", || Box::new(Simplify)),
    ("cse", || Box::new(Cse::default())),
    ("dead_code", || Box::new(DeadCode)),
    ("rematerialize", || Box::new(Rematerialize)),
    ("contract_reductions", || Box::new(ContractReductions)),
    ("dump", || Box::new(Dump::from_env())),
];

/// Creates the filter registered as `name`.
pub fn create(name: &str) -> Result<Box<dyn Filter>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make())
        .ok_or_else(|| crate::Error::UnknownFilter {
            name: name.to_string(),
            valid: REGISTRY
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })
}
