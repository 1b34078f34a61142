"""Running a program once, timing the runners' start-up, and measuring one program
under every runner with its checksums compared.
"""

from __future__ import annotations

import argparse
import fcntl
import math
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.programs import Bench
from harness.report import fmt_time
from harness.runners import EMPTY_PROGRAMS, Result, Runner

CHECKSUM_RE = re.compile(r"^checksum: (\S+)\s*$")
# Lines of the report HASSIUM_STATS=1 prints at exit (vem/src/stats.rs).
STATS_BYTES_RE = re.compile(r"^\s*bytes moved\s+(\d+)", re.MULTILINE)
STATS_EXECUTE_RE = re.compile(r"^\s*time\s.*\bexecute ([0-9.]+)s", re.MULTILINE)


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
            if runner.kind in ("hassium", "jax"):
                # The warm cache of (stack, program) is filled by the first cold run,
                # which finds it empty; later cold runs get fresh directories.
                owner = runner.stack if runner.kind == "hassium" else runner.kind
                warm = tmp / f"cache-{owner}-{program}"
                cold = tmp / f"cache-{owner}-{program}-cold{rep}"
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
