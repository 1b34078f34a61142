"""How test_random_programs.py draws a program (``Builder``) and runs and compares
it (``run_program``, ``difference``, ``first_difference``, ``listing``)."""

import random
import warnings

import numpy as np
from _program_steps import (
    COLUMNS,
    RAISING,
    RTOL,
    SIDES,
    SpecialSteps,
    Step,
)


class Builder(SpecialSteps):
    """Draws one program of `nvars` arrays `v0..` of one dtype and shape (n, m), the
    int64 key `k` of that shape and the 1-D `w` of the dtype and n*m elements."""

    def __init__(self, seed):
        self.rng = rng = random.Random(seed)
        self.n = rng.choice(SIDES)
        self.m = rng.choice(COLUMNS) if rng.random() < 0.7 else self.n
        self.dtype = rng.choice(["float64", "float64", "float32", "int64", "int32"])
        self.is_int = self.dtype.startswith("int")
        self.vars = [f"v{k}" for k in range(rng.randint(2, 4))]
        # Arrays whose values are exact on every engine: what indices, masks and integer
        # casts are computed from.
        self.exact = ["k"] + (self.vars if self.is_int else [])
        self.reductions = 0
        self.results = 0
        # A result is as precise as the least precise float type it went through (a
        # float64 result of float32 data holds float32's error): name -> rtol.
        self.rtol = {}

    def view(self):
        """A view of one of the arrays: (text, function, shape kind). "full" views have
        shape (n, m), "inner" ones (n-1, m-1); either may be reversed along each axis,
        and a square full view transposed."""
        rng, n, m = self.rng, self.n, self.m
        name = rng.choice(self.vars)
        ops = []
        if rng.random() < 0.5:
            a, b = rng.randint(0, 1), rng.randint(0, 1)
            ops.append(
                (
                    f"[{a}:{n - 1 + a}, {b}:{m - 1 + b}]",
                    (slice(a, n - 1 + a), slice(b, m - 1 + b)),
                )
            )
            kind = "inner"
        else:
            kind = "full"
        if rng.random() < 0.5:
            ops.append(("[::-1]", (slice(None, None, -1),)))
        if rng.random() < 0.5:
            ops.append(("[:, ::-1]", (slice(None), slice(None, None, -1))))
        transpose = kind == "full" and n == self.m and rng.random() < 0.3

        def fn(xp, env, name=name, ops=ops, transpose=transpose):
            x = env[name]
            for _, index in ops:
                x = x[index]
            return x.T if transpose else x

        text = name + "".join(t for t, _ in ops) + (".T" if transpose else "")
        return text, fn, kind

    def operand(self, kind):
        """A second operand of the same shape: another view, a row or column that
        broadcasts, or a Python scalar."""
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            value = rng.choice([2, -1, 3] if self.is_int else [0.5, 2.0, -1.5])
            return repr(value), (lambda xp, env, v=value: v)
        rows = self.n - 1 if kind == "inner" else self.n
        cols = self.m - 1 if kind == "inner" else self.m
        if r < 0.3:
            name, i = rng.choice(self.vars), rng.randrange(self.n)
            return f"{name}[{i}, :{cols}]", (
                lambda xp, env, a=name, i=i: env[a][i, :cols]
            )
        if r < 0.4:
            name = rng.choice(self.vars)
            return f"{name}[:{rows}, 0:1]", (lambda xp, env, a=name: env[a][:rows, 0:1])
        for _ in range(20):
            text, fn, k = self.view()
            if k == kind:
                return text, fn
        return repr(2), (lambda xp, env: 2)

    def expr(self):
        """An expression of the dtype over views of one shape kind."""
        rng = self.rng
        ta, fa, kind = self.view()
        tb, fb = self.operand(kind)
        ops = ["+", "-", "*", "maximum", "minimum", "where"]
        ops += ["//", "%"] if self.is_int else ["/"]
        op = rng.choice(ops)
        if op in ("+", "-", "*"):
            text = f"({ta} {op} {tb})"
            fn = {
                "+": lambda xp, env: fa(xp, env) + fb(xp, env),
                "-": lambda xp, env: fa(xp, env) - fb(xp, env),
                "*": lambda xp, env: fa(xp, env) * fb(xp, env),
            }[op]
        elif op == "//":
            text, fn = f"({ta} // 3)", lambda xp, env: fa(xp, env) // 3
        elif op == "%":
            text, fn = f"({ta} % 5)", lambda xp, env: fa(xp, env) % 5
        elif op == "/":
            text = f"({ta} / (abs({tb}) + 1.0))"
            fn = lambda xp, env: fa(xp, env) / (xp.abs(fb(xp, env)) + 1.0)
        elif op == "where":
            text = f"where({ta} > {tb}, {ta}, {tb})"

            def fn(xp, env):
                a, b = fa(xp, env), fb(xp, env)
                return xp.where(a > b, a, b)
        else:
            text = f"{op}({ta}, {tb})"
            fn = lambda xp, env, op=op: getattr(xp, op)(fa(xp, env), fb(xp, env))
        unary = rng.choice(["abs", "negative", "none", "bounded", "bounded"])
        if unary == "bounded" and not self.is_int:
            unary = rng.choice(["tanh", "sin", "expnegabs"])
        elif unary == "bounded":
            unary = "none"
        if unary == "expnegabs":
            return (
                f"exp(-abs({text}))",
                (lambda xp, env: xp.exp(-xp.abs(fn(xp, env)))),
                kind,
            )
        if unary != "none":
            return (
                f"{unary}({text})",
                (lambda xp, env, u=unary: getattr(xp, u)(fn(xp, env))),
                kind,
            )
        return text, fn, kind

    def cast(self, fn):
        """Float32 programs keep float32 arrays (a Python float operand would not
        promote, but a float64 0-d reduction result can)."""
        if self.dtype == "float32":
            return lambda xp, env: fn(xp, env).astype(np.float32)
        return fn

    def step(self):
        """One step: 55% the array steps above (in-place updates through views,
        shifted copies, reductions), the rest indexing, masks, scans, products, casts
        and steps that may raise."""
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return self.array_step(r / 0.55)
        r = (r - 0.55) / 0.45
        if r < 0.3:
            return self.index_step()
        if r < 0.45:
            return self.mask_step()
        if r < 0.6:
            return self.scan_step()
        if r < 0.7:
            return self.matmul_step()
        if r < 0.85:
            return self.cast_step()
        return self.error_step()

    def array_step(self, r):
        """An update through views, a shifted copy or a reduction (`r` in [0, 1))."""
        rng = self.rng
        target = rng.choice(self.vars)
        if r < 0.3:
            text, fn, kind = self.expr()
            if kind == "full":
                g = self.cast(fn)

                def run(xp, env, t=target):
                    env[t] = g(xp, env)

                return Step(f"{target} = {text}", run)
            g = self.cast(fn)

            def run(xp, env, t=target):
                env[t][1:, 1:] = g(xp, env)

            return Step(f"{target}[1:, 1:] = {text}", run)
        if r < 0.55:
            text, fn, kind = self.expr()
            op = rng.choice(["+=", "-=", "*="])
            if op == "*=" and not self.is_int:
                # A bounded factor, so repeated products cannot grow.
                text, fn = f"tanh({text})", (lambda xp, env, f=fn: xp.tanh(f(xp, env)))
            index, itext = {
                "inner": ((slice(1, None), slice(1, None)), "[1:, 1:]"),
                "full": rng.choice(
                    [
                        ((slice(None), slice(None)), "[:, :]"),
                        ((slice(None, None, -1),), "[::-1]"),
                    ]
                ),
            }[kind]
            g = self.cast(fn)

            def run(xp, env, t=target, op=op, index=index):
                value = g(xp, env)
                if op == "+=":
                    env[t][index] += value
                elif op == "-=":
                    env[t][index] -= value
                else:
                    env[t][index] *= value

            return Step(f"{target}{itext} {op} {text}", run)
        if r < 0.7:
            s, t = rng.choice(self.vars), target
            is_int = self.is_int

            def add_shifted(xp, env):
                env[t][1:] += env[s][:-1]

            def assign_shifted(xp, env):
                env[t][:-1] = env[s][1:]

            def smear_columns(xp, env):
                env[t][:, 1:] = env[t][:, :-1] // 2 if is_int else env[t][:, :-1] * 0.5

            def reverse_rows(xp, env):
                env[t][::-1] = env[t]

            def add_mirror(xp, env):
                env[t][:, ::-1] += env[t]

            half = "// 2" if is_int else "* 0.5"
            return rng.choice(
                [
                    Step(f"{t}[1:] += {s}[:-1]", add_shifted),
                    Step(f"{t}[:-1] = {s}[1:]", assign_shifted),
                    Step(f"{t}[:, 1:] = {t}[:, :-1] {half}", smear_columns),
                    Step(f"{t}[::-1] = {t}", reverse_rows),
                    Step(f"{t}[:, ::-1] += {t}", add_mirror),
                ]
            )
        # A reduction, kept for comparison and sometimes broadcast back.
        text, fn, kind = self.expr()
        axis = rng.choice([None, 0, 1, -1])
        red = rng.choice(["sum", "max", "min"] + ([] if self.is_int else ["mean"]))
        broadcast_back = axis is not None and rng.random() < 0.5
        if broadcast_back and red == "sum" and not self.is_int:
            red = "mean"  # keeps what goes back into the arrays bounded
        name = f"r{self.reductions}"
        self.reductions += 1
        steps_text = f"{name} = {red}({text}, axis={axis})"

        def run(xp, env, name=name, red=red, axis=axis):
            env[name] = getattr(xp, red)(fn(xp, env), axis=axis)

        if not broadcast_back:
            return Step(steps_text, run)
        rows = self.n if kind == "full" else self.n - 1
        cols = self.m if kind == "full" else self.m - 1
        back = self.dtype == "float32"

        def run_back(xp, env, t=target, name=name, axis=axis, run=run):
            run(xp, env)
            r = env[name].astype(np.float32) if back else env[name]
            if axis == 0:
                env[t][:, :cols] += r
            else:
                env[t][:rows, :] -= r[:, None]

        where = (
            f"{target}[:, :{cols}] += {name}"
            if axis == 0
            else f"{target}[:{rows}, :] -= {name}[:, None]"
        )
        return Step(f"{steps_text}; {where}", run_back)

    def program(self):
        rng = self.rng
        init = []
        shape, size = (self.n, self.m), self.n * self.m
        for k, name in enumerate(self.vars + ["w"]):
            if self.is_int:
                mul, mod = rng.randint(1, 7), rng.randint(3, 11)
                data = ((np.arange(size) * mul + k) % mod - 3).astype(self.dtype)
                text = f"{name} = ((arange({size}) * {mul} + {k}) % {mod} - 3)"
            else:
                freq = round(rng.random(), 3)
                data = np.sin(np.arange(size) * freq + k).astype(self.dtype)
                text = f"{name} = sin(arange({size}) * {freq} + {k})"
            if name != "w":
                data = data.reshape(shape)
                text += f".reshape{shape}"
            init.append(Step(text, self.create(name, data)))
        mul, mod = rng.randint(1, 13), rng.choice([7, 31, 97])
        key = ((np.arange(size) * mul + 1) % mod).reshape(shape)
        init.append(
            Step(
                f"k = ((arange({size}) * {mul} + 1) % {mod}).reshape{shape}",
                self.create("k", key),
            )
        )
        body = [self.step() for _ in range(rng.randint(3, 10))]
        if not RAISING:
            body = [s for s in body if not s.raises]
        if rng.random() < 0.5:
            return init, body, 1
        if not self.is_int:
            for name in self.vars + ["w"]:

                def squash(xp, env, name=name):
                    env[name] = xp.tanh(env[name])

                body.append(Step(f"{name} = tanh({name})", squash))
        return init, body, rng.randint(2, 4)

    @staticmethod
    def create(name, data):
        def run(xp, env):
            # A copy: the NumPy run must leave `data` as it is for Hassium's.
            env[name] = xp.array(data)

        return run


