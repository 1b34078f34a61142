//! The kernel cache, tiered execution and the engine's failure modes.

mod common;

use common::*;
use hassium_core::{Batch, DType, Instr, Kernel, Opcode, Operand, Scalar, View};
use hassium_engine_abi::{Engine, LoadedEngine};
use hassium_engine_cpu::{CpuConfig, CpuEngine, SpecializePolicy};

/// One loop iteration `y = sqrt(x * dt + 1)` on fresh temporaries (ids differ every
/// iteration, as a Python loop's temporaries do), fused into one kernel.
fn iteration(dt: f64) -> (Batch, Vec<Kernel>) {
    let mut b = Batch::default();
    let t = DType::Float64;
    let x = base(&mut b, t, 1000);
    let y = base(&mut b, t, 1000);
    // Fresh temporary ids per iteration.
    let skip = (dt * 1000.0) as u64 + 10;
    let t1 = hassium_core::BaseId(skip);
    let t2 = hassium_core::BaseId(skip + 1);
    for id in [t1, t2] {
        b.bases.insert(
            id,
            hassium_core::Base {
                id,
                dtype: t,
                nelem: 1000,
            },
        );
    }
    let v = |id| View::contiguous(id, t, &[1000]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        v(t1),
        [v(x).into(), Operand::Scalar(Scalar::Float64(dt))],
    ));
    b.instrs.push(Instr::new(
        Opcode::Add,
        v(t2),
        [v(t1).into(), Operand::Scalar(Scalar::Float64(1.0))],
    ));
    b.instrs
        .push(Instr::new(Opcode::Sqrt, v(y), [v(t2).into()]));
    free(&mut b, t1);
    free(&mut b, t2);
    let k = hassium_fuser::finish_kernel(&b, vec![0, 1, 2], |_| false);
    (b, vec![k])
}

fn run_iteration(cpu: &mut dyn Engine, dt: f64) -> hassium_engine_abi::Result<f64> {
    run_keyed(cpu, None, dt)
}

/// [`run_iteration`], as the runtime calls a batch from the fuse cache when `key` is set.
fn run_keyed(cpu: &mut dyn Engine, key: Option<u128>, dt: f64) -> hassium_engine_abi::Result<f64> {
    let (b, ks) = iteration(dt);
    let mut a = Arrays::new(&b);
    for i in 0..1000 {
        a.set(
            hassium_core::BaseId(1),
            i,
            Scalar::Float64(i as f64 / 1000.0),
        );
    }
    let contracted = ks[0].contracted.clone();
    let buffers = a.buffers(&contracted);
    match key {
        Some(key) => cpu.execute_keyed(key, &b, &ks, &buffers)?,
        None => cpu.execute(&b, &ks, &buffers)?,
    }
    Ok(a.get(hassium_core::BaseId(2), 999).as_f64())
}

fn strict(dir: &std::path::Path, spec: SpecializePolicy) -> CpuEngine {
    CpuEngine::new(CpuConfig {
        strict_cache: true,
        ..config(1, spec, dir)
    })
    .unwrap()
}

#[test]
fn a_loop_of_identical_batches_compiles_once() {
    for spec in [
        SpecializePolicy::Fixed,
        SpecializePolicy::Dynamic,
        SpecializePolicy::Both,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut cpu = strict(dir.path(), spec);
        for step in 1..=5 {
            let dt = step as f64 * 0.01;
            let y = run_iteration(&mut cpu, dt).unwrap();
            assert!((y - (0.999 * dt + 1.0).sqrt()).abs() < 1e-12);
        }
        let s = cpu.stats();
        assert_eq!(
            (s.kernels_compiled, s.cache_hits_memory, s.interpreted),
            (1, 4, 0),
            "{spec:?}: {s:?}"
        );
    }
}

