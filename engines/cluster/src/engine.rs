//! The engine: rank 0 runs the program and broadcasts each flush; every other rank runs
//! [`ClusterEngine::serve`] from the moment the engine is created and never returns to
//! the program. Every rank then runs the same plan on its own memory through its child
//! engine.

use crate::comm::{self, CommStats, Memory};
use crate::config::ClusterConfig;
use crate::layout::Layout;
use crate::plan::{
    aligned_layout, interior, piece, plan, replicated_writes, start_ranges_at, Cut, Phase,
};
use hassium_core::{BaseId, Batch, Capabilities, IdMap, Kernel, Operand};
use hassium_engine_abi::{
    encode_call, Buffers, Engine, EngineContext, EngineStats, Error, HostBuffer, Result,
};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::collections::HashSet;
use std::time::Instant;

mod chunks;
mod failure;
mod worker;

use failure::{failure_error, failure_info, fallible, original_instr};

/// Control messages, by their first byte.
const EXECUTE: u8 = 1;
const SYNC: u8 = 2;
const STATS: u8 = 3;
const EXIT: u8 = 4;

/// Counters beyond the communication's.
#[derive(Clone, Debug, Default)]
struct Counters {
    comm: CommStats,
    compute_seconds: f64,
    gathered_bytes: u64,
    gathered_kernels: u64,
    flushes: u64,
    phases: u64,
    /// Kernels run entirely while their phase's pieces travelled.
    overlapped_kernels: u64,
    /// Kernels whose interior rows ran while their phase's pieces travelled.
    interior_kernels: u64,
}

impl Counters {
    const NAMES: [&'static str; 14] = [
        "sent_bytes",
        "received_bytes",
        "piece_bytes",
        "messages",
        "broadcasts",
        "allgathers",
        "comm_wait_seconds",
        "compute_seconds",
        "gathered_bytes",
        "gathered_kernels",
        "flushes",
        "phases",
        "overlapped_kernels",
        "interior_kernels",
    ];

    fn values(&self) -> [f64; 14] {
        [
            self.comm.bytes_sent as f64,
            self.comm.bytes_received as f64,
            self.comm.piece_bytes as f64,
            self.comm.messages as f64,
            self.comm.broadcasts as f64,
            self.comm.allgathers as f64,
            self.comm.wait_seconds,
            self.compute_seconds,
            self.gathered_bytes as f64,
            self.gathered_kernels as f64,
            self.flushes as f64,
            self.phases as f64,
            self.overlapped_kernels as f64,
            self.interior_kernels as f64,
        ]
    }
}

/// A worker's memory for one base: an anonymous mapping of the whole base, of which
/// only the pages the rank touches (its block and the pieces it receives) cost memory.
struct Local {
    map: crate::pool::Mapping,
    dtype: u8,
    nelem: u64,
}

/// The engine of one rank. The world communicator is not `Send`; it is taken anew
/// where needed ([`world`]).
pub struct ClusterEngine {
    rank: u32,
    ranks: u32,
    cfg: ClusterConfig,
    child: Box<dyn Engine>,
    layouts: IdMap<Layout>,
    /// Distributed bases whose blocks on other ranks are newer than rank 0's copy, and
    /// those ranks. Every rank keeps the same table (it follows the plan and the syncs).
    stale: IdMap<Vec<u32>>,
    /// Frees rank 0 has not told the workers yet (they travel with the next message).
    frees: Vec<BaseId>,
    /// A worker's memory.
    store: IdMap<Local>,
    /// Freed mappings for reuse.
    pool: crate::pool::Pool,
    counters: Counters,
    /// Opcode names already warned about running gathered.
    warned: HashSet<String>,
}

