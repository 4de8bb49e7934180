//! Noise-aware private inference: spend the budget on a few shaped private statistics, then
//! sample the posterior of θ **given what was released**, with the DP noise modelled.
//!
//! A DP-MCMC chain pays for every step, so its path is bounded by the budget; on real data
//! (tens of thousands of rows, ten parameters) it barely leaves its start and its spread says
//! nothing about the noise. Here the private part is a handful of passes over the data: a DP
//! Newton path of four rounds (six for Poisson regression), each releasing the information and
//! score sums with shapes chosen from earlier releases (`releases.rs`) and sensitivities
//! computed over the rows the declared bounds allow, each row's residual tied to its
//! covariates (`sensitivity.rs`); a library model's rows are clipped to declared per-row
//! bounds instead ([`NoiseAware::run_model`]). The posterior is then post-processing
//! (`posterior.rs`): the score releases near the mode are pooled, the true information is a
//! latent variable with the information releases' noise modelled, and the joint posterior is
//! sampled by several chains until R-hat ≤ 1.01 and the bulk ESS ≥ 400 on every parameter (no
//! privacy cost).
//!
//! The method is a noise-aware Laplace approximation (Bernstein & Sheldon 2018, 2019, for the
//! noise-aware idea; Kulkarni et al. 2021 for GLMs; the Laplace likelihood of the score near
//! the mode): it is exact as `n` grows, and its approximation is that of the Laplace
//! approximation at the mode (`docs/NOISE-AWARE.md` says where it fails).
//!
//! ```
//! use dp_mcmc::noise_aware::{GlmData, GlmKind, NoiseAware};
//! use dp_mcmc::samplers::RunSetters;
//! use rand::RngExt;
//! # fn main() -> dp_mcmc::Result<()> {
//! // 5 000 rows of a logistic regression with one covariate in [0, 1]
//! let mut rng = dp_mcmc::rng::chain_rng(1, 0);
//! let (mut x, mut y) = (Vec::new(), Vec::new());
//! for _ in 0..5_000 {
//!     let a: f64 = rng.random();
//!     let p = 1.0 / (1.0 + (-(-0.5 + 1.5 * a)).exp());
//!     x.extend([1.0, a]);
//!     y.push(if rng.random::<f64>() < p { 1.0 } else { 0.0 });
//! }
//! let data = GlmData::new(GlmKind::Logistic, x, y, vec![(1.0, 1.0), (0.0, 1.0)], (0.0, 1.0),
//!     10.0, vec!["intercept".into(), "a".into()])?;
//! let fit = NoiseAware::new().epsilon(2.0).delta(1e-6).seed(7).run(&data)?;
//! assert!(fit.report.converged); // R-hat ≤ 1.01, bulk ESS ≥ 400, the path at the mode
//! let privacy = fit.run.privacy.as_ref().unwrap();
//! assert!(privacy.epsilon <= 2.0);
//! assert_eq!(fit.run.rng.as_str(), "seeded"); // .seed(s): reproducible, not a DP release
//! assert!(fit.report.rounds.len() >= 4); // four, and more while the path has not arrived
//! // bad input is a typed error naming the setting
//! assert!(NoiseAware::new().epsilon(-1.0).delta(1e-6).run(&data).is_err());
//! # Ok(()) }
//! ```

mod chains;
mod coordinates;
mod data;
mod linalg;
mod linear;
mod link;
mod model_path;
mod polytope;
mod posterior;
mod releases;
mod report;
mod sensitivity;
mod structure;
mod xtx;

use std::time::{Duration, Instant};

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

pub use coordinates::{
    AUTOSCALED_DF, AUTOSCALED_LOG_SIGMA, AUTOSCALED_SD, Coordinates, Prior, PriorReport,
};
pub use data::GlmData;
pub use linear::{SUFFICIENT_SHARES, SufficientRelease, release_sufficient};
pub use link::GlmKind;
pub use model_path::{RowBounds, release_clipped};
pub use posterior::pooled_round_count;
pub use releases::{
    AdaptivePlan, POISSON_SCHEDULE, PathPlan, Release, Round, SCHEDULE, default_schedule,
    release_information, release_score,
};
pub use report::{INDEFINITE_WARNING, MOSTLY, NoiseAwareReport, PATH_NOT_CONVERGED, VarianceShare};
pub use xtx::release_whitened_xtx;

