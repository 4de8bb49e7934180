//! A DP initial point: a few rounds of noisy clipped Newton steps on the log posterior.
//!
//! Each round first sets two per-row clip bounds at its start point: `C` for the gradients
//! (the model's public bound, or a DP median of the per-row gradient norms, `clip.rs`) and
//! `C_H` for the per-row Hessians (a DP 0.9-quantile of their Frobenius norms). Bounds set far
//! from the mode are too large or too small near it, so they are set again every round. Each
//! step then releases, from the clipped per-row gradients `g_j` (`‖g_j‖ ≤ C`) and Hessians
//! `H_j` (`‖H_j‖_F ≤ C_H`, forward differences of the per-row gradients, symmetrised),
//!
//! - `G = Σ_j g_j + N(0, (2C·z)² I)`: one row substituted moves `Σ g_j` by at most `2C`;
//! - `H = Σ_j H_j + E`, `E` symmetric with `N(0, (2C_H·z)²)` entries on and above the diagonal:
//!   one row substituted moves the upper triangle of `Σ H_j` by at most `‖H_j − H_j'‖_F ≤ 2C_H`;
//!
//! two Gaussian mechanisms per step with noise multiplier `z` each (`H` costs `d + 1` gradient
//! passes; released once per round, a stale Hessian sent the steps off the curved bananas). The
//! update is post-processing: the
//! saddle-free Newton step `θ ← θ + |T·(−H) + P|⁻¹ (T·G + ∇ ln p(θ))`, with `T` the model's
//! tempering, `P` the prior's curvature (finite differences of the public prior gradient) and
//! `|A|` the matrix with the eigenvalues of `A` replaced by their absolute values, raised to the
//! noise's spectral scale `2√d·2C_H·z·T`, so the solve stays well-posed and a direction of
//! negative curvature is climbed, not descended. The outer product of the gradients (BHHH) would
//! need no Hessians, but overdispersed rows (counts, curved posteriors) make it far larger than
//! the curvature and its steps crawl.
//!
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::accounting::PrivacyEvent;
use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use nalgebra::{DMatrix, DVector};

use crate::samplers::pass::{GradBuffer, clipped_hessian_sum, hessian_norms};

/// How the initial point is computed: `rounds` rounds, each two clip bounds (gradient: public
/// or a DP quantile; Hessian: a DP quantile) and `steps_per_round` Newton steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct InitSettings {
    pub rounds: usize,
    pub steps_per_round: usize,
    /// Noise multiplier of each of a step's two releases (gradient sum, Hessian sum), but the
    /// last gradient.
    pub z_step: f64,
    /// Noise multiplier of the last step's gradient sum: near the mode the last step's
    /// gradient noise, `H⁻¹·noise`, is the initial point's error, so it gets a larger share.
    pub z_final: f64,
    /// The public per-row gradient bound, or `None` for a DP quantile each round.
    pub public_clip: Option<f64>,
    /// Quantile of the gradient norms, and noise multiplier of each count of a quantile.
    pub quantile: f64,
    pub z_quantile: f64,
}

/// Quantile of the per-row Hessian norms that clips them: clipping shrinks the curvature and
/// lengthens the step, so only the largest tenth is clipped.
const HESSIAN_QUANTILE: f64 = 0.9;

impl InitSettings {
    /// The privacy event of everything [`dp_initial_point`] releases, and the number of noisy
    /// statistics.
    pub(crate) fn event(&self) -> (PrivacyEvent, u64) {
        let releases = 2 * (self.rounds * self.steps_per_round) as u64;
        let quantiles = if self.public_clip.is_none() { 2 } else { 1 };
        let q = (quantiles * self.rounds) as u64 * u64::from(super::clip::QUERIES);
        let events = vec![
            PrivacyEvent::gaussian(self.z_step).repeat(releases - 1),
            PrivacyEvent::gaussian(self.z_final),
            PrivacyEvent::gaussian(self.z_quantile).repeat(q),
        ];
        (PrivacyEvent::compose(events), releases + q)
    }

    /// Noisy counts of the quantile searches.
    /// Settings spending `mu_steps` (Gaussian `μ`) on the steps: `final_share` of it on the
    /// last gradient, the rest equally on the other `2·rounds·steps_per_round − 1` releases.
    pub(crate) fn with_step_budget(mut self, mu_steps: f64, final_share: f64) -> Self {
        let others = (2 * self.rounds * self.steps_per_round - 1) as f64;
        self.z_step = (others / (2.0 * (1.0 - final_share) * mu_steps)).sqrt();
        self.z_final = (1.0 / (2.0 * final_share * mu_steps)).sqrt();
        self
    }

    pub(crate) fn quantile_queries(rounds: usize, public_clip: bool) -> u32 {
        let quantiles = if public_clip { 1 } else { 2 };
        (quantiles * rounds) as u32 * super::clip::QUERIES
    }
}

