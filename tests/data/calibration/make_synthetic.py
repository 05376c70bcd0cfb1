#!/usr/bin/env python3
"""Writes synthetic_h100.json: collective times generated from known alpha-beta
values with the planner's own formulas (src/model/collectives.cpp for groups wholly
inside one tier; docs/calibration.md) and 2% log-normal noise, seeded.
It is synthetic, not measured (backend "synthetic": a fit of NCCL runs would keep
NCCL's tuner, docs/calibration.md): tests/CMakeLists.txt fits it and checks that the
fit recovers these values. Regenerate (deterministic) with
    python3 tests/data/calibration/make_synthetic.py > tests/data/calibration/synthetic_h100.json
"""
import json
import math
import random

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"]


def truth(tier, i):
    """(base latency s, latency per step s, bandwidth per GPU B/s) of collective i on a tier."""
    if tier == 0:  # NVLink-like, 8 GPUs per node
        return (5.0 + i) * 1e-6, (0.7 + 0.1 * i) * 1e-6, (360.0 - 20 * i) * 1e9
    return (9.0 + i) * 1e-6, (3.5 + 0.5 * i) * 1e-6, (46.0 - 2 * i) * 1e9  # one NIC per GPU


def model(c, tier, p, n):
    l0, l1, bw = truth(tier, COLLECTIVES.index(c))
    if c == "send_recv":
        return l0 + l1 + n / bw
    passes = 2.0 if c == "all_reduce" else 1.0
    ring = l0 + passes * (p - 1) * l1 + passes * (p - 1) / p * n / bw
    if c == "all_reduce" and tier == 1:  # NCCL's tuner: the double binary tree when cheaper
        tree = l0 + 2 * math.ceil(math.log2(p)) * l1 + 2 * n / bw
        return tree if tree < ring else ring
    return ring


def factor(c, p):
    return {"all_reduce": 2 * (p - 1) / p, "send_recv": 1.0}.get(c, (p - 1) / p)


def main():
    rng = random.Random(20240601)
    series = []
    for c in COLLECTIVES:
        for tier, sizes in ((0, (2, 4, 8)), (1, (2, 4, 8))):
            for p in sizes:
                if c == "send_recv" and p != 2:
                    continue
                points = []
                n = 8
                while n <= 1 << 30:
                    t = model(c, tier, p, n) * math.exp(rng.gauss(0.0, 0.02))
                    t = float(f"{t:.6e}")
                    alg = n / t
                    points.append({"bytes": n, "time_s": t, "algbw_bytes_per_s": alg, "busbw_bytes_per_s": alg * factor(c, p)})
                    n *= 4
                series.append({
                    "collective": c,
                    "group": "intra_node" if tier == 0 else "inter_node",
                    "group_size": p,
                    "ranks_per_node": p if tier == 0 else 1,
                    "nodes": 1 if tier == 0 else p,
                    "concurrent_groups": 8 // p if tier == 0 else 8,
                    "dtype": "float",
                    "time_statistic": "median",
                    "points": points,
                })
    doc = {
        "schema_version": 1,
        "tool": "tests/data/calibration/make_synthetic.py (synthetic, not measured)",
        "backend": "synthetic",
        "device": "synthetic H100-like: tier 0 base (5+i) us, step (0.7+0.1i) us, (360-20i) GB/s; "
                  "tier 1 base (9+i) us, step (3.5+0.5i) us, (46-2i) GB/s per NIC; i = collective index",
        "hosts": [f"node{k}" for k in range(8)],
        "world_size": 64,
        "nodes": 8,
        "ranks_per_node": 8,
        "versions": {},
        "command": "python3 tests/data/calibration/make_synthetic.py",
        "series": series,
    }
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
