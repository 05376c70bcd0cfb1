#!/bin/bash
# One prepared run on a lent single GPU (tools/device_probe/README.md):
#   1. planner-bench --backend nccl-local (GEMM and HBM; one GPU has no group
#      of two ranks, so no collective is measured),
#   2. nccl-tests all_reduce_perf / sendrecv_perf with -g 1 on the same GPU,
#   3. sustained_compute.py (burst vs sustained GEMM, FP8, attention).
# Expects the binaries built on the developer machine under .devrun/
# (planner-bench, its non-CUDA shared libraries in .devrun/lib, nccl-tests in
# .devrun/nccl-tests); the CUDA libraries come from the GPU machine's image.
set -u
OUT=${OUT:-/tmp/probe_out}
mkdir -p "$OUT"
{
  nvidia-smi
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE
  nvidia-smi --help-query-gpu | grep -i "reasons.active"
} >"$OUT/smi_q.txt" 2>&1
libdirs=""
for lib in libcudart.so.13 libcublasLt.so.13 libnccl.so.2; do
  f=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
  echo "# $lib: ${f:-not found}"
  [ -n "$f" ] && libdirs="$libdirs:$(dirname "$f")"
done
export LD_LIBRARY_PATH="$PWD/.devrun/lib$libdirs"
ldd .devrun/planner-bench | grep "not found"
timeout 150 .devrun/planner-bench --backend nccl-local -o "$OUT/h100_local_bench.json" 2>&1 | tee "$OUT/planner_bench.log"
for t in all_reduce sendrecv; do
  timeout 90 ".devrun/nccl-tests/${t}_perf" -b 8 -e 1G -f 2 -g 1 >"$OUT/nccl_tests_${t}_g1.log" 2>&1
  tail -4 "$OUT/nccl_tests_${t}_g1.log"
done
SUSTAIN_S=${SUSTAIN_S:-60} timeout 330 python3 tools/device_probe/sustained_compute.py
