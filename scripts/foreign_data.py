"""Benchmark of `dp-mcmc fit --method noise-aware` on public tables the crate does not ship.

    OUT/venv/bin/python scripts/foreign_data.py --out OUT --bin DP_MCMC --wheel ISLP.whl
        [--quick] [--runs R]

(normally started by `bash scripts/foreign-data.sh`, which makes the venv and fetches the
wheel). Run by hand, never in `cargo test` or CI.

The tables come from the ISLP package's wheel (Default, Bikeshare twice: with ISLP's four
weather levels and with heavy rain/snow merged into light rain/snow, and Wage; `TABLES` below,
one dict per table: add a table there). Each is pre-processed into a numeric CSV under OUT/tables
(Yes/No -> 1/0, categoricals -> one-hot indicators with a reference level dropped) with bounds
declared from the documentation and common sense, never from the data's min/max.

For every table and ε (1 and 8; --quick: 8 only, 2 runs) the CLI is run R times without a seed
(secure noise, so the runs differ: intended) and each run is compared with

* the non-private posterior of the same model and prior on the same (clamped) rows, computed
  here in numpy/scipy, independently of the crate: the MAP by Newton's method and the Laplace
  covariance (inverse of the observed information plus the prior precision), checked by an
  importance-sampling correction (multivariate t proposal, fixed seed);
* the one-release floor: the whole (ε, δ) spent on one Gaussian release of the score at the
  non-private mode, shaped by A = H^(-1/2), with the exact L2 sensitivity (diameter) over the
  rows the declared bounds allow (`one_release_floor`).

Writes OUT/table.md (one markdown table, rows = table × ε) and OUT/results.json (every run's
numbers, the references and the floors); progress goes to stderr. Everything but the DP runs
themselves is deterministic.
"""

import argparse
import csv
import datetime
import io
import itertools
import json
import math
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats

DELTA = 1e-6
EPSILONS = (1.0, 8.0)
QUICK_EPSILONS = (8.0,)
RUNS = 5
QUICK_RUNS = 2
# The crate's default prior when `fit` does not report one: N(0, 10) on every parameter.
DEFAULT_PRIOR_VAR = 10.0
# Points per polytope edge in the sensitivity search (vertices included).
EDGE_POINTS = 64
# The crate's own sampling targets (docs/NOISE-AWARE.md): R-hat ≤ 1.01, bulk ESS ≥ 400.
RHAT_TARGET = 1.01
ESS_TARGET = 400
# Importance-sampling check of the Laplace reference: draws, t degrees of freedom, seed.
IS_DRAWS = 4000
IS_DF = 5
IS_SEED = 20_240_601


# ---------------------------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------------------------


def yes_no(value):
    """1.0 for "Yes", 0.0 for "No"; anything else is an error (a changed spelling)."""
    if value not in ("Yes", "No"):
        raise ValueError(f"expected Yes or No, got {value!r}")
    return 1.0 if value == "Yes" else 0.0


def indicators(value, levels):
    """One-hot indicators of `value` for `levels` (a dict column name -> the raw levels it
    stands for); a value in none of them is the reference level (all zero). Unknown levels
    are caught before, by `check_level`."""
    return {col: 1.0 if value in raw else 0.0 for col, raw in levels.items()}


def check_level(value, allowed, column):
    """Raises if `value` is not one of the documented `allowed` levels of `column`."""
    if value not in allowed:
        raise ValueError(f"{column}: unexpected level {value!r} (documented: {sorted(allowed)})")


def default_row(raw):
    """Default: the response `default` (Yes = 1) and student (Yes = 1), balance, income."""
    return {
        "default": yes_no(raw["default"]),
        "student": yes_no(raw["student"]),
        "balance": float(raw["balance"]),
        "income": float(raw["income"]),
    }


BIKE_WEATHER = {
    "weather_cloudy": {"cloudy/misty"},
    "weather_light": {"light rain/snow"},
    "weather_heavy": {"heavy rain/snow"},
}  # reference: "clear"
# The same with heavy rain/snow merged into light rain/snow (a public coarsening: heavy
# rain or snow is a rare hour in any city's weather record, so its own indicator would carry
# almost no rows; in this table it carries one, and with it the information releases are
# indefinite and the one-release floor is two orders of magnitude wide).
BIKE_WEATHER_MERGED = {
    "weather_cloudy": {"cloudy/misty"},
    "weather_rain": {"light rain/snow", "heavy rain/snow"},
}
BIKE_WEATHER_LEVELS = {"clear", "cloudy/misty", "light rain/snow", "heavy rain/snow"}
BIKE_HOURS = {
    "hr_morning": {str(h) for h in range(7, 10)},  # morning peak 7-9
    "hr_day": {str(h) for h in range(10, 16)},  # day 10-15
    "hr_evening": {str(h) for h in range(16, 20)},  # evening peak 16-19
    "hr_late": {str(h) for h in range(20, 24)},  # late 20-23
}  # reference: night 0-6


def bikeshare_rows(weather):
    """The row function of Bikeshare with the weather indicators `weather` (a dict like
    BIKE_WEATHER, reference clear): the response `bikers` (a count), workingday, temp, hum,
    windspeed, the weather indicators and the hour of day coarsened into periods (BIKE_HOURS,
    reference night 0-6)."""

    def row_of(raw):
        check_level(raw["weathersit"], BIKE_WEATHER_LEVELS, "weathersit")
        check_level(raw["hr"], {str(h) for h in range(24)}, "hr")
        row = {
            "bikers": float(raw["bikers"]),
            "workingday": float(raw["workingday"]),
            "temp": float(raw["temp"]),
            "hum": float(raw["hum"]),
            "windspeed": float(raw["windspeed"]),
        }
        row.update(indicators(raw["weathersit"], weather))
        row.update(indicators(raw["hr"], BIKE_HOURS))
        return row

    return row_of


