//! Samplers as values: the object-safe [`Sampler`] trait each sampler implements in its own
//! folder, so that the CLI, the experiment grids, `fit` and `auto` handle every sampler through
//! one list, the registry ([`super::registry`]), instead of a `match` per layer.
//!
//! ```
//! use dp_mcmc::samplers::{Sampler, SamplerKind, StepSize};
//! # use dp_mcmc::models::testing::IsotropicGaussian;
//! # fn main() -> dp_mcmc::Result<()> {
//! let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
//! // any sampler, by its key
//! let mut s: Box<dyn Sampler> = "dp-penalty".parse::<SamplerKind>()?.build();
//! s.set_tau(0.5)?;
//! s.set_proposal_sd(StepSize::Scalar(0.05))?;
//! let r = s.run_settings_mut();
//! r.chains = 2;
//! r.seed = 1;
//! r.start = dp_mcmc::samplers::Start::Point(vec![0.5]);
//! r.budget = dp_mcmc::samplers::Budget::Privacy { epsilon: 4.0, delta: 1e-5 };
//! let run = s.run(&model)?;
//! assert!(run.privacy.unwrap().epsilon <= 4.0);
//! // a setting the sampler does not have is an error naming it
//! assert!(s.set_batch_size(100).unwrap_err().to_string().contains("batch_size"));
//! # Ok(()) }
//! ```

use std::any::Any;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::budget::IterationBudget;
use super::privacy::Plan;
use super::proposal::{ClipDistance, StepSize};
use super::run::{ChainTrace, Run};
use super::settings::RunSettings;
use crate::accounting::AccountantKind;
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};

/// A configured sampler of any kind: what the registry builds, the grids and the CLI run and
/// `auto` derives settings for. Every sampler implements it in its own folder.
pub trait Sampler: fmt::Debug + Send + Sync {
    /// The registry key of the sampler's family (`dp-penalty`, `dp-hmc`, ...).
    fn key(&self) -> &'static str;

    /// Whether its runs are differentially private.
    fn is_private(&self) -> bool {
        true
    }

    /// Whether it needs a clip bound (an `auto` run releases one for it).
    fn uses_clip_bound(&self) -> bool {
        true
    }

    /// The run settings (chains, seed, budget, start points, ...).
    fn run_settings(&self) -> &RunSettings;

    /// The run settings, to change in place.
    fn run_settings_mut(&mut self) -> &mut RunSettings;

    /// Iterations per chain and the privacy they spend for a model with `n_rows` rows
    /// (Algorithm 2 on the sampler's own releases; 0 if the budget allows none); `None` for a
    /// non-private sampler.
    ///
    /// # Errors
    /// Invalid settings.
    fn budget(&self, n_rows: usize) -> Result<Option<IterationBudget>>;

