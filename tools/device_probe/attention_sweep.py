#!/usr/bin/env python3
"""Causal attention forward and backward throughput across sequence lengths.

planner prices flash attention's forward at peak x attention_max x
L / (L + attention_half_tokens), L = s/2 for causal attention, and its
backward at the same rate for 2.5x the FLOPs (docs/cost_model.md,
"Attention core"). This times PyTorch's scaled_dot_product_attention with the
cuDNN backend (the fused attention Transformer Engine runs) and the
FlashAttention-2 backend, bf16, causal, head dim 128, micro-batch 1, at
s = 1024 ... 16384 with 8 and 32 query heads (K/V expanded to the query
heads: the FLOPs are the same), forward alone and forward + backward, each
after 0.2 s idle (burst clock): 3 warm-up calls, the mean of 10.

Not part of the build or the tests: a recipe run on a lent GPU
(tools/device_probe/README.md); results go to $OUT/attention_sweep.json.
"""
import json
import os
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = os.environ.get("OUT", ".")


def timed(fn, iters=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    time.sleep(0.2)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / iters


rows = []
for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash2", SDPBackend.FLASH_ATTENTION)):
    for h in (8, 32):
        for s in (1024, 2048, 4096, 8192, 16384):
            q, k, v = (torch.randn(1, h, s, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(1, h, s, 128, device="cuda", dtype=torch.bfloat16)
            fwd_flops = 4.0 * s * s * 128 * h / 2
            try:
                with sdpa_kernel([backend]):
                    def fwd():
                        with torch.no_grad():
                            F.scaled_dot_product_attention(q, k, v, is_causal=True)

                    def both():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(g)

                    tf = timed(fwd)
                    tb = timed(both) - tf
                rows.append({"backend": name, "heads": h, "seq": s, "fwd_s": tf, "bwd_s": tb,
                             "fwd_flops_per_s": fwd_flops / tf, "bwd_flops_per_s": 2.5 * fwd_flops / tb})
                print(f"{name:6s} h {h:2d} s {s:5d}  fwd {fwd_flops / tf / 1e12:6.1f}  "
                      f"bwd {2.5 * fwd_flops / tb / 1e12:6.1f} TFLOP/s  bwd/fwd time {tb / tf:.2f}", flush=True)
            except Exception as e:  # noqa: BLE001 - record, keep the rest
                rows.append({"backend": name, "heads": h, "seq": s, "error": repr(e)[:300]})
                print(name, h, s, "error", repr(e)[:200], flush=True)
            del q, k, v, g
with open(os.path.join(OUT, "attention_sweep.json"), "w") as fh:
    json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "rows": rows}, fh, indent=1)
