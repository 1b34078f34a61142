//! Device memory: one device buffer per base, mirroring the runtime's host buffer.
//!
//! Each base tracks which copies are current. Data moves lazily: host → device only when
//! a kernel needs the base and the device copy is missing or stale (the runtime's
//! `host_dirty`, or a child engine wrote the host copy); device → host only on `sync` or
//! when the child engine is about to read the base. `free` returns the device buffer to a
//! pool keyed by size, so the next base of that size reuses it without an allocation.
//! When the engine's budget or the device runs out, pooled buffers are released first,
//! then idle bases are evicted to the host; only when that is not enough is it an error.
//!
//! Eviction needs a base's host buffer outside the call that named it: the runtime keeps
//! a base's host buffer at one address for the base's life (it is recycled only after
//! `free`), so the last address seen is remembered and used.

use crate::error::{Error, Result};
use hassium_core::BaseId;
use hassium_engine_abi::HostBuffer;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::error_codes::{ClError, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES};
use opencl3::event::Event;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A remembered host address (see the module documentation for why it stays valid).
#[derive(Clone, Copy)]
struct HostPtr(*mut u8);
// SAFETY: the pointer is only dereferenced on the engine's thread, within calls where the
// runtime guarantees the buffer (see the module documentation).
unsafe impl Send for HostPtr {}

struct Mirror {
    buf: Option<Buffer<u8>>,
    nbytes: usize,
    /// The device copy holds the base's current values.
    device_valid: bool,
    /// The host copy holds the base's current values.
    host_valid: bool,
    host: Option<HostPtr>,
}

/// Counters for `stats()`: data moved, and what the host asked of the queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryStats {
    pub bytes_to_device: u64,
    pub bytes_to_host: u64,
    pub evictions: u64,
    pub pool_hits: u64,
    pub allocations: u64,
    /// Kernels enqueued (a reduction's combiner counts as one).
    pub launches: u64,
    /// Host → device writes enqueued (data and kernel arguments).
    pub writes: u64,
    /// Device → host reads (each waits for the queue).
    pub reads: u64,
    /// Times the host waited for the queue to drain (`clFinish`, blocking reads).
    pub waits: u64,
    /// Device time of the commands profiled (`profile = true`), by kind, in seconds.
    pub kernel_seconds: f64,
    pub write_seconds: f64,
    pub read_seconds: f64,
}

/// What a profiled command did.
#[derive(Clone, Copy)]
pub enum Command {
    Kernel,
    Write,
    Read,
}

pub struct DeviceMemory {
    pub context: std::sync::Arc<Context>,
    pub queue: CommandQueue,
    bases: HashMap<BaseId, Mirror>,
    pool: BTreeMap<usize, Vec<Buffer<u8>>>,
    /// Bytes held in device buffers (live and pooled).
    held: u64,
    limit: u64,
    device: String,
    pub stats: MemoryStats,
    /// Host bytes that non-blocking writes read from, kept until the queue has drained.
    in_flight: Vec<Vec<u8>>,
    /// With `profile = true` (a queue created with profiling), the events of the commands
    /// enqueued since the queue last drained, with the kernel key of a launch; their
    /// device times are added up then.
    profiled: Option<Vec<(Command, Event, Option<u128>)>>,
    /// Profiled device seconds per kernel key (its launches, the combiner's included).
    pub kernel_times: HashMap<u128, f64>,
}

fn is_oom(e: &ClError) -> bool {
    e.0 == CL_MEM_OBJECT_ALLOCATION_FAILURE || e.0 == CL_OUT_OF_RESOURCES
}

/// Device buffers are never empty (OpenCL refuses size 0).
fn alloc_size(nbytes: usize) -> usize {
    nbytes.max(16)
}

impl DeviceMemory {
    pub fn new(
        context: std::sync::Arc<Context>,
        queue: CommandQueue,
        limit: u64,
        device: &str,
        profile: bool,
    ) -> DeviceMemory {
        DeviceMemory {
            context,
            queue,
            bases: HashMap::new(),
            pool: BTreeMap::new(),
            held: 0,
            limit,
            device: device.to_string(),
            stats: MemoryStats::default(),
            in_flight: Vec::new(),
            profiled: profile.then(Vec::new),
            kernel_times: HashMap::new(),
        }
    }

