"""nbody for JAX: all-pairs forces with broadcasting, leapfrog in lax.fori_loop, float64."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def accelerations(pos, mass, softening=0.1):
    d = pos[jnp.newaxis, :, :] - pos[:, jnp.newaxis, :]
    r2 = jnp.sum(d * d, axis=2) + softening * softening
    inv_r3 = r2**-1.5
    return jnp.sum(d * (inv_r3 * mass[jnp.newaxis, :])[:, :, jnp.newaxis], axis=1)


@partial(jax.jit, static_argnums=(0, 1))
def simulate(n, steps):
    i = jnp.arange(n, dtype=jnp.float64)
    radius = 1.0 + 0.5 * jnp.sin(i * 0.7)
    angle = i * 2.399963
    pos = jnp.stack(
        [radius * jnp.cos(angle), radius * jnp.sin(angle), 0.1 * jnp.cos(i * 1.3)], 1
    )
    vel = jnp.stack([-0.3 * jnp.sin(angle), 0.3 * jnp.cos(angle), jnp.zeros(n)], 1)
    mass = (1.0 + 0.5 * jnp.cos(i * 0.3)) / n
    dt = 0.01

    def body(_, state):
        pos, vel, acc = state
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = accelerations(pos, mass)
        return pos, vel + 0.5 * dt * acc, acc

    pos, vel, _ = jax.lax.fori_loop(
        0, steps, body, (pos, vel, accelerations(pos, mass))
    )
    return jnp.sum(jnp.abs(pos)) + jnp.sum(jnp.abs(vel))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    print(f"checksum: {float(simulate(args.n, args.steps).block_until_ready())!r}")


if __name__ == "__main__":
    main()
