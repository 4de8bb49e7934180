#!/usr/bin/env python3
"""One markdown table from the two JSON-lines outputs of `scripts/bench-pld.sh`.

Usage: bench_pld_table.py DP_ACCOUNTING.jsonl CERTIFIED_PLD.jsonl

Each dp_accounting workload is paired with our run of the same workload at the default
tolerance; its finest value_discretization_interval is also paired with our run at the
"matched" tolerance. `speed` is dp_accounting's seconds (pessimistic + optimistic: both are
needed for its interval) over ours; `ours <= width` says whether our certified interval is no
wider than dp_accounting's estimate interval; `overlap` whether the two intervals intersect (our
interval contains the true value, dp_accounting's pessimistic end should be above it, so they
should always intersect).
"""

import json
import math
import sys

DEFAULT_TOLERANCE = 1e-3


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def upper(iv):
    return math.inf if iv["upper"] is None else iv["upper"]


def fmt_iv(iv, query):
    lo, hi = iv["lower"], upper(iv)
    if query == "epsilon":
        return f"[{lo:.5f}, {hi:.5f}]"
    return f"[{lo:.5e}, {hi:.5e}]"


def pairs(dp_rows, ours_rows):
    finest = {}
    for d in dp_rows:
        w = d["workload"]
        finest[w] = min(finest.get(w, math.inf), d["value_discretization_interval"])
    for d in dp_rows:
        for o in ours_rows:
            if o["workload"] != d["workload"]:
                continue
            default = math.isclose(o["tolerance"], DEFAULT_TOLERANCE)
            if default or d["value_discretization_interval"] == finest[d["workload"]]:
                yield d, o


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dp_rows, ours_rows = load(sys.argv[1]), load(sys.argv[2])
    head = [
        "workload",
        "query",
        "dp_acc. vdi",
        "dp_accounting [optimistic, pessimistic]",
        "dp s (pess+opt)",
        "dp s (pess)",
        "ours tol",
        "ours certified [lower, upper]",
        "ours s",
        "speed (dp/ours)",
        "ours <= width",
        "overlap",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for d, o in pairs(dp_rows, ours_rows):
        for query, label in [("epsilon", "eps(delta=1e-5)"), ("delta", "delta(eps=1)")]:
            di, oi = d[query], o[query]
            dw = upper(di) - di["lower"]
            ow = upper(oi) - oi["lower"]
            overlap = oi["lower"] <= upper(di) and di["lower"] <= upper(oi)
            cells = [
                d["workload"],
                label,
                f"{d['value_discretization_interval']:g}",
                fmt_iv(di, query),
                f"{d['seconds']:.3f}",
                f"{d['seconds_pessimistic']:.3f}",
                f"{o['tolerance']:.2g}",
                fmt_iv(oi, query),
                f"{o['seconds']:.3f}",
                f"{d['seconds'] / o['seconds']:.3g}x",
                "yes" if ow <= dw else "no",
                "yes" if overlap else "NO",
            ]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
