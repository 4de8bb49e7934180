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
//! let privacy = fit.run.privacy.as_ref().unwrap();
//! assert!(privacy.epsilon <= 2.0);
//! assert_eq!(fit.run.rng.as_str(), "seeded"); // .seed(s): reproducible, not a DP release
//! assert_eq!(fit.report.rounds.len(), 4);
//! // bad input is a typed error naming the setting
//! assert!(NoiseAware::new().epsilon(-1.0).delta(1e-6).run(&data).is_err());
//! # Ok(()) }
//! ```

mod coordinates;
mod data;
mod linalg;
mod linear;
mod link;
mod model_path;
mod polytope;
mod posterior;
mod releases;
mod sensitivity;

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use coordinates::{AUTOSCALED_LOG_SIGMA, AUTOSCALED_SD, Coordinates, Prior, PriorReport};
pub use data::{GlmData, GlmKind};
pub use linear::{SUFFICIENT_SHARES, SufficientRelease, release_sufficient};
pub use model_path::{RowBounds, release_clipped};
pub use posterior::pooled_round_count;
pub use releases::{
    POISSON_SCHEDULE, Release, Round, SCHEDULE, default_schedule, release_information,
    release_score,
};

use crate::accounting::PrivacyEvent;
use crate::auto::gaussian_budget;
use crate::error::{Error, Result, check};
use crate::noise::RngMode;
use crate::rng::{ChainRng, chain_rng};
use crate::samplers::{
    ChainTrace, EarlierRelease, Ledger, LedgerPart, PrivacySpent, Run, StepInfo,
};

/// Stream of the releases (chain `i`'s posterior sampling uses stream `i`).
const RELEASE_STREAM: u64 = 1 << 42;

/// Share of the information releases' noise distribution outside the positive definite cone
/// ([`NoiseAwareReport::indefinite_share`]) above which the releases do not determine the
/// information's weakest directions: `fit` warns, and the calibration study counts the run
/// among the prior-shaped ones.
pub const INDEFINITE_WARNING: f64 = 0.5;

/// Builder of a noise-aware fit (see the [module docs](self)).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NoiseAware {
    /// ε of the whole analysis.
    pub epsilon: f64,
    /// δ of the whole analysis.
    pub delta: f64,
    /// Chains of the posterior sampler (default 4).
    pub chains: usize,
    /// Draws per chain to start with (default 1000); the chains are continued until R-hat ≤
    /// 1.01 and bulk ESS ≥
    /// 400 on every parameter, up to [`NoiseAware::max_draws`].
    pub draws: usize,
    /// Most draws per chain (default 64 000).
    pub max_draws: usize,
    /// Warm-up steps per chain, discarded (default 200).
    pub warmup: usize,
    /// Seed of a reproducible research run (`None`, default: the releases' noise from OS
    /// entropy; a seeded run is **not** a DP release).
    pub seed: Option<u64>,
    /// `μ` shares per round, `(information, score)` (`None`, default: the model's
    /// [`default_schedule`]).
    #[serde(default)]
    pub schedule: Option<Vec<(f64, f64)>>,
    /// Declared per-row bounds of a library model ([`NoiseAware::run_model`]); the four `fit`
    /// models' sensitivities come from their declared covariate bounds instead.
    #[serde(default)]
    pub row_bounds: Option<RowBounds>,
}

impl Default for NoiseAware {
    fn default() -> Self {
        NoiseAware {
            epsilon: f64::NAN,
            delta: f64::NAN,
            chains: 4,
            draws: 1000,
            max_draws: 64_000,
            warmup: 200,
            seed: None,
            schedule: None,
            row_bounds: None,
        }
    }
}

