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

/// How long a run is: a fixed number of iterations per chain, or as many as a privacy budget
/// allows (Algorithm 2). One or the other, never both: the last setter wins.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// use dp_mcmc::samplers::{Budget, DpPenalty};
/// let s = DpPenalty::builder().epsilon(1.0).delta(1e-6);
/// assert_eq!(s.run.budget, Budget::Privacy { epsilon: 1.0, delta: 1e-6 });
/// // a fixed count replaces the privacy budget (and the other way round)
/// assert_eq!(s.iterations(50).run.budget, Budget::Iterations(50));
/// // ε without δ is reported when the run is validated
/// let half = DpPenalty::builder().epsilon(1.0);
/// assert!(half.run.privacy_budget().unwrap_err().to_string().contains("delta"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Budget {
    /// Not set: a DP sampler asks for `.epsilon(e).delta(d)`, a non-private one for
    /// `.iterations(k)`.
    #[default]
    Unset,
    /// This many iterations per chain; a DP sampler reports the ε they spend at δ = 0.1/n.
    Iterations(usize),
    /// As many iterations as (ε, δ) allow. A part not yet set is NaN (`.epsilon(e)` alone),
    /// reported when the run is validated.
    Privacy {
        /// Privacy budget ε.
        epsilon: f64,
        /// Privacy budget δ.
        delta: f64,
    },
}

impl Budget {
    /// `self` with ε set (δ kept if a privacy budget was already set).
    #[must_use]
    pub fn with_epsilon(self, epsilon: f64) -> Self {
        match self {
            Budget::Privacy { delta, .. } => Budget::Privacy { epsilon, delta },
            _ => Budget::Privacy {
                epsilon,
                delta: f64::NAN,
            },
        }
    }

    /// `self` with δ set (ε kept if a privacy budget was already set).
    #[must_use]
    pub fn with_delta(self, delta: f64) -> Self {
        match self {
            Budget::Privacy { epsilon, .. } => Budget::Privacy { epsilon, delta },
            _ => Budget::Privacy {
                epsilon: f64::NAN,
                delta,
            },
        }
    }

    /// The fixed iteration count, if that is the budget.
    pub fn iterations(self) -> Option<usize> {
        match self {
            Budget::Iterations(k) => Some(k),
            _ => None,
        }
    }
}

/// Settings of a run (nuts-rs style: plain public fields with defaults; the samplers' fluent
/// setters write into it, and `run()` validates it once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Number of chains (default 4).
    pub chains: usize,
    /// Seed; chain `i` uses the stream `chain_rng(seed, i)` (default 0).
    pub seed: u64,
    /// A fixed number of iterations per chain, or a privacy budget (ε, δ) from which a DP
    /// sampler derives it with Algorithm 2.
    pub budget: Budget,
    /// If `true`, (ε, δ) is spent by *each* chain (the thesis experiments, where chains are
    /// independent repeats). Default `false`: (ε, δ) covers the whole release, all chains and
    /// all iterations.
    pub per_chain_budget: bool,
    /// Start points.
    pub start: Start,
    /// Stop chains after this wall time (evcxr cannot interrupt a cell: always bound the work).
    pub max_time: Option<Duration>,
    /// Show a progress bar on a terminal (never when `CI` is set, stderr is not a terminal, or
    /// the crate is built without the `cli` feature).
    pub progress: bool,
    /// Size of the thread pool (default: rayon's global pool). Results do not depend on it.
    pub threads: Option<usize>,
    /// Threads inside each chain: its data passes are split over this many rayon threads
    /// (default `None`: automatic, the pool's threads divided by the chains, at least 1; so
    /// few chains on many cores split their passes, many chains run one thread each). Passes
    /// over fewer than 256 (`PARALLEL_MIN_CHUNKS`)
    /// chunks of 1024 rows stay sequential. Results do not depend on it (docs/PERFORMANCE.md,
    /// "The parallel pass").
    #[serde(default)]
    pub threads_per_chain: Option<usize>,
    /// Key every chain's generator from OS entropy instead of `seed` (default `false`): the
    /// mode for a real DP release. Results are then not reproducible and `seed` is ignored.
    #[serde(default)]
    pub secure_rng: bool,
    /// Keep every `thin`-th step (default 1: every step). As CmdStan's `thin`: the 0-based
    /// steps `0, thin, 2·thin, …` are saved (draws and their step statistics), i.e.
    /// `⌈iterations/thin⌉` per chain; acceptance and clip fractions still count every step.
    #[serde(default = "one")]
    pub thin: usize,
    /// Memory limit of the saved traces of all chains together, in bytes (default
    /// [`DEFAULT_MAX_TRACE_BYTES`], 8 GiB). A run whose planned draws and step statistics
    /// would exceed it fails before it starts; raise it or use [`thin`](Self::thin).
    #[serde(default = "default_max_trace_bytes")]
    pub max_trace_bytes: u64,
    /// Warm-up iterations per chain (default 0): the first `warmup` iterations adapt the step
    /// scale from the chain's released accept decisions ([`StepAdapter`](crate::samplers::StepAdapter)); they
    /// count toward the iterations and are charged like every other iteration. Their draws
    /// are kept in the trace (`Run::warmup` says how many lead each chain).
    #[serde(default)]
    pub warmup: usize,
    /// The acceptance rate warm-up aims at (default: the kernel's, 0.25 for random-walk kernels
    /// and 0.65 for HMC).
    #[serde(default)]
    pub adapt_target: Option<f64>,
    /// Releases made from the same data before the chains (a DP initial point, a DP clip
    /// bound), shared by every chain: the budget and the ledger compose them first.
    #[serde(default)]
    pub spent_before: Vec<crate::samplers::EarlierRelease>,
}

