//! Fluent sampler builders: setters never fail; `run(&model)` validates everything once.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::budget::{Scheme, resolve};
use super::dp_penalty::DpPenaltyKernel;
use super::driver::run_chains;
use super::hmc::{GradientMode, HmcKernel, HmcNoise};
use super::kernel::Kernel;
use super::proposal::{ClipDistance, ProposalKind, StepSize};
use super::run::{PrivacySpent, Run};
use super::rwmh::RwmhKernel;
use super::settings::{RunSettings, penalty_setters, run_setters};
use crate::accounting::Method;
use crate::error::{Error, Result};
use crate::models::Model;
use crate::noise::{Noise, RngMode};

/// Assemble a [`Run`] from finished chains.
pub(super) fn finish<K: Kernel, M: Model + ?Sized, S: Serialize>(
    kernel: &K,
    model: &M,
    run: &RunSettings,
    settings: &S,
    iterations: usize,
    privacy: Option<PrivacySpent>,
) -> Result<Run> {
    let t0 = Instant::now();
    let chains = run_chains(kernel, model, run, iterations)?;
    Ok(Run {
        algorithm: kernel.name().to_string(),
        param_names: model.param_names(),
        n_rows: model.n_rows(),
        iterations,
        chains,
        privacy,
        seed: run.seed,
        rng: if run.secure_rng {
            RngMode::Secure
        } else {
            RngMode::Seeded
        },
        settings: serde_json::to_value(settings).unwrap_or(serde_json::Value::Null),
        wall_seconds: t0.elapsed().as_secs_f64(),
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// Iterations for a non-private sampler: must be given explicitly.
pub(super) fn fixed_iterations(run: &RunSettings, algorithm: &str) -> Result<usize> {
    match run.iterations {
        Some(k) => Ok(k),
        None => Err(Error::invalid(
            "iterations",
            "unset",
            format!("{algorithm} is not private: set `.iterations(k)`"),
        )),
    }
}

/// DP penalty (thesis §3.1-3.2) with full, one-component (OCU) or guided-walk (GWMH) proposals.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpPenalty;
/// # use dp_mcmc::models::Model;
/// # struct Normal1(Vec<f64>);
/// # impl Model for Normal1 {
/// #     fn dim(&self) -> usize { 1 }
/// #     fn n_rows(&self) -> usize { self.0.len() }
/// #     fn log_prior(&self, t: &[f64]) -> f64 { -0.5 * t[0] * t[0] / 100.0 }
/// #     fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) { g[0] = -t[0] / 100.0 }
/// #     fn log_lik_row(&self, t: &[f64], j: usize) -> f64 { -0.5 * (self.0[j] - t[0]).powi(2) }
/// # }
/// let model = Normal1((0..1000).map(|i| (i % 7) as f64 / 7.0).collect());
/// let run = DpPenalty::builder()
///     .tau(0.5).clip_bound(2.0).proposal_sd(0.05)
///     .epsilon(4.0).delta(1e-5).chains(2).seed(1).start(vec![0.5])
///     .run(&model)?;
/// assert_eq!(run.chains.len(), 2);
/// assert!(run.privacy.unwrap().epsilon <= 4.0);
///
/// // Bad input is an error naming the parameter:
/// let err = DpPenalty::builder().tau(-1.0).iterations(10).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("tau"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpPenalty {
    /// Noise scale τ (noise std `τ√n·2bΔ`).
    pub tau: f64,
    /// Clip bound b per unit distance.
    pub clip_bound: f64,
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// Full update, OCU or GWMH.
    pub proposal: ProposalKind,
    /// Accountant for Algorithm 2 (tight PLD, Theorem 6, by default; with discrete noise
    /// always zCDP with the CKS20 conversion).
    pub accountant: Method,
    /// Continuous (default) or exact discrete Gaussian noise.
    #[serde(default)]
    pub noise: Noise,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for DpPenalty {
    fn default() -> Self {
        DpPenalty {
            tau: 0.1,
            clip_bound: 2.0,
            proposal_sd: StepSize::Scalar(0.01),
            proposal: ProposalKind::Full,
            accountant: Method::Pld,
            noise: Noise::Gaussian,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpPenalty);
penalty_setters!(DpPenalty);

impl DpPenalty {
    /// Defaults: τ = 0.1, b = 2, proposal sd 0.01, full update, PLD accountant, 4 chains.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Noise of the penalty test: [`Noise::Gaussian`] (default) or exact discrete Gaussian
    /// noise, e.g. `.noise(Noise::discrete(-20))` (see [`crate::noise`]).
    #[must_use]
    pub fn noise(mut self, noise: Noise) -> Self {
        self.noise = noise;
        self
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<DpPenaltyKernel> {
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        Ok(
            DpPenaltyKernel::new(self.tau, self.clip_bound, sd, self.proposal)?
                .with_lattice(self.noise.lattice()?),
        )
    }

    /// Iterations per chain and the privacy they spend (Algorithm 2 unless `iterations` is set).
    pub fn budget(&self, n_rows: usize) -> Result<(usize, PrivacySpent)> {
        if self.noise.is_discrete() {
            crate::error::check::positive("tau", self.tau)?;
            let rho = 1.0 / (2.0 * self.tau * self.tau * n_rows.max(1) as f64);
            return super::discrete_budget::resolve_zcdp(rho, 0.0, &self.run, n_rows);
        }
        resolve(
            Scheme::Penalty { tau: self.tau },
            self.accountant,
            &self.run,
            n_rows,
        )
    }

    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        let kernel = self.kernel(model)?;
        let (k, spent) = self.budget(model.n_rows())?;
        finish(&kernel, model, &self.run, self, k, Some(spent))
    }
}

/// DP HMC (thesis Chapter 4): noisy clipped gradients and a noisy clipped log-likelihood ratio.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpHmc;
/// # use dp_mcmc::models::Model;
/// # struct Normal1(Vec<f64>);
/// # impl Model for Normal1 {
/// #     fn dim(&self) -> usize { 1 }
/// #     fn n_rows(&self) -> usize { self.0.len() }
/// #     fn log_prior(&self, t: &[f64]) -> f64 { -0.5 * t[0] * t[0] / 100.0 }
/// #     fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) { g[0] = -t[0] / 100.0 }
/// #     fn log_lik_row(&self, t: &[f64], j: usize) -> f64 { -0.5 * (self.0[j] - t[0]).powi(2) }
/// #     fn has_gradient(&self) -> bool { true }
/// #     fn grad_log_lik_row(&self, t: &[f64], j: usize, g: &mut [f64]) -> dp_mcmc::Result<()> { g[0] = self.0[j] - t[0]; Ok(()) }
/// # }
/// let model = Normal1((0..1000).map(|i| (i % 7) as f64 / 7.0).collect());
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
    pub gradient: GradientMode,
    /// Accountant for Algorithm 2 (tight PLD, Theorem 12, by default; with discrete noise
    /// always zCDP with the CKS20 conversion).
    pub accountant: Method,
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
            gradient: GradientMode::Fresh,
            accountant: Method::Pld,
            noise: Noise::Gaussian,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpHmc);

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
    /// Diagonal mass matrix.
    #[must_use]
    pub fn mass(mut self, m: Vec<f64>) -> Self {
        self.mass = Some(m);
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
    pub fn gradient(mut self, g: GradientMode) -> Self {
        self.gradient = g;
        self
    }
    /// Accountant used by Algorithm 2.
    #[must_use]
    pub fn accountant(mut self, a: Method) -> Self {
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

    /// Iterations per chain and the privacy they spend.
    pub fn budget(&self, n_rows: usize) -> Result<(usize, PrivacySpent)> {
        if self.noise.is_discrete() {
            use crate::error::check;
            let n = n_rows.max(1) as f64;
            let rho_l = 1.0 / (2.0 * check::positive("tau_l", self.tau_l)?.powi(2) * n);
            let rho_g = 1.0 / (2.0 * check::positive("tau_g", self.tau_g)?.powi(2) * n);
            let l = self.leapfrog_steps as f64;
            let (per_iter, once) = match self.gradient {
                GradientMode::Fresh => (rho_l + (l + 1.0) * rho_g, 0.0),
                GradientMode::Reuse => (rho_l + l * rho_g, rho_g),
            };
            return super::discrete_budget::resolve_zcdp(per_iter, once, &self.run, n_rows);
        }
        let scheme = Scheme::Hmc {
            tau_l: self.tau_l,
            tau_g: self.tau_g,
            leapfrog_steps: self.leapfrog_steps,
            gradient: self.gradient,
        };
        resolve(scheme, self.accountant, &self.run, n_rows)
    }

    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        let kernel = self.kernel(model)?;
        let (k, spent) = self.budget(model.n_rows())?;
        finish(&kernel, model, &self.run, self, k, Some(spent))
    }
}

/// Random-walk MH (non-private baseline), optionally with clipped per-row ratios.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::Rwmh;
/// # use dp_mcmc::models::Model;
/// # struct Normal1(Vec<f64>);
/// # impl Model for Normal1 {
/// #     fn dim(&self) -> usize { 1 }
/// #     fn n_rows(&self) -> usize { self.0.len() }
/// #     fn log_prior(&self, t: &[f64]) -> f64 { -0.5 * t[0] * t[0] / 100.0 }
/// #     fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) { g[0] = -t[0] / 100.0 }
/// #     fn log_lik_row(&self, t: &[f64], j: usize) -> f64 { -0.5 * (self.0[j] - t[0]).powi(2) }
/// # }
/// let model = Normal1(vec![0.1, -0.3, 0.7]);
/// let run = Rwmh::builder().proposal_sd(0.5).iterations(200).start(vec![0.0]).run(&model)?;
/// assert_eq!(run.chains[0].len(), 200);
/// assert!(Rwmh::builder().start(vec![0.0]).run(&model).is_err()); // no iteration count
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rwmh {
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// Per-row ratio clip bound per unit distance (`None`: exact MH).
    pub clip_bound: Option<f64>,
    /// Distance scaling the clip bound.
    pub clip_distance: ClipDistance,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for Rwmh {
    fn default() -> Self {
        Rwmh {
            proposal_sd: StepSize::Scalar(0.01),
            clip_bound: None,
            clip_distance: ClipDistance::L2,
            run: RunSettings::default(),
        }
    }
}

run_setters!(Rwmh);

impl Rwmh {
    /// Defaults: proposal sd 0.01, no clipping, 4 chains.
    pub fn builder() -> Self {
        Self::default()
    }
    /// Proposal standard deviation(s).
    #[must_use]
    pub fn proposal_sd(mut self, sd: impl Into<StepSize>) -> Self {
        self.proposal_sd = sd.into();
        self
    }
    /// Clip per-row ratios at `b·dist(θ, θ')`.
    #[must_use]
    pub fn clip_bound(mut self, b: f64) -> Self {
        self.clip_bound = Some(b);
        self
    }
    /// Distance scaling the clip bound (L2 default; the thesis code's `|Σ diff|` as an option).
    #[must_use]
    pub fn clip_distance(mut self, d: ClipDistance) -> Self {
        self.clip_distance = d;
        self
    }
    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        let kernel = RwmhKernel::new(sd, self.clip_bound, self.clip_distance)?;
        let k = fixed_iterations(&self.run, "RWMH")?;
        finish(&kernel, model, &self.run, self, k, None)
    }
}

/// HMC (non-private baseline), optionally with clipped per-row ratios in ΔH. Uses gradient
/// re-use (exact gradients, so this is ordinary HMC) as the thesis' clipping study does.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::Hmc;
/// # use dp_mcmc::models::Model;
/// # struct Normal1(Vec<f64>);
/// # impl Model for Normal1 {
/// #     fn dim(&self) -> usize { 1 }
/// #     fn n_rows(&self) -> usize { self.0.len() }
/// #     fn log_prior(&self, t: &[f64]) -> f64 { -0.5 * t[0] * t[0] / 100.0 }
/// #     fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) { g[0] = -t[0] / 100.0 }
/// #     fn log_lik_row(&self, t: &[f64], j: usize) -> f64 { -0.5 * (self.0[j] - t[0]).powi(2) }
/// #     fn has_gradient(&self) -> bool { true }
/// #     fn grad_log_lik_row(&self, t: &[f64], j: usize, g: &mut [f64]) -> dp_mcmc::Result<()> { g[0] = self.0[j] - t[0]; Ok(()) }
/// # }
/// let model = Normal1(vec![0.1, -0.3, 0.7]);
/// let run = Hmc::builder().step_size(0.2).leapfrog_steps(5).iterations(100).start(vec![0.0]).run(&model)?;
/// assert!(run.acceptance()[0] > 0.5);
/// assert!(Hmc::builder().step_size(0.0).iterations(1).start(vec![0.0]).run(&model).is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hmc {
    /// Leapfrog steps L.
    pub leapfrog_steps: usize,
    /// Step size η.
    pub step_size: f64,
    /// Diagonal mass matrix (`None`: identity).
    pub mass: Option<Vec<f64>>,
    /// Ratio clip bound per unit distance (`None`: exact HMC).
    pub clip_bound: Option<f64>,
    /// Distance scaling the clip bound.
    pub clip_distance: ClipDistance,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for Hmc {
    fn default() -> Self {
        Hmc {
            leapfrog_steps: 15,
            step_size: 0.001,
            mass: None,
            clip_bound: None,
            clip_distance: ClipDistance::L2,
            run: RunSettings::default(),
        }
    }
}

run_setters!(Hmc);

impl Hmc {
    /// Defaults: L = 15, η = 0.001, identity mass, no clipping.
    pub fn builder() -> Self {
        Self::default()
    }
    /// Leapfrog steps L.
    #[must_use]
    pub fn leapfrog_steps(mut self, l: usize) -> Self {
        self.leapfrog_steps = l;
        self
    }
    /// Step size η.
    #[must_use]
    pub fn step_size(mut self, eta: f64) -> Self {
        self.step_size = eta;
        self
    }
    /// Diagonal mass matrix.
    #[must_use]
    pub fn mass(mut self, m: Vec<f64>) -> Self {
        self.mass = Some(m);
        self
    }
    /// Clip per-row ratios at `b·dist(θ, θ')`.
    #[must_use]
    pub fn clip_bound(mut self, b: f64) -> Self {
        self.clip_bound = Some(b);
        self
    }
    /// Distance scaling the clip bound.
    #[must_use]
    pub fn clip_distance(mut self, d: ClipDistance) -> Self {
        self.clip_distance = d;
        self
    }
    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        let mass = self.mass.clone().unwrap_or_else(|| vec![1.0; model.dim()]);
        let mut kernel = HmcKernel::new(
            self.leapfrog_steps,
            self.step_size,
            mass,
            self.clip_bound,
            None,
            GradientMode::Reuse,
        )?;
        kernel.clip_distance = self.clip_distance;
        let k = fixed_iterations(&self.run, "HMC")?;
        finish(&kernel, model, &self.run, self, k, None)
    }
}
