//! The runtime end to end on the built-in reference stack: recording, flushing, sync,
//! frees, errors, and the configuration in force. Bases kept as the generator that fills
//! them ("recipes") are tested in `recipes.rs`.

mod common;

use common::{
    assert_allocated_at_most, from_f64, fusing_runtime, read_f64, reference_runtime, unary,
};
use hassium_core::{BaseId, DType, Error as CoreError, Instr, Opcode, Operand, Scalar, View};
use hassium_vem::{Config, Error, HostMemory, Runtime, DEFAULT_CONFIG};

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

/// Element `at` of a float64 base through `sync_extent`, as a scalar read does.
fn read_element(rt: &mut Runtime, id: BaseId, at: usize) -> f64 {
    rt.sync_extent(id, at as u64, at as u64 + 1).unwrap();
    let p = rt.host_ptr(id).unwrap() as *const f64;
    // SAFETY: the base holds more than `at` float64 values; element `at` is current.
    unsafe { *p.add(at) }
}

#[test]
fn reading_an_element_nothing_queued_writes_leaves_the_queue_to_grow() {
    for stack in [reference_runtime(&[]), fusing_runtime()] {
        let mut rt = stack;
        let w = from_f64(&mut rt, &[0.25, 0.5, 0.25]);
        let x = from_f64(&mut rt, &[1.0, 2.0, 3.0, 4.0]);
        let out = rt.new_base(DType::Float64, 2);
        let ov = View::contiguous(out.id, DType::Float64, &[2]);
        rt.record(Instr::new(
            Opcode::Identity,
            ov.clone(),
            [Scalar::Float64(0.0).into()],
        ))
        .unwrap();
        let flushes = rt.stats().flushes;
        // out += w[j] * x[j:j + 2], reading each w[j] as a scalar: w has no queued writes.
        for j in 0..3 {
            let wj = read_element(&mut rt, w.base, j);
            let mut xj = x.clone();
            xj.offset = j as isize;
            xj.shape = (&[2usize][..]).into();
            let t = rt.new_base(DType::Float64, 2);
            let tv = View::contiguous(t.id, DType::Float64, &[2]);
            rt.record(Instr::new(
                Opcode::Multiply,
                tv.clone(),
                [xj.into(), Scalar::Float64(wj).into()],
            ))
            .unwrap();
            rt.record(Instr::new(
                Opcode::Add,
                ov.clone(),
                [ov.clone().into(), tv.into()],
            ))
            .unwrap();
            rt.free(t.id).unwrap();
        }
        assert_eq!(rt.queued(), 1 + 3 * 3, "the reads left the queue alone");
        // Each read was a batch of its sync alone.
        assert_eq!(rt.stats().flushes - flushes, 3);
        // A read of what the queue writes runs it.
        assert_eq!(read_element(&mut rt, out.id, 1), 0.5 + 1.5 + 1.0);
        assert_eq!(rt.queued(), 0);
        assert_eq!(read_f64(&mut rt, out.id, 2), vec![0.25 + 1.0 + 0.75, 3.0]);
        // Writing `w` queued: reading it flushes first, and sees the write.
        rt.record(Instr::new(
            Opcode::Add,
            w.clone(),
            [w.clone().into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap();
        assert_eq!(read_element(&mut rt, w.base, 0), 1.25);
        assert_eq!(rt.queued(), 0);
    }
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
        assert_allocated_at_most(&mut rt, 2 * block);
    }
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
fn a_deferred_failure_on_the_flush_thread_keeps_every_other_array_exact() {
    // Two instructions a batch: every cut by the threshold runs on the pipeline's worker
    // while the next is recorded, the failing gather's too.
    let small = [("HASSIUM_RUNTIME_SMALL_FLUSH_THRESHOLD", "2")];
    for fuser in ["singleton", "greedy"] {
        let mut rt = reference_runtime(&[small[0], ("HASSIUM_STACKS_REFERENCE_FUSER", fuser)]);
        let before = rt.stats().flushes_pipelined;
        let probe = from_f64(&mut rt, &[1.0]);
        for _ in 0..3 {
            unary(&mut rt, Opcode::Add, &probe, 1.0);
        }
        assert!(
            rt.stats().flushes_pipelined > before,
            "{fuser}: nothing pipelined"
        );
        deferred_failure_keeps_every_other_array_exact(rt);
    }
}

/// `x = x * 0.5 + 1` a hundred times over 64 elements, each step's temporaries freed as
/// a program's would be; returns `x` and the runtime's counters.
fn halving_loop(extra_env: &[(&str, &str)]) -> (Vec<f64>, hassium_vem::RuntimeStats) {
    let mut env = vec![("HASSIUM_RUNTIME_SMALL_FLUSH_THRESHOLD", "16")];
    env.extend_from_slice(extra_env);
    let mut rt = reference_runtime(&env);
    let mut x = from_f64(&mut rt, &(0..64).map(f64::from).collect::<Vec<_>>());
    for _ in 0..100 {
        let half = unary(&mut rt, Opcode::Multiply, &x, 0.5);
        let next = unary(&mut rt, Opcode::Add, &half, 1.0);
        rt.free(half.base).unwrap();
        rt.free(x.base).unwrap();
        x = next;
    }
    let values = read_f64(&mut rt, x.base, 64);
    (values, rt.stats())
}

#[test]
fn batches_of_small_arrays_run_on_the_flush_thread_with_the_same_results() {
    let (piped, s) = halving_loop(&[]);
    // (Batches this short are recorded faster than the worker runs them, which pauses the
    // pipeline now and then: see `pipeline::Stalls`.)
    assert!(s.flushes_pipelined >= 4, "{s}");
    let (alone, s) = halving_loop(&[("HASSIUM_RUNTIME_PIPELINE", "false")]);
    assert_eq!(s.flushes_pipelined, 0, "{s}");
    assert_eq!(piped, alone);
    let expected: Vec<f64> = (0..64)
        .map(|i| (0..100).fold(f64::from(i), |x, _| x * 0.5 + 1.0))
        .collect();
    assert_eq!(piped, expected);
}

#[test]
fn a_failure_nothing_read_does_not_make_an_unrelated_read_fail() {
    let mut rt = fusing_runtime();
    let src = from_f64(&mut rt, &[1.0, 2.0]);
    let bad = gather_at(&mut rt, &src, -3);
    let d = unary(&mut rt, Opcode::Add, &src, 1.0);
    rt.free(bad.base).unwrap();
    // Nothing needs the failed result: reads of other arrays succeed (a warning on
    // stderr says what failed).
    assert_eq!(read_f64(&mut rt, d.base, 2), vec![2.0, 3.0]);
    assert_eq!(rt.stats().failures, 1);
}

#[test]
fn a_scatter_refused_before_it_wrote_leaves_its_target_and_raises_once() {
    let mut rt = fusing_runtime();
    let target = from_f64(&mut rt, &[1.0, 2.0, 3.0]);
    let idx = rt.new_base(DType::Int64, 2);
    let bytes: Vec<u8> = [0i64, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    rt.write_host(idx.id, &bytes).unwrap();
    rt.record(Instr::new(
        Opcode::Scatter,
        target.clone(),
        [
            View::contiguous(idx.id, DType::Int64, &[2]).into(),
            Scalar::Float64(9.0).into(),
        ],
    ))
    .unwrap();
    let after = unary(&mut rt, Opcode::Multiply, &target, 2.0);
    // NumPy: the assignment raised and wrote nothing. Here the next read of the target
    // raises, once, and its values are the old ones, also for what read it later.
    let e = rt.sync(target.base).unwrap_err().to_string();
    assert!(e.contains("index 5 is out of bounds"), "{e}");
    assert_eq!(read_f64(&mut rt, target.base, 3), vec![1.0, 2.0, 3.0]);
    assert_eq!(read_f64(&mut rt, after.base, 3), vec![2.0, 4.0, 6.0]);
}
