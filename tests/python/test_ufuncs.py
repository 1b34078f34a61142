"""Every ufunc that is one elementwise opcode, against NumPy: all dtypes, every layout,
broadcasting, Python scalars (NEP 50), out= and dtype=, and the ufunc methods."""

import warnings
from functools import partial, wraps

import numpy as np
import pytest
from conftest import DTYPES, LAYOUTS, assert_same, both, sample
from hassium import _hassium

# The ufuncs and aliases of Hassium's opcode table (core/src/opcode.rs): a new opcode is
# tested here by its row alone.
TABLE = _hassium.ufuncs()
UNARY = [name for name, nin, _ in TABLE if nin == 1]
BINARY = [name for name, nin, _ in TABLE if nin == 2]
ALIASES = {alias: name for name, _, aliases in TABLE for alias in aliases}
# Domains where NumPy's result is data-dependent or an error: positive data only.
# (reciprocal: NumPy's integer 1/0 is whatever the C division gives -- INT_MIN for
# int32/int64 on x86 -- not a semantic worth pinning.)
POSITIVE = {
    "power",
    "left_shift",
    "right_shift",
    "log",
    "log2",
    "log10",
    "sqrt",
    "reciprocal",
}

#: A float16 product rounds to half precision after every step, so the order the
#: engine combines elements in moves the result by a few ulps. Float16 sums too: NumPy
#: accumulates them in float32 along the innermost axis but rounds after every row along
#: outer axes, while Hassium's engines accumulate in float32 along every axis (more
#: accurate, a few ulps apart from NumPy's outer-axis result).
F16_PRODUCT_RTOL = 4e-3


def numpy_or_error(func, *args, **kwargs):
    """NumPy's result, or the exception type NumPy raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return func(*args, **kwargs), None
        except Exception as err:  # noqa: BLE001 - the type is what the test compares
            return None, type(err)


def check(hs_func, np_func, hs_args, np_args, what, tol=None, **kwargs):
    """``hs_func(*hs_args)`` equals ``np_func(*np_args)``, or raises NumPy's exception
    type; ``tol`` overrides the dtype's relative tolerance. Inside a ``with Checks()``
    block the result is read when the block ends."""
    if _OPEN:
        _OPEN[-1].check(hs_func, np_func, hs_args, np_args, what, tol, **kwargs)
        return
    with Checks() as checks:
        checks.check(hs_func, np_func, hs_args, np_args, what, tol, **kwargs)


#: The open ``Checks`` blocks, innermost last.
_OPEN = []


def same(got, expected, rtol=None, what=""):
    """``assert_same``, when the innermost open ``Checks`` block ends if there is one."""
    if _OPEN:
        _OPEN[-1].same(got, expected, rtol, what)
    else:
        assert_same(got, expected, rtol=rtol, what=what)


def batched(test):
    """The test with its whole body in one ``Checks`` block."""

    @wraps(test)
    def run(*args, **kwargs):
        with Checks():
            return test(*args, **kwargs)

    return run


class Checks:
    """Collects the [`check`]s made in its ``with`` block and reads their results
    together when it ends: one flush, so the engine compiles all their kernels in one
    call of the C compiler instead of one each. Where every kernel is compiled (the cpu
    engine untiered), that halves the cost of a test of seven layouts. An expected error
    is checked at once."""

    def __init__(self):
        self.pending = []

    def __enter__(self):
        _OPEN.append(self)
        return self

    def __exit__(self, kind, *_):
        _OPEN.remove(self)
        if kind is not None:
            return
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for got, expected, tol, what in self.pending:
                assert_same(got, expected, rtol=tol, what=what)

    def check(self, hs_func, np_func, hs_args, np_args, what, tol=None, **kwargs):
        expected, error = numpy_or_error(np_func, *np_args, **kwargs)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if error is not None:
                with pytest.raises(error):
                    np.asarray(hs_func(*hs_args, **kwargs))
                return
            self.pending.append((hs_func(*hs_args, **kwargs), expected, tol, what))

    def same(self, got, expected, rtol=None, what=""):
        """``assert_same(got, expected, rtol, what)`` when the block ends."""
        self.pending.append((got, expected, rtol, what))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ufunc_matches_numpy_on_every_layout(hs, name, dtype):
    kind = "positive" if name in POSITIVE else "mixed"
    h, n = both(hs, sample(dtype, kind=kind))
    with Checks() as checks:
        for layout, view in LAYOUTS.items():
            checks.check(
                getattr(hs, name),
                getattr(np, name),
                (view(h),),
                (view(n),),
                f"{name} {layout}",
            )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_ufunc_matches_numpy_on_layouts_and_broadcasts(hs, name, dtype):
    kind = "positive" if name in POSITIVE else "mixed"
    data = sample(dtype, kind=kind)
    other = sample(dtype, kind="positive" if name in POSITIVE else "mixed", seed=1)
    if name in ("left_shift", "right_shift") and dtype.kind in "iu":
        other = (other % 5).astype(dtype)
    h, n = both(hs, data)
    h2, n2 = both(hs, other)
    hf, nf = getattr(hs, name), getattr(np, name)
    with Checks() as c:
        for layout, view in LAYOUTS.items():
            c.check(
                hf, nf, (view(h), view(h2)), (view(n), view(n2)), f"{name} {layout}"
            )
        # Broadcasting: a row, a column, a 0-d operand.
        c.check(
            hf, nf, (h, h2[0, :, :1]), (n, n2[0, :, :1]), f"{name} broadcast column"
        )
        c.check(hf, nf, (h[:, :1], h2[1]), (n[:, :1], n2[1]), f"{name} broadcast both")
        c.check(
            hf, nf, (h[0, 0, 0, ...], h2), (n[0, 0, 0, ...], n2), f"{name} 0-d with 3-d"
        )


@pytest.mark.parametrize(
    "name", ["add", "multiply", "subtract", "divide", "power", "maximum"]
)
@pytest.mark.parametrize(
    "dtype", ["int8", "uint8", "int64", "float16", "float32", "complex64"]
)
@pytest.mark.parametrize("scalar", [2, 1.5, True, 1j], ids=repr)
def test_python_scalars_are_weak_like_numpy(hs, name, dtype, scalar):
    h, n = both(hs, sample(dtype, kind="positive"))
    hf, nf = getattr(hs, name), getattr(np, name)
    check(hf, nf, (h, scalar), (n, scalar), f"{name}(array, {scalar!r})")
    check(hf, nf, (scalar, h), (scalar, n), f"{name}({scalar!r}, array)")


@pytest.mark.parametrize(
    "name,args",
    [
        ("sqrt", (0.5,)),
        ("exp", (np.float32(-1.5),)),
        ("log", (0,)),
        ("add", (2, 3)),
        ("maximum", (2, np.float16(3.5))),
        ("divide", (1, 0)),
        ("arctan2", (1.0, np.float64(-2.0))),
        ("logical_and", (True, 0)),
        ("multiply", (np.int8(100), np.int8(3))),
        ("absolute", (-3 + 4j,)),
    ],
    ids=repr,
)
def test_a_ufunc_of_scalars_alone_gives_numpys_scalar(hs, name, args):
    """No array is involved, so there is nothing to record: the result is NumPy's own
    scalar, of NumPy's type (``np.sqrt(0.5)`` is a ``float``), and its warnings."""
    with warnings.catch_warnings(record=True) as seen_np:
        warnings.simplefilter("always")
        want = getattr(np, name)(*args)
    with warnings.catch_warnings(record=True) as seen_hs:
        warnings.simplefilter("always")
        got = getattr(hs, name)(*args)
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want)
    assert [str(w.message) for w in seen_hs] == [str(w.message) for w in seen_np]
    if isinstance(want, float):
        assert isinstance(got, float)