impl ClusterEngine {
    pub fn create(ctx: EngineContext) -> Result<Box<dyn Engine>> {
        hassium_engine_abi::init_engine_logging("cluster");
        let cfg = ClusterConfig::from_table(&ctx.config)?;
        let child = ctx.child.ok_or_else(|| {
            Error::Other("the cluster engine needs a child engine (child = \"cpu\")".into())
        })?;
        let world = comm::start().map_err(Error::Other)?;
        let rank = world.rank() as u32;
        let ranks = world.size() as u32;
        if let Some(r) = comm::first_different(&world, crate::build_id()) {
            let msg = format!(
                "rank {r} runs a different build of the cluster engine than rank 0; \
                 start every rank from the same installation"
            );
            if rank == 0 {
                comm::abort(&world, &msg);
            }
            comm::finish();
            std::process::exit(1);
        }
        let mut engine = ClusterEngine {
            rank,
            ranks,
            cfg,
            child,
            layouts: IdMap::default(),
            stale: IdMap::default(),
            frees: Vec::new(),
            store: IdMap::default(),
            pool: Default::default(),
            counters: Counters::default(),
            warned: HashSet::new(),
        };
        if rank != 0 {
            engine.serve();
        }
        if ranks == 1 && std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
            eprintln!("hassium cluster: started without mpirun; running as one rank");
        }
        let _ = RANK0_PROCESS.set(hassium_engine_abi::process_generation());
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(end_workers) };
        Ok(Box::new(engine))
    }

    /// Rank 0: a control message of `kind` carrying the pending frees, then `body`.
    fn broadcast(&mut self, kind: u8, body: &[u8]) {
        let frees = std::mem::take(&mut self.frees);
        let mut msg = Vec::with_capacity(9 + 8 * frees.len() + body.len());
        msg.push(kind);
        msg.extend_from_slice(&(frees.len() as u64).to_le_bytes());
        for f in &frees {
            msg.extend_from_slice(&f.0.to_le_bytes());
        }
        msg.extend_from_slice(body);
        comm::send_control(&world(), &msg, &mut self.counters.comm);
    }

    /// The layout of every base the kernels keep in memory and no layout holds yet, from
    /// its first view in kernel order (inputs before outputs, so that an output may be
    /// laid out to match them).
    fn lay_out(&mut self, batch: &Batch, kernels: &[Kernel]) {
        let in_memory: HashSet<BaseId> = kernels
            .iter()
            .flat_map(|k| k.reads.iter().chain(&k.writes).copied())
            .collect();
        for k in kernels {
            for instr in k.instrs.iter().filter_map(|&i| batch.instrs.get(i)) {
                let views = (instr.ins.iter().filter_map(|o| o.as_view()))
                    .chain(std::iter::once(&instr.out));
                for v in views {
                    if !in_memory.contains(&v.base) || self.layouts.contains_key(&v.base) {
                        continue;
                    }
                    let Some(base) = batch.base(v.base) else {
                        continue;
                    };
                    let mut l = Layout::new(base, Some(v), self.ranks, self.cfg.replicate_below);
                    if l.distributed && std::ptr::eq(v, &instr.out) {
                        let aligned = aligned_layout(batch, k, v, base, &self.layouts, self.ranks);
                        l = aligned.unwrap_or(l);
                    }
                    self.layouts.insert(v.base, l);
                }
            }
        }
    }

    /// Every rank: one flush. Errors leave this rank still taking part in every exchange,
    /// so that no rank waits for it. The error comes back with `true` when every rank
    /// agreed on it already (after a kernel that can fail), `false` when only this rank
    /// knows it yet.
    fn run(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
        dirty: &[BaseId],
    ) -> std::result::Result<(), (Error, bool)> {
        self.counters.flushes += 1;
        self.lay_out(batch, kernels);
        let mut mem = BufferMemory(buffers);
        // Bases rank 0's host wrote: their blocks go out (a replicated base to everyone).
        for &id in dirty {
            let Some(layout) = self.layouts.get(&id).cloned() else {
                continue;
            };
            let Some((bytes, size)) = mem.bytes(id) else {
                continue;
            };
            if layout.distributed {
                if self.rank == 0 {
                    for r in 1..self.ranks {
                        let (lo, hi) = layout.block(r);
                        if hi > lo {
                            let part = &bytes[lo as usize * size..hi as usize * size];
                            comm::send_block(&world(), r, part, &mut self.counters.comm);
                        }
                    }
                } else {
                    let (lo, hi) = layout.block(self.rank);
                    if hi > lo {
                        let part = &mut bytes[lo as usize * size..hi as usize * size];
                        comm::receive_block(&world(), 0, part, &mut self.counters.comm);
                    }
                }
            } else if self.ranks > 1 {
                comm::broadcast_bytes(&world(), bytes, &mut self.counters.comm);
            }
            self.stale.remove(&id);
        }
        let plan = plan(batch, kernels, &self.layouts, self.ranks);
        let mut local = batch.clone();
        let mut failure: Option<Error> = None;
        for phase in &plan.phases {
            self.counters.phases += 1;
            // What reads no piece runs while the pieces travel (see `early_work`).
            let early = if phase.needs.is_empty() || failure.is_some() {
                Early::default()
            } else {
                self.early_work(batch, &plan, phase)
            };
            self.counters.overlapped_kernels += early.whole.len() as u64;
            self.counters.interior_kernels += u64::from(early.interior.is_some());
            let (child, compute) = (&mut self.child, &mut self.counters.compute_seconds);
            let mut early_failure = None;
            let exchanged = comm::exchange_around(
                &world(),
                &phase.needs,
                &mut mem,
                &mut self.counters.comm,
                || {
                    let mut ks = Vec::new();
                    for &ki in &early.whole {
                        let k = &plan.kernels[ki];
                        match &plan.cuts[ki] {
                            Cut::Rows { ranges, flat } => {
                                let (i0, i1) = ranges[self.rank as usize];
                                if i1 > i0 {
                                    ks.push(rows_piece(&mut local, batch, k, *flat, i0, i1));
                                }
                            }
                            _ => ks.push(k.clone()),
                        }
                    }
                    if let Some((ki, flat, (a, b))) = early.interior {
                        ks.push(rows_piece(&mut local, batch, &plan.kernels[ki], flat, a, b));
                    }
                    if !ks.is_empty() {
                        let t = Instant::now();
                        early_failure = child.execute(&local, &ks, buffers).err();
                        *compute += t.elapsed().as_secs_f64();
                    }
                },
            );
            if let Err(e) = exchanged {
                failure.get_or_insert(Error::Other(e));
            }
            if let Some(e) = early_failure {
                failure.get_or_insert(e);
            }
            let mut mine: Vec<Kernel> = Vec::with_capacity(phase.kernels.len());
            for &ki in &phase.kernels {
                let k = &plan.kernels[ki];
                if plan.gathered.contains(&ki) {
                    self.note_gathered(batch, k, &phase.needs);
                }
                let done = early.whole.contains(&ki);
                match &plan.cuts[ki] {
                    Cut::Whole if done => {}
                    Cut::Whole => mine.push(k.clone()),
                    Cut::Rows { ranges, flat } => {
                        let (i0, i1) = ranges[self.rank as usize];
                        self.mark_stale(k);
                        // The rows not computed early: all of them, or those before and
                        // after the interior (two calls over one kernel's instructions).
                        let parts = match early.interior {
                            _ if done => vec![],
                            Some((e, _, (a, b))) if e == ki => vec![(i0, a), (b, i1)],
                            _ => vec![(i0, i1)],
                        };
                        let parts = parts.into_iter().filter(|&(lo, hi)| hi > lo);
                        for (n, (lo, hi)) in parts.enumerate() {
                            if n > 0 {
                                self.run_child(&local, &mut mine, buffers, &mut failure);
                            }
                            mine.push(rows_piece(&mut local, batch, k, *flat, lo, hi));
                        }
                        let shared = replicated_writes(batch, k, ranges, *flat, &self.layouts);
                        if !shared.is_empty() {
                            self.run_child(&local, &mut mine, buffers, &mut failure);
                            self.share(batch, &shared, buffers, &mut failure);
                        }
                    }
                    Cut::Chunks(ranges) => {
                        self.mark_stale(k);
                        self.run_child(&local, &mut mine, buffers, &mut failure);
                        self.run_chunks(batch, k, ranges, buffers, &mut failure);
                    }
                }
                // A kernel that can fail on its values (an index out of range, an
                // integer to a negative power) is agreed on at once: no rank runs a
                // later kernel after some rank's failed, which is what a failure
                // promises the runtime (it completes the batch from there itself).
                if self.ranks > 1 && fallible(batch, k) {
                    self.run_child(&local, &mut mine, buffers, &mut failure);
                    if let Some(e) = self.agree(batch, failure.take()) {
                        return Err((e, true));
                    }
                }
            }
            self.run_child(&local, &mut mine, buffers, &mut failure);
        }
        failure.map_or(Ok(()), |e| Err((e, false)))
    }

    /// What of `phase` this rank runs while the phase's pieces travel: the longest run of
    /// its first kernels that read and write no base this rank receives pieces of (the
    /// pieces are unpacked after them, as before them they were not needed), then, of the
    /// next kernel when it is cut by rows, the rows that read no piece
    /// ([`crate::plan::interior`]). Kernels that talk to other ranks (chunked
    /// reductions, replicated outputs, those that can fail) end the run.
    fn early_work(&self, batch: &Batch, plan: &crate::plan::Plan, phase: &Phase) -> Early {
        let mut early = Early::default();
        let incoming: Vec<BaseId> = (phase.needs.iter())
            .filter(|n| n.dst == self.rank)
            .map(|n| n.base)
            .collect();
        for &ki in &phase.kernels {
            let k = &plan.kernels[ki];
            if fallible(batch, k) {
                break;
            }
            let touches = k
                .reads
                .iter()
                .chain(&k.writes)
                .any(|b| incoming.contains(b));
            match &plan.cuts[ki] {
                Cut::Whole if !touches => early.whole.push(ki),
                Cut::Rows { ranges, flat }
                    if replicated_writes(batch, k, ranges, *flat, &self.layouts).is_empty() =>
                {
                    let rows = ranges[self.rank as usize];
                    // Rows that read no piece, or none here at all.
                    if !touches || rows.1 <= rows.0 {
                        early.whole.push(ki);
                        continue;
                    }
                    early.interior = interior(batch, k, *flat, rows, &self.layouts, self.rank)
                        .map(|ab| (ki, *flat, ab));
                    break;
                }
                _ => break,
            }
        }
        early
    }

    /// Every rank's failure status, agreed: `None` when no rank failed, else the failure
    /// of the lowest failing rank on rank 0 (as it was, when rank 0's own) and a
    /// placeholder elsewhere. Collective.
    fn agree(&mut self, batch: &Batch, mine: Option<Error>) -> Option<Error> {
        let info = mine.as_ref().map(failure_info);
        let (who, theirs) = comm::agree_on_failure(&world(), info.as_ref())?;
        if self.rank != 0 {
            return Some(Error::Other(format!("rank {who} failed")));
        }
        if who == 0 {
            return mine;
        }
        let f = theirs?;
        Some(failure_error(batch, who, f))
    }

    /// Notes that the distributed bases `k` writes are current only on their owners,
    /// so rank 0 gathers them before they are read.
    fn mark_stale(&mut self, k: &Kernel) {
        for &w in &k.writes {
            if self.layouts.get(&w).is_some_and(|l| l.distributed) {
                self.stale.insert(w, (1..self.ranks).collect());
            }
        }
    }

    /// Runs `kernels` (then empties it) on the child unless a failure came first.
    fn run_child(
        &mut self,
        batch: &Batch,
        kernels: &mut Vec<Kernel>,
        buffers: &Buffers,
        failure: &mut Option<Error>,
    ) {
        if failure.is_none() && !kernels.is_empty() {
            let t = Instant::now();
            if let Err(e) = self.child.execute(batch, kernels, buffers) {
                *failure = Some(e);
            }
            self.counters.compute_seconds += t.elapsed().as_secs_f64();
        }
        kernels.clear();
    }

    /// Makes replicated bases whole again after a kernel cut by rows wrote each rank's
    /// part: every rank's range of each base to every rank. Collective.
    fn share(
        &mut self,
        batch: &Batch,
        shared: &[(BaseId, Vec<(u64, u64)>)],
        buffers: &Buffers,
        failure: &mut Option<Error>,
    ) {
        let mut mem = BufferMemory(buffers);
        let me = self.rank as usize;
        for (base, ranges) in shared {
            let size = batch.base(*base).map_or(1, |b| b.dtype.size());
            let span = |(lo, hi): (u64, u64)| (lo as usize * size, hi as usize * size);
            let counts: Vec<usize> = ranges.iter().map(|&r| span(r).1 - span(r).0).collect();
            let (lo, hi) = span(ranges[me]);
            let mut bytes = mem.bytes(*base).map(|(b, _)| b);
            // Without memory this rank still takes part, sending zeros.
            let mine = match &bytes {
                Some(b) => b[lo..hi].to_vec(),
                None => {
                    failure.get_or_insert(Error::Other(format!("base {} has no memory", base.0)));
                    vec![0; hi - lo]
                }
            };
            match comm::all_gather_bytes(&world(), &mine, &counts, &mut self.counters.comm) {
                Ok(all) => {
                    let Some(bytes) = bytes.as_mut() else {
                        continue;
                    };
                    let mut at = 0;
                    for (r, &range) in ranges.iter().enumerate() {
                        let (lo, hi) = span(range);
                        if r != me {
                            bytes[lo..hi].copy_from_slice(&all[at..at + hi - lo]);
                        }
                        at += hi - lo;
                    }
                }
                Err(e) => {
                    failure.get_or_insert(Error::Other(e));
                }
            }
        }
    }

    /// Counts a kernel run whole on gathered operands and warns once per operation.
    fn note_gathered(&mut self, batch: &Batch, k: &Kernel, needs: &[crate::plan::Need]) {
        self.counters.gathered_kernels += 1;
        if self.rank == 0 {
            let instrs: Vec<&hassium_core::Instr> =
                k.instrs.iter().map(|&i| &batch.instrs[i]).collect();
            tracing::debug!(shape = ?k.shape, ?instrs, "kernel runs whole on gathered operands");
        }
        let reads: HashSet<BaseId> = k.reads.iter().copied().collect();
        self.counters.gathered_bytes += needs
            .iter()
            .filter(|n| n.dst == self.rank && reads.contains(&n.base))
            .map(|n| (n.hi - n.lo) * batch.base(n.base).map_or(1, |b| b.dtype.size() as u64))
            .sum::<u64>();
        if self.rank != 0 {
            return;
        }
        let names: Vec<&str> = k
            .instrs
            .iter()
            .filter_map(|&i| batch.instrs.get(i))
            .filter(|i| !i.op.is_elementwise())
            .map(|i| i.method.as_deref().unwrap_or(i.op.name()))
            .collect();
        let name = names
            .first()
            .copied()
            .unwrap_or("an elementwise kernel cut differently");
        if self.warned.insert(name.to_string()) {
            tracing::warn!(
                "{name} does not distribute yet; every rank gathers its \
                 operands (counted as gathered in HASSIUM_STATS)"
            );
        }
    }

    /// The stale ranks of `id` whose blocks hold some of elements `[lo, hi)` (all of
    /// them without an extent).
    fn stale_in(&self, id: BaseId, extent: Option<(u64, u64)>) -> Vec<u32> {
        let (Some(ranks), Some(layout)) = (self.stale.get(&id), self.layouts.get(&id)) else {
            return Vec::new();
        };
        (ranks.iter().copied())
            .filter(|&r| {
                extent.is_none_or(|(lo, hi)| {
                    let (a, b) = layout.block(r);
                    a < hi && lo < b
                })
            })
            .collect()
    }

    /// Brings home to rank 0 (`host` there; workers send) the stale blocks of `id` that
    /// hold some of `extent`, or all of them. Collective.
    fn sync_home(&mut self, id: BaseId, host: Option<&HostBuffer>, extent: Option<(u64, u64)>) {
        let Some(layout) = self.layouts.get(&id).cloned() else {
            return;
        };
        let ranks = self.stale_in(id, extent);
        if let Some(left) = self.stale.get_mut(&id) {
            left.retain(|r| !ranks.contains(r));
            if left.is_empty() {
                self.stale.remove(&id);
            }
        }
        if !layout.distributed {
            return;
        }
        if self.rank == 0 {
            let Some(host) = host else { return };
            // SAFETY: the runtime keeps the buffer alive and unshared during `sync`.
            let bytes = unsafe { host.bytes_mut() };
            let size = host.dtype().map_or(1, |d| d.size());
            for r in ranks {
                let (lo, hi) = layout.block(r);
                if hi > lo {
                    let part = &mut bytes[lo as usize * size..hi as usize * size];
                    comm::receive_block(&world(), r, part, &mut self.counters.comm);
                }
            }
        } else if let Some(l) = self
            .store
            .get_mut(&id)
            .filter(|_| ranks.contains(&self.rank))
        {
            let size = hassium_core::DType::from_u8(l.dtype).map_or(1, |d| d.size());
            let (lo, hi) = layout.block(self.rank);
            if hi > lo {
                let part = &l.map.bytes()[lo as usize * size..hi as usize * size];
                comm::send_block(&world(), 0, part, &mut self.counters.comm);
            }
        }
    }
}

