"""dot, matmul, vdot, inner, outer, tensordot and einsum against NumPy."""

import numpy as np
import pytest
from conftest import assert_same, both, sample
from test_ufuncs import check

PRODUCT_DTYPES = [
    "bool",
    "int8",
    "int32",
    "uint16",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def check_matmul_and_dot(hs, dtype, shapes):
    """matmul and dot of sample operands of each pair of shapes match NumPy's."""
    for sa, sb in shapes:
        a, na = both(hs, sample(dtype, shape=sa))
        b, nb = both(hs, sample(dtype, shape=sb, seed=1))
        check(hs.matmul, np.matmul, (a, b), (na, nb), f"matmul {sa}@{sb}")
        check(hs.dot, np.dot, (a, b), (na, nb), f"dot {sa}.{sb}")


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_matmul_and_dot_match_numpy_for_every_rank(hs, dtype):
    shapes = [
        ((3, 4), (4, 2)),
        ((4,), (4, 2)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 2)),
    ]
    check_matmul_and_dot(hs, dtype, shapes)
    a, na = both(hs, sample(dtype, shape=(4, 3)))
    check(
        hs.matmul,
        np.matmul,
        (a.T, a[::-1]),
        (na.T, na[::-1]),
        "matmul of strided views",
    )
    check(hs.dot, np.dot, (a, 2), (na, 2), "dot with a scalar")


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_stacks_of_matrices_match_numpy(hs, dtype):
    """A stack is one instruction, which the cpu engine runs as small products shared
    out over the threads, or one large product at a time: broadcast batch axes, a batch
    of one, reversed and transposed stacks, and products too large for the small path."""
    shapes = [
        ((64, 3, 3), (64, 3, 3)),
        ((7, 1, 4, 5), (1, 6, 5, 2)),
        ((1, 2, 2), (9, 2, 3)),
        ((3, 20, 17), (17, 19)),
        ((5, 0, 4), (5, 4, 2)),
    ]
    # Positive operands: float32 sums that cancel differ from BLAS's order by more than
    # the suite's tolerance, which is not what this test is about.
    for sa, sb in shapes:
        a, na = both(hs, sample(dtype, shape=sa, kind="positive"))
        b, nb = both(hs, sample(dtype, shape=sb, seed=1, kind="positive"))
        check(hs.matmul, np.matmul, (a, b), (na, nb), f"{sa}@{sb}")
    a, na = both(hs, sample(dtype, shape=(6, 4, 4), kind="positive"))
    t, nt = a.transpose(0, 2, 1), na.transpose(0, 2, 1)
    check(hs.matmul, np.matmul, (a[::-1], t), (na[::-1], nt), "reversed @ transposed")
    check(hs.matmul, np.matmul, (a[:, ::2], t), (na[:, ::2], nt), "strided")


def test_matmul_operator_matches_numpy(hs):
    a, na = both(hs, sample("float64", shape=(3, 4)))
    assert_same(a @ a.T, na @ na.T)


def test_bool_matmul_is_an_or_of_ands(hs):
    for sa, sb in [
        ((3, 300), (300, 2)),
        ((2, 0), (0, 3)),
        ((300,), (300,)),
        ((2, 3, 4), (4,)),
    ]:
        a, na = both(hs, sample("bool", shape=sa))
        b, nb = both(hs, sample("bool", shape=sb, seed=1))
        assert_same(a @ b, na @ nb, what=f"{sa}@{sb}")
    a, na = both(hs, sample("bool", shape=(4, 4)))
    out, nout = hs.zeros((4, 4), dtype=bool), np.zeros((4, 4), dtype=bool)
    assert hs.matmul(a, a.T, out=out) is out
    np.matmul(na, na.T, out=nout)
    assert_same(out, nout)


