//! DP-Fast MH (Zhang & Zhang, "DP-Fast MH: Private, Fast, and Accurate Metropolis-Hastings for
//! Large-Scale Bayesian Inference", ICML 2023): the builder, its privacy cost and the kernel
//! ([`DpFastMhKernel`]).

mod kernel;

pub(crate) use kernel::check_fast_mh;
pub use kernel::{DpFastMhKernel, DpFastMhState};

use serde::{Deserialize, Serialize};

use super::privacy::{PrivacyCost, dp_run};
use super::proposal::StepSize;
use super::sampler::SamplerEntry;
use super::sampler::{
    AutoInputs, DerivedSettings, Sampler, field_setters, per_coordinate, sampler_basics,
};
use super::settings::{RunSettings, run_setters};
use crate::accounting::{Accountant, AccountantKind, CertifiedPld, PrivacyEvent, Releases};
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};

/// DP-Fast MH: random-walk Metropolis–Hastings whose test reads a Poisson-sized batch of rows
/// drawn with replacement (TunaMH's exact minibatch test), made private by Gaussian noise on
/// the test's log ratio with the penalty correction. Expected batch `λ + L`, `L = n·T·c·‖θ'−θ‖`
/// (`c`: the clip bound per unit distance); a proposal whose expected batch would reach the
/// public cap `K` is rejected without reading the data (the paper falls back to the full data
/// there; docs/ACCOUNTING.md, "DP-Fast MH", says why we do not).
///
/// Each step is charged as a batch in which the changed row appears `Poisson(K/n)` times,
/// noise multiplier σ relative to one appearance's substitute sensitivity `2·ln(1 + L/λ)`
/// ([`PrivacyEvent::poisson_multiplicity`]), by the certified PLD accountant (the only one
/// that evaluates it).
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpFastMh;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..2000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = DpFastMh::builder()
///     .proposal_sd(0.01).clip_bound(2.0).lambda(40.0).batch_cap(200.0).noise_multiplier(1.0)
///     .iterations(300).chains(2).seed(1).start(vec![0.4])
///     .run(&model)?;
/// assert_eq!(run.iterations, 300);
/// assert!(run.rows_per_iteration() < 200.0); // a minibatch per step, not the 2000 rows
/// // a batch cap not above λ is an error naming it
/// let err = DpFastMh::builder().lambda(50.0).batch_cap(10.0).iterations(5).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("batch_cap"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpFastMh {
    /// Noise multiplier σ relative to one draw's substitute sensitivity `2·ln(1 + L/λ)`.
    pub noise_multiplier: f64,
    /// Clip bound c per unit distance of the per-row log-likelihood ratio.
    pub clip_bound: f64,
    /// TunaMH's λ: the expected batch is `λ + L`.
    pub lambda: f64,
    /// The cap K on the expected batch `λ + L` (proposals reaching it are rejected).
    pub batch_cap: f64,
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// With a privacy budget, at most this many iterations per chain (`None`: Algorithm 2's).
    pub max_iterations: Option<usize>,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for DpFastMh {
    fn default() -> Self {
        DpFastMh {
            noise_multiplier: 1.0,
            clip_bound: 1.0,
            lambda: 100.0,
            batch_cap: 1000.0,
            proposal_sd: StepSize::Scalar(0.001),
            max_iterations: None,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpFastMh);
dp_run!(DpFastMh);

impl DpFastMh {
    /// Defaults: σ = 1, c = 1, λ = 100, K = 1000, proposal sd 0.001.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Noise multiplier σ (relative to one draw's substitute sensitivity).
    #[must_use]
    pub fn noise_multiplier(mut self, sigma: f64) -> Self {
        self.noise_multiplier = sigma;
        self
    }
    /// Clip bound per unit distance.
    #[must_use]
    pub fn clip_bound(mut self, c: f64) -> Self {
        self.clip_bound = c;
        self
    }
    /// TunaMH's λ (> 0).
    #[must_use]
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }
    /// The cap K (> λ) on the expected batch.
    #[must_use]
    pub fn batch_cap(mut self, k: f64) -> Self {
        self.batch_cap = k;
        self
    }
    /// Proposal standard deviation(s).
    #[must_use]
    pub fn proposal_sd(mut self, sd: impl Into<StepSize>) -> Self {
        self.proposal_sd = sd.into();
        self
    }
    /// With a privacy budget, run at most `k` iterations per chain.
    #[must_use]
    pub fn max_iterations(mut self, k: usize) -> Self {
        self.max_iterations = Some(k);
        self
    }

    /// The expected multiplicity charged per step: `K/n`.
    ///
    /// # Errors
    /// Invalid settings, or `K > 50·n`.
    pub fn charged_multiplicity(&self, n: u64) -> Result<f64> {
        check_fast_mh(
            self.noise_multiplier,
            self.clip_bound,
            self.lambda,
            self.batch_cap,
        )?;
        let mean = self.batch_cap / n.max(1) as f64;
        if mean > 50.0 {
            return Err(Error::invalid(
                "batch_cap",
                self.batch_cap,
                format!("must be at most 50·n = {} (n = {n})", 50 * n),
            ));
        }
        Ok(mean)
    }

    /// The paper's own per-iteration guarantee for these settings (its code's analysis): the
    /// noise `σ·Δ` is the classical Gaussian mechanism at `(ε', δ')` with
    /// `σ = √(2 ln(1.25/δ'))/ε'`, and subsampling at rate `K/n` gives the step
    /// `(ε, δ) = (6Kε'/n, 2Kδ'/n)`. Returns `ε` for the step's `δ`, or `None` where the
    /// classical Gaussian mechanism does not apply (`ε' > 1`, or `δ' ≥ 1`). For comparison
    /// only: the crate charges [`PrivacyCost::releases`].
    pub fn paper_step_epsilon(&self, n: u64, delta: f64) -> Option<f64> {
        let q = self.batch_cap / n as f64;
        let delta_inner = delta / (2.0 * q);
        let valid = delta_inner > 0.0 && delta_inner < 1.0 && self.noise_multiplier > 0.0;
        if !valid {
            return None;
        }
        let eps_inner = (2.0 * (1.25 / delta_inner).ln()).sqrt() / self.noise_multiplier;
        (eps_inner <= 1.0).then_some(6.0 * q * eps_inner)
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<DpFastMhKernel> {
        // validates the proposal sds, then the other settings and the cap
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        self.charged_multiplicity(model.n_rows() as u64)?;
        Ok(DpFastMhKernel {
            noise_multiplier: self.noise_multiplier,
            clip_bound: self.clip_bound,
            lambda: self.lambda,
            batch_cap: self.batch_cap,
            proposal_sd: sd,
        })
    }
}

impl PrivacyCost for DpFastMh {
    /// One release per iteration: TunaMH's log ratio plus Gaussian noise, the changed row
    /// appearing `Poisson(μ)` times with `μ ≤ K/n`, noise multiplier σ relative to one
    /// appearance's substitute sensitivity (docs/ACCOUNTING.md, "DP-Fast MH").
    fn releases(&self, n: u64) -> Result<Releases> {
        let mean = self.charged_multiplicity(n)?;
        Ok(Releases::per_iteration(
            PrivacyEvent::gaussian(self.noise_multiplier).poisson_multiplicity(mean),
        ))
    }
    fn new_accountant(&self, _n: u64) -> Result<Box<dyn Accountant>> {
        Ok(Box::new(CertifiedPld::new().upper_only(true)))
    }
    fn accountant_label(&self) -> &'static str {
        self.method().label()
    }
    fn method(&self) -> AccountantKind {
        AccountantKind::CertifiedPld
    }
    fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("noise_multiplier", self.noise_multiplier),
            ("lambda", self.lambda),
            ("batch_cap", self.batch_cap),
        ]
    }
    fn iteration_cap(&self) -> Option<usize> {
        self.max_iterations
    }
}