/// What of a phase runs while its pieces travel (see `ClusterEngine::early_work`).
#[derive(Default)]
struct Early {
    /// Kernels run entirely (their own rows, or whole).
    whole: Vec<usize>,
    /// A kernel cut by rows, whether its cut is flat, and its rows run early.
    interior: Option<(usize, bool, (usize, usize))>,
}

/// Kernel `k` over its rows `[lo, hi)` (`lo < hi`; elements of the one loop when `flat`):
/// its instructions in `local` rewritten to those rows' pieces (ranges continuing from
/// the first row's index), and the kernel over them.
fn rows_piece(
    local: &mut Batch,
    batch: &Batch,
    k: &Kernel,
    flat: bool,
    lo: usize,
    hi: usize,
) -> Kernel {
    for &i in &k.instrs {
        let instr = &mut local.instrs[i];
        instr.out = piece(&batch.instrs[i].out, flat, lo, hi);
        for (o, orig) in instr.ins.iter_mut().zip(&batch.instrs[i].ins) {
            if let (Operand::View(v), Some(ov)) = (o, orig.as_view()) {
                *v = piece(ov, flat, lo, hi);
            }
        }
    }
    let mut kk = k.clone();
    let per_row: usize = k.shape[1..].iter().product();
    let start = if flat { lo } else { lo * per_row };
    if flat {
        kk.shape = [hi - lo].into_iter().collect();
    } else {
        kk.shape[0] = hi - lo;
    }
    start_ranges_at(local, &mut kk.instrs, &mut kk.contracted, start);
    kk
}

