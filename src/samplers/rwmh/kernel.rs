//! Random-walk Metropolis-Hastings (non-private baseline), optionally with per-row clipping of
//! the log-likelihood ratios at `b·dist(θ, θ')` as in the thesis' clipping study (§3.1).
//! With clipping it records whether clipping changed the decision (same `U`).

use rand::RngExt;

use crate::error::{Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo, metropolis};
use crate::samplers::pass::RowCache;
use crate::samplers::proposal::{ClipDistance, ProposalKind};
use crate::samplers::walk_state::WalkState;

/// RWMH kernel settings (build with [`Rwmh`](super::Rwmh)).
#[derive(Clone, Debug)]
pub struct RwmhKernel {
    /// Proposal standard deviations.
    pub(crate) proposal_sd: Vec<f64>,
    /// Per-row ratio clip bound per unit distance; `None` = no clipping (plain MH).
    pub(crate) clip_bound: Option<f64>,
    /// Distance that scales the clip bound.
    pub(crate) clip_distance: ClipDistance,
}

/// Per-chain state of RWMH.
#[derive(Clone, Debug)]
pub struct RwmhState {
    rw: WalkState,
    cache: RowCache,
}

impl RwmhKernel {
    /// Validate the settings.
    pub fn new(
        proposal_sd: Vec<f64>,
        clip_bound: Option<f64>,
        clip_distance: ClipDistance,
    ) -> Result<Self> {
        for &s in &proposal_sd {
            check::positive("proposal_sd", s)?;
        }
        if let Some(b) = clip_bound {
            check::positive("clip_bound", b)?;
        }
        Ok(RwmhKernel {
            proposal_sd,
            clip_bound,
            clip_distance,
        })
    }
}

impl Kernel for RwmhKernel {
    type State = RwmhState;

    fn name(&self) -> &'static str {
        "rwmh"
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check::len("proposal_sd", self.proposal_sd.len(), model.dim())
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<RwmhState> {
        Ok(RwmhState {
            rw: WalkState::new(
                model,
                theta0,
                ProposalKind::Full,
                self.proposal_sd.clone(),
                rng,
            )?,
            cache: RowCache::new(model, theta0),
        })
    }

    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut RwmhState,
        rng: &mut ChainRng,
    ) -> StepInfo {
        s.rw.propose(rng);
        let bound = match self.clip_bound {
            Some(b) => b * self.clip_distance.eval(&s.rw.theta, &s.rw.proposal_buf),
            None => f64::INFINITY,
        };
        let sums =
            s.cache
                .clipped_ratio_sum::<true, _>(model, &s.rw.theta, &s.rw.proposal_buf, bound);
        let t = model.tempering();
        let lp_new = model.log_prior(&s.rw.proposal_buf);
        let prior_diff = lp_new - s.rw.log_prior;
        let log_alpha = t * sums.sum + prior_diff;
        let log_u = rng.random::<f64>().ln();
        let (accepted, nonfinite) = metropolis(log_u, log_alpha);
        let (unclipped, _) = metropolis(log_u, t * sums.raw_sum + prior_diff);
        if accepted {
            s.rw.accept(lp_new);
            s.cache.accept();
        }
        StepInfo {
            accepted,
            log_alpha,
            clipped: sums.clipped as u64,
            rows: model.n_rows() as u64,
            decision_changed: accepted != unclipped,
            nonfinite,
            ..StepInfo::default()
        }
    }

    fn position<'a>(&self, s: &'a RwmhState) -> &'a [f64] {
        &s.rw.theta
    }

    fn set_pass_threads(&self, s: &mut RwmhState, threads: usize) {
        s.cache.set_threads(threads);
    }

    fn set_step_scale(&self, s: &mut RwmhState, scale: f64) {
        s.rw.walk.set_scale(scale);
    }
}
