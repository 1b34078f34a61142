"""Operations on odd shapes whose results must not depend on the rank count.

Run as ``python -m hassium tests/cluster/battery.py`` (one process, any stack) or under
``mpirun -np P`` on the cluster stack: it prints one line per result (name, dtype, shape
and a digest of the bytes), and tests/python/test_cluster.py compares the lines of the
cluster stack for several P with those of the cpu stack, which must be identical.
"""

import hashlib
import importlib

import numpy as np

real = importlib.import_module("numpy")  # NumPy itself, for digests


def show(name, x):
    a = real.ascontiguousarray(real.asarray(x))
    digest = hashlib.sha256(a.tobytes()).hexdigest()[:16]
    print(f"{name} {a.dtype} {a.shape} {digest}")


# From host data (sent to the ranks), distributed or replicated by size.
a = np.array(real.linspace(-3.0, 7.0, 37 * 13).reshape(37, 13) ** 2 / 7.0)
b = np.arange(37 * 13, dtype=np.float64).reshape(37, 13) * 0.25 - 20.0
ints = np.arange(2 * 61, dtype=np.int64).reshape(61, 2) * 7 - 300
f32 = (np.arange(1000, dtype=np.float32) * np.float32(0.37)).reshape(100, 10)

show("add", a + b)
show("chain", np.sqrt(np.abs(a * b - 3.0)) + a / (b + 100.0))
show("row_broadcast", a + b[3])
show("col_broadcast", a * b[:, 2:3])
show("reversed", a[::-1] - b)
show("reversed_cols", a[:, ::-1] * 2.0)
show("strided", a[::3, ::2] + 1.0)
show("transposed", a.T + b.T)
show("transposed_sum", (a.T * 2.0).sum(axis=0))
show("zero_d", np.float64(2.5) * a[4, 5])
show("empty", np.zeros((0, 13)) + 1.0)
show("empty_sum", np.zeros((0, 13)).sum(axis=0))
show("ints", ints * 3 // 7 + (ints % 5))
show("int_sum", ints.sum())
show("f32", np.exp(f32 * np.float32(0.01)) * f32)
show("f32_sum", f32.sum())
show("complex", (a + 1j * b)[::2] * (1.0 - 0.5j))
show("bool", (a > b) & (a < 20.0))
show("where", np.where(a > 5.0, a, -b))
show("count", (a > 5.0).sum())

# Reductions: whole, along each axis, fused with elementwise work.
show("sum", a.sum())
show("sum0", a.sum(axis=0))
show("sum1", a.sum(axis=1))
show("max", np.abs(a - b).max())
show("min1", (a - b).min(axis=1))
show("prod", (1.0 + a[:5] / 100.0).prod())
show("mean", a.mean())
show("std", a.std(axis=0))
show("argmax", np.argmax(a - b))
show("cumsum", np.cumsum(a, axis=0))
show("cumsum_flat", np.cumsum(b.ravel()))
big = np.linspace(0.0, 1.0, 100_003)
show("big_sum", (np.sin(big * 3.1) ** 2).sum())
show("big_max", big[::-1].max())
show("big_dot", (big * big[::-1]).sum())
kept = np.sqrt(big + 1.0)
show("big_mean", kept.mean())  # the body's output kept, the mean's division after
show("big_kept", kept)
show("big_offset_sum", (big[1:] * 2.0).sum())
show("big_std", big.std())
show("big_int_sum", (np.arange(100_000) % 7).sum())
# A short vector's sum: one chunk, so ranks above 0 hold no partials (they once sent
# from an empty slice, whose address Open MPI took for MPI_IN_PLACE, and the job died).
show("small_sum", (np.linspace(0.0, 1.0, 1001, dtype=np.float32) ** 2).sum())
# A scatter into an array made in the same flush: every rank scatters into its whole
# copy, so the rows other ranks zeroed must come in first (they once did not, and the
# sum after it read uninitialised rows).
z = np.zeros(1000, dtype=np.int64)
np.add.at(z, np.array([1, 1, 999, 3, 500, 3]), 1)
show("scatter_add_sum", z.sum())
show("scatter_add", z)
m = np.zeros(997)
m[np.arange(997) % 3 == 0] = 2.0
show("masked_set_mean", m.mean())
show("masked_set", m)

# Ranges fused into cut kernels: each rank's piece continues from its first global
# index, in every type (float16 past 2048 and int8 past 127 round and wrap as a whole
# range does).
for dt in (
    "float64",
    "float32",
    "float16",
    "int64",
    "int32",
    "uint16",
    "int8",
    "uint8",
):
    show(f"range_{dt}", np.arange(5003, dtype=dt) * np.array(3, dtype=dt))
show("range_sum", (np.arange(100_003, dtype=np.float64) * 0.5 + 1.0).sum())
show("range_f32_mean", np.sin(np.arange(50_001, dtype=np.float32)).mean())
t = np.arange(40_000, dtype=np.float64)
spot = 80.0 + 40.0 * np.sin(t * 0.37)
show("range_kept_and_mean", (spot.mean(), (spot * 0.5).mean()))
show("range_kept", spot)
show("range_2d", np.arange(61 * 7, dtype=np.float64).reshape(61, 7) + b[:1, :7].sum())

# Stencils: halos each iteration.
u = np.zeros((41, 29))
u[0, :] = 1.0
u[:, 0] = 0.5
for _ in range(7):
    new = u.copy()
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    delta = float(np.abs(new - u).max())
    u = new
show("heat", u)
print("delta", repr(delta))
x = np.linspace(0.0, 1.0, 5003) ** 3
for _ in range(5):
    x[1:-1] = 0.5 * (x[:-2] + x[2:])
show("stencil_1d", x)

# Writes into views, masks, fancy indexing.
c = a.copy()
c[2:9] += 1.0
c[::4, 1] = -7.0
c[c > 30.0] = 0.0
show("writes", c)
c[0, :], c[-1, :] = -c[1, :], -c[-2, :]  # reflecting walls: first and last rows
show("walls", c)
show("gather", c[[1, 5, 7, 36]])
d = b.copy()
d[[0, 3, 3, 30], 2] = [1.0, 2.0, 3.0, 4.0]
show("scatter", d)

# Generators use global indices; products and sorting gather.
rng = np.random.default_rng(7)
show("random", rng.random((50, 7)))
show("normal", rng.standard_normal(1001))
show("arange", np.arange(3.0, 500.0, 0.7))
show("linspace", np.linspace(-1.0, 1.0, 999))
show("matmul", a[:, :10] @ b[:10, :7])
show("sort", np.sort(a - b, axis=0))

# Reading back pieces.
print("scalar", repr(float(a[17, 3])), repr(float(u[20, 14])))
print("row", a[5, :4].tolist())
print("item", int(ints[60, 1]))