def bikeshare_table(name, weather):
    """The Bikeshare table (Poisson) with the weather indicators `weather`."""
    return {
        "name": name,
        "source": "Bikeshare.csv",
        "model": "poisson",
        "response": "bikers",
        # Hourly rentals of one city's scheme: a declared cap of 1000 per hour (the count's
        # public range; larger counts would be clamped, --clamp).
        "response_bounds": (0, 1000),
        "features": [
            ("workingday", 0, 1),  # an indicator
            # "normalized temperature in Celsius, (t - t_min)/(t_max - t_min), t_min = -8,
            # t_max = +39": on [0, 1] by construction.
            ("temp", 0, 1),
            ("hum", 0, 1),  # "normalized humidity, divided by 100 (max)": [0, 1]
            ("windspeed", 0, 1),  # "normalized wind speed, divided by 67 (max)": [0, 1]
        ]
        + [(c, 0, 1) for c in weather]
        + [(c, 0, 1) for c in BIKE_HOURS],
        "one_hot": [list(weather), list(BIKE_HOURS)],
        "binary": ["workingday"],
        "clamp": True,
        "row": bikeshare_rows(weather),
    }


WAGE_EDUCATION = {
    "edu_hs": {"2. HS Grad"},
    "edu_some_college": {"3. Some College"},
    "edu_college": {"4. College Grad"},
    "edu_advanced": {"5. Advanced Degree"},
}  # reference: "1. < HS Grad"


def wage_row(raw):
    """Wage: the response `wage` (thousands of dollars), age, year (calendar years, not
    re-based), education as indicators (reference < HS Grad), jobclass (Information = 1) and
    health (>= Very Good = 1)."""
    check_level(
        raw["education"], {"1. < HS Grad"} | set().union(*WAGE_EDUCATION.values()), "education"
    )
    check_level(raw["jobclass"], {"1. Industrial", "2. Information"}, "jobclass")
    check_level(raw["health"], {"1. <=Good", "2. >=Very Good"}, "health")
    row = {
        "wage": float(raw["wage"]),
        "age": float(raw["age"]),
        "year": float(raw["year"]),
    }
    row.update(indicators(raw["education"], WAGE_EDUCATION))
    row["jobclass"] = 1.0 if raw["jobclass"] == "2. Information" else 0.0
    row["health"] = 1.0 if raw["health"] == "2. >=Very Good" else 0.0
    return row


# One dict per table. `features`: (column, lo, hi) with the declared bounds (passed to
# --bounds; every bound is from the ISLR2/ISLP documentation or common sense, never from the
# data); `response_bounds`: the response's declared range (None for a 0/1 response);
# `one_hot`: groups of indicator columns (at most one set per row), passed as --one-hot;
# `binary`: indicator columns outside any group (values 0 or 1), passed as --binary;
# `clamp`: pass --clamp (values outside their bounds clamped; the reference clamps the same).
TABLES = [
    {
        "name": "default",
        "source": "Default.csv",
        "model": "logistic",
        "response": "default",
        "response_bounds": None,
        "features": [
            ("student", 0, 1),  # an indicator
            # "the average balance that the customer has remaining on their credit card after
            # making their monthly payment" (dollars): a balance cannot be negative; 3000 is a
            # declared credit limit of a consumer card, not the data's maximum.
            ("balance", 0, 3000),
            # "income of customer" (dollars per year): non-negative; 80 000 a declared cap
            # for the customer base of a simulated consumer-credit table.
            ("income", 0, 80_000),
        ],
        "one_hot": [],
        "binary": ["student"],
        "clamp": False,
        "row": default_row,
    },
    bikeshare_table("bikeshare", BIKE_WEATHER),
    # heavy rain/snow merged into light rain/snow (BIKE_WEATHER_MERGED says why)
    bikeshare_table("bikeshare-rain", BIKE_WEATHER_MERGED),
    {
        "name": "wage",
        "source": "Wage.csv",
        "model": "linear",
        "response": "wage",
        # "workers raw wage", in thousands of dollars a year: non-negative; 350 (i.e.
        # $350 000) a declared top for a survey of male workers' wages.
        "response_bounds": (0, 350),
        "features": [
            ("age", 18, 80),  # "age of worker": adults in the labour force, 18 to 80
            # "year that wage information was recorded": the survey's years 2003-2009
            # (calendar years, deliberately not re-based: the crate must be unit-invariant)
            ("year", 2003, 2009),
            ("edu_hs", 0, 1),
            ("edu_some_college", 0, 1),
            ("edu_college", 0, 1),
            ("edu_advanced", 0, 1),
            ("jobclass", 0, 1),  # an indicator (Information = 1)
            ("health", 0, 1),  # an indicator (>= Very Good = 1)
        ],
        "one_hot": [list(WAGE_EDUCATION)],
        "binary": ["jobclass", "health"],
        "clamp": False,
        "row": wage_row,
    },
]


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def log(message):
    """Progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def extract_islp(wheel, dest, sources):
    """Extracts ISLP/data/<source> for every source from the wheel (a zip) into `dest`,
    skipping files already there. Returns {source: path}."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = {}
    with zipfile.ZipFile(wheel) as z:
        for source in sources:
            path = dest / source
            if not path.exists():
                path.write_bytes(z.read(f"ISLP/data/{source}"))
            paths[source] = path
    return paths