#[test]
fn each_compiled_kernel_reports_its_calls_time_and_bandwidth() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = strict(dir.path(), SpecializePolicy::Fixed);
    for step in 1..=3 {
        run_iteration(&mut cpu, step as f64 * 0.01).unwrap();
    }
    let s = cpu.stats();
    assert_eq!(s.kernels.len(), 1, "{s:?}");
    let k = &s.kernels[0];
    // Reads x and writes y, 1000 float64 each; the temporaries stay in registers.
    assert_eq!((k.calls, k.instrs, k.elements), (3, 3, 1000));
    assert_eq!((k.bytes_moved, s.bytes_moved), (3 * 16_000, 3 * 16_000));
    assert!(k.seconds > 0.0 && k.seconds <= s.execute_seconds);
    assert!((k.gb_per_s - k.bytes_moved as f64 / k.seconds / 1e9).abs() <= 1e-9 * k.gb_per_s);
    assert_eq!(k.key.len(), 32);
}

#[test]
fn a_known_kernel_structure_is_verified_again_when_its_bases_differ() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = engine(1, SpecializePolicy::Both, dir.path());
    run_iteration(&mut cpu, 0.5).unwrap();
    run_iteration(&mut cpu, 0.5).unwrap();
    // The same instructions over an input base of another dtype, or one too short for
    // the views that read it: the engine must not trust what it verified before.
    type Change = fn(&mut hassium_core::Base);
    let changes: [(&str, Change); 2] = [
        ("dtype float64 but its base holds int64", |b| {
            b.dtype = DType::Int64
        }),
        ("outside its base of 999 elements", |b| b.nelem = 999),
    ];
    for (want, change) in changes {
        let (mut b, ks) = iteration(0.5);
        change(b.bases.get_mut(&hassium_core::BaseId(1)).unwrap());
        let mut a = Arrays::new(&b);
        let e = cpu
            .execute(&b, &ks, &a.buffers(&ks[0].contracted))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    assert!(run_iteration(&mut cpu, 0.5).is_ok());
}

#[test]
fn strict_cache_turns_a_later_miss_into_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = strict(dir.path(), SpecializePolicy::Fixed);
    run_iteration(&mut cpu, 0.5).unwrap();
    let mut b = Batch::default();
    let (x, y) = (
        base(&mut b, DType::Float32, 8),
        base(&mut b, DType::Float32, 8),
    );
    b.instrs.push(Instr::new(
        Opcode::Sqrt,
        View::contiguous(y, DType::Float32, &[8]),
        [View::contiguous(x, DType::Float32, &[8]).into()],
    ));
    let mut a = Arrays::new(&b);
    let e = cpu
        .execute(&b, &singletons(&b), &a.buffers(&[]))
        .unwrap_err();
    assert!(e.to_string().contains("strict_cache"), "{e}");
}

/// Not a test by itself: fills the cache `HASSIUM_TEST_FILL_CACHE` names the way a
/// separate Hassium process would (the tests below spawn this binary to run it).
#[test]
#[ignore = "a child process of other tests"]
fn helper_fill_cache() {
    let dir = std::env::var_os("HASSIUM_TEST_FILL_CACHE").expect("HASSIUM_TEST_FILL_CACHE");
    let mut cpu = engine(1, SpecializePolicy::Fixed, std::path::Path::new(&dir));
    for k in 0..3 {
        run_iteration(&mut cpu, 0.25 * (k + 1) as f64).unwrap();
    }
}

/// The helper test `name` of this binary as a child process, given `dir` in `var`.
fn helper(name: &str, var: &str, dir: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--ignored", "--test-threads=1", "--quiet"])
        .env(var, dir)
        .stdout(std::process::Stdio::null());
    cmd
}

/// Runs `helper_fill_cache` in a child process filling `dir`.
fn fill_in_child(dir: &std::path::Path) -> std::process::Child {
    helper("helper_fill_cache", "HASSIUM_TEST_FILL_CACHE", dir)
        .spawn()
        .unwrap()
}

