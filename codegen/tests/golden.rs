//! Golden tests: the generated C of a few representative kernels is pinned byte for byte,
//! so a refactor that must not change codegen proves it. Regenerate deliberately with
//! `HASSIUM_BLESS=1 cargo test -p hassium-codegen --test golden`.

use hassium_codegen::{lower, render, Dialect, Plan, Specialize, C99, OPENCL};
use hassium_core::{Base, BaseId, Batch, DType, Instr, Kernel, Opcode, Operand, Scalar, View};
use std::path::PathBuf;

mod common;
use common::base;

fn kernel(b: &Batch, instrs: Vec<usize>) -> Kernel {
    hassium_fuser::finish_kernel(b, instrs, |_| false)
}

fn free(b: &mut Batch, id: BaseId) {
    let base = b.bases[&id];
    b.instrs.push(Instr::system(Opcode::Free, &base));
}

/// `c = exp((a + b) * 2)` over 1000 float64 elements, temporaries contracted.
fn chain() -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (a, x, t1, t2, c) = (
        base(&mut b, 1, DType::Float64, 1000),
        base(&mut b, 2, DType::Float64, 1000),
        base(&mut b, 3, DType::Float64, 1000),
        base(&mut b, 4, DType::Float64, 1000),
        base(&mut b, 5, DType::Float64, 1000),
    );
    let v = |id| View::contiguous(id, DType::Float64, &[1000]);
    b.instrs
        .push(Instr::new(Opcode::Add, v(t1), [v(a).into(), v(x).into()]));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(t2),
        [v(t1).into(), Operand::Scalar(Scalar::Float64(2.0))],
    ));
    b.instrs.push(Instr::new(Opcode::Exp, v(c), [v(t2).into()]));
    free(&mut b, t1);
    free(&mut b, t2);
    let k = kernel(&b, vec![0, 1, 2]);
    (b, k)
}

/// `out = x.sum(axis=1)` for a (100, 64) float32 array, then `out * 0.5` as an epilogue.
fn reduction() -> (Batch, Kernel) {
    reduction_of(DType::Float32, Scalar::Float32(0.5))
}

/// The same row sum and scaling in `dt`, scaled by `half`.
fn reduction_of(dt: DType, half: Scalar) -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (x, s, o) = (
        base(&mut b, 1, dt, 6400),
        base(&mut b, 2, dt, 100),
        base(&mut b, 3, dt, 100),
    );
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(s, dt, &[100]),
            [View::contiguous(x, dt, &[100, 64]).into()],
        )
        .with_axis(1),
    );
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        View::contiguous(o, dt, &[100]),
        [
            View::contiguous(s, dt, &[100]).into(),
            Operand::Scalar(half),
        ],
    ));
    free(&mut b, s);
    let k = kernel(&b, vec![0, 1]);
    (b, k)
}

/// A 5-point stencil on a 10×10 grid: interior = 0.2 * (centre + 4 neighbours).
fn stencil() -> (Batch, Kernel) {
    stencil_into(false)
}

