//! An execute call on the wire: `(Batch, Vec<Kernel>)` in bincode's default layout
//! (fixed-width little-endian integers, `u64` lengths, `u32` enum variant indices).
//!
//! Both directions are written by hand against that layout. A batch holds thousands of
//! instructions, and serde's generic path cost more than everything the CPU engine then
//! did with a batch of small kernels: decoding built every `Instr` on the stack and moved
//! it, and grew the `Vec` in steps (serde will not trust a length of more than 1 MiB);
//! encoding went through a serializer call per shape and stride element, a tenth of all
//! the work of a small-array program. Anything the hand decoder does not accept goes to
//! bincode itself, so a layout it does not know still decodes, and errors are bincode's.
//! The tests check that the hand encoder writes exactly bincode's bytes and that both
//! decoders agree, on every opcode, dtype and operand kind.

use crate::template::Bindings;
use crate::{Error, Result};
use hassium_core::{
    Base, BaseId, Bases, Batch, DType, Instr, Kernel, Opcode, Operand, Scalar, Shape, Strides, View,
};
use smallvec::SmallVec;
use std::sync::OnceLock;

/// Encodes an execute call for the wire, instruction indices unchanged: the call carries
/// only what `kernels` use, every other instruction (frees, the kernels of other calls)
/// travelling as an empty `none` at its position, and the base table holds only the
/// bases those instructions name. The cluster engine broadcasts calls so, its workers
/// numbering instructions as rank 0 does; an engine call goes through
/// [`encode_call_compact`].
pub fn encode_call(batch: &Batch, kernels: &[Kernel]) -> Result<Vec<u8>> {
    static PLACEHOLDER: OnceLock<Instr> = OnceLock::new();
    let placeholder = PLACEHOLDER.get_or_init(|| Instr {
        op: Opcode::None,
        ..blank_instr()
    });
    let mut instrs: Vec<&Instr> = vec![placeholder; batch.instrs.len()];
    for &i in kernels.iter().flat_map(|k| &k.instrs) {
        if let Some(slot) = instrs.get_mut(i) {
            *slot = &batch.instrs[i];
        }
    }
    write_call(batch, &instrs, kernels, |i| i)
}

/// Encodes an execute call carrying only the instructions `kernels` name, renumbered in
/// batch order, and returns with it `held`: the call's instruction `i` is the batch's
/// `held[i]` (a failure the engine reports names the call's number). A kernel index past
/// the batch stays past the call, so the engine refuses it as before.
///
/// A flush whose kernels free large arrays as they go runs as one call per part (the
/// runtime reuses their memory in between, `vem`'s `recycle_points`): with every other
/// instruction as a placeholder each call cost the whole batch, and a lattice-Boltzmann
/// run of 7 600 instructions in hundreds of calls spent half its time encoding and decoding
/// them.
pub fn encode_call_compact(batch: &Batch, kernels: &[Kernel]) -> Result<(Vec<u8>, Vec<usize>)> {
    let n = batch.instrs.len();
    let held = held_instrs(batch, kernels);
    let instrs: Vec<&Instr> = held.iter().map(|&i| &batch.instrs[i]).collect();
    let m = held.len();
    let call = write_call(batch, &instrs, kernels, |i| match held.binary_search(&i) {
        Ok(at) => at,
        Err(_) => m.saturating_add(i - n),
    })?;
    Ok((call, held))
}

/// The batch instructions a compact call of `kernels` carries, in batch order (see
/// [`encode_call_compact`]).
pub fn held_instrs(batch: &Batch, kernels: &[Kernel]) -> Vec<usize> {
    let n = batch.instrs.len();
    let mut held: Vec<usize> = (kernels.iter())
        .flat_map(|k| k.instrs.iter().copied())
        .filter(|&i| i < n)
        .collect();
    held.sort_unstable();
    held.dedup();
    held
}

