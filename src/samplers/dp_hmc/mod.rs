//! DP HMC (thesis Chapter 4): the builder and its privacy cost. The kernel is the HMC kernel
//! with noise ([`super::hmc::HmcKernel`] with [`HmcNoise`]).

use serde::{Deserialize, Serialize};

use super::hamiltonian::{HmcKernel, HmcNoise};
use super::privacy::{
    PrivacyCost, dp_run, full_data_accountant, full_data_label, full_data_method,
    full_data_method_checked, gaussian_release,
};
use super::sampler::SamplerEntry;
use super::sampler::{AutoInputs, DerivedSettings, Sampler, field_setters, sampler_basics};
use super::settings::{RunSettings, hmc_setters, run_setters};
use super::thesis_tables::{dp_hmc_table as thesis_table, integrator as thesis_integrator};
use crate::accounting::{Accountant, AccountantKind, PrivacyEvent, Releases};
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};
use crate::noise::Noise;
use crate::samplers::Gradient;

/// DP HMC (thesis Chapter 4): noisy clipped gradients and a noisy clipped log-likelihood ratio.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpHmc;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = DpHmc::builder()
///     .tau_l(0.5).tau_g(1.0).leapfrog_steps(5).step_size(0.005).clip_bound(2.0).grad_clip_bound(2.0)
///     .epsilon(4.0).delta(1e-5).chains(2).seed(3).start(vec![0.5])
///     .run(&model)?;
/// assert!(run.iterations > 0);
///
/// let err = DpHmc::builder().mass(vec![0.0]).iterations(5).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("mass"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpHmc {
    /// Log-likelihood-ratio noise scale τ_l.
    pub tau_l: f64,
    /// Gradient noise scale τ_g.
    pub tau_g: f64,
    /// Leapfrog steps L.
    pub leapfrog_steps: usize,
    /// Step size η.
    pub step_size: f64,
    /// Diagonal mass matrix (`None`: identity).
    pub mass: Option<Vec<f64>>,
    /// Ratio clip bound b_l per unit distance.
    pub clip_bound: f64,
    /// Per-row gradient clip bound b_g.
    pub grad_clip_bound: f64,
    /// Fresh (default) or re-used initial gradient.
    pub gradient: Gradient,
    /// Accountant for Algorithm 2 (tight PLD, Theorem 12, by default; with discrete noise
    /// always zCDP with the CKS20 conversion).
    pub accountant: AccountantKind,
    /// Noise of the log-likelihood-ratio test (gradients stay continuous Gaussians).
    #[serde(default)]
    pub noise: Noise,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for DpHmc {
    fn default() -> Self {
        DpHmc {
            tau_l: 0.1,
            tau_g: 0.4,
            leapfrog_steps: 10,
            step_size: 0.0005,
            mass: None,
            clip_bound: 2.0,
            grad_clip_bound: 1.0,
            gradient: Gradient::Fresh,
            accountant: AccountantKind::Pld,
            noise: Noise::Gaussian,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpHmc);
hmc_setters!(DpHmc);
dp_run!(DpHmc);

impl DpHmc {
    /// Defaults: the thesis' easy-2d tuning (τ_l 0.1, τ_g 0.4, L 10, η 5e-4, b_l 2, b_g 1).
    pub fn builder() -> Self {
        Self::default()
    }

    /// Ratio noise scale τ_l.
    #[must_use]
    pub fn tau_l(mut self, v: f64) -> Self {
        self.tau_l = v;
        self
    }
    /// Gradient noise scale τ_g.
    #[must_use]
    pub fn tau_g(mut self, v: f64) -> Self {
        self.tau_g = v;
        self
    }
    /// Ratio clip bound b_l.
    #[must_use]
    pub fn clip_bound(mut self, b: f64) -> Self {
        self.clip_bound = b;
        self
    }
    /// Gradient clip bound b_g.
    #[must_use]
    pub fn grad_clip_bound(mut self, b: f64) -> Self {
        self.grad_clip_bound = b;
        self
    }
    /// Fresh (default) or re-used gradient (March thesis variant).
    #[must_use]
    pub fn gradient(mut self, g: Gradient) -> Self {
        self.gradient = g;
        self
    }
    /// Accountant used by Algorithm 2.
    #[must_use]
    pub fn accountant(mut self, a: AccountantKind) -> Self {
        self.accountant = a;
        self
    }

    /// Noise of the log-likelihood-ratio test: [`Noise::Gaussian`] (default) or exact
    /// discrete Gaussian noise. The gradients stay continuous Gaussians (floating point).
    #[must_use]
    pub fn noise(mut self, noise: Noise) -> Self {
        self.noise = noise;
        self
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<HmcKernel> {
        let mass = self.mass.clone().unwrap_or_else(|| vec![1.0; model.dim()]);
        let lattice = self.noise.lattice()?;
        HmcKernel::new(
            self.leapfrog_steps,
            self.step_size,
            mass,
            Some(self.clip_bound),
            Some(HmcNoise {
                tau_l: self.tau_l,
                tau_g: self.tau_g,
                grad_clip: self.grad_clip_bound,
            }),
            self.gradient,
        )
        .map(|k| k.with_lattice(lattice))
    }
}

impl PrivacyCost for DpHmc {
    /// Per iteration: the clipped log-likelihood ratio (noise multiplier `τ_l√n`; a zCDP event
    /// with discrete noise) and the noisy clipped gradients (noise multiplier `τ_g√n`, always
    /// continuous): `L + 1` fresh gradients per iteration, or with gradient re-use `L` per
    /// iteration plus the initial one once per chain (thesis Theorems 11/12, THESIS-NOTES §3).
    fn releases(&self, n: u64) -> Result<Releases> {
        let ratio = gaussian_release("tau_l", self.tau_l, n, self.noise.is_discrete())?;
        let gradient = gaussian_release("tau_g", self.tau_g, n, false)?;
        let l = check_leapfrog_steps(self.leapfrog_steps)?;
        Ok(match self.gradient {
            Gradient::Fresh => {
                Releases::per_iteration(PrivacyEvent::compose(vec![ratio, gradient.repeat(l + 1)]))
            }
            Gradient::Reuse => Releases::per_iteration(PrivacyEvent::compose(vec![
                ratio,
                gradient.clone().repeat(l),
            ]))
            .with_once_per_chain(gradient),
        })
    }
    fn new_accountant(&self, _n: u64) -> Result<Box<dyn Accountant>> {
        full_data_accountant(ENTRY.key, self.accountant, self.noise.is_discrete())
    }
    fn accountant_label(&self) -> &'static str {
        full_data_label(self.accountant, self.noise.is_discrete())
    }
    fn method(&self) -> AccountantKind {
        full_data_method(self.accountant, self.noise.is_discrete())
    }
    /// With the gradient releases per iteration and once per chain (Theorems 11/12,
    /// THESIS-NOTES §3).
    fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
        let l = self.leapfrog_steps as f64;
        let (per, once) = match self.gradient {
            Gradient::Fresh => (l + 1.0, 0.0),
            Gradient::Reuse => (l, 1.0),
        };
        vec![
            ("tau_l", self.tau_l),
            ("tau_g", self.tau_g),
            ("leapfrog_steps", l),
            ("gradient_releases_per_iteration", per),
            ("gradient_releases_once", once),
        ]
    }
}

fn check_leapfrog_steps(l: usize) -> Result<u64> {
    if l == 0 {
        return Err(Error::invalid("leapfrog_steps", 0, "must be at least 1"));
    }
    u32::try_from(l)
        .map(u64::from)
        .map_err(|_| Error::invalid("leapfrog_steps", l, "is too large"))
}

/// Leapfrog steps of an `auto` DP HMC run.
pub const AUTO_LEAPFROG_STEPS: usize = 10;

/// The registry's DP HMC.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-hmc",
    label: "DP HMC",
    aliases: &[],
    private: true,
    build: || Box::new(DpHmc::builder()),
};

