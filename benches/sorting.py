#!/usr/bin/env python3
"""Sorting and searching under Hassium next to NumPy, in one run.

Each case is timed in-process (best of --reps after one warm-up call, the result read
back so Hassium's lazy work is counted): NumPy's default sort (x86-simd-sort's
vectorised quicksort where the CPU has AVX-512 or AVX2), NumPy's stable sort, which is
what Hassium always does, and Hassium on its configured stack. Ratios are NumPy's time
over Hassium's: above 1 Hassium is faster.

Usage: benches/sorting.py [--n 2000000] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CASES = (
    "sort f8 1-D",
    "sort i8 1-D",
    "argsort f8 1-D",
    "sort f8 rows of 1000",
    "searchsorted f8",
    "unique of 1000 values",
)


def measure(n: int, reps: int, stable: bool) -> dict[str, float]:
    """Milliseconds per case with the numpy module in use (NumPy or Hassium)."""
    import numpy as np

    kind = {"kind": "stable"} if stable else {}
    rng = np.random.default_rng(0)
    x = np.asarray(rng.standard_normal(n))
    rows = np.asarray(rng.standard_normal((n // 1000, 1000)))
    ints = np.asarray(rng.integers(0, 1 << 40, n))
    labels = np.asarray(rng.integers(0, 1000, n))
    hay = np.sort(x)
    for a in (x, rows, ints, labels, hay):
        float(a.ravel()[0])

    def read(r):
        float(np.asarray(r).ravel()[-1])

    runs = {
        "sort f8 1-D": lambda: read(np.sort(x, **kind)),
        "sort i8 1-D": lambda: read(np.sort(ints, **kind)),
        "argsort f8 1-D": lambda: read(np.argsort(x, **kind)),
        "sort f8 rows of 1000": lambda: read(np.sort(rows, axis=1, **kind)),
        "searchsorted f8": lambda: read(np.searchsorted(hay, x)),
        "unique of 1000 values": lambda: read(np.unique(labels)),
    }
    out = {}
    for name in CASES:
        runs[name]()
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            runs[name]()
            best = min(best, time.perf_counter() - t)
        out[name] = best * 1e3
    return out


def child(mode: str, n: int, reps: int) -> dict[str, float]:
    cmd = [sys.executable]
    if mode == "hassium":
        cmd += ["-m", "hassium"]
    cmd += [__file__, "--child", mode, "--n", str(n), "--reps", str(reps)]
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env=os.environ
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=2_000_000, help="elements per array")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--child", choices=("numpy", "numpy-stable", "hassium"))
    args = p.parse_args()
    if args.child:
        stable = args.child == "numpy-stable"
        print(json.dumps(measure(args.n, args.reps, stable)))
        return
    got = {m: child(m, args.n, args.reps) for m in ("numpy", "numpy-stable", "hassium")}
    print(f"n = {args.n}, best of {args.reps}; ratio = NumPy time / Hassium time")
    head = ("case", "numpy", "numpy stable", "hassium", "vs numpy", "vs stable")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in CASES:
        a, s, h = (got[m][name] for m in ("numpy", "numpy-stable", "hassium"))
        print(
            f"| {name} | {a:.1f} ms | {s:.1f} ms | {h:.1f} ms | {a / h:.2f}× | {s / h:.2f}× |"
        )


if __name__ == "__main__":
    main()