/// What a noise-aware fit released and how its posterior was sampled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseAwareReport {
    /// The model: `logistic`, `poisson`, `linear` or `library model`.
    pub model: String,
    /// Total Gaussian `μ` of the budget ([`gaussian_budget`]).
    pub mu_total: f64,
    /// Every round's releases, in the internal coordinates (covariate `i` divided by the
    /// largest magnitude its declared bounds allow, so coefficient `i` multiplied by it); empty
    /// for a linear model.
    pub rounds: Vec<Round>,
    /// A linear model's one release of its sufficient statistics (internal coordinates).
    #[serde(default)]
    pub sufficient: Option<SufficientRelease>,
    /// The rounds pooled in the likelihood (0-based).
    pub pooled: Vec<usize>,
    /// The path's final point (post-processing of the releases).
    pub final_point: Vec<f64>,
    /// Whitened length of the last Newton step: small (≲ 1) when the path reached the mode's
    /// quadratic region.
    pub last_step_whitened: f64,
    /// Share of accepted information proposals per chain.
    pub acceptance: Vec<f64>,
    /// Draws per chain kept.
    pub draws_per_chain: usize,
    /// Share of information proposals that had to be floored (a linear model's sampler: none
    /// of 200 draws from the releases' Gaussian was positive definite): 0 when the releases
    /// determine a positive definite information; above 0 the posterior is an approximation (a
    /// floored prior on the information's weakest directions), too noisy to trust at this
    /// budget. The GLMs' sampler moves exactly within the positive definite cone and floors
    /// nothing (only, possibly, a chain's start).
    pub floored_share: f64,
    /// GLMs (the Newton path): share of the information releases' noise distribution outside
    /// the positive definite cone (2 000 draws). Near 0 the releases determine the information;
    /// near 1 its weakest directions are decided by its prior (flat on the cone), and the
    /// intervals there are wide (`fit` warns above [`INDEFINITE_WARNING`]). `None` for a
    /// linear model.
    #[serde(default)]
    pub indefinite_share: Option<f64>,
    /// The prior (`None` for a library model: its own `log_prior`).
    #[serde(default)]
    pub prior: Option<PriorReport>,
    /// The public map between the model's units and the internal coordinates the releases
    /// are made in (`None` for a library model).
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Largest R-hat over the parameters.
    pub max_rhat: f64,
    /// Smallest bulk ESS over the parameters.
    pub min_ess_bulk: f64,
}

/// A finished noise-aware fit: the draws as a [`Run`] (with its ledger) and the report.
#[derive(Clone, Debug)]
pub struct NoiseAwareFit {
    /// Draws of θ (one trace per chain), privacy ledger, random source.
    pub run: Run,
    /// What was released and how the posterior was sampled.
    pub report: NoiseAwareReport,
}

impl std::fmt::Display for NoiseAwareFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "noise-aware {} fit: {} rounds released, rounds {:?} pooled; {} chains × {} draws, \
             max R-hat {:.4}, min bulk ESS {:.0}",
            self.report.model,
            self.report.rounds.len(),
            self.report.pooled,
            self.run.chains.len(),
            self.report.draws_per_chain,
            self.report.max_rhat,
            self.report.min_ess_bulk
        )?;
        write!(f, "{}", self.run)
    }
}