use crate::accounting::PrivacyEvent;
use crate::accounting::gaussian_budget;
use crate::error::{Error, Result, check};
use crate::noise::RngMode;
use crate::rng::{ChainRng, chain_rng};
use crate::samplers::ledger::share_by_gaussian_mu;
use crate::samplers::{
    Budget, ChainTrace, EarlierRelease, Fit, Ledger, LedgerPart, PrivacySpent, Run, RunSetters,
    RunSettings, StepInfo,
};
use chains::PosteriorSampler;

/// Stream of the releases (chain `i`'s posterior sampling uses stream `i`).
const RELEASE_STREAM: u64 = 1 << 42;

/// Default wall-time limit of the posterior sampling ([`NoiseAware::run`]'s `max_time`):
/// sampling is post-processing, so it may go on, but never without a bound.
pub const DEFAULT_MAX_SECONDS: f64 = 10.0;

/// A finished noise-aware fit: the draws as a [`Run`] (with its ledger) and the report of every
/// release ([`NoiseAwareReport`]).
pub type NoiseAwareFit = Fit<NoiseAwareReport>;

/// Builder of a noise-aware fit (see the [module docs](self)).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NoiseAware {
    /// The run settings, written by [`RunSetters`]: the budget `(ε, δ)` of the whole analysis
    /// (`.epsilon(e).delta(d)`), the posterior sampler's chains (default 4) and warm-up steps
    /// per chain (default 200), `max_time` (the sampling's wall-time limit, default
    /// [`DEFAULT_MAX_SECONDS`]), `threads`, `progress`. `.seed(s)` makes a reproducible
    /// research run; without it (the default) every noise draw comes from the operating
    /// system's entropy, the only setting under which the fit is a DP release.
    pub run: RunSettings,
    /// Draws per chain to start with (default 1000); the chains are continued until R-hat ≤
    /// 1.01 and bulk ESS ≥ 400 on every parameter, up to [`NoiseAware::max_draws`] and the
    /// time limit.
    pub draws: usize,
    /// Most draws per chain (default 64 000).
    pub max_draws: usize,
    /// How the Newton path spends the budget (`None`, default: the model's
    /// [`PathPlan::default_for`], adaptive; a library model's path: [`SCHEDULE`]).
    #[serde(default)]
    pub plan: Option<PathPlan>,
    /// How many of the path's last rounds enter the likelihood (`None`, default: the model's
    /// [`pooled_round_count`]).
    #[serde(default)]
    pub pooled: Option<usize>,
    /// Declared per-row bounds of a library model ([`NoiseAware::run_model`]); the four `fit`
    /// models' sensitivities come from their declared covariate bounds instead.
    #[serde(default)]
    pub row_bounds: Option<RowBounds>,
}

impl Default for NoiseAware {
    fn default() -> Self {
        NoiseAware {
            run: RunSettings {
                secure_rng: true,
                warmup: 200,
                max_time: Some(Duration::from_secs_f64(DEFAULT_MAX_SECONDS)),
                ..RunSettings::default()
            },
            draws: 1000,
            max_draws: 64_000,
            plan: None,
            pooled: None,
            row_bounds: None,
        }
    }
}

impl RunSetters for NoiseAware {
    fn run_mut(&mut self) -> &mut RunSettings {
        &mut self.run
    }
}

impl NoiseAware {
    /// The defaults; set `.epsilon(e).delta(d)` ([`RunSetters`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A fixed schedule: `μ` shares per round, `(information, score)`, adding up to at most
    /// 1 ([`PathPlan::Fixed`]).
    #[must_use]
    pub fn schedule(mut self, s: Vec<(f64, f64)>) -> Self {
        self.plan = Some(PathPlan::Fixed(s));
        self
    }

    /// How the Newton path spends the budget.
    #[must_use]
    pub fn plan(mut self, plan: PathPlan) -> Self {
        self.plan = Some(plan);
        self
    }

    /// Declared per-row bounds of a library model ([`NoiseAware::run_model`]): its rows'
    /// log-likelihood gradients are clipped to Euclidean norm `gradient` and their information
    /// (minus the Hessian) to Frobenius norm `information`.
    #[must_use]
    pub fn row_bounds(mut self, gradient: f64, information: f64) -> Self {
        self.row_bounds = Some(RowBounds {
            gradient,
            information,
        });
        self
    }

    /// The budget `(ε, δ)`, checked, with the other settings.
    fn validate(&self) -> Result<(f64, f64)> {
        let budget = self.run.privacy_budget()?;
        let Some((epsilon, delta)) = budget else {
            return Err(Error::invalid(
                "epsilon",
                match self.run.budget {
                    Budget::Iterations(k) => format!("{k} iterations"),
                    _ => "unset".into(),
                },
                "set `.epsilon(e).delta(d)`, the budget of the whole analysis (a noise-aware \
                 fit releases a few statistics; it has no iteration count)",
            ));
        };
        check::at_least_one("draws", self.draws)?;
        if let Some(t) = self.run.max_time {
            check::positive("max_time", t.as_secs_f64())?;
        }
        if let Some(plan) = &self.plan {
            plan.validate()?;
        }
        Ok((epsilon, delta))
    }

