"""The cluster stack under mpirun: the same bits as the cpu engine for every rank count,
C and C++ programs, and jobs that end with a clear message when a rank fails.

Every run goes through scripts/mpirun.sh (oversubscription, yielding idle ranks, one
cpu thread per rank, a time limit), from a temporary directory so nothing is written
into the checkout.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = str(ROOT / ".venv" / "bin" / "python")
MPIRUN = str(ROOT / "scripts" / "mpirun.sh")
BATTERY = str(ROOT / "tests" / "cluster" / "battery.py")


def run(argv, env=None, timeout=300, cwd=None):
    e = dict(os.environ)
    e.pop("HASSIUM_STACK", None)
    e.update(env or {})
    p = subprocess.run(
        argv,
        check=False,
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
        cwd=cwd,
    )
    return p.returncode, p.stdout, p.stderr


def cluster(np_, argv, env=None, timeout=300, cwd=None):
    e = {"HASSIUM_STACK": "cluster", "HASSIUM_MPI_TIMEOUT": str(timeout - 20)}
    e.update(env or {})
    return run([MPIRUN, str(np_), *argv], e, timeout, cwd)


@pytest.fixture(scope="module")
def cpu_lines(tmp_path_factory):
    rc, out, err = run(
        [PY, "-m", "hassium", BATTERY],
        {"HASSIUM_STACK": "cpu", "HASSIUM_FALLBACK": "silent"},
        cwd=tmp_path_factory.mktemp("cpu"),
    )
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) > 40, out
    return lines


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_every_result_has_the_cpu_engines_bits_for_any_rank_count(
    ranks, cpu_lines, tmp_path
):
    # Replicate nothing: every array, however small, is cut into blocks, so P exceeds
    # the rows of some of them.
    rc, out, err = cluster(
        ranks,
        [PY, "-m", "hassium", BATTERY],
        {"HASSIUM_ENGINES_CLUSTER_REPLICATE_BELOW": "0", "HASSIUM_FALLBACK": "silent"},
        cwd=tmp_path,
    )
    assert rc == 0, err
    assert out.splitlines() == cpu_lines


def test_small_arrays_replicated_give_the_same_bits(cpu_lines, tmp_path):
    rc, out, err = cluster(
        3, [PY, "-m", "hassium", BATTERY], {"HASSIUM_FALLBACK": "silent"}, cwd=tmp_path
    )
    assert rc == 0, err
    assert out.splitlines() == cpu_lines


HEAT = """
import numpy as np
n = {n}
u = np.zeros((n, n))
u[0, :] = 1.0
for _ in range({steps}):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
print(float(u.sum()))
import hassium, json
print(json.dumps(hassium.stats()["engine"]["extra"]))
"""


def test_a_stencil_sends_only_its_halo_rows(tmp_path):
    """The 5-point stencil on an n x n grid over P ranks sends, per step, one row each
    way across each of the P - 1 boundaries: 2 (P - 1) (n - 1) values (the n - 2 the
    stencil reads, and the one more element the contiguous piece spans)."""
    n, steps, ranks = 300, 6, 3
    prog = tmp_path / "heat.py"
    prog.write_text(HEAT.format(n=n, steps=steps))
    rc, out, err = cluster(ranks, [PY, "-m", "hassium", str(prog)], cwd=tmp_path)
    assert rc == 0, err
    extra = json.loads(out.splitlines()[-1])
    # A row's interior, plus the one element each extent carries past it.
    halo = 2 * (ranks - 1) * (n - 1) * 8 * steps
    pieces = extra["rank0_piece_bytes"] + extra["workers_piece_bytes"]
    assert pieces == halo, (pieces, halo, extra)
    assert extra["rank0_gathered_kernels"] == 0, extra


JACOBI = """
import numpy as np
n = 300
u = np.zeros((n, n))
u[0, :] = 1.0
for _ in range(6):
    new = np.zeros((n, n))
    new[0, :] = 1.0
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    u = new
print(repr(float(u.sum())), repr(float(u[150, 7])))
import hassium, json
print(json.dumps(hassium.stats()["engine"]["extra"]))
"""


def test_a_stencil_into_a_new_grid_computes_its_interior_while_the_halo_travels(
    tmp_path,
):
    """Each step's stencil writes a new grid: every rank runs the rows that read no halo
    while the halo rows travel, then the two border rows; the values are the cpu
    engine's. The in-place stencil (HEAT) must not be split so: its rows must all see
    the grid from before the step."""
    prog = tmp_path / "jacobi.py"
    prog.write_text(JACOBI)
    rc, cpu, err = run(
        [PY, "-m", "hassium", str(prog)], {"HASSIUM_STACK": "cpu"}, cwd=tmp_path
    )
    assert rc == 0, err
    rc, out, err = cluster(3, [PY, "-m", "hassium", str(prog)], cwd=tmp_path)
    assert rc == 0, err
    assert out.splitlines()[0] == cpu.splitlines()[0]
    extra = json.loads(out.splitlines()[-1])
    # One stencil per step, on each of the 3 ranks.
    assert extra["rank0_interior_kernels"] == 6, extra
    assert extra["workers_interior_kernels"] == 12, extra
    heat = tmp_path / "heat.py"
    heat.write_text(HEAT.format(n=300, steps=6))
    rc, out, err = cluster(3, [PY, "-m", "hassium", str(heat)], cwd=tmp_path)
    assert rc == 0, err
    extra = json.loads(out.splitlines()[-1])
    assert extra["rank0_interior_kernels"] == 0, extra
    assert extra["workers_interior_kernels"] == 0, extra


READS = """
import json
import numpy as np
import hassium

