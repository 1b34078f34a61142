"""``python -m hassium``: the examples give NumPy's results, the program sees Hassium as
``numpy`` while libraries get the real NumPy, and the informational options work."""

import os
import re
import subprocess
import sys

import pytest
from conftest import AGAINST_NUMPY, REPO, USE_DOUBLE

pytestmark = pytest.mark.skipif(
    AGAINST_NUMPY or USE_DOUBLE, reason="runs the installed hassium in subprocesses"
)

EXAMPLES = REPO / "examples" / "python"


def run(*args, env=None):
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run(
        [sys.executable, *args],
        check=False,  # the assertion below shows the output
        capture_output=True,
        text=True,
        cwd=REPO,
        env=full_env,
        timeout=300,
    )
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout, proc.stderr


def checksum(text):
    return float(re.search(r"checksum:\s*(\S+)", text).group(1))


@pytest.mark.parametrize(
    "program,args",
    [("heat_equation.py", ["60", "8"]), ("black_scholes.py", ["2000", "3"])],
)
def test_examples_under_hassium_give_numpys_checksum(program, args):
    path = str(EXAMPLES / program)
    numpy_out, _ = run(path, *args)
    hassium_out, _ = run("-m", "hassium", path, *args)
    expected, got = checksum(numpy_out), checksum(hassium_out)
    assert abs(got - expected) <= 1e-9 * abs(expected), (got, expected)


def test_one_example_moves_between_cpu_and_opencl_by_environment_alone():
    stacks = run("-m", "hassium", "--list-stacks")[0].split()
    if not {"cpu", "opencl"} <= set(stacks):
        pytest.fail(f"the cpu and opencl stacks must both be installed, found {stacks}")
    path = str(EXAMPLES / "heat_equation.py")
    results = {
        stack: checksum(
            run("-m", "hassium", path, "60", "8", env={"HASSIUM_STACK": stack})[0]
        )
        for stack in ("cpu", "opencl")
    }
    assert abs(results["cpu"] - results["opencl"]) <= 1e-9 * abs(results["cpu"]), (
        results
    )


def test_compare_script_reports_times_and_agreement():
    out, _ = run(str(EXAMPLES / "compare.py"), "heat_equation.py", "40", "4")
    assert "numpy" in out and "speed-up" in out
    assert "hassium, 1st run" in out and "hassium, 2nd run" in out
    assert "first run" in out and "second run" in out
    assert "agree" in out and "DIFFER" not in out


def test_the_program_sees_hassium_and_its_arguments():
    code = (
        "import sys, numpy as np, numpy.random as npr, numpy.linalg as la;"
        "from numpy.random import default_rng;"
        "print(np.__name__, npr.__name__, la.__name__, default_rng.__module__, sys.argv[1:]);"
        "print(type(np.arange(3) + 1).__module__)"
    )
    out, _ = run("-m", "hassium", "-c", code, "x", "--flag")
    first, second = out.strip().splitlines()
    assert first.split()[:4] == [
        "hassium",
        "hassium.random",
        "hassium.linalg",
        "hassium.random",
    ]
    assert "['x', '--flag']" in first
    assert second.startswith("hassium")


def test_a_script_gets_argv_and_runs_as_main(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import sys\nimport numpy as np\n"
        "if __name__ == '__main__':\n"
        "    print(sys.argv, float(np.sum(np.ones(int(sys.argv[1])))))\n"
    )
    out, _ = run("-m", "hassium", str(prog), "5")
    assert out.strip() == f"[{str(prog)!r}, '5'] 5.0"


