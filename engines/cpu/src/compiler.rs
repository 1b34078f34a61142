//! Running the system C compiler: one invocation turns one translation unit (all new
//! kernels of an execute call) into one shared object.

use crate::error::{Error, Result};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use xxhash_rust::xxh3::xxh3_64;

/// Declarations that give the compiler glibc's vector math (libmvec) variants of libm
/// functions. glibc declares these only under `-ffast-math`, which also assumes no NaN or
/// infinity; declaring them ourselves and compiling with `-fno-math-errno` gets the same
/// vector calls while keeping IEEE semantics (libmvec handles NaN/inf inputs exactly as
/// the scalar functions do, within its documented 4-ulp accuracy).
pub const LIBMVEC_DECLS: &str =
    "#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HS_VEC __attribute__((simd(\"notinbranch\")))
/* sin and cos are compiled as plain functions (see `Compiler::compile`): const tells GCC
   what it knew of the builtins, without errno, that they read and write no memory. */
#define HS_PURE __attribute__((const))
HS_VEC double exp(double); HS_VEC float expf(float);
HS_VEC double log(double); HS_VEC float logf(float);
HS_VEC HS_PURE double sin(double); HS_VEC HS_PURE float sinf(float);
HS_VEC HS_PURE double cos(double); HS_VEC HS_PURE float cosf(float);
HS_VEC double pow(double, double); HS_VEC float powf(float, float);
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
HS_VEC double exp2(double); HS_VEC float exp2f(float);
HS_VEC double expm1(double); HS_VEC float expm1f(float);
HS_VEC double log2(double); HS_VEC float log2f(float);
HS_VEC double log10(double); HS_VEC float log10f(float);
HS_VEC double log1p(double); HS_VEC float log1pf(float);
HS_VEC double tan(double); HS_VEC float tanf(float);
HS_VEC double asin(double); HS_VEC float asinf(float);
HS_VEC double acos(double); HS_VEC float acosf(float);
HS_VEC double atan(double); HS_VEC float atanf(float);
HS_VEC double atan2(double, double); HS_VEC float atan2f(float, float);
HS_VEC double sinh(double); HS_VEC float sinhf(float);
HS_VEC double cosh(double); HS_VEC float coshf(float);
HS_VEC double tanh(double); HS_VEC float tanhf(float);
HS_VEC double asinh(double); HS_VEC float asinhf(float);
HS_VEC double acosh(double); HS_VEC float acoshf(float);
HS_VEC double atanh(double); HS_VEC float atanhf(float);
HS_VEC double cbrt(double); HS_VEC float cbrtf(float);
HS_VEC double hypot(double, double); HS_VEC float hypotf(float, float);
#endif
#endif
";

/// The configured compiler, found to be runnable.
#[derive(Clone, Debug)]
pub struct Compiler {
    pub program: String,
    pub flags: Vec<String>,
    /// Hash of the compiler's `--version` first line, the flags, the extra flags and, under
    /// `-march=native`, the host CPU: part of every disk cache entry's directory, so a
    /// compiler upgrade or another CPU never loads old code.
    pub identity: u64,
    /// Whether glibc's libmvec can be linked.
    pub libmvec: bool,
    /// GCC (not Clang): it writes which loops it vectorised to a report file.
    pub gcc: bool,
    /// Whether the kernel library is linked without the C start files and libc (see
    /// [`lean_link`]).
    pub lean_link: bool,
}