def run_program(xp, init, body, reps, flush_each=False):
    """Runs a program: (its variables as NumPy arrays, the variables after each step
    when `flush_each`, and what each step that may raise raised, as a list of
    (step, exception type or None))."""
    env = {}
    outcomes = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for step in init:
            step.run(xp, env)
        trail = []
        for _ in range(reps):
            for step in body:
                if step.raises:
                    try:
                        step.run(xp, env)
                    except Exception as error:  # noqa: BLE001 -- compared with NumPy's
                        outcomes.append((step, type(error)))
                    else:
                        outcomes.append((step, None))
                else:
                    step.run(xp, env)
                if flush_each:
                    trail.append((step.text, {k: np.array(v) for k, v in env.items()}))
        return {k: np.asarray(v) for k, v in env.items()}, trail, outcomes


def difference(got, expected, rtol=0.0):
    """Why `got` is not `expected` (to `rtol`, or its dtype's tolerance where that is
    looser), or None."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return (
            f"{got.dtype}{got.shape} where NumPy has {expected.dtype}{expected.shape}"
        )
    if expected.dtype.kind in "iub":
        return None if np.array_equal(got, expected) else "values differ"
    rtol = max(rtol, RTOL[expected.dtype.name])
    if not np.array_equal(np.isnan(got), np.isnan(expected)):
        return "NaNs at other places"
    finite = np.isfinite(expected)
    if not np.array_equal(got[~finite], expected[~finite], equal_nan=True):
        return "infinities differ"
    scale = max(float(np.abs(expected[finite]).max()) if finite.any() else 1.0, 1.0)
    if np.allclose(got[finite], expected[finite], rtol=rtol, atol=rtol * scale):
        return None
    return f"values differ by up to {np.max(np.abs(got[finite] - expected[finite]))}"


def first_difference(hs, init, body, reps, tol):
    """The step after which a flushed-every-step Hassium run first differs from NumPy."""
    try:
        _, want, _ = run_program(np, init, body, reps, flush_each=True)
        _, got, _ = run_program(hs, init, body, reps, flush_each=True)
    except Exception as error:  # noqa: BLE001 -- a diagnosis, not the verdict
        return f"flushed after every step, it raises {type(error).__name__}: {error}"
    for (text, g), (_, w) in zip(got, want):
        for name in w:
            why = (
                "missing" if name not in g else difference(g[name], w[name], tol(name))
            )
            if why:
                return f"first differs after `{text}`: {name}: {why}"
    return "every step agrees when flushed on its own: it differs only when fused"


def listing(init, body, reps):
    def line(step):
        if not step.raises:
            return step.text
        return f"try: {step.text}  # may raise ({step.raises})"

    lines = [s.text for s in init]
    if reps == 1:
        return "\n".join(lines + [line(s) for s in body])
    return "\n".join(
        lines + [f"for _ in range({reps}):"] + ["    " + line(s) for s in body]
    )
