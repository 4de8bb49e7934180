//! The noise-aware posterior: `p(θ, H | releases)`, with the DP noise modelled. Pure
//! post-processing of the releases (no data), so it is sampled as long as needed.
//!
//! # The model
//! Near the mode the log-likelihood is quadratic with information `H` (latent: the true sum of
//! the rows' information, unknown because only noisy releases of it exist). For every pooled
//! round `k` (the last [`pooled_round_count`] rounds of the path, whose points lie in the
//! quadratic region):
//!
//! - the score release gives `y_k = A_k⁻¹ g̃_k + H θ_k = u + ξ_k`, `ξ_k ~ N(0, Σ_k)`,
//!   `Σ_k = s_k² (A_kᵀ A_k)⁻¹`: the score at `θ_k` is `H(θ̂ − θ_k)`, so every round measures the
//!   same `u = H θ̂` (`θ̂` the maximum-likelihood point), and differences between rounds
//!   measure `H` itself;
//! - `u | θ, H ~ N(Hθ, H)`: the sampling distribution of the score given the design (the
//!   Bernstein–von Mises / Laplace likelihood);
//! - the information release gives `h̃_k = svec(B_k H B_kᵀ) + e_k`, `e_k ~ N(0, t_k² I)`;
//! - priors: `θ ~ N(0, S₀)` (the model's, in the internal coordinates), or independent
//!   Student-t distributions with ν degrees of freedom and scales `√S₀_jj` (the default
//!   Cauchy of logistic and Poisson regression), sampled as the scale mixture
//!   `θ_j | λ_j ~ N(0, λ_j S₀_jj)`, `λ_j ~ InvGamma(ν/2, ν/2)`; `H` flat on the positive
//!   definite cone.
//!
//! Given `H` (and the scales λ, drawn each step from `λ_j | θ_j ~ InvGamma((ν + 1)/2,
//! (ν + θ_j²/S₀_jj)/2)` after θ) everything is linear-Gaussian: `θ` has a Gaussian
//! conditional, and `θ` and `u` integrate out of the score releases in closed form. So `H` is sampled by two
//! Metropolis–Hastings moves per step, both reversible with respect to the information
//! releases' Gaussian, so that each is accepted by the score releases' marginal likelihood
//! alone (a proposal outside the positive definite cone is rejected): an independence draw from
//! that Gaussian (near-independent draws when the releases determine `H`), and a
//! preconditioned Crank–Nicolson move `g' = m + ρ(g − m) + √(1 − ρ²)·L z` (local, so the chain
//! also moves when most of the Gaussian's mass lies outside the cone; `ρ` is tuned in the
//! warm-up toward a quarter of the moves accepted). `θ` is then drawn exactly from `θ | H`.
//! Several chains from over-dispersed starts give R-hat and ESS their usual meaning.

use nalgebra::{Cholesky, DMatrix, DVector};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::linalg::{
    congruence, draw_from_factor, floor_eigenvalues, precision_factor, too_noisy, unsvec,
};
use super::link::GlmKind;
use super::releases::Round;
use super::structure::Determined;
use super::xtx::structure_map;
use crate::error::{Error, Result};
use crate::rng::ChainRng;

/// How many of the last rounds enter the likelihood, per model (a public rule: the path's
/// early rounds only bring it to the mode's quadratic region). Measured on the simulated
/// calibration grid (docs/NOISE-AWARE.md, "Calibration"): for logistic regression the last
/// three of its four rounds (pooling two left 28 of 30 cells calibrated and the intervals
/// wider, pooling all four biased the answer by the first round's linearisation); for
/// Poisson regression the last two of its six (three over-covered or under-covered 7 cells
/// of 30, two 4); a linear model's Newton path (not the default: it releases sufficient
/// statistics) the last one, its information changing with `ln σ` as `e^{−2s}`.
pub fn pooled_round_count(kind: GlmKind) -> usize {
    match kind {
        GlmKind::Logistic => 3,
        GlmKind::Poisson => 2,
        GlmKind::Linear => 1,
    }
}

/// Tries of the positive definite proposal per step before the proposal is floored.
const MAX_PD_TRIES: usize = 200;

/// Stream of the positive definiteness probe ([`PD_PROBE`]).
const PROBE_STREAM: u64 = 1 << 43;

