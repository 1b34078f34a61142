//! Fusion-structure tests: what becomes one kernel, what stays apart, what is contracted.
//! Batches are recorded the way the NumPy bridge records them (fresh temporaries, freed
//! after their last use).

use hassium_core::{
    verify, BaseId, Batch, Capabilities, DType, Instr, Kernel, Opcode, Operand, Scalar, View,
};
use hassium_fuser::recorder::Recorder;
use hassium_fuser::{check_partition, cost, create, FuserOptions};

const F64: DType = DType::Float64;

fn s(x: f64) -> Operand {
    Scalar::Float64(x).into()
}

fn v(x: &View) -> Operand {
    x.clone().into()
}

fn fuse_with(name: &str, batch: &Batch, caps: &Capabilities) -> Vec<Kernel> {
    verify(batch).expect("test batches are well formed");
    let kernels = create(name, &FuserOptions::default())
        .unwrap()
        .fuse(batch, caps)
        .unwrap();
    check_partition(batch, &kernels).unwrap_or_else(|e| panic!("{name}: {e}"));
    kernels
}

fn greedy(batch: &Batch) -> Vec<Kernel> {
    fuse_with("greedy", batch, &Capabilities::all())
}

/// Bases a batch creates and frees (its temporaries).
fn temporaries(batch: &Batch) -> Vec<BaseId> {
    batch.freed().collect()
}

/// The standard normal CDF by the Abramowitz-Stegun polynomial, as Black-Scholes codes
/// write it with NumPy: `where(d < 0, 1 - w, w)`.
fn cnd(r: &mut Recorder, d: &View) -> View {
    let ad = r.unary(Opcode::Absolute, d);
    let t = r.binary(Opcode::Multiply, v(&ad), s(0.2316419));
    r.free(&ad);
    let t1 = r.binary(Opcode::Add, s(1.0), v(&t));
    r.free(&t);
    let k = r.binary(Opcode::Divide, s(1.0), v(&t1));
    r.free(&t1);
    // Horner: k*(a1 + k*(a2 + k*(a3 + k*(a4 + k*a5))))
    let mut acc = r.binary(Opcode::Multiply, v(&k), s(1.330274429));
    for a in [-1.821255978, 1.781477937, -0.356563782, 0.31938153] {
        let p = r.binary(Opcode::Add, v(&acc), s(a));
        r.free(&acc);
        acc = r.binary(Opcode::Multiply, v(&k), v(&p));
        r.free(&p);
    }
    r.free(&k);
    let dd = r.binary(Opcode::Multiply, v(d), v(d));
    let h = r.binary(Opcode::Multiply, v(&dd), s(-0.5));
    r.free(&dd);
    let e = r.unary(Opcode::Exp, &h);
    r.free(&h);
    let e2 = r.binary(Opcode::Multiply, v(&e), s(0.3989422804014327));
    r.free(&e);
    let prod = r.binary(Opcode::Multiply, v(&e2), v(&acc));
    r.free_all([&e2, &acc]);
    let w = r.binary(Opcode::Subtract, s(1.0), v(&prod));
    r.free(&prod);
    let neg = r.binary(Opcode::Less, v(d), s(0.0));
    let one_minus = r.binary(Opcode::Subtract, s(1.0), v(&w));
    let out = r.ewise(Opcode::Where, [v(&neg), v(&one_minus), v(&w)]);
    r.free_all([&neg, &one_minus, &w]);
    out
}

