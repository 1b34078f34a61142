use crate::{Greedy, Optimal, Result, Serial, Singleton, DEFAULT_OPTIMAL_BUDGET};
use hassium_core::{Batch, Capabilities, Kernel};

/// Partitions a batch into kernels that cover its non-system instructions, in an order
/// that respects their dependencies.
pub trait Fuser: Send {
    fn fuse(&mut self, batch: &Batch, caps: &Capabilities) -> Result<Vec<Kernel>>;

    /// Whether the runtime should look partitions up in the fuse cache (see
    /// [`crate::FuseCache`]) rather than call [`Fuser::fuse`] every flush.
    fn worth_caching(&self) -> bool {
        true
    }
}

type Make = fn(&FuserOptions) -> Box<dyn Fuser>;

/// Options a fuser may read from the stack's configuration.
#[derive(Clone, Debug, Default)]
pub struct FuserOptions {
    /// Node budget for `optimal`'s branch and bound (default [`DEFAULT_OPTIMAL_BUDGET`]).
    pub optimal_budget: Option<u64>,
}

/// Every fuser by its TOML name.
pub const REGISTRY: &[(&str, Make)] = &[
    ("singleton", |_| Box::new(Singleton)),
    ("serial", |_| Box::new(Serial)),
    ("greedy", |_| Box::new(Greedy)),
    ("optimal", |o| {
        Box::new(Optimal {
            budget: o.optimal_budget.unwrap_or(DEFAULT_OPTIMAL_BUDGET),
        })
    }),
];

/// Creates the fuser registered as `name`.
pub fn create(name: &str, options: &FuserOptions) -> Result<Box<dyn Fuser>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make(options))
        .ok_or_else(|| crate::Error::UnknownFuser {
            name: name.to_string(),
            valid: REGISTRY
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })
}