// A library is never truncated while this process has it mapped (that would crash any
// user of the mapping, which is why the cache never rewrites files in place); here
// another process filled the cache, the file is damaged on disk, and this process loads.
#[test]
fn a_second_process_loads_kernels_from_disk_and_a_truncated_library_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    assert!(fill_in_child(dir.path()).wait().unwrap().success());
    let mut probe = engine(1, SpecializePolicy::Fixed, dir.path());
    let cache = probe.cache_dir().unwrap();
    for e in std::fs::read_dir(&cache).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "so") {
            let len = std::fs::metadata(&p).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(len / 2).unwrap();
        }
    }
    let y = run_iteration(&mut probe, 0.25).unwrap();
    assert!((y - (0.999f64 * 0.25 + 1.0).sqrt()).abs() < 1e-12);
    let s = probe.stats();
    assert_eq!(
        (s.cache_hits_disk, s.kernels_compiled),
        (0, 1),
        "rebuilt: {s:?}"
    );

    let mut again = engine(1, SpecializePolicy::Fixed, dir.path());
    run_iteration(&mut again, 0.25).unwrap();
    let s = again.stats();
    assert_eq!(
        (s.cache_hits_disk, s.kernels_compiled),
        (1, 0),
        "loaded from disk: {s:?}"
    );
}

#[test]
fn a_garbled_entry_file_is_deleted_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = engine(1, SpecializePolicy::Fixed, dir.path());
    let want = run_iteration(&mut first, 0.75).unwrap();
    for e in std::fs::read_dir(first.cache_dir().unwrap()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "entry") {
            std::fs::write(&p, "hassium-kernel-entry 1\nlib=k-").unwrap();
        }
    }
    let mut second = engine(1, SpecializePolicy::Fixed, dir.path());
    assert_eq!(run_iteration(&mut second, 0.75).unwrap(), want);
    assert_eq!(second.stats().kernels_compiled, 1);
}

#[test]
fn two_processes_filling_one_cache_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..2).map(|_| fill_in_child(dir.path())).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let mut later = engine(1, SpecializePolicy::Fixed, dir.path());
    run_iteration(&mut later, 0.5).unwrap();
    let s = later.stats();
    assert_eq!((s.cache_hits_disk, s.kernels_compiled), (1, 0), "{s:?}");
}

#[test]
fn two_engines_in_one_process_filling_one_cache_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut cpu = engine(1, SpecializePolicy::Fixed, &path);
                (0..3)
                    .map(|k| run_iteration(&mut cpu, 0.1 * (k + 1) as f64).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<Vec<f64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results[0], results[1]);
}

#[test]
fn without_a_compiler_everything_is_interpreted_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuEngine::new(CpuConfig {
        compiler: "/nonexistent/cc".into(),
        ..config(2, SpecializePolicy::Both, dir.path())
    })
    .unwrap();
    let y = run_iteration(&mut cpu, 0.5).unwrap();
    assert!((y - (0.999f64 * 0.5 + 1.0).sqrt()).abs() < 1e-12);
    let s = cpu.stats();
    assert_eq!((s.interpreted, s.kernels_compiled), (1, 0));
}

/// A compiler that rejects every compile (here: a flag it does not know) is reported
/// once (a warning naming it, see `compiler::report_failure`) and the kernels run
/// interpreted, with the right values, instead of every batch failing.
#[test]
fn a_failing_compiler_leaves_kernels_interpreted_and_correct() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(1, SpecializePolicy::Fixed, dir.path());
    cfg.flags.push("-fno-such-flag-exists".into());
    let mut cpu = CpuEngine::new(cfg).unwrap();
    for _ in 0..2 {
        let y = run_iteration(&mut cpu, 0.5).unwrap();
        assert!((y - (0.999f64 * 0.5 + 1.0).sqrt()).abs() < 1e-12);
    }
    let s = cpu.stats();
    assert_eq!((s.interpreted, s.kernels_compiled), (2, 0), "{s:?}");
}

