#!/usr/bin/env bash
# Tests and benchmarks the OpenCL engine on a machine with a GPU, from the bundle that
# scripts/gpu-bundle.sh staged in .gpu/, with that machine's own python3 and numpy (and
# pytest, pytest-xdist, hypothesis). Logs and the harness's tables go to OUTDIR.
#   scripts/gpu-check.sh OUTDIR
# Each step has a time limit, so the whole run ends within about 9 minutes even when a
# step hangs; a step cut off says so in its log. HASSIUM_ENGINES_OPENCL_PLATFORM picks
# the platform (default "nvidia": such machines often have PoCL as platform 0 as well).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
export PYTHONPATH=$PWD/.gpu PYTHONUNBUFFERED=1
export HASSIUM_ENGINES_OPENCL_PLATFORM=${HASSIUM_ENGINES_OPENCL_PLATFORM:-nvidia}
export HASSIUM_CACHE_DIR=${HASSIUM_CACHE_DIR:-/tmp/hassium-gpu-cache}
py=${PYTHON:-python3}
jobs=$(nproc)
step() { echo; echo "== $* ($(date +%T))"; }

{
  step "machine"
  nvidia-smi -L; nproc; free -g | head -2
  command -v cc gcc || echo "no C compiler: the cpu engine interprets"
  "$py" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'
  ls /etc/OpenCL/vendors 2>&1
  HASSIUM_STACK=opencl timeout 60 "$py" -m hassium --info
} 2>&1 | tee "$out/info.log"

{
  for t in .gpu/tests/*; do
    [[ $t == *.so ]] && continue
    step "OpenCL engine Rust tests: $(basename "$t")"
    timeout 120 "$t" --test-threads "$jobs" 2>&1 | tail -n 40
    echo "exit status ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/rust-tests.log"

{
  step "Python differential suite, stack opencl, $jobs workers"
  HASSIUM_STACK=opencl timeout -s INT "${SUITE_SECONDS:-270}" "$py" -m pytest -q \
    -p no:cacheprovider -n "$jobs" -rfEs tests/python --ignore=tests/python/test_bench_smoke.py
  echo "exit status $?"
} 2>&1 | tee "$out/pytest-opencl.log" | tail -n 60

{
  # Twice each: the first run builds the programs, the second reads them from the disk
  # cache, as the harness's warm runs do. "engine time" splits off the engine's start-up.
  for prog in black_scholes leibnitz_pi; do
    for run in cold warm; do
      step "$prog on the opencl stack with statistics ($run)"
      HASSIUM_STACK=opencl HASSIUM_STATS=1 timeout 60 bash -c \
        "time $py -m hassium benches/programs/$prog.py"
    done
  done
} 2>&1 | tee "$out/stats-opencl.log" | tail -n 60

step "benchmark harness"
timeout "${BENCH_SECONDS:-200}" "$py" benches/run.py \
  --programs "${BENCH_PROGRAMS:-black_scholes,heat_equation,shallow_water,nbody,leibnitz_pi}" \
  --runners numpy,hassium-cpu,hassium-opencl --reps "${BENCH_REPS:-3}" --timeout 40 \
  --out "$out/bench" 2>&1 | tail -n 40
echo "gpu-check: done ($(date +%T))"
