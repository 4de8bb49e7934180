//! The noise-aware posterior: `p(θ, H | releases)`, with the DP noise modelled. Pure
//! post-processing of the releases (no data), so it is sampled as long as needed.
//!
//! # The model
//! Near the mode the log-likelihood is quadratic with information `H` (latent: the true sum of
//! the rows' information, unknown because only noisy releases of it exist). For every pooled
//! round `k` (the last [`POOLED_ROUNDS`] rounds of the path, whose points lie in the quadratic
//! region):
//!
//! - the score release gives `y_k = A_k⁻¹ g̃_k + H θ_k = u + ξ_k`, `ξ_k ~ N(0, Σ_k)`,
//!   `Σ_k = s_k² (A_kᵀ A_k)⁻¹`: the score at `θ_k` is `H(θ̂ − θ_k)`, so every round measures the
//!   same `u = H θ̂` (`θ̂` the maximum-likelihood point), and differences between rounds
//!   measure `H` itself;
//! - `u | θ, H ~ N(Hθ, H)`: the sampling distribution of the score given the design (the
//!   Bernstein–von Mises / Laplace likelihood);
//! - the information release gives `h̃_k = svec(B_k H B_kᵀ) + e_k`, `e_k ~ N(0, t_k² I)`;
//! - priors: `θ ~ N(0, S₀)` (the model's, in the internal coordinates), `H` flat on the
//!   positive definite cone.
//!
//! Given `H` everything is linear-Gaussian: `θ` has a Gaussian conditional, and `θ` and `u`
//! integrate out of the score releases in closed form. So `H` is sampled by an independence
//! Metropolis–Hastings step whose proposal is the information releases' Gaussian (restricted to
//! positive definite matrices), accepted by the score releases' marginal likelihood, and `θ` is
//! then drawn exactly from `θ | H`. Several chains from over-dispersed starts give R-hat and
//! ESS their usual meaning.

use nalgebra::{Cholesky, DMatrix, DVector};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::data::GlmKind;
use super::linalg::{congruence, draw_from_precision, floor_eigenvalues, unsvec};
use super::releases::Round;
use crate::error::{Error, Result};
use crate::rng::ChainRng;

/// How many of the last rounds enter the likelihood (a public rule: the path's early rounds
/// only bring it to the mode's quadratic region; measured on simulated data, the last two
/// rounds of the default schedule are there).
pub const POOLED_ROUNDS: usize = 2;

/// Tries of the positive definite proposal per step before the proposal is floored.
const MAX_PD_TRIES: usize = 200;

/// Stream of the positive definiteness probe ([`PD_PROBE`]).
const PROBE_STREAM: u64 = 1 << 43;

/// Proposal draws probed for a positive definite one before the chains start: when none of
/// them is, the releases are in the floored regime (a positive definite draw has probability
/// below about 1.5e-4, so the [`MAX_PD_TRIES`] tries of a step would almost surely all fail
/// too) and each step floors its first draw instead of its 200th: the same proposal
/// distribution up to that probability, at 1/200 of the cost.
const PD_PROBE: usize = 20_000;

/// Eigenvalue floor of a floored proposal, in the frame whitened by the last pooled round's
/// shape (where the released information is near the identity).
const FLOOR: f64 = 0.05;

/// The rounds that enter the likelihood: the last [`POOLED_ROUNDS`] (all of them if fewer);
/// the last one alone for a linear model, whose information changes with `ln σ` as `e^{−2s}`,
/// too fast for two rounds' points to share one.
pub(crate) fn pooled_rounds(rounds: &[Round], kind: GlmKind) -> Vec<usize> {
    let k = if kind == GlmKind::Linear {
        1
    } else {
        POOLED_ROUNDS
    };
    (rounds.len().saturating_sub(k)..rounds.len()).collect()
}

/// The posterior given the pooled releases (see the module docs), ready to sample.
pub(crate) struct NoiseAwarePosterior {
    d: usize,
    /// Prior covariance `S₀` (diagonal) and precision of θ.
    prior_cov: DMatrix<f64>,
    prior_prec: DMatrix<f64>,
    /// `H = R⁻¹ G R⁻ᵀ`: `G` is sampled (well scaled near the identity).
    r_inv: DMatrix<f64>,
    /// Proposal for `svec(G)`: mean and Cholesky factor of the covariance.
    prop_mean: DVector<f64>,
    prop_chol: DMatrix<f64>,
    /// Score releases in score space (`A_k⁻¹ g̃_k`), their points, and their precisions `Σ_k⁻¹`.
    scores: Vec<DVector<f64>>,
    points: Vec<DVector<f64>>,
    precisions: Vec<DMatrix<f64>>,
    /// `Σ_pool = (Σ_k Σ_k⁻¹)⁻¹`.
    pool_cov: DMatrix<f64>,
    /// Tries per step before a proposal is floored ([`MAX_PD_TRIES`], or 1 when the probe of
    /// [`PD_PROBE`] draws found no positive definite one).
    pd_tries: usize,
}

