//! Algorithm 2 of the thesis: the largest number of iterations k with accountant(k) below a
//! target, by doubling and bisection on the reals (THESIS-NOTES §5).

use crate::error::{Error, Result};

/// Largest power-of-two bound the doubling phase may reach (2^53: integers beyond are not exact
/// in f64).
const HIGH_CAP: f64 = 9_007_199_254_740_992.0;

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
/// Propagates errors of `f`; [`Error::Numerical`] if `high` would pass 2^53 or `f` returns NaN.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::algorithm2;
/// // f(k) = k/100: the largest k with f(k) ≤ 0.505 is 50
/// let k = algorithm2(|k| Ok(k / 100.0), 0.505, 0.0, 1.0)?;
/// assert_eq!(k, 50);
/// assert!(algorithm2(|_| Ok(f64::NAN), 0.5, 0.0, 1.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn algorithm2(f: impl Fn(f64) -> Result<f64>, target: f64, low: f64, high: f64) -> Result<u64> {
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
    let mut low = low.max(0.0);
    let mut high = high.max(low).max(1.0);
    while eval(high)? < target {
        high *= 2.0;
        if high > HIGH_CAP {
            return Err(Error::Numerical {
                what: "algorithm2",
                reason: "the budget allows more than 2^53 iterations; lower epsilon or the noise"
                    .into(),
            });
        }
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
    Ok(k as u64)
}
