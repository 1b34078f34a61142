//! Building OpenCL programs and caching them: in memory by kernel key, and on disk as
//! program binaries keyed by device name + driver version + build options + kernel key.
//!
//! The new kernels of one batch are built as one program per core, the programs at the
//! same time on scoped threads; each program's disk entry is keyed by the device tag, the
//! build options and the keys of exactly its kernels (the split is deterministic), so a
//! program that repeats its batches finds its entries on its next run.
//!
//! A disk entry is `MAGIC`, the xxh3-128 of the source it was built from, the binary's
//! length and its xxh3-128, then the binary. The source hash guards against a stale entry
//! (a codegen change that renders the same key differently); the length and checksum
//! against a damaged one (a binary cut short made PoCL abort on every later run, since a
//! check of the source alone passed). Entries are read without blocking and only when
//! regular files; a damaged one is removed with one warning and rebuilt from source.
//! Entries are written to a temporary file and renamed, so concurrent processes never
//! read half an entry.

use crate::engine::BuildOptions;
use crate::error::{Error, Result};
use crossbeam_channel::{unbounded, Receiver, Sender};
use hassium_engine_abi::{
    create_private_dir, due, dump_source, open_cache_root, read_regular, touch, trim_to_size,
    CacheLocation,
};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_128;

const MAGIC: &[u8; 8] = b"HSCLBIN2";
/// Magic, source hash, binary length, binary checksum.
const HEADER: usize = 8 + 16 + 8 + 16;
/// Far beyond any program binary of a batch's kernels.
const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// The entry point of kernel `key` in a program (its combiner adds `_fin`).
pub fn entry_name(key: u128) -> String {
    format!("hs_{key:032x}")
}

/// One kernel of a built program.
pub struct Built {
    pub main: Kernel,
    pub fin: Option<Kernel>,
    /// Work-group size for `main` (the configured size, capped by the kernel's limit).
    pub local: usize,
    /// The largest work-group `main` can run in on this device.
    pub limit: usize,
    /// Work-group size for `fin` (as `local`, from `fin`'s own limit); 1 without `fin`.
    pub fin_local: usize,
    // Kept alive for the kernels' sake (a program is shared by the kernels of a batch).
    _program: Arc<ProgramHandle>,
}

pub struct ProgramHandle(Program);

// SAFETY: OpenCL objects are thread-safe except `clSetKernelArg` on one kernel from two
// threads; the engine sets arguments only from the thread that holds `&mut` to it.
unsafe impl Send for Built {}
unsafe impl Sync for Built {}
unsafe impl Send for ProgramHandle {}
unsafe impl Sync for ProgramHandle {}

/// Where a batch's new programs came from, for the statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Disk,
    Source,
}

/// A kernel to build: its key, whether it has a combiner, and its source (no prelude).
pub struct Job {
    pub key: u128,
    pub has_fin: bool,
    pub source: String,
    /// Built with the cautious options (`BuildOptions`); a program's jobs all agree.
    pub cautious: bool,
}

/// What building a program needs, apart from the context: cheap to clone into a
/// background build thread.
#[derive(Clone)]
struct Builder {
    device: Device,
    /// Platform, device name and driver version: what makes a binary reusable.
    tag: String,
    options: BuildOptions,
    dir: Option<PathBuf>,
}

/// A background build's outcome: the jobs' keys (and whether each has a combiner) and
/// the program, or the error.
type Finished = (Vec<(u128, bool)>, Result<(Program, Origin)>);

pub struct Programs {
    builder: Builder,
    wanted_local: usize,
    memory: HashMap<u128, Arc<Built>>,
    /// Keys being built in the background.
    pending: HashSet<u128>,
    done_tx: Sender<Finished>,
    done_rx: Receiver<Finished>,
}

