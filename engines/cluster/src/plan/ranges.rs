//! Ranges cut with the kernels they are fused into: a rank's piece of a range continues
//! from the piece's first global index.

use hassium_core::{BaseId, Batch, View};

/// True for a `range` instruction the cluster can cut: its values are the linear index
/// in the kernel's iteration space, and a piece of that space starting at element `s`
/// gets them back by adding `s` (see [`start_ranges_at`]), exactly in these types.
pub fn cuttable_range(instr: &hassium_core::Instr) -> bool {
    instr.op == hassium_core::Opcode::Range
        && (instr.out.dtype.is_integer() || instr.out.dtype.is_float())
}

/// First id of the bases [`start_ranges_at`] adds (far above any id a bridge gives).
pub const RANGE_TEMPS: u64 = u64::MAX - (1 << 40);

/// Rewrites the `range` instructions among `instrs` (indices into `b`) so that their
/// values start at `start`, for a piece of a kernel whose iteration space begins at
/// element `start` of the whole one: `range t; add out <- t, start` (integers wrap as the
/// cast of the index does; float64 is exact below 2^53), and for narrower floats the sum
/// in float64 then one cast, as the kernels compute a float range. The new instructions
/// are appended to `b` and follow their range in `instrs`; their temporaries are
/// registers, added to `contracted`. A temporary's id is [`RANGE_TEMPS`] plus twice the
/// batch's length when it is made, plus 0 or 1: each rewrite appends at least one
/// instruction, so the rewrites of several kernels into one batch never share an id.
pub fn start_ranges_at(
    b: &mut Batch,
    instrs: &mut hassium_core::KernelInstrs,
    contracted: &mut hassium_core::KernelBases,
    start: usize,
) {
    use hassium_core::{Base, DType, Instr, Opcode, Operand, Scalar};
    if start == 0 {
        return;
    }
    let mut at = 0;
    while at < instrs.len() {
        let i = instrs[at];
        at += 1;
        if !cuttable_range(&b.instrs[i]) {
            continue;
        }
        let out = b.instrs[i].out.clone();
        let wide = if out.dtype == DType::Float16 || out.dtype == DType::Float32 {
            DType::Float64
        } else {
            out.dtype
        };
        let mut next = RANGE_TEMPS + 2 * b.instrs.len() as u64;
        let mut temp = || {
            let id = BaseId(next);
            next += 1;
            b.bases.insert(
                id,
                Base {
                    id,
                    dtype: wide,
                    nelem: out.nelem(),
                },
            );
            contracted.push(id);
            View::contiguous(id, wide, &out.shape)
        };
        let index = temp();
        let sum = if wide == out.dtype {
            out.clone()
        } else {
            temp()
        };
        b.instrs[i].out = index.clone();
        let offset = Scalar::Int64(start as i64).cast(wide);
        let mut added = vec![Instr::new(
            Opcode::Add,
            sum.clone(),
            [Operand::View(index), Operand::Scalar(offset)],
        )];
        if wide != out.dtype {
            added.push(Instr::new(Opcode::Identity, out, [Operand::View(sum)]));
        }
        for instr in added {
            b.instrs.push(instr);
            instrs.insert(at, b.instrs.len() - 1);
            at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::plan::{plan, Cut};
    use hassium_core::{Base, Bases, DType, IdMap, Instr, Kernel, Opcode, Operand};
    use smallvec::smallvec;

    /// `x = arange(n) * 0.5` kept, and its sum: the range is cut with the rest, and
    /// a piece's rewritten range starts at the piece's first global index.
    #[test]
    fn a_range_is_cut_and_continues_from_the_pieces_start() {
        let n = 5 * hassium_codegen::CHUNK;
        let base = |id, dtype| Base {
            id: BaseId(id),
            dtype,
            nelem: n,
        };
        let v = |id, dtype| View::contiguous(BaseId(id), dtype, &[n]);
        let f = DType::Float32;
        let mut sum_out = View::contiguous(BaseId(4), f, &[]);
        sum_out.shape = smallvec![];
        let instrs = vec![
            Instr::new(Opcode::Range, v(1, f), []),
            Instr::new(
                Opcode::Multiply,
                v(2, f),
                [
                    Operand::View(v(1, f)),
                    Operand::Scalar(hassium_core::Scalar::Float32(0.5)),
                ],
            ),
            Instr {
                axis: Some(0),
                ..Instr::new(Opcode::Add, sum_out, [Operand::View(v(2, f))])
            },
        ];
        let mut sum_base = base(4, f);
        sum_base.nelem = 1;
        let mut batch = Batch {
            bases: Bases::from_sorted(vec![base(1, f), base(2, f), sum_base]),
            instrs,
            sync: vec![],
            next_id: 0,
            in_range: Default::default(),
        };
        batch.instrs[2].op = Opcode::AddReduce;
        let elementwise = Kernel {
            instrs: smallvec![0, 1],
            shape: smallvec![n],
            contracted: smallvec![BaseId(1)],
            reads: smallvec![],
            writes: smallvec![BaseId(2)],
        };
        let reduction = Kernel {
            instrs: smallvec![0, 1, 2],
            writes: smallvec![BaseId(2), BaseId(4)],
            ..elementwise.clone()
        };
        let mut layouts = IdMap::default();
        layouts.insert(BaseId(2), Layout::new(&base(2, f), Some(&v(2, f)), 3, 0));
        layouts.insert(BaseId(4), Layout::new(&sum_base, None, 3, u64::MAX));
        let p = plan(&batch, std::slice::from_ref(&elementwise), &layouts, 3);
        assert!(matches!(p.cuts[0], Cut::Rows { .. }), "{:?}", p.cuts[0]);
        let p = plan(&batch, &[reduction], &layouts, 3);
        let Cut::Chunks(ranges) = &p.cuts[0] else {
            panic!("{:?}", p.cuts[0])
        };
        assert_eq!(ranges[0].0, 0);
        assert_eq!(ranges[2].1, n);

        // The rewrite: float32 goes through float64, then one cast.
        let mut k = elementwise;
        start_ranges_at(&mut batch, &mut k.instrs, &mut k.contracted, 0);
        assert_eq!(k.instrs.len(), 2, "nothing to do at 0");
        let len = batch.instrs.len() as u64;
        start_ranges_at(&mut batch, &mut k.instrs, &mut k.contracted, 77);
        let ops: Vec<Opcode> = k.instrs.iter().map(|&i| batch.instrs[i].op).collect();
        assert_eq!(
            ops,
            [
                Opcode::Range,
                Opcode::Add,
                Opcode::Identity,
                Opcode::Multiply
            ]
        );
        let add = &batch.instrs[k.instrs[1]];
        assert_eq!(add.out.dtype, DType::Float64);
        assert_eq!(
            add.ins[1].as_scalar(),
            Some(&hassium_core::Scalar::Float64(77.0))
        );
        assert_eq!(batch.instrs[k.instrs[2]].out, v(1, f));
        assert_eq!(k.contracted.len(), 3);
        assert_eq!(
            k.contracted[1..],
            [RANGE_TEMPS + 2 * len, RANGE_TEMPS + 2 * len + 1].map(BaseId)
        );
        // A second kernel's rewrite into the same batch takes other ids.
        let mut k2 = Kernel {
            instrs: smallvec![0],
            contracted: smallvec![],
            ..k.clone()
        };
        batch.instrs[0].out = v(1, f);
        start_ranges_at(&mut batch, &mut k2.instrs, &mut k2.contracted, 5);
        assert!(k2.contracted.iter().all(|id| !k.contracted.contains(id)));
    }
}