def test_libraries_keep_the_real_numpy():
    code = (
        "import numpy as np, sys;"
        "import numpy.fft, numpy.ma;"
        "import scipy.special;"
        "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt;"
        "x = np.linspace(0.0, 1.0, 5);"
        "plt.plot(x, np.sin(x));"
        "plt.savefig(sys.argv[1]);"
        "print(np.__name__, numpy.fft.__name__, sys.modules['matplotlib.pyplot'].np.__name__,"
        " float(scipy.special.gamma(np.asarray([4.0]))[0]))"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out, _ = run("-m", "hassium", "-c", code, os.path.join(tmp, "plot.png"))
        assert os.path.getsize(os.path.join(tmp, "plot.png")) > 0
    assert out.split() == ["hassium", "numpy.fft", "numpy", "6.0"]


def test_info_prints_the_configuration():
    out, _ = run("-m", "hassium", "--info")
    assert out.startswith("hassium info:")
    for word in ("stack", "engine", "cache"):
        assert word in out.lower(), out


def test_list_stacks_prints_one_name_per_line():
    out, _ = run("-m", "hassium", "--list-stacks")
    names = out.split()
    assert names and all(re.fullmatch(r"[A-Za-z0-9_.-]+", n) for n in names)
    assert len(names) == len(out.strip().splitlines())


def test_stats_at_exit():
    _, err = run(
        "-m",
        "hassium",
        "--stats",
        "-c",
        "import numpy as np; print(float(np.ones(3).sum()))",
    )
    assert "hassium stats" in err
    _, err = run("-c", "import hassium as h; h.ones(3) + 1", env={"HASSIUM_STATS": "1"})
    assert "hassium stats" in err


def test_a_second_run_reads_its_fused_partitions_from_the_cache_and_mends_damaged_ones(
    tmp_path,
):
    """Partitions of batches slow to fuse are kept next to the kernels: the next run of
    the same program reads them instead of fusing again, and a damaged entry is fused
    again and rewritten, with the same results every time."""
    stack = os.environ.get("HASSIUM_STACK", "cpu")
    if stack not in ("cpu", "opencl"):
        pytest.skip(f"the {stack} stack keeps no cache directory")
    path = str(EXAMPLES / "black_scholes.py")
    env = {"HASSIUM_CACHE_DIR": str(tmp_path), "HASSIUM_STATS": "1"}

    def once():
        out, err = run("-m", "hassium", path, "3000", "4", env=env)
        from_disk = re.search(r"fuse cache\s+\d+ hits \((\d+) from disk\)", err)
        assert from_disk, err
        return checksum(out), int(from_disk.group(1))

    expected = checksum(run(path, "3000", "4")[0])
    first, from_disk = once()
    assert from_disk == 0
    parts = sorted(tmp_path.glob("fuse-*/*.part"))
    assert parts, "the first run kept no partition"
    sizes = [p.stat().st_size for p in parts]
    second, from_disk = once()
    assert from_disk >= 1
    for p in parts:
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    third, from_disk = once()
    assert from_disk == 0
    assert [p.stat().st_size for p in parts] == sizes, "damaged entries are rewritten"
    for got in (first, second, third):
        assert abs(got - expected) <= 1e-9 * abs(expected), (got, expected)


# The runner starts the runtime on a thread of its own while NumPy is imported (prestart in
# bridge-python/src/rt.rs). What that must not change: a program that forks at once, one
# that ends at once, and a configuration error, still raised at the first operation.


def test_a_program_that_forks_at_once_runs_in_both_processes(tmp_path):
    """The cpu engine serves both processes. An OpenCL engine cannot serve a process
    forked after it started, and under the runner it starts at launch: the child gets
    that error (not a hang), and HASSIUM_PRESTART=0 starts the engine at the first
    operation instead, in each process."""
    prog = tmp_path / "fork_at_once.py"
    prog.write_text(
        "import os\n"
        "import numpy as np\n"
        "pid = os.fork()\n"
        "try:\n"
        "    total = float(np.arange(100).sum())\n"
        "except RuntimeError as e:\n"
        "    assert pid == 0 and 'forked' in str(e), e\n"
        "    os._exit(4)\n"
        "if pid == 0:\n"
        "    os._exit(0 if total == 4950.0 else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('child', os.waitstatus_to_exitcode(status), 'parent', total)\n"
    )
    cases = [("cpu", None, "0"), ("opencl", None, "4"), ("opencl", "0", "0")]
    for stack, prestart, child in cases:
        env = {"HASSIUM_STACK": stack}
        if prestart is not None:
            env["HASSIUM_PRESTART"] = prestart
        out, _ = run("-m", "hassium", str(prog), env=env)
        assert out.split() == ["child", child, "parent", "4950.0"], (
            stack,
            prestart,
            out,
        )


def test_numpys_import_writes_no_environment_beside_the_start_thread(
    tmp_path,
):
    """NumPy's import writes the environment (`os.putenv('OPENBLAS_MAIN_FREE')`, then
    `unsetenv`), and so do programs and `--stats`; glibc's environment must not be
    written while another thread reads it, as the engine's start thread does (a `general
    protection fault` in that thread once ended a CI run). The package sets the variable
    before the thread starts, so NumPy's import writes nothing, and the runner joins the
    thread and removes the variable before the program runs: the program finds NumPy's
    environment (the user's own value kept). (Threads a driver starts from the start
    thread inherit its name and outlive it, so the name tells nothing.)"""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    # Records direct calls of `os.putenv` / `os.unsetenv`, NumPy's way (str keys;
    # `os.environ`, which the package and the runner use, passes bytes).
    (hooks / "sitecustomize.py").write_text(
        "import os\n"
        "writes = []\n"
        "_put, _unset = os.putenv, os.unsetenv\n"
        "def _p(k, v):\n"
        "    if isinstance(k, str):\n"
        "        writes.append(k)\n"
        "    _put(k, v)\n"
        "def _u(k):\n"
        "    if isinstance(k, str):\n"
        "        writes.append(k)\n"
        "    _unset(k)\n"
        "os.putenv, os.unsetenv = _p, _u\n"
    )
    prog = tmp_path / "probe.py"
    prog.write_text(
        "import os, sitecustomize\n"
        "print(os.environ.get('OPENBLAS_MAIN_FREE', 'unset'),\n"
        "      'numpy-wrote' if sitecustomize.writes else 'no-writes')\n"
    )
    hook = {"PYTHONPATH": str(hooks)}
    for args, env, want in [
        ([str(prog)], hook, "unset no-writes"),
        (["--stats", str(prog)], hook, "unset no-writes"),
        ([str(prog)], {**hook, "OPENBLAS_MAIN_FREE": "0"}, "0 no-writes"),
        ([str(prog)], {**hook, "HASSIUM_STACK": "cluster"}, "unset no-writes"),
    ]:
        out, _ = run("-m", "hassium", *args, env=env)
        assert out.strip().splitlines()[0] == want, (args, env, out)


def test_a_program_that_ends_at_once_exits_cleanly(tmp_path):
    prog = tmp_path / "nothing.py"
    prog.write_text("pass\n")
    for stack in ("cpu", "opencl"):
        out, err = run("-m", "hassium", str(prog), env={"HASSIUM_STACK": stack})
        assert out == "" and "Error" not in err, (stack, out, err)


def test_a_bad_stack_is_still_reported_at_the_first_operation(tmp_path):
    prog = tmp_path / "one_op.py"
    prog.write_text(
        "import numpy as np\n"
        "try:\n"
        "    np.ones(3) + 1\n"
        "except RuntimeError as e:\n"
        "    print('raised:', e)\n"
    )
    out, _ = run("-m", "hassium", str(prog), env={"HASSIUM_STACK": "no-such-stack"})
    assert out.startswith("raised: hassium:") and "no-such-stack" in out, out


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["python", "-m", "hassium", "prog.py"], True),
        (["python", "-X", "importtime", "-m", "hassium", "--stats", "prog.py"], True),
        (["python", "-m", "hassium", "-c", "print(1)"], True),
        (["python", "-m", "hassium", "--info"], False),
        (["python", "-m", "hassium", "--list-stacks"], False),
        (["python", "-m", "hassium"], False),
        (["python", "-m", "pytest", "tests"], False),
        (["python", "prog.py", "-m", "hassium"], False),
        (["python", "-c", "import hassium", "-m", "hassium", "x.py"], False),
        ([], False),
    ],
)
def test_only_a_program_run_by_the_runner_starts_the_runtime_early(argv, expected):
    import hassium

    assert hassium._run_as_runner(argv) is expected


