"""univariate_regression for JAX: means, covariance and residuals under jax.jit, float64."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0,))
def fit(n):
    x = jnp.arange(n, dtype=jnp.float64) * (10.0 / n)
    y = 3.0 * x + 2.0 + 0.5 * jnp.sin(x * 37.0)
    x_mean, y_mean = jnp.mean(x), jnp.mean(y)
    dx, dy = x - x_mean, y - y_mean
    slope = jnp.mean(dx * dy) / jnp.mean(dx * dx)
    intercept = y_mean - slope * x_mean
    rss = jnp.sum((y - (slope * x + intercept)) ** 2)
    return slope + intercept + rss / n


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    args = parser.parse_args()
    print(f"checksum: {float(fit(args.n).block_until_ready())!r}")


if __name__ == "__main__":
    main()
