//! Hamiltonian Monte Carlo: the non-private baseline (optionally with clipped log-likelihood
//! ratios, thesis §3.2) and DP HMC (thesis Chapter 4, Algorithm 4 corrected per THESIS-NOTES §3,
//! §15).
//!
//! DP HMC releases a noisy clipped gradient at every leapfrog position,
//! `G(θ) = T·(Σ_j clip_{b_g}(∇ℓ_j(θ)) + N(0, σ_g² I)) + ∇ln p(θ)` with `σ_g = 2τ_g√n·b_g`,
//! and a noisy clipped log-likelihood ratio with noise std `τ_l√n·2b_lΔ` in
//! `ΔH = ½Σp₀²/m − ½Σp²/m + T·(Σ_j clip(r_j, ±b_lΔ) + ξ) + ln p(θ') − ln p(θ)`; it accepts iff
//! `ln U < ΔH − ½(T·τ_l√n·2b_lΔ)²`.
//!
//! **Gradient variants.** [`Gradient::Fresh`] (default; final thesis) draws a fresh noisy
//! gradient at the start of every iteration: `k(L+1)` gradient releases (the clipped sum
//! behind that first one is the sum computed when the chain arrived at θ, the accepted
//! proposal's last leapfrog gradient: only its noise is new, so an iteration makes `L` passes
//! for its gradients, not `L + 1`, with the same draws). [`Gradient::Reuse`]
//! (March thesis text, Algorithm 4) re-uses the end-point gradient of the last accepted
//! trajectory: `kL+1` releases. Fresh is the default because the re-used noisy gradient is not
//! part of the chain's state, so the reversibility argument (Theorem 10) does not cover it.
//!
//! With discrete noise ([`crate::noise`]) the ratio test's data term `T·Σ_j clip(r_j)` is
//! rounded to the lattice and released with exact discrete Gaussian noise; the gradients stay
//! continuous (floating-point) Gaussians.
//!
//! The baseline is the same kernel with no noise and no gradient clipping. A seeded PRNG
//! reproduces research runs; it is not a secure source for a real DP release.

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::noise::Lattice;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo, metropolis};
use crate::samplers::pass::{GradBuffer, RowCache};
use crate::samplers::proposal::ClipDistance;

/// Where the first half-step's gradient of each iteration comes from (the accountant's
/// [`Gradient`](crate::samplers::Gradient): `Fresh`, `k(L+1)` evaluations, or `Reuse`, `kL+1`).
use crate::samplers::Gradient;

/// Privacy noise of DP HMC (absent for the non-private baseline).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HmcNoise {
    /// Log-likelihood-ratio noise scale τ_l.
    pub(crate) tau_l: f64,
    /// Gradient noise scale τ_g.
    pub(crate) tau_g: f64,
    /// Per-row gradient clip bound b_g (L2).
    pub(crate) grad_clip: f64,
}

/// At most this many leapfrog steps per iteration: one iteration cannot be interrupted by
/// `max_time`, so its work must stay bounded.
pub const MAX_LEAPFROG_STEPS: usize = 1 << 20;

/// HMC kernel settings (build with [`Hmc`](crate::samplers::Hmc) or [`DpHmc`](crate::samplers::DpHmc)).
#[derive(Clone, Debug)]
pub struct HmcKernel {
    /// Leapfrog steps L.
    pub(crate) leapfrog_steps: usize,
    /// Step size η.
    pub(crate) step_size: f64,
    /// Diagonal mass matrix.
    pub(crate) mass: Vec<f64>,
    /// Per-row ratio clip bound b_l per unit distance (`None`: no clipping).
    pub(crate) ratio_clip: Option<f64>,
    /// Distance scaling the ratio clip bound.
    pub(crate) clip_distance: ClipDistance,
    /// Privacy noise (`None`: non-private HMC).
    pub(crate) noise: Option<HmcNoise>,
    /// Fresh or re-used initial gradient.
    pub(crate) gradient: Gradient,
    /// Discrete Gaussian noise on this lattice for the ratio test (`None`: continuous).
    pub(crate) lattice: Option<Lattice>,
}

