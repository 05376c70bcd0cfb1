#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each over its
# seed corpus in fuzz/corpus/TARGET. New inputs go to a scratch corpus, never
# into the repository; a crash leaves crash-* files in the working directory
# and exits non-zero (keep each fixed one in fuzz/corpus/TARGET as a
# regression input).
#
# Usage: bash scripts/fuzz.sh [RUNS] [TARGET...]
#   RUNS: executions per target (default 1000000; CI smoke: 20000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(model_json hardware_json published_runs regress_suite simulate measurements_json nccl_tests_log cli_flags)

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ missing (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
if [[ ! -f build-fuzz/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLANNER_FUZZ=ON \
    -DPLANNER_BUILD_TESTS=OFF -DPLANNER_BUILD_BENCH=OFF >/dev/null
fi
cmake --build build-fuzz -j2 >/dev/null

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  start=$(date +%s)
  log="$scratch/$t.log"
  if ! build-fuzz/fuzz/fuzz_"$t" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
         "$scratch/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: FAIL fuzz_$t (crash input written to ./crash-*)" >&2
    exit 1
  fi
  done_line=$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)
  echo "fuzz_$t: $done_line; corpus $(ls "$scratch/$t" | wc -l) new inputs; $(( $(date +%s) - start )) s"
done
