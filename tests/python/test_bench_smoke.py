"""Smoke tests of the benchmark harness (benches/run.py), so it cannot rot unnoticed."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benches" / "run.py"


def run_harness(out: Path, *extra: str, env: dict[str, str] | None = None):
    cmd = [
        sys.executable,
        str(RUN),
        "--quick",
        "--no-stream",
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.run(
        cmd, check=False, capture_output=True, text=True, env=env, timeout=600
    )


def test_quick_run_of_two_programs_passes_and_writes_results(tmp_path):
    extra = ["--programs", "black_scholes,heat_equation"]
    if importlib.util.find_spec("hassium") is None:
        extra += [
            "--runners",
            "numpy",
        ]  # with Hassium installed, run.py's defaults apply
    proc = run_harness(tmp_path, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "latest.md").read_text()
    assert "black_scholes" in report and "heat_equation" in report
    assert "FAIL" not in report and "CRASH" not in report
    assert (tmp_path / "latest.png").stat().st_size > 0
    # Start-up is probed at the start (2 per runner with --quick) and again before each
    # of the 2 programs; the fastest probe is what gets subtracted.
    raw = json.loads((tmp_path / "latest.json").read_text())
    for runner, probes in raw["startup_probes_s"].items():
        assert len(probes) == 4, (runner, probes)
        assert raw["startup_s"][runner] == min(probes)


FAKE_BRIDGE = '''
"""Stand-in for `python -m hassium`: runs the program with NumPy, logs stack and cache."""
import os, runpy, sys
if sys.argv[1:] == ["--list-stacks"]:
    print("reference\\nfast  (default)")
    sys.exit(0)
cache = os.environ.get("HASSIUM_CACHE_DIR", "")
was_empty = not os.path.isdir(cache) or not os.listdir(cache)
os.makedirs(cache, exist_ok=True)
open(os.path.join(cache, "kernel"), "w").close()
with open(os.environ["FAKE_HASSIUM_LOG"], "a") as log:
    print(os.environ.get("HASSIUM_STACK"), os.path.basename(sys.argv[1]), was_empty, file=log)
sys.argv = sys.argv[1:]
if os.environ.get("FAKE_HASSIUM_WRONG") and not sys.argv[0].endswith("empty_hassium.py"):
    print("checksum: 12345.0")
    sys.exit(0)
runpy.run_path(sys.argv[0], run_name="__main__")
if os.environ.get("HASSIUM_STATS") == "1":  # the report's lines the harness reads
    print("hassium stats (stack fake)", file=sys.stderr)
    print("  time                   filters 0.0001s, fusion 0.0002s, compile 0.0000s, "
          "execute 0.5000s", file=sys.stderr)
    moved = int(os.environ.get("FAKE_HASSIUM_BYTES", "2000000000"))
    print(f"  bytes moved            {moved} (0.00 GB/s)", file=sys.stderr)
'''


def fake_hassium_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    package = tmp_path / "fake" / "hassium"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(textwrap.dedent(FAKE_BRIDGE))
    pythonpath = os.pathsep.join(
        filter(None, [str(package.parent), os.environ.get("PYTHONPATH")])
    )
    log = tmp_path / "bridge.log"
    return dict(os.environ, PYTHONPATH=pythonpath, FAKE_HASSIUM_LOG=str(log), **extra)


def test_hassium_stacks_run_cold_then_warm_with_their_own_cache(tmp_path):
    env = fake_hassium_env(tmp_path)
    args = ["--programs", "leibnitz_pi", "--runners", "numpy,hassium", "--reps", "2"]
    proc = run_harness(tmp_path / "out", *args, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "out" / "latest.md").read_text()
    for column in ("hassium-reference-cold", "hassium-reference", "hassium-fast"):
        assert column in report
    # The kernels' bandwidth comes from the stats each Hassium run prints: 2 GB in 0.5 s.
    kernels = report.split("## Kernel bandwidth")[1].split("##")[0]
    row = next(line for line in kernels.splitlines() if "leibnitz_pi" in line)
    assert row.count("4 GB/s") == 4 and "numpy" not in kernels
    runs = [line.split() for line in (tmp_path / "bridge.log").read_text().splitlines()]
    program_runs = [r for r in runs if r[1] == "leibnitz_pi.py"]
    # per stack and repetition: cold (empty cache) then warm (filled cache)
    assert [(s, empty) for s, _, empty in program_runs] == [
        ("reference", "True"), ("reference", "False"), ("fast", "True"), ("fast", "False"),
        ("reference", "True"), ("reference", "False"), ("fast", "True"), ("fast", "False"),
    ]  # fmt: skip


def test_kernels_that_move_almost_nothing_get_no_bandwidth(tmp_path):
    """A kept arange reduced in registers moves a few bytes of partials: no bandwidth
    (it would read as a near-zero share of STREAM)."""
    env = fake_hassium_env(tmp_path, FAKE_HASSIUM_BYTES="4096")
    args = ["--programs", "leibnitz_pi", "--runners", "numpy,hassium", "--reps", "1"]
    proc = run_harness(tmp_path / "out", *args, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "out" / "latest.md").read_text()
    kernels = report.split("## Kernel bandwidth")[1].split("##")[0]
    row = next(line for line in kernels.splitlines() if "leibnitz_pi" in line)
    assert row.count("no array traffic") == 4 and "GB/s" not in row, row


def test_checksum_mismatch_is_reported_and_fails_the_run(tmp_path):
    env = fake_hassium_env(tmp_path, FAKE_HASSIUM_WRONG="1")
    args = ["--programs", "rosenbrock", "--runners", "numpy,hassium-reference"]
    proc = run_harness(tmp_path / "out", *args, env=env)
    assert proc.returncode == 1
    assert "FAIL" in (tmp_path / "out" / "latest.md").read_text()
    assert "checksum 12345.0 != NumPy's" in proc.stderr


def harness_module():
    """benches/run.py imported as a module, for testing its helpers directly."""
    sys.path.insert(0, str(RUN.parent))
    try:
        import run
    finally:
        sys.path.remove(str(RUN.parent))
    return run


def test_core_scaling_probe_reports_a_ratio_of_two_timed_runs(tmp_path):
    harness = harness_module()
    ratio = harness.core_scaling(tmp_path, quick=True)
    # One thread's work against two threads' twice the work. Its value is the machine's
    # (no bound on it here): a positive, finite number.
    assert ratio is not None
    assert math.isfinite(ratio) and ratio > 0


def test_stream_reference_is_the_median_of_the_measurements_with_their_range():
    harness = harness_module()
    how = "C triad, 2 OpenMP threads"
    assert harness.stream_summary([]) is None
    assert harness.stream_summary([(31.0, how)]) == (31.0, how)
    gbs, label = harness.stream_summary([(40.0, how), (26.5, how), (30.0, how)])
    assert gbs == 30.0
    assert label.startswith(how) and "median of 3" in label and "26.5–40.0" in label


def test_jax_runs_warm_from_its_persistent_cache_and_cold_without(
    tmp_path, monkeypatch
):
    monkeypatch.syspath_prepend(str(ROOT / "benches"))
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "the-users-own"))
    from harness.runners import Runner

    warm = Runner("jax", "jax").env(tmp_path / "cache-jax-p")
    assert warm["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "cache-jax-p")
    # Every program is cached, however quick its compile or small its entry.
    assert warm["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert warm["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] == "0"
    cold = Runner("jax-cold", "jax", cold=True).env(None)
    assert "JAX_COMPILATION_CACHE_DIR" not in cold
    numexpr = Runner("numexpr", "numexpr").env(None)
    assert numexpr["NUMEXPR_NUM_THREADS"] == str(os.cpu_count() or 1)
