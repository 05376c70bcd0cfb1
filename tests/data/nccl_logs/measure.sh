#!/bin/sh
# Median |error| of `planner calibrate check` over all sizes, the 1-64 MiB band and >= 32 MiB, one line per
# series (a log with several tests, e.g. xxrjun_cluster01_10x8_h100.log, gives one line each).
# usage: measure.sh PLANNER PROFILE MEASUREMENTS.json
# ">= 32 MiB" starts at 32 MiB - 32 KiB: nccl-tests rounds all-gather sizes down to a multiple of the ranks (33553920).
# (e += 0 makes the errors numbers: awk compares the strings sub() leaves as strings, "9.8" > "13.1".)
"$1" calibrate check --profile "$2" --measurements "$3" 2>&1 | awk '
  function med(a, n,   i, j, t) { if (n == 0) return "-"; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return sprintf("%.1f%%", (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }
  function flush() { if (na > 0) printf "%s: all %s (n=%d) | 1-64MiB %s (n=%d) | >=32MiB %s (n=%d)\n", label, med(all, na), na, med(band, nb), nb, med(big, ng), ng
    na = nb = ng = 0; split("", all); split("", band); split("", big) }
  / world [0-9]+ ranks / && /\[/ { flush(); label = $0; sub(/^[^:]*: /, "", label); sub(/ \[.*$/, "", label) }
  $1 ~ /^[0-9]+$/ && $4 ~ /%$/ { e = $4; sub(/%/, "", e); e += 0; if (e < 0) e = -e; all[++na] = e
    if ($1 >= 1048576 && $1 <= 67108864) band[++nb] = e; if ($1 >= 33521664) big[++ng] = e }
  END { flush() }'
