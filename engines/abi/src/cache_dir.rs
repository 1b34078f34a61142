//! Where the on-disk caches live, and opening them safely.
//!
//! A cache directory holds C source that is compiled and loaded into the process, and
//! program binaries handed to the OpenCL driver: whoever can write there can run code as
//! the user. So a cache directory is used only when it is a directory owned by the
//! effective user and writable by nobody else; one that is not is refused with one
//! warning, and the process works in a fresh private temporary directory instead (made
//! like `mkdtemp`: an unpredictable name, mode 0700), removed at exit.
//!
//! Locations follow the XDG base-directory rules and never the working directory:
//! `~/.cache/…` means `$XDG_CACHE_HOME/…` when that is set and absolute, else
//! `$HOME/.cache/…` when `HOME` is set, non-empty and absolute; other `~/…` paths need
//! such a `HOME`. Without one there is no persistent cache at all.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What a configured `cache_dir` means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheLocation {
    /// `""`: no disk cache.
    Off,
    /// An absolute directory.
    At(PathBuf),
    /// A `~/` path without a usable `HOME` (or `XDG_CACHE_HOME`): no persistent cache.
    NoHome(String),
}

/// An absolute path from the environment variable `var`, if it is set, non-empty and
/// absolute (a relative one would name a folder in whatever directory the program runs).
fn absolute_env(var: &str) -> Option<PathBuf> {
    let v = std::env::var_os(var)?;
    let p = PathBuf::from(v);
    p.is_absolute().then_some(p)
}

/// The user's cache home by the XDG rules: `$XDG_CACHE_HOME`, else `$HOME/.cache`, each
/// only when absolute.
pub fn cache_home() -> Option<PathBuf> {
    absolute_env("XDG_CACHE_HOME").or_else(|| Some(absolute_env("HOME")?.join(".cache")))
}

/// The user's configuration home by the XDG rules (`$XDG_CONFIG_HOME`, else
/// `$HOME/.config`, each only when absolute).
pub fn config_home() -> Option<PathBuf> {
    absolute_env("XDG_CONFIG_HOME").or_else(|| Some(absolute_env("HOME")?.join(".config")))
}

/// Reads a configured `cache_dir`: `""` is no cache; `~/.cache/x` is `x` under
/// [`cache_home`]; `~/x` is under an absolute `$HOME`; an absolute path is itself. A
/// relative path is an error: it would put the cache wherever the program happens to run.
pub fn cache_location(configured: &str) -> Result<CacheLocation, String> {
    if configured.is_empty() {
        return Ok(CacheLocation::Off);
    }
    let no_home = || {
        CacheLocation::NoHome(format!(
            "`{configured}` needs $HOME (or $XDG_CACHE_HOME) set to an absolute path"
        ))
    };
    if configured == "~/.cache" || configured.starts_with("~/.cache/") {
        let rest = configured["~/.cache".len()..].trim_start_matches('/');
        return Ok(cache_home().map_or_else(no_home, |h| CacheLocation::At(h.join(rest))));
    }
    if let Some(rest) = configured.strip_prefix("~/") {
        return Ok(absolute_env("HOME").map_or_else(no_home, |h| CacheLocation::At(h.join(rest))));
    }
    let p = PathBuf::from(configured);
    if p.is_absolute() {
        Ok(CacheLocation::At(p))
    } else {
        Err(format!(
            "`cache_dir` must be absolute or start with `~/`, got \"{configured}\" (\"\" = no disk cache)"
        ))
    }
}

/// A directory that caches may use: the configured one, or a private temporary one.
#[derive(Clone, Debug)]
pub struct CacheRoot {
    pub path: PathBuf,
    /// Whether files written here outlive the process (false for the temporary one).
    pub persistent: bool,
}

/// Why `dir` (existing) must not hold a cache, if it must not: not a directory, owned by
/// another user, or writable by group or others.
pub fn unsafe_dir_reason(dir: &Path) -> Option<String> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => return Some(e.to_string()),
    };
    if !meta.is_dir() {
        return Some("it is not a directory".into());
    }
    // SAFETY: plain syscall without arguments.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Some(format!("it belongs to uid {}, not to uid {me}", meta.uid()));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Some(format!(
            "it is writable by {} (mode {mode:04o}; `chmod go-w` it to use it)",
            if mode & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            }
        ));
    }
    None
}

/// Creates `dir` (and missing parents) with mode 0700 for the last component; an
/// existing one is left as it is.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent)?;
        }
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Opens the cache directory `location`: created private
/// when missing, checked (see [`unsafe_dir_reason`]) when it exists. When it is off, or
/// cannot be used, the private temporary directory of this process (see
/// [`private_temp_dir`]) with `persistent = false`; `None` only when not even that can be
/// made. A refused or unusable directory is reported with `tracing::warn!` (once per
/// library and directory); no `HOME` only at `info`.
pub fn open_cache_root(location: &CacheLocation) -> Option<CacheRoot> {
    let refused = match location {
        CacheLocation::Off => None,
        CacheLocation::NoHome(why) => {
            tracing::info!("no disk cache: {why}");
            None
        }
        CacheLocation::At(dir) => match create_private_dir(dir) {
            Err(e) => Some(format!("cannot create it: {e}")),
            Ok(()) => match unsafe_dir_reason(dir) {
                None => {
                    return Some(CacheRoot {
                        path: dir.clone(),
                        persistent: true,
                    })
                }
                Some(why) => Some(why),
            },
        },
    };
    if let (Some(why), CacheLocation::At(dir)) = (refused, location) {
        warn_once(
            dir,
            &format!(
                "not using cache directory {}: {why}; using a private temporary directory (nothing is kept)",
                dir.display()
            ),
        );
    }
    private_temp_dir().map(|path| CacheRoot {
        path,
        persistent: false,
    })
}