@pytest.mark.parametrize(
    "left,right",
    [
        ("int8", "uint8"),
        ("int32", "float32"),
        ("uint64", "int64"),
        ("float16", "int16"),
        ("bool", "int8"),
        ("float32", "complex128"),
        ("uint16", "float16"),
    ],
)
def test_mixed_dtypes_promote_like_numpy(hs, left, right):
    h, n = both(hs, sample(left))
    h2, n2 = both(hs, sample(right, seed=3))
    for name in ("add", "multiply", "less", "maximum"):
        check(
            getattr(hs, name),
            getattr(np, name),
            (h, h2),
            (n, n2),
            f"{name} {left}+{right}",
        )


@pytest.mark.parametrize("name", BINARY)
def test_every_pair_of_dtypes_takes_numpys_loop(hs, name):
    """NumPy picks the first loop that each input casts to safely, input by input, which
    is not always their promotion's: ``arctan2(uint8, int8)`` runs float16's loop where
    int16, their promotion, would take float32's. The result dtype (or the exception
    type) of every ordered pair of the 14 dtypes; values of such pairs are below."""
    wrong = []
    for left in DTYPES:
        for right in DTYPES:
            n1, n2 = np.ones(2, dtype=left), np.ones(2, dtype=right)
            want, error = numpy_or_error(getattr(np, name), n1, n2)
            got, got_error = numpy_or_error(
                getattr(hs, name), hs.asarray(n1), hs.asarray(n2)
            )
            if error is not None or got_error is not None:
                if error is not got_error:
                    wrong.append(f"{left}, {right}: {got_error} raised, NumPy {error}")
                continue
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            if [w.dtype for w in want] != [g.dtype for g in got]:
                wrong.append(
                    f"{left}, {right}: {[g.dtype for g in got]}, NumPy {[w.dtype for w in want]}"
                )
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "name", ["arctan2", "hypot", "copysign", "divide", "add", "power", "less"]
)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16"])
@pytest.mark.parametrize("value", [-1, 300, -129, 70000])
def test_a_python_int_out_of_range_is_checked_against_the_loop(hs, name, dtype, value):
    """A weak int converts to the loop's dtype: a float loop takes any, so
    ``arctan2(uint8s, -1)`` is float16 and ``uint8s / -1`` float64, while ``add`` and
    ``power`` (integer loops) raise NumPy's OverflowError (found by test_api_fuzz.py)."""
    h, n = both(hs, np.array([1, 7], dtype=dtype))
    check(getattr(hs, name), getattr(np, name), (h, value), (n, value), name)


@pytest.mark.parametrize("name", ["arctan2", "hypot", "copysign", "nextafter"])
@pytest.mark.parametrize(
    "left,right", [("uint8", "int8"), ("int8", "uint16"), ("uint16", "int16")]
)
def test_float_ufuncs_of_mixed_ints_compute_in_numpys_loop(hs, name, left, right):
    h, n = both(hs, sample(left))
    h2, n2 = both(hs, sample(right, seed=3))
    check(
        getattr(hs, name), getattr(np, name), (h, h2), (n, n2), f"{name} {left}+{right}"
    )


@pytest.mark.parametrize("alias,target", sorted(ALIASES.items()))
def test_aliases_are_the_same_ufunc_as_in_numpy(hs, alias, target):
    assert getattr(hs, alias) is getattr(hs, target)
    assert getattr(hs, alias).__name__ == getattr(np, alias).__name__


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_ufunc_objects_report_numpys_interface(hs, name):
    u = getattr(hs, name)
    assert u.__name__ == getattr(np, name).__name__
    assert u.nin == getattr(np, name).nin
    assert u.nout == getattr(np, name).nout


def test_out_receives_the_result_and_is_returned(hs):
    h, n = both(hs, sample("float64"))
    h_out = hs.zeros((3, 4, 5))
    n_out = np.zeros((3, 4, 5))
    r = hs.add(h, 1.0, out=h_out)
    np.add(n, 1.0, out=n_out)
    assert r is h_out
    assert_same(h_out, n_out)
    # Into a strided view: only the view changes.
    h_out2, n_out2 = both(hs, np.zeros((3, 4, 10)))
    hs.multiply(h, 2.0, out=h_out2[:, :, ::2])
    np.multiply(n, 2.0, out=n_out2[:, :, ::2])
    assert_same(h_out2, n_out2)
    # Positional out and out=(array,) like NumPy.
    hs.sqrt(hs.abs(h), h_out)
    np.sqrt(np.abs(n), n_out)
    assert_same(h_out, n_out)
    hs.negative(h, out=(h_out,))
    np.negative(n, out=(n_out,))
    assert_same(h_out, n_out)


