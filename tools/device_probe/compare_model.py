#!/usr/bin/env python3
"""The lent H100's GEMM and attention measurements against planner's formulas.

Runs here (plain Python 3, no GPU): reads the JSON files under
hardware_profiles/measured/h100-sxm-2026-11-27/ and prints
  1. the GEMM line time = (F / q + gemm_half_flops) / (peak * gemm_max) fitted
     (weighted least squares in relative error, as `planner calibrate fit`)
     under three wave-quantisation variants: the profile's 256x128 tile
     (layer_cost.cpp wave_capacity_of), that tile or 128x128, and no wave term;
  2. causal attention forward + backward against the profile's combined
     curve attention_max * L / (L + attention_half_tokens), L = s/2, and
     against a curve with a term for the query tiles W one call spreads
     over the SMs (CUDA-graph timings; eager ones below them).
docs/cost_model.md, Known gaps ("Wave quantisation with one tile", "Attention
with few heads per GPU") quotes its output.

  python3 tools/device_probe/compare_model.py
"""
import json
import math
import os

DIR = os.path.join(os.path.dirname(__file__), "..", "..", "hardware_profiles", "measured", "h100-sxm-2026-11-27")
PEAK = {"bf16": 989.4e12, "fp8": 1978.9e12}  # dgx-h100 chip.peak_flops_per_s
SMS = 132
VARIANTS = {"256x128 tile (the profiles)": [(256, 128)], "256x128 or 128x128": [(256, 128), (128, 128)],
            "no wave term": []}


def wave_efficiency(m, n, tiles):
    if not tiles:
        return 1.0
    best = 0.0
    for tm, tn in tiles:
        for a, b in ((tm, tn), (tn, tm)):
            count = math.ceil(m / a) * math.ceil(n / b)
            best = max(best, m * n / (math.ceil(count / SMS) * SMS * a * b))
    return best


def fit_line(xs, ys):
    """y = a x + b, least squares weighted by 1/y."""
    w = [1.0 / y for y in ys]
    s11 = sum((wi * x) ** 2 for wi, x in zip(w, xs))
    s12 = sum(wi * wi * x for wi, x in zip(w, xs))
    s22 = sum(wi * wi for wi in w)
    t1 = sum(wi * wi * x * y for wi, x, y in zip(w, xs, ys))
    t2 = sum(wi * wi * y for wi, y in zip(w, ys))
    det = s11 * s22 - s12 * s12
    return (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det


def report(label, shapes, dtype):
    print(f"{label} ({len(shapes)} shapes, {dtype})")
    for name, tiles in VARIANTS.items():
        xs = [2.0 * m * n * k / wave_efficiency(m, n, tiles) for m, n, k, _ in shapes]
        ys = [t for _, _, _, t in shapes]
        a, b = fit_line(xs, ys)
        errs = [(a * x + b - y) / y for x, y in zip(xs, ys)]
        rms = math.sqrt(sum(e * e for e in errs) / len(errs))
        print(f"  {name:28s} gemm_max {1 / (a * PEAK[dtype]):.3f}  gemm_half_flops {b / a:.2e}  "
              f"rms {rms * 100:4.1f}%  max {max(map(abs, errs)) * 100:4.1f}%")


bench = json.load(open(os.path.join(DIR, "planner_bench.json")))
for dtype in ("bf16", "fp8"):
    report("planner-bench, cuBLASLt", [(g["m"], g["n"], g["k"], g["time_s"]) for g in bench["gemm"]
                                       if g["dtype"] == dtype], dtype)
sweep = json.load(open(os.path.join(DIR, "wave_sweep.json")))
report("wave sweep, torch.matmul, shapes of 1e11 FLOP or more",
       [(m, n, k, t) for m, n, k, t, _ in sweep["points"] if 2.0 * m * n * k >= 1e11], "bf16")

graphs = json.load(open(os.path.join(DIR, "attention_graphs.json")))
print("attention, cuDNN, CUDA graphs, forward + backward: the profile's curve and the fit with work per call")
pts = [(r["heads"] * r["seq"] / 128, r["seq"] / 2, r["pair_flops_per_s"]) for r in graphs["rows"] if "error" not in r]


def rms_of(f):
    e = [(f(w, l) - y) / y for w, l, y in pts]
    return math.sqrt(sum(x * x for x in e) / len(e))


print(f"  profile (0.55, L_half 235): rms {rms_of(lambda w, l: PEAK['bf16'] * 0.55 * l / (l + 235)) * 100:.1f}%")
print(f"  645e12 * L/(L+540) * W/(W+120): rms "
      f"{rms_of(lambda w, l: 645e12 * l / (l + 540) * w / (w + 120)) * 100:.1f}%")
att = json.load(open(os.path.join(DIR, "attention_sweep.json")))
print("attention, cuDNN, eager calls, forward + backward against the profile's curve (0.55, L_half 235, L = s/2)")
for r in att["rows"]:
    if r.get("backend") != "cudnn" or "error" in r:
        continue
    s, h = r["seq"], r["heads"]
    fwd_flops = 4.0 * s * s * 128 * h / 2
    measured = 3.5 * fwd_flops / (r["fwd_s"] + r["bwd_s"])
    model = PEAK["bf16"] * 0.55 * (s / 2) / (s / 2 + 235)
    bound = " (forward under 150 us: PyTorch per-call overhead)" if r["fwd_s"] < 150e-6 else ""
    print(f"  heads {h:2d} s {s:5d}: measured {measured / 1e12:5.0f} TFLOP/s, model {model / 1e12:5.0f}, "
          f"model {model / measured - 1:+4.0%}{bound}")
