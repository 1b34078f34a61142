#!/usr/bin/env python3
"""Side-by-side benchmark harness: every program under NumPy, its peers and Hassium.

Runners:
  numpy            `python benches/programs/<prog>.py` -- the reference for time and checksum
  numexpr, jax     `python benches/peers/<runner>_<prog>.py` where such a peer exists
  hassium-<stack>  `python -m hassium benches/programs/<prog>.py` with HASSIUM_STACK=<stack>,
                   for every stack `python -m hassium --list-stacks` names (none if that fails);
                   "-cold" runs start from an empty kernel cache, the others from a filled one.

Within one invocation the runners of a program alternate (A B C A B C ...) so that drifts of
the machine (other load, turbo, page cache) hit every runner alike. Each measurement is the
wall time of the subprocess minus the runner's start-up time (the same interpreter running
an empty program with the same imports), so interpreter and import costs do not hide the
computation. JAX times therefore include tracing and XLA compilation, which a script run
once always pays.

Hassium runs also report their kernels' bandwidth: the bytes the engine's kernels must
move at least (its own estimate, `HASSIUM_STATS=1`) over the time spent executing them, a
share of the STREAM triad measured in the same invocation (at the start and after each
program; the median of those measurements is the reference). A second probe times the same
vector arithmetic on one thread and on two at once: on a virtual machine whose two vCPUs
are hyperthreads of one core, or whose core a neighbour is using, two threads get far less
than twice the arithmetic, and compute-bound programs (Black-Scholes) lose their speed-up
with it. Its median ratio is printed with the results.

Every checksum is compared with NumPy's within the program's tolerance; a mismatch, a crash
or a timeout is reported as FAIL/CRASH/TIMEOUT and makes the exit status 1.

Usage: benches/run.py [--quick] [--programs a,b] [--runners numpy,jax,hassium] [--reps N]
                      [--size-scale F] [--no-stream] [--out DIR] [--timeout S]
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROGRAMS_DIR = BENCH_DIR / "programs"
PEERS_DIR = BENCH_DIR / "peers"
RESULTS_DIR = BENCH_DIR / "results"

PEER_RUNNERS = ("numexpr", "jax")
# Environment variable through which the Python bridge takes its kernel-cache directory.
CACHE_ENV = "HASSIUM_CACHE_DIR"
CHECKSUM_RE = re.compile(r"^checksum: (\S+)\s*$")
# Lines of the report HASSIUM_STATS=1 prints at exit (vem/src/stats.rs).
STATS_BYTES_RE = re.compile(r"^\s*bytes moved\s+(\d+)", re.MULTILINE)
STATS_EXECUTE_RE = re.compile(r"^\s*time\s.*\bexecute ([0-9.]+)s", re.MULTILINE)


def _pi_sampling_atol(sizes: dict[str, int]) -> float:
    """Five standard deviations of the difference of two independent Monte Carlo estimates
    of pi, so runtimes with different random generators agree unless something is wrong."""
    p = math.pi / 4.0
    samples = sizes["n"] * sizes["batches"]
    return 5.0 * math.sqrt(2.0) * 4.0 * math.sqrt(p * (1.0 - p) / samples)


@dataclass(frozen=True)
class Bench:
    """What the harness knows about one program.

    sizes: the full sizes (issue 6), passed explicitly so runs never depend on defaults.
    quick: the sizes for --quick. scale: the exponent with which --size-scale F multiplies
    each size parameter (chosen so the work grows about linearly with F); parameters not
    named are not scaled. rtol/atol: checksum tolerance against NumPy. bytes_moved: the
    estimated minimal memory traffic of one run, for streaming programs only.
    """

    sizes: dict[str, int]
    quick: dict[str, int]
    scale: dict[str, float] = field(default_factory=dict)
    rtol: float = 1e-6
    atol: Callable[[dict[str, int]], float] | None = None
    bytes_moved: Callable[[dict[str, int]], float] | None = None


BENCHES: dict[str, Bench] = {
    # Minimal traffic: spot and strike written once, then read once per expiry time.
    "black_scholes": Bench(
        {"n": 1_000_000, "steps": 10},
        {"n": 20_000, "steps": 2},
        {"n": 1},
        bytes_moved=lambda s: 16.0 * s["n"] * (1 + s["steps"]),
    ),
    # Minimal traffic: the grid read and written once per iteration (ping-pong buffers).
    "heat_equation": Bench(
        {"n": 2000, "iters": 50},
        {"n": 100, "iters": 5},
        {"n": 0.5},
        bytes_moved=lambda s: 16.0 * (s["n"] + 2) ** 2 * s["iters"],
    ),
    "shallow_water": Bench(
        {"n": 1000, "steps": 20}, {"n": 100, "steps": 5}, {"n": 0.5}
    ),
    "nbody": Bench(
        {"n": 1000, "steps": 10}, {"n": 100, "steps": 2}, {"n": 0.5}, rtol=1e-5
    ),
    # Traffic as NumPy-style code needs it: the float64 pair index written and read once
    # (8 bytes per term). A runtime that fuses the range into the sum needs none, so
    # fractions above 1 are possible here.
    "leibnitz_pi": Bench(
        {"n": 100_000_000, "chunk": 10_000_000},
        {"n": 200_000, "chunk": 50_000},
        {"n": 1},
        rtol=1e-10,
        bytes_moved=lambda s: 8.0 * s["n"],
    ),
    "montecarlo_pi": Bench(
        {"n": 10_000_000, "batches": 10, "seed": 42},
        {"n": 100_000, "batches": 2, "seed": 42},
        {"n": 1},
        rtol=0.0,
        atol=_pi_sampling_atol,
    ),
    # Minimal traffic: x written, x read for value and gradient, gradient written and read.
    "rosenbrock": Bench(
        {"n": 10_000_000},
        {"n": 100_000},
        {"n": 1},
        bytes_moved=lambda s: 32.0 * s["n"],
    ),
    "game_of_life": Bench(
        {"n": 1000, "steps": 20}, {"n": 100, "steps": 5}, {"n": 0.5}, rtol=0.0
    ),
    "lattice_boltzmann_d2q9": Bench(
        {"n": 500, "steps": 20}, {"n": 50, "steps": 3}, {"n": 0.5}
    ),
    "harris_corner": Bench({"n": 2400}, {"n": 200}, {"n": 0.5}, rtol=1e-3),
    "univariate_regression": Bench({"n": 10_000_000}, {"n": 100_000}, {"n": 1}),
    "kmeans_step": Bench(
        {"n": 500_000, "k": 8, "steps": 10},
        {"n": 10_000, "k": 8, "steps": 3},
        {"n": 1},
        rtol=1e-5,
    ),
    "matmul": Bench({"n": 1200}, {"n": 100}, {"n": 1 / 3}, rtol=1e-3),
    "small_arrays": Bench(
        {"n": 100, "steps": 20_000}, {"n": 100, "steps": 500}, {"steps": 1}
    ),
}
DEFAULT_BENCH = Bench({}, {})  # a program without an entry: its own defaults, rtol 1e-6

# Programs the runners' start-up time is measured with: the imports, nothing else.
EMPTY_PROGRAMS = {
    "numpy": "import numpy as np\n",
    "numexpr": "import numexpr\nimport numpy as np\n",
    "jax": 'import jax\njax.config.update("jax_enable_x64", True)\nimport jax.numpy as jnp\n',
    "hassium": "import numpy as np\n",
}


@dataclass(frozen=True)
class Runner:
    name: (
        str  # column title: numpy, numexpr, jax, hassium-<stack>, hassium-<stack>-cold
    )
    kind: str  # numpy | numexpr | jax | hassium
    stack: str | None = None
    cold: bool = False

    def script(self, program: str) -> Path | None:
        """The file this runner executes for a program, or None if it has no version of it."""
        if self.kind in PEER_RUNNERS:
            path = PEERS_DIR / f"{self.kind}_{program}.py"
            return path if path.exists() else None
        return PROGRAMS_DIR / f"{program}.py"

    def command(self, python: str, script: Path, args: list[str]) -> list[str]:
        prefix = [python, "-m", "hassium"] if self.kind == "hassium" else [python]
        return [*prefix, str(script), *args]

    def env(self, cache_dir: Path | None) -> dict[str, str]:
        env = dict(os.environ)
        if self.kind == "hassium":
            env["HASSIUM_STACK"] = self.stack or ""
            env["HASSIUM_STATS"] = "1"
            if cache_dir is not None:
                env[CACHE_ENV] = str(cache_dir)
        return env


class UsageError(Exception):
    """A command-line choice that names something that does not exist here."""


@dataclass
class Result:
    """One program under one runner: its repetitions and the worst status seen."""

    walls: list[float] = field(default_factory=list)
    checksums: list[float] = field(default_factory=list)
    # Hassium runs: (bytes the kernels moved, seconds executing them) per run.
    kernels: list[tuple[int, float]] = field(default_factory=list)
    status: str = "ok"  # ok | FAIL | CRASH | TIMEOUT
    detail: str = ""

    def mark(self, status: str, detail: str) -> None:
        if self.status == "ok":
            self.status, self.detail = status, detail


def hassium_stacks(python: str) -> list[str]:
    """Stacks the installed bridge offers, or [] when Hassium is not installed or broken."""
    try:
        proc = subprocess.run(
            [python, "-m", "hassium", "--list-stacks"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        if "No module named hassium" not in proc.stderr:
            tail = proc.stderr.strip().splitlines()[-1:]
            print(
                f"note: `-m hassium --list-stacks` failed {tail}; no Hassium runners",
                file=sys.stderr,
            )
        return []
    stacks = []
    for line in proc.stdout.splitlines():
        words = line.strip().split()
        if (
            words
            and not words[0].startswith("#")
            and re.fullmatch(r"[\w.-]+", words[0])
        ):
            stacks.append(words[0])
    return stacks


def available_runners(python: str) -> list[Runner]:
    runners = [Runner("numpy", "numpy")]
    for peer in PEER_RUNNERS:
        probe = subprocess.run(
            [python, "-c", f"import {peer}"], check=False, capture_output=True
        )
        if probe.returncode == 0:
            runners.append(Runner(peer, peer))
    for stack in hassium_stacks(python):
        runners.append(Runner(f"hassium-{stack}-cold", "hassium", stack, cold=True))
        runners.append(Runner(f"hassium-{stack}", "hassium", stack))
    return runners


def select_runners(available: list[Runner], wanted: str | None) -> list[Runner]:
    """Filter by --runners; NumPy always runs because it is the reference for checksums."""
    if wanted is None:
        return available
    names = {w.strip() for w in wanted.split(",") if w.strip()}
    known = {r.name for r in available} | {r.kind for r in available}
    unknown = names - known - {"numpy"}
    if unknown:
        raise UsageError(
            f"runner(s) {', '.join(sorted(unknown))} not available here; "
            f"available: {', '.join(r.name for r in available)}"
        )
    chosen = []
    for r in available:
        base = r.name.removesuffix("-cold")
        if r.kind == "numpy" or r.name in names or base in names or r.kind in names:
            chosen.append(r)
    return chosen


def discover_programs(wanted: str | None) -> list[str]:
    found = sorted(
        p.stem for p in PROGRAMS_DIR.glob("*.py") if not p.stem.startswith("_")
    )
    if wanted is None:
        return found
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    unknown = [n for n in names if n not in found]
    if unknown:
        raise UsageError(
            f"unknown program(s) {', '.join(unknown)}; known: {', '.join(found)}"
        )
    return names


def sizes_for(bench: Bench, quick: bool, scale: float) -> dict[str, int]:
    base = bench.quick if quick else bench.sizes
    sizes = {}
    for key, value in base.items():
        exponent = bench.scale.get(key, 0.0)
        sizes[key] = (
            value if exponent == 0.0 else max(8, round(value * scale**exponent))
        )
    return sizes


# Kernel traffic under which a bandwidth is not reported (see `cell_kernel_bandwidth`).
MIN_KERNEL_BYTES = 1 << 20


def kernel_traffic(stderr: str) -> tuple[int, float] | None:
    """(bytes moved, execute seconds) from the report HASSIUM_STATS=1 prints, or None."""
    moved = STATS_BYTES_RE.findall(stderr)
    spent = STATS_EXECUTE_RE.findall(stderr)
    if not moved or not spent:
        return None
    return int(moved[-1]), float(spent[-1])


@dataclass
class Run:
    """One run of a program: wall seconds, checksum (None if it gave none), status ("ok",
    "CRASH" for a non-zero exit or no checksum line, "TIMEOUT"), error text, and for
    Hassium what its kernels moved in what time."""

    wall: float
    checksum: float | None
    status: str
    error: str
    kernels: tuple[int, float] | None = None


def run_once(
    runner: Runner,
    script: Path,
    args: list[str],
    python: str,
    cache_dir: Path | None,
    timeout: float,
    expect_checksum: bool = True,
) -> Run:
    """Runs a program once."""
    cmd = runner.command(python, script, args)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=runner.env(cache_dir),
        )
    except subprocess.TimeoutExpired:
        return Run(timeout, None, "TIMEOUT", f"timed out after {timeout:.0f} s")
    wall = time.perf_counter() - start
    wait_for_finishing(cache_dir)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        return Run(wall, None, "CRASH", f"exit status {proc.returncode}: {tail}")
    kernels = kernel_traffic(proc.stderr) if runner.kind == "hassium" else None
    if not expect_checksum:
        return Run(wall, None, "ok", "", kernels)
    lines = proc.stdout.strip().splitlines()
    match = CHECKSUM_RE.match(lines[-1]) if lines else None
    if match is None:
        last = lines[-1:]
        error = f"no 'checksum: <float>' line ends stdout: {last}"
        return Run(wall, None, "CRASH", error, kernels)
    try:
        return Run(wall, float(match.group(1)), "ok", "", kernels)
    except ValueError:
        error = f"checksum is not a float: {match.group(1)!r}"
        return Run(wall, None, "CRASH", error, kernels)


def wait_for_finishing(cache_dir: Path | None) -> None:
    """Waits (untimed) for the process the cpu engine leaves at exit to finish the
    compiles the program started, so that it neither competes with the next run for
    cores nor leaves the next warm run a cache with holes. It holds
    `<cache_dir>/finishing.lock` shared while it works."""
    lock = cache_dir / "finishing.lock" if cache_dir is not None else None
    if lock is None or not lock.exists():
        return
    with lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)


def startup_probe(runner: Runner, python: str, tmp: Path) -> float | None:
    """Wall time of one run of a program that only does the runner's imports, or None
    when it failed (reported)."""
    script = tmp / f"empty_{runner.kind}.py"
    if not script.exists():
        script.write_text(EMPTY_PROGRAMS[runner.kind])
    cache = tmp / f"startup-cache-{runner.name}"
    run = run_once(runner, script, [], python, cache, 120, expect_checksum=False)
    if run.error:
        print(
            f"warning: start-up probe of {runner.name} failed: {run.error}",
            file=sys.stderr,
        )
        return None
    return run.wall


def startup_times(
    runners: list[Runner], python: str, tmp: Path, reps: int
) -> dict[str, list[float]]:
    """Start-up probes of every runner, `reps` each, after one untimed run.

    The untimed run comes first because the first import of a big package (JAX above
    all) reads it from disk, and a start-up measured cold is subtracted from warm runs.
    More probes join these between programs (see `main`); the start-up subtracted is the
    fastest of all (see `fastest_startup`)."""
    samples: dict[str, list[float]] = {}
    for runner in runners:
        startup_probe(runner, python, tmp)
        walls = [startup_probe(runner, python, tmp) for _ in range(reps)]
        samples[runner.name] = [w for w in walls if w is not None]
    return samples


def fastest_startup(samples: dict[str, list[float]]) -> dict[str, float]:
    """The start-up subtracted from each runner's walls: its fastest probe.

    The fastest, not the median: start-up is a fixed cost and noise only adds to it. A
    noisy probe subtracted from every run would inflate the speed-up of short programs
    (a median probe 50 ms high once left leibnitz_pi with 6 ms of "compute"). Probes are
    spread over the session (a batch at the start, one per runner before each program),
    because a batch taken at one moment can all be slow: right after the STREAM run,
    NumPy's fastest of 8 probes once came out 30 ms above its usual start-up, which cut
    every NumPy compute time by 30 ms and halved small_arrays' NumPy time."""
    return {name: min(walls) if walls else 0.0 for name, walls in samples.items()}


