//! Unit tests of the kernel cache (`super`).

use super::*;
use hassium_engine_abi::faults::{make_fifo, make_link_loop};

/// A persistent cache root at `dir` (a private temporary directory of the test).
fn root_at(dir: &Path) -> CacheRoot {
    CacheRoot {
        path: dir.to_path_buf(),
        persistent: true,
    }
}

/// The system's C compiler with the flags a kernel library needs, quick to compile.
fn compiler() -> Compiler {
    let flags = ["-O1", "-fPIC", "-shared"].map(String::from).to_vec();
    Compiler::probe("cc", &flags).expect("a C compiler (build-essential)")
}

/// Two processes compile one source at once. Their libraries differ (the compiler
/// records the temporary source file's name); if the first process's entry lands
/// last, it must still describe a library that is there, byte for byte.
#[test]
fn an_entry_written_last_by_a_racing_compile_still_loads() {
    let cc = compiler();
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(&root_at(dir.path()), &cc, 0);
    let source = format!("int {}(void) {{ return 7; }}\n", symbol_of(42));
    let source = source.as_str();
    let entry = Entry {
        key: 42,
        symbol: symbol_of(42),
        has_fin: false,
    };
    cache
        .compile(&cc, source, std::slice::from_ref(&entry))
        .unwrap();
    let first = std::fs::read_to_string(cache.entry_path(42)).unwrap();
    cache.compile(&cc, source, &[entry]).unwrap();
    std::fs::write(cache.entry_path(42), first).unwrap();
    assert!(
        cache.load(42).is_some(),
        "the first compile's entry was orphaned"
    );
}

/// Opening a cache retires a month-old build's directory beside it (on a background
/// thread), and a compile still succeeds after another process removed this build's
/// directory.
#[test]
fn other_builds_are_retired_and_a_removed_directory_comes_back() {
    let cc = compiler();
    let root = tempfile::tempdir().unwrap();
    let old = root.path().join("cpu-0.0.1-old");
    std::fs::create_dir_all(&old).unwrap();
    let month = std::time::Duration::from_secs(40 * 24 * 3600);
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - month)
        .unwrap();
    let cache = DiskCache::new(&root_at(root.path()), &cc, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while old.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!old.exists(), "the stale build's directory is still there");
    std::fs::remove_dir_all(cache.dir()).unwrap();
    let entry = Entry {
        key: 7,
        symbol: symbol_of(7),
        has_fin: false,
    };
    let source = format!("int {}(void) {{ return 7; }}\n", symbol_of(7));
    cache.compile(&cc, &source, &[entry]).unwrap();
    assert!(cache.load(7).is_some());
}

/// Over its limit, the directory loses its least recently used library, and the
/// entries naming it; a disk hit counts as a use. The kernel then compiles again.
#[test]
fn trimming_removes_the_least_recently_used_library_and_its_entries() {
    let cc = compiler();
    let root = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(&root_at(root.path()), &cc, 0);
    let entry = |key: u128| Entry {
        key,
        symbol: symbol_of(key),
        has_fin: false,
    };
    let a = format!("int {}(void) {{ return 1; }}\n", symbol_of(1));
    let b = format!(
        "int {}(void) {{ return 2; }}\nint {}(void) {{ return 2; }}\n",
        symbol_of(2),
        symbol_of(3)
    );
    let (a, b) = (a.as_str(), b.as_str());
    cache.compile(&cc, a, &[entry(1)]).unwrap();
    cache.compile(&cc, b, &[entry(2), entry(3)]).unwrap();
    let lib_of = |key: u128| {
        let text = std::fs::read_to_string(cache.entry_path(key)).unwrap();
        cache
            .dir()
            .join(text.lines().find_map(|l| l.strip_prefix("lib=")).unwrap())
    };
    let (lib_a, lib_b) = (lib_of(1), lib_of(2));
    let hours = |h: u64| std::time::SystemTime::now() - std::time::Duration::from_secs(h * 3600);
    for (lib, ago) in [(&lib_a, 3), (&lib_b, 2)] {
        let f = std::fs::File::options().write(true).open(lib).unwrap();
        f.set_modified(hours(ago)).unwrap();
    }
    // A fresh cache object, as in a later process: its hit on `a` makes `b` the
    // least recently used.
    let later = DiskCache::new(&root_at(root.path()), &cc, 0);
    assert!(later.load(1).is_some());
    let total: u64 = std::fs::read_dir(cache.dir())
        .unwrap()
        .flatten()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    let trim = |limit| {
        let gone = hassium_engine_abi::trim_to_size(cache.dir(), limit, is_library);
        remove_orphan_entries(cache.dir());
        gone.len()
    };
    assert_eq!(trim(total - 1), 1);
    assert!(lib_a.exists() && !lib_b.exists());
    assert!(!cache.entry_path(2).exists() && !cache.entry_path(3).exists());
    assert!(later.load(2).is_none());
    later.compile(&cc, b, &[entry(2)]).unwrap();
    assert!(later.load(2).is_some());
    // Under the limit nothing goes.
    assert_eq!(trim(1 << 30), 0);
}