/// Draws of the information releases' Gaussian that estimate the share of it outside the
/// positive definite cone ([`NoiseAwarePosterior::indefinite_share`]).
const PD_PROBE: usize = 2_000;

/// Target acceptance of the Crank–Nicolson move, and its tuning interval in warm-up steps.
const PCN_TARGET: f64 = 0.25;
const PCN_WINDOW: usize = 20;

/// Eigenvalue floor of a floored proposal, in the frame whitened by the last pooled round's
/// shape (where the released information is near the identity).
const FLOOR: f64 = 0.05;

/// The rounds that enter the likelihood: the last `k` (all of them if fewer).
pub(crate) fn pooled_rounds(rounds: &[Round], k: usize) -> Vec<usize> {
    (rounds.len().saturating_sub(k.max(1))..rounds.len()).collect()
}

/// The posterior given the pooled releases (see the module docs), ready to sample.
pub(crate) struct NoiseAwarePosterior {
    d: usize,
    /// Prior covariance `S₀` (diagonal) and precision of θ.
    prior_cov: DMatrix<f64>,
    prior_prec: DMatrix<f64>,
    /// Degrees of freedom of a Student-t prior (a scale mixture of `N(0, λ_j S₀_jj)` with
    /// `λ_j ~ InvGamma(ν/2, ν/2)`), or `None` for the Gaussian `N(0, S₀)`.
    student_df: Option<f64>,
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
    /// Share of [`PD_PROBE`] draws of the information releases' Gaussian that are not
    /// positive definite.
    indefinite: f64,
}

/// A chain's current information: `svec(G)`, `H`, and the score releases' pooled measurement
/// `ȳ(H)` with their log marginal likelihood.
struct ChainState {
    g: DVector<f64>,
    h: DMatrix<f64>,
    ybar: DVector<f64>,
    log_lik: f64,
    /// The prior's covariance and precision given the mixture's scales (`S₀` without them).
    prior: PriorScale,
}

/// The Gaussian prior of θ given a Student-t prior's scales.
#[derive(Clone)]
struct PriorScale {
    cov: DMatrix<f64>,
    prec: DMatrix<f64>,
}

/// One chain's draws of `θ` (row-major) and its accepted `H` proposals.
#[derive(Default)]
pub(crate) struct ChainDraws {
    pub draws: Vec<f64>,
    /// Proposals that had to be floored (see `propose`).
    pub floored: usize,
    pub accepted: Vec<bool>,
    pub start: Vec<f64>,
}