    fn rng(&self, stream: u64) -> Result<ChainRng> {
        if self.run.secure_rng {
            crate::noise::os_chain_rng()
        } else {
            Ok(chain_rng(self.run.seed, stream))
        }
    }

    /// The private releases, then the posterior given them. A fit whose chains did not
    /// converge within the limits, or whose Newton path did not reach the mode, comes back
    /// with `report.converged` false and its warnings ([`NoiseAwareReport::warnings`]): its
    /// draws are not a result.
    ///
    /// # Errors
    /// Invalid settings; releases too noisy for a positive definite information at this
    /// budget; a model that leaves the finite range on the Newton path.
    pub fn run(&self, data: &GlmData) -> Result<NoiseAwareFit> {
        let (epsilon, delta) = self.validate()?;
        self.run.on_pool(|| {
            let t0 = Instant::now();
            let mu_total = gaussian_budget(epsilon, delta)?;
            let mut rng = self.rng(RELEASE_STREAM)?;
            let fitted = if data.kind == GlmKind::Linear {
                // the sufficient statistics, XᵀX in two stages
                let release = linear::release_for_budget(data, mu_total, &mut rng)?;
                let z = release
                    .noise_multipliers
                    .map(|z| z.unwrap_or(f64::INFINITY));
                let post = linear::LinearPosterior::new(&release, data)?;
                let (precision, prior_precision) = post.noise_free_precision();
                Fitted {
                    final_point: post.point(),
                    sampler: PosteriorSampler::Linear(post),
                    rounds: Vec::new(),
                    pooled: Vec::new(),
                    last_step_whitened: 0.0,
                    last_step_noise: 0.0,
                    releases: ["XᵀX (pilot)", "XᵀX (whitened)", "Xᵀy", "yᵀy"]
                        .iter()
                        .zip(z)
                        .filter(|(_, z)| z.is_finite())
                        .map(|(what, z)| (format!("sufficient statistics {what}"), z))
                        .collect(),
                    sufficient: Some(release),
                    centred: false,
                    precision,
                    prior_precision,
                    student_prior: None,
                }
            } else {
                let plan = self
                    .plan
                    .clone()
                    .unwrap_or_else(|| PathPlan::default_for(data.kind));
                let path = releases::newton_path(data, mu_total, &plan, &mut rng)?;
                let pooled = match self.pooled {
                    Some(k) => posterior::pooled_rounds(&path.rounds, k),
                    None => {
                        releases::pooled_rounds(data, &path, &plan, pooled_round_count(data.kind))
                    }
                };
                Fitted::laplace(
                    path,
                    pooled,
                    &data.prior,
                    &structure::determined_entries(data),
                )?
            };
            // a Newton path's draws are centred at the prior's mean (a linear model's are not)
            let centre = fitted.centred.then_some(&data.prior.mean);
            let labels = Labels {
                model: data.kind.label(),
                names: data.names.clone(),
                n_rows: data.n_rows(),
                prior: Some(data.prior_report()),
                coordinates: Some(data.coordinates().clone()),
                linear_map: data.coordinates().to_model_map().0,
                to_model: &|t: &mut [f64]| {
                    if let Some(m) = centre {
                        shift(t, m, 1.0);
                    }
                    data.to_model(t);
                },
            };
            self.finish(fitted, &labels, (mu_total, epsilon, delta), t0)
        })?
    }