/// The call's bytes: the bases `instrs` name (in the batch's order), `instrs`, the
/// batch's sync and in-range lists, and the kernels with each instruction index `i`
/// written as `number(i)`.
fn write_call(
    batch: &Batch,
    instrs: &[&Instr],
    kernels: &[Kernel],
    number: impl Fn(usize) -> usize,
) -> Result<Vec<u8>> {
    let mut named: Vec<BaseId> = (instrs.iter())
        .flat_map(|i| std::iter::once(i.out.base).chain(i.ins.iter().filter_map(|o| o.base())))
        .collect();
    named.sort_unstable();
    named.dedup();
    // Both sorted: one walk instead of a tree search per id.
    let mut want = named.into_iter().peekable();
    let mut bases = Vec::with_capacity(want.len());
    for entry in &batch.bases {
        while want.next_if(|id| id < entry.0).is_some() {}
        if want.next_if(|id| id == entry.0).is_some() {
            bases.push(entry);
        }
    }
    let mut w = Writer {
        out: Vec::with_capacity(64 + 28 * bases.len() + 96 * instrs.len() + 64 * kernels.len()),
    };
    w.len(bases.len());
    for (&id, base) in bases {
        w.u64(id.0);
        w.u64(base.id.0);
        w.u32(base.dtype as u32);
        w.u64(base.nelem as u64);
    }
    w.len(instrs.len());
    for i in instrs {
        w.instr(i)?;
    }
    w.ids(&batch.sync);
    w.ids(&batch.in_range);
    w.len(kernels.len());
    for k in kernels {
        w.words(k.instrs.iter().map(|&i| number(i) as u64));
        w.usizes(&k.shape);
        w.ids(&k.contracted);
        w.ids(&k.reads);
        w.ids(&k.writes);
    }
    Ok(w.out)
}

/// Encodes a replay of template `key` with the call's bindings: the key's 16 bytes, then
/// the ids, the scalars and the synced ids in the call's layout.
pub fn encode_replay(key: u128, b: &Bindings) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(48 + 8 * b.ids.len() + 12 * b.scalars.len() + 8 * b.sync.len()),
    };
    w.out.extend_from_slice(&key.to_le_bytes());
    w.ids(&b.ids);
    w.len(b.scalars.len());
    for s in &b.scalars {
        w.scalar(s);
    }
    w.ids(&b.sync);
    w.out
}

/// Decodes what [`encode_replay`] encoded.
pub fn decode_replay(bytes: &[u8]) -> Result<(u128, Bindings)> {
    let mut r = Reader { bytes, at: 0 };
    let mut read = || {
        let key = u128::from_le_bytes(r.take()?);
        let ids = r.ids()?;
        // A scalar is at least a dtype word and one byte.
        let n = r.len(5)?;
        let scalars = (0..n).map(|_| r.scalar()).collect::<Option<Vec<_>>>()?;
        let sync = r.ids()?;
        (r.at == bytes.len()).then_some((key, Bindings { ids, scalars, sync }))
    };
    read().ok_or_else(|| Error::Other("decoding a replay: malformed bindings".into()))
}

/// Writes bincode's default layout (what `#[derive(Serialize)]` on the core types makes
/// of them) field by field.
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn words(&mut self, ws: impl ExactSizeIterator<Item = u64>) {
        self.len(ws.len());
        self.out.reserve(8 * ws.len());
        for x in ws {
            self.u64(x);
        }
    }
    fn usizes(&mut self, v: &[usize]) {
        self.words(v.iter().map(|&x| x as u64));
    }
    fn ids(&mut self, v: &[BaseId]) {
        self.words(v.iter().map(|b| b.0));
    }
    fn view(&mut self, v: &View) {
        self.u64(v.base.0);
        self.u32(v.dtype as u32);
        self.u64(v.offset as i64 as u64);
        self.usizes(&v.shape);
        self.words(v.strides.iter().map(|&x| x as i64 as u64));
    }
    fn scalar(&mut self, s: &Scalar) {
        // `Scalar`'s variants are declared in `DType`'s order, and bincode writes each
        // variant's fields as the little-endian bytes kernels receive scalars in.
        let d = s.dtype();
        self.u32(d as u32);
        self.out.extend_from_slice(&s.to_le_bytes()[..d.size()]);
    }
    fn instr(&mut self, i: &Instr) -> Result<()> {
        let variant = variant_of(i.op)
            .ok_or_else(|| Error::Other(format!("encoding batch: opcode {:?}", i.op)))?;
        self.u32(variant);
        self.view(&i.out);
        self.len(i.ins.len());
        for o in &i.ins {
            match o {
                Operand::View(v) => {
                    self.u32(0);
                    self.view(v);
                }
                Operand::Scalar(s) => {
                    self.u32(1);
                    self.scalar(s);
                }
            }
        }
        match i.axis {
            Some(a) => {
                self.u8(1);
                self.u64(a as u64);
            }
            None => self.u8(0),
        }
        match &i.method {
            Some(m) => {
                self.u8(1);
                self.len(m.len());
                self.out.extend_from_slice(m.as_bytes());
            }
            None => self.u8(0),
        }
        Ok(())
    }
}