impl NoiseAwarePosterior {
    /// The posterior of the pooled rounds `pooled` of `rounds`, prior `N(0, prior_cov)`, or
    /// with `student_df` = ν independent Student-t distributions of scale `√prior_cov_jj`
    /// (`prior_cov` diagonal).
    pub(crate) fn with_prior(
        rounds: &[Round],
        pooled: &[usize],
        prior_cov: DMatrix<f64>,
        student_df: Option<f64>,
        determined: &[Determined],
    ) -> Result<Self> {
        let d = rounds[0].theta.len();
        if student_df.is_some_and(|nu| !(nu > 0.0 && nu.is_finite()))
            || (student_df.is_some() && prior_cov != DMatrix::from_diagonal(&prior_cov.diagonal()))
        {
            return Err(Error::Model(
                "a Student-t prior needs positive, finite degrees of freedom and a diagonal scale"
                    .into(),
            ));
        }
        let prior_prec = Cholesky::new(prior_cov.clone())
            .ok_or_else(|| Error::Model("the prior's covariance is not positive definite".into()))?
            .inverse();
        let p = d * (d + 1) / 2;
        let last = &rounds[*pooled.last().ok_or_else(|| failed("no pooled round"))?];
        let r = DMatrix::from_row_slice(d, d, &last.info_shape);
        let r_inv = r
            .clone()
            .try_inverse()
            .ok_or_else(|| failed("singular shape"))?;
        // svec(G) = N φ: G = R H Rᵀ with svec(H) = M φ, the entries the declared structure
        // determines following the others (`structure.rs`): N an orthonormal basis of
        // congruence(R)·M's columns (well conditioned as G is), the identity without structure
        let n_map = if determined.is_empty() {
            DMatrix::identity(p, p)
        } else {
            (congruence(&r) * structure_map(p, determined)).qr().q()
        };
        // information releases: h̃_k = C_k N φ + e_k with C_k = congruence(B_k R⁻¹)
        let m = n_map.ncols();
        let mut lam = DMatrix::<f64>::zeros(m, m);
        let mut rhs = DVector::<f64>::zeros(m);
        for &k in pooled {
            let round = &rounds[k];
            let b = DMatrix::from_row_slice(d, d, &round.info_shape);
            let c = congruence(&(b * &r_inv)) * &n_map;
            let w = 1.0 / (round.info_noise_sd * round.info_noise_sd);
            lam += c.transpose() * &c * w;
            rhs += c.transpose() * DVector::from_column_slice(&round.info_release) * w;
        }
        let lam_chol = Cholesky::new(lam).ok_or_else(|| failed("information precision"))?;
        let prop_mean = &n_map * lam_chol.solve(&rhs);
        let prop_cov = lam_chol.inverse();
        // p × m: the proposal's covariance N Λ⁻¹ Nᵀ is degenerate off the structure's subspace
        let prop_chol = &n_map
            * Cholesky::new(prop_cov)
                .ok_or_else(|| failed("information covariance"))?
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
                .ok_or_else(|| failed("singular score shape"))?;
            scores.push(a_inv * DVector::from_column_slice(&round.score_release));
            points.push(DVector::from_column_slice(&round.theta));
            let prec = a.transpose() * &a / (round.score_noise_sd * round.score_noise_sd);
            pool_prec += &prec;
            precisions.push(prec);
        }
        let pool_cov = Cholesky::new(pool_prec)
            .ok_or_else(|| failed("score precision"))?
            .inverse();
        let mut post = NoiseAwarePosterior {
            d,
            prior_cov,
            prior_prec,
            student_df,
            r_inv,
            prop_mean,
            prop_chol,
            scores,
            points,
            precisions,
            pool_cov,
            indefinite: 0.0,
        };
        post.indefinite = post.probe_indefinite();
        Ok(post)
    }

    /// Share of the information releases' Gaussian outside the positive definite cone: near
    /// 0 when the releases determine `H`; near 1 when `H`'s weakest directions are decided by
    /// its prior (flat on the cone) rather than by the releases.
    pub(crate) fn indefinite_share(&self) -> f64 {
        self.indefinite
    }

    /// A standard normal vector of `φ`'s length (`svec(G) = Nφ`).
    fn standard_normal(&self, rng: &mut ChainRng) -> DVector<f64> {
        let m = self.prop_chol.ncols();
        DVector::from_iterator(m, (0..m).map(|_| StandardNormal.sample(rng)))
    }

    /// One draw of the proposal for `svec(G)` (the information releases' Gaussian).
    fn draw_g(&self, rng: &mut ChainRng) -> DVector<f64> {
        &self.prop_mean + &self.prop_chol * self.standard_normal(rng)
    }

    /// The share of [`PD_PROBE`] draws that are not positive definite (a fixed stream:
    /// post-processing of public releases, no privacy role).
    fn probe_indefinite(&self) -> f64 {
        let mut rng = crate::rng::chain_rng(0, PROBE_STREAM);
        let bad = (0..PD_PROBE)
            .filter(|_| self.information(&self.draw_g(&mut rng)).is_none())
            .count();
        bad as f64 / PD_PROBE as f64
    }

    /// A Metropolis–Hastings move to `g2` (a proposal reversible with respect to the
    /// information releases' Gaussian): accepted with the score releases' likelihood ratio,
    /// rejected outside the positive definite cone.
    fn try_move(&self, g: DVector<f64>, state: &mut ChainState, rng: &mut ChainRng) -> bool {
        let Some(h) = self.information(&g) else {
            return false;
        };
        let Some((ybar, log_lik)) = self.score_likelihood(&h, &state.prior.cov) else {
            return false;
        };
        let u: f64 = rng.random();
        if u.ln() < log_lik - state.log_lik {
            state.g = g;
            state.h = h;
            state.ybar = ybar;
            state.log_lik = log_lik;
            true
        } else {
            false
        }
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
    fn score_likelihood(
        &self,
        h: &DMatrix<f64>,
        prior_cov: &DMatrix<f64>,
    ) -> Option<(DVector<f64>, f64)> {
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
        let cov = h * prior_cov * h + h + &self.pool_cov;
        let chol = Cholesky::new((&cov + cov.transpose()) * 0.5)?;
        let z = chol.l().solve_lower_triangular(&ybar)?;
        let logdet: f64 = chol.l().diagonal().iter().map(|v| v.ln()).sum();
        log += -0.5 * z.norm_squared() - logdet;
        Some((ybar, log))
    }

    /// `θ | H` is Gaussian with precision `P` and mean `P⁻¹ b`: `(P, b)`.
    fn theta_conditional(
        &self,
        h: &DMatrix<f64>,
        ybar: &DVector<f64>,
        prior_prec: &DMatrix<f64>,
    ) -> Option<(DMatrix<f64>, DVector<f64>)> {
        let v = h + &self.pool_cov;
        let v_chol = Cholesky::new((&v + v.transpose()) * 0.5)?;
        let vh = v_chol.solve(h);
        let prec = h * &vh + prior_prec;
        Some((prec, vh.transpose() * ybar))
    }

    /// The factor and mean of `θ | H` ([`precision_factor`]).
    fn theta_factor(
        &self,
        h: &DMatrix<f64>,
        ybar: &DVector<f64>,
        prior_prec: &DMatrix<f64>,
    ) -> Option<(Cholesky<f64, nalgebra::Dyn>, DVector<f64>)> {
        let (prec, b) = self.theta_conditional(h, ybar, prior_prec)?;
        precision_factor(&prec, &b)
    }

    /// A positive definite proposal of `svec(G)`, and whether it had to be floored: when none
    /// of [`MAX_PD_TRIES`] draws is positive definite (releases too noisy for the budget), the
    /// last draw's eigenvalues are raised to [`FLOOR`]. Only the chains' starts are drawn so
    /// (a start needs no exactness; the moves after it are exact).
    fn propose(&self, rng: &mut ChainRng) -> Result<(DVector<f64>, DMatrix<f64>, bool)> {
        let mut g = self.prop_mean.clone();
        for _ in 0..MAX_PD_TRIES {
            g = self.draw_g(rng);
            if let Some(h) = self.information(&g) {
                return Ok((g, h, false));
            }
        }
        let gm = floor_eigenvalues(&unsvec(g.as_slice(), self.d), FLOOR);
        let g = DVector::from_vec(super::linalg::svec(&gm));
        let h = self
            .information(&g)
            .ok_or_else(|| failed("floored information"))?;
        Ok((g, h, true))
    }

    /// A draw of a Student-t prior's scales given θ: `λ_j | θ_j ~ InvGamma((ν + 1)/2,
    /// (ν + θ_j²/S₀_jj)/2)`, and the Gaussian prior they give.
    fn mixture_scales(
        &self,
        nu: f64,
        theta: &DVector<f64>,
        rng: &mut ChainRng,
    ) -> Result<PriorScale> {
        let shape =
            rand_distr::Gamma::new(0.5 * (nu + 1.0), 1.0).map_err(|_| failed("mixture scale"))?;
        let mut cov = DMatrix::zeros(self.d, self.d);
        let mut prec = DMatrix::zeros(self.d, self.d);
        for j in 0..self.d {
            let base = self.prior_cov[(j, j)];
            let rate = 0.5 * (nu + theta[j] * theta[j] / base);
            let lambda = rate / shape.sample(rng);
            cov[(j, j)] = base * lambda;
            prec[(j, j)] = 1.0 / (base * lambda);
        }
        Ok(PriorScale { cov, prec })
    }

    /// A chain of `warmup + draws` steps from an over-dispersed start (a proposal draw).
    #[cfg(test)]
    pub(crate) fn chain(
        &self,
        warmup: usize,
        draws: usize,
        rng: &mut ChainRng,
    ) -> Result<ChainDraws> {
        let mut chain = LaplaceChain::new(self, warmup, rng.clone())?;
        chain.advance(draws)?;
        *rng = chain.rng;
        Ok(chain.out)
    }
}