def prepare_table(table, raw_csv, out_dir):
    """Pre-processes one ISLP CSV with the table's `row` function into a numeric CSV
    (response first, then the features in order) under `out_dir`, and returns the arrays the
    reference uses: X (n × k features, clamped to their bounds), y (clamped to the response's
    bounds where declared), and the CSV path. Clamping is what the crate does with --clamp;
    without --clamp a value outside its bounds makes the crate refuse the fit, which the run
    then records."""
    with open(raw_csv, newline="") as f:
        rows = [table["row"](r) for r in csv.DictReader(f)]
    cols = [table["response"]] + [c for c, _, _ in table["features"]]
    path = out_dir / f"{table['name']}.csv"
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([repr(r[c]) if r[c] != int(r[c]) else int(r[c]) for c in cols])
    y = np.array([r[table["response"]] for r in rows])
    X = np.array([[r[c] for c, _, _ in table["features"]] for r in rows])
    lo = np.array([b for _, b, _ in table["features"]], dtype=float)
    hi = np.array([b for _, _, b in table["features"]], dtype=float)
    outside = int(((X < lo) | (X > hi)).sum())
    X = np.clip(X, lo, hi)
    if table["response_bounds"] is not None:
        ylo, yhi = table["response_bounds"]
        outside_y = int(((y < ylo) | (y > yhi)).sum())
        y = np.clip(y, ylo, yhi)
    else:
        outside_y = 0
    if outside or outside_y:
        how = "clamped (--clamp)" if table["clamp"] else "outside: the crate will refuse"
        log(f"{table['name']}: {outside} covariate and {outside_y} response values {how}")
    for group in table["one_hot"]:
        idx = [cols.index(c) - 1 for c in group]
        if ((X[:, idx] != 0).sum(axis=1) > 1).any():
            raise ValueError(f"{table['name']}: a row breaks the one-hot group {group}")
    return X, y, path


# ---------------------------------------------------------------------------------------------
# Models: log-likelihood, score, information (V = [1, X], the intercept first)
# ---------------------------------------------------------------------------------------------


def design(X):
    """The design matrix with the intercept column first."""
    return np.column_stack([np.ones(len(X)), X])


def param_names(table):
    """The crate's parameter names: intercept, the features, log_sigma for a linear model."""
    names = ["intercept"] + [c for c, _, _ in table["features"]]
    return names + (["log_sigma"] if table["model"] == "linear" else [])


def loglik(model, V, y, theta):
    """Log-likelihood (up to a constant) at each row of `theta` (B × p): a vector of B. The
    linear model's parameters are (β, log σ) with y ~ N(Vβ, σ²)."""
    theta = np.atleast_2d(theta)
    out = np.empty(len(theta))
    for start in range(0, len(theta), 256):
        t = theta[start : start + 256]
        if model == "linear":
            beta, s = t[:, :-1], t[:, -1]
            resid = y[:, None] - V @ beta.T
            out[start : start + 256] = -len(y) * s - 0.5 * (resid**2).sum(0) * np.exp(-2 * s)
            continue
        eta = V @ t.T
        if model == "logistic":
            out[start : start + 256] = (y[:, None] * eta - np.logaddexp(0.0, eta)).sum(0)
        elif model == "poisson":
            out[start : start + 256] = (y[:, None] * eta - np.exp(eta)).sum(0)
        else:
            raise ValueError(f"unknown model {model}")
    return out


def score_information(model, V, y, theta, expected=False):
    """Score and observed information (negative Hessian) of the log-likelihood at `theta`;
    with `expected`, the Fisher information instead (they differ for the linear model only,
    whose observed information is indefinite far from the mode)."""
    if model == "linear":
        beta, s = theta[:-1], theta[-1]
        w = math.exp(-2 * s)
        resid = y - V @ beta
        g = np.append(V.T @ resid * w, -len(y) + (resid**2).sum() * w)
        info = np.zeros((len(theta), len(theta)))
        info[:-1, :-1] = V.T @ V * w
        if expected:
            info[-1, -1] = 2 * len(y)
        else:
            info[:-1, -1] = info[-1, :-1] = 2 * V.T @ resid * w
            info[-1, -1] = 2 * (resid**2).sum() * w
        return g, info
    eta = V @ theta
    if model == "logistic":
        mu = scipy.special.expit(eta)
        weight = mu * (1 - mu)
    else:
        mu = np.exp(eta)
        weight = mu
    return V.T @ (y - mu), (V * weight[:, None]).T @ V


def spd_inverse(M):
    """Inverse of a symmetric positive definite matrix, equilibrated by its diagonal first
    (the tables' covariates differ in scale by up to 10^5)."""
    d = 1.0 / np.sqrt(np.diag(M))
    inv = scipy.linalg.cho_solve(scipy.linalg.cho_factor(M * d[:, None] * d), np.eye(len(M)))
    inv = inv * d[:, None] * d
    return (inv + inv.T) / 2


def prior_log_density(prior, theta):
    """The log prior density (up to a constant) at the rows of `theta` (or one point): the
    Gaussian N(mean, cov), or with `df` = ν independent Student-t distributions of the
    internal coordinates z = W(θ − mean) with scales √`scale2` (fit's `coordinates`)."""
    diff = np.atleast_2d(theta) - prior["mean"]
    if prior["df"] is None:
        out = -0.5 * np.einsum("bi,ij,bj->b", diff, prior["precision"], diff)
    else:
        nu = prior["df"]
        z2 = (diff @ prior["W"].T) ** 2 / prior["scale2"]
        out = -0.5 * (nu + 1) * np.log1p(z2 / nu).sum(1)
    return out if np.ndim(theta) == 2 else float(out[0])


def prior_gradient_curvature(prior, theta, exact):
    """The gradient of the log prior density at `theta` and minus its Hessian (`exact`), or,
    for Newton's steps, a positive definite curvature (a Student-t prior's scale Gaussian)."""
    diff = theta - prior["mean"]
    if prior["df"] is None:
        return -prior["precision"] @ diff, prior["precision"]
    nu, W, s2 = prior["df"], prior["W"], prior["scale2"]
    z = W @ diff
    grad = W.T @ (-(nu + 1) * z / (nu * s2 + z**2))
    if not exact:
        return grad, prior["precision"]
    curv = (nu + 1) * (nu * s2 - z**2) / (nu * s2 + z**2) ** 2
    return grad, W.T @ np.diag(curv) @ W


def neg_log_post(model, V, y, prior, theta):
    """Negative log posterior (up to a constant) at one point."""
    return -loglik(model, V, y, theta)[0] - prior_log_density(prior, theta)