/// Flags every compile gets beyond the configured ones: no errno from libm (lets the
/// compiler vectorise math calls; NaN/inf semantics are unaffected) and simd pragmas.
const EXTRA: &[&str] = &[
    "-std=gnu11",
    // NumPy rounds every operation; gnu11 would let gcc fuse a multiply and an add into
    // one FMA that skips the product's rounding. With AVX512-FP16 it even narrows
    // float16 chains (`HS_F16R(c - HS_F16R(a * b))`) into one half-precision FMA,
    // several ulps off NumPy.
    "-ffp-contract=off",
    "-fno-math-errno",
    // Floating-point status flags are never read, so GCC may use instructions that
    // differ only in the flags they raise: without this, `floor`, `ceil` and `trunc`
    // stay scalar library calls. Values are unchanged (NaNs are still honoured).
    "-fno-trapping-math",
    "-fno-strict-aliasing",
    // The dialect's header declares the libm functions kernels call (not `<math.h>`): a
    // call to one it lacks must fail, not run with an implicit `int` prototype.
    "-Werror=implicit-function-declaration",
    // Honours the `#pragma omp simd` codegen puts on independent inner loops (no OpenMP
    // runtime is linked; threads come from the engine's own pool).
    "-fopenmp-simd",
];

/// x86-64 only: let the vectoriser use 512-bit registers where the CPU has them (GCC and
/// Clang default to 256 bits even under `-march=native`). Math-heavy fused kernels gain
/// about a quarter, and libmvec has the matching 8-wide AVX-512 functions. Without
/// AVX-512 the flag changes nothing. It comes before the configured `flags`, so a
/// `-mprefer-vector-width=256` there wins.
#[cfg(target_arch = "x86_64")]
const ARCH_EXTRA: &[&str] = &["-mprefer-vector-width=512"];
#[cfg(not(target_arch = "x86_64"))]
const ARCH_EXTRA: &[&str] = &[];

/// Whether a GCC whose kernels are compiled with `flags` may link them lean: without the
/// C start files and libc (`-nostdlib`, then `-lm` and `-lgcc` named), and through pipes
/// rather than temporary files (`-pipe`). A kernel library needs neither: it has no
/// constructors, and the only libc functions it calls (`memcpy`, `memset`) are bound when
/// it is loaded, from the libc every process has. Reading libc and the start files made
/// the link 32 of a small kernel's 94 ms; lean, a compile takes 78 ms (interleaved, 100
/// kernels of the suite). Flags that may need libraries or options at link time
/// (sanitisers, profiling, OpenMP, LTO, linker options) keep the full link.
fn lean_link(flags: &[String]) -> bool {
    const LINK_AFFECTING: &[&str] = &[
        "-Wl,",
        "-Xlinker",
        "-l",
        "-L",
        "-B",
        "-fuse-ld",
        "-flto",
        "-fsanitize",
        "-fprofile",
        "-fcoverage",
        "-ftest-coverage",
        "-fsplit-stack",
        "--coverage",
        "-specs",
        "--specs",
        "-fopenmp=",
    ];
    const LINK_EXACT: &[&str] = &[
        "-fopenmp",
        "-pg",
        "-p",
        "-static",
        "-nostdlib",
        "-nodefaultlibs",
        "-nostartfiles",
        "-rdynamic",
        "-pthread",
        "-shared-libgcc",
        "-static-libgcc",
    ];
    flags.iter().all(|f| {
        f.starts_with('-')
            && !LINK_EXACT.contains(&f.as_str())
            && !LINK_AFFECTING.iter().any(|p| f.starts_with(p))
    })
}

/// Names the file `program` runs (found on `PATH` as a shell would, links followed) by
/// its path, size, modification time and inode.
fn file_key(program: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let path = hassium_engine_abi::find_program(program)?;
    let m = std::fs::metadata(&path).ok()?;
    let id = format!(
        "{}|{}|{}.{}|{}|{}",
        path.display(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ino(),
        m.dev()
    );
    Some(xxh3_64(id.as_bytes()))
}

/// Writes a probed version line to `memo` (atomically, as cache entries are). Failing
/// only means probing again next time.
fn remember(memo: &Path, line: &str) {
    if memo
        .parent()
        .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
    {
        let _ = hassium_engine_abi::write_atomic(memo, format!("{line}\n").as_bytes());
    }
}

/// The host CPU's model and instruction-set flags as Linux reports them: code compiled
/// with `-march=native` is only valid on such a CPU, and a cache directory shared between
/// machines (a home directory on a cluster) must not hand it to another.
fn host_cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .unwrap_or("")
            .to_string()
    };
    // x86 says "model name" and "flags"; arm64 "CPU part" and "Features".
    ["model name", "flags", "CPU part", "Features"]
        .map(field)
        .join("|")
}