@pytest.mark.parametrize("stack", ["reference", "cpu", "opencl", "cluster"])
def test_the_cache_directory_variable_is_accepted_on_every_stack(tmp_path, stack):
    """`HASSIUM_CACHE_DIR` names every engine's cache; an engine that keeps none (the
    cluster engine, whose child keeps the kernels) starts all the same."""
    out, _ = run(
        "-m",
        "hassium",
        "-c",
        "import numpy as np; print(float((np.arange(10.0) * 2).sum()))",
        env={"HASSIUM_STACK": stack, "HASSIUM_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert out.strip().splitlines()[-1] == "90.0"


def test_the_cluster_stack_without_mpirun_starts_before_the_imports():
    """Without mpirun the cluster engine starts MPI, which sets environment variables:
    started on a thread of its own while NumPy loaded, it raced OpenBLAS's `getenv` and
    crashed the process now and then. `python -m hassium` starts such a stack on the main
    thread, before the program's imports; other stacks keep starting on a thread."""
    code = (
        "import hassium; print(hassium._prestarted, float(hassium.arange(10.0).sum()))"
    )
    for stack, where in [("cluster", "here"), ("cluster", "here"), ("cpu", "thread")]:
        out, _ = run("-m", "hassium", "-c", code, env={"HASSIUM_STACK": stack})
        assert out.strip().splitlines()[-1] == f"{where} 45.0", (stack, out)
