//! DP penalty (Yildirim & Ermis 2019; thesis §3.1-3.2, Algorithm 2's sampler): random-walk MH
//! whose log-likelihood ratio is clipped per row and released with Gaussian noise, accepted
//! with the penalty correction (Ceperley-Dewing).
//!
//! Per step: `B = b·Δ` with `Δ = ‖θ − θ'‖₂`; `λ = T·(Σ_j clip(r_j, ±B) + ξ) + ln p(θ') − ln p(θ)`
//! with `ξ ~ N(0, (τ√n·2bΔ)²)`; accept iff `ln U < λ − ½(T·τ√n·2bΔ)²`. The noise is scaled by
//! the same `T` as the clipped sum (THESIS-NOTES §4: the invariant that keeps every step a Gaussian
//! mechanism with `μ = 1/(2τ²n)`, whatever `T` and `Δ` are).
//!
//! With discrete noise ([`crate::noise`]) the data term `T·Σ_j clip(r_j)` is rounded to the
//! lattice and released with exact discrete Gaussian noise calibrated to its rounded
//! sensitivity: `log α = ln p(θ') − ln p(θ) + h·(q + Y) − σ²/2`.
//!
//! A seeded PRNG reproduces research runs; it is not a secure source for a real DP release.

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{Result, check};
use crate::models::Model;
use crate::noise::Lattice;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo, check_penalty, metropolis};
use crate::samplers::pass::RowCache;
use crate::samplers::proposal::{ProposalKind, distance};
use crate::samplers::walk_state::WalkState;

/// The DP penalty kernel (validated settings; build it with [`DpPenalty`](super::DpPenalty)).
#[derive(Clone, Debug)]
pub struct DpPenaltyKernel {
    /// Noise scale τ: the noise std is `τ√n·2bΔ`.
    pub(crate) tau: f64,
    /// Clip bound `b` per unit of `‖θ − θ'‖₂`.
    pub(crate) clip_bound: f64,
    /// Proposal standard deviations (one per coordinate).
    pub(crate) proposal_sd: Vec<f64>,
    /// Full update, OCU or GWMH.
    pub(crate) proposal: ProposalKind,
    /// Discrete Gaussian noise on this lattice (`None`: continuous Gaussian noise).
    pub(crate) lattice: Option<Lattice>,
}

/// Per-chain state of DP penalty.
#[derive(Clone, Debug)]
pub struct DpPenaltyState {
    rw: WalkState,
    cache: RowCache,
}

impl DpPenaltyKernel {
    /// Validate the settings (`tau > 0`, `clip_bound > 0`, proposal sds > 0).
    pub fn new(
        tau: f64,
        clip_bound: f64,
        proposal_sd: Vec<f64>,
        proposal: ProposalKind,
    ) -> Result<Self> {
        check_penalty(tau, clip_bound, &proposal_sd)?;
        Ok(DpPenaltyKernel {
            tau,
            clip_bound,
            proposal_sd,
            proposal,
            lattice: None,
        })
    }

    /// Use exact discrete Gaussian noise on `lattice` (`None`: continuous noise).
    #[must_use]
    pub fn with_lattice(mut self, lattice: Option<Lattice>) -> Self {
        self.lattice = lattice;
        self
    }
}

impl Kernel for DpPenaltyKernel {
    type State = DpPenaltyState;

    fn name(&self) -> &'static str {
        match self.proposal {
            ProposalKind::Full => "dp-penalty",
            ProposalKind::OneComponent => "dp-penalty-ocu",
            ProposalKind::GuidedWalk => "dp-penalty-gwmh",
        }
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check::len("proposal_sd", self.proposal_sd.len(), model.dim())
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<DpPenaltyState> {
        Ok(DpPenaltyState {
            rw: WalkState::new(model, theta0, self.proposal, self.proposal_sd.clone(), rng)?,
            cache: RowCache::new(model, theta0),
        })
    }

    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut DpPenaltyState,
        rng: &mut ChainRng,
    ) -> StepInfo {
        s.rw.propose(rng);
        let delta = distance(&s.rw.theta, &s.rw.proposal_buf);
        let bound = self.clip_bound * delta;
        let sums =
            s.cache
                .clipped_ratio_sum::<false, _>(model, &s.rw.theta, &s.rw.proposal_buf, bound);
        let t = model.tempering();
        let lp_new = model.log_prior(&s.rw.proposal_buf);
        let log_alpha = match self.lattice {
            None => {
                let noise_sd = self.tau * (model.n_rows() as f64).sqrt() * 2.0 * bound;
                let xi: f64 = StandardNormal.sample(rng);
                let lambda = t * (sums.sum + noise_sd * xi) + lp_new - s.rw.log_prior;
                lambda - 0.5 * (t * noise_sd).powi(2)
            }
            // Sensitivity of `T·Σ clip(r_j)` is `T·2B`; noise multiplier² `τ²n`. A failed
            // release (non-finite or out-of-range terms) is a rejected, `nonfinite` step.
            Some(l) => l
                .release(
                    t * sums.sum,
                    t * 2.0 * bound,
                    self.tau * self.tau * model.n_rows() as f64,
                    rng,
                )
                .map_or(f64::NAN, |r| lp_new - s.rw.log_prior + r.log_term()),
        };
        let log_u = rng.random::<f64>().ln();
        let (accepted, nonfinite) = metropolis(log_u, log_alpha);
        if accepted {
            s.rw.accept(lp_new);
            s.cache.accept();
        }
        s.rw.walk.feedback(accepted);
        StepInfo {
            accepted,
            log_alpha,
            clipped: sums.clipped as u64,
            rows: model.n_rows() as u64,
            nonfinite,
            ..StepInfo::default()
        }
    }

    fn position<'a>(&self, s: &'a DpPenaltyState) -> &'a [f64] {
        &s.rw.theta
    }

    fn set_pass_threads(&self, s: &mut DpPenaltyState, threads: usize) {
        s.cache.set_threads(threads);
    }

    fn set_step_scale(&self, s: &mut DpPenaltyState, scale: f64) {
        s.rw.walk.set_scale(scale);
    }
}
