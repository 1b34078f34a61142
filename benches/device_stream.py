"""Device STREAM: the copy and triad bandwidth Hassium's own kernels reach on a stack,
beside the same two operations through PyTorch on the GPU when PyTorch and a GPU are
there (the ceiling a vendor's hand-tuned kernels reach on that device).

    HASSIUM_STACK=opencl python benches/device_stream.py [--n 134217728] [--reps 10]

Each operation runs once to build its kernel, then `--reps` times; each time is one
flush, which returns when the device has finished. The best time counts, as in STREAM.
Bandwidth counts bytes read and written: 16 per element for the copy, 24 for the triad.
"""

import argparse
import time


def best_of(reps, run):
    run()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


def hassium_stream(n, reps):
    import hassium as hs

    b = hs.full(n, 1.0)
    c = hs.full(n, 2.0)
    hs.flush()
    out = {}

    def copy():
        out["a"] = b.copy()
        hs.flush()

    def triad():
        out["a"] = b + 3.0 * c
        hs.flush()

    result = {"copy": best_of(reps, copy), "triad": best_of(reps, triad)}
    if float(out["a"][n - 1]) != 7.0:
        raise SystemExit("hassium triad gave a wrong value")
    return result


def torch_stream(n, reps):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    b = torch.full((n,), 1.0, dtype=torch.float64, device="cuda")
    c = torch.full((n,), 2.0, dtype=torch.float64, device="cuda")
    a = torch.empty_like(b)

    def copy():
        a.copy_(b)
        torch.cuda.synchronize()

    def triad():
        torch.add(b, c, alpha=3.0, out=a)
        torch.cuda.synchronize()

    return {"copy": best_of(reps, copy), "triad": best_of(reps, triad)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 27, help="float64 elements")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    bytes_per = {"copy": 16, "triad": 24}
    rows = [("hassium", hassium_stream(args.n, args.reps))]
    ref = torch_stream(args.n, args.reps)
    if ref is not None:
        rows.append(("torch (cuda)", ref))
    print(f"device STREAM, {args.n} float64 elements, best of {args.reps}")
    for name, times in rows:
        cells = "  ".join(
            f"{op} {bytes_per[op] * args.n / t / 1e9:8.1f} GB/s ({t * 1e3:.2f} ms)"
            for op, t in times.items()
        )
        print(f"{name:>14}: {cells}")
    if ref is not None:
        own = rows[0][1]
        print(
            "hassium / torch bandwidth: "
            + "  ".join(f"{op} {ref[op] / own[op]:.0%}" for op in own)
        )


if __name__ == "__main__":
    main()
