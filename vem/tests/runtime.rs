//! The runtime end to end on the built-in reference stack: recording, flushing, sync,
//! frees, errors, and the configuration in force.

use hassium_core::{BaseId, DType, Error as CoreError, Instr, Opcode, Operand, Scalar, View};
use hassium_vem::{Config, Error, HostMemory, Runtime, DEFAULT_CONFIG};

fn reference_runtime(extra_env: &[(&str, &str)]) -> Runtime {
    let mut env: Vec<(String, String)> = vec![("HASSIUM_STACK".into(), "reference".into())];
    env.extend(
        extra_env
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string())),
    );
    Runtime::with_config(Config::from_toml(DEFAULT_CONFIG, "default", env).unwrap()).unwrap()
}

fn read_f64(rt: &mut Runtime, id: BaseId, n: usize) -> Vec<f64> {
    rt.sync(id).unwrap();
    let p = rt.host_ptr(id).unwrap() as *const f64;
    // SAFETY: the base holds n float64 values, synced above.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

fn from_f64(rt: &mut Runtime, values: &[f64]) -> View {
    let b = rt.new_base(DType::Float64, values.len());
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    rt.write_host(b.id, &bytes).unwrap();
    View::contiguous(b.id, DType::Float64, &[values.len()])
}

#[test]
fn records_lazily_and_computes_on_sync() {
    let mut rt = reference_runtime(&[]);
    let a = from_f64(&mut rt, &[1.0, 2.0, 3.0]);
    let t = rt.new_base(DType::Float64, 3);
    let tv = View::contiguous(t.id, DType::Float64, &[3]);
    let c = rt.new_base(DType::Float64, 3);
    let cv = View::contiguous(c.id, DType::Float64, &[3]);
    rt.record(Instr::new(
        Opcode::Multiply,
        tv.clone(),
        [a.clone().into(), a.clone().into()],
    ))
    .unwrap();
    rt.record(Instr::new(
        Opcode::Add,
        cv.clone(),
        [tv.into(), Operand::Scalar(Scalar::Float64(1.0))],
    ))
    .unwrap();
    rt.free(t.id).unwrap();
    assert_eq!(rt.queued(), 3);
    assert_eq!(rt.stats().flushes, 0);
    assert_eq!(read_f64(&mut rt, c.id, 3), vec![2.0, 5.0, 10.0]);
    assert_eq!(rt.queued(), 0);
    assert!(
        rt.base(t.id).is_none(),
        "freed base is gone after the flush"
    );
}

#[test]
fn flush_threshold_flushes_automatically() {
    let mut rt = reference_runtime(&[("HASSIUM_RUNTIME_FLUSH_THRESHOLD", "2")]);
    let a = from_f64(&mut rt, &[1.0]);
    rt.record(Instr::new(
        Opcode::Add,
        a.clone(),
        [a.clone().into(), Scalar::Float64(1.0).into()],
    ))
    .unwrap();
    assert_eq!(rt.queued(), 1);
    rt.record(Instr::new(
        Opcode::Add,
        a.clone(),
        [a.clone().into(), Scalar::Float64(1.0).into()],
    ))
    .unwrap();
    assert_eq!(rt.queued(), 0);
    assert_eq!(read_f64(&mut rt, a.base, 1), vec![3.0]);
}

#[test]
fn a_queue_of_small_arrays_flushes_at_the_small_threshold() {
    let mut rt = reference_runtime(&[
        ("HASSIUM_RUNTIME_FLUSH_THRESHOLD", "6"),
        ("HASSIUM_RUNTIME_SMALL_FLUSH_THRESHOLD", "3"),
    ]);
    let add_one = |rt: &mut Runtime, v: &View| {
        rt.record(Instr::new(
            Opcode::Add,
            v.clone(),
            [v.clone().into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap()
    };
    let small = from_f64(&mut rt, &[0.0; 4]);
    for _ in 0..2 {
        add_one(&mut rt, &small);
    }
    assert_eq!(rt.queued(), 2);
    add_one(&mut rt, &small);
    assert_eq!(rt.queued(), 0, "three instructions on small arrays flush");
    // One large array in the queue: the general threshold applies until it flushes.
    let large = rt.new_base(DType::Float64, hassium_vem::SMALL_ARRAY_ELEMENTS + 1);
    let large = View::contiguous(large.id, DType::Float64, &[large.nelem]);
    add_one(&mut rt, &large);
    for _ in 0..4 {
        add_one(&mut rt, &small);
    }
    assert_eq!(rt.queued(), 5);
    add_one(&mut rt, &small);
    assert_eq!(rt.queued(), 0);
    for _ in 0..3 {
        add_one(&mut rt, &small);
    }
    assert_eq!(rt.queued(), 0, "after the flush the queue is small again");
    assert_eq!(read_f64(&mut rt, small.base, 4), vec![11.0; 4]);
}

/// Kernels run for `c = a + 1` after a dead `t = a * a` over `n` elements, on the
/// reference stack with the `dead_code` filter.
fn kernels_after_dead_code(n: usize, extra_env: &[(&str, &str)]) -> u64 {
    let mut env = vec![("HASSIUM_STACKS_REFERENCE_FILTERS", r#"["dead_code"]"#)];
    env.extend_from_slice(extra_env);
    let mut rt = reference_runtime(&env);
    let a = from_f64(&mut rt, &vec![2.0; n]);
    let t = rt.new_base(DType::Float64, n);
    let tv = View::contiguous(t.id, DType::Float64, &[n]);
    rt.record(Instr::new(
        Opcode::Multiply,
        tv,
        [a.clone().into(), a.clone().into()],
    ))
    .unwrap();
    rt.free(t.id).unwrap();
    let c = rt.new_base(DType::Float64, n);
    let cv = View::contiguous(c.id, DType::Float64, &[n]);
    rt.record(Instr::new(
        Opcode::Add,
        cv,
        [a.into(), Scalar::Float64(1.0).into()],
    ))
    .unwrap();
    assert_eq!(read_f64(&mut rt, c.id, n), vec![3.0; n]);
    rt.stats().kernels
}

#[test]
fn small_skip_filters_are_skipped_on_batches_of_small_arrays() {
    let large = hassium_vem::SMALL_ARRAY_ELEMENTS + 1;
    assert_eq!(kernels_after_dead_code(large, &[]), 1, "dead code removed");
    assert_eq!(
        kernels_after_dead_code(4, &[]),
        2,
        "dead_code skipped by default"
    );
    let never = [("HASSIUM_RUNTIME_SMALL_SKIP_FILTERS", "[]")];
    assert_eq!(kernels_after_dead_code(4, &never), 1);
    let bad = Config::from_toml(
        DEFAULT_CONFIG,
        "default",
        [(
            "HASSIUM_RUNTIME_SMALL_SKIP_FILTERS".into(),
            r#"["cse", "nope"]"#.into(),
        )],
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("runtime.small_skip_filters") && bad.contains("\"nope\""),
        "{bad}"
    );
}

#[test]
fn bad_instructions_are_rejected_at_record_time() {
    let mut rt = reference_runtime(&[]);
    let a = from_f64(&mut rt, &[1.0, 2.0]);
    let b = from_f64(&mut rt, &[1.0, 2.0, 3.0]);
    let e = rt
        .record(Instr::new(
            Opcode::Add,
            a.clone(),
            [a.clone().into(), b.clone().into()],
        ))
        .unwrap_err();
    assert!(
        matches!(e, Error::Bytecode(CoreError::ShapeMismatch(_))),
        "{e}"
    );
    rt.free(b.base).unwrap();
    let e = rt
        .record(Instr::new(Opcode::Negative, a.clone(), [b.into()]))
        .unwrap_err();
    assert!(e.to_string().contains("unknown base"), "{e}");
    assert!(rt.free(BaseId(9999)).is_err());
    assert_eq!(rt.queued(), 1, "only the free was queued");
}

#[test]
fn an_engine_error_leaves_the_runtime_usable() {
    let mut rt = reference_runtime(&[]);
    let src = from_f64(&mut rt, &[1.0, 2.0]);
    let idx = rt.new_base(DType::Int64, 1);
    rt.write_host(idx.id, &7i64.to_le_bytes()).unwrap();
    let out = rt.new_base(DType::Float64, 1);
    let ov = View::contiguous(out.id, DType::Float64, &[1]);
    rt.record(Instr::new(
        Opcode::Gather,
        ov.clone(),
        [
            src.clone().into(),
            View::contiguous(idx.id, DType::Int64, &[1]).into(),
        ],
    ))
    .unwrap();
    let e = rt.sync(out.id).unwrap_err().to_string();
    assert!(e.contains("out of bounds"), "{e}");
    rt.record(Instr::new(
        Opcode::Identity,
        ov,
        [src.index(0, 1).unwrap().broadcast_to(&[1]).unwrap().into()],
    ))
    .unwrap();
    assert_eq!(read_f64(&mut rt, out.id, 1), vec![2.0]);
}

#[test]
fn a_missing_engine_library_is_named() {
    let cfg = Config::from_toml(
        &DEFAULT_CONFIG.replace("libhassium_engine_cpu.so", "libhassium_engine_nothere.so"),
        "t.toml",
        [("HASSIUM_STACK".to_string(), "cpu".to_string())],
    )
    .unwrap();
    let e = Runtime::with_config(cfg)
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        e.contains("libhassium_engine_nothere.so") && e.contains("not found"),
        "{e}"
    );
}

#[test]
fn stats_count_what_happened() {
    let mut rt = reference_runtime(&[]);
    let a = from_f64(&mut rt, &[4.0]);
    rt.record(Instr::new(Opcode::Sqrt, a.clone(), [a.clone().into()]))
        .unwrap();
    assert_eq!(read_f64(&mut rt, a.base, 1), vec![2.0]);
    let s = rt.stats();
    assert_eq!(s.instrs_recorded, 1);
    assert!(s.kernels >= 1);
    assert!(s.to_string().contains("instructions recorded"));
}

#[test]
fn a_loop_of_identical_iterations_hits_the_fuse_cache() {
    for (fuser, counts, kernels) in [("greedy", (999, 1), 1000), ("singleton", (0, 0), 2000)] {
        let mut rt = reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FUSER", fuser)]);
        identical_iterations(&mut rt);
        let s = rt.stats();
        // Singleton partitions cost less than a key lookup: that fuser is not cached.
        assert_eq!((s.fuse_cache_hits, s.fuse_cache_misses), counts, "{fuser}");
        assert_eq!(s.kernels, kernels, "{fuser}");
    }
}

/// 1000 flushes of `t = x * dt; x = t + 1; del t` with a changing `dt`.
fn identical_iterations(rt: &mut Runtime) {
    let x = from_f64(rt, &[1.0; 16]);
    for i in 0..1000 {
        let t = rt.new_base(DType::Float64, 16);
        let tv = View::contiguous(t.id, DType::Float64, &[16]);
        let dt = Scalar::Float64(1.0 / (i + 1) as f64);
        rt.record(Instr::new(
            Opcode::Multiply,
            tv.clone(),
            [x.clone().into(), dt.into()],
        ))
        .unwrap();
        rt.record(Instr::new(
            Opcode::Add,
            x.clone(),
            [tv.into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap();
        rt.free(t.id).unwrap();
        rt.flush().unwrap();
    }
}

#[test]
fn a_batch_of_many_iterations_reuses_the_memory_of_dead_temporaries() {
    // 20 iterations of `t = x * 0.5; x = t + 1; del t` in one batch. On the singleton
    // stack every `t` needs memory; once a `t` is dead its block must serve the next one,
    // so the batch allocates a couple of blocks, not twenty.
    let n = 1 << 18; // 2 MiB of float64, above the recycling threshold
    let mut rt = reference_runtime(&[]);
    let x = from_f64(&mut rt, &vec![2.0; n]);
    for _ in 0..20 {
        let t = rt.new_base(DType::Float64, n);
        let tv = View::contiguous(t.id, DType::Float64, &[n]);
        rt.record(Instr::new(
            Opcode::Multiply,
            tv.clone(),
            [x.clone().into(), Scalar::Float64(0.5).into()],
        ))
        .unwrap();
        rt.record(Instr::new(
            Opcode::Add,
            x.clone(),
            [tv.into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap();
        rt.free(t.id).unwrap();
    }
    let got = read_f64(&mut rt, x.base, n);
    // x -> x/2 + 1 converges to 2 from 2: every value stays exactly 2.
    assert!(got.iter().all(|&v| v == 2.0));
    let s = rt.stats();
    assert_eq!(s.flushes, 1);
    let block = (n * 8) as u64;
    assert!(
        s.host_bytes_allocated <= 3 * block,
        "allocated {} bytes for blocks of {block}",
        s.host_bytes_allocated
    );
}

#[test]
fn an_array_a_batch_only_drops_lends_its_memory_to_the_arrays_the_batch_makes() {
    // `c = x * k` in a loop, each iteration its own batch: the batch that makes the new
    // `c` frees the old one without reading it. The old block must serve the new `c`, so
    // the loop needs two blocks (x and c), not three (x and two c taking turns), with one
    // kernel per instruction (singleton) as with fused kernels (greedy).
    let n = 1 << 18; // 2 MiB of float64, above the recycling threshold
    for fuser in ["singleton", "greedy"] {
        let mut rt = reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FUSER", fuser)]);
        let x = from_f64(&mut rt, &vec![2.0; n]);
        let mut c = unary(&mut rt, Opcode::Multiply, &x, 3.0);
        assert!(read_f64(&mut rt, c.base, n).iter().all(|&v| v == 6.0));
        for k in 0..4 {
            let next = unary(&mut rt, Opcode::Multiply, &x, k as f64);
            rt.free(c.base).unwrap();
            c = next;
            let got = read_f64(&mut rt, c.base, n);
            assert!(got.iter().all(|&v| v == 2.0 * k as f64), "{fuser}, k {k}");
        }
        let block = HostMemory::block_bytes(8 * n) as u64;
        assert_allocated_at_most(&rt, 2 * block);
    }
}

/// Host memory the runtime has allocated so far is at most `bytes`: what a recipe never
/// needed shows here.
fn assert_allocated_at_most(rt: &Runtime, bytes: u64) {
    let stats = rt.stats();
    assert!(
        stats.host_bytes_allocated <= bytes,
        "more than {bytes} bytes: {stats}"
    );
}

fn fusing_runtime() -> Runtime {
    reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FUSER", "greedy")])
}

/// A new float64 base of `n` elements filled by `Range`, then `steps` (in place, each
/// with one scalar): how the bridges record `arange(start, stop, step)`.
fn arange(rt: &mut Runtime, n: usize, steps: &[(Opcode, f64)]) -> View {
    let b = rt.new_base(DType::Float64, n);
    let v = View::contiguous(b.id, DType::Float64, &[n]);
    rt.record(Instr::new(Opcode::Range, v.clone(), [])).unwrap();
    for &(op, s) in steps {
        rt.record(Instr::new(
            op,
            v.clone(),
            [v.clone().into(), Scalar::Float64(s).into()],
        ))
        .unwrap();
    }
    v
}

fn unary(rt: &mut Runtime, op: Opcode, a: &View, s: f64) -> View {
    let b = rt.new_base(DType::Float64, a.nelem());
    let v = View::contiguous(b.id, DType::Float64, &a.shape);
    rt.record(Instr::new(
        op,
        v.clone(),
        [a.clone().into(), Scalar::Float64(s).into()],
    ))
    .unwrap();
    v
}

#[test]
fn a_kept_arange_is_a_recipe_and_never_memory_until_read() {
    let mut rt = fusing_runtime();
    // Large: a small recipe is written out when a later batch reads it (next test).
    let n = hassium_vem::SMALL_ARRAY_ELEMENTS + 1000;
    let a = arange(&mut rt, n, &[]);
    let b = unary(&mut rt, Opcode::Multiply, &a, 2.0);
    let want: Vec<f64> = (0..n).map(|i| 2.0 * i as f64).collect();
    assert_eq!(read_f64(&mut rt, b.base, n), want);
    assert_eq!(rt.stats().bases_generated, 1);
    let one_array = 8 * n as u64 + 1024;
    assert_allocated_at_most(&rt, one_array);
    // A later batch recomputes it where it reads it, in registers when the reader walks
    // it in order...
    let c = unary(&mut rt, Opcode::Add, &a, 0.5);
    let want: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    assert_eq!(read_f64(&mut rt, c.base, n), want);
    assert_allocated_at_most(&rt, 2 * one_array);
    // ... and through a temporary when it does not (reversed here).
    let rev = a.slice(0, n as isize - 1, -1, -1).unwrap();
    let d = unary(&mut rt, Opcode::Add, &rev, 0.5);
    let want: Vec<f64> = (0..n).rev().map(|i| i as f64 + 0.5).collect();
    assert_eq!(read_f64(&mut rt, d.base, n), want);
    // Reading it on the host writes it out; it is ordinary memory from then on.
    let want: Vec<f64> = (0..n).map(|i| i as f64).collect();
    assert_eq!(read_f64(&mut rt, a.base, n), want);
    rt.record(Instr::new(
        Opcode::Add,
        a.clone(),
        [a.clone().into(), Scalar::Float64(1.0).into()],
    ))
    .unwrap();
    let want: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    assert_eq!(read_f64(&mut rt, a.base, n), want);
    assert_eq!(rt.stats().bases_generated, 1);
}

#[test]
fn a_small_recipe_is_written_out_by_the_first_later_batch_that_reads_it() {
    for (n, written) in [(1000, true), (hassium_vem::SMALL_ARRAY_ELEMENTS + 1, false)] {
        let mut rt = fusing_runtime();
        let a = arange(&mut rt, n, &[(Opcode::Multiply, 0.5)]);
        let b = unary(&mut rt, Opcode::Add, &a, 1.0);
        let want: Vec<f64> = (0..n).map(|i| 0.5 * i as f64 + 1.0).collect();
        assert_eq!(read_f64(&mut rt, b.base, n), want);
        assert_eq!(rt.stats().bases_generated, 1);
        let one_array = HostMemory::block_bytes(8 * n) as u64;
        assert_allocated_at_most(&rt, one_array);
        // Two later batches read it: a small one is memory after the first of them.
        for k in 0..2 {
            let c = unary(&mut rt, Opcode::Multiply, &a, 3.0);
            let want: Vec<f64> = (0..n).map(|i| 1.5 * i as f64).collect();
            assert_eq!(read_f64(&mut rt, c.base, n), want, "n {n}, batch {k}");
            rt.free(c.base).unwrap();
        }
        // b and the two c (the first is freed by the batch that makes the second): three
        // blocks, and a fourth when a is written out.
        let allocated = rt.stats().host_bytes_allocated;
        assert_eq!(allocated > 3 * one_array, written, "n {n}: {}", rt.stats());
        let want: Vec<f64> = (0..n).map(|i| 0.5 * i as f64).collect();
        assert_eq!(read_f64(&mut rt, a.base, n), want);
    }
}

#[test]
fn a_recipe_keeps_the_steps_after_range_and_a_write_into_it_writes_it_out_first() {
    let mut rt = fusing_runtime();
    let n = 10;
    // arange(3, 3 + 10 * 0.5, 0.5) as the Python bridge records it.
    let a = arange(&mut rt, n, &[(Opcode::Multiply, 0.5), (Opcode::Add, 3.0)]);
    rt.flush().unwrap();
    assert_eq!(rt.stats().bases_generated, 1);
    // a[::2] = -1: the odd elements must keep the recipe's values.
    let even = a.slice(0, 0, n as isize, 2).unwrap();
    rt.record(Instr::new(
        Opcode::Identity,
        even,
        [Scalar::Float64(-1.0).into()],
    ))
    .unwrap();
    let want: Vec<f64> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                -1.0
            } else {
                3.0 + 0.5 * i as f64
            }
        })
        .collect();
    assert_eq!(read_f64(&mut rt, a.base, n), want);
}

#[test]
fn what_stops_a_base_from_becoming_a_recipe() {
    let n = 8;
    let iota: Vec<f64> = (0..n).map(|i| i as f64).collect();
    // Read by another instruction before the steps after Range: the reader must see
    // the values at that point, so the base is written as usual.
    let mut rt = fusing_runtime();
    let a = arange(&mut rt, n, &[]);
    let b = unary(&mut rt, Opcode::Add, &a, 0.0);
    rt.record(Instr::new(
        Opcode::Multiply,
        a.clone(),
        [a.clone().into(), Scalar::Float64(3.0).into()],
    ))
    .unwrap();
    assert_eq!(read_f64(&mut rt, b.base, n), iota);
    let thrice: Vec<f64> = iota.iter().map(|x| 3.0 * x).collect();
    assert_eq!(read_f64(&mut rt, a.base, n), thrice);
    assert_eq!(rt.stats().bases_generated, 0);
    // An expensive step, a base synced or freed in the same batch, or a partial Range.
    let mut rt = fusing_runtime();
    let a = arange(&mut rt, n, &[(Opcode::Divide, 3.0)]);
    let _ = a;
    let s = arange(&mut rt, n, &[]);
    rt.sync(s.base).unwrap();
    let f = arange(&mut rt, n, &[]);
    let _g = unary(&mut rt, Opcode::Divide, &f, 3.0);
    rt.free(f.base).unwrap();
    let p = rt.new_base(DType::Float64, 2 * n);
    let half = View::contiguous(p.id, DType::Float64, &[n]);
    rt.record(Instr::new(Opcode::Range, half, [])).unwrap();
    rt.flush().unwrap();
    assert_eq!(rt.stats().bases_generated, 0);
    assert_eq!(read_f64(&mut rt, s.base, n), iota);
}

#[test]
fn a_recipe_overwritten_from_the_host_or_freed_is_forgotten() {
    let mut rt = fusing_runtime();
    let n = 4;
    let a = arange(&mut rt, n, &[]);
    rt.flush().unwrap();
    let bytes: Vec<u8> = [9.0f64; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    rt.write_host(a.base, &bytes).unwrap();
    assert_eq!(read_f64(&mut rt, a.base, n), vec![9.0; 4]);
    let b = arange(&mut rt, n, &[]);
    let c = unary(&mut rt, Opcode::Add, &b, 1.0);
    rt.free(b.base).unwrap();
    rt.flush().unwrap();
    // Freed after a batch of its own: later batches never name it again.
    let d = arange(&mut rt, n, &[]);
    rt.flush().unwrap();
    rt.free(d.base).unwrap();
    rt.flush().unwrap();
    assert!(rt.base(d.base).is_none());
    assert_eq!(read_f64(&mut rt, c.base, n), vec![1.0, 2.0, 3.0, 4.0]);
    // a, d and c: `c = b + 1` is itself a recipe through b's steps.
    assert_eq!(rt.stats().bases_generated, 3);
}

#[test]
fn a_failed_batch_that_was_to_write_out_a_recipe_leaves_it_readable() {
    let mut rt = fusing_runtime();
    let n = 6;
    let a = arange(&mut rt, n, &[(Opcode::Add, 1.0)]);
    rt.flush().unwrap();
    let idx = rt.new_base(DType::Int64, 1);
    rt.write_host(idx.id, &70i64.to_le_bytes()).unwrap();
    let out = rt.new_base(DType::Float64, 1);
    rt.record(Instr::new(
        Opcode::Gather,
        View::contiguous(out.id, DType::Float64, &[1]),
        [
            a.clone().into(),
            View::contiguous(idx.id, DType::Int64, &[1]).into(),
        ],
    ))
    .unwrap();
    rt.record(Instr::new(
        Opcode::Multiply,
        a.clone(),
        [a.clone().into(), Scalar::Float64(2.0).into()],
    ))
    .unwrap();
    let e = rt.sync(out.id).unwrap_err().to_string();
    assert!(e.contains("out of bounds"), "{e}");
    // The multiply does not depend on the failed gather: it ran, once.
    let values = read_f64(&mut rt, a.base, n);
    let doubled: Vec<f64> = (1..=n).map(|i| 2.0 * i as f64).collect();
    assert_eq!(values, doubled);
}

/// A gather of `src` at the computed index `at` (`src[at]`) into a new base of one
/// element.
fn gather_at(rt: &mut Runtime, src: &View, at: i64) -> View {
    let idx = from_f64(rt, &[at as f64]);
    let idx_int = rt.new_base(DType::Int64, 1);
    let idx_int = View::contiguous(idx_int.id, DType::Int64, &[1]);
    rt.record(Instr::new(Opcode::Identity, idx_int.clone(), [idx.into()]))
        .unwrap();
    let out = rt.new_base(DType::Float64, 1);
    let out = View::contiguous(out.id, DType::Float64, &[1]);
    rt.record(Instr::new(
        Opcode::Gather,
        out.clone(),
        [src.clone().into(), idx_int.into()],
    ))
    .unwrap();
    out
}

fn deferred_failure_keeps_every_other_array_exact(mut rt: Runtime) {
    let acc = from_f64(&mut rt, &[0.0, 0.0]);
    let add_one = |rt: &mut Runtime| {
        rt.record(Instr::new(
            Opcode::Add,
            acc.clone(),
            [acc.clone().into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap()
    };
    let src = from_f64(&mut rt, &[10.0, 11.0, 12.0, 13.0, 14.0]);
    add_one(&mut rt); // queued before the failure
    let bad = gather_at(&mut rt, &src, 9);
    let twice_bad = unary(&mut rt, Opcode::Multiply, &bad, 2.0);
    let good = gather_at(&mut rt, &src, 3);
    let d = unary(&mut rt, Opcode::Multiply, &good, 7.0);
    add_one(&mut rt); // and after it
                      // Reading an array that does not depend on the failure does not raise it.
    assert_eq!(read_f64(&mut rt, d.base, 1), vec![91.0]);
    assert_eq!(read_f64(&mut rt, acc.base, 2), vec![2.0, 2.0]);
    // The failed result and what was computed from it raise NumPy's error at every
    // read, never garbage.
    for _ in 0..2 {
        for id in [bad.base, twice_bad.base] {
            let e = rt.sync(id).unwrap_err();
            assert!(
                matches!(&e, Error::Bytecode(c) if matches!(c.root(), CoreError::OutOfBounds(_))),
                "{e}"
            );
            assert!(e.to_string().contains("index 9 is out of bounds"), "{e}");
            assert!(rt.host_ptr(id).is_err());
        }
    }
    // A later batch that reads the failed result is invalid in turn; others go on.
    let later = unary(&mut rt, Opcode::Add, &bad, 1.0);
    let fine = unary(&mut rt, Opcode::Add, &d, 1.0);
    assert!(rt.sync(later.base).is_err());
    assert_eq!(read_f64(&mut rt, fine.base, 1), vec![92.0]);
    // Writing the whole array makes it valid again.
    rt.write_host(bad.base, &5.0f64.to_le_bytes()).unwrap();
    assert_eq!(read_f64(&mut rt, bad.base, 1), vec![5.0]);
    assert_eq!(rt.stats().failures, 1);
}

#[test]
fn a_deferred_failure_poisons_its_dependents_and_keeps_every_other_array_exact() {
    deferred_failure_keeps_every_other_array_exact(reference_runtime(&[]));
}

#[test]
fn a_deferred_failure_inside_fused_kernels_keeps_every_other_array_exact() {
    deferred_failure_keeps_every_other_array_exact(fusing_runtime());
}

#[test]
fn a_failure_nothing_read_is_raised_once_by_the_next_read() {
    let mut rt = fusing_runtime();
    let src = from_f64(&mut rt, &[1.0, 2.0]);
    let bad = gather_at(&mut rt, &src, -3);
    let d = unary(&mut rt, Opcode::Add, &src, 1.0);
    rt.free(bad.base).unwrap();
    // Nothing holds the failed result any more: the next read raises the error, once.
    let e = rt.sync(d.base).unwrap_err().to_string();
    assert!(e.contains("index -3 is out of bounds"), "{e}");
    assert_eq!(read_f64(&mut rt, d.base, 2), vec![2.0, 3.0]);
}

/// `rng.random(n)` as the Python bridge records it: `Random` into a uint64 temporary,
/// `>> 11`, a cast to a float64 temporary, `* 2**-53` into the result; the temporaries
/// are freed at once.
fn uniform(rt: &mut Runtime, n: usize, seed: u64, stream: u64) -> View {
    let bits = rt.new_base(DType::UInt64, n);
    let bits = View::contiguous(bits.id, DType::UInt64, &[n]);
    let random = [Scalar::UInt64(seed).into(), Scalar::UInt64(stream).into()];
    rt.record(Instr::new(Opcode::Random, bits.clone(), random))
        .unwrap();
    let shifted = rt.new_base(DType::UInt64, n);
    let shifted = View::contiguous(shifted.id, DType::UInt64, &[n]);
    let by = [bits.clone().into(), Scalar::UInt64(11).into()];
    rt.record(Instr::new(Opcode::RightShift, shifted.clone(), by))
        .unwrap();
    let float = rt.new_base(DType::Float64, n);
    let float = View::contiguous(float.id, DType::Float64, &[n]);
    rt.record(Instr::new(
        Opcode::Identity,
        float.clone(),
        [shifted.clone().into()],
    ))
    .unwrap();
    let out = unary(rt, Opcode::Multiply, &float, 2f64.powi(-53));
    for v in [bits, shifted, float] {
        rt.free(v.base).unwrap();
    }
    out
}

fn uniform_values(n: usize, seed: u64, stream: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| (hassium_core::philox::random_u64(seed, stream, i) >> 11) as f64 * 2f64.powi(-53))
        .collect()
}

#[test]
fn random_numbers_kept_alive_but_never_read_again_are_never_memory() {
    let mut rt = fusing_runtime();
    let n = 1000;
    let x = uniform(&mut rt, n, 42, 7);
    let doubled = unary(&mut rt, Opcode::Multiply, &x, 2.0);
    let want: Vec<f64> = uniform_values(n, 42, 7).iter().map(|v| 2.0 * v).collect();
    assert_eq!(read_f64(&mut rt, doubled.base, n), want);
    assert_eq!(rt.stats().bases_generated, 1);
    let one_array = 8 * n as u64 + 1024;
    assert_allocated_at_most(&rt, one_array);
    // Freed in a batch that also reads it: recomputed there, still never memory.
    let plus = unary(&mut rt, Opcode::Add, &x, 1.0);
    rt.free(x.base).unwrap();
    let want: Vec<f64> = uniform_values(n, 42, 7).iter().map(|v| v + 1.0).collect();
    assert_eq!(read_f64(&mut rt, plus.base, n), want);
    assert_allocated_at_most(&rt, 2 * one_array);
}

#[test]
fn random_numbers_a_later_batch_reads_are_written_out_once() {
    let mut rt = fusing_runtime();
    let n = 300;
    let x = uniform(&mut rt, n, 5, 0);
    rt.flush().unwrap();
    assert_eq!(rt.stats().bases_generated, 1);
    // Read by a later batch: written out there (recomputing Philox at every read would
    // cost more than memory), and ordinary memory from then on.
    let rev = x.slice(0, n as isize - 1, -1, -1).unwrap();
    let back = unary(&mut rt, Opcode::Add, &rev, 0.0);
    let want = uniform_values(n, 5, 0);
    let reversed: Vec<f64> = want.iter().rev().copied().collect();
    assert_eq!(read_f64(&mut rt, back.base, n), reversed);
    assert_eq!(read_f64(&mut rt, x.base, n), want);
    // Half of it overwritten, then read: the other half keeps the numbers.
    let even = x.slice(0, 0, n as isize, 2).unwrap();
    rt.record(Instr::new(
        Opcode::Identity,
        even,
        [Scalar::Float64(-1.0).into()],
    ))
    .unwrap();
    let got = read_f64(&mut rt, x.base, n);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(*g, if i % 2 == 0 { -1.0 } else { *w }, "element {i}");
    }
}

#[test]
fn a_scaled_arange_in_a_new_array_is_a_recipe_recomputed_where_read() {
    // x = np.arange(n) * 0.5 + 3: Range into a temporary, then two steps into new bases.
    let mut rt = fusing_runtime();
    // Large: a small recipe is written out by the first later batch that reads it.
    let n = hassium_vem::SMALL_ARRAY_ELEMENTS + 500;
    let i = arange(&mut rt, n, &[]);
    let half = unary(&mut rt, Opcode::Multiply, &i, 0.5);
    let x = unary(&mut rt, Opcode::Add, &half, 3.0);
    rt.free(i.base).unwrap();
    rt.free(half.base).unwrap();
    rt.flush().unwrap();
    assert_eq!(rt.stats().bases_generated, 1);
    assert_allocated_at_most(&rt, 0);
    let want: Vec<f64> = (0..n).map(|k| k as f64 * 0.5 + 3.0).collect();
    for round in 0..3 {
        let y = unary(&mut rt, Opcode::Subtract, &x, 3.0);
        let got = read_f64(&mut rt, y.base, n);
        let w: Vec<f64> = want.iter().map(|v| v - 3.0).collect();
        assert_eq!(got, w, "round {round}");
        rt.free(y.base).unwrap();
    }
    // Three later batches read it; only their results were ever memory: two blocks (a
    // freed `y` returns to the pool when the batch with its `Free` runs).
    assert_allocated_at_most(&rt, 2 * HostMemory::block_bytes(8 * n) as u64);
    // A write into it writes it out first; the rest keeps the recipe's values.
    let first = x.slice(0, 0, 1, 1).unwrap();
    rt.record(Instr::new(
        Opcode::Identity,
        first,
        [Scalar::Float64(0.0).into()],
    ))
    .unwrap();
    let mut w = want.clone();
    w[0] = 0.0;
    assert_eq!(read_f64(&mut rt, x.base, n), w);
}

#[test]
fn what_a_batch_read_from_an_array_before_a_recipe_overwrote_it_stays_read() {
    // q[...] = 5; y = q + 1; i = arange(n); np.multiply(i, 2, out=q): q becomes a recipe
    // from its last write on, and y still sees the 5s.
    let mut rt = fusing_runtime();
    let n = 64;
    let q = rt.new_base(DType::Float64, n);
    let q = View::contiguous(q.id, DType::Float64, &[n]);
    rt.record(Instr::new(
        Opcode::Identity,
        q.clone(),
        [Scalar::Float64(5.0).into()],
    ))
    .unwrap();
    let i = arange(&mut rt, n, &[]);
    let y = unary(&mut rt, Opcode::Add, &q, 1.0);
    let by = [i.clone().into(), Scalar::Float64(2.0).into()];
    rt.record(Instr::new(Opcode::Multiply, q.clone(), by))
        .unwrap();
    rt.free(i.base).unwrap();
    rt.flush().unwrap();
    assert_eq!(rt.stats().bases_generated, 1);
    assert_eq!(read_f64(&mut rt, y.base, n), vec![6.0; n]);
    let want: Vec<f64> = (0..n).map(|k| 2.0 * k as f64).collect();
    assert_eq!(read_f64(&mut rt, q.base, n), want);
}
