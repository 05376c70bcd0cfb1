#!/usr/bin/env python3
"""Causal attention forward and backward, replayed from CUDA graphs.

attention_sweep.py times eager calls, so calls shorter than PyTorch's
per-call overhead (~60 us) measure the host, not the kernel. Here each
configuration's forward, and its forward + backward (torch.autograd.grad),
is captured once in a CUDA graph and replayed 20 times back to back: the
GPU time of the kernels alone. cuDNN fused attention (PyTorch SDPA), bf16,
causal, head dim 128, micro-batch 1, heads 8 / 16 / 32, s = 2K ... 16K,
0.2 s idle before each timing (burst clock).

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/attention_graphs.json.
"""
import json
import os
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = os.environ.get("OUT", ".")


def replay_time(graph, iters=20):
    graph.replay()
    torch.cuda.synchronize()
    time.sleep(0.2)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        graph.replay()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / iters


def capture(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


rows = []
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for h in (8, 16, 32):
        for s in (2048, 4096, 8192, 16384):
            q, k, v = (torch.randn(1, h, s, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            go = torch.randn(1, h, s, 128, device="cuda", dtype=torch.bfloat16)
            fwd_flops = 4.0 * s * s * 128 * h / 2
            try:
                def fwd():
                    with torch.no_grad():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True)

                def both():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.autograd.grad(o, (q, k, v), go)

                tf = replay_time(capture(fwd))
                tb = replay_time(capture(both)) - tf
                rows.append({"heads": h, "seq": s, "fwd_s": tf, "bwd_s": tb,
                             "fwd_flops_per_s": fwd_flops / tf, "bwd_flops_per_s": 2.5 * fwd_flops / tb,
                             "pair_flops_per_s": 3.5 * fwd_flops / (tf + tb)})
                print(f"h {h:2d} s {s:5d}  fwd {tf * 1e6:7.1f} us {fwd_flops / tf / 1e12:6.1f}  "
                      f"bwd {2.5 * fwd_flops / tb / 1e12:6.1f}  pair {3.5 * fwd_flops / (tf + tb) / 1e12:6.1f} TFLOP/s",
                      flush=True)
            except Exception as e:  # noqa: BLE001 - record, keep the rest
                rows.append({"heads": h, "seq": s, "error": repr(e)[:300]})
                print(h, s, "error", repr(e)[:200], flush=True)
            del q, k, v, go
with open(os.path.join(OUT, "attention_graphs.json"), "w") as fh:
    json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "rows": rows}, fh, indent=1)