/// MPI's world communicator.
fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

/// The memory of an execute call's buffers.
struct BufferMemory<'a>(&'a Buffers);

impl Memory for BufferMemory<'_> {
    fn bytes(&mut self, base: BaseId) -> Option<(&mut [u8], usize)> {
        let b = self.0.get(base)?;
        // SAFETY: the buffers stay valid for the call, and the engine is the only one
        // touching them while it runs (the ABI's contract).
        Some((unsafe { b.bytes_mut() }, b.dtype()?.size()))
    }
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The process that started MPI as rank 0, as `process_generation` numbers it. A
/// process forked from it shares its MPI connections and must never use them: it would
/// corrupt rank 0's.
static RANK0_PROCESS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The error for any use of the engine in a forked process.
fn check_not_forked() -> Result<()> {
    match RANK0_PROCESS.get() {
        Some(&process) if process != hassium_engine_abi::process_generation() => {
            Err(Error::Engine {
                engine: "cluster".into(),
                message: "this process was forked from rank 0, and MPI does not survive fork: \
                      compute in the parent, or start the child with the multiprocessing \
                      'spawn' method on another stack"
                    .into(),
            })
        }
        _ => Ok(()),
    }
}

/// At rank 0's exit: tell the workers to end, then end MPI.
extern "C" fn end_workers() {
    if check_not_forked().is_err() {
        return; // a forked child's exit: the workers belong to its parent
    }
    let world = SimpleCommunicator::world();
    if mpi::environment::is_finalized() {
        return;
    }
    let mut msg = vec![EXIT];
    msg.extend_from_slice(&0u64.to_le_bytes());
    comm::send_control(&world, &msg, &mut CommStats::default());
    comm::finish();
}

