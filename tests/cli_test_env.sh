# Sourced by the CLI test scripts (cli_outputs.sh, html_browser_test.sh): sets
# PLANNER_DATA_DIR to the repository root ($root), makes a scratch directory
# ($tmp, removed on exit) the working directory, and defines `fail MESSAGE`,
# which prints "NAME: FAIL: MESSAGE" on stderr and sets $failed to 1 (the
# script's exit status at its end).
# Usage: . "$(dirname "${BASH_SOURCE[0]}")/cli_test_env.sh" NAME
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PLANNER_DATA_DIR="$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
failed=0
test_name=$1
fail() {
  echo "$test_name: FAIL: $*" >&2
  failed=1
}