impl NoiseAware {
    /// The defaults; set `.epsilon(e).delta(d)`.
    pub fn new() -> Self {
        Self::default()
    }
    /// ε of the whole analysis.
    #[must_use]
    pub fn epsilon(mut self, e: f64) -> Self {
        self.epsilon = e;
        self
    }
    /// δ of the whole analysis.
    #[must_use]
    pub fn delta(mut self, d: f64) -> Self {
        self.delta = d;
        self
    }
    /// Chains of the posterior sampler.
    #[must_use]
    pub fn chains(mut self, c: usize) -> Self {
        self.chains = c;
        self
    }
    /// Seed every random draw (reproducible research; **not** a DP release).
    #[must_use]
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = Some(s);
        self
    }
    /// `μ` shares per round, `(information, score)`, adding up to at most 1.
    #[must_use]
    pub fn schedule(mut self, s: Vec<(f64, f64)>) -> Self {
        self.schedule = Some(s);
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

    fn validate(&self) -> Result<()> {
        check::positive("epsilon", self.epsilon).map_err(|_| {
            Error::invalid(
                "epsilon",
                self.epsilon,
                "set `.epsilon(e)` to the budget of the whole analysis (e > 0)",
            )
        })?;
        check::delta("delta", self.delta)?;
        check::at_least_one("chains", self.chains)?;
        check::at_least_one("draws", self.draws)?;
        let Some(schedule) = &self.schedule else {
            return Ok(());
        };
        if schedule.is_empty() {
            return Err(Error::invalid(
                "schedule",
                schedule.len(),
                "needs at least one round (one release at the public start: PASS-GLM's \
                 quadratic statistics; more rounds to reach the mode)",
            ));
        }
        let total: f64 = schedule.iter().map(|(a, b)| a + b).sum();
        if total.is_nan()
            || total > 1.0 + 1e-12
            || schedule.iter().any(|&(a, b)| !(a > 0.0 && b > 0.0))
        {
            return Err(Error::invalid(
                "schedule",
                total,
                "every share must be positive and all of them add up to at most 1",
            ));
        }
        Ok(())
    }

    fn rng(&self, stream: u64) -> Result<ChainRng> {
        match self.seed {
            Some(s) => Ok(chain_rng(s, stream)),
            None => crate::noise::os_chain_rng(),
        }
    }

    /// The private releases, then the posterior given them.
    ///
    /// # Errors
    /// Invalid settings; releases too noisy for a positive definite information at this
    /// budget; a model that leaves the finite range on the Newton path.
    pub fn run(&self, data: &GlmData) -> Result<NoiseAwareFit> {
        self.validate()?;
        let t0 = Instant::now();
        let mu_total = gaussian_budget(self.epsilon, self.delta)?;
        let mut rng = self.rng(RELEASE_STREAM)?;
        let fitted = if data.kind == GlmKind::Linear {
            // one release of each sufficient statistic
            let z = linear::sufficient_noise_multipliers(data, mu_total, SUFFICIENT_SHARES)?;
            let release = linear::release_sufficient(data, z, &mut rng)?;
            let post = linear::LinearPosterior::new(&release, data)?;
            Fitted {
                final_point: post.point(),
                sampler: Sampler::Linear(post),
                rounds: Vec::new(),
                pooled: Vec::new(),
                last_step_whitened: 0.0,
                releases: ["XᵀX", "Xᵀy", "yᵀy"]
                    .iter()
                    .zip(z)
                    .filter(|(_, z)| z.is_finite())
                    .map(|(what, z)| (format!("sufficient statistics {what}"), z))
                    .collect(),
                sufficient: Some(release),
                centred: false,
            }
        } else {
            let schedule = self
                .schedule
                .as_deref()
                .unwrap_or_else(|| default_schedule(data.kind));
            let path = releases::newton_path(data, mu_total, schedule, &mut rng)?;
            let pooled = posterior::pooled_rounds(&path.rounds, data.kind);
            Fitted::laplace(path, pooled, &data.prior)?
        };
        // a Newton path's draws are centred at the prior's mean (a linear model's are not)
        let centre = fitted.centred.then_some(&data.prior.mean);
        let frame = Frame {
            model: data.kind.label(),
            names: data.names.clone(),
            n_rows: data.n_rows(),
            prior: Some(data.prior_report()),
            coordinates: Some(data.coordinates().clone()),
            to_model: &|t: &mut [f64]| {
                if let Some(m) = centre {
                    shift(t, m, 1.0);
                }
                data.to_model(t);
            },
        };
        self.finish(fitted, &frame, mu_total, t0)
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
        self.validate()?;
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
        let t0 = Instant::now();
        let mu_total = gaussian_budget(self.epsilon, self.delta)?;
        let mut rng = self.rng(RELEASE_STREAM)?;
        let prior = model_path::gaussian_prior(model)?;
        let schedule = self.schedule.as_deref().unwrap_or(&SCHEDULE);
        let path = model_path::model_path(model, bounds, &prior, mu_total, schedule, &mut rng)?;
        let len = path.rounds.len();
        let pooled: Vec<usize> = (len.saturating_sub(MODEL_POOLED)..len).collect();
        let fitted = Fitted::laplace(path, pooled, &prior)?;
        let frame = Frame {
            model: "library model",
            names: model.param_names(),
            n_rows: model.n_rows(),
            prior: None,
            coordinates: None,
            to_model: &|t: &mut [f64]| shift(t, &prior.mean, 1.0),
        };
        self.finish(fitted, &frame, mu_total, t0)
    }

    /// Samples the posterior of a fit's releases until converged and assembles the run, its
    /// ledger and the report.
    fn finish(
        &self,
        fitted: Fitted,
        frame: &Frame<'_>,
        mu_total: f64,
        t0: Instant,
    ) -> Result<NoiseAwareFit> {
        let d = frame.names.len();
        let mut draws = self.draws;
        let mut running: Vec<Running<'_>> = (0..self.chains as u64)
            .map(|i| fitted.sampler.start(self.warmup, self.rng(i)?))
            .collect::<Result<_>>()?;
        // continue the chains until converged: to the length the bulk ESS so far predicts
        // (ESS grows in proportion to the draws) with a tenth to spare, between 1.25 and 2
        // times the current one; 1.5 times when only R-hat is short
        let (max_rhat, min_ess) = loop {
            running
                .par_iter_mut()
                .map(|c| c.extend_to(draws))
                .collect::<Result<Vec<()>>>()?;
            let views: Vec<&posterior::ChainDraws> = running.iter().map(Running::draws).collect();
            let (rhat, ess) = convergence(&views, d)?;
            if (rhat <= 1.01 && ess >= 400.0) || draws >= self.max_draws {
                break (rhat, ess);
            }
            draws = next_length(draws, ess).min(self.max_draws);
        };
        let chains: Vec<posterior::ChainDraws> =
            running.into_iter().map(Running::into_draws).collect();
        let floored_share = chains.iter().map(|c| c.floored).sum::<usize>() as f64
            / chains
                .iter()
                .map(|c| c.accepted.len() + self.warmup + 1)
                .sum::<usize>() as f64;
        let acceptance = chains
            .iter()
            .map(|c| c.accepted.iter().filter(|a| **a).count() as f64 / c.accepted.len() as f64)
            .collect();
        let traces: Vec<ChainTrace> = chains
            .into_iter()
            .map(|mut c| {
                for t in c.draws.chunks_exact_mut(d) {
                    (frame.to_model)(t);
                }
                (frame.to_model)(&mut c.start);
                c
            })
            .map(|c| ChainTrace {
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
            })
            .collect();
        let privacy = self.ledger(&fitted.releases, mu_total)?;
        let mut final_point = fitted.final_point;
        (frame.to_model)(&mut final_point);
        let report = NoiseAwareReport {
            model: frame.model.to_string(),
            mu_total,
            rounds: fitted.rounds,
            sufficient: fitted.sufficient,
            pooled: fitted.pooled,
            final_point,
            last_step_whitened: fitted.last_step_whitened,
            acceptance,
            draws_per_chain: draws,
            floored_share,
            indefinite_share: match &fitted.sampler {
                Sampler::Laplace(p) => Some(p.indefinite_share()),
                Sampler::Linear(_) => None,
            },
            prior: frame.prior.clone(),
            coordinates: frame.coordinates.clone(),
            max_rhat,
            min_ess_bulk: min_ess,
        };
        let run = Run {
            algorithm: "noise-aware".into(),
            param_names: frame.names.clone(),
            n_rows: frame.n_rows,
            iterations: draws,
            warmup: 0,
            chains: traces,
            privacy: Some(privacy),
            seed: self.seed.unwrap_or(0),
            rng: if self.seed.is_some() {
                RngMode::Seeded
            } else {
                RngMode::Secure
            },
            settings: serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
            wall_seconds: t0.elapsed().as_secs_f64(),
            version: env!("CARGO_PKG_VERSION"),
        };
        Ok(NoiseAwareFit { run, report })
    }

    /// The ledger: one part per release, shares in proportion to each release's Gaussian `μ`
    /// (exact: the composition of Gaussian mechanisms is the Gaussian mechanism with the summed
    /// `μ`), the run's (ε, δ) from the composed event.
    fn ledger(&self, releases: &[(String, f64)], mu_total: f64) -> Result<PrivacySpent> {
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
        let epsilon = if mu_spent >= mu_total {
            self.epsilon
        } else {
            crate::accounting::pld_epsilon(mu_spent, self.delta)?.min(self.epsilon)
        };
        let parts = before
            .iter()
            .map(|b| LedgerPart {
                part: b.part.clone(),
                epsilon_share: epsilon * b.event.gaussian_mu().unwrap_or(0.0) / mu_spent,
                releases: b.releases,
                event: b.event.clone(),
            })
            .collect();
        Ok(PrivacySpent {
            epsilon,
            delta: self.delta,
            per_chain: false,
            accountant: "ADP".into(),
            ledger: Ledger {
                total: Some(total),
                before,
                parts,
                ..Ledger::default()
            },
        })
    }
}