/// `call = S*cnd(d1) - X*exp(-r*T)*cnd(d2)` over arrays S, X, T of `n` prices.
pub fn black_scholes(n: usize) -> (Batch, View) {
    let mut r = Recorder::new();
    let (sp, xp, tp) = (r.array(F64, &[n]), r.array(F64, &[n]), r.array(F64, &[n]));
    let (rate, vol) = (0.02, 0.3);
    let q = r.binary(Opcode::Divide, v(&sp), v(&xp));
    let lq = r.unary(Opcode::Log, &q);
    r.free(&q);
    let rt = r.binary(Opcode::Multiply, s(rate + vol * vol / 2.0), v(&tp));
    let num = r.binary(Opcode::Add, v(&lq), v(&rt));
    r.free_all([&lq, &rt]);
    let sq = r.unary(Opcode::Sqrt, &tp);
    let vs = r.binary(Opcode::Multiply, s(vol), v(&sq));
    r.free(&sq);
    let d1 = r.binary(Opcode::Divide, v(&num), v(&vs));
    r.free(&num);
    let d2 = r.binary(Opcode::Subtract, v(&d1), v(&vs));
    r.free(&vs);
    let c1 = cnd(&mut r, &d1);
    r.free(&d1);
    let c2 = cnd(&mut r, &d2);
    r.free(&d2);
    let a = r.binary(Opcode::Multiply, v(&sp), v(&c1));
    r.free(&c1);
    let mrt = r.binary(Opcode::Multiply, s(-rate), v(&tp));
    let disc = r.unary(Opcode::Exp, &mrt);
    r.free(&mrt);
    let xd = r.binary(Opcode::Multiply, v(&xp), v(&disc));
    r.free(&disc);
    let b = r.binary(Opcode::Multiply, v(&xd), v(&c2));
    r.free_all([&xd, &c2]);
    let call = r.binary(Opcode::Subtract, v(&a), v(&b));
    r.free_all([&a, &b]);
    r.sync(&call);
    (r.finish(), call)
}

#[test]
fn black_scholes_becomes_one_kernel_with_every_temporary_contracted() {
    let (batch, call) = black_scholes(1000);
    assert!(
        batch.instrs.len() > 60,
        "a realistic expression: {} instructions",
        batch.instrs.len()
    );
    let kernels = greedy(&batch);
    assert_eq!(
        kernels.len(),
        1,
        "{}",
        hassium_core::dump::kernels_text(&batch, &kernels)
    );
    let k = &kernels[0];
    let mut temps = temporaries(&batch);
    temps.sort();
    assert_eq!(
        k.contracted.to_vec(),
        temps,
        "every temporary lives in registers"
    );
    assert_eq!(k.reads.len(), 3, "reads S, X and T once");
    assert_eq!(k.writes.to_vec(), vec![call.base]);
    // One pass over 3 inputs and 1 output of 1000 float64.
    assert_eq!(cost(&batch, &kernels), 4 * 8000);
    let single = fuse_with("singleton", &batch, &Capabilities::all());
    assert!(cost(&batch, &single) > 20 * cost(&batch, &kernels));
}

/// One Jacobi step of the heat equation on an `n x n` grid, as the classic NumPy
/// benchmark writes it, with the convergence test as two axis reductions.
pub fn heat_step(n: usize) -> (Batch, View, View, View) {
    let mut r = Recorder::new();
    let g = r.array(F64, &[n, n]);
    let sub = |rows: (isize, isize), cols: (isize, isize)| {
        g.slice(0, rows.0, rows.1, 1)
            .unwrap()
            .slice(1, cols.0, cols.1, 1)
            .unwrap()
    };
    let m = n as isize;
    let center = sub((1, m - 1), (1, m - 1));
    let up = sub((0, m - 2), (1, m - 1));
    let down = sub((2, m), (1, m - 1));
    let left = sub((1, m - 1), (0, m - 2));
    let right = sub((1, m - 1), (2, m));
    let t1 = r.binary(Opcode::Add, v(&center), v(&up));
    let t2 = r.binary(Opcode::Add, v(&t1), v(&down));
    r.free(&t1);
    let t3 = r.binary(Opcode::Add, v(&t2), v(&left));
    r.free(&t2);
    let t4 = r.binary(Opcode::Add, v(&t3), v(&right));
    r.free(&t3);
    let new = r.binary(Opcode::Multiply, s(0.2), v(&t4));
    r.free(&t4);
    let d = r.binary(Opcode::Subtract, v(&new), v(&center));
    let a = r.unary(Opcode::Absolute, &d);
    r.free(&d);
    let rows = r.reduce(Opcode::AddReduce, &a, 1);
    r.free(&a);
    let delta = r.reduce(Opcode::AddReduce, &rows, 0);
    r.free(&rows);
    r.assign(Opcode::Identity, &center, [v(&new)]);
    r.free(&new);
    r.sync(&delta);
    (r.finish(), new, rows, delta)
}