/// A chain of [`NoiseAwarePosterior`] that can be extended: [`LaplaceChain::advance`] runs it
/// on until a number of draws is kept, so a run that needs more draws continues its chains
/// instead of restarting them (the draws are those of one chain run to the final length).
pub(crate) struct LaplaceChain<'a> {
    post: &'a NoiseAwarePosterior,
    state: ChainState,
    /// ρ of the Crank–Nicolson move, as ln(1 − ρ) so the tuning keeps ρ in (0, 1).
    ln_gap: f64,
    window_accepted: usize,
    step: usize,
    warmup: usize,
    rng: ChainRng,
    /// `θ | H`'s factor and mean at the current state (unchanged while no move is accepted).
    theta_cond: Option<(Cholesky<f64, nalgebra::Dyn>, DVector<f64>)>,
    pub out: ChainDraws,
}

impl<'a> LaplaceChain<'a> {
    /// The chain's start (one draw of the information releases' Gaussian in the cone).
    pub(crate) fn new(
        post: &'a NoiseAwarePosterior,
        warmup: usize,
        mut rng: ChainRng,
    ) -> Result<Self> {
        let (g, h, _) = post.propose(&mut rng)?;
        let prior = PriorScale {
            cov: post.prior_cov.clone(),
            prec: post.prior_prec.clone(),
        };
        let (ybar, log_lik) = post
            .score_likelihood(&h, &prior.cov)
            .ok_or_else(|| failed("start likelihood"))?;
        Ok(LaplaceChain {
            post,
            state: ChainState {
                g,
                h,
                ybar,
                log_lik,
                prior,
            },
            ln_gap: (0.5f64).ln(),
            window_accepted: 0,
            step: 0,
            warmup,
            rng,
            theta_cond: None,
            out: ChainDraws {
                draws: Vec::new(),
                accepted: Vec::new(),
                start: Vec::new(),
                floored: 0,
            },
        })
    }

