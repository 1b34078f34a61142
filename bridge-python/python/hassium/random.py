"""Random numbers on the counter-based Philox opcode: the same numbers on every engine.

Every draw is ``_hassium.random_bits(shape, seed, stream)``: element ``i`` of the result is
``philox4x32_10(seed, stream, i)`` as a uint64, whatever engine, thread count or MPI rank
computes it. A random state is a ``(seed, next stream)`` pair; each draw takes the next
stream (Box-Muller takes two), so successive calls give fresh numbers and re-seeding
replays the sequence exactly. The numbers differ from NumPy's Mersenne Twister / PCG64
streams -- a seeded NumPy program gets different (equally good) random numbers.

From bits to values (documented, so every bridge can reproduce them):

* ``random``/``uniform`` float64: ``(bits >> 11) * 2**-53`` (53 random bits, in [0, 1));
  float32: ``(bits >> 40) * 2**-24``;
* ``normal``/``standard_normal``: Box-Muller on two streams,
  ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)`` (``1 - u1`` is in (0, 1], so the log is finite);
* ``integers``/``randint`` in ``[low, high)``: ``low + bits mod (high - low)``, computed in
  uint64 and wrapped to the result dtype; the modulo bias is below ``(high-low) / 2**64``.

What is not here (``choice``, ``shuffle``, ``exponential``, ...) runs through NumPy, on a
NumPy generator seeded from ``(seed, stream)``, so it is reproducible too.
"""

import math
import os

import numpy as _np

from . import _fallback
from . import _hassium as _ext
from ._native import _shape_of, _shape_tuple

__all__ = [
    "Generator",
    "RandomState",
    "default_rng",
    "normal",
    "rand",
    "randint",
    "randn",
    "random",
    "random_sample",
    "ranf",
    "sample",
    "seed",
    "standard_normal",
    "uniform",
]

_U64 = 1 << 64


def _seed_to_u64(seed):
    """A user's seed as the 64-bit Philox key: ints as they are, anything else hashed."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, (_PhiloxState,)):
        return seed._seed
    if isinstance(seed, (int, _np.integer)) and not isinstance(seed, bool):
        seed = int(seed)
        if seed < 0:
            raise ValueError("expected non-negative integer")
        if seed < _U64:
            return seed
    return int(_np.random.SeedSequence(seed).generate_state(1, _np.uint64)[0])


class _PhiloxState:
    """A (seed, next stream) pair and the draws every API shares."""

    def __init__(self, seed=None):
        self._seed = _seed_to_u64(seed)
        self._stream = 0

    def _reseed(self, seed):
        self._seed = _seed_to_u64(seed)
        self._stream = 0

    def _bits(self, shape):
        stream = self._stream
        self._stream += 1
        return _ext.random_bits(shape, self._seed, stream)

    def _uniform01(self, shape, dtype=_np.float64):
        dtype = _np.dtype(dtype)
        bits = self._bits(shape)
        if dtype == _np.float32:
            return (bits >> 40).astype(_np.float32) * _np.float32(2.0**-24)
        if dtype != _np.float64:
            raise TypeError(f"Unsupported dtype {dtype!r} for random")
        return (bits >> 11).astype(_np.float64) * (2.0**-53)

    def _standard_normal(self, shape, dtype=_np.float64):
        u1 = self._uniform01(shape)
        u2 = self._uniform01(shape)
        radius = _ext.ufunc("sqrt", -2.0 * _ext.ufunc("log", 1.0 - u1))
        z = radius * _ext.ufunc("cos", (2.0 * math.pi) * u2)
        dtype = _np.dtype(dtype)
        if dtype != _np.float64:
            if dtype != _np.float32:
                raise TypeError(f"Unsupported dtype {dtype!r} for standard_normal")
            z = z.astype(dtype)
        return z

    def _integers(self, low, high, size, dtype, endpoint):
        dtype = _np.dtype(dtype)
        if _shape_of(low) != () or _shape_of(high) != () or dtype.kind not in "iub":
            return None
        low, high = int(low), int(high)
        span = high - low + (1 if endpoint else 0)
        if span <= 0:
            raise ValueError("low > high" if endpoint else "low >= high")
        info = _np.iinfo(dtype) if dtype.kind != "b" else None
        if info is not None and (
            low < info.min or high - (0 if endpoint else 1) > info.max
        ):
            raise ValueError(f"high is out of bounds for {dtype}")
        shape = () if size is None else _shape_tuple(size)
        bits = self._bits(shape)
        offset = bits if span == _U64 else _ext.ufunc("remainder", bits, span)
        values = _ext.ufunc("add", offset, low % _U64)  # wraps like two's complement
        return values.astype(dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        shape = (
            _np.broadcast_shapes(_shape_of(low), _shape_of(high))
            if size is None
            else _shape_tuple(size)
        )
        result = low + (high - low) * self._uniform01(shape)
        return _scalar_or(result, size if size is not None else (shape or None))

    def normal(self, loc=0.0, scale=1.0, size=None):
        # NumPy refuses a negative scale, -0.0 included (NaN passes and gives NaN).
        if _np.signbit(_np.asarray(scale)).any():
            raise ValueError("scale < 0")
        shape = (
            _np.broadcast_shapes(_shape_of(loc), _shape_of(scale))
            if size is None
            else _shape_tuple(size)
        )
        result = loc + scale * self._standard_normal(shape)
        return _scalar_or(result, size if size is not None else (shape or None))

    def _fallback(self, name, args, kwargs):
        # A NumPy generator keyed by (seed, stream): reproducible, and a fresh stream.
        stream = self._stream
        self._stream += 1
        gen = _np.random.default_rng(
            [self._seed & 0xFFFFFFFF, self._seed >> 32, stream]
        )
        return _fallback.call(getattr(gen, name), f"random.{name}", args, kwargs)


def _scalar_or(result, size):
    """NumPy returns a Python float (not a 0-d array) when ``size`` is None."""
    return result.item() if size is None else result


def _out_shape(size, out, dtype):
    """The shape a Generator method draws for ``size`` and ``out=``, which NumPy takes
    only contiguous and writeable, of the drawn dtype, and of ``size``'s shape if both
    are given; without ``size`` the draw fills ``out``."""
    if out is None:
        return () if size is None else _shape_tuple(size)
    flags = out.flags
    if not ((flags.c_contiguous or flags.f_contiguous) and flags.writeable):
        raise ValueError(
            "Supplied output array must be contiguous, writable, aligned, and in "
            "machine byte-order."
        )
    want = _np.dtype(dtype)
    if out.dtype != want:
        raise TypeError(
            f"Supplied output array has the wrong type. Expected {want.name}, "
            f"got {out.dtype.name}"
        )
    if size is not None and _shape_tuple(size) != out.shape:
        raise ValueError("size must match out.shape when used together")
    return out.shape


class Generator(_PhiloxState):
    """``np.random.Generator``'s interface on Philox streams (see the module doc)."""

    def __init__(self, seed=None):
        super().__init__(seed)

    def __repr__(self):
        return f"Generator(Philox) at 0x{id(self):X}"

    def random(self, size=None, dtype=_np.float64, out=None):
        shape = _out_shape(size, out, dtype)
        result = self._uniform01(shape, dtype)
        if out is not None:
            _ext.copyto(out, result)
            return out
        return _scalar_or(result, size)

    def standard_normal(self, size=None, dtype=_np.float64, out=None):
        shape = _out_shape(size, out, dtype)
        result = self._standard_normal(shape, dtype)
        if out is not None:
            _ext.copyto(out, result)
            return out
        return _scalar_or(result, size)

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        result = self._integers(low, high, size, dtype, endpoint)
        if result is None:
            return self._fallback(
                "integers",
                (low, high),
                {"size": size, "dtype": dtype, "endpoint": endpoint},
            )
        return _np.dtype(dtype).type(result.item()) if size is None else result

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(_np.random.Generator, name):
            raise AttributeError(f"'Generator' object has no attribute {name!r}")
        return lambda *args, **kwargs: self._fallback(name, args, kwargs)


