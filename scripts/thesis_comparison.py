#!/usr/bin/env python3
"""Markdown tables comparing `dp-mcmc reproduce` medians with the thesis' Chapter 6 figures.

    python3 scripts/thesis_comparison.py [data/results]

Reads `comparison-medians.csv`, `clipping-medians.csv` and `baseline.csv` written by
`dp-mcmc reproduce all` and prints the tables of docs/REPRODUCTION.md. The thesis' values are
the medians read off its figures (docs/THESIS-NOTES.md §17, ±0.03); they are targets for a
statistical comparison, not exact values. Standard library only.
"""

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# Fig 6.3 / 6.4 medians at ε = 1 and ε = 6 (None: not readable / NaN box).
THESIS_MMD = {
    ("easy-2d", "dp-hmc"): (0.48, 0.17),
    ("easy-2d", "dp-penalty"): (0.37, 0.12),
    ("easy-2d", "dp-penalty-gwmh"): (0.36, 0.12),
    ("easy-2d", "minibatch-penalty"): (0.66, 0.47),
    ("easy-2d", "minibatch-penalty-gwmh"): (0.68, 0.44),
    ("easy-2d", "dp-barker"): (0.68, 0.43),
    ("tempered-2d", "dp-hmc"): (0.40, 0.14),
    ("tempered-2d", "dp-penalty"): (0.50, 0.28),
    ("tempered-2d", "dp-penalty-gwmh"): (0.47, 0.23),
    ("tempered-2d", "minibatch-penalty"): (0.51, 0.32),
    ("tempered-2d", "minibatch-penalty-gwmh"): (0.50, 0.30),
    ("tempered-2d", "dp-barker"): (0.40, 0.22),
    ("easy-10d", "dp-hmc"): (0.72, 0.38),
    ("easy-10d", "dp-penalty"): (0.66, 0.27),
    ("easy-10d", "dp-penalty-gwmh"): (0.70, 0.27),
    ("easy-10d", "minibatch-penalty"): (0.77, 0.74),
    ("easy-10d", "minibatch-penalty-gwmh"): (None, 0.72),
    ("easy-10d", "dp-barker"): (0.79, 0.65),
    ("tempered-10d", "dp-hmc"): (0.33, 0.20),
    ("tempered-10d", "dp-penalty"): (0.47, 0.32),
    ("tempered-10d", "dp-penalty-gwmh"): (0.53, 0.40),
    ("tempered-10d", "minibatch-penalty"): (0.70, 0.35),
    ("tempered-10d", "minibatch-penalty-gwmh"): (0.58, 0.36),
    ("tempered-10d", "dp-barker"): (0.55, 0.25),
    ("gauss-30d", "dp-hmc"): (0.72, 0.44),
    ("gauss-30d", "dp-penalty"): (0.73, 0.40),
    ("gauss-30d", "dp-penalty-gwmh"): (0.67, 0.22),
    ("hard-2d", "dp-hmc"): ("≈0.50–0.62 flat",),
    ("hard-2d", "dp-penalty"): ("≈0.50–0.62 flat",),
    ("hard-2d", "dp-penalty-gwmh"): ("≈0.50–0.62 flat",),
    ("hard-gauss-2d", "dp-hmc"): (0.69, 0.42),
    ("hard-gauss-2d", "dp-penalty"): ("≈0.72 flat",),
    ("hard-gauss-2d", "dp-penalty-gwmh"): (0.73, 0.60),
}
# Figures whose DP HMC boxes come from the March (gradient re-use) variant.
MARCH = {"gauss-30d", "hard-2d", "hard-gauss-2d", "circle"}
THESIS_BARKER_CLIP = {"easy-2d": 0.37, "tempered-2d": 0.72, "easy-10d": 0.91, "tempered-10d": 0.68}
THESIS_GRAD_CLIP = {
    "easy-2d": "0.17–0.20",
    "tempered-2d": "0.33–0.40",
    "easy-10d": "0.39",
    "tempered-10d": "0.40–0.45",
    "gauss-30d": "0.155",
    "hard-gauss-2d": "0.36",
    "hard-2d": "0.03–0.70 (median ≈ 0.5)",
    "circle": "0.05",
}
THESIS_CIRCLE = {"dp-hmc": (1.5, 0.88, 0.81), "dp-penalty": (1.4, 0.68, 1.0)}
EPS = ["1", "2", "3", "4", "5", "6"]


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    return None if x in ("", None) else float(x)


def fmt(x, digits=2):
    return "–" if x is None else f"{x:.{digits}f}"


def eps_key(e):
    return str(float(e)).rstrip("0").rstrip(".")