#[test]
fn heat_step_fuses_into_two_kernels_with_the_copy_back_held_back() {
    let (batch, new, rows, _delta) = heat_step(64);
    let kernels = greedy(&batch);
    let text = hassium_core::dump::kernels_text(&batch, &kernels);
    assert_eq!(kernels.len(), 2, "{text}");
    // The stencil, its delta and the copy back run as one pass: the grid is read once and
    // written once, `new` lives in registers, and only the row sums reach memory.
    let step = &kernels[0];
    assert_eq!(step.shape.as_slice(), &[62, 62]);
    assert!(step.contracted.contains(&new.base), "{text}");
    let grid = batch.instrs[0].ins[0].as_view().unwrap().base;
    assert_eq!(step.reads.to_vec(), vec![grid], "{text}");
    assert_eq!(step.writes.to_vec(), vec![grid, rows.base], "{text}");
    assert_eq!(kernels[1].reads.to_vec(), vec![rows.base]);
}

#[test]
fn heat_step_without_held_back_writes_materialises_new_and_the_row_sums() {
    let (batch, new, rows, _delta) = heat_step(64);
    let caps = Capabilities {
        lagged_writes: false,
        ..Capabilities::all()
    };
    let kernels = fuse_with("greedy", &batch, &caps);
    let text = hassium_core::dump::kernels_text(&batch, &kernels);
    assert_eq!(kernels.len(), 3, "{text}");
    let contracted: Vec<BaseId> = kernels.iter().flat_map(|k| k.contracted.clone()).collect();
    let mut materialised: Vec<BaseId> = temporaries(&batch)
        .into_iter()
        .filter(|b| !contracted.contains(b))
        .collect();
    materialised.sort();
    // `new` must reach memory: the copy back into the interior overwrites what the
    // stencil reads through shifted views, so it cannot share the stencil's kernel. The
    // row sums are the (n-2)-element input of the second reduction.
    assert_eq!(materialised, vec![new.base, rows.base]);
    // The four stencil additions and the scaling run as one pass over the interior.
    let stencil = kernels.iter().find(|k| k.instrs.contains(&0)).unwrap();
    assert!(stencil.instrs.starts_with(&[0, 1, 3, 5, 7]), "{text}");
    assert_eq!(stencil.shape.as_slice(), &[62, 62]);
}

#[test]
fn a_write_read_again_at_shifted_rows_is_not_held_back() {
    // g[1:] = g[:-1] + 1, then a read of g[:-1] after the write: that read must see the
    // new values, so it cannot share the write's kernel, held back or not.
    let mut r = Recorder::new();
    let g = r.array(F64, &[9, 5]);
    let top = g.slice(0, 0, 8, 1).unwrap();
    let bottom = g.slice(0, 1, 9, 1).unwrap();
    let t = r.binary(Opcode::Add, v(&top), s(1.0));
    r.assign(Opcode::Identity, &bottom, [v(&t)]);
    r.free(&t);
    let after = r.binary(Opcode::Multiply, v(&top), s(2.0));
    r.sync(&after);
    let batch = r.finish();
    let kernels = greedy(&batch);
    let text = hassium_core::dump::kernels_text(&batch, &kernels);
    assert_eq!(kernels.len(), 2, "{text}");
    assert_eq!(kernels[0].instrs.to_vec(), vec![0, 1], "{text}");
}

