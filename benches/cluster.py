"""The cluster engine measured: communication against the halo minimum, weak scaling,
and the overhead each flush costs beyond the cpu engine's.

    .venv/bin/python benches/cluster.py [--quick] [--out benches/results/cluster.md]

Every run is `scripts/mpirun.sh P python -m hassium benches/cluster_probe.py PROGRAM`
(one cpu thread per rank; ranks may outnumber cores). A quantity per step is the
difference of two runs with different step counts divided by the difference of steps,
so start-up and the final reads cancel out; each process runs the program twice and
times the second run (benches/cluster_probe.py), after a first process filled the disk
cache. Ratios are printed beside the
measured values; nothing here is a test.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")
MPIRUN = str(ROOT / "scripts" / "mpirun.sh")
FAKE = str(ROOT / "scripts" / "fake-cluster.sh")
# How ranks start: "mpirun" (one host) or "fake-hosts" (one fake host per rank, over TCP).
LAUNCHER = {"how": "mpirun"}
PROBE = str(ROOT / "benches" / "cluster_probe.py")
PROGRAMS = ROOT / "benches" / "programs"

STENCIL_1D = """
import argparse
import numpy as np
p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default=1_000_000)
p.add_argument("--steps", type=int, default=20)
a = p.parse_args()
x = np.linspace(0.0, 1.0, a.n) ** 2
for _ in range(a.steps):
    x[1:-1] = 0.5 * (x[:-2] + x[2:])
print(f"checksum: {float(x.sum())!r}")
"""

FLUSHES = """
import argparse
import numpy as np
p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=200)
a = p.parse_args()
x = np.zeros(16)
for _ in range(a.steps):
    x = x + 1.0
    float(x[0])  # one flush and one read per step