    /// The noise-aware fit of a library [`Model`](crate::models::Model) with per-row
    /// gradients, its sensitivities set by declared per-row bounds
    /// ([`NoiseAware::row_bounds`]; the rows are clipped to them): a Newton path of four
    /// rounds from the prior's mode, each releasing the clipped gradient and information sums,
    /// the last [`MODEL_POOLED`] pooled; the posterior as for the `fit` models, with the
    /// model's prior through its Gaussian approximation at its mode (exact for Gaussian
    /// priors). `docs/NOISE-AWARE.md`, "Library models".
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, LogisticModel};
    /// use dp_mcmc::noise_aware::NoiseAware;
    /// use dp_mcmc::samplers::RunSetters;
    /// use rand::RngExt;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// // 20 000 rows of a logistic regression, one covariate in [0, 1]
    /// let mut rng = dp_mcmc::rng::chain_rng(3, 0);
    /// let a: Vec<f64> = (0..20_000).map(|_| rng.random()).collect();
    /// let y: Vec<f64> = a.iter()
    ///     .map(|v| f64::from(rng.random::<f64>() < 1.0 / (1.0 + (0.5 - 1.5 * v).exp())))
    ///     .collect();
    /// let x = ColumnData::from_columns(vec![vec![1.0; a.len()], a])?;
    /// let model = LogisticModel::new(x, &y, 10.0)?;
    /// // ‖x‖ ≤ √2 and ‖x xᵀ‖_F / 4 ≤ 1/2 for every row in the box: nothing is clipped
    /// let fit = NoiseAware::new().epsilon(2.0).delta(1e-6).seed(1).row_bounds(1.5, 0.5)
    ///     .run_model(&model)?;
    /// assert!(fit.report.max_rhat <= 1.01);
    /// assert_eq!(fit.report.model, "library model");
    /// // without declared row bounds the sensitivities are unknown: a typed error
    /// let err = NoiseAware::new().epsilon(2.0).delta(1e-6).run_model(&model).unwrap_err();
    /// assert!(err.to_string().contains("row_bounds"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Invalid settings; no declared row bounds, or bounds that are not positive and finite; a
    /// model without per-row gradients, with a tempered likelihood, or with an improper prior;
    /// releases that leave the finite range.
    pub fn run_model<M: crate::models::Model + ?Sized>(&self, model: &M) -> Result<NoiseAwareFit> {
        let (epsilon, delta) = self.validate()?;
        let bounds = self.row_bounds.ok_or_else(|| {
            Error::invalid(
                "row_bounds",
                "none",
                "declare `.row_bounds(gradient, information)`: per-row bounds chosen without \
                 looking at the data, which set the releases' noise",
            )
        })?;
        // the bounds themselves are checked by `release_clipped`
        if !model.has_gradient() {
            return Err(Error::Model(
                "the noise-aware method needs per-row gradients; implement \
                 `grad_log_lik_row` and `has_gradient`"
                    .into(),
            ));
        }
        if model.tempering() != 1.0 {
            return Err(Error::Model(format!(
                "the noise-aware method models an untempered likelihood; this model's \
                 tempering is {}",
                model.tempering()
            )));
        }
        self.run.on_pool(|| {
            let t0 = Instant::now();
            let mu_total = gaussian_budget(epsilon, delta)?;
            let mut rng = self.rng(RELEASE_STREAM)?;
            let prior = model_path::gaussian_prior(model)?;
            let schedule = match &self.plan {
                None => SCHEDULE.to_vec(),
                Some(PathPlan::Fixed(s)) => s.clone(),
                Some(PathPlan::Adaptive(_)) => {
                    return Err(Error::invalid(
                        "plan",
                        "adaptive",
                        "a library model's path takes a fixed schedule (`.schedule(shares)`)",
                    ));
                }
            };
            let path =
                model_path::model_path(model, bounds, &prior, mu_total, &schedule, &mut rng)?;
            let pooled =
                posterior::pooled_rounds(&path.rounds, self.pooled.unwrap_or(MODEL_POOLED));
            let fitted = Fitted::laplace(path, pooled, &prior, &[])?;
            let d = model.dim();
            let labels = Labels {
                model: "library model",
                names: model.param_names(),
                n_rows: model.n_rows(),
                prior: None,
                coordinates: None,
                linear_map: DMatrix::identity(d, d),
                to_model: &|t: &mut [f64]| shift(t, &prior.mean, 1.0),
            };
            self.finish(fitted, &labels, (mu_total, epsilon, delta), t0)
        })?
    }

    /// Samples the posterior of a fit's releases until converged (or out of time or draws)
    /// and assembles the run, its ledger and the report.
    fn finish(
        &self,
        fitted: Fitted,
        labels: &Labels<'_>,
        (mu_total, epsilon, delta): (f64, f64, f64),
        t0: Instant,
    ) -> Result<NoiseAwareFit> {
        let d = labels.names.len();
        let t_sampling = Instant::now();
        let limits = chains::Limits {
            warmup: self.run.warmup,
            draws: self.draws,
            max_draws: self.max_draws.max(self.draws),
            deadline: self.run.max_time.map(|t| t_sampling + t),
        };
        let rngs = (0..self.run.chains as u64)
            .map(|i| self.rng(i))
            .collect::<Result<Vec<_>>>()?;
        let sampled = chains::sample(&fitted.sampler, rngs, d, &limits)?;
        let sampling_seconds = t_sampling.elapsed().as_secs_f64();
        let chains = sampled.chains;
        let floored_share = chains.iter().map(|c| c.floored).sum::<usize>() as f64
            / chains
                .iter()
                .map(|c| c.accepted.len() + self.run.warmup + 1)
                .sum::<usize>() as f64;
        let acceptance = chains
            .iter()
            .map(|c| c.accepted.iter().filter(|a| **a).count() as f64 / c.accepted.len() as f64)
            .collect();
        let (precision, prior_precision, pull_prior) = acting_prior(&fitted, &chains, labels);
        let traces: Vec<ChainTrace> = chains
            .into_iter()
            .map(|mut c| {
                for t in c.draws.chunks_exact_mut(d) {
                    (labels.to_model)(t);
                }
                (labels.to_model)(&mut c.start);
                ChainTrace {
                    start: c.start,
                    stats: c
                        .accepted
                        .iter()
                        .map(|&accepted| StepInfo {
                            accepted,
                            ..StepInfo::default()
                        })
                        .collect(),
                    draws: c.draws,
                    wall_seconds: 0.0,
                    stopped_early: false,
                    thin: 1,
                    totals: None,
                    warmup: 0,
                    step_scale: 1.0,
                }
            })
            .collect();
        let variance_shares = variance_shares(
            &traces,
            (&precision, &prior_precision),
            labels,
            pull_prior.as_ref(),
        );
        let privacy = ledger(&fitted.releases, mu_total, epsilon, delta)?;
        let mut final_point = fitted.final_point;
        (labels.to_model)(&mut final_point);
        let path_converged = fitted.last_step_noise <= PATH_NOT_CONVERGED;
        let report = NoiseAwareReport {
            model: labels.model.to_string(),
            mu_total,
            indefinite_share: fitted.sampler.indefinite_share(),
            rounds: fitted.rounds,
            sufficient: fitted.sufficient,
            pooled: fitted.pooled,
            final_point,
            last_step_whitened: fitted.last_step_whitened,
            last_step_noise: fitted.last_step_noise,
            acceptance,
            draws_per_chain: sampled.draws_per_chain,
            floored_share,
            variance_shares,
            prior: labels.prior.clone(),
            coordinates: labels.coordinates.clone(),
            max_rhat: sampled.max_rhat,
            min_ess_bulk: sampled.min_ess_bulk,
            converged: sampled.converged && path_converged,
            sampling_seconds,
        };
        let run = Run {
            algorithm: "noise-aware".into(),
            param_names: labels.names.clone(),
            n_rows: labels.n_rows,
            iterations: sampled.draws_per_chain,
            warmup: 0,
            chains: traces,
            privacy: Some(privacy),
            seed: self.run.seed,
            rng: if self.run.secure_rng {
                RngMode::Secure
            } else {
                RngMode::Seeded
            },
            settings: serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
            wall_seconds: t0.elapsed().as_secs_f64(),
            version: env!("CARGO_PKG_VERSION"),
        };
        Ok(Fit { run, report })
    }
}

