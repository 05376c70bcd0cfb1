#!/usr/bin/env python3
"""Writes the constructed nccl-tests logs of this folder (README.md says what
each exercises). Times follow an alpha-beta line per collective (latency plus
size / bus bandwidth x nccl-tests' factor), printed exactly as nccl-tests'
src/common.cu prints them ("%7.2f" times and bandwidths), so busbw/algbw
carries the rank count the way a real log does. Deterministic: run it again
and the files do not change.

    python3 tests/data/nccl_tests/constructed/make_constructed.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TYPE_SIZE = {"float": 4, "bfloat16": 2}


def factor(coll, n):
    return 2.0 * (n - 1) / n if coll == "all_reduce" else (n - 1) / n


def row(coll, n, size, lat_us, busbw_gbs, layout="current", dtype="float", jitter=1.0):
    count = size // TYPE_SIZE[dtype]
    t = (lat_us + size * factor(coll, n) / (busbw_gbs * 1e3)) * jitter  # us
    t_in = t * 1.013
    cols = []
    for tt in (t, t_in):
        alg = size / tt / 1e3
        bus = alg * factor(coll, n)
        ts = f"{tt:7.2f}" if tt < 10000 else f"{tt:7.0f}"
        cols.append((ts, f"{alg:6.2f}", f"{bus:6.2f}"))
    redop = "sum" if coll != "all_gather" else "none"
    if layout == "current":
        head = f"{size:12d}  {count:12d}  {dtype:>8s}  {redop:>6s}  {-1:6d}"
        wrong = "0"
        return head + "".join(f"  {a}  {b}  {c}  {wrong:>6s}" for a, b, c in cols)
    head = f"{size:12d}  {count:12d}  {dtype:>8s}  {redop:>6s}"
    return head + "".join(f"  {a}  {b}  {c}  {'0e+00':>6s}" for a, b, c in cols)


HEADER = [
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
]


def preamble(test, nranks_line):
    return [
        "# nccl-tests version 2.13.10 (9d0b9d9) nccl-headers=22104 nccl-library=22104",
        f"# Collective test starting: {test}",
        "# nThread 1 nGpus 1 minBytes 33554432 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ] + nranks_line + ["#"]


def dev(rank, host, gpu, model="NVIDIA H100 80GB HBM3", pid=None):
    pid = pid or 41000 + rank
    return f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host:>10s} device  {gpu} [0x{0x18 + 16 * gpu:02x}] {model}"


def sizes(lo, hi):
    s = lo
    while s <= hi:
        yield s
        s *= 2


def footer(avg):
    return ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:.4f} ", "#", ""]


def write(name, lines, crlf=False):
    text = ("\r\n" if crlf else "\n").join(lines)
    with open(os.path.join(HERE, name), "w", newline="") as f:
        f.write(text)


def jit(i):  # a fixed, small wobble so rows are not one perfect line
    return 1.0 + 0.02 * ((i * 7) % 5 - 2) / 2


# 1. 16 nodes x 8 H100, all-reduce; the README excerpt kept 5 rank lines and "...".
devs = [dev(r, "dgx-a01", r) for r in range(5)] + ["#  ..."]
rows = [row("all_reduce", 128, s, 60, 190, jitter=jit(i)) for i, s in enumerate(sizes(32 << 20, 16 << 30))]
write("all_reduce_128_ranks_dots.log", preamble("all_reduce_perf", devs) + HEADER + rows + footer(150.2))

# 2. GB200 NVL72 rack, all-reduce; only the last rank's line shown.
devs = [dev(71, "gb200-t18", 3, "NVIDIA GB200", pid=77107)]
rows = [row("all_reduce", 72, s, 35, 690, jitter=jit(i)) for i, s in enumerate(sizes(1 << 20, 8 << 30))]
write("all_reduce_nvl72_last_rank.log", preamble("all_reduce_perf", devs) + HEADER + rows + footer(540.7))

# 3. 2 x 8 H100 all-gather under Intel MPI "-prepend-rank" ([0] tags), CRLF,
#    indentation, NCCL INFO lines between rows.
devs = [dev(r, "node-a" if r < 8 else "node-b", r % 8) for r in range(16)]
rows = [row("all_gather", 16, s, 40, 170, jitter=jit(i)) for i, s in enumerate(sizes(1 << 20, 1 << 30))]
body = preamble("all_gather_perf", devs) + HEADER
for i, r in enumerate(rows):
    body.append("  " + r)
    if i % 4 == 1:
        body.append(f"node-a:41000:41050 [0] NCCL INFO Channel {i:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM")
body += footer(120.3)
write("all_gather_2x8_rank_tags_crlf.log", [("[0] " + l) if l else l for l in body], crlf=True)

# 4. 1 x 8 reduce-scatter from a README that kept only the units line of the
#    header, no test name and no device list (older nccl-tests, no root column).
rows = [row("reduce_scatter", 8, s, 25, 360, layout="older", jitter=jit(i)) for i, s in enumerate(sizes(64 << 10, 1 << 30))]
write("reduce_scatter_units_only.log", [
    "$ mpirun -np 8 ./build/reduce_scatter_perf -b 64K -e 1G -f 2 -g 1",
    "#                                                 out-of-place                       in-place          ",
    "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
] + rows + footer(250.1))

# 5. 2 x 8 all-reduce whose excerpt lost the rank lines of the second node and
#    the "..." between them: a complete-looking list of 8 ranks on one host,
#    but busbw/algbw = 1.875 says 16 ranks.
devs = [dev(r, "node-a", r) for r in range(8)]
rows = [row("all_reduce", 16, s, 45, 185, jitter=jit(i)) for i, s in enumerate(sizes(32 << 20, 1 << 30))]
write("all_reduce_list_contradicts_ratio.log", preamble("all_reduce_perf", devs) + HEADER + rows + footer(160.0))

# 6. 1 x 8 H100 all-reduce swept from 32 MiB only (the sweep of issue 14 that
#    extrapolated latency): the fit keeps the base's latency.
devs = [dev(r, "dgx-b07", r) for r in range(8)]
rows = [row("all_reduce", 8, s, 30, 360, jitter=jit(i)) for i, s in enumerate(sizes(32 << 20, 16 << 30))]
write("all_reduce_1x8_from_32MiB.log", preamble("all_reduce_perf", devs) + HEADER + rows + footer(352.4))

# 7. 2 x 8 H100 reduce-scatter from nccl-tests 2.19 run with "-I 1" (per-iteration
#    CUDA-event timing: i_min, i_max, i_p99 and i_cv% after each half's #wrong,
#    src/util.cu writeResultHeader / writePerIterReport) and timestamps at the end
#    of each row (printed as two tokens, date and time).
PER_ITER_HEADER = [
    "#                                                              out-of-place (+ per-iteration)                                in-place (+ per-iteration)",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%           timestamp",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)   %Y-%m-%d %H:%M:%S",
]


def per_iter_row(coll, n, size, lat_us, busbw_gbs, jitter, stamp):
    base = row(coll, n, size, lat_us, busbw_gbs, jitter=jitter).split()
    head, halves = base[:5], [base[5:9], base[9:13]]
    out = f"{int(head[0]):12d}  {int(head[1]):12d}  {head[2]:>8s}  {head[3]:>6s}  {int(head[4]):6d}"
    for t, alg, bus, wrong in halves:
        tt = float(t)
        stats = (tt * 0.97, tt * 1.09, tt * 1.07, 1.8)  # min, max, p99 well apart from the mean
        out += f"  {t:>7s}  {alg:>6s}  {bus:>6s}  {wrong:>6s}" + "".join(f"  {v:7.2f}" for v in stats)
    return out + f"  {stamp}"


devs = [dev(r, "node-a" if r < 8 else "node-b", r % 8) for r in range(16)]
rows = [per_iter_row("reduce_scatter", 16, s, 40, 175, jit(i), f"2026-11-27 05:{20 + i:02d}:00")
        for i, s in enumerate(sizes(1 << 20, 1 << 30))]
pre = preamble("reduce_scatter_perf", devs)
pre[0] = "# nccl-tests version 2.19.6 nccl-headers=23007 nccl-library=23007"
write("reduce_scatter_2x8_per_iteration.log", pre + PER_ITER_HEADER + rows + footer(160.2))

# 8. nccl-tests built without MPI, started by "mpirun -np 2" on two hosts (the
#    layout of NVIDIA/nccl-tests#107): each process runs a one-rank job of its
#    own and prints its own preamble, device line, header and rows, interleaved.
pre = ["# nThread 1 nGpus 1 minBytes 1048576 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
body = pre + pre + [dev(0, "host-a", 0, pid=1320), dev(0, "host-b", 0, pid=2066), "#"] + HEADER + HEADER
for i, s in enumerate(sizes(1 << 20, 64 << 20)):
    body += [row("all_reduce", 1, s, 8 + s / 1.2e6, 1, jitter=jit(i)), row("all_reduce", 1, s, 8 + s / 1.2e6, 1, jitter=jit(i + 1))]
write("all_reduce_two_one_rank_jobs.log", body + footer(0) + footer(0))

# 9. The same without MPI on two 8-GPU nodes, "-g 8" per process (the layout of
#    NVIDIA/nccl-tests#306): two separate 8-rank jobs, one per node.
pre = ["# nThread 1 nGpus 8 minBytes 33554432 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
devs = [dev(r, "node3", r, pid=1530412) for r in range(8)] + [dev(r, "node2", r, pid=2236260) for r in range(8)]
body = pre + pre + devs + ["#"] + HEADER + HEADER
for i, s in enumerate(sizes(32 << 20, 1 << 30)):
    body += [row("all_reduce", 8, s, 30, 360, jitter=jit(i)), row("all_reduce", 8, s, 30, 360, jitter=jit(i + 2))]
write("all_reduce_two_8_rank_jobs.log", body + footer(350.1) + footer(350.4))

# 10. broadcast_perf on 2 hosts x 1 V100 in the older layout (no redop, a root
#     column; NVIDIA/nccl-tests#82), no test name: the rows' root 0 says it is a
#     rooted test, so "--collective all_reduce" is refused.
body = ["$ mpirun -np 2 --host 10.0.0.48:1,10.0.0.52:1 ./build/broadcast_perf -b 1M -e 64M -f 2 -g 1 -c 0",
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 67108864 step: 2(factor) warmup iters: 10 iters: 100 validation: 0 ",
        "#", "# Using devices",
        "#   Rank  0 Pid  14926 on v100-gpu-1 device  0 [0x00] Tesla V100-PCIE-16GB",
        "#   Rank  1 Pid   9210 on v100-gpu-5 device  0 [0x00] Tesla V100-PCIE-16GB", "#",
        "#                                                     out-of-place                       in-place          ",
        "#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
for i, s in enumerate(sizes(1 << 20, 64 << 20)):
    t = (30 + s / 1.1e3) * jit(i)
    alg = s / t / 1e3
    body.append(f"{s:12d}  {s // 4:12d}  {'float':>6s}  {0:6d}  {t:7.0f}  {alg:6.2f}  {alg:6.2f}  {'N/A':>5s}  {t * 1.01:7.0f}  {alg / 1.01:6.2f}  {alg / 1.01:6.2f}  {'N/A':>5s}")
write("broadcast_old_layout_root0.log", body + footer(1.1))

# 11. A 1 x 8 all-reduce quoted in Markdown ("> " before every line, as a
#     blog's blockquote keeps it), no test-name line: the echoed command names
#     the test.
devs = [dev(r, "gpu30", r, model="NVIDIA GeForce RTX 2080 Ti") for r in range(8)]
rows = [row("all_reduce", 8, s, 35, 2.4, jitter=jit(i)) for i, s in enumerate(sizes(1 << 20, 128 << 20))]
body = ["$ ./build/all_reduce_perf -b 1M -e 128M -f 2 -g 8"] + preamble("all_reduce_perf", devs)[2:] + HEADER + rows
write("all_reduce_1x8_blockquote.log", [("> " + l) if l else ">" for l in body + footer(2.3)])

# 12. 2 x 8 all-to-all that crashed at 512 MiB: nccl-tests prints its failure in
#     the middle of the row it was on, then one "Test failure" line per frame
#     (the layout of NVIDIA/nccl-tests#355). The sizes before it finished.
devs = [dev(r, "node0" if r < 8 else "node1", r % 8, model="NVIDIA H800") for r in range(16)]
rows = [row("all_to_all", 16, s, 45, 160, jitter=jit(i)).replace(" sum ", "none ") for i, s in enumerate(sizes(32 << 20, 256 << 20))]
crash = f"{512 << 20:12d}  {(512 << 20) // 4:12d}  {'float':>8s}  {'none':>6s}  {-1:6d} node0: Test CUDA failure common.cu:389 'an illegal memory access was encountered'"
frames = [" .. node0 pid 41000: Test failure common.cu:519", " .. node0 pid 41000: Test failure alltoall.cu:348"]
write("all_to_all_2x8_failed_at_512MiB.log", preamble("alltoall_perf", devs) + HEADER + rows + [crash] + frames)

# 13. 4 x 8 all-reduce whose device list was pasted only up to rank 19 (the
#     third host shows 4 of its 8 ranks, no "..."; NVIDIA/nccl-tests#322 cut its
#     1024-rank list the same way): busbw/algbw pins 32.
devs = [dev(r, f"hca-{r // 8 + 1}", r % 8) for r in range(20)]
rows = [row("all_reduce", 32, s, 55, 185, jitter=jit(i)) for i, s in enumerate(sizes(256 << 20, 8 << 30))]
write("all_reduce_4x8_list_cut_in_host.log", preamble("all_reduce_perf", devs) + HEADER + rows + footer(170.5))

# 14. Two tests of one session in one file, in the older layout (no test-name
#     lines): each table under the shell command that ran it.
old_header = [
    "#                                                       out-of-place                       in-place          ",
    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
    "#        (B)    (elements)                    (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
]
body = []
for coll, binary in (("all_reduce", "all_reduce_perf"), ("all_gather", "all_gather_perf")):
    body += [f"user@box:~/nccl-tests$ ./build/{binary} -b 1M -e 64M -f 2 -g 2",
             "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 ",
             "#", "# Using devices", dev(0, "box", 0, model="NVIDIA RTX A6000"), dev(1, "box", 1, model="NVIDIA RTX A6000"), "#"]
    body += old_header + [row(coll, 2, s, 12, 9.5, layout="older", jitter=jit(i)) for i, s in enumerate(sizes(1 << 20, 64 << 20))]
    body += footer(8.7)
write("two_tests_named_by_commands.log", body)

# 15. 2 x 8 all-reduce run with "-C 1": nccl-tests prints the host's enqueue
#     time (cputimeSec, read before the collectives complete; src/common.cu
#     BenchTime) under "cputime", while algbw and busbw still come from the
#     collective's time. No real -C 1 log was found.
CPU_HEADER = [h.replace("    time", " cputime") for h in HEADER]
devs = [dev(r, "node-a" if r < 8 else "node-b", r % 8) for r in range(16)]
body = preamble("all_reduce_perf", devs) + CPU_HEADER
for i, s in enumerate(sizes(64 << 20, 2 << 30)):
    gpu = row("all_reduce", 16, s, 45, 185, jitter=jit(i)).split()
    cpu = 6.8 + 0.3 * ((i * 3) % 4)  # us: enqueueing 20 launches, whatever the size
    gpu[5], gpu[9] = f"{cpu:7.2f}", f"{cpu * 1.02:7.2f}"
    body.append(f"{int(gpu[0]):12d}  {int(gpu[1]):12d}  {gpu[2]:>8s}  {gpu[3]:>6s}  {int(gpu[4]):6d}" +
                "".join(f"  {gpu[k]:>7s}  {gpu[k + 1]:>6s}  {gpu[k + 2]:>6s}  {gpu[k + 3]:>6s}" for k in (5, 9)))
write("all_reduce_2x8_cputime.log", body + footer(170.2))
