//! A tiny runtime for the tests: bases with host buffers, one kernel per run, and
//! reading results back through views. Expected values are never computed by the engine.
#![allow(dead_code)]

use half::f16;
use hassium_core::{Base, BaseId, Batch, DType, Instr, Kernel, View};
use hassium_engine_abi::{Buffers, Engine, HostBuffer};
use hassium_engine_reference::ReferenceEngine;
use std::collections::BTreeMap;

pub struct Harness {
    pub batch: Batch,
    pub engine: ReferenceEngine,
    bufs: BTreeMap<BaseId, Vec<u8>>,
    next: u64,
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    pub fn new() -> Harness {
        Harness {
            batch: Batch::default(),
            engine: ReferenceEngine::new(),
            bufs: BTreeMap::new(),
            next: 1,
        }
    }

    fn new_base(&mut self, dtype: DType, nelem: usize) -> BaseId {
        let id = BaseId(self.next);
        self.next += 1;
        self.batch.bases.insert(id, Base { id, dtype, nelem });
        id
    }

    /// A base holding `bytes`, seen as a contiguous 1-D view.
    pub fn raw(&mut self, dtype: DType, bytes: Vec<u8>) -> View {
        let n = bytes.len() / dtype.size();
        let id = self.new_base(dtype, n);
        self.bufs.insert(id, bytes);
        View::contiguous(id, dtype, &[n])
    }

    /// A base of typed values (`T` must have `dtype`'s layout).
    pub fn put<T: Copy>(&mut self, dtype: DType, values: &[T]) -> View {
        assert_eq!(std::mem::size_of::<T>(), dtype.size());
        let mut bytes = vec![0u8; std::mem::size_of_val(values)];
        // SAFETY: plain-old-data copy into a buffer of exactly that size.
        unsafe {
            std::ptr::copy_nonoverlapping(
                values.as_ptr() as *const u8,
                bytes.as_mut_ptr(),
                bytes.len(),
            )
        };
        self.raw(dtype, bytes)
    }

    /// A base of real values converted to `dtype` by the test's own rules.
    pub fn put_f64(&mut self, dtype: DType, values: &[f64]) -> View {
        let bytes = values.iter().flat_map(|&v| encode(dtype, v, 0.0)).collect();
        self.raw(dtype, bytes)
    }

    pub fn put_c64(&mut self, dtype: DType, values: &[(f64, f64)]) -> View {
        let bytes = values
            .iter()
            .flat_map(|&(r, i)| encode(dtype, r, i))
            .collect();
        self.raw(dtype, bytes)
    }

    /// A zero-filled base of `shape`.
    pub fn zeros(&mut self, dtype: DType, shape: &[usize]) -> View {
        let n: usize = shape.iter().product();
        let v = self.raw(dtype, vec![0u8; n * dtype.size()]);
        View::contiguous(v.base, dtype, shape)
    }

    /// A base without a host buffer (to be contracted).
    pub fn contracted(&mut self, dtype: DType, shape: &[usize]) -> View {
        let id = self.new_base(dtype, shape.iter().product());
        View::contiguous(id, dtype, shape)
    }

    pub fn push(&mut self, instr: Instr) {
        self.batch.instrs.push(instr);
    }

    /// Runs every instruction as one kernel, contracting `contracted`.
    pub fn run_contracting(
        &mut self,
        contracted: Vec<BaseId>,
    ) -> Result<(), hassium_engine_abi::Error> {
        let kernel = Kernel {
            instrs: (0..self.batch.instrs.len()).collect(),
            contracted: contracted.into(),
            ..Kernel::default()
        };
        let list: Vec<HostBuffer> = self
            .bufs
            .iter_mut()
            .map(|(id, b)| HostBuffer {
                base: id.0,
                data: b.as_mut_ptr(),
                nelem: (b.len() / self.batch.bases[id].dtype.size()) as u64,
                dtype: self.batch.bases[id].dtype as u8,
                host_dirty: 0,
            })
            .collect();
        self.engine
            .execute(&self.batch, &[kernel], &Buffers::new(&list))
    }

    pub fn run(&mut self) -> Result<(), hassium_engine_abi::Error> {
        self.run_contracting(vec![])
    }

    /// Runs and panics with the engine's message on failure.
    pub fn ok(&mut self) {
        if let Err(e) = self.run() {
            panic!("engine failed: {e}");
        }
    }

    /// The raw bytes of each element of `view`, in row-major order.
    fn element_bytes(&self, view: &View) -> Vec<Vec<u8>> {
        let buf = &self.bufs[&view.base];
        let size = view.dtype.size();
        offsets(view)
            .into_iter()
            .map(|o| buf[o as usize * size..(o as usize + 1) * size].to_vec())
            .collect()
    }

