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
//!
//! # The authors' code
//! [`LaplaceVariant::AuthorsCode`] is the baseline the paper's figures were computed with
//! (`_laplace_noize` in `dp_bayesian_inference_model_with_dirichlet_prior_epsilon_study.py` of
//! the public repository `JiawenUB/DP-Bayesian-Inference`, unchanged from June to late
//! July 2018): integer counts, floored noise on the first k − 1 counts, each truncated to what is
//! left of n, and the remainder to the last count (see [`authors_floor_remainder`]). Its last
//! count carries the noise of all the others, and flooring biases each noisy count down by
//! about ½, so for k = 3 it is clearly worse than the projection: this is what makes the
//! exponential mechanism win in the paper's Figure 3.

use rand::Rng;
use statrs::function::gamma::ln_gamma;

use crate::error::{Error, Result, check};
use crate::mechanisms::hellinger::distance::{DistanceMeasure, log_affinity_dirichlet};
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

/// How the Laplace baseline adds noise and makes the counts consistent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaplaceVariant {
    /// Ours (default): `Lap(2/ε)` on the count(s), real-valued; k = 2: clamp `Δα~` to
    /// `[0, n]`; k ≥ 3: noise on every count and the Euclidean projection onto
    /// `{x ≥ 0, Σ x = n}` (module docs).
    #[default]
    Continuous,
    /// The authors' code (module docs, [`authors_floor_remainder`]): floored `Lap(2/ε)` on the
    /// first k − 1 counts in turn, each truncated to `[0, what is left of n]`, and the remainder
    /// to the last count. Integer counts summing to n. For k = 2 it is `Δα~` = `Δα +
    /// ⌊Lap(2/ε)⌋` clamped to `[0, n]`.
    AuthorsCode,
}

/// The authors' consistency step, given the raw Laplace draws (`noise[i]` for count `i`; only
/// as many are used as the loop reaches): with `rest = n`, for `i = 0..k−1`,
/// `t = ⌊noise[i]⌋`; if `t < −c_i` release 0; else if `c_i + t > rest` release `rest`, the
/// counts up to k − 2 get 0 and the loop stops; else release `c_i + t` and subtract it from
/// `rest`. The last count is `rest`. Transcribed from `_laplace_noize` (module docs).
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::authors_floor_remainder;
/// # fn main() -> dp_mcmc::Result<()> {
/// // ⌊−0.3⌋ = −1, ⌊2.7⌋ = 2: (5 − 1, 5 + 2) and the remainder 15 − 4 − 7 = 4.
/// assert_eq!(authors_floor_remainder(&[5, 5, 5], &[-0.3, 2.7])?, vec![4, 7, 4]);
/// assert!(authors_floor_remainder(&[5, 5, 5], &[-0.3]).is_err()); // names `noise`
/// # Ok(()) }
/// ```
///
/// # Errors
/// Fewer than two counts, `noise` not of length `k − 1`, or a noise value that is not finite.
pub fn authors_floor_remainder(counts: &[u64], noise: &[f64]) -> Result<Vec<u64>> {
    let k = counts.len();
    if k < 2 {
        return Err(Error::invalid(
            "counts",
            format!("{counts:?}"),
            "needs at least two categories",
        ));
    }
    check::len("noise", noise.len(), k - 1)?;
    for &y in noise {
        check::finite("noise", y)?;
    }
    let mut rest: u64 = counts.iter().sum();
    let mut out = vec![0u64; k];
    for i in 0..k.saturating_sub(1) {
        let t = noise[i].floor();
        let c = counts[i] as f64;
        if t < -c {
            out[i] = 0;
        } else if c + t > rest as f64 {
            out[i] = rest;
            rest = 0;
            break;
        } else {
            let v = (c + t) as u64;
            out[i] = v;
            rest -= v;
        }
    }
    out[k - 1] = rest;
    Ok(out)
}

/// The Laplace baseline for the Dirichlet-Multinomial (k = 2: Beta-Binomial) model.
///
/// # Privacy
/// ε-DP (δ = 0): the Laplace mechanism with ℓ1 sensitivity 2 (slides' theorem), followed by
/// post-processing. The same holds for [`LaplaceVariant::AuthorsCode`]: `c_i + ⌊Y_i⌋ =
/// ⌊c_i + Y_i⌋` for integer counts, so it post-processes `Lap(2/ε)` noise on the first k − 1
/// counts, whose ℓ1 sensitivity is at most 2.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceBaseline {
    model: DirichletMultinomial,
    epsilon: f64,
    variant: LaplaceVariant,
    error_measure: DistanceMeasure,
}

