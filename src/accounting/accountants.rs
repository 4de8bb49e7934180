//! Closed-form accountants implementing [`Accountant`]: [`Zcdp`], [`Rdp`] and [`Pld`] (tight
//! Gaussian PLD; subsampled events delegated to the Fourier accountant).

use super::accountant::{Accountant, inner_gaussian, unsupported, wor_rate};
use super::event::PrivacyEvent;
use super::fourier_events::Fourier;
use super::gaussian::{pld_delta_unchecked, pld_epsilon_unchecked};
use super::rdp::{
    RdpConversion, WorBound, integer_orders, poisson_rdp, rdp_to_delta, rdp_to_epsilon, wor_rdp,
};
use super::zcdp::{zcdp_delta, zcdp_epsilon};
use crate::error::{Error, Result, check};

/// Walk `event`, multiplying counts; `leaf(event, count)` handles everything except `NoOp`,
/// `Composed` and `SelfComposed`.
pub(crate) fn walk(
    event: &PrivacyEvent,
    count: f64,
    leaf: &mut impl FnMut(&PrivacyEvent, f64) -> Result<()>,
) -> Result<()> {
    match event {
        PrivacyEvent::NoOp => Ok(()),
        PrivacyEvent::Composed(v) => v.iter().try_for_each(|e| walk(e, count, leaf)),
        PrivacyEvent::SelfComposed { event, count: c } => walk(event, count * *c as f64, leaf),
        other => leaf(other, count),
    }
}

/// zCDP accountant (Bun & Steinke 2016): ρ adds up; converted with the thesis' Theorem 1,
/// `ε = ρ + 2√(ρ ln 1/δ)` (and its inverse in δ).
///
/// Supports `Gaussian` (ρ = 1/(2σ²)), `Zcdp`, `NoOp`, `Composed`, `SelfComposed`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Zcdp {
    rho: f64,
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
        "zCDP"
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.total(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<&mut Self> {
        self.rho += self.total(event)?;
        Ok(self)
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        let d = check::delta("delta", delta)?;
        Ok(zcdp_epsilon(self.rho, d))
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        let e = check::non_negative("epsilon", epsilon)?;
        Ok(zcdp_delta(self.rho, e))
    }
}

/// Rényi DP accountant over a grid of orders.
///
/// Supports `Gaussian` (α/(2σ²)), `Zcdp` (ρα), `PoissonSampled{Gaussian}` (Mironov–Talwar–Zhang),
/// `SampledWithoutReplacement{Gaussian}` (WBK19 Theorem 9 as thesis Theorem 8; integer orders
/// only, other orders get +∞), `NoOp`, `Composed`, `SelfComposed`. Default orders: the integers
/// 2..=256 and the thesis' Theorem 1 conversion.
#[derive(Clone, Debug, PartialEq)]
pub struct Rdp {
    orders: Vec<f64>,
    rdp: Vec<f64>,
    conversion: RdpConversion,
    wor: WorBound,
}

impl Default for Rdp {
    fn default() -> Self {
        let orders = integer_orders(2, 256);
        let rdp = vec![0.0; orders.len()];
        Rdp {
            orders,
            rdp,
            conversion: RdpConversion::Classic,
            wor: WorBound::Theorem9,
        }
    }
}

