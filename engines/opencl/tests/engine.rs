//! The engine's own behaviour on PoCL: fallback to the child for what the device cannot
//! do, device selection and its errors, the program cache across engine instances, lazy
//! data movement and eviction, and loading the cdylib through the engine ABI.

mod common;

use common::*;
use hassium_core::{BaseId, Batch, DType, Instr, Opcode, Operand, Scalar, View};
use hassium_engine_abi::{Engine, LoadedEngine};
use hassium_engine_opencl::{
    describe_devices, DeviceType, Fp64, OpenClConfig, OpenClEngine, Select, SpecializePolicy,
};

/// `o = sqrt(x * y + 1)` over `n` elements of `t`, with the temporary contracted by the
/// greedy fuser.
fn chain(t: DType, n: usize) -> (Batch, BaseId, BaseId, BaseId) {
    let mut b = Batch::default();
    let (x, y, tmp, o) = (
        base(&mut b, t, n),
        base(&mut b, t, n),
        base(&mut b, t, n),
        base(&mut b, t, n),
    );
    let v = |id| View::contiguous(id, t, &[n]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(tmp),
        [v(x).into(), v(y).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Add,
        v(tmp),
        [v(tmp).into(), Operand::Scalar(Scalar::Float64(1.0).cast(t))],
    ));
    b.instrs
        .push(Instr::new(Opcode::Sqrt, v(o), [v(tmp).into()]));
    free(&mut b, tmp);
    (b, x, y, o)
}

fn filled(b: &Batch, ids: &[BaseId]) -> Arrays {
    let mut a = Arrays::new(b);
    let mut rng = Rng(21);
    for &id in ids {
        let (d, n, _) = a.0[&id].clone();
        for i in 0..n {
            a.set(id, i, Scalar::Float64(rng.f64() * 4.0 + 0.1).cast(d));
        }
    }
    a
}