def main(out):
    out = Path(out)
    comp = read(out / "comparison-medians.csv")
    by = defaultdict(dict)
    for r in comp:
        by[(r["experiment"], r["algorithm"])][eps_key(r["epsilon"])] = r

    print("### Baselines (posterior vs posterior MMD, median over seeds)\n")
    base = defaultdict(list)
    for r in read(out / "baseline.csv"):
        if num(r["mmd"]) is not None:
            base[r["experiment"]].append(float(r["mmd"]))
    print("| experiment | median | seeds |\n|---|---|---|")
    for e, v in sorted(base.items()):
        print(f"| {e} | {statistics.median(v):.3f} | {len(v)} |")

    print("\n### Figures 6.3 / 6.4: MMD medians\n")
    print("| experiment | algorithm | thesis ε=1→6 | ours ε=1→6 | ours ε = 1 … 6 | chains |")
    print("|---|---|---|---|---|---|")
    for (e, a), thesis in THESIS_MMD.items():
        rows = by.get((e, a), {})
        vals = [num(rows[k]["mmd"]) if k in rows else None for k in EPS]
        chains = sorted({rows[k]["chains"] for k in EPS if k in rows})
        t = thesis[0] if len(thesis) == 1 else f"{fmt(thesis[0])}→{fmt(thesis[1])}"
        if a == "dp-hmc" and e in MARCH:
            t += " (March)"
        print(
            f"| {e} | {a} | {t} | {fmt(vals[0])}→{fmt(vals[-1])} | "
            f"{' '.join(fmt(v) for v in vals)} | {'/'.join(chains)} |"
        )

    print("\n### Figure 6.5: DP Barker clip fractions (median over ε of the box medians)\n")
    print("| experiment | thesis | ours |\n|---|---|---|")
    for e, t in THESIS_BARKER_CLIP.items():
        rows = by.get((e, "dp-barker"), {})
        v = [num(r["clip_fraction"]) for r in rows.values() if num(r["clip_fraction"]) is not None]
        print(f"| {e} | {t:.2f} | {fmt(statistics.median(v)) if v else '–'} |")
    print("\n| algorithm | ours: range of box medians over the experiments and ε |\n|---|---|")
    for a in ["minibatch-penalty", "minibatch-penalty-gwmh", "dp-penalty", "dp-penalty-gwmh", "dp-hmc"]:
        v = [
            num(r["clip_fraction"])
            for (e, aa), rows in by.items()
            if aa == a and e != "circle"
            for r in rows.values()
            if num(r["clip_fraction"]) is not None
        ]
        if v:
            print(f"| {a} | {min(v):.3f}–{max(v):.3f} |")

    print("\n### Figure 6.7: circle (mean error medians at ε = 0.5 / 0.75 / 1)\n")
    print("| algorithm | thesis | ours | clip fraction | chains |\n|---|---|---|---|---|")
    for a in ["dp-hmc", "dp-penalty", "dp-penalty-gwmh"]:
        rows = by.get(("circle", a), {})
        me = [num(rows[k]["mean_error"]) if k in rows else None for k in ["0.5", "0.75", "1"]]
        cf = [num(rows[k]["clip_fraction"]) for k in ["0.5", "0.75", "1"] if k in rows]
        chains = sorted({rows[k]["chains"] for k in ["0.5", "0.75", "1"] if k in rows})
        t = " / ".join(fmt(x) for x in THESIS_CIRCLE[a]) if a in THESIS_CIRCLE else "–"
        print(
            f"| {a} | {t} | {' / '.join(fmt(x) for x in me)} | "
            f"{fmt(min(cf), 4) if cf else '–'}–{fmt(max(cf), 4) if cf else '–'} | {'/'.join(chains)} |"
        )

    print("\n### Figure 6.8: DP HMC gradient clip fractions (range of box medians over ε)\n")
    print("| experiment | thesis | ours |\n|---|---|---|")
    for e, t in THESIS_GRAD_CLIP.items():
        rows = by.get((e, "dp-hmc"), {})
        v = [num(r["grad_clip_fraction"]) for r in rows.values() if num(r["grad_clip_fraction"]) is not None]
        print(f"| {e} | {t} | {fmt(min(v), 3)}–{fmt(max(v), 3) if v else '–'} |" if v else f"| {e} | {t} | – |")

    clip_path = out / "clipping-medians.csv"
    if clip_path.exists():
        print("\n### Figure 6.2: clipping study (medians per clip bound)\n")
        print("| d | algorithm | bound | MMD | clip fraction | chains |\n|---|---|---|---|---|---|")
        rows = read(clip_path)
        rows.sort(key=lambda r: (r["experiment"], r["algorithm"], float(r["clip_bound"])))
        for r in rows:
            d = "2" if r["experiment"].endswith("2d") else "10"
            print(
                f"| {d} | {r['algorithm']} | {float(r['clip_bound']):g} | {fmt(num(r['mmd']), 3)} | "
                f"{fmt(num(r['clip_fraction']), 3)} | {r['chains']} |"
            )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/results")
