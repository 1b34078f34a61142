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
# STEPS picks the steps to run (default all): info rust python profile startup bench.
want() { [[ " ${STEPS:-info rust python profile startup bench} " == *" $1 "* ]]; }

if want info; then
{
  step "machine"
  nvidia-smi -L; nproc; free -g | head -2
  command -v cc gcc || echo "no C compiler: the cpu engine interprets"
  "$py" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'
  ls /etc/OpenCL/vendors 2>&1
  HASSIUM_STACK=opencl timeout 60 "$py" -m hassium --info
} 2>&1 | tee "$out/info.log"
fi

if want rust; then
{
  for t in .gpu/tests/*; do
    [[ $t == *.so ]] && continue
    # The differential binary builds hundreds of programs (minutes at the NVIDIA
    # compiler's pace); the Python suite below covers the same ground in parallel.
    [[ " ${RUST_SKIP:-differential} " == *" $(basename "$t") "* ]] && continue
    step "OpenCL engine Rust tests: $(basename "$t")"
    timeout "${RUST_SECONDS:-30}" "$t" --test-threads "$jobs" 2>&1 | tail -n 30
    echo "exit status ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/rust-tests.log"
fi

if want python; then
{
  step "Python suite on the opencl stack, $jobs workers: reductions, random programs, loops"
  HASSIUM_STACK=opencl timeout -s INT "${SUITE_SECONDS:-80}" "$py" -m pytest -q \
    -p no:cacheprovider -n "$jobs" -rfEs ${SUITE_TESTS:-tests/python/test_reductions.py \
    tests/python/test_random_programs.py tests/python/test_loops.py tests/python/test_stencils.py \
    tests/python/test_sorting.py tests/python/test_shapes.py}
  echo "exit status $?"
} 2>&1 | tee "$out/pytest-opencl.log" | tail -n 40
fi

if want profile; then
{
  # Twice each: the first run builds the programs, the second reads them from the disk
  # cache. The profile splits the device's kernel, write and read time from the host's,
  # and lists the slowest kernels.
  export HASSIUM_ENGINES_OPENCL_PROFILE=true
  for prog in ${PROFILE_PROGRAMS:-"heat_equation.py --n 4000" "kmeans_step.py --n 2000000" \
    "black_scholes.py --n 4000000" "shallow_water.py --n 4000"}; do
    for run in cold warm; do
      step "$prog on the opencl stack with statistics ($run)"
      HASSIUM_STACK=opencl HASSIUM_STATS=1 timeout 40 bash -c \
        "time $py -m hassium benches/programs/$prog"
    done
  done
  unset HASSIUM_ENGINES_OPENCL_PROFILE
  # Every kernel at the assembler's level 0, as all were built before only the cautious
  # ones were (engines/opencl/src/engine.rs, BuildOptions): what the default level buys.
  for run in cold warm; do
    step "heat_equation.py --n 4000, every kernel at -cl-nv-opt-level=0 ($run)"
    HASSIUM_STACK=opencl HASSIUM_STATS=1 HASSIUM_ENGINES_OPENCL_BUILD_OPTIONS=-cl-nv-opt-level=0 \
      timeout 40 bash -c "time $py -m hassium benches/programs/heat_equation.py --n 4000" 2>&1 |
      grep -E "checksum|time  |real"
  done
  if [[ -n ${DEVICE_STREAM:-} ]]; then
    step "device STREAM"
    HASSIUM_STACK=opencl timeout 40 "$py" benches/device_stream.py
  fi
} 2>&1 | tee "$out/stats-opencl.log" | tail -n 30
fi

if want startup; then
{
  # Start-up: a program that sums ten elements, whole process, three times each: the cpu
  # stack, the opencl stack (its engine started while NumPy is imported), the same with
  # the engine started at the first operation (HASSIUM_PRESTART=0), and with the ICD
  # loader told to load only NVIDIA's driver.
  echo 'import numpy as np; print(float(np.ones(10).sum()))' > /tmp/hs-tiny.py
  icd=$(grep -il nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n 1)
  for variant in cpu opencl opencl-prestart-0 opencl-one-icd; do
    step "start-up: ten elements summed, $variant"
    for _ in 1 2 3; do
      [[ $variant == opencl-one-icd ]] && export OCL_ICD_VENDORS=$icd
      [[ $variant == opencl-prestart-0 ]] && export HASSIUM_PRESTART=0
      HASSIUM_STACK=${variant%%-*} HASSIUM_STATS=1 timeout 20 bash -c \
        "time $py -m hassium /tmp/hs-tiny.py" 2>&1 | grep -E "engine time|real"
      unset OCL_ICD_VENDORS HASSIUM_PRESTART
    done
  done
  step "the runner on the opencl stack (fork, exit, errors)"
  HASSIUM_STACK=opencl timeout 60 "$py" -m pytest -q -p no:cacheprovider -n "$jobs" tests/python/test_runner.py 2>&1 | tail -n 5
} 2>&1 | tee "$out/startup.log"
fi

# One harness run per program, so a program cut off by its time limit loses only its own
# table; every table goes to bench.log.
if want bench; then
{
  for prog in ${BENCH_PROGRAMS:-black_scholes heat_equation shallow_water nbody leibnitz_pi \
    rosenbrock kmeans_step lattice_boltzmann_d2q9}; do
    step "benchmark harness: $prog"
    timeout "${BENCH_SECONDS:-45}" "$py" benches/run.py --no-stream --size-scale "${SIZE_SCALE:-4}" \
      --programs "$prog" --runners "${BENCH_RUNNERS:-numpy,hassium-cpu,hassium-opencl,jax}" \
      --reps "${BENCH_REPS:-2}" --timeout 30 --out "/tmp/bench-$prog" 2>&1 | grep -v "^wrote"
  done
} 2>&1 | tee "$out/bench.log" | tail -n 80
fi
echo "gpu-check: done ($(date +%T))"