#[test]
fn float64_goes_to_the_child_on_a_device_without_fp64_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = OpenClConfig {
        fp64: Fp64::Off,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    // A float32 kernel runs on the device, then a float64 kernel that reads the float32
    // result (moved device -> host for the child), then a float32 kernel that reads the
    // child's result (moved host -> device).
    let mut b = Batch::default();
    let n = 300;
    let (f32t, f64t) = (DType::Float32, DType::Float64);
    let (x, a32, a64, b64, c32) = (
        base(&mut b, f32t, n),
        base(&mut b, f32t, n),
        base(&mut b, f64t, n),
        base(&mut b, f64t, n),
        base(&mut b, f32t, n),
    );
    let v = |id, t| View::contiguous(id, t, &[n]);
    // (Negative is exact, so the float64 results compare at float64 tolerance.)
    b.instrs.push(Instr::new(
        Opcode::Negative,
        v(a32, f32t),
        [v(x, f32t).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Identity,
        v(a64, f64t),
        [v(a32, f32t).into()],
    ));
    b.instrs
        .push(Instr::new(Opcode::Exp, v(b64, f64t), [v(a64, f64t).into()]));
    b.instrs.push(Instr::new(
        Opcode::Identity,
        v(c32, f32t),
        [v(b64, f64t).into()],
    ));
    let a = filled(&b, &[x]);
    let kernels = singletons(&b);
    let (want, got) = run_both(&b, &kernels, &a, &mut ocl);
    assert_eq!(diff(&want, &got, &[a32, a64, b64, c32]), None);
    let s = ocl.stats();
    assert_eq!(s.fallbacks, 3, "{s:?}");
    assert_eq!(s.kernels_run, 1, "{s:?}");
    assert_eq!(s.extra["fp64_on_device"], 0.0);

    // The same batch with fp64 = "auto" on PoCL (which has cl_khr_fp64) stays on the device.
    let mut auto = engine(SpecializePolicy::Fixed, dir.path());
    assert!(auto.device().fp64, "PoCL reports cl_khr_fp64");
    let (want, got) = run_both(&b, &kernels, &a, &mut auto);
    assert_eq!(diff(&want, &got, &[a32, a64, b64, c32]), None);
    assert_eq!(auto.stats().fallbacks, 0);
}

#[test]
fn a_fused_float64_kernel_with_contracted_temporaries_falls_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = OpenClConfig {
        fp64: Fp64::Off,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    let (b, x, y, o) = chain(DType::Float64, 1000);
    let kernels = fused(&b);
    assert_eq!(kernels.len(), 1, "the greedy fuser makes one kernel");
    assert_eq!(kernels[0].contracted.len(), 1);
    let a = filled(&b, &[x, y]);
    let (want, got) = run_both(&b, &kernels, &a, &mut ocl);
    assert_eq!(diff(&want, &got, &[o]), None);
    assert_eq!(ocl.stats().fallbacks, 1);
}

#[test]
fn an_unknown_device_name_is_an_error_listing_what_was_found() {
    let cfg = OpenClConfig {
        device: Select::Name("no such device 123".into()),
        ..OpenClConfig::default()
    };
    let e = OpenClEngine::new(cfg, None)
        .err()
        .expect("no device matches")
        .to_string();
    assert!(
        e.contains("no OpenCL device matches") && e.contains("\"no such device 123\""),
        "{e}"
    );
    assert!(
        e.contains("platform 0:") && e.contains("device 0:"),
        "lists what was found: {e}"
    );
}

#[test]
fn device_selection_by_index_name_and_type() {
    let by_name = OpenClConfig {
        platform: Select::Name("portable".into()),
        device: Select::Index(0),
        device_type: DeviceType::Cpu,
        cache_dir: None,
        ..OpenClConfig::default()
    };
    let e = OpenClEngine::new(by_name, None).expect("PoCL's CPU device");
    assert_eq!(e.device().kind, "cpu");
    let gpu_on_pocl_only = OpenClConfig {
        platform: Select::Name("portable".into()),
        device_type: DeviceType::Gpu,
        ..OpenClConfig::default()
    };
    // PoCL's pthread platform has no GPU: asking for one there is a clear error.
    if let Err(e) = OpenClEngine::new(gpu_on_pocl_only, None) {
        assert!(e.to_string().contains("device_type gpu"), "{e}");
    }
    let out_of_range = OpenClConfig {
        platform: Select::Index(99),
        ..OpenClConfig::default()
    };
    let e = OpenClEngine::new(out_of_range, None)
        .err()
        .expect("no platform 99")
        .to_string();
    assert!(e.contains("platform 99"), "{e}");
}

#[test]
fn describe_devices_lists_platforms_and_devices_with_their_indices() {
    let s = describe_devices();
    assert!(s.starts_with("platform 0: "), "{s}");
    assert!(s.contains("  device 0: ") && s.contains("fp64"), "{s}");
}

#[test]
fn a_second_engine_finds_the_programs_on_disk_and_a_loop_builds_once() {
    let dir = tempfile::tempdir().unwrap();
    let (b, x, y, o) = chain(DType::Float32, 4096);
    let kernels = fused(&b);
    let a = filled(&b, &[x, y]);
    let mut first = engine(SpecializePolicy::Fixed, dir.path());
    let (want, got) = run_both(&b, &kernels, &a, &mut first);
    assert_eq!(diff(&want, &got, &[o]), None);
    assert_eq!(first.stats().kernels_compiled, 1);
    // Besides binaries the directory holds the trimmer's stamp (`last-trimmed`).
    let entries: Vec<String> = std::fs::read_dir(dir.path().join("opencl"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "last-trimmed")
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "one program binary on disk, no temporary left: {entries:?}"
    );
    assert!(entries[0].ends_with(".clbin"), "{entries:?}");

    let cfg = OpenClConfig {
        strict_cache: true,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut second = OpenClEngine::new(cfg, None).unwrap();
    for _ in 0..3 {
        let (want, got) = run_both(&b, &kernels, &a, &mut second);
        assert_eq!(diff(&want, &got, &[o]), None);
    }
    let s = second.stats();
    assert_eq!(
        (s.kernels_compiled, s.cache_hits_disk, s.cache_hits_memory),
        (0, 1, 2),
        "{s:?}"
    );
}

#[test]
fn past_cache_max_bytes_the_least_recently_used_binaries_go_and_a_hit_survives() {
    let dir = tempfile::tempdir().unwrap();
    let (b, x, y, o) = chain(DType::Float32, 512);
    let kernels = fused(&b);
    let a = filled(&b, &[x, y]);
    // Engines that never trim (a limit of 0) fill and read the cache until the last.
    let keep = || {
        let cfg = OpenClConfig {
            cache_max_bytes: 0,
            ..config(SpecializePolicy::Fixed, dir.path())
        };
        OpenClEngine::new(cfg, None).unwrap()
    };
    run_both(&b, &kernels, &a, &mut keep());
    let bins = dir.path().join("opencl");
    let ours: Vec<_> = std::fs::read_dir(&bins)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(ours.len(), 1);
    let size = std::fs::metadata(&ours[0]).unwrap().len();
    // A binary of another program, last used a month ago.
    let stale = bins.join("0123456789abcdef.clbin");
    std::fs::write(&stale, vec![0u8; 4 * size as usize]).unwrap();
    let month = std::time::Duration::from_secs(30 * 24 * 3600);
    let last_used = |path: &std::path::Path, ago| {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(std::time::SystemTime::now() - ago)
            .unwrap();
    };
    last_used(&stale, month);
    // Ours was used even longer ago, then a second engine loads it from disk, which
    // makes it the most recently used.
    last_used(&ours[0], 2 * month);
    let mut second = keep();
    run_both(&b, &kernels, &a, &mut second);
    assert_eq!(second.stats().cache_hits_disk, 1);
    let _ = std::fs::remove_file(bins.join("last-trimmed"));
    // Room for ours and not for both: the engine trims on a background thread.
    let cfg = OpenClConfig {
        cache_max_bytes: 2 * size,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut third = OpenClEngine::new(cfg, None).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while stale.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!stale.exists(), "the stale binary outlived the limit");
    assert!(ours[0].exists(), "the recently used binary was trimmed");
    let (want, got) = run_both(&b, &kernels, &a, &mut third);
    assert_eq!(diff(&want, &got, &[o]), None);
    let s = third.stats();
    assert_eq!((s.kernels_compiled, s.cache_hits_disk), (0, 1), "{s:?}");
}

#[test]
fn a_corrupt_cache_entry_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (b, x, y, o) = chain(DType::Float32, 100);
    let kernels = fused(&b);
    let a = filled(&b, &[x, y]);
    run_both(
        &b,
        &kernels,
        &a,
        &mut engine(SpecializePolicy::Fixed, dir.path()),
    );
    for e in std::fs::read_dir(dir.path().join("opencl")).unwrap() {
        std::fs::write(e.unwrap().path(), b"HSCLBIN1 garbage").unwrap();
    }
    let mut again = engine(SpecializePolicy::Fixed, dir.path());
    let (want, got) = run_both(&b, &kernels, &a, &mut again);
    assert_eq!(diff(&want, &got, &[o]), None);
    assert_eq!(again.stats().kernels_compiled, 1);
}

#[test]
fn dynamic_kernels_serve_every_size_with_one_build() {
    let dir = tempfile::tempdir().unwrap();
    let mut ocl = engine(SpecializePolicy::Dynamic, dir.path());
    for n in [10, 1000, 77_777] {
        let (b, x, y, o) = chain(DType::Float32, n);
        let a = filled(&b, &[x, y]);
        let (want, got) = run_both(&b, &fused(&b), &a, &mut ocl);
        assert_eq!(diff(&want, &got, &[o]), None, "n = {n}");
    }
    assert_eq!(ocl.stats().kernels_compiled, 1);
}

/// Unoptimised builds inline nothing: a prelude helper declared plain `inline` (C99's
/// inline definition) then has no body to call, and every kernel that uses one fails to
/// build ("Unresolved extern function 'hs_max_float32'" on NVIDIA). `static inline`
/// gives each program its own copy, so `build_options = "-cl-opt-disable"` works.
#[test]
fn kernels_calling_prelude_helpers_build_with_optimisation_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = OpenClConfig {
        build_options: "-cl-opt-disable".into(),
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    let n = 1000;
    let mut b = Batch::default();
    let (x, y, o) = (
        base(&mut b, DType::Float32, n),
        base(&mut b, DType::Float32, n),
        base(&mut b, DType::Float32, n),
    );
    let v = |id| View::contiguous(id, DType::Float32, &[n]);
    b.instrs.push(Instr::new(
        Opcode::Maximum,
        v(o),
        [v(x).into(), v(y).into()],
    ));
    let a = filled(&b, &[x, y]);
    let (want, got) = run_both(&b, &fused(&b), &a, &mut ocl);
    assert_eq!(diff(&want, &got, &[o]), None);
    assert_eq!(ocl.stats().kernels_compiled, 1);
}

#[test]
fn inputs_are_uploaded_once_and_results_read_back_only_on_sync() {
    let dir = tempfile::tempdir().unwrap();
    let mut ocl = engine(SpecializePolicy::Fixed, dir.path());
    let n = 1000;
    let (b, x, y, o) = chain(DType::Float32, n);
    let kernels = fused(&b);
    let mut a = filled(&b, &[x, y]);
    let contracted = [kernels[0].contracted[0]];
    for _ in 0..3 {
        ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
    }
    let s = ocl.stats();
    assert_eq!(
        s.extra["bytes_to_device"],
        (2 * n * 4) as f64,
        "x and y once: {s:?}"
    );
    assert_eq!(s.extra["bytes_to_host"], 0.0);
    // The host copy of `o` is untouched until sync.
    assert_eq!(a.get(o, 0).as_f64(), 0.0);
    let bufs = a.buffers(&contracted);
    ocl.sync(o, bufs.get(o).unwrap()).unwrap();
    ocl.sync(o, bufs.get(o).unwrap()).unwrap();
    assert_eq!(
        ocl.stats().extra["bytes_to_host"],
        (n * 4) as f64,
        "read back once"
    );
    let want = ((a.get(x, 5).as_f64() * a.get(y, 5).as_f64()) as f32 + 1.0).sqrt();
    assert!((a.get(o, 5).as_f64() as f32 - want).abs() <= 1e-6 * want);

    // A host write flagged dirty is uploaded again.
    let mut bufs = a.buffers(&contracted).to_vec();
    for hb in &mut bufs {
        if hb.base == x.0 {
            hb.host_dirty = 1;
        }
    }
    ocl.execute(&b, &kernels, &hassium_engine_abi::Buffers::new(&bufs))
        .unwrap();
    assert_eq!(ocl.stats().extra["bytes_to_device"], (3 * n * 4) as f64);
}

#[test]
fn freed_device_buffers_are_reused_from_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let mut ocl = engine(SpecializePolicy::Fixed, dir.path());
    let (b, x, y, o) = chain(DType::Float32, 512);
    let kernels = fused(&b);
    let contracted = [kernels[0].contracted[0]];
    let mut a = filled(&b, &[x, y]);
    ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
    let allocated = ocl.stats().extra["device_allocations"];
    let pooled = ocl.stats().extra["device_buffers_pooled"];
    for id in [x, y, o] {
        ocl.free(id).unwrap();
    }
    assert_eq!(ocl.stats().extra["device_buffers_pooled"], pooled + 3.0);
    ocl.execute(&b, &kernels, &a.buffers(&contracted)).unwrap();
    let s = ocl.stats();
    assert_eq!(s.extra["device_allocations"], allocated, "{s:?}");
    assert!(s.extra["device_pool_hits"] >= 3.0, "{s:?}");
}

