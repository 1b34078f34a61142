"""Run an unmodified NumPy example under NumPy and under Hassium, and compare.

    python examples/python/compare.py heat_equation.py 1000 50
    python examples/python/compare.py black_scholes.py 1000000 10

Each run is a fresh subprocess (`python prog.py args` and `python -m hassium prog.py
args`, with the same interpreter), timed end to end, start-up included. Hassium runs
twice: the first run compiles the kernels its cache lacks (running them interpreted
meanwhile) and caches them, the second takes them from the cache, as every later run of
the program does. Prints the wall times, the speed-ups (NumPy time / Hassium time) and
whether the printed checksums agree to a relative tolerance of 1e-9. Exits 1 when they
disagree or a run fails.
"""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKSUM = re.compile(r"checksum:\s*(\S+)")


def run(command):
    """(wall seconds, checksum, output) of one run; raises when it fails."""
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}"
        )
    match = CHECKSUM.search(proc.stdout)
    if match is None:
        raise RuntimeError(f"{' '.join(command)} printed no checksum:\n{proc.stdout}")
    return wall, float(match.group(1)), proc.stdout + proc.stderr


def agree(a, b, rtol=1e-9):
    return abs(a - b) <= rtol * max(abs(a), abs(b)) or a == b


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "program", help="an example (path, or a file name in examples/python)"
    )
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, help="the program's arguments"
    )
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter (default: this one)"
    )
    opts = parser.parse_args(argv)
    program = opts.program
    if not os.path.exists(program):
        program = os.path.join(HERE, program)
    name = os.path.basename(program)

    hassium = [opts.python, "-m", "hassium", program, *opts.args]
    try:
        numpy_s, numpy_sum, _ = run([opts.python, program, *opts.args])
        runs = [run(hassium)[:2] for _ in range(2)]
    except RuntimeError as err:
        print(f"{name}: FAILED\n{err}", file=sys.stderr)
        return 1
    same = all(agree(numpy_sum, checksum) for _, checksum in runs)
    print(f"{name} {' '.join(opts.args)}")
    print(f"  numpy              {numpy_s:8.3f} s   checksum {numpy_sum!r}")
    for label, (wall, checksum) in zip(("1st run", "2nd run"), runs):
        print(f"  hassium, {label}   {wall:8.3f} s   checksum {checksum!r}")
    first, second = (numpy_s / wall for wall, _ in runs)
    print(
        f"  speed-up           {first:.2f}x first run (compiling what the cache lacks), "
        f"{second:.2f}x second run (cached kernels); "
        f"results {'agree' if same else 'DIFFER'} (rtol 1e-9)"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
