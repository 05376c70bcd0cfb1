#!/usr/bin/env bash
# What the golden cases cannot say (their arguments are split on whitespace,
# and they compare stdout and stderr only): empty values are refused, "-" is
# no file name, a failing command leaves no output file (and a file already
# there unchanged), stdout is one JSON or CSV document.
# Usage: tests/cli_outputs.sh PLANNER_BIN (from any directory)
set -uo pipefail
planner=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_env.sh" cli_outputs

# `expect_error FLAG ARGS...`: planner ARGS fails with one line on stderr
# naming FLAG, and writes nothing in the directory.
expect_error() {
  local flag=$1
  shift
  rm -rf "$tmp/w" && mkdir "$tmp/w"
  local code=0
  (cd "$tmp/w" && "$planner" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt") || code=$?
  local what="planner $*"
  [[ $code -ne 0 ]] || fail "$what: exit 0"
  [[ $(wc -l <"$tmp/err.txt") -eq 1 ]] || fail "$what: expected a one-line error, got: $(cat "$tmp/err.txt")"
  grep -q -- "^planner: error: $flag" "$tmp/err.txt" || fail "$what: the error does not start with $flag: $(cat "$tmp/err.txt")"
  [[ -z $(ls -A "$tmp/w") ]] || fail "$what: left $(ls -A "$tmp/w")"
}

sim=(simulate --model llama8b --gpus 32 --tp 2 --pp 4 --dp 4 --global-batch 32)
hf="$root/tests/data/hf/llama3.1-8b.json"

# Empty paths and "-": every output file flag as --html.
expect_error "--svg: expected a file name, got an empty path" "${sim[@]}" --svg ""
expect_error "--trace: expected a file name, got an empty path" "${sim[@]}" --trace ""
expect_error "--html: expected a file name, got an empty path" "${sim[@]}" --html ""
expect_error "--trace: expected a file name; this output is not written to stdout" "${sim[@]}" --trace -
expect_error "--svg: expected a file name; this output is not written to stdout" "${sim[@]}" --svg -
expect_error "--html: expected a file name; the page is not written to stdout" "${sim[@]}" --html -
expect_error "--output: expected a file name, got an empty path" import-hf "$hf" -o ""
expect_error "config: expected a file name, got an empty path" import-hf ""
# Empty values of other flags: refused, not their default.
expect_error "--name: expected a non-empty value, got ''" import-hf "$hf" --name ""
expect_error "--seq-len: expected an integer, got ''" import-hf "$hf" --seq-len ""
expect_error "--grad-bytes: expected a number, got ''" evaluate --model llama8b --gpus 64 --tp 2 --zero 1 --grad-bytes ""
expect_error "--gpus: expected an integer, got ''" evaluate --model llama8b --gpus "" --tp 2
expect_error "--hardware: expected a non-empty value, got ''" evaluate --model llama8b --gpus 64 --hardware ""
expect_error "--format: expected a non-empty value, got ''" evaluate --model llama8b --gpus 64 --format ""
expect_error "--suite: expected a file name, got an empty path" regress --suite ""
expect_error "--output: expected a non-empty value, got ''" calibrate fit --measurements \
  "$root/tests/golden/data/sweep_from_32mib.json" --base dgx-h100 -o ""

# A command that fails leaves no page, and one already there unchanged.
expect_error "no layout of 8 GPUs fits" search --model llama405b --gpus 8 --top 2 --html ns.html
expect_error "the layout does not fit" evaluate --model llama405b --gpus 8 --html e.html
echo "an older page" >"$tmp/old.html"
"$planner" search --model llama405b --gpus 8 --html "$tmp/old.html" >/dev/null 2>&1 && fail "search of what does not fit: exit 0"
[[ $(cat "$tmp/old.html") == "an older page" ]] || fail "a failing search rewrote old.html"
"$planner" evaluate --model llama405b --gpus 8 --html "$tmp/old.html" >/dev/null 2>&1 && fail "evaluate of what does not fit: exit 0"
[[ $(cat "$tmp/old.html") == "an older page" ]] || fail "a failing evaluate rewrote old.html"
# ... and a command that succeeds writes it.
"$planner" evaluate --model llama8b --gpus 64 --tp 2 --zero 1 --html "$tmp/ok.html" >/dev/null 2>&1 ||
  fail "evaluate of a layout that fits failed"
[[ -s "$tmp/ok.html" ]] || fail "evaluate --html of a layout that fits wrote no page"

# --ascii with json or csv: refused, stdout empty (it was the document with the timeline after it).
expect_error "--ascii" "${sim[@]}" --ascii --format json
[[ ! -s "$tmp/out.txt" ]] || fail "simulate --ascii --format json printed: $(head -c 200 "$tmp/out.txt")"
"${planner}" "${sim[@]}" --format json >"$tmp/sim.json" 2>/dev/null || fail "simulate --format json failed"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/sim.json" 2>/dev/null ||
  fail "simulate --format json is not one JSON document"

# search --simulate-top --format csv: one table (every row as many fields as the header, no blank line).
"$planner" search --model llama70b --gpus 1024 --pp 4 --top 3 --simulate-top 5 --format csv >"$tmp/s.csv" 2>/dev/null ||
  fail "search --simulate-top --format csv failed"
awk -F, 'NR == 1 { n = NF } NF != n || $0 == "" { bad = 1 } END { exit bad }' "$tmp/s.csv" ||
  fail "search --simulate-top --format csv is not one table: $(cat "$tmp/s.csv")"
[[ $(wc -l <"$tmp/s.csv") -eq 6 ]] || fail "expected a header and 5 rows (3 of --top, 2 more simulated): $(cat "$tmp/s.csv")"
"$planner" search --model llama70b --gpus 1024 --pp 4 --top 3 --simulate-top 5 --format json >"$tmp/s.json" 2>/dev/null &&
  python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); assert len(j["simulated_ranking"]) == 5' "$tmp/s.json" ||
  fail "search --simulate-top --format json: not one document with 5 simulated rows"

# An integer is decimal: 016 GPUs are 16 (strtoll, base 0, read 14).
"$planner" evaluate --model llama8b --gpus 016 --tp 2 --zero 1 2>/dev/null | head -1 | grep -q "| 16 GPUs |" ||
  fail "--gpus 016 is not 16 GPUs"

[[ $failed -eq 0 ]] && echo "cli_outputs: ok"
exit $failed