/// Per-chain state of HMC.
#[derive(Clone, Debug)]
pub struct HmcState {
    theta: Vec<f64>,
    theta_new: Vec<f64>,
    p0: Vec<f64>,
    p: Vec<f64>,
    grad: Vec<f64>,
    grad_new: Vec<f64>,
    /// The clipped gradient sum at `theta` before noise, and its clipped rows once known
    /// (`None` until the first iteration computes it).
    raw_theta: Vec<f64>,
    raw_theta_clipped: Option<u64>,
    /// The same at the last leapfrog position (the proposal's end point).
    raw_new: Vec<f64>,
    raw_new_clipped: u64,
    prior_grad: Vec<f64>,
    log_prior: f64,
    cache: RowCache,
    grads: GradBuffer,
    pending_grad_clipped: u64,
    pending_grad_rows: u64,
    /// Warm-up scale of the step size (1: the configured step).
    step_scale: f64,
}

impl HmcKernel {
    /// Validate the settings (`L ≥ 1`, `η > 0`, masses > 0, clip bounds and τs > 0).
    pub fn new(
        leapfrog_steps: usize,
        step_size: f64,
        mass: Vec<f64>,
        ratio_clip: Option<f64>,
        noise: Option<HmcNoise>,
        gradient: Gradient,
    ) -> Result<Self> {
        check::at_least_one("leapfrog_steps", leapfrog_steps)?;
        if leapfrog_steps > MAX_LEAPFROG_STEPS {
            return Err(Error::invalid(
                "leapfrog_steps",
                leapfrog_steps,
                format!(
                    "at most {MAX_LEAPFROG_STEPS} per iteration (a step cannot be interrupted \
                     by max_time); use fewer leapfrog steps with a larger step size"
                ),
            ));
        }
        check::positive("step_size", step_size)?;
        for &m in &mass {
            check::positive("mass", m)?;
        }
        if let Some(b) = ratio_clip {
            check::positive("clip_bound", b)?;
        }
        if let Some(nz) = noise {
            check::positive("tau_l", nz.tau_l)?;
            check::positive("tau_g", nz.tau_g)?;
            check::positive("grad_clip_bound", nz.grad_clip)?;
            if ratio_clip.is_none() {
                return Err(Error::invalid(
                    "clip_bound",
                    "none",
                    "DP HMC needs a log-likelihood-ratio clip bound b_l > 0",
                ));
            }
        }
        Ok(HmcKernel {
            leapfrog_steps,
            step_size,
            mass,
            ratio_clip,
            clip_distance: ClipDistance::L2,
            noise,
            gradient,
            lattice: None,
        })
    }

    /// The distance that scales the ratio clip bound (default [`ClipDistance::L2`]; the DP
    /// HMC ratio noise follows it, see [`ratio_noise_sd`](Self::ratio_noise_sd)).
    #[must_use]
    pub fn with_clip_distance(mut self, distance: ClipDistance) -> Self {
        self.clip_distance = distance;
        self
    }

    /// Use exact discrete Gaussian noise on `lattice` in the ratio test (`None`: continuous;
    /// ignored without privacy noise).
    #[must_use]
    pub fn with_lattice(mut self, lattice: Option<Lattice>) -> Self {
        self.lattice = lattice;
        self
    }

    /// The clipped per-row gradient sum at `theta` into `raw`: the statistic a gradient
    /// release adds noise to (a deterministic pass: the same bits for the same `theta`).
    /// Returns the clipped rows.
    fn raw_gradient<M: Model + ?Sized>(
        &self,
        model: &M,
        theta: &[f64],
        grads: &mut GradBuffer,
        raw: &mut [f64],
    ) -> u64 {
        let bound = self.noise.map_or(f64::INFINITY, |nz| nz.grad_clip);
        // `validate` checked `has_gradient`, so the model's per-row gradients exist.
        grads
            .clipped_grad_sum(model, theta, bound, raw)
            .unwrap_or_else(|_| {
                raw.iter_mut().for_each(|x| *x = f64::NAN);
                0
            }) as u64
    }