impl Engine for ClusterEngine {
    fn name(&self) -> &str {
        "cluster"
    }

    fn capabilities(&self) -> Capabilities {
        self.child.capabilities()
    }

    fn execute(&mut self, batch: &Batch, kernels: &[Kernel], buffers: &Buffers) -> Result<()> {
        check_not_forked()?;
        if kernels.is_empty() {
            return Ok(());
        }
        let mut dirty: Vec<BaseId> = buffers
            .iter()
            .filter(|b| b.host_dirty != 0)
            .map(|b| BaseId(b.base))
            .collect();
        dirty.sort_unstable();
        if self.ranks > 1 {
            let call = encode_call(batch, kernels)?;
            let mut body = Vec::with_capacity(8 + 8 * dirty.len() + call.len());
            body.extend_from_slice(&(dirty.len() as u64).to_le_bytes());
            for d in &dirty {
                body.extend_from_slice(&d.0.to_le_bytes());
            }
            body.extend_from_slice(&call);
            self.broadcast(EXECUTE, &body);
        }
        // The workers decode the call: the kernels and their instructions as here, other
        // instructions blanked and bases they do not name left out. Layouts and plans
        // look only at the kernels' instructions and bases, so rank 0 plans the same from
        // the batch itself.
        let failure = match self.run(batch, kernels, buffers, &dirty) {
            Ok(()) if self.ranks > 1 => self.agree(batch, None),
            Ok(()) => None,
            Err((e, true)) => Some(e),
            Err((e, false)) if self.ranks > 1 => self.agree(batch, Some(e)),
            Err((e, false)) => Some(e),
        };
        failure.map_or(Ok(()), Err)
    }