def received():
    return hassium.stats()["engine"]["extra"]["rank0_received_bytes"]

n, m = 300, 50
x = np.array([[float(i * m + j) for j in range(m)] for i in range(n)])
y = x * 2.0
hassium.flush()
r = [received()]
values = [float(y[0, 0])]
r.append(received())
values.append(y[-1, -1])
r.append(received())
values.append(y[-1, 3].item())
r.append(received())
y += 1.0
values.append(float(y[-1, 0]))
r.append(received())
values.append(sum(sum(row) for row in y.tolist()))
r.append(received())
print(json.dumps({"values": [float(v) for v in values],
                  "received": [b - a for a, b in zip(r, r[1:])]}))
"""


def test_reading_an_element_brings_home_only_the_block_holding_it(tmp_path):
    """float(x), x[i, j] and .item() gather the one block holding the element (none when
    rank 0 holds it), and only once; a whole read then gathers the blocks still away."""
    prog = tmp_path / "reads.py"
    prog.write_text(READS)
    env = {"HASSIUM_ENGINES_CLUSTER_REPLICATE_BELOW": "0"}
    rc, out, err = cluster(3, [PY, "-m", "hassium", str(prog)], env, cwd=tmp_path)
    assert rc == 0, err
    got = json.loads(out.splitlines()[-1])
    m, last = 50, 300 * 50 - 1
    total = sum(2.0 * i + 1.0 for i in range(300 * 50))
    assert got["values"] == [
        0.0,
        2.0 * last,
        2.0 * (last - m + 4),
        2.0 * (last - m + 1) + 1.0,
        total,
    ]
    block = 100 * m * 8  # 300 rows over 3 ranks
    # rank 0's own block; the last rank's; again (current); after a write, the last
    # rank's again; the rest (the middle rank's block) for the whole read.
    assert got["received"] == [0, block, 0, block, block], got


def test_c_and_cpp_examples_run_under_mpirun(tmp_path):
    pc = ROOT / "target" / "release" / "pkgconfig"
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "hassium"],
        capture_output=True,
        text=True,
        env={**os.environ, "PKG_CONFIG_PATH": str(pc)},
        check=True,
    ).stdout.split()
    heat = tmp_path / "heat"
    bs = tmp_path / "bs"
    subprocess.run(
        [
            "cc",
            "-O2",
            str(ROOT / "examples/c/heat_equation.c"),
            *flags,
            "-lm",
            "-o",
            heat,
        ],
        check=True,
    )
    subprocess.run(
        [
            "c++",
            "-O2",
            "-std=c++17",
            str(ROOT / "examples/cpp/black_scholes.cpp"),
            *flags,
        ]
        + ["-o", bs],
        check=True,
    )
    for ranks in (2, 3):
        rc, out, err = cluster(ranks, [str(heat), "64", "300"], cwd=tmp_path)
        assert rc == 0 and out.count(": OK") == 1, (out, err)
        rc, out, err = cluster(ranks, [str(bs), "50000", "3"], cwd=tmp_path)
        assert rc == 0 and out.count(": OK") == 1, (out, err)


def test_info_reports_ranks_and_hosts(tmp_path):
    rc, out, err = cluster(3, [PY, "-m", "hassium", "--info"], cwd=tmp_path)
    assert rc == 0, err
    assert re.search(r"MPI: 3 ranks on 1 host", out), out
    assert out.count("hassium info") == 1, out


def test_without_mpirun_the_cluster_stack_runs_as_one_rank_and_says_so(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text("import numpy as np\nprint(float((np.arange(10.0) ** 2).sum()))\n")
    rc, out, err = run(
        [PY, "-m", "hassium", str(prog)], {"HASSIUM_STACK": "cluster"}, 120, tmp_path
    )
    assert rc == 0 and out.strip() == "285.0", (out, err)
    assert err.count("running as one rank") == 1, err


def test_an_exception_on_rank_0_ends_every_rank_with_its_message(tmp_path):
    prog = tmp_path / "fail.py"
    prog.write_text(
        "import numpy as np\n"
        "a = np.ones((500, 500))\n"
        "print(float(a.sum()))\n"
        "raise ValueError('the program failed here')\n"
    )
    start = time.monotonic()
    rc, out, err = cluster(
        3, [PY, "-m", "hassium", str(prog)], timeout=120, cwd=tmp_path
    )
    assert time.monotonic() - start < 30
    assert rc != 0
    assert out.strip() == "250000.0"
    assert err.count("ValueError: the program failed here") == 1, err


def test_a_killed_worker_ends_the_job_within_seconds(tmp_path):
    prog = tmp_path / "loop.py"
    ready = tmp_path / "ready"
    prog.write_text(
        "import numpy as np, pathlib, sys\n"
        "u = np.ones((400, 400))\n"
        "float(u.sum())\n"
        f"pathlib.Path({str(ready)!r}).write_text('x')\n"
        "for i in range(10**7):\n"
        "    u = u * 1.0000001\n"
        "    float(u[0, 0])\n"
    )
    e = {
        **os.environ,
        "HASSIUM_STACK": "cluster",
        "HASSIUM_MPI_TIMEOUT": "100",
    }
    e.pop("HASSIUM_STATS", None)
    p = subprocess.Popen(
        [MPIRUN, "3", PY, "-m", "hassium", str(prog)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=e,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 90
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready.exists(), "the program never started"
        victim = worker_pid(str(prog), rank=2)
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        _, err = p.communicate(timeout=60)
        assert time.monotonic() - killed < 30
        assert p.returncode != 0
        assert "signal 9" in err or "Killed" in err or "killed" in err, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def worker_pid(prog, rank):
    """The process of `rank` running `prog` (found through its environment)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if prog.encode() in cmd and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(d.name)
    raise AssertionError(f"no process of rank {rank}")