/// The 5-point stencil into another array, or (`in_place`) into its own grid's interior,
/// which reads the rows it overwrites: `g[1:-1, 1:-1] = 0.2 * (...)`.
fn stencil_into(in_place: bool) -> (Batch, Kernel) {
    let mut b = Batch::default();
    let g = base(&mut b, 1, DType::Float64, 100);
    let o = if in_place {
        g
    } else {
        base(&mut b, 2, DType::Float64, 100)
    };
    let full = View::contiguous(g, DType::Float64, &[10, 10]);
    let shifted = |di: isize, dj: isize| {
        let v = full.slice(0, 1 + di, 9 + di, 1).unwrap();
        v.slice(1, 1 + dj, 9 + dj, 1).unwrap()
    };
    let out = View::contiguous(o, DType::Float64, &[10, 10])
        .slice(0, 1, 9, 1)
        .unwrap()
        .slice(1, 1, 9, 1)
        .unwrap();
    let mut ts = Vec::new();
    for id in 10..14 {
        ts.push(base(&mut b, id, DType::Float64, 64));
    }
    let t = |id: BaseId| View::contiguous(id, DType::Float64, &[8, 8]);
    b.instrs.push(Instr::new(
        Opcode::Add,
        t(ts[0]),
        [shifted(0, 0).into(), shifted(-1, 0).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Add,
        t(ts[1]),
        [t(ts[0]).into(), shifted(1, 0).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Add,
        t(ts[2]),
        [t(ts[1]).into(), shifted(0, -1).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Add,
        t(ts[3]),
        [t(ts[2]).into(), shifted(0, 1).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        out,
        [t(ts[3]).into(), Operand::Scalar(Scalar::Float64(0.2))],
    ));
    for id in ts {
        free(&mut b, id);
    }
    let k = kernel(&b, vec![0, 1, 2, 3, 4]);
    (b, k)
}

/// The C (or OpenCL C) of kernel `k` of `b`, lowered with `spec`, named `name`.
fn rendered(d: &Dialect, b: &Batch, k: &Kernel, spec: Specialize, name: &str) -> String {
    render(d, &lower(b, k, spec).unwrap(), name).unwrap()
}

fn check(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("HASSIUM_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with HASSIUM_BLESS=1)", path.display()));
    assert_eq!(
        text, want,
        "generated C for {name} changed; if intended, re-bless with HASSIUM_BLESS=1"
    );
}

#[test]
fn fused_add_mul_exp_chain_renders_as_pinned() {
    let (b, k) = chain();
    assert_eq!(k.contracted.len(), 2, "temporaries are contracted");
    check(
        "chain_fixed.c",
        &rendered(&C99, &b, &k, Specialize::Fixed, "hs_chain"),
    );
    check(
        "chain_dynamic.c",
        &rendered(&C99, &b, &k, Specialize::Dynamic, "hs_chain"),
    );
}

#[test]
fn row_sum_with_epilogue_renders_as_pinned() {
    let (b, k) = reduction();
    check(
        "reduce_rows.c",
        &rendered(&C99, &b, &k, Specialize::Fixed, "hs_reduce"),
    );
}

/// `s = (x * x).sum(axis=2)` for a (20, 30, 3) float64 array, the product kept as well:
/// the n-body pattern of a reduction over 3 coordinates.
fn short_rows() -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (x, sq, s) = (
        base(&mut b, 1, DType::Float64, 1800),
        base(&mut b, 2, DType::Float64, 1800),
        base(&mut b, 3, DType::Float64, 600),
    );
    let full = |id| View::contiguous(id, DType::Float64, &[20, 30, 3]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        full(sq),
        [full(x).into(), full(x).into()],
    ));
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(s, DType::Float64, &[20, 30]),
            [full(sq).into()],
        )
        .with_axis(2),
    );
    let k = kernel(&b, vec![0, 1]);
    (b, k)
}

/// A reduction over a fixed axis shorter than the lanes keeps one accumulator per output
/// and vectorises across the outputs: the simd pragma goes on the loop outside the axis,
/// whose 3-trip loop is unrolled. Dynamic kernels (the extent unknown) keep the lanes.
#[test]
fn short_rows_vectorise_across_outputs_as_pinned() {
    let (b, k) = short_rows();
    let fixed = rendered(&C99, &b, &k, Specialize::Fixed, "hs_short");
    assert!(fixed.contains("#pragma GCC unroll"), "{fixed}");
    assert!(!fixed.contains("acc1[8]"), "{fixed}");
    check("short_rows.c", &fixed);
    let dynamic = rendered(&C99, &b, &k, Specialize::Dynamic, "hs_short");
    assert!(dynamic.contains("acc1[8]"), "{dynamic}");
    assert!(!dynamic.contains("#pragma GCC unroll"), "{dynamic}");
    // OpenCL has neither pragma; its work-group strip loop only forbids unrolling.
    let opencl = rendered(&OPENCL, &b, &k, Specialize::Fixed, "hs_short");
    assert!(
        !opencl.contains("#pragma GCC") && !opencl.contains("#pragma omp"),
        "{opencl}"
    );
}