    /// Notes a command just enqueued, for the profile.
    pub fn track(&mut self, kind: Command, event: Event) {
        self.track_kernel(kind, event, None);
    }

    /// [`Self::track`] for a launch of kernel `key`, whose device time is kept per key.
    pub fn track_kernel(&mut self, kind: Command, event: Event, key: Option<u128>) {
        match kind {
            Command::Kernel => self.stats.launches += 1,
            Command::Write => self.stats.writes += 1,
            Command::Read => self.stats.reads += 1,
        }
        if let Some(events) = &mut self.profiled {
            events.push((kind, event, key));
        }
    }

    /// Writes `bytes` into `buf` without waiting: the bytes stay here until the queue
    /// drains.
    pub fn write_owned(&mut self, buf: &mut Buffer<u8>, bytes: Vec<u8>) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: `buf` holds at least `bytes.len()` bytes (callers size it so), and the
        // bytes live in `in_flight` until `finish` has waited for the write.
        let event = unsafe {
            self.queue
                .enqueue_write_buffer(buf, CL_NON_BLOCKING, 0, &bytes, &[])
        }
        .map_err(|e| Error::cl("clEnqueueWriteBuffer", e))?;
        self.in_flight.push(bytes);
        self.track(Command::Write, event);
        Ok(())
    }

    /// Waits for everything enqueued, then lets go of the host bytes writes read from and
    /// adds up the profiled device times.
    pub fn finish(&mut self) -> Result<()> {
        self.stats.waits += 1;
        let done = self.queue.finish().map_err(|e| Error::cl("clFinish", e));
        self.in_flight.clear();
        if let Some(events) = &mut self.profiled {
            for (kind, e, key) in events.drain(..) {
                let (Ok(start), Ok(end)) = (e.profiling_command_start(), e.profiling_command_end())
                else {
                    continue;
                };
                let seconds = end.saturating_sub(start) as f64 * 1e-9;
                match kind {
                    Command::Kernel => self.stats.kernel_seconds += seconds,
                    Command::Write => self.stats.write_seconds += seconds,
                    Command::Read => self.stats.read_seconds += seconds,
                }
                if let Some(k) = key {
                    *self.kernel_times.entry(k).or_default() += seconds;
                }
            }
        }
        done
    }

    /// Takes note of a host buffer the runtime lends: its address, and whether the bridge
    /// wrote it (then the device copy, if any, is stale).
    pub fn note_host(&mut self, hb: &HostBuffer, nbytes: usize) {
        let m = self.bases.entry(BaseId(hb.base)).or_insert(Mirror {
            buf: None,
            nbytes,
            device_valid: false,
            host_valid: true,
            host: None,
        });
        m.host = Some(HostPtr(hb.data));
        if m.nbytes != nbytes {
            // Base ids are never reused by the runtime, but a caller that does so must not
            // get a kernel writing past a buffer sized for the old base.
            if let Some(b) = m.buf.take() {
                self.pool.entry(alloc_size(m.nbytes)).or_default().push(b);
            }
            m.nbytes = nbytes;
            m.device_valid = false;
            m.host_valid = true;
        }
        if hb.host_dirty != 0 {
            m.host_valid = true;
            m.device_valid = false;
        }
    }

    /// Makes sure `id` has a device buffer, uploaded first when `need_data` and the device
    /// copy is not current. `pinned` bases are in use and never evicted.
    pub fn prepare(&mut self, id: BaseId, need_data: bool, pinned: &HashSet<BaseId>) -> Result<()> {
        let Some(m) = self.bases.get(&id) else {
            return Err(Error::Config(format!(
                "base {} reached the OpenCL engine without a host buffer",
                id.0
            )));
        };
        let nbytes = m.nbytes;
        if m.buf.is_none() {
            let buf = self.alloc(alloc_size(nbytes), pinned)?;
            let m = self.bases.get_mut(&id).expect("checked above");
            m.buf = Some(buf);
            m.device_valid = false;
        }
        if need_data && !self.bases[&id].device_valid {
            self.upload(id, pinned)?;
        }
        Ok(())
    }

    /// The device buffer of a base prepared earlier in this call.
    pub fn buffer(&self, id: BaseId) -> Option<&Buffer<u8>> {
        self.bases.get(&id).and_then(|m| m.buf.as_ref())
    }

    fn upload(&mut self, id: BaseId, pinned: &HashSet<BaseId>) -> Result<()> {
        for attempt in 0..2 {
            let m = self.bases.get_mut(&id).expect("prepared");
            let Some(host) = m.host else {
                return Err(Error::Config(format!("base {} has no host buffer", id.0)));
            };
            if m.nbytes == 0 {
                m.device_valid = true;
                return Ok(());
            }
            // SAFETY: the runtime keeps `nbytes` bytes at `host` alive and unchanged until
            // the queue is finished at the end of this call.
            let data = unsafe { std::slice::from_raw_parts(host.0, m.nbytes) };
            let buf = m.buf.as_mut().expect("prepared");
            // SAFETY: the buffer holds at least nbytes bytes (alloc_size).
            match unsafe {
                self.queue
                    .enqueue_write_buffer(buf, CL_NON_BLOCKING, 0, data, &[])
            } {
                Ok(event) => {
                    m.device_valid = true;
                    self.stats.bytes_to_device += m.nbytes as u64;
                    self.track(Command::Write, event);
                    return Ok(());
                }
                // Drivers allocate lazily: the first write is where memory runs out.
                Err(e) if is_oom(&e) && attempt == 0 => self.make_room(u64::MAX, pinned)?,
                Err(e) if is_oom(&e) => return Err(self.oom(m_bytes(&self.bases, id))),
                Err(e) => return Err(Error::cl("clEnqueueWriteBuffer", e)),
            }
        }
        Err(self.oom(m_bytes(&self.bases, id)))
    }

    /// Records that a kernel on the device wrote `id`.
    pub fn device_written(&mut self, id: BaseId) {
        if let Some(m) = self.bases.get_mut(&id) {
            m.device_valid = true;
            m.host_valid = false;
        }
    }

    /// Whether the host copy of `id` is current: no device copy, or none written since
    /// the host copy was last made current. Device writes are recorded as their kernels
    /// are enqueued, so this holds with commands still in the queue.
    pub fn host_current(&self, id: BaseId) -> bool {
        self.bases.get(&id).is_none_or(|m| m.host_valid)
    }

    /// Records that the host copy of `id` was written (by the child engine).
    pub fn host_written(&mut self, id: BaseId) {
        if let Some(m) = self.bases.get_mut(&id) {
            m.host_valid = true;
            m.device_valid = false;
        }
    }

    /// Makes the host copy of `id` current, reading the device copy if it is newer.
    pub fn download(&mut self, id: BaseId, host: Option<&HostBuffer>) -> Result<()> {
        let Some(m) = self.bases.get_mut(&id) else {
            return Ok(());
        };
        if let Some(h) = host {
            m.host = Some(HostPtr(h.data));
        }
        if m.host_valid || !m.device_valid {
            return Ok(());
        }
        let (Some(buf), Some(hp)) = (m.buf.as_ref(), m.host) else {
            return Ok(());
        };
        if m.nbytes > 0 {
            // SAFETY: the host buffer holds nbytes bytes and nothing else references it
            // during the (blocking) read.
            let data = unsafe { std::slice::from_raw_parts_mut(hp.0, m.nbytes) };
            // SAFETY: the buffer holds at least nbytes bytes.
            let event = unsafe {
                self.queue
                    .enqueue_read_buffer(buf, CL_BLOCKING, 0, data, &[])
            }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e))?;
            self.stats.waits += 1;
            self.track(Command::Read, event);
        }
        let m = self.bases.get_mut(&id).expect("looked up above");
        m.host_valid = true;
        self.stats.bytes_to_host += m.nbytes as u64;
        Ok(())
    }

    /// Forgets `id`; its device buffer goes to the pool.
    pub fn free(&mut self, id: BaseId) {
        if let Some(m) = self.bases.remove(&id) {
            if let Some(b) = m.buf {
                self.pool.entry(alloc_size(m.nbytes)).or_default().push(b);
            }
        }
    }

    /// Bytes in device buffers (live and pooled).
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Device buffers pooled for reuse.
    pub fn pooled(&self) -> usize {
        self.pool.values().map(Vec::len).sum()
    }

    /// A scratch buffer of at least `nbytes` (reductions' partials, kernel arguments);
    /// give it back with [`DeviceMemory::recycle`].
    pub fn scratch(&mut self, nbytes: usize, pinned: &HashSet<BaseId>) -> Result<Buffer<u8>> {
        self.alloc(alloc_size(nbytes), pinned)
    }

    pub fn recycle(&mut self, nbytes: usize, buf: Buffer<u8>) {
        self.pool.entry(alloc_size(nbytes)).or_default().push(buf);
    }

    fn alloc(&mut self, size: usize, pinned: &HashSet<BaseId>) -> Result<Buffer<u8>> {
        if let Some(b) = self.pool.get_mut(&size).and_then(Vec::pop) {
            self.stats.pool_hits += 1;
            return Ok(b);
        }
        if self.held + size as u64 > self.limit {
            self.make_room(size as u64, pinned)?;
            if self.held + size as u64 > self.limit {
                return Err(self.oom(size as u64));
            }
        }
        for attempt in 0..2 {
            // SAFETY: no host pointer is passed.
            match unsafe {
                Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, size, std::ptr::null_mut())
            } {
                Ok(b) => {
                    self.held += size as u64;
                    self.stats.allocations += 1;
                    return Ok(b);
                }
                Err(e) if is_oom(&e) && attempt == 0 => self.make_room(u64::MAX, pinned)?,
                Err(e) if is_oom(&e) => break,
                Err(e) => return Err(Error::cl("clCreateBuffer", e)),
            }
        }
        Err(self.oom(size as u64))
    }

    fn oom(&self, want: u64) -> Error {
        Error::OutOfMemory {
            device: self.device.clone(),
            detail: format!(
                "{want} more bytes needed, {} bytes held by arrays in use and nothing idle \
                 left to evict (limit {} bytes; see [engines.opencl] memory_limit)",
                self.held, self.limit
            ),
        }
    }

    /// Frees room for `want` more bytes under the limit (`u64::MAX`: everything idle):
    /// pooled buffers first (they hold no data), then idle bases, least recently added
    /// first, whose device copy is written back to the host when it is the newer one.
    fn make_room(&mut self, want: u64, pinned: &HashSet<BaseId>) -> Result<()> {
        let fits = |held: u64, limit: u64| want != u64::MAX && held.saturating_add(want) <= limit;
        while !fits(self.held, self.limit) {
            let Some((&size, list)) = self.pool.iter_mut().next_back() else {
                break;
            };
            list.pop();
            self.held -= size as u64;
            if list.is_empty() {
                self.pool.remove(&size);
            }
        }
        let mut idle: Vec<BaseId> = self
            .bases
            .iter()
            .filter(|(id, m)| m.buf.is_some() && !pinned.contains(id))
            .map(|(id, _)| *id)
            .collect();
        idle.sort();
        for id in idle {
            if fits(self.held, self.limit) {
                break;
            }
            self.finish()?;
            self.download(id, None)?;
            let m = self.bases.get_mut(&id).expect("listed above");
            if !m.host_valid {
                continue;
            }
            if let Some(b) = m.buf.take() {
                drop(b);
                m.device_valid = false;
                self.held -= alloc_size(m.nbytes) as u64;
                self.stats.evictions += 1;
            }
        }
        Ok(())
    }
}

fn m_bytes(bases: &HashMap<BaseId, Mirror>, id: BaseId) -> u64 {
    bases.get(&id).map_or(0, |m| m.nbytes as u64)
}