/// The ledger of a fit's Gaussian releases (`(part, noise multiplier)`): one part per release,
/// shares in proportion to each release's Gaussian `μ` (exact: the composition of Gaussian
/// mechanisms is the Gaussian mechanism with the summed `μ`), the run's (ε, δ) from the
/// composed event.
fn ledger(
    releases: &[(String, f64)],
    mu_total: f64,
    epsilon: f64,
    delta: f64,
) -> Result<PrivacySpent> {
    let mut before = Vec::new();
    let mut events = Vec::new();
    for (part, z) in releases {
        let event = PrivacyEvent::gaussian(*z);
        events.push(event.clone());
        before.push(EarlierRelease {
            part: part.clone(),
            releases: 1,
            event,
        });
    }
    let total = PrivacyEvent::compose(events);
    let mu_spent: f64 = before
        .iter()
        .map(|b| b.event.gaussian_mu().unwrap_or(f64::INFINITY))
        .sum();
    if mu_spent.is_nan() || mu_spent > mu_total * (1.0 + 1e-9) {
        return Err(Error::Numerical {
            what: "noise-aware ledger",
            reason: format!("spent μ = {mu_spent} above the budget's {mu_total}"),
        });
    }
    let spent = if mu_spent >= mu_total {
        epsilon
    } else {
        crate::accounting::pld_epsilon(mu_spent, delta)?.min(epsilon)
    };
    let mut parts: Vec<LedgerPart> = before
        .iter()
        .map(|b| LedgerPart {
            part: b.part.clone(),
            epsilon_share: 0.0,
            releases: b.releases,
            event: b.event.clone(),
        })
        .collect();
    share_by_gaussian_mu(&mut parts, spent);
    Ok(PrivacySpent {
        epsilon: spent,
        delta,
        per_chain: false,
        accountant: crate::accounting::AccountantKind::Pld.label().into(),
        ledger: Ledger {
            total: Some(total),
            before,
            parts,
            ..Ledger::default()
        },
    })
}