/// The posterior a fit samples: the noise-aware Laplace posterior of a Newton path, or a
/// linear model's posterior given its sufficient statistics.
enum Sampler {
    Laplace(posterior::NoiseAwarePosterior),
    Linear(linear::LinearPosterior),
}

impl Sampler {
    /// A chain of this posterior, ready to be run ([`Running::extend_to`]).
    fn start(&self, warmup: usize, rng: ChainRng) -> Result<Running<'_>> {
        Ok(match self {
            Sampler::Laplace(p) => Running::Laplace(posterior::LaplaceChain::new(p, warmup, rng)?),
            Sampler::Linear(post) => Running::Linear {
                post,
                warmup,
                rng,
                out: posterior::ChainDraws::default(),
            },
        })
    }
}

/// A chain being run: the noise-aware Laplace posterior's continues where it stopped; a linear
/// model's is rerun from its start to the new length (the same draws, longer).
// one value per chain (a handful per run): the variants' sizes do not matter
#[allow(clippy::large_enum_variant)]
enum Running<'a> {
    Laplace(posterior::LaplaceChain<'a>),
    Linear {
        post: &'a linear::LinearPosterior,
        warmup: usize,
        rng: ChainRng,
        out: posterior::ChainDraws,
    },
}

impl Running<'_> {
    /// Runs the chain until `draws` draws after the warm-up are kept.
    fn extend_to(&mut self, draws: usize) -> Result<()> {
        match self {
            Running::Laplace(chain) => chain.advance(draws),
            Running::Linear {
                post,
                warmup,
                rng,
                out,
            } => {
                *out = post.chain(*warmup, draws, &mut rng.clone())?;
                Ok(())
            }
        }
    }

    fn draws(&self) -> &posterior::ChainDraws {
        match self {
            Running::Laplace(chain) => &chain.out,
            Running::Linear { out, .. } => out,
        }
    }

    fn into_draws(self) -> posterior::ChainDraws {
        match self {
            Running::Laplace(chain) => chain.out,
            Running::Linear { out, .. } => out,
        }
    }
}

