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
once always pays, and JAX's device start-up, which it defers to the first operation.
`python -m hassium` starts its engine while NumPy is imported, so an empty program under it
pays for the part of the engine's start-up the imports do not hide, and that part is
start-up here too.

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
import json
import sys
import tempfile
from pathlib import Path

from harness.machine import core_scaling, machine_info, stream_bandwidth, stream_summary
from harness.measure import (
    fastest_startup,
    measure_program,
    startup_probe,
    startup_times,
)
from harness.programs import (
    BENCHES,
    DEFAULT_BENCH,
    RESULTS_DIR,
    UsageError,
    discover_programs,
    sizes_for,
)
from harness.report import Report
from harness.runners import Result, available_runners, select_runners


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