/// 64-bit lanes fill a vector, so the row is summed in strips of `LANES` straight into
/// the lane accumulators instead of through a block buffer.
#[test]
fn float64_row_sum_accumulates_in_strips_as_pinned() {
    let (b, k) = reduction_of(DType::Float64, Scalar::Float64(0.5));
    let text = rendered(&C99, &b, &k, Specialize::Fixed, "hs_reduce64");
    assert!(!text.contains("t0["), "no block buffer:\n{text}");
    check("reduce_rows_f64.c", &text);
}

#[test]
fn five_point_stencil_renders_as_pinned() {
    let (b, k) = stencil();
    check(
        "stencil.c",
        &rendered(&C99, &b, &k, Specialize::Fixed, "hs_stencil"),
    );
}

#[test]
fn in_place_stencil_holds_its_rows_back_as_pinned() {
    let (b, k) = stencil_into(true);
    let fixed = lower(&b, &k, Specialize::Fixed).unwrap();
    assert!(
        matches!(
            fixed.plan,
            Plan::Lagged {
                extent: 8,
                inner: 8,
                lag: 1,
                ..
            }
        ),
        "{:?}",
        fixed.plan
    );
    assert!(fixed.has_fin());
    check(
        "stencil_in_place.c",
        &render(&C99, &fixed, "hs_stencil").unwrap(),
    );
    let dynamic = lower(&b, &k, Specialize::Dynamic).unwrap();
    check(
        "stencil_in_place_dynamic.c",
        &render(&C99, &dynamic, "hs_stencil").unwrap(),
    );
    // A device launch has no pass after every work-item: OpenCL refuses, so the engine
    // hands the kernel to its child.
    assert!(matches!(
        render(&OPENCL, &fixed, "hs_stencil"),
        Err(hassium_codegen::Error::Unsupported(_))
    ));
}

#[test]
fn opencl_dialect_renders_the_same_kernel_with_its_table() {
    let (b, k) = chain();
    let src = rendered(&OPENCL, &b, &k, Specialize::Fixed, "hs_chain");
    assert!(src.starts_with("__kernel void hs_chain("), "{src}");
    assert!(
        src.contains("__global double *restrict b0") && src.contains("get_global_id(0)"),
        "{src}"
    );
    assert!(src.contains("exp(") && !src.contains("expf("), "{src}");
}

/// The prelude's helpers must have internal linkage in OpenCL: as C99 `inline`
/// definitions they have no out-of-line body, and a build that inlines nothing
/// (`-cl-opt-disable` on NVIDIA) failed with "Unresolved extern function
/// 'hs_max_float32'". PoCL builds either form, so the engine's test of that build can only
/// fail on such a driver; this one fails wherever the linkage regresses.
#[test]
fn opencl_prelude_helpers_are_static_inline() {
    let src = format!("{}{}", OPENCL.header, hassium_codegen::prelude(&OPENCL));
    assert!(src.contains("#define HS_INLINE static inline\n"), "{src}");
    assert!(src.contains("HS_INLINE T hs_max_##N("), "{src}");
}

#[test]
fn dynamic_kernels_of_different_sizes_share_a_signature() {
    let (b, k) = chain();
    let mut b2 = b.clone();
    for i in &mut b2.instrs {
        i.out.shape[0] = 500;
        for o in &mut i.ins {
            if let Operand::View(v) = o {
                v.shape[0] = 500;
            }
        }
    }
    let (l1, l2) = (
        lower(&b, &k, Specialize::Dynamic).unwrap(),
        lower(&b2, &k, Specialize::Dynamic).unwrap(),
    );
    assert_eq!(l1.signature(), l2.signature());
    assert_ne!(l1.meta, l2.meta);
    let (f1, f2) = (
        lower(&b, &k, Specialize::Fixed).unwrap(),
        lower(&b2, &k, Specialize::Fixed).unwrap(),
    );
    assert_ne!(f1.signature(), f2.signature());
}

