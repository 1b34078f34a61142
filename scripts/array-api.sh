#!/usr/bin/env bash
# The Array API conformance suite (data-apis/array-api-tests, pinned at
# ../shared/third_party/array-api-tests, or $ARRAY_API_TESTS_DIR) run on NumPy and on
# Hassium (a fixed hypothesis seed), counting the tests both fail (the suite's
# disagreements with NumPy, explained in docs/compatibility.md): fails when Hassium fails
# a test NumPy passes, also with ten times the examples. MAX_EXAMPLES (default 20) sets
# the examples per test; the documented thorough run uses 200. Nothing is written into
# the suite's folder.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${ARRAY_API_TESTS_DIR:-../shared/third_party/array-api-tests}
if [ ! -d "$suite/array_api_tests" ]; then
  echo "array-api-tests: NOT RUN: no suite at $suite (set ARRAY_API_TESTS_DIR)"
  exit 0
fi
suite=$(cd "$suite" && pwd)
py=$PWD/.venv/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# run MODULE NAME ARGS...: the suite (or the tests ARGS name) on MODULE, its JSON report
# as NAME.json in the work directory.
run() {
  local module=$1 name=$2 status=0
  shift 2
  # From the work directory: hypothesis keeps its database in the current one.
  (cd "$work" && ARRAY_API_TESTS_MODULE=$module ARRAY_API_TESTS_VERSION=2024.12 \
    "$py" -m pytest "$@" -c "$suite/pytest.ini" --rootdir "$suite" \
    -q -p no:cacheprovider --hypothesis-seed=0 --disable-extension linalg fft \
    -n "${JOBS:-2}" --json-report --json-report-file="$work/$name.json" \
    >"$work/$name.log" 2>&1) || status=$?
  echo "  $name: $(tail -n 1 "$work/$name.log")"
  # 1 is "some tests failed"; anything else (collection or usage errors) is not a result.
  if [ "$status" -gt 1 ]; then
    tail -n 30 "$work/$name.log"
    exit 1
  fi
}

# compare NUMPY HASSIUM: lists the tests Hassium fails and NumPy passes into worse.txt.
compare() {
  "$py" - "$work/$1.json" "$work/$2.json" "$work/worse.txt" <<'PY'
import json
import sys

def outcomes(path):
    return {t["nodeid"]: t["outcome"] for t in json.load(open(path))["tests"]}

numpy, hassium = (outcomes(p) for p in sys.argv[1:3])
worse = sorted(k for k, v in hassium.items() if v == "failed" and numpy.get(k) == "passed")
both = sum(1 for k, v in hassium.items() if v == "failed" and numpy.get(k) == "failed")
better = sum(1 for k, v in numpy.items() if v == "failed" and hassium.get(k) == "passed")
print(f"  failed by both: {both}; passed by Hassium only: {better}; by NumPy only: {len(worse)}")
open(sys.argv[3], "w").write("".join(f"{k}\n" for k in worse))
PY
}

examples=${MAX_EXAMPLES:-20}
for module in numpy hassium; do
  run "$module" "$module" "$suite/array_api_tests" --max-examples "$examples"
done
compare numpy hassium
if [ -s "$work/worse.txt" ]; then
  # The two modules need not draw the same examples (strategies ask the module), so a
  # special case one run never drew can pass there and fail here; the special-case tests
  # even draw one example each at random (hypothesis' `.example()`, which no seed fixes).
  # Those tests run again on both, five rounds with ten times the examples; only a test
  # NumPy passes in every round and Hassium fails in every round counts.
  mapfile -t tests < <(sed "s|^|$suite/|" "$work/worse.txt")
  rounds=()
  for round in 1 2 3 4 5; do
    for module in numpy hassium; do
      run "$module" "$module-again-$round" "${tests[@]}" --max-examples $((examples * 10))
    done
    rounds+=("$round")
  done
  "$py" - "$work" "$work/worse.txt" "${rounds[@]}" <<'PY'
import json
import sys

work, out, rounds = sys.argv[1], sys.argv[2], sys.argv[3:]

def outcomes(name):
    return {t["nodeid"]: t["outcome"] for t in json.load(open(f"{work}/{name}.json"))["tests"]}

numpy = [outcomes(f"numpy-again-{r}") for r in rounds]
hassium = [outcomes(f"hassium-again-{r}") for r in rounds]
tests = set().union(*hassium)
worse = sorted(
    t for t in tests
    if all(h.get(t) == "failed" for h in hassium) and all(n.get(t) == "passed" for n in numpy)
)
print(f"  after {len(rounds)} rounds, failed by Hassium in every one and passed by NumPy in every one: {len(worse)}")
open(out, "w").write("".join(f"{k}\n" for k in worse))
PY
fi
if [ -s "$work/worse.txt" ]; then
  echo "array-api-tests: tests NumPy passes fail on Hassium:"
  sed 's/^/  /' "$work/worse.txt"
  exit 1
fi
echo "array-api-tests: Hassium passes every test NumPy passes"
