#!/usr/bin/env python3
"""Per-operation overhead: nanoseconds per `c = a + b` under Hassium next to NumPy.

Hassium records operations lazily, so its cost per operation is the recording cost (plus
the flush, shown separately); NumPy executes each operation at once. Recording must stay
near a microsecond or programs made of many small operations get slower than NumPy.
Also compares the wall time of benches/programs/small_arrays.py under NumPy and under
`python -m hassium` with the reference stack.

Usage: benches/overhead.py [--ops N] [--sizes 1,100,10000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SMALL_ARRAYS = Path(__file__).resolve().parent / "programs" / "small_arrays.py"


def numpy_ns_per_op(size: int, ops: int) -> float:
    a, b = np.ones(size), np.ones(size)
    start = time.perf_counter_ns()
    for _ in range(ops):
        c = a + b  # noqa: F841 -- executed and dropped, as Hassium's recorded op is
    return (time.perf_counter_ns() - start) / ops


def hassium_ns_per_op(hs, size: int, ops: int) -> tuple[float, float]:
    """(ns per recorded op, ns per op including the flushes that execute them).

    Operations are recorded in chunks that stay below the runtime's flush threshold, and
    each chunk is flushed outside the recording clock: the first column is recording
    alone, the second adds execution in batches of the size a real loop produces.
    """
    # Each op records an instruction and a free: chunks stay below the threshold that
    # applies to arrays of this size, so no flush falls inside the recording clock.
    info = hs.info()
    small = size <= 16 * 1024  # vem's SMALL_ARRAY_ELEMENTS
    threshold = info["small_flush_threshold" if small else "flush_threshold"]
    chunk = max(1, threshold // 2 - 1)
    a, b = hs.ones(size), hs.ones(size)
    hs.flush()
    recording = flushing = 0
    done = 0
    while done < ops:
        n = min(chunk, ops - done)
        start = time.perf_counter_ns()
        for _ in range(n):
            c = a + b
        recorded = time.perf_counter_ns()
        hs.flush()
        np.asarray(c)  # the result really exists, not only its record
        flushing += time.perf_counter_ns() - recorded
        recording += recorded - start
        done += n
    return recording / ops, (recording + flushing) / ops


def program_times(
    runs: list[tuple[list[str], dict[str, str]]], reps: int
) -> list[float] | None:
    """Median wall time of each (command, environment), the runs interleaved so that
    drift in a shared machine's load falls on every command alike."""
    walls: list[list[float]] = [[] for _ in runs]
    for _ in range(reps):
        for (cmd, env), times in zip(runs, walls):
            start = time.perf_counter()
            proc = subprocess.run(
                cmd, check=False, capture_output=True, text=True, env=env
            )
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-3:]
                print(f"  {' '.join(cmd)} failed: {tail}", file=sys.stderr)
                return None
    return [statistics.median(t) for t in walls]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=100_000, help="operations per size")
    parser.add_argument(
        "--sizes", default="1,100,10000", help="comma-separated array sizes"
    )
    parser.add_argument(
        "--reps", type=int, default=3, help="runs of small_arrays per runner"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    try:
        import hassium as hs
    except ImportError as exc:
        hs = None
        print(f"note: hassium is not importable ({exc}); showing NumPy only\n")
    if hs is not None and not hasattr(hs, "flush"):
        print("note: this hassium has no flush(); showing NumPy only\n")
        hs = None

    header = f"{'size':>8} | {'numpy ns/op':>12}"
    if hs is not None:
        header += f" | {'hassium record ns/op':>20} | {'incl. flush ns/op':>17}"
    print(header)
    print("-" * len(header))
    for size in sizes:
        numpy_ns = min(numpy_ns_per_op(size, args.ops) for _ in range(3))
        row = f"{size:>8} | {numpy_ns:>12.0f}"
        if hs is not None:
            record, total = min(hassium_ns_per_op(hs, size, args.ops) for _ in range(3))
            row += f" | {record:>20.0f} | {total:>17.0f}"
        print(row)

    if hs is None:
        return 0
    print(
        "\nsmall_arrays (many operations on 100-element arrays), median wall time, runs interleaved:"
    )
    times = program_times(
        [
            ([sys.executable, str(SMALL_ARRAYS)], dict(os.environ)),
            (
                [sys.executable, "-m", "hassium", str(SMALL_ARRAYS)],
                dict(os.environ, HASSIUM_STACK="reference"),
            ),
        ],
        args.reps,
    )
    if times is None:
        return 1
    numpy_s, hassium_s = times
    print(f"  numpy {numpy_s:.3f} s, hassium (reference stack) {hassium_s:.3f} s,")
    print(
        f"  ratio numpy / hassium = {numpy_s / hassium_s:.2f} (> 1: Hassium is faster)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
