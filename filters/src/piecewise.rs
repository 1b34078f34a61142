//! Arrays assembled from copies are read through their pieces: `np.roll`,
//! `concatenate`/`stack` and other slice-assembled arrays become views of what they were
//! copied from, so the consumer's kernel reads the sources directly and the copies go.
//!
//! **What is an assembled array.** A temporary `B` (freed in the batch, not synced) whose
//! every write is a copy (`identity`, no cast) of a box of `B`, the boxes tiling `B`
//! exactly (one box when `B` is a plain copy or a fill), all before `B` is first read.
//! `B`'s shape is that of a read through its whole contiguous view, or else the one its
//! first copy's strides step through. Each box is a *piece*, with a source: a view of
//! another base, or a scalar. Sources that are themselves assembled wait for the next
//! pass (a roll along two axes is a roll of a roll), so every forwarded view names real
//! data.
//!
//! **A read is forwarded** when it is a box of `B` (unit steps, or broadcast axes) and it
//! comes after the last copy and before anything writes into a piece's source after that
//! piece's copy (the reader itself included: `x[...] = np.roll(x, 1)` must read `x`
//! before it writes it):
//! - a read inside one piece becomes the matching view of that piece's source, in any
//!   instruction (a scalar, in elementwise ones only: a sum needs a view);
//! - a read spanning pieces needs the reader cut into *cells*, boxes of its iteration
//!   space each inside one piece. The reader must be elementwise, unable to fail, and its
//!   output must not partly overlap an input. So that fusion still sees whole loop
//!   bodies, every elementwise instruction of the same shape joined to a cut reader
//!   through temporaries (each written and read only by such instructions, through
//!   their whole view) is cut the same way, and each such temporary becomes one fresh
//!   temporary per cell (`Batch::new_temp`), which the fuser keeps in registers. A shape
//!   needing more than [`MAX_CELLS`] cells is left alone, and so is one whose copies
//!   move fewer bytes than [`BYTES_PER_INSTR`] per instruction the cells add.
//!
//! When every read of `B` is forwarded, its copies are removed. A source freed before the
//! last forwarded read is freed after `B` instead. Without fresh ids (a batch that is a
//! part of another) nothing is cut; reads inside one piece are still forwarded.

use crate::facts::{temporaries, writes_into};
use crate::{Filter, Result};
use hassium_core::{
    contiguous_strides, overlap, BaseId, Batch, IdMap, IdSet, Instr, OpClass, Opcode, Operand,
    Overlap, Shape, View,
};

pub struct Piecewise {
    /// [`BYTES_PER_INSTR`]; smaller values cut smaller arrays (tests cut 5 × 7 arrays).
    pub bytes_per_instr: usize,
}

impl Default for Piecewise {
    fn default() -> Piecewise {
        Piecewise {
            bytes_per_instr: BYTES_PER_INSTR,
        }
    }
}

/// Pieces of one assembled array considered at most.
pub const MAX_PIECES: usize = 16;
/// Cells one instruction is cut into at most.
pub const MAX_CELLS: usize = 16;
/// What one more instruction costs, in bytes of copying: cutting `m` instructions into
/// `c` cells adds `(c - 1) m` instructions (each encoded, sent to the engine, launched),
/// and is done only when the copies it removes (written and read once) move more bytes.
/// Measured on the lattice-Boltzmann program (2 cores): 500² and 1000² grids ran slower
/// cut (~10 µs per added instruction, small cells included), 2000² ran 1.9× faster.
pub const BYTES_PER_INSTR: usize = 256 << 10;
/// Rounds of forwarding (a roll along `k` axes needs `k`).
const MAX_PASSES: usize = 4;

/// A box of an array: per axis the first index and the extent (1 on a broadcast axis).
#[derive(Clone, Debug)]
pub(crate) struct Span {
    pub lo: Shape,
    pub len: Shape,
}