/// The registry's DP-Fast MH.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-fast-mh",
    label: "DP-Fast MH",
    aliases: &[],
    private: true,
    build: || Box::new(DpFastMh::builder()),
};

/// Public batch settings for noise multiplier `sigma` and a proposal whose total ratio bound
/// `L = n·T·c·‖θ'−θ‖` is `l` on average: `λ = l/(e^{1/(2σ)} − 1)`, so that the noise's
/// standard deviation `σ·2·ln(1 + L/λ)` is about 1 on the log scale at the mean step, and the
/// cap `K = λ + 4·l` (a random-walk step four times its mean length is rare).
pub(crate) fn public_batch(sigma: f64, l: f64) -> (f64, f64) {
    let l = l.max(1.0);
    let lambda = l / (0.5 / sigma).exp_m1();
    (lambda, lambda + 4.0 * l)
}

/// Noise multiplier of the Table 5.1 settings (`tuned_for`): `λ ≈ 2L`.
pub const PUBLIC_NOISE_MULTIPLIER: f64 = 1.25;

/// The Gaussian-DP `μ_G` of `k` steps at noise multiplier `sigma` with batches of
/// `λ(σ) + l` of `n` rows (`public_batch`), by the central limit approximation of a
/// Poisson-subsampled Gaussian composition (Bu, Dong, Long & Su 2020:
/// `μ_G ≈ q·√(k·(e^{(2/σ)²} − 1))` for the substitute pair, whose components are `2/σ` apart).
/// Only used to pick settings: Algorithm 2 gives the certified count.
fn clt_charge(sigma: f64, l: f64, n: f64, k: f64) -> f64 {
    let (lambda, _) = public_batch(sigma, l);
    let q = ((lambda + l) / n).min(1.0);
    q * (k * (4.0 / (sigma * sigma)).exp_m1()).sqrt()
}

