//! DP penalty (thesis §3.1-3.2): the builder, its privacy cost, and the kernel
//! ([`DpPenaltyKernel`]).

mod kernel;

pub use kernel::DpPenaltyKernel;

use serde::{Deserialize, Serialize};

use super::privacy::{
    PrivacyCost, dp_run, full_data_accountant, full_data_label, full_data_method,
    full_data_method_checked, gaussian_release,
};
use super::proposal::{ProposalKind, StepSize};
use super::sampler::SamplerEntry;
use super::sampler::{
    AutoInputs, DerivedSettings, Sampler, field_setters, per_coordinate, sampler_basics,
};
use super::settings::{RunSettings, penalty_setters, run_setters};
use super::thesis_tables::{penalty_full, penalty_ocu};
use crate::accounting::{Accountant, AccountantKind, Releases};
use crate::error::Result;
use crate::models::{Experiment, Model};
use crate::noise::Noise;

/// DP penalty (thesis §3.1-3.2) with full, one-component (OCU) or guided-walk (GWMH) proposals.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpPenalty;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
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
    pub accountant: AccountantKind,
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
            accountant: AccountantKind::Pld,
            noise: Noise::Gaussian,
            run: RunSettings::default(),
        }
    }
}

run_setters!(DpPenalty);
dp_run!(DpPenalty);
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
}

impl PrivacyCost for DpPenalty {
    /// One release per iteration: the clipped log-likelihood-ratio sum with noise multiplier
    /// `τ√n` (ρ = 1/(2τ²n), thesis Theorems 5/6); as a zCDP event with discrete noise (CKS20).
    fn releases(&self, n: u64) -> Result<Releases> {
        Ok(Releases::per_iteration(gaussian_release(
            "tau",
            self.tau,
            n,
            self.noise.is_discrete(),
        )?))
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
    fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
        vec![("tau", self.tau)]
    }
}

/// The registry's DP penalty samplers: full update, OCU, OCU + guided walk.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-penalty",
    label: "DP Penalty",
    aliases: &["dpps"],
    private: true,
    build: || Box::new(DpPenalty::builder()),
};
pub(crate) const OCU_ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-penalty-ocu",
    label: "DP Penalty OCU",
    aliases: &[],
    private: true,
    build: || Box::new(DpPenalty::builder().ocu()),
};
pub(crate) const GWMH_ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-penalty-gwmh",
    label: "DP Penalty OCU+GWMH",
    aliases: &["dppa"],
    private: true,
    build: || Box::new(DpPenalty::builder().gwmh()),
};

impl Sampler for DpPenalty {
    sampler_basics!("dp-penalty", private);
    field_setters!(set_tau(f64) => tau, set_clip_bound(f64) => clip_bound, set_proposal_sd(StepSize) => proposal_sd);

    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        self.accountant = full_data_method_checked(ENTRY.key, method)?;
        Ok(())
    }

    /// The thesis' `dpps` table for a full update, its `dppa` table for OCU and GWMH.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let d = experiment.dim();
        if self.proposal == ProposalKind::Full {
            let (tau, sd, b) = penalty_full(experiment);
            return Ok(Box::new(
                DpPenalty::builder().tau(tau).proposal_sd(sd).clip_bound(b),
            ));
        }
        let (tau, s, b) = penalty_ocu(experiment);
        Ok(Box::new(
            DpPenalty::builder()
                .tau(tau)
                .proposal_sd(per_coordinate(s, d))
                .clip_bound(b)
                .proposal(self.proposal),
        ))
    }

    /// A full update with `K` = 2000 target iterations (τ from it) and a first step at which
    /// the test's noise `σ = 2bΔτ√n` is 2.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let k = p.target_iterations.unwrap_or(2000);
        let b = p.clip.unwrap_or(1.0);
        let tau = p.tau_for(k, 1.0);
        let step = 1.0 / (b * tau * (p.n as f64).sqrt()) / (p.d as f64).sqrt();
        let s = DpPenalty::builder()
            .tau(tau)
            .clip_bound(b)
            .proposal_sd(p.shaped(step))
            .accountant(AccountantKind::Pld);
        let derived = DerivedSettings {
            target_iterations: k,
            tau: Some(tau),
            tau_g: None,
            batch_size: None,
            initial_step: step,
        };
        Ok((Box::new(s), derived))
    }
}