def default_rng(seed=None):
    """A ``Generator`` on Philox streams keyed by ``seed``."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


class RandomState(_PhiloxState):
    """The legacy ``np.random.RandomState`` interface on Philox streams."""

    def seed(self, seed=None):
        self._reseed(seed)

    def random_sample(self, size=None):
        shape = () if size is None else _shape_tuple(size)
        return _scalar_or(self._uniform01(shape), size)

    random = random_sample
    sample = random_sample
    ranf = random_sample

    def rand(self, *shape):
        return self.random_sample(shape if shape else None)

    def randn(self, *shape):
        return self.standard_normal(shape if shape else None)

    def standard_normal(self, size=None):
        shape = () if size is None else _shape_tuple(size)
        return _scalar_or(self._standard_normal(shape), size)

    def randint(self, low, high=None, size=None, dtype=int):
        if high is None:
            low, high = 0, low
        result = self._integers(low, high, size, dtype, False)
        if result is None:
            return self._fallback_legacy(
                "randint", (low, high), {"size": size, "dtype": dtype}
            )
        return result.item() if size is None else result

    def _fallback_legacy(self, name, args, kwargs):
        stream = self._stream
        self._stream += 1
        state = _np.random.SeedSequence(
            [self._seed & 0xFFFFFFFF, self._seed >> 32, stream]
        )
        legacy = _np.random.RandomState(state.generate_state(4))
        mutates = name in ("shuffle",)
        return _fallback.call(
            getattr(legacy, name), f"random.{name}", args, kwargs, mutates=mutates
        )

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(_np.random.RandomState, name):
            raise AttributeError(f"'RandomState' object has no attribute {name!r}")
        return lambda *args, **kwargs: self._fallback_legacy(name, args, kwargs)


# The legacy module-level functions share one global state, like NumPy's.
_global = RandomState()


def seed(seed=None):
    """Re-key the global state: the same seed gives the same numbers on every engine."""
    _global.seed(seed)


random_sample = _global.random_sample
random = _global.random_sample
sample = _global.random_sample
ranf = _global.random_sample
rand = _global.rand
randn = _global.randn
randint = _global.randint
uniform = _global.uniform
normal = _global.normal
standard_normal = _global.standard_normal

#: Natives by name, for ``__array_function__``-free dispatch tables and tests.
FUNCTIONS = {
    name: globals()[name]
    for name in __all__
    if name not in ("Generator", "RandomState")
}


def __getattr__(name):
    """The other legacy functions (``choice``, ``shuffle``, ``permutation``, ...) through
    NumPy, seeded from the global Philox state; NumPy's classes as they are."""
    if name.startswith("__"):
        raise AttributeError(name)
    attr = getattr(_np.random, name)  # AttributeError for unknown names, like NumPy
    if isinstance(attr, type) or not callable(attr):
        return attr
    return lambda *args, **kwargs: _global._fallback_legacy(name, args, kwargs)