/// One chain's draws of `θ` (row-major) and its accepted `H` proposals.
pub(crate) struct ChainDraws {
    pub draws: Vec<f64>,
    /// Proposals that had to be floored (see `propose`).
    pub floored: usize,
    pub accepted: Vec<bool>,
    pub start: Vec<f64>,
}

impl NoiseAwarePosterior {
    /// The posterior of the pooled rounds `pooled` of `rounds`, prior `N(0, diag(prior_vars))`.
    pub(crate) fn new(rounds: &[Round], pooled: &[usize], prior_vars: &[f64]) -> Result<Self> {
        let d = rounds[0].theta.len();
        let p = d * (d + 1) / 2;
        let last = &rounds[*pooled.last().ok_or_else(|| bug("no pooled round"))?];
        let r = DMatrix::from_row_slice(d, d, &last.info_shape);
        let r_inv = r
            .clone()
            .try_inverse()
            .ok_or_else(|| bug("singular shape"))?;
        // information releases: h̃_k = C_k svec(G) + e_k with C_k = congruence(B_k R⁻¹)
        let mut lam = DMatrix::<f64>::zeros(p, p);
        let mut rhs = DVector::<f64>::zeros(p);
        for &k in pooled {
            let round = &rounds[k];
            let b = DMatrix::from_row_slice(d, d, &round.info_shape);
            let c = congruence(&(b * &r_inv));
            let w = 1.0 / (round.info_noise_sd * round.info_noise_sd);
            lam += c.transpose() * &c * w;
            rhs += c.transpose() * DVector::from_column_slice(&round.info_release) * w;
        }
        let lam_chol = Cholesky::new(lam).ok_or_else(|| bug("information precision"))?;
        let prop_mean = lam_chol.solve(&rhs);
        let prop_cov = lam_chol.inverse();
        let prop_chol = Cholesky::new(prop_cov)
            .ok_or_else(|| bug("information covariance"))?
            .l();
        let mut scores = Vec::new();
        let mut points = Vec::new();
        let mut precisions = Vec::new();
        let mut pool_prec = DMatrix::<f64>::zeros(d, d);
        for &k in pooled {
            let round = &rounds[k];
            let a = DMatrix::from_row_slice(d, d, &round.score_shape);
            let a_inv = a
                .clone()
                .try_inverse()
                .ok_or_else(|| bug("singular score shape"))?;
            scores.push(a_inv * DVector::from_column_slice(&round.score_release));
            points.push(DVector::from_column_slice(&round.theta));
            let prec = a.transpose() * &a / (round.score_noise_sd * round.score_noise_sd);
            pool_prec += &prec;
            precisions.push(prec);
        }
        let pool_cov = Cholesky::new(pool_prec)
            .ok_or_else(|| bug("score precision"))?
            .inverse();
        let mut post = NoiseAwarePosterior {
            d,
            prior_cov: DMatrix::from_diagonal(&DVector::from_column_slice(prior_vars)),
            prior_prec: DMatrix::from_diagonal(&DVector::from_iterator(
                prior_vars.len(),
                prior_vars.iter().map(|v| 1.0 / v),
            )),
            r_inv,
            prop_mean,
            prop_chol,
            scores,
            points,
            precisions,
            pool_cov,
            pd_tries: MAX_PD_TRIES,
        };
        post.pd_tries = post.probe_tries();
        Ok(post)
    }

    /// One draw of the proposal for `svec(G)` (the information releases' Gaussian).
    fn draw_g(&self, rng: &mut ChainRng) -> DVector<f64> {
        let p = self.prop_mean.len();
        let z = DVector::from_iterator(p, (0..p).map(|_| StandardNormal.sample(rng)));
        &self.prop_mean + &self.prop_chol * z
    }

    /// [`MAX_PD_TRIES`], or 1 when none of [`PD_PROBE`] proposal draws is positive definite
    /// (a fixed stream: post-processing of public releases, no privacy role).
    fn probe_tries(&self) -> usize {
        let mut rng = crate::rng::chain_rng(0, PROBE_STREAM);
        for _ in 0..PD_PROBE {
            if self.information(&self.draw_g(&mut rng)).is_some() {
                return MAX_PD_TRIES;
            }
        }
        1
    }

    /// `H` of the sampled `svec(G)`, or `None` if `G` is not positive definite.
    fn information(&self, g: &DVector<f64>) -> Option<DMatrix<f64>> {
        let gm = unsvec(g.as_slice(), self.d);
        Cholesky::new(gm.clone())?;
        let h = &self.r_inv * gm * self.r_inv.transpose();
        Some((&h + h.transpose()) * 0.5)
    }

