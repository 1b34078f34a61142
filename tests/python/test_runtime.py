"""Laziness, FREE on drop, errors during a flush, and the runtime's counters."""

import os
import pickle
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, USE_DOUBLE, assert_same

pytestmark = pytest.mark.skipif(
    AGAINST_NUMPY or USE_DOUBLE, reason="laziness is the compiled runtime's"
)


def counter(stats, *names):
    """The first of ``names`` the runtime reports (the stats dict may nest engine stats)."""
    for name in names:
        if name in stats:
            return stats[name]
    raise AssertionError(f"stats() has none of {names}: {sorted(stats)}")


RECORDED = ("instrs_recorded", "instructions_recorded")
FLUSHES = ("flushes",)


def test_operations_record_without_running_until_observed(hs):
    a = hs.ones(1000)
    b = hs.arange(1000.0)
    hs.flush()
    before = hs.stats()
    c = (a + b) * 2.0 - a
    d = hs.sum(c)
    middle = hs.stats()
    assert counter(middle, *RECORDED) >= counter(before, *RECORDED) + 4
    assert counter(middle, *FLUSHES) == counter(before, *FLUSHES), (
        "nothing observed yet"
    )
    assert c.shape == (1000,) and c.dtype == np.float64  # known without a flush
    assert counter(hs.stats(), *FLUSHES) == counter(before, *FLUSHES)
    assert float(d) == float(np.sum((np.ones(1000) + np.arange(1000.0)) * 2.0 - 1.0))
    assert counter(hs.stats(), *FLUSHES) > counter(before, *FLUSHES)


@pytest.mark.parametrize(
    "observe",
    [
        lambda x: np.asarray(x),
        lambda x: repr(x),
        lambda x: float(x[0]),
        lambda x: x.tolist(),
        lambda x: list(iter(x)),
        lambda x: bytes(memoryview(x)),
    ],
    ids=["__array__", "repr", "float", "tolist", "iter", "buffer"],
)
def test_observation_flushes(hs, observe):
    x = hs.arange(4.0) + 1.0
    before = counter(hs.stats(), *FLUSHES)
    observe(x)
    assert counter(hs.stats(), *FLUSHES) > before


def test_reading_one_coefficient_per_iteration_leaves_the_queue_to_grow(hs):
    """``out += w[j] * x[j:j + n]`` reads a weight per iteration; nothing queued writes
    ``w``, so a read runs nothing queued (vem's ``sync_alone``) and the taps stay in one
    batch to fuse. A read of ``out``, which the queue writes, runs it."""
    x = np.sin(np.arange(1000) * 0.37)
    w = np.array([0.25, 0.5, 0.25, 0.125])
    hx, hw = hs.asarray(x), hs.asarray(w)
    out, want = hs.zeros(997), np.zeros(997)
    hs.flush()
    for j in range(4):
        out += hw[j] * hx[j : j + 997]
        want += w[j] * x[j : j + 997]
    assert hs.stats()["queued"] >= 2 * 4, "a read of w[j] ran the queue"
    assert float(out[5]) == want[5]
    assert hs.stats()["queued"] == 0
    assert_same(out, want)


def test_dropping_the_last_reference_records_free(hs):
    a = hs.ones(100) + 1.0
    hs.flush()
    before = counter(hs.stats(), *RECORDED)
    view = a[::2]
    del a
    assert counter(hs.stats(), *RECORDED) == before, "a view keeps the base alive"
    del view
    assert counter(hs.stats(), *RECORDED) > before, "the last reference records FREE"


def test_array_interop_shares_memory_after_a_sync(hs):
    h = hs.arange(6.0).reshape(2, 3)
    n1 = np.asarray(h)
    n2 = np.asarray(h)
    assert np.shares_memory(n1, n2)
    np.testing.assert_array_equal(n1, np.arange(6.0).reshape(2, 3))


def test_an_error_during_a_flush_names_the_operation_and_the_runtime_stays_usable(hs):
    take_flat = getattr(hs._hassium, "take_flat", None)
    if take_flat is None:
        pytest.skip("the extension has no take_flat")
    src = hs.arange(5.0)
    idx = hs.arange(3) + 5  # computed lazily: out of bounds only at run time
    # NumPy names the first bad index (5); a parallel engine (opencl) may name another.
    with pytest.raises(
        IndexError, match=r"index [567] is out of bounds for axis 0 with size 5"
    ):
        np.asarray(take_flat(src, idx))
    # The runtime goes on.
    assert float(hs.sum(hs.ones(10) * 3.0)) == 30.0
    np.testing.assert_array_equal(np.asarray(src + 1.0), np.arange(5.0) + 1.0)


