#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (CMake preset "asan", build dir build-asan/). Any sanitizer report aborts
# the test that triggered it. Run scripts/setup.sh first (same packages).
# Usage: bash scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake --preset asan && cmake --build --preset asan -j2; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "sanitize: build failed" >&2
  exit 1
fi
built=$(date +%s)
ctest --preset asan -j2
echo "sanitize: ok (build $((built - start)) s, tests $(( $(date +%s) - built )) s)"