#[test]
fn tiered_execution_interprets_first_then_runs_native_code() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuEngine::new(CpuConfig {
        tiered: true,
        tier_up_work: 0,
        ..config(1, SpecializePolicy::Fixed, dir.path())
    })
    .unwrap();
    let first = run_iteration(&mut cpu, 0.5).unwrap();
    assert_eq!(cpu.stats().interpreted, 1);
    cpu.wait_for_compiles();
    let second = run_iteration(&mut cpu, 0.5).unwrap();
    let s = cpu.stats();
    assert_eq!(
        (s.interpreted, s.kernels_compiled, s.kernels_run),
        (1, 1, 1),
        "{s:?}"
    );
    assert!((first - second).abs() <= 1e-12 * first.abs());
}

/// A float sum's bits must not depend on whether its compile had finished: the
/// interpreter sums pairwise, the compiled code by chunks and lanes. Tiered execution
/// therefore compiles such a kernel before running it, and every call agrees; nor does
/// `tier_up_work` hold it back.
#[test]
fn a_float_sum_is_never_interpreted_so_its_bits_do_not_depend_on_timing() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuEngine::new(CpuConfig {
        tiered: true,
        tier_up_work: usize::MAX,
        ..config(1, SpecializePolicy::Fixed, dir.path())
    })
    .unwrap();
    let n = 100_003;
    let sum = |cpu: &mut CpuEngine| {
        let mut b = Batch::default();
        let x = base(&mut b, DType::Float64, n);
        let s = base(&mut b, DType::Float64, 1);
        let mut out = View::contiguous(s, DType::Float64, &[]);
        out.offset = 0;
        let mut add = Instr::new(
            Opcode::AddReduce,
            out,
            [View::contiguous(x, DType::Float64, &[n]).into()],
        );
        add.axis = Some(0);
        b.instrs.push(add);
        let k = hassium_fuser::finish_kernel(&b, vec![0], |_| false);
        let mut a = Arrays::new(&b);
        for i in 0..n {
            a.set(x, i, Scalar::Float64(1.0 / (1.0 + i as f64)));
        }
        let buffers = a.buffers(&k.contracted);
        cpu.execute(&b, &[k], &buffers).unwrap();
        a.get(s, 0).as_f64().to_bits()
    };
    let first = sum(&mut cpu);
    assert_eq!(cpu.stats().interpreted, 0);
    let second = sum(&mut cpu);
    assert_eq!(first, second);
}

/// Likewise a math function that compiled loops call in glibc's vector form, which may
/// round differently from the scalar call the interpreter makes.
#[test]
fn a_vectorised_math_function_is_never_interpreted() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuEngine::new(CpuConfig {
        tiered: true,
        ..config(1, SpecializePolicy::Fixed, dir.path())
    })
    .unwrap();
    let n = 1001;
    let mut b = Batch::default();
    let x = base(&mut b, DType::Float64, n);
    let y = base(&mut b, DType::Float64, n);
    let v = |id| View::contiguous(id, DType::Float64, &[n]);
    b.instrs.push(Instr::new(Opcode::Sin, v(y), [v(x).into()]));
    let k = hassium_fuser::finish_kernel(&b, vec![0], |_| false);
    let mut a = Arrays::new(&b);
    for i in 0..n {
        a.set(x, i, Scalar::Float64(i as f64 * 0.37));
    }
    let buffers = a.buffers(&k.contracted);
    cpu.execute(&b, &[k], &buffers).unwrap();
    assert_eq!(cpu.stats().interpreted, 0);
    assert_eq!(cpu.stats().kernels_run, 1);
}

/// A compiler that waits, before it starts, until [`open_gate`] opens `dir`'s gate: a
/// compile is surely still running when a short program exits, whatever the machine's
/// load.
fn gated_compiler(dir: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("gated-cc");
    let gate = dir.join("gate-open");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] || while [ ! -e '{}' ]; do sleep 0.01; done\nexec cc \"$@\"\n",
            gate.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// Lets every compile of [`gated_compiler`] over `dir` go on.
