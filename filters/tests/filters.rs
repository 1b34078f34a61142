//! What each filter rewrites, what it must leave alone, and that every rewrite keeps the
//! batch verifiable and its observable bytes identical (run on the reference engine from
//! the same data, including 0, -0, inf and NaN).

#[path = "../../fuser/tests/exec/mod.rs"]
mod exec;

use hassium_core::{verify, Batch, DType, Instr, Opcode, Operand, Scalar, View};
use hassium_filters::{create, Filter};
use hassium_fuser::recorder::Recorder;

fn sc(s: Scalar) -> Operand {
    s.into()
}

fn v(x: &View) -> Operand {
    x.clone().into()
}

fn apply(name: &str, batch: &Batch) -> Batch {
    let mut out = batch.clone();
    create(name).unwrap().apply(&mut out).unwrap();
    verify(&out).unwrap_or_else(|e| panic!("{name} broke verify: {e}"));
    out
}

/// The filtered batch leaves every observable base with the same bytes.
fn assert_same_results(before: &Batch, after: &Batch) {
    for seed in 0..3 {
        let want = exec::observe(before, &exec::unfused(before), seed, true).unwrap();
        let got = exec::observe(after, &exec::unfused(after), seed, true).unwrap();
        assert_eq!(got, want, "seed {seed}");
    }
}

fn count(batch: &Batch, op: Opcode) -> usize {
    batch.instrs.iter().filter(|i| i.op == op).count()
}

/// `out = x ** k` on a fresh output, synced.
fn power(dtype: DType, k: Scalar, n: usize) -> Batch {
    let mut r = Recorder::new();
    let x = r.array(dtype, &[n]);
    let y = r.binary(Opcode::Power, v(&x), sc(k));
    r.sync(&y);
    r.finish()
}

// --- expand_powk --------------------------------------------------------------------------

#[test]
fn expand_powk_keeps_integer_overflow_exactly() {
    for dtype in [DType::Int8, DType::UInt8, DType::Int32, DType::Int64] {
        for k in 0..=16 {
            let before = power(dtype, Scalar::Int64(k).cast(dtype), 64);
            let after = apply("expand_powk", &before);
            assert_eq!(count(&after, Opcode::Power), 0, "{dtype:?} ** {k}");
            assert_same_results(&before, &after);
        }
    }
}

#[test]
fn expand_powk_uses_few_multiplications() {
    let after = apply(
        "expand_powk",
        &power(DType::Float64, Scalar::Float64(13.0), 8),
    );
    // 13 = 0b1101: square, times x, square, square, times x.
    assert_eq!(count(&after, Opcode::Multiply), 5);
    let after = apply(
        "expand_powk",
        &power(DType::Float64, Scalar::Float64(2.0), 8),
    );
    assert_eq!(count(&after, Opcode::Multiply), 1);
}

