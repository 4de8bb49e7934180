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

/// What the mechanisms compare posteriors with: the Hellinger distance, or, to reproduce the
/// paper's Figures 1 and 2, the quantity its authors' code computes instead.
///
/// Every comparison in this module family is between two posteriors with the same total
/// `T = Σα + n` (the true posterior and a candidate or a Laplace release), so both measures are
/// functions of the log-affinity `la` ([`log_affinity_dirichlet`]) and `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DistanceMeasure {
    /// The Hellinger distance `sqrt(1 − e^{la})` (default; the paper's definition).
    #[default]
    Hellinger,
    /// **Not the Hellinger distance** (and not a metric): `sqrt(1 − e^{la / ln T})`, what the
    /// authors' code computes (see [`authors_gen_betaln_distance`]). Its square is
    /// `1 − (1 − H²)^{1/ln T}`, about `H² / ln T` for small `H`: it shrinks small distances by
    /// about `sqrt(ln T)` and large ones less. Offered only to reproduce the paper's numbers.
    AuthorsGenBetaln,
}

impl DistanceMeasure {
    /// The measure between two posteriors of common total `total` whose log-affinity is `la`
    /// (`la ≤ 0`; larger values are clamped to 0). `total` must be `> 1` for
    /// [`DistanceMeasure::AuthorsGenBetaln`] (it always is: `T = Σα + n` with `n ≥ 1`).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::{DistanceMeasure, hellinger_beta, log_affinity_dirichlet};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let la = log_affinity_dirichlet(&[31.0, 271.0], &[35.0, 267.0])?;
    /// let h = DistanceMeasure::Hellinger.from_log_affinity(la, 302.0);
    /// assert!((h - hellinger_beta(31.0, 271.0, 35.0, 267.0)?).abs() < 1e-15);
    /// let authors = DistanceMeasure::AuthorsGenBetaln.from_log_affinity(la, 302.0);
    /// assert!(authors < h / 2.0); // shrunk by about sqrt(ln 302) = 2.39
    /// # Ok(()) }
    /// ```
    pub fn from_log_affinity(&self, la: f64, total: f64) -> f64 {
        match self {
            DistanceMeasure::Hellinger => hellinger_from_log_affinity(la),
            DistanceMeasure::AuthorsGenBetaln => hellinger_from_log_affinity(la / total.ln()),
        }
    }

    /// Display name.
    pub fn name(&self) -> &'static str {
        match self {
            DistanceMeasure::Hellinger => "Hellinger",
            DistanceMeasure::AuthorsGenBetaln => "authors' gen_betaln (not Hellinger)",
        }
    }
}

/// The authors' "Hellinger distance", transcribed from `opt_hellinger` and `gen_betaln` in
/// `codes/dirichlet.py` of the public repository `JiawenUB/DP-Bayesian-Inference` (the same
/// two functions, as `opt_hellinger2`, produced the paper's Figure 1 on 26 July 2018):
/// `gen_betaln(v) = Σ ln Γ(v_i) / ln(Σ v)` and
/// `sqrt(1 − exp(gen_betaln((a1 + a2)/2) − (gen_betaln(a1) + gen_betaln(a2))/2))`.
///
/// `ln B(v)` is `Σ ln Γ(v_i) − ln Γ(Σ v)`; `gen_betaln` divides by `ln(Σ v)` instead of
/// subtracting `ln Γ(Σ v)`, so this is **not** the Hellinger distance. For equal totals `T` it
/// is [`DistanceMeasure::AuthorsGenBetaln`]: `sqrt(1 − e^{la / ln T})`.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::{authors_gen_betaln_distance, hellinger_dirichlet};
/// # fn main() -> dp_mcmc::Result<()> {
/// let (a, b) = ([31.0, 271.0], [35.0, 267.0]);
/// let theirs = authors_gen_betaln_distance(&a, &b)?;
/// assert!(theirs < 0.5 * hellinger_dirichlet(&a, &b)?);
/// assert!(authors_gen_betaln_distance(&[1.0, 1.0], &[1.0, 1.0, 1.0]).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`log_affinity_dirichlet`], and totals `≤ 1` (where `ln(Σ v) ≤ 0`), named `alpha1` or
/// `alpha2`. With different totals the exponent can be positive (their code then fails in
/// `math.sqrt`); we return 0 there instead.
pub fn authors_gen_betaln_distance(a1: &[f64], a2: &[f64]) -> Result<f64> {
    check_params("alpha1", a1)?;
    check_params("alpha2", a2)?;
    check::len("alpha2", a2.len(), a1.len())?;
    for (name, a) in [("alpha1", a1), ("alpha2", a2)] {
        let t: f64 = a.iter().sum();
        if t <= 1.0 {
            return Err(Error::invalid(
                name,
                format!("{a:?}"),
                "must sum to more than 1 (gen_betaln divides by ln of the sum)",
            ));
        }
    }
    let gen_betaln =
        |v: &[f64]| v.iter().map(|&x| ln_gamma(x)).sum::<f64>() / v.iter().sum::<f64>().ln();
    let mid: Vec<f64> = a1.iter().zip(a2).map(|(x, y)| 0.5 * (x + y)).collect();
    let z = gen_betaln(&mid) - 0.5 * (gen_betaln(a1) + gen_betaln(a2));
    Ok(hellinger_from_log_affinity(z))
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
    fn authors_measure_is_their_function_at_equal_totals() {
        // Their `opt_hellinger`, transcribed independently of `from_log_affinity`.
        for (a, b) in [
            (vec![4.0, 2.0], vec![5.0, 1.0]),
            (vec![31.0, 271.0], vec![35.0, 267.0]),
            (vec![6.0, 6.0, 6.0], vec![4.0, 9.0, 5.0]),
        ] {
            let t: f64 = a.iter().sum();
            let la = log_affinity_dirichlet(&a, &b).unwrap();
            let via_la = DistanceMeasure::AuthorsGenBetaln.from_log_affinity(la, t);
            let direct = authors_gen_betaln_distance(&a, &b).unwrap();
            assert!((via_la - direct).abs() < 1e-12, "{via_la} {direct}");
            // Not the Hellinger distance: strictly smaller once ln T > 1.
            assert!(direct < hellinger_dirichlet(&a, &b).unwrap());
        }
        assert_eq!(
            DistanceMeasure::Hellinger.from_log_affinity(-0.5, 10.0),
            hellinger_from_log_affinity(-0.5)
        );
    }

    #[test]
    fn errors() {
        assert!(hellinger_dirichlet(&[1.0, 2.0], &[1.0, 2.0, 3.0]).is_err());
        assert!(ln_beta(&[1.0]).is_err());
        assert!((ln_beta(&[1.0, 1.0]).unwrap()).abs() < 1e-15);
    }
}
