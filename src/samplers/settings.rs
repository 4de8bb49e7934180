//! Run settings shared by every sampler: chains, seed, budget, start points, time bound.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, check};

/// Where chains start. `θ₀` is a public input: it must not be computed from the private data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Start {
    /// Not set: `run()` returns an error asking for a start point.
    #[default]
    Unset,
    /// Every chain starts at this point.
    Point(Vec<f64>),
    /// Chain `i` starts at the `i`-th point (one per chain).
    PerChain(Vec<Vec<f64>>),
}

/// Settings of a run (nuts-rs style: plain public fields with defaults; the samplers' fluent
/// setters write into it, and `run()` validates it once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Number of chains (default 4).
    pub chains: usize,
    /// Seed; chain `i` uses the stream `chain_rng(seed, i)` (default 0).
    pub seed: u64,
    /// Fixed number of iterations per chain; if `None`, a DP sampler derives it from
    /// `epsilon` and `delta` with Algorithm 2.
    pub iterations: Option<usize>,
    /// Privacy budget ε.
    pub epsilon: Option<f64>,
    /// Privacy budget δ.
    pub delta: Option<f64>,
    /// If `true`, (ε, δ) is spent by *each* chain (the thesis experiments, where chains are
    /// independent repeats). Default `false`: (ε, δ) covers the whole release, all chains and
    /// all iterations.
    pub per_chain_budget: bool,
    /// Start points.
    pub start: Start,
    /// Stop chains after this wall time (evcxr cannot interrupt a cell: always bound the work).
    pub max_time: Option<Duration>,
    /// Show a progress bar on a terminal (never when `CI` is set or stderr is not a terminal).
    pub progress: bool,
    /// Size of the thread pool (default: rayon's global pool). Results do not depend on it.
    pub threads: Option<usize>,
    /// Key every chain's generator from OS entropy instead of `seed` (default `false`): the
    /// mode for a real DP release. Results are then not reproducible and `seed` is ignored.
    #[serde(default)]
    pub secure_rng: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            chains: 4,
            seed: 0,
            iterations: None,
            epsilon: None,
            delta: None,
            per_chain_budget: false,
            start: Start::Unset,
            max_time: None,
            progress: true,
            threads: None,
            secure_rng: false,
        }
    }
}

impl RunSettings {
    /// One validated start point per chain, each of length `dim`.
    pub fn start_points(&self, dim: usize) -> Result<Vec<Vec<f64>>> {
        check::at_least_one("chains", self.chains)?;
        let points = match &self.start {
            Start::Unset => {
                return Err(Error::invalid(
                    "start",
                    "unset",
                    "set a start point with `.start(theta0)` (a public value, not computed from the data)",
                ));
            }
            Start::Point(p) => vec![p.clone(); self.chains],
            Start::PerChain(ps) => {
                check::len("start (number of chains)", ps.len(), self.chains)?;
                ps.clone()
            }
        };
        for p in &points {
            check::len("start", p.len(), dim)?;
            check::all_finite("start point", p)?;
        }
        Ok(points)
    }

    /// The (ε, δ) budget if one is set (both, validated).
    pub fn budget(&self) -> Result<Option<(f64, f64)>> {
        match (self.epsilon, self.delta) {
            (None, None) => Ok(None),
            (Some(e), Some(d)) => Ok(Some((
                check::positive("epsilon", e)?,
                check::delta("delta", d)?,
            ))),
            (Some(_), None) => Err(Error::invalid(
                "delta",
                "unset",
                "set `.delta(d)` together with `.epsilon(e)`",
            )),
            (None, Some(_)) => Err(Error::invalid(
                "epsilon",
                "unset",
                "set `.epsilon(e)` together with `.delta(d)`",
            )),
        }
    }

    /// How many mechanisms' worth of budget one chain gets: `chains` for a whole-release
    /// budget, 1 for a per-chain budget.
    pub fn copies(&self) -> usize {
        if self.per_chain_budget {
            1
        } else {
            self.chains
        }
    }
}

