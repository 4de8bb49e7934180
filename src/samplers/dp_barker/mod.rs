//! DP Barker (Heikkilä et al. 2019; thesis §3.3): the builder, its privacy cost, and the kernel
//! ([`DpBarkerKernel`]).

mod kernel;

pub use kernel::DpBarkerKernel;

use serde::{Deserialize, Serialize};

use super::batch::check_batch;
use super::privacy::{PrivacyCost, dp_run};
use super::proposal::StepSize;
use super::sampler::SamplerEntry;
use super::sampler::{
    AutoInputs, DerivedSettings, Sampler, field_setters, per_coordinate, sampler_basics, untuned,
};
use super::settings::{RunSettings, run_setters};
use crate::accounting::{
    Accountant, AccountantKind, BarkerBound, CertifiedPld, PrivacyEvent, Rdp, Releases,
};
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};

/// DP Barker (Heikkilä et al. 2019; thesis §3.3): Barker's test on a minibatch with noise
/// completed to `N(0, 2)` plus the `V_corr` correction. Iterations from Theorem 7 (RDP), with
/// `.accountant(AccountantKind::RdpExact)` from the exact per-step divergence (`rdp-exact`), or
/// with `.accountant(AccountantKind::CertifiedPld)` from the certified PLD of the feasible
/// family (`pld`).
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpBarker;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..5000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let run = DpBarker::builder().batch_size(500).proposal_sd(0.002)
///     .epsilon(2.0).delta(1e-5).chains(2).start(vec![0.4]).run(&model)?;
/// assert!(run.iterations > 0);
/// assert!(DpBarker::builder().proposal_sd(-1.0).iterations(3).start(vec![0.0]).run(&model).is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DpBarker {
    /// Batch size b.
    pub batch_size: usize,
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// Run settings.
    pub run: RunSettings,
    /// Accountant: `AccountantKind::Rdp` (Theorem 7, default), `AccountantKind::RdpExact` or
    /// `AccountantKind::CertifiedPld` (`Pld` means the same here).
    #[serde(default = "theorem7")]
    pub accountant: AccountantKind,
}

fn theorem7() -> AccountantKind {
    AccountantKind::Rdp
}

impl Default for DpBarker {
    fn default() -> Self {
        DpBarker {
            batch_size: 1300,
            proposal_sd: StepSize::Scalar(0.0008),
            run: RunSettings::default(),
            accountant: AccountantKind::Rdp,
        }
    }
}

run_setters!(DpBarker);
dp_run!(DpBarker);

impl DpBarker {
    /// Defaults: the thesis' easy-2d tuning (b = 1300, sd 0.0008).
    pub fn builder() -> Self {
        Self::default()
    }

    /// Batch size (1 ≤ b ≤ n; Theorem 7 needs b ≥ 20).
    #[must_use]
    pub fn batch_size(mut self, b: usize) -> Self {
        self.batch_size = b;
        self
    }
    /// Proposal standard deviation(s).
    #[must_use]
    pub fn proposal_sd(mut self, sd: impl Into<StepSize>) -> Self {
        self.proposal_sd = sd.into();
        self
    }

    /// Accountant: `AccountantKind::Rdp` (thesis Theorem 7, default),
    /// `AccountantKind::RdpExact` (the exact per-step Rényi divergence, same amplification and
    /// conversion) or `AccountantKind::CertifiedPld` (`Pld` means the same here: the certified
    /// upper bound on the PLD of the feasible family, labelled "PLD (certified)"); see
    /// `docs/ACCOUNTING.md`. Any other accountant is an error when the run is planned.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::samplers::RunSetters;
    /// use dp_mcmc::accounting::AccountantKind;
    /// use dp_mcmc::samplers::DpBarker;
    /// # use dp_mcmc::models::testing::IsotropicGaussian;
    /// let model = IsotropicGaussian::new((0..5000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
    /// let base = DpBarker::builder().batch_size(500).epsilon(2.0).delta(1e-5).start(vec![0.4]);
    /// let k7 = base.clone().budget(5000)?.iterations;
    /// let exact = base.clone().accountant(AccountantKind::RdpExact).budget(5000)?;
    /// assert!(exact.iterations > k7);
    /// assert_eq!(exact.spent.accountant, "RDP-exact");
    /// let pld = base.clone().accountant(AccountantKind::CertifiedPld).budget(5000)?;
    /// assert!(pld.iterations >= exact.iterations);
    /// assert_eq!(pld.spent.accountant, "PLD (certified)");
    /// assert!(base.accountant(AccountantKind::Zcdp).budget(5000).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn accountant(mut self, method: AccountantKind) -> Self {
        self.accountant = method;
        self
    }

    /// The RDP bound of the Barker test for the chosen accountant (`None`: the certified PLD).
    fn bound(&self) -> Result<Option<BarkerBound>> {
        if self.method() == AccountantKind::CertifiedPld {
            return Ok(None);
        }
        BarkerBound::of_method(self.accountant)
            .map(Some)
            .ok_or_else(|| {
                Error::invalid(
                    "accountant",
                    self.accountant.key(),
                    "dp-barker supports AccountantKind::Rdp (Theorem 7), AccountantKind::RdpExact \
                     or AccountantKind::CertifiedPld",
                )
            })
    }

    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<DpBarkerKernel> {
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        DpBarkerKernel::new(self.batch_size, sd)
    }
}

