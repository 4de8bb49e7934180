//! The noise-aware Newton path of a library [`Model`] with per-row gradients: the same releases
//! and posterior as the four `fit` models, with the sensitivities set by **declared per-row
//! bounds** (clipping) instead of covariate bounds.
//!
//! At the public point `θ_k` each round releases
//!
//! - `Σ_j clip_C(g_j) + N(0, (2C·z)² I)`: the per-row gradients `g_j` clipped to `‖g_j‖ ≤ C`
//!   (one row substituted moves the sum by at most `2C`);
//! - `svec(Σ_j clip_{C_I}(I_j)) + N(0, (2C_I·z)² I)`: the per-row information `I_j = −∂g_j/∂θ`
//!   (forward differences of the per-row gradients, symmetrised) clipped to `‖I_j‖_F ≤ C_I`
//!   (`svec`'s Euclidean norm is the Frobenius norm; `I_j` need not be positive semi-definite,
//!   hence `2C_I`).
//!
//! With isotropic clipping, no shape improves on the identity (a shape `A` costs `‖A‖₂` in
//! sensitivity and `(AᵀA)⁻¹` in noise), so both releases are unshaped. A row whose gradient or
//! information is not finite contributes 0 (inside both clip balls, so the sensitivities hold).
//! The model's prior enters the posterior through its Gaussian approximation at the prior's
//! mode (public: no data), exact for a Gaussian prior; the steps and the posterior use it.
//!
//! Clipping biases the released sums when it binds: the posterior is then that of the clipped
//! likelihood. Declare bounds that the rows near the mode do not reach (a public Lipschitz
//! bound of the model is used for `C` when it has one).
use nalgebra::{DMatrix, DVector};

use super::coordinates::GaussianPrior;
use super::linalg::{svec, unsvec};
use super::releases::{Path, Release, Round, noise_multiplier, noisy, project_pd};
use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::pass::{GradBuffer, clipped_hessian_sum};

/// Largest whitened length of a Newton step (`‖L'(θ_{k+1} − θ_k)‖` with `LLᵀ` the curvature):
/// a step from a noisy first round far from the mode stays in a region the next round can
/// correct.
const TRUST: f64 = 10.0;

/// Declared per-row bounds of a library model's noise-aware fit (public: chosen without
/// looking at the data).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowBounds {
    /// `C`: each row's log-likelihood gradient is clipped to Euclidean norm `C`.
    pub gradient: f64,
    /// `C_I`: each row's information (minus the Hessian of its log-likelihood) is clipped to
    /// Frobenius norm `C_I`.
    pub information: f64,
}

/// Finite-difference step of coordinate `i` at `theta`.
fn fd_step(theta: &[f64], i: usize) -> f64 {
    1e-5 * theta[i].abs().max(1.0)
}

/// The Gaussian approximation of the model's prior at its mode (Newton's method on
/// `ln p(θ)` from 0, the Hessian by finite differences of its gradient).
///
/// # Errors
/// A prior whose curvature is not negative definite along the way (an improper or flat
/// prior in some direction): the noise-aware posterior needs a proper prior.
pub(crate) fn gaussian_prior<M: Model + ?Sized>(model: &M) -> Result<GaussianPrior> {
    let d = model.dim();
    let mut theta = vec![0.0; d];
    let improper = || {
        Error::Model(
            "the noise-aware method needs a proper prior whose log-density has a negative \
             definite Hessian at its mode (give every parameter a Gaussian or similar prior)"
                .into(),
        )
    };
    for _ in 0..100 {
        let mut g = vec![0.0; d];
        model.grad_log_prior(&theta, &mut g);
        let mut prec = DMatrix::zeros(d, d);
        for i in 0..d {
            let h = fd_step(&theta, i);
            let mut t = theta.clone();
            t[i] += h;
            let mut gi = vec![0.0; d];
            model.grad_log_prior(&t, &mut gi);
            for a in 0..d {
                prec[(a, i)] = -(gi[a] - g[a]) / h;
            }
        }
        let prec = (&prec + prec.transpose()) * 0.5;
        let chol = prec.clone().cholesky().ok_or_else(improper)?;
        let step = chol.solve(&DVector::from_vec(g));
        for (t, s) in theta.iter_mut().zip(step.iter()) {
            *t += s;
        }
        if !theta.iter().all(|t| t.is_finite()) {
            return Err(improper());
        }
        if step.amax() < 1e-9 * (1.0 + theta.iter().fold(0.0f64, |m, t| m.max(t.abs()))) {
            let cov = chol.inverse();
            return Ok(GaussianPrior {
                mean: theta,
                cov,
                prec,
                student_df: None,
            });
        }
    }
    Err(improper())
}

/// `Σ_j clip_C(g_j(θ))` and `Σ_j clip_{C_I}(I_j(θ))` over the model's rows: the samplers'
/// clipped gradient pass and clipped-curvature pass (`I_j = −H_j`), the same bits for every
/// thread count.
pub(crate) fn clipped_sums<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    bounds: RowBounds,
) -> Result<(Vec<f64>, DMatrix<f64>)> {
    let mut grads = GradBuffer::new(model);
    grads.set_threads(rayon::current_num_threads());
    let mut grad = vec![0.0; model.dim()];
    grads.clipped_grad_sum(model, theta, bounds.gradient, &mut grad)?;
    let info = -clipped_hessian_sum(model, theta, bounds.information)?;
    Ok((grad, info))
}