impl Sampler for DpHmc {
    sampler_basics!("dp-hmc", private);
    field_setters!(set_tau(f64) => tau_l, set_clip_bound(f64) => clip_bound);

    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        self.accountant = full_data_method_checked(ENTRY.key, method)?;
        Ok(())
    }

    /// The thesis' `hmc` table (noise, clip bounds; the integrator from
    /// `hmc::thesis_integrator`; the gradient schedule: this sampler's).
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let (tau_l, tau_g, b_l, b_g) = thesis_table(experiment);
        let (l, eta) = thesis_integrator(experiment);
        Ok(Box::new(
            DpHmc::builder()
                .tau_l(tau_l)
                .tau_g(tau_g)
                .leapfrog_steps(l)
                .step_size(eta)
                .mass(vec![1.0; experiment.dim()])
                .clip_bound(b_l)
                .grad_clip_bound(b_g)
                .gradient(self.gradient),
        ))
    }

    /// `K` = 500 target iterations, `L` = [`AUTO_LEAPFROG_STEPS`], τ_g = τ_l·√(2(L+1)) (the
    /// `L + 1` gradient releases together cost half the ratio's), and a trajectory that covers
    /// a posterior scale of `√d/(b√n)` per coordinate.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let k = p.target_iterations.unwrap_or(500);
        let l = AUTO_LEAPFROG_STEPS;
        let b = p.clip.unwrap_or(1.0);
        let tau_l = p.tau_for(k, 1.5);
        let tau_g = tau_l * (2.0 * (l + 1) as f64).sqrt();
        let eta = 2.0 * (p.d as f64).sqrt() / (b * (p.n as f64).sqrt()) / l as f64;
        let s = DpHmc::builder()
            .tau_l(tau_l)
            .tau_g(tau_g)
            .leapfrog_steps(l)
            .step_size(eta)
            .mass(p.shape.iter().map(|r| 1.0 / (r * r)).collect())
            .clip_bound(b)
            .grad_clip_bound(b)
            .accountant(AccountantKind::Pld);
        let derived = DerivedSettings {
            target_iterations: k,
            tau: Some(tau_l),
            tau_g: Some(tau_g),
            batch_size: None,
            initial_step: eta,
        };
        Ok((Box::new(s), derived))
    }
}
