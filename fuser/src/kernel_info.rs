use hassium_core::{BaseId, Batch, Kernel, KernelBases, KernelInstrs, Opcode, View};
use hassium_core::{IdMap, IdSet};

/// Fills a kernel's derived fields from its instruction list (batch indices, program
/// order):
/// - `shape`, the iteration shape: the input shape of its reductions or scans, else the
///   output shape of its first instruction (see `legality.rs` for the loop nests);
/// - `reads`: bases read from memory. A read of a view that an earlier instruction of the
///   kernel wrote identically is served from registers; any other read goes to memory;
/// - `contracted`: bases that live only in registers: written by the kernel, freed in the
///   batch, not synced, never read from memory by the kernel, not the output of an
///   extension method, and touched by no instruction outside it (`touched_elsewhere`);
/// - `writes`: the other bases it writes.
pub fn finish_kernel(
    batch: &Batch,
    instrs: impl Into<KernelInstrs>,
    touched_elsewhere: impl Fn(BaseId) -> bool,
) -> Kernel {
    let mut freed = None;
    finish_kernel_in(batch, instrs.into(), touched_elsewhere, |b| {
        freed
            .get_or_insert_with(|| batch.freed().collect::<IdSet>())
            .contains(&b)
    })
}

/// [`finish_kernel`] told which bases the batch frees: a fuser emitting many kernels of one
/// batch computes that set once, not once per kernel.
pub(crate) fn finish_kernel_in(
    batch: &Batch,
    instrs: KernelInstrs,
    touched_elsewhere: impl Fn(BaseId) -> bool,
    mut freed: impl FnMut(BaseId) -> bool,
) -> Kernel {
    // Inline for a kernel of a few instructions (the singleton fuser makes one per
    // instruction); sized up front for a longer one.
    let mut reads = KernelBases::with_capacity(3 * instrs.len());
    let mut writes = KernelBases::with_capacity(instrs.len());
    // The views each base was written through so far. An instruction never serves its
    // own reads, so a kernel of one (every kernel of the singleton fuser) needs no table.
    let mut written: Option<IdMap<Vec<&View>>> = (instrs.len() > 1).then(IdMap::default);
    let mut shape = None;
    let mut stored = KernelBases::new();
    for &k in &instrs {
        let i = &batch.instrs[k];
        if i.op.is_reduction() || i.op.is_scan() {
            if let Some(v) = i.ins.first().and_then(|o| o.as_view()) {
                shape = Some(v.shape.clone());
            }
        }
        for v in i.input_views() {
            let served =
                (written.as_ref().and_then(|w| w.get(&v.base))).is_some_and(|ws| ws.contains(&v));
            if !served {
                reads.push(v.base);
            }
        }
        if i.reads_output() {
            reads.push(i.out.base);
        }
        // An extension method (matmul) writes its output through memory, never into a
        // register, so that base is written even when nothing reads it.
        if i.op == Opcode::Extension {
            stored.push(i.out.base);
        }
        writes.push(i.out.base);
        if let Some(w) = &mut written {
            w.entry(i.out.base).or_default().push(&i.out);
        }
    }
    let shape = shape.or_else(|| instrs.first().map(|&k| batch.instrs[k].out.shape.clone()));
    for set in [&mut reads, &mut writes] {
        set.sort_unstable();
        set.dedup();
    }
    // Split in place: most kernels contract nothing, and then no vector is allocated.
    let mut contracted = KernelBases::new();
    writes.retain(|b| {
        let b = *b;
        let contract = reads.binary_search(&b).is_err()
            && !stored.contains(&b)
            && !batch.sync.contains(&b)
            && !touched_elsewhere(b)
            && freed(b);
        if contract {
            contracted.push(b);
        }
        !contract
    });
    Kernel {
        instrs,
        shape: shape.unwrap_or_default(),
        contracted,
        reads,
        writes,
    }
}
