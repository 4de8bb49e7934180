//! What the stochastic-gradient samplers (DP-SGLD, DP-SGNHT) share on the builder side: their
//! setters and `PrivacyCost` (macros, one per builder), the tempering check, the public
//! settings of an `auto` run and of the thesis' experiments. Their batches and the privacy of
//! one gradient release are in `poisson_batch.rs`.

use crate::error::{Error, Result};
use crate::models::{Experiment, Model};

/// `serde` default of the tempering bound.
pub(crate) fn one() -> f64 {
    1.0
}

/// The model's tempering must not exceed the bound the charge assumes.
pub(crate) fn check_tempering(bound: f64, model: f64) -> Result<()> {
    if model <= bound {
        Ok(())
    } else {
        Err(Error::invalid(
            "tempering",
            bound,
            format!(
                "is below the model's tempering {model}: the charge assumes T ≤ the bound; set \
                 .tempering({model})"
            ),
        ))
    }
}

/// The default cap on a budgeted run's iterations per chain.
pub const DEFAULT_MAX_ITERATIONS: usize = 20_000;

/// Builder setters of the stochastic-gradient samplers (DP-SGLD, DP-SGNHT).
macro_rules! gradient_setters {
    ($t:ty) => {
        impl $t {
            /// Step size (η of SGLD, h of SGNHT).
            #[must_use]
            pub fn step_size(mut self, eta: f64) -> Self {
                self.step_size = eta;
                self
            }
            /// Per-row gradient clip bound C (L2).
            #[must_use]
            pub fn clip_bound(mut self, c: f64) -> Self {
                self.clip_bound = c;
                self
            }
            /// Poisson sampling rate q, in (0, 1].
            #[must_use]
            pub fn sampling_rate(mut self, q: f64) -> Self {
                self.sampling_rate = q;
                self
            }
            /// Noise multiplier σ asked for (0: the injected noise alone).
            #[must_use]
            pub fn noise_multiplier(mut self, sigma: f64) -> Self {
                self.noise_multiplier = sigma;
                self
            }
            /// With a privacy budget, run at most `k` iterations per chain.
            #[must_use]
            pub fn max_iterations(mut self, k: usize) -> Self {
                self.max_iterations = Some(k);
                self
            }
            /// Accountant: `AccountantKind::CertifiedPld` (default; `Pld` means the same here) or
            /// `AccountantKind::Fourier`.
            #[must_use]
            pub fn accountant(mut self, m: $crate::accounting::AccountantKind) -> Self {
                self.accountant = m;
                self
            }
            /// An upper bound on the model's tempering (public; default 1): the injected noise
            /// is charged relative to the data term at it.
            #[must_use]
            pub fn tempering(mut self, t: f64) -> Self {
                self.tempering = t;
                self
            }
        }
    };
}
pub(crate) use gradient_setters;

/// The `PrivacyCost` of a stochastic-gradient sampler (DP-SGLD, DP-SGNHT): one release per
/// iteration, the clipped gradient sum of a Poisson batch (rate q) with its
/// `charged_noise_multiplier` σ_c relative to C, charged as `σ_c/2` relative to the substitute
/// sensitivity 2C (`poisson_batch::gradient_release`); the certified PLD or Fourier accountant;
/// the run capped at `max_iterations`.
macro_rules! gradient_privacy_cost {
    ($t:ty) => {
        impl $crate::samplers::PrivacyCost for $t {
            fn releases(&self, _n: u64) -> $crate::Result<$crate::accounting::Releases> {
                Ok($crate::accounting::Releases::per_iteration(
                    $crate::samplers::poisson_batch::gradient_release(
                        self.charged_noise_multiplier()?,
                        self.sampling_rate,
                    )?,
                ))
            }
            fn new_accountant(
                &self,
                _n: u64,
            ) -> $crate::Result<Box<dyn $crate::accounting::Accountant>> {
                $crate::samplers::poisson_batch::gradient_accountant(ENTRY.key, self.method())
            }
            fn accountant_label(&self) -> &'static str {
                self.method().label()
            }
            fn method(&self) -> $crate::accounting::AccountantKind {
                self.accountant.numerical_pld()
            }
            fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
                vec![
                    (
                        "charged_noise_multiplier",
                        self.charged_noise_multiplier().unwrap_or(f64::NAN),
                    ),
                    ("sampling_rate", self.sampling_rate),
                ]
            }
            fn iteration_cap(&self) -> Option<usize> {
                self.max_iterations
            }
        }
    };
}
pub(crate) use gradient_privacy_cost;

/// Public settings of a stochastic-gradient sampler for `n` rows of dimension `d` with clip
/// bound `c`: batches of `max(1000, n/100)` rows on average (at most n), and the step whose
/// injected noise moves each coordinate by `fraction` of the posterior scale `1/(c√n)` (a
/// per-row gradient bound `c` gives a per-row curvature of order `c²`).
pub(crate) fn public_step(n: usize, c: f64, fraction: f64) -> (f64, f64) {
    let rate = (1000.max(n.div_ceil(100)) as f64 / n as f64).min(1.0);
    let scale = 1.0 / (c * (n as f64).sqrt());
    (rate, (fraction * scale).powi(2))
}

/// The public scales the stochastic-gradient samplers take for a Table 5.1 experiment: the
/// thesis' DP HMC gradient clip bound and leapfrog step, and batches of 1000 rows on average.
pub(crate) struct ThesisScale {
    pub(crate) clip: f64,
    pub(crate) leapfrog: f64,
    pub(crate) rate: f64,
}

impl ThesisScale {
    pub(crate) fn of(experiment: Experiment) -> Self {
        ThesisScale {
            clip: super::thesis_tables::dp_hmc_table(experiment).3,
            leapfrog: super::thesis_tables::integrator(experiment).1,
            rate: (1000.0 / experiment.n() as f64).min(1.0),
        }
    }
}

/// Target iterations of an `auto` stochastic-gradient run.
pub const AUTO_ITERATIONS: usize = 4000;

/// The model must have per-row gradients.
pub(crate) fn check_gradients<M: Model + ?Sized>(key: &str, model: &M) -> Result<()> {
    if model.has_gradient() {
        Ok(())
    } else {
        Err(Error::invalid(
            "model",
            "no gradients",
            format!("{key} needs per-row gradients (`Model::grad_log_lik_row`)"),
        ))
    }
}