fn open_gate(dir: &std::path::Path) {
    std::fs::write(dir.join("gate-open"), b"").unwrap();
}

/// Runs `helper_exit_while_compiling` in a child process over `dir`, with
/// `finish_at_exit` as given; the cache directory it used.
fn exit_while_compiling(dir: &std::path::Path, finish_at_exit: bool) -> std::path::PathBuf {
    let mut cmd = helper(
        "helper_exit_while_compiling",
        "HASSIUM_TEST_EXIT_COMPILING",
        dir,
    );
    if !finish_at_exit {
        cmd.env("HASSIUM_TEST_DROP_AT_EXIT", "1");
    }
    assert!(cmd.status().unwrap().success());
    dir.join("cache")
}

/// The temporary files left in an engine's kernel directory.
fn temporaries(cpu: &CpuEngine) -> Vec<String> {
    std::fs::read_dir(cpu.cache_dir().unwrap())
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with(".tmp"))
        .collect()
}

/// Not a test by itself: in the directory `HASSIUM_TEST_EXIT_COMPILING` names, runs one
/// new kernel with tiered execution and a compiler waiting for its gate, then lets the
/// process exit while the compile waits.
#[test]
#[ignore = "a child process of other tests"]
fn helper_exit_while_compiling() {
    let dir = std::env::var_os("HASSIUM_TEST_EXIT_COMPILING").expect("HASSIUM_TEST_EXIT_COMPILING");
    let dir = std::path::Path::new(&dir);
    let mut cpu = CpuEngine::new(CpuConfig {
        tiered: true,
        tier_up_work: 0,
        finish_at_exit: std::env::var_os("HASSIUM_TEST_DROP_AT_EXIT").is_none(),
        compiler: gated_compiler(dir),
        ..config(1, SpecializePolicy::Fixed, &dir.join("cache"))
    })
    .unwrap();
    run_iteration(&mut cpu, 0.5).unwrap();
    let s = cpu.stats();
    assert_eq!((s.interpreted, s.kernels_compiled), (1, 0), "{s:?}");
}

/// With `finish_at_exit = false` the exit drops the unfinished compile: nothing is left
/// running (no finishing process holds the lock), no temporary file stays, and the next
/// run compiles the kernel itself.
#[test]
fn without_finish_at_exit_compiles_running_at_exit_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let cache = exit_while_compiling(dir.path(), false);
    if let Ok(lock) = std::fs::File::open(cache.join("finishing.lock")) {
        // SAFETY: flock on an fd `lock` keeps open.
        let got = unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        };
        assert_eq!(got, 0, "a finishing process holds the lock");
    }
    // The dropped compile's compiler may still wait: let it (and the next) go on.
    open_gate(dir.path());
    let mut later = CpuEngine::new(CpuConfig {
        compiler: gated_compiler(dir.path()),
        ..config(1, SpecializePolicy::Fixed, &cache)
    })
    .unwrap();
    assert_eq!(temporaries(&later), Vec::<String>::new());
    run_iteration(&mut later, 0.5).unwrap();
    let s = later.stats();
    assert_eq!((s.cache_hits_disk, s.kernels_compiled), (0, 1), "{s:?}");
}

/// A script that ends while its kernels compile must not lose them (every later run would
/// interpret and compile them again): a process it leaves behind finishes them into the
/// disk cache, holding `finishing.lock` meanwhile, and leaves no temporary file.
#[test]
fn compiles_running_at_exit_are_finished_into_the_disk_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = exit_while_compiling(dir.path(), true);
    let lock = std::fs::File::open(cache.join("finishing.lock")).expect("a finishing process");
    // SAFETY: flock on an fd `lock` keeps open.
    let flock = |how| unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), how) };
    // The program is gone and its compile waits for the gate: a process finishing it
    // holds the lock until the gate opens and the compile is done.
    assert_ne!(
        flock(libc::LOCK_EX | libc::LOCK_NB),
        0,
        "nothing holds the lock"
    );
    open_gate(dir.path());
    assert_eq!(flock(libc::LOCK_EX), 0);
    let mut later = CpuEngine::new(CpuConfig {
        compiler: gated_compiler(dir.path()),
        ..config(1, SpecializePolicy::Fixed, &cache)
    })
    .unwrap();
    run_iteration(&mut later, 0.5).unwrap();
    let s = later.stats();
    assert_eq!((s.cache_hits_disk, s.kernels_compiled), (1, 0), "{s:?}");
    assert_eq!(temporaries(&later), Vec::<String>::new());
}

