//! `PrivacyEvent`: what a computation released, in the shape of dp_accounting's `DpEvent`.
//!
//! Conventions (never change what a variant means; add a variant instead):
//! * `Gaussian { noise_multiplier }`: one Gaussian release with noise std ÷ l2 sensitivity =
//!   `noise_multiplier`, the sensitivity being taken under the relation of the enclosing
//!   sampling event (add/remove for `PoissonSampled`, substitute for
//!   `SampledWithoutReplacement`; either for a bare Gaussian, whose guarantee then holds for the
//!   relation its sensitivity was computed under).
//! * `SampledWithoutReplacement`: a uniformly random batch of `batch_size` of the `n` rows, the
//!   substitute (replace-one) relation; the inner noise multiplier is std ÷ the statistic's
//!   *substitute* sensitivity c (the thesis' c of Theorem 8). The Fourier accountant evaluates
//!   its substitute pair `(1−q)N(0,σ²)+qN(±1,σ²)` with σ = that multiplier, i.e. it treats c as
//!   the per-record bound (pair at ±c): conservative, exactly the thesis' call (THESIS-NOTES §7).
//!   RDP uses WBK19 Theorem 9 with c directly.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A privacy-relevant release, composable into an [`Accountant`](super::Accountant).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum PrivacyEvent {
    /// Nothing was released.
    NoOp,
    /// A release without any privacy guarantee (every accountant rejects it).
    NonPrivate,
    /// A Gaussian mechanism with noise std ÷ l2 sensitivity = `noise_multiplier`.
    Gaussian {
        /// Noise standard deviation ÷ sensitivity.
        noise_multiplier: f64,
    },
    /// A Laplace mechanism with noise scale ÷ l1 sensitivity = `noise_multiplier` (only the
    /// [`CertifiedPld`](super::CertifiedPld) accountant evaluates it).
    Laplace {
        /// Noise scale b ÷ l1 sensitivity.
        noise_multiplier: f64,
    },
    /// A mechanism known to be ρ-zCDP.
    Zcdp {
        /// The zCDP parameter ρ.
        rho: f64,
    },
    /// `event` applied to a Poisson subsample with rate `q` (add/remove relation).
    PoissonSampled {
        /// Sampling probability of each row.
        q: f64,
        /// The mechanism run on the sample.
        event: Box<PrivacyEvent>,
    },
    /// `event` applied to a Poisson subsample with rate `q`, under the **substitute** relation
    /// (the changed row's slot is in the sample with probability `q`); the inner noise
    /// multiplier is std ÷ the statistic's substitute sensitivity, and the pair is that of
    /// `SampledWithoutReplacement` with rate `q` (docs/ACCOUNTING.md, "Stochastic-gradient
    /// samplers": a conservative pair, by the argument of THESIS-NOTES §7). The certified PLD
    /// and the Fourier accountants evaluate it.
    PoissonSubstitute {
        /// Sampling probability of each row.
        q: f64,
        /// The mechanism run on the sample.
        event: Box<PrivacyEvent>,
    },
    /// `event` applied to a batch drawn **with replacement** in which each row appears a
    /// Poisson(`mean`) number of times, independently of the other rows (a Poisson-sized batch
    /// of uniform draws), under the substitute relation; the inner noise multiplier is std ÷
    /// the substitute sensitivity of **one** appearance. Charged as the public-label mixture,
    /// over the row's multiplicity `m ≥ 1`, of the substitute pair at rate `1 − e^{−mean}`
    /// with noise multiplier `σ/m` (docs/ACCOUNTING.md, "DP-Fast MH"). Only the certified PLD
    /// accountant evaluates it.
    PoissonMultiplicity {
        /// Expected number of appearances of one row in a batch.
        mean: f64,
        /// The mechanism run on the batch.
        event: Box<PrivacyEvent>,
    },
    /// `event` applied to `batch_size` rows drawn without replacement from `n` (substitute
    /// relation).
    SampledWithoutReplacement {
        /// Number of rows of the data set.
        n: u64,
        /// Batch size.
        batch_size: u64,
        /// The mechanism run on the batch.
        event: Box<PrivacyEvent>,
    },
    /// One DP Barker test (thesis Theorem 7) on a batch of `batch_size` of the `n` rows drawn
    /// without replacement: the Gaussian-plus-correction noise of the Barker acceptance test,
    /// its per-step RDP bound `rd_approx` amplified by WBK19 Theorem 9. Only the
    /// [`Rdp`](super::Rdp) accountant evaluates it.
    BarkerTest {
        /// Number of rows of the data set.
        n: u64,
        /// Batch size (at least 20).
        batch_size: u64,
    },
    /// Several events in sequence (adaptive composition).
    Composed(Vec<PrivacyEvent>),
    /// `event` repeated `count` times.
    SelfComposed {
        /// The repeated event.
        event: Box<PrivacyEvent>,
        /// Number of repetitions.
        count: u64,
    },
}

