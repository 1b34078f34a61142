#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, the C/C++ examples, the Python
# differential suite once per installed stack, and the benchmark smoke test.
# Sets up first (idempotent), so it works on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-main-job
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export PATH="$PWD/.venv/bin:$PATH"
failed=()

echo "== cargo test (release profile, shares the build)"
cargo test --release --workspace --exclude hassium-bridge-python || failed+=("cargo test")

echo "== Python differential suite, once per installed stack"
tests/python/run_stacks.sh --ignore=tests/python/test_bench_smoke.py || failed+=("pytest")

# The cpu engine must give the same results whatever its thread count and specialisation.
for variant in "THREADS=1 SPECIALIZE=dynamic" "THREADS=2 SPECIALIZE=fixed"; do
  set -- $variant
  echo "== Python differential suite, stack cpu, ${1,,}, ${2,,}"
  env HASSIUM_STACK=cpu HASSIUM_ENGINES_CPU_$1 HASSIUM_ENGINES_CPU_$2 \
    .venv/bin/python -m pytest -q -p no:cacheprovider tests/python \
    --ignore=tests/python/test_bench_smoke.py || failed+=("pytest (cpu $variant)")
done

echo "== benchmark smoke test"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python/test_bench_smoke.py || failed+=("bench smoke")

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all tests passed"