/// Per parameter, the shares of its posterior variance (from the draws) due to the DP noise
/// and the prior: with `C₀ = (Ĥ + P)⁻¹` the posterior covariance the released information
/// `Ĥ` and the prior's precision `P` alone would give, and `Ĥ⁻¹` the data's alone, the noise
/// share is `1 − C₀ᵢᵢ/Cᵢᵢ` and the prior's `1 − C₀ᵢᵢ/(Ĥ⁻¹)ᵢᵢ`, all in the model's units.
/// Post-processing of the releases; empty if a matrix is singular.
fn variance_shares(
    traces: &[ChainTrace],
    (precision, prior_precision): (&DMatrix<f64>, &DMatrix<f64>),
    labels: &Labels<'_>,
    prior: Option<&PriorReport>,
) -> Vec<VarianceShare> {
    let d = labels.names.len();
    let t = &labels.linear_map;
    let to_model = |m: DMatrix<f64>| t * m * t.transpose();
    let (Some(c0), Some(h_inv)) = (
        precision.clone().try_inverse().map(to_model),
        (precision - prior_precision).try_inverse().map(to_model),
    ) else {
        return Vec::new();
    };
    let all: Vec<&[f64]> = traces
        .iter()
        .flat_map(|c| c.draws.chunks_exact(d))
        .collect();
    let (mean, cov) = moments(&all, d);
    let pulls = prior_pulls(&mean, &cov, prior);
    (0..d)
        .map(|i| {
            let var = cov[(i, i)];
            let clamp = |v: f64| {
                if v.is_finite() {
                    v.clamp(0.0, 1.0)
                } else {
                    0.0
                }
            };
            VarianceShare {
                parameter: labels.names[i].clone(),
                noise: clamp(1.0 - c0[(i, i)] / var),
                prior: clamp(1.0 - c0[(i, i)] / h_inv[(i, i)]),
                prior_pull: pulls.as_ref().map(|p| p[i]),
            }
        })
        .collect()
}

/// The precisions [`variance_shares`] reads (internal coordinates: the released information's
/// posterior precision with the prior, and the prior's) and the prior [`prior_pulls`] reads
/// (model units). A Student-t prior acts on these draws as the Gaussian of its mixture's
/// posterior mean precision ([`coordinates::GaussianPrior::effective_precision`]); a Gaussian
/// prior is itself.
fn acting_prior(
    fitted: &Fitted,
    chains: &[posterior::ChainDraws],
    labels: &Labels<'_>,
) -> (DMatrix<f64>, DMatrix<f64>, Option<PriorReport>) {
    let Some(student) = &fitted.student_prior else {
        return (
            fitted.precision.clone(),
            fitted.prior_precision.clone(),
            labels.prior.clone(),
        );
    };
    let d = labels.names.len();
    let acting = student.effective_precision(chains.iter().flat_map(|c| c.draws.chunks_exact(d)));
    let precision = &fitted.precision - &fitted.prior_precision + &acting;
    let report = labels.prior.clone().and_then(|r| {
        let t = &labels.linear_map;
        let cov = t * acting.clone().try_inverse()? * t.transpose();
        Some(PriorReport {
            df: None,
            cov: cov
                .row_iter()
                .map(|r| r.iter().copied().collect())
                .collect(),
            ..r
        })
    });
    (precision, acting, report)
}

/// The mean and the sample covariance (divisor `n − 1`) of draws of length `d`.
fn moments(all: &[&[f64]], d: usize) -> (DVector<f64>, DMatrix<f64>) {
    let n = all.len() as f64;
    let mean = DVector::from_fn(d, |i, _| all.iter().map(|r| r[i]).sum::<f64>() / n);
    let mut cov = DMatrix::<f64>::zeros(d, d);
    for r in all {
        let x = DVector::from_fn(d, |i, _| r[i] - mean[i]);
        cov += &x * x.transpose();
    }
    (mean, cov / (n - 1.0))
}

