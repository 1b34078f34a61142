//! A worker's side: the loop that answers rank 0's control messages, and the memory it
//! maps for the bases it holds.

use super::{read_u64, world, ClusterEngine, Local, EXECUTE, EXIT, STATS, SYNC};
use crate::comm;
use hassium_core::{BaseId, Batch, Kernel};
use hassium_engine_abi::{decode_call, Buffers, HostBuffer};

impl ClusterEngine {
    /// A worker's life: answer rank 0's messages until it ends the program.
    pub(super) fn serve(&mut self) -> ! {
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
}
