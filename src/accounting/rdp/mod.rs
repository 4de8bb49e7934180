//! [`Rdp`]: Rényi DP over a grid of orders (Gaussian, Poisson- and WOR-subsampled Gaussian, DP
//! Barker's Theorem 7 test).

pub(crate) mod bounds;

pub use bounds::{
    MAX_RDP_ORDER, RdpConversion, WorBound, dp_accounting_orders, gaussian_rdp, integer_orders,
    poisson_subsampled_gaussian_rdp, wor_subsampled_gaussian_rdp,
};

use super::accountant::{Accountant, Measure, inner_gaussian, unsupported, walk, wor_rate};
use crate::accounting::accountant_kind::AccountantKind;
use crate::accounting::barker::{BarkerBound, BarkerRdp};
use crate::accounting::event::PrivacyEvent;
use crate::error::{Error, Result, check};
use bounds::{poisson_rdp, rdp_to_delta, rdp_to_epsilon, wor_rdp};

/// Rényi DP accountant over a grid of orders.
///
/// Supports `Gaussian` (α/(2σ²)), `Zcdp` (ρα), `PoissonSampled{Gaussian}` (Mironov–Talwar–Zhang),
/// `SampledWithoutReplacement{Gaussian}` (WBK19 Theorem 9 as thesis Theorem 8; integer orders
/// only, other orders get +∞), `BarkerTest` (thesis Theorem 7, or the exact divergence with
/// [`Rdp::barker_bound`], at the orders it scans, +∞ elsewhere: use [`Rdp::for_dp_barker`] or
/// [`Rdp::for_dp_barker_with`]), `NoOp`, `Composed`, `SelfComposed`. Default orders: the
/// integers 2..=256 and the thesis' Theorem 1 conversion.
#[derive(Clone, Debug, PartialEq)]
pub struct Rdp {
    orders: Vec<f64>,
    rdp: Vec<f64>,
    conversion: RdpConversion,
    wor: WorBound,
    barker: BarkerBound,
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
            barker: BarkerBound::Theorem7,
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
            if !(a.is_finite() && a > 1.0 && a <= crate::accounting::rdp::MAX_RDP_ORDER) {
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

    /// RDP accountant on the orders DP Barker's Theorem 7 is evaluated at for a batch of
    /// `batch_size` out of `n` rows (α = 3, 4, … below `batch_size/5`, as the thesis code scans
    /// them; see [`BarkerRdp`]), with the Theorem 1 conversion.
    ///
    /// # Errors
    /// As [`BarkerRdp::new`]: `1 ≤ batch_size ≤ n` and `batch_size ≥ 20`.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Rdp};
    /// let mut acc = Rdp::for_dp_barker(1300, 100_000)?;
    /// acc.compose(&PrivacyEvent::BarkerTest { n: 100_000, batch_size: 1300 }.repeat(106))?;
    /// // thesis code (THESIS-NOTES §16): 106 iterations at δ = 1e-6 → ε = 0.99718990917…
    /// assert!((acc.epsilon(1e-6)? - 0.9971899091727385).abs() < 1e-12);
    /// assert!(Rdp::for_dp_barker(10, 100_000).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn for_dp_barker(batch_size: u64, n: u64) -> Result<Self> {
        Self::for_dp_barker_with(batch_size, n, BarkerBound::Theorem7)
    }

    /// [`Rdp::for_dp_barker`] with the per-step bound `bound` for `BarkerTest` events
    /// ([`BarkerBound::Exact`]: `rdp-exact`), on the orders it scans.
    ///
    /// # Errors
    /// As [`BarkerRdp::new`].
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, BarkerBound, PrivacyEvent, Rdp};
    /// let event = PrivacyEvent::BarkerTest { n: 100_000, batch_size: 1300 };
    /// let mut thm7 = Rdp::for_dp_barker(1300, 100_000)?;
    /// let mut exact = Rdp::for_dp_barker_with(1300, 100_000, BarkerBound::Exact)?;
    /// thm7.compose(&event.clone().repeat(106))?;
    /// exact.compose(&event.repeat(106))?;
    /// assert!(exact.epsilon(1e-6)? < thm7.epsilon(1e-6)?);
    /// assert!(Rdp::for_dp_barker_with(10, 100_000, BarkerBound::Exact).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn for_dp_barker_with(batch_size: u64, n: u64, bound: BarkerBound) -> Result<Self> {
        let barker = BarkerRdp::with_bound(batch_size, n, bound)?;
        Ok(Self::with_orders(barker.per_step().0.to_vec())?.barker_bound(bound))
    }

    /// Per-step bound of `BarkerTest` events (default [`BarkerBound::Theorem7`]). Applies to
    /// events composed afterwards.
    #[must_use]
    pub fn barker_bound(mut self, bound: BarkerBound) -> Self {
        self.barker = bound;
        self
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
        let barker_bound = self.barker;
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
                        if a.fract() == 0.0
                            && (2.0..=crate::accounting::rdp::MAX_RDP_ORDER).contains(&a)
                        {
                            wor_rdp(q, s, a as u32, wor)
                        } else {
                            f64::INFINITY
                        }
                    })
                }
                PrivacyEvent::BarkerTest { n, batch_size } => {
                    let barker = BarkerRdp::with_bound(*batch_size, *n, barker_bound)?;
                    Box::new(move |a: f64| barker.step_rdp_at(a))
                }
                other => return Err(unsupported("RDP", other)),
            };
            for (x, &a) in inc.iter_mut().zip(orders) {
                let r = per(a);
                // no release (c = 0) adds nothing, even at an order where the curve is infinite
                *x += if r == 0.0 || c == 0.0 { 0.0 } else { c * r };
            }
            Ok(())
        })?;
        Ok(inc)
    }
}

impl Accountant for Rdp {
    fn name(&self) -> &'static str {
        AccountantKind::Rdp.label()
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.increments(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()> {
        let inc = self.increments(event)?;
        for (r, i) in self.rdp.iter_mut().zip(inc) {
            *r += i;
        }
        Ok(())
    }
    fn boxed(&self) -> Box<dyn Accountant> {
        Box::new(self.clone())
    }
    fn budget_measure(&self, _epsilon: f64, delta: f64) -> Result<Measure> {
        // Theorems 7 and 8 bound ε(δ) (the thesis' Theorem 1 conversion)
        Ok(Measure::Epsilon(self.epsilon(delta)?))
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        Ok(self.epsilon_and_order(delta)?.0)
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        Ok(self.delta_and_order(epsilon)?.0)
    }
}
