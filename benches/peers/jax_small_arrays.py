"""small_arrays for JAX: the 20000 small steps as one lax.fori_loop, so JAX pays its
dispatch cost once instead of per operation."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0, 1))
def simulate(n, steps):
    stiffness = 1.0 + jnp.arange(n, dtype=jnp.float64) * (4.0 / n)
    damping, dt = 0.05, 0.001

    def body(_, state):
        x, v = state
        a = -stiffness * x - damping * v
        v = v + dt * a
        return x + dt * v, v

    x, v = jax.lax.fori_loop(
        0, steps, body, (jnp.cos(jnp.arange(n, dtype=jnp.float64)), jnp.zeros(n))
    )
    return jnp.sum(x * x) + jnp.sum(v * v)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20_000)
    args = parser.parse_args()
    print(f"checksum: {float(simulate(args.n, args.steps).block_until_ready())!r}")


if __name__ == "__main__":
    main()
