#!/usr/bin/env python3
"""Sustained over burst throughput as a function of the GEMM share of the time.

Each iteration is one bf16 8192^3 GEMM followed by n device-to-device copies
of 64 MiB (memory-bound, little tensor-core power). For each n: 10 s idle,
a short burst, then SUSTAIN_S seconds back to back; the ratio of the burst
iteration time to the settled one says how much the power limit slows a mix
with that GEMM share. nvidia-smi is sampled throughout.

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/duty_clock.json.
"""
import json
import os
import subprocess
import time

import torch

OUT = os.environ.get("OUT", ".")
SUSTAIN_S = float(os.environ.get("SUSTAIN_S", "25"))
N = 8192
a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
src = torch.empty(32 << 20, device="cuda", dtype=torch.bfloat16)
dst = torch.empty_like(src)


def timed(fn, iters):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(iters):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / 1e3 / iters


gemm = lambda: torch.matmul(a, b)  # noqa: E731
copy = lambda: dst.copy_(src)  # noqa: E731
smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader", "-lms", "500"],
    stdout=open(os.path.join(OUT, "duty_smi.csv"), "w"), stderr=subprocess.STDOUT)
res = {"runs": []}
try:
    for _ in range(5):
        gemm(), copy()
    torch.cuda.synchronize()
    time.sleep(10)
    tg, tc = timed(gemm, 10), timed(copy, 50)
    res["gemm_burst_s"], res["copy_burst_s"] = tg, tc
    for n in (0, 8, 20, 45):
        def step(n=n):
            gemm()
            for _ in range(n):
                copy()
        time.sleep(10)
        burst = timed(step, 5)
        series, t0 = [], time.time()
        while time.time() - t0 < SUSTAIN_S:
            series.append(timed(step, 20))
        tail = sorted(series[len(series) // 2:])
        settled = tail[len(tail) // 2]
        r = {"copies": n, "gemm_share_burst": tg / (tg + n * tc), "burst_s": burst, "settled_s": settled,
             "sustained_over_burst": burst / settled}
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
finally:
    smi.terminate()
    with open(os.path.join(OUT, "duty_clock.json"), "w") as fh:
        json.dump(res, fh, indent=1)
