//! The disk side of the kernel cache.
//!
//! Layout: `<cache_dir>/cpu-<hassium version>-<compiler identity>-<sources>/` holds shared
//! objects `k-<source hash>-<pid>-<n>.so` (several kernels each: one per compile) and one
//! small entry file per kernel key, `<key>.entry`, naming its library, symbol and the
//! library's checksum.
//! Both are written to a temporary name in the same directory and renamed into place, so
//! a concurrent process sees a whole file or none; two processes compiling the same
//! kernel both succeed, each with its own library, and the last entry rename wins. An entry whose
//! library is missing, fails its checksum or does not load is deleted and rebuilt.
//!
//! Size: a directory over `cache_max_bytes` loses its least recently used libraries
//! (a disk hit refreshes its library's time), and then the entries naming them, on a
//! background thread at most once an hour (`last-trimmed` records when). A process that
//! meets an entry whose library was trimmed away compiles the kernel again.

use crate::compiler::Compiler;
use crate::error::{Error, Result};
use hassium_engine_abi::{
    create_private_dir, elf_problem, mark_used, private_temp_dir, read_regular, temp_path, tidy,
    touch, write_atomic, CacheRoot,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use xxhash_rust::xxh3::xxh3_64;

/// A compiled kernel's entry point (see hassium-codegen's README for the convention).
pub type KernelFn =
    unsafe extern "C" fn(i64, i64, *const *mut u8, *const u8, *const i64, *mut u8, *mut i64) -> i32;

/// A loaded kernel: its function and, for partial reductions, the combining function,
/// with the library that holds them, which stays loaded while any copy lives.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub main: KernelFn,
    pub fin: Option<KernelFn>,
    /// `(vectorised, total)` simd loops, where the compiler reported them (see
    /// `vectorised`).
    pub simd_loops: Option<(u32, u32)>,
    _lib: Arc<libloading::Library>,
}

/// Kernels kept loaded at most (see [`KernelMemory`]).
pub const MEMORY_KERNELS: usize = 4096;

/// The loaded kernels an engine keeps, by cache key, at most `capacity` of them: when
/// full it is emptied, and what is used again comes back from the disk cache. A library
/// is unloaded once no kept kernel and no running call holds it. Kept without bound, a
/// process that meets many distinct kernels (a test suite; a cluster rank, whose pieces
/// come in every shape) held one library per compile, 4-5 mappings each, until it
/// reached the kernel's limit of 65 530 mappings and every later `mmap` failed.
pub struct KernelMemory {
    map: HashMap<u128, Compiled>,
    capacity: usize,
}

impl Default for KernelMemory {
    fn default() -> Self {
        KernelMemory::with_capacity(MEMORY_KERNELS)
    }
}

impl KernelMemory {
    pub fn with_capacity(capacity: usize) -> KernelMemory {
        KernelMemory {
            map: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&self, key: &u128) -> Option<&Compiled> {
        self.map.get(key)
    }

    pub fn contains_key(&self, key: &u128) -> bool {
        self.map.contains_key(key)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&u128, &Compiled)> {
        self.map.iter()
    }

    pub fn insert(&mut self, key: u128, c: Compiled) {
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            self.map.clear();
        }
        self.map.insert(key, c);
    }

    pub fn extend(&mut self, kernels: impl IntoIterator<Item = (u128, Compiled)>) {
        for (key, c) in kernels {
            self.insert(key, c);
        }
    }
}

/// What one kernel of a compile job is called.
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: u128,
    pub symbol: String,
    pub has_fin: bool,
}

pub struct DiskCache {
    dir: PathBuf,
    /// Whether `dir` could be created; when not, libraries go to a temporary directory
    /// and nothing is persisted.
    persistent: bool,
    /// Libraries loaded, held by the kernels that use them (`Compiled`), so that a
    /// kernel loaded again while its library is still in use shares it.
    libs: Mutex<HashMap<PathBuf, Weak<libloading::Library>>>,
    running: Mutex<RunningSet>,
}