@pytest.mark.parametrize("observe", ["str", "asarray", "float"])
def test_a_failed_read_raises_once_and_the_array_reads_again_afterwards(hs, observe):
    """The batch that failed is gone; the array it was to write keeps its old values and
    can be read again (the error is not remembered past the read that raised it)."""
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy raises at the assignment, not at a later read")
    a = hs.arange(5.0)
    a[hs.arange(2) * 9] = -1.0  # index 9, known only when the batch runs
    read = {
        "str": str,
        "asarray": np.asarray,
        "float": lambda x: float(x.sum()),
    }[observe]
    with pytest.raises(IndexError, match="out of bounds"):
        read(a)
    for _ in range(2):
        assert str(a) == str(np.asarray(a))
        assert float(a.sum()) == float(np.asarray(a).sum())
    b = hs.arange(4.0)
    np.testing.assert_array_equal(np.asarray(b * 2), np.arange(4.0) * 2)


def test_info_and_stats_are_dicts_naming_the_stack(hs, stack):
    info = hs.info()
    assert isinstance(info, dict) and info
    stats = hs.stats()
    assert isinstance(stats, dict)
    # The small-array policy is visible, and every filter it names exists.
    assert info["small_flush_threshold"] <= info["flush_threshold"]
    filters = {f for s in info["stacks"].values() for f in s["filters"]}
    assert set(info["small_skip_filters"]) <= filters | {"expand_powk", "dump"}
    if stack != "default":
        assert stack in str(info) or stack in str(stats)


def loop_kernel(before, after):
    """A kernel that ran since ``before`` and moved at least x's 400 kB per call."""
    old = {k["key"]: k for k in before}
    for k in after:
        o = old.get(k["key"], {"calls": 0, "bytes_moved": 0})
        calls = k["calls"] - o["calls"]
        if calls > 0 and k["bytes_moved"] - o["bytes_moved"] >= 400_000 * calls:
            return k
    return None


def test_stats_list_each_compiled_kernel_with_its_bandwidth(hs):
    if hs.info()["running_engine"] != "cpu":
        pytest.skip("only the cpu engine times its kernels one by one")
    x = hs.asarray(np.linspace(0.0, 1.0, 50_000))
    float(hs.sum(x))
    before = hs.stats()["engine"]["kernels"]
    deadline = time.monotonic() + 120
    step = 0
    while True:  # tiered: the first calls run interpreted while the kernel compiles
        y = hs.exp(x * (0.1 * step) + 1.0)
        float(hs.sum(y))
        step += 1
        engine = hs.stats()["engine"]
        kernels = engine["kernels"]
        if loop_kernel(before, kernels) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    # The loop's fused kernel reads x (400 kB) on every call; the process's earlier
    # tests left theirs in the list too.
    assert loop_kernel(before, kernels), kernels
    assert sum(k["calls"] for k in kernels) <= engine["kernels_run"]
    seconds = [k["seconds"] for k in kernels]
    assert seconds == sorted(seconds, reverse=True)
    for k in kernels:
        assert k["calls"] >= 1 and k["seconds"] >= 0 and k["instrs"] >= 1
        if k["seconds"] > 0:
            rate = k["bytes_moved"] / k["seconds"] / 1e9
            assert abs(k["gb_per_s"] - rate) <= 1e-9 * max(rate, 1.0)


def test_a_loop_body_flushed_again_and_again_is_replayed_and_matches_numpy(hs):
    """After its first flush, a loop body's batch reaches a loaded engine as its bases
    and scalars only (a template replay); the results must be NumPy's all the same."""
    n = 100
    stiffness = 1.0 + np.arange(n) * 0.04
    x_np, v_np = np.cos(np.arange(n, dtype=np.float64)), np.zeros(n)
    k, x, v = hs.asarray(stiffness), hs.asarray(x_np), hs.asarray(v_np)
    before = hs.stats()["engine"]["extra"].get("calls_replayed", 0)
    for step in range(3000):
        dt = 0.001 * (1 + step % 3)  # a changing scalar, as a time step
        a = -k * x - 0.05 * v
        v = v + dt * a
        x = x + dt * v
        a_np = -stiffness * x_np - 0.05 * v_np
        v_np = v_np + dt * a_np
        x_np = x_np + dt * v_np
    np.testing.assert_allclose(np.asarray(x), x_np, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.asarray(v), v_np, rtol=1e-12, atol=0)
    replayed = hs.stats()["engine"]["extra"].get("calls_replayed", 0) - before
    if hs.info()["running_engine"] == "cpu":
        assert replayed > 10, hs.stats()


