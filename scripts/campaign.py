#!/usr/bin/env python3
"""The differential campaign: N random programs per stack, compared with NumPy.

Runs the programs of tests/python/test_random_programs.py (seeds FIRST .. FIRST+N-1) on
each stack variant in parallel worker processes, and writes a summary -- programs run,
passed, mismatches with their seeds and messages, crashes and hangs, wall time and
programs per second per stack -- to the file named by --summary. Exits 1 if any program
mismatched, crashed or hung, 0 otherwise.

    scripts/campaign.py --programs 100000 --first 0 --summary campaign.txt
    scripts/campaign.py -n 2000 --stacks reference,cpu-fixed --jobs 2 --summary s.txt

Stack variants (one runtime per process, configured by environment variables):

    cpu-fixed     HASSIUM_STACK=cpu, shapes baked into kernels, no tiering (every kernel
                  runs compiled, not interpreted while gcc works)
    cpu-dynamic   the same with shapes passed as arguments
    cpu           the cpu stack as configured (tiered: new kernels start interpreted)
    reference     the reference interpreter
    opencl        the OpenCL engine (PoCL on a machine without a GPU)

Each worker runs a chunk of seeds and reports each program as it ends; a worker that dies
(a crash) or says nothing for --hang-seconds (a hang) is recorded against the program it
was running, and the chunk goes on in a new worker from the next seed. Works from a
fresh clone after scripts/setup.sh (it uses .venv/bin/python, or $PYTHON).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests" / "python"

VARIANTS = {
    "cpu-fixed": {
        "HASSIUM_STACK": "cpu",
        "HASSIUM_ENGINES_CPU_SPECIALIZE": "fixed",
        "HASSIUM_ENGINES_CPU_TIERED": "false",
    },
    "cpu-dynamic": {
        "HASSIUM_STACK": "cpu",
        "HASSIUM_ENGINES_CPU_SPECIALIZE": "dynamic",
        "HASSIUM_ENGINES_CPU_TIERED": "false",
    },
    "cpu": {"HASSIUM_STACK": "cpu"},
    "reference": {"HASSIUM_STACK": "reference"},
    "opencl": {"HASSIUM_STACK": "opencl"},
}


# ------------------------------------------------------------------------ the worker


def worker(first, count, out):
    """Runs programs first..first+count-1 on the stack this process's environment
    names, appending one JSON line per program to `out` (and a "start" line before
    each, so a crash names its program)."""
    sys.path.insert(0, str(TESTS))
    import pytest
    from test_random_programs import check_program

    if os.environ.get("HASSIUM_TEST_AGAINST", "") == "numpy":
        import numpy as module  # checks the programs and this runner, not Hassium
    else:
        import hassium as module

    with open(out, "a", buffering=1) as log:
        for seed in range(first, first + count):
            log.write(json.dumps({"start": seed}) + "\n")
            begin = time.perf_counter()
            try:
                check_program(module, seed)
                record = {"seed": seed, "ok": True}
            except (pytest.fail.Exception, AssertionError) as error:
                record = {"seed": seed, "ok": False, "why": str(error)}
            except Exception as error:  # noqa: BLE001 -- the harness itself failed
                record = {
                    "seed": seed,
                    "ok": False,
                    "why": f"harness error {type(error).__name__}: {error}",
                }
            record["seconds"] = round(time.perf_counter() - begin, 4)
            log.write(json.dumps(record) + "\n")


# ------------------------------------------------------------------ the orchestrator


class Chunk:
    """A range of seeds of one stack, run by one worker process at a time."""

    def __init__(self, stack, first, count, workdir):
        self.stack, self.next, self.end = stack, first, first + count
        self.log = Path(workdir) / f"{stack}-{first}.jsonl"
        self.proc = None
        self.read_to = 0
        self.last_news = time.monotonic()
        self.running = None  # the seed started but not finished
        self.results = []
        self.exits = []  # worker failures outside any program
        self.stalls = 0
        self.first_in_worker = first

    def start(self, python):
        env = dict(os.environ, **VARIANTS[self.stack])
        env.setdefault("HASSIUM_FALLBACK", "silent")
        count = self.end - self.next
        self.first_in_worker = self.next
        self.proc = subprocess.Popen(
            [python, __file__, "--worker", str(self.next), str(count), str(self.log)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
        self.last_news = time.monotonic()

    def poll(self):
        """Reads what the worker reported; returns True while it runs."""
        if self.log.exists():
            with open(self.log) as f:
                f.seek(self.read_to)
                lines = f.readlines()
                if lines and not lines[-1].endswith("\n"):
                    lines.pop()  # half a line: read it next time
                self.read_to += sum(len(x.encode()) for x in lines)
            for line in lines:
                record = json.loads(line)
                self.last_news = time.monotonic()
                if "start" in record:
                    self.running = record["start"]
                else:
                    self.results.append(record)
                    self.running = None
                    self.next = record["seed"] + 1
        return self.proc.poll() is None

    def lost(self, what, stderr=""):
        """The worker died or hung on `self.running`: record it, go on after it."""
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        if self.running is None:
            # Between programs (starting, or exiting after its last one): the
            # worker's own failure, counted against the program after the last one
            # it finished, which is run again in a new worker unless none is left.
            self.exits.append(f"{what} after seed {self.next - 1}\n{tail}")
            if self.next == self.first_in_worker:
                self.stalls += 1
            if self.stalls >= 2:  # it cannot even start: give the chunk up
                self.exits.append(f"gave up: seeds {self.next}..{self.end - 1} not run")
                self.next = self.end
            return
        seed = self.running
        self.results.append({"seed": seed, "ok": False, "why": f"{what}\n{tail}"})
        self.next, self.running = seed + 1, None


def orchestrate(args):
    stacks = [s.strip() for s in args.stacks.split(",") if s.strip()]
    unknown = [s for s in stacks if s not in VARIANTS]
    if unknown:
        sys.exit(f"campaign: unknown stacks {unknown}; choose from {list(VARIANTS)}")
    python = args.python
    workdir = tempfile.mkdtemp(prefix="hassium-campaign-")
    chunk = max(1, min(args.chunk, -(-args.programs // max(1, args.jobs))))
    pending = []
    for stack in stacks:
        for first in range(args.first, args.first + args.programs, chunk):
            count = min(chunk, args.first + args.programs - first)
            pending.append(Chunk(stack, first, count, workdir))
    running, done = [], []
    began = time.monotonic()
    busy = {s: 0.0 for s in stacks}  # worker-seconds per stack
    starts = {}
    while pending or running:
        while pending and len(running) < args.jobs:
            c = pending.pop(0)
            c.start(python)
            starts[id(c)] = time.monotonic()
            running.append(c)
        time.sleep(0.2)
        for c in list(running):
            alive = c.poll()
            if alive and time.monotonic() - c.last_news > args.hang_seconds:
                c.proc.kill()
                c.proc.wait()
                c.poll()
                c.lost(f"hang: no progress for {args.hang_seconds} s")
                alive = False
            elif not alive:
                c.poll()
                stderr = c.proc.stderr.read().decode(errors="replace")
                if c.proc.returncode != 0 or c.next < c.end:
                    c.lost(f"worker exited with status {c.proc.returncode}", stderr)
            if not alive:
                busy[c.stack] += time.monotonic() - starts.pop(id(c))
                running.remove(c)
                if c.next < c.end:
                    pending.insert(0, c)  # the rest of the chunk, in a new worker
                else:
                    done.append(c)
        if args.progress:
            ran = sum(len(c.results) for c in done + running + pending)
            total = args.programs * len(stacks)
            print(f"\rcampaign: {ran}/{total}", end="", file=sys.stderr, flush=True)
    wall = time.monotonic() - began
    if args.progress:
        print(file=sys.stderr)
    return summarise(args, stacks, done, busy, wall, workdir)


def summarise(args, stacks, done, busy, wall, workdir):
    lines = [
        "# Hassium differential campaign",
        "",
        (
            f"seeds {args.first} .. {args.first + args.programs - 1} per stack, "
            f"{args.jobs} worker processes, wall time {wall:.1f} s, "
            f"python {args.python}"
        ),
        "",
        "| stack | programs | passed | failed | worker-seconds | programs/s per worker |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    failures, exits = [], []
    for stack in stacks:
        results = [r for c in done if c.stack == stack for r in c.results]
        bad = [r for r in results if not r["ok"]]
        rate = len(results) / busy[stack] if busy[stack] else 0.0
        lines.append(
            f"| {stack} | {len(results)} | {len(results) - len(bad)} | {len(bad)} "
            f"| {busy[stack]:.1f} | {rate:.2f} |"
        )
        failures += [(stack, r) for r in sorted(bad, key=lambda r: r["seed"])]
        exits += [(stack, e) for c in done if c.stack == stack for e in c.exits]
    lines += [
        "",
        f"failures: {len(failures)}, worker failures between programs: {len(exits)}",
    ]
    for stack, e in exits:
        lines += ["", f"## {stack} worker", "", "```", e, "```"]
    for stack, r in failures:
        lines += ["", f"## {stack} seed {r['seed']}", "", "```", r["why"], "```"]
        lines.append(
            f"rerun: HASSIUM_TEST_RANDOM_FIRST={r['seed']} "
            "HASSIUM_TEST_RANDOM_PROGRAMS=1 "
            + " ".join(f"{k}={v}" for k, v in VARIANTS[stack].items())
            + " .venv/bin/python -m pytest tests/python/test_random_programs.py"
        )
    Path(args.summary).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[: 6 + len(stacks) + 2]))
    print(f"summary written to {args.summary}; worker logs in {workdir}")
    return 1 if failures or exits else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-n", "--programs", type=int, default=1000, help="per stack")
    p.add_argument("--first", type=int, default=0, help="the first seed")
    p.add_argument(
        "--stacks",
        default="cpu-fixed,cpu-dynamic,reference,opencl",
        help=f"comma-separated, of {', '.join(VARIANTS)}",
    )
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--chunk", type=int, default=500, help="seeds per worker process")
    p.add_argument("--hang-seconds", type=float, default=600.0)
    p.add_argument("--summary", required=True, help="the summary file to write")
    p.add_argument(
        "--python",
        default=os.environ.get("PYTHON", str(REPO / ".venv" / "bin" / "python")),
    )
    p.add_argument("--progress", action="store_true", help="count on stderr")
    return orchestrate(p.parse_args())


if __name__ == "__main__":
    sys.exit(main())
