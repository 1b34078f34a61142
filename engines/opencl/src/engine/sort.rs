//! `sort` and `argsort` (`hassium_core::methods`) on the device: a bitonic sort of
//! (key, position) pairs per row.
//!
//! Each row is padded to a power of two `p`. One launch turns every element into an
//! integer key with NumPy's order (floats' bits turned so that integer order is numeric
//! order, `-0.0` equal to `0.0`, every NaN equal and after every number; signed integers'
//! sign bit flipped), and its position; padding takes the largest key and positions past
//! the row, so it sorts last. The bitonic network (`log2(p) (log2(p) + 1) / 2` launches,
//! every one over all rows) orders pairs by key, then position: the stable order, the one
//! the reference engine gives. A last launch writes the positions (`argsort`) or gathers
//! the elements they name (`sort`), so the values that share a key keep their bits.
//!
//! Float16 and complex rows, searches, and a sort in place (the gather would read what it
//! overwrites) go to the child engine.

use super::OpenClEngine;
use crate::error::{Error, Result};
use crate::memory::Command;
use hassium_core::methods::{ARGSORT, SORT};
use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Operand, View};
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program;
use std::collections::HashSet;

/// The program: one key and one gather kernel per element type, and the network step.
const SOURCE: &str = r#"
#define SIGN64 0x8000000000000000UL

inline ulong key_uchar(uchar v) { return (ulong)v; }
inline ulong key_ushort(ushort v) { return (ulong)v; }
inline ulong key_uint(uint v) { return (ulong)v; }
inline ulong key_ulong(ulong v) { return v; }
inline ulong key_char(char v) { return (ulong)(long)v ^ SIGN64; }
inline ulong key_short(short v) { return (ulong)(long)v ^ SIGN64; }
inline ulong key_int(int v) { return (ulong)(long)v ^ SIGN64; }
inline ulong key_long(long v) { return (ulong)v ^ SIGN64; }
inline ulong key_float(float v) {
    if (isnan(v)) return (ulong)-1;
    uint b = as_uint(v + 0.0f);
    return (ulong)((b & 0x80000000u) ? ~b : (b | 0x80000000u));
}
#ifdef HS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
inline ulong key_double(double v) {
    if (isnan(v)) return (ulong)-1;
    ulong b = as_ulong(v + 0.0);
    return (b & SIGN64) ? ~b : (b | SIGN64);
}
#endif

/* Keys and positions of rows x p pairs; rows[r] is row r's first element. */
#define KEYS(T) \
kernel void keys_##T(global const T* src, global const long* rows, long len, long stride, \
                     long p, long total, global ulong* keys, global uint* pos) { \
    long g = get_global_id(0); \
    if (g >= total) return; \
    long r = g / p, j = g - r * p; \
    keys[g] = j < len ? key_##T(src[rows[r] + j * stride]) : (ulong)-1; \
    pos[g] = (uint)j; \
}

/* out[r, j] = src[r, pos[r, j]]. */
#define GATHER(T) \
kernel void gather_##T(global const T* src, global const long* rows, long stride, \
                       global const uint* pos, long len, long p, global T* dst, \
                       global const long* orows, long ostride, long total) { \
    long g = get_global_id(0); \
    if (g >= total) return; \
    long r = g / len, j = g - r * len; \
    dst[orows[r] + j * ostride] = src[rows[r] + (long)pos[r * p + j] * stride]; \
}

#define BOTH(T) KEYS(T) GATHER(T)
BOTH(uchar) BOTH(char) BOTH(ushort) BOTH(short) BOTH(uint) BOTH(int) BOTH(ulong) BOTH(long)
BOTH(float)
#ifdef HS_FP64
BOTH(double)
#endif

/* One compare-exchange step of the bitonic network (k: block, j: distance). */
kernel void bitonic(global ulong* keys, global uint* pos, long p, long k, long j, long total) {
    long g = get_global_id(0);
    if (g >= total) return;
    long i = g % p, l = i ^ j;
    if (l <= i) return;
    long a = g, b = g - i + l;
    ulong ka = keys[a], kb = keys[b];
    uint pa = pos[a], pb = pos[b];
    int greater = ka > kb || (ka == kb && pa > pb);
    if (greater == ((i & k) == 0)) {
        keys[a] = kb; keys[b] = ka;
        pos[a] = pb; pos[b] = pa;
    }
}

