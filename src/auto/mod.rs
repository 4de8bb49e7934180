//! Private inference end to end from public information: `auto` runs.
//!
//! Given a model, a budget (ε, δ) for the **whole** analysis and the number of chains,
//! [`Auto`] does every data-dependent step under differential privacy and charges it to one
//! ledger ([`crate::samplers::Ledger`], `Run::privacy`):
//!
//! 1. **clip bounds**: a DP quantile of the per-row gradient norms (`clip.rs`), charged as
//!    `"clip bound"`, capped by the model's public bound where it declares one
//!    ([`Model::public_lipschitz`], e.g. from declared feature ranges; it alone is used, for
//!    free, by models without gradients);
//! 2. **a DP initial point** (`init.rs`): noisy clipped gradient steps from a public start
//!    (default: the origin), charged as `"initialisation"`; chains start from it with public
//!    jitter;
//! 3. **warm-up**: the first half of every chain adapts its step scale from its own released
//!    accept decisions ([`StepAdapter`](crate::samplers::StepAdapter)): post-processing, so the only cost is the
//!    warm-up iterations, charged as `"warm-up"`;
//! 4. **sampling**: the noise scale and the iteration count follow from the budget left and
//!    n (each sampler's [`Sampler::derive_auto`](crate::samplers::Sampler::derive_auto)), the count from Algorithm 2 on top of the earlier releases, charged as
//!    `"sampling"`.
//!
//! The releases before the chains take fixed shares of the budget ([`BudgetSplit`]); every
//! derived setting is reported beside the run ([`AutoRun::report`], an [`AutoReport`]).
//!
//! **Randomness.** By default every noise draw of the run (the releases before the chains, the
//! jitter of the start points and every chain) comes from generators keyed from the operating
//! system's entropy ([`crate::noise::os_chain_rng`]): `Run::rng` is `"secure"`. `.seed(s)` is an
//! explicit opt-out for reproducible research: anyone who knows `s` can regenerate every noise
//! draw, so a seeded run (`Run::rng` `"seeded"`) is **not** a DP release. The guarantee covers every
//! output of the run except the diagnostics the crate labels non-private (clip fractions).
//!
//! ```
//! use dp_mcmc::samplers::RunSetters;
//! use dp_mcmc::auto::Auto;
//! use dp_mcmc::samplers::SamplerKind;
//! use dp_mcmc::models::testing::IsotropicGaussian;
//! # fn main() -> dp_mcmc::Result<()> {
//! let model = IsotropicGaussian::generate(5_000, 2, 1);
//! let fit = Auto::new(SamplerKind::DpPenalty)
//!     .epsilon(2.0).delta(1e-6).chains(2).target_iterations(200)
//!     .run(&model)?;
//! let run = &fit.run; // the chains; fit.report: every derived setting
//! assert_eq!(fit.report.iterations, run.iterations);
//! assert_eq!(run.rng.as_str(), "secure"); // OS entropy unless .seed(s) is set
//! let privacy = run.privacy.as_ref().unwrap();
//! assert!(privacy.epsilon <= 2.0);
//! let parts: Vec<&str> = privacy.ledger.parts.iter().map(|p| p.part.as_str()).collect();
//! assert_eq!(parts, ["initialisation", "clip bound", "warm-up", "sampling"]);
//! assert_eq!(run.warmup, run.iterations / 2);
//! // Bad input is an error naming the setting:
//! let err = Auto::new(SamplerKind::DpPenalty).epsilon(-1.0).delta(1e-6).run(&model);
//! assert!(err.unwrap_err().to_string().contains("epsilon"));
//! # Ok(()) }
//! ```

mod clip;
mod init;
mod reparam;
mod split;

use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

pub use crate::samplers::DerivedSettings;
pub use init::InitialPoint;
pub use split::BudgetSplit;

use crate::accounting::{PrivacyEvent, gaussian_budget};
use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::rng::chain_rng;
use crate::samplers::{
    AutoInputs, Budget, EarlierRelease, Fit, RunSetters, RunSettings, SamplerKind, Start,
};