    /// `ȳ(H)` (the pooled score-space measurement of `u`) and the log marginal likelihood of
    /// the score releases given `H` (θ and `u` integrated out), up to a constant.
    fn score_likelihood(&self, h: &DMatrix<f64>) -> Option<(DVector<f64>, f64)> {
        let ys: Vec<DVector<f64>> = self
            .scores
            .iter()
            .zip(&self.points)
            .map(|(s, t)| s + h * t)
            .collect();
        let mut acc = DVector::<f64>::zeros(self.d);
        for (y, prec) in ys.iter().zip(&self.precisions) {
            acc += prec * y;
        }
        let ybar = &self.pool_cov * acc;
        let mut log = 0.0;
        for (y, prec) in ys.iter().zip(&self.precisions) {
            let r = y - &ybar;
            log -= 0.5 * (r.transpose() * prec * &r)[(0, 0)];
        }
        // ȳ ~ N(0, H S₀ H + H + Σ_pool)
        let cov = h * &self.prior_cov * h + h + &self.pool_cov;
        let chol = Cholesky::new((&cov + cov.transpose()) * 0.5)?;
        let z = chol.l().solve_lower_triangular(&ybar)?;
        let logdet: f64 = chol.l().diagonal().iter().map(|v| v.ln()).sum();
        log += -0.5 * z.norm_squared() - logdet;
        Some((ybar, log))
    }

    /// One draw of `θ | H` (Gaussian; see the module docs).
    fn draw_theta(
        &self,
        h: &DMatrix<f64>,
        ybar: &DVector<f64>,
        rng: &mut ChainRng,
    ) -> Option<DVector<f64>> {
        let v = h + &self.pool_cov;
        let v_chol = Cholesky::new((&v + v.transpose()) * 0.5)?;
        let vh = v_chol.solve(h);
        let prec = h * &vh + &self.prior_prec;
        draw_from_precision(&prec, &(vh.transpose() * ybar), rng)
    }

    /// A positive definite proposal of `svec(G)`, and whether it had to be floored: when none
    /// of [`MAX_PD_TRIES`] draws (one in the floored regime, [`PD_PROBE`]) is positive
    /// definite (releases too noisy for the budget), the last draw's eigenvalues are raised to
    /// [`FLOOR`] (an approximation, reported).
    fn propose(&self, rng: &mut ChainRng) -> Result<(DVector<f64>, DMatrix<f64>, bool)> {
        let mut g = self.prop_mean.clone();
        for _ in 0..self.pd_tries {
            g = self.draw_g(rng);
            if let Some(h) = self.information(&g) {
                return Ok((g, h, false));
            }
        }
        let gm = floor_eigenvalues(&unsvec(g.as_slice(), self.d), FLOOR);
        let g = DVector::from_vec(super::linalg::svec(&gm));
        let h = self
            .information(&g)
            .ok_or_else(|| bug("floored information"))?;
        Ok((g, h, true))
    }

    /// A chain of `warmup + draws` steps from an over-dispersed start (a proposal draw).
    pub(crate) fn chain(
        &self,
        warmup: usize,
        draws: usize,
        rng: &mut ChainRng,
    ) -> Result<ChainDraws> {
        let (_, mut h, f0) = self.propose(rng)?;
        let mut floored = usize::from(f0);
        let mut cur = self
            .score_likelihood(&h)
            .ok_or_else(|| bug("start likelihood"))?;
        let mut out = ChainDraws {
            draws: Vec::with_capacity(draws * self.d),
            accepted: Vec::with_capacity(draws),
            start: Vec::new(),
            floored: 0,
        };
        for step in 0..warmup + draws {
            let (_, h2, f) = self.propose(rng)?;
            floored += usize::from(f);
            let mut accepted = false;
            if let Some(next) = self.score_likelihood(&h2) {
                let u: f64 = rng.random();
                if u.ln() < next.1 - cur.1 {
                    h = h2;
                    cur = next;
                    accepted = true;
                }
            }
            let theta = self
                .draw_theta(&h, &cur.0, rng)
                .ok_or_else(|| bug("theta conditional"))?;
            if step == 0 {
                out.start = theta.iter().copied().collect();
            }
            if step >= warmup {
                out.draws.extend(theta.iter());
                out.accepted.push(accepted);
            }
        }
        out.floored = floored;
        Ok(out)
    }
}

fn bug(what: &str) -> Error {
    Error::Numerical {
        what: "noise-aware posterior",
        reason: format!(
            "{what} is not positive definite; the releases are too noisy for this model at this budget (increase epsilon)"
        ),
    }
}