impl PrivacyEvent {
    /// A Gaussian release with noise std ÷ sensitivity = `noise_multiplier`. Never fails;
    /// accountants validate the parameter when the event is composed.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Zcdp};
    /// let mut acc = Zcdp::new();
    /// acc.compose(&PrivacyEvent::gaussian(1.0).repeat(10))?;
    /// assert_eq!(acc.rho(), 5.0);
    /// // σ must be > 0: rejected at compose time, naming the parameter
    /// let err = acc.compose(&PrivacyEvent::gaussian(0.0)).unwrap_err();
    /// assert!(err.to_string().contains("noise_multiplier"));
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn gaussian(noise_multiplier: f64) -> Self {
        PrivacyEvent::Gaussian { noise_multiplier }
    }

    /// This event run on a Poisson subsample with rate `q`.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Rdp, Zcdp};
    /// let e = PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(100);
    /// let mut rdp = Rdp::new();
    /// rdp.compose(&e)?;
    /// assert!(rdp.epsilon(1e-5)? < 2.0);
    /// // zCDP has no amplification by subsampling: rejected, state unchanged
    /// assert!(Zcdp::new().compose(&e).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn poisson(self, q: f64) -> Self {
        PrivacyEvent::PoissonSampled {
            q,
            event: Box::new(self),
        }
    }

    /// This event run on a Poisson subsample with rate `q`, substitute relation (its noise
    /// multiplier relative to the substitute sensitivity).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, CertifiedPld, PrivacyEvent, Rdp};
    /// let e = PrivacyEvent::gaussian(2.0).poisson_substitute(0.01).repeat(1000);
    /// let mut pld = CertifiedPld::new();
    /// pld.compose(&e)?;
    /// assert!(pld.epsilon(1e-6)? < 2.0);
    /// // RDP has no bound for it: rejected, naming the event
    /// assert!(Rdp::new().compose(&e).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn poisson_substitute(self, q: f64) -> Self {
        PrivacyEvent::PoissonSubstitute {
            q,
            event: Box::new(self),
        }
    }

    /// This event run on a with-replacement batch where each row appears Poisson(`mean`)
    /// times (substitute relation; the noise multiplier relative to one appearance).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, CertifiedPld, Fourier, PrivacyEvent};
    /// let e = PrivacyEvent::gaussian(2.0).poisson_multiplicity(0.01).repeat(1000);
    /// let mut pld = CertifiedPld::new();
    /// pld.compose(&e)?;
    /// let eps = pld.epsilon(1e-6)?;
    /// // a row that can appear twice costs more than one sampled at most once
    /// let mut once = CertifiedPld::new();
    /// once.compose(&PrivacyEvent::gaussian(2.0).poisson_substitute(1.0 - (-0.01f64).exp()).repeat(1000))?;
    /// assert!(eps > once.epsilon(1e-6)?);
    /// // only the certified PLD accountant evaluates it
    /// assert!(Fourier::new().compose(&e).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn poisson_multiplicity(self, mean: f64) -> Self {
        PrivacyEvent::PoissonMultiplicity {
            mean,
            event: Box::new(self),
        }
    }

    /// This event run on `batch_size` of `n` rows drawn without replacement.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Rdp};
    /// let e = PrivacyEvent::gaussian(0.7f64.sqrt()).without_replacement(100_000, 1000);
    /// let mut rdp = Rdp::new();
    /// rdp.compose(&e.clone().repeat(272))?;
    /// assert!(rdp.epsilon(1e-6)? <= 4.0);
    /// // batch larger than n is rejected naming `batch_size`
    /// let bad = PrivacyEvent::gaussian(1.0).without_replacement(10, 20);
    /// assert!(rdp.compose(&bad).unwrap_err().to_string().contains("batch_size"));
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn without_replacement(self, n: u64, batch_size: u64) -> Self {
        PrivacyEvent::SampledWithoutReplacement {
            n,
            batch_size,
            event: Box::new(self),
        }
    }

    /// This event repeated `count` times.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Pld};
    /// let mut pld = Pld::new();
    /// pld.compose(&PrivacyEvent::gaussian(10.0).repeat(100))?;
    /// assert!((pld.epsilon(1e-5)? - 4.3771780956812246).abs() < 1e-9);
    /// assert!(pld.compose(&PrivacyEvent::NonPrivate.repeat(2)).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    #[must_use]
    pub fn repeat(self, count: u64) -> Self {
        PrivacyEvent::SelfComposed {
            event: Box::new(self),
            count,
        }
    }

    /// Several events in sequence.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Zcdp};
    /// let e = PrivacyEvent::compose(vec![PrivacyEvent::gaussian(1.0), PrivacyEvent::gaussian(1.0)]);
    /// let mut acc = Zcdp::new();
    /// acc.compose(&e)?;
    /// assert_eq!(acc.rho(), 1.0);
    /// let bad = PrivacyEvent::compose(vec![PrivacyEvent::gaussian(1.0), PrivacyEvent::NonPrivate]);
    /// assert!(acc.compose(&bad).is_err());
    /// assert_eq!(acc.rho(), 1.0); // unchanged
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn compose(events: Vec<PrivacyEvent>) -> Self {
        PrivacyEvent::Composed(events)
    }

    /// For an event made only of Gaussian mechanisms (and `NoOp`), its total
    /// `μ = Σ_i 1/(2σ_i²)`: the composition is exactly the Gaussian mechanism with that `μ`
    /// (see [`pld_delta`](super::pld_delta)). `None` if any part is not Gaussian.
    ///
    /// ```
    /// use dp_mcmc::accounting::PrivacyEvent;
    /// let e = PrivacyEvent::compose(vec![PrivacyEvent::gaussian(1.0).repeat(4), PrivacyEvent::NoOp]);
    /// assert_eq!(e.gaussian_mu(), Some(2.0));
    /// assert_eq!(PrivacyEvent::Laplace { noise_multiplier: 1.0 }.gaussian_mu(), None);
    /// ```
    pub fn gaussian_mu(&self) -> Option<f64> {
        match self {
            PrivacyEvent::NoOp => Some(0.0),
            PrivacyEvent::Gaussian { noise_multiplier } => {
                Some(0.5 / (noise_multiplier * noise_multiplier))
            }
            PrivacyEvent::SelfComposed { event, count } => {
                Some(*count as f64 * event.gaussian_mu()?)
            }
            PrivacyEvent::Composed(events) => events.iter().map(PrivacyEvent::gaussian_mu).sum(),
            _ => None,
        }
    }
}

