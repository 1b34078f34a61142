//! The engine: rank 0 runs the program and broadcasts each flush; every other rank runs
//! [`ClusterEngine::serve`] from the moment the engine is created and never returns to
//! the program. Every rank then runs the same plan on its own memory through its child
//! engine.

use crate::comm::{self, CommStats, Memory};
use crate::config::ClusterConfig;
use crate::layout::Layout;
use crate::plan::{
    aligned_layout, piece, plan, replicated_writes, start_ranges_at, Cut, RANGE_TEMPS,
};
use hassium_core::{Base, BaseId, Batch, Capabilities, IdMap, Kernel, Operand, View};
use hassium_engine_abi::{
    decode_call, encode_call, Buffers, Engine, EngineContext, EngineStats, Error, HostBuffer,
    Result,
};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::collections::HashSet;
use std::time::Instant;

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
}

impl Counters {
    const NAMES: [&'static str; 12] = [
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
    ];

    fn values(&self) -> [f64; 12] {
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
        let _ = RANK0_PID.set(std::process::id());
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(end_workers) };
        Ok(Box::new(engine))
    }

    /// A worker's life: answer rank 0's messages until it ends the program.
    fn serve(&mut self) -> ! {
        loop {
            let msg = comm::receive_control(&world(), &mut self.counters.comm);
            let Some((&kind, rest)) = msg.split_first() else {
                comm::abort(&world(), "empty control message");
            };
            let rest = match self.apply_frees(rest) {
                Ok(r) => r,
                Err(e) => comm::abort(&world(), &e),
            };
            match kind {
                EXECUTE => self.serve_execute(rest),
                SYNC => {
                    let id = BaseId(read_u64(rest, 0).unwrap_or(0));
                    let extent = read_u64(rest, 8).zip(read_u64(rest, 16));
                    self.sync_home(id, None, extent);
                }
                STATS => {
                    comm::sum_to_root(&world(), &self.counters.values());
                }
                EXIT => {
                    comm::finish();
                    std::process::exit(0);
                }
                k => comm::abort(&world(), &format!("unknown control message {k}")),
            }
        }
    }

    fn serve_execute(&mut self, msg: &[u8]) {
        let decoded = (|| -> std::result::Result<_, String> {
            let n = read_u64(msg, 0).ok_or("short message")? as usize;
            let mut dirty = Vec::with_capacity(n);
            for i in 0..n {
                dirty.push(BaseId(read_u64(msg, 8 + 8 * i).ok_or("short message")?));
            }
            let call = msg.get(8 + 8 * n..).ok_or("short message")?;
            let (batch, kernels) = decode_call(call).map_err(|e| e.to_string())?;
            Ok((dirty, batch, kernels))
        })();
        let (dirty, batch, kernels) = match decoded {
            Ok(d) => d,
            Err(e) => comm::abort(&world(), &format!("a flush from rank 0 is unreadable: {e}")),
        };
        self.allocate(&batch, &kernels);
        let mut buffers = Buffers::with_capacity(self.store.len());
        for (&id, l) in self.store.iter_mut() {
            buffers.insert(HostBuffer {
                base: id.0,
                data: l.map.as_mut_ptr(),
                nelem: l.nelem,
                dtype: l.dtype,
                host_dirty: 0,
            });
        }
        match self.run(&batch, &kernels, &buffers, &dirty) {
            Err((_, true)) => {} // agreed already
            Ok(()) => {
                self.agree(&batch, None);
            }
            Err((e, false)) => {
                self.agree(&batch, Some(e));
            }
        }
    }

    /// Gives a worker memory for every base the kernels keep in memory.
    fn allocate(&mut self, batch: &Batch, kernels: &[Kernel]) {
        for k in kernels {
            for &id in k.reads.iter().chain(&k.writes) {
                if self.store.contains_key(&id) {
                    continue;
                }
                let Some(base) = batch.base(id) else { continue };
                let bytes = base.nelem * base.dtype.size();
                let map = match self.pool.take(bytes) {
                    Ok(m) => m,
                    Err(e) => comm::abort(
                        &world(),
                        &format!("cannot map {bytes} bytes for base {}: {e}", id.0),
                    ),
                };
                self.store.insert(
                    id,
                    Local {
                        map,
                        dtype: base.dtype as u8,
                        nelem: base.nelem as u64,
                    },
                );
            }
        }
    }

    /// Reads the frees at the head of a control message and applies them.
    fn apply_frees<'a>(&mut self, msg: &'a [u8]) -> std::result::Result<&'a [u8], String> {
        let n = read_u64(msg, 0).ok_or("short message")? as usize;
        for i in 0..n {
            let id = BaseId(read_u64(msg, 8 + 8 * i).ok_or("short message")?);
            self.forget(id);
        }
        Ok(&msg[8 + 8 * n..])
    }

    fn forget(&mut self, id: BaseId) {
        self.layouts.remove(&id);
        self.stale.remove(&id);
        if let Some(l) = self.store.remove(&id) {
            self.pool.give(l.map);
        }
        let _ = self.child.free(id);
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
            if let Err(e) =
                comm::exchange(&world(), &phase.needs, &mut mem, &mut self.counters.comm)
            {
                failure.get_or_insert(Error::Other(e));
            }
            let mut mine: Vec<Kernel> = Vec::with_capacity(phase.kernels.len());
            for &ki in &phase.kernels {
                let k = &plan.kernels[ki];
                if plan.gathered.contains(&ki) {
                    self.note_gathered(batch, k, &phase.needs);
                }
                match &plan.cuts[ki] {
                    Cut::Whole => mine.push(k.clone()),
                    Cut::Rows { ranges, flat } => {
                        let (i0, i1) = ranges[self.rank as usize];
                        self.mark_stale(k);
                        for &i in k.instrs.iter().filter(|_| i1 > i0) {
                            let instr = &mut local.instrs[i];
                            instr.out = piece(&batch.instrs[i].out, *flat, i0, i1);
                            for (o, orig) in instr.ins.iter_mut().zip(&batch.instrs[i].ins) {
                                if let (Operand::View(v), Some(ov)) = (o, orig.as_view()) {
                                    *v = piece(ov, *flat, i0, i1);
                                }
                            }
                        }
                        if i1 > i0 {
                            let mut kk = k.clone();
                            let per_row: usize = k.shape[1..].iter().product();
                            let start = if *flat { i0 } else { i0 * per_row };
                            if *flat {
                                kk.shape = [i1 - i0].into_iter().collect();
                            } else {
                                kk.shape[0] = i1 - i0;
                            }
                            let mut next = RANGE_TEMPS;
                            start_ranges_at(
                                &mut local,
                                &mut kk.instrs,
                                &mut kk.contracted,
                                start,
                                &mut next,
                            );
                            mine.push(kk);
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

    /// A whole-array reduction cut into chunks: this rank's partials by the child (the
    /// kernel recast as rows of `CHUNK` elements reduced along the rows, which the cpu
    /// engine computes exactly as its chunk partials), every rank's partials to every
    /// rank, and the fold in chunk order on every rank. Collective: every rank calls it,
    /// failed or not.
    fn run_chunks(
        &mut self,
        batch: &Batch,
        k: &Kernel,
        ranges: &[(usize, usize)],
        buffers: &Buffers,
        failure: &mut Option<Error>,
    ) {
        let chunk = hassium_codegen::CHUNK;
        let reds: Vec<usize> = (k.instrs.iter().copied())
            .filter(|&i| batch.instrs[i].op.is_reduction())
            .collect();
        let sizes: Vec<usize> = reds
            .iter()
            .map(|&i| batch.instrs[i].out.dtype.size())
            .collect();
        let row_bytes: usize = sizes.iter().sum();
        let chunks_of = |r: usize| (ranges[r].1 - ranges[r].0).div_ceil(chunk);
        let (i0, i1) = ranges[self.rank as usize];
        let mine = chunks_of(self.rank as usize);
        // One scratch array of partials per reduction, 16-byte aligned for the kernels.
        let mut scratch: Vec<Vec<u128>> = sizes
            .iter()
            .map(|s| vec![0u128; (mine * s).div_ceil(16)])
            .collect();
        if mine > 0 && failure.is_none() {
            let (b, ks, bufs) = chunk_call(batch, k, &reds, i0, i1, &mut scratch, buffers);
            let t = Instant::now();
            if let Err(e) = self.child.execute(&b, &ks, &bufs) {
                *failure = Some(original_instr(e, batch, k));
            }
            self.counters.compute_seconds += t.elapsed().as_secs_f64();
        }
        let mut local = Vec::with_capacity(mine * row_bytes);
        for (s, size) in scratch.iter().zip(&sizes) {
            // SAFETY: a u128 vector viewed as its bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, s.len() * 16) };
            local.extend_from_slice(&bytes[..mine * size]);
        }
        let counts: Vec<usize> = (0..self.ranks as usize)
            .map(|r| chunks_of(r) * row_bytes)
            .collect();
        let all = match comm::all_gather_bytes(&world(), &local, &counts, &mut self.counters.comm) {
            Ok(a) => a,
            Err(e) => {
                failure.get_or_insert(Error::Other(e));
                return;
            }
        };
        let starts: Vec<usize> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut order: Vec<usize> = (0..self.ranks as usize)
            .filter(|&r| chunks_of(r) > 0)
            .collect();
        order.sort_by_key(|&r| ranges[r].0);
        // Results the kernel kept in registers (an epilogue reads them) get memory here.
        let mut held: Vec<Vec<u128>> = Vec::new();
        let mut bufs = Buffers::new(&buffers.to_vec());
        for &i in &reds {
            let o = &batch.instrs[i].out;
            if k.contracted.contains(&o.base) {
                let n = batch.base(o.base).map_or(1, |b| b.nelem);
                held.push(vec![0u128; (n * o.dtype.size()).div_ceil(16).max(1)]);
                let data = held.last_mut().expect("pushed").as_mut_ptr() as *mut u8;
                bufs.insert(HostBuffer {
                    base: o.base.0,
                    data,
                    nelem: n as u64,
                    dtype: o.dtype as u8,
                    host_dirty: 0,
                });
            }
        }
        let mut mem = BufferMemory(&bufs);
        for (j, &i) in reds.iter().enumerate() {
            let instr = &batch.instrs[i];
            let before: usize = sizes[..j].iter().sum();
            let mut partials = Vec::new();
            for &r in &order {
                let at = starts[r] + chunks_of(r) * before;
                partials.extend_from_slice(&all[at..at + chunks_of(r) * sizes[j]]);
            }
            let Some((out, size)) = mem.bytes(instr.out.base) else {
                let msg = format!("base {} has no memory", instr.out.base.0);
                failure.get_or_insert(Error::Other(msg));
                continue;
            };
            let at = instr.out.offset as usize * size;
            crate::fold::fold(
                instr.op,
                instr.out.dtype,
                &partials,
                &mut out[at..at + size],
            );
        }
        // The epilogue, on the folded scalars, on every rank.
        let epilogue: hassium_core::KernelInstrs = (k.instrs.iter().copied())
            .filter(|&i| is_epilogue(&batch.instrs[i]))
            .collect();
        if epilogue.is_empty() || failure.is_some() {
            return;
        }
        let mut reads: Vec<BaseId> = Vec::new();
        let mut writes: Vec<BaseId> = Vec::new();
        let mut contracted = hassium_core::KernelBases::new();
        for &i in &epilogue {
            let instr = &batch.instrs[i];
            for v in instr.ins.iter().filter_map(|o| o.as_view()) {
                if bufs.get(v.base).is_some() && !reads.contains(&v.base) {
                    reads.push(v.base);
                }
            }
            if k.contracted.contains(&instr.out.base) {
                if !contracted.contains(&instr.out.base) {
                    contracted.push(instr.out.base);
                }
            } else if !writes.contains(&instr.out.base) {
                writes.push(instr.out.base);
            }
        }
        reads.sort_unstable();
        writes.sort_unstable();
        let kernel = Kernel {
            instrs: epilogue,
            shape: Default::default(),
            contracted,
            reads: reads.into_iter().collect(),
            writes: writes.into_iter().collect(),
        };
        let t = Instant::now();
        if let Err(e) = self.child.execute(batch, &[kernel], &bufs) {
            *failure = Some(e);
        }
        self.counters.compute_seconds += t.elapsed().as_secs_f64();
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

/// True when `k` can fail on the values it reads: index operations (an index out of
/// range) and integer powers (a negative exponent).
fn fallible(batch: &Batch, k: &Kernel) -> bool {
    k.instrs.iter().any(|&i| {
        let x = &batch.instrs[i];
        x.op.class() == hassium_core::OpClass::Index
            || (x.op == hassium_core::Opcode::Power && x.out.dtype.is_integer())
    })
}

/// `e` naming the batch's instruction where it names a copy [`chunk_call`] appended
/// for a chunked reduction's last, short chunk.
fn original_instr(e: Error, batch: &Batch, k: &Kernel) -> Error {
    match e {
        Error::Bytecode(hassium_core::Error::Failed {
            index,
            op,
            source,
            wrote_nothing,
        }) if index >= batch.instrs.len() => {
            let copied: Vec<usize> = (k.instrs.iter().copied())
                .filter(|&i| !is_epilogue(&batch.instrs[i]))
                .collect();
            Error::Bytecode(hassium_core::Error::Failed {
                index: copied
                    .get(index - batch.instrs.len())
                    .copied()
                    .unwrap_or(index),
                op,
                source,
                wrote_nothing,
            })
        }
        e => e,
    }
}

/// Bit of a [`comm::FailureInfo`] kind: the failing kernel wrote nothing.
const WROTE_NOTHING: u32 = 1 << 31;

/// What of `e` travels to rank 0.
fn failure_info(e: &Error) -> comm::FailureInfo {
    match e {
        Error::Bytecode(c @ hassium_core::Error::Failed { index, source, .. }) => {
            comm::FailureInfo {
                index: *index as u64,
                kind: source.root().kind() | if c.wrote_nothing() { WROTE_NOTHING } else { 0 },
                message: source.root().to_string(),
            }
        }
        e => comm::FailureInfo {
            index: u64::MAX,
            kind: 0,
            message: e.to_string(),
        },
    }
}

/// Rank `who`'s failure `f` as the error rank 0 raises: the failure of an instruction
/// as such (so the runtime completes the batch after it), anything else by its message.
fn failure_error(batch: &Batch, who: i32, f: comm::FailureInfo) -> Error {
    match usize::try_from(f.index)
        .ok()
        .and_then(|i| batch.instrs.get(i))
    {
        Some(instr) => Error::Bytecode(hassium_core::Error::Failed {
            index: f.index as usize,
            op: instr.op.name(),
            source: Box::new(hassium_core::Error::from_kind(
                f.kind & !WROTE_NOTHING,
                f.message,
            )),
            wrote_nothing: f.kind & WROTE_NOTHING != 0,
        }),
        None => Error::Engine {
            engine: "cluster".into(),
            message: format!("rank {who}: {}", f.message),
        },
    }
}

/// Ids of the scratch bases holding a rank's partials (the runtime counts up from 1).
const SCRATCH: u64 = u64::MAX - 1024;

/// The child call computing this rank's chunk partials of reduction kernel `k` over
/// elements `[i0, i1)`: whole chunks as rows of `CHUNK`, a last short chunk as one more
/// row, each reduction writing its row results into its scratch array.
fn chunk_call(
    batch: &Batch,
    k: &Kernel,
    reds: &[usize],
    i0: usize,
    i1: usize,
    scratch: &mut [Vec<u128>],
    buffers: &Buffers,
) -> (Batch, Vec<Kernel>, Buffers) {
    let chunk = hassium_codegen::CHUNK;
    let mut b = batch.clone();
    let mut bufs = Buffers::new(&buffers.to_vec());
    let full = (i1 - i0) / chunk;
    let tail = (i1 - i0) % chunk;
    let rows = full + usize::from(tail > 0);
    let mut writes: Vec<BaseId> = Vec::new();
    for (j, &i) in reds.iter().enumerate() {
        let id = BaseId(SCRATCH + j as u64);
        let dtype = batch.instrs[i].out.dtype;
        b.bases.insert(
            id,
            Base {
                id,
                dtype,
                nelem: rows,
            },
        );
        bufs.insert(HostBuffer {
            base: id.0,
            data: scratch[j].as_mut_ptr() as *mut u8,
            nelem: rows as u64,
            dtype: dtype as u8,
            host_dirty: 0,
        });
        writes.push(id);
    }
    // (first element, rows, row length, first output slot) of each part.
    let mut parts = Vec::new();
    if full > 0 {
        parts.push((i0, full, chunk, 0));
    }
    if tail > 0 {
        parts.push((i0 + full * chunk, 1, tail, full));
    }
    let mut kernels = Vec::new();
    let mut next = RANGE_TEMPS;
    for (n, &(start, rows, cols, slot)) in parts.iter().enumerate() {
        let mut instrs = hassium_core::KernelInstrs::new();
        for &i in k.instrs.iter().filter(|&&i| !is_epilogue(&batch.instrs[i])) {
            let mut instr = batch.instrs[i].clone();
            for o in instr.ins.iter_mut() {
                if let Operand::View(v) = o {
                    *v = as_rows(v, start, rows, cols);
                }
            }
            if let Some(j) = reds.iter().position(|&r| r == i) {
                instr.axis = Some(1);
                instr.out = View {
                    base: BaseId(SCRATCH + j as u64),
                    dtype: instr.out.dtype,
                    offset: slot as isize,
                    shape: [rows].into_iter().collect(),
                    strides: [1].into_iter().collect(),
                };
            } else {
                instr.out = as_rows(&instr.out, start, rows, cols);
            }
            // The first part rewrites the kernel's own instructions; a second one
            // appends its copies.
            if n == 0 {
                b.instrs[i] = instr;
                instrs.push(i);
            } else {
                b.instrs.push(instr);
                instrs.push(b.instrs.len() - 1);
            }
        }
        // Bases the body keeps in memory, and registers it still uses (a reduction's
        // result now goes to scratch memory; the epilogue's scalars are not here).
        let named = |id: &BaseId| {
            instrs.iter().any(|&i| {
                let x = &b.instrs[i];
                x.out.base == *id || x.ins.iter().any(|o| o.base() == Some(*id))
            })
        };
        let mut contracted = k.contracted.iter().copied().filter(named).collect();
        let mut all_writes: Vec<BaseId> = (k.writes.iter().copied())
            .filter(|id| named(id))
            .chain(writes.iter().copied())
            .collect();
        all_writes.sort_unstable();
        let reads = k.reads.iter().copied().filter(named).collect();
        // A range's values continue from the part's first element.
        start_ranges_at(&mut b, &mut instrs, &mut contracted, start, &mut next);
        kernels.push(Kernel {
            instrs,
            shape: [rows, cols].into_iter().collect(),
            contracted,
            reads,
            writes: all_writes.into_iter().collect(),
        });
    }
    (b, kernels, bufs)
}

/// True for an instruction of a chunked reduction's epilogue: an elementwise operation
/// on scalars (the reductions' results), run after the fold.
fn is_epilogue(i: &hassium_core::Instr) -> bool {
    i.op.is_elementwise() && i.out.shape.is_empty()
}

/// Elements `[start, start + rows * cols)` of 1-D view `v` as `rows` rows of `cols`.
fn as_rows(v: &View, start: usize, rows: usize, cols: usize) -> View {
    let s = v.strides[0];
    View {
        base: v.base,
        dtype: v.dtype,
        offset: v.offset + start as isize * s,
        shape: [rows, cols].into_iter().collect(),
        strides: [cols as isize * s, s].into_iter().collect(),
    }
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

/// The process that started MPI as rank 0. A process forked from it shares its MPI
/// connections and must never use them: it would corrupt rank 0's.
static RANK0_PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// The error for any use of the engine in a forked process.
fn check_not_forked() -> Result<()> {
    match RANK0_PID.get() {
        Some(&pid) if pid != std::process::id() => Err(Error::Engine {
            engine: "cluster".into(),
            message: "this process was forked from rank 0, and MPI does not survive fork: \
                      compute in the parent, or start the child with the multiprocessing \
                      'spawn' method on another stack"
                .into(),
        }),
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