/// Warns `message` about `dir` once per library.
fn warn_once(dir: &Path, message: &str) {
    static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if !warned.iter().any(|d| d == dir) {
        warned.push(dir.to_path_buf());
        tracing::warn!("{message}");
    }
}

/// The private temporary directory of this process (per library that asks): made once,
/// `mkdtemp`-style under `$TMPDIR` (an unpredictable name, mode 0700, so no other user
/// can have prepared it), and removed when the process exits normally. A process killed
/// leaves it behind, as `mkdtemp` users do. `None` when it cannot be made.
pub fn private_temp_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<(PathBuf, u32)>> = OnceLock::new();
    let made = DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("hassium-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .inspect_err(|e| tracing::warn!("cannot make a private temporary directory: {e}"))
            .ok()?
            .keep();
        // Checked like any cache directory: $TMPDIR could itself be someone else's.
        if let Some(why) = unsafe_dir_reason(&dir) {
            tracing::warn!("temporary directory {} refused: {why}", dir.display());
            return None;
        }
        REMOVE_AT_EXIT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((dir.clone(), std::process::id()));
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            // SAFETY: registers a plain `extern "C" fn()` of this library, which is never
            // unloaded; failure only leaves the directory behind.
            unsafe { libc::atexit(remove_temp_dirs) };
        });
        Some((dir, std::process::id()))
    });
    made.as_ref().map(|(d, _)| d.clone())
}

/// Temporary directories to remove at exit, each with the process that made it: a
/// forked child exiting must not remove its parent's.
static REMOVE_AT_EXIT: Mutex<Vec<(PathBuf, u32)>> = Mutex::new(Vec::new());

extern "C" fn remove_temp_dirs() {
    let Ok(list) = REMOVE_AT_EXIT.try_lock() else {
        return;
    };
    for (dir, pid) in list.iter() {
        if *pid == std::process::id() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Runs `f` with the environment variables `vars` set (None: removed), restoring them
    /// after. Tests touching the environment hold a lock so they do not interleave.
    fn with_env<T>(vars: &[(&str, Option<&str>)], f: impl FnOnce() -> T) -> T {
        static LOCK: Mutex<()> = Mutex::new(());
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let old: Vec<_> = vars
            .iter()
            .map(|(k, _)| (*k, std::env::var_os(k)))
            .collect();
        for (k, v) in vars {
            // SAFETY: serialised by LOCK; no other test of this crate reads these.
            unsafe {
                match v {
                    Some(v) => std::env::set_var(k, v),
                    None => std::env::remove_var(k),
                }
            }
        }
        let out = f();
        for (k, v) in old {
            // SAFETY: as above.
            unsafe {
                match v {
                    Some(v) => std::env::set_var(k, v),
                    None => std::env::remove_var(k),
                }
            }
        }
        out
    }

    #[test]
    fn the_default_cache_follows_xdg_and_never_the_working_directory() {
        let at = |p: &str| CacheLocation::At(PathBuf::from(p));
        let loc = |vars: &[(&str, Option<&str>)]| {
            with_env(vars, || cache_location("~/.cache/hassium").unwrap())
        };
        assert_eq!(
            loc(&[("XDG_CACHE_HOME", Some("/x/c")), ("HOME", Some("/h"))]),
            at("/x/c/hassium")
        );
        assert_eq!(
            loc(&[("XDG_CACHE_HOME", Some("rel")), ("HOME", Some("/h"))]),
            at("/h/.cache/hassium")
        );
        for home in [None, Some(""), Some("relative/home")] {
            let l = loc(&[("XDG_CACHE_HOME", None), ("HOME", home)]);
            assert!(
                matches!(l, CacheLocation::NoHome(_)),
                "HOME={home:?}: {l:?}"
            );
        }
        let other = with_env(&[("HOME", Some(""))], || cache_location("~/k").unwrap());
        assert!(matches!(other, CacheLocation::NoHome(_)), "{other:?}");
        assert_eq!(cache_location("").unwrap(), CacheLocation::Off);
        assert_eq!(cache_location("/abs/c").unwrap(), at("/abs/c"));
        let e = cache_location("cache").unwrap_err();
        assert!(e.contains("absolute") && e.contains("\"cache\""), "{e}");
    }

    #[test]
    fn a_new_cache_directory_is_private_and_an_existing_one_is_checked() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b/hassium");
        let got = open_cache_root(&CacheLocation::At(dir.clone())).unwrap();
        assert!(got.persistent);
        assert_eq!(got.path, dir);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        // World-writable: refused, a private temporary directory instead.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = unsafe_dir_reason(&dir).unwrap();
        assert!(why.contains("everyone") && why.contains("0777"), "{why}");
        let fallback = open_cache_root(&CacheLocation::At(dir.clone())).unwrap();
        assert!(!fallback.persistent);
        assert_ne!(fallback.path, dir);
        let m = std::fs::metadata(&fallback.path).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
        assert!(unsafe_dir_reason(&dir).unwrap().contains("group"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(unsafe_dir_reason(&dir), None);
        // A file where the directory should be.
        let file = root.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(
            !open_cache_root(&CacheLocation::At(file))
                .unwrap()
                .persistent
        );
    }

    /// Needs root (CI runs as root): a directory of another user, as one prepared in
    /// /tmp by an attacker, is refused whatever its mode.
    #[test]
    fn a_directory_of_another_user_is_refused() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: chown to another user needs root");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("theirs");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(unsafe_dir_reason(&dir).unwrap().contains("uid 65534"));
        let got = open_cache_root(&CacheLocation::At(dir.clone())).unwrap();
        assert!(!got.persistent && got.path != dir);
    }
}
