//! Hellinger distance between Beta and between Dirichlet distributions, in log space via ln B.

use statrs::function::gamma::ln_gamma;

use crate::error::{Error, Result, check};

/// `ln B(a) = Σ ln Γ(a_i) − ln Γ(Σ a_i)`, the log of the multivariate Beta function.
///
/// # Errors
/// Fewer than two parameters, or a parameter that is not finite and `> 0` (named `alpha`).
pub fn ln_beta(a: &[f64]) -> Result<f64> {
    check_params("alpha", a)?;
    Ok(ln_beta_unchecked(a))
}

fn ln_beta_unchecked(a: &[f64]) -> f64 {
    a.iter().map(|&x| ln_gamma(x)).sum::<f64>() - ln_gamma(a.iter().sum())
}

fn check_params(name: &'static str, a: &[f64]) -> Result<()> {
    if a.len() < 2 {
        return Err(Error::invalid(
            name,
            format!("{a:?}"),
            "needs at least two parameters",
        ));
    }
    for &x in a {
        check::positive(name, x)?;
    }
    Ok(())
}

/// `ln` of the Bhattacharyya coefficient (affinity) `∫ sqrt(p q)` of two Dirichlet laws:
/// `ln B((a1+a2)/2) − (ln B(a1) + ln B(a2))/2`, clamped to `≤ 0` (it is `≤ 0` by
/// Cauchy–Schwarz; rounding can push it a hair above).
///
/// # Errors
/// Length mismatch, or a parameter not finite and `> 0`.
pub fn log_affinity_dirichlet(a1: &[f64], a2: &[f64]) -> Result<f64> {
    check_params("alpha1", a1)?;
    check_params("alpha2", a2)?;
    check::len("alpha2", a2.len(), a1.len())?;
    let mid: Vec<f64> = a1.iter().zip(a2).map(|(x, y)| 0.5 * (x + y)).collect();
    let la = ln_beta_unchecked(&mid) - 0.5 * (ln_beta_unchecked(a1) + ln_beta_unchecked(a2));
    Ok(la.min(0.0))
}

/// Hellinger distance from the log-affinity: `H = sqrt(1 − e^{la})`, with `expm1` so that
/// nearby distributions keep their digits.
pub fn hellinger_from_log_affinity(la: f64) -> f64 {
    (-la.min(0.0).exp_m1()).max(0.0).sqrt()
}

/// Hellinger distance between `Dir(a1)` and `Dir(a2)` (the paper's Section 4 formula
/// `sqrt(1 − B((a1+a2)/2)/sqrt(B(a1) B(a2)))`, with `H² = 1 − ∫ sqrt(p q)`, so `H ∈ [0, 1]`).
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::hellinger_dirichlet;
/// # fn main() -> dp_mcmc::Result<()> {
/// assert_eq!(hellinger_dirichlet(&[2.0, 3.0, 4.0], &[2.0, 3.0, 4.0])?, 0.0);
/// assert!(hellinger_dirichlet(&[1.0, 0.0], &[1.0, 1.0]).is_err()); // names `alpha1`
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`log_affinity_dirichlet`].
pub fn hellinger_dirichlet(a1: &[f64], a2: &[f64]) -> Result<f64> {
    Ok(hellinger_from_log_affinity(log_affinity_dirichlet(a1, a2)?))
}

/// Hellinger distance between `Beta(a1, b1)` and `Beta(a2, b2)` (the paper's Section 3
/// formula; Beta(a, b) is the Dirichlet(a, b) law of (θ, 1 − θ)).
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::hellinger_beta;
/// # fn main() -> dp_mcmc::Result<()> {
/// // Beta(1,1) vs Beta(2,1): affinity ∫ sqrt(2θ) dθ = 2√2/3.
/// let h = hellinger_beta(1.0, 1.0, 2.0, 1.0)?;
/// assert!((h - (1.0 - 2.0 * 2f64.sqrt() / 3.0).sqrt()).abs() < 1e-12);
/// assert!(hellinger_beta(-1.0, 1.0, 2.0, 1.0).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// A parameter not finite and `> 0`.
pub fn hellinger_beta(a1: f64, b1: f64, a2: f64, b2: f64) -> Result<f64> {
    hellinger_dirichlet(&[a1, b1], &[a2, b2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_and_bounded() {
        let h1 = hellinger_dirichlet(&[1.0, 2.0, 3.0], &[4.0, 0.5, 9.0]).unwrap();
        let h2 = hellinger_dirichlet(&[4.0, 0.5, 9.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!((h1 - h2).abs() < 1e-14);
        assert!(h1 > 0.0 && h1 < 1.0);
        let far = hellinger_beta(1.0, 1e6, 1e6, 1.0).unwrap();
        assert!((far - 1.0).abs() < 1e-12, "{far}");
    }

    #[test]
    fn errors() {
        assert!(hellinger_dirichlet(&[1.0, 2.0], &[1.0, 2.0, 3.0]).is_err());
        assert!(ln_beta(&[1.0]).is_err());
        assert!((ln_beta(&[1.0, 1.0]).unwrap()).abs() < 1e-15);
    }
}