/// The default sampler of an `auto` run on `model`: the DP penalty, in the whitened
/// coordinates of the DP initial point; DP Barker for a model with neither per-row gradients
/// nor a public bound (the only sampler that needs no clip bound). Measured on the RAND HIE
/// logistic regression (d = 10, n = 20 190, ε = 8, `docs/AUTO.md`), `auto` DP HMC's means were
/// up to 7.4 posterior standard deviations off against the DP penalty's 2.2, at 10× the run
/// time.
pub fn default_sampler<M: Model + ?Sized>(model: &M) -> SamplerKind {
    if !model.has_gradient() && model.public_lipschitz().is_none() {
        SamplerKind::DpBarker
    } else {
        SamplerKind::DpPenalty
    }
}

/// The sampler `name` of an `auto` run.
///
/// # Errors
/// An unknown name, or a sampler without an `auto` derivation (the message lists those with
/// one).
pub fn auto_sampler(name: &str) -> Result<SamplerKind> {
    let kind: SamplerKind = name.parse()?;
    if SamplerKind::auto_capable().any(|k| k == kind) {
        return Ok(kind);
    }
    Err(Error::invalid(
        "algorithm",
        name,
        format!(
            "auto runs {}",
            SamplerKind::keys(SamplerKind::auto_capable())
        ),
    ))
}

/// How a clip bound was chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipChoice {
    /// The bound.
    pub value: f64,
    /// `"dp-quantile"`, `"public (below the DP quantile)"` (a declared bound smaller than the
    /// quantile), or `"public"` (no gradients for a quantile, or no share for it: free).
    pub source: String,
    /// The quantile of the per-row gradient norms it estimates (DP quantile only).
    pub quantile: Option<f64>,
    /// Noise multiplier of each of its noisy counts (DP quantile only).
    pub noise_multiplier: Option<f64>,
}

/// A finished `auto` run: the chains' [`Run`](crate::samplers::Run) (draws, ledger, random source) and, beside it,
/// every setting the run derived under DP (its [`AutoReport`]).
pub type AutoRun = Fit<AutoReport>;

impl std::fmt::Display for Fit<AutoReport> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "auto {}: {} iterations per chain ({} warm-up){}",
            self.report.algorithm,
            self.report.iterations,
            self.report.warmup,
            if self.report.reparametrised {
                ", in the initial point's whitened coordinates"
            } else {
                ""
            }
        )?;
        write!(f, "{}", self.run)
    }
}

/// Everything an `auto` run derived ([`AutoRun::report`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoReport {
    /// The sampler.
    pub algorithm: SamplerKind,
    /// The total Gaussian `μ` the budget allows ([`gaussian_budget`]).
    pub mu_total: f64,
    /// The shares of the releases before the chains.
    pub split: BudgetSplit,
    /// The DP initial point (`None`: the model has no gradients; chains start from the public
    /// start).
    pub initial_point: Option<InitialPoint>,
    /// Whether the chains sampled `φ` with `θ = m + Lφ` (`m` the initial point, `LLᵀ` its
    /// released inverse curvature; [`Auto::reparametrise`]). The clip bound, `shape`,
    /// `jitter_sd`, the steps and `Run::settings` (the sampler's own settings and start points)
    /// are then in `φ`; the draws and `ChainTrace::start` are in `θ`. The map is
    /// `initial_point.point` and the Cholesky factor of `initial_point.covariance`.
    #[serde(default)]
    pub reparametrised: bool,
    /// The sampler's clip bound (`None` for DP Barker, whose clip is fixed by its test).
    pub clip: Option<ClipChoice>,
    /// Noise scale, batch size and first step of the sampler.
    pub sampler: DerivedSettings,
    /// Standard deviation of the public jitter around the initial point: this times each
    /// coordinate's relative scale.
    pub jitter_sd: f64,
    /// Relative scales of the coordinates (RMS 1) from the initial point's curvature: the
    /// proposal's shape (DP HMC: its masses are their inverse squares).
    pub shape: Vec<f64>,
    /// Iterations per chain (Algorithm 2) and warm-up iterations among them.
    pub iterations: usize,
    /// Warm-up iterations per chain.
    pub warmup: usize,
    /// Each chain's step scale after warm-up, relative to the first step.
    pub step_scales: Vec<f64>,
}

