#!/usr/bin/env bash
# Fuzzes the C API under AddressSanitizer: sequences of hs_* calls with random handles,
# shapes, lengths and opcodes (bridge-c/fuzz/fuzz_targets/c_api_calls.rs; see the section
# "C API fuzzing" of docs/reliability.md).
#
# usage: scripts/fuzz-c-api.sh [SECONDS] [extra libFuzzer flags...]
#   SECONDS  how long to fuzz (default 60); one job, on the reference engine.
# The corpus grows in bridge-c/fuzz/corpus/c_api_calls (not committed), seeded from the
# committed inputs in bridge-c/fuzz/seeds/c_api_calls; a crash is written to
# bridge-c/fuzz/artifacts/c_api_calls/ and reproduced with
#   cd bridge-c/fuzz && cargo +nightly fuzz run -a c_api_calls artifacts/c_api_calls/<file>
# which prints the decoded call sequence. Needs the nightly toolchain and a C++ compiler.
set -euo pipefail
cd "$(dirname "$0")/../bridge-c/fuzz"
secs="${1:-60}"
shift || true

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz-c-api: installing cargo-fuzz"
  cargo install cargo-fuzz
fi

mkdir -p corpus/c_api_calls
# A failed allocation returns NULL, as malloc does outside ASan, instead of ASan's abort:
# the runtime must turn it into HS_ERR_NOMEM (or an engine error), and that is checked.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
# -a: debug assertions and overflow checks, so an arithmetic overflow is a finding.
# -timeout: one input runs in milliseconds; seconds mean a hang.
# -rss_limit_mb: ASan's shadow plus the runtime's buffer pool stay well below it.
cargo +nightly fuzz run -a c_api_calls corpus/c_api_calls seeds/c_api_calls -- \
  -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=4096 -len_control=0 \
  -print_final_stats=1 "$@"
