#!/usr/bin/env bash
# Release build of everything: the Rust workspace (engines, C library), the Python
# extension installed into .venv, engines placed next to it, and the pkg-config file.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

echo "build: cargo build --release (workspace)"
cargo build --release --workspace --exclude hassium-bridge-python

# The extension is built whole-program optimised, in a target directory of its own so
# the workspace's release build (which the Rust tests share) is not rebuilt each time:
# recording an operation calls through the bridge, the runtime and the core in turn, and
# their small functions are only inlined across crates this way (about 12% off a loop of
# small-array operations; the same setting for the whole workspace would link every test
# binary through LTO, several minutes on two cores).
echo "build: Python extension (maturin, LTO) into .venv"
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/python-lto" \
  CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  .venv/bin/maturin develop --release --quiet -m bridge-python/Cargo.toml

# Byte-compile the package as pip does for installed ones: an editable install is
# otherwise compiled from source at every start under PYTHONDONTWRITEBYTECODE (~30 ms).
.venv/bin/python -m compileall -q bridge-python/python/hassium >/dev/null

# Engines live next to the extension, where the runtime looks first.
pkg_dir=$(.venv/bin/python -c "import hassium, os; print(os.path.dirname(hassium.__file__))")
for lib in "$CARGO_TARGET_DIR"/release/libhassium_engine_*.so; do
  # Copy then rename: a process that has the old library mapped keeps its (unlinked)
  # copy instead of crashing when the file under it is rewritten.
  [ -e "$lib" ] && cp -f "$lib" "$pkg_dir/.$(basename "$lib").tmp" &&
    mv -f "$pkg_dir/.$(basename "$lib").tmp" "$pkg_dir/$(basename "$lib")"
done

if [ -x scripts/gen-pkgconfig.sh ]; then
  scripts/gen-pkgconfig.sh
fi
echo "build: done"
