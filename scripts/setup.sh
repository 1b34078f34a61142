#!/usr/bin/env bash
# Sets up everything Hassium needs on a fresh Debian machine, idempotently:
# Debian packages, the project's Python virtual environment, the release build.
# Then runs the main job (scripts/main_job.sh).
# Usage: scripts/setup.sh [--no-main-job]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential pkg-config python3-venv python3-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo libclang-dev
  libopenmpi-dev openmpi-bin iproute2)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  $PY -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, pytest, maturin, numexpr, hypothesis, matplotlib, jax" 2>/dev/null; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
fi

# Rust toolchain: the machine's (rustup) one.
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install a Rust toolchain (rustup, stable >= 1.80) first" >&2
  exit 1
fi

scripts/build.sh

if [ "${1:-}" != "--no-main-job" ]; then
  scripts/main_job.sh
fi
