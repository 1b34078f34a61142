"""The steps of a random program beyond plain array expressions: computed indices,
masks, scans, matrix products, casts and steps that raise. ``Builder`` (in
_random_programs.py) draws them; they live here to keep each file short."""

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from conftest import DTYPES  # the 14 dtypes of the runtime, which casts go through

SIDES = [1, 2, 3, 5, 8, 17, 64, 257]
COLUMNS = [1, 2, 3, 5, 8, 17, 64, 300]
#: Relative tolerance by result dtype; integers and booleans compare exactly.
RTOL = {
    "float64": 1e-9,
    "complex128": 1e-9,
    "float32": 1e-4,
    "complex64": 1e-4,
    "float16": 1e-2,
}
#: Matrix products larger than this (multiply-adds) become matrix-vector products: the
#: reference stack is an interpreter.
MATMUL_WORK = 2_000_000
#: HASSIUM_TEST_RANDOM_RAISING=0 leaves out the steps that may raise (the rest of each
#: program is the same): a campaign can then tell deferred-error bugs from others.
RAISING = os.environ.get("HASSIUM_TEST_RANDOM_RAISING", "1") != "0"


@dataclass
class Step:
    """One statement: its text, and a function (array module, variables) that runs it.

    ``raises`` is "" for a step that must not raise, "forced" for one that may raise and
    reads its result inside its ``try`` (so it must raise NumPy's exception type, or
    none when NumPy raises none), and "lazy" for one that may raise but never reads its
    result (Hassium may then raise nothing)."""

    text: str
    run: Callable[[object, dict], None]
    raises: str = ""


def force(x):
    """Reads ``x``, so a lazy runtime computes it here (NumPy: nothing to do)."""
    np.asarray(x)


def int_bounds(dtype):
    """The range a float is clipped into before it is cast to the integer ``dtype``:
    the dtype's own, within +-60000 (which every float type holds, float16 included)."""
    info = np.iinfo(dtype)
    return max(int(info.min), -60000), min(int(info.max), 60000)


def cast(xp, x, dtype):
    """``x.astype(dtype)``, defined in NumPy: a float or complex bound for an integer
    type is clipped into its range first (a complex by its real part)."""
    if x.dtype.kind in "fc" and dtype.kind in "iu":
        lo, hi = int_bounds(dtype)
        x = xp.clip(x.real, lo, hi)
    return x.astype(dtype)