fn cache_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Cache {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// How often a directory's size is checked against `cache_max_bytes`: listing a
/// directory of tens of thousands of files at every start would cost more than it saves.
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

impl DiskCache {
    /// The cache of this build under `root` (see `hassium_engine_abi::open_cache_root`),
    /// kept within `max_bytes` (0 = no limit). When this build's directory cannot be
    /// made, the process's private temporary directory takes its place.
    pub fn new(root: &CacheRoot, compiler: &Compiler, max_bytes: u64) -> DiskCache {
        // Entries are found by kernel key before anything is rendered, so the directory
        // names what turns a key into code: this build's codegen, core and engine sources
        // (engines/cpu/build.rs) as well as the compiler.
        let name = format!(
            "cpu-{}-{:016x}-{}",
            env!("CARGO_PKG_VERSION"),
            compiler.identity,
            &env!("HASSIUM_CPU_KERNEL_SOURCES")[..16]
        );
        let dir = root.path.join(&name);
        let made = create_private_dir(&dir);
        let (dir, persistent) = match (made, private_temp_dir()) {
            (Ok(()), _) => (dir, root.persistent),
            (Err(e), Some(tmp)) => {
                tracing::warn!(
                    "kernel cache {} is not usable ({e}); compiled kernels will not persist",
                    dir.display()
                );
                (tmp.join(&name), false)
            }
            (Err(_), None) => (dir, false),
        };
        if persistent {
            Self::tidy_in_background(&root.path, &dir, max_bytes);
        }
        DiskCache {
            dir,
            persistent,
            libs: Mutex::new(HashMap::new()),
            running: Mutex::new(RunningSet::default()),
        }
    }

    /// Marks `ours` used and, on a background thread, removes the directories of other
    /// builds that are no longer wanted (`hassium_engine_abi::prune_other_builds`): each
    /// rebuild or upgrade starts a directory of its own, hundreds of megabytes after a
    /// test suite. When due, it also trims `ours` to `max_bytes` and removes the entries
    /// of the libraries trimmed. A process stopped halfway leaves the rest for the next.
    fn tidy_in_background(root: &Path, ours: &Path, max_bytes: u64) {
        if let Err(e) = mark_used(ours) {
            tracing::debug!("cannot mark {} used: {e}", ours.display());
        }
        let (root, ours) = (root.to_path_buf(), ours.to_path_buf());
        let _ = std::thread::Builder::new()
            .name("hassium-cache-prune".into())
            .spawn(move || {
                let gone = tidy(&root, "cpu-", &ours, (max_bytes, TRIM_EVERY), is_library);
                if !gone.is_empty() {
                    remove_orphan_entries(&ours);
                }
            });
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_path(&self, key: u128) -> PathBuf {
        self.dir.join(format!("{key:032x}.entry"))
    }

    fn open_lib(&self, path: &Path) -> Result<Arc<libloading::Library>> {
        let mut libs = self.libs.lock();
        if let Some(l) = libs.get(path).and_then(Weak::upgrade) {
            return Ok(l);
        }
        // SAFETY: the library is a kernel object this engine compiled from its own source;
        // it has no initialisers beyond libc's, and it is unloaded only when the last
        // `Compiled` holding it is dropped, so no call runs in it then.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| cache_err(path, e))?;
        let lib = Arc::new(lib);
        if libs.len() >= 2 * MEMORY_KERNELS {
            libs.retain(|_, l| l.strong_count() > 0);
        }
        libs.insert(path.to_path_buf(), Arc::downgrade(&lib));
        Ok(lib)
    }

    fn symbol(lib: &libloading::Library, name: &str, path: &Path) -> Result<KernelFn> {
        // SAFETY: every kernel symbol has the KernelFn signature (rendered by codegen).
        // The pointer is kept only in a `Compiled` beside the library's `Arc`.
        let f: libloading::Symbol<KernelFn> =
            unsafe { lib.get(name.as_bytes()) }.map_err(|e| cache_err(path, e))?;
        Ok(*f)
    }

    /// How many kernel libraries are loaded now.
    #[cfg(test)]
    pub fn loaded_libraries(&self) -> usize {
        self.libs
            .lock()
            .values()
            .filter(|l| l.strong_count() > 0)
            .count()
    }

    fn resolve(
        &self,
        lib_path: &Path,
        e: &Entry,
        simd_loops: Option<(u32, u32)>,
    ) -> Result<Compiled> {
        let lib = self.open_lib(lib_path)?;
        Self::resolve_in(lib, lib_path, e, simd_loops)
    }

    fn resolve_in(
        lib: Arc<libloading::Library>,
        lib_path: &Path,
        e: &Entry,
        simd_loops: Option<(u32, u32)>,
    ) -> Result<Compiled> {
        let main = Self::symbol(&lib, &e.symbol, lib_path)?;
        let fin = if e.has_fin {
            Some(Self::symbol(&lib, &format!("{}_fin", e.symbol), lib_path)?)
        } else {
            None
        };
        Ok(Compiled {
            main,
            fin,
            simd_loops,
            _lib: lib,
        })
    }

    /// Loads `key` from disk; a damaged entry is deleted (with its library when that is
    /// what is damaged), reported with one warning, and reported as a miss, so the kernel
    /// is compiled and stored again. Every file is read without blocking and only when it
    /// is a regular file (a FIFO or a link loop in its place is damage too), and checked
    /// before use: the entry's own checksum, its symbol against its key (two swapped
    /// entries would call the wrong kernel), the library's checksum and its ELF headers
    /// (a library cut short would crash the loader).
    pub fn load(&self, key: u128) -> Option<Compiled> {
        if !self.persistent {
            return None;
        }
        let path = self.entry_path(key);
        let text = match read_regular(&path, MAX_ENTRY_BYTES) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| "not text".to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => Err(e.to_string()),
        };
        match text
            .map_err(|e| (e, None))
            .and_then(|t| self.load_entry(key, &t))
        {
            Ok(c) => Some(c),
            Err((why, lib)) => {
                if lib.is_none() && why.starts_with("library: No such file") {
                    // Trimmed away (see the module doc), not damaged.
                    tracing::debug!(
                        "kernel cache entry {}: {why}; rebuilding it",
                        path.display()
                    );
                } else {
                    tracing::warn!(
                        "kernel cache entry {} is damaged ({why}); rebuilding it",
                        path.display()
                    );
                }
                remove_damaged(&path);
                if let Some(lib) = lib {
                    remove_damaged(&lib);
                }
                None
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn load_entry(
        &self,
        key: u128,
        text: &str,
    ) -> std::result::Result<Compiled, (String, Option<PathBuf>)> {
        let (body, check) = text
            .strip_suffix('\n')
            .and_then(|t| t.rsplit_once('\n'))
            .ok_or(("truncated entry".to_string(), None))?;
        if check.strip_prefix("check=") != Some(&format!("{:016x}", xxh3_64(body.as_bytes()))) {
            return Err(("entry checksum mismatch".into(), None));
        }
        let mut fields = HashMap::new();
        let mut lines = body.lines();
        if lines.next() != Some(ENTRY_HEADER) {
            return Err(("bad header".into(), None));
        }
        for l in lines {
            if let Some((k, v)) = l.split_once('=') {
                fields.insert(k, v);
            }
        }
        let (Some(lib), Some(sym), Some(fin), Some(sum)) = (
            fields.get("lib"),
            fields.get("sym"),
            fields.get("fin"),
            fields.get("sum"),
        ) else {
            return Err(("truncated entry".into(), None));
        };
        if *sym != symbol_of(key) {
            return Err((
                format!(
                    "it names kernel `{sym}`, not this key's `{}`",
                    symbol_of(key)
                ),
                None,
            ));
        }
        if !is_library(lib) || lib.contains('/') {
            return Err(("bad library name".into(), None));
        }
        let lib_path = self.dir.join(lib);
        let e = Entry {
            key,
            symbol: sym.to_string(),
            has_fin: *fin == "1",
        };
        // Entries written before the report was kept have no `vec` line.
        let simd_loops = fields.get("vec").and_then(|v| {
            let (done, all) = v.split_once('/')?;
            Some((done.parse().ok()?, all.parse().ok()?))
        });
        // A library this process has loaded (another kernel of the same compiler call)
        // was checked and touched then; what runs is that mapping, not the file now.
        let loaded = self.libs.lock().get(&lib_path).and_then(Weak::upgrade);
        if let Some(lib) = loaded {
            return Self::resolve_in(lib, &lib_path, &e, simd_loops)
                .map_err(|err| (err.to_string(), None));
        }
        let bytes = match read_regular(&lib_path, MAX_LIBRARY_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err((format!("library: {e}"), None))
            }
            Err(e) => return Err((format!("library {lib}: {e}"), Some(lib_path))),
        };
        if format!("{:016x}", xxh3_64(&bytes)) != *sum {
            return Err(("library checksum mismatch".into(), Some(lib_path)));
        }
        if let Some(why) = elf_problem(bytes.len() as u64, |at, n| {
            let at = usize::try_from(at).ok()?;
            bytes.get(at..at.checked_add(n)?).map(<[u8]>::to_vec)
        }) {
            return Err((format!("library {lib}: {why}"), Some(lib_path)));
        }
        touch(&lib_path);
        self.resolve(&lib_path, &e, simd_loops)
            .map_err(|err| (err.to_string(), Some(lib_path)))
    }

    /// Compiles `source` holding every kernel of `entries` in one compiler call, stores
    /// the library and one entry per kernel, and returns the loaded kernels.
    pub fn compile(
        &self,
        compiler: &Compiler,
        source: &str,
        entries: &[Entry],
    ) -> Result<Vec<(u128, Compiled)>> {
        let lib = self.build(compiler, source, true)?;
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            let simd_loops = lib.simd_loops(source, e);
            let c = self.resolve(&lib.path, e, simd_loops)?;
            self.write_entry(&lib, e, simd_loops)?;
            out.push((e.key, c));
        }
        Ok(out)
    }

    /// What [`DiskCache::compile`] stores, without loading it: for a process that only
    /// fills the cache (the one finishing compiles at exit, see `tiered`). It takes no
    /// lock another thread could hold.
    pub fn compile_and_store(
        &self,
        compiler: &Compiler,
        source: &str,
        entries: &[Entry],
    ) -> Result<()> {
        let lib = self.build(compiler, source, false)?;
        entries
            .iter()
            .try_for_each(|e| self.write_entry(&lib, e, lib.simd_loops(source, e)))
    }

    /// Stops the compilers running now (their whole process groups) and deletes their
    /// temporary files: at exit, before their jobs are handed to a finishing process.
    /// Compiles that would start later fail at once.
    pub fn stop_running(&self) {
        let mut running = self.running.lock();
        running.closed = true;
        for r in running.list.drain(..) {
            r.stop();
        }
    }

    /// Compiles `source` into a library under its final name (temporary file + rename).
    /// With `track`, the running compiler is listed for [`DiskCache::stop_running`] from
    /// before its source file is written until its temporaries are gone.
    fn build(&self, compiler: &Compiler, source: &str, track: bool) -> Result<Library> {
        // Another build's process may have removed this directory as unused.
        std::fs::create_dir_all(&self.dir).map_err(|e| cache_err(&self.dir, e))?;
        let c_path = temp_path(&self.dir, "c");
        let tmp_lib = temp_path(&self.dir, "so");
        let report_path = temp_path(&self.dir, "vec");
        let files = [c_path.clone(), tmp_lib.clone(), report_path.clone()];
        // Held from before the source is written until the compiler is listed, so that
        // `stop_running` either finds it listed or has already closed the set.
        let mut gate = track.then(|| self.running.lock());
        if gate.as_ref().is_some_and(|g| g.closed) {
            return Err(cache_err(&c_path, "the process is exiting"));
        }
        let result = compiler.compile(source, &c_path, &tmp_lib, &report_path, &mut |pid| {
            if let Some(mut g) = gate.take() {
                g.list.push(Running {
                    pid: Some(pid),
                    files: files.clone(),
                });
            }
        });
        drop(gate);
        let _finish = track.then(|| Untrack {
            cache: self,
            c_path: &c_path,
        });
        if track {
            // The compiler is reaped: its process id may be reused from now on.
            for r in self.running.lock().list.iter_mut() {
                if r.files[0] == c_path {
                    r.pid = None;
                }
            }
        }
        let _ = std::fs::remove_file(&c_path);
        // GCC's list of the loops it vectorised (none from another compiler).
        let report = compiler
            .gcc
            .then(|| read_regular(&report_path, MAX_REPORT_BYTES).ok())
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let _ = std::fs::remove_file(&report_path);
        // `HASSIUM_DUMP=dir` also keeps each translation unit, for reading and for
        // compiling by hand, and the compiler's report of what it vectorised.
        let unit = format!("cpu-{:016x}", xxh3_64(source.as_bytes()));
        hassium_engine_abi::dump_source(&format!("{unit}.c"), source);
        if let Some(r) = &report {
            hassium_engine_abi::dump_source(&format!("{unit}.vec.txt"), r);
        }
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp_lib);
            return Err(e);
        }
        let bytes =
            read_regular(&tmp_lib, MAX_LIBRARY_BYTES).map_err(|e| cache_err(&tmp_lib, e))?;
        // A broken compiler (or a full disk) can leave something that is no library, or
        // one cut short, which would crash the loader.
        let elf = elf_problem(bytes.len() as u64, |at, n| {
            let at = usize::try_from(at).ok()?;
            bytes.get(at..at.checked_add(n)?).map(<[u8]>::to_vec)
        });
        if let Some(why) = elf {
            let _ = std::fs::remove_file(&tmp_lib);
            return Err(Error::Compile {
                command: compiler.program.clone(),
                stderr: format!("the compiler's output is not a loadable library: {why}"),
            });
        }
        let sum = format!("{:016x}", xxh3_64(&bytes));
        // Named by its bytes as well as its source: two processes compiling one source at
        // once get libraries that differ (the compiler records the temporary source file's
        // name), and a shared name would let one replace the library the other's entry
        // describes, so that entry would fail its checksum and be rebuilt.
        let path = self
            .dir
            .join(format!("k-{:016x}-{sum}.so", xxh3_64(source.as_bytes())));
        std::fs::rename(&tmp_lib, &path).map_err(|e| cache_err(&path, e))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Library {
            path,
            name,
            sum,
            report,
        })
    }

    fn write_entry(&self, lib: &Library, e: &Entry, simd_loops: Option<(u32, u32)>) -> Result<()> {
        if !self.persistent {
            return Ok(());
        }
        let path = self.entry_path(e.key);
        if e.symbol != symbol_of(e.key) {
            return Err(cache_err(
                &path,
                format!("kernel `{}` is misnamed", e.symbol),
            ));
        }
        let mut body = format!(
            "{ENTRY_HEADER}\nlib={}\nsym={}\nfin={}\nsum={}",
            lib.name, e.symbol, e.has_fin as u8, lib.sum
        );
        if let Some((done, all)) = simd_loops {
            body.push_str(&format!("\nvec={done}/{all}"));
        }
        let text = format!("{body}\ncheck={:016x}\n", xxh3_64(body.as_bytes()));
        write_atomic(&path, text.as_bytes()).map_err(|err| cache_err(&path, err))
    }

    /// Deletes temporary files older than an hour: what compiles of killed processes
    /// left (a live compile's are minutes old at most).
    pub fn remove_stale_temporaries(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let hour = std::time::Duration::from_secs(3600);
        for e in dir.flatten() {
            let stale = e
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok()?.elapsed().ok());
            if e.file_name().as_encoded_bytes().starts_with(b".tmp-")
                && stale.is_some_and(|age| age > hour)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Whether compiled kernels outlive this process.
    pub fn persistent(&self) -> bool {
        self.persistent
    }
}

