//! Algorithm 2 of the thesis: the largest number of iterations k with accountant(k) below a
//! target, by doubling and bisection on the reals (THESIS-NOTES §5).

use super::accountant::Accountant;
use super::releases::Releases;
use crate::error::{Error, Result};

/// The largest iteration count the accountants are evaluated at: 10^15 (below 2^53, so every
/// count up to it is exact in f64). A budget allowing more is reported as out of range (an
/// error), never rounded to a count the accountant was not checked at.
pub const MAX_ITERATIONS: u64 = 1_000_000_000_000_000;

/// Algorithm 2 exactly as the thesis code runs it, for an accountant `f` increasing in k
/// (δ(ε; k) or ε(δ; k)):
/// 1. while `f(high) < target`: `high ← 2·high`;
/// 2. while `⌊high⌋ − ⌊low⌋ > 1`: `mid = (low+high)/2`; if `f(mid) > target` then `high ← mid`
///    else `low ← mid`;
/// 3. return `⌊high⌋` if `f(⌊high⌋) < target` else `⌊low⌋`.
///
/// `low` must be a valid count (the caller's theory guarantees `f(low) ≤ target`; 0 always is).
/// As a pessimistic safety net the answer is decremented while `f(k) > target` (this never
/// triggers when `low` is valid, and can only lower the count).
///
/// `f` is called at real arguments; accountants that need an integer floor it themselves.
///
/// # Errors
/// Propagates errors of `f`; [`Error::Numerical`] if `f` returns NaN or the budget allows more
/// than [`MAX_ITERATIONS`] (`f(10^15) < target`, or `low` above it).
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::algorithm2;
/// // f(k) = k/100: the largest k with f(k) ≤ 0.505 is 50
/// let k = algorithm2(|k| Ok(k / 100.0), 0.505, 0.0, 1.0)?;
/// assert_eq!(k, 50);
/// assert!(algorithm2(|_| Ok(f64::NAN), 0.5, 0.0, 1.0).is_err());
/// // A budget beyond 10^15 iterations is out of range, not rounded.
/// assert!(algorithm2(|k| Ok(k * 1e-20), 0.5, 0.0, 1.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn algorithm2(f: impl Fn(f64) -> Result<f64>, target: f64, low: f64, high: f64) -> Result<u64> {
    capped(f, target, low, high)?.ok_or_else(|| Error::Numerical {
        what: "algorithm2",
        reason: format!(
            "the budget allows more than {MAX_ITERATIONS} (10^15) iterations, the largest count \
             the accountants are evaluated at; use a smaller epsilon or less noise"
        ),
    })
}

/// The error for a budget `epsilon` that allows more than [`MAX_ITERATIONS`] iterations.
pub(crate) fn beyond_cap(epsilon: f64) -> Error {
    Error::invalid(
        "epsilon",
        crate::error::num(epsilon),
        "allows more than 10^15 iterations; the accountants are evaluated up to \
         10^15 iterations: use a smaller epsilon (or less noise, e.g. a smaller tau)",
    )
}

/// [`algorithm2`], with `Ok(None)` when the budget allows more than [`MAX_ITERATIONS`]
/// (callers name the parameter to change).
pub(crate) fn capped(
    f: impl Fn(f64) -> Result<f64>,
    target: f64,
    low: f64,
    high: f64,
) -> Result<Option<u64>> {
    let eval = |x: f64| -> Result<f64> {
        let v = f(x)?;
        if v.is_nan() {
            Err(Error::Numerical {
                what: "algorithm2",
                reason: format!("accountant returned NaN at k = {x}"),
            })
        } else {
            Ok(v)
        }
    };
    let cap = MAX_ITERATIONS as f64;
    let mut low = low.max(0.0);
    if low > cap {
        return Ok(None);
    }
    let mut high = high.max(low).max(1.0).min(cap);
    while eval(high)? < target {
        if high >= cap {
            return Ok(None);
        }
        high = (2.0 * high).min(cap);
    }
    while high.floor() - low.floor() > 1.0 {
        let mid = 0.5 * (low + high);
        if eval(mid)? > target {
            high = mid;
        } else {
            low = mid;
        }
    }
    let mut k = if eval(high.floor())? < target {
        high.floor()
    } else {
        low.floor()
    };
    while k > 0.0 && eval(k)? > target {
        k -= 1.0;
    }
    Ok(Some(k as u64))
}

/// Algorithm 2 over any accountant: the largest `k` such that `spent` plus `chains` chains of
/// `releases` (each its once-per-chain event and `k` iterations) stays within (ε, δ), compared as
/// [`Accountant::budget_measure`] says (δ(ε) ≤ δ, or ε(δ) ≤ ε). Search from low 0, high 1024
/// (the thesis' start), evaluating the accountant at whole iteration counts only. `Ok(Some(0))`
/// when even `k = 0` exceeds the budget (the once-per-chain events alone), `Ok(None)` when the
/// budget allows more than [`MAX_ITERATIONS`].
///
/// Every iteration count of the crate comes from here (through [`Accountant::max_iterations`]).
///
/// # Errors
/// ε ≤ 0 or not finite, δ ∉ (0, 1), `chains` = 0, an event `spent` cannot evaluate, or a
/// numerical failure of the accountant.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{algorithm2, PrivacyEvent, Releases, Zcdp, Accountant};
/// let r = Releases::per_iteration(PrivacyEvent::gaussian(0.1 * 1e5f64.sqrt()));
/// // thesis Theorem 5 (THESIS-NOTES §4): 34 iterations at ε = 1, δ = 1e-6
/// assert_eq!(algorithm2::search(&Zcdp::new(), &r, 1, 1.0, 1e-6)?, Some(34));
/// assert!(algorithm2::search(&Zcdp::new(), &r, 0, 1.0, 1e-6).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn search(
    spent: &dyn Accountant,
    releases: &Releases,
    chains: u64,
    epsilon: f64,
    delta: f64,
) -> Result<Option<u64>> {
    let (epsilon, delta, chains) = check_query(epsilon, delta, chains)?;
    let target = spent.budget_measure(epsilon, delta)?.target(epsilon, delta);
    let f = |x: f64| -> Result<f64> {
        let mut acc = spent.boxed();
        acc.compose(&releases.for_chains(x.floor() as u64, chains))?;
        Ok(acc.budget_measure(epsilon, delta)?.value())
    };
    if f(0.0)? > target {
        return Ok(Some(0));
    }
    capped(f, target, 0.0, 1024.0)
}

/// Validated `(ε, δ, chains)` of a budget query.
pub(crate) fn check_query(epsilon: f64, delta: f64, chains: u64) -> Result<(f64, f64, u64)> {
    let epsilon = crate::error::check::positive("epsilon", epsilon)?;
    let delta = crate::error::check::delta("delta", delta)?;
    if chains == 0 {
        return Err(Error::invalid("chains", 0, "must be at least 1"));
    }
    Ok((epsilon, delta, chains))
}
