//! Base buffers as the interpreter sees them, and bounds-checked strided access to them.
//!
//! [`Memory`] maps each base to a raw pointer and length. It is the only place raw
//! pointers enter the engine: every element access goes through [`Array`], which checks
//! the element offset against the buffer before touching memory, so a malformed view can
//! produce an error but never an out-of-bounds read or write.

use crate::element::Elem;
use hassium_core::IdMap;
use hassium_core::{Base, BaseId, DType, Error, Operand, Result, View, MAX_DIMS};
use hassium_engine_abi::Buffers;
use std::marker::PhantomData;

/// One base's memory: `nelem` elements of `dtype` at `ptr`.
#[derive(Clone, Copy, Debug)]
pub struct RawBuffer {
    ptr: *mut u8,
    nelem: usize,
    dtype: DType,
}

impl RawBuffer {
    pub fn nelem(&self) -> usize {
        self.nelem
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
}

/// The buffers one execute call works on, by base: host buffers lent by the runtime plus
/// zeroed scratch the memory owns for contracted bases (which have no host buffer).
///
/// The CPU engine's tiered interpreter builds one of these over its own buffers and calls
/// [`crate::execute_instr`] with it.
#[derive(Debug, Default)]
pub struct Memory {
    buffers: IdMap<RawBuffer>,
    /// Owned scratch; the heap blocks do not move when the vector grows, so pointers into
    /// them stay valid for the memory's life. `u64` words keep every dtype aligned.
    scratch: Vec<Vec<u64>>,
}

// SAFETY: the pointers are plain descriptions of memory whose validity the creator of the
// Memory guarantees (see `insert_raw`); the Memory itself holds no thread-bound state.
unsafe impl Send for Memory {}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Registers `nelem` elements of `dtype` at `ptr` as the buffer of `base`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `nelem * dtype.size()` bytes for as
    /// long as this memory is used, and nothing else may access those bytes meanwhile.
    pub unsafe fn insert_raw(&mut self, base: BaseId, dtype: DType, ptr: *mut u8, nelem: usize) {
        self.buffers.insert(base, RawBuffer { ptr, nelem, dtype });
    }

    /// Registers the runtime's host buffers.
    ///
    /// # Safety
    /// Every buffer's `data` must satisfy [`Memory::insert_raw`]'s contract, which the
    /// engine ABI guarantees for the duration of an `execute` call.
    pub unsafe fn insert_host(&mut self, buffers: &Buffers) -> Result<()> {
        self.buffers.reserve(buffers.len());
        for b in buffers.iter() {
            let dtype = b.dtype().ok_or_else(|| {
                Error::Invalid(format!(
                    "host buffer of base {} has unknown dtype {}",
                    b.base, b.dtype
                ))
            })?;
            let nelem = usize::try_from(b.nelem).map_err(|_| {
                Error::Invalid(format!("host buffer of base {} is too large", b.base))
            })?;
            if b.data.is_null() && nelem > 0 {
                return Err(Error::Invalid(format!(
                    "host buffer of base {} is null",
                    b.base
                )));
            }
            // SAFETY: forwarded from this function's contract.
            unsafe { self.insert_raw(BaseId(b.base), dtype, b.data, nelem) };
        }
        Ok(())
    }

    /// Gives `base` a zeroed buffer owned by this memory (for contracted bases). An
    /// allocation that fails is an error, not an abort: a contracted base can be far
    /// larger than its inputs (a sum over an empty axis of a `(0, 2**40)` array), and a
    /// C or Python program is owed an error it can handle.
    pub fn insert_scratch(&mut self, base: &Base) -> Result<()> {
        let oom = || {
            Error::Invalid(format!(
                "cannot allocate {} elements of {} for contracted base {}",
                base.nelem,
                base.dtype.name(),
                base.id.0
            ))
        };
        let words = (base.nelem.checked_mul(base.dtype.size()))
            .ok_or_else(oom)?
            .div_ceil(8)
            .max(1);
        let layout = std::alloc::Layout::array::<u64>(words).map_err(|_| oom())?;
        // SAFETY: the layout's size is nonzero (at least one word). `alloc_zeroed` rather
        // than `vec![0; n]`, whose failure aborts the process.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut u64;
        if ptr.is_null() {
            return Err(oom());
        }
        // SAFETY: allocated by the global allocator with this layout (capacity `words`),
        // and every word is initialised (zeroed).
        let mut block = unsafe { Vec::from_raw_parts(ptr, words, words) };
        let ptr = block.as_mut_ptr() as *mut u8;
        self.scratch.push(block);
        // SAFETY: the block is owned by `self.scratch`, lives as long as `self`, holds at
        // least `nbytes` bytes and is reached only through this memory.
        unsafe { self.insert_raw(base.id, base.dtype, ptr, base.nelem) };
        Ok(())
    }

    pub fn contains(&self, base: BaseId) -> bool {
        self.buffers.contains_key(&base)
    }

    pub fn get(&self, base: BaseId) -> Option<RawBuffer> {
        self.buffers.get(&base).copied()
    }

    /// The metadata of a base with a buffer here.
    pub fn base(&self, id: BaseId) -> Option<Base> {
        self.get(id).map(|b| Base {
            id,
            dtype: b.dtype,
            nelem: b.nelem,
        })
    }