def within_tolerance(value: float, reference: float, rtol: float, atol: float) -> bool:
    if math.isnan(value) or math.isnan(reference):
        return False
    return abs(value - reference) <= atol + rtol * abs(reference)


STREAM_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int reps = atoi(argv[2]);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) return 1;
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = omp_get_wtime();
        #pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
        t = omp_get_wtime() - t;
        if (t < best) best = t;
    }
    printf("%.6f %.1f\n", 24.0 * n / best / 1e9, a[n / 2]);
    return 0;
}
"""


def build_c(tmp: Path, name: str, source: str, opt: str) -> Path | None:
    """`source` compiled with OpenMP for this CPU into `tmp/name`, or None without a
    working C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return None
    src, exe = tmp / f"{name}.c", tmp / name
    src.write_text(source)
    build = subprocess.run(
        [compiler, opt, "-march=native", "-fopenmp", str(src), "-o", str(exe)],
        check=False,
        capture_output=True,
        text=True,
    )
    return exe if build.returncode == 0 else None


def stream_bandwidth(tmp: Path, quick: bool, threads: int = 2) -> tuple[float, str]:
    """STREAM triad bandwidth in GB/s (24 bytes per element, STREAM's convention), best of
    several passes over arrays far larger than any cache."""
    n = 4_000_000 if quick else 20_000_000
    reps = 5 if quick else 10
    exe = build_c(tmp, "stream", STREAM_C, "-O3")
    if exe is not None:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread")
        proc = subprocess.run(
            [str(exe), str(n), str(reps)],
            check=False,
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode == 0:
            return float(proc.stdout.split()[0]), f"C triad, {threads} OpenMP threads"
    print(
        "warning: C STREAM triad failed; measuring with NumPy instead",
        file=sys.stderr,
    )
    import numpy as np

    a, b, c, tmp_arr = np.zeros(n), np.ones(n), np.full(n, 2.0), np.empty(n)
    best = math.inf
    for _ in range(reps):
        start = time.perf_counter()
        np.multiply(c, 3.0, out=tmp_arr)
        np.add(b, tmp_arr, out=a)
        best = min(best, time.perf_counter() - start)
    # NumPy's triad really moves 5 arrays (c, tmp written and read, b, a): count them all.
    return 40.0 * n / best / 1e9, "NumPy triad, 1 thread (no C compiler)"


def stream_summary(samples: list[tuple[float, str]]) -> tuple[float, str] | None:
    """The STREAM figure kernels are compared with: the median of the measurements taken
    through the run, with their range. Each is a best of several passes, but one taken
    at one moment is not the machine's bandwidth: on the shared build VM it read 26 to
    40 GB/s within an hour. Kernel bandwidths are medians over repetitions spread across
    the run, so the STREAM they are a share of is one too."""
    if not samples:
        return None
    values = [gbs for gbs, _ in samples]
    how = samples[0][1]
    if len(values) == 1:
        return values[0], how
    return statistics.median(values), (
        f"{how}; median of {len(values)} measurements spread over the run,"
        f" {min(values):.1f}–{max(values):.1f} GB/s"
    )


SCALING_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
typedef double v4 __attribute__((vector_size(32)));
/* Eight independent multiply-add chains: enough to keep a core's vector units busy. */
static double work(long iters) {
    v4 a[8], m = {1.0000001, 1.0000001, 1.0000001, 1.0000001}, c = {1e-9, 1e-9, 1e-9, 1e-9};
    for (int i = 0; i < 8; i++) a[i] = (v4){1, 2, 3, 4} * (i + 1) * 1e-3;
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < 8; i++) a[i] = a[i] * m + c;
    double s = 0;
    for (int i = 0; i < 8; i++) s += a[i][0] + a[i][3];
    return s;
}
int main(int argc, char **argv) {
    long iters = atol(argv[1]);
    int threads = atoi(argv[2]), reps = atoi(argv[3]);
    double sink = 0;
    /* One thread, then all together, back to back: each pair gives one ratio. */
    for (int r = 0; r < reps; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            t[k] = omp_get_wtime();
            #pragma omp parallel num_threads(k ? threads : 1) reduction(+ : sink)
            sink += work(iters);
            t[k] = omp_get_wtime() - t[k];
        }
        printf("%.6f\n", threads * t[0] / t[1]);
    }
    fprintf(stderr, "%g\n", sink);
    return 0;
}
"""


def core_scaling(tmp: Path, quick: bool, threads: int = 2) -> float | None:
    """How many threads' worth of vector arithmetic `threads` threads get: each runs the
    same multiply-add loop, and the result is `threads` x (time alone) / (time together).
    `threads` on separate cores give about `threads`; hyperthreads of one core, which
    share its floating-point units, give little more than 1. Compute-bound kernels (the
    Black-Scholes one) scale the same way, so this reads their speed-ups. On a shared
    virtual machine the share moves from minute to minute: the median of several pairs
    of runs is returned."""
    exe = build_c(tmp, "scaling", SCALING_C, "-O2")
    if exe is None:
        print("warning: core-scaling probe failed to build", file=sys.stderr)
        return None
    # A passive wait: a thread spinning after the shared run would slow the next lone one
    # on a core it shares.
    env = dict(os.environ, OMP_PROC_BIND="spread", OMP_WAIT_POLICY="passive")
    iters, reps = (2_000_000, 3) if quick else (20_000_000, 9)
    proc = subprocess.run(
        [str(exe), str(iters), str(threads), str(reps)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        return None
    return statistics.median(float(x) for x in proc.stdout.split())


def machine_info(python: str) -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    versions = []
    for package in ("numpy", "numexpr", "jax", "hassium"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        commit = subprocess.run(
            ["git", "-C", str(BENCH_DIR), "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        commit = ""
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return {
        "load": load,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "os": platform.platform(),
        "python": f"{platform.python_version()} ({python})",
        "packages": ", ".join(versions),
        "commit": commit or "unknown",
    }


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


# Compute times below this are start-up noise; ratios are computed with this floor.
MIN_COMPUTE = 1e-4


@dataclass
class Report:
    programs: list[str]
    runners: list[Runner]
    results: dict[tuple[str, str], Result]
    startup: dict[str, float]
    sizes: dict[str, dict[str, int]]
    stream: tuple[float, str] | None
    machine: dict[str, str]
    command: str
    quick: bool = False
    scaling: float | None = None

    def compute(self, program: str, runner: str) -> list[float] | None:
        res = self.results.get((program, runner))
        if res is None or not res.walls:
            return None
        return [max(w - self.startup[runner], MIN_COMPUTE) for w in res.walls]

    def median(self, program: str, runner: str) -> float | None:
        times = self.compute(program, runner)
        return statistics.median(times) if times else None

    def speedup(self, program: str, runner: str) -> float | None:
        res = self.results.get((program, runner))
        ref, other = self.median(program, "numpy"), self.median(program, runner)
        if res is None or res.status != "ok" or ref is None or other is None:
            return None
        return ref / other

    def cell_time(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None:
            return "–"
        if res.status != "ok":
            return res.status
        times = self.compute(program, runner)
        spread = (
            f" [{fmt_time(min(times))}–{fmt_time(max(times))}]"
            if len(times) > 1
            else ""
        )
        return fmt_time(statistics.median(times)) + spread

    def cell_speedup(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None:
            return "–"
        if res.status != "ok":
            return f"**{res.status}**"
        ratio = self.speedup(program, runner)
        return "–" if ratio is None else f"{ratio:.2f}×"

    def cell_bandwidth(self, program: str, runner: str) -> str:
        bench = BENCHES.get(program, DEFAULT_BENCH)
        median = self.median(program, runner)
        res = self.results.get((program, runner))
        if (
            bench.bytes_moved is None
            or median is None
            or res is None
            or res.status != "ok"
        ):
            return "–"
        gbs = bench.bytes_moved(self.sizes[program]) / median / 1e9
        frac = f" ({gbs / self.stream[0]:.0%})" if self.stream else ""
        return f"{gbs:.3g} GB/s{frac}"

    def cell_kernel_bandwidth(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None or res.status != "ok":
            return "–"
        rates = [b / s / 1e9 for b, s in res.kernels if b >= MIN_KERNEL_BYTES and s > 0]
        if not rates:
            # Kernels that compute from generators (a kept arange) and reduce move
            # almost nothing: a bandwidth of them would read as a near-zero share.
            return "– (no array traffic)" if res.kernels else "–"
        gbs = statistics.median(rates)
        frac = f" ({gbs / self.stream[0]:.0%})" if self.stream else ""
        return f"{gbs:.3g} GB/s{frac}"

    def table(
        self,
        cell: Callable[[str, str], str],
        programs: list[str] | None = None,
        runners: list[str] | None = None,
    ) -> str:
        names = runners or [r.name for r in self.runners]
        rows = [["program", *names]]
        for program in programs or self.programs:
            rows.append([program, *(cell(program, n) for n in names)])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = []
        for k, row in enumerate(rows):
            lines.append(
                "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"
            )
            if k == 0:
                lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        return "\n".join(lines)

    def failures(self) -> list[str]:
        out = []
        for (program, runner), res in self.results.items():
            if res.status != "ok":
                out.append(f"{res.status}: {program} under {runner}: {res.detail}")
        return out

    def markdown(self) -> str:
        streaming = [
            p for p in self.programs if BENCHES.get(p, DEFAULT_BENCH).bytes_moved
        ]
        m = self.machine
        parts = [
            "# Benchmark results",
            "",
            f"`{self.command}`",
            "",
            f"- Date: {m['date']}, commit {m['commit']}",
            f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} memory",
            f"- Load average (1, 5, 15 min) when the runs ended: {m['load']}",
            f"- OS: {m['os']}; Python {m['python']}",
            f"- Packages: {m['packages']}",
        ]
        if self.stream:
            parts.append(
                f"- STREAM triad: {self.stream[0]:.1f} GB/s ({self.stream[1]})"
            )
        if self.scaling:
            parts.append(
                f"- Vector arithmetic on 2 threads: {self.scaling:.2f}× one thread's"
                " throughput (2× on two separate cores; near 1× when they are"
                " hyperthreads sharing one core, which caps compute-bound kernels alike)"
            )
        startup = ", ".join(
            f"{r.name} {fmt_time(self.startup[r.name])}" for r in self.runners
        )
        if self.quick:
            parts.append(
                "- **--quick run: sizes are tiny, times are start-up noise, not results**"
            )
        parts += [
            (
                "- Start-up (empty program, fastest of the probes taken at the start and"
                f" before each program, subtracted below): {startup}"
            ),
            "",
            "## Speed-up over NumPy (NumPy time / runner time; > 1 is faster than NumPy)",
            "",
            self.table(self.cell_speedup),
            "",
            "## Compute time: median [min–max] of wall time minus start-up",
            "",
            self.table(self.cell_time),
        ]
        if streaming:
            parts += [
                "",
                "## Achieved bandwidth (estimated minimal traffic / time; share of STREAM)",
                "",
                self.table(self.cell_bandwidth, streaming),
            ]
        engines = [r.name for r in self.runners if r.kind == "hassium"]
        if engines:
            parts += [
                "",
                (
                    "## Kernel bandwidth (bytes the engine's kernels must move / time "
                    "executing them, median; share of STREAM)"
                ),
                "",
                self.table(self.cell_kernel_bandwidth, runners=engines),
            ]
        parts += ["", "## Sizes and checksums (NumPy)", ""]
        for program in self.programs:
            ref = self.results[(program, "numpy")].checksums
            sizes = " ".join(f"--{k} {v}" for k, v in self.sizes[program].items())
            value = repr(ref[0]) if ref else "none"
            parts.append(f"- {program} `{sizes or '(defaults)'}`: {value}")
        failures = self.failures()
        if failures:
            parts += ["", "## Failures", "", *(f"- {f}" for f in failures)]
        return "\n".join(parts) + "\n"

    def chart(self, path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        others = [r.name for r in self.runners if r.name != "numpy"]
        fig, ax = plt.subplots(figsize=(max(8.0, 0.9 * len(self.programs) + 2), 5.0))
        width = 0.8 / max(len(others), 1)
        for k, name in enumerate(others):
            xs, ys = [], []
            for i, program in enumerate(self.programs):
                ratio = self.speedup(program, name)
                if ratio is not None:
                    xs.append(i + (k - (len(others) - 1) / 2) * width)
                    ys.append(ratio)
            ax.bar(xs, ys, width=width, label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(self.programs)))
        ax.set_xticklabels(self.programs, rotation=35, ha="right")
        ax.set_ylabel("speed-up over NumPy (log scale)")
        ax.set_title(f"{self.machine['cpu']}, {self.machine['cores']} cores")
        if others:
            ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def measure_program(
    program: str,
    bench: Bench,
    sizes: dict[str, int],
    runners: list[Runner],
    reps: int,
    args: argparse.Namespace,
    tmp: Path,
    results: dict[tuple[str, str], Result],
) -> None:
    """Runs one program under every runner that has it, interleaved (A B C, A B C, ...),
    checking each checksum against NumPy's as soon as it arrives."""
    cli = [f for k, v in sizes.items() for f in (f"--{k}", str(v))]
    atol = bench.atol(sizes) if bench.atol else 0.0
    active = [r for r in runners if r.script(program) is not None]
    for runner in active:
        results[(program, runner.name)] = Result()
    for rep in range(reps):
        for runner in active:
            res = results[(program, runner.name)]
            cache = None
            if runner.kind == "hassium":
                # The warm cache of (stack, program) is filled by the first cold run,
                # which finds it empty; later cold runs get fresh directories.
                warm = tmp / f"cache-{runner.stack}-{program}"
                cold = tmp / f"cache-{runner.stack}-{program}-cold{rep}"
                cache = warm if (not runner.cold or rep == 0) else cold
            script = runner.script(program)
            run = run_once(runner, script, cli, args.python, cache, args.timeout)
            wall, checksum, status, err = run.wall, run.checksum, run.status, run.error
            if run.kernels is not None:
                res.kernels.append(run.kernels)
            if checksum is not None:
                res.walls.append(wall)
                res.checksums.append(checksum)
                ref = results[(program, "numpy")].checksums
                if not ref:
                    status, err = "FAIL", "NumPy gave no checksum to compare with"
                elif not within_tolerance(checksum, ref[0], bench.rtol, atol):
                    status = "FAIL"
                    err = (
                        f"checksum {checksum!r} != NumPy's {ref[0]!r} "
                        f"(rtol {bench.rtol:g}, atol {atol:g})"
                    )
            if status != "ok":
                res.mark(status, err)
            print(
                f"  {program:<24} {runner.name:<22} rep {rep + 1}/{reps} "
                f"{fmt_time(wall):>9}  {status}",
                file=sys.stderr,
            )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repetition")
    parser.add_argument("--programs", help="comma-separated programs (default: all)")
    parser.add_argument(
        "--runners", help="comma-separated runners or kinds (default: all)"
    )
    parser.add_argument("--reps", type=int, help="repetitions (default 3, --quick 1)")
    parser.add_argument(
        "--size-scale", type=float, default=1.0, help="multiply the work by F"
    )
    parser.add_argument(
        "--no-stream",
        action="store_true",
        help="skip the STREAM and core-scaling measurements",
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS_DIR, help="where latest.* go"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter for every run"
    )
    args = parser.parse_args()
    reps = args.reps if args.reps is not None else (1 if args.quick else 3)
    if reps < 1 or args.size_scale <= 0:
        parser.error("--reps must be >= 1 and --size-scale > 0")

    try:
        programs = discover_programs(args.programs)
        runners = select_runners(available_runners(args.python), args.runners)
    except UsageError as exc:
        parser.error(str(exc))
    print(f"programs: {', '.join(programs)}", file=sys.stderr)
    print(f"runners:  {', '.join(r.name for r in runners)}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="hassium-bench-") as tmp_name:
        tmp = Path(tmp_name)
        streams: list[tuple[float, str]] = []

        def measure_stream() -> None:
            if not args.no_stream:
                streams.append(stream_bandwidth(tmp, args.quick))
                print(
                    f"STREAM triad: {streams[-1][0]:.1f} GB/s ({streams[-1][1]})",
                    file=sys.stderr,
                )

        measure_stream()
        scaling = None if args.no_stream else core_scaling(tmp, args.quick)
        if scaling:
            print(f"vector arithmetic, 2 threads: {scaling:.2f}x one", file=sys.stderr)
        probes = startup_times(
            runners, args.python, tmp, 2 if args.quick else max(reps, 3)
        )

        results: dict[tuple[str, str], Result] = {}
        all_sizes = {}
        for program in programs:
            bench = BENCHES.get(program, DEFAULT_BENCH)
            sizes = all_sizes[program] = sizes_for(bench, args.quick, args.size_scale)
            for runner in runners:
                wall = startup_probe(runner, args.python, tmp)
                if wall is not None:
                    probes[runner.name].append(wall)
            measure_program(program, bench, sizes, runners, reps, args, tmp, results)
            measure_stream()
        startup = fastest_startup(probes)
        stream = stream_summary(streams)

    report = Report(
        programs,
        runners,
        results,
        startup,
        all_sizes,
        stream,
        machine_info(args.python),
        "benches/run.py " + " ".join(sys.argv[1:]),
        args.quick,
        scaling,
    )
    print()
    print("Speed-up over NumPy (> 1 is faster):")
    print(report.table(report.cell_speedup))
    print()
    print("Compute time (wall minus start-up), median [min–max]:")
    print(report.table(report.cell_time))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.md").write_text(report.markdown())
    raw = {
        "machine": report.machine,
        "stream_gbs": stream[0] if stream else None,
        "stream_samples_gbs": [gbs for gbs, _ in streams],
        "vector_scaling_2_threads": scaling,
        "startup_s": startup,
        "startup_probes_s": probes,
        "sizes": all_sizes,
        "results": {
            f"{p}/{r}": {
                "walls_s": v.walls,
                "checksums": v.checksums,
                "kernels_bytes_s": v.kernels,
                "status": v.status,
            }
            for (p, r), v in results.items()
        },
    }
    (args.out / "latest.json").write_text(json.dumps(raw, indent=1) + "\n")
    try:
        report.chart(args.out / "latest.png")
    except ImportError:
        print("warning: matplotlib is not installed; no chart written", file=sys.stderr)
    print(f"\nwrote {args.out / 'latest.md'}")

    failures = report.failures()
    if failures:
        print("\n" + "\n".join(f"!!! {f}" for f in failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