impl PrivacyCost for DpBarker {
    /// One Barker test per iteration on a batch of `b` rows drawn without replacement (thesis
    /// Theorem 7).
    fn releases(&self, n: u64) -> Result<Releases> {
        check_batch(self.batch_size, n as usize)?;
        Ok(Releases::per_iteration(PrivacyEvent::BarkerTest {
            n,
            batch_size: self.batch_size as u64,
        }))
    }
    /// RDP on the orders Theorem 7 is evaluated at, with the chosen per-step bound
    /// ([`Rdp::for_dp_barker_with`]), or (`AccountantKind::CertifiedPld`) the certified PLD
    /// accountant's upper bound on the PLD of the feasible family (Algorithm 2 compares only
    /// the upper bound).
    fn new_accountant(&self, n: u64) -> Result<Box<dyn Accountant>> {
        Ok(match self.bound()? {
            Some(bound) => Box::new(Rdp::for_dp_barker_with(self.batch_size as u64, n, bound)?),
            None => {
                check_batch(self.batch_size, n as usize)?;
                Box::new(CertifiedPld::new().upper_only(true))
            }
        })
    }
    fn accountant_label(&self) -> &'static str {
        match self.bound() {
            Ok(Some(BarkerBound::Exact)) => AccountantKind::RdpExact.label(),
            Ok(None) => AccountantKind::CertifiedPld.label(),
            _ => AccountantKind::Rdp.label(),
        }
    }
    fn method(&self) -> AccountantKind {
        self.accountant.numerical_pld()
    }
    fn budget_parameters(&self) -> Vec<(&'static str, f64)> {
        vec![("batch_size", self.batch_size as f64)]
    }
    /// The RDP accountants: the order at which `k` tests attain their ε(δ).
    fn reported_order(
        &self,
        n: u64,
        (_, delta): (f64, f64),
        k: u64,
        copies: u64,
    ) -> Result<Option<f64>> {
        let Some(bound) = self.bound()? else {
            return Ok(None);
        };
        let mut orders = Rdp::for_dp_barker_with(self.batch_size as u64, n, bound)?;
        orders.compose(&self.releases(n)?.for_chains(k, copies))?;
        Ok(Some(orders.epsilon_and_order(delta)?.1))
    }
}

/// The registry's DP Barker.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "dp-barker",
    label: "DP Barker",
    aliases: &["barker"],
    private: true,
    build: || Box::new(DpBarker::builder()),
};

impl Sampler for DpBarker {
    sampler_basics!("dp-barker", private);
    field_setters!(set_proposal_sd(StepSize) => proposal_sd, set_batch_size(usize) => batch_size);

    fn uses_clip_bound(&self) -> bool {
        false
    }
    fn set_clip_bound(&mut self, b: f64) -> Result<()> {
        Err(Error::invalid(
            "clip_bound",
            b,
            "DP Barker's clip bound is fixed at 0.99·√b/(nT)",
        ))
    }
    /// Default: Theorem 7's RDP bound; `rdp-exact` and `pld` (certified) are the others.
    fn set_accountant(&mut self, method: Option<AccountantKind>) -> Result<()> {
        let method = method.map(AccountantKind::numerical_pld);
        if let Some(m) = method.filter(|m| {
            !matches!(
                m,
                AccountantKind::Rdp | AccountantKind::RdpExact | AccountantKind::CertifiedPld
            )
        }) {
            return Err(Error::invalid(
                "accountant",
                m.key(),
                "dp-barker supports --accountant rdp (Theorem 7), rdp-exact or pld",
            ));
        }
        self.accountant = method.unwrap_or(AccountantKind::Rdp);
        Ok(())
    }

    /// The thesis' `barker` table, tuned for the four flat and tempered bananas only.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        use Experiment::*;
        let (s, b) = match experiment {
            EasyBanana2d => (0.0008, 1300),
            EasyBanana10d => (0.0008, 2600),
            TemperedBanana2d => (0.12, 1300),
            TemperedBanana10d => (0.04, 2600),
            _ => return Err(untuned(self.key(), experiment)),
        };
        let sd = per_coordinate(s, experiment.dim());
        Ok(Box::new(DpBarker::builder().proposal_sd(sd).batch_size(b)))
    }

    /// Batches of `1300·⌈d/5⌉` rows (at most `n`; the thesis' 1300 at d = 2 and 2600 at
    /// d = 10), the exact Rényi accountant, and the fallback first step.
    fn derive_auto(&self, p: &AutoInputs) -> Result<(Box<dyn Sampler>, DerivedSettings)> {
        let batch = p.n.min(1300 * p.d.div_ceil(5).max(1));
        let step = p.fallback_step;
        let s = DpBarker::builder()
            .batch_size(batch)
            .proposal_sd(p.shaped(step))
            .accountant(AccountantKind::RdpExact);
        let derived = DerivedSettings {
            target_iterations: 0,
            tau: None,
            tau_g: None,
            batch_size: Some(batch),
            initial_step: step,
        };
        Ok((Box::new(s), derived))
    }
}