    /// One gradient release from the raw sum in `out`, in place: the noisy (DP) or exact
    /// gradient of the tempered log posterior at `theta`, `T·(raw + N(0, σ_g²I)) + ∇ln p(θ)`.
    fn release<M: Model + ?Sized>(
        &self,
        model: &M,
        theta: &[f64],
        prior_grad: &mut [f64],
        out: &mut [f64],
        rng: &mut ChainRng,
    ) {
        let t = model.tempering();
        let sd = self.noise.map_or(0.0, |nz| {
            2.0 * nz.tau_g * (model.n_rows() as f64).sqrt() * nz.grad_clip
        });
        model.grad_log_prior(theta, prior_grad);
        for (o, pg) in out.iter_mut().zip(prior_grad.iter()) {
            let z: f64 = if sd > 0.0 {
                StandardNormal.sample(rng)
            } else {
                0.0
            };
            *o = t * (*o + sd * z) + pg;
        }
    }

    /// The noisy (DP) or exact gradient of the tempered log posterior at `theta`, into `out`.
    /// Returns (clipped rows, evaluated rows).
    #[allow(clippy::too_many_arguments)]
    fn gradient<M: Model + ?Sized>(
        &self,
        model: &M,
        theta: &[f64],
        grads: &mut GradBuffer,
        prior_grad: &mut [f64],
        out: &mut [f64],
        rng: &mut ChainRng,
    ) -> (u64, u64) {
        let clipped = self.raw_gradient(model, theta, grads, out);
        self.release(model, theta, prior_grad, out, rng);
        (clipped, model.n_rows() as u64)
    }
}

impl HmcKernel {
    /// Standard deviation of the ratio test's noise when the per-row ratios are clipped at
    /// `bound` (`τ_l√n·2B`; 0 without privacy noise). The noise is calibrated to the very
    /// bound the ratios are clipped at (sensitivity `2B` under substitution), whatever
    /// [`ClipDistance`] scales it.
    pub fn ratio_noise_sd(&self, n_rows: usize, bound: f64) -> f64 {
        self.noise
            .map_or(0.0, |nz| nz.tau_l * (n_rows as f64).sqrt() * 2.0 * bound)
    }