#[test]
fn a_column_reduction_does_not_hold_rows_back() {
    // s = g[:-1].sum(axis=0) then g[1:] = g[:-1] * 2: a reduction along the rows cannot
    // hold a row back, so the read-then-write pair keeps the kernels apart.
    let mut r = Recorder::new();
    let g = r.array(F64, &[9, 5]);
    let top = g.slice(0, 0, 8, 1).unwrap();
    let bottom = g.slice(0, 1, 9, 1).unwrap();
    let sum = r.reduce(Opcode::AddReduce, &top, 0);
    let t = r.binary(Opcode::Multiply, v(&top), s(2.0));
    r.assign(Opcode::Identity, &bottom, [v(&t)]);
    r.free(&t);
    r.sync(&sum);
    let batch = r.finish();
    let kernels = greedy(&batch);
    let text = hassium_core::dump::kernels_text(&batch, &kernels);
    let reduce = kernels.iter().find(|k| k.instrs.contains(&0)).unwrap();
    assert_eq!(reduce.instrs.to_vec(), vec![0], "{text}");
}

/// Pairwise gravitational forces with broadcasting views, reduced over the second body
/// axis, then a velocity update (`vx += dt * fx`).
pub fn nbody_forces(n: usize) -> Batch {
    let mut r = Recorder::new();
    let x = r.array(F64, &[n]);
    let y = r.array(F64, &[n]);
    let vx = r.array(F64, &[n]);
    let vy = r.array(F64, &[n]);
    let col = |a: &View| a.expand_dims(1).unwrap().broadcast_to(&[n, n]).unwrap();
    let row = |a: &View| a.expand_dims(0).unwrap().broadcast_to(&[n, n]).unwrap();
    let dx = r.binary(Opcode::Subtract, v(&col(&x)), v(&row(&x)));
    let dy = r.binary(Opcode::Subtract, v(&col(&y)), v(&row(&y)));
    let dx2 = r.binary(Opcode::Multiply, v(&dx), v(&dx));
    let dy2 = r.binary(Opcode::Multiply, v(&dy), v(&dy));
    let s2 = r.binary(Opcode::Add, v(&dx2), v(&dy2));
    r.free_all([&dx2, &dy2]);
    let r2 = r.binary(Opcode::Add, v(&s2), s(1e-3));
    r.free(&s2);
    let sq = r.unary(Opcode::Sqrt, &r2);
    let r3 = r.binary(Opcode::Multiply, v(&r2), v(&sq));
    r.free_all([&r2, &sq]);
    let inv = r.binary(Opcode::Divide, s(1.0), v(&r3));
    r.free(&r3);
    let fxe = r.binary(Opcode::Multiply, v(&dx), v(&inv));
    let fx = r.reduce(Opcode::AddReduce, &fxe, 1);
    r.free_all([&dx, &fxe]);
    let fye = r.binary(Opcode::Multiply, v(&dy), v(&inv));
    let fy = r.reduce(Opcode::AddReduce, &fye, 1);
    r.free_all([&dy, &fye, &inv]);
    for (vel, f) in [(&vx, &fx), (&vy, &fy)] {
        let dv = r.binary(Opcode::Multiply, v(f), s(0.01));
        r.assign(Opcode::Add, vel, [v(vel), v(&dv)]);
        r.free(&dv);
    }
    r.free_all([&fx, &fy]);
    r.finish()
}

#[test]
fn nbody_pairwise_forces_fuse_the_elementwise_chain_into_the_reduction() {
    let batch = nbody_forces(100);
    let kernels = greedy(&batch);
    assert_eq!(
        kernels.len(),
        1,
        "{}",
        hassium_core::dump::kernels_text(&batch, &kernels)
    );
    let k = &kernels[0];
    assert_eq!(k.shape.as_slice(), &[100, 100], "iterates the pairs");
    let mut temps = temporaries(&batch);
    temps.sort();
    assert_eq!(
        k.contracted.to_vec(),
        temps,
        "no (n, n) temporary reaches memory"
    );
}

// --- one test per legality rule -------------------------------------------------------

fn f64s(r: &mut Recorder, n: usize) -> View {
    r.array(F64, &[n])
}