class SpecialSteps:
    """The kinds of step ``Builder.step`` draws besides array expressions; a mixin
    of ``Builder``, whose state (``rng``, ``vars``, ``n``, ``m``, ...) they use."""

    # ------------------------------------------------------------------ computed indices

    def fresh(self, prefix):
        """A new name for a result kept for the comparison at the end."""
        self.results += 1
        return f"{prefix}{self.results - 1}"

    def key(self):
        """An integer (n, m) expression computed exactly from the data."""
        rng = self.rng
        name = rng.choice(self.exact)
        mul, add = rng.randint(1, 5), rng.randint(0, 3)
        rev = rng.random() < 0.3

        def fn(xp, env):
            x = env[name]
            return (x[::-1] if rev else x) * mul + add

        return f"({name}{'[::-1]' if rev else ''} * {mul} + {add})", fn

    def index(self, size, bad=False):
        """Indices into an axis of `size` computed from data, shape (n, m): in range
        (some negative), or with `bad` possibly out of range, as the data decides."""
        rng = self.rng
        text, key = self.key()
        if bad:
            # Out of range where `key % q` is q - 1: the data decides.
            q = min(rng.choice([1, 2, 3, 7, 50]), size + 1)
            if rng.random() < 0.6:
                return f"({text} % {q} + {size - q + 1})", (
                    lambda xp, env: key(xp, env) % q + (size - q + 1)
                )
            return f"(-({text} % {q}) - {size - q + 2})", (
                lambda xp, env: -(key(xp, env) % q) - (size - q + 2)
            )
        if rng.random() < 0.3:
            return f"({text} % {2 * size} - {size})", (
                lambda xp, env: key(xp, env) % (2 * size) - size
            )
        return f"({text} % {size})", (lambda xp, env: key(xp, env) % size)

    def mask(self):
        """A boolean (n, m) mask computed exactly from the data."""
        rng = self.rng
        if self.is_int and rng.random() < 0.5:
            a, b = rng.sample(self.vars, 2)
            return f"({a} > {b})", (lambda xp, env: env[a] > env[b])
        text, key = self.key()
        q, r = rng.choice([(2, 0), (3, 1), (5, 2), (7, 6)])
        return f"({text} % {q} <= {r})", (lambda xp, env: key(xp, env) % q <= r)

    def bounded(self, x):
        """What scatters write, `f(x)`: `x % 7 - 3` for integers, `x * 0.5 + 0.25` for
        floats, exact and in the dtype of `x`."""
        return x % 7 - 3 if self.is_int else x * 0.5 + 0.25

    def settle(self, x):
        """`x` in the program's dtype again (a scan or product of int32 is int64)."""
        return x.astype(np.dtype(self.dtype))

    def gather(self, target, bad=False):
        """`target = <a gather>`: (text, function of (xp, env) giving the value)."""
        rng, n, m, size = self.rng, self.n, self.m, self.n * self.m
        r = rng.random()
        a = rng.choice(self.vars)
        rtext, rows = self.index(n, bad)
        if r < 0.45:
            # A lazy Hassium index array into a 1-D array: one gather instruction.
            itext, idx = self.index(size, bad)
            return f"{target} = w[{itext}]", lambda xp, env: env["w"][idx(xp, env)]
        if r < 0.75:
            ctext, cols = self.index(m)
            return f"{target} = {a}[{rtext}, {ctext}]", (
                lambda xp, env: env[a][rows(xp, env), cols(xp, env)]
            )
        if r < 0.9:
            j = rng.randrange(m)
            return f"{target} = {a}[{rtext}[:, {j}]]", (
                lambda xp, env: env[a][rows(xp, env)[:, j]]
            )
        return f"{target} = take_along_axis({a}, {rtext}, axis=0)", (
            lambda xp, env: xp.take_along_axis(env[a], rows(xp, env), axis=0)
        )

    def scatter(self, bad=False):
        """An assignment through computed indices, or an `np.add.at`: (text, run).
        Duplicate indices write values that depend on the index alone (NumPy leaves
        the order of duplicate writes open); `add.at` adds them all."""
        rng, n, m, size = self.rng, self.n, self.m, self.n * self.m
        r = rng.random()
        a, b = rng.choice(self.vars), rng.choice(self.vars)
        f = self.bounded
        if r < 0.3:
            itext, idx = self.index(size, bad)

            def run(xp, env):
                i = xp.ravel(idx(xp, env))
                env["w"][i] = f(xp.ravel(env[b])[i % size])

            return f"i = ravel({itext}); w[i] = f(ravel({b})[i % {size}])", run
        if r < 0.5:
            rtext, rows = self.index(n, bad)
            ctext, cols = self.index(m)

            def run(xp, env):
                i, j = rows(xp, env), cols(xp, env)
                env[a][i, j] = f(env[b][i % n, j])

            return f"i, j = {rtext}, {ctext}; {a}[i, j] = f({b}[i % {n}, j])", run
        if r < 0.75:
            itext, idx = self.index(size, bad)

            def run(xp, env):
                xp.add.at(env["w"], xp.ravel(idx(xp, env)), f(xp.ravel(env[b])))

            return f"add.at(w, ravel({itext}), f(ravel({b})))", run
        rtext, rows = self.index(n, bad)
        ctext, cols = self.index(m)

        def run(xp, env):
            xp.add.at(env[a], (rows(xp, env), cols(xp, env)), f(env[b]))

        return f"add.at({a}, ({rtext}, {ctext}), f({b}))", run

    def index_step(self):
        """A gather into an array, a scatter, or an update of the key `k`."""
        rng = self.rng
        r = rng.random()
        target = rng.choice(self.vars)
        if r < 0.35:
            text, fn = self.gather(target)
            return Step(text, lambda xp, env: env.__setitem__(target, fn(xp, env)))
        if r < 0.7:
            return Step(*self.scatter())
        kind = rng.choice(["gather", "affine", "scan", "mix"])
        size, n = self.n * self.m, self.n
        if kind == "gather":
            return Step(
                f"k = ravel(k)[k % {size}]",
                lambda xp, env: env.__setitem__(
                    "k", xp.ravel(env["k"])[env["k"] % size]
                ),
            )
        if kind == "affine":
            mul, add, mod = rng.randint(2, 9), rng.randint(0, 9), rng.choice([97, 101])
            return Step(
                f"k = (k * {mul} + {add}) % {mod}",
                lambda xp, env: env.__setitem__("k", (env["k"] * mul + add) % mod),
            )
        if kind == "scan":
            axis = rng.choice([0, 1])
            return Step(
                f"k = cumsum(k, axis={axis}) % 103",
                lambda xp, env: env.__setitem__(
                    "k", xp.cumsum(env["k"], axis=axis) % 103
                ),
            )
        text, key = self.key()
        h = n // 2

        def mix(xp, env):
            env["k"][h:] = (env["k"][h:] + key(xp, env)[: n - h]) % 89

        return Step(f"k[{h}:] = (k[{h}:] + {text}[:{n - h}]) % 89", mix)

    # ------------------------------------------------------------------ masks

    def mask_step(self):
        rng = self.rng
        mtext, mask = self.mask()
        a, b = rng.choice(self.vars), rng.choice(self.vars)
        r = rng.random()
        if r < 0.3:
            name = self.fresh("s")
            return Step(
                f"{name} = {a}[{mtext}]",
                lambda xp, env: env.__setitem__(name, env[a][mask(xp, env)]),
            )
        if r < 0.5:
            value = rng.choice([2, -1] if self.is_int else [0.5, -0.75])

            def write_scalar(xp, env):
                env[a][mask(xp, env)] = value

            return Step(f"{a}[{mtext}] = {value}", write_scalar)
        if r < 0.7:

            def write_values(xp, env):
                m = mask(xp, env)
                env[a][m] = self.bounded(env[b][m])

            return Step(f"m = {mtext}; {a}[m] = f({b}[m])", write_values)
        # where: a select with a computed condition
        f = self.bounded
        return Step(
            f"{a} = where({mtext}, {b}, f({a}))",
            lambda xp, env: env.__setitem__(
                a, xp.where(mask(xp, env), env[b], f(env[a]))
            ),
        )

    # ------------------------------------------------------------------ scans, matmul

    def scan_step(self):
        rng = self.rng
        a, t = rng.choice(self.vars), rng.choice(self.vars)
        op = rng.choice(["cumsum", "cumprod"])
        axis = rng.choice([0, 1, -1, None])
        if self.is_int:
            # cumprod of -1, 0 and 1 stays small; cumsum wraps as NumPy's does
            if op == "cumprod":
                inner, itext = (lambda xp, x: x % 3 - 1), f"{a} % 3 - 1"
            else:
                inner, itext = (lambda xp, x: x), a
        elif op == "cumprod":
            inner, itext = (lambda xp, x: xp.tanh(x)), f"tanh({a})"
        else:
            inner, itext = (lambda xp, x: x), a
        if axis is None:
            name = self.fresh("s")
            return Step(
                f"{name} = {op}({itext}, axis=None)",
                lambda xp, env: env.__setitem__(
                    name, getattr(xp, op)(inner(xp, env[a]), axis=None)
                ),
            )
        if self.is_int:

            def run(xp, env):
                env[t] = self.settle(getattr(xp, op)(inner(xp, env[a]), axis=axis) % 11)

            return Step(f"{t} = {op}({itext}, axis={axis}) % 11", run)

        length = (self.n, self.m)[axis]
        scale = "" if op == "cumprod" else f" / {length}"

        def run(xp, env):
            x = getattr(xp, op)(inner(xp, env[a]), axis=axis)
            env[t] = x if op == "cumprod" else x / length

        return Step(f"{t} = {op}({itext}, axis={axis}){scale}", run)

    def matmul_step(self):
        rng, n, m = self.rng, self.n, self.m
        a, b = rng.choice(self.vars), rng.choice(self.vars)
        pa, pb = ("% 5", "% 7") if self.is_int else ("", "")
        name = self.fresh("p")
        if n * m * max(n, m) > MATMUL_WORK:
            j = rng.randrange(n)

            def vector(xp, env):
                x, y = env[a], env[b][j]
                if self.is_int:
                    x, y = x % 5, y % 7
                env[name] = x @ y

            return Step(f"{name} = ({a} {pa}) @ ({b}[{j}] {pb})", vector)
        if n == m and rng.random() < 0.5:
            t = rng.choice(self.vars)

            def square(xp, env):
                p = env[a] @ env[b]
                env[t] = self.settle(p % 13) if self.is_int else xp.tanh(p / m)

            back = "% 13" if self.is_int else f"/ {m} (in tanh)"
            return Step(f"{t} = ({a} @ {b}) {back}", square)
        if rng.random() < 0.5:

            def left(xp, env):
                x, y = env[a], env[b]
                if self.is_int:
                    x, y = x % 5, y % 7
                env[name] = xp.matmul(x, y.T)

            return Step(f"{name} = matmul({a} {pa}, ({b} {pb}).T)", left)

        def right(xp, env):
            x, y = env[a], env[b]
            if self.is_int:
                x, y = x % 5, y % 7
            env[name] = x.T @ y

        return Step(f"{name} = ({a} {pa}).T @ ({b} {pb})", right)

    # ------------------------------------------------------------------ casts

    def cast_step(self):
        """A chain of casts through the 14 dtypes, kept for the comparison. Chains that
        end in an integer or bool type start from exact data (the key, or dyadic
        fractions of it, which every float type holds exactly); chains from the
        program's float arrays stay among float and complex types."""
        rng = self.rng
        name = self.fresh("c")
        floats = [d for d in DTYPES if d.kind in "fc"]
        if self.is_int or rng.random() < 0.6:
            text, key = self.key()
            if rng.random() < 0.5:
                text = f"(({text} % 61 - 30) * 0.25)"
                source = lambda xp, env: (key(xp, env) % 61 - 30) * 0.25
            else:
                source = key
            chain = [rng.choice(DTYPES) for _ in range(rng.randint(1, 4))]
        else:
            a = rng.choice(self.vars)
            text, source = a, (lambda xp, env: env[a])
            chain = [rng.choice(floats) for _ in range(rng.randint(1, 3))]
        double = rng.random() < 0.3
        self.rtol[name] = max(
            [RTOL.get(self.dtype, 0.0)]
            + [RTOL.get(d.name, 0.0) for d in chain if d.kind in "fc"]
        )

        def run(xp, env):
            x = source(xp, env)
            for d in chain:
                x = cast(xp, x, d)
                if double:
                    x = x + x  # arithmetic in each dtype (bool: or; ints: wrapping)
            env[name] = x

        steps = "".join(f".astype({d})" for d in chain)
        extra = " (each followed by x + x)" if double else ""
        return Step(f"{name} = {text}{steps}{extra}", run)

    # ------------------------------------------------------------------ errors

    def error_step(self):
        """A step that may raise, as the data decides: run inside `try`."""
        rng, n = self.rng, self.n
        r = rng.random()
        target = rng.choice(self.vars)
        if r < 0.3:
            text, fn = self.gather(target, bad=True)
            if rng.random() < 0.5:

                def forced(xp, env):
                    x = fn(xp, env)
                    force(x)
                    env[target] = x

                return Step(f"{text}; force({target})", forced, "forced")

            def lazy(xp, env):
                fn(xp, env)  # the result is dropped unread

            return Step(text.replace(f"{target} =", "_ ="), lazy, "lazy")
        if r < 0.55:
            text, run = self.scatter(bad=True)

            def forced(xp, env):
                run(xp, env)
                for v in env.values():
                    force(v)

            return Step(f"{text}; force(everything)", forced, "forced")
        if r < 0.8:
            # An integer to a negative power held in an array: NumPy's ValueError.
            btext, base = self.key()
            etext, expo = self.key()
            q = rng.choice([3, 4, 40])
            name = self.fresh("e")
            lazy = rng.random() < 0.4

            # Bases -1..1 for exponents up to 38: no product overflows (signed
            # overflow is undefined in C, whatever NumPy's loops happen to give).
            span = 3 if q == 40 else 7

            def power(xp, env):
                x = (base(xp, env) % span - span // 2) ** (expo(xp, env) % q - 1)
                if not lazy:
                    force(x)
                    env[name] = x

            what = "_" if lazy else name
            text = f"{what} = ({btext} % {span} - {span // 2}) ** ({etext} % {q} - 1)"
            return Step(
                text + ("" if lazy else f"; force({name})"),
                power,
                "lazy" if lazy else "forced",
            )
        a, b = rng.choice(self.vars), rng.choice(self.vars)
        name = self.fresh("x")
        kind = rng.choice(["rows", "matmul", "mask"])
        if kind == "rows":
            text = f"{name} = {a} + {b}[1:]"
            fn = lambda xp, env: env[a] + env[b][1:]
        elif kind == "matmul":
            text = f"{name} = {a} @ {b}"
            fn = lambda xp, env: env[a] @ env[b]
        else:
            mtext, mask = self.mask()
            text = f"{name} = {a}[{mtext}[{n // 2}:]]"
            fn = lambda xp, env: env[a][mask(xp, env)[n // 2 :]]

        def shapes(xp, env):
            x = fn(xp, env)
            force(x)
            env[name] = x

        return Step(text, shapes, "forced")