#[test]
fn idle_buffers_are_evicted_to_the_host_when_memory_runs_short() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 16; // 256 KiB per float32 base
    let cfg = OpenClConfig {
        memory_limit: (7 * n * 4) as u64,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    // Three independent chains in one batch, run as three flushes: each kernel needs
    // three bases, all nine do not fit in seven.
    let t = DType::Float32;
    let mut b = Batch::default();
    let mut chains = Vec::new();
    for _ in 0..3 {
        let (x, y, tmp, o) = (
            base(&mut b, t, n),
            base(&mut b, t, n),
            base(&mut b, t, n),
            base(&mut b, t, n),
        );
        let v = |id| View::contiguous(id, t, &[n]);
        let first = b.instrs.len();
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            v(tmp),
            [v(x).into(), v(y).into()],
        ));
        b.instrs
            .push(Instr::new(Opcode::Sqrt, v(o), [v(tmp).into()]));
        free(&mut b, tmp);
        chains.push((first, x, y, tmp, o));
    }
    let ids: Vec<BaseId> = chains.iter().flat_map(|c| [c.1, c.2]).collect();
    let a = filled(&b, &ids);
    let kernels: Vec<_> = chains
        .iter()
        .map(|c| hassium_fuser::finish_kernel(&b, vec![c.0, c.0 + 1], |_| false))
        .collect();
    let contracted: Vec<BaseId> = chains.iter().map(|c| c.3).collect();
    let mut want = a.clone();
    hassium_engine_reference::ReferenceEngine::new()
        .execute(&b, &kernels, &want.buffers(&contracted))
        .unwrap();
    let mut got = a.clone();
    for k in &kernels {
        ocl.execute(&b, std::slice::from_ref(k), &got.buffers(&contracted))
            .unwrap();
    }
    let s = ocl.stats();
    assert!(s.extra["evictions"] > 0.0, "{s:?}");
    assert!(s.extra["device_bytes_held"] <= (7 * n * 4) as f64, "{s:?}");
    sync_all(&mut ocl, &mut got, &contracted);
    let outs: Vec<BaseId> = chains.iter().map(|c| c.4).collect();
    assert_eq!(diff(&want, &got, &outs), None);
}