impl fmt::Display for PrivacyEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrivacyEvent::NoOp => write!(f, "NoOp"),
            PrivacyEvent::NonPrivate => write!(f, "NonPrivate"),
            PrivacyEvent::Gaussian { noise_multiplier } => {
                write!(f, "Gaussian(noise_multiplier={noise_multiplier})")
            }
            PrivacyEvent::Laplace { noise_multiplier } => {
                write!(f, "Laplace(noise_multiplier={noise_multiplier})")
            }
            PrivacyEvent::Zcdp { rho } => write!(f, "Zcdp(rho={rho})"),
            PrivacyEvent::PoissonSampled { q, event } => {
                write!(f, "PoissonSampled(q={q}, {event})")
            }
            PrivacyEvent::PoissonSubstitute { q, event } => {
                write!(f, "PoissonSubstitute(q={q}, {event})")
            }
            PrivacyEvent::PoissonMultiplicity { mean, event } => {
                write!(f, "PoissonMultiplicity(mean={mean}, {event})")
            }
            PrivacyEvent::SampledWithoutReplacement {
                n,
                batch_size,
                event,
            } => write!(
                f,
                "SampledWithoutReplacement(n={n}, batch_size={batch_size}, {event})"
            ),
            PrivacyEvent::BarkerTest { n, batch_size } => {
                write!(f, "BarkerTest(n={n}, batch_size={batch_size})")
            }
            PrivacyEvent::Composed(v) => write!(f, "Composed({} events)", v.len()),
            PrivacyEvent::SelfComposed { event, count } => {
                write!(f, "SelfComposed({event}, count={count})")
            }
        }
    }
}
