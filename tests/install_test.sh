#!/usr/bin/env bash
# `cmake --install` gives a working planner: installs the build into a scratch
# prefix, adds a model that exists only there, and runs the installed binary
# from elsewhere without PLANNER_DATA_DIR. It must find its data in
# <prefix>/share/planner (not the source tree it was built from).
#   tests/install_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
share="$prefix/share/planner"
for d in models hardware_profiles tests/regress; do
  [[ -d "$share/$d" ]] || { echo "install_test: $share/$d missing" >&2; exit 1; }
done
# A model only the installed tree has.
sed 's/"name": "llama3.1-8b"/"name": "installed-probe-8b"/; s/"aliases": \[[^]]*\]/"aliases": []/' \
  "$share/models/llama3.1-8b.json" >"$share/models/installed-probe-8b.json"
cd "$prefix"
unset PLANNER_DATA_DIR
"$prefix/bin/planner" show installed-probe-8b >/dev/null
"$prefix/bin/planner" search --model installed-probe-8b --gpus 8 --top 1 >/dev/null
"$prefix/bin/planner" regress >/dev/null
echo "install_test: ok ($prefix/bin/planner finds $share)"