def test_a_batch_of_large_steps_reuses_the_memory_of_arrays_it_frees(hs):
    """Thirty steps recorded into one batch, each reading the last step's array reversed
    (so no two steps fuse): the batch is cut where arrays die and their buffers serve the
    next steps, instead of thirty fresh 8 MB buffers."""
    n = 1_000_000
    x = hs.arange(float(n))
    float(x[0])
    before = hs.stats()["host_bytes_allocated"]
    want = np.arange(float(n))
    for _ in range(30):
        x = x[::-1] * 0.5 + 1.0
        want = want[::-1] * 0.5 + 1.0
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-15)
    grown = hs.stats()["host_bytes_allocated"] - before
    assert grown <= 6 * 8 * n, f"{grown / 8e6:.0f} arrays of 8 MB allocated"


@pytest.mark.parametrize(
    "args, dtype",
    [
        ((100_000,), np.float64),
        ((3.0, 50_003.0, 0.5), np.float64),
        ((-7, 99_993), np.int64),
        ((2, 200_002, 2), np.int32),
        ((0.0, 10_000.0, 0.25), np.float32),
    ],
)
def test_a_kept_arange_is_recomputed_where_read_and_written_out_when_observed(
    hs, args, dtype
):
    """A live arange is kept as its generator (no memory) until something needs its
    bytes; every way of reading or changing it afterwards sees NumPy's values."""
    a = hs.arange(*args, dtype=dtype)
    b = a * 3 + 1
    want_a = np.arange(*args, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(b), want_a * 3 + 1)
    before = hs.stats()
    c = a[::-1][::7] - a[::7][::-1]
    d = hs.sum(a.reshape(-1, 2)[:, 1])
    np.testing.assert_array_equal(np.asarray(c), want_a[::-1][::7] - want_a[::7][::-1])
    assert d.item() == np.sum(want_a.reshape(-1, 2)[:, 1])
    if hs.info()["running_engine"] == "cpu" and dtype in (np.float64, np.int64):
        grown = hs.stats()["host_bytes_allocated"] - before["host_bytes_allocated"]
        assert before["bases_generated"] >= 1
        assert grown < 2 * a.nbytes, "reading a kept arange wrote it out"
    a[5] = 42
    want_a[5] = 42
    a[-3:] *= 2
    want_a[-3:] *= 2
    np.testing.assert_array_equal(np.asarray(a), want_a)
    np.testing.assert_array_equal(
        np.asarray(a + b), want_a + (np.arange(*args, dtype=dtype) * 3 + 1)
    )


def test_an_arange_overwritten_whole_or_read_through_the_buffer_protocol(hs):
    a = hs.arange(1000.0)
    float(hs.sum(a))
    a[...] = np.full(1000, 2.5)
    np.testing.assert_array_equal(np.asarray(a), np.full(1000, 2.5))
    b = hs.arange(12, dtype=np.int64).reshape(3, 4)
    float(hs.sum(b))
    assert memoryview(b).tolist() == np.arange(12).reshape(3, 4).tolist()
    assert b.T[1, 2] == 9


def arange_program(xp, seed, flush_chance):
    """A seeded program over an arange and arrays made from it by the cheap steps that
    recipes keep (scaling, shifting, casts, negation) and by steps that end them
    (in-place writes, reversed reads, a square root); with ``flush_chance`` Hassium
    flushes between steps, so recipes are read, written out and overwritten in later
    batches. Returns every array still alive, as NumPy arrays."""
    r = random.Random(seed)
    # Up to 16384 elements a recipe a later batch reads is written out; above, it is
    # recomputed there.
    n = r.choice([1, 7, 64, 1000, 4099, 20_000, 40_001])
    env = {"a": xp.arange(n, dtype=r.choice(["float64", "int64", "float32", "int32"]))}
    for step in range(r.randint(2, 8)):
        src = env[r.choice(list(env))]
        kind = r.randint(0, 9)
        if kind == 0:
            v = src * 0.5 + 3
        elif kind == 1:
            v = src.astype(np.float64) * 2
        elif kind == 2:
            v = -src
        elif kind == 3:
            v = src - 7
        elif kind == 4:
            v = src * src
        elif kind == 5:
            src[0:1] = 5
            v = src + 0
        elif kind == 6:
            src += 1
            v = src
        elif kind == 7:
            v = xp.arange(n) * 1.5 - 2
        elif kind == 8:
            v = src[::-1] + 1
        else:
            v = xp.sqrt(xp.abs(src) + 1)
        env[f"v{step}"] = v
        if r.random() < 0.3:
            del env[r.choice(list(env))]
        if r.random() < flush_chance and xp is not np:
            xp.flush()
    return {k: np.asarray(v) for k, v in env.items()}


