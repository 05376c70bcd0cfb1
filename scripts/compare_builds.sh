#!/usr/bin/env bash
# Runs the same planner commands with two binaries and compares everything
# they print and write (stdout, stderr, exit code, output files), byte for
# byte. For refactorings that must not change any output; the golden CLI
# tests cover fewer commands and no written files.
#   scripts/compare_builds.sh OLD_PLANNER NEW_PLANNER
# Exit 0 when every command agrees; otherwise each difference is listed.
set -u
if [[ $# -ne 2 ]]; then echo "usage: $0 OLD_PLANNER NEW_PLANNER" >&2; exit 2; fi
old=$(realpath "$1"); new=$(realpath "$2")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
export PLANNER_DATA_DIR="$root" LC_ALL=C
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data=tests/data
# One command per line; OUT/ in a command is a per-run output directory.
commands=$(cat <<'LIST'
search --model llama405b --gpus 16384
search --model llama405b --gpus 16384 --format json --top 20
search -m llama70b -n 1024 --hardware h200 --seq-len 4096 --global-batch 1024 --top 5 --format csv
search -m llama8b -n 64 --top 10 --simulate-top 3 --format json
search -m llama8b -n 64 --top 5 --simulate-top 2
search -m gpt3 -n 1024 --hardware a100 --seq-len 2048 --global-batch-tokens 3145728 --top 5
search -m llama70b -n 256 --hardware tpu-v5e-256 --top 5
search -m llama8b -n 7
evaluate --model llama405b --gpus 16384 --tp 8 --pp 16 --vpp 4 --recompute full --zero 1 --explain
evaluate -m llama405b -n 16384 --tp 4 --cp 2 --pp 2 --mbs 1 --vpp 8 --zero 3 --sp true --format json
evaluate -m llama70b -n 1024 --tp 8 --pp 4 --vpp 5 --format json --explain
evaluate -m llama8b -n 64 --tp 2 --zero 1 --explain
evaluate -m megatron-gpt-175b -n 1024 --hardware a100 --seq-len 2048 --global-batch 1536 --tp 8 --pp 8 --dp 16 --mbs 1 --attention unfused --recompute selective
simulate -m llama70b -n 1024 --tp 8 --pp 4 --vpp 5 --svg OUT/a.svg --trace OUT/a.json --ascii
simulate -m llama8b -n 64 --tp 2 --pp 4 --schedule zb-h1 --format json
simulate -m llama8b -n 64 --tp 2 --pp 4 --schedule gpipe
simulate -m llama405b -n 16384 --tp 8 --pp 16 --vpp 4 --recompute full --zero 1
validate --runs tests/validation/published_runs.json
validate --runs tests/validation/published_runs.json --format json
validate --runs tests/validation/published_runs.json --format csv
regress
list models
list hardware --format json
show llama405b
show h100
calibrate fit -m tests/data/calibration/synthetic_h100.json --base dgx-h100 -o OUT/fit.json
calibrate check --profile hardware_profiles/dgx-h100.json -m tests/data/calibration/synthetic_h100.json --summary
calibrate import-nccl-tests tests/data/nccl_tests/spark_playbooks_103_all_reduce.log tests/data/nccl_tests/spark_playbooks_25_all_gather.log -o OUT/spark.json
LIST
)
n=0; bad=0
while IFS= read -r line; do
  [[ -z "$line" ]] && continue
  n=$((n + 1))
  for which in old new; do
    d="$tmp/$which/$n"; mkdir -p "$d/OUT"
    bin=$old; [[ $which == new ]] && bin=$new
    read -r -a args <<<"${line//OUT\//$d/OUT/}"
    code=0
    "$bin" "${args[@]}" >"$d/stdout" 2>"$d/stderr" || code=$?
    echo "$code" >"$d/code"
    # Outputs may name their own directory; make it the same for both runs.
    sed -i "s#$d/OUT/#OUT/#g" "$d/stdout" "$d/stderr" $(find "$d/OUT" -type f)
  done
  if ! diff -r "$tmp/old/$n" "$tmp/new/$n" >"$tmp/diff" 2>&1; then
    bad=$((bad + 1))
    echo "differs: planner $line"
    head -n 20 "$tmp/diff"
  fi
done <<<"$commands"
echo "compare_builds: $n commands, $bad differ"
((bad == 0))
