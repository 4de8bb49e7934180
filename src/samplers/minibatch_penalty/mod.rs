//! Minibatch DP penalty (thesis §3.3-3.4): the builder, its privacy cost, and the kernel
//! ([`MinibatchPenaltyKernel`]).

mod kernel;

use super::batch::check_batch;
pub use kernel::MinibatchPenaltyKernel;

use serde::{Deserialize, Serialize};

use super::privacy::{PrivacyCost, dp_run};
use super::proposal::{ProposalKind, StepSize};
use super::sampler::SamplerEntry;
use super::sampler::{
    AutoInputs, DerivedSettings, Sampler, field_setters, per_coordinate, sampler_basics, untuned,
};
use super::settings::{RunSettings, penalty_setters, run_setters};
use crate::accounting::fourier::{FourierAccountant, FourierRelation};
use crate::accounting::special::floor_pessimistic;
use crate::accounting::{
    Accountant, AccountantKind, CertifiedPld, Fourier, PrivacyEvent, Rdp, Releases, WorBound,
    integer_orders,
};
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};
use crate::noise::Noise;

/// Minibatch DP penalty (thesis §3.3-3.4): DP penalty on `b` rows per iteration. Iterations
/// come from the Fourier accountant (default; the thesis' conservative `σ = √τ` call,
/// THESIS-NOTES §7) or Theorem 8's RDP bound (`.accountant(AccountantKind::Rdp)`; corrected sum by default,
/// `.thesis_compatible(true)` for the thesis code's optimistic one).
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::MinibatchPenalty;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..2000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = MinibatchPenalty::builder()
///     .tau(0.7).clip_bound(1.0).batch_size(100).proposal_sd(0.01)
///     .iterations(50).chains(2).start(vec![0.4])
///     .run(&model)?;
/// assert_eq!(run.rows_per_iteration(), 100.0);
/// // A batch larger than the data is an error naming the parameter:
/// let err = MinibatchPenalty::builder().batch_size(5000).iterations(5).start(vec![0.0]).run(&model);
/// assert!(err.unwrap_err().to_string().contains("batch_size"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MinibatchPenalty {
    /// Noise scale τ (noise variance `τc²`).
    pub tau: f64,
    /// Clip bound per unit distance.
    pub clip_bound: f64,
    /// Batch size b.
    pub batch_size: usize,
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// Full update, OCU or GWMH.
    pub proposal: ProposalKind,
    /// Accountant: `AccountantKind::Fourier` (default, the thesis'), `AccountantKind::Rdp` or
    /// `AccountantKind::CertifiedPld` (the certified PLD accountant's upper bound; `Pld` means
    /// the same here).
    pub accountant: AccountantKind,
    /// Reproduce the thesis code's (optimistic) Theorem 8 sum for `AccountantKind::Rdp`.
    pub thesis_compatible: bool,
    /// Continuous (default) or exact discrete Gaussian noise (then the accountant is always
    /// `AccountantKind::Rdp`: the Fourier accountant's PLD is not valid for discrete noise, while the
    /// subsampled RDP bound only needs the base mechanism's RDP, which for the discrete
    /// Gaussian is at most the continuous one, CKS20).
    #[serde(default)]
    pub noise: Noise,
    /// Finite-population correction of the batch variance (default `false`, as the thesis).
    #[serde(default)]
    pub finite_population_correction: bool,
    /// A shared Fourier accountant (see [`fourier_accountant`](Self::fourier_accountant)).
    #[serde(skip)]
    pub(crate) fourier: Option<FourierAccountant>,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for MinibatchPenalty {
    fn default() -> Self {
        MinibatchPenalty {
            tau: 0.7,
            clip_bound: 1.0,
            batch_size: 1000,
            proposal_sd: StepSize::Scalar(0.001),
            proposal: ProposalKind::Full,
            accountant: AccountantKind::Fourier,
            thesis_compatible: false,
            noise: Noise::Gaussian,
            finite_population_correction: false,
            fourier: None,
            run: RunSettings::default(),
        }
    }
}

run_setters!(MinibatchPenalty);
dp_run!(MinibatchPenalty);
penalty_setters!(MinibatchPenalty);

impl MinibatchPenalty {
    /// Defaults: the thesis' easy-2d tuning (τ 0.7, clip 1, b = 1000, sd 0.001), Fourier accountant.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Batch size (1 ≤ b ≤ n).
    #[must_use]
    pub fn batch_size(mut self, b: usize) -> Self {
        self.batch_size = b;
        self
    }
    /// Thesis-code Theorem 8 sum (optimistic) for the RDP accountant.
    #[must_use]
    pub fn thesis_compatible(mut self, yes: bool) -> Self {
        self.thesis_compatible = yes;
        self
    }

