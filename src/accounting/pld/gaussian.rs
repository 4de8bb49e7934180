//! Tight (ε, δ) of compositions of Gaussian mechanisms from the Gaussian privacy loss
//! distribution (thesis Theorems 4, 6 and 12; Balle & Wang 2018; Sommer et al. 2019).
//!
//! A composition of Gaussian mechanisms with sensitivities `Δ_i`, noise stds `σ_i` and `k_i`
//! repetitions has privacy loss `N(μ, 2μ)` with `μ = Σ k_i Δ_i²/(2σ_i²)`, and
//! `δ(ε) = ½[erfc((ε−μ)/(2√μ)) − e^ε·erfc((ε+μ)/(2√μ))]`.
//! Both terms are evaluated as `e^{−x₁²}·erfcx(·)` (with `x₂² − x₁² = ε`), so nothing overflows
//! for large ε and the cancellation at tiny δ costs at most a digit.

use crate::accounting::special::{erfc, erfcx, exp_neg_sq};
use crate::accounting::zcdp::zcdp_epsilon;
use crate::error::{Error, Result, check};

/// `μ = Δ²/(2σ²)` of one Gaussian mechanism with noise std ÷ sensitivity = `noise_multiplier`.
///
/// # Errors
/// `noise_multiplier` must be finite and > 0.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::gaussian_mu;
/// assert_eq!(gaussian_mu(1.0)?, 0.5);
/// assert!(gaussian_mu(0.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn gaussian_mu(noise_multiplier: f64) -> Result<f64> {
    let s = check::positive("noise_multiplier", noise_multiplier)?;
    Ok(0.5 / (s * s))
}

