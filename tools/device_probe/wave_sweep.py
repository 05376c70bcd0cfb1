#!/usr/bin/env python3
"""GEMM throughput across output shapes: is wave quantisation visible?

planner prices a GEMM's last partial wave of output tiles as lost
(layer_cost.cpp wave_capacity_of, one 256x128 tile on the GPU profiles).
This times bf16 GEMMs (torch.matmul, cuBLAS) over N = 128 ... 4096 by 128 at
M = 8192 and 4096 (K = 8192), and over M = 256 ... 8192 by 256 at N = 4096
(K = 4096): with a single 256x128 tile, throughput would drop in steps each
time the tile count passes a multiple of the 132 SMs. Each point: 3 warm-up
calls, then the mean of 20, after 0.1 s idle (burst clock).

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/wave_sweep.json.
"""
import json
import os
import time

import torch

OUT = os.environ.get("OUT", ".")


def rate(M, N, K):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    f = lambda: torch.matmul(a, b.t())  # noqa: E731
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    time.sleep(0.1)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(20):
        f()
    e1.record()
    torch.cuda.synchronize()
    t = e0.elapsed_time(e1) / 1e3 / 20
    return [M, N, K, t, 2.0 * M * N * K / t]


pts = []
for M in (8192, 4096):
    for N in range(128, 4097, 128):
        pts.append(rate(M, N, 8192))
for M in range(256, 8193, 256):
    pts.append(rate(M, 4096, 4096))
with open(os.path.join(OUT, "wave_sweep.json"), "w") as fh:
    json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "columns": ["m", "n", "k", "time_s", "flops_per_s"], "points": pts}, fh, indent=0)
for p in pts:
    print(f"M {p[0]:5d} N {p[1]:5d} K {p[2]:5d}  {p[4] / 1e12:6.1f} TFLOP/s")