MATRIX_VECTOR_SHAPES = [
    ((5,), (5,)),
    ((7, 5), (5,)),
    ((7, 5), (5, 1)),
    ((1, 5), (5, 1)),
    ((1, 5), (5,)),
    ((2, 3, 5), (5,)),
    ((2, 3, 5), (2, 5, 1)),
    ((1, 3, 5), (4, 5, 1)),
    ((2, 1, 5), (5, 1)),
    ((0, 5), (5,)),
    ((3, 0), (0,)),
    ((0,), (0,)),
    ((2, 0, 5), (5, 1)),
]


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_matrix_vector_products_match_numpy(hs, dtype):
    """A right operand of one column, which the ``matrix_vector`` filter turns into a
    multiply and a sum on the fusing stacks: every dtype, batch and empty axis, strided and reversed
    operands, operands still lazy, sums long enough to split across threads (integers
    wrapping as NumPy's do), and ``out=``."""
    check_matmul_and_dot(hs, dtype, MATRIX_VECTOR_SHAPES)
    m, nm = both(hs, sample(dtype, shape=(6, 9)))
    v, nv = both(hs, sample(dtype, shape=(12,), seed=1))
    check(hs.matmul, np.matmul, (m.T[::-1], v[::-2]), (nm.T[::-1], nv[::-2]), "strided")
    check(
        hs.matmul,
        np.matmul,
        (m[:, ::-1], m[0, ::-1]),
        (nm[:, ::-1], nm[0, ::-1]),
        "rev",
    )
    if dtype not in ("bool", "float16"):
        lazy = (m * 2 - 1) @ (v[:9] + 1)
        assert_same(lazy, (nm * 2 - 1) @ (nv[:9] + 1), what="lazy operands")
    if dtype != "float16":  # a float16 sum of 100003 terms overflows
        for sa, sb in [((257, 300), (300,)), ((100_003,), (100_003,))]:
            a, na = both(hs, sample(dtype, shape=sa, kind="positive"))
            b, nb = both(hs, sample(dtype, shape=sb, kind="positive", seed=1))
            check(hs.matmul, np.matmul, (a, b), (na, nb), f"long {sa}@{sb}")
    out, nout = hs.zeros(6, dtype=dtype), np.zeros(6, dtype=dtype)
    assert hs.matmul(m, v[:9], out=out) is out
    np.matmul(nm, nv[:9], out=nout)
    assert_same(out, nout, what="out=")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
def test_row_vector_times_matrix_matches_numpy(hs, dtype):
    """One row times a matrix, which the cpu engine runs as its own streaming product for
    float32/float64 (wide matrices split by columns, narrow ones by blocks of rows added
    in order): both splits, strided and reversed operands, and matrices it leaves to the
    general product (columns not contiguous)."""
    cases = [
        ((300,), (300, 5000)),  # wide: columns split
        ((5000,), (5000, 7)),  # narrow: 20 blocks of 256 rows
        ((1, 3000), (3000, 300)),
        ((2, 1, 700), (700, 50)),  # batched
        ((1,), (1, 9)),
    ]
    for sa, sb in cases:
        a, na = both(hs, sample(dtype, shape=sa, kind="positive"))
        b, nb = both(hs, sample(dtype, shape=sb, kind="positive", seed=1))
        check(hs.matmul, np.matmul, (a, b), (na, nb), f"{sa}@{sb}")
    a, na = both(hs, sample(dtype, shape=(600,), kind="positive"))
    b, nb = both(hs, sample(dtype, shape=(300, 900), kind="positive", seed=1))
    for x, y, nx, ny, what in [
        (a[::2], b, na[::2], nb, "strided row"),
        (a[::-2], b[::-1], na[::-2], nb[::-1], "reversed rows of both"),
        (a[:300], b[:, ::2], na[:300], nb[:, ::2], "strided columns"),
        (a[:900], b.T, na[:900], nb.T, "transposed matrix"),
    ]:
        check(hs.matmul, np.matmul, (x, y), (nx, ny), what)


def test_a_product_nothing_reads_still_runs(hs):
    # The product is dropped unread within the batch; it must not lose its buffer.
    a, _ = both(hs, sample("float64", shape=(3, 4)))
    assert (a @ a.T).dtype == np.float64
    b, nb = both(hs, sample("int64", shape=(2, 2)))
    assert_same(hs.matmul(b, b.astype(np.int32)), np.matmul(nb, nb.astype(np.int32)))


def test_in_place_matmul_writes_into_the_array(hs):
    a, na = both(hs, sample("float64", shape=(2, 3, 3)))
    b, nb = both(hs, sample("float64", shape=(3, 3), seed=1))
    view, nview = a[0], na[0]
    a @= b
    na @= nb
    assert_same(view, nview)  # the write reached views of `a`
    assert_same(a, na)
    for sa, sb in [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3, 3, 3))]:
        x, y = hs.ones(sa), hs.ones(sb)
        with pytest.raises(ValueError):
            x @= y
    i, _ = both(hs, sample("int64", shape=(2, 2)))
    with pytest.raises(TypeError):  # a float product does not cast into ints
        i @= hs.ones((2, 2))


def test_matmul_shape_mismatch_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.matmul(hs.ones((2, 3)), hs.ones((2, 3)))
    with pytest.raises(ValueError):
        hs.dot(hs.ones((2, 3)), hs.ones((2, 3)))


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "complex128"])
def test_vdot_inner_outer_match_numpy(hs, dtype):
    a, na = both(hs, sample(dtype, shape=(2, 3)))
    b, nb = both(hs, sample(dtype, shape=(2, 3), seed=1))
    check(hs.vdot, np.vdot, (a, b), (na, nb), "vdot")
    check(hs.inner, np.inner, (a, b), (na, nb), "inner")
    check(hs.inner, np.inner, (a[0], b[1]), (na[0], nb[1]), "inner 1-d")
    check(hs.inner, np.inner, (a, 3), (na, 3), "inner scalar")
    check(hs.outer, np.outer, (a, b[:, ::-1]), (na, nb[:, ::-1]), "outer")