    /// The privacy parameters its budget depends on, with their values (`tau`, `batch_size`,
    /// ...; see [`IterationBudget::params`]); empty for a non-private sampler.
    fn privacy_parameters(&self) -> Vec<(&'static str, f64)>;

    /// Its settings as JSON (the serialised builder: every field by name, `run` included).
    fn settings(&self) -> serde_json::Value;

    /// Sets one setting by its field name from a JSON value (`"tau_g"` → `0.4`, `"gradient"` →
    /// `"Reuse"`): one setter for every sampler, for generic front ends such as the CLI. The
    /// value is validated when the sampler plans or runs.
    ///
    /// # Errors
    /// No such setting (the message lists the sampler's settings), or a value of the wrong
    /// type.
    fn set_setting(&mut self, name: &str, value: serde_json::Value) -> Result<()>;

    /// The run's privacy plan for `n_rows` rows (Algorithm 2, once), for
    /// [`run_planned`](Sampler::run_planned); `None` for a non-private sampler.
    ///
    /// # Errors
    /// Invalid settings, or a budget that allows no iteration.
    fn plan(&self, n_rows: usize) -> Result<Option<Plan>>;

    /// Runs the chains with a plan from [`plan`](Sampler::plan) of these settings (`None` for
    /// a non-private sampler).
    ///
    /// # Errors
    /// A plan made for other settings, a plan for a non-private sampler (or none for a private
    /// one), invalid settings or start points, a model error.
    fn run_planned(&self, model: &dyn Model, plan: Option<Plan>) -> Result<Run>;

    /// Runs the chains on `model`.
    ///
    /// # Errors
    /// Invalid settings or start points, a budget that allows no iteration, a model error.
    fn run(&self, model: &dyn Model) -> Result<Run>;

    /// Runs the sampler's kernel for exactly `iterations` per chain under `settings`, without
    /// planning a budget (the caller planned it once for many chains).
    ///
    /// # Errors
    /// Invalid settings or start points, a model error.
    fn run_chains(
        &self,
        model: &dyn Model,
        settings: &RunSettings,
        iterations: usize,
    ) -> Result<Vec<ChainTrace>>;

    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn Sampler>;

    /// The concrete sampler, for its own settings (`downcast_ref::<DpHmc>()`).
    fn as_any(&self) -> &dyn Any;

    /// The concrete sampler, to change its own settings.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Sets the noise scale τ (DP HMC: τ_l).
    ///
    /// # Errors
    /// The sampler has no noise scale.
    fn set_tau(&mut self, tau: f64) -> Result<()> {
        Err(unsupported("tau", tau, self.key(), "has no noise scale τ"))
    }

    /// Sets the (log-likelihood-ratio) clip bound.
    ///
    /// # Errors
    /// The sampler's clip bound is not a setting.
    fn set_clip_bound(&mut self, b: f64) -> Result<()> {
        Err(unsupported(
            "clip_bound",
            b,
            self.key(),
            "has no clip bound",
        ))
    }

    /// Sets the distance that scales a non-private baseline's clip bound (the clipping study).
    ///
    /// # Errors
    /// The sampler is not a clipped baseline.
    fn set_clip_distance(&mut self, d: ClipDistance) -> Result<()> {
        Err(unsupported(
            "clip_distance",
            format!("{d:?}"),
            self.key(),
            "has no clip distance (the clipping study runs rwmh or hmc)",
        ))
    }

    /// Sets the proposal standard deviation (random-walk samplers).
    ///
    /// # Errors
    /// The sampler has no proposal standard deviation.
    fn set_proposal_sd(&mut self, sd: StepSize) -> Result<()> {
        Err(unsupported(
            "proposal_sd",
            format!("{sd:?}"),
            self.key(),
            "has no proposal sd; set the step size",
        ))
    }

    /// Sets the batch size (subsampled samplers).
    ///
    /// # Errors
    /// The sampler uses every row.
    fn set_batch_size(&mut self, b: usize) -> Result<()> {
        Err(unsupported("batch_size", b, self.key(), "uses every row"))
    }

    /// Sets the accountant of the budget search; `None` restores the sampler's default.
    ///
    /// # Errors
    /// An accountant the sampler does not support (the message lists those it does).
    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        match method {
            None => Ok(()),
            Some(m) => Err(unsupported(
                "accountant",
                m.key(),
                self.key(),
                "has a fixed accounting",
            )),
        }
    }

    /// This sampler (its variant: proposal kind, accountant) with the thesis' tuned settings for
    /// `experiment` (THESIS-NOTES §11, from the thesis code's `code/params/`), as the grids run
    /// it; [`tuned`](crate::experiments::tuned) looks it up by key.
    ///
    /// # Errors
    /// The thesis did not tune this sampler for `experiment`.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        Err(untuned(self.key(), experiment))
    }

    /// These settings adapted to a per-chain privacy budget `(epsilon, delta)` on `n` rows, from
    /// public information only; the grids call it after [`tuned_for`](Self::tuned_for).
    /// Default: unchanged (the thesis' samplers take their tuned noise as it is and the budget
    /// sets their iterations).
    ///
    /// # Errors
    /// An invalid budget.
    fn for_budget(&self, _n: usize, _epsilon: f64, _delta: f64) -> Result<Box<dyn Sampler>> {
        Ok(self.clone_box())
    }

    /// The sampler with every setting derived from public inputs, for an `auto` run, and what
    /// was derived.
    ///
    /// # Errors
    /// The sampler has no `auto` derivation.
    fn derive_auto(&self, _inputs: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        Err(Error::invalid(
            "algorithm",
            self.key(),
            "this sampler has no `auto` derivation (`auto::auto_sampler` lists those that do)",
        ))
    }
}

/// A sampler's entry in the registry (`samplers::REGISTRY`).
#[derive(Debug)]
pub struct SamplerEntry {
    /// CLI key (`dp-penalty-gwmh`, ...).
    pub key: &'static str,
    /// Label in tables and figures.
    pub label: &'static str,
    /// Other names that parse to it (the thesis code's `dpps`, `dppa`, ...).
    pub aliases: &'static [&'static str],
    /// Whether its runs are differentially private.
    pub private: bool,
    /// The sampler with its default settings.
    pub build: fn() -> Box<dyn Sampler>,
}