/// Fluent setters for [`RunSettings`], shared by every sampler builder.
macro_rules! run_setters {
    ($t:ty) => {
        impl $t {
            /// Number of chains (default 4).
            #[must_use]
            pub fn chains(mut self, chains: usize) -> Self {
                self.run.chains = chains;
                self
            }
            /// Seed of the run (chain `i` uses `chain_rng(seed, i)`).
            #[must_use]
            pub fn seed(mut self, seed: u64) -> Self {
                self.run.seed = seed;
                self
            }
            /// Fixed number of iterations per chain (instead of a privacy budget).
            #[must_use]
            pub fn iterations(mut self, k: usize) -> Self {
                self.run.iterations = Some(k);
                self
            }
            /// Privacy budget ε (with [`delta`](Self::delta)).
            #[must_use]
            pub fn epsilon(mut self, epsilon: f64) -> Self {
                self.run.epsilon = Some(epsilon);
                self
            }
            /// Privacy budget δ (with [`epsilon`](Self::epsilon)).
            #[must_use]
            pub fn delta(mut self, delta: f64) -> Self {
                self.run.delta = Some(delta);
                self
            }
            /// Spend (ε, δ) per chain instead of over the whole release.
            #[must_use]
            pub fn per_chain_budget(mut self, yes: bool) -> Self {
                self.run.per_chain_budget = yes;
                self
            }
            /// Start every chain at `theta0` (a public value).
            #[must_use]
            pub fn start(mut self, theta0: impl Into<Vec<f64>>) -> Self {
                self.run.start = $crate::samplers::Start::Point(theta0.into());
                self
            }
            /// One start point per chain.
            #[must_use]
            pub fn starts(mut self, points: Vec<Vec<f64>>) -> Self {
                self.run.start = $crate::samplers::Start::PerChain(points);
                self
            }
            /// Stop chains after this wall time.
            #[must_use]
            pub fn max_time(mut self, t: std::time::Duration) -> Self {
                self.run.max_time = Some(t);
                self
            }
            /// Show a progress bar (on a terminal, outside CI).
            #[must_use]
            pub fn progress(mut self, yes: bool) -> Self {
                self.run.progress = yes;
                self
            }
            /// Thread-pool size (results do not depend on it).
            #[must_use]
            pub fn threads(mut self, n: usize) -> Self {
                self.run.threads = Some(n);
                self
            }
            /// Secure random source: every chain's generator is keyed from OS entropy, never
            /// from the seed (a real DP release; not reproducible). Default `false` (seeded).
            #[must_use]
            pub fn secure_rng(mut self, yes: bool) -> Self {
                self.run.secure_rng = yes;
                self
            }
            /// Replace all run settings at once.
            #[must_use]
            pub fn run_settings(mut self, run: $crate::samplers::RunSettings) -> Self {
                self.run = run;
                self
            }
        }
    };
}
pub(crate) use run_setters;

/// Fluent setters shared by the penalty samplers (DP penalty, minibatch DP penalty): noise
/// scale, clip bound, proposal and accountant.
macro_rules! penalty_setters {
    ($t:ty) => {
        impl $t {
            /// Noise scale τ.
            #[must_use]
            pub fn tau(mut self, tau: f64) -> Self {
                self.tau = tau;
                self
            }
            /// Clip bound b per unit distance `‖θ − θ'‖₂`.
            #[must_use]
            pub fn clip_bound(mut self, b: f64) -> Self {
                self.clip_bound = b;
                self
            }
            /// Proposal standard deviation: a scalar or one per coordinate.
            #[must_use]
            pub fn proposal_sd(mut self, sd: impl Into<$crate::samplers::StepSize>) -> Self {
                self.proposal_sd = sd.into();
                self
            }
            /// Proposal kind (full, OCU, GWMH).
            #[must_use]
            pub fn proposal(mut self, kind: $crate::samplers::ProposalKind) -> Self {
                self.proposal = kind;
                self
            }
            /// One-component updates.
            #[must_use]
            pub fn ocu(self) -> Self {
                self.proposal($crate::samplers::ProposalKind::OneComponent)
            }
            /// Guided walk (one-component updates with a persistent direction).
            #[must_use]
            pub fn gwmh(self) -> Self {
                self.proposal($crate::samplers::ProposalKind::GuidedWalk)
            }
            /// Accountant used by Algorithm 2.
            #[must_use]
            pub fn accountant(mut self, a: $crate::accounting::Method) -> Self {
                self.accountant = a;
                self
            }
        }
    };
}
pub(crate) use penalty_setters;
