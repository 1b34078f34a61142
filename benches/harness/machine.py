"""The machine: its STREAM triad bandwidth, how vector arithmetic scales to two threads,
and what it is (CPU, packages, commit).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.programs import BENCH_DIR

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