impl Span {
    pub fn contains(&self, o: &Span) -> bool {
        (0..self.lo.len())
            .all(|d| self.lo[d] <= o.lo[d] && o.lo[d] + o.len[d] <= self.lo[d] + self.len[d])
    }

    pub fn meets(&self, o: &Span) -> bool {
        (0..self.lo.len())
            .all(|d| self.lo[d] < o.lo[d] + o.len[d] && o.lo[d] < self.lo[d] + self.len[d])
    }

    pub fn volume(&self) -> usize {
        self.len.iter().product()
    }
}

/// The box `v` covers in an array of shape `dims`, when `v` steps through it by +1 along
/// each axis (or broadcasts one index along it).
pub(crate) fn span_of(v: &View, dims: &[usize]) -> Option<Span> {
    if v.shape.len() != dims.len() || v.offset < 0 || v.shape.contains(&0) {
        return None;
    }
    let cs = contiguous_strides(dims);
    let mut rem = v.offset as usize;
    let (mut lo, mut len) = (Shape::new(), Shape::new());
    for d in 0..dims.len() {
        let c = rem / cs[d] as usize;
        rem %= cs[d] as usize;
        let n = if v.shape[d] == 1 || v.strides[d] == 0 {
            1
        } else if v.strides[d] == cs[d] {
            v.shape[d]
        } else {
            return None;
        };
        if c + n > dims[d] {
            return None;
        }
        lo.push(c);
        len.push(n);
    }
    (rem == 0).then_some(Span { lo, len })
}

/// The shape of a contiguous array of `nelem` elements of which `v` is a box, read from
/// `v`'s strides (row-major, each a multiple of the next).
pub(crate) fn dims_from_strides(v: &View, nelem: usize) -> Option<Shape> {
    let k = v.strides.len();
    if k == 0 || v.strides[k - 1] != 1 || v.strides.iter().any(|&s| s <= 0) {
        return None;
    }
    let mut dims = Shape::from_elem(0, k);
    for d in 1..k {
        let (outer, inner) = (v.strides[d - 1] as usize, v.strides[d] as usize);
        if !outer.is_multiple_of(inner) {
            return None;
        }
        dims[d] = outer / inner;
    }
    let row = v.strides[0] as usize;
    if !nelem.is_multiple_of(row) {
        return None;
    }
    dims[0] = nelem / row;
    (dims.iter().product::<usize>() == nelem).then_some(dims)
}

/// True when `v` broadcasts along axis `d` (one index read for every position).
fn broadcasts(v: &View, d: usize) -> bool {
    v.strides[d] == 0 && v.shape[d] > 1
}

struct Piece {
    span: Span,
    src: Operand,
    /// The copy that filled it: its source must hold still from here on.
    copy: usize,
}

struct Assembled {
    dims: Shape,
    pieces: Vec<Piece>,
    copies: Vec<usize>,
    /// Reads at `ready..end` may be forwarded.
    ready: usize,
    end: usize,
}

impl Assembled {
    /// The piece holding all of `span`, if one does.
    fn piece_of(&self, span: &Span) -> Option<&Piece> {
        self.pieces.iter().find(|p| p.span.contains(span))
    }

    /// The read `v` of this array (box `span`, inside `piece`) as a read of the source.
    fn forward(&self, v: &View, span: &Span, piece: &Piece) -> Operand {
        match &piece.src {
            Operand::Scalar(s) => Operand::Scalar(*s),
            Operand::View(s) => {
                let mut offset = s.offset;
                let mut strides = s.strides.clone();
                for d in 0..self.dims.len() {
                    offset += (span.lo[d] - piece.span.lo[d]) as isize * s.strides[d];
                    if broadcasts(v, d) {
                        strides[d] = 0;
                    }
                }
                Operand::View(View {
                    base: s.base,
                    dtype: s.dtype,
                    offset,
                    shape: v.shape.clone(),
                    strides,
                })
            }
        }
    }
}