@pytest.mark.parametrize("flush_chance", [0.0, 0.5])
def test_programs_of_aranges_and_steps_after_them_match_numpy(hs, flush_chance):
    generated = hs.stats()["bases_generated"]
    for seed in range(60):
        got = arange_program(hs, seed, flush_chance)
        want = arange_program(np, seed, flush_chance)
        assert got.keys() == want.keys()
        for name, w in want.items():
            assert got[name].dtype == w.dtype, (seed, name)
            np.testing.assert_allclose(
                got[name], w, rtol=1e-6, err_msg=f"seed {seed} {name}"
            )
    assert hs.stats()["bases_generated"] > generated + 10, "no recipes were tested"


@pytest.mark.parametrize("how", ["setitem", "add.at"])
def test_an_out_of_range_scatter_writes_nothing_like_numpy(hs, how):
    """NumPy checks every index before writing; a compiled kernel meeting a bad index
    half-way must not leave the target half-written either."""
    n = 100_000
    idx = np.arange(n)
    idx[-10] = n + 5  # late in the array: most chunks are fine
    h, ref = hs.arange(float(n)), np.arange(float(n))
    with pytest.raises(IndexError, match="out of bounds"):
        if how == "setitem":
            h[hs.asarray(idx)] = -1.0
        else:
            hs.add.at(h, hs.asarray(idx), 1.0)
        np.asarray(h)
    np.testing.assert_array_equal(np.asarray(h), ref)


def _in_forked_child(fn, timeout=120.0):
    """Runs ``fn()`` in a child forked from this process: ("ok", its result) or ("error",
    the exception it raised, as text). Fails if the child runs past ``timeout``."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(r)
        try:
            out = ("ok", fn())
        except BaseException as e:  # noqa: BLE001 - everything is reported
            out = ("error", f"{type(e).__name__}: {e}")
        with os.fdopen(w, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + timeout
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            pytest.fail(
                f"a child forked after the runtime ran hung for {timeout:.0f} s"
            )
        time.sleep(0.02)
    with os.fdopen(r, "rb") as f:
        return pickle.load(f)


def test_a_forked_child_computes_with_its_parents_arrays_or_says_why_not(hs):
    """``os.fork`` after the runtime ran (multiprocessing's default start method on
    Linux): fork copies only the calling thread, so the engine's worker and compile
    threads are gone in the child. The cpu engine starts new ones; the OpenCL engine,
    whose context cannot survive fork, and the cluster engine, whose MPI connections
    cannot, raise an error that says so. None hangs or disturbs the parent."""
    # Large enough that the cpu engine's kernels run native on its worker threads (not
    # interpreted, as a new kernel of under `interpret_limit` element-operations would).
    n = np.arange(2_000_000.0)
    data = hs.arange(2_000_000.0)
    assert_same(data * 2.0, n * 2.0)  # the engine has run: its threads exist

    def sums(xp, x):
        # The parent's array, through kernels of shapes the parent never ran.
        return [float((x[k:] * k + xp.sqrt(x[k:] + 1.0)).sum()) for k in (1, 2, 3)]

    status, got = _in_forked_child(lambda: sums(hs, data))
    info = hs.info()
    if info["stacks"][info["stack"]]["engine"] in ("opencl", "cluster"):
        assert status == "error" and "forked" in got, got
    else:
        assert status == "ok", got
        np.testing.assert_allclose(got, sums(np, n), rtol=1e-12)
    assert_same(data + 1.0, n + 1.0)  # the parent is unaffected


def _damped(xp, n, steps):
    """A loop of small arrays, the kind whose batches run on the flush thread."""
    k = 1.0 + xp.arange(n, dtype=np.float64) * (4.0 / n)
    x, v = xp.cos(xp.arange(n, dtype=np.float64)), xp.zeros(n)
    for _ in range(steps):
        a = -k * x - 0.05 * v
        v = v + 0.001 * a
        x = x + 0.001 * v
    return x, v


def test_small_array_loops_flush_on_the_pipeline_thread_and_match_numpy(hs):
    """Batches of small arrays cut by the queue's threshold may run on a worker thread
    while the program records on (never on the cluster stack, whose rank 0 talks to the
    other ranks from the thread that started MPI); what the program reads is exactly
    what it would be otherwise."""
    before = counter(hs.stats(), "flushes_pipelined")
    x, v = _damped(hs, 100, 400)
    xn, vn = _damped(np, 100, 400)
    assert_same(x, xn)
    assert_same(v, vn)
    if hs.info()["stacks"][hs.info()["stack"]]["engine"] == "cluster":
        assert counter(hs.stats(), "flushes_pipelined") == before


def _in_fresh_process(code, **env):
    """Runs ``code`` in a new Python process with ``env`` added to this environment;
    the words it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


