"""The fallback path (NumPy functions Hassium has no native version of) and dispatch of
NumPy calls on Hassium arrays back into Hassium."""

import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, USE_DOUBLE, assert_same, both, sample

pytestmark = pytest.mark.skipif(AGAINST_NUMPY, reason="fallback is Hassium's")


def fresh_name(hs):
    """A NumPy function of one array that Hassium runs through the fallback path and nobody
    in this process fell back on yet (the warning is once per name). Functions Hassium implements itself
    (``diff``, ``flip``, ``tile`` once were candidates) never warn, so a candidate must be
    a fallback wrapper: which one is fresh depends on which tests this process ran."""
    for name in (
        "gradient",
        "histogram",
        "nanmedian",
        "argwhere",
        "flatnonzero",
        "ediff1d",
        "sinc",
        "real_if_close",
        "histogram_bin_edges",
        "polyder",
        "diagflat",
    ):
        func = getattr(hs, name, None)
        fallback = getattr(func, "__hassium_fallback__", False)
        if fallback and name not in hs.fallback_report():
            return name
    pytest.skip("every candidate already fell back")


def test_a_non_native_function_gives_numpys_result_as_a_hassium_array(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    h, n = both(hs, sample("float64", shape=(4, 5)))
    got = hs.sinc(h[::-1])
    assert isinstance(got, hs.ndarray)
    assert_same(got, np.sinc(n[::-1]))
    assert_same(hs.interp(h, h[0], h[1]), np.interp(n, n[0], n[1]))
    q, r = hs.linalg.qr(h)
    nq, nr = np.linalg.qr(n)
    assert_same(q, nq)
    assert_same(r, nr)


def test_fallback_warns_once_per_function_name(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "warn")
    name = fresh_name(hs)
    func = getattr(hs, name)
    arg = hs.arange(6.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(arg)
        func(arg)
    ours = [w for w in caught if issubclass(w.category, hs.HassiumFallbackWarning)]
    assert len(ours) == 1
    assert name in str(ours[0].message)
    assert ours[0].filename == __file__, "the warning names the program's line"
    assert issubclass(hs.HassiumFallbackWarning, UserWarning)
    assert hs.fallback_report()[name] >= 2


def test_a_method_that_falls_back_warns_at_the_programs_line(hs, monkeypatch):
    if USE_DOUBLE:
        pytest.skip("the double's arrays are NumPy's: their methods are NumPy's")
    monkeypatch.setenv("HASSIUM_FALLBACK", "warn")
    # Methods that still go through NumPy (sorting, searching, `choose` and `repeat`
    # are native now; `put` into an array whose flat view would be a copy is not).
    calls = {
        "put": (hs.arange(6)[::2], ([0], [9])),
    }
    name = next((n for n in calls if n not in hs.fallback_report()), None)
    if name is None:
        pytest.skip("every candidate already fell back")
    receiver, args = calls[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(receiver, name)(*args)
    ours = [w for w in caught if issubclass(w.category, hs.HassiumFallbackWarning)]
    assert [w.filename for w in ours] == [__file__]


def test_silent_policy_hides_the_warning(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    name = fresh_name(hs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(hs, name)(hs.arange(4.0))


def test_error_policy_raises_not_implemented(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    # Edges given as arrays are what the native histogramdd hands to NumPy.
    with pytest.raises(NotImplementedError, match="histogramdd"):
        hs.histogramdd(hs.arange(4.0), bins=[hs.asarray([0.0, 2.0, 4.0])])


def test_an_operator_the_runtime_does_not_record_falls_back_like_its_ufunc(
    hs, monkeypatch
):
    """`a > b` on complex arrays (NumPy orders them lexicographically) runs as
    `np.greater` does: through NumPy, under the fallback policy, with the operands in
    their order for the reflected form."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    data = np.array([1 + 1j, 2 - 1j, 1 - 1j, 2 + 0j])
    h, n = both(hs, data)
    h2, n2 = both(hs, data[::-1].copy())
    assert_same(h > h2, n > n2)
    assert_same(h <= 1 + 0j, n <= 1 + 0j)
    assert_same(2 > h, 2 > n)  # reflected: h.__lt__(2)
    assert_same(h[::2] >= h2[1::2], n[::2] >= n2[1::2])
    if not USE_DOUBLE:
        monkeypatch.setenv("HASSIUM_FALLBACK", "error")
        with pytest.raises(NotImplementedError, match="less"):
            _ = h < h2


def test_fallback_report_counts_calls(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    before = hs.fallback_report().get("roots", 0)
    a = hs.asarray([1.0, 0.0, -1.0])
    hs.roots(a)
    hs.roots(a)
    assert hs.fallback_report()["roots"] == before + 2


def test_fallback_converts_arrays_nested_in_lists(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    a, na = both(hs, sample("int32", shape=(2, 3)))
    edges, nedges = both(hs, np.array([-9.0, 0.0, 9.0]))
    assert_same(
        hs.histogramdd([a[0], a[1]], bins=[edges, edges]),
        np.histogramdd([na[0], na[1]], bins=[nedges, nedges]),
    )
    assert_same(hs.column_stack((a[0], a[1])), np.column_stack((na[0], na[1])))


def test_fallback_out_argument_is_written_through_the_runtime(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    h, n = both(hs, sample("float64", shape=(5,)))
    out = hs.zeros(5)
    r = hs.logaddexp(h, h, out=out)
    assert r is out
    assert_same(out, np.logaddexp(n, n))


def test_fallback_functions_that_mutate_their_argument_write_back(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    h, n = both(hs, np.zeros((3, 3)))
    hs.fill_diagonal(h, 5.0)
    np.fill_diagonal(n, 5.0)
    assert_same(h, n)
    hs.put(h, [0, 1], [7.0, 8.0])
    np.put(n, [0, 1], [7.0, 8.0])
    assert_same(h, n)


@pytest.mark.skipif(
    USE_DOUBLE, reason="the double's arrays are NumPy's: nothing dispatches"
)
def test_numpy_functions_on_hassium_arrays_stay_in_hassium(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    h, n = both(hs, sample("float64", shape=(3, 4)))
    for got, expected in [
        (np.sin(h), np.sin(n)),
        (np.add(h, 1.0), np.add(n, 1.0)),
        (n + h, n + n),
        (np.sum(h, axis=0), np.sum(n, axis=0)),
        (np.concatenate([h, h]), np.concatenate([n, n])),
        (np.mean(h), np.mean(n)),
        (np.add.reduce(h, axis=1), np.add.reduce(n, axis=1)),
        (np.linalg.norm(h), np.linalg.norm(n)),
        (np.cumsum(h, axis=1), np.cumsum(n, axis=1)),
    ]:
        assert isinstance(got, hs.ndarray), type(got)
        assert_same(got, expected)
    # Not native: NumPy's function runs through the fallback, the result is Hassium's.
    got = np.sinc(h)
    assert isinstance(got, hs.ndarray)
    assert_same(got, np.sinc(n))


def test_namespace_attributes_that_are_not_functions_are_numpys(hs):
    assert hs.finfo is np.finfo
    assert hs.fft is np.fft
    assert hs.linalg.LinAlgError is np.linalg.LinAlgError
    assert hs.ndarray is hs._hassium.ndarray
    with pytest.raises(AttributeError):
        hs.no_such_function_anywhere  # noqa: B018 (the lookup is what raises)