/// What the private part of a fit produced.
struct Fitted {
    sampler: Sampler,
    rounds: Vec<Round>,
    pooled: Vec<usize>,
    /// Internal coordinates.
    final_point: Vec<f64>,
    last_step_whitened: f64,
    /// Ledger parts: name and noise multiplier of each Gaussian release.
    releases: Vec<(String, f64)>,
    sufficient: Option<SufficientRelease>,
    /// Whether the final point and the draws are centred at the prior's mean (`θ − m`: the
    /// Newton path's posterior is written for a prior centred at 0).
    centred: bool,
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
        let post =
            posterior::NoiseAwarePosterior::with_prior(&centred, &pooled, prior.cov.clone())?;
        let mut final_point = path.final_theta.clone();
        shift(&mut final_point, &prior.mean, -1.0);
        let d = path.final_theta.len();
        let last_step_whitened = {
            let last = &path.rounds[path.rounds.len() - 1].theta;
            let diff = nalgebra::DVector::from_iterator(
                d,
                path.final_theta.iter().zip(last).map(|(a, b)| a - b),
            );
            (diff.transpose() * &path.final_curv * &diff)[(0, 0)].sqrt()
        };
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
            sampler: Sampler::Laplace(post),
            rounds: path.rounds,
            pooled,
            final_point,
            last_step_whitened,
            releases,
            sufficient: None,
            centred: true,
        })
    }
}

/// What the sampled draws are mapped through and labelled with.
struct Frame<'a> {
    model: &'static str,
    names: Vec<String>,
    n_rows: usize,
    prior: Option<PriorReport>,
    coordinates: Option<Coordinates>,
    /// From the posterior's coordinates to the model's.
    to_model: &'a dyn Fn(&mut [f64]),
}

/// Rounds of a library model's Newton path pooled in its likelihood (the last two: the first
/// rounds may be far from the mode, and no declared bounds tell how far).
pub const MODEL_POOLED: usize = 2;

/// The next length of chains of `draws` draws whose smallest bulk ESS is `ess` (target 400).
fn next_length(draws: usize, ess: f64) -> usize {
    let factor = if ess < 400.0 {
        (1.1 * 400.0 / ess.max(1.0)).clamp(1.25, 2.0)
    } else {
        1.5
    };
    (draws as f64 * factor).ceil() as usize
}

/// Largest rank-normalised R-hat and smallest bulk ESS over the parameters (one parameter per
/// task).
fn convergence(chains: &[&posterior::ChainDraws], d: usize) -> Result<(f64, f64)> {
    let per_param: Vec<(f64, f64)> = (0..d)
        .into_par_iter()
        .map(|i| {
            let cols: Vec<Vec<f64>> = chains
                .iter()
                .map(|c| c.draws.iter().skip(i).step_by(d).copied().collect())
                .collect();
            let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            let rhat = crate::diagnostics::rhat(&refs)?.unwrap_or(f64::INFINITY);
            let ess = crate::diagnostics::ess_bulk(&refs)?.unwrap_or(0.0);
            Ok((rhat, ess))
        })
        .collect::<Result<_>>()?;
    Ok(per_param
        .into_iter()
        .fold((0.0f64, f64::INFINITY), |(r, e), (ri, ei)| {
            (r.max(ri), e.min(ei))
        }))
}