/// Entries are looked up by kernel key alone, so the directory must change whenever
/// this build would render or compile a key differently: the compiler's identity and
/// the digest of the kernel-deciding sources both name it.
#[test]
fn the_directory_names_the_compiler_and_the_kernel_sources() {
    let cc = compiler();
    let root = tempfile::tempdir().unwrap();
    let name = DiskCache::new(&root_at(root.path()), &cc, 0)
        .dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let digest = env!("HASSIUM_CPU_KERNEL_SOURCES");
    assert_eq!(digest.len(), 32);
    assert!(name.contains(&format!("{:016x}", cc.identity)), "{name}");
    assert!(name.ends_with(&digest[..16]), "{name}");
    let other = Compiler::probe("cc", &["-O2".to_string()]).unwrap();
    assert_ne!(
        DiskCache::new(&root_at(root.path()), &other, 0).dir(),
        root.path().join(&name)
    );
}

/// Every way an entry or its library can be damaged on disk: each is a miss (no
/// hang on a FIFO, no wrong kernel for swapped entries, no crash on a library cut
/// short), the damaged file is removed, and the next compile heals the cache.
#[test]
fn every_damaged_file_is_removed_and_rebuilt() {
    let cc = compiler();
    let root = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(&root_at(root.path()), &cc, 0);
    let compile = |key: u128| {
        let source = format!("int {}(void) {{ return {key}; }}\n", symbol_of(key));
        let entry = Entry {
            key,
            symbol: symbol_of(key),
            has_fin: false,
        };
        cache.compile(&cc, &source, &[entry]).unwrap();
        assert!(cache.load(key).is_some());
    };
    let lib_of = |key: u128| {
        let text = std::fs::read_to_string(cache.entry_path(key)).unwrap();
        cache
            .dir()
            .join(text.lines().find_map(|l| l.strip_prefix("lib=")).unwrap())
    };
    // Damaged files replace the originals (a new inode): this process still has the
    // libraries it loaded mapped, and changing a mapped file in place crashes it.
    let replace = |p: &Path, bytes: &[u8]| {
        let tmp = p.with_extension("new");
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(&tmp, p).unwrap();
    };
    type Fault<'a> = (&'a str, Box<dyn Fn(&Path) + 'a>);
    let faults: Vec<Fault> = vec![
        (
            "truncated",
            Box::new(|p| {
                let b = std::fs::read(p).unwrap();
                replace(p, &b[..b.len() / 2]);
            }),
        ),
        ("garbage", Box::new(|p| replace(p, b"\x7fELF garbage"))),
        ("empty", Box::new(|p| replace(p, b""))),
        ("fifo", Box::new(make_fifo)),
        ("symlink loop", Box::new(make_link_loop)),
    ];
    compile(1);
    compile(2);
    for (what, fault) in &faults {
        for target in ["entry", "library"] {
            // A fresh cache object: the loaded library of the last round is mapped.
            let cache = DiskCache::new(&root_at(root.path()), &cc, 0);
            let path = if target == "entry" {
                cache.entry_path(1)
            } else {
                lib_of(1)
            };
            fault(&path);
            assert!(cache.load(1).is_none(), "{what} {target} loaded");
            assert!(
                std::fs::symlink_metadata(&path).is_err(),
                "{what} {target} was not removed"
            );
            compile(1);
        }
    }
    // Two entries swapped: each names the other's kernel.
    let (one, two) = (cache.entry_path(1), cache.entry_path(2));
    let tmp = cache.dir().join("swap");
    std::fs::rename(&one, &tmp).unwrap();
    std::fs::rename(&two, &one).unwrap();
    std::fs::rename(&tmp, &two).unwrap();
    let fresh = DiskCache::new(&root_at(root.path()), &cc, 0);
    assert!(fresh.load(1).is_none() && fresh.load(2).is_none());
    compile(1);
    compile(2);
    // Entries in the previous format are refused too (their directory differs anyway).
    let text = std::fs::read_to_string(cache.entry_path(1)).unwrap();
    let old = text.replace(ENTRY_HEADER, "hassium-kernel-entry 1");
    std::fs::write(cache.entry_path(1), old).unwrap();
    assert!(fresh.load(1).is_none());
}