def newton_map(model, V, y, prior, start, max_iter=200):
    """The posterior mode by damped Newton's method (Fisher scoring for the linear model;
    backtracking on the negative log posterior), stopped when the Newton decrement is below
    1e-12. Returns (mode, iterations)."""
    theta = np.array(start, dtype=float)
    f = neg_log_post(model, V, y, prior, theta)
    for it in range(1, max_iter + 1):
        g, info = score_information(model, V, y, theta, expected=True)
        pg, pc = prior_gradient_curvature(prior, theta, exact=False)
        grad = -g - pg
        step = -spd_inverse(info + pc) @ grad
        decrement = -grad @ step
        if decrement < 1e-12:
            return theta, it
        t = 1.0
        while True:
            cand = theta + t * step
            fc = neg_log_post(model, V, y, prior, cand)
            if np.isfinite(fc) and fc <= f - 1e-4 * t * decrement:
                break
            t /= 2
            if t < 1e-12:
                raise RuntimeError(f"{model}: Newton's line search failed at iteration {it}")
        theta, f = cand, fc
    raise RuntimeError(f"{model}: Newton's method did not converge in {max_iter} iterations")


def importance_check(model, V, y, prior, mode, cov):
    """Importance-sampling correction of the Laplace approximation N(mode, cov): draws from a
    multivariate t (IS_DF degrees of freedom) with the same centre and scale, weighted by the
    exact posterior. Returns the IS means and sds, the weights' effective sample size, and the
    largest |IS mean − Laplace mean| / Laplace sd and the IS/Laplace sd ratios' range. The t is
    drawn in the coordinates z = L⁻¹(θ − mode) (cov = LLᵀ; the sds span 10⁻⁶ to 1, too wide
    for a generic eigenvalue cut-off); constants cancel in the self-normalised weights."""
    rng = np.random.default_rng(IS_SEED)
    p = len(mode)
    L = np.linalg.cholesky(cov)
    z = rng.standard_normal((IS_DRAWS, p)) / np.sqrt(rng.chisquare(IS_DF, IS_DRAWS) / IS_DF)[:, None]
    draws = mode + z @ L.T
    logp = loglik(model, V, y, draws) + prior_log_density(prior, draws)
    logw = logp + 0.5 * (IS_DF + p) * np.log1p((z**2).sum(1) / IS_DF)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    mean = w @ draws
    sd = np.sqrt(w @ (draws - mean) ** 2)
    lsd = np.sqrt(np.diag(cov))
    return {
        "mean": mean.tolist(),
        "sd": sd.tolist(),
        "ess": float(1.0 / (w**2).sum()),
        "max_abs_dmean_over_sd": float(np.max(np.abs(mean - mode) / lsd)),
        "sd_ratio_range": [float((sd / lsd).min()), float((sd / lsd).max())],
    }


def nonprivate_reference(table, X, y, prior):
    """The non-private posterior of the table's model under `prior` (dict with mean, cov,
    precision) on the clamped rows: the MAP by Newton's method, the Laplace covariance
    (observed information plus prior precision, inverted) and an importance-sampling check."""
    model = table["model"]
    V = design(X)
    start = np.zeros(V.shape[1] + (model == "linear"))
    if model == "poisson":
        start[0] = math.log(max(y.mean(), 1e-3))
    if model == "linear":
        start[-1] = math.log(y.std())
    mode, iterations = newton_map(model, V, y, prior, start)
    _, info = score_information(model, V, y, mode)
    cov = spd_inverse(info + prior_gradient_curvature(prior, mode, exact=True)[1])
    check = importance_check(model, V, y, prior, mode, cov)
    return {
        "mode": mode,
        "information": info,
        "cov": cov,
        "mean": mode,  # the Laplace mean is the mode
        "sd": np.sqrt(np.diag(cov)),
        "newton_iterations": iterations,
        "importance_check": check,
    }


def make_prior(fit_json, names):
    """The prior `fit` reports (`prior`: {"mean": [...], "cov": [[...]]} on the model's own
    scale, in the order of `parameters`; an `sd` instead of `cov` is accepted too) or, if it
    reports none, the crate's old default N(0, 10) on every parameter. Returns (prior dict,
    where it came from)."""
    p = len(names)
    reported = (fit_json or {}).get("prior")
    if reported is None:
        cov = np.eye(p) * DEFAULT_PRIOR_VAR
        mean = np.zeros(p)
        source = f"default N(0, {DEFAULT_PRIOR_VAR:g}) (fit reports no prior)"
    else:
        if list(fit_json.get("parameters", names)) != names:
            raise ValueError(f"fit's parameters {fit_json.get('parameters')} are not {names}")
        mean = np.asarray(reported["mean"], dtype=float).reshape(p)
        if "cov" in reported:
            cov = np.asarray(reported["cov"], dtype=float).reshape(p, p)
        elif "sd" in reported:
            cov = np.diag(np.broadcast_to(np.asarray(reported["sd"], dtype=float) ** 2, (p,)))
        else:
            raise ValueError(f"fit's prior has neither cov nor sd: {reported}")
        source = "reported by fit (`prior`)"
    prior = {"mean": mean, "cov": cov, "precision": spd_inverse(cov), "source": source, "df": None}
    df = (reported or {}).get("df")
    if df is not None:
        # independent Student-t in the internal coordinates z = W(θ − mean), W = T⁻¹ with T
        # fit's map to the model's units (`coordinates`; src/noise_aware/coordinates.rs)
        W = np.linalg.inv(to_model_map(fit_json["coordinates"], p))
        prior.update(df=float(df), W=W, scale2=np.diag(W @ cov @ W.T).copy())
        prior["source"] += f", Student-t with {df:g} df"
    return prior


def to_model_map(coords, p):
    """The linear part T of fit's map from the internal coordinates to the model's units:
    T_ii = c/scale_i, and with an intercept k, T_ki = −c·centre_i/(scale_i·scale_k) (c the
    response's scale; a linear model's log σ row is 1)."""
    centre, scale = coords["centre"], coords["scale"]
    c = coords.get("response_scale", 1.0)
    T = np.zeros((p, p))
    for i in range(len(centre)):
        T[i, i] = c / scale[i]
    k = coords.get("intercept")
    if k is not None:
        for i in range(len(centre)):
            if i != k:
                T[k, i] = -c * centre[i] / (scale[i] * scale[k])
    if coords.get("log_sigma"):
        T[len(centre), len(centre)] = 1.0
    return T