/// One round of a library model's releases at the public point `theta`: the information
/// `svec(Σ_j clip_{C_I}(I_j))` with noise multiplier `z_info` and the score `Σ_j clip_C(g_j)`
/// with `z_score`, each with Gaussian noise of standard deviation `sensitivity × z`, the
/// sensitivities `2C_I` and `2C` (substitution).
///
/// ```
/// use dp_mcmc::models::testing::IsotropicGaussian;
/// use dp_mcmc::noise_aware::{RowBounds, release_clipped};
/// let model = IsotropicGaussian::generate(1_000, 2, 1);
/// let bounds = RowBounds { gradient: 5.0, information: 1.5 };
/// let mut rng = dp_mcmc::rng::chain_rng(1, 0);
/// let (info, score) = release_clipped(&model, &[0.0, 0.5], bounds, 2.0, 2.0, &mut rng)?;
/// assert_eq!((info.values.len(), score.values.len()), (3, 2));
/// assert_eq!(score.noise_sd, 2.0 * 5.0 * 2.0);
/// // a noise multiplier must be positive
/// assert!(release_clipped(&model, &[0.0, 0.5], bounds, 0.0, 2.0, &mut rng).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
///
/// # Errors
/// A noise multiplier or bound that is not positive and finite; a model whose per-row
/// gradients fail.
pub fn release_clipped<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    bounds: RowBounds,
    z_info: f64,
    z_score: f64,
    rng: &mut ChainRng,
) -> Result<(Release, Release)> {
    let z_info = check::positive("noise multiplier", z_info)?;
    let z_score = check::positive("noise multiplier", z_score)?;
    check::positive("row_bounds gradient", bounds.gradient)?;
    check::positive("row_bounds information", bounds.information)?;
    let (grad, info) = clipped_sums(model, theta, bounds)?;
    let info = noisy(
        "library model information release",
        svec(&info),
        2.0 * bounds.information,
        z_info,
        rng,
    )?;
    let score = noisy(
        "library model score release",
        grad,
        2.0 * bounds.gradient,
        z_score,
        rng,
    )?;
    Ok((info, score))
}

