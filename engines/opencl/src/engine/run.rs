//! Running one kernel: on the child engine, or on the device with its arguments uploaded.

use super::OpenClEngine;
use crate::error::{Error, Result};
use crate::memory::Command;
use crate::program::Built;
use hassium_codegen::{Lowered, Plan, LANES, WIDE};
use hassium_core::{BaseId, Batch, Kernel};
use hassium_engine_abi::{Buffers, HostBuffer, KernelStats};
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::HashSet;

/// A kernel's argument values on the device (scalars and the `meta` array).
struct ArgBufs {
    scal: Buffer<u8>,
    scal_len: usize,
    meta: Buffer<u8>,
    meta_len: usize,
}

impl OpenClEngine {
    /// Runs one kernel on the child engine: its inputs (and partly written outputs) come
    /// home from the device first; afterwards the device copies of its outputs are stale.
    pub(super) fn run_on_child(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        buffers: &Buffers,
    ) -> Result<()> {
        self.mem.finish()?;
        let touched: Vec<BaseId> = kernel.reads.iter().chain(&kernel.writes).copied().collect();
        let mut lent = Buffers::default();
        for &id in &touched {
            self.mem.download(id, buffers.get(id))?;
        }
        for hb in buffers.iter() {
            // The child may keep copies of its own: everything it is handed is news.
            lent.insert(HostBuffer {
                host_dirty: 1,
                ..*hb
            });
        }
        self.child
            .execute(batch, std::slice::from_ref(kernel), &lent)?;
        for &id in &kernel.writes {
            if let Some(hb) = buffers.get(id) {
                self.child.sync(id, hb)?;
            }
            self.mem.host_written(id);
        }
        Ok(())
    }

    /// True when the kernel overwrites every element of `id` without reading it first, so
    /// a stale device copy need not be uploaded.
    pub(super) fn overwrites(batch: &Batch, kernel: &Kernel, id: BaseId) -> bool {
        if kernel.reads.contains(&id) {
            return false;
        }
        let Some(base) = batch.base(id) else {
            return false;
        };
        kernel.instrs.iter().any(|&k| {
            let i = &batch.instrs[k];
            !i.reads_output()
                && i.out.base == id
                && i.out.offset == 0
                && i.out.nelem() == base.nelem
                && i.out.is_contiguous()
        })
    }

    /// Uploads a kernel's scalars and `meta` array without waiting: the queue is in
    /// order, so the kernel reads them after the writes, and the host copies stay alive
    /// until the queue drains.
    fn args(&mut self, l: &Lowered, pinned: &HashSet<BaseId>) -> Result<ArgBufs> {
        let scal: Vec<u8> = l.scalars.iter().flat_map(|s| s.to_le_bytes()).collect();
        let meta: Vec<u8> = l.meta.iter().flat_map(|m| m.to_le_bytes()).collect();
        let (scal_len, meta_len) = (scal.len(), meta.len());
        let mut scal_buf = self.mem.scratch(scal_len, pinned)?;
        self.mem.write_owned(&mut scal_buf, scal)?;
        let mut meta_buf = self.mem.scratch(meta_len, pinned)?;
        self.mem.write_owned(&mut meta_buf, meta)?;
        Ok(ArgBufs {
            scal: scal_buf,
            scal_len,
            meta: meta_buf,
            meta_len,
        })
    }

