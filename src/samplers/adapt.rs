//! Warm-up adaptation of a chain's step scale from what the chain has already released.
//!
//! During the first `warmup` iterations of a chain, the driver feeds every step's
//! [`Released`] record (the accept decision and the new state, both part of the chain's
//! output) to a [`StepAdapter`] and sets the kernel's step scale (random-walk proposal
//! standard deviations, or the HMC step size) to what it returns; after the warm-up the scale
//! is frozen at the adapter's average. The adapter sees nothing else: no clipped counts, no
//! unreleased sums, no data. Adaptation is therefore post-processing of released values under
//! adaptive composition, and costs no privacy beyond the warm-up iterations themselves, which
//! the ledger charges like any other iteration (argument in `docs/SECURITY.md`). The step
//! scale never enters a kernel's sensitivity or noise multiplier (the clip bound scales with
//! the step length, the noise with the clip bound), so every iteration stays the mechanism
//! its accountant is charged for.
//!
//! The rule is Nesterov dual averaging on the accept indicators (Hoffman & Gelman 2014, the
//! step-size adaptation of Stan/NUTS, with Stan's constants γ = 0.05, t₀ = 10, κ = 0.75),
//! applied to the log of the scale multiplier.
//!
//! ```
//! use dp_mcmc::samplers::{Released, StepAdapter};
//! let mut a = StepAdapter::new(0.25);
//! // a chain that accepts everything: the scale grows
//! for _ in 0..50 {
//!     a.update(Released { accepted: true, position: &[0.0] });
//! }
//! assert!(a.final_scale() > 1.0);
//! // a target outside (0, 1) is an error
//! assert!(StepAdapter::try_new(1.5).is_err());
//! ```

use crate::error::{Error, Result};

/// What a chain released at one step: the accept decision and its state after the step. The
/// only input adaptation gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Released<'a> {
    /// Whether the proposal was accepted (released: it is visible in the draws).
    pub accepted: bool,
    /// The chain's state after the step (a released draw).
    pub position: &'a [f64],
}

/// Dual averaging of `ln(scale)` toward an acceptance rate (Hoffman & Gelman 2014, §3.2.1).
#[derive(Clone, Debug, PartialEq)]
pub struct StepAdapter {
    target: f64,
    mu: f64,
    t: f64,
    h_bar: f64,
    log_scale: f64,
    log_scale_bar: f64,
}

/// Stan's dual-averaging constants.
const GAMMA: f64 = 0.05;
const T0: f64 = 10.0;
const KAPPA: f64 = 0.75;
/// The log scale stays within `± LOG_SCALE_LIMIT` of the configured step (a factor e^±30):
/// far beyond any useful range, and it keeps every step length finite.
const LOG_SCALE_LIMIT: f64 = 30.0;

impl StepAdapter {
    /// An adapter toward the acceptance rate `target` in (0, 1), starting from scale 1 (the
    /// kernel's configured step). It shrinks toward scales near 1: `μ = ln 2` as in Stan,
    /// which biases the first steps toward larger scales.
    ///
    /// # Panics
    /// Never for `target` in (0, 1); other values are clamped into it. Use
    /// [`try_new`](Self::try_new) to validate user input.
    pub fn new(target: f64) -> Self {
        let target = if target.is_finite() {
            target.clamp(1e-3, 1.0 - 1e-3)
        } else {
            0.25
        };
        StepAdapter {
            target,
            mu: 2f64.ln(),
            t: 0.0,
            h_bar: 0.0,
            log_scale: 0.0,
            log_scale_bar: 0.0,
        }
    }

    /// As [`new`](Self::new), with `target` validated.
    ///
    /// # Errors
    /// `target` not strictly between 0 and 1.
    pub fn try_new(target: f64) -> Result<Self> {
        if target > 0.0 && target < 1.0 {
            Ok(Self::new(target))
        } else {
            Err(Error::invalid(
                "adapt_target",
                target,
                "must be an acceptance rate strictly between 0 and 1 (e.g. 0.25 for random-walk \
                 kernels, 0.65 for HMC)",
            ))
        }
    }

    /// Take one released step; returns the scale to use for the next step.
    pub fn update(&mut self, step: Released<'_>) -> f64 {
        self.t += 1.0;
        let accept = if step.accepted { 1.0 } else { 0.0 };
        let w = 1.0 / (self.t + T0);
        self.h_bar = (1.0 - w) * self.h_bar + w * (self.target - accept);
        self.log_scale =
            (self.mu - self.t.sqrt() / GAMMA * self.h_bar).clamp(-LOG_SCALE_LIMIT, LOG_SCALE_LIMIT);
        let eta = self.t.powf(-KAPPA);
        self.log_scale_bar = eta * self.log_scale + (1.0 - eta) * self.log_scale_bar;
        self.log_scale.exp()
    }

    /// The scale to keep after the warm-up: the dual-averaging mean (1 before any step).
    pub fn final_scale(&self) -> f64 {
        self.log_scale_bar.exp()
    }

    /// The acceptance rate adapted toward.
    pub fn target(&self) -> f64 {
        self.target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain whose acceptance probability falls with the scale, `p(s) = 1/(1 + s²)`: the
    /// adapter must settle where `p = target`, i.e. `s = √(1/target − 1)`.
    #[test]
    fn settles_at_the_scale_whose_acceptance_is_the_target() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for target in [0.25, 0.65] {
            let mut a = StepAdapter::new(target);
            let mut s = 1.0;
            for _ in 0..4000 {
                let p = 1.0 / (1.0 + s * s);
                s = a.update(Released {
                    accepted: rng.random::<f64>() < p,
                    position: &[],
                });
            }
            let want = (1.0 / target - 1.0f64).sqrt();
            // 4000 Bernoulli steps: the averaged scale is within 15 % (a few standard errors
            // of the dual-averaging mean, whose step weights decay as t^-0.75).
            let got = a.final_scale();
            assert!(
                (got / want - 1.0).abs() < 0.15,
                "target {target}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn targets_are_validated() {
        for bad in [0.0, 1.0, -0.1, f64::NAN] {
            assert!(StepAdapter::try_new(bad).is_err());
        }
        assert_eq!(StepAdapter::try_new(0.3).unwrap().target(), 0.3);
    }
}