#[test]
fn a_kernel_larger_than_the_memory_limit_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = OpenClConfig {
        memory_limit: 1000,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    let (b, x, y, _) = chain(DType::Float32, 4096);
    let kernels = fused(&b);
    let mut a = filled(&b, &[x, y]);
    let e = ocl
        .execute(&b, &kernels, &a.buffers(&kernels[0].contracted))
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of device memory"), "{e}");
}

#[test]
fn the_cdylib_loads_through_the_engine_abi_and_runs_a_kernel() {
    let dir = tempfile::tempdir().unwrap();
    // Cargo builds this package's cdylib next to the test binary (target/<profile>/deps),
    // and `cargo build` copies it one level up.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let name = "libhassium_engine_opencl.so";
    let lib = [deps.join(name), deps.parent().unwrap().join(name)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} not built next to {}", deps.display()));
    let cfg: toml::Table = format!(
        "library = \"libhassium_engine_opencl.so\"\nchild = \"cpu\"\nspecialize = \"dynamic\"\ncache_dir = \"{}\"",
        dir.path().display()
    )
    .parse()
    .unwrap();
    let mut e = LoadedEngine::open(
        &lib,
        &cfg,
        Some(Box::new(hassium_engine_reference::ReferenceEngine::new())),
    )
    .expect("the engine library loads");
    assert_eq!(e.name(), "opencl");
    let (b, x, y, o) = chain(DType::Float32, 333);
    let kernels = fused(&b);
    let a = filled(&b, &[x, y]);
    let contracted = kernels[0].contracted.clone();
    let mut want = a.clone();
    hassium_engine_reference::ReferenceEngine::new()
        .execute(&b, &kernels, &want.buffers(&contracted))
        .unwrap();
    let mut got = a.clone();
    e.execute(&b, &kernels, &got.buffers(&contracted)).unwrap();
    sync_all(&mut e, &mut got, &contracted);
    assert_eq!(diff(&want, &got, &[o]), None);
    assert_eq!(e.stats().kernels_run, 1);

    let bad: toml::Table = "devise = 1".parse().unwrap();
    let err = LoadedEngine::open(&lib, &bad, None)
        .err()
        .expect("unknown key")
        .to_string();
    assert!(
        err.contains("unknown field `devise`") && err.contains("`device_type`"),
        "{err}"
    );
}

