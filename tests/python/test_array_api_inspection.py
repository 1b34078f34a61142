"""The Array API's inspection namespace and the signatures the standard fixes (issue 46),
checked against NumPy's own namespace where the two must agree."""

import inspect

import numpy as np
import pytest
from conftest import AGAINST_NUMPY

KINDS = [
    None,
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
    ("bool", "real floating"),
]


def test_the_namespace_names_its_standard_and_answers_the_inspection_api(hs):
    assert hs.__array_api_version__ == "2024.12"
    info = hs.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True
    assert caps["data-dependent shapes"] is True
    assert isinstance(caps["max dimensions"], int) and caps["max dimensions"] >= 8
    assert info.default_device() in info.devices()
    want = np.__array_namespace_info__()
    assert info.default_dtypes() == want.default_dtypes()
    for kind in KINDS:
        assert info.dtypes(kind=kind) == want.dtypes(kind=kind), kind
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="strings")


@pytest.mark.skipif(AGAINST_NUMPY, reason="Hassium's own limit and device")
def test_max_dimensions_is_the_limit_arrays_have(hs):
    limit = hs.__array_namespace_info__().capabilities()["max dimensions"]
    assert hs.zeros((1,) * limit).ndim == limit
    with pytest.raises(ValueError, match=f"currently {limit}, found {limit + 1}"):
        hs.zeros((1,) * (limit + 1))
    assert hs.arange(3).device == "cpu"
    with pytest.raises(ValueError, match="device"):
        hs.__array_namespace_info__().dtypes(device="gpu:0")


@pytest.mark.skipif(AGAINST_NUMPY, reason="NumPy gives a scalar there")
def test_count_nonzero_without_an_axis_is_a_0d_array_like_every_reduction(hs):
    x = hs.asarray(np.array([0.0, 1.5, 0.0, -2.0, np.nan]))
    n = hs.count_nonzero(x)
    assert isinstance(n, hs.ndarray) and n.shape == () and n.dtype == np.intp
    assert int(n) == 3 and list(range(n)) == [0, 1, 2]
    assert isinstance(hs.sum(x > 0), hs.ndarray)


def test_dlpack_takes_the_standards_keywords(hs):
    params = inspect.signature(hs.arange(3).__dlpack__).parameters
    for name in ("stream", "max_version", "dl_device", "copy"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].default is None
    got = np.from_dlpack(hs.arange(3.0))
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.0])
