//! One table in, one private posterior out: which method answers a [`FitSpec`], the run of
//! that method, and one report of its diagnostics and warnings. `dp-mcmc fit` and the
//! notebooks ask this module, so the choice and the warnings have one home.
//!
//! **The method.** [`InferenceMethod::Auto`] (the default) takes the noise-aware method
//! ([`crate::noise_aware`]) for every model `fit` knows; without the bounds it needs it stops
//! with that method's message naming the columns, and never falls back to DP-MCMC, whose
//! chains on real data barely leave their start (docs/NOISE-AWARE.md). DP-MCMC ([`Auto`]) runs
//! only when asked for (`--method dp-mcmc`, or a sampler named with `--algorithm`).
//!
//! **Never silently wrong.** Every fit reports `max_rhat`, `min_ess_bulk` and `converged`
//! ([`crate::diagnostics::converged`]): the noise-aware posterior is sampled on until it
//! converges (within a time limit, [`crate::noise_aware::DEFAULT_MAX_SECONDS`]) and its path
//! must have reached the mode; a DP-MCMC run is checked the same way after its budget is spent.
//! An answer that is not converged comes back with `converged` false and a warning that says
//! what to change; `dp-mcmc fit` then writes no draws and exits with status 3.
//!
//! ```
//! use dp_mcmc::fit::{InferenceMethod, TableFit};
//! use dp_mcmc::frame::fit_data::{FitKind, FitSpec};
//! use dp_mcmc::polars::prelude::*;
//! use dp_mcmc::samplers::RunSetters;
//! # fn main() -> dp_mcmc::Result<()> {
//! let a: Vec<f64> = (0..4000).map(|j| (j % 100) as f64 / 100.0).collect();
//! let y: Vec<f64> = a.iter().enumerate().map(|(j, v)| f64::from((j * 7919) % 100 < (30.0 + 40.0 * v) as usize)).collect();
//! let df = df!("y" => y, "a" => a)?;
//! let spec = FitSpec::new(FitKind::Logistic, "y").covariate("a", 0.0, 1.0);
//! let fit = TableFit::new(spec.clone()).epsilon(4.0).delta(1e-6).seed(1).run(&df)?;
//! assert_eq!(fit.method, InferenceMethod::NoiseAware);
//! assert!(fit.converged && fit.warnings.is_empty(), "{:?}", fit.warnings);
//! // without the covariate's bounds `auto` stops with the bounds message, never DP-MCMC
//! let bare = FitSpec { bounds: Vec::new(), features: Some(vec!["a".into()]), ..spec };
//! let err = TableFit::new(bare).epsilon(4.0).delta(1e-6).run(&df).unwrap_err();
//! assert!(err.to_string().contains("--bounds"), "{err}");
//! # Ok(()) }
//! ```

use std::str::FromStr;

use polars::prelude::DataFrame;
use serde::{Deserialize, Serialize};

use crate::auto::{Auto, AutoReport, default_sampler};
use crate::error::{Error, Result};
use crate::frame::fit_data::{FitSpec, prepare, prepare_glm};
use crate::noise_aware::{NoiseAware, NoiseAwareReport, PriorReport};
use crate::samplers::{Run, RunSetters, RunSettings, SamplerKind};

/// Which inference method a fit uses (`fit --method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InferenceMethod {
    /// The noise-aware method for every model `fit` knows, DP-MCMC only when a sampler is
    /// named (see the [module docs](self)).
    #[default]
    Auto,
    /// A few private releases, then the posterior given them ([`crate::noise_aware`]).
    NoiseAware,
    /// A DP sampler's chains ([`Auto`]).
    DpMcmc,
}

impl InferenceMethod {
    /// The name `fit --method` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            InferenceMethod::Auto => "auto",
            InferenceMethod::NoiseAware => "noise-aware",
            InferenceMethod::DpMcmc => "dp-mcmc",
        }
    }
}

impl FromStr for InferenceMethod {
    type Err = Error;

    /// ```
    /// use dp_mcmc::fit::InferenceMethod;
    /// assert_eq!("noise-aware".parse::<InferenceMethod>().unwrap(), InferenceMethod::NoiseAware);
    /// assert!("bayes".parse::<InferenceMethod>().unwrap_err().to_string().contains("auto"));
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(InferenceMethod::Auto),
            "noise-aware" => Ok(InferenceMethod::NoiseAware),
            "dp-mcmc" => Ok(InferenceMethod::DpMcmc),
            other => Err(Error::invalid(
                "--method",
                other,
                "use auto, noise-aware or dp-mcmc",
            )),
        }
    }
}