    /// Typed access to the buffer behind `view`, checked against the view's dtype and
    /// extent so later accesses through it cannot leave the buffer.
    pub(crate) fn array<T: Elem>(&self, view: &View) -> Result<Array<T>> {
        let buf = self
            .get(view.base)
            .ok_or_else(|| Error::Invalid(format!("base {} has no buffer", view.base.0)))?;
        if buf.dtype != T::DTYPE || view.dtype != T::DTYPE {
            return Err(Error::DTypeNotAllowed(format!(
                "view of base {} has dtype {} over a {} buffer, expected {}",
                view.base.0,
                view.dtype.name(),
                buf.dtype.name(),
                T::DTYPE.name()
            )));
        }
        if let Some((lo, hi)) = view.extent() {
            if lo < 0 || hi >= buf.nelem as isize {
                return Err(Error::OutOfBounds(format!(
                    "view reaches elements {lo}..={hi} outside base {} of {} elements",
                    view.base.0, buf.nelem
                )));
            }
        }
        Ok(Array {
            ptr: buf.ptr,
            nelem: buf.nelem,
            _t: PhantomData,
        })
    }
}

/// A typed buffer; every access checks its element offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Array<T> {
    ptr: *mut u8,
    nelem: usize,
    _t: PhantomData<T>,
}

impl<T: Elem> Array<T> {
    fn check(&self, offset: isize) -> Result<usize> {
        if offset < 0 || offset as usize >= self.nelem {
            return Err(Error::OutOfBounds(format!(
                "element offset {offset} is outside a buffer of {} elements",
                self.nelem
            )));
        }
        Ok(offset as usize * T::DTYPE.size())
    }

    pub(crate) fn read(&self, offset: isize) -> Result<T> {
        let byte = self.check(offset)?;
        // SAFETY: `byte` addresses a whole element inside the buffer (checked above), and
        // the Memory's contract makes the buffer valid and unaliased.
        Ok(unsafe { T::load(self.ptr.add(byte)) })
    }

    pub(crate) fn write(&self, offset: isize, value: T) -> Result<()> {
        let byte = self.check(offset)?;
        // SAFETY: as in `read`.
        unsafe { T::store(self.ptr.add(byte), value) };
        Ok(())
    }

    /// The address of element `offset`, for loops over a view whose extent
    /// [`Memory::array`] checked (the pointer itself is only computed, never read here).
    pub(crate) fn element_ptr(&self, offset: isize) -> *const u8 {
        self.ptr
            .wrapping_offset(offset * T::DTYPE.size() as isize)
            .cast_const()
    }
}

/// Walks the element offsets of a strided index space in row-major order.
#[derive(Clone, Debug)]
pub(crate) struct Walker {
    shape: [usize; MAX_DIMS],
    strides: [isize; MAX_DIMS],
    ndim: usize,
    index: [usize; MAX_DIMS],
    cur: isize,
    left: usize,
    started: bool,
}

impl Walker {
    /// Walks `shape`/`strides` (equal lengths, at most `MAX_DIMS`) from `offset`.
    pub(crate) fn new(offset: isize, shape: &[usize], strides: &[isize]) -> Result<Walker> {
        if shape.len() > MAX_DIMS || strides.len() != shape.len() {
            return Err(Error::Invalid(format!(
                "a view has {} dimensions and {} strides (at most {MAX_DIMS})",
                shape.len(),
                strides.len()
            )));
        }
        let mut w = Walker {
            shape: [0; MAX_DIMS],
            strides: [0; MAX_DIMS],
            ndim: shape.len(),
            index: [0; MAX_DIMS],
            cur: offset,
            left: shape.iter().product(),
            started: false,
        };
        w.shape[..shape.len()].copy_from_slice(shape);
        w.strides[..shape.len()].copy_from_slice(strides);
        Ok(w)
    }

    pub(crate) fn of(view: &View) -> Result<Walker> {
        Walker::new(view.offset, &view.shape, &view.strides)
    }

    /// Walks `view` without dimension `axis` (the outer loop of a reduction or scan).
    pub(crate) fn without_axis(view: &View, axis: usize) -> Result<Walker> {
        let mut shape = view.shape.clone();
        let mut strides = view.strides.clone();
        if axis < shape.len() {
            shape.remove(axis);
            strides.remove(axis);
        }
        Walker::new(view.offset, &shape, &strides)
    }
}

impl Iterator for Walker {
    type Item = isize;

    fn next(&mut self) -> Option<isize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if self.started {
            let mut d = self.ndim;
            while d > 0 {
                d -= 1;
                self.index[d] += 1;
                self.cur += self.strides[d];
                if self.index[d] < self.shape[d] {
                    break;
                }
                self.cur -= self.strides[d] * self.shape[d] as isize;
                self.index[d] = 0;
            }
        }
        self.started = true;
        Some(self.cur)
    }
}

/// An elementwise input: a constant, or a view read in row-major order.
pub(crate) enum Input<T> {
    Const(T),
    Strided(Array<T>, Box<Walker>),
}

impl<T: Elem> Input<T> {
    pub(crate) fn new(mem: &Memory, operand: &Operand) -> Result<Input<T>> {
        match operand {
            Operand::Scalar(s) => {
                if s.dtype() != T::DTYPE {
                    return Err(Error::DTypeNotAllowed(format!(
                        "scalar of dtype {} where {} is expected",
                        s.dtype().name(),
                        T::DTYPE.name()
                    )));
                }
                Ok(Input::Const(T::from_scalar(s)))
            }
            Operand::View(v) => Ok(Input::Strided(mem.array(v)?, Box::new(Walker::of(v)?))),
        }
    }

    /// The next element; a view that runs out early (a shape mismatch) is an error.
    pub(crate) fn next(&mut self) -> Result<T> {
        match self {
            Input::Const(c) => Ok(*c),
            Input::Strided(a, w) => {
                let off = w.next().ok_or_else(|| {
                    Error::ShapeMismatch("an input has fewer elements than the output".into())
                })?;
                a.read(off)
            }
        }
    }
}