/// What names a compiler's output: its version line, every flag, libmvec and, when a flag
/// asks for the host's own CPU (`-march=native`), that CPU (`cpu` is only called then).
fn identity(version: &str, flags: &[String], libmvec: bool, cpu: impl FnOnce() -> String) -> u64 {
    let native = flags.iter().any(|f| f.ends_with("=native"));
    let cpu = if native { cpu() } else { String::new() };
    let id = format!(
        "{version}|{}|{}|{}|{libmvec}|{cpu}",
        ARCH_EXTRA.join(" "),
        flags.join(" "),
        EXTRA.join(" ")
    );
    xxh3_64(id.as_bytes())
}

/// Reports a failed compile: the first one with a warning (the user learns that kernels
/// run interpreted, and why), later ones only at debug level, since a broken compiler
/// fails every compile.
pub fn report_failure(compiler: &Compiler, e: &Error) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::debug!("compile failed: {e}");
        return;
    }
    let why = match e {
        Error::Compile { stderr, .. } => stderr.lines().find(|l| !l.trim().is_empty()),
        _ => None,
    }
    .map_or_else(|| e.to_string(), str::to_string);
    tracing::warn!(
        "C compiler `{}` failed ({}); kernels run interpreted (slow)",
        compiler.program,
        why.lines().next().unwrap_or("").trim()
    );
    tracing::debug!("compile failed: {e}");
}

/// Whether a failed spawn is worth trying again: the kernel refused for the moment (out
/// of processes or memory for the child, a signal), or `EFAULT`, which spawning the
/// compiler from a rank under mpirun returned twice in one CI run of thousands of
/// compiles. A kernel whose compile fails runs interpreted for the rest of the process.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EAGAIN | libc::EINTR | libc::ENOMEM | libc::EFAULT)
    )
}

/// Spawns at most this many times.
const SPAWN_TRIES: u32 = 3;

/// `spawn()`, tried again after 2 ms and then 8 ms when it fails with a [`transient`]
/// error.
fn spawn_retrying<T>(mut spawn: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut wait = std::time::Duration::from_millis(2);
    for _ in 1..SPAWN_TRIES {
        match spawn() {
            Err(e) if transient(&e) => {
                tracing::debug!("spawning the C compiler failed ({e}); trying again");
                std::thread::sleep(wait);
                wait *= 4;
            }
            done => return done,
        }
    }
    spawn()
}

impl Compiler {
    /// Probes `program --version`; `None` when it cannot be run at all.
    #[cfg(test)]
    pub fn probe(program: &str, flags: &[String]) -> Option<Compiler> {
        Compiler::probe_remembered(program, flags, None)
    }

    /// [`Compiler::probe`], remembering the version line in `memo_dir` under the
    /// compiler's resolved file and its size, time and inode: running the compiler costs
    /// milliseconds at every start, a lookup microseconds, and an upgrade replaces the file.
    pub fn probe_remembered(
        program: &str,
        flags: &[String],
        memo_dir: Option<&Path>,
    ) -> Option<Compiler> {
        let memo = memo_dir.and_then(|d| Some(d.join(format!("{:016x}", file_key(program)?))));
        let known = (memo.as_ref())
            .and_then(|m| hassium_engine_abi::read_regular(m, 4096).ok())
            .and_then(|b| String::from_utf8(b).ok());
        let first = match known.filter(|k| k.ends_with('\n')) {
            Some(line) => line.trim_end().to_string(),
            None => {
                let out = Command::new(program).arg("--version").output().ok()?;
                let first = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                if let Some(m) = &memo {
                    remember(m, &first);
                }
                first
            }
        };
        let libmvec = Path::new("/usr/lib/x86_64-linux-gnu/libmvec.so").exists()
            || Path::new("/lib/x86_64-linux-gnu/libmvec.so").exists()
            || Path::new("/usr/lib64/libmvec.so").exists();
        let gcc = !first.to_lowercase().contains("clang");
        Some(Compiler {
            program: program.to_string(),
            flags: flags.to_vec(),
            identity: identity(&first, flags, libmvec, host_cpu),
            libmvec,
            gcc,
            lean_link: gcc && lean_link(flags),
        })
    }

