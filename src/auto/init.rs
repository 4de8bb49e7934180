//! A DP initial point: a few rounds of noisy clipped Gauss-Newton steps on the log
//! posterior (BHHH: Berndt, Hall, Hall and Hausman 1974, whose curvature is the outer
//! product of the per-row gradients).
//!
//! Each round first sets the per-row clip bound `C`: the model's public bound, or a DP
//! quantile of the per-row gradient norms at the round's start point (`clip.rs`). A bound set
//! far from the mode is too small near it, and clipping most rows biases the clipped sum, so
//! the bound is set again every round. Each step then releases, from the clipped per-row
//! gradients `g_j` (`‖g_j‖ ≤ C`),
//!
//! - `G = Σ_j g_j + N(0, (2C·z)² I)`: one row substituted moves `Σ g_j` by at most `2C`;
//! - `F = Σ_j g_j g_jᵀ + E`, `E` symmetric with `N(0, (√2·C²·z)²)` entries on and above the
//!   diagonal: one row substituted moves the upper triangle of `Σ g_j g_jᵀ` by at most
//!   `‖g gᵀ − g' g'ᵀ‖_F ≤ √2·C²`;
//!
//! two Gaussian mechanisms with noise multiplier `z` each. The update is post-processing:
//! `θ ← θ + (T·F̃ + P)⁻¹ (T·G + ∇ ln p(θ))`, with `T` the model's tempering, `P` the prior's
//! curvature (finite differences of the public prior gradient) and `F̃` the released `F` with
//! its eigenvalues raised to the noise's spectral scale (`3·2√d·√2·C²·z`), so the solve stays
//! well-posed. At the mode `F/n` is the Fisher information, so the steps are Newton steps
//! there; far from it the outer product of the (large, aligned) gradients damps them.
//!
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::accounting::PrivacyEvent;
use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use nalgebra::{DMatrix, DVector};

/// How the initial point is computed: `rounds` rounds, each a clip bound (public, or a DP
/// quantile at the current point) and `steps_per_round` Gauss-Newton steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct InitSettings {
    pub rounds: usize,
    pub steps_per_round: usize,
    /// Noise multiplier of each of a step's two releases (gradient sum, outer products).
    pub z_step: f64,
    /// The public per-row clip bound, or `None` for a DP quantile each round.
    pub public_clip: Option<f64>,
    /// Quantile of the gradient norms and noise multiplier of each of its counts.
    pub quantile: f64,
    pub z_quantile: f64,
}

impl InitSettings {
    /// The privacy event of everything [`dp_initial_point`] releases, and the number of noisy
    /// statistics.
    pub(crate) fn event(&self) -> (PrivacyEvent, u64) {
        let releases = 2 * (self.rounds * self.steps_per_round) as u64;
        let mut events = vec![PrivacyEvent::gaussian(self.z_step).repeat(releases)];
        let mut count = releases;
        if self.public_clip.is_none() {
            let q = self.rounds as u64 * u64::from(super::clip::QUERIES);
            events.push(PrivacyEvent::gaussian(self.z_quantile).repeat(q));
            count += q;
        }
        (PrivacyEvent::compose(events), count)
    }
}

/// What [`dp_initial_point`] did: the point and the settings that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitialPoint {
    /// The DP point (released).
    pub point: Vec<f64>,
    /// The public start the steps left from.
    pub from: Vec<f64>,
    /// Gauss-Newton steps (each two Gaussian releases).
    pub steps: usize,
    /// Per-row gradient clip bound `C` of each round (public, or a DP quantile at the round's
    /// start).
    pub clips: Vec<f64>,
    /// Noise multiplier `z` of each release of a step.
    pub noise_multiplier: f64,
    /// Standard deviations of the last step's Gaussian approximation, `diag((T·F̃ + P)⁻¹)^½`
    /// (post-processing of released values): a public scale of the posterior.
    pub scale: Vec<f64>,
}

/// Eigenvalue floor of the released curvature, in units of the noise matrix's spectral scale.
const FLOOR: f64 = 1.0;

