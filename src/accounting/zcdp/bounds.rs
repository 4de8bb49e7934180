//! Zero-concentrated DP (Bun & Steinke 2016): the thesis' Theorem 1 conversion (zCDP part), its
//! inverse (the ρ budget of Theorems 5 and 11). The iteration counts of Theorems 5 / 11 are
//! Algorithm 2 on the [`Zcdp`](super::Zcdp) accountant.

use crate::error::{Result, check};

/// ε of a ρ-zCDP mechanism at δ, thesis Theorem 1: `ε = ρ + 2√(ρ ln(1/δ))`.
pub(crate) fn zcdp_epsilon(rho: f64, delta: f64) -> f64 {
    rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt()
}

/// δ at ε of a ρ-zCDP mechanism: the inverse of Theorem 1 in δ,
/// `δ = exp(−(ε−ρ)²/(4ρ))` for ε > ρ, else 1 (Theorem 1 gives nothing there).
pub(crate) fn zcdp_delta(rho: f64, epsilon: f64) -> f64 {
    if rho == 0.0 {
        return 0.0;
    }
    if epsilon <= rho {
        return 1.0;
    }
    let t = epsilon - rho;
    (-(t * t) / (4.0 * rho)).exp().clamp(0.0, 1.0)
}

/// The largest ρ with `ρ + 2√(ρ ln 1/δ) ≤ ε` (thesis Theorem 5 / 11 budget):
/// `ρ = (√(ε − ln δ) − √(−ln δ))²`, evaluated as `(ε / (√(ε+L) + √L))²` with `L = ln(1/δ)` to avoid
/// cancellation.
///
/// # Errors
/// `epsilon` finite > 0; `delta` in (0, 1).
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::zcdp_rho_budget;
/// // ε = 10, δ = 1e-9: 0.98124042066752795 (mpmath; tests/data/accounting gauss_zcdp_rho_05)
/// assert!((zcdp_rho_budget(10.0, 1e-9)? - 0.98124042066752795).abs() < 1e-14);
/// assert!(zcdp_rho_budget(0.0, 1e-9).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn zcdp_rho_budget(epsilon: f64, delta: f64) -> Result<f64> {
    let eps = check::positive("epsilon", epsilon)?;
    let delta = check::delta("delta", delta)?;
    Ok(rho_budget(eps, delta))
}

pub(crate) fn rho_budget(eps: f64, delta: f64) -> f64 {
    let l = -delta.ln();
    let r = eps / ((eps + l).sqrt() + l.sqrt());
    r * r
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn thm1_round_trip() {
        for &(e, d) in &[(1.0, 1e-6), (6.0, 1e-6), (0.1, 1e-3), (30.0, 1e-12)] {
            let rho = rho_budget(e, d);
            assert!((zcdp_epsilon(rho, d) - e).abs() < 1e-12 * e.max(1.0));
            assert!((zcdp_delta(rho, e) - d).abs() < 1e-9 * d);
        }
    }
}