/// What the DP initial point computation did: the point and the settings that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitialPoint {
    /// The DP point (released).
    pub point: Vec<f64>,
    /// The public start the steps left from.
    pub from: Vec<f64>,
    /// Newton steps (each two Gaussian releases: gradient sum, Hessian sum).
    pub steps: usize,
    /// Per-row gradient clip bound `C` of each round (public, or a DP quantile at the round's
    /// start).
    pub clips: Vec<f64>,
    /// Per-row Hessian clip bound `C_H` of each round (a DP quantile).
    pub hessian_clips: Vec<f64>,
    /// Noise multiplier `z` of each release of a step.
    pub noise_multiplier: f64,
    /// Noise multiplier of the last gradient release (a larger share of the budget).
    #[serde(default)]
    pub final_noise_multiplier: f64,
    /// Standard deviations of the last step's Gaussian approximation, `diag(|T·(−H) + P|⁻¹)^½`
    /// (post-processing of released values): a public scale of the posterior.
    pub scale: Vec<f64>,
    /// The whole last-step Gaussian approximation's covariance `|T·(−H) + P|⁻¹` (row-major
    /// `d × d`, post-processing of released values): the affine map of a reparametrised run.
    #[serde(default)]
    pub covariance: Vec<f64>,
}

/// The initial point from the public point `from` (see the module docs); everything it
/// releases is [`InitSettings::event`].
///
/// # Errors
/// A model without gradients, non-positive settings, a model error.
pub(crate) fn dp_initial_point<M: Model + ?Sized>(
    model: &M,
    from: &[f64],
    s: &InitSettings,
    rng: &mut ChainRng,
) -> Result<InitialPoint> {
    if !model.has_gradient() {
        return Err(Error::Model(
            "a DP initial point needs per-row gradients; implement `grad_log_lik_row` (and \
             `has_gradient`) or give a public start point"
                .into(),
        ));
    }
    check::len("start", from.len(), model.dim())?;
    let z = check::positive("noise multiplier", s.z_step)?;
    let z_final = check::positive("noise multiplier", s.z_final)?;
    let total_steps = s.rounds * s.steps_per_round;
    let mut step_index = 0;
    let d = model.dim();
    let t_temp = model.tempering();
    let mut theta = from.to_vec();
    let mut grads = GradBuffer::new(model);
    grads.set_threads(rayon::current_num_threads());
    let mut clips = Vec::with_capacity(s.rounds);
    let mut hessian_clips = Vec::with_capacity(s.rounds);
    let mut scale = vec![f64::NAN; d];
    let mut covariance = vec![f64::NAN; d * d];
    let normal = |rng: &mut ChainRng| -> f64 { StandardNormal.sample(rng) };
    for _ in 0..s.rounds {
        let clip = match s.public_clip {
            Some(c) => check::positive("clip", c)?,
            None => super::clip::dp_quantile(model, &theta, s.quantile, s.z_quantile, rng)?,
        };
        clips.push(clip);
        let hnorms = hessian_norms(model, &theta)?;
        let hclip = super::clip::dp_quantile_of(hnorms, HESSIAN_QUANTILE, s.z_quantile, rng)?;
        hessian_clips.push(hclip);
        let floor = 2.0 * (d as f64).sqrt() * 2.0 * hclip * z * t_temp;
        for _ in 0..s.steps_per_round {
            // the curvature at the current point (a stale one sends Newton steps off a curved
            // posterior), then the gradient
            let mut h = clipped_hessian_sum(model, &theta, hclip)?;
            for a in 0..d {
                for b in a..d {
                    h[(a, b)] += 2.0 * hclip * z * normal(rng);
                    h[(b, a)] = h[(a, b)];
                }
            }
            let mut g = vec![0.0; d];
            grads.clipped_grad_sum(model, &theta, clip, &mut g)?;
            step_index += 1;
            let zg = if step_index == total_steps {
                z_final
            } else {
                z
            };
            for x in g.iter_mut() {
                *x += 2.0 * clip * zg * normal(rng);
            }
            // post-processing of (g, h) and the public prior
            let mut prior = vec![0.0; d];
            model.grad_log_prior(&theta, &mut prior);
            let p = prior_curvature(model, &theta, &prior);
            let eig = (&h * (-t_temp) + p).symmetric_eigen();
            let inv = {
                let lam = eig.eigenvalues.map(|l| 1.0 / l.abs().max(floor));
                &eig.eigenvectors * DMatrix::from_diagonal(&lam) * eig.eigenvectors.transpose()
            };
            let rhs = DVector::from_iterator(d, g.iter().zip(&prior).map(|(g, p)| g * t_temp + p));
            let step = &inv * rhs;
            for (t, dt) in theta.iter_mut().zip(step.iter()) {
                *t += dt;
            }
            for (sc, i) in scale.iter_mut().zip(0..d) {
                *sc = inv[(i, i)].max(0.0).sqrt();
            }
            for (c, (i, j)) in covariance
                .iter_mut()
                .zip((0..d).flat_map(|i| (0..d).map(move |j| (i, j))))
            {
                *c = 0.5 * (inv[(i, j)] + inv[(j, i)]);
            }
            if theta.iter().any(|t| !t.is_finite()) {
                return Err(Error::Model(
                    "the DP initial point left the finite range; give a public start point".into(),
                ));
            }
        }
    }
    Ok(InitialPoint {
        point: theta,
        from: from.to_vec(),
        steps: s.rounds * s.steps_per_round,
        clips,
        hessian_clips,
        noise_multiplier: z,
        final_noise_multiplier: z_final,
        scale,
        covariance,
    })
}