    /// Runs one built kernel on the device according to its plan.
    pub(super) fn run_on_device(
        &mut self,
        batch: &Batch,
        kernel: &Kernel,
        (l, key): (&Lowered, u128),
        built: &Built,
    ) -> Result<()> {
        let pinned: HashSet<BaseId> = l.slots.iter().copied().collect();
        for &id in &l.slots {
            let need = !Self::overwrites(batch, kernel, id);
            self.mem.prepare(id, need, &pinned)?;
        }
        let args = self.args(l, &pinned)?;
        let checks = kernel
            .instrs
            .iter()
            .any(|&k| batch.instrs[k].can_fail_when_run());
        if checks {
            self.mem.write_owned(&mut self.err, vec![0u8; 32])?;
        }
        let (part, part_len) = match l.plan {
            Plan::Partials { chunks, slots, .. } => {
                let n = chunks * slots.max(1) * 16;
                (Some(self.mem.scratch(n, &pinned)?), n)
            }
            _ => (None, 0),
        };
        let bufs: Vec<cl_mem> = l
            .slots
            .iter()
            .map(|id| self.mem.buffer(*id).map(|b| b.get()))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::Config("a kernel buffer vanished".into()))?;
        let part_mem = part.as_ref().map_or(self.err.get(), |p| p.get());
        let set = |k: &opencl3::kernel::Kernel, begin: i64, end: i64| -> Result<()> {
            let e = |e| Error::cl("clSetKernelArg", e);
            // SAFETY: the arguments follow the rendered signature: begin, end, one buffer
            // per slot, scal, meta, part, err; every buffer is live until the queue is
            // finished.
            unsafe {
                k.set_arg(0, &begin).map_err(e)?;
                k.set_arg(1, &end).map_err(e)?;
                let mut a = 2;
                for m in &bufs {
                    k.set_arg(a, m).map_err(e)?;
                    a += 1;
                }
                k.set_arg(a, &args.scal.get()).map_err(e)?;
                k.set_arg(a + 1, &args.meta.get()).map_err(e)?;
                k.set_arg(a + 2, &part_mem).map_err(e)?;
                k.set_arg(a + 3, &self.err.get()).map_err(e)?;
            }
            Ok(())
        };
        let mut launched = Vec::new();
        let mut launch = |k: &opencl3::kernel::Kernel, items: usize, local: usize| -> Result<()> {
            // Arguments were set above.
            launched.push(enqueue(&self.mem.queue, k, items, local)?);
            Ok(())
        };
        match l.plan {
            Plan::Empty => {}
            Plan::Lagged { .. } => {
                return Err(Error::Config(
                    "held-back writes reached the device; they belong to the child".into(),
                ))
            }
            // One work-item walks the whole range, in order (scatters' update order).
            Plan::Serial { extent } => {
                set(&built.main, 0, extent as i64)?;
                launch(&built.main, 1, 1)?;
            }
            Plan::Parallel { extent, inner } if l.group_rows() => {
                lanes_fit(built)?;
                set(&built.main, 0, extent as i64)?;
                // No wider than a row needs (`inner` bounds its length): every multiple
                // of LANES gives the same result.
                let wide = built
                    .local
                    .min(WIDE)
                    .min(inner.next_multiple_of(LANES))
                    .max(LANES);
                launch(&built.main, extent * wide, wide)?;
            }
            Plan::Parallel { extent, .. } if l.tiled_rows() => {
                set(&built.main, 0, extent as i64)?;
                let rows = l.tile_rows(built.local);
                launch(
                    &built.main,
                    extent.div_ceil(rows) * built.local,
                    built.local,
                )?;
            }
            Plan::Parallel { extent, .. } => {
                set(&built.main, 0, extent as i64)?;
                let step = if l.outer_item_per_column() {
                    1
                } else {
                    l.parallel_step()
                };
                launch(&built.main, extent.div_ceil(step), built.local)?;
            }
            Plan::Partials { extent, chunks, .. } => {
                set(&built.main, 0, extent as i64)?;
                if l.group_partials() {
                    lanes_fit(built)?;
                    // Any multiple of LANES up to WIDE gives the same result; `local` is
                    // a power of two, so at least LANES is one.
                    let wide = built.local.clamp(LANES, WIDE);
                    launch(&built.main, chunks * wide, wide)?;
                } else if l.group_row_partials() {
                    let wide = built.local.min(WIDE);
                    launch(&built.main, chunks * wide, wide)?;
                } else if l.item_per_column() {
                    launch(&built.main, chunks * l.fin_columns(), built.local)?;
                } else {
                    launch(&built.main, chunks, built.local)?;
                }
                let fin = built
                    .fin
                    .as_ref()
                    .ok_or_else(|| Error::Config("partial reduction without a combiner".into()))?;
                set(fin, 0, chunks as i64)?;
                if l.group_fin() {
                    let wide = built.fin_local.min(WIDE);
                    launch(fin, wide, wide)?;
                } else if l.fin_columns() > 0 {
                    launch(fin, l.fin_columns(), built.fin_local)?;
                } else {
                    launch(fin, 1, 1)?;
                }
            }
        }
        for event in launched {
            self.mem.track_kernel(Command::Kernel, event, Some(key));
        }
        if self.cfg.profile {
            let elements = l.elements as u64;
            self.kernel_stats
                .entry(key)
                .or_insert_with(|| KernelStats {
                    key: format!("{key:032x}"),
                    instrs: kernel.instrs.len() as u64,
                    ..KernelStats::default()
                })
                .add(0.0, l.bytes, elements);
        }
        if checks {
            // The runtime stops a batch at its first failing kernel (later kernels may
            // overwrite what it read), so this read waits for the kernel to finish.
            let mut words = [0u8; 32];
            // SAFETY: 32 bytes into a 32-byte array; blocking.
            let event = unsafe {
                self.mem
                    .queue
                    .enqueue_read_buffer(&self.err, CL_BLOCKING, 0, &mut words, &[])
            }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e))?;
            self.mem.stats.waits += 1;
            self.mem.track(Command::Read, event);
            let w =
                |i: usize| i64::from_le_bytes(words[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
            if w(2) != 0 {
                let e = hassium_core::status_error(w(2), &[w(0), w(1)]);
                return Err(Error::Bytecode(kernel.error_in(batch, e)));
            }
        }
        self.mem.recycle(args.scal_len, args.scal);
        self.mem.recycle(args.meta_len, args.meta);
        if let Some(p) = part {
            self.mem.recycle(part_len, p);
        }
        for &id in &kernel.writes {
            self.mem.device_written(id);
        }
        self.stats.kernels_run += 1;
        self.stats.bytes_moved += l.bytes;
        Ok(())
    }
}

/// Launches `k` (its arguments set) over `items` work-items in groups of `local`, the
/// global size rounded up to a whole group.
pub(super) fn enqueue(
    queue: &opencl3::command_queue::CommandQueue,
    k: &opencl3::kernel::Kernel,
    items: usize,
    local: usize,
) -> Result<opencl3::event::Event> {
    let local = local.max(1);
    let global = items.div_ceil(local).max(1) * local;
    // SAFETY: the caller set every argument; global is a multiple of local.
    unsafe {
        queue.enqueue_nd_range_kernel(
            k.get(),
            1,
            std::ptr::null(),
            [global].as_ptr(),
            [local].as_ptr(),
            &[],
        )
    }
    .map_err(|e| Error::cl("clEnqueueNDRangeKernel", e))
}

/// A reduction rendered for work-groups needs groups of `LANES` items.
fn lanes_fit(built: &Built) -> Result<()> {
    if built.limit < LANES {
        return Err(Error::Config(format!(
            "the device runs this reduction in work-groups of at most {} items; it needs {LANES}",
            built.limit
        )));
    }
    Ok(())
}