/* out[r, j] = pos[r, j] as int64. */
kernel void positions(global const uint* pos, long len, long p, global long* dst,
                      global const long* orows, long ostride, long total) {
    long g = get_global_id(0);
    if (g >= total) return;
    long r = g / len, j = g - r * len;
    dst[orows[r] + j * ostride] = (long)pos[r * p + j];
}
"#;

/// The OpenCL C name of a dtype's elements, for the types sorted on the device.
fn type_name(d: DType, fp64: bool) -> Option<&'static str> {
    Some(match d {
        DType::Bool | DType::UInt8 => "uchar",
        DType::Int8 => "char",
        DType::UInt16 => "ushort",
        DType::Int16 => "short",
        DType::UInt32 => "uint",
        DType::Int32 => "int",
        DType::UInt64 => "ulong",
        DType::Int64 => "long",
        DType::Float32 => "float",
        DType::Float64 if fp64 => "double",
        _ => return None,
    })
}

impl OpenClEngine {
    /// Whether the device sorts this instruction (else the child does).
    pub(super) fn sorts_on_device(&self, instr: &Instr) -> bool {
        let Some(a) = instr.ins.first().and_then(Operand::as_view) else {
            return false;
        };
        let method = instr.method.as_deref();
        (method == Some(SORT) || method == Some(ARGSORT))
            && type_name(a.dtype, self.fp64).is_some()
            && a.ndim() > 0
            && a.shape == instr.out.shape
            && a.base != instr.out.base
            && a.shape[a.ndim() - 1] <= u32::MAX as usize / 2
    }

    fn sort_program(&mut self) -> Result<&Program> {
        if self.sort_program.is_none() {
            let mut options = self.build_options.cautious.clone();
            if self.fp64 {
                options.push_str(" -DHS_FP64");
            }
            let program =
                Program::create_and_build_from_source(&self.mem.context, SOURCE, &options)
                    .map_err(|log| Error::Build {
                        device: self.info.name.clone(),
                        log: format!("the sort program: {log}"),
                    })?;
            self.sort_program = Some(program);
        }
        Ok(self.sort_program.as_ref().expect("just built"))
    }