    /// The Fourier accountant of the budget search (default: the thesis' grid nx = 1e6, L = 20).
    /// Pass a clone of one accountant to share its cached spectra across many budgets (an ε
    /// grid). It must use [`FourierRelation::SubstituteWithoutReplacement`] (checked by `budget`
    /// and `run`). Not part of the serialised settings.
    #[must_use]
    pub fn fourier_accountant(mut self, fa: FourierAccountant) -> Self {
        self.fourier = Some(fa);
        self
    }

    /// The thesis' RDP sum (optimistic) or Theorem 9's.
    fn wor_bound(&self) -> WorBound {
        if self.thesis_compatible {
            WorBound::ThesisCode
        } else {
            WorBound::Theorem9
        }
    }

    /// Noise of the penalty test: [`Noise::Gaussian`] (default) or exact discrete Gaussian
    /// noise (accounted with RDP).
    #[must_use]
    pub fn noise(mut self, noise: Noise) -> Self {
        self.noise = noise;
        self
    }

    /// Multiply the batch variance by `1 − b/n` (exact for sampling without replacement).
    #[must_use]
    pub fn finite_population_correction(mut self, yes: bool) -> Self {
        self.finite_population_correction = yes;
        self
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<MinibatchPenaltyKernel> {
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        let mut k = MinibatchPenaltyKernel::new(
            self.tau,
            self.clip_bound,
            self.batch_size,
            sd,
            self.proposal,
        )?
        .with_lattice(self.noise.lattice()?);
        k.finite_population_correction = self.finite_population_correction;
        Ok(k)
    }
}

impl PrivacyCost for MinibatchPenalty {
    /// One release per iteration: the noisy clipped ratio sum of a batch of `b` rows drawn
    /// without replacement, noise multiplier `√τ` w.r.t. its substitute sensitivity (thesis
    /// Theorem 8; the Fourier accountant's conservative `σ = √τ` call, THESIS-NOTES §7).
    fn releases(&self, n: u64) -> Result<Releases> {
        let tau = crate::error::check::positive("tau", self.tau)?;
        check_batch(self.batch_size, n as usize)?;
        Ok(Releases::per_iteration(
            PrivacyEvent::gaussian(tau.sqrt()).without_replacement(n, self.batch_size as u64),
        ))
    }
    /// RDP on the orders 2..=199 (the thesis code's; the thesis code's sum with
    /// `.thesis_compatible(true)`), the certified PLD accountant's upper bound
    /// (`AccountantKind::CertifiedPld`), or the Fourier accountant.
    fn new_accountant(&self, _n: u64) -> Result<Box<dyn Accountant>> {
        Ok(match self.method() {
            AccountantKind::Rdp => Box::new(minibatch_rdp(self.wor_bound())?),
            // Algorithm 2 compares the upper bound with the budget: no refinement needed
            AccountantKind::CertifiedPld => Box::new(CertifiedPld::new().upper_only(true)),
            AccountantKind::Fourier => Box::new(match &self.fourier {
                Some(fa) if fa.relation() != FourierRelation::SubstituteWithoutReplacement => {
                    return Err(Error::invalid(
                        "fourier_accountant",
                        format!("{:?}", fa.relation()),
                        "the minibatch penalty samples without replacement: use \
                         FourierRelation::SubstituteWithoutReplacement",
                    ));
                }
                Some(fa) => Fourier::new().with_engine(fa.clone()),
                None => Fourier::new(),
            }),
            m => return Err(unsupported_accountant(m)),
        })
    }
    fn corrected_accountant(&self, _n: u64) -> Result<Option<Box<dyn Accountant>>> {
        Ok(
            (self.method() == AccountantKind::Rdp && self.thesis_compatible)
                .then(|| minibatch_rdp(WorBound::Theorem9))
                .transpose()?
                .map(|a| Box::new(a) as Box<dyn Accountant>),
        )
    }
    fn accountant_label(&self) -> &'static str {
        self.method().label()
    }
    /// The accountant in force: discrete noise is always accounted with RDP, the PLD with the
    /// certified engine.
    fn method(&self) -> AccountantKind {
        if self.noise.is_discrete() {
            AccountantKind::Rdp
        } else {
            self.accountant.numerical_pld()
        }
    }
    fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
        vec![("tau", self.tau), ("batch_size", self.batch_size as f64)]
    }
    /// RDP: the order whose own count `⌊(ε − ln(1/δ)/(α−1)) / ε_step(α)⌋` is largest (the
    /// smallest such order on ties), as the thesis code picks it.
    fn reported_order(
        &self,
        n: u64,
        (eps, delta): (f64, f64),
        _k: u64,
        _copies: u64,
    ) -> Result<Option<f64>> {
        if self.method() != AccountantKind::Rdp {
            return Ok(None);
        }
        let mut one_step = minibatch_rdp(self.wor_bound())?;
        one_step.compose(&self.releases(n)?.iteration)?;
        let ln_inv_d = (1.0 / delta).ln();
        let mut best = (0u64, one_step.orders()[0]);
        for (i, (&a, &e)) in one_step.orders().iter().zip(one_step.rdp()).enumerate() {
            let count = floor_pessimistic((eps - ln_inv_d / (a - 1.0)) / e);
            if i == 0 || count > best.0 {
                best = (count, a);
            }
        }
        Ok(Some(best.1))
    }
    fn thesis_compatible(&self) -> bool {
        self.thesis_compatible
    }
}