/// What a fit derived or released: the noise-aware method's report or an `auto` DP-MCMC run's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FitDetails {
    /// A noise-aware fit's releases and sampling.
    NoiseAware(Box<NoiseAwareReport>),
    /// A DP-MCMC run's derived settings.
    DpMcmc(Box<AutoReport>),
}

/// The warning for a δ of at least `1/n`: (ε, δ) then allows a release that publishes a
/// random row whole (with probability δ per row), so the guarantee says little. Convention
/// (OpenDP, dp_accounting's examples): δ well below `1/n`, e.g. `1e-6` or `0.1/n`.
fn large_delta_warning(delta: f64, n: usize) -> Option<String> {
    (n > 0 && delta * n as f64 >= 1.0).then(|| {
        format!(
            "--delta {delta} is at least 1/n = {:.2e} (n = {n} rows): a guarantee this weak \
             allows publishing a row whole; choose --delta well below 1/n (e.g. 1e-6)",
            1.0 / n as f64
        )
    })
}

/// A finished fit of a table (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct TableFitResult {
    /// The method that answered (never `Auto`).
    pub method: InferenceMethod,
    /// The draws, one trace per chain, and the privacy ledger.
    pub run: Run,
    /// Largest rank-normalised R-hat over the parameters (after any warm-up).
    pub max_rhat: f64,
    /// Smallest bulk ESS over the parameters.
    pub min_ess_bulk: f64,
    /// Whether the draws are a result ([`crate::diagnostics::converged`], and for the
    /// noise-aware method a Newton path that reached the mode).
    pub converged: bool,
    /// What a reader of the answer must know, in words (empty: nothing).
    pub warnings: Vec<String>,
    /// The prior, as declared and in the model's units.
    pub prior: PriorReport,
    /// The method's own report.
    pub details: FitDetails,
}

/// Builder of a table's fit: the spec (model, columns, declared bounds, prior), the method,
/// and the run settings through [`RunSetters`] (`.epsilon(e).delta(d)` for the whole
/// analysis, chains, `.seed(s)` for reproducible research (**not** a DP release; the default is
/// OS entropy), `max_time` (the noise-aware sampling's limit, a DP-MCMC run's chain time),
/// threads, progress).
#[derive(Clone, Debug)]
pub struct TableFit {
    /// What to fit.
    pub spec: FitSpec,
    /// The method (default [`InferenceMethod::Auto`]).
    pub method: InferenceMethod,
    /// The DP-MCMC sampler (`None`: the model's default; naming one under `Auto` selects
    /// DP-MCMC).
    pub sampler: Option<SamplerKind>,
    /// The run settings.
    pub run: RunSettings,
}

impl RunSetters for TableFit {
    fn run_mut(&mut self) -> &mut RunSettings {
        &mut self.run
    }
}

impl TableFit {
    /// A fit of `spec` by the default method, noise from OS entropy.
    pub fn new(spec: FitSpec) -> Self {
        TableFit {
            spec,
            method: InferenceMethod::Auto,
            sampler: None,
            run: RunSettings {
                secure_rng: true,
                ..RunSettings::default()
            },
        }
    }

    /// The method.
    #[must_use]
    pub fn method(mut self, method: InferenceMethod) -> Self {
        self.method = method;
        self
    }

    /// The DP-MCMC sampler (under `Auto` this selects DP-MCMC).
    #[must_use]
    pub fn sampler(mut self, kind: SamplerKind) -> Self {
        self.sampler = Some(kind);
        self
    }

    /// The method that answers this fit, from the spec and the settings alone (no data):
    /// `Auto` is the noise-aware method unless a sampler is named.
    pub fn chosen_method(&self) -> InferenceMethod {
        match (self.method, self.sampler) {
            (InferenceMethod::Auto, Some(_)) | (InferenceMethod::DpMcmc, _) => {
                InferenceMethod::DpMcmc
            }
            _ => InferenceMethod::NoiseAware,
        }
    }

    /// Fits `df`.
    ///
    /// # Errors
    /// The data or the spec (errors name the column, the row and the flag to change); the
    /// noise-aware method without the bounds it needs; a failing release or sampler.
    pub fn run(&self, df: &DataFrame) -> Result<TableFitResult> {
        self.spec.validate()?;
        let mut result = match self.chosen_method() {
            InferenceMethod::DpMcmc => self.dp_mcmc(df)?,
            _ => self.noise_aware(df)?,
        };
        if let Ok(Some((_, delta))) = self.run.privacy_budget() {
            result
                .warnings
                .extend(large_delta_warning(delta, df.height()));
        }
        Ok(result)
    }