impl Rdp {
    /// RDP accountant on the integer orders 2..=256 with the classic (Theorem 1) conversion.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Rdp};
    /// let mut acc = Rdp::new();
    /// acc.compose(&PrivacyEvent::gaussian(10.0).repeat(100))?;
    /// // tests/data/accounting case gauss_rdp_opt_02 (mpmath): 5.3025850929940457 at α = 6
    /// let (eps, order) = acc.epsilon_and_order(1e-5)?;
    /// assert!((eps - 5.3025850929940457).abs() < 1e-12);
    /// assert_eq!(order, 6.0);
    /// assert!(acc.epsilon(2.0).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// RDP accountant on custom orders (each finite and > 1).
    ///
    /// # Errors
    /// An order ≤ 1 or not finite, or an empty list.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{dp_accounting_orders, Rdp};
    /// let acc = Rdp::with_orders(dp_accounting_orders())?;
    /// assert_eq!(acc.orders().len(), 156);
    /// assert!(Rdp::with_orders(vec![0.5]).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn with_orders(orders: Vec<f64>) -> Result<Self> {
        if orders.is_empty() {
            return Err(Error::invalid(
                "orders",
                "[]",
                "give at least one order > 1",
            ));
        }
        for &a in &orders {
            if !(a.is_finite() && a > 1.0 && a <= super::rdp::MAX_RDP_ORDER) {
                return Err(Error::invalid(
                    "orders",
                    a,
                    "every order must be finite, > 1 and at most 10000",
                ));
            }
        }
        let rdp = vec![0.0; orders.len()];
        Ok(Rdp {
            orders,
            rdp,
            ..Self::default()
        })
    }

    /// Conversion to (ε, δ) (default [`RdpConversion::Classic`], the thesis' Theorem 1).
    #[must_use]
    pub fn conversion(mut self, conversion: RdpConversion) -> Self {
        self.conversion = conversion;
        self
    }

    /// Form of Theorem 9 for sampling without replacement (default [`WorBound::Theorem9`]).
    /// Applies to events composed afterwards.
    #[must_use]
    pub fn wor_bound(mut self, bound: WorBound) -> Self {
        self.wor = bound;
        self
    }

    /// The orders.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// The accumulated RDP at each order.
    pub fn rdp(&self) -> &[f64] {
        &self.rdp
    }

    /// (ε, optimal order) at `delta`.
    ///
    /// # Errors
    /// `delta` outside (0, 1).
    pub fn epsilon_and_order(&self, delta: f64) -> Result<(f64, f64)> {
        let d = check::delta("delta", delta)?;
        if self.rdp.iter().all(|&r| r == 0.0) {
            return Ok((0.0, self.orders[0]));
        }
        Ok(rdp_to_epsilon(&self.orders, &self.rdp, d, self.conversion))
    }

    /// (δ, optimal order) at `epsilon`.
    ///
    /// # Errors
    /// `epsilon` negative or not finite.
    pub fn delta_and_order(&self, epsilon: f64) -> Result<(f64, f64)> {
        let e = check::non_negative("epsilon", epsilon)?;
        if self.rdp.iter().all(|&r| r == 0.0) {
            return Ok((0.0, self.orders[0]));
        }
        Ok(rdp_to_delta(&self.orders, &self.rdp, e, self.conversion))
    }

    /// Add `count` times the per-release RDP curve `curve(α)` at every order (all or nothing):
    /// for mechanisms without a [`PrivacyEvent`] variant, e.g. a subsampled Gaussian given by
    /// its rate q rather than (n, b).
    ///
    /// # Errors
    /// Errors of `curve` (state unchanged), or a negative or NaN value.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{wor_subsampled_gaussian_rdp, Accountant, Rdp, WorBound};
    /// let mut acc = Rdp::new();
    /// acc.compose_curve(|a| wor_subsampled_gaussian_rdp(0.01, 0.7f64.sqrt(), a as u32, WorBound::Theorem9), 1000)?;
    /// // tests/data/accounting case sub_rdp_wor_eps_01 (mpmath): 6.101430652196883 at α = 5
    /// assert!((acc.epsilon(1e-6)? - 6.101430652196883).abs() < 1e-9);
    /// assert!(acc.compose_curve(|_| Ok(f64::NAN), 1).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn compose_curve(
        &mut self,
        curve: impl Fn(f64) -> Result<f64>,
        count: u64,
    ) -> Result<&mut Self> {
        let mut inc = Vec::with_capacity(self.orders.len());
        for &a in &self.orders {
            let r = curve(a)?;
            if r.is_nan() || r < 0.0 {
                return Err(Error::Numerical {
                    what: "Rdp::compose_curve",
                    reason: format!("RDP curve gave {r} at order {a}; it must be >= 0"),
                });
            }
            inc.push(if r == 0.0 { 0.0 } else { count as f64 * r });
        }
        for (x, i) in self.rdp.iter_mut().zip(inc) {
            *x += i;
        }
        Ok(self)
    }

    fn increments(&self, event: &PrivacyEvent) -> Result<Vec<f64>> {
        let mut inc = vec![0.0; self.orders.len()];
        let orders = &self.orders;
        let wor = self.wor;
        walk(event, 1.0, &mut |e, c| {
            let per: Box<dyn Fn(f64) -> f64> = match e {
                PrivacyEvent::Gaussian { noise_multiplier } => {
                    let s = check::positive("noise_multiplier", *noise_multiplier)?;
                    Box::new(move |a| a / (2.0 * s * s))
                }
                PrivacyEvent::Zcdp { rho } => {
                    let r = check::non_negative("rho", *rho)?;
                    Box::new(move |a| a * r)
                }
                PrivacyEvent::PoissonSampled { q, event: inner } => {
                    let q = check::rate("q", *q)?;
                    let s = inner_gaussian(inner).ok_or_else(|| unsupported("RDP", inner))??;
                    Box::new(move |a| poisson_rdp(q, s, a))
                }
                PrivacyEvent::SampledWithoutReplacement {
                    n,
                    batch_size,
                    event: inner,
                } => {
                    let q = wor_rate(*n, *batch_size)?;
                    let s = inner_gaussian(inner).ok_or_else(|| unsupported("RDP", inner))??;
                    Box::new(move |a: f64| {
                        if a.fract() == 0.0 && (2.0..=super::rdp::MAX_RDP_ORDER).contains(&a) {
                            wor_rdp(q, s, a as u32, wor)
                        } else {
                            f64::INFINITY
                        }
                    })
                }
                other => return Err(unsupported("RDP", other)),
            };
            for (x, &a) in inc.iter_mut().zip(orders) {
                let r = per(a);
                *x += if r == 0.0 { 0.0 } else { c * r };
            }
            Ok(())
        })?;
        Ok(inc)
    }
}

