"""Shape manipulation, joining and rolling against NumPy, with NumPy's errors."""

import warnings

import numpy as np
import pytest
from conftest import DTYPES, assert_same, both, sample
from test_ufuncs import check

AxisError = np.exceptions.AxisError


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_shape_functions_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(2, 3, 4)))
    cases = [
        ("reshape", ((6, 4),), {}),
        ("reshape", ((-1,),), {}),
        ("reshape", ((4, -1, 2),), {}),
        ("ravel", (), {}),
        ("transpose", (), {}),
        ("transpose", ((1, 0, 2),), {}),
        ("moveaxis", (0, -1), {}),
        ("moveaxis", ((0, 1), (2, 0)), {}),
        ("swapaxes", (0, 2), {}),
        ("expand_dims", (1,), {}),
        ("expand_dims", ((0, 4),), {}),
        ("squeeze", (), {}),
        ("broadcast_to", ((5, 2, 3, 4),), {}),
    ]
    for name, args, kwargs in cases:
        check(
            getattr(hs, name),
            getattr(np, name),
            (h, *args),
            (n, *args),
            f"{name}{args}",
            **kwargs,
        )
        # The same on a non-contiguous, negative-stride view.
        check(
            getattr(hs, name),
            getattr(np, name),
            (h[:, ::-1], *args),
            (n[:, ::-1], *args),
            f"{name}{args} on a reversed view",
            **kwargs,
        )


@pytest.mark.parametrize("dtype", ["int8", "float64", "complex128"])
def test_reshape_ravel_and_flatten_in_every_order_match_numpy(hs, dtype):
    from conftest import LAYOUTS

    h, n = both(hs, sample(dtype, shape=(2, 3, 4)))
    method = lambda name: lambda a, *args, **kw: getattr(a, name)(*args, **kw)
    for layout, view in LAYOUTS.items():
        hv, nv = view(h), view(n)
        for order in ["C", "F", "A", "K", "X"]:
            for name in ["ravel", "flatten"]:
                check(
                    method(name),
                    method(name),
                    (hv,),
                    (nv,),
                    f"{name} {order} {layout}",
                    order=order,
                )
            check(
                hs.ravel,
                np.ravel,
                (hv,),
                (nv,),
                f"np.ravel {order} {layout}",
                order=order,
            )
            check(
                method("reshape"),
                method("reshape"),
                (hv, (-1,)),
                (nv, (-1,)),
                f"reshape(-1) {order} {layout}",
                order=order,
            )
            if nv.size == 24:
                for shape in [(4, 6), (2, -1, 3), (24,)]:
                    check(
                        hs.reshape,
                        np.reshape,
                        (hv, shape),
                        (nv, shape),
                        f"reshape{shape} {order} {layout}",
                        order=order,
                    )
    # A Fortran-order reshape of a Fortran-contiguous array is a view, as in NumPy.
    t = h.transpose(2, 1, 0)
    v = t.reshape(24, order="F")
    v[1] = 0
    n.transpose(2, 1, 0).reshape(24, order="F")[1] = 0
    assert_same(h, n)


def test_array_methods_numpy_has_run_like_their_functions(hs):
    h, n = both(hs, sample("float64", shape=(3, 4)))
    for name, args in [
        ("argsort", ()),
        ("argsort", (0,)),
        ("take", ([0, 5, -1],)),
        ("repeat", (2,)),
        ("diagonal", (1,)),
        ("trace", ()),
        ("compress", ([True, False, True],)),
    ]:
        assert_same(getattr(h, name)(*args), getattr(n, name)(*args), what=name)
    assert h.T.tobytes() == n.T.tobytes() and h.tobytes("F") == n.tobytes("F")
    assert_same(h.mT, n.mT)
    assert_same(h.ravel().searchsorted(0.5), n.ravel().searchsorted(0.5))
    assert h.device == "cpu" and h.to_device("cpu") is h
    with pytest.raises(ValueError):
        _ = h[0].mT
    with pytest.raises(AttributeError):
        _ = h.no_such_method
    # In-place methods write into the array, through views too.
    for name, args in [
        ("sort", ()),
        ("sort", (0,)),
        ("partition", (1,)),
        ("put", ([0, 2], [7.0, 8.0])),
    ]:
        hv, nv = h[:, ::-1], n[:, ::-1]
        assert getattr(hv, name)(*args) is None
        getattr(nv, name)(*args)
        assert_same(h, n, what=name)
    # a.flat reads and writes in C order, on non-contiguous views too.
    t, nt = h.T, n.T
    assert_same(hs.asarray(t.flat[[1, 5]]), nt.flat[[1, 5]])
    t.flat[1] = -1.0
    nt.flat[1] = -1.0
    h.flat[::5] = 9.0
    n.flat[::5] = 9.0
    assert_same(h, n)
    assert len(h.flat) == 12 and list(h.flat) == list(n.flat)