impl Clone for Box<dyn Sampler> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// `sampler` with its field `name` set to `value` (through its serialised settings; settings
/// that are not serialised, such as a shared Fourier accountant, are reset).
pub(crate) fn with_setting<S: Serialize + serde::de::DeserializeOwned>(
    sampler: &S,
    name: &str,
    value: serde_json::Value,
) -> Result<S> {
    let bad = |why: String| Error::invalid("setting", format!("{name} = {value}"), why);
    let mut json = serde_json::to_value(sampler)
        .map_err(|e| bad(format!("settings not serialisable: {e}")))?;
    let Some(fields) = json.as_object_mut() else {
        return Err(bad("the sampler has no named settings".into()));
    };
    if !fields.contains_key(name) || name == "run" {
        let known: Vec<&str> = fields
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "run")
            .collect();
        return Err(bad(format!(
            "is not a setting of this sampler; its settings are {}",
            known.join(", ")
        )));
    }
    fields.insert(name.to_string(), value.clone());
    serde_json::from_value(json).map_err(|e| bad(e.to_string()))
}

/// The error for a sampler the thesis did not tune for `experiment`.
pub(crate) fn untuned(key: &str, experiment: Experiment) -> Error {
    Error::invalid(
        "algorithm",
        key,
        format!(
            "the thesis did not tune {key} for {}; use easy-2d, easy-10d, tempered-2d or tempered-10d",
            experiment.key()
        ),
    )
}

/// Per-coordinate vector `[a, a, …]` of length `d` (the thesis' `np.ones(d)·a`).
pub(crate) fn per_coordinate(a: f64, d: usize) -> StepSize {
    StepSize::PerCoordinate(vec![a; d])
}

fn unsupported(name: &'static str, value: impl fmt::Display, key: &str, why: &str) -> Error {
    Error::invalid(name, value, format!("{key} {why}"))
}

/// Inputs of an `auto` derivation (all public or released under DP).
#[derive(Clone, Debug, PartialEq)]
pub struct AutoInputs {
    /// Rows.
    pub n: usize,
    /// Parameters.
    pub d: usize,
    /// Copies of the chain's releases a budget covers (chains, or 1 per chain).
    pub copies: usize,
    /// Gaussian `μ` left for the chains.
    pub mu_chains: f64,
    /// Clip bound (per unit distance for ratios, per row for gradients).
    pub clip: Option<f64>,
    /// A scale for the first step when no clip bound gives one (the initial point's last step
    /// lengths, or the public initial step).
    pub fallback_step: f64,
    /// Relative scales of the coordinates (RMS 1), from the DP initial point's curvature:
    /// proposal standard deviations (HMC: inverse square-root masses) in proportion to them.
    pub shape: Vec<f64>,
    /// Iterations per chain the noise scale is chosen for (`None`: the sampler's default).
    pub target_iterations: Option<usize>,
}

impl AutoInputs {
    /// τ such that `copies·k` tests of `μ = per_test/(2τ²n)` each spend `mu_chains`.
    pub fn tau_for(&self, k: usize, per_test: f64) -> f64 {
        (self.copies as f64 * k as f64 * per_test / (2.0 * self.n as f64 * self.mu_chains)).sqrt()
    }

    /// The coordinates' proposal standard deviations for a first step of RMS `step`.
    pub fn shaped(&self, step: f64) -> StepSize {
        StepSize::PerCoordinate(self.shape.iter().map(|r| r * step).collect())
    }
}

/// The noise scale and the first step of an `auto` sampler (the proposal standard deviation of
/// the random-walk kernels, the step size of DP HMC; warm-up adapts it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DerivedSettings {
    /// Iterations per chain the noise scale was chosen for (Algorithm 2 gives the final count).
    pub target_iterations: usize,
    /// τ of the DP penalty / minibatch penalty, τ_l of DP HMC (none for DP Barker).
    pub tau: Option<f64>,
    /// τ_g of DP HMC.
    pub tau_g: Option<f64>,
    /// Batch size of the minibatch samplers.
    pub batch_size: Option<usize>,
    /// The first step before warm-up: the RMS over coordinates of the proposal standard
    /// deviations (DP HMC: the step size); each coordinate's is this times its `shape`.
    pub initial_step: f64,
}

