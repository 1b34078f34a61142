"""kmeans_step for JAX: broadcast distances, argmin, and the centroid update as a one-hot
matrix product (the idiomatic JAX form of the masked sums)."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0, 1, 2))
def kmeans(n, k, steps):
    t = jnp.arange(n, dtype=jnp.float64)
    blob = (t % k) * (2.0 * jnp.pi / k)
    points = jnp.stack(
        [
            5.0 * jnp.cos(blob) + 1.5 * jnp.sin(t * 1.3),
            5.0 * jnp.sin(blob) + 1.5 * jnp.cos(t * 2.1),
        ],
        axis=1,
    )

    def distances(centroids):
        diff = points[:, None, :] - centroids[None, :, :]
        return jnp.sum(diff * diff, axis=2)

    def body(_, state):
        centroids, _ = state
        dist2 = distances(centroids)
        onehot = (jnp.argmin(dist2, axis=1)[:, None] == jnp.arange(k)[None, :]).astype(
            jnp.float64
        )
        counts = jnp.maximum(jnp.sum(onehot, axis=0), 1.0)
        return (onehot.T @ points) / counts[:, None], dist2

    centroids = points[:k] * 0.5 + 0.1
    centroids, dist2 = jax.lax.fori_loop(
        0, steps, body, (centroids, distances(centroids))
    )
    return jnp.sum(jnp.abs(centroids)) + jnp.sum(jnp.min(dist2, axis=1)) / n


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    print(
        f"checksum: {float(kmeans(args.n, args.k, args.steps).block_until_ready())!r}"
    )


if __name__ == "__main__":
    main()
