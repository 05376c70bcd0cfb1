#!/usr/bin/env python3
"""Burst versus sustained throughput of a training-like layer (PyTorch, eager).

sustained_compute.py loops one GEMM, the worst case for power. A training
step mixes GEMMs with memory-bound kernels (norms, activations, attention's
softmax), which draw less power, so the SM clock may settle higher. This
runs one Llama 3.1 70B decoder layer as one of 8 tensor-parallel ranks holds
it (d 8192, 8 query heads and 1 KV head of 128, FFN 28672/8, sequence 8192,
micro-batch 1, bf16, no communication), forward and backward, in a short
burst on an idle GPU and then for SUSTAIN_S seconds, and samples nvidia-smi.

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/layer_clock.json.
"""
import json
import os
import subprocess
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
SUSTAIN_S = float(os.environ.get("SUSTAIN_S", "60"))
S, D, H, KV, HD, FF = 8192, 8192, 8, 1, 128, 28672 // 8


def param(*shape):
    return (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) * shape[-1] ** -0.5).requires_grad_()


wqkv, wo = param((H + 2 * KV) * HD, D), param(D, H * HD)
w1, w2 = param(2 * FF, D), param(D, FF)
n1, n2 = torch.ones(D, device="cuda", dtype=torch.bfloat16, requires_grad=True), \
    torch.ones(D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
x0 = torch.randn(S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)


def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * w


def layer():
    h = rms(x0, n1)
    q, k, v = (h @ wqkv.t()).split([H * HD, KV * HD, KV * HD], dim=-1)
    q, k, v = (t.view(S, -1, HD).transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    x = x0 + a.squeeze(0).transpose(0, 1).reshape(S, H * HD) @ wo.t()
    g, u = (rms(x, n2) @ w1.t()).chunk(2, dim=-1)
    y = x + (F.silu(g) * u) @ w2.t()
    y.backward(torch.ones_like(y))


GEMM_FLOPS = 3 * 2 * S * D * ((H + 2 * KV) * HD + H * HD + 2 * FF + FF)  # forward + 2x backward
ATTN_FLOPS = 3.5 * 4 * S * S * HD * H / 2  # causal, Megatron-LM's count, fwd + bwd
FLOPS = GEMM_FLOPS + ATTN_FLOPS


def timed(iters):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        layer()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / iters


smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active",
     "--format=csv,noheader", "-lms", "250"],
    stdout=open(os.path.join(OUT, "layer_smi.csv"), "w"), stderr=subprocess.STDOUT)
res = {"shape": {"seq": S, "d": D, "q_heads": H, "kv_heads": KV, "head_dim": HD, "ffn_shard": FF},
       "flops_per_step": FLOPS, "gemm_flops_per_step": GEMM_FLOPS}
try:
    for _ in range(3):
        layer()
    torch.cuda.synchronize()
    time.sleep(20)  # idle: the burst starts cool
    res["burst_s"] = timed(10)
    series, t0 = [], time.time()
    while time.time() - t0 < SUSTAIN_S:
        series.append((round(time.time() - t0, 2), timed(20)))
    tail = sorted(t for _, t in series[len(series) // 2:])
    res["sustained_settled_median_s"] = tail[len(tail) // 2]
    res["first_chunk_s"] = series[0][1]
    res["burst_flops_per_s"] = FLOPS / res["burst_s"]
    res["sustained_flops_per_s"] = FLOPS / res["sustained_settled_median_s"]
    res["sustained_over_burst"] = res["burst_s"] / res["sustained_settled_median_s"]
    res["series_ms"] = [[t, round(s * 1e3, 3)] for t, s in series]
finally:
    smi.terminate()
    with open(os.path.join(OUT, "layer_clock.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "series_ms"}, indent=1))