/// Per parameter, how far the prior moves the posterior mean in posterior sds
/// ([`VarianceShare::prior_pull`]), from the draws' mean and covariance and the prior (model
/// units); `None` when the prior is not Gaussian or the draws' precision does not exceed it.
fn prior_pulls(
    mean: &DVector<f64>,
    cov: &DMatrix<f64>,
    prior: Option<&PriorReport>,
) -> Option<Vec<f64>> {
    let prior = prior?;
    let d = mean.len();
    if prior.mean.len() != d {
        return None;
    }
    let p = cov.clone().cholesky()?.inverse();
    let q = DMatrix::from_fn(d, d, |i, j| prior.cov[i][j])
        .cholesky()?
        .inverse();
    let m0 = DVector::from_column_slice(&prior.mean);
    let shift = (&p - &q).cholesky()?.solve(&(&q * (m0 - mean)));
    let pulls: Vec<f64> = (0..d).map(|i| shift[i] / cov[(i, i)].sqrt()).collect();
    pulls.iter().all(|v| v.is_finite()).then_some(pulls)
}

/// What the private part of a fit produced.
struct Fitted {
    sampler: PosteriorSampler,
    rounds: Vec<Round>,
    pooled: Vec<usize>,
    /// Internal coordinates.
    final_point: Vec<f64>,
    last_step_whitened: f64,
    /// The last step against its own DP noise ([`NoiseAwareReport::last_step_noise`]).
    last_step_noise: f64,
    /// Ledger parts: name and noise multiplier of each Gaussian release.
    releases: Vec<(String, f64)>,
    sufficient: Option<SufficientRelease>,
    /// Whether the final point and the draws are centred at the prior's mean (`θ − m`: the
    /// Newton path's posterior is written for a prior centred at 0).
    centred: bool,
    /// The posterior precision the released information and the prior alone would give, and
    /// the prior's precision (internal coordinates): for [`variance_shares`].
    precision: DMatrix<f64>,
    prior_precision: DMatrix<f64>,
    /// A Student-t prior, centred as the draws are (for [`acting_prior`]).
    student_prior: Option<coordinates::GaussianPrior>,
}

/// `t + sign·m`, in place.
fn shift(t: &mut [f64], m: &[f64], sign: f64) {
    for (v, m) in t.iter_mut().zip(m) {
        *v += sign * m;
    }
}

impl Fitted {
    /// A Newton path's fit under the Gaussian prior `prior`: its rounds, the posterior of the
    /// pooled ones (written for a prior centred at 0, so in the coordinates `θ − m`: the final
    /// point and the draws are centred, the rounds keep their own points), the ledger parts.
    fn laplace(
        path: releases::Path,
        pooled: Vec<usize>,
        prior: &coordinates::GaussianPrior,
        determined: &[structure::Determined],
    ) -> Result<Self> {
        let centred: Vec<Round> = path
            .rounds
            .iter()
            .map(|r| {
                let mut r = r.clone();
                shift(&mut r.theta, &prior.mean, -1.0);
                r
            })
            .collect();
        let post = posterior::NoiseAwarePosterior::with_prior(
            &centred,
            &pooled,
            prior.cov.clone(),
            prior.student_df,
            determined,
        )?;
        let mut final_point = path.final_theta.clone();
        shift(&mut final_point, &prior.mean, -1.0);
        let d = path.final_theta.len();
        let (last_step_whitened, last_step_noise) = last_step(&path, d);
        let releases = path
            .rounds
            .iter()
            .enumerate()
            .flat_map(|(k, r)| {
                [
                    (
                        format!("round {} information", k + 1),
                        r.info_noise_multiplier,
                    ),
                    (format!("round {} score", k + 1), r.score_noise_multiplier),
                ]
            })
            .collect();
        Ok(Fitted {
            sampler: PosteriorSampler::Laplace(post),
            rounds: path.rounds,
            pooled,
            final_point,
            last_step_whitened,
            last_step_noise,
            releases,
            sufficient: None,
            centred: true,
            precision: path.final_curv,
            prior_precision: prior.prec.clone(),
            student_prior: prior.student_df.map(|_| coordinates::GaussianPrior {
                mean: vec![0.0; d],
                ..prior.clone()
            }),
        })
    }
}

/// The path's last Newton step (from the last round's point to the final one): its length in
/// the metric of the released curvature `C`, and `stepᵀV⁻¹step / d` with `V = C⁻¹ΣC⁻¹` the
/// covariance the last score release's DP noise `Σ` gives the step. At the mode the step is
/// that noise alone (about 1); a path still on its way has a step far beyond it.
fn last_step(path: &releases::Path, d: usize) -> (f64, f64) {
    let last = &path.rounds[path.rounds.len() - 1];
    let diff = nalgebra::DVector::from_iterator(
        d,
        path.final_theta.iter().zip(&last.theta).map(|(a, b)| a - b),
    );
    let whitened = (diff.transpose() * &path.final_curv * &diff)[(0, 0)].sqrt();
    let a = DMatrix::from_row_slice(d, d, &last.score_shape);
    // V⁻¹ = C Σ⁻¹ C with Σ⁻¹ = AᵀA / s²
    let sigma_inv = a.transpose() * &a / (last.score_noise_sd * last.score_noise_sd);
    let v_inv = &path.final_curv * sigma_inv * &path.final_curv;
    let noise = (diff.transpose() * v_inv * &diff)[(0, 0)] / d as f64;
    (
        whitened,
        if noise.is_finite() {
            noise
        } else {
            f64::INFINITY
        },
    )
}

