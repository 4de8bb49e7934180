//! Fluent run settings on a boxed [`Sampler`] (any sampler as a value), as on the samplers' own
//! builders: `tuned(exp, kind)?.epsilon(4.0).delta(1e-6).chains(4).seed(1)`.
//!
//! Each setter writes one field of [`RunSettings`] (see [`Sampler::run_settings_mut`]); `run()`
//! validates them all, so a bad value is a typed error there, not a panic here.
//!
//! ```
//! use dp_mcmc::prelude::*;
//! use dp_mcmc::experiments::tuned;
//! # fn main() -> dp_mcmc::Result<()> {
//! let model = Experiment::EasyBanana2d.model()?;
//! let s = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty)?
//!     .epsilon(4.0)
//!     .delta(0.1 / model.n_rows() as f64)
//!     .per_chain_budget(true)
//!     .chains(4)
//!     .seed(1)
//!     .progress(false)
//!     .starts(model.start_points(4));
//! let mut by_hand = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty)?;
//! let r = by_hand.run_settings_mut();
//! r.budget = dp_mcmc::samplers::Budget::Privacy { epsilon: 4.0, delta: 0.1 / model.n_rows() as f64 };
//! r.per_chain_budget = true;
//! r.chains = 4;
//! r.seed = 1;
//! r.progress = false;
//! r.start = dp_mcmc::samplers::Start::PerChain(model.start_points(4));
//! assert_eq!(s.run_settings(), by_hand.run_settings());
//! let (iterations, spent) = s.budget(model.n_rows())?.expect("DP penalty is private");
//! assert!(iterations > 0 && spent.per_chain && spent.epsilon == 4.0);
//! // A bad value is reported when the sampler runs (here: δ must be below 1).
//! assert!(s.clone().delta(2.0).budget(model.n_rows()).is_err());
//! # Ok(()) }
//! ```

use std::time::Duration;

use super::sampler::Sampler;
use super::settings::{Budget, RunSettings, Start};

impl dyn Sampler {
    /// Applies `f` to the run settings and returns the sampler (the setters below use it).
    ///
    /// ```
    /// use dp_mcmc::prelude::*;
    /// use dp_mcmc::experiments::tuned;
    /// let s = tuned(Experiment::Circle, SamplerKind::DpHmc).unwrap()
    ///     .with_run_settings(|r| r.max_trace_bytes = 1 << 20);
    /// assert_eq!(s.run_settings().max_trace_bytes, 1 << 20);
    /// ```
    #[must_use]
    pub fn with_run_settings(mut self: Box<Self>, f: impl FnOnce(&mut RunSettings)) -> Box<Self> {
        f(self.run_settings_mut());
        self
    }

    /// Number of chains (default 4).
    #[must_use]
    pub fn chains(self: Box<Self>, chains: usize) -> Box<Self> {
        self.with_run_settings(|r| r.chains = chains)
    }

    /// Seed of the run (chain `i` uses `chain_rng(seed, i)`).
    #[must_use]
    pub fn seed(self: Box<Self>, seed: u64) -> Box<Self> {
        self.with_run_settings(|r| r.seed = seed)
    }

    /// Fixed number of iterations per chain (replaces a privacy budget).
    #[must_use]
    pub fn iterations(self: Box<Self>, k: usize) -> Box<Self> {
        self.with_run_settings(|r| r.budget = Budget::Iterations(k))
    }

    /// Privacy budget ε (with `delta`).
    #[must_use]
    pub fn epsilon(self: Box<Self>, epsilon: f64) -> Box<Self> {
        self.with_run_settings(|r| r.budget = r.budget.with_epsilon(epsilon))
    }

    /// Privacy budget δ (with `epsilon`).
    #[must_use]
    pub fn delta(self: Box<Self>, delta: f64) -> Box<Self> {
        self.with_run_settings(|r| r.budget = r.budget.with_delta(delta))
    }

    /// Spend (ε, δ) per chain (the thesis experiments) instead of over the whole release.
    #[must_use]
    pub fn per_chain_budget(self: Box<Self>, yes: bool) -> Box<Self> {
        self.with_run_settings(|r| r.per_chain_budget = yes)
    }

    /// Start every chain at `theta0` (a public value).
    #[must_use]
    pub fn start(self: Box<Self>, theta0: impl Into<Vec<f64>>) -> Box<Self> {
        let theta0 = theta0.into();
        self.with_run_settings(|r| r.start = Start::Point(theta0))
    }

    /// One start point per chain.
    #[must_use]
    pub fn starts(self: Box<Self>, points: Vec<Vec<f64>>) -> Box<Self> {
        self.with_run_settings(|r| r.start = Start::PerChain(points))
    }

    /// Stop chains after this wall time.
    #[must_use]
    pub fn max_time(self: Box<Self>, t: Duration) -> Box<Self> {
        self.with_run_settings(|r| r.max_time = Some(t))
    }

    /// Show a progress bar (on a terminal, outside CI).
    #[must_use]
    pub fn progress(self: Box<Self>, yes: bool) -> Box<Self> {
        self.with_run_settings(|r| r.progress = yes)
    }

    /// Thread-pool size (results do not depend on it).
    #[must_use]
    pub fn threads(self: Box<Self>, n: usize) -> Box<Self> {
        self.with_run_settings(|r| r.threads = Some(n))
    }

    /// Secure random source (generators keyed from OS entropy; a real DP release).
    #[must_use]
    pub fn secure_rng(self: Box<Self>, yes: bool) -> Box<Self> {
        self.with_run_settings(|r| r.secure_rng = yes)
    }

    /// Keep every `k`-th step (default 1: all; see `RunSettings::thin`).
    #[must_use]
    pub fn thin(self: Box<Self>, k: usize) -> Box<Self> {
        self.with_run_settings(|r| r.thin = k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::SamplerKind;

    #[test]
    fn every_setter_writes_its_field_for_every_kind() {
        for kind in [SamplerKind::Rwmh, SamplerKind::Hmc, SamplerKind::DpPenalty] {
            {
                let s = kind
                    .build()
                    .chains(3)
                    .seed(9)
                    .iterations(11)
                    .epsilon(0.5)
                    .delta(1e-7)
                    .per_chain_budget(true)
                    .max_time(Duration::from_secs(2))
                    .progress(true)
                    .threads(1)
                    .secure_rng(true)
                    .thin(2)
                    .start(vec![0.1, 0.2]);
                let r = s.run_settings();
                assert_eq!((r.chains, r.seed), (3, 9));
                // the privacy budget set last replaces the fixed count
                assert_eq!(
                    r.budget,
                    Budget::Privacy {
                        epsilon: 0.5,
                        delta: 1e-7
                    }
                );
                let fixed = s.clone().iterations(11);
                assert_eq!(fixed.run_settings().budget, Budget::Iterations(11));
                assert!(r.per_chain_budget && r.progress && r.secure_rng);
                assert_eq!(r.max_time, Some(Duration::from_secs(2)));
                assert_eq!((r.threads, r.thin), (Some(1), 2));
                assert_eq!(r.start, Start::Point(vec![0.1, 0.2]));
            }
        }
        for kind in [
            SamplerKind::DpHmc,
            SamplerKind::MinibatchPenalty,
            SamplerKind::DpBarker,
        ] {
            let s = kind.build().starts(vec![vec![0.0, 0.0]; 2]);
            assert_eq!(
                s.run_settings().start,
                Start::PerChain(vec![vec![0.0, 0.0]; 2])
            );
        }
    }
}
