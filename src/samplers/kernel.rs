//! The [`Kernel`] trait (BlackJAX's state/info split) and the per-step record [`StepInfo`].

use crate::error::{Result, check};
use crate::models::Model;
use crate::rng::ChainRng;

/// What one step of a kernel reports (one row of a run's `stats` table).
///
/// `accepted`, `log_alpha` and `nonfinite` are post-processing of the step's released noisy
/// statistic. The clip counts (`clipped`, `grad_clipped`), `decision_changed` and
/// `batch_var` are computed from the raw data: they are diagnostics, **not** covered by any
/// privacy guarantee (the DataFrames of a run name them `*_nonprivate`; docs/SECURITY.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepInfo {
    /// The proposal was accepted.
    pub accepted: bool,
    /// Log of the acceptance test's threshold (`ln U < log_alpha` accepts; Barker: the noisy
    /// statistic compared with 0).
    pub log_alpha: f64,
    /// Rows whose log-likelihood ratio was clipped (**not private**).
    pub clipped: u64,
    /// Rows evaluated for the ratio (n, or the batch size).
    pub rows: u64,
    /// Per-row gradients clipped during the step (DP HMC; **not private**).
    pub grad_clipped: u64,
    /// Per-row gradients evaluated during the step.
    pub grad_rows: u64,
    /// Clipping changed the accept/reject decision (the exact, unclipped sum with the same noise
    /// and `U` would have decided otherwise). **Not private**: computed from the raw data.
    pub decision_changed: bool,
    /// The log acceptance ratio was not finite; the step was rejected.
    pub nonfinite: bool,
    /// Scaled batch variance `σ_b²` of the step's batch (subsampled kernels; NaN otherwise).
    /// **Not private**: the exact variance of raw per-row terms.
    pub batch_var: f64,
}

impl Default for StepInfo {
    fn default() -> Self {
        StepInfo {
            accepted: false,
            log_alpha: f64::NAN,
            clipped: 0,
            rows: 0,
            grad_clipped: 0,
            grad_rows: 0,
            decision_changed: false,
            nonfinite: false,
            batch_var: f64::NAN,
        }
    }
}

/// One MCMC transition. A kernel is immutable configuration; everything that changes along a
/// chain lives in its `State`, created by [`init`](Kernel::init) (allocation happens there,
/// never in [`step`](Kernel::step)).
pub trait Kernel: Send + Sync {
    /// Per-chain state (position, caches, buffers).
    type State: Send;

    /// Short name used in results (`"dp-penalty"`, ...).
    fn name(&self) -> &'static str;

    /// Check the settings against the model (dimensions, gradients available, ...).
    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()>;

    /// Build the state at `theta0` (allocates every buffer the chain needs).
    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<Self::State>;

    /// One transition; never allocates.
    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        state: &mut Self::State,
        rng: &mut ChainRng,
    ) -> StepInfo;

    /// The current position of the chain.
    fn position<'a>(&self, state: &'a Self::State) -> &'a [f64];

    /// Set the chain's step scale: `scale` times the configured step (random-walk proposal
    /// standard deviations, or the HMC step size). Warm-up adaptation
    /// ([`StepAdapter`](crate::samplers::StepAdapter)) calls it; the scale never enters the sensitivity or the
    /// noise multiplier of a release. Kernels without a tunable step ignore it (the default).
    fn set_step_scale(&self, _state: &mut Self::State, _scale: f64) {}

    /// Split this chain's data passes over up to `threads` rayon threads (1: sequential, the
    /// state [`init`](Kernel::init) builds). The run driver calls it once after `init`
    /// ([`RunSettings::threads_per_chain`](crate::samplers::RunSettings::threads_per_chain));
    /// it may allocate (per-thread chunk buffers), `step` still never does. Results do not
    /// depend on it: every pass adds its per-chunk partial sums in chunk order
    /// (`samplers::split`). Kernels without a data pass ignore it (the default).
    fn set_pass_threads(&self, _state: &mut Self::State, _threads: usize) {}

    /// Whether warm-up adapts the step scale (default `true`). Kernels without an accept
    /// decision (the stochastic-gradient samplers, whose step size sets the injected noise the
    /// privacy charge counts) return `false`: their warm-up iterations are burn-in only.
    fn adapts_step(&self) -> bool {
        true
    }

    /// The acceptance rate warm-up adaptation aims at by default (0.25: random-walk kernels,
    /// whose noisy acceptance test lowers the best rate a little below the classical 0.234
    /// bound's neighbourhood; HMC kernels override it).
    fn adapt_target(&self) -> f64 {
        0.25
    }
}

/// The accept/reject decision `ln U < log_alpha`, treating a NaN or `+∞` `log_alpha` as a
/// rejection (`−∞` is an ordinary rejection, e.g. a proposal outside the prior's support) (`nonfinite = true`). Returns `(accepted, nonfinite)`.
#[inline]
pub fn metropolis(log_u: f64, log_alpha: f64) -> (bool, bool) {
    if log_alpha.is_nan() || log_alpha == f64::INFINITY {
        (false, true)
    } else {
        (log_u < log_alpha, false)
    }
}
/// The settings every penalty kernel validates: `tau > 0`, `clip_bound > 0`, proposal sds > 0.
pub(crate) fn check_penalty(tau: f64, clip_bound: f64, proposal_sd: &[f64]) -> Result<()> {
    check::positive("tau", tau)?;
    check::positive("clip_bound", clip_bound)?;
    for &s in proposal_sd {
        check::positive("proposal_sd", s)?;
    }
    Ok(())
}
