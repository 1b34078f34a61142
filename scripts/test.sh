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

stacks=$(.venv/bin/python -m hassium --list-stacks 2>/dev/null || echo reference)
for stack in ${HASSIUM_TEST_STACKS:-$stacks}; do
  echo "== pytest, stack $stack"
  HASSIUM_STACK=$stack .venv/bin/python -m pytest -q -x -p no:cacheprovider tests/python \
    --ignore=tests/python/test_bench_smoke.py || failed+=("pytest ($stack)")
done

echo "== benchmark smoke test"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python/test_bench_smoke.py || failed+=("bench smoke")

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all tests passed"
