"""Fixtures of the differential suite: ``hs`` (the module under test), ``stack``, and
``assert_same`` (Hassium's result against NumPy's: values, dtype, shape).

Switches, all environment variables, read once at collection:

* ``HASSIUM_STACK``: the stack the runtime uses. One process holds one runtime, so one
  pytest process tests one stack; ``tests/python/run_stacks.sh`` loops over the stacks.
  Unset, the runtime uses the config's default stack.
* ``HASSIUM_TEST_STACKS``: comma-separated subset of stacks to accept; a run whose
  ``HASSIUM_STACK`` is not in it skips everything.
* ``HASSIUM_TEST_AGAINST=numpy``: ``hs`` is NumPy itself -- checks the tests, not Hassium.
* ``HASSIUM_TEST_EXTENSION=double``: ``hassium._hassium`` is the NumPy-backed double in
  ``extension_double.py`` -- checks the pure-Python package without the compiled extension.
"""

import os
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
AGAINST_NUMPY = os.environ.get("HASSIUM_TEST_AGAINST", "") == "numpy"
USE_DOUBLE = os.environ.get("HASSIUM_TEST_EXTENSION", "") == "double"

# Read, never set: the runtime reads it when it starts, and other tests' subprocesses
# inherit this environment.
STACK = os.environ.get("HASSIUM_STACK", "")

if USE_DOUBLE:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(REPO / "bridge-python" / "python"))
    import extension_double

    extension_double.install()

if AGAINST_NUMPY:
    MODULE = np
else:
    import hassium as MODULE

#: The 14 dtypes of the runtime, in DType discriminant order.
DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
]

#: Relative tolerance by result dtype (ints and bools compare exactly).
RTOL = {
    np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-5,
    np.dtype(np.complex64): 1e-5,
    np.dtype(np.float64): 1e-12,
    np.dtype(np.complex128): 1e-12,
}


def installed_stacks():
    if AGAINST_NUMPY:
        return ["numpy"]
    return list(MODULE._hassium.stacks())


def pytest_report_header(config):
    what = "numpy (checking the tests)" if AGAINST_NUMPY else "hassium"
    if USE_DOUBLE:
        what += " on the NumPy extension double"
    return (
        f"hassium differential suite: module under test = {what}; HASSIUM_STACK={STACK}"
    )


def pytest_collection_modifyitems(config, items):
    wanted = os.environ.get("HASSIUM_TEST_STACKS")
    if wanted and STACK and STACK not in [s.strip() for s in wanted.split(",")]:
        skip = pytest.mark.skip(
            reason=f"HASSIUM_STACK={STACK} is not in HASSIUM_TEST_STACKS"
        )
        for item in items:
            if "hs" in item.fixturenames:
                item.add_marker(skip)


@pytest.fixture(
    scope="session", params=[STACK or "default"], ids=lambda s: f"stack={s}"
)
def stack(request):
    """The stack this process's runtime runs (parametrised so reports name it)."""
    if (
        STACK
        and not AGAINST_NUMPY
        and not USE_DOUBLE
        and STACK not in installed_stacks()
    ):
        pytest.skip(f"stack {STACK!r} is not installed ({installed_stacks()})")
    return request.param


@pytest.fixture(scope="session")
def hs(stack):
    """The module under test: ``hassium`` (or NumPy with HASSIUM_TEST_AGAINST=numpy)."""
    return MODULE


def to_numpy(x):
    """A result as NumPy sees it: arrays converted, scalars and tuples as they are."""
    if isinstance(x, (tuple, list)):
        return type(x)(to_numpy(v) for v in x)
    if not AGAINST_NUMPY and isinstance(x, MODULE.ndarray):
        return np.asarray(x)
    return x


def assert_same(got, expected, rtol=None, what=""):
    """Hassium's ``got`` equals NumPy's ``expected``: same kind of object, shape, dtype,
    values (ints exactly, floats to the dtype's tolerance, NaNs at the same places)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), (
            f"{what}: expected a sequence, got {type(got)}"
        )
        assert len(got) == len(expected), (
            f"{what}: length {len(got)} != {len(expected)}"
        )
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, rtol, f"{what}[{i}]")
        return
    if type(expected) in (bool, int, float, complex):
        # NumPy returned a Python scalar (allclose, count_nonzero, item, ...).
        assert type(got) is type(expected), (
            f"{what}: {type(got)} is not {type(expected)}"
        )
        np.testing.assert_allclose(got, expected, rtol=rtol or 1e-12, equal_nan=True)
        return
    g = np.asarray(to_numpy(got))
    e = np.asarray(expected)
    assert g.dtype == e.dtype, f"{what}: dtype {g.dtype} != NumPy's {e.dtype}"
    assert g.shape == e.shape, f"{what}: shape {g.shape} != NumPy's {e.shape}"
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e, err_msg=what)
        return
    tol = RTOL.get(e.dtype, 1e-12) if rtol is None else rtol
    finite = np.abs(e[np.isfinite(e)]) if e.size else np.zeros(0)
    scale = float(finite.max()) if finite.size else 1.0
    np.testing.assert_allclose(
        g, e, rtol=tol, atol=tol * max(scale, 1.0) * 1e-3, equal_nan=True, err_msg=what
    )


@pytest.fixture
def same():
    return assert_same


def sample(dtype, shape=(3, 4, 5), kind="mixed", seed=0):
    """Deterministic test data of ``dtype``: small values, both signs where the dtype has
    them, a few zeros; ``kind='positive'`` keeps them > 0 (domains of log, sqrt, ...)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        data = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind == "u":
        lo = 1 if kind == "positive" else 0
        data = rng.integers(lo, 10, n).astype(dtype)
    elif dtype.kind == "i":
        data = rng.integers(1 if kind == "positive" else -9, 10, n).astype(dtype)
    else:
        lo = 0.1 if kind == "positive" else -3.0
        real = rng.uniform(lo, 3.0, n).round(2)
        if dtype.kind == "c":
            data = (real + 1j * rng.uniform(lo, 3.0, n).round(2)).astype(dtype)
        else:
            data = real.astype(dtype)
    return data.reshape(shape)


#: Views taken identically of a NumPy (3, 4, 5) array and of its Hassium copy.
LAYOUTS = {
    "contiguous": lambda a: a,
    "zero_d": lambda a: a[1, 2, 3, ...],
    "empty": lambda a: a[:, 1:1, :],
    "one_d": lambda a: a[1, 2],
    "negative_stride": lambda a: a[::-1, :, ::-2],
    "non_contiguous": lambda a: a[:, ::2, 1:],
    "transposed": lambda a: a.transpose(2, 0, 1),
}


def both(hs, data):
    """(Hassium array, NumPy array) holding the same ``data``."""
    return hs.asarray(data.copy()), data.copy()


def raises_like(exc_type, func, *args, **kwargs):
    """``func`` raises ``exc_type`` (NumPy's exception for the same call)."""
    with pytest.raises(exc_type):
        result = func(*args, **kwargs)
        to_numpy(result)  # an error may only surface when the result is observed