    fn sync(&mut self, base: BaseId, host: &HostBuffer) -> Result<()> {
        check_not_forked()?;
        if self.ranks > 1 && self.stale.contains_key(&base) {
            self.broadcast(SYNC, &base.0.to_le_bytes());
            self.sync_home(base, Some(host), None);
        }
        self.child.sync(base, host)
    }

    /// Gathers only the stale blocks holding elements `[lo, hi)`: a scalar read of a
    /// distributed array costs one block, not the array.
    fn sync_extent(&mut self, base: BaseId, host: &HostBuffer, lo: u64, hi: u64) -> Result<()> {
        check_not_forked()?;
        if self.ranks > 1 && !self.stale_in(base, Some((lo, hi))).is_empty() {
            let mut msg = base.0.to_le_bytes().to_vec();
            msg.extend_from_slice(&lo.to_le_bytes());
            msg.extend_from_slice(&hi.to_le_bytes());
            self.broadcast(SYNC, &msg);
            self.sync_home(base, Some(host), Some((lo, hi)));
        }
        self.child.sync_extent(base, host, lo, hi)
    }

    fn free(&mut self, base: BaseId) -> Result<()> {
        if self.ranks > 1 && self.layouts.contains_key(&base) {
            self.frees.push(base);
        }
        self.layouts.remove(&base);
        self.stale.remove(&base);
        self.child.free(base)
    }

    fn stats(&self) -> EngineStats {
        let mut s = self.child.stats();
        if check_not_forked().is_err() {
            return s;
        }
        let mine = self.counters.values();
        for (name, v) in Counters::NAMES.iter().zip(mine) {
            s.extra.insert(format!("rank0_{name}"), v);
        }
        s.extra.insert("ranks".into(), f64::from(self.ranks));
        if self.ranks > 1 {
            // Pending frees stay pending: this message carries none.
            let mut msg = vec![STATS];
            msg.extend_from_slice(&0u64.to_le_bytes());
            comm::send_control(&world(), &msg, &mut CommStats::default());
            let all = comm::sum_to_root(&world(), &[0.0; Counters::NAMES.len()]);
            for (name, v) in Counters::NAMES.iter().zip(all) {
                s.extra.insert(format!("workers_{name}"), v);
            }
        }
        s
    }
}