/// Default [`RunSettings::max_trace_bytes`]: 8 GiB.
pub const DEFAULT_MAX_TRACE_BYTES: u64 = 8 << 30;

/// At most this many chains in one run.
pub const MAX_CHAINS: usize = 1_000_000;

fn one() -> usize {
    1
}

fn default_max_trace_bytes() -> u64 {
    DEFAULT_MAX_TRACE_BYTES
}

/// Bytes for humans: `1.5 GiB`, `640 B`.
fn bytes(b: u128) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            chains: 4,
            seed: 0,
            budget: Budget::Unset,
            per_chain_budget: false,
            start: Start::Unset,
            max_time: None,
            progress: true,
            threads: None,
            threads_per_chain: None,
            secure_rng: false,
            thin: 1,
            max_trace_bytes: DEFAULT_MAX_TRACE_BYTES,
            warmup: 0,
            adapt_target: None,
            spent_before: Vec::new(),
        }
    }
}

impl RunSettings {
    /// Checks the counts: `1 ≤ chains ≤` [`MAX_CHAINS`], `thin ≥ 1`, and a fixed iteration
    /// count of at most [`MAX_ITERATIONS`](crate::accounting::MAX_ITERATIONS) (10^15) steps
    /// over all chains.
    ///
    /// ```
    /// use dp_mcmc::samplers::RunSettings;
    /// use dp_mcmc::samplers::Budget;
    /// let ok = RunSettings { budget: Budget::Iterations(100), ..RunSettings::default() };
    /// assert!(ok.check_counts().is_ok());
    /// let none = RunSettings { chains: 0, ..ok.clone() };
    /// assert!(none.check_counts().unwrap_err().to_string().contains("`chains`"));
    /// let huge = RunSettings { budget: Budget::Iterations(usize::MAX), ..ok };
    /// assert!(huge.check_counts().unwrap_err().to_string().contains("`iterations`"));
    /// ```
    pub fn check_counts(&self) -> Result<()> {
        check::at_least_one("chains", self.chains)?;
        if self.chains > MAX_CHAINS {
            return Err(Error::invalid(
                "chains",
                self.chains,
                format!("at most {MAX_CHAINS} chains per run; use fewer chains"),
            ));
        }
        check::at_least_one("thin", self.thin)?;
        if let Some(t) = self.threads_per_chain {
            check::at_least_one("threads_per_chain", t)?;
        }
        if let Budget::Iterations(k) = self.budget {
            let cap = crate::accounting::MAX_ITERATIONS;
            if (k as u128) * (self.chains as u128) > u128::from(cap) {
                return Err(Error::invalid(
                    "iterations",
                    k,
                    format!(
                        "{} chain(s) of {k} iterations exceed 10^15 steps in all; \
                         use fewer iterations or chains",
                        self.chains
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Bytes the saved traces of `iterations` steps per chain would take: per saved step
    /// `dim` f64 draws plus one [`StepInfo`](super::StepInfo) record.
    pub fn trace_bytes(&self, dim: usize, iterations: usize) -> u128 {
        let saved = iterations.div_ceil(self.thin.max(1)) as u128;
        let per_step = (dim as u128) * 8 + std::mem::size_of::<super::StepInfo>() as u128;
        (self.chains as u128) * saved * per_step
    }

    /// Checks the counts ([`check_counts`](Self::check_counts)) and that the traces of
    /// `iterations` steps per chain fit in [`max_trace_bytes`](Self::max_trace_bytes).
    ///
    /// ```
    /// use dp_mcmc::samplers::RunSettings;
    /// let run = RunSettings { chains: 4, ..RunSettings::default() };
    /// assert!(run.check_memory(2, 10_000).is_ok());
    /// // 4 chains × 10^9 draws of 2 parameters need hundreds of GiB: refused up front...
    /// let err = run.check_memory(2, 1_000_000_000).unwrap_err().to_string();
    /// assert!(err.contains("thin"));
    /// // ... unless only every 1000-th draw is kept.
    /// assert!(RunSettings { thin: 1000, ..run }.check_memory(2, 1_000_000_000).is_ok());
    /// ```
    pub fn check_memory(&self, dim: usize, iterations: usize) -> Result<()> {
        self.check_counts()?;
        let need = self.trace_bytes(dim, iterations);
        if need > u128::from(self.max_trace_bytes) {
            return Err(Error::invalid(
                "thin",
                self.thin,
                format!(
                    "{} chain(s) × {} saved draws × ({dim} parameters × 8 B + {} B of step \
                     statistics) need {}, above the {} limit (`max_trace_bytes`); keep fewer \
                     draws with a larger `thin` (every k-th draw), or run fewer iterations \
                     (a smaller epsilon) or fewer chains",
                    self.chains,
                    iterations.div_ceil(self.thin.max(1)),
                    std::mem::size_of::<super::StepInfo>(),
                    bytes(need),
                    bytes(u128::from(self.max_trace_bytes)),
                ),
            ));
        }
        Ok(())
    }

    /// Threads inside each of `chains` chains: [`threads_per_chain`](Self::threads_per_chain),
    /// or the current rayon pool's threads divided by the chains (at least 1). Call it inside
    /// the pool that runs the chains.
    ///
    /// ```
    /// use dp_mcmc::samplers::RunSettings;
    /// let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    /// let run = RunSettings::default();
    /// assert_eq!(pool.install(|| run.pass_threads(1)), 4);
    /// assert_eq!(pool.install(|| run.pass_threads(2)), 2);
    /// assert_eq!(pool.install(|| run.pass_threads(8)), 1);
    /// let fixed = RunSettings { threads_per_chain: Some(3), ..run };
    /// assert_eq!(pool.install(|| fixed.pass_threads(8)), 3);
    /// ```
    pub fn pass_threads(&self, chains: usize) -> usize {
        self.threads_per_chain
            .unwrap_or_else(|| rayon::current_num_threads() / chains.max(1))
            .max(1)
    }

    /// One validated start point per chain, each of length `dim`.
    pub fn start_points(&self, dim: usize) -> Result<Vec<Vec<f64>>> {
        self.check_counts()?;
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

    /// The (ε, δ) budget if one is set (both, validated; the counts are checked first, see
    /// [`check_counts`](Self::check_counts)).
    ///
    /// # Errors
    /// Invalid counts, ε ≤ 0, δ ∉ (0, 1), or only one of ε and δ set.
    pub fn privacy_budget(&self) -> Result<Option<(f64, f64)>> {
        self.check_counts()?;
        match self.budget {
            Budget::Unset | Budget::Iterations(_) => Ok(None),
            Budget::Privacy { epsilon, delta } if delta.is_nan() && !epsilon.is_nan() => {
                Err(Error::invalid(
                    "delta",
                    "unset",
                    "set `.delta(d)` together with `.epsilon(e)`",
                ))
            }
            Budget::Privacy { epsilon, delta } if epsilon.is_nan() && !delta.is_nan() => {
                Err(Error::invalid(
                    "epsilon",
                    "unset",
                    "set `.epsilon(e)` together with `.delta(d)`",
                ))
            }
            Budget::Privacy { epsilon, delta } => Ok(Some((
                check::positive("epsilon", epsilon)?,
                check::delta("delta", delta)?,
            ))),
        }
    }

    /// Runs `work` on a thread pool of [`threads`](Self::threads) threads, or on the
    /// current pool when it is unset (results never depend on it).
    ///
    /// # Errors
    /// A pool that cannot be built.
    pub fn on_pool<R: Send>(&self, work: impl FnOnce() -> R + Send) -> Result<R> {
        match self.threads {
            Some(n) => Ok(rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| {
                    Error::invalid("threads", n, format!("cannot build a thread pool: {e}"))
                })?
                .install(work)),
            None => Ok(work()),
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

/// Fluent run settings: the one home of the setters of [`RunSettings`], implemented by every
/// sampler builder, by `Box<dyn Sampler>` (any sampler as a value) and by `auto`'s builder.
/// Each setter writes one field; `run()` validates them all, so a bad value is a typed error
/// there, not a panic here. In scope with `dp_mcmc::prelude::*`.
///
/// ```
/// use dp_mcmc::samplers::{Budget, DpPenalty, RunSetters, SamplerKind, Start};
/// let s = DpPenalty::builder().chains(2).seed(7).epsilon(1.0).delta(1e-6).start(vec![0.0]);
/// assert_eq!((s.run.chains, s.run.seed), (2, 7));
/// assert_eq!(s.run.budget, Budget::Privacy { epsilon: 1.0, delta: 1e-6 });
/// // the same setters on any sampler of the registry
/// let any = SamplerKind::DpHmc.build().chains(3).iterations(50);
/// assert_eq!(any.run_settings().budget, Budget::Iterations(50));
/// // a bad value is reported when the sampler plans or runs (here: δ must be below 1)
/// assert!(s.delta(2.0).budget(1000).is_err());
/// ```
pub trait RunSetters: Sized {
    /// The run settings the setters write.
    fn run_mut(&mut self) -> &mut RunSettings;

    /// Applies `f` to the run settings (for a field without its own setter).
    #[must_use]
    fn with_run_settings(mut self, f: impl FnOnce(&mut RunSettings)) -> Self {
        f(self.run_mut());
        self
    }
    /// Number of chains (default 4).
    #[must_use]
    fn chains(self, chains: usize) -> Self {
        self.with_run_settings(|r| r.chains = chains)
    }
    /// Warm-up iterations per chain that adapt the step scale from released accept decisions
    /// (default 0; see [`RunSettings::warmup`]).
    #[must_use]
    fn warmup(self, iterations: usize) -> Self {
        self.with_run_settings(|r| r.warmup = iterations)
    }
    /// The acceptance rate warm-up aims at (see [`RunSettings::adapt_target`]).
    #[must_use]
    fn adapt_target(self, target: f64) -> Self {
        self.with_run_settings(|r| r.adapt_target = Some(target))
    }
    /// Seed of the run (chain `i` uses `chain_rng(seed, i)`). Turns `secure_rng` off: a seeded
    /// run is reproducible research, **not** a DP release (anyone who knows the seed can
    /// regenerate the noise); the noise-aware and `auto` runs draw from OS entropy until seeded.
    #[must_use]
    fn seed(self, seed: u64) -> Self {
        self.with_run_settings(|r| {
            r.seed = seed;
            r.secure_rng = false;
        })
    }
    /// Fixed number of iterations per chain (replaces a privacy budget).
    #[must_use]
    fn iterations(self, k: usize) -> Self {
        self.with_run_settings(|r| r.budget = Budget::Iterations(k))
    }
    /// Privacy budget ε (with [`delta`](Self::delta); replaces a fixed count).
    #[must_use]
    fn epsilon(self, epsilon: f64) -> Self {
        self.with_run_settings(|r| r.budget = r.budget.with_epsilon(epsilon))
    }
    /// Privacy budget δ (with [`epsilon`](Self::epsilon); replaces a fixed count).
    #[must_use]
    fn delta(self, delta: f64) -> Self {
        self.with_run_settings(|r| r.budget = r.budget.with_delta(delta))
    }
    /// Spend (ε, δ) per chain instead of over the whole release.
    #[must_use]
    fn per_chain_budget(self, yes: bool) -> Self {
        self.with_run_settings(|r| r.per_chain_budget = yes)
    }
    /// Start every chain at `theta0` (a public value).
    #[must_use]
    fn start(self, theta0: impl Into<Vec<f64>>) -> Self {
        let theta0 = theta0.into();
        self.with_run_settings(|r| r.start = Start::Point(theta0))
    }
    /// One start point per chain.
    #[must_use]
    fn starts(self, points: Vec<Vec<f64>>) -> Self {
        self.with_run_settings(|r| r.start = Start::PerChain(points))
    }
    /// Stop chains after this wall time.
    #[must_use]
    fn max_time(self, t: Duration) -> Self {
        self.with_run_settings(|r| r.max_time = Some(t))
    }
    /// Show a progress bar (on a terminal, outside CI, with the `cli` feature).
    #[must_use]
    fn progress(self, yes: bool) -> Self {
        self.with_run_settings(|r| r.progress = yes)
    }
    /// Thread-pool size (results do not depend on it).
    #[must_use]
    fn threads(self, n: usize) -> Self {
        self.with_run_settings(|r| r.threads = Some(n))
    }
    /// Threads inside each chain (default: the pool's threads divided by the chains; see
    /// [`RunSettings::threads_per_chain`]). Results do not depend on it.
    #[must_use]
    fn threads_per_chain(self, n: usize) -> Self {
        self.with_run_settings(|r| r.threads_per_chain = Some(n))
    }
    /// Secure random source: every chain's generator is keyed from OS entropy, never from the
    /// seed (a real DP release; not reproducible). Default `false` (seeded).
    #[must_use]
    fn secure_rng(self, yes: bool) -> Self {
        self.with_run_settings(|r| r.secure_rng = yes)
    }
    /// Keep every `k`-th step (default 1: all). As CmdStan's `thin`: 0-based steps `0, k, 2k,
    /// …` are saved (draws and their step statistics, `⌈iterations/k⌉` per chain); acceptance
    /// and clip fractions still count every step.
    #[must_use]
    fn thin(self, k: usize) -> Self {
        self.with_run_settings(|r| r.thin = k)
    }
    /// Memory limit of the saved traces in bytes (default 8 GiB): a run that would need more
    /// fails before it starts.
    #[must_use]
    fn max_trace_bytes(self, bytes: u64) -> Self {
        self.with_run_settings(|r| r.max_trace_bytes = bytes)
    }
}

/// [`RunSetters`] for a sampler builder whose run settings are its field `run`.
macro_rules! run_setters {
    ($t:ty) => {
        impl $crate::samplers::RunSetters for $t {
            fn run_mut(&mut self) -> &mut $crate::samplers::RunSettings {
                &mut self.run
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
            pub fn accountant(mut self, a: $crate::accounting::AccountantKind) -> Self {
                self.accountant = a;
                self
            }
        }
    };
}
pub(crate) use penalty_setters;

/// Fluent setters of the leapfrog integrator, shared by HMC and DP HMC.
macro_rules! hmc_setters {
    ($t:ty) => {
        impl $t {
            /// Leapfrog steps L.
            #[must_use]
            pub fn leapfrog_steps(mut self, l: usize) -> Self {
                self.leapfrog_steps = l;
                self
            }
            /// Leapfrog step size η.
            #[must_use]
            pub fn step_size(mut self, eta: f64) -> Self {
                self.step_size = eta;
                self
            }
            /// Diagonal mass matrix (default: identity).
            #[must_use]
            pub fn mass(mut self, m: Vec<f64>) -> Self {
                self.mass = Some(m);
                self
            }
        }
    };
}
pub(crate) use hmc_setters;

/// Fluent setters of the non-private baselines' optional ratio clipping (the thesis' clipping
/// study), shared by RWMH and HMC.
macro_rules! clipped_baseline_setters {
    ($t:ty) => {
        impl $t {
            /// Clip per-row ratios at `b·dist(θ, θ')` (default: no clipping, exact MH).
            #[must_use]
            pub fn clip_bound(mut self, b: f64) -> Self {
                self.clip_bound = Some(b);
                self
            }
            /// Distance scaling the clip bound (L2 default; the thesis code's `|Σ diff|` as
            /// an option).
            #[must_use]
            pub fn clip_distance(mut self, d: $crate::samplers::ClipDistance) -> Self {
                self.clip_distance = d;
                self
            }
        }
    };
}
pub(crate) use clipped_baseline_setters;
