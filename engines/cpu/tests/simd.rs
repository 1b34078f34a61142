//! Vector math without fast-math: the generated code calls glibc's libmvec variants, and
//! NaN, infinities and signed zeros still come out as NumPy's scalar functions give them.

mod common;

use common::*;
use hassium_core::{Batch, DType, Instr, Opcode, Scalar, View};
use hassium_engine_cpu::{CpuConfig, CpuEngine, SpecializePolicy};

fn unary_batch(op: Opcode, t: DType, n: usize) -> Batch {
    let mut b = Batch::default();
    let (x, y) = (base(&mut b, t, n), base(&mut b, t, n));
    b.instrs.push(Instr::new(
        op,
        View::contiguous(y, t, &[n]),
        [View::contiguous(x, t, &[n]).into()],
    ));
    b
}

#[test]
fn exp_and_log_loops_call_libmvec_vector_variants() {
    if !std::path::Path::new("/usr/lib/x86_64-linux-gnu/libmvec.so").exists() {
        eprintln!("no libmvec on this machine; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cpu = CpuEngine::new(CpuConfig {
        cache_dir: hassium_engine_abi::CacheLocation::At(dir.path().into()),
        ..CpuConfig::default()
    })
    .unwrap();
    for (op, t, sym) in [
        (Opcode::Exp, DType::Float64, "exp"),
        (Opcode::Log, DType::Float32, "logf"),
    ] {
        let b = unary_batch(op, t, 4096);
        let src = cpu.source_of(&b, &singletons(&b)[0]).unwrap();
        let c = dir.path().join("k.c");
        std::fs::write(&c, src).unwrap();
        let out = std::process::Command::new("cc")
            .args([
                "-O2",
                "-march=native",
                "-fPIC",
                "-std=gnu11",
                "-fno-math-errno",
                "-fopenmp-simd",
                "-S",
                "-o",
                "-",
            ])
            .arg(&c)
            .output()
            .unwrap();
        let asm = String::from_utf8_lossy(&out.stdout);
        assert!(
            asm.lines()
                .any(|l| l.contains("_ZGV") && l.contains(&format!("v_{sym}"))),
            "no vector {sym} call in:\n{}",
            asm.lines()
                .filter(|l| l.contains("call"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn vectorised_math_keeps_nan_inf_and_signed_zero_semantics() {
    let dir = tempfile::tempdir().unwrap();
    // The engine's default optimisation flags, so the vector paths are the ones tested.
    let mut cpu = CpuEngine::new(CpuConfig {
        cache_dir: hassium_engine_abi::CacheLocation::At(dir.path().into()),
        threads: 2,
        min_parallel_elems: 1,
        min_parallel_seconds: 0.0,
        specialize: SpecializePolicy::Fixed,
        ..CpuConfig::default()
    })
    .unwrap();
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e300,
        -1e300,
        710.0,
        -746.0,
        1e-310,
        -1.0,
        2.5,
    ];
    let mut rng = Rng(99);
    for t in [DType::Float64, DType::Float32] {
        let mut b = Batch::default();
        let n = 4096;
        let x = base(&mut b, t, n);
        let mut outs = Vec::new();
        for op in [
            Opcode::Exp,
            Opcode::Log,
            Opcode::Sin,
            Opcode::Cos,
            Opcode::Tan,
            Opcode::Exp2,
            Opcode::Expm1,
            Opcode::Log2,
            Opcode::Log10,
            Opcode::Log1p,
            Opcode::Arcsin,
            Opcode::Arctan,
            Opcode::Tanh,
            Opcode::Arcsinh,
            Opcode::Cbrt,
            Opcode::Sqrt,
        ] {
            let y = base(&mut b, t, n);
            outs.push(y);
            b.instrs.push(Instr::new(
                op,
                View::contiguous(y, t, &[n]),
                [View::contiguous(x, t, &[n]).into()],
            ));
        }
        let mut a = Arrays::new(&b);
        for i in 0..n {
            let v = if i % 7 == 0 {
                specials[(i / 7) % specials.len()]
            } else {
                (rng.f64() - 0.5) * 20.0
            };
            a.set(x, i, Scalar::Float64(v).cast(t));
        }
        let (want, got) = run_both(&b, &singletons(&b), &a, &mut cpu);
        assert_eq!(diff(&want, &got, &outs), None, "{t:?}");
        // Signed zeros: exp(-inf) = +0, expm1(-0) = -0.
        for (k, id) in outs.iter().enumerate() {
            for i in (0..n).step_by(7) {
                let (w, g) = (want.get(*id, i).as_f64(), got.get(*id, i).as_f64());
                if w == 0.0 {
                    assert_eq!(
                        w.is_sign_negative(),
                        g.is_sign_negative(),
                        "{:?} op {k} at {i}",
                        t
                    );
                }
            }
        }
    }
}

/// A one-loop kernel is split across threads only at multiples of `ALIGN` elements, so
/// each element takes the same vector or scalar path, and a math function whose vector
/// variant rounds differently from the scalar one gives the same bits for any thread
/// count: here sin and expf over odd lengths, from an offset start too.
#[test]
fn vector_math_gives_the_same_bits_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    for (op, t) in [(Opcode::Sin, DType::Float64), (Opcode::Exp, DType::Float32)] {
        for (n, offset) in [(100_003usize, 0isize), (70_001, 3)] {
            let mut results = Vec::new();
            for threads in [1, 2, 3] {
                let mut cpu = CpuEngine::new(CpuConfig {
                    threads,
                    min_parallel_elems: 1,
                    min_parallel_seconds: 0.0,
                    cache_dir: hassium_engine_abi::CacheLocation::At(dir.path().into()),
                    ..CpuConfig::default()
                })
                .unwrap();
                let mut b = Batch::default();
                let (x, y) = (base(&mut b, t, n + 8), base(&mut b, t, n));
                let mut input = View::contiguous(x, t, &[n]);
                input.offset = offset;
                b.instrs
                    .push(Instr::new(op, View::contiguous(y, t, &[n]), [input.into()]));
                let k = hassium_fuser::finish_kernel(&b, vec![0], |_| false);
                let mut a = Arrays::new(&b);
                for i in 0..n + 8 {
                    let v = i as f64 * 0.0137 - 40.0;
                    a.set(x, i, Scalar::Float64(v).cast(t));
                }
                let buffers = a.buffers(&k.contracted);
                use hassium_engine_abi::Engine;
                cpu.execute(&b, &[k], &buffers).unwrap();
                let bits: Vec<[u8; 16]> = (0..n).map(|i| a.get(y, i).to_le_bytes()).collect();
                results.push(bits);
            }
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "{op:?} {t:?} n={n}"
            );
        }
    }
}