/// A compiler that "succeeds" but writes garbage, or a library cut short: a clear
/// error, never a crash in the loader.
#[test]
fn a_compiler_writing_garbage_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad-cc");
    std::fs::write(
        &script,
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && o=$2; shift; done\n\
         [ -n \"$o\" ] && printf '\\177ELF\\2\\1\\1 cut short' > \"$o\"; exit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // Another test's compiler may be forked while this script is still open for writing;
    // running it then fails (ETXTBSY) until that child has exec'd. Probe again.
    let cc = (0..50)
        .find_map(|_| {
            let cc = Compiler::probe(script.to_str().unwrap(), &[]);
            if cc.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            cc
        })
        .expect("the script compiler probes");
    let cache = DiskCache::new(&root_at(dir.path()), &cc, 0);
    let entry = Entry {
        key: 5,
        symbol: symbol_of(5),
        has_fin: false,
    };
    let e = cache
        .compile(&cc, "int x;", &[entry])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a loadable library"), "{e}");
}

/// Two threads, each with its own cache object on one directory, compile the same
/// kernels at the same moment (a barrier lines them up) and then load each other's:
/// both succeed, and a third cache object loads every entry.
#[test]
fn two_threads_racing_on_one_directory_both_succeed() {
    let cc = compiler();
    let root = tempfile::tempdir().unwrap();
    let source = format!(
        "int {}(void) {{ return 1; }}\nint {}(void) {{ return 2; }}\n",
        symbol_of(1),
        symbol_of(2)
    );
    let entries: Vec<Entry> = [1u128, 2]
        .map(|key| Entry {
            key,
            symbol: symbol_of(key),
            has_fin: false,
        })
        .to_vec();
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let cache = DiskCache::new(&root_at(root.path()), &cc, 0);
                barrier.wait();
                cache.compile(&cc, &source, &entries).unwrap();
                barrier.wait();
                assert!(cache.load(1).is_some() && cache.load(2).is_some());
            });
        }
    });
    let later = DiskCache::new(&root_at(root.path()), &cc, 0);
    assert!(later.load(1).is_some() && later.load(2).is_some());
}

/// The mappings of this process's address space that come from `path`.
fn mappings_of(path: &Path) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let name = path.to_str().unwrap();
    maps.lines().filter(|l| l.ends_with(name)).count()
}

