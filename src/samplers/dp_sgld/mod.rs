//! DP-SGLD (Wang, Fienberg & Smola 2015; Li, Chen, Wang & Carin 2019): the builder, its privacy
//! cost and the kernel ([`DpSgldKernel`]).

mod kernel;

pub use kernel::{DpSgldKernel, DpSgldState};

use serde::{Deserialize, Serialize};

use super::poisson_batch::{check_gradient_settings, gradient_method_checked};
use super::privacy::dp_run;
use super::sampler::SamplerEntry;
use super::sampler::{AutoInputs, DerivedSettings, Sampler, field_setters, sampler_basics};
use super::settings::{RunSettings, run_setters};
pub use super::stochastic_gradient::{AUTO_ITERATIONS, DEFAULT_MAX_ITERATIONS};
use super::stochastic_gradient::{
    ThesisScale, check_gradients, check_tempering, gradient_privacy_cost, gradient_setters, one,
    public_step,
};
use crate::accounting::AccountantKind;
use crate::error::Result;
use crate::models::{Experiment, Model};

/// DP-SGLD: stochastic-gradient Langevin dynamics on Poisson batches of per-row clipped
/// gradients, every iterate released. The Langevin noise counts toward privacy: each step is a
/// Poisson-subsampled Gaussian release with noise multiplier `max(σ, 2q/(TC√η))` (the second
/// term is the Langevin noise `N(0, ηI)` read as noise on the tempered clipped gradient sum, T
/// the public [`tempering`](Self::tempering) bound; more noise
/// is added only when `noise_multiplier` asks for it, which then heats the chain). Accounted by
/// the certified PLD accountant's upper bound (default) or the Fourier accountant, under
/// substitution (docs/ACCOUNTING.md, "Stochastic-gradient samplers").
///
/// With a privacy budget the count is Algorithm 2's, capped at `max_iterations` (the Langevin
/// noise of a small step makes each step nearly free, so a budget alone can allow billions);
/// the run then reports the ε it spent.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpSgld;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..2000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = DpSgld::builder()
///     .step_size(2e-6).clip_bound(2.0).sampling_rate(0.05).max_iterations(300)
///     .epsilon(1.0).delta(1e-5).chains(2).seed(1).start(vec![0.4])
///     .run(&model)?;
/// assert_eq!(run.iterations, 300);
/// assert!(run.privacy.unwrap().epsilon <= 1.0);
/// // a sampling rate outside (0, 1] is an error naming it
/// let err = DpSgld::builder().sampling_rate(2.0).iterations(5).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("sampling_rate"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpSgld {
    /// Step size η (the Langevin noise is `N(0, ηI)`).
    pub step_size: f64,
    /// Per-row gradient clip bound C (L2).
    pub clip_bound: f64,
    /// Poisson sampling rate q (each row joins a batch with this probability).
    pub sampling_rate: f64,
    /// Noise multiplier σ asked for, relative to C (0: the Langevin noise alone; the charged
    /// one is `max(σ, 2q/(C√η))`).
    pub noise_multiplier: f64,
    /// With a privacy budget, at most this many iterations per chain (`None`: Algorithm 2's).
    pub max_iterations: Option<usize>,
    /// An upper bound T on the model's tempering (public; default 1): the injected noise is
    /// charged relative to the data term at T, and a model tempered above it is refused.
    #[serde(default = "one")]
    pub tempering: f64,
    /// Accountant: `AccountantKind::CertifiedPld` (default) or `AccountantKind::Fourier`.
    pub accountant: AccountantKind,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for DpSgld {
    fn default() -> Self {
        DpSgld {
            step_size: 1e-6,
            clip_bound: 1.0,
            sampling_rate: 0.01,
            noise_multiplier: 0.0,
            max_iterations: Some(DEFAULT_MAX_ITERATIONS),
            tempering: 1.0,
            accountant: AccountantKind::CertifiedPld,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpSgld);
dp_run!(DpSgld);

gradient_setters!(DpSgld);

impl DpSgld {
    /// Defaults: η = 1e-6, C = 1, q = 0.01, the Langevin noise alone, certified PLD
    /// accounting, at most 20 000 iterations per chain under a budget.
    pub fn builder() -> Self {
        Self::default()
    }

    /// The noise multiplier charged per release, relative to C: `max(σ, 2q/(TC√η))` with T
    /// the [`tempering`](Self::tempering) bound.
    ///
    /// # Errors
    /// Invalid settings.
    pub fn charged_noise_multiplier(&self) -> Result<f64> {
        check_gradient_settings(
            self.step_size,
            self.clip_bound,
            self.sampling_rate,
            self.noise_multiplier,
            self.tempering,
        )?;
        let langevin =
            2.0 * self.sampling_rate / (self.tempering * self.clip_bound * self.step_size.sqrt());
        Ok(self.noise_multiplier.max(langevin))
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<DpSgldKernel> {
        check_gradients(ENTRY.key, model)?;
        check_tempering(self.tempering, model.tempering())?;
        Ok(DpSgldKernel {
            step_size: self.step_size,
            clip_bound: self.clip_bound,
            rate: self.sampling_rate,
            charged: self.charged_noise_multiplier()?,
        })
    }
}

gradient_privacy_cost!(DpSgld);

/// The registry's DP-SGLD.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-sgld",
    label: "DP-SGLD",
    aliases: &[],
    private: true,
    build: || Box::new(DpSgld::builder()),
};

impl Sampler for DpSgld {
    sampler_basics!("dp-sgld", private);
    field_setters!(set_clip_bound(f64) => clip_bound);

    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        self.accountant = gradient_method_checked(ENTRY.key, method)?;
        Ok(())
    }

    /// Public settings for a Table 5.1 experiment: the DP HMC thesis table's gradient clip
    /// bound and leapfrog step ε (η = ε²: one Langevin step moves as far as one leapfrog step,
    /// the largest the thesis found stable), batches of 1000 rows on average, the experiment's
    /// tempering as the bound.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let t = ThesisScale::of(experiment);
        Ok(Box::new(
            DpSgld::builder()
                .tempering(experiment.tempering())
                .step_size(t.leapfrog * t.leapfrog)
                .clip_bound(t.clip)
                .sampling_rate(t.rate)
                .accountant(self.accountant),
        ))
    }

    /// The public step of `public_step` (half the posterior scale per step), the Langevin
    /// noise alone, at most [`AUTO_ITERATIONS`] (or the target) iterations per chain.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let c = p.clip.unwrap_or(1.0);
        let (rate, eta) = public_step(p.n, c, 0.5);
        let k = p.target_iterations.unwrap_or(AUTO_ITERATIONS);
        let s = DpSgld::builder()
            .step_size(eta)
            .clip_bound(c)
            .sampling_rate(rate)
            .max_iterations(k);
        let derived = DerivedSettings {
            target_iterations: k,
            tau: None,
            tau_g: None,
            batch_size: Some((rate * p.n as f64).round() as usize),
            initial_step: eta.sqrt(),
        };
        Ok((Box::new(s), derived))
    }
}