def test_squeeze_with_axis_and_its_errors(hs):
    h, n = both(hs, np.zeros((1, 3, 1)))
    check(hs.squeeze, np.squeeze, (h, 0), (n, 0), "squeeze 0")
    check(hs.squeeze, np.squeeze, (h, (0, 2)), (n, (0, 2)), "squeeze (0, 2)")
    with pytest.raises(ValueError):
        hs.squeeze(h, 1)


def test_reshape_to_an_incompatible_shape_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.reshape(hs.ones(6), (4, 2))


def test_reshape_infers_any_negative_extent_once_as_numpy_does(hs):
    # NumPy takes every negative extent as the unknown one, not only -1.
    h, n = both(hs, np.arange(12.0))
    for shape in [(-2,), (-7, 4), (3, -1, 2)]:
        check(hs.reshape, np.reshape, (h, shape), (n, shape), f"reshape {shape}")
        assert_same(h.reshape(*shape), n.reshape(*shape))
    for shape in [(-2, -1), (-1, -1), (5, -3)]:
        with pytest.raises(ValueError) as expected:
            n.reshape(shape)
        with pytest.raises(ValueError) as got:
            h.reshape(shape)
        assert str(got.value) == str(expected.value), shape


def test_reshape_views_share_memory_with_the_original(hs):
    h = hs.zeros((2, 3))
    v = hs.reshape(h, (6,))
    v[1] = 5.0
    assert float(h[0, 1]) == 5.0


@pytest.mark.parametrize("name", ["moveaxis", "swapaxes", "expand_dims"])
def test_bad_axes_raise_axis_error(hs, name):
    h = hs.ones((2, 3))
    args = {"moveaxis": (0, 5), "swapaxes": (0, 3), "expand_dims": (4,)}[name]
    with pytest.raises(AxisError):
        getattr(hs, name)(h, *args)


def test_broadcast_to_an_incompatible_shape_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.broadcast_to(hs.ones(3), (2, 4))


def test_broadcast_arrays_matches_numpy(hs):
    a, na = both(hs, sample("float32", shape=(3, 1)))
    b, nb = both(hs, sample("int8", shape=(4,)))
    c, nc = both(hs, sample("float64", shape=()))
    assert_same(hs.broadcast_arrays(a, b, c), np.broadcast_arrays(na, nb, nc))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_concatenate_matches_numpy(hs, dtype):
    a, na = both(hs, sample(dtype, shape=(2, 3)))
    b, nb = both(hs, sample(dtype, shape=(4, 3), seed=2))
    assert_same(hs.concatenate([a, b]), np.concatenate([na, nb]))
    assert_same(
        hs.concatenate((a, b[::-2]), axis=0), np.concatenate((na, nb[::-2]), axis=0)
    )
    assert_same(
        hs.concatenate([a.T, b.T], axis=-1), np.concatenate([na.T, nb.T], axis=-1)
    )
    assert_same(hs.concatenate([a, b], axis=None), np.concatenate([na, nb], axis=None))
    assert_same(hs.concatenate([a, b[:0]]), np.concatenate([na, nb[:0]]))


def test_concatenate_promotes_mixed_dtypes(hs):
    a, na = both(hs, sample("int8", shape=(2,)))
    b, nb = both(hs, sample("float32", shape=(3,)))
    c, nc = both(hs, sample("uint16", shape=(1,)))
    assert_same(hs.concatenate([a, b, c]), np.concatenate([na, nb, nc]))


def test_concatenate_errors_match_numpy(hs):
    with pytest.raises(ValueError):
        hs.concatenate([hs.ones((2, 3)), hs.ones((2, 4))])
    with pytest.raises(ValueError):
        hs.concatenate([hs.ones((2, 3)), hs.ones(3)])
    with pytest.raises(ValueError):
        hs.concatenate([])
    with pytest.raises(ValueError):
        hs.concatenate([hs.ones(()), hs.ones(())])
    with pytest.raises(AxisError):
        hs.concatenate([hs.ones((2, 3))], axis=2)
    # The axis's type is checked first, as NumPy does (and `append` passes it on).
    for axis in ((), 1.5):
        with pytest.raises(TypeError):
            hs.concatenate([hs.ones(()), hs.ones(())], axis=axis)
        with pytest.raises(TypeError):
            hs.append(False, False, axis)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_matches_numpy(hs, axis):
    a, na = both(hs, sample("float64", shape=(2, 3)))
    b, nb = both(hs, sample("int32", shape=(2, 3), seed=1))
    assert_same(hs.stack([a, b[::-1]], axis=axis), np.stack([na, nb[::-1]], axis=axis))