/// Builder of an `auto` run (see the [module docs](self)).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Auto {
    /// The sampler.
    pub algorithm: SamplerKind,
    /// The run settings, written by [`RunSetters`]: the budget `(ε, δ)` of the whole analysis
    /// (`.epsilon(e).delta(d)`), chains (default 4), `per_chain_budget` ((ε, δ) for each chain
    /// with the shared earlier releases: the thesis' experiments), `max_time`, `progress`,
    /// `threads` (the pool of the whole run: initial point, clip bounds and chains), `thin`.
    /// `.start(θ₀)` is the public start of the initial point's gradient steps (default: the
    /// origin; never computed from the data): the chains start around the DP initial point.
    /// `.seed(s)` makes a reproducible research run (`secure_rng` off); without it (the
    /// default) every draw comes from the operating system's entropy, the only setting under
    /// which the run is a DP release (see the module docs). `auto` sets the warm-up (from
    /// `warmup_fraction`), the chains' start points and the earlier releases itself.
    pub run: RunSettings,
    /// Shares of the budget before the chains.
    pub split: BudgetSplit,
    /// Newton steps of the DP initial point, in four rounds (default 16).
    pub init_steps: usize,
    /// First proposal standard deviation of DP Barker on a model without gradients (no DP
    /// initial point to take a scale from; default 0.1).
    pub init_step: f64,
    /// Quantile of the per-row gradient norms a DP clip bound estimates (default 0.9).
    pub clip_quantile: f64,
    /// Iterations per chain the noise scale is chosen for (full-data samplers; default 2000
    /// for the DP penalty, 500 for DP HMC).
    pub target_iterations: Option<usize>,
    /// Fraction of each chain spent in warm-up (default 0.5).
    pub warmup_fraction: f64,
    /// Sample in the coordinates the DP initial point's released curvature whitens (default
    /// `true`; see [`AutoReport::reparametrised`]). Without an initial point (no gradients,
    /// or no initialisation share) the chains sample `θ` with a diagonal proposal.
    pub reparametrise: bool,
}

impl RunSetters for Auto {
    fn run_mut(&mut self) -> &mut RunSettings {
        &mut self.run
    }
}

/// Rounds of the DP initial point (each sets its clip bound again).
const INIT_ROUNDS: usize = 4;

/// Quantile of the gradient norms that clips the initial point's steps: the median (clipping
/// half the rows keeps the clipped sum centred at the mode for symmetric residuals, and keeps
/// the bound, and so the noise, small far from it).
const INIT_QUANTILE: f64 = 0.5;

/// Share of the initial point's step budget on its last gradient (the point's error is that
/// gradient's noise through the inverse curvature; the earlier steps only have to get close).
const INIT_FINAL_SHARE: f64 = 0.5;

/// RNG streams of the releases before the chains (chain `i` uses stream `i`).
const PRE_STREAM: u64 = 1 << 40;
const JITTER_STREAM: u64 = 1 << 41;

impl Auto {
    /// An `auto` run of `algorithm` with the defaults; set `.epsilon(e).delta(d)`.
    pub fn new(algorithm: SamplerKind) -> Self {
        Auto {
            algorithm,
            run: RunSettings {
                secure_rng: true,
                ..RunSettings::default()
            },
            split: BudgetSplit::default(),
            init_steps: 16,
            init_step: 0.1,
            clip_quantile: 0.9,
            target_iterations: None,
            warmup_fraction: 0.5,
            reparametrise: true,
        }
    }

    /// The generator of stream `stream`: seeded, or keyed from OS entropy.
    fn stream(&self, stream: u64) -> Result<crate::rng::ChainRng> {
        if self.run.secure_rng {
            crate::noise::os_chain_rng()
        } else {
            Ok(chain_rng(self.run.seed, stream))
        }
    }

