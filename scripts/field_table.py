"""The field grid's medians beside the thesis samplers' (docs/REPRODUCTION.md, "Beyond the
thesis: the field's samplers").

    python3 scripts/field_table.py [data/results]

Reads `field.csv` (dp-mcmc reproduce field) and `comparison.csv` (dp-mcmc reproduce comparison)
and prints, per experiment and ε of the field grid, the median MMD over the chains of each
sampler (the circle: the median distance of the chain mean from the true mean), the best thesis
sampler, and how many field boxes beat it. Standard library only.
"""

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

FIELD = ["dp-sgld", "dp-sgnht", "dp-fast-mh"]
THESIS = [
    "dp-hmc",
    "dp-penalty",
    "dp-penalty-gwmh",
    "minibatch-penalty",
    "minibatch-penalty-gwmh",
    "dp-barker",
]
SUBSAMPLED = {"minibatch-penalty", "minibatch-penalty-gwmh", "dp-barker"}
ORDER = [
    "easy-2d",
    "tempered-2d",
    "easy-10d",
    "tempered-10d",
    "gauss-30d",
    "hard-2d",
    "hard-gauss-2d",
    "circle",
]


def medians(path, epsilons=None):
    """{(experiment, algorithm, ε): (median metric, chains)}."""
    groups = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            eps = float(row["epsilon"])
            if epsilons is not None and eps not in epsilons:
                continue
            metric = "mean_error" if row["experiment"] == "circle" else "mmd"
            value = row[metric]
            if value in ("", "NaN", "nan"):
                continue
            groups[(row["experiment"], row["algorithm"], eps)].append(float(value))
    return {k: (statistics.median(v), len(v)) for k, v in groups.items()}


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "data/results")
    field = medians(root / "field.csv")
    epsilons = sorted({k[2] for k in field})
    thesis = medians(root / "comparison.csv", set(epsilons))
    eps_head = " | ".join(f"ε={e:g}" for e in epsilons)
    print(f"| experiment | sampler | {eps_head} | chains |")
    print("|---|---|" + "---|" * (len(epsilons) + 1))
    wins = defaultdict(int)
    total = 0
    for exp in ORDER:
        for alg in FIELD + ["best thesis", "best subsampled thesis"]:
            cells, chains = [], 0
            for e in epsilons:
                if alg in FIELD:
                    m, c = field.get((exp, alg, e), (None, 0))
                    label = alg
                else:
                    pool = THESIS if alg == "best thesis" else sorted(SUBSAMPLED)
                    found = [(thesis[(exp, a, e)], a) for a in pool if (exp, a, e) in thesis]
                    if not found:
                        m, c, label = None, 0, alg
                    else:
                        (m, c), who = min(found)
                        label = alg
                        cells.append(f"{m:.2f} ({who})")
                        chains = max(chains, c)
                        continue
                cells.append("–" if m is None else f"{m:.2f}")
                chains = max(chains, c)
            if all(c == "–" for c in cells):
                continue
            print(f"| {exp} | {label} | " + " | ".join(cells) + f" | {chains} |")
        for e in epsilons:
            best = [thesis[(exp, a, e)][0] for a in THESIS if (exp, a, e) in thesis]
            for alg in FIELD:
                if (exp, alg, e) in field and best:
                    total += 1
                    wins[alg] += field[(exp, alg, e)][0] < min(best)
    print()
    for alg in FIELD:
        print(f"{alg}: below the best thesis sampler's median in {wins[alg]} of {total // len(FIELD)} boxes")


if __name__ == "__main__":
    main()