#[test]
fn partially_overlapping_views_prevent_fusion() {
    let mut r = Recorder::new();
    let a = f64s(&mut r, 9);
    let b = f64s(&mut r, 8);
    let head = a.slice(0, 0, 8, 1).unwrap();
    let tail = a.slice(0, 1, 9, 1).unwrap();
    r.assign(Opcode::Add, &head, [v(&b), s(1.0)]);
    let c = r.binary(Opcode::Multiply, v(&tail), s(2.0));
    r.sync(&c);
    assert_eq!(greedy(&r.finish()).len(), 2);
}

#[test]
fn identical_and_disjoint_views_fuse() {
    let mut r = Recorder::new();
    let a = f64s(&mut r, 10);
    let b = f64s(&mut r, 5);
    let lo = a.slice(0, 0, 5, 1).unwrap();
    let hi = a.slice(0, 5, 10, 1).unwrap();
    r.assign(Opcode::Add, &lo, [v(&lo), s(1.0)]); // in place
    r.assign(Opcode::Multiply, &lo, [v(&lo), s(2.0)]); // identical view again
    r.assign(Opcode::Add, &b, [v(&hi), v(&lo)]); // disjoint half and identical half
    assert_eq!(greedy(&r.finish()).len(), 1);
}

#[test]
fn a_read_before_an_identical_overwrite_fuses_and_stays_in_order() {
    let mut r = Recorder::new();
    let a = f64s(&mut r, 10);
    let c = f64s(&mut r, 10);
    let b = r.binary(Opcode::Add, v(&a), s(1.0));
    r.assign(Opcode::Multiply, &a, [v(&c), s(2.0)]);
    r.sync(&b);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0].instrs.to_vec(), vec![0, 1]);
}

#[test]
fn an_epilogue_on_the_reduced_shape_joins_the_reduction() {
    let mut r = Recorder::new();
    let x = r.array(F64, &[4, 6]);
    let t = r.binary(Opcode::Multiply, v(&x), v(&x));
    let s1 = r.reduce(Opcode::AddReduce, &t, 1);
    r.free(&t);
    let e = r.unary(Opcode::Sqrt, &s1);
    r.free(&s1);
    r.sync(&e);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0].shape.as_slice(), &[4, 6]);
    assert_eq!(kernels[0].contracted.len(), 2);
}

#[test]
fn a_reduced_shape_op_reading_a_body_value_stays_out_of_the_reduction() {
    let mut r = Recorder::new();
    let x = r.array(F64, &[4, 6]);
    let t = r.binary(Opcode::Multiply, v(&x), v(&x));
    let s1 = r.reduce(Opcode::AddReduce, &t, 1);
    let col0 = t.index(1, 0).unwrap(); // t[:, 0], shape (4,)
    let e = r.binary(Opcode::Subtract, v(&s1), v(&col0));
    r.free_all([&t, &s1]);
    r.sync(&e);
    let kernels = greedy(&r.finish());
    assert_eq!(kernels.len(), 2);
}

#[test]
fn a_reduced_shape_op_before_the_reduction_is_not_an_epilogue() {
    let mut r = Recorder::new();
    let x = r.array(F64, &[4, 6]);
    let y = r.array(F64, &[4]);
    let out = r.array(F64, &[4]);
    // `pre` writes `out` before the reduction, which then overwrites it: an engine runs
    // epilogues after the reduction, so `pre` may not join as one.
    let pre = r.binary(Opcode::Multiply, v(&out), v(&y));
    r.push(Instr::new(Opcode::AddReduce, out.clone(), [v(&x)]).with_axis(1));
    r.sync(&pre);
    let kernels = greedy(&r.finish());
    assert_eq!(kernels.len(), 2);
}

#[test]
fn a_second_reduction_of_a_reduction_is_another_kernel() {
    let mut r = Recorder::new();
    let x = r.array(F64, &[4, 6]);
    let s1 = r.reduce(Opcode::AddReduce, &x, 1);
    let s0 = r.reduce(Opcode::AddReduce, &s1, 0);
    r.free(&s1);
    r.sync(&s0);
    assert_eq!(greedy(&r.finish()).len(), 2);
}