/// What the sampled draws are mapped through and labelled with.
struct Labels<'a> {
    model: &'static str,
    names: Vec<String>,
    n_rows: usize,
    prior: Option<PriorReport>,
    coordinates: Option<Coordinates>,
    /// The linear part of the map from the internal coordinates to the model's.
    linear_map: DMatrix<f64>,
    /// From the posterior's coordinates to the model's.
    to_model: &'a dyn Fn(&mut [f64]),
}

/// Rounds of a library model's Newton path pooled in its likelihood (the last two: the first
/// rounds may be far from the mode, and no declared bounds tell how far).
pub const MODEL_POOLED: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, StandardNormal};

    /// A Gaussian prior of the model's units, for [`prior_pulls`].
    fn prior_report(mean: Vec<f64>, cov: Vec<Vec<f64>>) -> PriorReport {
        PriorReport {
            declared: Prior::Original { sd: 1.0 },
            description: String::new(),
            df: None,
            mean,
            cov,
        }
    }

    /// Prior `N(m₀, S₀)` times a Gaussian likelihood `N(m_L, L⁻¹)` is `N(μ, Σ)` with
    /// `Σ = (S₀⁻¹ + L)⁻¹`, `μ = Σ(S₀⁻¹m₀ + L m_L)`: the prior moves the mean by `μ − m_L`, and
    /// `prior_pulls` reads that back from draws of `N(μ, Σ)` alone. 200 000 draws: the pulls'
    /// Monte Carlo error is below 0.01 sds, the tolerance 0.03.
    #[test]
    fn prior_pull_is_the_shift_the_prior_gives_a_gaussian_posterior() {
        let s0 = DMatrix::from_row_slice(2, 2, &[4.0, 1.0, 1.0, 2.0]);
        let m0 = DVector::from_vec(vec![0.5, -1.0]);
        let l = DMatrix::from_row_slice(2, 2, &[3.0, -1.0, -1.0, 1.5]);
        let m_l = DVector::from_vec(vec![3.0, 2.0]);
        let s0_inv = s0.clone().try_inverse().unwrap();
        let sigma = (&s0_inv + &l).try_inverse().unwrap();
        let mu = &sigma * (&s0_inv * &m0 + &l * &m_l);
        let chol = sigma.clone().cholesky().unwrap().l();
        let mut rng = chain_rng(11, 0);
        let draws: Vec<Vec<f64>> = (0..200_000)
            .map(|_| {
                let z = DVector::from_fn(2, |_, _| StandardNormal.sample(&mut rng));
                (&mu + &chol * z).as_slice().to_vec()
            })
            .collect();
        let all: Vec<&[f64]> = draws.iter().map(Vec::as_slice).collect();
        let (mean, cov) = moments(&all, 2);
        let pulls_of = |prior: Option<&PriorReport>| prior_pulls(&mean, &cov, prior);
        let prior = prior_report(m0.as_slice().to_vec(), vec![vec![4.0, 1.0], vec![1.0, 2.0]]);
        let pulls = pulls_of(Some(&prior)).unwrap();
        for i in 0..2 {
            let want = (mu[i] - m_l[i]) / sigma[(i, i)].sqrt();
            assert!(
                (pulls[i] - want).abs() < 0.03,
                "{i}: {} vs {want}",
                pulls[i]
            );
        }
        // a prior far wider than the likelihood barely moves the mean
        let wide = prior_report(vec![0.0, 0.0], vec![vec![1e8, 0.0], vec![0.0, 1e8]]);
        let pulls = pulls_of(Some(&wide)).unwrap();
        assert!(pulls.iter().all(|p| p.abs() < 1e-3), "{pulls:?}");
        // no Gaussian prior (a library model), or draws no more precise than the prior: none
        assert!(pulls_of(None).is_none());
        let tight = prior_report(vec![0.0, 0.0], vec![vec![1e-4, 0.0], vec![0.0, 1e-4]]);
        assert!(pulls_of(Some(&tight)).is_none());
    }
}
