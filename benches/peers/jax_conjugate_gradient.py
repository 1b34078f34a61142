"""conjugate_gradient for JAX: the same iteration under jax.jit, the Laplacian as a sum
of padded shifts, the convergence test in lax.while_loop, in float64."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def laplacian(u):
    padded = jnp.pad(u, 1)
    return (
        4.0 * u
        - padded[:-2, 1:-1]
        - padded[2:, 1:-1]
        - padded[1:-1, :-2]
        - padded[1:-1, 2:]
    )


@partial(jax.jit, static_argnums=(0, 1))
def solve(n, iters):
    i = jnp.arange(n, dtype=jnp.float64)[:, None]
    j = jnp.arange(n, dtype=jnp.float64)[None, :]
    b = jnp.sin(jnp.pi * (i + 1) / (n + 1)) * jnp.sin(2 * jnp.pi * (j + 1) / (n + 1))
    b = b + 0.1 * jnp.cos(0.37 * i * j / n)
    tol = 1e-10

    def step(carry):
        k, x, r, p, rs, _ = carry
        ap = laplacian(p)
        alpha = rs / jnp.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = jnp.sum(r * r)
        done = jnp.sqrt(rs_new) < tol
        p = jnp.where(done, p, r + (rs_new / rs) * p)
        rs = jnp.where(done, rs, rs_new)
        return k + 1, x, r, p, rs, done

    def going(carry):
        k, *_, done = carry
        return (k < iters) & ~done

    x = jnp.zeros_like(b)
    r = b - laplacian(x)
    carry = (0, x, r, r, jnp.sum(r * r), False)
    x = jax.lax.while_loop(going, step, carry)[1]
    residual = b - laplacian(x)
    return jnp.sum(x) + jnp.sum(residual * residual)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--iters", type=int, default=100)
    args = parser.parse_args()
    print(f"checksum: {float(solve(args.n, args.iters).block_until_ready())!r}")


if __name__ == "__main__":
    main()