# ---------------------------------------------------------------------------------------------
# The one-release floor
# ---------------------------------------------------------------------------------------------


def gdp_delta(mu, eps):
    """δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    norm = scipy.stats.norm
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def gdp_mu(eps, delta):
    """The largest μ with δ(ε; μ) ≤ δ, by bisection (δ(ε; μ) increases with μ)."""
    lo, hi = 1e-6, 1.0
    while gdp_delta(hi, eps) <= delta:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gdp_delta(mid, eps) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def polytope_edge_points(table, m=EDGE_POINTS):
    """Points of the allowed rows' polytope: all vertices and `m` points (ends included) along
    every edge, as design rows v = (1, x). The factors are the free covariates (state lo or hi)
    and the one-hot groups (state: none set, or one indicator at its upper bound); an edge
    joins two vertices that differ in one factor's state. Returns an (N × (k + 1)) array
    without duplicates."""
    feats = [c for c, _, _ in table["features"]]
    bounds = {c: (lo, hi) for c, lo, hi in table["features"]}
    grouped = {c for g in table["one_hot"] for c in g}
    factors = []  # per factor, its states as partial rows {column: value}
    for c in feats:
        if c not in grouped:
            factors.append([{c: bounds[c][0]}, {c: bounds[c][1]}])
    for g in table["one_hot"]:
        states = [{c: 0.0 for c in g}]
        for c in g:
            states.append({o: (bounds[c][1] if o == c else 0.0) for o in g})
        factors.append(states)

    def row(states):
        x = {}
        for s in states:
            x.update(s)
        return np.array([1.0] + [x[c] for c in feats])

    t = np.linspace(0.0, 1.0, m)[:, None]
    segments = []
    for f, states in enumerate(factors):
        others = [range(len(s)) for j, s in enumerate(factors) if j != f]
        for a, b in itertools.combinations(range(len(states)), 2):
            for rest in itertools.product(*others):
                pick = list(rest)
                pick.insert(f, a)
                va = row([factors[j][k] for j, k in enumerate(pick)])
                pick[f] = b
                vb = row([factors[j][k] for j, k in enumerate(pick)])
                segments.append((1 - t) * va + t * vb)
    return np.unique(np.concatenate(segments), axis=0)


def residual_limits(table, eta, sigma=None):
    """The two limits of a row's score residual at linear predictor `eta` over the responses
    the declarations allow: logistic −σ(η), 1 − σ(η); Poisson with cap K max(−e^η, −K),
    clamp(K − e^η, −K, K); linear (σ fixed) (y_lo − η)/σ², (y_hi − η)/σ²."""
    model = table["model"]
    if model == "logistic":
        p = scipy.special.expit(eta)
        return -p, 1 - p
    if model == "poisson":
        K = table["response_bounds"][1]
        mu = np.exp(np.minimum(eta, 700.0))
        return np.maximum(-mu, -K), np.clip(K - mu, -K, K)
    if model == "linear":
        ylo, yhi = table["response_bounds"]
        return (ylo - eta) / sigma**2, (yhi - eta) / sigma**2
    raise ValueError(model)


def diameter(points, max_entries=10_000_000):
    """Exact diameter (largest pairwise Euclidean distance) of a point set, pruned: a lower
    bound D from farthest-point sweeps, then only points whose upper bound on any distance,
    min over pivots c of ‖p − c‖ + max_q ‖q − c‖, reaches D are compared pairwise (blocked,
    vectorised). Returns (diameter, candidate count)."""
    points = np.asarray(points, dtype=float)
    sq = (points**2).sum(1)
    best, pair = 0.0, (0, 0)
    a = int(np.argmax(sq))
    for _ in range(6):  # farthest-point sweeps
        d = np.sqrt(((points - points[a]) ** 2).sum(1))
        b = int(np.argmax(d))
        if d[b] <= best:
            break
        best, pair, a = float(d[b]), (a, b), b
    pivots = np.stack(
        [points.mean(0), (points.min(0) + points.max(0)) / 2, (points[pair[0]] + points[pair[1]]) / 2]
    )
    to_pivot = np.sqrt(((points[:, None, :] - pivots[None]) ** 2).sum(2))
    upper = (to_pivot + to_pivot.max(0)).min(1)
    cand = points[upper >= best * (1 - 1e-12)]
    csq = (cand**2).sum(1)
    best_sq = best**2
    block = max(1, max_entries // max(len(cand), 1))
    for i in range(0, len(cand), block):
        b = cand[i : i + block]
        # only pairs (i, j) with j ≥ the block's start: each unordered pair once
        d2 = (b**2).sum(1)[:, None] + csq[None, i:] - 2 * b @ cand[i:].T
        best_sq = max(best_sq, float(d2.max()))
    return math.sqrt(max(best_sq, 0.0)), len(cand)


def one_release_floor(table, ref, prior, eps, delta):
    """The one-release floor at the non-private mode θ̂: the whole (ε, δ) on one Gaussian
    release of the score shaped by A = H^(−½) (H the likelihood information at θ̂; for a
    linear model that of β with σ fixed at its mode), noise sd s = Δ/μ with μ the GDP parameter
    of (ε, δ) and Δ the exact diameter of {r(η)·A·v} over the allowed rows (vertices and a grid
    along every edge, both residual limits). The release's posterior covariance is
    Σ = P⁻¹ + s² P⁻¹ H P⁻¹ (P = H + P₀); the floor of a parameter is sqrt(diag Σ / diag P⁻¹).
    Returns the per-parameter floor (the covered parameters only), μ, Δ and the search size."""
    linear = table["model"] == "linear"
    k = len(table["features"]) + 1
    mode = ref["mode"]
    beta = mode[:k]
    H = ref["information"][:k, :k]  # linear: the β block, σ fixed
    # linear: the prior's conditional precision of β given σ; a Student-t prior's curvature
    P0 = prior_gradient_curvature(prior, mode, exact=True)[1][:k, :k]
    sigma = math.exp(mode[-1]) if linear else None
    # Any A with AᵀA = H⁻¹ gives the same distances ‖A(p − q)‖² = (p − q)ᵀH⁻¹(p − q) and
    # the same A⁻¹A⁻ᵀ = H, so the diameter and Σ are those of H^(−½); A = L⁻¹ (H = LLᵀ) is
    # used: H's eigenvalues span up to 10¹², which a Cholesky factor handles scale-free.
    L = np.linalg.cholesky(H)
    v = polytope_edge_points(table)
    eta = v @ beta
    r_lo, r_hi = residual_limits(table, eta, sigma)
    Av = scipy.linalg.solve_triangular(L, v.T, lower=True).T
    pts = np.concatenate([r_lo[:, None] * Av, r_hi[:, None] * Av])
    sens, candidates = diameter(pts)
    mu = gdp_mu(eps, delta)
    s = sens / mu
    Pinv = spd_inverse(H + P0)
    Sigma = Pinv + s**2 * Pinv @ H @ Pinv
    floor = np.sqrt(np.diag(Sigma) / np.diag(Pinv))
    return {
        "floor": floor.tolist(),
        "parameters": param_names(table)[:k],
        "mu": mu,
        "sensitivity": sens,
        "noise_sd": s,
        "points": int(len(pts)),
        "diameter_candidates": int(candidates),
        "note": "coefficients only, sigma fixed at its mode" if linear else "all parameters",
    }


# ---------------------------------------------------------------------------------------------
# Running the CLI
# ---------------------------------------------------------------------------------------------


def cli_version(binary):
    """The binary's `--version` line."""
    return subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()