print(f"checksum: {float(x.sum())!r}")
"""


def run(ranks, program, args, stack="cluster", threads=1):
    """Seconds of the program's run (inside the process) and the engine's counters."""
    env = dict(os.environ)
    env.update(
        {
            "HASSIUM_STACK": stack,
            "HASSIUM_ENGINES_CPU_THREADS": str(threads),
            "HASSIUM_FALLBACK": "silent",
        }
    )
    argv = [PY, "-m", "hassium", PROBE, str(program), *map(str, args)]
    if stack == "cluster" and LAUNCHER["how"] == "fake-hosts":
        argv = [FAKE, "-n", str(ranks), "--", *argv]
    elif stack == "cluster":
        argv = [MPIRUN, str(ranks), *argv]
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=900, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"{argv} failed:\n{proc.stderr[-3000:]}")
    for line in proc.stderr.splitlines():
        if line.startswith("CLUSTER-STATS "):
            stats = json.loads(line.split(" ", 1)[1])
            return stats["program_seconds"], stats
    sys.exit(f"no statistics from {argv}:\n{proc.stderr[-3000:]}")


def total(stats, name):
    return stats.get(f"rank0_{name}", 0.0) + stats.get(f"workers_{name}", 0.0)


def per_step(
    ranks, program, args, steps_flag, s1, s2, stack="cluster", reps=1, threads=1
):
    """(seconds per step, piece bytes per step, counters of the longer run); the best
    of `reps` pairs of runs."""
    best = None
    run(ranks, program, [*args, steps_flag, s2], stack, threads)  # fills the disk cache
    for _ in range(reps):
        t1, a = run(ranks, program, [*args, steps_flag, s1], stack, threads)
        t2, b = run(ranks, program, [*args, steps_flag, s2], stack, threads)
        dt = (t2 - t1) / (s2 - s1)
        if best is None or dt < best[0]:
            pieces = (total(b, "piece_bytes") - total(a, "piece_bytes")) / (s2 - s1)
            best = (dt, pieces, b)
    return best


def halo_table(quick, tmp):
    rows = []
    n = 400 if quick else 1000
    ranks_list = [2, 3] if quick or LAUNCHER["how"] != "mpirun" else [2, 3, 4]
    stencil = tmp / "stencil_1d.py"
    stencil.write_text(STENCIL_1D)
    cases = [
        # (name, program, args, steps flag, arrays exchanged, row length in elements)
        (
            "heat 5-point",
            PROGRAMS / "heat_equation.py",
            ["--n", n],
            "--iters",
            1,
            n + 2,
        ),
        ("1-D 3-point", stencil, ["--n", n * n], "--steps", 1, 1),
        (
            "shallow water",
            PROGRAMS / "shallow_water.py",
            ["--n", n],
            "--steps",
            3,
            n + 2,
        ),
    ]
    for name, prog, args, flag, arrays, row in cases:
        for ranks in ranks_list:
            _, pieces, stats = per_step(ranks, prog, args, flag, 2, 6)
            minimum = arrays * 2 * (ranks - 1) * row * 8
            rows.append(
                (
                    name,
                    ranks,
                    pieces,
                    minimum,
                    pieces / minimum if minimum else float("nan"),
                    int(total(stats, "gathered_kernels")),
                )
            )
    return rows


def weak_table(quick):
    rows = []
    heat_n = 1000 if quick else 2000
    bs_n = 2_000_000 if quick else 4_000_000
    long = 22 if quick else 42
    for name, prog, flag, size_flag, base, scale in [
        ("heat", PROGRAMS / "heat_equation.py", "--iters", "--n", heat_n, math.sqrt),
        ("black-scholes", PROGRAMS / "black_scholes.py", "--steps", "--n", bs_n, None),
    ]:
        times = {}
        for ranks in (1, 2):
            size = round(base * (scale(ranks) if scale else ranks))
            dt, _, _ = per_step(ranks, prog, [size_flag, size], flag, 2, long, reps=2)
            times[ranks] = (size, dt)
        (s1, t1), (s2, t2) = times[1], times[2]
        cpu_dt, _, _ = per_step(
            1, prog, [size_flag, s1], flag, 2, long, stack="cpu", reps=2
        )
        # The cpu engine's own weak scaling to 2 threads: what this machine allows.
        cpu2_dt, _, _ = per_step(
            1, prog, [size_flag, s2], flag, 2, long, stack="cpu", reps=2, threads=2
        )
        rows.append((name, s1, s2, cpu_dt, t1, cpu2_dt, t2, t1 / t2, cpu_dt / cpu2_dt))
    return rows


def overhead_table(quick, tmp):
    prog = tmp / "flushes.py"
    prog.write_text(FLUSHES)
    s1, s2 = (200, 1000) if quick else (200, 2000)
    base, _, _ = per_step(1, prog, [], "--steps", s1, s2, stack="cpu", reps=3)
    rows = []
    for ranks in (1, 2, 4, 8) if LAUNCHER["how"] == "mpirun" else (1, 2, 3):
        dt, _, _ = per_step(ranks, prog, [], "--steps", s1, s2, reps=3)
        rows.append((ranks, base * 1e6, dt * 1e6, (dt - base) * 1e6))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, fewer ranks")
    ap.add_argument("--out", help="also write the tables (markdown) here")
    ap.add_argument(
        "--fake-hosts",
        action="store_true",
        help="one host per rank, made from network namespaces (scripts/fake-cluster.sh; "
        "root), talking TCP",
    )
    args = ap.parse_args()
    if args.fake_hosts:
        LAUNCHER["how"] = "fake-hosts"
    started = time.time()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        halo = halo_table(args.quick, tmp)
        weak = weak_table(args.quick)
        over = overhead_table(args.quick, tmp)
    lines = [
        "## Communication per step against the halo minimum",
        "",
        (
            "Minimum: 2 (P - 1) rows of 8-byte values per array read across a rank boundary "
            "(heat: the grid; 1-D: one value; shallow water: h, u and v)."
        ),
        "",
        "| program | P | bytes sent per step | minimum | ratio | kernels gathered |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, p, got, minimum, ratio, gathered in halo:
        lines.append(
            f"| {name} | {p} | {got:.0f} | {minimum} | {ratio:.2f} | {gathered} |"
        )
    lines += [
        "",
        "## Weak scaling (one cpu thread per rank, work per rank fixed)",
        "",
        (
            "| program | size P=1 | size P=2 | cpu engine 1 thread, s/step | "
            "cluster P=1 | cpu engine 2 threads, size P=2 | cluster P=2 | "
            "cluster efficiency | cpu engine's own 1→2-thread efficiency |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s1, s2, cpu, t1, cpu2, t2, eff, ceff in weak:
        lines.append(
            f"| {name} | {s1} | {s2} | {cpu:.4f} | {t1:.4f} | {cpu2:.4f} | {t2:.4f} "
            f"| {eff:.0%} | {ceff:.0%} |"
        )
    lines += [
        "",
        "## Overhead per flush beyond the cpu engine's (a 16-element update and a read)",
        "",
        "| P | cpu engine µs/flush | cluster µs/flush | overhead µs |",
        "|---:|---:|---:|---:|",
    ]
    for p, base, dt, extra in over:
        lines.append(f"| {p} | {base:.1f} | {dt:.1f} | {extra:.1f} |")
    lines += [
        "",
        (
            f"({os.cpu_count()} cores; measured in {time.time() - started:.0f} s; "
            f"{'--quick' if args.quick else 'full sizes'}; "
            f"{'one fake host per rank, TCP' if args.fake_hosts else 'one host'})"
        ),
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
