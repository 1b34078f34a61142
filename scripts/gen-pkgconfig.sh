#!/usr/bin/env bash
# Writes hassium.pc, the pkg-config file of Hassium's C library, so that
#     PKG_CONFIG_PATH=<dir> cc prog.c $(pkg-config --cflags --libs hassium)
# builds a program against this checkout's build.
#
# usage: scripts/gen-pkgconfig.sh [LIBDIR] [OUTDIR]
#   LIBDIR  where libhassium.so / libhassium.a are
#           (default: $CARGO_TARGET_DIR/release, CARGO_TARGET_DIR defaulting to ./target)
#   OUTDIR  where hassium.pc goes (default: LIBDIR/pkgconfig)
#
# The library is found at run time through an rpath to LIBDIR, so programs run without
# LD_LIBRARY_PATH. Static linking: add --static to pkg-config (libhassium.a plus
# Libs.private).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
libdir="$(cd "${1:-$target/release}" && pwd)"
outdir="${2:-$libdir/pkgconfig}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"

mkdir -p "$outdir"
cat > "$outdir/hassium.pc" <<EOF
prefix=$root
includedir=\${prefix}/bridge-c/include
libdir=$libdir

Name: hassium
Description: Hassium, a lazy vector-bytecode runtime for array programs (C API)
Version: ${version:-0.0.0}
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lhassium
Libs.private: -lpthread -ldl -lm
EOF
echo "gen-pkgconfig: wrote $outdir/hassium.pc (PKG_CONFIG_PATH=$outdir)"