def accepts_overwrite(binary):
    """Whether this build's `fit` has `--overwrite`."""
    out = subprocess.run([binary, "fit", "--help"], capture_output=True, text=True).stdout
    return "--overwrite" in out


def fit_command(binary, table, csv_path, eps, out_dir, overwrite):
    """The `dp-mcmc fit --method noise-aware` command line for one run (no --seed: secure
    noise)."""
    bounds = [f"{c}={lo:.17g}:{hi:.17g}" for c, lo, hi in table["features"]]
    if table["response_bounds"] is not None:
        lo, hi = table["response_bounds"]
        bounds.insert(0, f"{table['response']}={lo:.17g}:{hi:.17g}")
    cmd = [
        binary, "fit",
        "--data", str(csv_path),
        "--model", table["model"],
        "--response", table["response"],
        "--features", ",".join(c for c, _, _ in table["features"]),
        "--bounds", ",".join(bounds),
    ]  # fmt: skip
    for group in table["one_hot"]:
        cmd += ["--one-hot", ",".join(group)]
    if table.get("binary"):
        cmd += ["--binary", ",".join(table["binary"])]
    if table["clamp"]:
        cmd.append("--clamp")
    cmd += ["--method", "noise-aware", "--epsilon", f"{eps:g}", "--delta", f"{DELTA:g}"]
    cmd += ["--out", str(out_dir)]
    if overwrite:
        cmd.append("--overwrite")
    return cmd