def test_out_with_an_unsafe_cast_raises_numpys_type_error(hs):
    h, _ = both(hs, sample("float64"))
    with pytest.raises(TypeError):
        hs.add(h, 1.0, out=hs.zeros((3, 4, 5), dtype=np.int32))


def test_dtype_argument_computes_in_that_dtype(hs):
    h, n = both(hs, sample("int16"))
    assert_same(hs.add(h, h, dtype=np.float32), np.add(n, n, dtype=np.float32))
    check(hs.sqrt, np.sqrt, (h,), (n,), "sqrt dtype=float64", dtype="float64")


@pytest.mark.parametrize(
    "name", ["less", "equal", "logical_and", "isnan", "isfinite", "absolute"]
)
def test_dtype_argument_fixes_the_output_dtype_as_numpy_does(hs, name):
    # `dtype=` is the output's dtype: `less(ints, ints, dtype=bool)` compares the ints
    # (not their cast to bool), and `dtype=float64` has no comparison loop.
    uf = getattr(np, name)
    for dtype in ["int64", "float64", "complex128", "bool"]:
        h, n = both(hs, sample(dtype))
        for out in ["bool", "float64", "int8"]:
            args, nargs = [h] * uf.nin, [n] * uf.nin
            check(
                getattr(hs, name),
                uf,
                args,
                nargs,
                f"{name} {dtype} dtype={out}",
                dtype=out,
            )


def test_dtype_argument_casts_the_inputs_under_the_casting_rule(hs):
    f, nf = both(hs, sample("float64"))
    i, ni = both(hs, sample("int64"))
    z, nz = both(hs, sample("complex128"))
    cases = [
        ((f, 1), (nf, 1), "int8", "same_kind"),  # float input to an integer loop
        ((i, 1.5), (ni, 1.5), "int8", "same_kind"),  # a Python float, too
        ((z, 1), (nz, 1), "float64", "same_kind"),
        ((i, 1), (ni, 1), "int8", "same_kind"),  # int64 to int8 is the same kind
        ((f, 1), (nf, 1), "int8", "unsafe"),
        ((f, np.float64(1)), (nf, np.float64(1)), "float32", "same_kind"),
        ((i, i), (ni, ni), "float16", "safe"),
    ]
    for hargs, nargs, dtype, casting in cases:
        check(
            hs.add,
            np.add,
            hargs,
            nargs,
            f"add dtype={dtype} {casting}",
            dtype=dtype,
            casting=casting,
        )


def test_three_argument_pow_is_a_type_error_like_numpy(hs):
    with pytest.raises(TypeError):
        pow(hs.asarray([2]), 3, 5)


def test_shape_mismatch_raises_value_error_at_the_call(hs):
    with pytest.raises(ValueError):
        hs.add(hs.ones((3, 4)), hs.ones((4, 3)))
    with pytest.raises(ValueError):
        hs.ones((3, 4)) + hs.ones(5)


def test_unsupported_dtype_raises_type_error_at_the_call(hs):
    with pytest.raises(TypeError):
        hs.bitwise_and(hs.ones(3), hs.ones(3))
    with pytest.raises(TypeError):
        hs.invert(hs.ones(3, dtype=np.float32))


