"""black_scholes for JAX: the same computation under jax.jit on the CPU, in float64."""

import argparse

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def cnd(x):
    a1, a2, a3, a4, a5 = (
        0.31938153,
        -0.356563782,
        1.781477937,
        -1.821255978,
        1.330274429,
    )
    ax = jnp.abs(x)
    k = 1.0 / (1.0 + 0.2316419 * ax)
    poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))))
    w = 1.0 - 0.3989422804014327 * jnp.exp(-0.5 * ax * ax) * poly
    return jnp.where(x < 0.0, 1.0 - w, w)


def total_price(n, steps):
    i = jnp.arange(n, dtype=jnp.float64)
    s = 80.0 + 40.0 * (0.5 + 0.5 * jnp.sin(i * 0.37))
    x = 90.0 + 20.0 * (0.5 + 0.5 * jnp.cos(i * 0.11))
    r, v = 0.02, 0.30
    total = 0.0
    for step in range(steps):
        t = 0.25 + 0.25 * step
        sqrt_t = t**0.5
        d1 = (jnp.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        discount = x * jnp.exp(-r * t)
        call = s * cnd(d1) - discount * cnd(d2)
        put = discount * cnd(-d2) - s * cnd(-d1)
        total = total + jnp.mean(call) + 0.5 * jnp.mean(put)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    total = jax.jit(total_price, static_argnums=(0, 1))(
        args.n, args.steps
    ).block_until_ready()
    print(f"checksum: {float(total)!r}")


if __name__ == "__main__":
    main()