#[test]
fn tiered_builds_run_new_kernels_on_the_child_until_their_program_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = OpenClConfig {
        tiered: true,
        ..config(SpecializePolicy::Fixed, dir.path())
    };
    let mut ocl = OpenClEngine::new(cfg, None).unwrap();
    let (b, x, y, o) = chain(DType::Float32, 1000);
    let kernels = fused(&b);
    let a = filled(&b, &[x, y]);
    // The first call does not wait for the build: the child runs the kernel.
    let (want, got) = run_both(&b, &kernels, &a, &mut ocl);
    assert_eq!(diff(&want, &got, &[o]), None);
    let s = ocl.stats();
    assert_eq!(
        (s.interpreted, s.kernels_run, s.fallbacks),
        (1, 0, 0),
        "{s:?}"
    );
    // A later call finds the program, once the background build is done.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while ocl.stats().kernels_run == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the background build never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (want, got) = run_both(&b, &kernels, &a, &mut ocl);
        assert_eq!(diff(&want, &got, &[o]), None);
    }
    let s = ocl.stats();
    assert_eq!((s.kernels_compiled, s.fallbacks), (1, 0), "{s:?}");
}

/// An elementwise kernel of two or three loops tiles its rows over work-groups (items of
/// a group on neighbouring elements of a row): every element is computed once, with the
/// reference's values, for rows shorter than a group, as long and longer, a group's
/// worth of rows and a ragged last group, in both specialisations and for every
/// work-group size. The kernel adds into its output, so an element computed twice
/// would differ. The input is a slice of a wider array walked backwards along its
/// rows, so the loops do not collapse into one.
#[test]
fn elementwise_rows_tiled_over_work_groups_compute_every_element_once() {
    for shape in [
        &[5usize, 1, 3][..],
        &[300, 3],
        &[9, 8],
        &[3, 257],
        &[2, 1000],
        &[4, 3, 70],
        &[33, 2, 5],
    ] {
        let n: usize = shape.iter().product();
        let last = shape.len() - 1;
        let mut wide = shape.to_vec();
        wide[last] += 3;
        let mut b = Batch::default();
        let (x, o) = (
            base(&mut b, DType::Float64, wide.iter().product()),
            base(&mut b, DType::Float64, n),
        );
        let xv = View::contiguous(x, DType::Float64, &wide)
            .slice(last, wide[last] as isize - 1, 2, -1)
            .unwrap();
        assert_eq!(&xv.shape[..], shape);
        // `o += x`: an element computed twice would come out as `o + 2x`.
        let ov = View::contiguous(o, DType::Float64, shape);
        b.instrs
            .push(Instr::new(Opcode::Add, ov.clone(), [ov.into(), xv.into()]));
        let mut a = Arrays::new(&b);
        let mut rng = Rng(11);
        for i in 0..wide.iter().product() {
            a.set(x, i, Scalar::Float64((rng.f64() - 0.5) * 1e6));
        }
        a.fill(o, &mut rng, false);
        for spec in [SpecializePolicy::Fixed, SpecializePolicy::Dynamic] {
            for wg in [0, 8, 64, 256] {
                let dir = tempfile::tempdir().unwrap();
                let cfg = OpenClConfig {
                    work_group_size: wg,
                    ..config(spec, dir.path())
                };
                let mut ocl = OpenClEngine::new(cfg, None).unwrap();
                let (want, got) = run_both(&b, &fused(&b), &a, &mut ocl);
                assert_eq!(
                    diff(&want, &got, &[o]),
                    None,
                    "shape {shape:?}, {spec:?}, work_group_size {wg}"
                );
            }
        }
    }
}
