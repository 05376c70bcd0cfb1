#!/usr/bin/env bash
# planner simulate as a user runs it: writes the SVG and the Chrome trace,
# the SVG passes xmllint (a real XML parser), a bad flag writes nothing.
# Usage: tests/simulate_cli.sh PLANNER_BIN
set -euo pipefail
planner=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "simulate_cli: FAIL: $*" >&2; exit 1; }

"$planner" simulate --model llama70b --gpus 64 --tp 4 --pp 4 --dp 4 --vpp 2 --schedule interleaved \
  --global-batch 32 --recompute full --svg "$dir/t.svg" --trace "$dir/t.json" >"$dir/out.txt" 2>"$dir/err.txt" ||
  fail "simulate exited $?: $(cat "$dir/err.txt")"
grep -q "step time" "$dir/out.txt" || fail "no summary printed"
grep -q "simulated vs closed form" "$dir/out.txt" || fail "no comparison printed"
[[ -s "$dir/t.svg" && -s "$dir/t.json" ]] || fail "output files missing"
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout "$dir/t.svg" || fail "t.svg is not well-formed XML"
else
  echo "simulate_cli: xmllint not installed (apt-get install libxml2-utils); XML check skipped" >&2
fi
head -c 1 "$dir/t.json" | grep -q '{' || fail "t.json is not a JSON object"
ls "$dir" | grep -q '\.tmp' && fail "temporary files left behind"

# A text timeline for a case too large to read is refused, and nothing is written.
if "$planner" simulate --model llama70b --gpus 64 --tp 4 --pp 4 --dp 4 --vpp 2 --ascii --svg "$dir/big.svg" \
     >/dev/null 2>"$dir/err2.txt"; then
  fail "--ascii on 128 micro-batches should fail"
fi
grep -q "planner: error: --ascii" "$dir/err2.txt" || fail "unexpected error: $(cat "$dir/err2.txt")"
[[ ! -e "$dir/big.svg" ]] || fail "big.svg written despite the error"

# Inconsistent schedule flags are one-line errors.
if "$planner" simulate --model llama70b --gpus 64 --tp 4 --pp 4 --vpp 2 --schedule zb-h1 >/dev/null 2>"$dir/err3.txt"; then
  fail "zb-h1 with --vpp 2 should fail"
fi
[[ $(wc -l <"$dir/err3.txt") -eq 1 ]] || fail "expected a one-line error, got: $(cat "$dir/err3.txt")"
echo "simulate_cli: ok"