    /// The public start of the initial point's steps (`.start(θ₀)`; default: the origin).
    fn public_start(&self, d: usize) -> Result<Vec<f64>> {
        match &self.run.start {
            Start::Unset => Ok(vec![0.0; d]),
            Start::Point(p) => {
                check::len("start", p.len(), d)?;
                check::all_finite("start", p)?;
                Ok(p.clone())
            }
            Start::PerChain(_) => Err(Error::invalid(
                "starts",
                "per chain",
                "auto starts the chains around its DP initial point; give one public start \
                 for the initial point with `.start(theta0)`",
            )),
        }
    }

    /// Shares of the budget before the chains.
    #[must_use]
    pub fn split(mut self, split: BudgetSplit) -> Self {
        self.split = split;
        self
    }
    /// Iterations per chain the noise scale is chosen for.
    #[must_use]
    pub fn target_iterations(mut self, k: usize) -> Self {
        self.target_iterations = Some(k);
        self
    }
    /// Sample in the whitened coordinates of the DP initial point (default `true`).
    #[must_use]
    pub fn reparametrise(mut self, yes: bool) -> Self {
        self.reparametrise = yes;
        self
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        let Budget::Privacy { epsilon, delta } = self.run.budget else {
            return Err(Error::invalid(
                "epsilon",
                "unset",
                "set `.epsilon(e).delta(d)` to the budget of the whole analysis (auto derives \
                 the iterations from it)",
            ));
        };
        check::positive("epsilon", epsilon).map_err(|_| {
            Error::invalid(
                "epsilon",
                epsilon,
                "set `.epsilon(e)` to the budget of the whole analysis (e > 0)",
            )
        })?;
        check::delta("delta", delta)?;
        check::at_least_one("chains", self.run.chains)?;
        if self.run.warmup != 0 {
            return Err(Error::invalid(
                "warmup",
                self.run.warmup,
                "auto sets the warm-up from `warmup_fraction` (default 0.5)",
            ));
        }
        auto_sampler(self.algorithm.key())?;
        self.split.validate()?;
        if !(self.warmup_fraction >= 0.0 && self.warmup_fraction < 1.0) {
            return Err(Error::invalid(
                "warmup_fraction",
                self.warmup_fraction,
                "must be in [0, 1) (default 0.5)",
            ));
        }
        self.public_start(model.dim())?;
        if let Some(k) = self.target_iterations {
            check::at_least_one("target_iterations", k)?;
        }
        check::positive("init_step", self.init_step)?;
        Ok(())
    }