#[test]
fn a_scan_takes_producers_but_not_consumers() {
    let mut r = Recorder::new();
    let x = r.array(F64, &[4, 6]);
    let t = r.binary(Opcode::Multiply, v(&x), s(2.0));
    let c = r.reduce(Opcode::AddAccumulate, &t, 1);
    r.free(&t);
    let batch = r.batch().clone();
    assert_eq!(greedy(&batch).len(), 1, "the producer joins the scan");
    let d = r.binary(Opcode::Multiply, v(&c), s(3.0));
    r.free(&c);
    r.sync(&d);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(kernels.len(), 2, "the consumer of the scan does not");
    assert_eq!(kernels[0].instrs.to_vec(), vec![0, 1]);
}

#[test]
fn index_and_extension_instructions_stay_alone() {
    let mut r = Recorder::new();
    let src = r.array(F64, &[10]);
    let idx = r.array(DType::Int64, &[4]);
    let g = r.array(F64, &[4]);
    r.assign(Opcode::Gather, &g, [v(&src), v(&idx)]);
    let h = r.binary(Opcode::Multiply, v(&g), s(2.0));
    let a = r.array(F64, &[2, 2]);
    let m = r.array(F64, &[2, 2]);
    r.push(Instr::extension("matmul", m.clone(), [v(&a), v(&a)]));
    let n = r.binary(Opcode::Add, v(&m), s(1.0));
    r.sync(&h);
    r.sync(&n);
    assert_eq!(greedy(&r.finish()).len(), 4);
}

#[test]
fn an_extension_output_nothing_reads_is_still_written() {
    // `(a @ b).dtype`: the product is freed unread. Engines run matmul into memory, so
    // its output must have a buffer, on every fuser.
    let mut r = Recorder::new();
    let a = r.array(F64, &[2, 2]);
    let m = r.array(F64, &[2, 2]);
    r.push(Instr::extension("matmul", m.clone(), [v(&a), v(&a)]));
    r.free(&m);
    let batch = r.finish();
    for (name, _) in hassium_fuser::REGISTRY {
        let kernels = fuse_with(name, &batch, &Capabilities::all());
        assert_eq!(kernels.len(), 1, "{name}");
        assert!(kernels[0].contracted.is_empty(), "{name}");
        assert_eq!(kernels[0].writes.to_vec(), vec![m.base], "{name}");
    }
}

#[test]
fn generators_fuse_like_elementwise_ops() {
    let mut r = Recorder::new();
    let i = r.array(F64, &[100]);
    r.assign(Opcode::Range, &i, []);
    let u = r.array(DType::UInt64, &[100]);
    r.assign(
        Opcode::Random,
        &u,
        [Scalar::UInt64(7).into(), Scalar::UInt64(0).into()],
    );
    let uf = r.cast(&u, F64);
    r.free(&u);
    let t = r.binary(Opcode::Multiply, v(&i), v(&uf));
    r.free_all([&i, &uf]);
    r.sync(&t);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0].contracted.len(), 3);
}

#[test]
fn merging_around_an_unfusable_instruction_would_be_a_cycle() {
    let mut r = Recorder::new();
    let x = f64s(&mut r, 4);
    let idx = r.array(DType::Int64, &[4]);
    let t = r.binary(Opcode::Multiply, v(&x), s(2.0));
    let g = r.array(F64, &[4]);
    r.assign(Opcode::Gather, &g, [v(&t), v(&idx)]);
    let u = r.binary(Opcode::Add, v(&t), v(&g));
    r.sync(&u);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(
        kernels.len(),
        3,
        "t and u may not share a kernel: t -> gather -> u"
    );
    let cyclic = vec![
        hassium_fuser::finish_kernel(&batch, vec![0, 2], |_| true),
        hassium_fuser::finish_kernel(&batch, vec![1], |_| true),
    ];
    assert!(check_partition(&batch, &cyclic).is_err());
}

