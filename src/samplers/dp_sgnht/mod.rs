//! DP-SGNHT (Ding et al. 2014; private as in Li, Chen, Wang & Carin 2019): the builder, its
//! privacy cost and the kernel ([`DpSgnhtKernel`]).

mod kernel;

pub use kernel::{DpSgnhtKernel, DpSgnhtState};

use serde::{Deserialize, Serialize};

use super::poisson_batch::{check_gradient_settings, gradient_method_checked};
use super::privacy::dp_run;
use super::sampler::SamplerEntry;
use super::sampler::{AutoInputs, DerivedSettings, Sampler, field_setters, sampler_basics};
use super::settings::{RunSettings, run_setters};
use super::stochastic_gradient::{
    AUTO_ITERATIONS, DEFAULT_MAX_ITERATIONS, ThesisScale, check_gradients, check_tempering,
    gradient_privacy_cost, gradient_setters, one, public_step,
};
use crate::accounting::AccountantKind;
use crate::error::{Result, check};
use crate::models::{Experiment, Model};

/// DP-SGNHT: the stochastic-gradient Nosé–Hoover thermostat on Poisson batches of per-row
/// clipped gradients, every iterate released. The thermostat's injected noise `N(0, 2AhI)`
/// counts toward privacy: each step is a Poisson-subsampled Gaussian release with noise
/// multiplier `max(σ, q√(2A/h)/(TC))` (T the public [`tempering`](Self::tempering) bound), accounted by the certified PLD accountant's upper bound
/// (default) or the Fourier accountant, under substitution (docs/ACCOUNTING.md,
/// "Stochastic-gradient samplers"). With a privacy budget the count is Algorithm 2's, capped at `max_iterations`.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpSgnht;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..2000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = DpSgnht::builder()
///     .step_size(2e-3).clip_bound(2.0).sampling_rate(0.05).noise_multiplier(2.0)
///     .epsilon(2.0).delta(1e-5).chains(2).seed(1).start(vec![0.4])
///     .run(&model)?;
/// assert!(run.iterations > 0 && run.privacy.unwrap().epsilon <= 2.0);
/// // the diffusion must be positive
/// let err = DpSgnht::builder().diffusion(0.0).iterations(5).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("diffusion"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpSgnht {
    /// Step size h.
    pub step_size: f64,
    /// Diffusion A (injected noise `N(0, 2AhI)`, initial thermostat A).
    pub diffusion: f64,
    /// Per-row gradient clip bound C (L2).
    pub clip_bound: f64,
    /// Poisson sampling rate q.
    pub sampling_rate: f64,
    /// Noise multiplier σ asked for, relative to C (0: the injected noise alone; the charged
    /// one is `max(σ, q√(2A/h)/C)`).
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

impl Default for DpSgnht {
    fn default() -> Self {
        DpSgnht {
            step_size: 1e-3,
            diffusion: 1.0,
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

run_setters!(DpSgnht);
dp_run!(DpSgnht);
gradient_setters!(DpSgnht);

impl DpSgnht {
    /// Defaults: h = 1e-3, A = 1, C = 1, q = 0.01, the injected noise alone, certified PLD
    /// accounting, at most 20 000 iterations per chain under a budget.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Diffusion A.
    #[must_use]
    pub fn diffusion(mut self, a: f64) -> Self {
        self.diffusion = a;
        self
    }

    /// The noise multiplier charged per release, relative to C: `max(σ, q√(2A/h)/(TC))` with T
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
        check::positive("diffusion", self.diffusion)?;
        let injected = self.sampling_rate * (2.0 * self.diffusion / self.step_size).sqrt()
            / (self.tempering * self.clip_bound);
        Ok(self.noise_multiplier.max(injected))
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<DpSgnhtKernel> {
        check_gradients(ENTRY.key, model)?;
        check_tempering(self.tempering, model.tempering())?;
        Ok(DpSgnhtKernel {
            step_size: self.step_size,
            diffusion: self.diffusion,
            clip_bound: self.clip_bound,
            rate: self.sampling_rate,
            charged: self.charged_noise_multiplier()?,
        })
    }
}

gradient_privacy_cost!(DpSgnht);

/// The registry's DP-SGNHT.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-sgnht",
    label: "DP-SGNHT",
    aliases: &[],
    private: true,
    build: || Box::new(DpSgnht::builder()),
};

/// Friction `A·h` per step of the public settings (the thermostat settles at `ξ ≈ A`): 8 % of
/// the momentum is replaced per step, by noise of standard deviation `√(2Ah) = 0.4`.
const FRICTION: f64 = 0.08;

/// Public `(h, A)`: the step whose momentum (unit scale at equilibrium) moves each coordinate by
/// a tenth of the posterior scale per step, and the diffusion with [`FRICTION`] per step. The
/// thermostat keeps the target exact for any A; a large A is a large injected noise, so privacy
/// comes cheap (noise multiplier `q√(2A/h)/C = q·0.4/(hC)`).
fn sgnht_settings(n: usize, c: f64) -> (f64, f64) {
    let h = public_step(n, c, 0.1).1.sqrt();
    (h, FRICTION / h)
}

impl Sampler for DpSgnht {
    sampler_basics!("dp-sgnht", private);
    field_setters!(set_clip_bound(f64) => clip_bound);

    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        self.accountant = gradient_method_checked(ENTRY.key, method)?;
        Ok(())
    }

    /// Public settings for a Table 5.1 experiment: the DP HMC thesis table's gradient clip
    /// bound, a fifth of its leapfrog step ε as h (the momentum has unit scale; with 8 %
    /// friction per step the injected noise then has DP-SGLD's noise multiplier at η = ε²,
    /// so both cost the same privacy per step), batches of 1000 rows on average, the
    /// experiment's tempering as the bound.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let t = ThesisScale::of(experiment);
        let h = t.leapfrog / 5.0;
        Ok(Box::new(
            DpSgnht::builder()
                .tempering(experiment.tempering())
                .step_size(h)
                .diffusion(FRICTION / h)
                .clip_bound(t.clip)
                .sampling_rate(t.rate)
                .accountant(self.accountant),
        ))
    }

    /// A step of a tenth of the posterior scale, 8 % friction per step, the injected noise alone, at most
    /// [`AUTO_ITERATIONS`] (or the target) iterations per chain.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let c = p.clip.unwrap_or(1.0);
        let (rate, _) = public_step(p.n, c, 0.1);
        let (h, a) = sgnht_settings(p.n, c);
        let k = p.target_iterations.unwrap_or(AUTO_ITERATIONS);
        let s = DpSgnht::builder()
            .step_size(h)
            .diffusion(a)
            .clip_bound(c)
            .sampling_rate(rate)
            .max_iterations(k);
        let derived = DerivedSettings {
            target_iterations: k,
            tau: None,
            tau_g: None,
            batch_size: Some((rate * p.n as f64).round() as usize),
            initial_step: h,
        };
        Ok((Box::new(s), derived))
    }
}
