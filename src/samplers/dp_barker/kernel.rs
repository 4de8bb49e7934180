//! DP Barker (Heikkilä et al. 2019; thesis §3.3, Theorem 7; THESIS-NOTES §8): Barker's acceptance
//! test on a minibatch, with the batch noise completed to `N(0, C)`, `C = 2`, and the
//! correction `V_corr` so that the total noise is approximately logistic.
//!
//! Per step: clip bound `B = 0.99·√b/(nT)` (the thesis code's 0.99 keeps `σ_b² ≤ 0.9801 < 1`);
//! `λ = nT·r̄ + ln p(θ') − ln p(θ)`; `σ_b² = (nT)²/b·Var(r)`; accept iff
//! `λ + N(0, C − σ_b²) + V_corr > 0`. If `σ_b²` ever exceeded 1 (impossible with this clip
//! bound, barring round-off), the step is rejected and recorded with `nonfinite = true`
//! instead of the thesis code's silent break.
//!
//! A seeded PRNG reproduces research runs; it is not a secure source for a real DP release.

use rand_distr::{Distribution, StandardNormal};

use crate::error::{Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::batch::SubsampledState;
use crate::samplers::kernel::{Kernel, StepInfo};
use crate::samplers::proposal::ProposalKind;
use crate::samplers::vcorr::vcorr;

/// Barker's total noise variance C (its privacy analysis, `accounting/barker/exact.rs`, holds
/// the constant).
pub const BARKER_NOISE_VAR: f64 = crate::accounting::barker::exact::NOISE_VAR;

/// DP Barker settings (build with [`DpBarker`](super::DpBarker)).
#[derive(Clone, Debug)]
pub struct DpBarkerKernel {
    /// Batch size b.
    pub(crate) batch_size: usize,
    /// Proposal standard deviations.
    pub(crate) proposal_sd: Vec<f64>,
}

/// Per-chain state of DP Barker.
pub type DpBarkerState = SubsampledState;

impl DpBarkerKernel {
    /// Validate (batch ≥ 1, proposal sds > 0).
    pub fn new(batch_size: usize, proposal_sd: Vec<f64>) -> Result<Self> {
        check::at_least_one("batch_size", batch_size)?;
        for &s in &proposal_sd {
            check::positive("proposal_sd", s)?;
        }
        Ok(DpBarkerKernel {
            batch_size,
            proposal_sd,
        })
    }

    /// The clip bound `0.99·√b/(nT)`.
    pub fn clip_bound(&self, n: f64, t: f64) -> f64 {
        crate::accounting::barker::exact::CLIP_FACTOR * (self.batch_size as f64).sqrt() / (n * t)
    }
}

impl Kernel for DpBarkerKernel {
    type State = DpBarkerState;

    fn name(&self) -> &'static str {
        "dp-barker"
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        SubsampledState::validate(model, &self.proposal_sd, self.batch_size)
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<Self::State> {
        SubsampledState::new(
            model,
            theta0,
            self.batch_size,
            ProposalKind::Full,
            self.proposal_sd.clone(),
            rng,
        )
    }

    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut Self::State,
        rng: &mut ChainRng,
    ) -> StepInfo {
        s.walk.propose(&s.theta, &mut s.proposal_buf, rng);
        let n = model.n_rows() as f64;
        let t = model.tempering();
        let bound = self.clip_bound(n, t);
        let stats = s
            .batches
            .clipped_batch_stats(model, &s.theta, &s.proposal_buf, bound, rng);
        let batch_var = (n * t).powi(2) / self.batch_size as f64 * stats.var;
        let lp_new = model.log_prior(&s.proposal_buf);
        let lambda = n * t * stats.mean + lp_new - s.log_prior;
        let mut info = StepInfo {
            clipped: stats.clipped,
            rows: self.batch_size as u64,
            batch_var,
            ..StepInfo::default()
        };
        // the accountants assume σ_b² ≤ 1 (noise variance ≥ C − 1); false for NaN too
        let variance_ok = batch_var <= crate::accounting::barker::exact::MAX_BATCH_VAR;
        if !variance_ok || lambda.is_nan() || lambda == f64::INFINITY {
            info.nonfinite = true;
            return info;
        }
        let z: f64 = StandardNormal.sample(rng);
        let stat = lambda + (BARKER_NOISE_VAR - batch_var).sqrt() * z + vcorr().sample(rng);
        info.accepted = stat > 0.0;
        info.log_alpha = stat;
        if info.accepted {
            std::mem::swap(&mut s.theta, &mut s.proposal_buf);
            s.log_prior = lp_new;
        }
        info
    }

    fn position<'a>(&self, s: &'a Self::State) -> &'a [f64] {
        &s.theta
    }

    fn set_pass_threads(&self, s: &mut Self::State, threads: usize) {
        s.batches.set_threads(threads);
    }

    fn set_step_scale(&self, s: &mut Self::State, scale: f64) {
        s.walk.set_scale(scale);
    }
}
