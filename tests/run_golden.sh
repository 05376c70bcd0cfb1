#!/usr/bin/env bash
# Golden CLI tests. Each tests/golden/NAME.cmd holds one line of planner
# arguments (split on whitespace, no quoting); NAME.out, NAME.err and NAME.code
# hold the expected stdout, stderr and exit code. Cases run from the repository
# root with PLANNER_DATA_DIR set to it, so paths in the output are relative.
#
# Regenerate every expected file after an intended output change, then review
# the diff (git diff tests/golden) and commit it with the change:
#
#   tests/run_golden.sh build/planner --update
#
# Usage: run_golden.sh PLANNER_BIN [--update]
set -u
if [[ $# -lt 1 || $# -gt 2 || ( $# -eq 2 && "$2" != "--update" ) ]]; then
  echo "usage: $0 PLANNER_BIN [--update]" >&2
  exit 2
fi
bin=$(realpath "$1")
update=0
[[ $# -eq 2 ]] && update=1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
export PLANNER_DATA_DIR="$root"
export LC_ALL=C

golden=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cases=0
failed=0
for cmd in "$golden"/*.cmd; do
  name=$(basename "$cmd" .cmd)
  read -r -a args <"$cmd"
  code=0
  "$bin" "${args[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err" || code=$?
  echo "$code" >"$tmp/$name.code"
  cases=$((cases + 1))
  if [[ $update -eq 1 ]]; then
    for ext in out err code; do cp "$tmp/$name.$ext" "$golden/$name.$ext"; done
    continue
  fi
  ok=1
  for ext in out err code; do
    if [[ ! -f "$golden/$name.$ext" ]]; then
      echo "golden: $name.$ext is missing (run with --update)"
      ok=0
    elif ! diff -u --label "expected $golden/$name.$ext" --label "actual" "$golden/$name.$ext" "$tmp/$name.$ext"; then
      ok=0
    fi
  done
  if [[ $ok -eq 0 ]]; then
    echo "golden: FAIL $name: planner ${args[*]}"
    failed=$((failed + 1))
  fi
done

if [[ $update -eq 1 ]]; then
  echo "golden: rewrote the expected files of $cases cases; review with git diff $golden"
  exit 0
fi
if [[ $failed -gt 0 ]]; then
  echo "golden: $failed of $cases cases differ; if the change is intended: tests/run_golden.sh build/planner --update"
  exit 1
fi
echo "golden: all $cases cases match"