#[test]
fn check_partition_rejects_a_fuse_preventing_pair_and_a_missing_instruction() {
    let mut r = Recorder::new();
    let a = f64s(&mut r, 9);
    let b = f64s(&mut r, 8);
    r.assign(Opcode::Add, &a.slice(0, 0, 8, 1).unwrap(), [v(&b), s(1.0)]);
    let c = r.binary(Opcode::Multiply, v(&a.slice(0, 1, 9, 1).unwrap()), s(2.0));
    r.sync(&c);
    let batch = r.finish();
    let together = vec![hassium_fuser::finish_kernel(&batch, vec![0, 1], |_| true)];
    assert!(check_partition(&batch, &together).is_err());
    let missing = vec![hassium_fuser::finish_kernel(&batch, vec![0], |_| true)];
    assert!(check_partition(&batch, &missing).is_err());
}

#[test]
fn a_temporary_is_contracted_only_when_its_whole_life_is_inside_the_kernel() {
    let mut r = Recorder::new();
    let x = f64s(&mut r, 8);
    let t = r.binary(Opcode::Multiply, v(&x), s(2.0));
    let u = r.binary(Opcode::Add, v(&t), s(1.0));
    let w = r.binary(Opcode::Add, v(&t), s(3.0)); // a second reader
    r.free(&t);
    r.sync(&u);
    r.sync(&w);
    let batch = r.finish();
    let kernels = greedy(&batch);
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0].contracted.to_vec(), vec![t.base]);
    // A synced temporary, or one read only partly by what wrote it, is not contracted.
    let mut synced = batch.clone();
    synced.sync.push(t.base);
    assert!(greedy(&synced)[0].contracted.is_empty());
    // A kernel limited to 2 instructions splits the readers: t must reach memory.
    let caps = Capabilities {
        max_kernel_instrs: 2,
        ..Capabilities::all()
    };
    let split = fuse_with("greedy", &batch, &caps);
    assert_eq!(split.len(), 2);
    assert!(split.iter().all(|k| k.contracted.is_empty()));
}

#[test]
fn engine_capabilities_limit_kernels() {
    let (batch, _) = black_scholes(100);
    let caps = Capabilities {
        max_kernel_instrs: 8,
        ..Capabilities::all()
    };
    for name in ["serial", "greedy", "optimal"] {
        assert!(
            fuse_with(name, &batch, &caps)
                .iter()
                .all(|k| k.instrs.len() <= 8),
            "{name}"
        );
    }
    let caps = Capabilities {
        max_kernel_operands: 4,
        ..Capabilities::all()
    };
    let kernels = fuse_with("greedy", &batch, &caps);
    assert!(kernels.iter().all(|k| k.reads.len() + k.writes.len() <= 4));
    // An engine without `exp` gets every exp alone (the runtime reroutes them).
    let mut caps = Capabilities::all();
    caps.opcodes.retain(|&o| o != Opcode::Exp);
    let kernels = fuse_with("greedy", &batch, &caps);
    for k in &kernels {
        if k.instrs.iter().any(|&i| batch.instrs[i].op == Opcode::Exp) {
            assert_eq!(k.instrs.len(), 1);
        }
    }
}

#[test]
fn every_fuser_is_registered_and_unknown_names_list_the_choices() {
    for name in ["singleton", "serial", "greedy", "optimal"] {
        assert!(create(name, &FuserOptions::default()).is_ok());
    }
    let e = create("gredy", &FuserOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("singleton, serial, greedy, optimal"), "{e}");
}

#[test]
fn costs_are_ordered_on_the_benchmark_programs() {
    for batch in [black_scholes(64).0, heat_step(16).0, nbody_forces(16)] {
        let c: Vec<u64> = ["optimal", "greedy", "serial", "singleton"]
            .iter()
            .map(|n| cost(&batch, &fuse_with(n, &batch, &Capabilities::all())))
            .collect();
        assert!(c[0] <= c[1] && c[1] <= c[2] && c[2] <= c[3], "{c:?}");
    }
}
