#!/usr/bin/env bash
# The --html pages in a real browser (issue 17): headless Chromium loads a
# search, an evaluate and a simulate page, takes a screenshot of each, and the
# test fails on any console message or script error, on a missing element
# (scatter, tables, breakdowns, timeline, formulas) or on any request leaving
# the page. Exits 77 (ctest SKIP_RETURN_CODE) when Chromium is not installed.
#
# Usage: html_browser_test.sh PLANNER_BIN OUT_DIR   (screenshots: OUT_DIR/*.png)
set -u
if [[ $# -ne 2 ]]; then
  echo "usage: $0 PLANNER_BIN OUT_DIR" >&2
  exit 2
fi
bin=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium not found (Debian: apt-get install chromium; scripts/setup.sh installs it)"
  exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_env.sh" html_pages

# name | planner arguments | element ids the page must have
cases=(
  "search|search --model llama405b --gpus 16384 --html search.html|run-info scatter scatter-data pareto top-k ranked-table time-breakdown-1 memory-breakdown-1 time-breakdown-10 rejections"
  "search_simulated|search -m llama8b -n 64 --top 3 --simulate-top 2 --html search_simulated.html|run-info scatter pareto ranked-table simulated-table timeline rejections"
  "evaluate|evaluate -m llama70b -n 1024 --tp 8 --pp 4 --vpp 5 --html evaluate.html|run-info fits time-breakdown memory-breakdown timeline explain"
  "simulate|simulate -m llama8b -n 32 --tp 2 --pp 4 --global-batch 32 --schedule zb-h1 --html simulate.html|run-info fits time-breakdown memory-breakdown timeline explain simulation-summary"
)

# The requests a page made (not the browser's own: its update and time checks
# have no page as initiator), from Chromium's net log.
page_requests() {
  python3 - "$1" <<'PY'
import json, sys
seen = set()
for e in json.load(open(sys.argv[1])).get("events", []):
    p = e.get("params", {})
    if "url" in p and "initiator" in p and "file://" in p.get("network_isolation_key", ""):
        seen.add(p["url"])
print("\n".join(sorted(seen)))
PY
}

# Loads file $1 (dump in $2.dom, log in $2.log, net log in $2.netlog.json).
load_page() {
  local user
  user=$(mktemp -d)
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-default-apps \
    --user-data-dir="$user" "--host-resolver-rules=MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
    --log-net-log="$tmp/$2.netlog.json" --dump-dom "file://$1" >"$2.dom" 2>"$2.log"
  rm -rf "$user"
}

# The checks must catch what they look for: a page with an external image and
# a console error.
cat >canary.html <<'HTML'
<!DOCTYPE html><html><body><img src="https://example.com/x.png"><script>console.error("canary");</script></body></html>
HTML
load_page "$tmp/canary.html" canary
grep -q CONSOLE canary.log || fail "the console check misses a console.error (Chromium's log format changed?)"
[[ "$(page_requests "$tmp/canary.netlog.json")" == "https://example.com/x.png" ]] ||
  fail "the request check misses an external image (Chromium's net log format changed?)"

for c in "${cases[@]}"; do
  IFS='|' read -r name args ids <<<"$c"
  read -r -a argv <<<"$args"
  page="$tmp/$name.html"
  if ! "$bin" "${argv[@]}" >"$name.stdout" 2>"$name.stderr" || [[ ! -s "$page" ]]; then
    fail "$name: planner ${args} did not write the page: $(cat "$name.stderr")"
    continue
  fi
  # No reference outside the page: the one URL allowed is SVG's namespace name.
  ext=$(grep -Eo "(https?|ftp|wss?)://[^\"' )<>]*|url\(|@import|//[a-z0-9.-]+\.[a-z]{2,}/" "$page" |
        grep -v '^http://www.w3.org/2000/svg$' | sort -u)
  [[ -n "$ext" ]] && fail "$name: external references in the page: $ext"
  # No absolute path or date in the page (deterministic output).
  grep -q "$tmp" "$page" && fail "$name: the page contains the absolute path $tmp"

  load_page "$page" "$name"
  user=$(mktemp -d)
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$user" \
    "--host-resolver-rules=MAP * ~NOTFOUND" --hide-scrollbars --window-size=1280,2000 \
    --screenshot="$out/$name.png" "file://$page" >/dev/null 2>&1
  rm -rf "$user"
  [[ -s "$out/$name.png" ]] || fail "$name: no screenshot"
  grep -q 'data-script="ok"' "$name.dom" || fail "$name: the page's script did not run to its end"
  grep -q 'id="js-error"' "$name.dom" && fail "$name: script error: $(grep -o 'script error:[^<]*' "$name.dom")"
  if grep -q 'CONSOLE' "$name.log"; then
    fail "$name: console messages:"
    grep 'CONSOLE' "$name.log" >&2
  fi
  for id in $ids; do
    grep -q "id=\"$id\"" "$name.dom" || fail "$name: no element with id \"$id\""
  done
  # Every request the browser made: only the page itself.
  reqs=$(page_requests "$tmp/$name.netlog.json" | grep -v "^file://$page\$")
  [[ -n "$reqs" ]] && fail "$name: requests besides the page: $reqs"
  echo "ok: $name ($(wc -c <"$page") bytes; screenshot $out/$name.png)"
done
exit $failed