def _error_of(call):
    """(class, message) of what `call()` raises, or None when it returns."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as err:  # noqa: BLE001 - the class is what the test compares
            return type(err), str(err)
    return None


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_a_ufunc_without_a_loop_raises_numpys_exact_error(hs, name):
    # NumPy's class and words, not a subclass with other words: a plain TypeError "not
    # supported for the input types" for a call, "No loop matching the specified
    # signature" when dtype= names the loop, and the same from reduce.
    uf, hf = getattr(np, name), getattr(hs, name)
    seen = 0
    for dtype in DTYPES:
        n = np.ones(3, dtype=dtype)
        h = hs.asarray(n)
        calls = [(lambda f, a: f(*[a] * f.nin), "call")]
        if uf.nin == 2:
            calls.append((lambda f, a: f.reduce(a), "reduce"))
        for call, how in calls:
            want = _error_of(partial(call, uf, n))
            if want is None or want[0] is not TypeError:
                continue
            seen += 1
            assert _error_of(partial(call, hf, h)) == want, (name, dtype, how)
    for a, loop in [("int64", "float64"), ("float64", "int64"), ("bool", "complex128")]:
        n = np.ones(3, dtype=a)
        want = _error_of(partial(uf, *[n] * uf.nin, dtype=loop))
        if want is not None and want[0] is TypeError:
            seen += 1
            got = _error_of(partial(hf, *[hs.asarray(n)] * uf.nin, dtype=loop))
            assert got == want, (name, a, loop)
    if name in ("invert", "bitwise_and", "left_shift", "floor", "remainder"):
        assert seen > 0, "NumPy refuses these on floats or complex numbers"


@pytest.mark.parametrize(
    "op", ["<", ">=", "+", "-", "*", "/", "//", "%", "**", "&", "<<"], ids=str
)
@pytest.mark.parametrize("text", ["a", b"x"], ids=["str", "bytes"])
def test_an_operator_with_a_string_raises_numpys_error(hs, op, text):
    # NumPy converts the string to a string array and finds no loop (or a string loop it
    # refuses to run this way); the class and words are NumPy's, either side.
    for dtype in ("float64", "int64", "bool"):
        n = np.ones(3, dtype=dtype)
        h = hs.asarray(n)
        expr = f"left {op} right"
        for left, right, hl, hr in [(n, text, h, text), (text, n, text, h)]:
            want = _error_of(partial(eval, expr, {}, {"left": left, "right": right}))
            got = _error_of(partial(eval, expr, {}, {"left": hl, "right": hr}))
            assert got == want, (op, dtype, text)


# Every alias, NumPy 2's array-API names among them; NumPy itself says which ufunc each
# one is.
NUMPY2_ALIASES = sorted(ALIASES)


@pytest.mark.parametrize("alias", NUMPY2_ALIASES)
def test_numpy2_alias_names_are_the_native_ufuncs(hs, alias, monkeypatch):
    # `np.acos is np.arccos` in NumPy 2; under Hassium the alias is the native ufunc,
    # not a NumPy fallback (which the "error" policy would turn into an exception).
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    target = getattr(np, alias).__name__  # np.acos is np.arccos
    assert target != alias
    assert getattr(hs, alias) is getattr(hs, target)
    dtype = "int64" if "bitwise" in alias or alias == "pow" else "float64"
    n = sample(dtype, shape=(4, 5), kind="positive")
    args = (n,) * getattr(np, alias).nin
    got = getattr(hs, alias)(*(hs.asarray(a) for a in args))
    assert_same(got, getattr(np, alias)(*args))


COMPOSED = [
    "degrees",
    "radians",
    "deg2rad",
    "rad2deg",
    "fabs",
    "logaddexp",
    "logaddexp2",
    "float_power",
    "heaviside",
    "divmod",
    "modf",
    "ldexp",
    "frexp",
    "spacing",
]
#: Those that take a float operand in the weak-scalar test (ldexp's exponent is an int).
COMPOSED_FLOAT_OPERANDS = [name for name in COMPOSED if name != "ldexp"]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", COMPOSED)
@batched
def test_composed_ufuncs_match_numpy_natively(hs, name, layout, monkeypatch):
    # Ufuncs without an opcode of their own, recorded as a few opcodes: NumPy's loop
    # dtypes (int8 degrees are float16), values, errors (no complex loops), and no
    # fallback (the "error" policy would raise).
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    uf, hf = getattr(np, name), getattr(hs, name)
    view = LAYOUTS[layout]
    for dtype in DTYPES:
        n = [view(sample(dtype, seed=k)) for k in range(uf.nin)]
        h = [hs.asarray(a) for a in n]
        with np.errstate(all="ignore"):
            want = _error_of(partial(uf, *n))
            if want is not None:
                assert _error_of(partial(hf, *h)) == want, (name, dtype)
                continue
            expected = uf(*n)
            same(hf(*h), expected, what=f"{name} {dtype} {layout}")
            # NumPy's own ufunc on Hassium arrays comes back to the same native code.
            same(uf(*h), expected, what=f"np.{name} {dtype} {layout}")


@pytest.mark.parametrize("name", COMPOSED_FLOAT_OPERANDS)
def test_composed_ufuncs_broadcast_take_weak_scalars_and_write_out(
    hs, name, monkeypatch
):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    uf, hf = getattr(np, name), getattr(hs, name)
    a = sample("float32", shape=(3, 1, 4))
    args = (a,) if uf.nin == 1 else (a, 0.5)
    flipped = (a,) if uf.nin == 1 else (sample("int16", shape=(5, 1)), a)
    with np.errstate(all="ignore"):
        for n in (args, flipped):
            h = [x if isinstance(x, float) else hs.asarray(x) for x in n]
            assert_same(hf(*h), uf(*n), what=name)
        # out=: the result cast (same_kind) and broadcast into a given array.
        shape = np.broadcast_shapes(*(np.shape(x) for x in flipped))
        kind = uf(*flipped)
        kind = kind[0].dtype if uf.nout > 1 else kind.dtype  # compared at its precision
        n_out = tuple(np.zeros((2,) + shape, kind) for _ in range(uf.nout))
        h_out = tuple(hs.zeros((2,) + shape, kind) for _ in range(uf.nout))
        h = [hs.asarray(x) for x in flipped]
        got = hf(*h, out=h_out if uf.nout > 1 else h_out[0])
        uf(*flipped, out=n_out if uf.nout > 1 else n_out[0])
        assert got is (h_out if uf.nout > 1 else h_out[0])
        assert_same(h_out, n_out, what=f"{name} out=")
        # Outputs given positionally: the array itself back for one output.
        got = hf(*h, *h_out)
        assert got is h_out[0] if uf.nout == 1 else got == h_out

        # An out NumPy refuses (read-only, uncastable, too small): NumPy's errors.
        def bad_outs(xp):
            ro = xp.zeros(shape)
            ro.setflags(write=False)
            return [ro, xp.zeros(shape, dtype=np.int8), xp.zeros(shape[1:])]

        for n_bad, h_bad in zip(bad_outs(np), bad_outs(hs)):
            n_arg = (n_bad,) * uf.nout if uf.nout > 1 else n_bad
            h_arg = (h_bad,) * uf.nout if uf.nout > 1 else h_bad
            want = _error_of(partial(uf, *flipped, out=n_arg))
            assert want is not None
            assert _error_of(partial(hf, *h, out=h_arg)) == want, (name, n_bad)
    # All Python scalars: a NumPy scalar, as NumPy returns.
    result = hf(*(0.25,) * uf.nin)
    expected = uf(*(0.25,) * uf.nin)
    assert type(result) is type(expected)


REDUCIBLE = [
    "add",
    "multiply",
    "minimum",
    "maximum",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", REDUCIBLE)
def test_ufunc_reduce_matches_numpy_for_every_axis(hs, name, dtype):
    h, n = both(hs, sample(dtype))
    hf, nf = getattr(hs, name).reduce, getattr(np, name).reduce
    tol = F16_PRODUCT_RTOL if dtype == np.float16 else None
    with Checks() as c:
        for axis in (0, 1, -1, None, (0, 2)):
            c.check(
                hf, nf, (h,), (n,), f"{name}.reduce axis={axis}", tol=tol, axis=axis
            )
        c.check(
            hf, nf, (h[::-1, ::2],), (n[::-1, ::2],), f"{name}.reduce strided", axis=1
        )
        c.check(hf, nf, (h,), (n,), f"{name}.reduce keepdims", axis=2, keepdims=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "multiply"])
def test_ufunc_accumulate_matches_numpy(hs, name, dtype):
    h, n = both(hs, sample(dtype))
    hf, nf = getattr(hs, name).accumulate, getattr(np, name).accumulate
    with Checks() as c:
        for axis in (0, 1, 2, -1):
            c.check(hf, nf, (h,), (n,), f"{name}.accumulate axis={axis}", axis=axis)
        c.check(
            hf, nf, (h[:, ::-1],), (n[:, ::-1],), f"{name}.accumulate reversed", axis=1
        )


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind != "c"], ids=str)
def test_running_extremes_are_native_and_match_numpy(hs, dtype, monkeypatch):
    """minimum/maximum.accumulate are opcodes of their own: NaN, once met, stays; the
    dtype is the input's (no widening); out= takes the result unsafely."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    data = sample(dtype)
    if dtype.kind == "f":
        data.flat[[3, 17, 40]] = [np.nan, np.inf, -np.inf]
    h, n = both(hs, data)
    for name in ("minimum", "maximum"):
        hf, nf = getattr(hs, name).accumulate, getattr(np, name).accumulate
        with Checks() as c:
            for layout, view in LAYOUTS.items():
                for axis in (0, -1):
                    c.check(
                        hf,
                        nf,
                        (view(h),),
                        (view(n),),
                        f"{name} {layout} {axis}",
                        axis=axis,
                    )
            c.check(hf, nf, (h,), (n,), f"{name} axis=None of 3-D", axis=None)
            c.check(
                hf, nf, (h[1, 2],), (n[1, 2],), f"{name} axis=None of 1-D", axis=None
            )
            c.check(
                hf, nf, (h,), (n,), f"{name} dtype=float32", axis=1, dtype=np.float32
            )
        hout, nout = hs.zeros(h.shape, np.int8), np.zeros(n.shape, np.int8)
        hf(h, axis=2, out=hout)
        with np.errstate(invalid="ignore"):
            nf(n, axis=2, out=nout)
        if dtype.kind != "f":  # NaN and inf into int8 are undefined in C and NumPy
            assert_same(hout, nout, what=f"{name} out=int8")