def with_rank_1_differing(tmp_path, assignment):
    """Runs a short program on 2 ranks, rank 1 with `assignment` (NAME=value) in its
    environment: (exit status, stdout, stderr, seconds)."""
    prog = tmp_path / "p.py"
    prog.write_text("import numpy as np\nprint(float(np.ones(10).sum()))\n")
    argv = [PY, "-m", "hassium", str(prog)]
    start = time.monotonic()
    rc, out, err = run(
        [MPIRUN, "1", *argv, ":", "-np", "1", "env", assignment, *argv],
        {"HASSIUM_STACK": "cluster", "HASSIUM_MPI_TIMEOUT": "60"},
        90,
        tmp_path,
    )
    return rc, out, err, time.monotonic() - start


def test_a_bad_config_on_one_rank_ends_the_job_with_its_message(tmp_path):
    rc, _, err, seconds = with_rank_1_differing(
        tmp_path, "HASSIUM_ENGINES_CLUSTER_REPLICATE_BELOW=lots"
    )
    assert seconds < 30
    assert rc != 0
    assert "replicate_below" in err, err


def test_a_rank_from_another_build_is_refused(tmp_path):
    """Rank 1 loads a copy of the engine library that differs by one byte: the job ends
    at start-up, rank 0 naming the rank and the reason."""
    lib = ROOT / "bridge-python" / "python" / "hassium" / "libhassium_engine_cluster.so"
    other = tmp_path / "libhassium_engine_cluster.so"
    other.write_bytes(lib.read_bytes() + b"\0")
    rc, out, err, seconds = with_rank_1_differing(
        tmp_path, f"HASSIUM_ENGINES_CLUSTER_LIBRARY={other}"
    )
    assert seconds < 30
    assert rc != 0 and "10.0" not in out
    assert "rank 1 runs a different build" in err, err


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