    /// Runs the chain until `draws` draws after the warm-up are kept.
    pub(crate) fn advance(&mut self, draws: usize) -> Result<()> {
        let post = self.post;
        let rng = &mut self.rng;
        while self.step < self.warmup + draws {
            let step = self.step;
            let independent = post.draw_g(rng);
            let mut accepted = post.try_move(independent, &mut self.state, rng);
            let rho = 1.0 - self.ln_gap.exp();
            let z = post.standard_normal(rng);
            let local = &post.prop_mean
                + (&self.state.g - &post.prop_mean) * rho
                + &post.prop_chol * z * (1.0 - rho * rho).sqrt();
            let moved = post.try_move(local, &mut self.state, rng);
            accepted |= moved;
            if step < self.warmup {
                self.window_accepted += usize::from(moved);
                if (step + 1).is_multiple_of(PCN_WINDOW) {
                    let rate = self.window_accepted as f64 / PCN_WINDOW as f64;
                    // a larger gap 1 − ρ is a bolder move; a window without an accepted move
                    // shrinks ln(1 − ρ) by 1, so the default warm-up's 10 windows reach gaps
                    // down to e⁻¹¹ if the cone is that narrow
                    self.ln_gap = (self.ln_gap + 4.0 * (rate - PCN_TARGET)).min(0.0);
                    self.window_accepted = 0;
                }
            }
            if accepted || self.theta_cond.is_none() {
                self.theta_cond =
                    post.theta_factor(&self.state.h, &self.state.ybar, &self.state.prior.prec);
            }
            let (chol, mean) = self
                .theta_cond
                .as_ref()
                .ok_or_else(|| failed("theta conditional"))?;
            let theta = draw_from_factor(chol, mean, rng).ok_or_else(|| failed("theta draw"))?;
            if step == 0 {
                self.out.start = theta.iter().copied().collect();
            }
            if let Some(nu) = post.student_df {
                self.state.prior = post.mixture_scales(nu, &theta, rng)?;
                self.state.log_lik = post
                    .score_likelihood(&self.state.h, &self.state.prior.cov)
                    .ok_or_else(|| failed("mixture likelihood"))?
                    .1;
                self.theta_cond = None;
            }
            if step >= self.warmup {
                self.out.draws.extend(theta.iter());
                self.out.accepted.push(accepted);
            }
            self.step += 1;
        }
        Ok(())
    }
}

