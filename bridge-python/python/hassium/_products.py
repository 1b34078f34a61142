"""Products: ``matmul``, ``dot``, ``inner``, ``outer``, ``tensordot``, ``einsum``.

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import math
import operator

import numpy as np

from . import _hassium as _ext
from ._common import _arr, _fallback_np, _is_python_scalar, ndarray
from ._shapes import _broadcast_copy


def _matmul(a, b):
    """``a @ b`` on the extension's matrix product, which takes NumPy's rules for 1-D
    operands (a vector is promoted to a matrix and the added axis removed again); a 0-d
    operand is refused here, naming which one as NumPy does."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough "
            f"dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
            f"requires 1)"
        )
    return _ext.matmul(a, b)


def matmul(x1, x2, /, out=None, **kwargs):
    if kwargs:
        return _fallback_np("matmul", (x1, x2), dict(kwargs, out=out))
    result = _matmul(_arr(x1), _arr(x2))
    if out is not None:
        _into(out, result)
        return out
    return result


def _into(out, result, casting="same_kind"):
    """Stores a result into a function's ``out=`` array, refused as NumPy refuses a
    read-only one."""
    if not out.flags.writeable:
        raise ValueError("output array is read-only")
    _ext.copyto(out, result, casting=casting)


def _strong(x):
    """An operand of dot/inner as NumPy takes it: a Python scalar becomes a 0-d array of
    its default dtype (not a weak scalar: ``np.dot(int8_array, 2)`` is int64)."""
    if _is_python_scalar(x):
        return _ext.full((), x, np.asarray(x).dtype)
    return _arr(x)


def dot(a, b, out=None):
    a = _strong(a)
    b = _strong(b)
    if a.ndim == 0 or b.ndim == 0:
        # NumPy multiplies: `out` as a ufunc's (broadcast, cast under same_kind).
        return _ext.ufunc("multiply", a, b, out=out)
    if a.ndim <= 2 and b.ndim <= 2:
        result = _matmul(a, b)
    else:
        result = tensordot(a, b, axes=([-1], [b.ndim - 2 if b.ndim > 1 else 0]))
    if out is None:
        return result
    # Otherwise NumPy's dot writes into `out` directly and takes only one of the result's
    # exact dtype and shape, C-contiguous and writeable: nothing broadcasts or casts.
    if not (
        isinstance(out, ndarray)
        and out.dtype == result.dtype
        and out.shape == result.shape
        and out.flags.c_contiguous
        and out.flags.writeable
    ):
        raise ValueError(
            "output array is not acceptable (must have the right datatype, number of "
            "dimensions, and be a C-Array)"
        )
    _ext.copyto(out, result)
    return out


def vdot(a, b, /):
    a = _arr(a).reshape(-1)
    b = _arr(b).reshape(-1)
    if a.shape != b.shape:
        raise ValueError("cannot reshape array: vdot of vectors of different sizes")
    if a.dtype.kind == "c":
        a = _ext.ufunc("conjugate", a)
    return _matmul(a, b)


def inner(a, b, /):
    a = _strong(a)
    b = _strong(b)
    if a.ndim == 0 or b.ndim == 0:
        return _ext.ufunc("multiply", a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b, out=None):
    a = _arr(a).reshape(-1)
    b = _arr(b).reshape(-1)
    result = _ext.ufunc("multiply", a.reshape(-1, 1), b.reshape(1, -1))
    if out is not None:
        _into(out, result)
        return out
    return result