_FRESH_LOOP = """
import hassium as hs, numpy as np
k = 1.0 + hs.arange(100, dtype=np.float64) * 0.04
x, v = hs.cos(hs.arange(100, dtype=np.float64)), hs.zeros(100)
for _ in range(400):
    a = -k * x - 0.05 * v
    v = v + 0.001 * a
    x = x + 0.001 * v
float(x.sum())
print(hs.stats()["flushes_pipelined"], hs.stats()["flushes"])
"""


def test_a_fresh_runtime_hands_batches_of_small_arrays_to_its_flush_thread(hs):
    """In a fresh process (the pipeline may have paused itself in this one, when its
    worker fell behind: see the runtime's `pipeline::Stalls`), a loop of small arrays
    cut into several batches hands at least four of them to the worker: a pause needs
    four batches the recorder waited for."""
    info = hs.info()
    if info["stacks"][info["stack"]]["engine"] == "cluster":
        pytest.skip(
            "the cluster stack keeps every batch on the thread that started MPI"
        )
    piped, flushes = map(
        int, _in_fresh_process(_FRESH_LOOP, HASSIUM_STACK=info["stack"])
    )
    assert flushes >= 6, f"{flushes} flushes"
    assert piped >= 4, f"{piped} of {flushes} flushes ran on the flush thread"


def test_a_fork_while_a_batch_runs_on_the_flush_thread_waits_for_it(hs):
    """``os.fork`` waits for the batch on the flush thread (which the child would not
    have): the child reads the loop's result, and its own loops pipeline again."""
    info = hs.info()
    if info["stacks"][info["stack"]]["engine"] in ("opencl", "cluster"):
        pytest.skip("this engine cannot run in a forked child (tested above)")
    x, _ = _damped(hs, 100, 300)  # the last cut batch may still be running
    xn, _ = _damped(np, 100, 300)

    def child():
        y, _ = _damped(hs, 100, 300)
        return np.asarray(x).tolist(), np.asarray(y).tolist()

    status, got = _in_forked_child(child)
    assert status == "ok", got
    # The same runtime computed all three, bit for bit.
    np.testing.assert_array_equal(got[0], np.asarray(x))
    np.testing.assert_array_equal(got[1], np.asarray(x))
    assert_same(x, xn)


_TRAFFIC = """
import hassium as hs, numpy as np
x = hs.arange(20000, dtype=np.float64)
for _ in range(3):
    y = hs.sqrt(x * x + 1.0) - x
    x = x + y.sum() * 1e-9
float(x[0])
print(hs.stats()["engine"]["bytes_moved"], hs.stats()["engine"]["interpreted"])
"""


def test_bytes_moved_do_not_depend_on_whether_kernels_ran_interpreted(hs, tmp_path):
    """A kernel too small to compile at once runs interpreted (tiering); its traffic
    counts in the engine's bytes moved as a compiled call's would, so the figure is the
    same in a fresh process, cache empty, with and without tiering."""
    if hs.info()["stack"] != "cpu":
        pytest.skip("the cpu engine's tiering")
    moved = {}
    for tiered in ("true", "false"):
        out = _in_fresh_process(
            _TRAFFIC,
            HASSIUM_STACK="cpu",
            HASSIUM_ENGINES_CPU_TIERED=tiered,
            XDG_CACHE_HOME=str(tmp_path / tiered),
        )
        moved[tiered] = tuple(map(int, out))
    assert moved["true"][1] > 0, "tiering interpreted nothing: the test tests nothing"
    assert moved["false"][1] == 0
    assert moved["true"][0] == moved["false"][0] > 0