/// The methods every sampler implements the same way: key, settings, boxing, the budget (the
/// privacy plan for DP samplers) and the runs through its `kernel`.
macro_rules! sampler_basics {
    ($key:expr, private) => {
        fn key(&self) -> &'static str {
            $key
        }
        fn budget(
            &self,
            n_rows: usize,
        ) -> $crate::Result<Option<$crate::samplers::IterationBudget>> {
            Ok(Some(Self::budget(self, n_rows)?))
        }
        fn privacy_parameters(&self) -> Vec<(&'static str, f64)> {
            $crate::samplers::PrivacyCost::budget_parameters(self)
        }
        fn plan(&self, n_rows: usize) -> $crate::Result<Option<$crate::samplers::Plan>> {
            Ok(Some(Self::plan(self, n_rows)?))
        }
        fn run_planned(
            &self,
            model: &dyn $crate::models::Model,
            plan: Option<$crate::samplers::Plan>,
        ) -> $crate::Result<$crate::samplers::Run> {
            let plan = plan.ok_or_else(|| {
                $crate::Error::invalid("plan", "none", "a private sampler runs with its `plan(n)`")
            })?;
            Self::run_planned(self, model, plan)
        }
        $crate::samplers::sampler::sampler_basics!(@common);
    };
    ($key:expr, baseline) => {
        fn key(&self) -> &'static str {
            $key
        }
        fn is_private(&self) -> bool {
            false
        }
        fn budget(
            &self,
            _n_rows: usize,
        ) -> $crate::Result<Option<$crate::samplers::IterationBudget>> {
            Ok(None)
        }
        fn privacy_parameters(&self) -> Vec<(&'static str, f64)> {
            Vec::new()
        }
        fn plan(&self, _n_rows: usize) -> $crate::Result<Option<$crate::samplers::Plan>> {
            Ok(None)
        }
        fn run_planned(
            &self,
            model: &dyn $crate::models::Model,
            plan: Option<$crate::samplers::Plan>,
        ) -> $crate::Result<$crate::samplers::Run> {
            if plan.is_some() {
                return Err($crate::Error::invalid(
                    "plan",
                    "given",
                    "a non-private sampler has no privacy plan",
                ));
            }
            Self::run(self, model)
        }
        $crate::samplers::sampler::sampler_basics!(@common);
    };
    (@common) => {
        fn settings(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
        fn set_setting(&mut self, name: &str, value: serde_json::Value) -> $crate::Result<()> {
            *self = $crate::samplers::sampler::with_setting(self, name, value)?;
            Ok(())
        }
        fn run_settings(&self) -> &$crate::samplers::RunSettings {
            &self.run
        }
        fn run_settings_mut(&mut self) -> &mut $crate::samplers::RunSettings {
            &mut self.run
        }
        fn run(&self, model: &dyn $crate::models::Model) -> $crate::Result<$crate::samplers::Run> {
            Self::run(self, model)
        }
        fn run_chains(
            &self,
            model: &dyn $crate::models::Model,
            settings: &$crate::samplers::RunSettings,
            iterations: usize,
        ) -> $crate::Result<Vec<$crate::samplers::ChainTrace>> {
            $crate::samplers::driver::run_chains(&self.kernel(model)?, model, settings, iterations)
        }
        fn clone_box(&self) -> Box<dyn $crate::samplers::Sampler> {
            Box::new(self.clone())
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
    };
}
pub(crate) use sampler_basics;

/// Trait setters that write one field: `field_setters!(set_tau(f64) => tau, ...)`; a field
/// that is an `Option` gets `Some(value)` with `=> Some(field)`.
macro_rules! field_setters {
    () => {};
    ($method:ident($ty:ty) => Some($field:ident) $(, $($rest:tt)*)?) => {
        fn $method(&mut self, value: $ty) -> $crate::Result<()> {
            self.$field = Some(value);
            Ok(())
        }
        $crate::samplers::sampler::field_setters!($($($rest)*)?);
    };
    ($method:ident($ty:ty) => $field:ident $(, $($rest:tt)*)?) => {
        fn $method(&mut self, value: $ty) -> $crate::Result<()> {
            self.$field = value;
            Ok(())
        }
        $crate::samplers::sampler::field_setters!($($($rest)*)?);
    };
}
pub(crate) use field_setters;