    /// Run: DP clip bounds and initial point, then the chains with warm-up; the ledger on
    /// `Run::privacy` lists every part.
    ///
    /// # Errors
    /// Invalid settings, a model without gradients and without a public clip bound for a
    /// sampler that clips, a budget too small for a single iteration, a model error.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<AutoRun> {
        // every pass (initial point, clip quantiles, chains) on the run's pool
        self.run.on_pool(|| self.run_on_pool(model))?
    }

    fn run_on_pool<M: Model + ?Sized>(&self, model: &M) -> Result<AutoRun> {
        self.validate(model)?;
        let n = model.n_rows();
        let d = model.dim();
        check::at_least_one("n (data rows)", n)?;
        let (epsilon, delta) = self.run.privacy_budget()?.unwrap_or((f64::NAN, f64::NAN));
        let mu_total = gaussian_budget(epsilon, delta)?;
        let public = model
            .public_lipschitz()
            .filter(|l| l.is_finite() && *l > 0.0);
        let mut rng = self.stream(PRE_STREAM)?;
        let mut before: Vec<EarlierRelease> = Vec::new();
        let from = self.public_start(d)?;
        let rounds = INIT_ROUNDS.min(self.init_steps.max(1));
        let initial_point =
            if model.has_gradient() && self.init_steps > 0 && self.split.initialisation > 0.0 {
                let mu_init = self.split.initialisation * mu_total;
                // the quantile searches take a quarter of the initialisation's share
                let (mu_steps, mu_quantiles) = (mu_init * 0.75, mu_init * 0.25);
                let steps_per_round = self.init_steps.div_ceil(rounds);
                // two releases per step (gradient sum, Hessian sum)
                let queries = f64::from(init::InitSettings::quantile_queries(
                    rounds,
                    public.is_some(),
                ));
                let settings = init::InitSettings {
                    rounds,
                    steps_per_round,
                    z_step: f64::NAN,
                    z_final: f64::NAN,
                    public_clip: public,
                    quantile: INIT_QUANTILE,
                    z_quantile: (queries / (2.0 * mu_quantiles)).sqrt(),
                }
                .with_step_budget(mu_steps, INIT_FINAL_SHARE);
                let p = init::dp_initial_point(model, &from, &settings, &mut rng)?;
                let (event, releases) = settings.event();
                before.push(EarlierRelease {
                    part: "initialisation".into(),
                    releases,
                    event,
                });
                Some(p)
            } else {
                None
            };
        let spent = SpentBefore {
            mu_total,
            before,
            rng,
        };
        let map = match (&initial_point, self.reparametrise) {
            (Some(p), true) => reparam::AffineMap::new(p.point.clone(), &p.covariance).ok(),
            _ => None,
        };
        let mut fit = match &map {
            Some(map) => {
                let whitened = reparam::Reparametrised { inner: model, map };
                let mut fit = self.chains_on(&whitened, vec![0.0; d], vec![1.0; d], 1.0, spent)?;
                map.map_run(&mut fit.run);
                fit
            }
            None => {
                let center = initial_point
                    .as_ref()
                    .map_or_else(|| from.clone(), |p| p.point.clone());
                // DP Barker's first step: the RMS of the initial point's posterior scale
                let fallback_step = initial_point.as_ref().map_or(self.init_step, |p| {
                    (p.scale.iter().map(|x| x * x).sum::<f64>() / p.scale.len() as f64).sqrt()
                });
                let shape = shape(initial_point.as_ref(), d);
                self.chains_on(model, center, shape, fallback_step, spent)?
            }
        };
        fit.report.initial_point = initial_point;
        fit.report.reparametrised = map.is_some();
        Ok(fit)
    }

    /// The clip bound, the derived sampler and the chains on `model` (the user's, or its
    /// reparametrisation), from `center` with relative coordinate scales `shape` (RMS 1) and
    /// the RMS posterior `scale` (DP Barker's first step; the clip's neighbourhood), after the
    /// releases `spent` so far.
    fn chains_on<N: Model + ?Sized>(
        &self,
        model: &N,
        center: Vec<f64>,
        shape: Vec<f64>,
        scale: f64,
        spent: SpentBefore,
    ) -> Result<AutoRun> {
        let SpentBefore {
            mu_total,
            mut before,
            mut rng,
        } = spent;
        let (n, d) = (model.n_rows(), model.dim());
        let public = model
            .public_lipschitz()
            .filter(|l| l.is_finite() && *l > 0.0);
        // The sampler's clip bound: a DP quantile of the per-row gradient norms (capped by the
        // public bound when one is declared: the worst case is often far above the typical
        // row, and the noise scales with the bound), or the public bound alone when the model
        // has no gradients or the split gives the quantile nothing.
        let base = self.algorithm.build();
        let clip = if !base.uses_clip_bound() {
            None
        } else if model.has_gradient() && self.split.clip_bound > 0.0 {
            let q = clip::QUERIES;
            let z = (f64::from(q) / (2.0 * self.split.clip_bound * mu_total)).sqrt();
            // where the chains go: ±1 posterior scale along each axis from the centre
            let radius: Vec<f64> = shape.iter().map(|s| s * scale).collect();
            let norms = clip::neighbourhood_norms(model, &center, &radius)?;
            let value = clip::dp_quantile_of(norms, self.clip_quantile, z, &mut rng)?;
            before.push(EarlierRelease {
                part: "clip bound".into(),
                releases: u64::from(q),
                event: PrivacyEvent::gaussian(z).repeat(u64::from(q)),
            });
            let (value, source) = match public {
                Some(l) if l < value => (l, "public (below the DP quantile)"),
                _ => (value, "dp-quantile"),
            };
            Some(ClipChoice {
                value,
                source: source.into(),
                quantile: Some(self.clip_quantile),
                noise_multiplier: Some(z),
            })
        } else if let Some(l) = public {
            Some(ClipChoice {
                value: l,
                source: "public".into(),
                quantile: None,
                noise_multiplier: None,
            })
        } else {
            return Err(Error::invalid(
                "clip bound",
                "unset",
                "this model declares no public bound (`Model::public_lipschitz`) and has no \
                 per-row gradients for a DP quantile (or split.clip_bound is 0): declare bounds \
                 on the data (e.g. feature ranges) or use DP Barker",
            ));
        };
        let mu_before: f64 = before.iter().filter_map(|b| b.event.gaussian_mu()).sum();
        let public_inputs = AutoInputs {
            n,
            d,
            copies: self.run.copies(),
            mu_chains: (mu_total - mu_before).max(f64::MIN_POSITIVE),
            clip: clip.as_ref().map(|c| c.value),
            fallback_step: scale,
            shape: shape.clone(),
            target_iterations: self.target_iterations,
        };
        let (sampler, derived) = base.derive_auto(&public_inputs)?;
        let jitter_sd = 2.0 * derived.initial_step;
        let starts: Vec<Vec<f64>> = (0..self.run.chains as u64)
            .map(|i| {
                let mut r = self.stream(JITTER_STREAM + i)?;
                Ok(center
                    .iter()
                    .zip(&shape)
                    .map(|(c, s)| {
                        let z: f64 = StandardNormal.sample(&mut r);
                        c + jitter_sd * s * z
                    })
                    .collect())
            })
            .collect::<Result<_>>()?;
        let settings = |warmup: usize| {
            let before = before.clone();
            let starts = starts.clone();
            move |r: &mut RunSettings| {
                *r = RunSettings {
                    start: Start::PerChain(starts),
                    warmup,
                    spent_before: before,
                    ..self.run.clone()
                };
            }
        };
        // Algorithm 2 once: the count sets the warm-up, and the run reuses the plan
        let sampler = sampler.with_run_settings(settings(0));
        let plan = sampler
            .plan(n)?
            .ok_or_else(|| Error::Model("auto needs a DP sampler".into()))?;
        let iterations = plan.iterations();
        let warmup = (iterations as f64 * self.warmup_fraction).floor() as usize;
        let sampler = sampler.with_run_settings(settings(warmup));
        let run = sampler.run_planned(&model, Some(plan.with_warmup(warmup)))?;
        let report = AutoReport {
            algorithm: self.algorithm,
            mu_total,
            split: self.split,
            initial_point: None,
            reparametrised: false,
            clip,
            sampler: derived,
            jitter_sd,
            shape,
            iterations,
            warmup,
            step_scales: run.chains.iter().map(|c| c.step_scale).collect(),
        };
        Ok(AutoRun { run, report })
    }
}

/// The budget of a run and what was released before its chains: the total Gaussian `μ`, the
/// releases so far (initialisation), and the RNG stream of the releases still to come.
struct SpentBefore {
    mu_total: f64,
    before: Vec<EarlierRelease>,
    rng: crate::rng::ChainRng,
}

/// Relative coordinate scales (RMS 1) from the initial point's released curvature, clamped to
/// [1e-3, 1e3]; all ones without an initial point.
fn shape(p: Option<&InitialPoint>, d: usize) -> Vec<f64> {
    let Some(p) = p else {
        return vec![1.0; d];
    };
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if !p.scale.iter().all(|&x| ok(x)) {
        return vec![1.0; d];
    }
    let rms = (p.scale.iter().map(|x| x * x).sum::<f64>() / d as f64).sqrt();
    p.scale.iter().map(|x| (x / rms).clamp(1e-3, 1e3)).collect()
}
