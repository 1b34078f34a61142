use hassium_core::{BaseId, DType, IdMap};

/// A base's host buffer as it crosses the ABI. The runtime owns the memory; an engine may
/// read and write `nelem` elements at `data` for the duration of the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HostBuffer {
    pub base: u64,
    pub data: *mut u8,
    pub nelem: u64,
    /// `DType` discriminant.
    pub dtype: u8,
    /// 1 when the host copy was written by the bridge since the engine last saw it, so an
    /// engine keeping device copies must upload it.
    pub host_dirty: u8,
}

// SAFETY: a HostBuffer is a plain description of memory the runtime owns and keeps alive
// for the call; the engine contract (one execute at a time per buffer set) makes sharing
// across the engine's worker threads sound.
unsafe impl Send for HostBuffer {}
unsafe impl Sync for HostBuffer {}

/// The host buffers of one execute call, by base. Contracted bases have none.
#[derive(Default, Debug)]
pub struct Buffers {
    map: IdMap<HostBuffer>,
}

impl Buffers {
    pub fn new(list: &[HostBuffer]) -> Buffers {
        Buffers {
            map: list.iter().map(|b| (BaseId(b.base), *b)).collect(),
        }
    }
    /// Empty, with room for `n` buffers (a batch of small kernels touches thousands).
    pub fn with_capacity(n: usize) -> Buffers {
        Buffers {
            map: IdMap::with_capacity_and_hasher(n, Default::default()),
        }
    }
    pub fn get(&self, id: BaseId) -> Option<&HostBuffer> {
        self.map.get(&id)
    }
    pub fn iter(&self) -> impl Iterator<Item = &HostBuffer> {
        self.map.values()
    }
    pub fn to_vec(&self) -> Vec<HostBuffer> {
        self.map.values().copied().collect()
    }
    pub fn insert(&mut self, b: HostBuffer) {
        self.map.insert(BaseId(b.base), b);
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl HostBuffer {
    pub fn dtype(&self) -> Option<DType> {
        DType::from_u8(self.dtype)
    }
    /// The buffer's bytes.
    ///
    /// # Safety
    /// `data` must point to `nelem` elements of `dtype` that stay valid, and no other
    /// reference to them may be live while the slice is.
    pub unsafe fn bytes_mut<'a>(&self) -> &'a mut [u8] {
        let n = self.nelem as usize * self.dtype().map_or(1, |d| d.size());
        if n == 0 {
            return &mut [];
        }
        // SAFETY: guaranteed by the caller (see above).
        unsafe { std::slice::from_raw_parts_mut(self.data, n) }
    }
}