#[test]
fn unknown_config_keys_are_rejected_by_name() {
    let t: toml::Table = "threds = 2".parse().unwrap();
    let e = CpuEngine::create(hassium_engine_abi::EngineContext {
        config: t,
        child: None,
    })
    .err()
    .unwrap();
    assert!(e.to_string().contains("threds"), "{e}");
}

/// The CPU engine's library, built next to the test binaries.
fn cdylib() -> std::path::PathBuf {
    // target/<profile>/deps/<test binary> → target/<profile>/libhassium_engine_cpu.so
    let exe = std::env::current_exe().unwrap();
    let lib = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("libhassium_engine_cpu.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

fn open_cdylib(dir: &std::path::Path, extra: &str) -> LoadedEngine {
    let cfg: toml::Table = format!(
        "cache_dir = {:?}\nthreads = 2\nlibrary = \"x\"\n{extra}",
        dir.display().to_string()
    )
    .parse()
    .unwrap();
    LoadedEngine::open(&cdylib(), &cfg, None).unwrap()
}

fn replayed(e: &dyn Engine) -> f64 {
    e.stats()
        .extra
        .get("calls_replayed")
        .copied()
        .unwrap_or(0.0)
}

#[test]
fn the_cdylib_loads_through_the_abi_and_runs_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = open_cdylib(dir.path(), "");
    assert_eq!(e.name(), "cpu");
    let y = run_iteration(&mut e, 0.5).unwrap();
    assert!((y - (0.999f64 * 0.5 + 1.0).sqrt()).abs() < 1e-12);
    assert_eq!(e.stats().kernels_compiled, 1);
}

#[test]
fn a_repeated_template_is_replayed_from_its_bindings_with_new_bases_and_scalars() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = open_cdylib(dir.path(), "strict_cache = true");
    for step in 1..=6 {
        // Fresh temporaries and a new scalar every step, as in a Python loop.
        let dt = step as f64 * 0.01;
        let y = run_keyed(&mut e, Some(7), dt).unwrap();
        assert!(
            (y - (0.999 * dt + 1.0).sqrt()).abs() < 1e-12,
            "step {step}: {y}"
        );
    }
    assert_eq!(replayed(&e), 5.0);
    // Another key is another template: sent whole first.
    run_keyed(&mut e, Some(8), 0.5).unwrap();
    assert_eq!(replayed(&e), 5.0);
    let s = e.stats();
    assert_eq!((s.kernels_compiled, s.kernels_run), (1, 7), "{s:?}");
}

#[test]
fn bindings_that_do_not_fit_their_template_are_an_error_not_a_wrong_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = open_cdylib(dir.path(), "");
    run_keyed(&mut e, Some(7), 0.5).unwrap();
    // The runtime would never give this batch the same key: its input is shorter.
    let (mut b, ks) = iteration(0.5);
    b.bases.get_mut(&hassium_core::BaseId(1)).unwrap().nelem = 999;
    let mut a = Arrays::new(&b);
    let err = e
        .execute_keyed(7, &b, &ks, &a.buffers(&ks[0].contracted))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("replaying a call") && err.contains("size or dtype"),
        "{err}"
    );
    assert!(run_keyed(&mut e, Some(7), 0.5).is_ok());
}