/// The assembled arrays of the batch whose sources are not assembled themselves.
/// Also, for each array held back because sources of it are assembled too, those
/// sources (once they are forwarded, another pass can forward it).
fn assembled(batch: &Batch, temps: &IdSet) -> (IdMap<Assembled>, Vec<Vec<BaseId>>) {
    // Candidates: temporaries written by a copy (of part of them, or whole: a copy's
    // reads then go to what it copied).
    let mut found: IdMap<Assembled> = IdMap::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op == Opcode::Identity && temps.contains(&i.out.base) && i.out.nelem() > 0 {
            found.entry(i.out.base).or_insert(Assembled {
                dims: Shape::new(),
                pieces: Vec::new(),
                copies: Vec::new(),
                ready: k,
                end: usize::MAX,
            });
        }
    }
    if found.is_empty() {
        return (found, Vec::new());
    }
    // Writes (all copies, before any read) and the shape from a whole read.
    let mut bad = IdSet::default();
    let mut read_seen = IdSet::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op.is_system() {
            continue;
        }
        if let Some(a) = found.get_mut(&i.out.base) {
            let plain = i.op == Opcode::Identity
                && i.ins.first().is_some_and(|s| s.dtype() == i.out.dtype)
                && !i.reads_output();
            if !plain || read_seen.contains(&i.out.base) {
                bad.insert(i.out.base);
            } else {
                a.copies.push(k);
                a.ready = k + 1;
            }
        }
        for v in i.input_views() {
            let Some(a) = found.get_mut(&v.base) else {
                continue;
            };
            read_seen.insert(v.base);
            if a.copies.is_empty() || v.base == i.out.base {
                bad.insert(v.base);
            }
            if a.dims.is_empty()
                && v.offset == 0
                && v.strides == contiguous_strides(&v.shape)
                && batch
                    .bases
                    .get(&v.base)
                    .is_some_and(|b| b.nelem == v.nelem())
            {
                a.dims = v.shape.clone();
            }
        }
    }
    for b in &bad {
        found.remove(b);
    }
    found.retain(|&b, a| {
        let nelem = batch.bases.get(&b).map_or(0, |x| x.nelem);
        if a.dims.is_empty() {
            // Never read whole (a roll of it is): the shape its first copy steps through.
            match a
                .copies
                .first()
                .and_then(|&k| dims_from_strides(&batch.instrs[k].out, nelem))
            {
                Some(d) => a.dims = d,
                None => return false,
            }
        }
        if a.copies.len() > MAX_PIECES {
            return false;
        }
        let mut volume = 0;
        for &k in &a.copies {
            let i = &batch.instrs[k];
            let Some(span) = span_of(&i.out, &a.dims) else {
                return false;
            };
            if (0..a.dims.len()).any(|d| broadcasts(&i.out, d)) {
                return false;
            }
            let src = i.ins[0].clone();
            if let Operand::View(s) = &src {
                if s.shape != i.out.shape || s.base == b {
                    return false;
                }
            }
            if a.pieces.iter().any(|p| p.span.meets(&span)) {
                return false;
            }
            volume += span.volume();
            a.pieces.push(Piece { span, src, copy: k });
        }
        volume == nelem
    });
    // Sources must be real data: an assembled source waits for the next pass.
    let names: IdSet = found.keys().copied().collect();
    let mut held = Vec::new();
    found.retain(|_, a| {
        let waits: Vec<BaseId> = (a.pieces.iter())
            .filter_map(|p| p.src.base().filter(|s| names.contains(s)))
            .collect();
        let keep = waits.is_empty();
        if !keep {
            held.push(waits);
        }
        keep
    });
    // The end of the forwarding window: the first write into a piece's source after the
    // copy that took it (between two copies, too: then no read is forwarded), found in
    // one pass over the instructions with the arrays listed by source base.
    let mut by_source: IdMap<Vec<BaseId>> = IdMap::default();
    for (&b, a) in found.iter_mut() {
        a.end = batch.instrs.len();
        for s in a.pieces.iter().filter_map(|p| p.src.base()) {
            let l = by_source.entry(s).or_default();
            if l.last() != Some(&b) {
                l.push(b);
            }
        }
    }
    for (k, i) in batch.instrs.iter().enumerate() {
        let Some(list) = by_source.get(&i.out.base) else {
            continue;
        };
        for b in list {
            let Some(a) = found.get_mut(b) else { continue };
            let hits = a
                .pieces
                .iter()
                .any(|p| k > p.copy && p.src.as_view().is_some_and(|s| writes_into(i, s)));
            if hits && a.end == batch.instrs.len() {
                a.end = k;
            }
        }
    }
    (found, held)
}

