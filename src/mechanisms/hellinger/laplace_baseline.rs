//! The Laplace baseline of Section 3 (Zhang et al.; Xiao and Xiong) with the consistency
//! post-processing of Section 5.
//!
//! # Ambiguities and choices
//! * Beta-Binomial (k = 2): exactly the paper: `Δα~ = Δα + Lap(2/ε)`, released as
//!   `(α + Δα~, β + n − Δα~)`. The paper calibrates to the ℓ1 sensitivity 2 of the *pair*,
//!   although `Δα` alone has sensitivity 1; we keep the paper's 2/ε (it is what its figures
//!   compare against). Consistency: `Δα~` is clamped to `[0, n]` ("truncate so that they sum up
//!   to n"), so both parameters stay `≥` the prior's.
//! * Dirichlet-Multinomial (k ≥ 3): the paper says only "extends similarly". We add `Lap(2/ε)` to
//!   every count (replace-one changes the count vector by 2 in ℓ1, so this is ε-DP) and make
//!   the result consistent by the Euclidean projection onto `{x ≥ 0, Σ x = n}` (Duchi et al.
//!   2008): subtract a common threshold and truncate at 0, which is the paper's "truncate them so
//!   that they sum up to n" and also handles sums below n. The released counts stay real-valued
//!   (Dirichlet parameters need not be integers).

use rand::Rng;
use statrs::function::gamma::ln_gamma;

use crate::error::{Error, Result, check};
use crate::mechanisms::hellinger::distance::{hellinger_dirichlet, hellinger_from_log_affinity};
use crate::mechanisms::hellinger::model::DirichletMultinomial;
use crate::mechanisms::laplace::sample_laplace;

/// Euclidean projection of `x` onto `{y ≥ 0, Σ y = total}` (`total ≥ 0`).
pub fn project_to_simplex(x: &[f64], total: f64) -> Vec<f64> {
    let mut u = x.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let mut cum = 0.0;
    let mut tau = 0.0;
    for (j, &v) in u.iter().enumerate() {
        cum += v;
        let t = (cum - total) / (j + 1) as f64;
        if v - t > 0.0 {
            tau = t;
        }
    }
    x.iter().map(|&v| (v - tau).max(0.0)).collect()
}

/// The Laplace baseline for the Dirichlet-Multinomial (k = 2: Beta-Binomial) model.
///
/// # Privacy
/// ε-DP (δ = 0): the Laplace mechanism with ℓ1 sensitivity 2 (slides' theorem), followed by
/// post-processing.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceBaseline {
    model: DirichletMultinomial,
    epsilon: f64,
}

/// One posterior released by the Laplace baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceRelease {
    /// The consistent noisy counts (non-negative, summing to n).
    pub counts: Vec<f64>,
    /// The released posterior `α + counts`.
    pub posterior: Vec<f64>,
    /// Hellinger distance to the true posterior.
    pub error: f64,
}

impl LaplaceBaseline {
    /// The baseline for `model` at `epsilon`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::{DirichletMultinomial, LaplaceBaseline};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let b = LaplaceBaseline::new(DirichletMultinomial::beta_binomial(1.0, 1.0)?, 0.8)?;
    /// let out = b.release(&[30, 270], &mut dp_mcmc::rng::chain_rng(0, 0))?;
    /// assert!((out.counts.iter().sum::<f64>() - 300.0).abs() < 1e-9);
    /// let model = DirichletMultinomial::beta_binomial(1.0, 1.0)?;
    /// assert!(LaplaceBaseline::new(model, 0.0).is_err()); // names `epsilon`
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// `epsilon ≤ 0`.
    pub fn new(model: DirichletMultinomial, epsilon: f64) -> Result<Self> {
        check::positive("epsilon", epsilon)?;
        Ok(Self { model, epsilon })
    }

    /// The noise scale `2/ε`.
    pub fn scale(&self) -> f64 {
        2.0 / self.epsilon
    }

    /// The model.
    pub fn model(&self) -> &DirichletMultinomial {
        &self.model
    }