#[test]
fn an_engine_that_dropped_a_template_is_sent_the_whole_call_again() {
    let r = hassium_engine_abi::into_engine_ref(Box::new(
        hassium_engine_reference::ReferenceEngine::new(),
    ));
    // SAFETY: a fresh reference owned by nobody else.
    let mut e = unsafe { LoadedEngine::from_ref(r, "reference") }.unwrap();
    run_keyed(&mut e, Some(1), 0.1).unwrap();
    run_keyed(&mut e, Some(1), 0.2).unwrap();
    assert_eq!(replayed(&e), 1.0);
    // A template of more instructions than an engine keeps pushes the others out.
    let mut big = Batch::default();
    let x = base(&mut big, DType::Float64, 1);
    let v = View::contiguous(x, DType::Float64, &[1]);
    let one = || Operand::Scalar(Scalar::Float64(1.0));
    for _ in 0..70_000 {
        big.instrs.push(Instr::new(
            Opcode::Add,
            v.clone(),
            [v.clone().into(), one()],
        ));
    }
    let k = hassium_fuser::finish_kernel(&big, (0..70_000).collect::<Vec<usize>>(), |_| false);
    let mut a = Arrays::new(&big);
    e.execute_keyed(2, &big, &[k], &a.buffers(&[])).unwrap();
    assert_eq!(a.get(x, 0).as_f64(), 70_000.0);
    let y = run_keyed(&mut e, Some(1), 0.3).unwrap();
    assert!((y - (0.999f64 * 0.3 + 1.0).sqrt()).abs() < 1e-12);
    assert_eq!(replayed(&e), 1.0);
    run_keyed(&mut e, Some(1), 0.4).unwrap();
    assert_eq!(replayed(&e), 2.0);
}

/// A batch whose new kernels together cost more interpreted than `interpret_limit`
/// waits only for the expensive ones: the cheap ones run interpreted while they
/// compile in the background (a loop body cut into cells makes a few large kernels
/// and many small ones, and waiting for all of them stalled a cold run). The cheap
/// kernel here is long (400 instructions over 100 elements: slow to compile) and the
/// expensive one short (2 over 40 000: quick), so the batch is done before the
/// background compile and the cheap kernel's run is interpreted.
#[test]
fn tiered_execution_waits_only_for_the_kernels_too_costly_to_interpret() {
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuEngine::new(CpuConfig {
        tiered: true,
        tier_up_work: 0,
        interpret_limit: 50_000,
        ..config(1, SpecializePolicy::Fixed, dir.path())
    })
    .unwrap();
    let t = DType::Float64;
    let mut b = Batch::default();
    let mut kernels = Vec::new();
    let mut outs = Vec::new();
    for (n, steps) in [(100, 399), (40_000, 1)] {
        let x = base(&mut b, t, n);
        let tmp = base(&mut b, t, n);
        let y = base(&mut b, t, n);
        let v = |id| View::contiguous(id, t, &[n]);
        let first = b.instrs.len();
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            v(tmp),
            [v(x).into(), Operand::Scalar(Scalar::Float64(0.5))],
        ));
        for k in 1..steps {
            let op = if k % 2 == 1 {
                Opcode::Add
            } else {
                Opcode::Multiply
            };
            b.instrs.push(Instr::new(
                op,
                v(tmp),
                [v(tmp).into(), Operand::Scalar(Scalar::Float64(0.75))],
            ));
        }
        b.instrs
            .push(Instr::new(Opcode::Sqrt, v(y), [v(tmp).into()]));
        free(&mut b, tmp);
        let instrs: Vec<usize> = (first..b.instrs.len() - 1).collect();
        kernels.push(hassium_fuser::finish_kernel(&b, instrs, |_| false));
        outs.push((x, y, n, steps));
    }
    let mut a = Arrays::new(&b);
    for &(x, _, n, _) in &outs {
        for i in 0..n {
            a.set(x, i, Scalar::Float64(i as f64));
        }
    }
    let contracted: Vec<_> = kernels.iter().flat_map(|k| k.contracted.clone()).collect();
    let buffers = a.buffers(&contracted);
    cpu.execute(&b, &kernels, &buffers).unwrap();
    let s = cpu.stats();
    assert_eq!((s.interpreted, s.kernels_run), (1, 1), "{s:?}");
    for &(_, y, n, steps) in &outs {
        let mut want = (n - 1) as f64 * 0.5;
        for k in 1..steps {
            want = if k % 2 == 1 { want + 0.75 } else { want * 0.75 };
        }
        assert_eq!(a.get(y, n - 1).as_f64(), want.sqrt());
    }
    cpu.wait_for_compiles();
}