#[test]
fn expand_powk_is_exact_for_float_powers_0_1_and_2_and_close_beyond() {
    for k in [0.0, 1.0, 2.0] {
        let before = power(DType::Float64, Scalar::Float64(k), 64);
        let after = apply("expand_powk", &before);
        assert_eq!(count(&after, Opcode::Power), 0);
        assert_same_results(&before, &after);
    }
    for k in 3..=16 {
        let before = power(DType::Float64, Scalar::Float64(k as f64), 64);
        let after = apply("expand_powk", &before);
        let y = before.sync[0];
        let want =
            exec::f64s(&exec::observe(&before, &exec::unfused(&before), 1, false).unwrap()[&y]);
        let got = exec::f64s(&exec::observe(&after, &exec::unfused(&after), 1, false).unwrap()[&y]);
        for (a, b) in want.iter().zip(&got) {
            assert!(
                (a - b).abs() <= 1e-14 * a.abs().max(1e-300),
                "x**{k}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn expand_powk_leaves_alone_what_it_cannot_expand_exactly() {
    let keep = |b: &Batch| assert_eq!(apply("expand_powk", b).instrs, b.instrs);
    // (An integer to a negative scalar power never gets here: verify rejects it when it is
    // recorded, as NumPy raises at the call.)
    keep(&power(DType::Int32, Scalar::Int32(17), 8)); // beyond the limit
    keep(&power(DType::Float64, Scalar::Float64(0.5), 8)); // sqrt differs at -0 and -inf
    keep(&power(DType::Complex128, Scalar::Complex128(2.0, 0.0), 8)); // npy_cpow's own rules

    // In place, a power of two squares `x` where it is; any other exponent goes through
    // a fresh temporary, freed in the batch, or is kept when the batch has no ids to give.
    let in_place = |dtype: DType, k: Scalar| {
        let mut r = Recorder::new();
        let x = r.array(dtype, &[8]);
        r.assign(Opcode::Power, &x, [v(&x), sc(k)]);
        r.sync(&x);
        r.finish()
    };
    for (dtype, k) in [
        (DType::Float64, Scalar::Float64(3.0)),
        (DType::Int8, Scalar::Int8(7)),
        (DType::Int64, Scalar::Int64(5)),
    ] {
        let before = in_place(dtype, k);
        let after = apply("expand_powk", &before);
        assert_eq!(count(&after, Opcode::Power), 0, "{dtype:?}");
        let temps: Vec<_> = after.freed().collect();
        assert_eq!(temps.len(), 1);
        assert!(!before.bases.contains_key(&temps[0]));
        if !dtype.is_inexact() {
            // (Float powers beyond 2 round per multiplication: checked above.)
            assert_same_results(&before, &after);
        }
        let mut no_ids = before.clone();
        no_ids.next_id = 0;
        keep(&no_ids);
    }
    let mut r = Recorder::new();
    let x = r.array(DType::Int16, &[8]);
    r.assign(Opcode::Power, &x, [v(&x), sc(Scalar::Int16(4))]);
    r.sync(&x);
    let before = r.finish();
    let after = apply("expand_powk", &before);
    assert_eq!(count(&after, Opcode::Multiply), 2);
    assert_same_results(&before, &after);
}

// --- simplify -------------------------------------------------------------------------------

fn binary(dtype: DType, op: Opcode, s: Scalar, scalar_left: bool) -> Batch {
    let mut r = Recorder::new();
    let x = r.array(dtype, &[16]);
    let y = if scalar_left {
        r.binary(op, sc(s), v(&x))
    } else {
        r.binary(op, v(&x), sc(s))
    };
    r.sync(&y);
    r.finish()
}

fn simplified_to_copy(b: &Batch) -> bool {
    let after = apply("simplify", b);
    assert_same_results(b, &after);
    after.instrs.len() == 1 && after.instrs[0].op == Opcode::Identity
}

#[test]
fn simplify_removes_exact_identities() {
    assert!(simplified_to_copy(&binary(
        DType::Int32,
        Opcode::Add,
        Scalar::Int32(0),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::Int32,
        Opcode::Add,
        Scalar::Int32(0),
        true
    )));
    assert!(simplified_to_copy(&binary(
        DType::Bool,
        Opcode::Add,
        Scalar::Bool(false),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::Int64,
        Opcode::Subtract,
        Scalar::Int64(0),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::Float64,
        Opcode::Add,
        Scalar::Float64(-0.0),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::Float64,
        Opcode::Subtract,
        Scalar::Float64(0.0),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::Float32,
        Opcode::Multiply,
        Scalar::Float32(1.0),
        true
    )));
    assert!(simplified_to_copy(&binary(
        DType::Float64,
        Opcode::Divide,
        Scalar::Float64(1.0),
        false
    )));
    assert!(simplified_to_copy(&binary(
        DType::UInt8,
        Opcode::Power,
        Scalar::UInt8(1),
        false
    )));
    // Integer x*0 is a fill with zeros.
    assert!(simplified_to_copy(&binary(
        DType::Int16,
        Opcode::Multiply,
        Scalar::Int16(0),
        false
    )));
}

#[test]
fn simplify_leaves_alone_what_signed_zeros_nan_and_complex_forbid() {
    let keep = |b: &Batch| assert_eq!(apply("simplify", b).instrs, b.instrs, "{:?}", b.instrs[0]);
    // NaN * 0 and inf * 0 are NaN, -1 * 0 is -0.0.
    keep(&binary(
        DType::Float64,
        Opcode::Multiply,
        Scalar::Float64(0.0),
        false,
    ));
    // -0.0 + 0.0 is +0.0.
    keep(&binary(
        DType::Float64,
        Opcode::Add,
        Scalar::Float64(0.0),
        false,
    ));
    keep(&binary(
        DType::Float64,
        Opcode::Subtract,
        Scalar::Float64(-0.0),
        false,
    ));
    // 0 - x is not x.
    keep(&binary(
        DType::Int32,
        Opcode::Subtract,
        Scalar::Int32(0),
        true,
    ));
    // (inf + 0j) * (1 + 0j) has a NaN part in NumPy.
    keep(&binary(
        DType::Complex128,
        Opcode::Multiply,
        Scalar::Complex128(1.0, 0.0),
        false,
    ));
    keep(&binary(
        DType::Complex128,
        Opcode::Add,
        Scalar::Complex128(0.0, 0.0),
        false,
    ));
    keep(&binary(
        DType::Float64,
        Opcode::Multiply,
        Scalar::Float64(2.0),
        false,
    ));
}

#[test]
fn simplify_folds_double_negation_and_drops_self_copies() {
    let mut r = Recorder::new();
    let x = r.array(DType::Int8, &[16]);
    let t = r.unary(Opcode::Negative, &x);
    let y = r.unary(Opcode::Negative, &t);
    r.free(&t);
    r.assign(Opcode::Identity, &x, [v(&x)]);
    r.sync(&y);
    let before = r.finish();
    let after = apply("simplify", &before);
    assert_eq!(
        after.instrs[1],
        Instr::new(Opcode::Identity, y.clone(), [v(&x)])
    );
    assert_eq!(count(&after, Opcode::Identity), 1, "the self-copy is gone");
    assert_same_results(&before, &after);
    // Not when x changes in between.
    let mut r = Recorder::new();
    let x = r.array(DType::Int8, &[16]);
    let t = r.unary(Opcode::Negative, &x);
    r.assign(Opcode::Add, &x, [v(&x), sc(Scalar::Int8(1))]);
    let y = r.unary(Opcode::Negative, &t);
    r.sync(&y);
    let b = r.finish();
    assert_eq!(apply("simplify", &b).instrs, b.instrs);
}

#[test]
fn simplify_takes_abs_of_a_negation_from_its_source_so_cse_can_share_it() {
    for dtype in [DType::Float64, DType::Float32, DType::Int8, DType::Int64] {
        let mut r = Recorder::new();
        let x = r.array(dtype, &[16]);
        let a = r.unary(Opcode::Absolute, &x);
        let t = r.unary(Opcode::Negative, &x);
        let b = r.unary(Opcode::Absolute, &t);
        r.free(&t);
        r.sync(&a);
        r.sync(&b);
        let before = r.finish();
        let after = apply("simplify", &before);
        assert_eq!(
            after.instrs[2],
            Instr::new(Opcode::Absolute, b.clone(), [v(&x)]),
            "{dtype:?}"
        );
        assert_same_results(&before, &after);
        // With cse after it, the second absolute value becomes a copy of the first.
        let shared = apply("cse", &after);
        assert_eq!(count(&shared, Opcode::Absolute), 1, "{dtype:?}");
        assert_same_results(&before, &shared);
    }
    // Unsigned negation wraps (abs(-1u8) is 255, abs(1u8) is 1): left alone.
    let mut r = Recorder::new();
    let x = r.array(DType::UInt8, &[16]);
    let t = r.unary(Opcode::Negative, &x);
    let b = r.unary(Opcode::Absolute, &t);
    r.sync(&b);
    let before = r.finish();
    assert_eq!(apply("simplify", &before).instrs, before.instrs);
    // Not when x changes between the negation and the absolute value.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[16]);
    let t = r.unary(Opcode::Negative, &x);
    r.assign(Opcode::Add, &x, [v(&x), sc(Scalar::Float64(1.0))]);
    let b = r.unary(Opcode::Absolute, &t);
    r.sync(&b);
    let before = r.finish();
    assert_eq!(apply("simplify", &before).instrs, before.instrs);
}

#[test]
fn simplify_folds_scalar_arithmetic_with_numpy_wrapping() {
    let mut r = Recorder::new();
    let y = r.array(DType::Int8, &[4]);
    r.assign(
        Opcode::Add,
        &y,
        [sc(Scalar::Int8(100)), sc(Scalar::Int8(100))],
    );
    let z = r.array(DType::Float64, &[4]);
    r.assign(
        Opcode::Divide,
        &z,
        [sc(Scalar::Float64(1.0)), sc(Scalar::Float64(3.0))],
    );
    r.sync(&y);
    r.sync(&z);
    let before = r.finish();
    let after = apply("simplify", &before);
    assert_eq!(after.instrs[0].ins[0], sc(Scalar::Int8(-56)));
    assert_eq!(after.instrs[1].ins[0], sc(Scalar::Float64(1.0 / 3.0)));
    assert_same_results(&before, &after);
}

// --- cse ---------------------------------------------------------------------------------------

#[test]
fn cse_computes_a_repeated_expression_once() {
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let b = r.array(DType::Float64, &[16]);
    let t1 = r.binary(Opcode::Multiply, v(&a), v(&b));
    let t2 = r.binary(Opcode::Multiply, v(&a), v(&b));
    let c = r.binary(Opcode::Add, v(&t1), v(&t2));
    r.free_all([&t1, &t2]);
    r.sync(&c);
    let before = r.finish();
    let after = apply("cse", &before);
    assert_eq!(count(&after, Opcode::Multiply), 1);
    assert_eq!(
        after.instrs[1].ins[1],
        v(&t1),
        "the later use reads the first result"
    );
    assert_same_results(&before, &after);
}

#[test]
fn cse_keeps_a_freed_loop_invariant_alive_instead_of_recomputing_it() {
    // x = x + (-s) * x, three times, with each step's -s freed after use.
    let mut r = Recorder::new();
    let s_arr = r.array(DType::Float64, &[32]);
    let mut x = r.array(DType::Float64, &[32]);
    for _ in 0..3 {
        let t = r.unary(Opcode::Negative, &s_arr);
        let u = r.binary(Opcode::Multiply, v(&t), v(&x));
        r.free(&t);
        let x2 = r.binary(Opcode::Add, v(&x), v(&u));
        r.free(&u);
        x = x2;
    }
    r.sync(&x);
    let before = r.finish();
    let after = apply("cse", &before);
    assert_eq!(count(&after, Opcode::Negative), 1, "computed once");
    // The surviving -s is freed exactly once, after its last read.
    let neg = after
        .instrs
        .iter()
        .find(|i| i.op == Opcode::Negative)
        .unwrap();
    let b = neg.out.base;
    let frees: Vec<usize> = (0..after.instrs.len())
        .filter(|&k| after.instrs[k].op == Opcode::Free && after.instrs[k].out.base == b)
        .collect();
    let last_read = (0..after.instrs.len())
        .filter(|&k| after.instrs[k].input_views().any(|w| w.base == b))
        .max()
        .unwrap();
    assert_eq!(frees.len(), 1);
    assert!(frees[0] > last_read, "freed after its last read");
    assert_same_results(&before, &after);
}

#[test]
fn cse_leaves_alone_when_an_input_or_the_result_changed() {
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let b = r.array(DType::Float64, &[16]);
    let t1 = r.binary(Opcode::Multiply, v(&a), v(&b));
    r.assign(Opcode::Add, &a, [v(&a), sc(Scalar::Float64(1.0))]);
    let t2 = r.binary(Opcode::Multiply, v(&a), v(&b));
    r.sync(&t1);
    r.sync(&t2);
    let b1 = r.finish();
    assert_eq!(apply("cse", &b1).instrs, b1.instrs);
    // In place: a = a*b changes a, so a*b afterwards is another value.
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let b = r.array(DType::Float64, &[16]);
    r.assign(Opcode::Multiply, &a, [v(&a), v(&b)]);
    let t = r.binary(Opcode::Multiply, v(&a), v(&b));
    r.sync(&t);
    let b2 = r.finish();
    assert_eq!(apply("cse", &b2).instrs, b2.instrs);
    // x + 0.0 and x + (-0.0) are different computations.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[16]);
    let p = r.binary(Opcode::Add, v(&x), sc(Scalar::Float64(0.0)));
    let q = r.binary(Opcode::Add, v(&x), sc(Scalar::Float64(-0.0)));
    r.sync(&p);
    r.sync(&q);
    let b3 = r.finish();
    assert_eq!(apply("cse", &b3).instrs, b3.instrs);
}

#[test]
fn cse_copies_into_a_result_that_stays_observable() {
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let t1 = r.unary(Opcode::Sin, &a);
    let t2 = r.unary(Opcode::Sin, &a);
    r.sync(&t1);
    r.sync(&t2);
    let before = r.finish();
    let after = apply("cse", &before);
    assert_eq!(count(&after, Opcode::Sin), 1);
    assert_eq!(after.instrs[1], Instr::new(Opcode::Identity, t2, [v(&t1)]));
    assert_same_results(&before, &after);
}

// --- dead_code -----------------------------------------------------------------------------------

#[test]
fn dead_code_removes_results_freed_unread() {
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let t = r.binary(Opcode::Multiply, v(&a), sc(Scalar::Float64(2.0)));
    let u = r.unary(Opcode::Exp, &t); // only feeds the dead w
    let w = r.unary(Opcode::Sin, &u);
    let kept = r.binary(Opcode::Add, v(&t), sc(Scalar::Float64(1.0)));
    r.free_all([&t, &u, &w]);
    r.sync(&kept);
    let before = r.finish();
    let after = apply("dead_code", &before);
    assert_eq!(count(&after, Opcode::Exp) + count(&after, Opcode::Sin), 0);
    assert_eq!(
        count(&after, Opcode::Multiply),
        1,
        "t is read by a live instruction"
    );
    assert_same_results(&before, &after);
}

#[test]
fn dead_code_keeps_synced_unfreed_and_partly_read_results() {
    let mut r = Recorder::new();
    let a = r.array(DType::Float64, &[16]);
    let t = r.unary(Opcode::Exp, &a);
    let s = r.unary(Opcode::Sin, &a);
    let p = r.unary(Opcode::Cos, &a);
    let head = r.unary(Opcode::Negative, &p.slice(0, 0, 4, 1).unwrap());
    r.free_all([&s, &p]);
    r.sync(&s); // freed but synced: observable
    r.sync(&head);
    let _ = t; // never freed: observable
    let before = r.finish();
    assert_eq!(apply("dead_code", &before).instrs, before.instrs);
}

#[test]
fn dead_code_removes_an_unread_index_write_only_when_its_indices_are_known_in_range() {
    // A compaction into a temporary nothing reads: kept (an index out of range must
    // still raise), unless the batch says its indices are in range.
    let mut r = Recorder::new();
    let src = r.array(DType::Float64, &[8]);
    let mask = r.array(DType::Bool, &[8]);
    let idx = r.array(DType::Int64, &[8]);
    let out = r.array(DType::Float64, &[3]);
    r.assign(Opcode::CondScatter, &out, [v(&idx), v(&src), v(&mask)]);
    r.free(&out);
    let before = r.finish();
    assert_eq!(apply("dead_code", &before).instrs, before.instrs);
    let mut proven = before.clone();
    proven.in_range.push(out.base);
    assert_eq!(count(&apply("dead_code", &proven), Opcode::CondScatter), 0);
}

// --- contract_reductions -------------------------------------------------------------------------

fn two_sums(x_shape: &[usize], a1: usize, a2: usize, op: Opcode, transpose: bool) -> Batch {
    let mut r = Recorder::new();
    let x = r.array(DType::Int64, x_shape);
    let x = if transpose { x.reversed_axes() } else { x };
    let t = r.reduce(op, &x, a1);
    let s = r.reduce(op, &t, a2);
    r.free(&t);
    r.sync(&s);
    r.finish()
}

#[test]
fn contract_reductions_merges_adjacent_axes_into_one_reduction() {
    for (shape, a1, a2) in [
        (&[4, 6][..], 1, 0),
        (&[4, 6], 0, 0),
        (&[2, 3, 4], 1, 1),
        (&[2, 3, 4], 2, 1),
    ] {
        let before = two_sums(shape, a1, a2, Opcode::AddReduce, false);
        let after = apply("contract_reductions", &before);
        assert_eq!(count(&after, Opcode::AddReduce), 1, "{shape:?} {a1} {a2}");
        assert_same_results(&before, &after);
    }
    let before = two_sums(&[4, 6], 1, 0, Opcode::MaximumReduce, false);
    let after = apply("contract_reductions", &before);
    assert_eq!(count(&after, Opcode::MaximumReduce), 1);
    assert_same_results(&before, &after);
}

#[test]
fn contract_reductions_leaves_alone_what_it_cannot_merge() {
    let keep = |b: Batch| assert_eq!(apply("contract_reductions", &b).instrs, b.instrs);
    keep(two_sums(&[2, 3, 4], 2, 0, Opcode::AddReduce, true)); // transposed: no view merges
    keep(two_sums(&[2, 3, 4], 0, 1, Opcode::AddReduce, false)); // axes 0 and 2
    keep(two_sums(&[4, 6], 1, 0, Opcode::ArgmaxReduce, false));
    // Different operations.
    let mut r = Recorder::new();
    let x = r.array(DType::Int64, &[4, 6]);
    let t = r.reduce(Opcode::AddReduce, &x, 1);
    let s = r.reduce(Opcode::MaximumReduce, &t, 0);
    r.free(&t);
    r.sync(&s);
    keep(r.finish());
    // x produced in the batch: its producer would fuse with the first reduction.
    let mut r = Recorder::new();
    let y = r.array(DType::Int64, &[4, 6]);
    let x = r.binary(Opcode::Multiply, v(&y), v(&y));
    let t = r.reduce(Opcode::AddReduce, &x, 1);
    let s = r.reduce(Opcode::AddReduce, &t, 0);
    r.free_all([&t, &x]);
    r.sync(&s);
    keep(r.finish());
    // The intermediate is observable.
    let mut b = two_sums(&[4, 6], 1, 0, Opcode::AddReduce, false);
    let t = b.instrs[0].out.base;
    b.sync.push(t);
    keep(b);
}

// --- dump and the registry ---------------------------------------------------------------------

#[test]
fn dump_writes_text_and_graphviz_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let before = power(DType::Float64, Scalar::Float64(3.0), 8);
    let mut after = before.clone();
    hassium_filters::Dump::to_dir(dir.path())
        .apply(&mut after)
        .unwrap();
    assert_eq!(after, before);
    let n = hassium_core::dump::dump_index();
    let text = std::fs::read_to_string(dir.path().join(format!("batch-{n}.txt"))).unwrap();
    assert!(
        text.contains("power b2:float64+0(8):(1) <- b1:float64+0(8):(1), Float64(3.0)"),
        "{text}"
    );
    let dot = std::fs::read_to_string(dir.path().join(format!("batch-{n}.dot"))).unwrap();
    assert!(dot.starts_with("digraph batch {"));
    let kernels = hassium_fuser::create("greedy", &Default::default())
        .unwrap()
        .fuse(&before, &hassium_core::Capabilities::all())
        .unwrap();
    hassium_filters::write_kernels(dir.path(), n, &before, &kernels).unwrap();
    let k = std::fs::read_to_string(dir.path().join(format!("kernels-{n}.txt"))).unwrap();
    assert!(k.starts_with("kernel 0: shape (8)"), "{k}");
    assert!(
        std::fs::read_to_string(dir.path().join(format!("kernels-{n}.dot")))
            .unwrap()
            .contains("cluster_0")
    );
}

#[test]
fn every_filter_is_registered_by_its_toml_name() {
    for name in [
        "expand_powk",
        "simplify",
        "cse",
        "dead_code",
        "contract_reductions",
        "piecewise",
        "update_cells",
        "dump",
    ] {
        assert!(create(name).is_ok(), "{name}");
    }
    let e = create("simplfy").err().unwrap().to_string();
    assert!(
        e.contains("unknown filter 'simplfy'")
            && e.contains("expand_powk, piecewise, update_cells, simplify"),
        "{e}"
    );
}

#[test]
fn the_default_filter_chain_keeps_black_scholes_like_code_correct() {
    // x**2 + x**3 - (x*1 + 0) with a repeated subexpression and a dead temporary.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[32]);
    let a = r.binary(Opcode::Power, v(&x), sc(Scalar::Float64(2.0)));
    let b = r.binary(Opcode::Power, v(&x), sc(Scalar::Float64(2.0)));
    let c = r.binary(Opcode::Add, v(&a), v(&b));
    let d = r.binary(Opcode::Multiply, v(&x), sc(Scalar::Float64(1.0)));
    let e = r.binary(Opcode::Subtract, v(&c), v(&d));
    let dead = r.unary(Opcode::Exp, &e);
    r.free_all([&a, &b, &c, &d, &dead]);
    r.sync(&e);
    let before = r.finish();
    let mut after = before.clone();
    for name in ["expand_powk", "simplify", "cse", "dead_code"] {
        after = apply(name, &after);
    }
    assert_eq!(count(&after, Opcode::Power) + count(&after, Opcode::Exp), 0);
    assert_eq!(
        count(&after, Opcode::Multiply),
        1,
        "x*x once; x*1 became a copy"
    );
    assert_same_results(&before, &after);
}

// --- piecewise -----------------------------------------------------------------------------------

/// `piecewise` cutting whatever it can: the default weighs the copies saved against the
/// instructions added, which these small arrays never pass.
fn piecewise(batch: &Batch) -> Batch {
    let mut out = batch.clone();
    hassium_filters::Piecewise { bytes_per_instr: 0 }
        .apply(&mut out)
        .unwrap();
    verify(&out).unwrap_or_else(|e| panic!("piecewise broke verify: {e}"));
    out
}

/// `np.roll(x, shift, axis)` as the bridge records it: a fresh array and two copies.
fn roll(r: &mut Recorder, x: &View, shift: usize, axis: usize) -> View {
    let b = r.array(x.dtype, &x.shape);
    let n = x.shape[axis] as isize;
    let s = shift as isize;
    let cut = |view: &View, lo: isize, hi: isize| view.slice(axis, lo, hi, 1).unwrap();
    r.assign(Opcode::Identity, &cut(&b, s, n), [v(&cut(x, 0, n - s))]);
    r.assign(Opcode::Identity, &cut(&b, 0, s), [v(&cut(x, n - s, n))]);
    b
}

/// `piecewise` changes nothing in the recorded batch, which runs as before.
fn assert_piecewise_leaves_alone(r: Recorder) {
    let before = r.finish();
    let after = piecewise(&before);
    assert_eq!(after.instrs, before.instrs);
    assert_same_results(&before, &after);
}

/// Copies into `b` left in the batch.
fn copies_into(batch: &Batch, b: &View) -> usize {
    batch
        .instrs
        .iter()
        .filter(|i| i.op == Opcode::Identity && i.out.base == b.base)
        .count()
}

fn reads_of(batch: &Batch, b: &View) -> usize {
    batch
        .instrs
        .iter()
        .flat_map(|i| i.input_views())
        .filter(|x| x.base == b.base)
        .count()
}

#[test]
fn piecewise_reads_a_rolled_array_through_its_pieces() {
    for axis in [0, 1] {
        let mut r = Recorder::new();
        let x = r.array(DType::Float64, &[5, 7]);
        let b = roll(&mut r, &x, 2, axis);
        let y = r.binary(Opcode::Multiply, v(&b), sc(Scalar::Float64(2.0)));
        let z = r.binary(Opcode::Add, v(&y), v(&x));
        r.free_all([&b, &y]);
        r.sync(&z);
        let before = r.finish();
        let after = piecewise(&before);
        assert_eq!(copies_into(&after, &b), 0, "axis {axis}");
        assert_eq!(reads_of(&after, &b), 0, "axis {axis}");
        // Two cells each for the multiply and the add (y renamed per cell).
        assert_eq!(count(&after, Opcode::Multiply), 2);
        assert_eq!(count(&after, Opcode::Add), 2);
        assert_eq!(reads_of(&after, &y), 0, "y is one temporary per cell");
        assert_same_results(&before, &after);
    }
}

#[test]
fn piecewise_follows_a_roll_of_a_roll_and_a_sum_of_rolls() {
    // The neighbour sum of a periodic board: rolls along both axes, by +1 and -1.
    let mut r = Recorder::new();
    let x = r.array(DType::Int32, &[6, 9]);
    let mut terms = Vec::new();
    let mut rolled = Vec::new();
    for (s0, s1) in [(1, 0), (5, 0), (0, 1), (0, 8), (1, 1), (5, 8)] {
        let a = if s0 > 0 {
            roll(&mut r, &x, s0, 0)
        } else {
            x.clone()
        };
        let b = if s1 > 0 {
            roll(&mut r, &a, s1, 1)
        } else {
            a.clone()
        };
        if s0 > 0 && s1 > 0 {
            rolled.push(a.clone());
        }
        rolled.push(b.clone());
        terms.push(b);
    }
    let mut acc = r.binary(Opcode::Add, v(&terms[0]), v(&terms[1]));
    let mut sums = vec![acc.clone()];
    for t in &terms[2..] {
        acc = r.binary(Opcode::Add, v(&acc), v(t));
        sums.push(acc.clone());
    }
    let alive = r.binary(Opcode::Equal, v(&acc), sc(Scalar::Int32(3)));
    r.free_all(rolled.iter().chain(&sums[..sums.len() - 1]));
    r.free(&acc);
    r.sync(&alive);
    let before = r.finish();
    let after = piecewise(&before);
    for b in &rolled {
        if copies_into(&after, b) != 0 {
            eprintln!("{}", hassium_core::dump::batch_text(&after));
        }
        assert_eq!(copies_into(&after, b), 0);
        assert_eq!(reads_of(&after, b), 0);
    }
    assert_eq!(count(&after, Opcode::Identity), 0, "no copy is left");
    assert!(after.instrs.iter().all(|i| i.op.is_system()
        || i.input_views()
            .all(|x2| x2.base == x.base || !before.bases.contains_key(&x2.base))));
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_leaves_reads_after_a_source_changed_and_reads_by_its_writer() {
    // x changes between the roll and the read: the copies hold the old values.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[4, 6]);
    let b = roll(&mut r, &x, 1, 0);
    r.assign(Opcode::Add, &x, [v(&x), sc(Scalar::Float64(1.0))]);
    let y = r.binary(Opcode::Multiply, v(&b), v(&x));
    r.free(&b);
    r.sync(&y);
    r.sync(&x);
    assert_piecewise_leaves_alone(r);

    // x[...] = roll(x) + 1 reads x through b while writing x.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[4, 6]);
    let b = roll(&mut r, &x, 3, 1);
    r.assign(Opcode::Add, &x, [v(&b), sc(Scalar::Float64(1.0))]);
    r.free(&b);
    r.sync(&x);
    assert_piecewise_leaves_alone(r);
}

#[test]
fn piecewise_leaves_an_array_whose_source_changed_between_its_copies() {
    // b[:2] = x[:2]; x += 1; b[2:] = y[2:]; z = b * 2: b[:2] holds x's old values.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[4, 3]);
    let y = r.array(DType::Float64, &[4, 3]);
    let b = r.array(DType::Float64, &[4, 3]);
    let rows = |v: &View, lo, hi| v.slice(0, lo, hi, 1).unwrap();
    r.assign(Opcode::Identity, &rows(&b, 0, 2), [v(&rows(&x, 0, 2))]);
    r.assign(Opcode::Add, &x, [v(&x), sc(Scalar::Float64(1.0))]);
    r.assign(Opcode::Identity, &rows(&b, 2, 4), [v(&rows(&y, 2, 4))]);
    let z = r.binary(Opcode::Multiply, v(&b), sc(Scalar::Float64(2.0)));
    r.free(&b);
    r.sync(&z);
    r.sync(&x);
    assert_piecewise_leaves_alone(r);
}

#[test]
fn piecewise_keeps_a_source_freed_early_alive_until_the_reads() {
    // t = x * 2; b = roll(t); free t; y = b + 1: t must live until y is computed.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[8, 3]);
    let t = r.binary(Opcode::Multiply, v(&x), sc(Scalar::Float64(2.0)));
    let b = roll(&mut r, &t, 3, 0);
    r.free(&t);
    let y = r.binary(Opcode::Add, v(&b), sc(Scalar::Float64(1.0)));
    r.free(&b);
    r.sync(&y);
    let before = r.finish();
    let after = piecewise(&before);
    assert_eq!(copies_into(&after, &b), 0);
    let free_t = after
        .instrs
        .iter()
        .position(|i| i.op == Opcode::Free && i.out.base == t.base)
        .unwrap();
    let last_read = after
        .instrs
        .iter()
        .rposition(|i| i.input_views().any(|w| w.base == t.base))
        .unwrap();
    assert!(free_t > last_read);
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_forwards_what_it_can_and_keeps_what_spans_pieces_in_a_reduction() {
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[6, 4]);
    let b = roll(&mut r, &x, 2, 0);
    // A sum over all of b spans both pieces: b stays; a sum of rows 3.. lies in one.
    let whole = r.reduce(Opcode::AddReduce, &b, 0);
    let tail = r.reduce(Opcode::AddReduce, &b.slice(0, 3, 6, 1).unwrap(), 0);
    r.free(&b);
    r.sync(&whole);
    r.sync(&tail);
    let before = r.finish();
    let after = piecewise(&before);
    assert_eq!(copies_into(&after, &b), 2, "the whole sum still reads b");
    assert_eq!(reads_of(&after, &b), 1);
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_reads_a_scalar_piece_as_the_scalar() {
    // np.concatenate([zeros(2, 5), x]) as a fill and a copy, then a broadcast column.
    let mut r = Recorder::new();
    let x = r.array(DType::Float32, &[3, 5]);
    let col = r.array(DType::Float32, &[5, 1]);
    let b = r.array(DType::Float32, &[5, 5]);
    r.assign(
        Opcode::Identity,
        &b.slice(0, 0, 2, 1).unwrap(),
        [sc(Scalar::Float32(0.0))],
    );
    r.assign(Opcode::Identity, &b.slice(0, 2, 5, 1).unwrap(), [v(&x)]);
    let mut wide = col.clone();
    wide.shape[1] = 5;
    wide.strides[1] = 0;
    let y = r.binary(Opcode::Subtract, v(&b), v(&wide));
    r.free(&b);
    r.sync(&y);
    let before = r.finish();
    let after = piecewise(&before);
    assert_eq!(copies_into(&after, &b), 0);
    let subs: Vec<&Instr> = after
        .instrs
        .iter()
        .filter(|i| i.op == Opcode::Subtract)
        .collect();
    assert_eq!(subs.len(), 2);
    assert!(subs[0].ins[0].as_scalar().is_some());
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_gives_a_scalar_piece_only_to_elementwise_readers() {
    // np.ones(n): a fill, read by a sum (which needs a view) and by a product.
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[7]);
    let ones = r.array(DType::Float64, &[7]);
    r.assign(Opcode::Identity, &ones, [sc(Scalar::Float64(1.0))]);
    let s = r.reduce(Opcode::AddReduce, &ones, 0);
    let y = r.binary(Opcode::Multiply, v(&ones), v(&x));
    r.free(&ones);
    r.sync(&s);
    r.sync(&y);
    let before = r.finish();
    let after = piecewise(&before);
    assert_eq!(
        copies_into(&after, &ones),
        1,
        "the sum still reads the fill"
    );
    assert_eq!(reads_of(&after, &ones), 1);
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_without_fresh_ids_cuts_nothing() {
    let mut r = Recorder::new();
    let x = r.array(DType::Float64, &[5, 7]);
    let b = roll(&mut r, &x, 2, 0);
    let y = r.binary(Opcode::Multiply, v(&b), sc(Scalar::Float64(2.0)));
    let tail = r.unary(Opcode::Negative, &b.slice(0, 3, 5, 1).unwrap());
    r.free(&b);
    r.sync(&y);
    r.sync(&tail);
    let mut before = r.finish();
    before.next_id = 0;
    let after = piecewise(&before);
    assert_eq!(count(&after, Opcode::Multiply), 1);
    assert_eq!(copies_into(&after, &b), 2);
    assert_eq!(reads_of(&after, &b), 1, "the tail reads x");
    assert_same_results(&before, &after);
}

#[test]
fn piecewise_by_default_cuts_only_where_the_copies_outweigh_the_added_instructions() {
    for (n, cut) in [(8, false), (1024, true)] {
        let mut r = Recorder::new();
        let x = r.array(DType::Float64, &[n, n]);
        let b = roll(&mut r, &x, 1, 0);
        let y = r.binary(Opcode::Multiply, v(&b), sc(Scalar::Float64(2.0)));
        r.free(&b);
        r.sync(&y);
        let before = r.finish();
        let after = apply("piecewise", &before);
        assert_eq!(copies_into(&after, &b) == 0, cut, "{n}²");
        assert_same_results(&before, &after);
    }
}

#[test]
fn piecewise_reads_a_whole_copy_as_its_source() {
    let mut r = Recorder::new();
    let x = r.array(DType::Int16, &[6, 5]);
    let c = r.array(DType::Int16, &[6, 5]);
    r.assign(Opcode::Identity, &c, [v(&x)]);
    let y = r.binary(Opcode::Add, v(&c), v(&x));
    r.free(&c);
    r.sync(&y);
    let before = r.finish();
    let after = apply("piecewise", &before);
    assert_eq!(copies_into(&after, &c), 0);
    assert_eq!(reads_of(&after, &c), 0);
    assert_same_results(&before, &after);
}

/// A random program over same-shaped arrays: rolls (along either axis, of rolls too),
/// arrays assembled from slices of two others, plain copies, fills, elementwise arithmetic,
/// in-place updates of sources (closing forwarding windows), row sums, and temporaries
/// freed as soon as they leave the pool; some results synced.
fn random_assembly(seed: u64) -> Batch {
    let mut d = exec::Rng(seed);
    let mut r = Recorder::new();
    let dtype = if d.below(4) == 0 {
        DType::Int32
    } else {
        DType::Float64
    };
    let shape = [2 + d.below(6), 2 + d.below(7)];
    let mut pool: Vec<View> = (0..2).map(|_| r.array(dtype, &shape)).collect();
    let inputs = pool.len();
    let mut temps: Vec<View> = Vec::new();
    for _ in 0..4 + d.below(12) {
        let x = pool[d.below(pool.len())].clone();
        let y = pool[d.below(pool.len())].clone();
        let made = match d.below(8) {
            7 => {
                // np.full: one scalar piece
                let b = r.array(dtype, &shape);
                r.assign(Opcode::Identity, &b, [sc(Scalar::Float64(1.5).cast(dtype))]);
                b
            }
            0 | 1 => {
                let axis = d.below(2);
                let s = 1 + d.below(shape[axis] - 1);
                roll(&mut r, &x, s, axis)
            }
            2 => {
                // b[:k] = x[:k], b[k:] = y[k:] (along either axis)
                let axis = d.below(2);
                let k = 1 + d.below(shape[axis] - 1) as isize;
                let n = shape[axis] as isize;
                let b = r.array(dtype, &shape);
                let cut = |v: &View, lo, hi| v.slice(axis, lo, hi, 1).unwrap();
                r.assign(Opcode::Identity, &cut(&b, 0, k), [v(&cut(&x, 0, k))]);
                if d.below(4) == 0 && x.base != y.base {
                    // x changes between the two copies: b[:k] holds its old values
                    r.assign(Opcode::Add, &x, [v(&x), v(&y)]);
                }
                r.assign(Opcode::Identity, &cut(&b, k, n), [v(&cut(&y, k, n))]);
                b
            }
            3 => {
                let b = r.array(dtype, &shape);
                r.assign(Opcode::Identity, &b, [v(&x)]);
                b
            }
            4 => {
                let op = [Opcode::Add, Opcode::Subtract, Opcode::Multiply][d.below(3)];
                r.binary(op, v(&x), v(&y))
            }
            5 => {
                // x += y: a source written after its copies were taken
                r.assign(Opcode::Add, &x, [v(&x), v(&y)]);
                continue;
            }
            _ => {
                let s = r.reduce(Opcode::AddReduce, &x, d.below(2));
                r.sync(&s);
                continue;
            }
        };
        pool.push(made.clone());
        temps.push(made);
        if pool.len() > 5 {
            // The oldest temporary leaves the pool: freed now, or kept and synced.
            let gone = pool.remove(inputs);
            if d.below(3) == 0 {
                r.sync(&gone);
            } else {
                r.free(&gone);
                temps.retain(|t| t.base != gone.base);
            }
        }
    }
    let last = pool.last().unwrap().clone();
    let out = r.binary(Opcode::Add, v(&last), v(&pool[0]));
    r.sync(&out);
    for t in temps.iter().filter(|t| t.base != last.base) {
        if d.below(2) == 0 {
            r.free(t);
        }
    }
    r.finish()
}

/// Runs `filter` over `seeds` random programs from `make`: every result equals the
/// unfiltered program's, unfused and fused by greedy. Returns how many it rewrote.
fn random_programs_stay_correct(
    seeds: u64,
    make: fn(u64) -> Batch,
    filter: impl Fn(&Batch) -> Batch,
) -> usize {
    let caps = hassium_core::Capabilities::all();
    let mut fuser =
        hassium_fuser::create("greedy", &hassium_fuser::FuserOptions::default()).unwrap();
    let mut changed = 0;
    for seed in 0..seeds {
        let before = make(seed);
        verify(&before).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let after = filter(&before);
        changed += usize::from(after.instrs != before.instrs);
        let want = exec::observe(&before, &exec::unfused(&before), seed, true).unwrap();
        let got = exec::observe(&after, &exec::unfused(&after), seed, true).unwrap();
        assert_eq!(got, want, "seed {seed}");
        let kernels = fuser.fuse(&after, &caps).unwrap();
        let fused = exec::observe(&after, &kernels, seed, true).unwrap();
        assert_eq!(fused, want, "seed {seed}, fused");
    }
    changed
}

#[test]
fn piecewise_keeps_random_assemblies_correct_fused_or_not() {
    let changed = random_programs_stay_correct(2000, random_assembly, piecewise);
    assert!(
        changed > 1000,
        "only {changed} of 2000 programs were rewritten"
    );
}

// --- update_cells --------------------------------------------------------------------------------

/// `update_cells` cutting whatever it can (the default weighs bytes against instructions,
/// which these small arrays never pass).
fn update_cells(batch: &Batch) -> Batch {
    let mut out = batch.clone();
    hassium_filters::UpdateCells { bytes_per_instr: 0 }
        .apply(&mut out)
        .unwrap();
    verify(&out).unwrap_or_else(|e| panic!("update_cells broke verify: {e}"));
    out
}

/// The batch fused by the greedy fuser gives what it gives unfused, and its kernels.
fn fused_kernels(batch: &Batch, seed: u64) -> Vec<hassium_core::Kernel> {
    let kernels = hassium_fuser::create("greedy", &Default::default())
        .unwrap()
        .fuse(batch, &hassium_core::Capabilities::all())
        .unwrap();
    let want = exec::observe(batch, &exec::unfused(batch), seed, true).unwrap();
    let got = exec::observe(batch, &kernels, seed, true).unwrap();
    assert_eq!(got, want, "seed {seed}, fused");
    kernels
}

/// `out = 4 * u` minus `u` shifted by one along each axis both ways, each subtraction an
/// in-place update of a box of `out` (a matrix-free 2-D Laplacian).
fn laplacian(r: &mut Recorder, u: &View) -> View {
    let out = r.binary(Opcode::Multiply, sc(Scalar::Float64(4.0)), v(u));
    let (n0, n1) = (u.shape[0] as isize, u.shape[1] as isize);
    for (axis, n) in [(0, n0), (1, n1)] {
        for (dst, src) in [((1, n), (0, n - 1)), ((0, n - 1), (1, n))] {
            let o = out.slice(axis, dst.0, dst.1, 1).unwrap();
            let s = u.slice(axis, src.0, src.1, 1).unwrap();
            r.assign(Opcode::Subtract, &o, [v(&o), v(&s)]);
        }
    }
    out
}

#[test]
fn update_cells_fuses_the_updates_of_each_cell_of_a_laplacian() {
    let mut r = Recorder::new();
    let u = r.array(DType::Float64, &[6, 7]);
    let out = laplacian(&mut r, &u);
    r.sync(&out);
    let before = r.finish();
    let after = update_cells(&before);
    // Nine cells: the interior (4 × 5) gets all five updates, each edge four, each
    // corner three.
    assert_eq!(after.instrs.len(), 5 + 4 * 4 + 4 * 3);
    let interior: Vec<&Instr> = after
        .instrs
        .iter()
        .filter(|i| i.out.shape.as_slice() == [4, 5])
        .collect();
    assert_eq!(interior.len(), 5);
    assert!(interior.iter().all(|i| i.out == interior[0].out));
    assert_same_results(&before, &after);
    // Unfiltered, each update is a kernel of its own; cut, each cell is one kernel.
    assert_eq!(fused_kernels(&before, 0).len(), 5);
    for seed in 0..3 {
        assert_eq!(fused_kernels(&after, seed).len(), 9);
    }
}

#[test]
fn update_cells_fuses_a_flux_difference_in_one_dimension() {
    // d[:-1] -= f; d[1:] += f on a fresh zeroed d: three cells, the middle one fused.
    let mut r = Recorder::new();
    let f = r.array(DType::Float32, &[9]);
    let d = r.array(DType::Float32, &[10]);
    r.assign(Opcode::Identity, &d, [sc(Scalar::Float32(0.0))]);
    let lo = d.slice(0, 0, 9, 1).unwrap();
    let hi = d.slice(0, 1, 10, 1).unwrap();
    r.assign(Opcode::Subtract, &lo, [v(&lo), v(&f)]);
    r.assign(Opcode::Add, &hi, [v(&hi), v(&f)]);
    r.sync(&d);
    let before = r.finish();
    let after = update_cells(&before);
    assert_eq!(after.instrs.len(), 3 + 2 + 2);
    assert_same_results(&before, &after);
    assert_eq!(fused_kernels(&after, 1).len(), 3);
}

#[test]
fn update_cells_leaves_alone_what_it_cannot_cut() {
    let assert_alone = |before: Batch| {
        let after = update_cells(&before);
        assert_eq!(after.instrs, before.instrs);
    };
    // An update reading the array through another view: `x[:4] += x[4:]`, then
    // `x[2:6] *= 3` (cell by cell, the second would run before the first read x[4:6]).
    let mut r = Recorder::new();
    let x = r.array(DType::Int64, &[8]);
    let (a, b) = (x.slice(0, 0, 4, 1).unwrap(), x.slice(0, 4, 8, 1).unwrap());
    r.assign(Opcode::Add, &a, [v(&a), v(&b)]);
    let c = x.slice(0, 2, 6, 1).unwrap();
    r.assign(Opcode::Multiply, &c, [v(&c), sc(Scalar::Int64(3))]);
    r.sync(&x);
    assert_alone(r.finish());
    // What the updates read is written between them.
    let mut r = Recorder::new();
    let (x, y) = (r.array(DType::Float64, &[8]), r.array(DType::Float64, &[7]));
    let (a, b) = (x.slice(0, 1, 8, 1).unwrap(), x.slice(0, 0, 7, 1).unwrap());
    r.assign(Opcode::Add, &a, [v(&a), v(&y)]);
    r.assign(Opcode::Negative, &y, [v(&y)]);
    r.assign(Opcode::Add, &b, [v(&b), v(&y)]);
    r.sync(&x);
    r.sync(&y);
    assert_alone(r.finish());
    // An update that can fail (a negative integer power raises).
    let mut r = Recorder::new();
    let (x, y) = (r.array(DType::Int32, &[8]), r.array(DType::Int32, &[7]));
    let (a, b) = (x.slice(0, 1, 8, 1).unwrap(), x.slice(0, 0, 7, 1).unwrap());
    r.assign(Opcode::Add, &a, [v(&a), v(&y)]);
    r.assign(Opcode::Power, &b, [v(&b), v(&y)]);
    r.sync(&x);
    assert_alone(r.finish());
    // Updates of one and the same box fuse already.
    let mut r = Recorder::new();
    let (x, y) = (r.array(DType::Float64, &[8]), r.array(DType::Float64, &[7]));
    let a = x.slice(0, 1, 8, 1).unwrap();
    r.assign(Opcode::Add, &a, [v(&a), v(&y)]);
    r.assign(Opcode::Multiply, &a, [v(&a), v(&y)]);
    r.sync(&x);
    assert_alone(r.finish());
}

/// A random run of in-place updates of boxes of one 2-D array, with reads of another
/// array between them and sometimes a write of it.
fn random_updates(seed: u64) -> Batch {
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = |n: usize| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 33) % n as u64) as usize
    };
    let mut r = Recorder::new();
    let (n0, n1) = (2 + next(5), 2 + next(6));
    let x = r.array(DType::Float64, &[n0, n1]);
    let u = r.array(DType::Float64, &[n0 + 2, n1 + 2]);
    let ops = [
        Opcode::Add,
        Opcode::Subtract,
        Opcode::Multiply,
        Opcode::Maximum,
    ];
    for _ in 0..2 + next(5) {
        let (a0, a1) = (next(n0), next(n1));
        let (l0, l1) = (1 + next(n0 - a0), 1 + next(n1 - a1));
        let o = x.slice(0, a0 as isize, (a0 + l0) as isize, 1).unwrap();
        let o = o.slice(1, a1 as isize, (a1 + l1) as isize, 1).unwrap();
        let (b0, b1) = (next(n0 + 3 - l0), next(n1 + 3 - l1));
        let s = u.slice(0, b0 as isize, (b0 + l0) as isize, 1).unwrap();
        let s = s.slice(1, b1 as isize, (b1 + l1) as isize, 1).unwrap();
        let op = ops[next(ops.len())];
        match next(8) {
            0 => r.assign(Opcode::Negative, &u, [v(&u)]),
            1 => r.assign(op, &o, [v(&s), sc(Scalar::Float64(0.5))]),
            _ => r.assign(op, &o, [v(&o), v(&s)]),
        }
    }
    r.sync(&x);
    r.sync(&u);
    r.finish()
}

#[test]
fn update_cells_keeps_random_updates_correct_fused_or_not() {
    let mut changed = 0;
    for seed in 0..1000 {
        let before = random_updates(seed);
        verify(&before).unwrap();
        let after = update_cells(&before);
        changed += usize::from(after.instrs != before.instrs);
        let want = exec::observe(&before, &exec::unfused(&before), seed, true).unwrap();
        let got = exec::observe(&after, &exec::unfused(&after), seed, true).unwrap();
        assert_eq!(got, want, "seed {seed}");
        fused_kernels(&after, seed);
    }
    assert!(
        changed > 300,
        "only {changed} of 1000 programs were rewritten"
    );
}

// --- rematerialize -------------------------------------------------------------------------------

/// `x = arange(n) * h` as the runtime records it: `range` into a temporary, then a
/// scaling into `x`; the temporary is freed.
fn generated(r: &mut Recorder, dtype: DType, n: usize, h: f64) -> View {
    let i = r.array(dtype, &[n]);
    r.push(Instr::new(Opcode::Range, i.clone(), []));
    let x = r.binary(Opcode::Multiply, v(&i), sc(Scalar::Float64(h).cast(dtype)));
    r.free(&i);
    x
}

/// Every base some kernel of the greedy fusion of `batch` writes.
fn written(batch: &Batch) -> Vec<hassium_core::BaseId> {
    let mut w: Vec<_> = fused_kernels(batch, 0)
        .iter()
        .flat_map(|k| k.writes.iter().copied())
        .collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// A least-squares fit's shape: `sum(x)`, then `sum((x - mean) * y)`, the second pass
/// after the reduction the first one ends in.
fn two_passes(r: &mut Recorder, x: &View, y: &View) -> View {
    let n = x.shape[0];
    let s = r.reduce(Opcode::AddReduce, x, 0);
    let m = r.binary(Opcode::Divide, v(&s), sc(Scalar::Float64(n as f64)));
    let d = r.binary(Opcode::Subtract, v(x), v(&m.broadcast_to(&[n]).unwrap()));
    let t = r.binary(Opcode::Multiply, v(&d), v(y));
    let out = r.reduce(Opcode::AddReduce, &t, 0);
    r.free_all([&s, &m, &d, &t]);
    out
}

#[test]
fn rematerialize_recomputes_an_index_temporary_in_each_kernel_that_reads_it() {
    let mut r = Recorder::new();
    let n = 1000;
    let y = r.array(DType::Float64, &[n]);
    let x = generated(&mut r, DType::Float64, n, 0.001);
    let out = two_passes(&mut r, &x, &y);
    r.free(&x);
    r.sync(&out);
    let before = r.finish();
    let after = apply("rematerialize", &before);
    // Each of the two readers has its own range and scaling; the original is gone.
    assert_eq!(count(&before, Opcode::Range), 1);
    assert_eq!(count(&after, Opcode::Range), 2);
    let writes_x = |i: &Instr| i.op != Opcode::Free && i.out.base == x.base;
    assert!(!after.instrs.iter().any(writes_x));
    assert_same_results(&before, &after);
    // Unfiltered, the first kernel writes x for the second; filtered, only the 0-d
    // results reach memory.
    assert!(written(&before).contains(&x.base));
    let w = written(&after);
    assert!(
        w.iter().all(|id| after.base(*id).unwrap().nelem == 1),
        "{w:?}"
    );
}

#[test]
fn rematerialize_leaves_alone_what_is_not_a_function_of_the_index() {
    let n = 64;
    // Synced, written twice, or kept (not freed): left as is.
    for case in 0..3 {
        let mut r = Recorder::new();
        let y = r.array(DType::Float64, &[n]);
        let x = generated(&mut r, DType::Float64, n, 0.5);
        match case {
            0 => r.sync(&x),
            1 => r.assign(Opcode::Add, &x, [v(&x), sc(Scalar::Float64(1.0))]),
            _ => {}
        }
        let out = two_passes(&mut r, &x, &y);
        if case == 1 {
            r.free(&x);
        }
        r.sync(&out);
        let before = r.finish();
        let after = apply("rematerialize", &before);
        assert_eq!(after.instrs, before.instrs, "case {case}");
    }
    // Random numbers cost more to make again than to read.
    let mut r = Recorder::new();
    let y = r.array(DType::Float64, &[n]);
    let bits = r.array(DType::UInt64, &[n]);
    r.push(Instr::new(
        Opcode::Random,
        bits.clone(),
        [sc(Scalar::UInt64(7)), sc(Scalar::UInt64(0))],
    ));
    let x = r.cast(&bits, DType::Float64);
    r.free(&bits);
    let out = two_passes(&mut r, &x, &y);
    r.free(&x);
    r.sync(&out);
    let before = r.finish();
    assert_eq!(apply("rematerialize", &before).instrs, before.instrs);
    // A batch with no ids to give is left alone.
    let mut r = Recorder::new();
    let y = r.array(DType::Float64, &[n]);
    let x = generated(&mut r, DType::Float64, n, 0.5);
    let out = two_passes(&mut r, &x, &y);
    r.free(&x);
    r.sync(&out);
    let mut before = r.finish();
    before.next_id = 0;
    assert_eq!(apply("rematerialize", &before).instrs, before.instrs);
}

#[test]
fn rematerialize_keeps_the_original_for_a_reader_through_another_view() {
    let mut r = Recorder::new();
    let n = 50;
    let y = r.array(DType::Float64, &[n]);
    let x = generated(&mut r, DType::Float64, n, 0.1);
    let out = two_passes(&mut r, &x, &y);
    // x[1:] + y[:-1]: a slice, which a copy at x's shape would not fuse with.
    let a = x.slice(0, 1, n as isize, 1).unwrap();
    let b = y.slice(0, 0, n as isize - 1, 1).unwrap();
    let z = r.binary(Opcode::Add, v(&a), v(&b));
    r.free(&x);
    r.sync(&out);
    r.sync(&z);
    let before = r.finish();
    let after = apply("rematerialize", &before);
    assert!(after.instrs.iter().any(|i| i.out.base == x.base));
    assert_eq!(count(&after, Opcode::Range), 3);
    assert_same_results(&before, &after);
}

/// A random program of index-generated temporaries (chains of casts, scalings and sums
/// of each other, in several dtypes) read by elementwise passes separated by reductions,
/// some through slices; some results kept, some synced.
fn random_generated(seed: u64) -> Batch {
    let mut d = exec::Rng(seed);
    let n = 1 + d.below(40);
    let mut r = Recorder::new();
    let data = r.array(DType::Float64, &[n]);
    let dtypes = [DType::Float64, DType::Float32, DType::Int32, DType::Int64];
    let mut pure: Vec<View> = Vec::new();
    let mut results: Vec<View> = Vec::new();
    for _ in 0..6 + d.below(12) {
        match d.below(6) {
            0 | 1 => {
                let t = *d.pick(&dtypes);
                pure.push(generated(&mut r, t, n, (d.below(7) as f64) - 3.0));
            }
            2 if !pure.is_empty() => {
                // One more step: a cast, or a sum or product of two.
                let a = d.pick(&pure).clone();
                let next = if d.below(2) == 0 {
                    r.cast(&a, *d.pick(&dtypes))
                } else {
                    let b = d.pick(&pure).clone();
                    let b = if b.dtype == a.dtype {
                        b
                    } else {
                        r.cast(&b, a.dtype)
                    };
                    let op = *d.pick(&[Opcode::Add, Opcode::Subtract, Opcode::Multiply]);
                    r.binary(op, v(&a), v(&b))
                };
                pure.push(next);
            }
            3 if !pure.is_empty() => {
                // A pass ending in a reduction, whose result the next passes read.
                let a = d.pick(&pure).clone();
                let a = r.cast(&a, DType::Float64);
                let s = r.reduce(Opcode::AddReduce, &a, 0);
                let t = r.binary(
                    Opcode::Multiply,
                    v(&data),
                    v(&s.broadcast_to(&[n]).unwrap()),
                );
                r.free(&a);
                results.push(s);
                results.push(t);
            }
            4 if !pure.is_empty() && n > 1 => {
                let a = d.pick(&pure).clone();
                let s = a.slice(0, 1, n as isize, 1).unwrap();
                let s = r.cast(&s, DType::Float64);
                results.push(s);
            }
            _ if !pure.is_empty() => {
                let a = d.pick(&pure).clone();
                let a = r.cast(&a, DType::Float64);
                let t = r.binary(Opcode::Add, v(&a), v(&data));
                r.free(&a);
                results.push(t);
            }
            _ => {}
        }
    }
    for p in &pure {
        match d.below(4) {
            0 => r.sync(p),
            1 => {}
            _ => r.free(p),
        }
    }
    for t in &results {
        if d.below(3) == 0 {
            r.free(t);
        } else {
            r.sync(t);
        }
    }
    r.finish()
}

#[test]
fn rematerialize_keeps_random_programs_correct_fused_or_not() {
    let changed =
        random_programs_stay_correct(1000, random_generated, |b| apply("rematerialize", b));
    assert!(
        changed > 200,
        "only {changed} of 1000 programs were rewritten"
    );
}
