#!/usr/bin/env bash
# Runs every test: the lint gates, Rust unit and integration tests, the C/C++ examples,
# the Python extension's tests, the Python differential suite once per installed stack,
# and the benchmark smoke test. Sets up first (idempotent), so it works on a fresh clone.
# This full tier is what CI runs (.ci/run).
#
#   scripts/test.sh --quick   the developer's tier (minutes once built): lint, the Rust
#                             tests, the extension's tests and the Python suite on the
#                             cpu stack with 100 random programs; no OpenCL, no cpu
#                             variants, no benchmark smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *)
    echo "usage: scripts/test.sh [--quick]" >&2
    exit 2
    ;;
esac
scripts/setup.sh --no-main-job
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export PATH="$PWD/.venv/bin:$PATH"
# Each test process leaves the cpu engine's unfinished background compiles (thousands of
# one-off kernels in a cold run) to a process that would finish them into the cache for a
# next run; here they would only compete with the later stages for the cores.
export HASSIUM_ENGINES_CPU_FINISH_AT_EXIT="${HASSIUM_ENGINES_CPU_FINISH_AT_EXIT:-false}"
# The OpenCL stages are mostly PoCL compiling kernels. Its "cbs" work-group method (each
# work-group's items as loops cut at barriers) compiles a fifth faster than its default
# for this CPU ("loopvec", which also vectorises across work-items): 62 → 48 s for the
# reduction tests. Both implement OpenCL's semantics; kernels run slower, which tests
# do not mind. Set POCL_WORK_GROUP_METHOD to test another.
export POCL_WORK_GROUP_METHOD="${POCL_WORK_GROUP_METHOD:-cbs}"
failed=()
# Each stage's heading says when it started, so a slow CI run shows where its time went.
stage() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
# The Python suites run in parallel pytest processes (pytest-xdist), one per core by
# default: most of a cold run is compilers (gcc, PoCL) working on new kernels, and one
# process compiles one batch at a time. HASSIUM_TEST_WORKERS=0 runs them in this process.
workers=(-n "${HASSIUM_TEST_WORKERS:-auto}")

# The habits every change keeps: formatted Rust and Python, clippy without warnings.
stage "lint: cargo fmt, cargo clippy -D warnings, ruff"
cargo fmt --all --check || failed+=("cargo fmt")
cargo clippy --release --workspace --all-targets --quiet -- -D warnings || failed+=("cargo clippy")
.venv/bin/ruff check . || failed+=("ruff check")
.venv/bin/ruff format --check . || failed+=("ruff format")

stage "cargo test (release profile, shares the build)"
cargo test --release --workspace --exclude hassium-engine-opencl || failed+=("cargo test")
# The OpenCL engine's differential suite is mostly PoCL compiling kernels, and PoCL compiles
# one at a time in a process (a lock around LLVM): in one process it kept one core busy for
# 12 minutes on 2 cores. So it runs as two processes side by side, the reduction tests in
# one and the rest in the other (5.6 minutes with PoCL's cache cold, under cbs).
cargo test --release -p hassium-engine-opencl --lib --test engine --test reductions \
  || failed+=("cargo test (opencl)")