impl Accountant for Rdp {
    fn name(&self) -> &'static str {
        "RDP"
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.increments(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<&mut Self> {
        let inc = self.increments(event)?;
        for (r, i) in self.rdp.iter_mut().zip(inc) {
            *r += i;
        }
        Ok(self)
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        Ok(self.epsilon_and_order(delta)?.0)
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        Ok(self.delta_and_order(epsilon)?.0)
    }
}

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
                other => return Err(unsupported("PLD", other)),
            }
            Ok(())
        })?;
        if sampled && (mu > 0.0 || self.mu > 0.0) {
            return Err(Error::UnsupportedEvent {
                accountant: "PLD",
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
                accountant: "PLD",
                event: format!("{event} (bare Gaussian after subsampled events)"),
            });
        }
        Ok((mu, sampled))
    }
}

impl Accountant for Pld {
    fn name(&self) -> &'static str {
        "PLD"
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.split(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<&mut Self> {
        let (mu, sampled) = self.split(event)?;
        if sampled {
            self.fourier.compose(event)?;
        }
        self.mu += mu;
        Ok(self)
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

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;
    use crate::accounting::accountant::conformance;

    #[test]
    fn conformance_zcdp() {
        conformance(
            Zcdp::new,
            PrivacyEvent::gaussian(3.0),
            PrivacyEvent::gaussian(1.0).poisson(0.1),
            1e-9,
        );
    }

    #[test]
    fn conformance_rdp() {
        conformance(
            Rdp::new,
            PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(100),
            PrivacyEvent::NonPrivate,
            1e-9,
        );
        conformance(
            Rdp::new,
            PrivacyEvent::gaussian(1.0)
                .without_replacement(1000, 10)
                .repeat(100),
            PrivacyEvent::gaussian(1.0).poisson(0.1).poisson(0.1),
            1e-9,
        );
    }

    #[test]
    fn conformance_pld() {
        conformance(
            Pld::new,
            PrivacyEvent::gaussian(3.0),
            PrivacyEvent::NonPrivate,
            1e-8,
        );
    }

    #[test]
    fn tight_below_zcdp_and_rdp() {
        let e = PrivacyEvent::gaussian(2.0).repeat(50);
        let (mut z, mut r, mut p) = (Zcdp::new(), Rdp::new(), Pld::new());
        z.compose(&e).unwrap();
        r.compose(&e).unwrap();
        p.compose(&e).unwrap();
        for d in [1e-9, 1e-6, 1e-3] {
            let (ez, er, ep) = (
                z.epsilon(d).unwrap(),
                r.epsilon(d).unwrap(),
                p.epsilon(d).unwrap(),
            );
            assert!(ep <= ez && ep <= er, "δ={d}: pld {ep} zcdp {ez} rdp {er}");
        }
    }
}