    /// Draw the momentum and run the leapfrog from `s.theta` into `s.theta_new`/`s.p`, calling
    /// `visit` with every position (the start and each of the `L` steps). Returns the gradient
    /// rows clipped and evaluated (including a pending initial release of the re-use variant).
    fn trajectory_into<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut HmcState,
        rng: &mut ChainRng,
        visit: &mut impl FnMut(&[f64]),
    ) -> (u64, u64) {
        let mut grad_clipped = std::mem::take(&mut s.pending_grad_clipped);
        let mut grad_rows = std::mem::take(&mut s.pending_grad_rows);
        for (p0, m) in s.p0.iter_mut().zip(&self.mass) {
            let z: f64 = StandardNormal.sample(rng);
            *p0 = m.sqrt() * z;
        }
        s.p.copy_from_slice(&s.p0);
        s.theta_new.copy_from_slice(&s.theta);
        visit(&s.theta_new);
        match self.gradient {
            Gradient::Fresh => {
                // a fresh release of the statistic at θ: its raw sum is the one computed when
                // the chain arrived at θ (the last leapfrog gradient of the accepted
                // proposal, or this start's after a rejection), only the noise is new
                let c = match s.raw_theta_clipped {
                    Some(c) => c,
                    None => {
                        let c = self.raw_gradient(model, &s.theta, &mut s.grads, &mut s.raw_theta);
                        s.raw_theta_clipped = Some(c);
                        c
                    }
                };
                s.grad_new.copy_from_slice(&s.raw_theta);
                self.release(model, &s.theta, &mut s.prior_grad, &mut s.grad_new, rng);
                grad_clipped += c;
                grad_rows += model.n_rows() as u64;
            }
            Gradient::Reuse => s.grad_new.copy_from_slice(&s.grad),
        }
        let eta = self.step_size * s.step_scale;
        for _ in 0..self.leapfrog_steps {
            for (p, g) in s.p.iter_mut().zip(&s.grad_new) {
                *p += 0.5 * eta * g;
            }
            for ((t, p), m) in s.theta_new.iter_mut().zip(&s.p).zip(&self.mass) {
                *t += eta * p / m;
            }
            visit(&s.theta_new);
            let c = self.raw_gradient(model, &s.theta_new, &mut s.grads, &mut s.raw_new);
            s.raw_new_clipped = c;
            s.grad_new.copy_from_slice(&s.raw_new);
            self.release(model, &s.theta_new, &mut s.prior_grad, &mut s.grad_new, rng);
            grad_clipped += c;
            grad_rows += model.n_rows() as u64;
            for (p, g) in s.p.iter_mut().zip(&s.grad_new) {
                *p += 0.5 * eta * g;
            }
        }
        (grad_clipped, grad_rows)
    }

    /// The leapfrog positions of one proposal from the chain's current position (start
    /// included, `L + 1` points), without the accept step: the chain does not move. Each
    /// noisy gradient is a privacy release like a step's (thesis Fig 4.1 draws one).
    ///
    /// ```
    /// use dp_mcmc::models::{CircleModel, Model};
    /// use dp_mcmc::rng::chain_rng;
    /// use dp_mcmc::samplers::{DpHmc, Kernel};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = CircleModel::new(&CircleModel::generate_radii(1000, 1)?, 1e-5)?;
    /// let kernel = DpHmc::builder().tau_l(0.6).tau_g(1.9).leapfrog_steps(48).step_size(0.07)
    ///     .clip_bound(0.001).grad_clip_bound(0.0015).kernel(&model)?;
    /// let mut rng = chain_rng(46327, 0);
    /// let mut state = kernel.init(&model, &[0.0, 1.0], &mut rng)?;
    /// let path = kernel.trajectory(&model, &mut state, &mut rng);
    /// assert_eq!(path.len(), 49);
    /// assert_eq!(path[0], vec![0.0, 1.0]);
    /// assert_eq!(kernel.position(&state), &[0.0, 1.0]); // not moved
    /// # Ok(()) }
    /// ```
    pub fn trajectory<M: Model + ?Sized>(
        &self,
        model: &M,
        state: &mut HmcState,
        rng: &mut ChainRng,
    ) -> Vec<Vec<f64>> {
        let mut path = Vec::with_capacity(self.leapfrog_steps + 1);
        self.trajectory_into(model, state, rng, &mut |theta| path.push(theta.to_vec()));
        path
    }
}

impl Kernel for HmcKernel {
    type State = HmcState;

    fn name(&self) -> &'static str {
        if self.noise.is_some() {
            "dp-hmc"
        } else {
            "hmc"
        }
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check::len("mass", self.mass.len(), model.dim())?;
        if !model.has_gradient() {
            return Err(Error::Model(
                "HMC needs per-row gradients: implement `grad_log_lik_row` and `has_gradient`"
                    .into(),
            ));
        }
        Ok(())
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<HmcState> {
        let d = model.dim();
        let mut s = HmcState {
            theta: theta0.to_vec(),
            theta_new: theta0.to_vec(),
            p0: vec![0.0; d],
            p: vec![0.0; d],
            grad: vec![0.0; d],
            grad_new: vec![0.0; d],
            raw_theta: vec![0.0; d],
            raw_theta_clipped: None,
            raw_new: vec![0.0; d],
            raw_new_clipped: 0,
            prior_grad: vec![0.0; d],
            log_prior: model.log_prior(theta0),
            cache: RowCache::new(model, theta0),
            grads: GradBuffer::new(model),
            pending_grad_clipped: 0,
            pending_grad_rows: 0,
            step_scale: 1.0,
        };
        if self.gradient == Gradient::Reuse {
            // The stored gradient G(θ0): one release before the chain (the "+1" of kL+1).
            let (c, r) = self.gradient(
                model,
                theta0,
                &mut s.grads,
                &mut s.prior_grad,
                &mut s.grad,
                rng,
            );
            s.pending_grad_clipped = c;
            s.pending_grad_rows = r;
        }
        Ok(s)
    }