/// How the reader at one instruction sees an assembled array.
enum Read {
    /// Every read of assembled arrays there lies in one piece.
    Inside,
    /// Some read spans pieces: the instruction must be cut at these per-axis positions.
    Spanning(Vec<Vec<usize>>),
    /// Some read cannot be forwarded.
    Kept,
}

fn classify(a: &IdMap<Assembled>, k: usize, i: &Instr) -> Option<Read> {
    let mut cuts: Option<Vec<Vec<usize>>> = None;
    let mut any = false;
    for v in i.input_views() {
        let Some(asm) = a.get(&v.base) else {
            continue;
        };
        any = true;
        if k < asm.ready || k >= asm.end {
            return Some(Read::Kept);
        }
        let Some(span) = span_of(v, &asm.dims) else {
            return Some(Read::Kept);
        };
        if let Some(p) = asm.piece_of(&span) {
            // Only elementwise instructions take a scalar operand (`np.ones(n).sum()`).
            if p.src.as_scalar().is_some() && i.op.class() != OpClass::Elementwise {
                return Some(Read::Kept);
            }
            continue;
        }
        let c = cuts.get_or_insert_with(|| vec![Vec::new(); v.shape.len()]);
        for p in &asm.pieces {
            if !p.span.meets(&span) {
                continue;
            }
            for d in (0..v.shape.len()).filter(|&d| !broadcasts(v, d)) {
                for edge in [p.span.lo[d], p.span.lo[d] + p.span.len[d]] {
                    if edge > span.lo[d] && edge < span.lo[d] + span.len[d] {
                        c[d].push(edge - span.lo[d]);
                    }
                }
            }
        }
    }
    if !any {
        return None;
    }
    Some(match cuts {
        None => Read::Inside,
        Some(c) => Read::Spanning(c),
    })
}

/// True when `i` may run as independent cells of its iteration space.
pub(crate) fn cuttable(i: &Instr) -> bool {
    i.op.class() == OpClass::Elementwise
        && !i.can_fail_when_run()
        && i.out.nelem() > 0
        && (0..i.out.shape.len()).all(|d| !broadcasts(&i.out, d))
        && i.input_views().all(|v| {
            v.shape == i.out.shape
                && matches!(overlap(&i.out, v), Overlap::Disjoint | Overlap::Identical)
        })
}

/// The whole contiguous view of a base of `nelem` elements, shaped `dims`.
fn is_whole(v: &View, dims: &[usize], nelem: usize) -> bool {
    v.shape.as_slice() == dims && v.offset == 0 && v.strides == contiguous_strides(dims) && {
        dims.iter().product::<usize>() == nelem
    }
}

/// One shape's cut: its cells and the temporaries renamed per cell (the instructions
/// cut are those whose `cut_of` names it).
struct Cut {
    cells: Vec<Span>,
    renamed: IdSet,
}

/// The sub-view of `v` over `cell` (a box of `v`'s shape).
pub(crate) fn sub_view(v: &View, cell: &Span) -> View {
    let mut out = v.clone();
    for d in 0..v.shape.len() {
        out.offset += cell.lo[d] as isize * v.strides[d];
        out.shape[d] = cell.len[d];
    }
    out
}

