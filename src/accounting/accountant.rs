//! Privacy accountants behind one trait, [`Accountant`] (dp_accounting's `PrivacyAccountant`):
//! compose [`PrivacyEvent`]s, then ask `epsilon(delta)` or `delta(epsilon)`, or how many
//! iterations of a sampler's [`Releases`] still fit ([`Accountant::max_iterations`]).
//!
//! One folder per accountant, each with its formulas beside it:
//!
//! | accountant | folder |
//! |---|---|
//! | [`Zcdp`](super::Zcdp) (Theorem 1 or CKS20 conversion) | `zcdp/` (`bounds.rs`, `discrete_gaussian.rs`) |
//! | [`Rdp`](super::Rdp) (Gaussian, subsampled, DP Barker) | `rdp/` (`bounds.rs`; DP Barker's in `barker/`) |
//! | [`Pld`](super::Pld) (tight Gaussian PLD, closed form) | `pld/` (`gaussian.rs`) |
//! | [`Fourier`](super::Fourier) (Koskela et al.) | `fourier/` (`accountant.rs`, the FFT engine) |
//! | [`CertifiedPld`](super::CertifiedPld) (two-sided certified PLD bounds) | `certified/` (`engine/`) |
//! | DP Barker: Theorem 7, its exact divergence, its PLD | `barker/` (`mod.rs`, `exact.rs`, `pld.rs`) |

use super::algorithm2;
use super::event::PrivacyEvent;
use super::releases::Releases;
use crate::error::{Error, Result, check};

/// A privacy accountant.
///
/// Rules (as dp_accounting): `compose` first checks the whole event and only then applies it,
/// so a rejected event leaves the state unchanged; an unsupported (sub-)event gives
/// [`Error::UnsupportedEvent`] naming that sub-event; with nothing composed, ε = 0 and δ = 0.
/// The trait is dyn-compatible: samplers hold a `Box<dyn Accountant>`.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{Accountant, Pld, PrivacyEvent, Rdp, Zcdp};
/// let event = PrivacyEvent::gaussian(10.0).repeat(100);
/// let mut accountants: Vec<Box<dyn Accountant>> =
///     vec![Box::new(Zcdp::new()), Box::new(Rdp::new()), Box::new(Pld::new())];
/// for a in &mut accountants {
///     a.compose(&event)?;
/// }
/// let eps: Vec<f64> = accountants.iter().map(|a| a.epsilon(1e-5)).collect::<Result<_, _>>()?;
/// assert!(eps[2] < eps[0] && eps[2] < eps[1]); // the tight PLD is below zCDP and RDP
/// // an event an accountant cannot evaluate is an error naming it, state unchanged
/// assert!(accountants[2].compose(&PrivacyEvent::NonPrivate).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub trait Accountant: std::fmt::Debug + Send + Sync {
    /// Short name used in messages and tables.
    fn name(&self) -> &'static str;
    /// `Ok` if `event` can be composed (parameters valid, every sub-event supported).
    ///
    /// # Errors
    /// [`Error::UnsupportedEvent`] naming the offending sub-event, or
    /// [`Error::InvalidParameter`] for invalid parameters inside the event.
    fn check(&self, event: &PrivacyEvent) -> Result<()>;
    /// Whether `event` can be composed.
    fn supports(&self, event: &PrivacyEvent) -> bool {
        self.check(event).is_ok()
    }
    /// Compose `event` (all or nothing).
    ///
    /// # Errors
    /// As [`Accountant::check`]; the state is unchanged on error.
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()>;
    /// Smallest ε this accountant certifies at `delta`.
    ///
    /// # Errors
    /// `delta` outside (0, 1), or a numerical failure.
    fn epsilon(&self, delta: f64) -> Result<f64>;
    /// Smallest δ this accountant certifies at `epsilon`.
    ///
    /// # Errors
    /// `epsilon` negative or not finite, or a numerical failure.
    fn delta(&self, epsilon: f64) -> Result<f64>;
    /// A copy of this accountant, state included.
    fn boxed(&self) -> Box<dyn Accountant>;
    /// What Algorithm 2 compares with a budget (ε, δ), increasing in the number of
    /// compositions: δ(ε) by default; accountants whose native answer is ε (RDP, zCDP with
    /// Theorem 1) give ε(δ).
    ///
    /// # Errors
    /// As [`Accountant::delta`] / [`Accountant::epsilon`].
    fn budget_measure(&self, epsilon: f64, _delta: f64) -> Result<Measure> {
        Ok(Measure::Delta(self.delta(epsilon)?))
    }
    /// The largest number of iterations `k` per chain such that this accountant's state plus
    /// `chains` chains of `releases` (each: its once-per-chain event, then `k` iterations)
    /// stays within (ε, δ): Algorithm 2 ([`algorithm2::search`]). `Ok(None)` if the budget
    /// allows more than [`MAX_ITERATIONS`](super::MAX_ITERATIONS) iterations; `Ok(Some(0))` if
    /// it allows none. Accountants override it only to evaluate the same search faster.
    ///
    /// # Errors
    /// An event this accountant cannot evaluate, or a numerical failure.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, Pld, PrivacyEvent, Releases};
    /// // DP penalty, τ = 0.1, n = 1e5 (noise multiplier τ√n): 56 iterations at ε = 1, δ = 1e-6
    /// let releases = Releases::per_iteration(PrivacyEvent::gaussian(0.1 * 1e5f64.sqrt()));
    /// assert_eq!(Pld::new().max_iterations(&releases, 1, 1.0, 1e-6)?, Some(56));
    /// // two chains share the budget
    /// assert_eq!(Pld::new().max_iterations(&releases, 2, 1.0, 1e-6)?, Some(28));
    /// assert!(Pld::new().max_iterations(&releases, 1, -1.0, 1e-6).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    fn max_iterations(
        &self,
        releases: &Releases,
        chains: u64,
        epsilon: f64,
        delta: f64,
    ) -> Result<Option<u64>> {
        algorithm2::search(&*self.boxed(), releases, chains, epsilon, delta)
    }
}