def test_stack_of_different_shapes_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.stack([hs.ones(2), hs.ones(3)])
    with pytest.raises(AxisError):
        hs.stack([hs.ones(2), hs.ones(2)], axis=3)


def test_hstack_and_vstack_match_numpy(hs):
    for shapes in [((3,), (2,)), ((2, 3), (2, 1)), ((), ())]:
        hs_args = [
            hs.asarray(sample("float64", shape=s, seed=i)) for i, s in enumerate(shapes)
        ]
        np_args = [sample("float64", shape=s, seed=i) for i, s in enumerate(shapes)]
        assert_same(hs.hstack(hs_args), np.hstack(np_args))
    for shapes in [((3,), (3,)), ((2, 3), (1, 3)), ((), ())]:
        hs_args = [
            hs.asarray(sample("int16", shape=s, seed=i)) for i, s in enumerate(shapes)
        ]
        np_args = [sample("int16", shape=s, seed=i) for i, s in enumerate(shapes)]
        assert_same(hs.vstack(hs_args), np.vstack(np_args))


@pytest.mark.parametrize(
    "shift,axis",
    [
        (2, None),
        (-1, None),
        (7, 0),
        (1, 1),
        (-2, -1),
        ((1, 2), (0, 1)),
        ((1, 1), (1, 1)),
        (0, 0),
        (3, 2),
    ],
)
def test_roll_matches_numpy(hs, shift, axis):
    h, n = both(hs, sample("float64", shape=(3, 4, 5)))
    assert_same(hs.roll(h, shift, axis=axis), np.roll(n, shift, axis=axis))
    assert_same(
        hs.roll(h[::-1, :, ::2], shift, axis=axis),
        np.roll(n[::-1, :, ::2], shift, axis=axis),
    )


def test_roll_of_an_empty_array_and_bad_axis(hs):
    h, n = both(hs, np.zeros((0, 3)))
    assert_same(hs.roll(h, 2, axis=0), np.roll(n, 2, axis=0))
    with pytest.raises(AxisError):
        hs.roll(hs.ones(3), 1, axis=1)


def test_setting_strides_makes_numpys_views_with_its_checks_and_deprecation(hs):
    """``view.strides = ...`` (deprecated in NumPy 2.4, still allowed): a diagonal made
    by strides writes through to its base; strides reaching outside the base's memory,
    or of the wrong length, raise NumPy's errors; each set warns as NumPy does."""

    def run(xp):
        out = []
        a = xp.zeros((3, 3))
        d = a.reshape(-1)[:3]
        with pytest.warns(DeprecationWarning, match="strides"):
            d.strides = (32,)
        d[...] = 1.0
        out.append(np.asarray(a).tolist())
        for base, strides in [
            (xp.arange(4.0), (40,)),
            (xp.arange(4.0), (8, 8)),
            (xp.arange(4.0), (-8,)),
            (xp.arange(6.0)[::-1], (-16,)),
            (xp.arange(6.0)[::-1], (-8,)),
            (xp.arange(12.0).reshape(3, 4)[:, 1:3], (32, -8)),
        ]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    base.strides = strides
                out.append(("ok", np.asarray(base).tolist()))
            except ValueError as e:
                out.append(("ValueError", str(e)))
        return out

    assert run(hs) == run(np)


@pytest.mark.parametrize(
    "parts",
    [
        (0, np.float32(1.5)),
        (np.array([1], np.int8), 300),  # the weak int is cast, wrapping like NumPy
        (np.array([1.0], np.float16), 2.5),
        (True, np.array([2], np.int8)),  # a Python bool is not weak
        (1, 2.5),
    ],
    ids=repr,
)
def test_concatenate_takes_python_numbers_as_weak(hs, parts):
    """``concatenate((0, float32(1.5)), axis=None)`` is float32 in NumPy 2; so are the
    set operations built on it (found by test_api_fuzz.py)."""
    h = [hs.asarray(p) if isinstance(p, np.ndarray) else p for p in parts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(hs.concatenate(h, axis=None), np.concatenate(parts, axis=None))
    if all(np.ndim(p) == 0 for p in parts):
        assert_same(hs.union1d(*h), np.union1d(*parts))
        assert_same(
            hs.setxor1d(*h, assume_unique=True), np.setxor1d(*parts, assume_unique=True)
        )
