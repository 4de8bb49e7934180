#!/usr/bin/env python3
"""Google dp_accounting's PLD accountant on the workloads of `cargo bench --bench accounting -- pld`.

Prints one JSON object per workload (one per line). Run it through `scripts/bench-pld.sh`, which
installs the pinned versions (dp-accounting 0.6.0, numpy 2.4.6, scipy 1.17.1 on CPython 3.11)
in a throw-away virtual environment and puts the two sides in one table.

What dp_accounting's "interval" is here: `upper` comes from the pessimistic PLD
(`pessimistic_estimate=True`, its default connect-the-dots discretisation), `lower` from the
optimistic one (`pessimistic_estimate=False`; connect-the-dots has no optimistic mode, so
dp_accounting uses the privacy-buckets rounding down, which we ask for directly with
`use_connect_dots=False`). Neither end is certified: the FFT round-off and the truncated tails are
not accounted for in the optimistic end. Times are wall seconds of build + compose + both queries,
median over the runs; `seconds` is the median of (pessimistic + optimistic) per run.
"""

import argparse
import importlib.metadata
import json
import statistics
import sys
import time

import numpy
import scipy
from dp_accounting.pld import privacy_loss_distribution as pld_lib

DELTA_QUERY = 1e-5  # epsilon(delta = 1e-5)
EPSILON_QUERY = 1.0  # delta(epsilon = 1)


def gaussian(sigma, q, vdi, pessimistic):
    """PLD of one Poisson-subsampled Gaussian (add/remove relation, both directions)."""
    return pld_lib.from_gaussian_mechanism(
        sigma,
        sampling_prob=q,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=vdi,
        use_connect_dots=pessimistic,
    )


def homogeneous(vdi, pessimistic):
    """(a) 10 000 self-compositions of the Poisson-subsampled Gaussian, sigma 1, q 0.01."""
    return gaussian(1.0, 0.01, vdi, pessimistic).self_compose(10_000)


def heterogeneous(vdi, pessimistic):
    """(b) 100 sequential compositions, sigma_i = 0.8 + 0.01 i (i = 0..99), q 0.01."""
    pld = gaussian(0.8, 0.01, vdi, pessimistic)
    for i in range(1, 100):
        pld = pld.compose(gaussian(0.8 + 0.01 * i, 0.01, vdi, pessimistic))
    return pld


WORKLOADS = [
    ("poisson_gaussian_x10000", homogeneous, 1e-4),
    ("poisson_gaussian_x10000", homogeneous, 1e-5),
    ("heterogeneous_x100", heterogeneous, 1e-4),
]


def one_run(build, vdi, pessimistic):
    """(seconds, epsilon(DELTA_QUERY), delta(EPSILON_QUERY)) of one build + compose + queries."""
    t = time.perf_counter()
    pld = build(vdi, pessimistic)
    eps = pld.get_epsilon_for_delta(DELTA_QUERY)
    delta = pld.get_delta_for_epsilon(EPSILON_QUERY)
    return time.perf_counter() - t, eps, delta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per workload (median)")
    parser.add_argument("--only", help="run only workloads whose name contains this")
    args = parser.parse_args()
    versions = {
        "dp_accounting": importlib.metadata.version("dp-accounting"),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "python": sys.version.split()[0],
    }
    for name, build, vdi in WORKLOADS:
        if args.only and args.only not in name:
            continue
        pess, opt = [], []
        for _ in range(args.runs):
            pess.append(one_run(build, vdi, True))
            opt.append(one_run(build, vdi, False))
        # The answers are deterministic; keep the first run's and check the others agree.
        assert all(r[1:] == pess[0][1:] for r in pess) and all(r[1:] == opt[0][1:] for r in opt)
        record = {
            "side": "dp_accounting",
            "workload": name,
            "value_discretization_interval": vdi,
            "epsilon_query_delta": DELTA_QUERY,
            "epsilon": {"lower": opt[0][1], "upper": pess[0][1]},
            "delta_query_epsilon": EPSILON_QUERY,
            "delta": {"lower": opt[0][2], "upper": pess[0][2]},
            "seconds": statistics.median(p[0] + o[0] for p, o in zip(pess, opt)),
            "seconds_pessimistic": statistics.median(p[0] for p in pess),
            "seconds_optimistic": statistics.median(o[0] for o in opt),
            "runs": args.runs,
            "versions": versions,
        }
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