/// Tiered, a small kernel runs interpreted and uncompiled until its calls have done
/// `tier_up_work` element-operations in all; the call that reaches it queues the
/// compile, and later calls run the compiled code. With `tier_up_work = 0` the first
/// call queues it. Each call of `iteration` does 3 000 element-operations.
#[test]
fn a_small_kernel_is_compiled_only_once_its_calls_have_done_tier_up_work() {
    for (limit, calls_before) in [(0, 0), (3_000, 0), (7_000, 2), (30_000, 9)] {
        let dir = tempfile::tempdir().unwrap();
        let mut cpu = CpuEngine::new(CpuConfig {
            tiered: true,
            finish_at_exit: false,
            tier_up_work: limit,
            ..config(1, SpecializePolicy::Fixed, dir.path())
        })
        .unwrap();
        for call in 0..calls_before {
            let y = run_iteration(&mut cpu, 0.5).unwrap();
            assert_eq!(y, (0.999f64 * 0.5 + 1.0).sqrt());
            cpu.wait_for_compiles();
            let s = cpu.stats();
            assert_eq!(
                (s.kernels_compiled, s.interpreted),
                (0, call + 1),
                "tier_up_work {limit}, call {call}: {s:?}"
            );
        }
        // This call reaches the limit: it still runs interpreted, and queues the compile.
        run_iteration(&mut cpu, 0.5).unwrap();
        cpu.wait_for_compiles();
        let s = cpu.stats();
        assert_eq!(
            (s.kernels_compiled, s.interpreted),
            (1, calls_before + 1),
            "tier_up_work {limit}: {s:?}"
        );
        let y = run_iteration(&mut cpu, 0.25).unwrap();
        assert_eq!(y, (0.999f64 * 0.25 + 1.0).sqrt());
        let s = cpu.stats();
        assert_eq!(
            (s.kernels_run, s.interpreted),
            (1, calls_before + 1),
            "{s:?}"
        );
    }
}

/// A kernel held back by `tier_up_work` is not looked for on disk at every call, but when
/// its calls reach the limit it is: compiled meanwhile by another process (here another
/// engine on the same cache), it loads instead of compiling again.
#[test]
fn a_held_back_kernel_compiled_elsewhere_meanwhile_loads_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let tiered = |limit| {
        CpuEngine::new(CpuConfig {
            tiered: true,
            finish_at_exit: false,
            tier_up_work: limit,
            ..config(1, SpecializePolicy::Fixed, dir.path())
        })
        .unwrap()
    };
    let mut held = tiered(7_000);
    run_iteration(&mut held, 0.5).unwrap();
    let mut other = tiered(0);
    run_iteration(&mut other, 0.5).unwrap();
    other.wait_for_compiles();
    assert_eq!(other.stats().kernels_compiled, 1);
    // The second call held back; the third reaches the limit, loads and runs natively.
    for _ in 0..2 {
        run_iteration(&mut held, 0.5).unwrap();
    }
    held.wait_for_compiles();
    let s = held.stats();
    assert_eq!(
        (
            s.kernels_compiled,
            s.cache_hits_disk,
            s.interpreted,
            s.kernels_run
        ),
        (0, 1, 2, 1),
        "{s:?}"
    );
    let y = run_iteration(&mut held, 0.25).unwrap();
    assert_eq!(y, (0.999f64 * 0.25 + 1.0).sqrt());
}
