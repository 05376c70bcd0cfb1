#!/usr/bin/env bash
# Builds the benchmarks and reports medians of 5 repetitions, then the peak RSS
# and wall time of the flagship CLI run. Usage: bash scripts/bench.sh [extra
# Google Benchmark flags, e.g. --benchmark_filter=Search]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j2 --target planner search_bench validate_bench simulate_bench >/dev/null
if [[ ! -x build/bench/search_bench ]]; then
  echo "bench: build/bench/search_bench missing (is libbenchmark-dev installed? run bash scripts/setup.sh)" >&2
  exit 1
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "== Google Benchmark: median of 5 repetitions =="
build/bench/search_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@" >"$out" 2>/dev/null
# Keep the header rows and the median rows of the console table.
awk '/^Benchmark/ || /^-+$/ || /_median/' "$out"
build/bench/validate_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@" >"$out" 2>/dev/null
awk '/_median/' "$out"
build/bench/simulate_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@" >"$out" 2>/dev/null
awk '/_median/' "$out"

echo
echo "== build/planner search --model llama405b --gpus 16384 =="
cmd=(build/planner search --model llama405b --gpus 16384)
if [[ -x /usr/bin/time ]]; then
  # bash's `time` for millisecond wall time; GNU time -v for the peak RSS.
  TIMEFORMAT='%3R'
  wall=$( { time /usr/bin/time -v "${cmd[@]}" >/dev/null 2>"$out"; } 2>&1 )
  echo "wall time: $wall s"
  awk -F': ' '/Maximum resident set size/ {printf "peak RSS: %.1f MiB\n", $2 / 1024}' "$out"
elif command -v python3 >/dev/null 2>&1; then
  # The kernel folds the parent's peak RSS into the child's at exec, so a run
  # of `true` gives the floor python adds; the planner's figure is an upper bound.
  python3 - "${cmd[@]}" <<'PY'
import os, sys, time
def run(argv):
    null = os.open(os.devnull, os.O_WRONLY)
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
    _, status, ru = os.wait4(pid, 0)
    return time.perf_counter() - t0, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)
_, floor, _ = run(["true"])
wall, rss, rc = run(sys.argv[1:])
print(f"wall time: {wall:.3f} s")
print(f"peak RSS: {rss:.1f} MiB (upper bound; python's floor {floor:.1f} MiB; install 'time' for an exact figure)")
sys.exit(rc)
PY
else
  echo "bench: neither /usr/bin/time (apt-get install time) nor python3 found; wall time only" >&2
  TIMEFORMAT='wall time: %R s'
  time "${cmd[@]}" >/dev/null
fi
