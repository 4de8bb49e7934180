//! [`Zcdp`]: zero-concentrated DP, ρ adds up; Theorem 1 or the CKS20 conversion.

mod bounds;
pub(crate) mod discrete_gaussian;

pub use bounds::zcdp_rho_budget;
pub(crate) use bounds::{zcdp_delta, zcdp_epsilon};

use super::accountant::{Accountant, Measure, unsupported, walk};
use crate::accounting::accountant_kind::{AccountantKind, ZCDP_CKS20_LABEL};
use crate::accounting::event::PrivacyEvent;
use crate::error::{Result, check};
use discrete_gaussian::{cks_zcdp_delta, cks_zcdp_epsilon};

/// How a zCDP accountant converts ρ to (ε, δ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ZcdpConversion {
    /// The thesis' Theorem 1, `ε = ρ + 2√(ρ ln 1/δ)` (Theorems 5 and 11).
    #[default]
    Theorem1,
    /// The tighter conversion of Canonne, Kamath & Steinke 2020 (CKS20), used for samplers
    /// with exact discrete Gaussian noise.
    Cks20,
}

/// zCDP accountant (Bun & Steinke 2016): ρ adds up; converted with the thesis' Theorem 1,
/// `ε = ρ + 2√(ρ ln 1/δ)` (and its inverse in δ), or with CKS20
/// ([`ZcdpConversion::Cks20`]).
///
/// Supports `Gaussian` (ρ = 1/(2σ²)), `Zcdp`, `NoOp`, `Composed`, `SelfComposed`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Zcdp {
    rho: f64,
    conversion: ZcdpConversion,
}

impl Zcdp {
    /// An empty zCDP accountant (ρ = 0).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Zcdp};
    /// let mut acc = Zcdp::new();
    /// acc.compose(&PrivacyEvent::gaussian(10.0).repeat(100))?;
    /// // tests/data/accounting case gauss_zcdp_02 (mpmath): 5.2985259121880812
    /// assert!((acc.epsilon(1e-5)? - 5.2985259121880812).abs() < 1e-12);
    /// assert!(acc.epsilon(0.0).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The conversion to (ε, δ) (default [`ZcdpConversion::Theorem1`]).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Zcdp, ZcdpConversion};
    /// let e = PrivacyEvent::Zcdp { rho: 0.5 };
    /// let mut thm1 = Zcdp::new();
    /// thm1.compose(&e)?;
    /// let mut cks = Zcdp::new().conversion(ZcdpConversion::Cks20);
    /// cks.compose(&e)?;
    /// assert!(cks.delta(4.0)? < thm1.delta(4.0)?); // CKS20 is tighter
    /// assert!(cks.compose(&PrivacyEvent::Zcdp { rho: -1.0 }).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn conversion(mut self, conversion: ZcdpConversion) -> Self {
        self.conversion = conversion;
        self
    }

    /// Total ρ.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    fn total(&self, event: &PrivacyEvent) -> Result<f64> {
        let mut rho = 0.0;
        walk(event, 1.0, &mut |e, c| {
            match e {
                PrivacyEvent::Gaussian { noise_multiplier } => {
                    let s = check::positive("noise_multiplier", *noise_multiplier)?;
                    rho += c * 0.5 / (s * s);
                }
                PrivacyEvent::Zcdp { rho: r } => rho += c * check::non_negative("rho", *r)?,
                other => return Err(unsupported("zCDP", other)),
            }
            Ok(())
        })?;
        Ok(rho)
    }
}

impl Accountant for Zcdp {
    fn name(&self) -> &'static str {
        match self.conversion {
            ZcdpConversion::Theorem1 => AccountantKind::Zcdp.label(),
            ZcdpConversion::Cks20 => ZCDP_CKS20_LABEL,
        }
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.total(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()> {
        self.rho += self.total(event)?;
        Ok(())
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        let d = check::delta("delta", delta)?;
        match self.conversion {
            ZcdpConversion::Theorem1 => Ok(zcdp_epsilon(self.rho, d)),
            ZcdpConversion::Cks20 => cks_zcdp_epsilon(self.rho, d),
        }
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        let e = check::non_negative("epsilon", epsilon)?;
        match self.conversion {
            ZcdpConversion::Theorem1 => Ok(zcdp_delta(self.rho, e)),
            ZcdpConversion::Cks20 => cks_zcdp_delta(self.rho, e),
        }
    }
    fn boxed(&self) -> Box<dyn Accountant> {
        Box::new(self.clone())
    }
    fn budget_measure(&self, epsilon: f64, delta: f64) -> Result<Measure> {
        match self.conversion {
            // Theorems 5 and 11 bound ε(δ)
            ZcdpConversion::Theorem1 => Ok(Measure::Epsilon(self.epsilon(delta)?)),
            ZcdpConversion::Cks20 => Ok(Measure::Delta(self.delta(epsilon)?)),
        }
    }
}
