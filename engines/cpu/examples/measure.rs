//! Measurements for the CPU engine's design choices, printed side by side:
//! Black-Scholes in C with scalar libm vs glibc's vector math (without -ffast-math), a
//! streaming fused kernel's bandwidth through the engine, and matmul through `gemm`.
//!
//! `cargo run --release -p hassium-engine-cpu --example measure`

use hassium_core::{Base, BaseId, Batch, DType, Instr, Opcode, Operand, Scalar, View};
use hassium_engine_abi::{Buffers, Engine, HostBuffer};
use hassium_engine_cpu::{CpuConfig, CpuEngine, LIBMVEC_DECLS};
use std::process::Command;
use std::time::Instant;

fn blackscholes(dir: &std::path::Path) {
    let src = include_str!("blackscholes.c");
    for (name, text) in [
        ("scalar libm", src.to_string()),
        ("libmvec", format!("{LIBMVEC_DECLS}{src}")),
    ] {
        let c = dir.join("bs.c");
        let exe = dir.join("bs");
        std::fs::write(&c, text).unwrap();
        let ok = Command::new("cc")
            .args([
                "-O3",
                "-march=native",
                "-fno-math-errno",
                "-std=gnu11",
                "-o",
            ])
            .arg(&exe)
            .arg(&c)
            .args(["-lmvec", "-lm"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            println!("black-scholes C ({name}): could not compile");
            continue;
        }
        let best = (0..3)
            .map(|_| {
                let out = Command::new(&exe).output().unwrap();
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            })
            .fold(f64::INFINITY, f64::min);
        println!("black-scholes C 1M x 10, {name:12}: {best:.4} s");
    }
}

struct Host(Vec<(BaseId, DType, Vec<u64>)>);
impl Host {
    fn buffers(&mut self) -> Buffers {
        let list: Vec<HostBuffer> = self
            .0
            .iter_mut()
            .map(|(id, d, v)| HostBuffer {
                base: id.0,
                data: v.as_mut_ptr() as *mut u8,
                nelem: (v.len() * 8 / d.size()) as u64,
                dtype: *d as u8,
                host_dirty: 0,
            })
            .collect();
        Buffers::new(&list)
    }
}

fn streaming(cpu: &mut CpuEngine) {
    let n = 1 << 24;
    let t = DType::Float64;
    let mut b = Batch::default();
    for id in 1..=4 {
        b.bases.insert(
            BaseId(id),
            Base {
                id: BaseId(id),
                dtype: t,
                nelem: n,
            },
        );
    }
    let v = |id| View::contiguous(BaseId(id), t, &[n]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(4),
        [v(1).into(), Operand::Scalar(Scalar::Float64(2.5))],
    ));
    b.instrs
        .push(Instr::new(Opcode::Add, v(3), [v(4).into(), v(2).into()]));
    b.instrs
        .push(Instr::system(Opcode::Free, &b.bases[&BaseId(4)].clone()));
    let k = hassium_fuser::finish_kernel(&b, vec![0, 1], |_| false);
    let mut host = Host(
        (1..=3)
            .map(|id| (BaseId(id), t, vec![1.0f64.to_bits(); n]))
            .collect(),
    );
    let bufs = host.buffers();
    cpu.execute(&b, std::slice::from_ref(&k), &bufs).unwrap();
    let best = (0..5)
        .map(|_| {
            let s = Instant::now();
            cpu.execute(&b, std::slice::from_ref(&k), &bufs).unwrap();
            s.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    let st = cpu.stats();
    println!(
        "  (kernels run {}, compiled {}, interpreted {})",
        st.kernels_run, st.kernels_compiled, st.interpreted
    );
    println!(
        "streaming c = a*2.5 + b, 16M float64 (384 MiB moved): {best:.4} s = {:.1} GB/s",
        (3 * 8 * n) as f64 / best / 1e9
    );
}

fn matmul(cpu: &mut CpuEngine) {
    let n = 1200;
    let t = DType::Float32;
    let mut b = Batch::default();
    for id in 1..=3 {
        b.bases.insert(
            BaseId(id),
            Base {
                id: BaseId(id),
                dtype: t,
                nelem: n * n,
            },
        );
    }
    let v = |id| View::contiguous(BaseId(id), t, &[n, n]);
    b.instrs
        .push(Instr::extension("matmul", v(3), [v(1).into(), v(2).into()]));
    let k = hassium_fuser::finish_kernel(&b, vec![0], |_| true);
    let mut host = Host(
        (1..=3)
            .map(|id| (BaseId(id), t, vec![0x3f80_0000_3f80_0000u64; n * n / 2]))
            .collect(),
    );
    let bufs = host.buffers();
    cpu.execute(&b, std::slice::from_ref(&k), &bufs).unwrap();
    let best = (0..5)
        .map(|_| {
            let s = Instant::now();
            cpu.execute(&b, std::slice::from_ref(&k), &bufs).unwrap();
            s.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "matmul 1200x1200 float32 (gemm crate): {best:.4} s = {:.1} GFLOP/s",
        2.0 * (n * n * n) as f64 / best / 1e9
    );
}

fn main() {
    let dir = std::env::temp_dir().join(format!("hassium-measure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    blackscholes(&dir);
    let mut cpu = CpuEngine::new(CpuConfig {
        cache_dir: hassium_engine_abi::CacheLocation::At(dir.join("cache")),
        ..CpuConfig::default()
    })
    .unwrap();
    streaming(&mut cpu);
    let mut one = CpuEngine::new(CpuConfig {
        cache_dir: hassium_engine_abi::CacheLocation::At(dir.join("cache")),
        threads: 1,
        ..CpuConfig::default()
    })
    .unwrap();
    print!("one thread: ");
    streaming(&mut one);
    matmul(&mut cpu);
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