/// A step of this posterior that the releases' noise made impossible ([`too_noisy`]).
fn failed(what: &str) -> Error {
    too_noisy("noise-aware posterior", what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise_aware::data::GlmData;
    use crate::noise_aware::releases::{SCHEDULE, newton_path};
    use crate::rng::chain_rng;

    /// The chains sample the posterior they claim, also where most of the information
    /// releases' Gaussian lies outside the positive definite cone: their mean and sd of θ
    /// agree with an independent importance-sampling estimate of the same posterior (draws of
    /// the releases' Gaussian, the indefinite ones dropped, weighted by the score releases'
    /// likelihood, θ | H integrated exactly). Checked to fail when the Crank-Nicolson move is
    /// not reversible for the Gaussian or when the likelihood ratio is tempered.
    #[test]
    fn chains_match_importance_sampling_of_the_same_posterior() {
        // a small logistic regression at a small budget: releases that often leave the cone
        let mut rng = chain_rng(11, 0);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..400 {
            let a: f64 = rng.random();
            let p = 1.0 / (1.0 + (-(-0.3 + 1.2 * a)).exp());
            x.extend([1.0, a]);
            y.push(f64::from(rng.random::<f64>() < p));
        }
        let names = vec!["b0".to_string(), "b1".to_string()];
        let data = GlmData::new(
            GlmKind::Logistic,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0)],
            (0.0, 1.0),
            10.0,
            names,
        )
        .unwrap();
        // budgets this small leave 22 % (μ = 0.003, where the score releases' likelihood
        // shapes the information), 61 % and 96 % (μ = 0.0003, release seeds 1 and 2; there the
        // local move carries the chain) of the releases' Gaussian indefinite
        for (mu, seed, range) in [
            (0.003, 2, 0.1..0.4),
            (0.0003, 1, 0.5..0.9),
            (0.0003, 2, 0.9..0.995),
        ] {
            check_against_importance_sampling(&data, mu, &SCHEDULE, seed, range);
        }
        // precise score releases at two points beside a noisy information release (90 %
        // indefinite): the score releases' likelihood shapes H (a sampler that tempers it
        // fails here)
        let schedule = [(0.005, 0.3), (0.005, 0.69)];
        check_against_importance_sampling(&data, 0.02, &schedule, 4, 0.8..0.95);
    }

    fn check_against_importance_sampling(
        data: &GlmData,
        mu: f64,
        schedule: &[(f64, f64)],
        seed: u64,
        range: std::ops::Range<f64>,
    ) {
        let plan = crate::noise_aware::PathPlan::Fixed(schedule.to_vec());
        let path = newton_path(data, mu, &plan, &mut chain_rng(seed, 1)).unwrap();
        let pooled = pooled_rounds(&path.rounds, pooled_round_count(GlmKind::Logistic));
        assert!(data.prior.mean.iter().all(|m| *m == 0.0));
        let post = NoiseAwarePosterior::with_prior(
            &path.rounds,
            &pooled,
            data.prior.cov.clone(),
            None,
            &[],
        )
        .unwrap();
        let indefinite = post.indefinite_share();
        assert!(
            range.contains(&indefinite),
            "the regime tested: indefinite share {indefinite}"
        );
        // importance sampling: E[θ] and E[θθᵀ] from the exact conditional given each H
        let mut is_rng = chain_rng(5, 2);
        let (mut w_sum, mut m1, mut m2) = (0.0, DVector::zeros(2), DMatrix::zeros(2, 2));
        let mut draws = Vec::new();
        for _ in 0..200_000 {
            let g = post.draw_g(&mut is_rng);
            if let Some(h) = post.information(&g)
                && let Some((ybar, log)) = post.score_likelihood(&h, &post.prior_cov)
            {
                draws.push((h, ybar, log));
            }
        }
        let top = draws.iter().map(|d| d.2).fold(f64::NEG_INFINITY, f64::max);
        for (h, ybar, log) in &draws {
            let w = (log - top).exp();
            let (prec, b) = post.theta_conditional(h, ybar, &post.prior_prec).unwrap();
            let cov = prec.cholesky().unwrap().inverse();
            let mean = &cov * b;
            w_sum += w;
            m1 += &mean * w;
            m2 += (&cov + &mean * mean.transpose()) * w;
        }
        let is_mean = m1 / w_sum;
        let is_cov = m2 / w_sum - &is_mean * is_mean.transpose();
        let (mean, sds) = chain_moments(&post);
        for i in 0..2 {
            let sd_is = is_cov[(i, i)].sqrt();
            let sd = sds[i];
            // 80 000 correlated draws (bulk ESS in the thousands): the Monte Carlo error of the
            // mean is a few hundredths of an sd, of the sd about 2 %
            assert!(
                (mean[i] - is_mean[i]).abs() < 0.1 * sd_is,
                "θ{i}: chains {} vs importance sampling {} (sd {sd_is})",
                mean[i],
                is_mean[i]
            );
            assert!(
                (sd / sd_is - 1.0).abs() < 0.06,
                "θ{i}: sd {sd} vs importance sampling {sd_is}"
            );
        }
    }

    /// Under a Student-t prior (the scale mixture sampled by a Gibbs step for its scales) the
    /// chains sample the posterior they claim: their mean and sd of θ agree with importance
    /// sampling of the same posterior (`H` from the information releases' Gaussian, θ from its
    /// conditional under the scale Gaussian, weighted by that Gaussian's marginal likelihood
    /// and the ratio of the Student-t and Gaussian prior densities). The effect is strong
    /// against a prior scale of 1, so the Cauchy posterior's mean is far from the Gaussian
    /// one's (checked: a chain that skips the scale step fails).
    #[test]
    fn chains_match_importance_sampling_under_a_student_t_prior() {
        let mut rng = chain_rng(12, 0);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            let a: f64 = 2.0 * rng.random::<f64>() - 1.0;
            let p = 1.0 / (1.0 + (-(-1.0 + 3.0 * a)).exp());
            x.extend([1.0, a]);
            y.push(f64::from(rng.random::<f64>() < p));
        }
        let names = vec!["b0".to_string(), "b1".to_string()];
        let data = GlmData::new(
            GlmKind::Logistic,
            x,
            y,
            vec![(1.0, 1.0), (-1.0, 1.0)],
            (0.0, 1.0),
            10.0,
            names,
        )
        .unwrap();
        let plan = crate::noise_aware::PathPlan::Fixed(SCHEDULE.to_vec());
        let path = newton_path(&data, 0.002, &plan, &mut chain_rng(3, 1)).unwrap();
        let pooled = pooled_rounds(&path.rounds, pooled_round_count(GlmKind::Logistic));
        let scale = DMatrix::identity(2, 2);
        let nu = 1.0;
        let post =
            NoiseAwarePosterior::with_prior(&path.rounds, &pooled, scale.clone(), Some(nu), &[])
                .unwrap();
        // importance sampling, 40 000 draws of H with 5 draws of θ | H each
        let mut is_rng = chain_rng(5, 2);
        let mut weighted = Vec::new();
        for _ in 0..40_000 {
            let g = post.draw_g(&mut is_rng);
            let Some(h) = post.information(&g) else {
                continue;
            };
            let Some((ybar, log)) = post.score_likelihood(&h, &scale) else {
                continue;
            };
            let (chol, mean) = post.theta_factor(&h, &ybar, &post.prior_prec).unwrap();
            for _ in 0..5 {
                let t = draw_from_factor(&chol, &mean, &mut is_rng).unwrap();
                let ratio = weighted_ratio(&t, nu);
                weighted.push((t, log, ratio, mean.clone()));
            }
        }
        let top = weighted
            .iter()
            .map(|w| w.1 + w.2)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut w_sum, mut w_sq, mut m1, mut m2) =
            (0.0, 0.0, DVector::zeros(2), DVector::zeros(2));
        let (mut n_sum, mut gauss) = (0.0, DVector::zeros(2));
        for (t, log, ratio, mean) in &weighted {
            let w = (log + ratio - top).exp();
            w_sum += w;
            w_sq += w * w;
            m1 += t * w;
            m2 += t.component_mul(t) * w;
            // the Gaussian prior's posterior mean (weights without the density ratio)
            let wn = (log - top).exp();
            n_sum += wn;
            gauss += mean * wn;
        }
        let ess = w_sum * w_sum / w_sq;
        assert!(ess > 5_000.0, "importance sampling ESS {ess}");
        let is_mean = &m1 / w_sum;
        let is_sd = (&m2 / w_sum - is_mean.component_mul(&is_mean)).map(f64::sqrt);
        let gauss = gauss / n_sum;
        let (mean, sds) = chain_moments(&post);
        // the slope's Cauchy posterior is far from its Gaussian-prior one: the test can tell
        assert!(
            (is_mean[1] - gauss[1]).abs() > 0.5 * is_sd[1],
            "Cauchy {} vs Gaussian {} (sd {})",
            is_mean[1],
            gauss[1],
            is_sd[1]
        );
        for i in 0..2 {
            let sd = sds[i];
            // as above: the chains' Monte Carlo error a few hundredths of an sd, importance
            // sampling's (ESS over 5 000) about as small
            assert!(
                (mean[i] - is_mean[i]).abs() < 0.1 * is_sd[i],
                "θ{i}: chains {} vs importance sampling {} (sd {})",
                mean[i],
                is_mean[i],
                is_sd[i]
            );
            assert!(
                (sd / is_sd[i] - 1.0).abs() < 0.08,
                "θ{i}: sd {sd} vs importance sampling {}",
                is_sd[i]
            );
        }
    }

    /// The mean and sd of θ (two parameters) over four chains of 20 000 draws after 500.
    fn chain_moments(post: &NoiseAwarePosterior) -> (DVector<f64>, DVector<f64>) {
        let (mut sum, mut sq, mut k) = (DVector::zeros(2), DVector::zeros(2), 0.0);
        for c in 0..4 {
            let chain = post.chain(500, 20_000, &mut chain_rng(9, c)).unwrap();
            for t in chain.draws.chunks_exact(2) {
                let t = DVector::from_column_slice(t);
                sq += t.component_mul(&t);
                sum += t;
                k += 1.0;
            }
        }
        let mean = &sum / k;
        let sd = (&sq / k - mean.component_mul(&mean)).map(f64::sqrt);
        (mean, sd)
    }

    /// `log π_t(θ) − log π_N(θ)` for unit scales.
    fn weighted_ratio(t: &DVector<f64>, nu: f64) -> f64 {
        t.iter()
            .map(|v| -0.5 * (nu + 1.0) * (v * v / nu).ln_1p() + 0.5 * v * v)
            .sum()
    }

    /// With declared indicators the information's draws keep the products the declaration
    /// fixes (an indicator's square, two members' product of a one-hot group), whatever the
    /// releases' noise: the latent information lives on the structure's subspace.
    #[test]
    fn information_draws_keep_the_declared_structure() {
        let mut rng = chain_rng(9, 0);
        let n = 2000;
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for i in 0..n {
            let level = i % 3; // 0: the baseline
            let (a, b) = (
                f64::from(u8::from(level == 1)),
                f64::from(u8::from(level == 2)),
            );
            let s = f64::from(u8::from(i % 4 == 0));
            x.extend([1.0, a, b, s]);
            let eta = -0.5 + 0.8 * a - 0.4 * b + 0.6 * s;
            y.push(f64::from(u8::from(
                rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp()),
            )));
        }
        let names = ["c", "a", "b", "s"].map(String::from).to_vec();
        let data = GlmData::new(
            GlmKind::Logistic,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
            (0.0, 1.0),
            10.0,
            names,
        )
        .unwrap()
        .one_hot(&["a", "b"])
        .unwrap()
        .binary(&["s"])
        .unwrap();
        let rules = crate::noise_aware::structure::determined_entries(&data);
        assert_eq!(rules.len(), 4);
        let plan = crate::noise_aware::PathPlan::Fixed(SCHEDULE.to_vec());
        let path = newton_path(&data, 0.5, &plan, &mut chain_rng(3, 1)).unwrap();
        let pooled = pooled_rounds(&path.rounds, pooled_round_count(GlmKind::Logistic));
        let post = NoiseAwarePosterior::with_prior(
            &path.rounds,
            &pooled,
            data.prior.cov.clone(),
            None,
            &rules,
        )
        .unwrap();
        let mut checked = 0;
        for _ in 0..200 {
            let Some(h) = post.information(&post.draw_g(&mut rng)) else {
                continue;
            };
            let v = crate::noise_aware::linalg::svec(&h);
            for rule in &rules {
                let got: f64 = rule.terms.iter().map(|&(k, c)| c * v[k]).sum();
                assert!((got - v[rule.entry]).abs() <= 1e-8 * v[0].abs(), "{rule:?}");
            }
            checked += 1;
        }
        assert!(checked > 50, "{checked} positive definite draws of 200");
    }
}
