"""Fault injection on the on-disk caches and the configuration (issue 45, items 3-6).

Every test runs Hassium in a subprocess with its own ``HOME`` and no ``XDG_CACHE_HOME``,
so the user's cache is never touched, and with a timeout, so a hang (a FIFO read, a
thread storm) fails instead of blocking. The cpu engine compiles in the foreground
(``tiered = false``), so a run's kernels are on disk when it exits. Each fault must give
the right numbers, at most one clear warning, and a cache that works again afterwards.
"""

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, USE_DOUBLE

pytestmark = [
    pytest.mark.skipif(
        AGAINST_NUMPY or USE_DOUBLE, reason="the caches are the compiled runtime's"
    ),
    # Each test starts its own processes on the cpu stack with their own settings: once
    # per suite run is enough, not once per stack and cpu variant.
    pytest.mark.skipif(
        os.environ.get("HASSIUM_STACK", "cpu") != "cpu"
        or "HASSIUM_ENGINES_CPU_SPECIALIZE" in os.environ,
        reason="runs its own cpu-stack processes; done in the plain cpu run",
    ),
]

TIMEOUT = 60

#: Two flushes, two different kernels; prints both results and the engine's counters.
PROGRAM = """
import json, hassium as hs
a = hs.arange(2000.0)
x = float(hs.sum(hs.sqrt(a * 2.0 + 1.0)))
y = float(hs.max(hs.sin(a) * 3.0 - a))
print(json.dumps({"x": x, "y": y, "stats": hs.stats()}))
"""

A = np.arange(2000.0)
WANT = (float(np.sum(np.sqrt(A * 2.0 + 1.0))), float(np.max(np.sin(A) * 3.0 - A)))

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def counter(stats, name):
    """The sum of every ``name`` in the (nested) stats dict."""
    if isinstance(stats, dict):
        return sum(
            (v if k == name and isinstance(v, (int, float)) else counter(v, name))
            for k, v in stats.items()
        )
    if isinstance(stats, list):
        return sum(counter(v, name) for v in stats)
    return 0


def environment(tmp, **changes):
    """This process's environment for a Hassium run with ``tmp/home`` as ``HOME``;
    ``changes`` set variables (None removes one)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HASSIUM_") and k != "XDG_CACHE_HOME"
    }
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        HASSIUM_STACK="cpu",
        HASSIUM_ENGINES_CPU_TIERED="false",
        HASSIUM_ENGINES_CPU_FINISH_AT_EXIT="false",
    )
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run(tmp, program=PROGRAM, cwd=None, **changes):
    """Runs ``program``; returns (returncode, parsed stdout or None, stderr lines)."""
    p = subprocess.run(
        [sys.executable, "-c", program],
        check=False,
        env=environment(tmp, **changes),
        cwd=cwd or tmp,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    out = None
    if p.returncode == 0 and p.stdout.strip():
        out = json.loads(p.stdout.strip().splitlines()[-1])
    return p.returncode, out, [line for line in p.stderr.splitlines() if line.strip()]


def ok(tmp, **changes):
    """A run that must succeed with NumPy's numbers; returns (stats, stderr lines)."""
    rc, out, err = run(tmp, **changes)
    assert rc == 0, "\n".join(err)
    assert (out["x"], out["y"]) == pytest.approx(WANT, rel=1e-12)
    return out["stats"], err


