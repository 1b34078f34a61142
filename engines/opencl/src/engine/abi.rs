//! The `Engine` trait's calls (capabilities, execute, sync, free) and the statistics.

use super::OpenClEngine;
use crate::error::{Error, Result};
use hassium_core::{BaseId, Batch, Capabilities, Kernel};
use hassium_engine_abi::{
    slowest_kernels, Buffers, Engine, EngineStats, HostBuffer, MAX_KERNEL_STATS,
};
use std::time::Instant;

impl OpenClEngine {
    /// An error in a process forked from the one that created the engine: the driver's
    /// threads did not come along, and a call into the context there can wait forever.
    fn check_process(&self) -> Result<()> {
        if hassium_engine_abi::process_generation() == self.process {
            return Ok(());
        }
        Err(Error::Forked {
            parent: self.pid,
            child: std::process::id(),
        })
    }

    /// `sync` once a read-back is needed: reads the device copy back (the blocking read
    /// waits for everything queued before it, the in-order queue's one wait), unless the
    /// bridge wrote the host copy itself.
    fn sync_inner(&mut self, base: BaseId, host: &HostBuffer) -> Result<()> {
        if host.host_dirty != 0 {
            // The bridge wrote the host copy: it is the current one, once nothing queued
            // still reads the old one.
            self.mem.finish()?;
            self.mem.host_written(base);
            return Ok(());
        }
        self.mem.download(base, Some(host))
    }
}

impl Engine for OpenClEngine {
    fn name(&self) -> &str {
        "opencl"
    }

    /// What the device and the child together run: every kernel the device cannot run
    /// (fp64 without `cl_khr_fp64`, complex, matmul, …) goes to the child, so the fuser may
    /// build anything the child accepts. Kernels are bounded by the device's argument
    /// space (one pointer per buffer).
    fn capabilities(&self) -> Capabilities {
        let mut c = self.child.capabilities();
        let max_bufs = (self.info.max_parameter_size / 8).saturating_sub(8).max(1);
        c.max_kernel_operands = c.max_kernel_operands.min(max_bufs);
        // A held-back row needs a second pass after every work-item has read its old
        // values: one launch has no such barrier, so these stay two kernels here.
        c.lagged_writes = false;
        c
    }

    fn execute(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
    ) -> hassium_engine_abi::Result<()> {
        self.check_process()?;
        let start = Instant::now();
        let r = self.execute_inner(batch, kernels, buffers);
        if r.is_err() {
            // Leave the queue idle so the next call starts clean.
            let _ = self.mem.finish();
        }
        self.stats.execute_seconds += start.elapsed().as_secs_f64();
        Ok(r?)
    }

    fn sync(&mut self, base: BaseId, host: &HostBuffer) -> hassium_engine_abi::Result<()> {
        if host.host_dirty == 0 && self.mem.host_current(base) {
            // Nothing to read back and nothing queued can change that: no need to wait
            // for the queue (an element read in a Python loop syncs every time).
            return Ok(());
        }
        self.check_process()?;
        let start = Instant::now();
        let r = self.sync_inner(base, host);
        // Waiting for queued kernels and reading results back: execute only enqueues.
        self.sync_seconds += start.elapsed().as_secs_f64();
        Ok(r?)
    }

    fn free(&mut self, base: BaseId) -> hassium_engine_abi::Result<()> {
        if self.check_process().is_err() {
            // Releasing device memory from a forked process could wait forever: leak it
            // (the parent owns it).
            return Ok(());
        }
        self.mem.free(base);
        self.child.free(base)
    }

    fn stats(&self) -> EngineStats {
        let mut s = self.stats.clone();
        s.extra.insert("sync_seconds".into(), self.sync_seconds);
        let m = self.mem.stats;
        if s.execute_seconds > 0.0 {
            s.extra.insert(
                "gb_per_s".into(),
                s.bytes_moved as f64 / s.execute_seconds / 1e9,
            );
        }
        s.extra
            .insert("bytes_to_device".into(), m.bytes_to_device as f64);
        s.extra
            .insert("bytes_to_host".into(), m.bytes_to_host as f64);
        s.extra.insert("evictions".into(), m.evictions as f64);
        s.extra
            .insert("device_pool_hits".into(), m.pool_hits as f64);
        s.extra
            .insert("device_allocations".into(), m.allocations as f64);
        s.extra
            .insert("device_bytes_held".into(), self.mem.held() as f64);
        s.extra
            .insert("device_buffers_pooled".into(), self.mem.pooled() as f64);
        s.extra
            .insert("fp64_on_device".into(), f64::from(u8::from(self.fp64)));
        // What the host asked of the queue: the per-kernel round trips a GPU pays for.
        for (name, v) in [
            ("launches", m.launches),
            ("writes", m.writes),
            ("reads", m.reads),
            ("waits", m.waits),
        ] {
            s.extra.insert(name.into(), v as f64);
        }
        if self.cfg.profile {
            // The slowest kernels by their device time, as the cpu engine lists them.
            let timed = self.kernel_stats.iter().map(|(key, k)| {
                let mut k = k.clone();
                k.seconds = self.mem.kernel_times.get(key).copied().unwrap_or(0.0);
                if k.seconds > 0.0 {
                    k.gb_per_s = k.bytes_moved as f64 / k.seconds / 1e9;
                }
                k
            });
            s.kernels = slowest_kernels(timed, MAX_KERNEL_STATS);
            s.extra
                .insert("device_kernel_seconds".into(), m.kernel_seconds);
            s.extra
                .insert("device_write_seconds".into(), m.write_seconds);
            s.extra.insert("device_read_seconds".into(), m.read_seconds);
        }
        let child = self.child.stats();
        s.extra
            .insert("child_kernels_run".into(), child.kernels_run as f64);
        s
    }
}
