#!/usr/bin/env bash
# Installs the Debian packages planner needs (only those missing), then
# configures and builds it into build/. Idempotent; safe to run repeatedly.
# Works unattended (CI=true, no stdin) as root or through sudo.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev
          libeigen3-dev catch2 libbenchmark-dev time libxml2-utils
          openmpi-bin libopenmpi-dev  # planner-bench's MPI backend and its ctests
          chromium)                   # the --html pages' browser test (tests/html_browser_test.sh)
# --fuzz: also clang and its runtime (libFuzzer), for scripts/fuzz.sh.
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  apt_cmd="apt-get install -y --no-install-recommends ${missing[*]}"
  sudo_cmd=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo_cmd=(sudo -n)
    else
      echo "setup: missing packages: ${missing[*]}; run: sudo apt-get update && sudo $apt_cmd" >&2
      exit 1
    fi
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if ! { "${sudo_cmd[@]}" apt-get update -qq &&
         "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
       </dev/null >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    echo "setup: could not install packages: ${missing[*]}; run: apt-get update && $apt_cmd (as root)" >&2
    exit 1
  fi
  rm -f "$log"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: cmake configure failed" >&2
  exit 1
fi
if ! cmake --build build -j2 >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: build failed" >&2
  exit 1
fi
echo "setup: ok (packages present; Release build in build/, binary build/planner)"
