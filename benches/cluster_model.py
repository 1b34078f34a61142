"""The cluster engine's scaling model for 10, 100 and 1000 nodes (docs/cluster.md).

    .venv/bin/python benches/cluster_model.py [--alpha 2e-6] [--beta 10e9] [--mem 100e9]

A step's time is its compute (bytes streamed over the node's memory bandwidth) plus its
messages (alpha each, plus bytes over the network bandwidth beta) plus the flush's control
collectives (a broadcast and an allreduce, 2 alpha log2 P each) plus the engine's own
work per flush (encoding, planning: ~20 us measured at P = 2 on one host, benches/
cluster.py). The defaults: a 2 us
interconnect message (7 us was measured here between fake hosts over TCP, 0.4 us within a
host), 10 GB/s per node, 100 GB/s of memory per 32-core node.
"""

import argparse
import math

FLUSH = 20e-6  # the engine's own work per flush, measured


def heat(p, n, a, b, mem, chunked_sum):
    compute = 24 * n * n / (p * mem)  # read 2, write 1 float64 per point, roughly
    halo = 2 * a + 2 * 8 * n / b if p > 1 else 0.0
    control = 4 * a * math.log2(p) + FLUSH if p > 1 else 0.0
    if p == 1:
        reduce = 0.0
    elif chunked_sum:
        reduce = 2 * a * math.log2(p) + 8 * p / b
    else:  # today: every rank receives the n row sums
        reduce = 2 * a * math.log2(p) + 8 * n / b
    comm = halo + control + reduce
    return compute, comm, compute / (compute + comm)


def black_scholes(p, per_node, a, b, mem, combined):
    compute = per_node * 8 * 12 / mem  # ~12 float64 streams per option and step
    partials = per_node / 8192
    control = 4 * a * math.log2(p) + FLUSH if p > 1 else 0.0
    if p == 1:
        gather = 0.0
    elif combined:  # one partial per rank, combined in a fixed order
        gather = 2 * a * math.log2(p) + 8 * p / b
    else:  # today: every chunk's partial to every rank
        gather = 2 * a * math.log2(p) + 8 * partials * p / b
    comm = control + gather
    return compute, comm, compute / (compute + comm)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--alpha", type=float, default=2e-6, help="seconds per message")
    ap.add_argument("--beta", type=float, default=10e9, help="network bytes/s per node")
    ap.add_argument("--mem", type=float, default=100e9, help="memory bytes/s per node")
    args = ap.parse_args()
    a, b, mem = args.alpha, args.beta, args.mem
    n = 40_000
    print(f"Heat equation, strong scaling, {n} x {n} float64 grid")
    print(
        "| nodes | compute/step | comm/step (today) | eff. today | eff. chunked sum |"
    )
    print("|---:|---:|---:|---:|---:|")
    for p in (1, 10, 100, 1000):
        c, t, e = heat(p, n, a, b, mem, False)
        _, _, e2 = heat(p, n, a, b, mem, True)
        print(f"| {p} | {c * 1e3:.3f} ms | {t * 1e6:.0f} us | {e:.0%} | {e2:.0%} |")
    per_node = 100_000_000
    print()
    print(f"Black-Scholes, weak scaling, {per_node:.0e} options per node")
    print("| nodes | compute/step | comm/step (today) | eff. today | eff. combined |")
    print("|---:|---:|---:|---:|---:|")
    for p in (1, 10, 100, 1000):
        c, t, e = black_scholes(p, per_node, a, b, mem, False)
        _, _, e2 = black_scholes(p, per_node, a, b, mem, True)
        print(f"| {p} | {c * 1e3:.1f} ms | {t * 1e6:.0f} us | {e:.0%} | {e2:.0%} |")


if __name__ == "__main__":
    main()