/// The noise multiplier an `auto` run takes: the smallest σ in [1.25, 400] whose
/// [`clt_charge`] over `k` steps fits the Gaussian-DP budget `mu` (`μ_G = √(2μ)` of a PLD
/// `μ`), the expected batch kept below `n/2`. Algorithm 2 then gives the certified count
/// (capped at `k`).
pub(crate) fn auto_noise_multiplier(mu: f64, k: f64, n: f64, l: f64) -> f64 {
    let charge = |sigma: f64| clt_charge(sigma, l, n, k);
    let fits = |sigma: f64| public_batch(sigma, l).1 <= 0.5 * n;
    let (mut lo, mut hi) = (PUBLIC_NOISE_MULTIPLIER, 400.0);
    if charge(lo) <= mu || !fits(lo) {
        return lo;
    }
    while !fits(hi) && hi > lo * 1.01 {
        hi = 0.5 * (lo + hi);
    }
    if charge(hi) > mu {
        return hi;
    }
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if charge(mid) <= mu {
            hi = mid
        } else {
            lo = mid
        }
    }
    hi
}

/// Noise multiplier of the budgeted grid settings ([`Sampler::for_budget`]): the batch is
/// about `16.5·L` (λ ≈ 15.5·L keeps the test's noise near 1 on the log scale).
pub const BUDGET_NOISE_MULTIPLIER: f64 = 8.0;

/// Target iterations of an `auto` DP-Fast MH run.
pub const AUTO_ITERATIONS: usize = 4000;

/// Mean length of a `d`-dimensional Gaussian step with per-coordinate sd `s` (≈ `s·√d`).
fn mean_step(s: f64, d: usize) -> f64 {
    s * (d as f64 - 0.5).max(0.5).sqrt()
}

