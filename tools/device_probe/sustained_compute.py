#!/usr/bin/env python3
"""Burst versus sustained tensor-core throughput on one GPU (PyTorch).

Measures what planner's efficiency.sustained_clock_fraction stands for
(docs/hardware_profiles.md): the same GEMM timed in a short burst on an idle
GPU (what MAMF-style benchmarks and planner-bench report) and over a long
loop, where the power limit lowers the SM clock. Also times FP8 GEMMs
(torch._scaled_mm) and causal flash attention (scaled_dot_product_attention,
forward + backward) at training shapes, and samples nvidia-smi throughout.

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/compute_probe.json.
"""
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
SUSTAIN_S = float(os.environ.get("SUSTAIN_S", "60"))
res = {"argv": sys.argv}


def sync():
    torch.cuda.synchronize()


def timed(fn, iters):
    """Seconds per call: CUDA events around `iters` back-to-back calls."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    sync()
    return a.elapsed_time(b) / 1e3 / iters


def bf16_gemm(m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.matmul(x, w.t())


def fp8_gemm(m, n, k):
    x = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device="cuda")
    return lambda: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def burst(fn, flops, warm=3, iters=10):
    for _ in range(warm):
        fn()
    sync()
    return flops / timed(fn, iters)


def sustained(fn, flops, seconds, chunk):
    """Throughput of each chunk of `chunk` calls over `seconds` of back-to-back work."""
    series, t0 = [], time.time()
    while time.time() - t0 < seconds:
        series.append((round(time.time() - t0, 3), flops / timed(fn, chunk)))
    return series


def summarize(series):
    rates = [r for _, r in series]
    n = len(rates)
    tail = sorted(rates[n // 2:])  # the second half: the settled state
    return {
        "chunks": n,
        "first_chunk_flops_per_s": rates[0],
        "max_chunk_flops_per_s": max(rates),
        "settled_median_flops_per_s": tail[len(tail) // 2],
        "settled_min_flops_per_s": tail[0],
        "series": [[t, round(r / 1e12, 1)] for t, r in series],
    }


smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,"
     "clocks_event_reasons.active", "--format=csv,noheader", "-lms", "250"],
    stdout=open(os.path.join(OUT, "smi.csv"), "w"), stderr=subprocess.STDOUT)
try:
    p = torch.cuda.get_device_properties(0)
    res["device"] = {"name": p.name, "sm_count": p.multi_processor_count, "torch": torch.__version__,
                     "cuda": torch.version.cuda}
    N = 8192
    f = 2.0 * N * N * N
    g = bf16_gemm(N, N, N)
    time.sleep(5)  # idle first: the burst starts from a cool GPU
    res["bf16_8192_burst_flops_per_s"] = burst(g, f)
    res["bf16_8192_sustained"] = summarize(sustained(g, f, SUSTAIN_S, 50))
    # Llama 3.1 layer shapes (planner-bench's list), hot: right after the sustained loop.
    shapes = {"8b-qkv": (8192, 6144, 4096), "8b-attn-out": (8192, 4096, 4096), "8b-gate-up": (8192, 28672, 4096),
              "8b-down": (8192, 4096, 14336), "70b-tp8-qkv": (8192, 1280, 8192), "70b-tp8-attn-out": (8192, 8192, 1024),
              "70b-tp8-gate-up": (8192, 7168, 8192), "70b-tp8-down": (8192, 8192, 3584)}
    res["bf16_shapes_hot_flops_per_s"] = {k: burst(bf16_gemm(*s), 2.0 * s[0] * s[1] * s[2], 3, 30)
                                          for k, s in shapes.items()}
    # Attention: Llama 3.1 70B at TP 8 (8 query heads, 1 KV head, head dim 128), sequence 8192, causal,
    # forward + backward; FLOPs as Megatron-LM counts them (4 s^2 d h forward, halved for causal, x3.5 fwd+bwd).
    try:
        s, h, d = 8192, 8, 128
        q = torch.randn(1, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        kv = [torch.randn(1, 1, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2)]

        def att():
            o = F.scaled_dot_product_attention(q, kv[0], kv[1], is_causal=True, enable_gqa=True)
            o.backward(torch.ones_like(o))

        res["attention_bf16_causal_fwd_bwd_flops_per_s"] = burst(att, 3.5 * 4 * s * s * d * h / 2, 3, 20)
    except Exception as e:  # noqa: BLE001 - record, keep the rest
        res["attention_error"] = repr(e)
    time.sleep(20)  # cool down before the FP8 burst
    try:
        g8 = fp8_gemm(N, N, N)
        res["fp8_8192_burst_flops_per_s"] = burst(g8, f)
        res["fp8_8192_sustained"] = summarize(sustained(g8, f, SUSTAIN_S * 0.75, 100))
    except Exception as e:  # noqa: BLE001
        res["fp8_error"] = repr(e)
finally:
    smi.terminate()
    with open(os.path.join(OUT, "compute_probe.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    short = {k: (v if not isinstance(v, dict) or "series" not in v else {kk: vv for kk, vv in v.items() if kk != "series"})
             for k, v in res.items()}
    print(json.dumps(short, indent=1))