pub(crate) fn cells_of(shape: &[usize], cuts: &[Vec<usize>]) -> Vec<Span> {
    let mut cells = vec![Span {
        lo: Shape::new(),
        len: Shape::new(),
    }];
    for d in 0..shape.len() {
        let mut edges = cuts[d].clone();
        edges.push(0);
        edges.push(shape[d]);
        edges.sort_unstable();
        edges.dedup();
        let mut next = Vec::with_capacity(cells.len() * (edges.len() - 1));
        for c in &cells {
            for w in edges.windows(2) {
                let mut c = c.clone();
                c.lo.push(w[0]);
                c.len.push(w[1] - w[0]);
                next.push(c);
            }
        }
        cells = next;
    }
    cells
}

/// One round of forwarding; true when it changed the batch and held back an array whose
/// assembled sources it has all forwarded, which the next round may forward in turn
/// (one whose source stays assembled would be held back again; a round that finds
/// nothing costs as much as one that rewrites: 5 ms on the lattice Boltzmann program's
/// 7 700 instructions).
fn pass(batch: &mut Batch, bytes_per_instr: usize) -> bool {
    let temps = temporaries(batch);
    let (asm, held) = assembled(batch, &temps);
    if asm.is_empty() {
        return false;
    }
    let n = batch.instrs.len();
    let reads: Vec<Option<Read>> = batch
        .instrs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            if i.op.is_system() {
                None
            } else {
                classify(&asm, k, i)
            }
        })
        .collect();
    let can_rename = batch.next_id != 0;
    // Assembled arrays and their sources keep their names.
    let sources: IdSet = asm
        .iter()
        .flat_map(|(b, a)| std::iter::once(*b).chain(a.pieces.iter().filter_map(|p| p.src.base())))
        .collect();

    // Instructions touching each temporary (system ones excluded).
    let mut touching: IdMap<Vec<usize>> = IdMap::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op.is_system() {
            continue;
        }
        for b in std::iter::once(i.out.base).chain(i.input_views().map(|v| v.base)) {
            if temps.contains(&b) {
                let l = touching.entry(b).or_default();
                if l.last() != Some(&k) {
                    l.push(k);
                }
            }
        }
    }

    // Cuts by iteration shape, then the instructions and temporaries joined to them.
    let mut by_shape: Vec<(Shape, Vec<Vec<usize>>, Vec<usize>)> = Vec::new();
    // Bytes of copies each shape's cut would save: the arrays its seeds read across pieces.
    let mut saved: Vec<IdSet> = Vec::new();
    for (k, r) in reads.iter().enumerate() {
        let Some(Read::Spanning(c)) = r else { continue };
        let i = &batch.instrs[k];
        if !can_rename || !cuttable(i) {
            continue;
        }
        let spanned = i
            .input_views()
            .map(|v| v.base)
            .filter(|b| asm.contains_key(b));
        match by_shape.iter().position(|(s, _, _)| *s == i.out.shape) {
            Some(x) => {
                let (_, cuts, ks) = &mut by_shape[x];
                for (d, e) in c.iter().enumerate() {
                    cuts[d].extend_from_slice(e);
                }
                ks.push(k);
                saved[x].extend(spanned);
            }
            None => {
                by_shape.push((i.out.shape.clone(), c.clone(), vec![k]));
                saved.push(spanned.collect());
            }
        }
    }
    let mut cut_of: Vec<Option<usize>> = vec![None; n];
    let mut cuts: Vec<Cut> = Vec::new();
    for ((shape, c, seeds), spanned) in by_shape.into_iter().zip(saved) {
        let cells = cells_of(&shape, &c);
        if cells.len() > MAX_CELLS || cells.len() < 2 {
            continue;
        }
        let id = cuts.len();
        let mut renamed = IdSet::default();
        let mut stack = seeds;
        let nelem: usize = shape.iter().product();
        while let Some(k) = stack.pop() {
            if cut_of[k].is_some() {
                continue;
            }
            cut_of[k] = Some(id);
            let i = &batch.instrs[k];
            let bases: Vec<BaseId> = std::iter::once(i.out.base)
                .chain(i.input_views().map(|v| v.base))
                .collect();
            for b in bases {
                if renamed.contains(&b) || !temps.contains(&b) || sources.contains(&b) {
                    continue;
                }
                let Some(users) = touching.get(&b) else {
                    continue;
                };
                // Made here: its first access writes it whole without reading it.
                let first = &batch.instrs[users[0]];
                let made_here = first.out.base == b && !first.input_views().any(|v| v.base == b);
                let joined = made_here
                    && users.iter().all(|&u| {
                        let x = &batch.instrs[u];
                        (cut_of[u].is_none() || cut_of[u] == Some(id))
                            && x.out.shape == shape
                            && cuttable(x)
                            && !matches!(reads[u], Some(Read::Kept))
                            && std::iter::once(&x.out)
                                .chain(x.input_views())
                                .filter(|v| v.base == b)
                                .all(|v| is_whole(v, &shape, nelem))
                    });
                if joined {
                    renamed.insert(b);
                    stack.extend(users.iter().copied().filter(|&u| cut_of[u].is_none()));
                }
            }
        }
        // Worth it only when the copies cost more than the instructions added.
        let members = cut_of.iter().filter(|&&c| c == Some(id)).count();
        let bytes: usize = spanned
            .iter()
            .filter_map(|b| batch.bases.get(b))
            .map(|b| 2 * b.nbytes())
            .sum();
        if bytes < (cells.len() - 1) * members * bytes_per_instr {
            for c in cut_of.iter_mut().filter(|c| **c == Some(id)) {
                *c = None;
            }
            renamed.clear();
        }
        cuts.push(Cut { cells, renamed });
    }
    // A member taken in through a temporary may read assembled arrays too: each cell's
    // read must lie in one piece, or the whole shape is left uncut.
    for k in 0..n {
        let Some(id) = cut_of[k] else { continue };
        let i = &batch.instrs[k];
        let fits = cuts[id].cells.iter().all(|cell| {
            i.input_views().all(|v| match asm.get(&v.base) {
                Some(a) if k >= a.ready && k < a.end => {
                    span_of(&sub_view(v, cell), &a.dims).is_some_and(|s| a.piece_of(&s).is_some())
                }
                _ => true,
            })
        });
        if !fits {
            for c in cut_of.iter_mut() {
                if *c == Some(id) {
                    *c = None;
                }
            }
            cuts[id].renamed.clear();
        }
    }

    // Which assembled arrays are read only through forwarded reads.
    let forwarded = |k: usize| match &reads[k] {
        Some(Read::Inside) => true,
        Some(Read::Spanning(_)) => cut_of[k].is_some(),
        _ => false,
    };
    let mut dropped: IdSet = asm.keys().copied().collect();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op.is_system() {
            continue;
        }
        for v in i.input_views() {
            if asm.contains_key(&v.base) && !forwarded(k) {
                dropped.remove(&v.base);
            }
        }
    }
    let any_forward = (0..n).any(|k| reads[k].is_some() && forwarded(k));
    if !any_forward {
        return false;
    }

    // Sources freed before a forwarded read are freed with the array they filled.
    let mut free_at: IdMap<usize> = IdMap::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        if i.op == Opcode::Free {
            free_at.insert(i.out.base, k);
        }
    }
    let mut delay: IdMap<usize> = IdMap::default(); // source → index of the later free
    for (b, a) in &asm {
        let Some(&fb) = free_at.get(b) else { continue };
        for p in &a.pieces {
            if let Some(s) = p.src.base() {
                if free_at.get(&s).is_some_and(|&fs| fs < fb) {
                    let e = delay.entry(s).or_insert(fb);
                    *e = (*e).max(fb);
                }
            }
        }
    }
    let mut after: rustc_hash::FxHashMap<usize, Vec<BaseId>> = Default::default(); // free index → sources freed after it
    for (&s, &fb) in &delay {
        after.entry(fb).or_default().push(s);
    }
    for l in after.values_mut() {
        l.sort_unstable();
    }

    // Fresh temporaries per cell.
    let mut cell_temps: IdMap<Vec<BaseId>> = IdMap::default();
    for c in &cuts {
        let mut names: Vec<BaseId> = c.renamed.iter().copied().collect();
        names.sort_unstable();
        for t in names {
            let dtype = batch.bases[&t].dtype;
            let mut ids = Vec::with_capacity(c.cells.len());
            for cell in &c.cells {
                match batch.new_temp(dtype, cell.volume()) {
                    Some(base) => ids.push(base.id),
                    None => return false,
                }
            }
            cell_temps.insert(t, ids);
        }
    }

    let forward_view = |k: usize, v: &View| -> Operand {
        if let Some(a) = asm.get(&v.base) {
            if k >= a.ready && k < a.end {
                if let Some(span) = span_of(v, &a.dims) {
                    if let Some(p) = a.piece_of(&span) {
                        return a.forward(v, &span, p);
                    }
                }
            }
        }
        Operand::View(v.clone())
    };
    let old = std::mem::take(&mut batch.instrs);
    // Sized exactly: the batch grows by the cells, and a vector of thousands of
    // instructions that doubles as it fills faults in fresh pages at every doubling
    // (a fifth of this filter's time on a Game of Life with `np.roll`).
    let cells: usize = cut_of
        .iter()
        .flatten()
        .map(|&id| cuts[id].cells.len() - 1)
        .sum();
    let frees: usize = cell_temps.values().map(Vec::len).sum::<usize>() + delay.len();
    let mut out = Vec::with_capacity(old.len() + cells + frees);
    for (k, i) in old.into_iter().enumerate() {
        if i.op == Opcode::Free {
            if delay.contains_key(&i.out.base) {
                continue;
            }
            // A renamed temporary's own free stays: it was never written.
            if let Some(ids) = cell_temps.get(&i.out.base) {
                for &id in ids {
                    let base = batch.bases[&id];
                    out.push(Instr::system(Opcode::Free, &base));
                }
            }
            out.push(i);
            if let Some(l) = after.get(&k) {
                for s in l {
                    if let Some(base) = batch.bases.get(s) {
                        out.push(Instr::system(Opcode::Free, base));
                    }
                }
            }
            continue;
        }
        if i.op.is_system() {
            out.push(i);
            continue;
        }
        if dropped.contains(&i.out.base) {
            continue; // a copy into an array read only through its pieces
        }
        match cut_of[k] {
            Some(id) => {
                for (c, cell) in cuts[id].cells.iter().enumerate() {
                    let rename = |v: &View| -> Option<View> {
                        cell_temps
                            .get(&v.base)
                            .map(|ids| View::contiguous(ids[c], v.dtype, &cell.len))
                    };
                    let out_view = rename(&i.out).unwrap_or_else(|| sub_view(&i.out, cell));
                    let ins = i.ins.iter().map(|o| match o {
                        Operand::View(v) => match rename(v) {
                            Some(r) => Operand::View(r),
                            None => forward_view(k, &sub_view(v, cell)),
                        },
                        s => s.clone(),
                    });
                    let mut cell_instr = Instr::new(i.op, out_view, ins);
                    cell_instr.axis = i.axis;
                    cell_instr.method = i.method.clone();
                    out.push(cell_instr);
                }
            }
            None => {
                let mut i = i;
                if matches!(reads[k], Some(Read::Inside)) {
                    for o in i.ins.iter_mut() {
                        if let Operand::View(v) = o {
                            *o = forward_view(k, v);
                        }
                    }
                }
                out.push(i);
            }
        }
    }
    batch.instrs = out;
    held.iter()
        .any(|waits| waits.iter().all(|s| dropped.contains(s)))
}

impl Filter for Piecewise {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        for _ in 0..MAX_PASSES {
            if !pass(batch, self.bytes_per_instr) {
                break;
            }
        }
        Ok(())
    }
}