/// `chain()` over bases renumbered by `+ 100` and listed in reverse, one unrelated
/// instruction earlier in the batch, and another scalar value: the same structure.
fn chain_elsewhere() -> (Batch, Kernel) {
    let (b, _) = chain();
    let mut b2 = Batch::default();
    for base in b.bases.values().rev() {
        let id = BaseId(base.id.0 + 100);
        b2.bases.insert(id, Base { id, ..*base });
    }
    let y = base(&mut b2, 7, DType::Float64, 10);
    let vy = View::contiguous(y, DType::Float64, &[10]);
    b2.instrs
        .push(Instr::new(Opcode::Negative, vy.clone(), [vy.into()]));
    for i in &b.instrs {
        let mut i = i.clone();
        i.out.base.0 += 100;
        for o in &mut i.ins {
            match o {
                Operand::View(v) => v.base.0 += 100,
                Operand::Scalar(s) => *s = Scalar::Float64(3.0),
            }
        }
        b2.instrs.push(i);
    }
    let k2 = kernel(&b2, vec![1, 2, 3]);
    (b2, k2)
}

#[test]
fn a_kernel_of_the_same_structure_rebinds_to_what_lowering_gives() {
    let (b, k) = chain();
    let (b2, k2) = chain_elsewhere();
    for spec in [Specialize::Fixed, Specialize::Dynamic] {
        assert_eq!(
            hassium_core::kernel_key(&b, &k, hassium_core::KeyMode::Fixed),
            hassium_core::kernel_key(&b2, &k2, hassium_core::KeyMode::Fixed)
        );
        let (l, l2) = (lower(&b, &k, spec).unwrap(), lower(&b2, &k2, spec).unwrap());
        let bound = l.rebind(&b2, &k2).expect("same structure");
        assert_eq!(bound.slots, l2.slots);
        assert_eq!(bound.scalars, l2.scalars);
        assert_eq!(bound.scalars, vec![Scalar::Float64(3.0)]);
        assert_ne!(l.slots, l2.slots);
        assert_eq!(l.signature(), l2.signature());
        assert_eq!(l.meta, l2.meta);
    }
}

#[test]
fn a_kernel_of_another_structure_does_not_rebind() {
    let (b, k) = chain();
    let (r, rk) = reduction();
    let l = lower(&b, &k, Specialize::Fixed).unwrap();
    assert!(l.rebind(&r, &rk).is_none());
}

/// Complex elementwise arithmetic renders in C (NumPy's product through the prelude's
/// helper, not C's `*`), and not in OpenCL C, which has no complex type; a complex
/// reduction is unsupported at lowering. Unsupported kernels are interpreted, not failed.
#[test]
fn complex_arithmetic_renders_in_c_and_the_rest_is_reported_unsupported() {
    let mut b = Batch::default();
    let (x, y) = (
        base(&mut b, 1, DType::Complex128, 4),
        base(&mut b, 2, DType::Complex128, 4),
    );
    let (xv, yv) = (
        View::contiguous(x, DType::Complex128, &[4]),
        View::contiguous(y, DType::Complex128, &[4]),
    );
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        yv.clone(),
        [xv.clone().into(), xv.clone().into()],
    ));
    let k = kernel(&b, vec![0]);
    let l = lower(&b, &k, Specialize::Fixed).unwrap();
    let c = render(&C99, &l, "hs_cmul").unwrap();
    assert!(c.contains("hs_cmulf_complex128(b1[i0], b1[i0])"), "{c}");
    assert!(matches!(
        render(&OPENCL, &l, "hs_cmul"),
        Err(hassium_codegen::Error::Unsupported(_))
    ));
    let s = base(&mut b, 3, DType::Complex128, 1);
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(s, DType::Complex128, &[]),
            [yv.into()],
        )
        .with_axis(0),
    );
    let k = kernel(&b, vec![1]);
    assert!(matches!(
        lower(&b, &k, Specialize::Fixed),
        Err(hassium_codegen::Error::Unsupported(_))
    ));
}

/// `s = sum(x * 2)` over 20000 float64 elements: a `Partials` plan (whole-array reduction).
fn full_sum() -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (x, t, s) = (
        base(&mut b, 1, DType::Float64, 20000),
        base(&mut b, 2, DType::Float64, 20000),
        base(&mut b, 3, DType::Float64, 1),
    );
    let v = |id| View::contiguous(id, DType::Float64, &[20000]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(t),
        [v(x).into(), Operand::Scalar(Scalar::Float64(2.0))],
    ));
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(s, DType::Float64, &[]),
            [v(t).into()],
        )
        .with_axis(0),
    );
    free(&mut b, t);
    let k = kernel(&b, vec![0, 1]);
    (b, k)
}

