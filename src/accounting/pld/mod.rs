//! [`Pld`]: the tight Gaussian privacy loss distribution (closed form), subsampled events
//! delegated to the Fourier accountant.

mod gaussian;

pub use gaussian::{gaussian_budget, gaussian_mu, pld_delta, pld_epsilon};
pub(crate) use gaussian::{pld_delta_unchecked, pld_epsilon_unchecked};

use super::accountant::{Accountant, unsupported, walk};
use super::fourier::Fourier;
use crate::accounting::accountant_kind::AccountantKind;
use crate::accounting::event::PrivacyEvent;
use crate::error::{Error, Result, check};

/// Tight privacy loss distribution accountant.
///
/// Compositions of bare `Gaussian` events use the closed form `N(μ, 2μ)` (thesis Theorems 4, 6,
/// 12), exact up to round-off. `PoissonSampled{Gaussian}` and `SampledWithoutReplacement{Gaussian}`
/// events are delegated to the [`Fourier`] accountant (default grid nx = 1e6, L = 20). Mixing
/// bare Gaussians with subsampled events in one accountant is not supported (the event is
/// rejected, state unchanged).
#[derive(Clone, Debug, Default)]
pub struct Pld {
    mu: f64,
    fourier: Fourier,
}

impl Pld {
    /// An empty PLD accountant.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Pld};
    /// let mut acc = Pld::new();
    /// acc.compose(&PrivacyEvent::gaussian(1.0))?;
    /// // tests/data/accounting case gauss_pld_04 (mpmath 60 digits): 9.8127058268469559e-23
    /// assert!((acc.delta(10.0)? / 9.8127058268469559e-23 - 1.0).abs() < 1e-9);
    /// assert!(acc.delta(f64::NAN).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Total μ of the bare Gaussian events.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    fn split(&self, event: &PrivacyEvent) -> Result<(f64, bool)> {
        let mut mu = 0.0;
        let mut sampled = false;
        walk(event, 1.0, &mut |e, c| {
            match e {
                PrivacyEvent::Gaussian { noise_multiplier } => {
                    let s = check::positive("noise_multiplier", *noise_multiplier)?;
                    mu += c * 0.5 / (s * s);
                }
                PrivacyEvent::PoissonSampled { .. }
                | PrivacyEvent::SampledWithoutReplacement { .. } => sampled = true,
                other => return Err(unsupported(AccountantKind::Pld.label(), other)),
            }
            Ok(())
        })?;
        if sampled && (mu > 0.0 || self.mu > 0.0) {
            return Err(Error::UnsupportedEvent {
                accountant: AccountantKind::Pld.label(),
                event: format!(
                    "{event} (mixes bare Gaussian and subsampled events; account them separately)"
                ),
            });
        }
        if sampled {
            self.fourier.check(event)?;
        }
        if mu > 0.0 && !self.fourier.is_empty() {
            return Err(Error::UnsupportedEvent {
                accountant: AccountantKind::Pld.label(),
                event: format!("{event} (bare Gaussian after subsampled events)"),
            });
        }
        Ok((mu, sampled))
    }
}

impl Accountant for Pld {
    fn name(&self) -> &'static str {
        AccountantKind::Pld.label()
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.split(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()> {
        let (mu, sampled) = self.split(event)?;
        if sampled {
            self.fourier.compose(event)?;
        }
        self.mu += mu;
        Ok(())
    }
    fn boxed(&self) -> Box<dyn Accountant> {
        Box::new(self.clone())
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        let d = check::delta("delta", delta)?;
        if !self.fourier.is_empty() {
            return self.fourier.epsilon(d);
        }
        pld_epsilon_unchecked(self.mu, d)
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        let e = check::non_negative("epsilon", epsilon)?;
        if !self.fourier.is_empty() {
            return self.fourier.delta(e);
        }
        Ok(pld_delta_unchecked(self.mu, e))
    }
}