/// A [`Batch`] by reference, serialised by bincode in its layout (bincode is positional:
/// the fields keep `Batch`'s order): what the hand encoder must agree with.
#[cfg(test)]
#[derive(serde::Serialize)]
struct CallBatch<'a> {
    #[serde(serialize_with = "as_map")]
    bases: Vec<(&'a BaseId, &'a Base)>,
    instrs: Vec<&'a Instr>,
    sync: &'a [BaseId],
    in_range: &'a [BaseId],
}

#[cfg(test)]
fn as_map<S: serde::Serializer>(
    pairs: &[(&BaseId, &Base)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().copied())
}

/// Decodes what [`encode_call`] encoded.
pub fn decode_call(bytes: &[u8]) -> Result<(Batch, Vec<Kernel>)> {
    let fast = Reader { bytes, at: 0 }.call();
    let decoded = match fast {
        Some(d) => d,
        None => {
            bincode::deserialize(bytes).map_err(|e| Error::Other(format!("decoding batch: {e}")))?
        }
    };
    // Bit for bit (a NaN scalar is not equal to itself): encoding again gives the input.
    debug_assert!(
        encode_call(&decoded.0, &decoded.1).is_ok_and(|b| bytes.starts_with(&b)),
        "the hand decoder disagrees with bincode"
    );
    Ok(decoded)
}

/// The serde variant index of `op` (the inverse of [`opcodes`]).
fn variant_of(op: Opcode) -> Option<u32> {
    static TABLE: OnceLock<Vec<Option<u32>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![None; 1 + Opcode::ALL.iter().map(|&o| o as usize).max().unwrap_or(0)];
        for (i, op) in opcodes().iter().enumerate() {
            if let Some(op) = op {
                t[*op as usize] = Some(i as u32);
            }
        }
        t
    });
    table.get(op as usize).copied().flatten()
}

/// Opcodes by serde variant index (declaration order; the `u16` discriminants differ),
/// found by encoding each one, so the table cannot drift from the enum.
fn opcodes() -> &'static [Option<Opcode>] {
    static TABLE: OnceLock<Vec<Option<Opcode>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Vec::new();
        for &op in Opcode::ALL {
            let Some(i) = bincode::serialize(&op)
                .ok()
                .and_then(|b| Some(u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize))
            else {
                continue;
            };
            if i >= table.len() {
                table.resize(i + 1, None);
            }
            table[i] = Some(op);
        }
        table
    })
}

fn blank_view() -> View {
    View {
        base: BaseId(0),
        dtype: DType::Bool,
        offset: 0,
        shape: Shape::new(),
        strides: Strides::new(),
    }
}

fn blank_instr() -> Instr {
    Instr {
        op: Opcode::Add,
        out: blank_view(),
        ins: Default::default(),
        axis: None,
        method: None,
    }
}

