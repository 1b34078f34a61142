//! Whole-array reductions by chunks: each rank computes the partials of its chunks
//! through the child (the kernel recast as rows of `CHUNK` elements), every rank gets all
//! partials and folds them in chunk order, then runs the epilogue.

use super::{original_instr, world, BufferMemory, ClusterEngine};
use crate::comm::{self, Memory};
use crate::plan::start_ranges_at;
use hassium_core::{Base, BaseId, Batch, Kernel, Operand, View};
use hassium_engine_abi::{Buffers, Error, HostBuffer};
use std::time::Instant;

impl ClusterEngine {
    /// A whole-array reduction cut into chunks: this rank's partials by the child (the
    /// kernel recast as rows of `CHUNK` elements reduced along the rows, which the cpu
    /// engine computes exactly as its chunk partials), every rank's partials to every
    /// rank, and the fold in chunk order on every rank. Collective: every rank calls it,
    /// failed or not.
    pub(super) fn run_chunks(
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
}

/// Ids of the scratch bases holding a rank's partials, one per reduction (the runtime
/// counts up from 1; ranges' temporaries from `RANGE_TEMPS`, far below).
const SCRATCH: u64 = u64::MAX - (1 << 32);

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
        start_ranges_at(&mut b, &mut instrs, &mut contracted, start);
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
pub(super) fn is_epilogue(i: &hassium_core::Instr) -> bool {
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