    fn step<M: Model + ?Sized>(&self, model: &M, s: &mut HmcState, rng: &mut ChainRng) -> StepInfo {
        let (grad_clipped, grad_rows) = self.trajectory_into(model, s, rng, &mut |_| {});
        let bound = match self.ratio_clip {
            Some(b) => b * self.clip_distance.eval(&s.theta, &s.theta_new),
            None => f64::INFINITY,
        };
        let sums = s
            .cache
            .clipped_ratio_sum::<true, _>(model, &s.theta, &s.theta_new, bound);
        let t = model.tempering();
        let noise_sd = self.ratio_noise_sd(model.n_rows(), bound);
        let kinetic =
            |p: &[f64]| -> f64 { p.iter().zip(&self.mass).map(|(p, m)| 0.5 * p * p / m).sum() };
        let lp_new = model.log_prior(&s.theta_new);
        let rest = kinetic(&s.p0) - kinetic(&s.p) + lp_new - s.log_prior;
        let (log_alpha, unclipped_alpha) = match (self.lattice, self.noise) {
            (Some(l), Some(nz)) => {
                // Sensitivity of `T·Σ clip(r_j, ±B)`: `2·T·B`.
                let c = 2.0 * t * bound;
                let nm2 = nz.tau_l * nz.tau_l * model.n_rows() as f64;
                match l.release(t * sums.sum, c, nm2, rng) {
                    // The diagnostic "decision changed by clipping" re-uses the same noise.
                    Ok(r) => (
                        rest + r.log_term(),
                        rest + r.log_term() + t * (sums.raw_sum - sums.sum),
                    ),
                    Err(_) => (f64::NAN, f64::NAN),
                }
            }
            _ => {
                let xi: f64 = if noise_sd > 0.0 {
                    StandardNormal.sample(rng)
                } else {
                    0.0
                };
                (
                    t * (sums.sum + noise_sd * xi) + rest - 0.5 * (t * noise_sd).powi(2),
                    t * (sums.raw_sum + noise_sd * xi) + rest - 0.5 * (t * noise_sd).powi(2),
                )
            }
        };
        let log_u = rng.random::<f64>().ln();
        let (accepted, nonfinite) = metropolis(log_u, log_alpha);
        let (unclipped, _) = metropolis(log_u, unclipped_alpha);
        if accepted {
            std::mem::swap(&mut s.theta, &mut s.theta_new);
            s.log_prior = lp_new;
            s.cache.accept();
            // the last leapfrog gradient was evaluated at the accepted end point
            std::mem::swap(&mut s.raw_theta, &mut s.raw_new);
            s.raw_theta_clipped = Some(s.raw_new_clipped);
            if self.gradient == Gradient::Reuse {
                std::mem::swap(&mut s.grad, &mut s.grad_new);
            }
        }
        StepInfo {
            accepted,
            log_alpha,
            clipped: sums.clipped as u64,
            rows: model.n_rows() as u64,
            grad_clipped,
            grad_rows,
            decision_changed: accepted != unclipped,
            nonfinite,
            ..StepInfo::default()
        }
    }

    fn position<'a>(&self, s: &'a HmcState) -> &'a [f64] {
        &s.theta
    }

    fn set_pass_threads(&self, s: &mut HmcState, threads: usize) {
        s.cache.set_threads(threads);
        s.grads.set_threads(threads);
    }

    fn set_step_scale(&self, s: &mut HmcState, scale: f64) {
        s.step_scale = scale;
    }

    /// Stan's default 0.8 is for NUTS; a fixed-length trajectory under a noisy test does
    /// better a little lower.
    fn adapt_target(&self) -> f64 {
        0.65
    }
}
