#!/usr/bin/env bash
# Tests and benchmarks the OpenCL engine on a machine with a GPU, from the bundle that
# scripts/gpu-bundle.sh staged in .gpu/, with that machine's own python3 and numpy (and
# pytest, pytest-xdist, hypothesis, JAX). Logs and the harness's tables go to OUTDIR.
#   scripts/gpu-check.sh OUTDIR
# Each step has a time limit, so the whole run ends within about 8 minutes even when a
# step hangs; a step cut off says so in its log. HASSIUM_ENGINES_OPENCL_PLATFORM picks
# the platform (default "nvidia": such machines often have PoCL as platform 0 as well).
# SIZE_SCALE (default 4) scales the harness's programs: 4 M options, 4000² grids.
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
    timeout "${RUST_SECONDS:-30}" "$t" --test-threads "$jobs" 2>&1 | tail -n 30
    echo "exit status ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/rust-tests.log"

{
  step "Python suite on the opencl stack, $jobs workers: reductions, random programs, loops"
  HASSIUM_STACK=opencl timeout -s INT "${SUITE_SECONDS:-80}" "$py" -m pytest -q \
    -p no:cacheprovider -n "$jobs" -rfEs ${SUITE_TESTS:-tests/python/test_reductions.py \
    tests/python/test_random_programs.py tests/python/test_loops.py tests/python/test_stencils.py}
  echo "exit status $?"
} 2>&1 | tee "$out/pytest-opencl.log" | tail -n 40

{
  # Twice each: the first run builds the programs, the second reads them from the disk
  # cache. The profile splits the device's kernel, write and read time from the host's.
  export HASSIUM_ENGINES_OPENCL_PROFILE=true
  for prog in "black_scholes.py --n 4000000" "heat_equation.py --n 4000" "leibnitz_pi.py" \
    "kmeans_step.py --n 2000000"; do
    for run in cold warm; do
      step "$prog on the opencl stack with statistics ($run)"
      HASSIUM_STACK=opencl HASSIUM_STATS=1 timeout 40 bash -c \
        "time $py -m hassium benches/programs/$prog"
    done
  done
  unset HASSIUM_ENGINES_OPENCL_PROFILE
  # The NVIDIA assembler's optimisation level (the engine asks for 0 there, see
  # build_options in engines/opencl/src/engine.rs): the same programs at level 3.
  for prog in "black_scholes.py --n 4000000" "heat_equation.py --n 4000"; do
    for run in cold warm; do
      step "$prog at -cl-nv-opt-level=3 ($run)"
      HASSIUM_STACK=opencl HASSIUM_STATS=1 HASSIUM_ENGINES_OPENCL_BUILD_OPTIONS=-cl-nv-opt-level=3 \
        timeout 40 bash -c "time $py -m hassium benches/programs/$prog" 2>&1 | grep -E "checksum|time  |real"
    done
  done
  step "device STREAM"
  HASSIUM_STACK=opencl timeout 40 "$py" benches/device_stream.py
} 2>&1 | tee "$out/stats-opencl.log" | tail -n 30

# One harness run per program, so a program cut off by its time limit loses only its own
# table; every table goes to bench.log.
{
  for prog in ${BENCH_PROGRAMS:-black_scholes heat_equation kmeans_step leibnitz_pi nbody}; do
    step "benchmark harness: $prog"
    timeout "${BENCH_SECONDS:-45}" "$py" benches/run.py --no-stream --size-scale "${SIZE_SCALE:-4}" \
      --programs "$prog" --runners "${BENCH_RUNNERS:-numpy,hassium-cpu,hassium-opencl,jax}" \
      --reps "${BENCH_REPS:-2}" --timeout 30 --out "/tmp/bench-$prog" 2>&1 | grep -v "^wrote"
  done
} 2>&1 | tee "$out/bench.log" | tail -n 80
echo "gpu-check: done ($(date +%T))"
