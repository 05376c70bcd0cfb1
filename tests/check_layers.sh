#!/usr/bin/env bash
# The include rules of docs/architecture.md, checked on every source file: a
# folder of the library may include only the folders below it. Fails (exit 1)
# naming each file and include that breaks a rule.
#   tests/check_layers.sh [SOURCE_DIR]
set -euo pipefail
root="${1:-$(dirname "${BASH_SOURCE[0]}")/..}"
cd "$root"

# folder -> the planner folders its files may include (itself included).
# simulate/ may include search/ (simulate_top.h re-ranks a search's results by
# simulation); search/ never includes simulate/, so the rules stay acyclic.
declare -A allowed=(
  [spec]="spec"
  [model]="spec model"
  [io]="spec model io"
  [framework]="spec model framework"
  [search]="spec model framework search"
  [simulate]="spec model framework search simulate"
  [calibrate]="spec model io calibrate"
  [validate]="spec model io framework search validate"
  [views]="spec model io framework search simulate calibrate validate views"
)
status=0
for layer in "${!allowed[@]}"; do
  for f in $(find "include/planner/$layer" "src/$layer" -type f \( -name '*.h' -o -name '*.cpp' \) 2>/dev/null | sort); do
    # planner/<folder>/x.h (public) and <folder>/x.h (private headers under src/).
    while IFS= read -r inc; do
      dep="${inc#planner/}"
      dep="${dep%%/*}"
      if [[ " ${allowed[$layer]} " != *" $dep "* ]]; then
        echo "check_layers: $f includes \"$inc\": $layer/ may include only ${allowed[$layer]// /, }" >&2
        status=1
      fi
    done < <(sed -nE 's@^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]((planner/)?(spec|model|io|framework|search|simulate|calibrate|validate|views|cli)/[^">]+)[">].*@\1@p' "$f")
  done
done
# Every header and source of the library sits in one of the folders above.
for f in $(find include/planner src -maxdepth 1 -type f \( -name '*.h' -o -name '*.cpp' \) | sort); do
  echo "check_layers: $f is outside the layer folders (docs/architecture.md)" >&2
  status=1
done
if ((status == 0)); then echo "check_layers: ok (${#allowed[@]} layers)"; fi
exit $status
