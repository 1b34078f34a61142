#!/usr/bin/env bash
# Stages what a lent GPU machine needs to test and benchmark the OpenCL engine, into .gpu/
# (git-ignored): that machine has its own python3 (3.12) and numpy but no Rust toolchain,
# so this builds the Python extension as abi3 (loads in any CPython >= 3.11), strips it and
# the engine libraries so the bundle stays small (~12 MB instead of ~110), and adds the
# OpenCL engine's Rust test binaries. scripts/gpu-check.sh runs on the other machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpu
abi3_target=${CARGO_TARGET_DIR_ABI3:-$PWD/target-abi3}
# Whole-program optimised, as scripts/build.sh builds the extension for .venv.
CARGO_TARGET_DIR="$abi3_target" CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  cargo build --release -p hassium-bridge-python \
  --features extension-module,pyo3/abi3-py311
cargo build --release -p hassium-engine-cpu -p hassium-engine-opencl -p hassium-engine-reference-cdylib
tests=$(cargo test --release -p hassium-engine-opencl --no-run --message-format=json |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])')
rm -rf "$out/hassium" "$out/tests"
mkdir -p "$out/hassium" "$out/tests"
# The package with its subpackages (hassium/_composed/), without bytecode caches.
(cd bridge-python/python && find hassium -name '*.py' -print0 | xargs -0 cp --parents -t "../../$out")
strip -o "$out/hassium/_hassium.abi3.so" "$abi3_target/release/lib_hassium.so"
for lib in libhassium_engine_cpu.so libhassium_engine_opencl.so libhassium_engine_reference_so.so; do
  strip -o "$out/hassium/$lib" "target/release/$lib"
done
while read -r name exe; do
  strip -o "$out/tests/$name" "$exe"
done <<<"$tests"
# The engine's ABI test loads the cdylib from next to its own binary, as under target/.
cp "$out/hassium/libhassium_engine_opencl.so" "$out/tests/"
du -sh "$out"