    /// Runs a `sort` or `argsort` that [`Self::sorts_on_device`] accepted (the single
    /// instruction of `kernel`).
    pub(super) fn sort_on_device(&mut self, batch: &Batch, kernel: &Kernel) -> Result<()> {
        let instr = &batch.instrs[kernel.instrs[0]];
        let (Some(a), out) = (instr.ins.first().and_then(Operand::as_view), &instr.out) else {
            return Err(Error::Config("sort without an input view".into()));
        };
        if out.is_empty() {
            return Ok(());
        }
        let t = type_name(a.dtype, self.fp64)
            .ok_or_else(|| Error::Config("sort of a type the device does not sort".into()))?;
        let nd = a.ndim();
        let (len, stride, ostride) = (a.shape[nd - 1], a.strides[nd - 1], out.strides[nd - 1]);
        let p = len.next_power_of_two();
        let starts = |v: &View| -> Vec<i64> { v.row_starts().iter().map(|&o| o as i64).collect() };
        let (rows, orows) = (starts(a), starts(out));
        let total = rows.len() * p;
        let pinned: HashSet<BaseId> = [a.base, out.base].into_iter().collect();
        self.mem.prepare(a.base, true, &pinned)?;
        let need = !Self::overwrites(batch, kernel, out.base);
        self.mem.prepare(out.base, need, &pinned)?;
        let upload =
            |mem: &mut crate::memory::DeviceMemory, v: Vec<i64>| -> Result<(Buffer<u8>, usize)> {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                let n = bytes.len();
                let mut buf = mem.scratch(n, &pinned)?;
                mem.write_owned(&mut buf, bytes)?;
                Ok((buf, n))
            };
        let (rows_buf, rows_len) = upload(&mut self.mem, rows)?;
        let (orows_buf, orows_len) = upload(&mut self.mem, orows)?;
        let (keys_len, pos_len) = (total * 8, total * 4);
        let keys = self.mem.scratch(keys_len, &pinned)?;
        let pos = self.mem.scratch(pos_len, &pinned)?;
        let src = self
            .mem
            .buffer(a.base)
            .map(|b| b.get())
            .ok_or_else(|| Error::Config("a sort's input has no device buffer".into()))?;
        let dst = self
            .mem
            .buffer(out.base)
            .map(|b| b.get())
            .ok_or_else(|| Error::Config("a sort's output has no device buffer".into()))?;
        let local = self.info.max_work_group_size.clamp(1, 256);
        let is_argsort = instr.method.as_deref() == Some(ARGSORT);
        let (k_keys, step, w) = {
            let program = self.sort_program()?;
            let kernel = |name: &str| {
                ClKernel::create(program, name).map_err(|e| Error::cl("clCreateKernel", e))
            };
            let last = if is_argsort {
                kernel("positions")?
            } else {
                kernel(&format!("gather_{t}"))?
            };
            (kernel(&format!("keys_{t}"))?, kernel("bitonic")?, last)
        };
        let mut launches = Vec::new();
        let queue = &self.mem.queue;
        let mut enqueue = |k: &ClKernel, items: usize| -> Result<()> {
            launches.push(super::run::enqueue(queue, k, items, local)?);
            Ok(())
        };
        let e = |e| Error::cl("clSetKernelArg", e);
        let (len_i, p_i, total_i) = (len as i64, p as i64, total as i64);
        let (stride_i, ostride_i) = (stride as i64, ostride as i64);
        let (keys_m, pos_m, rows_m, orows_m) =
            (keys.get(), pos.get(), rows_buf.get(), orows_buf.get());
        // SAFETY: the arguments follow the kernels' signatures; every buffer lives until
        // the queue is finished (scratch buffers go back to the pool, still alive).
        unsafe {
            k_keys.set_arg(0, &src).map_err(e)?;
            k_keys.set_arg(1, &rows_m).map_err(e)?;
            k_keys.set_arg(2, &len_i).map_err(e)?;
            k_keys.set_arg(3, &stride_i).map_err(e)?;
            k_keys.set_arg(4, &p_i).map_err(e)?;
            k_keys.set_arg(5, &total_i).map_err(e)?;
            k_keys.set_arg(6, &keys_m).map_err(e)?;
            k_keys.set_arg(7, &pos_m).map_err(e)?;
        }
        enqueue(&k_keys, total)?;
        unsafe {
            step.set_arg(0, &keys_m).map_err(e)?;
            step.set_arg(1, &pos_m).map_err(e)?;
            step.set_arg(2, &p_i).map_err(e)?;
            step.set_arg(5, &total_i).map_err(e)?;
        }
        let mut k = 2;
        while k <= p {
            let mut j = k / 2;
            while j > 0 {
                let (k_i, j_i) = (k as i64, j as i64);
                unsafe {
                    step.set_arg(3, &k_i).map_err(e)?;
                    step.set_arg(4, &j_i).map_err(e)?;
                }
                enqueue(&step, total)?;
                j /= 2;
            }
            k *= 2;
        }
        let written = (rows_len / 8) * len;
        let written_i = written as i64;
        if is_argsort {
            unsafe {
                w.set_arg(0, &pos_m).map_err(e)?;
                w.set_arg(1, &len_i).map_err(e)?;
                w.set_arg(2, &p_i).map_err(e)?;
                w.set_arg(3, &dst).map_err(e)?;
                w.set_arg(4, &orows_m).map_err(e)?;
                w.set_arg(5, &ostride_i).map_err(e)?;
                w.set_arg(6, &written_i).map_err(e)?;
            }
            enqueue(&w, written)?;
        } else {
            unsafe {
                w.set_arg(0, &src).map_err(e)?;
                w.set_arg(1, &rows_m).map_err(e)?;
                w.set_arg(2, &stride_i).map_err(e)?;
                w.set_arg(3, &pos_m).map_err(e)?;
                w.set_arg(4, &len_i).map_err(e)?;
                w.set_arg(5, &p_i).map_err(e)?;
                w.set_arg(6, &dst).map_err(e)?;
                w.set_arg(7, &orows_m).map_err(e)?;
                w.set_arg(8, &ostride_i).map_err(e)?;
                w.set_arg(9, &written_i).map_err(e)?;
            }
            enqueue(&w, written)?;
        }
        for event in launches {
            self.mem.track(Command::Kernel, event);
        }
        // The kernels and their arguments must outlive the queued launches.
        self.mem.finish()?;
        self.mem.recycle(rows_len, rows_buf);
        self.mem.recycle(orows_len, orows_buf);
        self.mem.recycle(keys_len, keys);
        self.mem.recycle(pos_len, pos);
        self.mem.device_written(out.base);
        self.stats.kernels_run += 1;
        self.stats.bytes_moved +=
            (a.nelem() * a.dtype.size() + out.nelem() * out.dtype.size()) as u64;
        Ok(())
    }
}