@pytest.mark.parametrize(
    "name", ["add", "multiply", "subtract", "less", "maximum", "arctan2"]
)
def test_ufunc_outer_matches_numpy(hs, name):
    h, n = both(hs, sample("float64", shape=(4,)))
    h2, n2 = both(hs, sample("float64", shape=(2, 3), seed=5))
    check(
        getattr(hs, name).outer,
        getattr(np, name).outer,
        (h, h2),
        (n, n2),
        f"{name}.outer",
    )


def test_add_at_accumulates_repeated_indices_like_numpy(hs):
    h, n = both(hs, np.zeros(6))
    idx = np.array([0, 1, 1, 5, -1, 0])
    hs.add.at(h, hs.asarray(idx), 1.5)
    np.add.at(n, idx, 1.5)
    assert_same(h, n)
    hi, ni = both(hs, np.zeros((3, 4), dtype=np.int64))
    hs.add.at(hi, (np.array([0, 0, 2]), np.array([1, 1, 3])), np.array([1, 2, 3]))
    np.add.at(ni, (np.array([0, 0, 2]), np.array([1, 1, 3])), np.array([1, 2, 3]))
    assert_same(hi, ni)


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64", "complex128"])
def test_add_at_with_one_index_array_per_axis_is_native_and_matches_numpy(
    hs, dtype, monkeypatch
):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    rows = np.array([0, 2, 2, -1, 1, 0])
    cols = np.array([[1], [3]]) * np.array([1, 1, 1, 0, 1, 1])  # broadcast to (2, 6)
    values = np.arange(12).reshape(2, 6).astype(dtype)
    for layout in ("contiguous", "reversed"):
        h, n = both(hs, np.zeros((3, 4), dtype=dtype))
        if layout == "reversed":
            h, n = h[::-1, ::-2], n[::-1, ::-2]
        cols_here = cols % n.shape[1]
        hs.add.at(h, (hs.asarray(rows), hs.asarray(cols_here)), hs.asarray(values))
        np.add.at(n, (rows, cols_here), values)
        assert_same(h, n, what=layout)
        hs.add.at(h, (1, hs.asarray(cols_here[0])), 2)
        np.add.at(n, (1, cols_here[0]), 2)
        assert_same(h, n, what=f"{layout}, an int and an array")
    # One index out of range on its axis: IndexError, nothing written (as in NumPy).
    h, n = both(hs, np.zeros((3, 4), dtype=dtype))
    with pytest.raises(IndexError):
        hs.add.at(h, (hs.asarray(np.array([0, 1])), hs.asarray(np.array([1, 4]))), 1)
        np.asarray(h)
    assert_same(h, n, what="after the IndexError")


def test_real_and_imag_match_numpy(hs):
    for dtype in ("float32", "complex64", "complex128", "int16"):
        h, n = both(hs, sample(dtype))
        assert_same(hs.real(h), np.real(n))
        assert_same(hs.imag(h), np.imag(n))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
def test_nan_and_inf_behave_like_numpy(hs, dtype):
    data = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], dtype=dtype)
    h, n = both(hs, data)
    for name in (
        "isnan",
        "isinf",
        "isfinite",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "sign",
        "signbit",
        "copysign",
        "fmod",
    ):
        hf, nf = getattr(hs, name), getattr(np, name)
        if hf.nin == 1:
            check(hf, nf, (h,), (n,), name)
        else:
            check(hf, nf, (h, h[::-1]), (n, n[::-1]), name)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float64"])