    /// Text to put before the kernels of a translation unit.
    pub fn decls(&self) -> &'static str {
        if self.libmvec {
            LIBMVEC_DECLS
        } else {
            ""
        }
    }

    /// The compiler with every flag a kernel gets.
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(ARCH_EXTRA).args(&self.flags).args(EXTRA);
        cmd
    }

    /// Compiles `source` (written to `c_path`) into the shared object `so_path`.
    /// `started` learns the compiler's process id, which is also its process group's:
    /// killing that group stops the driver and the programs it runs (cc1, as, ld).
    /// With GCC, `report` receives its list of the loops it vectorised (and of those it
    /// turned into library calls).
    pub fn compile(
        &self,
        source: &str,
        c_path: &Path,
        so_path: &Path,
        report: &Path,
        started: &mut dyn FnMut(u32),
    ) -> Result<()> {
        std::fs::write(c_path, source).map_err(|e| Error::Cache {
            path: c_path.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut cmd = self.command();
        if self.gcc {
            let mut flag = std::ffi::OsString::from("-fopt-info-vec-loop-all=");
            flag.push(report);
            cmd.arg(flag);
            // GCC folds identical kernels of one translation unit into one (a call to its
            // twin), and then reports only the twin's loops: keep each its own, so the
            // report speaks of every kernel. The code is the same.
            cmd.arg("-fno-ipa-icf");
        }
        if self.gcc && self.libmvec {
            // GCC merges `sin(x)` and `cos(x)` of one value into a `sincos` call that
            // returns through memory, and then vectorises nothing in the loop (a lattice
            // Boltzmann kernel's velocities): as plain functions (declared `const` in
            // LIBMVEC_DECLS) they stay two calls, each vectorised through libmvec.
            cmd.args([
                "-fno-builtin-sin",
                "-fno-builtin-cos",
                "-fno-builtin-sinf",
                "-fno-builtin-cosf",
            ]);
        }
        if self.lean_link {
            cmd.args(["-pipe", "-nostdlib"]);
        }
        cmd.arg("-o").arg(so_path).arg(c_path);
        if self.libmvec {
            cmd.arg("-lmvec");
        }
        cmd.arg("-lm");
        if self.lean_link {
            // What GCC's own code calls (complex division, 128-bit division, float16
            // conversions without F16C), linked in from the static archive.
            cmd.arg("-lgcc");
        }
        let shown = format!("{cmd:?}").replace('"', "");
        let spawn_err = |e: std::io::Error| Error::Compile {
            command: shown.clone(),
            stderr: e.to_string(),
        };
        cmd.process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = spawn_retrying(|| cmd.spawn()).map_err(spawn_err)?;
        started(child.id());
        let out = child.wait_with_output().map_err(spawn_err)?;
        if !out.status.success() {
            let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            if stderr.len() > 8000 {
                stderr.truncate(8000);
                stderr.push_str("\n…");
            }
            return Err(Error::Compile {
                command: shown,
                stderr,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probed_version_is_remembered_per_compiler_file() {
        let dir = tempfile::tempdir().unwrap();
        let flags = vec!["-O1".to_string()];
        let probed = Compiler::probe_remembered("cc", &flags, Some(dir.path())).unwrap();
        assert_eq!(
            probed.identity,
            Compiler::probe("cc", &flags).unwrap().identity
        );
        let memo = dir.path().join(format!("{:016x}", file_key("cc").unwrap()));
        let line = std::fs::read_to_string(&memo).unwrap();
        assert!(line.ends_with('\n') && line.len() > 5, "{line:?}");
        // The next probe reads the memo instead of running the compiler.
        std::fs::write(&memo, "a compiler from the memo\n").unwrap();
        let again = Compiler::probe_remembered("cc", &flags, Some(dir.path())).unwrap();
        let from_memo = identity("a compiler from the memo", &flags, again.libmvec, host_cpu);
        assert_eq!(again.identity, from_memo);
        // A truncated memo (no newline) is probed again and rewritten.
        std::fs::write(&memo, "a compiler fr").unwrap();
        let fixed = Compiler::probe_remembered("cc", &flags, Some(dir.path())).unwrap();
        assert_eq!(fixed.identity, probed.identity);
        assert_eq!(std::fs::read_to_string(&memo).unwrap(), line);
        assert!(Compiler::probe_remembered("no-such-cc", &flags, Some(dir.path())).is_none());
    }

    /// A lean link (no libc, no start files) still gives a library that loads and runs:
    /// libm's functions, GCC's helpers from libgcc (128-bit and complex division) and
    /// libc's `memcpy`, bound from the process at load time.
    #[test]
    fn a_lean_linked_library_loads_and_calls_libm_libgcc_and_libc() {
        let flags: Vec<String> = ["-O2", "-fPIC", "-shared"].map(String::from).into();
        let cc = Compiler::probe("cc", &flags).expect("a C compiler");
        assert!(cc.lean_link || !cc.gcc, "GCC with plain flags links lean");
        let dir = tempfile::tempdir().unwrap();
        let source = "#include <string.h>
            double exp(double);
            double e(double x) { return exp(x); }
            unsigned __int128 q(unsigned __int128 a, unsigned __int128 b) { return a / b; }
            double d(double a, double b) { _Complex double z = a / (b + 1.5i); return __imag__ z; }
            void c(char *o, const char *i, unsigned long n) { memcpy(o, i, n); }\n";
        let lib = dir.path().join("k.so");
        let (c_path, report) = (dir.path().join("k.c"), dir.path().join("k.vec"));
        cc.compile(source, &c_path, &lib, &report, &mut |_| {})
            .expect("compiles and links");
        // SAFETY: the library was just built from the source above; each symbol is called
        // with the signature it was defined with.
        unsafe {
            let l = libloading::Library::new(&lib).expect("loads, every symbol bound");
            let e: libloading::Symbol<extern "C" fn(f64) -> f64> = l.get(b"e").unwrap();
            assert!((e(1.0) - 1f64.exp()).abs() < 1e-15);
            let q: libloading::Symbol<extern "C" fn(u128, u128) -> u128> = l.get(b"q").unwrap();
            assert_eq!(q(u128::MAX, 3), u128::MAX / 3);
            let d: libloading::Symbol<extern "C" fn(f64, f64) -> f64> = l.get(b"d").unwrap();
            assert!((d(3.0, 0.0) - (-2.0)).abs() < 1e-12, "{}", d(3.0, 0.0));
            let c: libloading::Symbol<extern "C" fn(*mut u8, *const u8, usize)> =
                l.get(b"c").unwrap();
            let mut out = [0u8; 5];
            c(out.as_mut_ptr(), b"hello".as_ptr(), 5);
            assert_eq!(&out, b"hello");
        }
    }

    #[test]
    fn flags_that_need_the_full_link_keep_it() {
        let lean = |f: &[&str]| lean_link(&f.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(lean(&[
            "-O2",
            "-fpeel-loops",
            "-march=native",
            "-fPIC",
            "-shared"
        ]));
        assert!(lean(&["-O3", "-fopenmp-simd", "-DX=1", "-Wall", "-g"]));
        for f in [
            "-fsanitize=address",
            "-fopenmp",
            "-flto",
            "-Wl,-z,now",
            "-lfoo",
            "-pg",
        ] {
            assert!(!lean(&["-O2", f]), "{f}");
        }
    }

    #[test]
    fn native_code_is_cached_per_cpu_and_portable_code_is_not() {
        let flags = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let native = flags(&["-O2", "-march=native"]);
        let portable = flags(&["-O2", "-march=x86-64-v2"]);
        let id = |f: &[String], cpu: &str| identity("gcc 12", f, true, || cpu.to_string());
        assert_ne!(id(&native, "avx512f avx2"), id(&native, "avx2"));
        assert_eq!(id(&portable, "avx512f avx2"), id(&portable, "avx2"));
        let host = host_cpu();
        assert!(
            host.len() > 10,
            "/proc/cpuinfo names no model or flags: {host:?}"
        );
    }

    /// A float16 chain as codegen writes it, compiled for a CPU with AVX512-FP16 (the
    /// compiler only emits the assembly): NumPy rounds the product to half before it
    /// subtracts, so no half-precision FMA may appear. gcc made one under gnu11's default
    /// contraction, and the stencil tests failed by a few ulps on such a machine.
    #[test]
    fn float16_chains_keep_every_rounding_on_cpus_with_half_arithmetic() {
        let flags: Vec<String> = ["-O2", "-march=sapphirerapids", "-S"]
            .map(String::from)
            .into();
        let cc = Compiler::probe("cc", &flags).expect("a C compiler");
        let dir = tempfile::tempdir().unwrap();
        let c_path = dir.path().join("f16.c");
        let kernel = "void k(_Float16 *restrict o, const _Float16 *restrict a,
                             const _Float16 *restrict b, const _Float16 *restrict c, long n) {
            for (long i = 0; i < n; i++)
                o[i] = (_Float16)HS_F16R((float)c[i] - HS_F16R((float)a[i] * (float)b[i]));
        }\n";
        let source = format!(
            "{}{kernel}",
            hassium_codegen::prelude(&hassium_codegen::C99)
        );
        std::fs::write(&c_path, source).unwrap();
        let out = cc
            .command()
            .arg("-o")
            .arg("-")
            .arg(&c_path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let asm = String::from_utf8_lossy(&out.stdout);
        let half = |t: &&str| t.starts_with('v') && (t.ends_with("sh") || t.ends_with("ph"));
        let ops: Vec<&str> = asm.split_whitespace().filter(half).collect();
        // Half arithmetic was generated at all, so the check below can fail.
        assert!(ops.iter().any(|t| t.starts_with("vmul")), "{ops:?}");
        assert!(
            !ops.iter().any(|t| t.contains("madd") || t.contains("msub")),
            "a half-precision FMA drops NumPy's rounding of the product: {ops:?}"
        );
    }
}

#[cfg(test)]
mod spawn_tests {
    use super::*;

    #[test]
    fn a_transient_spawn_failure_is_tried_again_and_a_lasting_one_is_not() {
        let err = |code| std::io::Error::from_raw_os_error(code);
        // EFAULT twice, then success: three tries.
        let mut tries = 0;
        let r = spawn_retrying(|| {
            tries += 1;
            if tries < 3 {
                Err(err(libc::EFAULT))
            } else {
                Ok(tries)
            }
        });
        assert_eq!((r.unwrap(), tries), (3, 3));
        // Always transient: the last error after SPAWN_TRIES tries.
        let mut tries = 0;
        let r: std::io::Result<()> = spawn_retrying(|| {
            tries += 1;
            Err(err(libc::EAGAIN))
        });
        assert_eq!(
            (r.unwrap_err().raw_os_error(), tries),
            (Some(libc::EAGAIN), 3)
        );
        // Not found: once.
        let mut tries = 0;
        let r: std::io::Result<()> = spawn_retrying(|| {
            tries += 1;
            Err(err(libc::ENOENT))
        });
        assert_eq!(
            (r.unwrap_err().raw_os_error(), tries),
            (Some(libc::ENOENT), 1)
        );
    }
}