/// The releases of a library model's Newton path: `schedule` gives each round's `μ` shares of
/// `mu_total`, the path starts at the prior's mode. The rounds' points are in the model's
/// coordinates.
pub(crate) fn model_path<M: Model + ?Sized>(
    model: &M,
    bounds: RowBounds,
    prior: &GaussianPrior,
    mu_total: f64,
    schedule: &[(f64, f64)],
    rng: &mut ChainRng,
) -> Result<Path> {
    let d = model.dim();
    let eye = DMatrix::<f64>::identity(d, d);
    let mut theta = prior.mean.clone();
    let mut rounds = Vec::with_capacity(schedule.len());
    let mut final_curv = prior.prec.clone();
    for &(share_i, share_g) in schedule {
        let z_i = noise_multiplier(share_i * mu_total)?;
        let z_g = noise_multiplier(share_g * mu_total)?;
        let (info_rel, score_rel) = release_clipped(model, &theta, bounds, z_i, z_g, rng)?;
        let round = Round::new(&theta, &eye, info_rel, z_i, &eye, score_rel, z_g)?;
        let curv = project_pd(
            &unsvec(&round.info_release, d),
            &eye,
            round.info_noise_sd * (d as f64).sqrt(),
        ) + &prior.prec;
        let rel_g = round.score_release.clone();
        rounds.push(round);
        // post-processing: the Newton step on the log posterior, within the trust region
        let mut prior_grad = vec![0.0; d];
        model.grad_log_prior(&theta, &mut prior_grad);
        let rhs = DVector::from_vec(rel_g) + DVector::from_vec(prior_grad);
        let chol = curv.clone().cholesky().ok_or_else(|| Error::Numerical {
            what: "noise-aware Newton path",
            reason: "the released curvature is not positive definite after flooring".into(),
        })?;
        let mut step = chol.solve(&rhs);
        let length = (step.transpose() * &curv * &step)[(0, 0)].sqrt();
        if length > TRUST {
            step *= TRUST / length;
        }
        for (t, s) in theta.iter_mut().zip(step.iter()) {
            *t += s;
        }
        final_curv = curv;
    }
    Ok(Path {
        rounds,
        final_theta: theta,
        final_curv,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;
    use crate::rng::chain_rng;

    const BOUNDS: RowBounds = RowBounds {
        gradient: 5.0,
        information: 1.5,
    };

    /// Every release's noise is the Gaussian its ledger part is charged for: over many paths,
    /// (release − exact clipped sum) / noise sd is N(0, 1), and the noise sd is the
    /// sensitivity (twice the declared bound) times the noise multiplier.
    #[test]
    fn releases_add_the_noise_they_are_charged_for() {
        let model = IsotropicGaussian::generate(500, 2, 1);
        let prior = gaussian_prior(&model).unwrap();
        let (mut score, mut info) = (Vec::new(), Vec::new());
        for seed in 0..150 {
            let mut rng = chain_rng(seed, 3);
            let path = model_path(
                &model,
                BOUNDS,
                &prior,
                0.5,
                &super::super::SCHEDULE,
                &mut rng,
            )
            .unwrap();
            for round in &path.rounds {
                assert_eq!(round.score_sensitivity, 2.0 * BOUNDS.gradient);
                assert_eq!(round.info_sensitivity, 2.0 * BOUNDS.information);
                let sd_g = round.score_sensitivity * round.score_noise_multiplier;
                let sd_i = round.info_sensitivity * round.info_noise_multiplier;
                assert!((round.score_noise_sd - sd_g).abs() <= 1e-12 * sd_g);
                assert!((round.info_noise_sd - sd_i).abs() <= 1e-12 * sd_i);
                let (g, h) = clipped_sums(&model, &round.theta, BOUNDS).unwrap();
                for (r, e) in round.score_release.iter().zip(&g) {
                    score.push((r - e) / round.score_noise_sd);
                }
                for (r, e) in round.info_release.iter().zip(svec(&h)) {
                    info.push((r - e) / round.info_noise_sd);
                }
            }
        }
        for (values, what) in [(score, "score"), (info, "information")] {
            let n = values.len() as f64;
            let mean = values.iter().sum::<f64>() / n;
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            assert!(mean.abs() < 4.0 / n.sqrt(), "{what}: mean {mean}");
            assert!(
                (var - 1.0).abs() < 4.0 * (2.0 / n).sqrt(),
                "{what}: var {var}"
            );
        }
    }

    /// A model whose rows' gradient and information vary freely: row `j` has log-likelihood
    /// `−½ s_j (θ·1 − x_j)²` (information `s_j 11ᵀ`), and one row may be non-finite.
    struct Rows {
        x: Vec<f64>,
        s: Vec<f64>,
    }

    impl Model for Rows {
        fn dim(&self) -> usize {
            2
        }
        fn n_rows(&self) -> usize {
            self.x.len()
        }
        fn log_prior(&self, theta: &[f64]) -> f64 {
            -0.5 * theta.iter().map(|t| t * t).sum::<f64>()
        }
        fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
            for (g, t) in grad.iter_mut().zip(theta) {
                *g = -t;
            }
        }
        fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
            -0.5 * self.s[row] * (theta[0] + theta[1] - self.x[row]).powi(2)
        }
        fn has_gradient(&self) -> bool {
            true
        }
        fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
            let r = -self.s[row] * (theta[0] + theta[1] - self.x[row]);
            grad.fill(r);
            Ok(())
        }
    }

    /// Substituting one row, however extreme, moves the clipped sums by at most the
    /// sensitivities; a row whose terms are not finite contributes nothing (one row cannot
    /// decide the outcome).
    #[test]
    fn a_substitution_moves_the_clipped_sums_by_at_most_the_sensitivities() {
        let theta = [0.3, -0.1];
        let base = Rows {
            x: vec![0.5, -1.0, 2.0, 0.1],
            s: vec![1.0, 2.0, 0.5, 1.0],
        };
        let (g0, h0) = clipped_sums(&base, &theta, BOUNDS).unwrap();
        for (x, s) in [
            (1e6, 1.0),
            (-1e6, 1e6),
            (0.0, 1e-9),
            (f64::NAN, 1.0),
            (1.0, f64::INFINITY),
        ] {
            let mut other = Rows {
                x: base.x.clone(),
                s: base.s.clone(),
            };
            other.x[1] = x;
            other.s[1] = s;
            let (g1, h1) = clipped_sums(&other, &theta, BOUNDS).unwrap();
            assert!(g1.iter().chain(h1.iter()).all(|v| v.is_finite()), "{x} {s}");
            let dg = g0
                .iter()
                .zip(&g1)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(dg <= 2.0 * BOUNDS.gradient * (1.0 + 1e-12), "{x} {s}: {dg}");
            let dh = (&h0 - &h1).norm();
            assert!(
                dh <= 2.0 * BOUNDS.information * (1.0 + 1e-12),
                "{x} {s}: {dh}"
            );
        }
    }

    /// The prior's Gaussian approximation is exact for a Gaussian prior.
    #[test]
    fn gaussian_prior_of_a_gaussian_prior_is_exact() {
        let model = IsotropicGaussian::generate(10, 3, 2);
        let prior = gaussian_prior(&model).unwrap();
        assert!(prior.mean.iter().all(|m| m.abs() < 1e-9));
        // `IsotropicGaussian`'s prior is N(0, 100 I)
        let var = 100.0;
        for i in 0..3 {
            assert!(
                (prior.cov[(i, i)] - var).abs() < 1e-5 * var,
                "{}",
                prior.cov[(i, i)]
            );
        }
    }
}
