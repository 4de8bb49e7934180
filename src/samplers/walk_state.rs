//! The per-chain state every random-walk kernel keeps (DP penalty, RWMH, DP-Fast MH): the
//! current point, a buffer the proposal is written into, the current log prior and the walk
//! that proposes. A kernel keeps its own data-side state (a row cache, batch buffers) beside it.

use super::proposal::{ProposalKind, RandomWalk};
use crate::error::Result;
use crate::models::Model;
use crate::rng::ChainRng;

/// A random-walk chain's position and proposal ([`module docs`](self)).
#[derive(Clone, Debug)]
pub(crate) struct WalkState {
    /// The current point θ.
    pub(crate) theta: Vec<f64>,
    /// The proposal θ′ of the step in progress (allocated once).
    pub(crate) proposal_buf: Vec<f64>,
    /// `ln p(θ)`.
    pub(crate) log_prior: f64,
    /// The proposal mechanism (full, one-component or guided walk) and its step scale.
    pub(crate) walk: RandomWalk,
}

impl WalkState {
    /// The state at `theta0`, proposing by `kind` with standard deviations `proposal_sd`.
    ///
    /// # Errors
    /// As [`RandomWalk::new`].
    pub(crate) fn new<M: Model + ?Sized>(
        model: &M,
        theta0: &[f64],
        kind: ProposalKind,
        proposal_sd: Vec<f64>,
        rng: &mut ChainRng,
    ) -> Result<Self> {
        Ok(WalkState {
            theta: theta0.to_vec(),
            proposal_buf: theta0.to_vec(),
            log_prior: model.log_prior(theta0),
            walk: RandomWalk::new(kind, proposal_sd, rng)?,
        })
    }

    /// Writes the next proposal into `proposal_buf`.
    #[inline]
    pub(crate) fn propose(&mut self, rng: &mut ChainRng) {
        self.walk.propose(&self.theta, &mut self.proposal_buf, rng);
    }

    /// Moves to the proposal, whose log prior is `log_prior` (no allocation: the buffers swap).
    #[inline]
    pub(crate) fn accept(&mut self, log_prior: f64) {
        std::mem::swap(&mut self.theta, &mut self.proposal_buf);
        self.log_prior = log_prior;
    }
}