/// A library stays mapped while a kept kernel (or a call) holds it and is unmapped
/// after; the memory of kept kernels empties when full, so a process meeting many
/// distinct kernels keeps a bounded number of libraries loaded. Each kernel still
/// answers after it comes back from disk.
#[test]
fn kernel_libraries_are_unloaded_when_no_kept_kernel_holds_them() {
    let cc = compiler();
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(&root_at(dir.path()), &cc, 0);
    let mut memory = KernelMemory::with_capacity(3);
    let mut libraries = Vec::new();
    for key in 1..=10u128 {
        let entry = Entry {
            key,
            symbol: symbol_of(key),
            has_fin: false,
        };
        // Each source differs, so each compile makes its own library.
        let source = format!("int {}(void) {{ return {key}; }}\n", symbol_of(key));
        let done = cache.compile(&cc, &source, &[entry]).unwrap();
        let new: Vec<PathBuf> = std::fs::read_dir(cache.dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "so") && !libraries.contains(p))
            .collect();
        assert_eq!(new.len(), 1);
        libraries.extend(new);
        memory.extend(done);
        assert!(memory.len() <= 3);
        assert!(cache.loaded_libraries() <= 3, "key {key}");
    }
    // The first library is no longer mapped; the last is.
    assert_eq!(mappings_of(&libraries[0]), 0);
    assert!(mappings_of(&libraries[9]) > 0);
    // A kernel held outside the memory (a call running it) keeps its library mapped.
    let held = memory.get(&10).unwrap().clone();
    memory.extend((11..=13u128).map(|k| (k, held.clone())));
    assert!(memory.get(&10).is_none());
    assert!(mappings_of(&libraries[9]) > 0);
    drop(held);
    drop(memory);
    assert_eq!(mappings_of(&libraries[9]), 0);
    assert_eq!(cache.loaded_libraries(), 0);
    // Back from disk, each kernel still runs and answers its own key.
    for key in [1u128, 10] {
        let c = cache.load(key).expect("still on disk");
        // SAFETY: the test's kernels take no arguments and return an int; calling
        // one through the wider KernelFn type ignores the arguments it passes.
        let f: unsafe extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.main) };
        assert_eq!(unsafe { f() }, key as i32);
    }
}

/// Kernels of one compiler call share a library: the first disk hit checks and maps it,
/// the others take their symbols from that mapping without reading the file again (a
/// program's first run loads tens of kernels from a few libraries). The file is what a
/// new mapping would be made from, so once no kernel holds the library, damage to it is
/// found again.
#[test]
fn kernels_of_a_loaded_library_are_resolved_without_reading_it_again() {
    let cc = compiler();
    let dir = tempfile::tempdir().unwrap();
    let writer = DiskCache::new(&root_at(dir.path()), &cc, 0);
    let entries: Vec<Entry> = (1..=3u128)
        .map(|key| Entry {
            key,
            symbol: symbol_of(key),
            has_fin: false,
        })
        .collect();
    let source: String = (1..=3u128)
        .map(|key| format!("int {}(void) {{ return {key}; }}\n", symbol_of(key)))
        .collect();
    drop(writer.compile(&cc, &source, &entries).unwrap());
    let library: PathBuf = std::fs::read_dir(writer.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "so"))
        .unwrap();
    let cache = DiskCache::new(&root_at(dir.path()), &cc, 0);
    let first = cache.load(1).expect("a disk hit");
    // Replaced on disk by a damaged file after it was mapped (a new file renamed over it:
    // writing into a mapped library in place would fault the mapping itself): the mapping
    // still serves the other kernels.
    let damaged = dir.path().join("damaged");
    std::fs::write(&damaged, b"not a library").unwrap();
    std::fs::rename(&damaged, &library).unwrap();
    let second = cache.load(2).expect("resolved from the mapped library");
    for (c, key) in [(&first, 1), (&second, 2)] {
        // SAFETY: the test's kernels take no arguments and return an int.
        let f: unsafe extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.main) };
        assert_eq!(unsafe { f() }, key);
    }
    assert_eq!(cache.loaded_libraries(), 1);
    drop((first, second));
    // Unmapped now: the damaged file is found, removed, and reported as a miss.
    assert!(cache.load(3).is_none());
    assert!(!library.exists());
}