/// The largest total Gaussian `μ` whose tight δ(ε) is at most `delta` (bisection, rounded
/// down).
///
/// ```
/// use dp_mcmc::accounting::{gaussian_budget, pld_delta};
/// let mu = gaussian_budget(1.0, 1e-6)?;
/// assert!(pld_delta(mu, 1.0)? <= 1e-6 && pld_delta(mu * 1.001, 1.0)? > 1e-6);
/// assert!(gaussian_budget(-1.0, 1e-6).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
///
/// # Errors
/// `epsilon` not positive and finite, `delta` outside (0, 1).
pub fn gaussian_budget(epsilon: f64, delta: f64) -> Result<f64> {
    let eps = check::positive("epsilon", epsilon)?;
    let delta = check::delta("delta", delta)?;
    let within = |mu: f64| pld_delta(mu, eps).is_ok_and(|d| d <= delta);
    let (mut lo, mut hi) = (0.0, 1.0);
    while within(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > 1e12 {
            return Ok(lo);
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if within(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Tight δ(ε) of a Gaussian composition with total `μ` (Thm 4 / 6 / 12), clamped to [0, 1].
///
/// `μ = 0` (nothing released) gives δ = 0.
///
/// # Errors
/// `mu` must be finite and ≥ 0; `epsilon` finite and ≥ 0.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::pld_delta;
/// // σ = 1, Δ = 1, ε = 1 (mpmath, 60 digits: 0.12693673750664395)
/// let d = pld_delta(0.5, 1.0)?;
/// assert!((d - 0.12693673750664395).abs() < 1e-15);
/// assert!(pld_delta(0.5, f64::NAN).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn pld_delta(mu: f64, epsilon: f64) -> Result<f64> {
    let mu = check::non_negative("mu", mu)?;
    let eps = check::non_negative("epsilon", epsilon)?;
    Ok(pld_delta_unchecked(mu, eps))
}

/// δ(ε) for validated `mu >= 0`, `eps >= 0`.
pub(crate) fn pld_delta_unchecked(mu: f64, eps: f64) -> f64 {
    if mu == 0.0 {
        return 0.0;
    }
    let s = 2.0 * mu.sqrt();
    let x1 = (eps - mu) / s;
    let x2 = (eps + mu) / s;
    if x1 > 38.0 {
        // δ ≤ e^{−x1²} < e^{−1444} underflows to 0 (and x1² would overflow for ε = 1e308)
        return 0.0;
    }
    if x1.is_nan() || x2.is_nan() {
        return 1.0; // pessimistic: no guarantee claimed
    }
    // e^ε erfc(x2) = e^{-x1²} erfcx(x2) because x2² − x1² = ε.
    let d = if x1 >= 0.0 {
        0.5 * exp_neg_sq(x1) * (erfcx(x1) - erfcx(x2))
    } else {
        0.5 * (erfc(x1) - exp_neg_sq(x1) * erfcx(x2))
    };
    d.clamp(0.0, 1.0)
}

/// Tight ε(δ) of a Gaussian composition with total `μ` (inverse of [`pld_delta`]).
///
/// Bisection on the decreasing δ(ε) inside `[0, ε_zCDP]` (the zCDP bound `μ + 2√(μ ln 1/δ)` is
/// always valid); the returned ε is the upper end of the final bracket, so `δ(ε) ≤ delta` holds
/// (pessimistic). The bracket ends below 1e-13 relative width.
///
/// # Errors
/// `mu` finite ≥ 0, `delta` in (0, 1).
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::pld_epsilon;
/// // σ = 1, δ = 1e-5: 4.3771780956812246 (mpmath; tests/data/accounting gauss_pld_eps_01)
/// assert!((pld_epsilon(0.5, 1e-5)? - 4.3771780956812246).abs() < 1e-9);
/// assert!(pld_epsilon(0.5, 1.5).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn pld_epsilon(mu: f64, delta: f64) -> Result<f64> {
    let mu = check::non_negative("mu", mu)?;
    let delta = check::delta("delta", delta)?;
    pld_epsilon_unchecked(mu, delta)
}

pub(crate) fn pld_epsilon_unchecked(mu: f64, delta: f64) -> Result<f64> {
    if pld_delta_unchecked(mu, 0.0) <= delta {
        return Ok(0.0);
    }
    let mut lo = 0.0;
    let mut hi = zcdp_epsilon(mu, delta);
    // The zCDP bound dominates the tight one; widen only if round-off says otherwise.
    let mut guard = 0;
    while pld_delta_unchecked(mu, hi) > delta {
        hi = 2.0 * hi + 1.0;
        guard += 1;
        if guard > 100 || !hi.is_finite() {
            return Err(Error::Numerical {
                what: "pld_epsilon",
                reason: format!("no ε found with δ(ε) ≤ {delta} for μ = {mu}"),
            });
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-13 * hi {
            break;
        }
        if pld_delta_unchecked(mu, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn tiny_delta_no_cancellation_loss() {
        // σ=1, ε=10: 9.8127058268469559e-23 (mpmath 60 digits; tests/data/accounting gauss_pld_04)
        let d = pld_delta(0.5, 10.0).unwrap();
        assert!(((d - 9.8127058268469559e-23) / 9.8127058268469559e-23).abs() < 1e-12);
    }

    #[test]
    fn large_epsilon_and_large_mu() {
        assert_eq!(pld_delta(0.5, 2000.0).unwrap(), 0.0);
        let d = pld_delta(5000.0, 10.0).unwrap();
        assert!(d > 0.999 && d <= 1.0);
        assert_eq!(pld_delta(0.0, 1.0).unwrap(), 0.0);
    }

    #[test]
    fn round_trip() {
        for &mu in &[1e-4, 0.01, 0.5, 3.0, 50.0] {
            for &delta in &[1e-12, 1e-6, 1e-3] {
                let e = pld_epsilon(mu, delta).unwrap();
                let d = pld_delta(mu, e).unwrap();
                assert!(d <= delta, "mu={mu}: δ(ε(δ)) = {d} > {delta}");
                if e > 0.0 {
                    assert!((d - delta).abs() <= 1e-9 * delta, "mu={mu} δ={delta}: {d}");
                }
            }
        }
    }
}