impl Sampler for DpFastMh {
    sampler_basics!("dp-fast-mh", private);
    field_setters!(set_clip_bound(f64) => clip_bound, set_proposal_sd(StepSize) => proposal_sd);

    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        match method
            .unwrap_or(AccountantKind::CertifiedPld)
            .numerical_pld()
        {
            AccountantKind::CertifiedPld => Ok(()),
            m => Err(Error::invalid(
                "accountant",
                m.key(),
                "dp-fast-mh supports --accountant pld (certified) only: its with-replacement \
                 batches are evaluated by no other accountant of the crate",
            )),
        }
    }

    /// The settings for a per-chain budget: σ = [`BUDGET_NOISE_MULTIPLIER`] with λ and K from
    /// `public_batch`, and the proposal shrunk (never enlarged) until [`AUTO_ITERATIONS`]
    /// steps fit the budget by the central-limit approximation of `auto_noise_multiplier`:
    /// the charge of a step is set by `L/n = T·c·‖θ'−θ‖` whatever σ, so the step length is
    /// what a budget buys. Algorithm 2 then gives the certified count, capped at the target.
    fn for_budget(&self, n: usize, epsilon: f64, delta: f64) -> Result<Box<dyn Sampler>> {
        let mu_g = (2.0 * crate::accounting::gaussian_budget(epsilon, delta)?).sqrt();
        // the mean total bound these settings were made for
        let l0 = self.lambda * (0.5 / self.noise_multiplier).exp_m1();
        let k = self.max_iterations.unwrap_or(AUTO_ITERATIONS);
        let sigma = BUDGET_NOISE_MULTIPLIER;
        // the charge is linear in L (λ ∝ L, for L ≥ 1): solve directly
        let per_unit = clt_charge(sigma, 1.0, n as f64, k as f64);
        let l = l0.min(mu_g / per_unit).max(1e-12);
        let shrink = l / l0;
        let (lambda, cap) = public_batch(sigma, l);
        let sd = match &self.proposal_sd {
            StepSize::Scalar(s) => StepSize::Scalar(s * shrink),
            StepSize::PerCoordinate(v) => {
                StepSize::PerCoordinate(v.iter().map(|s| s * shrink).collect())
            }
        };
        Ok(Box::new(
            self.clone()
                .noise_multiplier(sigma)
                .lambda(lambda)
                .batch_cap(cap.min(50.0 * n as f64))
                .proposal_sd(sd)
                .max_iterations(k),
        ))
    }

    /// Public settings for a Table 5.1 experiment: the thesis' DP penalty (full update) clip
    /// bound and proposal sd, λ and K from `public_batch` at the proposal's mean length,
    /// σ = [`PUBLIC_NOISE_MULTIPLIER`].
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let (_, proposal_sd, clip_bound) = super::thesis_tables::penalty_full(experiment);
        let d = experiment.dim();
        let sd = proposal_sd.resolve("proposal_sd", d)?;
        let rms = (sd.iter().map(|s| s * s).sum::<f64>() / d as f64).sqrt();
        let l = experiment.n() as f64 * experiment.tempering() * clip_bound * mean_step(rms, d);
        let (lambda, cap) = public_batch(PUBLIC_NOISE_MULTIPLIER, l);
        Ok(Box::new(
            DpFastMh::builder()
                .noise_multiplier(PUBLIC_NOISE_MULTIPLIER)
                .clip_bound(clip_bound)
                .proposal_sd(per_coordinate(rms, d))
                .lambda(lambda)
                .batch_cap(cap),
        ))
    }

    /// The DP penalty's public first step (`1/(c√(nd))` per coordinate, shaped), σ from
    /// `auto_noise_multiplier` for the chains' budget, λ and K from `public_batch`, at
    /// most [`AUTO_ITERATIONS`] (or the target) iterations per chain.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let c = p.clip.unwrap_or(1.0);
        let step = 1.0 / (c * (p.n as f64).sqrt()) / (p.d as f64).sqrt();
        let l = p.n as f64 * c * mean_step(step, p.d);
        let k = p.target_iterations.unwrap_or(AUTO_ITERATIONS);
        let steps = (k * p.copies.max(1)) as f64;
        let sigma = auto_noise_multiplier((2.0 * p.mu_chains).sqrt(), steps, p.n as f64, l);
        let (lambda, cap) = public_batch(sigma, l);
        let s = DpFastMh::builder()
            .noise_multiplier(sigma)
            .clip_bound(c)
            .lambda(lambda)
            .batch_cap(cap.min(50.0 * p.n as f64))
            .proposal_sd(p.shaped(step))
            .max_iterations(k);
        let derived = DerivedSettings {
            target_iterations: k,
            tau: None,
            tau_g: None,
            batch_size: Some((lambda + l).round() as usize),
            initial_step: step,
        };
        Ok((Box::new(s), derived))
    }
}