#[test]
fn whole_array_sum_renders_for_work_groups_in_opencl() {
    let (b, k) = full_sum();
    let l = lower(&b, &k, Specialize::Fixed).unwrap();
    assert!(
        l.group_partials(),
        "a gather-free whole-array sum runs in work-groups"
    );
    let text = render(&OPENCL, &l, "hs_sum").unwrap();
    assert!(
        text.contains("__local double lacc"),
        "lanes meet in local memory"
    );
    assert!(text.contains("barrier(CLK_LOCAL_MEM_FENCE);"));
    check("sum_partials.cl", &text);
}

#[test]
fn row_sum_renders_for_work_groups_in_opencl() {
    let (b, k) = reduction();
    let l = lower(&b, &k, Specialize::Fixed).unwrap();
    assert!(
        l.group_rows(),
        "a gather-free row reduction runs in work-groups"
    );
    let text = render(&OPENCL, &l, "hs_reduce").unwrap();
    assert!(
        text.contains("__local float lacc"),
        "lanes meet in local memory"
    );
    check("reduce_rows.cl", &text);
}

/// `c = sin(arange(1000.0) * 0.37) + n` with `n` an int64 array: both 64-bit integers
/// become float64 through the prelude's split conversion in C (AVX2 has no vector
/// instruction for C's cast) and through the device's own conversion in OpenCL.
fn arange_into_sin() -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (i, t1, t2, n, t3, c) = (
        base(&mut b, 1, DType::Float64, 1000),
        base(&mut b, 2, DType::Float64, 1000),
        base(&mut b, 3, DType::Float64, 1000),
        base(&mut b, 4, DType::Int64, 1000),
        base(&mut b, 5, DType::Float64, 1000),
        base(&mut b, 6, DType::Float64, 1000),
    );
    let v = |id| View::contiguous(id, DType::Float64, &[1000]);
    b.instrs.push(Instr::new(Opcode::Range, v(i), []));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(t1),
        [v(i).into(), Operand::Scalar(Scalar::Float64(0.37))],
    ));
    b.instrs
        .push(Instr::new(Opcode::Sin, v(t2), [v(t1).into()]));
    let wide = View::contiguous(n, DType::Int64, &[1000]);
    b.instrs
        .push(Instr::new(Opcode::Identity, v(t3), [wide.into()]));
    b.instrs
        .push(Instr::new(Opcode::Add, v(c), [v(t2).into(), v(t3).into()]));
    for t in [i, t1, t2, t3] {
        free(&mut b, t);
    }
    let k = kernel(&b, vec![0, 1, 2, 3, 4]);
    (b, k)
}

#[test]
fn wide_integers_convert_in_halves_in_c_and_natively_in_opencl() {
    let (b, k) = arange_into_sin();
    assert_eq!(k.contracted.len(), 4, "temporaries are contracted");
    let c = rendered(&C99, &b, &k, Specialize::Fixed, "hs_arange_sin");
    assert_eq!(
        c.matches("hs_i64_f64(").count(),
        2,
        "the range and the cast"
    );
    check("arange_sin.c", &c);
    let cl = rendered(&OPENCL, &b, &k, Specialize::Fixed, "hs_arange_sin");
    assert!(
        !cl.contains("hs_i64_f64"),
        "OpenCL converts natively:\n{cl}"
    );
}