    /// Release one private posterior for the data set `counts`.
    ///
    /// # Errors
    /// Wrong number of categories or `n = 0`.
    pub fn release(&self, counts: &[u64], rng: &mut impl Rng) -> Result<LaplaceRelease> {
        check::len("counts", counts.len(), self.model.k())?;
        let n = super::model::total(counts)?;
        if n == 0 {
            return Err(Error::invalid(
                "counts",
                format!("{counts:?}"),
                "must sum to at least 1 row",
            ));
        }
        let nf = n as f64;
        let noisy = if counts.len() == 2 {
            let a = (counts[0] as f64 + sample_laplace(self.scale(), rng)).clamp(0.0, nf);
            vec![a, nf - a]
        } else {
            let x: Vec<f64> = counts
                .iter()
                .map(|&c| c as f64 + sample_laplace(self.scale(), rng))
                .collect();
            project_to_simplex(&x, nf)
        };
        let truth = self.model.posterior(counts)?;
        let posterior: Vec<f64> = self
            .model
            .prior()
            .iter()
            .zip(&noisy)
            .map(|(a, c)| a + c)
            .collect();
        let error = hellinger_dirichlet(&truth, &posterior)?;
        Ok(LaplaceRelease {
            counts: noisy,
            posterior,
            error,
        })
    }

    /// Exact expected error `E[H]` for the Beta-Binomial case (k = 2), by quadrature:
    /// the clamping atoms at 0 and n plus composite Simpson on each side of the true count
    /// (the integrand has a kink there), each side truncated at 60 noise scales (tail mass
    /// `e^{−60}`).
    ///
    /// # Errors
    /// k ≠ 2, or `n = 0`.
    pub fn expected_error_beta(&self, counts: &[u64]) -> Result<f64> {
        check::len("counts (Beta-Binomial)", counts.len(), 2)?;
        let n = (counts[0] + counts[1]) as f64;
        if n == 0.0 {
            return Err(Error::invalid(
                "counts",
                format!("{counts:?}"),
                "must sum to at least 1 row",
            ));
        }
        let (a, b) = (self.model.prior()[0], self.model.prior()[1]);
        let c = counts[0] as f64;
        let s = self.scale();
        let own = 0.5 * (ln_gamma(a + c) + ln_gamma(b + n - c));
        // Both posteriors have total a + b + n: the ln Γ(total) terms cancel.
        let h = |x: f64| {
            let la = ln_gamma(a + 0.5 * (c + x)) + ln_gamma(b + n - 0.5 * (c + x))
                - own
                - 0.5 * (ln_gamma(a + x) + ln_gamma(b + n - x));
            hellinger_from_log_affinity(la)
        };
        let dens = |z: f64| (-z.abs() / s).exp() / (2.0 * s);
        let mut e = 0.5 * (-c / s).exp() * h(0.0) + 0.5 * (-(n - c) / s).exp() * h(n);
        for (lo, hi) in [((-c).max(-60.0 * s), 0.0), (0.0, (n - c).min(60.0 * s))] {
            if hi > lo {
                let m = 4000;
                let step = (hi - lo) / m as f64;
                let mut acc = 0.0;
                for i in 0..=m {
                    let z = lo + i as f64 * step;
                    let wgt = if i == 0 || i == m {
                        1.0
                    } else if i % 2 == 1 {
                        4.0
                    } else {
                        2.0
                    };
                    acc += wgt * dens(z) * h(c + z);
                }
                e += acc * step / 3.0;
            }
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_is_on_simplex() {
        let p = project_to_simplex(&[5.0, -2.0, 9.0], 10.0);
        assert!((p.iter().sum::<f64>() - 10.0).abs() < 1e-12);
        assert!(p.iter().all(|&v| v >= 0.0));
        assert_eq!(p, vec![3.0, 0.0, 7.0]);
        // Already consistent: unchanged.
        assert_eq!(
            project_to_simplex(&[1.0, 2.0, 3.0], 6.0),
            vec![1.0, 2.0, 3.0]
        );
        // Sum below n: raised uniformly.
        assert_eq!(project_to_simplex(&[1.0, 2.0], 5.0), vec![2.0, 3.0]);
    }

    #[test]
    fn expected_error_matches_monte_carlo() {
        // 20 000 draws: the error's sd is below 0.1, so the MC mean's sd is < 7e-4; 5e-3 is
        // > 7 sd.
        let b = LaplaceBaseline::new(DirichletMultinomial::beta_binomial(1.0, 1.0).unwrap(), 0.8)
            .unwrap();
        let counts = [10, 90];
        let exact = b.expected_error_beta(&counts).unwrap();
        let mut rng = crate::rng::chain_rng(5, 0);
        let mc: f64 = (0..20_000)
            .map(|_| b.release(&counts, &mut rng).unwrap().error)
            .sum::<f64>()
            / 20_000.0;
        assert!((exact - mc).abs() < 5e-3, "exact {exact} mc {mc}");
    }
}
