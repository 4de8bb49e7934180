#!/usr/bin/env python3
"""Independent check of the Beta-Binomial crossover of the Hellinger mechanism (paper Figure 1).

    python3 scripts/hellinger_authors_code.py

Bun, Gaboardi, Farina, Liu, *Tailoring Differentially Private Bayesian Inference to Distance
Between Distributions* (TPDP 2018) report that the Laplace baseline wins below n ≈ 650. Their
figure was computed by their Python code (public repository JiawenUB/DP-Bayesian-Inference,
`dp_bayesian_inference_model_with_dirichlet_prior_epsilon_study.py`, 26 July 2018), which
differs from the paper's text in three places:

* "Hellinger distance": `gen_betaln(v) = Σ lnΓ(v_i) / ln(Σ v)` where ln B(v) subtracts
  lnΓ(Σ v); for posteriors of common total T this is sqrt(1 − exp(la / ln T)) instead of
  sqrt(1 − exp(la)), la the log-affinity. Used as utility, in the sensitivities, and as error.
* smooth sensitivity: max over all data sets of LS · exp(−β · ℓ1 histogram distance) with
  β = ln(1 − ε / (2 ln(δ / (2n)))) (ours: rows changed = ℓ1 / 2, and n + 1 for n);
* Laplace baseline: Δα + ⌊Lap(2/ε)⌋ clamped to [0, n] (ours: continuous noise, clamped).

This script re-implements both versions from those definitions (standard library only, no
code of theirs) and prints the crossover of the exact expected errors for each combination;
the crate's `measure_authors_code` test prints the same table. Expected: about 1830 with the
Hellinger distance (either sensitivity), about 650 with all three of their departures.
Prior Beta(1, 1), 10 % ones (round(0.1 n)), ε = 0.8, δ = 1e-8, n = 300..2400 step 50.
Takes about ten seconds.
"""

import math

EPS, DELTA = 0.8, 1e-8
A, B = 1.0, 1.0
SCALE = 2.0 / EPS


def log_affinity(c, x, n):
    """ln ∫ sqrt(p q) of Beta(A + c, B + n − c) and Beta(A + x, B + n − x)."""
    lg = math.lgamma
    return (lg(A + 0.5 * (c + x)) + lg(B + n - 0.5 * (c + x))
            - 0.5 * (lg(A + c) + lg(B + n - c) + lg(A + x) + lg(B + n - x)))


def measure(la, n, theirs):
    la = min(la, 0.0)
    if theirs:
        la /= math.log(A + B + n)
    return math.sqrt(max(-math.expm1(la), 0.0))


def local_sensitivities(n, theirs):
    """LS(j) for the data set with j ones: max distance to a neighbour's posterior."""
    out = []
    for j in range(n + 1):
        best = 0.0
        for k in (j - 1, j + 1):
            if 0 <= k <= n:
                best = max(best, measure(log_affinity(j, k, n), n, theirs))
        out.append(best)
    return out


def smooth(n, c, theirs_distance, theirs_s):
    ls = local_sensitivities(n, theirs_distance)
    if theirs_s:
        g, per_row = math.log(1 - EPS / (2 * math.log(DELTA / (2.0 * n)))), 2.0
    else:
        g, per_row = math.log(1 - EPS / (2 * math.log(DELTA / (2.0 * (n + 1))))), 1.0
    return max(ls[j] * math.exp(-g * per_row * abs(j - c)) for j in range(n + 1))


def exponential(n, c, theirs_distance, theirs_s, theirs_error):
    s = smooth(n, c, theirs_distance, theirs_s)
    num = den = 0.0
    for r in range(n + 1):
        la = log_affinity(c, r, n)
        w = math.exp(-EPS * measure(la, n, theirs_distance) / (2 * s))
        num += w * measure(la, n, theirs_error)
        den += w
    return num / den


def cdf(z):
    return 0.5 * math.exp(z / SCALE) if z < 0 else 1 - 0.5 * math.exp(-z / SCALE)


def laplace(n, c, theirs_laplace, theirs_error):
    h = lambda x: measure(log_affinity(c, x, n), n, theirs_error)
    if theirs_laplace:
        e = cdf(1.0 - c) * h(0.0) + (1.0 - cdf(n - c)) * h(float(n))
        for x in range(1, n):
            e += (cdf(x - c + 1.0) - cdf(x - c)) * h(float(x))
        return e
    # Continuous: atoms at 0 and n, midpoint rule on a fine grid within 40 scales.
    e = cdf(-c) * h(0.0) + (1.0 - cdf(n - c)) * h(float(n))
    lo, hi = max(-c, -40 * SCALE), min(n - c, 40 * SCALE)
    m = 8000
    step = (hi - lo) / m
    for i in range(m):
        z0 = lo + i * step
        e += (cdf(z0 + step) - cdf(z0)) * h(c + z0 + 0.5 * step)
    return e


def crossover(xs, d):
    for i in range(1, len(xs)):
        if d[i - 1] >= 0 > d[i]:
            return xs[i - 1] + (xs[i] - xs[i - 1]) * d[i - 1] / (d[i - 1] - d[i])
    return None


def main():
    sizes = list(range(300, 2401, 50))
    rows = [
        ("Hellinger, our S, our Laplace (the paper as written)", False, False, False),
        ("Hellinger, their S", False, True, False),
        ("Hellinger, their S, their Laplace", False, True, True),
        ("gen_betaln, our S", True, False, False),
        ("gen_betaln, their S", True, True, False),
        ("gen_betaln, their S, their Laplace (their code)", True, True, True),
    ]
    for name, dist, s, lap in rows:
        d = []
        for n in sizes:
            c = round(0.1 * n)
            d.append(exponential(n, c, dist, s, dist) - laplace(n, c, lap, dist))
        x = crossover(sizes, d)
        print(f"{name:55s} crossover n ≈ {x:.0f}" if x else f"{name:55s} no crossover")


if __name__ == "__main__":
    main()