/// Reads the layout; `None` on anything unexpected (bincode then decides).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b = self.bytes.get(self.at..self.at.checked_add(N)?)?;
        self.at += N;
        b.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn isize(&mut self) -> Option<isize> {
        isize::try_from(i64::from_le_bytes(self.take()?)).ok()
    }
    /// A sequence length, refused when the rest of the input cannot hold that many
    /// elements of at least `min` bytes (so a damaged length allocates nothing).
    fn len(&mut self, min: usize) -> Option<usize> {
        let n = self.usize()?;
        (n.checked_mul(min)? <= self.bytes.len() - self.at).then_some(n)
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn base_id(&mut self) -> Option<BaseId> {
        self.u64().map(BaseId)
    }
    fn dtype(&mut self) -> Option<DType> {
        DType::from_u8(u8::try_from(self.u32()?).ok()?)
    }
    /// A sequence of 8-byte words, each as `f` makes it. (On a 64-bit target, which
    /// [`Reader::call`] insists on, every word is a valid `usize` and `isize`.)
    fn words<T, C: FromIterator<T>>(&mut self, f: impl Fn(u64) -> T) -> Option<C> {
        let n = self.len(8)?;
        self.words_of(n, f)
    }
    /// [`Reader::words`] once the length `n` is read.
    fn words_of<T, C: FromIterator<T>>(&mut self, n: usize, f: impl Fn(u64) -> T) -> Option<C> {
        let b = self.bytes.get(self.at..self.at + 8 * n)?;
        self.at += 8 * n;
        Some(
            b.chunks_exact(8)
                .map(|w| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(w);
                    f(u64::from_le_bytes(a))
                })
                .collect(),
        )
    }
    fn ids(&mut self) -> Option<Vec<BaseId>> {
        self.words(BaseId)
    }
    fn usizes(&mut self) -> Option<Vec<usize>> {
        self.words(|w| w as usize)
    }
    fn shape(&mut self) -> Option<Shape> {
        self.dims(|w| w as usize)
    }
    fn strides(&mut self) -> Option<Strides> {
        self.dims(|w| w as i64 as isize)
    }
    /// A shape or strides: up to four words fill the inline buffer directly (collecting
    /// through `Extend` cost a fifth of decoding a call).
    fn dims<T: Copy + Default>(&mut self, f: impl Fn(u64) -> T) -> Option<SmallVec<[T; 4]>> {
        let n = self.len(8)?;
        if n > 4 {
            return self.words_of(n, f);
        }
        let mut buf = [T::default(); 4];
        for slot in &mut buf[..n] {
            *slot = f(self.u64()?);
        }
        Some(SmallVec::from_buf_and_len(buf, n))
    }

    fn view(&mut self) -> Option<View> {
        let mut v = blank_view();
        self.view_into(&mut v)?;
        Some(v)
    }

    /// Decodes a view into `v` (a blank one) where it lies: views and instructions are
    /// big, and building them elsewhere and moving them in was most of the decoding.
    fn view_into(&mut self, v: &mut View) -> Option<()> {
        v.base = self.base_id()?;
        v.dtype = self.dtype()?;
        v.offset = self.isize()?;
        v.shape = self.shape()?;
        v.strides = self.strides()?;
        Some(())
    }

    fn scalar(&mut self) -> Option<Scalar> {
        Some(match self.u32()? {
            0 => Scalar::Bool(self.bool()?),
            1 => Scalar::Int8(i8::from_le_bytes(self.take()?)),
            2 => Scalar::Int16(i16::from_le_bytes(self.take()?)),
            3 => Scalar::Int32(i32::from_le_bytes(self.take()?)),
            4 => Scalar::Int64(i64::from_le_bytes(self.take()?)),
            5 => Scalar::UInt8(self.u8()?),
            6 => Scalar::UInt16(u16::from_le_bytes(self.take()?)),
            7 => Scalar::UInt32(self.u32()?),
            8 => Scalar::UInt64(self.u64()?),
            9 => Scalar::from_le_bytes(DType::Float16, &self.take::<2>()?)?,
            10 => Scalar::Float32(f32::from_le_bytes(self.take()?)),
            11 => Scalar::Float64(f64::from_le_bytes(self.take()?)),
            12 => Scalar::Complex64(
                f32::from_le_bytes(self.take()?),
                f32::from_le_bytes(self.take()?),
            ),
            13 => Scalar::Complex128(
                f64::from_le_bytes(self.take()?),
                f64::from_le_bytes(self.take()?),
            ),
            _ => return None,
        })
    }

    fn operand(&mut self) -> Option<Operand> {
        Some(match self.u32()? {
            0 => Operand::View(self.view()?),
            1 => Operand::Scalar(self.scalar()?),
            _ => return None,
        })
    }

    fn instr_into(&mut self, i: &mut Instr) -> Option<()> {
        i.op = (*opcodes().get(self.u32()? as usize)?)?;
        self.view_into(&mut i.out)?;
        let n = self.len(4)?;
        i.ins.reserve_exact(n);
        for _ in 0..n {
            i.ins.push(self.operand()?);
        }
        i.axis = match self.bool()? {
            true => Some(self.usize()?),
            false => None,
        };
        i.method = match self.bool()? {
            true => {
                let n = self.len(1)?;
                let b = self.bytes.get(self.at..self.at + n)?;
                self.at += n;
                Some(std::str::from_utf8(b).ok()?.to_string())
            }
            false => None,
        };
        Some(())
    }

    fn batch(&mut self) -> Option<Batch> {
        let n = self.len(28)?;
        let mut bases = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.base_id()?;
            let base = Base {
                id: self.base_id()?,
                dtype: self.dtype()?,
                nelem: self.usize()?,
            };
            // Keyed by its own id, in increasing order, as encoded from `Bases`.
            if key != base.id || bases.last().is_some_and(|b: &Base| b.id >= key) {
                return None;
            }
            bases.push(base);
        }
        let bases = Bases::from_sorted(bases);
        let n = self.len(4)?;
        let mut instrs = Vec::new();
        instrs.resize_with(n, blank_instr);
        for i in &mut instrs {
            self.instr_into(i)?;
        }
        let sync = self.ids()?;
        let in_range = self.ids()?;
        Some(Batch {
            bases,
            instrs,
            sync,
            next_id: 0,
            in_range,
        })
    }

    fn kernel(&mut self) -> Option<Kernel> {
        Some(Kernel {
            instrs: self.usizes()?.into(),
            shape: self.shape()?,
            contracted: self.ids()?.into(),
            reads: self.ids()?.into(),
            writes: self.ids()?.into(),
        })
    }

    fn call(mut self) -> Option<(Batch, Vec<Kernel>)> {
        if usize::BITS != 64 {
            return None;
        }
        let batch = self.batch()?;
        let n = self.len(40)?;
        let mut kernels = Vec::with_capacity(n);
        for _ in 0..n {
            kernels.push(self.kernel()?);
        }
        Some((batch, kernels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(base: u64, dtype: DType, shape: &[usize]) -> View {
        View::contiguous(BaseId(base), dtype, shape)
    }

    /// A batch with every opcode, every dtype, both operand kinds, every scalar kind,
    /// axes, a method, odd offsets and strides, and kernels over it.
    fn everything() -> (Batch, Vec<Kernel>) {
        let mut b = Batch::default();
        let dtypes: Vec<DType> = (0..=255).filter_map(DType::from_u8).collect();
        assert_eq!(dtypes.len(), 14);
        for (i, &d) in dtypes.iter().enumerate() {
            let id = BaseId(1000 + i as u64);
            b.bases.insert(
                id,
                Base {
                    id,
                    dtype: d,
                    nelem: 7 + i,
                },
            );
        }
        let scalars = [
            Scalar::Bool(true),
            Scalar::Bool(false),
            Scalar::Int8(-3),
            Scalar::Int16(-300),
            Scalar::Int32(-70000),
            Scalar::Int64(i64::MIN),
            Scalar::UInt8(250),
            Scalar::UInt16(65000),
            Scalar::UInt32(u32::MAX),
            Scalar::UInt64(u64::MAX),
            Scalar::from_le_bytes(DType::Float16, &[0x00, 0xbe]).unwrap(),
            Scalar::Float32(f32::NAN),
            Scalar::Float64(-0.0),
            Scalar::Complex64(1.0, -2.0),
            Scalar::Complex128(f64::INFINITY, 3.25),
        ];
        for (k, &op) in Opcode::ALL.iter().enumerate() {
            let d = dtypes[k % dtypes.len()];
            let mut out = view(1000 + (k % dtypes.len()) as u64, d, &[2, 3]);
            out.offset = k as isize;
            out.strides = [-(k as isize), 1].into_iter().collect();
            let mut i = Instr::new(
                op,
                out,
                [
                    Operand::View(view(1000, DType::Bool, &[k % 5])),
                    Operand::Scalar(scalars[k % scalars.len()]),
                ],
            );
            i.axis = (k % 3 == 0).then_some(k);
            i.method = (k % 4 == 0).then(|| format!("méthode{k}"));
            b.instrs.push(i);
        }
        b.sync = vec![BaseId(1003), BaseId(1000)];
        b.in_range = vec![BaseId(1002)];
        let kernels = vec![
            Kernel {
                instrs: (0..b.instrs.len()).collect(),
                shape: [2usize, 3].into_iter().collect(),
                contracted: [BaseId(1001)].into_iter().collect(),
                reads: [BaseId(1000), BaseId(1002)].into_iter().collect(),
                writes: [BaseId(1003)].into_iter().collect(),
            },
            Kernel::default(),
        ];
        (b, kernels)
    }

    /// What bincode itself makes of the call [`encode_call`] encodes.
    fn bincode_call(batch: &Batch, kernels: &[Kernel]) -> Vec<u8> {
        let placeholder = Instr {
            op: Opcode::None,
            ..blank_instr()
        };
        let used: Vec<usize> = kernels.iter().flat_map(|k| k.instrs.to_vec()).collect();
        let instrs: Vec<&Instr> = (batch.instrs.iter().enumerate())
            .map(|(k, i)| if used.contains(&k) { i } else { &placeholder })
            .collect();
        let named: Vec<BaseId> = (instrs.iter())
            .flat_map(|i| std::iter::once(i.out.base).chain(i.ins.iter().filter_map(|o| o.base())))
            .collect();
        let call = CallBatch {
            bases: batch
                .bases
                .iter()
                .filter(|(id, _)| named.contains(id))
                .collect(),
            instrs,
            sync: &batch.sync,
            in_range: &batch.in_range,
        };
        bincode::serialize(&(call, kernels)).unwrap()
    }

    #[test]
    fn the_hand_encoder_writes_what_bincode_writes() {
        let (mut batch, kernels) = everything();
        assert_eq!(
            encode_call(&batch, &kernels).unwrap(),
            bincode_call(&batch, &kernels)
        );
        // Instructions no kernel names travel as placeholders.
        batch
            .instrs
            .push(Instr::system(Opcode::Free, &batch.bases[&BaseId(1005)]));
        let some = vec![Kernel {
            instrs: [0usize, 5, 9].into_iter().collect(),
            ..Kernel::default()
        }];
        assert_eq!(
            encode_call(&batch, &some).unwrap(),
            bincode_call(&batch, &some)
        );
        let empty = Batch::default();
        assert_eq!(encode_call(&empty, &[]).unwrap(), bincode_call(&empty, &[]));
    }

    /// A compact call holds the kernels' instructions alone, renumbered in batch order,
    /// and `held` maps them back: its size does not grow with the rest of the batch (one
    /// call per part of a large flush cost the whole batch each), and an index past the
    /// batch stays past the call.
    #[test]
    fn a_compact_call_carries_only_its_kernels_instructions() {
        let (mut batch, _) = everything();
        let kernels = vec![Kernel {
            instrs: [2usize, 7].into_iter().collect(),
            ..Kernel::default()
        }];
        let (small, held) = encode_call_compact(&batch, &kernels).unwrap();
        assert_eq!(held, [2, 7]);
        let (got, got_kernels) = decode_call(&small).unwrap();
        assert_eq!(got.instrs.len(), 2);
        assert_eq!(
            format!("{:?}", got.instrs[0]),
            format!("{:?}", batch.instrs[2])
        );
        assert_eq!(
            format!("{:?}", got.instrs[1]),
            format!("{:?}", batch.instrs[7])
        );
        assert_eq!(got_kernels[0].instrs.as_slice(), [0, 1]);
        // A thousand more instructions elsewhere in the batch change nothing.
        let free = Instr::system(Opcode::Free, &batch.bases[&BaseId(1005)]);
        batch.instrs.extend(std::iter::repeat_n(free, 1000));
        let (again, _) = encode_call_compact(&batch, &kernels).unwrap();
        assert_eq!(again, small);
        assert!(encode_call(&batch, &kernels).unwrap().len() > 10 * small.len());
        // An index past the batch is past the call too: the engine refuses it.
        let n = batch.instrs.len();
        let bad = vec![Kernel {
            instrs: [7usize, n + 3].into_iter().collect(),
            ..Kernel::default()
        }];
        let (call, held) = encode_call_compact(&batch, &bad).unwrap();
        assert_eq!(held, [7]);
        assert_eq!(decode_call(&call).unwrap().1[0].instrs.as_slice(), [0, 4]);
    }

    #[test]
    fn a_replay_decodes_to_the_bindings_it_encoded_and_damage_is_refused() {
        let (batch, kernels) = everything();
        let b = Bindings::of(&batch, &kernels);
        assert!(b.ids.len() > 3 && b.scalars.len() == Opcode::ALL.len());
        let bytes = encode_replay(u128::MAX - 5, &b);
        let (key, got) = decode_replay(&bytes).unwrap();
        assert_eq!(key, u128::MAX - 5);
        // Compared as text: a NaN scalar is not equal to itself.
        assert_eq!(format!("{got:?}"), format!("{b:?}"));
        for cut in [0, 15, 17, bytes.len() - 1] {
            assert!(decode_replay(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_replay(&longer).is_err());
        let mut huge = bytes;
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_replay(&huge).is_err());
    }

    #[test]
    fn the_hand_decoder_reads_what_bincode_writes() {
        let (batch, kernels) = everything();
        let bytes = encode_call(&batch, &kernels).unwrap();
        let fast = Reader {
            bytes: &bytes,
            at: 0,
        }
        .call()
        .expect("the hand decoder refused a well-formed call");
        // Compared as bytes: the NaN scalar is not equal to itself.
        assert_eq!(encode_call(&fast.0, &fast.1).unwrap(), bytes);
        let slow: (Batch, Vec<Kernel>) = bincode::deserialize(&bytes).unwrap();
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
    }

    #[test]
    fn a_call_carries_only_the_instructions_and_bases_its_kernels_use() {
        let (mut batch, _) = everything();
        batch
            .instrs
            .push(Instr::system(Opcode::Free, &batch.bases[&BaseId(1005)]));
        let n = batch.instrs.len();
        let picked = [3usize, 7];
        let kernels = vec![Kernel {
            instrs: picked.into_iter().collect(),
            ..Kernel::default()
        }];
        let (got, got_kernels) = decode_call(&encode_call(&batch, &kernels).unwrap()).unwrap();
        assert_eq!(got_kernels, kernels);
        assert_eq!(got.instrs.len(), n, "positions keep their meaning");
        for (k, (g, want)) in got.instrs.iter().zip(&batch.instrs).enumerate() {
            if picked.contains(&k) {
                assert_eq!(format!("{g:?}"), format!("{want:?}"), "instruction {k}");
            } else {
                assert_eq!((g.op, g.ins.len()), (Opcode::None, 0), "instruction {k}");
            }
        }
        let named: Vec<BaseId> = picked
            .iter()
            .flat_map(|&k| {
                let i = &batch.instrs[k];
                std::iter::once(i.out.base).chain(i.ins.iter().filter_map(|o| o.base()))
            })
            .collect();
        assert!(got.bases.keys().all(|id| named.contains(id)));
        assert!(named.iter().all(|id| got.bases.contains_key(id)));
        assert_eq!(got.sync, batch.sync);
        assert_eq!(got.in_range, batch.in_range);
    }

    #[test]
    fn an_empty_call_decodes() {
        let bytes = encode_call(&Batch::default(), &[]).unwrap();
        assert_eq!(decode_call(&bytes).unwrap(), (Batch::default(), vec![]));
    }

    #[test]
    fn a_truncated_call_is_an_error_not_a_panic() {
        let (batch, kernels) = everything();
        let bytes = encode_call(&batch, &kernels).unwrap();
        for cut in [1, 9, bytes.len() / 2, bytes.len() - 1] {
            let e = decode_call(&bytes[..cut]).unwrap_err();
            assert!(e.to_string().contains("decoding batch"), "{e}");
        }
        // The first base's key (after the count) no longer its own id, or out of order.
        let first = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        for key in [first + 100_000, u64::MAX] {
            let mut bad = bytes.clone();
            bad[8..16].copy_from_slice(&key.to_le_bytes());
            assert!(decode_call(&bad).is_err(), "key {key}");
        }
    }
}