def kernel_dir(tmp):
    """The cpu engine's kernel directory under the default cache of ``tmp/home``."""
    dirs = list((tmp / "home" / ".cache" / "hassium").glob("cpu-*"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def mkfifo(path):
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def link_loop(path):
    path.unlink(missing_ok=True)
    os.symlink(path.name, path)


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def garbage(path):
    path.write_bytes(b"\x7fELF" + b"\xab" * 300)


def directory(path):
    path.unlink()
    path.mkdir()


FAULTS = {
    "truncated": truncate,
    "garbage": garbage,
    "fifo": mkfifo,
    "symlink-loop": link_loop,
    "directory": directory,
}


@pytest.fixture
def filled(tmp_path):
    """A cache filled by one run: two entries and their libraries."""
    stats, err = ok(tmp_path)
    assert counter(stats, "kernels_compiled") >= 2 and not err, err
    return tmp_path


def healed(tmp):
    """The next run loads every kernel from disk, silently."""
    stats, err = ok(tmp)
    assert not err, err
    assert counter(stats, "kernels_compiled") == 0, stats
    assert counter(stats, "cache_hits_disk") >= 2, stats


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", ["entry", "so"])
def test_a_damaged_cache_file_warns_once_and_heals(filled, kind, fault):
    files = sorted(kernel_dir(filled).glob(f"*.{kind}"))
    assert files, f"no .{kind} file"
    for f in files:
        FAULTS[fault](f)
    stats, err = ok(filled)
    assert counter(stats, "kernels_compiled") >= 1
    warnings = [line for line in err if "damaged" in line]
    assert warnings and all(w.startswith("hassium: cpu engine: ") for w in warnings), (
        err
    )
    assert len(warnings) == len(set(warnings)) and len(err) == len(warnings), err
    healed(filled)


def test_two_swapped_entries_are_never_called_as_each_other(filled):
    one, two = sorted(kernel_dir(filled).glob("*.entry"))[:2]
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    stats, err = ok(filled)
    assert counter(stats, "kernels_compiled") == 2, stats
    assert len(err) == 2 and all("names kernel" in line for line in err), err
    healed(filled)


@pytest.mark.skipif(IS_ROOT, reason="root reads a file of mode 000 anyway")
def test_an_unreadable_entry_is_rebuilt(filled):
    for f in kernel_dir(filled).glob("*.entry"):
        f.chmod(0)
    ok(filled)


def test_without_a_usable_home_nothing_is_written_in_the_working_directory(tmp_path):
    for i, home in enumerate([None, "", "relative/home"]):
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        rc, out, err = run(tmp_path, cwd=cwd, HOME=home)
        assert rc == 0 and (out["x"], out["y"]) == pytest.approx(WANT), err
        assert list(cwd.iterdir()) == [], f"HOME={home!r} wrote into the cwd"
        assert not any("warn" in line.lower() for line in err), err


def test_the_cache_follows_xdg_cache_home_and_is_private(tmp_path):
    xdg = tmp_path / "xdg"
    ok(tmp_path, XDG_CACHE_HOME=str(xdg))
    root = xdg / "hassium"
    assert stat.S_IMODE(root.stat().st_mode) & 0o077 == 0
    assert list(root.glob("cpu-*")), list(root.iterdir())
    assert not (tmp_path / "home" / ".cache").exists()


def refused(tmp, root):
    """A run with the cache at ``root`` (prepared as someone else's or world-writable):
    right numbers, one warning naming it, nothing written into it."""
    before = sorted(root.iterdir())
    _, err = ok(tmp, HASSIUM_CACHE_DIR=str(root))
    assert len(err) == 1, err
    assert "not using cache directory" in err[0] and str(root) in err[0], err
    assert sorted(root.iterdir()) == before, "files written into a refused directory"
    return err[0]


def test_a_world_writable_cache_directory_is_refused(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    assert "writable by everyone" in refused(tmp_path, root)


@pytest.mark.skipif(not IS_ROOT, reason="chown to another user needs root")
def test_a_cache_directory_of_another_user_is_refused(tmp_path):
    # What an attacker prepares in /tmp for the old /tmp/hassium-<pid> fallback.
    root = tmp_path / "theirs"
    root.mkdir()
    os.chown(root, 65534, 65534)
    root.chmod(0o755)
    assert "uid 65534" in refused(tmp_path, root)


def test_an_unwritable_home_falls_back_to_a_private_temporary_directory(tmp_path):
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("not a directory")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    _, err = ok(tmp_path, HOME=str(blocker), TMPDIR=str(tmpdir))
    assert len(err) == 1 and "not using cache directory" in err[0], err
    assert list(tmpdir.iterdir()) == [], "the temporary directory was left behind"


def test_a_fifo_as_the_config_file_is_an_error_not_a_hang(tmp_path):
    fifo = tmp_path / "hassium.toml"
    os.mkfifo(fifo)
    rc, _, err = run(tmp_path, HASSIUM_CONFIG=str(fifo))
    assert rc != 0 and any("FIFO" in line and str(fifo) in line for line in err), err


def test_a_thread_count_beyond_the_bound_is_an_error_naming_the_key(tmp_path):
    rc, _, err = run(tmp_path, HASSIUM_ENGINES_CPU_THREADS="100000")
    assert rc != 0
    assert any("threads" in line and "100000" in line for line in err), err


def test_a_missing_compiler_is_said_once_and_kernels_run_interpreted(tmp_path):
    stats, err = ok(tmp_path, HASSIUM_ENGINES_CPU_COMPILER="/nonexistent/cc")
    assert err == [
        (
            "hassium: cpu engine: C compiler `/nonexistent/cc` not found; kernels run "
            "interpreted (slow). Install a C compiler or set [engines.cpu] compiler"
        )
    ]
    assert counter(stats, "interpreted") >= 2


def fake_compiler(tmp, body):
    cc = tmp / "fake-cc"
    cc.write_text("#!/bin/sh\n" + body)
    cc.chmod(0o755)
    return str(cc)


@pytest.mark.parametrize(
    "body",
    [
        'echo "fake 1.0"; exit 1\n',
        # Writes garbage where the library should be and reports success.
        'for a; do [ "$prev" = -o ] && printf garbage > "$a"; prev=$a; done; exit 0\n',
    ],
    ids=["exits-1", "writes-garbage"],
)
def test_a_broken_compiler_is_said_once_and_kernels_run_interpreted(tmp_path, body):
    cc = fake_compiler(tmp_path, body)
    stats, err = ok(tmp_path, HASSIUM_ENGINES_CPU_COMPILER=cc)
    assert len(err) == 1, err
    assert err[0].startswith(f"hassium: cpu engine: C compiler `{cc}` failed")
    assert err[0].endswith("kernels run interpreted (slow)"), err
    assert counter(stats, "interpreted") >= 2


def test_info_names_the_compiler_or_its_absence(tmp_path):
    def info(**changes):
        p = subprocess.run(
            [sys.executable, "-m", "hassium", "--info"],
            check=False,
            env=environment(tmp_path, **changes),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert p.returncode == 0, p.stderr
        return p.stdout

    cc = shutil.which("cc")
    assert os.path.realpath(cc) in info()
    assert "`/nonexistent/cc` not found" in info(
        HASSIUM_ENGINES_CPU_COMPILER="/nonexistent/cc"
    )


def test_a_process_killed_while_compiling_leaves_a_cache_that_works(tmp_path):
    go, started = tmp_path / "go", tmp_path / "started"
    cc = fake_compiler(
        tmp_path,
        f'case "$*" in *" -o "*) touch {started}; '
        f"while [ ! -e {go} ]; do sleep 0.02; done;; esac\n"
        'exec cc "$@"\n',
    )
    env = environment(tmp_path, HASSIUM_ENGINES_CPU_COMPILER=cc)
    p = subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not started.exists():
            assert p.poll() is None and time.monotonic() < deadline, "no compile began"
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=TIMEOUT)
    finally:
        go.touch()
        if p.poll() is None:
            p.kill()
    stats, err = ok(tmp_path, HASSIUM_ENGINES_CPU_COMPILER=cc)
    assert not err and counter(stats, "kernels_compiled") >= 2, err
    stats, err = ok(tmp_path, HASSIUM_ENGINES_CPU_COMPILER=cc)
    assert not err and counter(stats, "kernels_compiled") == 0, (err, stats)


def test_two_processes_filling_one_cache_at_once_both_succeed_and_it_heals(tmp_path):
    env = environment(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROGRAM],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0 and not err.strip(), err
        got = json.loads(out.strip().splitlines()[-1])
        assert (got["x"], got["y"]) == pytest.approx(WANT, rel=1e-12)
    healed(tmp_path)


def test_a_truncated_engine_library_is_a_clear_error_not_a_crash(tmp_path):
    import hassium

    pkg = pathlib.Path(hassium.__file__).parent
    lib = pkg / "libhassium_engine_cpu.so"
    if not lib.exists():
        pytest.skip(f"no engine library at {lib}")
    engines = tmp_path / "engines"
    engines.mkdir()
    cut = engines / "libhassium_engine_cpu.so"
    data = lib.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    rc, _, err = run(tmp_path, HASSIUM_ENGINES_CPU_LIBRARY=str(cut))
    assert rc > 0, f"exit status {rc} (a negative one is a signal)"
    assert any("cut short" in line and str(cut) in line for line in err), err
