"""A NumPy-backed double of the ``hassium._hassium`` contract (docs/python-bridge.md).

It lets the pure-Python package (namespace, fallback, random, linalg, runner) be tested
without the compiled extension: ``HASSIUM_TEST_EXTENSION=double pytest tests/python``
installs it as ``hassium._hassium`` before ``hassium`` is imported. Its ``ndarray`` is
NumPy's, and each primitive is the NumPy call with the contract's meaning, so a test that
passes against the double checks the package's own logic; it says nothing about the
real extension.
"""

import sys
import types

import numpy as np


def _install():
    ext = types.ModuleType("hassium._hassium")
    ext.ndarray = np.ndarray
    ext.__version__ = "double"
    ext.MAX_DIMS = 16  # the extension's limit, which the inspection API reports
    counters = {"instructions_recorded": 0, "flushes": 0}

    def count(result):
        counters["instructions_recorded"] += 1
        return result

    # The opcodes NumPy has no function of the same meaning for (core/src/opcode.rs):
    # ldexp's exponent comes in the float dtype, frexp's exponent goes out in it.
    plain = {
        "ldexp": lambda x, e, **kw: np.ldexp(
            x,
            np.clip(np.nan_to_num(np.asarray(e), nan=-1e4), -1e4, 1e4).astype(int),
            **kw,
        ),
        "frexp_exponent": lambda x, **kw: np.frexp(x)[1].astype(np.asarray(x).dtype),
    }

    def ufunc(name, *inputs, out=None, dtype=None):
        kwargs = {} if dtype is None else {"dtype": dtype}
        if out is not None:
            kwargs["out"] = out
        return count(plain.get(name, getattr(np, name, None))(*inputs, **kwargs))

    def reduce(name, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
        if name in ("argmin", "argmax"):
            return count(getattr(np, name)(a, axis=axis, keepdims=keepdims))
        kwargs = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims}
        if initial is not None:
            kwargs["initial"] = initial
        return count(np.asarray(getattr(np, name).reduce(a, **kwargs)))

    def accumulate(name, a, axis=0, dtype=None, out=None):
        return count(getattr(np, name).accumulate(a, axis=axis, dtype=dtype, out=out))

    def arange(start, stop, step, dtype):
        return count(np.arange(start, stop, step, dtype=dtype))

    def asarray(obj, dtype=None, copy=None):
        return np.asarray(obj, dtype=dtype, copy=copy)

    def random_bits(shape, seed, stream):
        # Not Philox: any fixed function of (seed, stream, i) serves the package's tests.
        n = int(np.prod(shape))
        key = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, stream])
        bits = np.random.Generator(np.random.Philox(key)).integers(
            0, 2**64, size=n, dtype=np.uint64, endpoint=False
        )
        return count(bits.reshape(shape))

    def copyto(dst, src, casting="same_kind"):
        np.copyto(dst, src, casting=casting)

    def take_flat(a, idx):
        return count(a.reshape(-1)[idx])

    def put_flat(a, idx, values, accumulate=False):
        flat = a.reshape(-1)
        if accumulate:
            np.add.at(flat, idx, values)
        else:
            flat[idx] = values

    ext.ufunc = ufunc
    ext.reduce = reduce
    ext.accumulate = accumulate
    ext.empty = lambda shape, dtype: count(np.empty(shape, dtype))
    ext.full = lambda shape, value, dtype: count(np.full(shape, value, dtype))
    ext.arange = arange
    ext.asarray = asarray
    ext.random_bits = random_bits
    ext.copyto = copyto
    ext.take_flat = take_flat
    ext.put_flat = put_flat
    ext.matmul = lambda a, b, out=None: count(np.matmul(a, b, out=out))
    ext.where = lambda c, x, y: count(np.where(c, x, y))
    ext.nonzero = lambda a: np.nonzero(a)
    ext.sort = lambda a, axis, indices=False: count(
        (np.argsort if indices else np.sort)(a, axis=axis, kind="stable")
    )
    ext.sort_in_place = lambda a, axis: count(a.sort(axis=axis, kind="stable"))
    ext.searchsorted = lambda hay, needles, right=False: count(
        np.asarray(np.searchsorted(hay, needles, side="right" if right else "left"))
    )
    ext.flush = lambda: counters.__setitem__("flushes", counters["flushes"] + 1)
    ext.stats = lambda: dict(counters)
    ext.info = lambda: {
        "config_source": "extension double",
        "stack": "double",
        "stacks": ["double"],
        "engines": [],
        "cache_dir": "/nonexistent",
    }
    ext.stacks = lambda: ["double"]
    sys.modules["hassium._hassium"] = ext
    return ext


install = _install
