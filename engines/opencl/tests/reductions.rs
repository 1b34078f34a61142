//! Reductions on PoCL: the bits of the fixed summation order for every work-group size,
//! and what a reduction's flushes ask of the queue and list in the profile.

mod common;

use common::*;
use hassium_core::{BaseId, Batch, DType, Instr, Opcode, Operand, Scalar, View};
use hassium_engine_abi::Engine;
use hassium_engine_opencl::{OpenClConfig, OpenClEngine, SpecializePolicy};

/// `s = sum(x * 3, axis)` over a float64 `x` of `shape`, fused into one kernel.
fn scaled_reduction(shape: &[usize], axis: usize) -> (Batch, BaseId, BaseId) {
    let n: usize = shape.iter().product();
    let out: Vec<usize> = (0..shape.len())
        .filter(|&d| d != axis)
        .map(|d| shape[d])
        .collect();
    let mut b = Batch::default();
    let (x, t, s) = (
        base(&mut b, DType::Float64, n),
        base(&mut b, DType::Float64, n),
        base(&mut b, DType::Float64, out.iter().product()),
    );
    let v = |id| View::contiguous(id, DType::Float64, shape);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(t),
        [v(x).into(), Operand::Scalar(Scalar::Float64(3.0))],
    ));
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(s, DType::Float64, &out),
            [v(t).into()],
        )
        .with_axis(axis),
    );
    free(&mut b, t);
    (b, x, s)
}

/// `s = sum(x * 3)` over `n` float64 elements, fused into one `Partials` kernel.
fn scaled_sum(n: usize) -> (Batch, BaseId, BaseId) {
    scaled_reduction(&[n], 0)
}

/// `b` run on engines with every work-group size the reductions take (0 is the
/// engine's own choice), each result with its size.
fn for_every_work_group_size(b: &Batch, a: &Arrays) -> Vec<(usize, Arrays)> {
    [0, 8, 64, 256]
        .into_iter()
        .map(|wg| {
            let dir = tempfile::tempdir().unwrap();
            let cfg = OpenClConfig {
                work_group_size: wg,
                ..config(SpecializePolicy::Fixed, dir.path())
            };
            let mut ocl = OpenClEngine::new(cfg, None).unwrap();
            (wg, run_both(b, &fused(b), a, &mut ocl).1)
        })
        .collect()
}

/// The sum of `values` in the lane order every engine uses: element `l + k * LANES` into
/// lane `l`, the tail (under `LANES` elements) into lane 0, the lanes folded in order.
fn lanes_sum(values: &[f64]) -> f64 {
    use hassium_codegen::LANES;
    let mut lanes = [0.0f64; LANES];
    let whole = values.len() - values.len() % LANES;
    for (k, v) in values[..whole].iter().enumerate() {
        lanes[k % LANES] += v;
    }
    for v in &values[whole..] {
        lanes[0] += v;
    }
    let mut fold = lanes[0];
    for l in &lanes[1..] {
        fold += l;
    }
    fold
}

/// A whole-array sum on the device runs a work-group per chunk whose items compute the
/// values and whose first `LANES` items fold them in the one fixed order every engine
/// uses: chunks of `CHUNK` elements, element `c0 + l + k * LANES` into lane `l`, the
/// chunk's tail into lane 0, lanes folded in order, chunks folded in order. Values of
/// wildly different magnitudes make any other order give other bits; the sum must have
/// the bits of that order, computed here, for every work-group size.
#[test]
fn a_sum_has_the_bits_of_the_fixed_order_for_every_work_group_size() {
    use hassium_codegen::CHUNK;
    let n = 3 * CHUNK + 1000 + 5;
    let (b, x, s) = scaled_sum(n);
    let mut a = Arrays::new(&b);
    let mut rng = Rng(7);
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let v = (rng.f64() - 0.5) * 10f64.powi((i % 13) as i32);
        a.set(x, i, Scalar::Float64(v));
        values.push(v * 3.0);
    }
    let mut want = 0.0f64;
    for chunk in values.chunks(CHUNK) {
        want += lanes_sum(chunk);
    }
    let naive: f64 = values.iter().sum();
    assert_ne!(
        want.to_bits(),
        naive.to_bits(),
        "the data must tell orders apart"
    );
    for (wg, got) in for_every_work_group_size(&b, &a) {
        let got = got.get(s, 0).as_f64();
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "work_group_size {wg}: {got} != {want}"
        );
    }
}

/// What a loop's flushes ask of the queue: per flush, one kernel launch, no read and
/// one wait (the flush's end); a sync reads the result back with one more wait, and
/// nothing on a second sync of the same result.
#[test]
fn a_loop_body_waits_once_per_flush_and_reads_only_on_sync() {
    let dir = tempfile::tempdir().unwrap();
    let mut ocl = engine(SpecializePolicy::Fixed, dir.path());
    let (b, x, s) = scaled_sum(50_000);
    let kernels = fused(&b);
    let contracted: Vec<BaseId> = kernels.iter().flat_map(|k| k.contracted.clone()).collect();
    let mut a = Arrays::new(&b);
    for i in 0..50_000 {
        a.set(x, i, Scalar::Float64(i as f64));
    }
    let counts = |ocl: &OpenClEngine| {
        let e = ocl.stats().extra;
        [e["launches"], e["reads"], e["waits"]]
    };
    ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
    let first = counts(&ocl);
    for _ in 0..3 {
        ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
    }
    let after = counts(&ocl);
    // A reduction is its chunk kernel and its combiner: two launches per flush.
    assert_eq!(
        [
            after[0] - first[0],
            after[1] - first[1],
            after[2] - first[2]
        ],
        [6.0, 0.0, 3.0],
        "launches, reads, waits over three flushes"
    );
    let bufs = a.buffers(&contracted);
    ocl.sync(s, bufs.get(s).unwrap()).unwrap();
    ocl.sync(s, bufs.get(s).unwrap()).unwrap();
    let synced = counts(&ocl);
    assert_eq!([synced[1] - after[1], synced[2] - after[2]], [1.0, 1.0]);
    assert_eq!(a.get(s, 0).as_f64(), 3.0 * (49_999.0 * 50_000.0 / 2.0));
}