/// The fuser may join an elementwise instruction of the input's shape that follows a
/// reduction's epilogue in program order (a loop's next step after a mean's division):
/// it belongs to the body, which runs first. Lowering moves it there instead of failing,
/// which left such kernels to the interpreter, which gave each of their hundreds of
/// temporaries memory of its own.
#[test]
fn a_body_instruction_after_the_epilogue_is_lowered_into_the_body() {
    let mut b = Batch::default();
    let (x, s, m, y) = (
        base(&mut b, 1, DType::Float64, 1000),
        base(&mut b, 2, DType::Float64, 1),
        base(&mut b, 3, DType::Float64, 1),
        base(&mut b, 4, DType::Float64, 1000),
    );
    let full = |id| View::contiguous(id, DType::Float64, &[1000]);
    let scalar = |id| View::contiguous(id, DType::Float64, &[]);
    b.instrs
        .push(Instr::new(Opcode::AddReduce, scalar(s), [full(x).into()]).with_axis(0));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        scalar(m),
        [scalar(s).into(), Operand::Scalar(Scalar::Float64(1e-3))],
    ));
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        full(y),
        [full(x).into(), Operand::Scalar(Scalar::Float64(2.0))],
    ));
    let k = Kernel {
        instrs: [0, 1, 2].into_iter().collect(),
        shape: [1000].into_iter().collect(),
        contracted: Default::default(),
        reads: [x].into_iter().collect(),
        writes: [s, m, y].into_iter().collect(),
    };
    let l = lower(&b, &k, Specialize::Fixed).expect("lowered");
    assert!(matches!(l.plan, Plan::Partials { .. }), "{:?}", l.plan);
    rendered(&C99, &b, &k, Specialize::Fixed, "hs_late_body");
}

/// `m = a % 256; q = a // 8` over 1000 int64 elements, the divisors in scalar slots.
fn int_divisions() -> (Batch, Kernel) {
    let mut b = Batch::default();
    let (a, m, q) = (
        base(&mut b, 1, DType::Int64, 1000),
        base(&mut b, 2, DType::Int64, 1000),
        base(&mut b, 3, DType::Int64, 1000),
    );
    let v = |id| View::contiguous(id, DType::Int64, &[1000]);
    b.instrs.push(Instr::new(
        Opcode::Remainder,
        v(m),
        [v(a).into(), Operand::Scalar(Scalar::Int64(256))],
    ));
    b.instrs.push(Instr::new(
        Opcode::FloorDivide,
        v(q),
        [v(a).into(), Operand::Scalar(Scalar::Int64(8))],
    ));
    let k = kernel(&b, vec![0, 1]);
    (b, k)
}

/// No vector unit divides integers: a kernel dividing by scalar slots carries its loop
/// nest three times, chosen per call by the divisors: shifts and masks when all are
/// positive powers of two, floating-point division (exact there) when all are positive
/// and small, NumPy's integer rules otherwise. The first two vectorise. OpenCL kernels,
/// with no simd loop, have one nest.
#[test]
fn integer_division_by_scalars_has_nests_for_special_divisors_as_pinned() {
    let (b, k) = int_divisions();
    let text = rendered(&C99, &b, &k, Specialize::Fixed, "hs_div");
    let (pow2, rest) = text
        .split_once("else if")
        .unwrap_or_else(|| panic!("three loop nests:\n{text}"));
    let (small, general) = rest
        .split_once("else {")
        .unwrap_or_else(|| panic!("three loop nests:\n{text}"));
    assert!(
        pow2.contains("if (s0 > 0 && (s0 & (s0 - 1)) == 0 && s1 > 0 && (s1 & (s1 - 1)) == 0)"),
        "{text}"
    );
    assert!(
        small.starts_with(" (HS_WIDE_FCVT && s0 > 0 && s0 < 2097152 && s1 > 0 && s1 < 2097152)"),
        "{text}"
    );
    for nest in [pow2, small, general] {
        assert!(nest.contains("#pragma omp simd"), "{text}");
    }
    for nest in [pow2, small] {
        assert!(!nest.contains("hs_mod_int64") && !nest.contains("hs_floordiv_int64"));
    }
    assert!(
        pow2.contains("& (s0 - 1)") && pow2.contains(">> sh1"),
        "{text}"
    );
    assert!(
        small.contains("hs_smod_int64(b1[i0], s0, inv0)")
            && small.contains("hs_sdiv_int64(b1[i0], s1, inv1)"),
        "{text}"
    );
    assert!(general.contains("hs_mod_int64(") && general.contains("hs_floordiv_int64("));
    check("int_divisions.c", &text);
    let cl = rendered(&OPENCL, &b, &k, Specialize::Fixed, "hs_div");
    assert!(
        !cl.contains("sh1") && !cl.contains("inv0") && cl.contains("hs_mod_int64("),
        "{cl}"
    );
}