def test_integer_division_and_modulo_follow_numpys_sign_rules(hs, dtype):
    a = np.array([7, -7, 7, -7, 0, 5], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 0], dtype=np.int64)
    if np.dtype(dtype).kind == "u":
        a, b = np.abs(a), np.abs(b)
    a, b = a.astype(dtype), b.astype(dtype)
    ha, na = both(hs, a)
    hb, nb = both(hs, b)
    for name in ("floor_divide", "remainder", "fmod", "divide"):
        check(getattr(hs, name), getattr(np, name), (ha, hb), (na, nb), name)
    if np.dtype(dtype).kind == "i":  # the most negative value over -1 overflows in C
        low = np.iinfo(dtype).min
        ha, na = both(hs, np.array([low, low, 5], dtype=dtype))
        hb, nb = both(hs, np.array([-1, 1, -1], dtype=dtype))
        check(hs.fmod, np.fmod, (ha, hb), (na, nb), "fmod of the minimum")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sign_bits_of_signbit_copysign_fmod_and_modf_are_numpys(hs, dtype, monkeypatch):
    """signbit, copysign and fmod are opcodes and modf is composed of them: natively, the
    sign of every zero and NaN they make or read is NumPy's, bit for bit (a comparison
    cannot tell -0.0 from 0.0)."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    tiny = np.finfo(dtype).smallest_subnormal
    data = np.array(
        [
            0.0,
            -0.0,
            np.nan,
            -np.nan,
            np.inf,
            -np.inf,
            1.5,
            -1.5,
            tiny,
            -tiny,
            7.0,
            -7.0,
        ],
        dtype=dtype,
    )
    h, n = both(hs, data)
    bits = np.dtype(f"u{data.itemsize}")
    with np.errstate(all="ignore"):
        for name, args in [
            ("signbit", lambda x: (x,)),
            ("copysign", lambda x: (x, x[::-1])),
            ("copysign", lambda x: (x[::-1], x)),
            ("fmod", lambda x: (x, x[::-1])),
            ("fmod", lambda x: (x[::-1], x)),
            ("modf", lambda x: (x,)),
        ]:
            want = getattr(np, name)(*args(n))
            got = getattr(hs, name)(*args(h))
            if name == "modf":  # fraction and whole part, each checked alike
                got, want = np.concatenate(got), np.concatenate(want)
            got = np.asarray(got)
            assert got.dtype == want.dtype, name
            if want.dtype == bool:
                np.testing.assert_array_equal(got, want, err_msg=name)
                continue
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), name)
            # copysign sets a NaN's sign; a NaN an invalid operation makes (fmod of
            # inf) has the platform's sign (negative on x86, positive on GPUs).
            signed = ~np.isnan(want) | (name == "copysign")
            np.testing.assert_array_equal(
                np.signbit(got[signed]), np.signbit(want[signed]), name
            )
            ok = ~np.isnan(want)
            np.testing.assert_array_equal(
                got[ok].view(bits), want[ok].view(bits), err_msg=name
            )


def division_operands(dtype, n=4099, seed=7):
    """Pairs of floats that find every path of a float remainder: raw bit patterns (every
    exponent gap, NaNs, infinities, subnormals), dividends a few ulps from a multiple of
    the divisor (where a rounded quotient lands on the next integer), integers held as
    floats, and quotients around the 2^(p-1) where exact arithmetic hands over to fmod."""
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    uint = np.dtype(f"u{np.dtype(dtype).itemsize}")
    raw = rng.integers(0, np.iinfo(uint).max, size=(2, n), dtype=uint, endpoint=True)
    a_raw, b_raw = raw.view(dtype)
    b = rng.uniform(0.1, 10.0, n).astype(dtype) * rng.choice([-1, 1], n).astype(dtype)
    k = rng.integers(-1000, 1000, n).astype(dtype)
    steps = rng.integers(-3, 4, n)
    with np.errstate(all="ignore"):
        near = (k * b).astype(dtype)
        for s in range(3):  # a few ulps either side of k * b
            near = np.where(steps > s, np.nextafter(near, info.max), near)
            near = np.where(steps < -s, np.nextafter(near, -info.max), near)
        edge = np.ldexp(1.0, info.nmant).astype(dtype)  # 2^(p-1)
        scale = rng.choice(np.array([0.5, 0.999, 1.0, 1.001, 2.0, 1e3], dtype=dtype), n)
        big = (b * edge * scale).astype(dtype)
    ints = rng.integers(-5000, 5000, (2, n)).astype(dtype)
    ints[1][ints[1] == 0] = 7
    a = np.concatenate([a_raw, near, big, ints[0]])
    d = np.concatenate([b_raw, b, b, ints[1]])
    return a, d


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_fmod_remainder_and_floor_divide_are_numpys_bit_for_bit(hs, dtype):
    """Compiled kernels find a float remainder with vectorised arithmetic where the
    quotient is small and call fmod elsewhere (codegen's `hs_fmod_*`): on operands that
    reach every case, each of fmod, remainder, floor_divide and divmod gives NumPy's
    bits, in a contiguous loop and a strided one."""
    a, d = division_operands(dtype)
    bits = np.dtype(f"u{a.itemsize}")
    for view in (slice(None), slice(None, None, -3)):
        ha, na = both(hs, a[view])
        hd, nd = both(hs, d[view])
        with np.errstate(all="ignore"):
            for name in ("fmod", "remainder", "floor_divide", "divmod"):
                want = getattr(np, name)(na, nd)
                got = getattr(hs, name)(ha, hd)
                pairs = zip(got, want) if name == "divmod" else [(got, want)]
                for g, w in pairs:
                    g = np.asarray(g)
                    assert g.dtype == w.dtype, name
                    nan = np.isnan(w)
                    np.testing.assert_array_equal(np.isnan(g), nan, err_msg=name)
                    wrong = np.flatnonzero(g[~nan].view(bits) != w[~nan].view(bits))
                    assert wrong.size == 0, (
                        f"{name}({na[~nan][wrong[0]]!r}, {nd[~nan][wrong[0]]!r}) is "
                        f"{g[~nan][wrong[0]]!r}, NumPy {w[~nan][wrong[0]]!r} "
                        f"({wrong.size} of {w.size} differ)"
                    )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nextafter_of_special_values_is_numpys_bit_for_bit(hs, dtype, monkeypatch):
    """nextafter is an opcode: between every pair of special values -- both zeros, the
    subnormals at either end, the least normal, powers of two, the largest finite value,
    both infinities, NaN -- it steps to NumPy's neighbour bit for bit. NumPy's float16
    loop keeps x1 for equal operands (0.0 towards -0.0 is 0.0) and has one NaN; its float
    and double loops are C's nextafter (x2: -0.0)."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    t = np.dtype(dtype).type
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    magnitudes = [
        t(0.0),
        tiny,
        t(2) * tiny,
        np.nextafter(info.smallest_normal, t(0)),  # the largest subnormal
        info.smallest_normal,
        t(1.0),
        t(1.5),
        t(2.0),
        info.max,
        t(np.inf),
    ]
    values = np.array(magnitudes + [-m for m in magnitudes] + [np.nan], dtype=dtype)
    h, n = both(hs, values)
    bits = np.dtype(f"u{values.itemsize}")
    with np.errstate(all="ignore"):
        for what, hs_args, np_args in [
            ("every pair", (h[:, None], h[None, :]), (n[:, None], n[None, :])),
            ("elementwise", (h, h[::-1]), (n, n[::-1])),
            ("towards a Python scalar", (h, 0.0), (n, 0.0)),
            ("from a Python scalar", (-0.0, h), (-0.0, n)),
        ]:
            want = np.nextafter(*np_args)
            got = np.asarray(hs.nextafter(*hs_args))
            assert got.dtype == want.dtype, what
            np.testing.assert_array_equal(got.view(bits), want.view(bits), err_msg=what)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_a_signed_integer_to_a_negative_power_raises_numpys_value_error(hs, dtype):
    """A negative scalar exponent fails at the call, as in NumPy. One held by an array is
    known only when the power runs: the error comes when the result is observed, from
    whichever kernel computed it (interpreted or compiled, fused into a reduction or not,
    the negative value in any thread's part); the runtime goes on after it."""
    a = hs.arange(1, 4, dtype=dtype)
    for exponent in (-1, np.int64(-2), np.dtype(dtype).type(-3)):
        with pytest.raises(ValueError, match="negative integer powers"):
            a**exponent
        with pytest.raises(ValueError, match="negative integer powers"):
            hs.power(a, exponent)
    for n in (1, 7, 5000, 300_000):
        e = (hs.arange(n) % 3).astype(dtype)
        e[n - 1] = -1
        with pytest.raises(ValueError, match="negative integer powers"):
            np.asarray(hs.ones(n, dtype=dtype) ** e)
        with pytest.raises(ValueError, match="negative integer powers"):
            int((hs.ones(n, dtype=dtype) ** e[::-1] + 1).sum())
        with pytest.raises(ValueError, match="negative integer powers"):
            np.asarray(2 ** e.reshape(1, n))
    # A zero exponent is fine, and so is every power after the errors.
    b, nb = both(hs, np.arange(6, dtype=dtype))
    check(hs.power, np.power, (b, 0), (nb, 0), "power 0")
    check(hs.power, np.power, (b, b[::-1]), (nb, nb[::-1]), "power after the errors")


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_shifts_by_negative_counts_or_the_width_or_more_follow_numpy(hs, dtype):
    """NumPy defines every count: one of the width or more (or negative, for signed
    counts) gives 0, or -1 for a negative value shifted right. C leaves those undefined,
    so the kernels compute them without a branch; long arrays reach the vector loop."""
    info = np.iinfo(dtype)
    bits = info.bits
    counts = [c for c in range(-3, bits + 4) if info.min <= c <= info.max]
    counts += [info.max, info.min] if info.min < 0 else [info.max]
    values = [0, 1, 3, -1, -5, info.min, info.max, info.max // 3, info.min // 7]
    values = [v for v in values if info.min <= v <= info.max]
    a = np.array([v for v in values for _ in counts] * 3, dtype=dtype)
    b = np.array([c for _ in values for c in counts] * 3, dtype=dtype)
    ha, na = both(hs, a)
    hb, nb = both(hs, b)
    for name in ("left_shift", "right_shift"):
        hf, nf = getattr(hs, name), getattr(np, name)
        check(hf, nf, (ha, hb), (na, nb), f"{name} by every count")
        check(hf, nf, (ha[::-1], hb[::-1]), (na[::-1], nb[::-1]), f"{name} reversed")
        for count in (bits - 1, bits, bits + 1, info.max):
            check(hf, nf, (ha, count), (na, count), f"{name} by {count}")


@pytest.mark.parametrize("name", ["divmod", "heaviside", "logaddexp", "float_power"])
def test_composed_ufuncs_take_a_python_bool_with_an_array(hs, name):
    """A Python bool has no weak form for ``resolve_dtypes``, and a two-output ufunc
    refuses ``out=None`` when the call falls back: `divmod(False, a)` raised
    "'out' must be a tuple of arrays" (found by test_api_fuzz.py)."""
    for data in (np.array(False), np.array([0.5, 2.0, -1.0])):
        h, n = both(hs, data)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            assert_same(getattr(hs, name)(True, h), getattr(np, name)(True, n))
            assert_same(getattr(hs, name)(h, False), getattr(np, name)(n, False))


@pytest.mark.parametrize("name", ["divmod", "modf", "heaviside"])
def test_composed_ufuncs_with_dtype_fall_back_without_passing_out(hs, name):
    """``dtype=`` goes through NumPy, which refuses an explicit ``out=None`` beside it
    for two outputs ("'out' must be a tuple of arrays"; found by test_api_fuzz.py)."""
    nf = getattr(np, name)
    data = np.array([0.5, 2.0, -1.0])
    args = (data,) * nf.nin
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = nf(*args, dtype=np.float32)
        got = getattr(hs, name)(*(hs.asarray(a) for a in args), dtype=np.float32)
        assert_same(got, want)


def _special_floats(dtype):
    """Both zeros, the subnormals at either end, the least normal, a few ordinary values,
    the largest finite value, both infinities and NaN, of ``dtype``."""
    t = np.dtype(dtype).type
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    magnitudes = [
        t(0.0),
        tiny,
        t(3) * tiny,
        np.nextafter(info.smallest_normal, t(0)),
        info.smallest_normal,
        t(0.5),
        t(1.0),
        t(1.5),
        t(2.0),
        t(3.0),
        t(1000.5),
        info.max,
        t(np.inf),
    ]
    return np.array(magnitudes + [-m for m in magnitudes] + [np.nan], dtype=dtype)


def _assert_bits(got, want, what):
    """Same dtype and shape, same bits but at NaNs, where only NaN-ness is compared
    (NumPy's NaN payload is whatever its C library's arithmetic left)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        what,
        got.dtype,
        want.dtype,
        got.shape,
        want.shape,
    )
    nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
    np.testing.assert_array_equal(np.isnan(got) if nan.any() else nan, nan, what)
    if want.dtype.kind == "f":
        bits = np.dtype(f"u{want.itemsize}")
        got, want = got.view(bits), want.view(bits)
    np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=what)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("exp_dtype", ["int8", "int32", "int64", "uint16"])
def test_ldexp_is_numpys_bit_for_bit_at_huge_exponents_and_subnormal_results(
    hs, dtype, exp_dtype, monkeypatch
):
    """ldexp is an opcode (the exponent carried in the float dtype): every special value
    times 2**e for exponents that overflow (+-1100, the int extremes), land in the
    subnormals (rounding once there) or underflow to zero, as NumPy's loop gives it."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    x = _special_floats(dtype)
    info = np.iinfo(exp_dtype)
    e = np.array(
        [0, 1, -1, 5, -5, 10, -10, 24, -24, 30, -30, 126, -126, 127, -149, -150, 1023]
        + [-1022, -1074, -1075, 1100, -1100, 2000, -2000, info.min, info.max],
        dtype=np.int64,
    )
    e = e[(e >= info.min) & (e <= info.max)].astype(exp_dtype)
    h, n = both(hs, x)
    he, ne = both(hs, e)
    with np.errstate(all="ignore"):
        for what, hs_args, np_args in [
            ("every pair", (h[:, None], he[None, :]), (n[:, None], ne[None, :])),
            ("reversed, strided", (h[::-2], he[:1]), (n[::-2], ne[:1])),
            ("a Python int exponent", (h, -1070), (n, -1070)),
            ("a Python float mantissa", (1.5, he), (1.5, ne)),
            ("0-d", (h[3], he[5]), (n[3], ne[5])),
            ("empty", (h[:0], he[:0]), (n[:0], ne[:0])),
        ]:
            want = np.asarray(np.ldexp(*np_args))
            _assert_bits(hs.ldexp(*hs_args), want, f"{what} {dtype} {exp_dtype}")


@pytest.mark.parametrize(
    "x, e", [("float64", "float64"), ("float32", "uint64"), ("int64", "uint64")]
)
def test_ldexp_without_an_integer_exponent_loop_raises_numpys_type_error(hs, x, e):
    a, b = np.ones(3, x), np.ones(3, e)
    want = _error_of(lambda: np.ldexp(a, b))
    assert want is not None and issubclass(want[0], TypeError)
    assert _error_of(lambda: np.asarray(hs.ldexp(hs.asarray(a), hs.asarray(b)))) == want


def test_ldexp_of_integers_and_bools_takes_numpys_float_loop(hs, monkeypatch):
    """int8 and bool mantissas run in float16 ('ei->e'), wider ints in float64; an int
    exponent of any width up to int64 is accepted, as by NumPy; out= casts into place."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    for xd in ["bool", "int8", "uint8", "int16", "int32", "uint64"]:
        for ed in ["bool", "int8", "uint32", "int64"]:
            n = sample(xd, shape=(4, 5)), sample(ed, shape=(5,), seed=1)
            h = [hs.asarray(a) for a in n]
            assert_same(hs.ldexp(*h), np.ldexp(*n), what=f"{xd} {ed}")
    n = sample("float32", shape=(3, 4)), sample("int16", shape=(4,))
    got, want = hs.zeros((3, 4)), np.zeros((3, 4))
    hs.ldexp(*[hs.asarray(a) for a in n], out=got)
    np.ldexp(*n, out=want)
    assert_same(got, want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_frexp_and_spacing_are_numpys_bit_for_bit_at_special_values(
    hs, dtype, monkeypatch
):
    """frexp's exponent is an opcode and its mantissa x scaled by it (exact; zeros,
    infinities and NaN keep x with exponent 0, subnormals normalise). spacing steps with
    nextafter: away from zero for float32/64 (-0.0 as +0.0, negatives negative), always
    up for float16 (NumPy's half loop: never negative, 65504 has inf); inf and NaN give
    NaN."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    x = _special_floats(dtype)
    h, n = both(hs, x)
    with np.errstate(all="ignore"):
        for what, hv, nv in [
            ("flat", h, n),
            ("reversed", h[::-1], n[::-1]),
            (
                "2-d strided",
                h[:-1].reshape(2, 13)[:, ::2],
                n[:-1].reshape(2, 13)[:, ::2],
            ),
            ("0-d", h[2], n[2]),
            ("empty", h[:0], n[:0]),
        ]:
            got_m, got_e = hs.frexp(hv)
            want_m, want_e = np.frexp(nv)
            _assert_bits(got_m, np.asarray(want_m), f"frexp mantissa {what}")
            _assert_bits(got_e, np.asarray(want_e), f"frexp exponent {what}")
            _assert_bits(hs.spacing(hv), np.asarray(np.spacing(nv)), f"spacing {what}")


def test_frexp_and_spacing_of_integers_take_numpys_float_loops(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    for dtype in DTYPES:
        h, n = both(hs, sample(dtype, shape=(3, 5)))
        with np.errstate(all="ignore"):
            for name in ("frexp", "spacing"):
                want = _error_of(partial(getattr(np, name), n))
                if want is not None:
                    assert _error_of(partial(getattr(hs, name), h)) == want, name
                    continue
                assert_same(getattr(hs, name)(h), getattr(np, name)(n), what=name)


INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INTS)
def test_gcd_and_lcm_are_numpys_for_signs_zeros_extremes_and_overflow(
    hs, dtype, monkeypatch
):
    """gcd and lcm are opcodes: gcd of the magnitudes (|MIN| wraps back to MIN, as in
    NumPy), lcm 0 with a zero operand and wrapping to the type where it overflows."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 6, 7, 12, 18, 100, 127, info.max, info.max - 1, info.max // 3]
    vals += [-v for v in vals[1:]] + [info.min, info.min + 1]
    x = np.array(sorted({v for v in vals if info.min <= v <= info.max}), dtype=dtype)
    h, n = both(hs, x)
    for name in ("gcd", "lcm"):
        for what, hs_args, np_args in [
            ("every pair", (h[:, None], h[None, :]), (n[:, None], n[None, :])),
            ("reversed", (h, h[::-1]), (n, n[::-1])),
            ("a Python int", (h, 12), (n, 12)),
            ("0-d and empty", (h[3], h[:0]), (n[3], n[:0])),
        ]:
            want = getattr(np, name)(*np_args)
            _assert_bits(getattr(hs, name)(*hs_args), want, f"{name} {what}")


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_and_lcm_mix_integer_dtypes_and_refuse_bool_and_float_like_numpy(
    hs, name, monkeypatch
):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    f = getattr(hs, name)
    for a in INTS + ["bool", "float32", "float64"]:
        for b in INTS + ["bool", "float16"]:
            n = sample(a, shape=(3, 4)), sample(b, shape=(4,), seed=1)
            h = [hs.asarray(x) for x in n]
            want = _error_of(partial(getattr(np, name), *n))
            if want is not None:
                # The class: the message names the promoted types where NumPy names
                # the operands' (every table ufunc's mixed-dtype error does).
                got = _error_of(lambda h=h: np.asarray(f(*h)))
                assert got is not None and got[0] is want[0], (a, b, got, want)
                continue
            assert_same(f(*h), getattr(np, name)(*n), what=f"{name} {a} {b}")