impl Programs {
    pub fn new(
        device: Device,
        tag: String,
        options: BuildOptions,
        dir: Option<PathBuf>,
        max_bytes: u64,
        wanted_local: usize,
    ) -> Programs {
        // Binaries are only worth keeping in a directory that outlives the process, and
        // only in one nobody else can write to (a binary is run as the user's code).
        let dir = dir.and_then(|d| {
            let root = open_cache_root(&CacheLocation::At(d))?;
            let dir = root.path.join("opencl");
            (root.persistent && create_private_dir(&dir).is_ok()).then_some(dir)
        });
        if let Some(dir) = dir.clone().filter(|_| max_bytes > 0) {
            trim_in_background(dir, max_bytes);
        }
        let (done_tx, done_rx) = unbounded();
        Programs {
            builder: Builder {
                device,
                tag,
                options,
                dir,
            },
            wanted_local,
            memory: HashMap::new(),
            pending: HashSet::new(),
            done_tx,
            done_rx,
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.builder.dir.as_deref()
    }

    /// Whether `key` is being built in the background.
    pub fn is_pending(&self, key: u128) -> bool {
        self.pending.contains(&key)
    }

    /// Starts building `jobs` on a background thread; [`Programs::collect`] registers
    /// them once built. Returns false (nothing started) when no thread can be spawned.
    pub fn build_in_background(
        &mut self,
        ctx: Arc<Context>,
        prelude: &str,
        jobs: Vec<Job>,
    ) -> bool {
        let builder = self.builder.clone();
        let tx = self.done_tx.clone();
        let prelude = prelude.to_string();
        let keys: Vec<u128> = jobs.iter().map(|j| j.key).collect();
        let spawned = std::thread::Builder::new()
            .name("hassium-opencl-build".into())
            .spawn(move || {
                let result = builder.program(&ctx, &prelude, &jobs);
                let keys = jobs.iter().map(|j| (j.key, j.has_fin)).collect();
                // The engine may be gone; then nobody wants the program.
                let _ = tx.send((keys, result));
            });
        match spawned {
            Ok(_) => {
                self.pending.extend(keys);
                true
            }
            Err(e) => {
                tracing::warn!("cannot start a background OpenCL build: {e}");
                false
            }
        }
    }

    /// Registers what background builds finished: (programs built from source, from
    /// disk, failed). A failed build is logged; its kernels are no longer pending, so the
    /// next call builds them in the foreground and reports the error there.
    pub fn collect(&mut self) -> Result<(u64, u64, u64)> {
        let mut counts = (0, 0, 0);
        while let Ok((keys, result)) = self.done_rx.try_recv() {
            for (k, _) in &keys {
                self.pending.remove(k);
            }
            match result {
                Ok((program, origin)) => {
                    self.register(program, &keys)?;
                    match origin {
                        Origin::Source => counts.0 += keys.len() as u64,
                        Origin::Disk => counts.1 += keys.len() as u64,
                    }
                }
                Err(e) => {
                    tracing::warn!("background OpenCL build failed: {e}");
                    counts.2 += keys.len() as u64;
                }
            }
        }
        Ok(counts)
    }

    pub fn in_memory(&self, key: u128) -> Option<Arc<Built>> {
        self.memory.get(&key).cloned()
    }

    /// Builds the kernels of `jobs` and remembers each by key. They are split into as
    /// many programs as there are cores (one group when the jobs are few), built at the
    /// same time on scoped threads: a driver compiles one program on one thread, so a
    /// batch of new kernels would otherwise wait for them one after another. Each
    /// program comes from its disk entry when one exists for exactly its kernels.
    /// `Source` if any of them had to be compiled.
    pub fn build(&mut self, ctx: &Context, prelude: &str, jobs: &[Job]) -> Result<Origin> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let groups = jobs.len().min(cores).max(1);
        let per = jobs.len().div_ceil(groups).max(1);
        let parts: Vec<&[Job]> = jobs.chunks(per).collect();
        let builder = &self.builder;
        let built: Vec<Result<(Program, Origin)>> = if parts.len() <= 1 {
            parts
                .iter()
                .map(|g| builder.program(ctx, prelude, g))
                .collect()
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = parts
                    .iter()
                    .map(|g| scope.spawn(move || builder.program(ctx, prelude, g)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Config("an OpenCL build thread panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        let mut origin = Origin::Disk;
        for (group, result) in parts.iter().zip(built) {
            let (program, o) = result?;
            if o == Origin::Source {
                origin = Origin::Source;
            }
            let keys: Vec<(u128, bool)> = group.iter().map(|j| (j.key, j.has_fin)).collect();
            self.register(program, &keys)?;
        }
        Ok(origin)
    }

    /// Creates the kernels `(key, has_fin)` of a built program and remembers them.
    fn register(&mut self, program: Program, kernels: &[(u128, bool)]) -> Result<()> {
        let handle = Arc::new(ProgramHandle(program));
        for &(key, has_fin) in kernels {
            let name = entry_name(key);
            let create =
                |n: &str| Kernel::create(&handle.0, n).map_err(|e| Error::cl("clCreateKernel", e));
            let main = create(&name)?;
            let fin = if has_fin {
                Some(create(&format!("{name}_fin"))?)
            } else {
                None
            };
            let device = self.builder.device.id();
            let limit_of = |k: &Kernel| k.get_work_group_size(device).unwrap_or(1).max(1);
            // Round down to a power of two: global sizes are padded to a multiple of it.
            let local_of = |limit: usize| {
                let local = self.wanted_local.min(limit).max(1);
                1usize << (usize::BITS - 1 - local.leading_zeros())
            };
            let limit = limit_of(&main);
            let local = local_of(limit);
            let fin_local = fin.as_ref().map_or(1, |f| local_of(limit_of(f)));
            self.memory.insert(
                key,
                Arc::new(Built {
                    main,
                    fin,
                    local,
                    limit,
                    fin_local,
                    _program: handle.clone(),
                }),
            );
        }
        Ok(())
    }
}

impl Builder {
    /// The disk entry of a program holding the kernels `keys`, in that order.
    fn entry_path(&self, options: &str, keys: &[u128]) -> Option<PathBuf> {
        // The source digest: a binary is only valid for the codegen and engine that
        // made it (see build.rs).
        let mut text = format!(
            "{}|{}|{}|{}|",
            self.tag,
            options,
            env!("CARGO_PKG_VERSION"),
            env!("HASSIUM_OPENCL_KERNEL_SOURCES")
        );
        for k in keys {
            text.push_str(&format!("{k:032x},"));
        }
        let id = xxh3_128(text.as_bytes());
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{id:032x}.clbin")))
    }

    /// One program holding the kernels of `jobs`: from its disk entry, or compiled from
    /// source (and then written to the disk cache). The jobs are all cautious or none is.
    fn program(&self, ctx: &Context, prelude: &str, jobs: &[Job]) -> Result<(Program, Origin)> {
        let keys: Vec<u128> = jobs.iter().map(|j| j.key).collect();
        let options = if jobs.first().is_some_and(|j| j.cautious) {
            &self.options.cautious
        } else {
            &self.options.usual
        };
        let mut source = String::from(prelude);
        for j in jobs {
            source.push('\n');
            source.push_str(&j.source);
        }
        let hash = xxh3_128(source.as_bytes());
        // `HASSIUM_DUMP=dir` keeps each program's source, as the cpu engine keeps its C.
        dump_source(&format!("opencl-{:016x}.cl", hash as u64), &source);
        let path = self.entry_path(options, &keys);
        if let Some(p) = &path {
            if let Some(bin) = read_entry(p, hash) {
                match Program::create_and_build_from_binary(ctx, &[&bin], options) {
                    Ok(program) => return Ok((program, Origin::Disk)),
                    Err(e) => tracing::debug!(
                        "rebuilding {}: {}",
                        p.display(),
                        opencl3::error_codes::error_text(e.0)
                    ),
                }
            }
        }
        let mut program = Program::create_from_source(ctx, &source)
            .map_err(|e| Error::cl("clCreateProgramWithSource", e))?;
        if let Err(e) = program.build(ctx.devices(), options) {
            let log = program.get_build_log(self.device.id()).unwrap_or_default();
            return Err(Error::Build {
                device: self.tag.clone(),
                log: format!("{} ({})\n{log}", opencl3::error_codes::error_text(e.0), e.0),
            });
        }
        let binary = program
            .get_binaries()
            .ok()
            .and_then(|mut b| (b.len() == 1 && !b[0].is_empty()).then(|| b.remove(0)));
        if let (Some(p), Some(bin)) = (&path, binary) {
            if let Err(e) = write_entry(p, hash, &bin) {
                tracing::warn!("OpenCL program cache: {e}");
            }
        }
        Ok((program, Origin::Source))
    }
}

/// How often the binary directory's size is checked against `cache_max_bytes`.
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// When due, removes the least recently used binaries of `dir` beyond `max_bytes`, on a
/// background thread (`hassium_engine_abi::trim_to_size`; a hit refreshes a binary's
/// time in [`read_entry`]). Without it every new program adds a file for good.
fn trim_in_background(dir: PathBuf, max_bytes: u64) {
    let _ = std::thread::Builder::new()
        .name("hassium-opencl-trim".into())
        .spawn(move || {
            if dir.is_dir() && due(&dir.join("last-trimmed"), TRIM_EVERY) {
                let gone = trim_to_size(&dir, max_bytes, |n| n.ends_with(".clbin"));
                if !gone.is_empty() {
                    tracing::debug!("OpenCL program cache: removed {} binaries", gone.len());
                }
            }
        });
}

/// What reading a disk entry found.
#[derive(Debug, PartialEq, Eq)]
enum Read {
    Missing,
    /// Built from another source (a stale entry): rebuilt without a warning.
    Stale,
    /// Damaged (why): removed with a warning and rebuilt.
    Damaged(String),
    Binary(Vec<u8>),
}

/// The program binary in the entry at `path` built from the source with hash `hash`.
fn check_entry(path: &Path, hash: u128) -> Read {
    let bytes = match read_regular(path, MAX_ENTRY_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Missing,
        Err(e) => return Read::Damaged(e.to_string()),
    };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Read::Damaged("no entry header".into());
    }
    if bytes[8..24] != hash.to_le_bytes() {
        return Read::Stale;
    }
    let len = u64::from_le_bytes(bytes[24..32].try_into().unwrap_or_default());
    let bin = &bytes[HEADER..];
    if len != bin.len() as u64 || len == 0 {
        return Read::Damaged(format!(
            "its binary has {} bytes, its header says {len}",
            bin.len()
        ));
    }
    if bytes[32..48] != xxh3_128(bin).to_le_bytes() {
        return Read::Damaged("binary checksum mismatch".into());
    }
    Read::Binary(bin.to_vec())
}

/// [`check_entry`], removing a damaged entry (with a warning) or a stale one.
fn read_entry(path: &Path, hash: u128) -> Option<Vec<u8>> {
    match check_entry(path, hash) {
        Read::Binary(bin) => {
            touch(path);
            Some(bin)
        }
        Read::Missing => None,
        Read::Stale => {
            let _ = std::fs::remove_file(path);
            None
        }
        Read::Damaged(why) => {
            tracing::warn!(
                "OpenCL program cache entry {} is damaged ({why}); rebuilding it",
                path.display()
            );
            if std::fs::remove_file(path).is_err() {
                let _ = std::fs::remove_dir(path);
            }
            None
        }
    }
}

fn write_entry(path: &Path, hash: u128, bin: &[u8]) -> Result<()> {
    let err = |e: std::io::Error| Error::Cache {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir).map_err(err)?;
    let tmp = hassium_engine_abi::temp_path(dir, "clbin");
    let mut f = std::fs::File::create(&tmp).map_err(err)?;
    f.write_all(MAGIC).map_err(err)?;
    f.write_all(&hash.to_le_bytes()).map_err(err)?;
    f.write_all(&(bin.len() as u64).to_le_bytes())
        .map_err(err)?;
    f.write_all(&xxh3_128(bin).to_le_bytes()).map_err(err)?;
    f.write_all(bin).map_err(err)?;
    f.sync_all().map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of damage to a binary entry is found before the driver sees the
    /// binary (PoCL aborts on a binary cut short), and the entry is removed.
    #[test]
    fn a_damaged_binary_entry_is_refused_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.clbin");
        let bin = vec![7u8; 1000];
        write_entry(&path, 42, &bin).unwrap();
        assert_eq!(check_entry(&path, 42), Read::Binary(bin.clone()));
        assert_eq!(check_entry(&path, 43), Read::Stale);
        let whole = std::fs::read(&path).unwrap();
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut longer = whole.clone();
        longer.push(0);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("cut after the header", whole[..HEADER].to_vec()),
            ("cut in the binary", whole[..HEADER + 500].to_vec()),
            ("a byte flipped", flipped),
            ("a byte added", longer),
            ("garbage", b"garbage".to_vec()),
        ];
        for (what, bytes) in cases {
            std::fs::write(&path, bytes).unwrap();
            assert!(matches!(check_entry(&path, 42), Read::Damaged(_)), "{what}");
            assert_eq!(read_entry(&path, 42), None, "{what}");
            assert!(!path.exists(), "{what}: not removed");
        }
        hassium_engine_abi::faults::make_fifo(&path);
        assert_eq!(read_entry(&path, 42), None, "a FIFO");
        assert!(std::fs::symlink_metadata(&path).is_err());
        hassium_engine_abi::faults::make_link_loop(&path);
        assert_eq!(read_entry(&path, 42), None, "a symlink loop");
        assert!(std::fs::symlink_metadata(&path).is_err());
        write_entry(&path, 42, &bin).unwrap();
        assert_eq!(read_entry(&path, 42), Some(bin));
    }
}
