"""Loops long enough that one flush holds many iterations: the fuser cuts them into
segments of whole iterations (fuser/src/period.rs) and cse keeps loop invariants alive
across them (filters/src/cse.rs). Each program runs unflushed for all its iterations and
is compared with NumPy at the end, and again with a flush inside the loop (the batch then
starts mid-loop)."""

import numpy as np
import pytest


def oscillators(xp, n, steps, flush_every=None):
    """A short body (7 operations) many times, with an invariant (-stiffness) freed and
    recomputed every step."""
    stiffness = 1.0 + xp.arange(n, dtype=xp.float64) * (4.0 / n)
    x = xp.cos(xp.arange(n, dtype=xp.float64))
    v = xp.zeros(n)
    for step in range(steps):
        a = -stiffness * x - 0.05 * v
        v = v + 0.001 * a
        x = x + 0.001 * v
        if flush_every and step % flush_every == flush_every - 1:
            float(x[0])
    return x, v


def pricing(xp, n, steps):
    """A long body (about 100 operations, with abs(-d) next to abs(d)) a few times, with a
    per-step scalar and a running 0-d total."""
    i = xp.arange(n, dtype=xp.float64)
    s = 80.0 + 40.0 * (0.5 + 0.5 * xp.sin(i * 0.37))
    k = 90.0 + 20.0 * (0.5 + 0.5 * xp.cos(i * 0.11))

    def cnd(d):
        ad = xp.abs(d)
        t = 1.0 / (1.0 + 0.2316419 * ad)
        poly = t * (
            0.31938153
            + t
            * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429)))
        )
        w = 1.0 - 0.3989422804014327 * xp.exp(-0.5 * ad * ad) * poly
        return xp.where(d < 0.0, 1.0 - w, w)

    total = 0.0
    for step in range(steps):
        t = 0.25 + 0.25 * step
        d1 = (xp.log(s / k) + (0.02 + 0.045) * t) / (0.3 * np.sqrt(t))
        d2 = d1 - 0.3 * np.sqrt(t)
        call = s * cnd(d1) - k * np.exp(-0.02 * t) * cnd(d2)
        put = k * np.exp(-0.02 * t) * cnd(-d2) - s * cnd(-d1)
        total = total + xp.mean(call) + 0.5 * xp.mean(put)
    return total, call, put


@pytest.mark.parametrize(
    "n,steps,flush_every",
    [(100, 1500, None), (100, 1500, 333), (7, 700, None), (4096, 60, None)],
)
def test_short_body_many_iterations(hs, same, n, steps, flush_every):
    got = oscillators(hs, n, steps, flush_every)
    want = oscillators(np, n, steps, flush_every)
    same(got, want, rtol=1e-9)


@pytest.mark.parametrize("n,steps", [(1000, 6), (33, 12)])
def test_long_body_few_iterations(hs, same, n, steps):
    total, call, put = pricing(hs, n, steps)
    w_total, w_call, w_put = pricing(np, n, steps)
    same(call, w_call, rtol=1e-9)
    same(put, w_put, rtol=1e-9)
    np.testing.assert_allclose(float(total), float(w_total), rtol=1e-9)