cargo test --release -p hassium-engine-opencl --doc || failed+=("cargo test (opencl doc)")
differential=$(cargo test --release -p hassium-engine-opencl --test differential --no-run \
  --message-format=json | .venv/bin/python -c 'import json, sys
print(*[m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")])') ||
  differential=""
(
  cd engines/opencl
  "$differential" reductions &
  reductions=$!
  rest=0
  "$differential" --skip reductions || rest=$?
  wait "$reductions" && [ "$rest" -eq 0 ]
) || failed+=("cargo test (opencl differential)")

stage "Python extension tests (bridge-python/tests)"
.venv/bin/python -m pytest -q -p no:cacheprovider bridge-python/tests || failed+=("pytest (bridge)")

# The cluster stack under mpirun (its own processes, 1 to 4 ranks): the cpu engine's bits
# for every rank count, C and C++ programs, and jobs ending cleanly when a rank fails.
stage "cluster engine under mpirun (tests/cluster)"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/cluster || failed+=("pytest (cluster)")

if $quick; then
  stage "Python differential suite on the cpu stack (quick: 100 random programs)"
  HASSIUM_TEST_STACKS=cpu HASSIUM_TEST_RANDOM_PROGRAMS=100 \
    tests/python/run_stacks.sh "${workers[@]}" --ignore=tests/python/test_bench_smoke.py --ignore=tests/python/test_vectorised.py || failed+=("pytest")
  if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
  fi
  echo "quick tier passed (the full tier: scripts/test.sh)"
  exit 0
fi

stage "Python differential suite on the reference and cpu stacks"
HASSIUM_TEST_STACKS=${HASSIUM_TEST_STACKS:-reference,cpu} \
  tests/python/run_stacks.sh "${workers[@]}" --ignore=tests/python/test_bench_smoke.py --ignore=tests/python/test_vectorised.py || failed+=("pytest")

# The differential suite on the cluster stack, 3 MPI ranks, every array over 64 KiB cut
# in blocks over them. Left out: the files whose tests start processes of their own
# (test_runner, test_cache_faults: they would inherit mpirun's environment; the bench smoke
# and vectorisation tests run once below), and pytest-xdist (one pytest process under
# mpirun, as rank 0).
stage "Python differential suite, stack cluster, 3 MPI ranks"
HASSIUM_STACK=cluster HASSIUM_TEST_RANDOM_PROGRAMS=100 HASSIUM_MPI_TIMEOUT=1800 \
  scripts/mpirun.sh 3 .venv/bin/python -m pytest -q -p no:cacheprovider tests/python \
  --ignore=tests/python/test_bench_smoke.py --ignore=tests/python/test_vectorised.py \
  --ignore=tests/python/test_runner.py --ignore=tests/python/test_cache_faults.py \
  || failed+=("pytest (cluster, 3 ranks)")

# Again with every array cut, however small (replicate_below = 0): pieces of every shape,
# ranks holding no rows, reductions folded from other ranks' chunks. The files that do most
# of that (about 850 tests, 3 minutes); the whole suite passes too but takes 20 minutes
# with a cold kernel cache (docs/cluster.md, "Every array distributed").
stage "Python differential suite, stack cluster, 3 MPI ranks, every array distributed"
HASSIUM_STACK=cluster HASSIUM_ENGINES_CLUSTER_REPLICATE_BELOW=0 HASSIUM_TEST_RANDOM_PROGRAMS=100 \
  HASSIUM_MPI_TIMEOUT=1800 scripts/mpirun.sh 3 .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/python/test_reductions.py tests/python/test_stencils.py tests/python/test_loops.py \
  tests/python/test_selecting.py tests/python/test_shapes.py tests/python/test_random_programs.py \
  tests/python/test_deferred_errors.py tests/python/test_products.py tests/python/test_creation.py \
  || failed+=("pytest (cluster, 3 ranks, every array distributed)")

# On PoCL every distinct kernel is an OpenCL C compile: the full suite takes about 40
# minutes on 2 cores with PoCL's cache cold (7 when warm), so CI runs the runtime, runner
# (examples on every stack), creation, random, loop, stencil and sorting tests there, and
# the first 100 random programs (all 300 take 5 minutes cold): under 4 minutes cold with 2
# workers. PoCL builds these kernels unoptimised (-cl-opt-disable), which takes a third
# less time (92 → 63 s for the creation, loop and stencil tests, cold); the cargo suites
# above build theirs as users' are built, optimised.
# Run the whole suite with HASSIUM_TEST_STACKS=opencl tests/python/run_stacks.sh.
stage "Python suite subset, stack opencl"
HASSIUM_STACK=opencl HASSIUM_TEST_RANDOM_PROGRAMS=100 \
  HASSIUM_ENGINES_OPENCL_BUILD_OPTIONS="${HASSIUM_ENGINES_OPENCL_BUILD_OPTIONS--cl-opt-disable}" \
  .venv/bin/python -m pytest -q -p no:cacheprovider "${workers[@]}" \
  tests/python/test_runner.py tests/python/test_runtime.py tests/python/test_random.py \
  tests/python/test_creation.py tests/python/test_loops.py tests/python/test_stencils.py \
  tests/python/test_random_programs.py tests/python/test_sorting.py \
  || failed+=("pytest (opencl subset)")

# The cpu engine must give the same results whatever its thread count and specialisation.
# The second variant waits for the compiler (no tiering), so every kernel of the suite runs
# as native code at least once, not only those the disk cache already holds; it also runs
# every filter on small arrays (by default some are skipped there, and the suite's arrays
# are small), so the rewrites are tested end to end. It leaves out test_composed.py and
# test_order_statistics.py: those functions are compositions of the opcodes the rest of
# the suite compiles, and the ~4 000 small kernels their dtypes and layouts make cost 5
# minutes (and 1.5) of cold compiles on 2 cores (the runs above cover them, tiered, with
# the compiler in the background).
for variant in "ENGINES_CPU_THREADS=1 ENGINES_CPU_SPECIALIZE=dynamic ENGINES_CPU_TIERED=true" \
  "ENGINES_CPU_THREADS=2 ENGINES_CPU_SPECIALIZE=fixed ENGINES_CPU_TIERED=false RUNTIME_SMALL_SKIP_FILTERS=[]"; do
  stage "Python differential suite, stack cpu, ${variant,,}"
  skip=()
  case "$variant" in *TIERED=false*) skip=(--ignore=tests/python/test_composed.py
    --ignore=tests/python/test_order_statistics.py) ;; esac
  # shellcheck disable=SC2046,SC2086 # one HASSIUM_ variable per word of the variant
  env HASSIUM_STACK=cpu $(printf 'HASSIUM_%s ' $variant) \
    .venv/bin/python -m pytest -q -p no:cacheprovider "${workers[@]}" tests/python \
    --ignore=tests/python/test_bench_smoke.py --ignore=tests/python/test_vectorised.py "${skip[@]}" || failed+=("pytest (cpu $variant)")
done

# Both start their own processes (the vectorisation corpus on the cpu stack), so they run
# once, not once per stack.
stage "benchmark smoke test, and the vectorisation of a corpus of kernels"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python/test_bench_smoke.py \
  tests/python/test_vectorised.py || failed+=("bench smoke / vectorised")

stage "Array API conformance suite, NumPy and Hassium side by side"
scripts/array-api.sh || failed+=("array-api-tests")

stage "done"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all tests passed"
