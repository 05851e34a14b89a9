#!/usr/bin/env python3
"""Summarises bench/gpu_ab_builds.sh: per benchmark and kernel, the median time of the old and
the new build over the rounds, and new / old. Writes OUT/ab.json; prints a table and the worst
ratio. Usage: ab_summary.py OUT_DIR"""
import glob
import json
import os
import re
import statistics
import sys

out = sys.argv[1]
runs = {}  # (bench, kernel) -> {"old": [ms], "new": [ms]}
for path in glob.glob(os.path.join(out, "ab_*_*.json")):
    m = re.match(r"ab_(old|new)_(tessel_bench\w*|cli)_(\d+)\.json$", os.path.basename(path))
    if not m:
        continue
    side, bench = m.group(1), m.group(2)
    try:
        data = json.load(open(path))
    except (OSError, json.JSONDecodeError) as e:
        print(f"unreadable {path}: {e}")
        continue
    if isinstance(data, list):  # tessel bench --json: the default config of each kernel and size
        for row in data:
            if "default" in row and row["default"].get("median_ms"):
                key = (bench, f"{row['kernel']} {row['size']}")
                runs.setdefault(key, {"old": [], "new": []})[side].append(row["default"]["median_ms"])
        continue
    for kernel, row in data.get("kernels", {}).items():
        # Failed measurements are recorded as 1e30 ms: left out.
        if isinstance(row, dict) and "ms" in row and row["ms"] < 1e20:
            runs.setdefault((bench, kernel), {"old": [], "new": []})[side].append(row["ms"])
rows = []
for (bench, kernel), sides in sorted(runs.items()):
    if not sides["old"] or not sides["new"]:
        continue
    old, new = statistics.median(sides["old"]), statistics.median(sides["new"])
    rows.append({"bench": bench, "kernel": kernel, "old_ms": old, "new_ms": new, "ratio": new / old if old else None,
                 "rounds": min(len(sides["old"]), len(sides["new"]))})
json.dump(rows, open(os.path.join(out, "ab.json"), "w"), indent=1)
print(f"{'bench':24} {'kernel':44} {'old ms':>10} {'new ms':>10} {'new/old':>8}")
for r in rows:
    print(f"{r['bench']:24} {r['kernel']:44} {r['old_ms']:10.5f} {r['new_ms']:10.5f} {r['ratio']:8.3f}")
ratios = [r["ratio"] for r in rows if r["ratio"]]
if ratios:
    print(f"{len(rows)} kernels; new/old median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
          f"max {max(ratios):.3f}; outside 0.98..1.02: {sum(1 for x in ratios if abs(x - 1) > 0.02)}")
