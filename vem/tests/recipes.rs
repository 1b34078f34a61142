//! Bases kept as the generator that fills them ("recipes": a live `arange` or
//! `rng.random(n)` and a few cheap steps after it) end to end on the reference stack:
//! never memory until read, written out once, forgotten when overwritten or freed.

mod common;

use common::{arange, assert_allocated_at_most, fusing_runtime, read_f64, unary};
use hassium_core::{DType, Instr, Opcode, Scalar, View};
use hassium_vem::{HostMemory, Runtime};

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
    assert_allocated_at_most(&mut rt, one_array);
    // A later batch recomputes it where it reads it, in registers when the reader walks
    // it in order...
    let c = unary(&mut rt, Opcode::Add, &a, 0.5);
    let want: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    assert_eq!(read_f64(&mut rt, c.base, n), want);
    assert_allocated_at_most(&mut rt, 2 * one_array);
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
        assert_allocated_at_most(&mut rt, one_array);
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
    assert_allocated_at_most(&mut rt, one_array);
    // Freed in a batch that also reads it: recomputed there, still never memory.
    let plus = unary(&mut rt, Opcode::Add, &x, 1.0);
    rt.free(x.base).unwrap();
    let want: Vec<f64> = uniform_values(n, 42, 7).iter().map(|v| v + 1.0).collect();
    assert_eq!(read_f64(&mut rt, plus.base, n), want);
    assert_allocated_at_most(&mut rt, 2 * one_array);
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
    assert_allocated_at_most(&mut rt, 0);
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
    assert_allocated_at_most(&mut rt, 2 * HostMemory::block_bytes(8 * n) as u64);
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

/// A base that becomes a recipe in a batch that does not read it costs that batch
/// nothing: its steps would write a temporary nobody reads, and the runtime removes them
/// (on small batches too, which skip the `dead_code` filter, and on stacks without it).
#[test]
fn a_recipe_nothing_in_its_batch_reads_runs_no_kernel() {
    for n in [1000, hassium_vem::SMALL_ARRAY_ELEMENTS + 1000] {
        let mut rt = fusing_runtime();
        let a = arange(&mut rt, n, &[(Opcode::Multiply, 0.5)]);
        rt.flush().unwrap();
        assert_eq!(rt.stats().bases_generated, 1, "n {n}");
        assert_eq!(rt.stats().kernels, 0, "n {n}: {}", rt.stats());
        let want: Vec<f64> = (0..n).map(|i| 0.5 * i as f64).collect();
        assert_eq!(read_f64(&mut rt, a.base, n), want, "n {n}");
    }
}
