//! Criterion micro-benchmarks of the paths every operation or loop iteration takes:
//! recording an operation, the canonical key of a loop body, a fuse-cache hit, a flush
//! with nothing to compute, and a kernel-cache hit on the cpu engine.
//! Run: `cargo bench -p hassium-vem --bench hot_paths`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use hassium_core::{
    batch_key, Base, BaseId, Batch, Capabilities, DType, Instr, Opcode, Scalar, View,
};
use hassium_fuser::{create, FuseCache, FuserOptions};
use hassium_vem::{Config, Runtime, DEFAULT_CONFIG};
use std::time::{Duration, Instant};

fn runtime(stack: &str, threshold: usize) -> Option<Runtime> {
    let env = [
        ("HASSIUM_STACK".to_string(), stack.to_string()),
        (
            "HASSIUM_RUNTIME_FLUSH_THRESHOLD".to_string(),
            threshold.to_string(),
        ),
    ];
    let cfg = Config::from_toml(DEFAULT_CONFIG, "default", env).expect("the default config loads");
    match Runtime::with_config(cfg) {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("stack {stack} unavailable, its benchmark is not run: {e}");
            None
        }
    }
}

/// A 100-instruction loop body in the shape a NumPy bridge records: ten chains of
/// temporaries over four state arrays, each temporary freed after its last use.
fn loop_body(first_temp: u64) -> Batch {
    let mut b = Batch::default();
    let n = 4096;
    let mut next = first_temp;
    for id in 1..=4 {
        b.bases.insert(
            BaseId(id),
            Base {
                id: BaseId(id),
                dtype: DType::Float64,
                nelem: n,
            },
        );
    }
    let view = |id: u64| View::contiguous(BaseId(id), DType::Float64, &[n]);
    for k in 0..10u64 {
        let (a, s) = (1 + k % 4, 1 + (k + 1) % 4);
        let mut prev = a;
        let mut temps = Vec::new();
        for j in 0..8 {
            let t = next;
            next += 1;
            b.bases.insert(
                BaseId(t),
                Base {
                    id: BaseId(t),
                    dtype: DType::Float64,
                    nelem: n,
                },
            );
            let op = [
                Opcode::Multiply,
                Opcode::Add,
                Opcode::Subtract,
                Opcode::Maximum,
            ][j % 4];
            b.instrs.push(Instr::new(
                op,
                view(t),
                [view(prev).into(), Scalar::Float64(0.5).into()],
            ));
            temps.push(t);
            prev = t;
        }
        b.instrs.push(Instr::new(
            Opcode::Add,
            view(s),
            [view(prev).into(), view(a).into()],
        ));
        let base = b.bases[&BaseId(temps[0])];
        b.instrs.push(Instr::system(Opcode::Free, &base));
    }
    b
}

fn record(c: &mut Criterion) {
    // The largest threshold the config allows: recording is measured, not flushing.
    let Some(mut rt) = runtime("reference", 1 << 20) else {
        return;
    };
    let a = rt.new_base(DType::Float64, 100);
    let b = rt.new_base(DType::Float64, 100);
    let (va, vb) = (
        View::contiguous(a.id, DType::Float64, &[100]),
        View::contiguous(b.id, DType::Float64, &[100]),
    );
    c.bench_function("record c = a + b (100 elements)", |bench| {
        bench.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let out = rt.new_base(DType::Float64, 100);
                let vo = View::contiguous(out.id, DType::Float64, &[100]);
                rt.record(Instr::new(
                    Opcode::Add,
                    vo,
                    [va.clone().into(), vb.clone().into()],
                ))
                .unwrap();
                rt.free(out.id).unwrap();
            }
            let t = start.elapsed();
            // Execution is not what is measured: drop the queue outside the timing.
            rt.flush().unwrap();
            // Two instructions (the op and its free) per iteration.
            t / 2
        })
    });
}

fn canonical_key(c: &mut Criterion) {
    let body = loop_body(100);
    c.bench_function("batch_key of a 100-instruction loop body", |bench| {
        bench.iter(|| batch_key(black_box(&body)))
    });
}

fn fuse_cache_hit(c: &mut Criterion) {
    let caps = Capabilities::all();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    let mut cache = FuseCache::new();
    cache
        .get_or_fuse(&loop_body(100), &caps, fuser.as_mut())
        .unwrap();
    let later = loop_body(5000);
    c.bench_function("fuse-cache hit, 100-instruction loop body", |bench| {
        bench.iter(|| {
            let (k, hit) = cache
                .get_or_fuse(black_box(&later), &caps, fuser.as_mut())
                .unwrap();
            assert!(hit);
            k
        })
    });
}

fn empty_flush(c: &mut Criterion) {
    let Some(mut rt) = runtime("reference", 4096) else {
        return;
    };
    let a = rt.new_base(DType::Float64, 100);
    rt.write_host(a.id, &[0u8; 800]).unwrap();
    c.bench_function("flush of a batch with only a sync", |bench| {
        bench.iter(|| rt.sync(a.id).unwrap())
    });
}

fn kernel_cache_hit(c: &mut Criterion) {
    let Some(mut rt) = runtime("cpu", 4096) else {
        return;
    };
    let a = rt.new_base(DType::Float64, 100);
    rt.write_host(a.id, &[0u8; 800]).unwrap();
    let va = View::contiguous(a.id, DType::Float64, &[100]);
    let step = |rt: &mut Runtime| {
        rt.record(Instr::new(
            Opcode::Add,
            va.clone(),
            [va.clone().into(), Scalar::Float64(1.0).into()],
        ))
        .unwrap();
        rt.sync(a.id).unwrap();
    };
    // Warm up until the compiled kernel (not the tiered interpreter) serves the batch.
    let deadline = Instant::now() + Duration::from_secs(30);
    while rt.stats().engine.kernels_compiled == 0 && Instant::now() < deadline {
        step(&mut rt);
        std::thread::sleep(Duration::from_millis(10));
    }
    for _ in 0..10 {
        step(&mut rt);
    }
    c.bench_function(
        "cpu engine: one-kernel batch served from the kernel cache",
        |bench| bench.iter(|| step(&mut rt)),
    );
}

criterion_group! {
    name = hot_paths;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = record, canonical_key, fuse_cache_hit, empty_flush, kernel_cache_hit
}
criterion_main!(hot_paths);