/// The error for an accountant the minibatch penalty does not support.
fn unsupported_accountant(m: AccountantKind) -> Error {
    Error::invalid(
        "accountant",
        m.key(),
        "minibatch-penalty supports --accountant fourier (thesis), rdp (Theorem 8) or pld (certified)",
    )
}

/// The minibatch penalty's RDP accountant: integer orders 2..=199, as the thesis code scans.
pub(crate) fn minibatch_rdp(bound: WorBound) -> Result<Rdp> {
    Ok(Rdp::with_orders(integer_orders(2, 199))?.wor_bound(bound))
}

/// The registry's minibatch DP penalty samplers: full update, OCU + guided walk.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "minibatch-penalty",
    label: "Minibatch DP Penalty",
    aliases: &["mdpps"],
    private: true,
    build: || Box::new(MinibatchPenalty::builder()),
};
pub(crate) const GWMH_ENTRY: SamplerEntry = SamplerEntry {
    key: "minibatch-penalty-gwmh",
    label: "Minibatch DP Penalty OCU+GWMH",
    aliases: &["mdppa"],
    private: true,
    build: || Box::new(MinibatchPenalty::builder().proposal(ProposalKind::GuidedWalk)),
};

impl Sampler for MinibatchPenalty {
    sampler_basics!("minibatch-penalty", private);
    field_setters!(set_tau(f64) => tau, set_clip_bound(f64) => clip_bound, set_proposal_sd(StepSize) => proposal_sd, set_batch_size(usize) => batch_size);

    /// Default: the Fourier accountant (the thesis').
    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        match method.unwrap_or(AccountantKind::Fourier).numerical_pld() {
            m @ (AccountantKind::Fourier | AccountantKind::Rdp | AccountantKind::CertifiedPld) => {
                self.accountant = m
            }
            m => return Err(unsupported_accountant(m)),
        }
        Ok(())
    }

    /// The thesis' `mdpps` table (full update) and `mdppa` table (GWMH), tuned for the four
    /// flat and tempered bananas only.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        use Experiment::*;
        let gw = self.proposal == ProposalKind::GuidedWalk;
        let (tau, s, b, bs) = match (experiment, gw) {
            (EasyBanana2d, _) => (0.7, 0.0010, 1.0, 1000),
            (EasyBanana10d, false) => (0.6, 0.0001, 3.0, 1000),
            (EasyBanana10d, true) => (0.5, 0.00032, 2.0, 1000),
            (TemperedBanana2d, false) => (1.5, 0.025, 4.0, 1000),
            (TemperedBanana2d, true) => (2.0, 0.04, 4.0, 1000),
            (TemperedBanana10d, false) => (0.7, 0.02, 2.0, 1200),
            (TemperedBanana10d, true) => (0.8, 0.028, 2.0, 1200),
            _ => return Err(untuned(self.key(), experiment)),
        };
        Ok(Box::new(
            MinibatchPenalty::builder()
                .tau(tau)
                .proposal_sd(per_coordinate(s, experiment.dim()))
                .clip_bound(b)
                .batch_size(bs)
                .proposal(self.proposal),
        ))
    }

    /// τ = 1, batches of `max(1000, n/100)` rows (at most `n`), certified PLD accounting.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let batch = p.n.min(1000.max(p.n.div_ceil(100)));
        let b = p.clip.unwrap_or(1.0);
        let tau = 1.0;
        let step = 1.0 / (b * (p.n as f64).sqrt()) / (p.d as f64).sqrt();
        let s = MinibatchPenalty::builder()
            .tau(tau)
            .clip_bound(b)
            .batch_size(batch)
            .proposal_sd(p.shaped(step))
            .accountant(AccountantKind::CertifiedPld);
        let derived = DerivedSettings {
            target_iterations: 0,
            tau: Some(tau),
            tau_g: None,
            batch_size: Some(batch),
            initial_step: step,
        };
        Ok((Box::new(s), derived))
    }
}
