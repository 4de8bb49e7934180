//! [`Releases`]: what one chain of a DP sampler releases, as privacy events: an event per
//! iteration and an event once per chain (e.g. DP HMC's initial gradient under gradient re-use).
//! Every DP sampler states its releases in one place (its `privacy` function), and everything
//! that needs its privacy cost (Algorithm 2, the ledger of a run, the CLI) composes them.

use serde::{Deserialize, Serialize};

use super::event::PrivacyEvent;

/// The privacy events of one chain.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Releases, Zcdp};
/// // DP HMC with gradient re-use: each iteration releases a ratio and L = 10 gradients, and
/// // each chain one initial gradient.
/// let r = Releases::per_iteration(PrivacyEvent::compose(vec![
///     PrivacyEvent::gaussian(2.0),
///     PrivacyEvent::gaussian(4.0).repeat(10),
/// ]))
/// .with_once_per_chain(PrivacyEvent::gaussian(4.0));
/// let mut acc = Zcdp::new();
/// acc.compose(&r.for_chains(3, 2))?;
/// // ρ = 2 chains × (1/32 + 3 × (1/8 + 10/32))
/// assert!((acc.rho() - 2.0 * (1.0 / 32.0 + 3.0 * (0.125 + 10.0 / 32.0))).abs() < 1e-12);
/// // events an accountant cannot evaluate are rejected when composed
/// let bad = Releases::per_iteration(PrivacyEvent::NonPrivate);
/// assert!(acc.compose(&bad.for_chains(1, 1)).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Releases {
    /// Released by every iteration.
    pub iteration: PrivacyEvent,
    /// Released once per chain, before its first iteration ([`PrivacyEvent::NoOp`] for most
    /// samplers).
    pub once_per_chain: PrivacyEvent,
}

impl Releases {
    /// `event` every iteration, nothing else.
    pub fn per_iteration(event: PrivacyEvent) -> Self {
        Releases {
            iteration: event,
            once_per_chain: PrivacyEvent::NoOp,
        }
    }

    /// Also release `event` once per chain.
    #[must_use]
    pub fn with_once_per_chain(mut self, event: PrivacyEvent) -> Self {
        self.once_per_chain = event;
        self
    }

    /// Whether every chain releases only its iterations (so `C` chains of `k` iterations are
    /// `C·k` iterations of one chain).
    pub fn is_homogeneous(&self) -> bool {
        self.once_per_chain == PrivacyEvent::NoOp
    }

    /// The event of one chain of `iterations` iterations.
    pub fn for_chain(&self, iterations: u64) -> PrivacyEvent {
        if self.is_homogeneous() {
            return self.iteration.clone().repeat(iterations);
        }
        PrivacyEvent::compose(vec![
            self.once_per_chain.clone(),
            self.iteration.clone().repeat(iterations),
        ])
    }

    /// The event of `chains` chains of `iterations` iterations each.
    pub fn for_chains(&self, iterations: u64, chains: u64) -> PrivacyEvent {
        if self.is_homogeneous() {
            // one flat repetition: C·k iterations of one mechanism
            return self
                .iteration
                .clone()
                .repeat(iterations.saturating_mul(chains));
        }
        self.for_chain(iterations).repeat(chains)
    }
}
