"""The benchmark programs: where they are, their sizes and tolerances (``BENCHES``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[1]
PROGRAMS_DIR = BENCH_DIR / "programs"
PEERS_DIR = BENCH_DIR / "peers"
RESULTS_DIR = BENCH_DIR / "results"

PEER_RUNNERS = ("numexpr", "jax")


def _pi_sampling_atol(sizes: dict[str, int]) -> float:
    """Five standard deviations of the difference of two independent Monte Carlo estimates
    of pi, so runtimes with different random generators agree unless something is wrong."""
    p = math.pi / 4.0
    samples = sizes["n"] * sizes["batches"]
    return 5.0 * math.sqrt(2.0) * 4.0 * math.sqrt(p * (1.0 - p) / samples)


@dataclass(frozen=True)
class Bench:
    """What the harness knows about one program.

    sizes: the full sizes (issue 6), passed explicitly so runs never depend on defaults.
    quick: the sizes for --quick. scale: the exponent with which --size-scale F multiplies
    each size parameter (chosen so the work grows about linearly with F); parameters not
    named are not scaled. rtol/atol: checksum tolerance against NumPy. bytes_moved: the
    estimated minimal memory traffic of one run, for streaming programs only.
    """

    sizes: dict[str, int]
    quick: dict[str, int]
    scale: dict[str, float] = field(default_factory=dict)
    rtol: float = 1e-6
    atol: Callable[[dict[str, int]], float] | None = None
    bytes_moved: Callable[[dict[str, int]], float] | None = None


BENCHES: dict[str, Bench] = {
    # Minimal traffic: spot and strike written once, then read once per expiry time.
    "black_scholes": Bench(
        {"n": 1_000_000, "steps": 10},
        {"n": 20_000, "steps": 2},
        {"n": 1},
        bytes_moved=lambda s: 16.0 * s["n"] * (1 + s["steps"]),
    ),
    # The same computation, the selection written with boolean masks.
    "black_scholes_mask": Bench(
        {"n": 1_000_000, "steps": 10},
        {"n": 20_000, "steps": 2},
        {"n": 1},
        bytes_moved=lambda s: 16.0 * s["n"] * (1 + s["steps"]),
    ),
    # Minimal traffic: the grid read and written once per iteration (ping-pong buffers).
    "heat_equation": Bench(
        {"n": 2000, "iters": 50},
        {"n": 100, "iters": 5},
        {"n": 0.5},
        bytes_moved=lambda s: 16.0 * (s["n"] + 2) ** 2 * s["iters"],
    ),
    "shallow_water": Bench(
        {"n": 1000, "steps": 20}, {"n": 100, "steps": 5}, {"n": 0.5}
    ),
    "nbody": Bench(
        {"n": 1000, "steps": 10}, {"n": 100, "steps": 2}, {"n": 0.5}, rtol=1e-5
    ),
    # Traffic as NumPy-style code needs it: the float64 pair index written and read once
    # (8 bytes per term). A runtime that fuses the range into the sum needs none, so
    # fractions above 1 are possible here.
    "leibnitz_pi": Bench(
        {"n": 100_000_000, "chunk": 10_000_000},
        {"n": 200_000, "chunk": 50_000},
        {"n": 1},
        rtol=1e-10,
        bytes_moved=lambda s: 8.0 * s["n"],
    ),
    "montecarlo_pi": Bench(
        {"n": 10_000_000, "batches": 10, "seed": 42},
        {"n": 100_000, "batches": 2, "seed": 42},
        {"n": 1},
        rtol=0.0,
        atol=_pi_sampling_atol,
    ),
    # Minimal traffic: x written, x read for value and gradient, gradient written and read.
    "rosenbrock": Bench(
        {"n": 10_000_000},
        {"n": 100_000},
        {"n": 1},
        bytes_moved=lambda s: 32.0 * s["n"],
    ),
    "game_of_life": Bench(
        {"n": 1000, "steps": 20}, {"n": 100, "steps": 5}, {"n": 0.5}, rtol=0.0
    ),
    "game_of_life_roll": Bench(
        {"n": 2000, "steps": 20}, {"n": 100, "steps": 5}, {"n": 0.5}, rtol=0.0
    ),
    "lattice_boltzmann_d2q9": Bench(
        {"n": 500, "steps": 20}, {"n": 50, "steps": 3}, {"n": 0.5}
    ),
    "harris_corner": Bench({"n": 2400}, {"n": 200}, {"n": 0.5}, rtol=1e-3),
    "univariate_regression": Bench({"n": 10_000_000}, {"n": 100_000}, {"n": 1}),
    "kmeans_step": Bench(
        {"n": 500_000, "k": 8, "steps": 10},
        {"n": 10_000, "k": 8, "steps": 3},
        {"n": 1},
        rtol=1e-5,
    ),
    "matmul": Bench({"n": 1200}, {"n": 100}, {"n": 1 / 3}, rtol=1e-3),
    # Shrinking slices: every column step has new shapes (issue 42, item 4).
    "lu_decomposition": Bench({"n": 600}, {"n": 60}, {"n": 1 / 3}, rtol=1e-9),
    # A matrix-free Laplacian by in-place updates of shifted slices, two dot products and
    # a convergence test per iteration.
    "conjugate_gradient": Bench(
        {"n": 1000, "iters": 100}, {"n": 50, "iters": 5}, {"n": 0.5}, rtol=1e-9
    ),
    # Sums of 200000 products in other orders (BLAS for NumPy's X.T @ v).
    "logistic_regression": Bench(
        {"n": 200_000, "d": 20, "iters": 30},
        {"n": 2_000, "d": 20, "iters": 3},
        {"n": 1},
        rtol=1e-9,
    ),
    # Shifted slices of an np.pad copy, 25 per pass.
    "gaussian_blur": Bench(
        {"n": 1000, "passes": 10}, {"n": 100, "passes": 2}, {"n": 0.5}
    ),
    # A threshold decides the edge count: a pixel rounded across it moves the checksum
    # by about 1e-6 of itself.
    "image_pipeline": Bench(
        {"n": 2000, "frames": 5}, {"n": 100, "frames": 2}, {"n": 0.5}, rtol=1e-5
    ),
    # Sorting: a partition per query row, a full sort of the distances, a median.
    "knn_classify": Bench(
        {"train": 20_000, "queries": 400, "k": 15},
        {"train": 2_000, "queries": 50, "k": 15},
        {"train": 0.5, "queries": 0.5},
        rtol=1e-9,
    ),
    # A complex grid, updated through a mask per iteration (`z[m] = z[m] ** 2 + c[m]`);
    # escape counts are integers, a point on the boundary may round either way.
    "mandelbrot": Bench(
        {"n": 600, "iters": 40}, {"n": 60, "iters": 10}, {"n": 0.5}, rtol=1e-4
    ),
    # Boolean masks per cluster: a compaction of the points by each label, then a mean.
    "kmeans_masks": Bench(
        {"n": 500_000, "k": 8, "iters": 10},
        {"n": 20_000, "k": 8, "iters": 2},
        {"n": 1},
        rtol=1e-9,
    ),
    # Masked in-place updates: reflections at two walls (`x[m] = 2 - x[m]`, `v[m] *= -d`).
    "particle_walls": Bench(
        {"n": 1_000_000, "steps": 30},
        {"n": 20_000, "steps": 3},
        {"n": 1},
    ),
    # A convolution by shifted slices, reassembled with `concatenate` after each pass.
    "convolve_slices": Bench(
        {"n": 4_000_000, "taps": 9, "passes": 8},
        {"n": 50_000, "taps": 9, "passes": 2},
        {"n": 1},
        rtol=1e-9,
    ),
    "particle_deposit": Bench(
        {"n": 1_000_000, "cells": 4096, "steps": 10},
        {"n": 20_000, "cells": 256, "steps": 2},
        {"n": 1},
    ),
    "small_arrays": Bench(
        {"n": 100, "steps": 20_000}, {"n": 100, "steps": 500}, {"steps": 1}
    ),
}
DEFAULT_BENCH = Bench({}, {})  # a program without an entry: its own defaults, rtol 1e-6


class UsageError(Exception):
    """A command-line choice that names something that does not exist here."""


def discover_programs(wanted: str | None) -> list[str]:
    found = sorted(
        p.stem for p in PROGRAMS_DIR.glob("*.py") if not p.stem.startswith("_")
    )
    if wanted is None:
        return found
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    unknown = [n for n in names if n not in found]
    if unknown:
        raise UsageError(
            f"unknown program(s) {', '.join(unknown)}; known: {', '.join(found)}"
        )
    return names


def sizes_for(bench: Bench, quick: bool, scale: float) -> dict[str, int]:
    base = bench.quick if quick else bench.sizes
    sizes = {}
    for key, value in base.items():
        exponent = bench.scale.get(key, 0.0)
        sizes[key] = (
            value if exponent == 0.0 else max(8, round(value * scale**exponent))
        )
    return sizes
