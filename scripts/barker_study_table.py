#!/usr/bin/env python3
"""Median MMD per box: DP Barker (Theorem 7, committed comparison grid), DP Barker with the
accountant of the given study file, and DP penalty (committed), for docs/REPRODUCTION.md."""
import csv, json, statistics, sys
from collections import defaultdict

study = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
grid = defaultdict(list)
iters = {}
for r in csv.DictReader(open("data/results/comparison.csv")):
    if r["algorithm"] in ("dp-barker", "dp-penalty") and r["mmd"]:
        key = (r["experiment"], r["algorithm"], float(r["epsilon"]))
        grid[key].append(float(r["mmd"]))
        iters[key] = int(r["iterations"])
print("| experiment | ε | Thm 7 iters | MMD Thm 7 | tight iters | MMD tight | DP penalty iters | MMD DP penalty |")
print("|---|---|---|---|---|---|---|---|")
for s in study:
    e, eps = s["experiment"], float(s["epsilon"])
    med = lambda k: statistics.median(grid[k]) if grid.get(k) else float("nan")
    b, p = (e, "dp-barker", eps), (e, "dp-penalty", eps)
    print(f"| {e} | {eps:g} | {iters.get(b, '')} | {med(b):.3f} | {s['iterations'][0]} | "
          f"{statistics.median(s['mmd']):.3f} | {iters.get(p, '')} | {med(p):.3f} |")