def parse_json_stdout(text):
    """The JSON record `fit` prints (the whole stdout, or else its last line that parses)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        for line in reversed(text.strip().splitlines()):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def read_summary(path):
    """summary.csv as {parameter: {mean, sd, q5, q50, q95, r_hat, ess_bulk}} (r_hat read from
    `r_hat` or `rhat`, whichever the build writes; empty cells are None)."""

    def num(x):
        return float(x) if x not in (None, "", "null", "NaN") else None

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for r in rows:
        rhat = r.get("r_hat", r.get("rhat"))
        out[r["parameter"]] = {
            "mean": num(r["mean"]),
            "sd": num(r["sd"]),
            "q5": num(r["q5"]),
            "q50": num(r["q50"]),
            "q95": num(r["q95"]),
            "r_hat": num(rhat),
            "ess_bulk": num(r.get("ess_bulk")),
        }
    return out


def run_fit(binary, table, csv_path, eps, out_dir, overwrite):
    """Runs one fit; returns its record: command, exit status, process wall time, the stdout
    JSON and the summary (or, for a non-zero exit, the refusal's last stderr line)."""
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        shutil.rmtree(out_dir)  # our own run folder; this build cannot --overwrite
    cmd = fit_command(binary, table, csv_path, eps, out_dir, overwrite)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rec = {"command": cmd, "exit_status": proc.returncode, "process_seconds": wall}
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    if proc.returncode != 0:
        rec["status"] = "refused"
        rec["stderr"] = lines[-1] if lines else ""
        return rec
    rec["json"] = parse_json_stdout(proc.stdout)
    summary = out_dir / "summary.csv"
    if rec["json"] is None or not summary.exists():
        rec["status"] = "failed"
        rec["stderr"] = "no JSON on stdout" if rec["json"] is None else "no summary.csv"
        return rec
    rec["status"] = "ok"
    rec["summary"] = read_summary(summary)
    return rec


def compare_run(rec, names, ref):
    """Per-parameter comparison of an ok run with the reference: sd ratio, |Δmean|/sd and
    whether [q5, q95] contains the non-private mean."""
    per = {}
    for i, name in enumerate(names):
        s = rec["summary"].get(name)
        if s is None:
            raise ValueError(f"summary.csv has no parameter {name} (has {list(rec['summary'])})")
        m, sd = float(ref["mean"][i]), float(ref["sd"][i])
        per[name] = {
            "sd_ratio": s["sd"] / sd,
            "abs_dmean_over_sd": abs(s["mean"] - m) / sd,
            "covered": bool(s["q5"] <= m <= s["q95"]),
        }
    rec["comparison"] = per
    rec["median_sd_ratio"] = float(np.median([p["sd_ratio"] for p in per.values()]))
    return rec


# ---------------------------------------------------------------------------------------------
# Metrics and the table
# ---------------------------------------------------------------------------------------------


def rhat(rec):
    """A run's largest R-hat: the record's max_rhat, else the summary's."""
    if rec["json"].get("max_rhat") is not None:
        return rec["json"]["max_rhat"]
    return max(s["r_hat"] for s in rec["summary"].values() if s["r_hat"] is not None)


def ess(rec):
    """A run's smallest bulk ESS: the record's min_ess_bulk, else the summary's."""
    if rec["json"].get("min_ess_bulk") is not None:
        return rec["json"]["min_ess_bulk"]
    return min(s["ess_bulk"] for s in rec["summary"].values() if s["ess_bulk"] is not None)


def cell_metrics(runs, floor, names):
    """Metrics of one (table, ε) cell over its ok runs (medians over parameters and runs)."""
    ok = [r for r in runs if r["status"] == "ok"]
    out = {
        "runs": len(runs),
        "refusals": sum(r["status"] != "ok" for r in runs),
        "refusal_messages": sorted({r.get("stderr", "") for r in runs if r["status"] != "ok"}),
        "floor_median": float(np.median(floor["floor"])),
        "max_process_seconds": max(r["process_seconds"] for r in runs),
    }
    out["warnings"] = sum(
        1
        for r in ok
        if r["json"].get("warning") is not None or r["json"].get("converged") is False
    )
    if not ok:
        return out
    out["unconverged"] = sum(1 for r in ok if rhat(r) > RHAT_TARGET or ess(r) < ESS_TARGET)
    per = [p for r in ok for p in r["comparison"].values()]
    ratios = np.array([p["sd_ratio"] for p in per])
    floor_ratios = [r["comparison"][n]["sd_ratio"] for r in ok for n in floor["parameters"]]
    run_medians = [r["median_sd_ratio"] for r in ok]

    out.update(
        {
            "median_sd_ratio": float(np.median(ratios)),
            "median_abs_dmean_over_sd": float(np.median([p["abs_dmean_over_sd"] for p in per])),
            "coverage90": float(np.mean([p["covered"] for p in per])),
            "median_sd_ratio_floor_params": float(np.median(floor_ratios)),
            "ratio_to_floor": float(np.median(floor_ratios)) / out["floor_median"],
            "run_median_sd_ratio_min": float(min(run_medians)),
            "run_median_sd_ratio_max": float(max(run_medians)),
            "max_rhat": float(max(rhat(r) for r in ok)),
            "min_ess_bulk": float(min(ess(r) for r in ok)),
            "max_wall_seconds_reported": max(r["json"].get("wall_seconds") or 0.0 for r in ok),
        }
    )
    return out


def fmt(x, digits=2):
    """A number for the table ("–" when missing)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def markdown_table(header, cells, refs):
    """The markdown: a header line, the results table (rows = table × ε), the reference
    checks and the columns' definitions."""
    lines = [header, ""]
    lines.append(
        "| table | model | n | d | ε | sd ratio | \\|Δmean\\|/sd | 90 % cover | floor "
        "| ratio / floor | runs' sd ratio | max R-hat | min bulk ESS | max s | warnings "
        "| not converged | refusals |"
    )
    lines.append("|" + "---|" * 17)
    for c in cells:
        m = c["metrics"]
        spread = (
            f"{fmt(m.get('run_median_sd_ratio_min'))}–{fmt(m.get('run_median_sd_ratio_max'))}"
            if "median_sd_ratio" in m
            else "–"
        )
        lines.append(
            f"| {c['table']} | {c['model']} | {c['n']} | {c['d']} | {c['epsilon']:g} "
            f"| {fmt(m.get('median_sd_ratio'))} | {fmt(m.get('median_abs_dmean_over_sd'))} "
            f"| {fmt(m.get('coverage90'))} | {fmt(m['floor_median'])} "
            f"| {fmt(m.get('ratio_to_floor'))} | {spread} | {fmt(m.get('max_rhat'), 4)} "
            f"| {fmt(m.get('min_ess_bulk'), 0)} | {fmt(m['max_process_seconds'])} "
            f"| {m['warnings']} | {m.get('unconverged', '–')} | {m['refusals']}/{m['runs']} |"
        )
    lines += [
        "",
        "Non-private reference (Laplace at the MAP) against its importance-sampling correction "
        f"({IS_DRAWS} draws, multivariate t with {IS_DF} df):",
        "",
        "| table | prior | Newton iterations | IS ESS | max \\|Δmean\\|/sd | IS sd / Laplace sd |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in refs.items():
        ic = r["importance_check"]
        lines.append(
            f"| {name} | {r['prior_source']} | {r['newton_iterations']} | {ic['ess']:.0f} "
            f"| {ic['max_abs_dmean_over_sd']:.3f} "
            f"| {ic['sd_ratio_range'][0]:.3f}–{ic['sd_ratio_range'][1]:.3f} |"
        )
    lines += [
        "",
        "Columns: n rows, d parameters (intercept and covariates; a linear model's log_sigma "
        "too). sd ratio: median over parameters and runs of the DP posterior sd over the "
        "non-private (Laplace) sd; |Δmean|/sd: median distance of the DP mean from the "
        "non-private mean in non-private sds; 90 % cover: share of the DP [q5, q95] intervals "
        "that contain the non-private mean; floor: median over parameters of the one-release "
        "floor (the whole (ε, δ) on one Gaussian release of the score at the non-private mode, "
        "shaped by H^(−½), sensitivity the exact diameter over the declared rows; for a linear "
        "model the coefficients only, σ fixed at its mode); ratio / floor: the median sd ratio "
        "over the floor's parameters divided by the floor; runs' sd ratio: the narrowest and "
        "widest run's median sd ratio; max s: the process wall time of the slowest run; "
        "warnings: runs whose record has a warning or converged = false; not converged: runs "
        f"with max R-hat > {RHAT_TARGET} or min bulk ESS < {ESS_TARGET} (the crate's own "
        "targets), warned or not; refusals: runs that exited non-zero (results.json holds "
        "their messages).",
        "",
    ]
    return "\n".join(lines)


def main():
    """Parses the arguments, prepares the tables, runs every fit and writes the outputs."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--wheel", type=Path, required=True, help="the ISLP wheel (a zip)")
    ap.add_argument("--quick", action="store_true", help="ε = 8 only, 2 runs")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--tables", default=None, help="comma-separated table names (default: all)")
    args = ap.parse_args()
    known = [t["name"] for t in TABLES]
    chosen = known if args.tables is None else args.tables.split(",")
    unknown = [t for t in chosen if t not in known]
    if unknown:
        ap.error(f"unknown table(s) {', '.join(unknown)}; choose among {', '.join(known)}")
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    runs = args.runs or (QUICK_RUNS if args.quick else RUNS)
    if runs < 1:
        ap.error("--runs must be at least 1")
    out = args.out
    version = cli_version(args.bin)
    overwrite = accepts_overwrite(args.bin)
    log(f"{version} at {args.bin}; --overwrite {'supported' if overwrite else 'not supported'}")
    tables = [t for t in TABLES if t["name"] in chosen]
    raw = extract_islp(args.wheel, out / "islp", [t["source"] for t in tables])

    t_start = time.perf_counter()
    cells, refs, all_runs = [], {}, []
    for table in tables:
        name = table["name"]
        X, y, csv_path = prepare_table(table, raw[table["source"]], out / "tables")
        names = param_names(table)
        log(f"{name}: n = {len(y)}, d = {len(names)}, {table['model']} ({csv_path})")
        ref_cache = {}  # prior (as bytes) -> (prior, reference)

        def reference_for(fit_json):
            prior = make_prior(fit_json, names)
            key = prior["mean"].tobytes() + prior["cov"].tobytes()
            if key not in ref_cache:
                t0 = time.perf_counter()
                ref = nonprivate_reference(table, X, y, prior)
                ic = ref["importance_check"]
                log(
                    f"  reference: Newton {ref['newton_iterations']} iterations, IS ESS "
                    f"{ic['ess']:.0f}, max |IS - Laplace| {ic['max_abs_dmean_over_sd']:.3f} sd "
                    f"({time.perf_counter() - t0:.1f} s; prior {prior['source']})"
                )
                ref_cache[key] = (prior, ref)
            return ref_cache[key]

        for eps in epsilons:
            cell_runs = []
            for k in range(1, runs + 1):
                run_dir = out / "runs" / f"{name}-e{eps:g}-r{k}"
                rec = run_fit(args.bin, table, csv_path, eps, run_dir, overwrite)
                rec.update({"table": name, "epsilon": eps, "run": k, "dir": str(run_dir)})
                tag = f"[{name} ε={eps:g} run {k}/{runs}]"
                if rec["status"] == "ok":
                    try:
                        if list(rec["json"].get("parameters", names)) != names:
                            raise ValueError(f"parameters {rec['json']['parameters']} != {names}")
                        prior, ref = reference_for(rec["json"])
                        rec["prior_source"] = prior["source"]
                        compare_run(rec, names, ref)
                    except ValueError as e:  # output this script cannot read: not a crash
                        rec["status"], rec["stderr"] = "failed", f"unreadable output: {e}"
                if rec["status"] == "ok":
                    warning = rec["json"].get("warning")
                    log(
                        f"{tag} ok {rec['process_seconds']:.2f} s: median sd ratio "
                        f"{rec['median_sd_ratio']:.3f}, max R-hat {rhat(rec):.4f}, "
                        f"min bulk ESS {ess(rec):.0f}"
                        + (f", warning: {warning[:70]}…" if warning else "")
                    )
                else:
                    log(f"{tag} {rec['status']} (exit {rec['exit_status']}): {rec['stderr']}")
                cell_runs.append(rec)
            prior, ref = (
                reference_for(next(r["json"] for r in cell_runs if r["status"] == "ok"))
                if any(r["status"] == "ok" for r in cell_runs)
                else reference_for(None)
            )
            t0 = time.perf_counter()
            floor = one_release_floor(table, ref, prior, eps, DELTA)
            log(
                f"  floor ε={eps:g}: μ {floor['mu']:.3f}, Δ {floor['sensitivity']:.4g} "
                f"({floor['points']} points, {floor['diameter_candidates']} compared pairwise, "
                f"{time.perf_counter() - t0:.1f} s), median {np.median(floor['floor']):.3f}"
            )
            cells.append(
                {
                    "table": name,
                    "model": table["model"],
                    "n": int(len(y)),
                    "d": len(names),
                    "epsilon": eps,
                    "floor": floor,
                    "metrics": cell_metrics(cell_runs, floor, names),
                }
            )
            all_runs += cell_runs
        for prior, ref in ref_cache.values():
            refs[name] = {
                "parameters": names,
                "prior_source": prior["source"],
                "prior_mean": prior["mean"].tolist(),
                "prior_cov": prior["cov"].tolist(),
                "mean": ref["mean"].tolist(),
                "sd": ref["sd"].tolist(),
                "cov": ref["cov"].tolist(),
                "newton_iterations": ref["newton_iterations"],
                "importance_check": ref["importance_check"],
                "n": int(len(y)),
            }

    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    header = (
        f"Measured {datetime.date.today().isoformat()} with `{version}`, nproc {nproc}; "
        f"`fit --method noise-aware`, δ = {DELTA:g}, {runs} runs per ε, secure noise; "
        f"reference: the non-private Laplace posterior of the same model and prior "
        f"({time.perf_counter() - t_start:.0f} s in all)."
    )
    md = markdown_table(header, cells, refs)
    (out / "table.md").write_text(md)
    results = {
        "header": header,
        "version": version,
        "binary": args.bin,
        "delta": DELTA,
        "epsilons": list(epsilons),
        "runs_per_cell": runs,
        "tables": [
            {k: v for k, v in t.items() if k != "row"} | {"features": [list(f) for f in t["features"]]}
            for t in TABLES
        ],
        "references": refs,
        "cells": cells,
        "runs": all_runs,
    }
    (out / "results.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
    print(md)
    log(f"wrote {out / 'table.md'} and {out / 'results.json'}")


if __name__ == "__main__":
    main()