/// A tall matrix's column sums (`RowPartials`) on the device: for 3 columns a work-group
/// per chunk of rows computes whole rows into local memory and one item per column adds
/// them up; for 300 (more than `BLOCK`) an item per chunk and column does; for 5000 (one
/// pass per column, `ReduceOuter`) an item per column. Either way in
/// the one-item (and CPU) order: each chunk's rows in turn from zero, then the chunks'
/// partials in order. The bits must be those of that order for every work-group size.
#[test]
fn column_sums_have_the_bits_of_the_fixed_order_for_every_work_group_size() {
    // Rows per chunk: 8 * CHUNK elements over the columns rounded up to a power of two.
    let chunk_rows = |cols: usize| (8 * hassium_codegen::CHUNK / cols.next_power_of_two()).max(64);
    column_sums_in_fixed_order(3, 2 * chunk_rows(3) + 1234, chunk_rows(3));
    column_sums_in_fixed_order(300, 2 * chunk_rows(300) + 1234, chunk_rows(300));
    // Over 4096 columns a column sum is one pass down each column (`ReduceOuter`), on a
    // device an item per column.
    column_sums_in_fixed_order(5000, 150, 150);
}

fn column_sums_in_fixed_order(cols: usize, rows: usize, rows_per_chunk: usize) {
    let (b, x, s) = scaled_reduction(&[rows, cols], 0);
    let mut a = Arrays::new(&b);
    let mut rng = Rng(11);
    let mut want = vec![0.0f64; cols];
    let mut partial = vec![0.0f64; cols];
    for r in 0..rows {
        for (c, p) in partial.iter_mut().enumerate() {
            let value = (rng.f64() - 0.5) * 10f64.powi(((r * cols + c) % 13) as i32);
            a.set(x, r * cols + c, Scalar::Float64(value));
            *p += value * 3.0;
        }
        if (r + 1) % rows_per_chunk == 0 || r + 1 == rows {
            for (w, p) in want.iter_mut().zip(&mut partial) {
                *w += *p;
                *p = 0.0;
            }
        }
    }
    for (wg, got) in for_every_work_group_size(&b, &a) {
        for (c, w) in want.iter().enumerate() {
            let g = got.get(s, c).as_f64();
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{cols} columns, work_group_size {wg}, column {c}: {g} != {w}"
            );
        }
    }
}

/// Row sums (`ReduceInner` with lanes) on the device: a work-group per row computes the
/// row's values a round at a time and the first `LANES` items fold them in the lane
/// order of one item per row; the bits must be that order's for every group size.
#[test]
fn row_sums_have_the_bits_of_the_lane_order_for_every_work_group_size() {
    let (rows, cols) = (37, 1003);
    let (b, x, s) = scaled_reduction(&[rows, cols], 1);
    let mut a = Arrays::new(&b);
    let mut rng = Rng(5);
    let mut want = Vec::new();
    for r in 0..rows {
        let mut row = Vec::new();
        for c in 0..cols {
            let value = (rng.f64() - 0.5) * 10f64.powi(((r + c) % 13) as i32);
            a.set(x, r * cols + c, Scalar::Float64(value));
            row.push(value * 3.0);
        }
        want.push(lanes_sum(&row));
    }
    for (wg, got) in for_every_work_group_size(&b, &a) {
        for (r, w) in want.iter().enumerate() {
            let g = got.get(s, r).as_f64();
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "work_group_size {wg}, row {r}: {g} != {w}"
            );
        }
    }
}

/// With `profile = true` the statistics list each kernel with its calls and the device
/// time of its launches (the combiner's included), as the cpu engine lists its slowest
/// kernels; without it, none (the engine has no device times to sort them by).
#[test]
fn a_profiled_engine_lists_its_kernels_with_their_device_time() {
    let (b, x, _) = scaled_sum(100_000);
    let kernels = fused(&b);
    let contracted: Vec<BaseId> = kernels.iter().flat_map(|k| k.contracted.clone()).collect();
    let mut a = Arrays::new(&b);
    for i in 0..100_000 {
        a.set(x, i, Scalar::Float64(i as f64));
    }
    for profile in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = OpenClConfig {
            profile,
            ..config(SpecializePolicy::Fixed, dir.path())
        };
        let mut ocl = OpenClEngine::new(cfg, None).unwrap();
        for _ in 0..3 {
            ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
        }
        let s = ocl.stats();
        if !profile {
            assert!(s.kernels.is_empty(), "{:?}", s.kernels);
            assert!(!s.extra.contains_key("device_kernel_seconds"));
            continue;
        }
        assert_eq!(s.kernels.len(), 1, "{:?}", s.kernels);
        let k = &s.kernels[0];
        assert_eq!((k.calls, k.key.len(), k.instrs), (3, 32, 2), "{k:?}");
        assert!(k.seconds > 0.0 && k.seconds <= s.extra["device_kernel_seconds"] + 1e-12);
        // Per call: the input read and the one result written.
        assert_eq!(k.bytes_moved, 3 * (100_000 * 8 + 8), "{k:?}");
    }
}
