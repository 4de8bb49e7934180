//! The `Accountant` trait (dp_accounting's `PrivacyAccountant`): compose [`PrivacyEvent`]s, then
//! ask `epsilon(delta)` or `delta(epsilon)`.

use super::event::PrivacyEvent;
use crate::error::{Error, Result, check};

/// A privacy accountant.
///
/// Rules (as dp_accounting): `compose` first checks the whole event and only then applies it,
/// so a rejected event leaves the state unchanged; an unsupported (sub-)event gives
/// [`Error::UnsupportedEvent`] naming that sub-event; with nothing composed, ε = 0 and δ = 0.
pub trait Accountant {
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
    fn compose(&mut self, event: &PrivacyEvent) -> Result<&mut Self>;
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