/// The quantity an accountant compares with a budget (ε, δ) (see
/// [`Accountant::budget_measure`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    /// δ at the budget's ε, compared with its δ.
    Delta(f64),
    /// ε at the budget's δ, compared with its ε.
    Epsilon(f64),
}

impl Measure {
    /// The measured value.
    pub fn value(self) -> f64 {
        match self {
            Measure::Delta(v) | Measure::Epsilon(v) => v,
        }
    }
    /// The part of the budget it is compared with.
    pub fn target(self, epsilon: f64, delta: f64) -> f64 {
        match self {
            Measure::Delta(_) => delta,
            Measure::Epsilon(_) => epsilon,
        }
    }
    /// `"delta"` or `"epsilon"`.
    pub fn quantity(self) -> &'static str {
        match self {
            Measure::Delta(_) => "delta",
            Measure::Epsilon(_) => "epsilon",
        }
    }
}

impl Clone for Box<dyn Accountant> {
    fn clone(&self) -> Self {
        self.boxed()
    }
}

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

/// [`Error::UnsupportedEvent`] for `event`.
pub(crate) fn unsupported(accountant: &'static str, event: &PrivacyEvent) -> Error {
    Error::UnsupportedEvent {
        accountant,
        event: event.to_string(),
    }
}

/// Validate the sampling parameters of a WOR event; returns q = b/n.
pub(crate) fn wor_rate(n: u64, batch_size: u64) -> Result<f64> {
    if n == 0 {
        return Err(Error::invalid("n", n, "must be at least 1"));
    }
    if batch_size == 0 || batch_size > n {
        return Err(Error::invalid(
            "batch_size",
            batch_size,
            format!("must be in 1..=n (n = {n})"),
        ));
    }
    Ok(batch_size as f64 / n as f64)
}

/// The noise multiplier of a `Gaussian` inner event, validated; `None` for other events.
pub(crate) fn inner_gaussian(event: &PrivacyEvent) -> Option<Result<f64>> {
    match event {
        PrivacyEvent::Gaussian { noise_multiplier } => {
            Some(check::positive("noise_multiplier", *noise_multiplier))
        }
        _ => None,
    }
}

/// The dp_accounting conformance suite (STYLE §4.7.3), run for every accountant:
/// no events → ε = 0 and δ = 0; a nested unsupported event errors, names that sub-event and
/// leaves the state unchanged; ε is monotone in the number of compositions;
/// `delta(epsilon(δ)) ≈ δ` (and never above δ by more than `rel_tol`).
#[cfg(test)]
pub(crate) fn conformance<A: Accountant>(
    make: impl Fn() -> A,
    supported: PrivacyEvent,
    unsupported_inner: PrivacyEvent,
    rel_tol: f64,
) {
    let empty = make();
    assert_eq!(
        empty.epsilon(1e-6).unwrap(),
        0.0,
        "{}: empty ε",
        empty.name()
    );
    assert_eq!(empty.delta(1.0).unwrap(), 0.0, "{}: empty δ", empty.name());

    let mut acc = make();
    acc.compose(&supported).unwrap();
    let before = acc.epsilon(1e-6).unwrap();
    let nested = PrivacyEvent::compose(vec![
        supported.clone(),
        PrivacyEvent::compose(vec![unsupported_inner.clone()]),
    ]);
    assert!(!acc.supports(&nested));
    match acc.compose(&nested).err() {
        Some(Error::UnsupportedEvent { event, .. }) => assert!(
            unsupported_inner.to_string().contains(&event),
            "{}: error names {event}, not a part of {unsupported_inner}",
            acc.name()
        ),
        other => panic!("{}: expected UnsupportedEvent, got {other:?}", acc.name()),
    }
    assert_eq!(
        acc.epsilon(1e-6).unwrap(),
        before,
        "{}: state changed",
        acc.name()
    );

    let mut last = before;
    for _ in 0..4 {
        acc.compose(&supported).unwrap();
        let e = acc.epsilon(1e-6).unwrap();
        assert!(e >= last, "{}: ε not monotone ({e} < {last})", acc.name());
        last = e;
    }
    for &d in &[1e-8, 1e-5, 1e-2] {
        let e = acc.epsilon(d).unwrap();
        let back = acc.delta(e).unwrap();
        assert!(
            back <= d * (1.0 + rel_tol) && back >= d * (1.0 - rel_tol),
            "{}: δ(ε(δ)) = {back} vs {d}",
            acc.name()
        );
    }
}