/// Rows per chunk of the gradient pass.
const CHUNK: usize = 1024;

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
    let d = model.dim();
    let n = model.n_rows();
    let t_temp = model.tempering();
    let mut theta = from.to_vec();
    let mut rows = vec![0.0; CHUNK * d];
    let mut clips = Vec::with_capacity(s.rounds);
    let mut scale = vec![f64::NAN; d];
    let normal = |rng: &mut ChainRng| -> f64 { StandardNormal.sample(rng) };
    for _ in 0..s.rounds {
        let clip = match s.public_clip {
            Some(c) => check::positive("clip", c)?,
            None => super::clip::dp_quantile(model, &theta, s.quantile, s.z_quantile, rng)?,
        };
        clips.push(clip);
        for _ in 0..s.steps_per_round {
            let mut g = DVector::<f64>::zeros(d);
            let mut f = DMatrix::<f64>::zeros(d, d);
            let mut start = 0;
            while start < n {
                let len = CHUNK.min(n - start);
                let chunk = &mut rows[..len * d];
                model.grad_log_lik_rows(&theta, start, chunk)?;
                for row in chunk.chunks_exact(d) {
                    let norm2: f64 = row.iter().map(|x| x * x).sum();
                    // non-finite rows contribute nothing (their clipped value is 0)
                    let c = if !norm2.is_finite() {
                        0.0
                    } else if norm2 > clip * clip {
                        clip / norm2.sqrt()
                    } else {
                        1.0
                    };
                    if c == 0.0 {
                        continue;
                    }
                    for a in 0..d {
                        let ga = c * row[a];
                        g[a] += ga;
                        for b in a..d {
                            f[(a, b)] += ga * c * row[b];
                        }
                    }
                }
                start += len;
            }
            for a in 0..d {
                g[a] += 2.0 * clip * z * normal(rng);
                for b in a..d {
                    f[(a, b)] += 2f64.sqrt() * clip * clip * z * normal(rng);
                    f[(b, a)] = f[(a, b)];
                }
            }
            // post-processing of (g, f) and the public prior
            let mut prior = vec![0.0; d];
            model.grad_log_prior(&theta, &mut prior);
            let p = prior_curvature(model, &theta, &prior);
            let floor = FLOOR * 2.0 * (d as f64).sqrt() * 2f64.sqrt() * clip * clip * z * t_temp;
            let eig = (f * t_temp + p).symmetric_eigen();
            let inv = {
                let lam = eig.eigenvalues.map(|l| 1.0 / l.max(floor));
                &eig.eigenvectors * DMatrix::from_diagonal(&lam) * eig.eigenvectors.transpose()
            };
            let step = &inv * (g * t_temp + DVector::from_vec(prior));
            for (t, dt) in theta.iter_mut().zip(step.iter()) {
                *t += dt;
            }
            for (sc, i) in scale.iter_mut().zip(0..d) {
                *sc = inv[(i, i)].max(0.0).sqrt();
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
        noise_multiplier: z,
        scale,
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

    /// 20 000 rows of N(3, 1) in 2-d (mean model, posterior sd 1/√n ≈ 0.007): 40 steps from 0
    /// with a generous clip (|x − θ| ≤ 5 for nearly every row near the mode) and noise
    /// multiplier 50 (noise on the mean gradient ≈ 2·5·50/20 000 = 0.025 per coordinate) must
    /// land within 0.03 of the mode; with 1e6 noise it must not (the test can fail).
    #[test]
    fn lands_near_the_mode_unless_the_noise_drowns_the_gradient() {
        let mut rng = crate::rng::chain_rng(9, 0);
        let rows: Vec<f64> = (0..40_000)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                3.0 + z
            })
            .collect();
        let model = IsotropicGaussian::new(rows, 2).unwrap();
        let (mean, _) = model.posterior();
        let set = |z_step| InitSettings {
            rounds: 2,
            steps_per_round: 20,
            z_step,
            public_clip: Some(5.0),
            quantile: 0.9,
            z_quantile: 1.0,
        };
        let p = dp_initial_point(&model, &[0.0, 0.0], &set(50.0), &mut rng).unwrap();
        let err = p
            .point
            .iter()
            .zip(&mean)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 0.03, "{p:?} vs {mean:?}");
        let p = dp_initial_point(&model, &[0.0, 0.0], &set(1e6), &mut rng).unwrap();
        let err = p
            .point
            .iter()
            .zip(&mean)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err > 0.1, "{p:?}");
        assert!(dp_initial_point(&model, &[0.0], &set(50.0), &mut rng).is_err());
        assert_eq!(set(50.0).event().1, 80);
    }
}