    pub fn get<T: Copy>(&self, view: &View) -> Vec<T> {
        assert_eq!(std::mem::size_of::<T>(), view.dtype.size());
        self.element_bytes(view)
            .into_iter()
            // SAFETY: the bytes are one element of T's layout.
            .map(|b| unsafe { std::ptr::read_unaligned(b.as_ptr() as *const T) })
            .collect()
    }

    pub fn get_f64(&self, view: &View) -> Vec<f64> {
        self.element_bytes(view)
            .into_iter()
            .map(|b| decode(view.dtype, &b).0)
            .collect()
    }

    pub fn get_c64(&self, view: &View) -> Vec<(f64, f64)> {
        self.element_bytes(view)
            .into_iter()
            .map(|b| decode(view.dtype, &b))
            .collect()
    }

    pub fn whole(&self, base: BaseId) -> View {
        self.batch.bases[&base].full_view()
    }
}

/// Row-major element offsets of a view, by explicit unravelling (independent of the
/// engine's walker).
pub fn offsets(view: &View) -> Vec<isize> {
    let n: usize = view.shape.iter().product();
    (0..n)
        .map(|mut k| {
            let mut off = view.offset;
            for d in (0..view.ndim()).rev() {
                let i = k % view.shape[d];
                k /= view.shape[d];
                off += i as isize * view.strides[d];
            }
            off
        })
        .collect()
}

/// The test's own conversion of a real (or complex) value into `dtype`: integers wrap
/// modulo 2^bits, bools are "nonzero", floats round to nearest.
pub fn encode(dtype: DType, re: f64, im: f64) -> Vec<u8> {
    let i = re as i128;
    match dtype {
        DType::Bool => vec![(re != 0.0) as u8],
        DType::Int8 => (i as i8).to_le_bytes().to_vec(),
        DType::Int16 => (i as i16).to_le_bytes().to_vec(),
        DType::Int32 => (i as i32).to_le_bytes().to_vec(),
        DType::Int64 => (i as i64).to_le_bytes().to_vec(),
        DType::UInt8 => (i as u8).to_le_bytes().to_vec(),
        DType::UInt16 => (i as u16).to_le_bytes().to_vec(),
        DType::UInt32 => (i as u32).to_le_bytes().to_vec(),
        DType::UInt64 => (i as u64).to_le_bytes().to_vec(),
        DType::Float16 => f16::from_f64(re).to_le_bytes().to_vec(),
        DType::Float32 => (re as f32).to_le_bytes().to_vec(),
        DType::Float64 => re.to_le_bytes().to_vec(),
        DType::Complex64 => [(re as f32).to_le_bytes(), (im as f32).to_le_bytes()].concat(),
        DType::Complex128 => [re.to_le_bytes(), im.to_le_bytes()].concat(),
    }
}

pub fn decode(dtype: DType, b: &[u8]) -> (f64, f64) {
    let a = |n: usize, o: usize| -> [u8; 8] {
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(&b[o..o + n]);
        x
    };
    let r = match dtype {
        DType::Bool => (b[0] != 0) as u8 as f64,
        DType::Int8 => b[0] as i8 as f64,
        DType::Int16 => i16::from_le_bytes([b[0], b[1]]) as f64,
        DType::Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        DType::Int64 => i64::from_le_bytes(a(8, 0)) as f64,
        DType::UInt8 => b[0] as f64,
        DType::UInt16 => u16::from_le_bytes([b[0], b[1]]) as f64,
        DType::UInt32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        DType::UInt64 => u64::from_le_bytes(a(8, 0)) as f64,
        DType::Float16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
        DType::Float32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        DType::Float64 => f64::from_le_bytes(a(8, 0)),
        DType::Complex64 => {
            return (
                f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                f32::from_le_bytes([b[4], b[5], b[6], b[7]]) as f64,
            )
        }
        DType::Complex128 => return (f64::from_le_bytes(a(8, 0)), f64::from_le_bytes(a(8, 8))),
    };
    (r, 0.0)
}

/// `value` rounded into `dtype` by [`encode`] and read back.
pub fn round_to(dtype: DType, value: f64) -> f64 {
    decode(dtype, &encode(dtype, value, 0.0)).0
}

/// Relative tolerance for comparing against f64 math.
pub fn tolerance(dtype: DType) -> f64 {
    match dtype.real() {
        DType::Float16 => 2e-3,
        DType::Float32 => 2e-6,
        DType::Float64 => 1e-13,
        _ => 0.0,
    }
}

/// Equal within `tol` relative (NaN equals NaN, infinities must match exactly).
pub fn close(got: f64, want: f64, tol: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol * want.abs().max(1e-300)
        || got == want
        || (got - want).abs() <= tol * 1e-3
}

#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w, tol), "{what}: element {k}: got {g}, want {w}");
    }
}

/// Bit-exact comparison that treats NaN as equal to NaN and tells -0.0 from 0.0.
#[track_caller]
pub fn assert_same(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let same = (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
        assert!(same, "{what}: element {k}: got {g:?}, want {w:?}");
    }
}