    fn noise_aware(&self, df: &DataFrame) -> Result<TableFitResult> {
        let data = prepare_glm(df, &self.spec)?;
        // the sampler's own warm-up, and its time limit unless one is set
        let defaults = NoiseAware::new();
        let builder = NoiseAware {
            run: RunSettings {
                warmup: defaults.run.warmup,
                max_time: self.run.max_time.or(defaults.run.max_time),
                ..self.run.clone()
            },
            ..defaults
        };
        let fit = builder.run(&data)?;
        let report = fit.report;
        Ok(TableFitResult {
            method: InferenceMethod::NoiseAware,
            run: fit.run,
            max_rhat: report.max_rhat,
            min_ess_bulk: report.min_ess_bulk,
            converged: report.converged,
            warnings: report.warnings(),
            prior: data.prior_report(),
            details: FitDetails::NoiseAware(Box::new(report)),
        })
    }

    fn dp_mcmc(&self, df: &DataFrame) -> Result<TableFitResult> {
        if self.spec.prior_normal {
            return Err(Error::invalid(
                "--prior-normal",
                "with --method dp-mcmc",
                "it sets the noise-aware method's prior; DP-MCMC's prior is N(0, sd²) in the \
                 model's units: give --prior-sd",
            ));
        }
        let model = prepare(df, &self.spec)?;
        let kind = self.sampler.unwrap_or_else(|| default_sampler(&model));
        let mut auto = Auto::new(kind);
        auto.run = self.run.clone();
        let fit = auto.run(&model)?;
        let (max_rhat, min_ess_bulk) = run_convergence(&fit.run)?;
        let converged = crate::diagnostics::converged(max_rhat, min_ess_bulk);
        let mut warnings = Vec::new();
        if !converged {
            warnings.push(format!(
                "DP-MCMC ({}) did not converge: max R-hat {max_rhat:.3}, min bulk ESS \
                 {min_ess_bulk:.0} (needed R-hat ≤ {} and ESS ≥ {}); its chains barely leave \
                 their start at this budget, so their spread says nothing about the posterior. \
                 Its draws are not a result: use the noise-aware method (--method auto, with \
                 --bounds on every covariate)",
                kind.key(),
                crate::diagnostics::CONVERGED_RHAT,
                crate::diagnostics::CONVERGED_ESS
            ));
        }
        let sd = self
            .spec
            .prior_sd
            .unwrap_or(crate::frame::fit_data::DP_MCMC_PRIOR_SD);
        let d = model.dim();
        let prior = crate::noise_aware::Prior::Original { sd };
        Ok(TableFitResult {
            method: InferenceMethod::DpMcmc,
            run: fit.run,
            max_rhat,
            min_ess_bulk,
            converged,
            warnings,
            prior: PriorReport {
                declared: prior,
                description: prior.describe(false),
                df: None,
                mean: vec![0.0; d],
                cov: (0..d)
                    .map(|i| (0..d).map(|j| if i == j { sd * sd } else { 0.0 }).collect())
                    .collect(),
            },
            details: FitDetails::DpMcmc(Box::new(fit.report)),
        })
    }
}

/// Largest rank-normalised R-hat and smallest bulk ESS over the parameters of `run`'s draws
/// after its warm-up (chains cut to the shortest; `(∞, 0)` where undefined).
///
/// # Errors
/// Draws that are not finite.
pub fn run_convergence(run: &Run) -> Result<(f64, f64)> {
    let kept = run.draws_after(run.warmup);
    let len = kept.iter().map(Vec::len).min().unwrap_or(0);
    let (mut max_rhat, mut min_ess) = (0.0f64, f64::INFINITY);
    for i in 0..run.dim() {
        let cols: Vec<Vec<f64>> = kept
            .iter()
            .map(|rows| rows[..len].iter().map(|r| r[i]).collect())
            .collect();
        let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
        let rhat = crate::diagnostics::rhat(&refs)?.unwrap_or(f64::INFINITY);
        let ess = crate::diagnostics::ess_bulk(&refs)?.unwrap_or(0.0);
        max_rhat = max_rhat.max(rhat);
        min_ess = min_ess.min(ess);
    }
    Ok((max_rhat, if min_ess.is_finite() { min_ess } else { 0.0 }))
}