def tensordot(a, b, axes=2):
    # numpy/_core/numeric.py's algorithm: move the summed axes together, make both
    # operands 2-D, one matmul, reshape back.
    a = _arr(a)
    b = _arr(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        axes_a = list(range(-n, 0))
        axes_b = list(range(n))
    else:
        axes_a, axes_b = axes
    try:
        axes_a = list(axes_a)
    except TypeError:
        axes_a = [axes_a]
    try:
        axes_b = list(axes_b)
    except TypeError:
        axes_b = [axes_b]
    na, nb = len(axes_a), len(axes_b)
    as_, nda = a.shape, a.ndim
    bs, ndb = b.shape, b.ndim
    equal = na == nb
    if equal:
        for k in range(na):
            if as_[axes_a[k]] != bs[axes_b[k]]:
                equal = False
                break
            if axes_a[k] < 0:
                axes_a[k] += nda
            if axes_b[k] < 0:
                axes_b[k] += ndb
    if not equal:
        raise ValueError("shape-mismatch for sum")
    notin = [k for k in range(nda) if k not in axes_a]
    newaxes_a = notin + axes_a
    n2 = math.prod(as_[ax] for ax in axes_a)
    newshape_a = (math.prod(as_[ax] for ax in notin), n2)
    olda = [as_[axis] for axis in notin]
    notin = [k for k in range(ndb) if k not in axes_b]
    newaxes_b = axes_b + notin
    newshape_b = (n2, math.prod(bs[ax] for ax in notin))
    oldb = [bs[axis] for axis in notin]
    at = a.transpose(newaxes_a).reshape(newshape_a)
    bt = b.transpose(newaxes_b).reshape(newshape_b)
    res = _matmul(at, bt)
    return res.reshape(tuple(olda + oldb))


def _einsum_operands(subscripts, arrays):
    """The terms, explicit output and operands of an einsum, with ``...`` spelled out in
    unused letters and every index repeated within one operand taken as a diagonal
    view (so each term names distinct indices); NumPy's errors for malformed
    subscripts."""
    if subscripts.count("->") > 1 or ("-" in subscripts.replace("->", "")):
        raise ValueError(
            "einstein sum subscript string does not contain proper '->' output specified"
        )
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs, output = subscripts, None
    terms = inputs.split(",")
    if len(terms) != len(arrays):
        raise ValueError(
            "more operands provided to einstein sum function than specified in the subscripts string"
            if len(arrays) > len(terms)
            else "fewer operands provided to einstein sum function than specified in the subscripts string"
        )
    for t in [*terms, output or ""]:
        bad = t.replace("...", "")
        if not (bad.isascii() and (bad.isalpha() or bad == "")):
            c = next(ch for ch in bad if not (ch.isascii() and ch.isalpha()))
            raise ValueError(
                f"invalid subscript '{c}' in einstein sum subscripts string, subscripts "
                f"must be letters"
            )
    # Ellipses: each operand's broadcast dimensions, right-aligned across operands.
    covered = []
    for i, (t, x) in enumerate(zip(terms, arrays)):
        named = len(t.replace("...", ""))
        k = x.ndim - named if "..." in t else 0
        if k < 0 or ("..." not in t and named > x.ndim):
            raise ValueError(
                f"einstein sum subscripts string contains too many subscripts for operand {i}"
            )
        if "..." not in t and named < x.ndim:
            raise ValueError(
                "operand has more dimensions than subscripts given in einstein sum, but no "
                "'...' ellipsis provided to broadcast the extra dimensions."
            )
        covered.append(k)
    used = set(subscripts)
    spare = [
        c
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        if c not in used
    ]
    e = builtins.max(covered, default=0)
    ell = "".join(spare[:e])
    terms = [t.replace("...", ell[e - k :]) for t, k in zip(terms, covered)]
    if output is None:
        # Implicit output: the broadcast dimensions, then the indices seen once (an index
        # repeated within one operand counts as seen twice), in alphabetical order.
        seen = {}
        for t in terms:
            for c in t:
                seen[c] = seen.get(c, 0) + 1
        output = ell + "".join(
            sorted(c for c, n in seen.items() if n == 1 and c not in ell)
        )
    elif "..." in output:
        output = output.replace("...", ell)
    elif e > 0:
        raise ValueError(
            "output has more dimensions than subscripts given in einstein sum, but no "
            "'...' ellipsis provided to broadcast the extra dimensions."
        )
    if len(set(output)) != len(output):
        c = next(c for c in output if output.count(c) > 1)
        raise ValueError(
            f"einstein sum subscripts string includes output subscript '{c}' multiple times"
        )
    for c in output:
        if not builtins.any(c in t for t in terms):
            raise ValueError(
                f"einstein sum subscripts string included output subscript '{c}' which "
                f"never appeared in an input"
            )
    # Repeated indices: the diagonal over the first two places, moved last.
    out_arrays = []
    for i, (t, x) in enumerate(zip(terms, arrays)):
        while len(set(t)) != len(t):
            c = next(c for c in t if t.count(c) > 1)
            p = t.index(c)
            q = t.index(c, p + 1)
            if x.shape[p] != x.shape[q]:
                raise ValueError(
                    f"dimensions in operand {i} for collapsing index '{c}' don't match "
                    f"({x.shape[p]} != {x.shape[q]})"
                )
            x = _ext.diagonal(x, 0, p, q)
            t = "".join(ch for j, ch in enumerate(t) if j not in (p, q)) + c
        terms[i] = t
        out_arrays.append(x)
    return terms, output, out_arrays


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation as transposes, broadcast multiplies and sum reductions.

    Handles explicit (``ij,jk->ik``) and implicit (``ij,jk``) output, any number of
    operands, ``...`` (broadcast dimensions, as NumPy aligns them from the right) and an
    index repeated within one operand (``ii->i``, ``ii``: a diagonal view, summed when
    the output lacks the index). The interleaved operand form runs through NumPy.
    """
    kwargs = {
        "out": out,
        "dtype": dtype,
        "order": order,
        "casting": casting,
        "optimize": optimize,
    }
    if not operands or not isinstance(operands[0], str):
        return _fallback_np("einsum", operands, kwargs)
    subscripts = operands[0].replace(" ", "")
    arrays = [_arr(x) for x in operands[1:]]
    if casting != "safe" or order not in ("K", "C", "A"):
        return _fallback_np("einsum", operands, kwargs)
    terms, output, arrays = _einsum_operands(subscripts, arrays)
    counts = {}
    for term in terms:
        for c in term:
            counts[c] = counts.get(c, 0) + 1
    sizes = {}
    for term, x in zip(terms, arrays):
        for c, n in zip(term, x.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise ValueError(
                    "operands could not be broadcast together with remapped shapes"
                )
            if c not in sizes or sizes[c] == 1:
                sizes[c] = n
    result_dtype = (
        np.result_type(*(x.dtype for x in arrays)) if dtype is None else np.dtype(dtype)
    )
    # One axis order for everything: output letters first, summed letters after.
    letters = list(output) + sorted(c for c in counts if c not in output)
    product = None
    for term, x in zip(terms, arrays):
        # Sum away letters only this operand has (and the output lacks) before multiplying.
        own = [i for i, c in enumerate(term) if counts[c] == 1 and c not in output]
        if own:
            x = _ext.reduce(
                "add",
                x.astype(result_dtype) if x.dtype != result_dtype else x,
                axis=tuple(own),
                dtype=result_dtype,
            )
            term = "".join(c for i, c in enumerate(term) if i not in own)
        elif x.dtype != result_dtype:
            x = x.astype(result_dtype)
        present = [c for c in letters if c in term]
        x = x.transpose([term.index(c) for c in present]) if present else x
        shape = tuple(x.shape[present.index(c)] if c in present else 1 for c in letters)
        x = x.reshape(shape)
        product = x if product is None else _ext.ufunc("multiply", product, x)
    summed = tuple(range(len(output), product.ndim))
    # Letters summed away per operand left size-1 axes; those reduce as well.
    if summed:
        product = _ext.reduce("add", product, axis=summed, dtype=result_dtype)
    out_shape = tuple(sizes[c] for c in output)
    if product.shape != out_shape:
        product = _broadcast_copy(product, out_shape)
    if builtins.any(product is x for x in arrays):
        product = product.copy()
    if out is not None:
        _into(out, product)
        return out
    return product