/// One posterior released by the Laplace baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceRelease {
    /// The consistent noisy counts (non-negative, summing to n).
    pub counts: Vec<f64>,
    /// The released posterior `α + counts`.
    pub posterior: Vec<f64>,
    /// Distance to the true posterior, in the baseline's error measure (Hellinger by default).
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
        Ok(Self {
            model,
            epsilon,
            variant: LaplaceVariant::Continuous,
            error_measure: DistanceMeasure::Hellinger,
        })
    }

    /// Choose the noise and consistency step (default [`LaplaceVariant::Continuous`]).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::{DirichletMultinomial, LaplaceBaseline, LaplaceVariant};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let b = LaplaceBaseline::new(DirichletMultinomial::balanced(3, 1.0)?, 0.8)?
    ///     .variant(LaplaceVariant::AuthorsCode);
    /// let out = b.release(&[5, 5, 5], &mut dp_mcmc::rng::chain_rng(0, 0))?;
    /// assert_eq!(out.counts.iter().sum::<f64>(), 15.0);
    /// assert!(out.counts.iter().all(|c| c.fract() == 0.0));
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn variant(mut self, variant: LaplaceVariant) -> Self {
        self.variant = variant;
        self
    }

    /// Choose what [`LaplaceRelease::error`] and the expected errors measure (default the
    /// Hellinger distance).
    #[must_use]
    pub fn error_measure(mut self, measure: DistanceMeasure) -> Self {
        self.error_measure = measure;
        self
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
        let noisy = if self.variant == LaplaceVariant::AuthorsCode {
            // Their loop draws only until it stops; drawing all k − 1 up front changes which
            // stream values are used, not the distribution.
            let noise: Vec<f64> = (1..counts.len())
                .map(|_| sample_laplace(self.scale(), rng))
                .collect();
            authors_floor_remainder(counts, &noise)?
                .into_iter()
                .map(|c| c as f64)
                .collect()
        } else if counts.len() == 2 {
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
        let la = log_affinity_dirichlet(&truth, &posterior)?;
        let error = self.error_measure.from_log_affinity(la, truth.iter().sum());
        Ok(LaplaceRelease {
            counts: noisy,
            posterior,
            error,
        })
    }

    /// Exact expected error `E[H]` for the Beta-Binomial case (k = 2), in the baseline's error
    /// measure. [`LaplaceVariant::Continuous`]: by quadrature, the clamping atoms at 0 and n
    /// plus composite Simpson on each side of the true count (the integrand has a kink there),
    /// each side truncated at 60 noise scales (tail mass `e^{−60}`).
    /// [`LaplaceVariant::AuthorsCode`]: a finite sum over the released count `x ∈ {0, …, n}`
    /// with `P(x) = P(⌊Y⌋ = x − c)` inside and the clamped tails at 0 and n.
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
        let total = a + b + n;
        // Both posteriors have total a + b + n: the ln Γ(total) terms cancel.
        let h = |x: f64| {
            let la = ln_gamma(a + 0.5 * (c + x)) + ln_gamma(b + n - 0.5 * (c + x))
                - own
                - 0.5 * (ln_gamma(a + x) + ln_gamma(b + n - x));
            self.error_measure.from_log_affinity(la, total)
        };
        if self.variant == LaplaceVariant::AuthorsCode {
            // P(Y < z) for Y ~ Lap(s).
            let cdf = |z: f64| {
                if z < 0.0 {
                    0.5 * (z / s).exp()
                } else {
                    1.0 - 0.5 * (-z / s).exp()
                }
            };
            // x = 0 when ⌊Y⌋ ≤ −c, i.e. Y < 1 − c; x = n when ⌊Y⌋ ≥ n − c, i.e. Y ≥ n − c.
            let mut e = cdf(1.0 - c) * h(0.0) + (1.0 - cdf(n - c)) * h(n);
            for x in 1..counts[0] + counts[1] {
                let z = x as f64 - c;
                let p = cdf(z + 1.0) - cdf(z);
                if p > 0.0 {
                    e += p * h(x as f64);
                }
            }
            return Ok(e);
        }
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
    fn authors_remainder_is_their_loop() {
        // Worked by hand from `_laplace_noize` (module docs).
        // Inside: ⌊−0.3⌋ = −1, ⌊2.7⌋ = 2 → 4, 7, remainder 4.
        assert_eq!(
            authors_floor_remainder(&[5, 5, 5], &[-0.3, 2.7]).unwrap(),
            vec![4, 7, 4]
        );
        // ⌊−3.5⌋ = −4 < −1 → 0; then 5 + ⌊0.2⌋ = 5 ≤ 15 → 5; remainder 10.
        assert_eq!(
            authors_floor_remainder(&[1, 5, 9], &[-3.5, 0.2]).unwrap(),
            vec![0, 5, 10]
        );
        // c + t = 0 exactly takes the third branch (also 0).
        assert_eq!(
            authors_floor_remainder(&[1, 5, 9], &[-1.0, 0.0]).unwrap(),
            vec![0, 5, 10]
        );
        // 10 + 7 > 15 → all of n to the first count, the loop stops (the second draw unused).
        assert_eq!(
            authors_floor_remainder(&[10, 2, 3], &[7.2, -100.0]).unwrap(),
            vec![15, 0, 0]
        );
        // Second count exceeds what is left: 12 (rest 3), then 2 + 2 > 3 → 3, remainder 0.
        assert_eq!(
            authors_floor_remainder(&[10, 2, 3], &[2.5, 2.1]).unwrap(),
            vec![12, 3, 0]
        );
        // Exactly what is left takes the third branch: 2 + 1 = 3 → 3, remainder 0.
        assert_eq!(
            authors_floor_remainder(&[10, 2, 3], &[2.5, 1.9]).unwrap(),
            vec![12, 3, 0]
        );
        assert!(authors_floor_remainder(&[10], &[]).is_err());
        assert!(authors_floor_remainder(&[1, 2], &[f64::NAN]).is_err());
        // k = 2: clamp of c + ⌊Y⌋ to [0, n].
        assert_eq!(
            authors_floor_remainder(&[30, 270], &[-0.5]).unwrap(),
            vec![29, 271]
        );
        assert_eq!(
            authors_floor_remainder(&[30, 270], &[-31.0]).unwrap(),
            vec![0, 300]
        );
        assert_eq!(
            authors_floor_remainder(&[30, 270], &[271.0]).unwrap(),
            vec![300, 0]
        );
    }

    #[test]
    fn authors_remainder_sums_to_n() {
        // Any noise, including ±large: integer counts, non-negative, summing to n.
        let mut rng = crate::rng::chain_rng(11, 0);
        for counts in [
            vec![5u64, 5, 5],
            vec![0, 0, 7],
            vec![30, 270],
            vec![1, 2, 3, 4],
        ] {
            let n: u64 = counts.iter().sum();
            for scale in [0.5, 2.5, 50.0] {
                for _ in 0..500 {
                    let noise: Vec<f64> = (1..counts.len())
                        .map(|_| sample_laplace(scale, &mut rng))
                        .collect();
                    let out = authors_floor_remainder(&counts, &noise).unwrap();
                    assert_eq!(out.iter().sum::<u64>(), n, "{counts:?} {noise:?} {out:?}");
                }
            }
        }
    }

    #[test]
    fn authors_expected_error_matches_monte_carlo() {
        // As below: 20 000 draws, MC sd < 7e-4, tolerance 5e-3 (> 7 sd); both measures.
        for measure in [
            DistanceMeasure::Hellinger,
            DistanceMeasure::AuthorsGenBetaln,
        ] {
            let b =
                LaplaceBaseline::new(DirichletMultinomial::beta_binomial(1.0, 1.0).unwrap(), 0.8)
                    .unwrap()
                    .variant(LaplaceVariant::AuthorsCode)
                    .error_measure(measure);
            let counts = [10, 90];
            let exact = b.expected_error_beta(&counts).unwrap();
            let mut rng = crate::rng::chain_rng(6, 0);
            let mc: f64 = (0..20_000)
                .map(|_| b.release(&counts, &mut rng).unwrap().error)
                .sum::<f64>()
                / 20_000.0;
            assert!(
                (exact - mc).abs() < 5e-3,
                "{measure:?}: exact {exact} mc {mc}"
            );
        }
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