/// `−∇² ln p(θ)` of the (public) prior by central differences of its gradient, symmetrised.
fn prior_curvature<M: Model + ?Sized>(model: &M, theta: &[f64], grad: &[f64]) -> DMatrix<f64> {
    let d = theta.len();
    let mut h = DMatrix::<f64>::zeros(d, d);
    let mut t = theta.to_vec();
    let mut gp = vec![0.0; d];
    for i in 0..d {
        let e = 1e-4 * theta[i].abs().max(1.0);
        t[i] = theta[i] + e;
        model.grad_log_prior(&t, &mut gp);
        t[i] = theta[i];
        for j in 0..d {
            h[(j, i)] = -(gp[j] - grad[j]) / e;
        }
    }
    let h = (&h + h.transpose()) * 0.5;
    h.map(|x| if x.is_finite() { x } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;

    /// `values` draws of N(`mean`, 1) as a `d`-dimensional isotropic Gaussian mean model.
    fn normal_rows(rng: &mut ChainRng, values: usize, mean: f64, d: usize) -> IsotropicGaussian {
        let rows: Vec<f64> = (0..values)
            .map(|_| {
                let z: f64 = StandardNormal.sample(rng);
                mean + z
            })
            .collect();
        IsotropicGaussian::new(rows, d).unwrap()
    }

    /// 20 000 rows of N(3, 1) in 2-d (mean model, posterior sd 1/√n ≈ 0.007): 40 steps from 0
    /// with a generous clip (|x − θ| ≤ 5 for nearly every row near the mode) and noise
    /// multiplier 50 (noise on the mean gradient ≈ 2·5·50/20 000 = 0.025 per coordinate) must
    /// land within 0.03 of the mode; with 1e6 noise it must not (the test can fail).
    #[test]
    fn lands_near_the_mode_unless_the_noise_drowns_the_gradient() {
        let mut rng = crate::rng::chain_rng(9, 0);
        let model = normal_rows(&mut rng, 40_000, 3.0, 2);
        let (mean, _) = model.posterior();
        let set = |z_step| InitSettings {
            rounds: 2,
            steps_per_round: 20,
            z_step,
            z_final: z_step,
            public_clip: Some(5.0),
            quantile: 0.9,
            z_quantile: 1.0,
        };
        let mut err = |z| {
            let p = dp_initial_point(&model, &[0.0, 0.0], &set(z), &mut rng).unwrap();
            let e = p.point.iter().zip(&mean).map(|(a, b)| (a - b).abs());
            e.fold(0.0, f64::max)
        };
        let (good, drowned) = (err(50.0), err(1e6));
        assert!(good < 0.03, "{good} vs {mean:?}");
        assert!(drowned > 0.1, "{drowned}");
        assert!(dp_initial_point(&model, &[0.0], &set(50.0), &mut rng).is_err());
        assert_eq!(set(50.0).event().1, 80 + 2 * 9);
    }

    /// The passes run on the rayon pool in fixed groups added in group order: the initial
    /// point (with DP quantile clips, so the norm passes too) is bit for bit the same on pools
    /// of 1, 2 and 3 threads.
    #[test]
    fn the_same_for_every_thread_count() {
        let model = normal_rows(&mut crate::rng::chain_rng(4, 0), 30_000, 1.0, 3);
        let set = InitSettings {
            rounds: 2,
            steps_per_round: 3,
            z_step: 20.0,
            z_final: 20.0,
            public_clip: None,
            quantile: 0.9,
            z_quantile: 1.0,
        };
        let point = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut rng = crate::rng::chain_rng(5, 0);
                    let p = dp_initial_point(&model, &[0.0; 3], &set, &mut rng).unwrap();
                    (p.point, p.covariance, p.clips, p.hessian_clips)
                })
        };
        let one = point(1);
        assert_eq!(one, point(2));
        assert_eq!(one, point(3));
    }
}