/// The first line of an entry file: its format.
const ENTRY_HEADER: &str = "hassium-kernel-entry 2";
/// Entries are about 150 bytes; anything much longer is not one.
const MAX_ENTRY_BYTES: u64 = 4096;
/// GCC's vectorisation report of one compile: about 100 KB for a dozen kernels.
const MAX_REPORT_BYTES: u64 = 64 << 20;
/// A library holds the kernels of one compile: far less than this.
const MAX_LIBRARY_BYTES: u64 = 1 << 30;

/// The symbol of kernel `key` in its library: entries are checked against it, so an
/// entry copied or swapped under another key's name is never trusted.
pub fn symbol_of(key: u128) -> String {
    format!("hs_{key:032x}")
}

/// Removes a damaged cache file; a directory in a file's place goes too, when empty.
fn remove_damaged(path: &Path) {
    if std::fs::remove_file(path).is_err() {
        let _ = std::fs::remove_dir(path);
    }
}

/// Whether a file of a kernel directory is a library (what trimming removes).
fn is_library(name: &str) -> bool {
    name.starts_with("k-") && name.ends_with(".so")
}

/// Deletes every entry of the kernel directory `dir` that names a library no longer
/// there: after trimming, so they are not read only to miss.
fn remove_orphan_entries(dir: &Path) {
    let Ok(files) = std::fs::read_dir(dir) else {
        return;
    };
    for f in files.flatten() {
        let path = f.path();
        if path.extension().is_none_or(|e| e != "entry") {
            continue;
        }
        let Ok(text) = read_regular(&path, MAX_ENTRY_BYTES) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        let lib = text.lines().find_map(|l| l.strip_prefix("lib="));
        if lib.is_some_and(|lib| !lib.contains('/') && !dir.join(lib).exists()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A library [`DiskCache::build`] stored: its path, file name and checksum.
struct Library {
    path: PathBuf,
    name: String,
    sum: String,
    /// GCC's report of the loops it vectorised in the library's source.
    report: Option<String>,
}

impl Library {
    /// `(vectorised, total)` simd loops of entry `e`'s kernel, where GCC reported.
    fn simd_loops(&self, source: &str, e: &Entry) -> Option<(u32, u32)> {
        (self.report.as_deref()).map(|r| crate::vectorised::simd_loops(source, r, &e.symbol))
    }
}

/// A compile of this process: its compiler's process group while it runs, and its
/// temporary files.
struct Running {
    pid: Option<u32>,
    files: [PathBuf; 3],
}

impl Running {
    fn stop(&self) {
        if let Some(pgid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: plain syscall; the group is the compiler's own (process_group(0))
            // and not yet reaped, so the id is still its.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// The compiles of one cache, and whether the process is exiting (no new ones start).
#[derive(Default)]
struct RunningSet {
    closed: bool,
    list: Vec<Running>,
}

/// Unlists a compile when `build` returns, its temporaries renamed or deleted.
struct Untrack<'a> {
    cache: &'a DiskCache,
    c_path: &'a Path,
}

impl Drop for Untrack<'_> {
    fn drop(&mut self) {
        self.cache
            .running
            .lock()
            .list
            .retain(|r| r.files[0] != self.c_path);
    }
}

#[cfg(test)]
mod tests;
