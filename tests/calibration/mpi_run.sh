#!/usr/bin/env bash
# Runs planner-bench under MPI on this machine for ctest (docs/calibration.md,
# "Tests"): NP ranks on loopback, oversubscribed if the machine has fewer
# cores, as root too (CI containers run as root).
#
#   mpi_run.sh MPIEXEC NP BENCH ARGS...          the run must succeed
#   mpi_run.sh --expect-wrong-result MPIEXEC NP BENCH ARGS... -o FILE
#                                                 the run must fail on its
#                                                 result check and write no FILE
set -u
expect_wrong=0
if [[ ${1:-} == --expect-wrong-result ]]; then
  expect_wrong=1
  shift
fi
if [[ $# -lt 3 ]]; then
  echo "usage: $0 [--expect-wrong-result] MPIEXEC NP BENCH [ARGS...]" >&2
  exit 2
fi
mpiexec=$1 np=$2
shift 2

flags=(-n "$np")
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  # Open MPI refuses more ranks than cores, and root, unless told. Pinning
  # oversubscribed ranks to cores would make them wait for each other.
  flags+=(--bind-to none)
  cores=$(nproc 2>/dev/null || echo 1)
  ((np > cores)) && flags+=(--oversubscribe)
  # Waiting ranks yield the core instead of spinning: on a machine with other
  # work (a CI runner, a shared box) a spinning pair only progresses when both
  # are scheduled at once, so small messages would time scheduler ticks; a
  # yielding one costs ~3 us per message but times the same every run.
  export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
  if [[ $EUID -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  # Containers often forbid the cross-memory-attach syscalls (ptrace) of the
  # shared-memory transport; fall back to copies through shared memory.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
fi

out=""
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[i]} == -o || ${args[i]} == --output ]] && out=${args[i + 1]:-}
done
[[ -n $out ]] && rm -f "$out"

# Busy-polling MPI ranks time what the scheduler gives them: on a machine
# already running more than it has cores, small messages measure scheduler
# ticks (milliseconds) and the checks downstream fail. Say so up front.
if [[ -r /proc/loadavg ]]; then
  read -r load _ </proc/loadavg
  if awk -v l="$load" -v c="$(nproc 2>/dev/null || echo 1)" 'BEGIN { exit !(l > c) }'; then
    echo "mpi_run: warning: load average $load on $(nproc) cores; MPI timings will be noisy (run the MPI tests on an idle machine)"
  fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$mpiexec" "${flags[@]}" "$@" >"$log" 2>&1
rc=$?
if [[ $expect_wrong -eq 0 ]]; then
  cat "$log"
  exit $rc
fi
# The self-test: a perturbed result must stop the run without a file.
cat "$log"
if [[ $rc -eq 0 ]]; then
  echo "mpi_run: expected planner-bench to fail on the perturbed result, it exited 0" >&2
  exit 1
fi
if ! grep -q "wrong result" "$log"; then
  echo "mpi_run: expected a 'wrong result' error from planner-bench" >&2
  exit 1
fi
if [[ -n $out && -e $out ]]; then
  echo "mpi_run: planner-bench failed but wrote $out anyway" >&2
  exit 1
fi
echo "mpi_run: the wrong result was caught, no file written"
exit 0