@pytest.mark.parametrize(
    "sa,sb,axes",
    [
        ((3, 4, 5), (4, 5, 2), 2),
        ((3, 4), (4, 3), 1),
        ((3, 4), (5,), 0),
        ((2, 3, 4), (3, 2, 5), ([0, 1], [1, 0])),
        ((4, 3), (4,), ([0], [0])),
    ],
)
def test_tensordot_matches_numpy(hs, sa, sb, axes):
    a, na = both(hs, sample("float64", shape=sa))
    b, nb = both(hs, sample("float64", shape=sb, seed=1))
    check(hs.tensordot, np.tensordot, (a, b), (na, nb), "tensordot", axes=axes)


def test_tensordot_mismatch_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.tensordot(hs.ones((2, 3)), hs.ones((4, 3)), axes=([1], [0]))


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,ikl,il->jl", [(2, 3, 4), (2, 4, 3), (2, 3)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,i,i", [(4,), (4,), (4,)]),
    ("ab,cd->abcd", [(2, 2), (2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("ij,jj->i", [(3, 4), (4, 4)]),
    ("i...i", [(3, 2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...j->...", [(2, 3, 4)]),
    ("i...->", [(2, 3, 4)]),
    ("...", [(2, 3, 4)]),
    ("ij...", [(2, 3, 4)]),
    ("ji...", [(2, 3, 4)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("ij...->ij", [(2, 3)]),
    ("Ab->bA", [(2, 3)]),
    ("aB", [(2, 3)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
@pytest.mark.parametrize("dtype", ["int32", "float64", "complex64"])
def test_einsum_matches_numpy(hs, subscripts, shapes, dtype):
    pairs = [both(hs, sample(dtype, shape=s, seed=i)) for i, s in enumerate(shapes)]
    check(
        hs.einsum,
        np.einsum,
        (subscripts, *[p[0] for p in pairs]),
        (subscripts, *[p[1] for p in pairs]),
        subscripts,
    )


def test_einsum_with_a_repeated_operand_matches_numpy(hs):
    a, na = both(hs, sample("float64", shape=(3, 3)))
    assert_same(hs.einsum("ij,jk->ik", a, a), np.einsum("ij,jk->ik", na, na))
    assert_same(hs.einsum("ij,ij->", a, a[::-1]), np.einsum("ij,ij->", na, na[::-1]))


def test_einsum_errors_match_numpy(hs):
    with pytest.raises(ValueError):
        hs.einsum("ij,jk->ik", hs.ones((2, 3)), hs.ones((4, 2)))
    with pytest.raises(ValueError):
        hs.einsum("ij->k", hs.ones((2, 3)))
    with pytest.raises(ValueError):
        hs.einsum("ijk", hs.ones((2, 3)))


@pytest.mark.parametrize(
    "subscripts,shapes",
    [
        ("ii", [(2, 3)]),  # a repeated index over dimensions of different lengths
        ("ij...->ij", [(2, 3, 4)]),  # broadcast dimensions the output drops
        ("i...", [()]),
        ("ij->ii", [(2, 2)]),
        ("i->j", [(2,)]),
        ("i$j", [(2, 2)]),
        ("i,i", [(2,)]),
        ("i->i->i", [(2,)]),
        ("...i,...i", [(2, 3), (4, 3)]),
    ],
)
def test_einsum_malformed_subscripts_raise_numpys_errors(hs, subscripts, shapes):
    ops = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError) as expected:
        np.einsum(subscripts, *ops)
    with pytest.raises(type(expected.value)):
        hs.einsum(subscripts, *[hs.asarray(o) for o in ops])


def test_einsum_diagonals_and_ellipses_are_native(hs, monkeypatch):
    """Repeated indices and ``...`` used to run through NumPy; they are recorded now."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    a, na = both(hs, sample("float64", shape=(2, 3, 3)))
    assert_same(hs.einsum("...ii->...i", a), np.einsum("...ii->...i", na))
    assert_same(hs.einsum("kii", a), np.einsum("kii", na))
    assert_same(hs.einsum("...ij,...jk", a, a), np.einsum("...ij,...jk", na, na))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_linalg_norm_matches_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(3, 4)))
    check(hs.linalg.norm, np.linalg.norm, (h,), (n,), "norm")
    check(hs.linalg.norm, np.linalg.norm, (h[0],), (n[0],), "norm of a vector")
    check(hs.linalg.norm, np.linalg.norm, (h,), (n,), "norm axis=1", axis=1)
    check(
        hs.linalg.norm,
        np.linalg.norm,
        (h,),
        (n,),
        "norm axis=0 keepdims",
        axis=0,
        keepdims=True,
    )
    check(hs.linalg.norm, np.linalg.norm, (h,), (n,), "frobenius", ord="fro")
    check(hs.linalg.norm, np.linalg.norm, (h,), (n,), "2-norm (falls back)", ord=2)


NORM_ORDERS = [None, 0, 1, -1, 2, -2, 3, 0.5, -0.5, np.inf, -np.inf]


def check_norm(hs, h, n, what, **kwargs):
    check(hs.linalg.norm, np.linalg.norm, (h,), (n,), what, **kwargs)


@pytest.mark.parametrize(
    "dtype", ["int16", "float32", "float64", "complex64", "complex128"]
)
def test_linalg_vector_norms_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(3, 5)))
    for ord in NORM_ORDERS:
        check_norm(hs, h[1], n[1], f"ord={ord}", ord=ord)
        for axis in (0, 1, -1):
            check_norm(hs, h, n, f"ord={ord} axis={axis}", ord=ord, axis=axis)
        what = f"ord={ord} strided keepdims"
        check_norm(hs, h[:, ::-2], n[:, ::-2], what, ord=ord, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_linalg_matrix_norms_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(2, 3, 4)))
    for ord in [None, "fro", 1, -1, np.inf, -np.inf]:
        check_norm(hs, h[0], n[0], f"ord={ord}", ord=ord)
        for axis in [(1, 2), (2, 1), (0, 2), (-1, 0)]:
            for keepdims in (False, True):
                what = f"ord={ord} axis={axis} keepdims={keepdims}"
                check_norm(hs, h, n, what, ord=ord, axis=axis, keepdims=keepdims)


def test_linalg_norms_of_empty_arrays_match_numpy(hs):
    """NumPy's largest-value norms start from 0, so an empty vector's is 0."""
    for shape, kw in [
        ((0,), {"ord": np.inf}),
        ((0, 3), {"ord": 1}),
        ((3, 0), {"ord": np.inf}),
        ((0, 3), {"ord": np.inf}),
        ((0,), {}),
        ((2, 0), {"axis": 1, "ord": 3}),
    ]:
        assert_same(
            hs.linalg.norm(hs.zeros(shape), **kw), np.linalg.norm(np.zeros(shape), **kw)
        )


def test_linalg_norms_need_no_fallback(hs, monkeypatch):
    """Only the matrix norms that need singular values (2, -2, nuc) go through NumPy."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    h, n = both(hs, sample("float64", shape=(4, 5)))
    for ord in [None, "fro", 1, -1, np.inf, -np.inf]:
        assert_same(hs.linalg.norm(h, ord=ord), np.linalg.norm(n, ord=ord))
    for ord in NORM_ORDERS:
        assert_same(
            hs.linalg.norm(h, ord=ord, axis=1), np.linalg.norm(n, ord=ord, axis=1)
        )


@pytest.mark.parametrize(
    "args,kwargs",
    [
        (((2, 3),), {"ord": "fro", "axis": 0}),  # a string order for vectors
        (((2, 3),), {"ord": 3}),  # an order matrices do not have
        (((2, 3, 4),), {"ord": 1}),  # an order needs one or two dimensions
        (((2, 3),), {"axis": (0, 0)}),
        (((2, 3),), {"axis": (0, 1, 0)}),
        (((2, 3),), {"axis": 2}),
        (((2, 3),), {"axis": "x"}),
        (((2, 3),), {"axis": (0, 1.5)}),
        (((0,),), {"ord": -np.inf}),  # the minimum of nothing
        (((3, 0),), {"ord": -1}),
    ],
)
def test_linalg_norm_errors_match_numpy(hs, args, kwargs):
    a = np.ones(args[0])
    with pytest.raises(Exception) as expected:
        np.linalg.norm(a, **kwargs)
    with pytest.raises(type(expected.value)):
        hs.linalg.norm(hs.asarray(a), **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_products_large_enough_to_split_match_numpy(hs, dtype):
    """From 128³ multiply-adds up the cpu engine splits a float product across its
    threads (below, one thread runs it where it was called): both sides of the bound,
    and a transposed operand."""
    for sa, sb in [((120, 130), (130, 110)), ((170, 150), (150, 160))]:
        a, na = both(hs, sample(dtype, shape=sa, kind="positive"))
        b, nb = both(hs, sample(dtype, shape=sb, seed=1, kind="positive"))
        check(hs.matmul, np.matmul, (a, b), (na, nb), f"{sa}@{sb}")
        check(hs.matmul, np.matmul, (b.T, a.T), (nb.T, na.T), f"({sb}@{sa}).T")
