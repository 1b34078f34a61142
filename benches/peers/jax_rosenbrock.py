"""rosenbrock for JAX: value and gradient by jax.value_and_grad, as a JAX user would."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@partial(jax.jit, static_argnums=(0,))
def checksum(n):
    x = 1.0 + 0.5 * jnp.sin(jnp.arange(n, dtype=jnp.float64) * 0.001)
    value, grad = jax.value_and_grad(rosenbrock)(x)
    return value + jnp.sum(jnp.abs(grad))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    args = parser.parse_args()
    print(f"checksum: {float(checksum(args.n).block_until_ready())!r}")


if __name__ == "__main__":
    main()
