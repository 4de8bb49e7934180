//! The privacy ledger of a run: what each chain released ([`ChainLedger`]), the releases made
//! before the chains ([`EarlierRelease`]), the parts of the cost in the order they were spent
//! ([`LedgerPart`]) and the whole [`Ledger`] that [`PrivacySpent`](super::PrivacySpent) holds.
//! A leaf: it depends on the accounting vocabulary only.

use serde::{Deserialize, Serialize};

use crate::accounting::{PrivacyEvent, Releases};

/// What one chain released: its once-per-chain event and the iterations it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainLedger {
    /// Iterations the chain ran (fewer than planned if `max_time` stopped it).
    pub iterations: u64,
    /// The composed event of the chain.
    pub event: PrivacyEvent,
}

/// A release made from the data before the chains start (a DP initial point, a DP clip bound),
/// shared by every chain. [`RunSettings::spent_before`](super::RunSettings::spent_before) lists them; the budget and the ledger
/// compose them before the chains.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlierRelease {
    /// What it was for (`"initialisation"`, `"clip bound"`).
    pub part: String,
    /// How many noisy statistics it released.
    pub releases: u64,
    /// Its privacy event (all its releases composed).
    pub event: PrivacyEvent,
}

/// One part of a run's privacy cost, in the order it was spent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerPart {
    /// `"initialisation"`, `"clip bound"`, `"warm-up"` or `"sampling"`.
    pub part: String,
    /// The part's share of the run's ε; the shares add up to it. When every release of the run
    /// is Gaussian (the full-data samplers with continuous noise), shares are in proportion to
    /// each part's `μ = Σ 1/(2σ²)`, which adds up exactly under composition; otherwise a part's
    /// share is the ε it adds to the parts before it at the run's δ (marginal cost under the
    /// run's accountant). Either way a part alone costs at least its share.
    pub epsilon_share: f64,
    /// Noisy statistics released: steps for `initialisation`, one histogram for `clip bound`,
    /// iterations (all chains counted, or the largest chain under a per-chain budget) for
    /// `warm-up` and `sampling`.
    pub releases: u64,
    /// The part's privacy event.
    pub event: PrivacyEvent,
}

/// Sets every part's `epsilon_share` in proportion to its Gaussian `μ` (additive and exact
/// under composition), the shares adding up to `epsilon`. Returns `false`, changing nothing,
/// when a part is not Gaussian or nothing was spent: the shares are then marginal costs under
/// the run's accountant ([`LedgerPart::epsilon_share`]).
pub(crate) fn share_by_gaussian_mu(parts: &mut [LedgerPart], epsilon: f64) -> bool {
    let mus: Option<Vec<f64>> = parts.iter().map(|p| p.event.gaussian_mu()).collect();
    let Some(mus) = mus else {
        return false;
    };
    let total: f64 = mus.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return false;
    }
    for (p, mu) in parts.iter_mut().zip(mus) {
        p.epsilon_share = epsilon * mu / total;
    }
    true
}

/// The privacy ledger of a run: what each chain released, the composed event of the whole
/// run, and the releases of one chain it was built from. [`PrivacySpent`](super::PrivacySpent) holds it beside the
/// (ε, δ) it reached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// What one chain releases: per iteration and once.
    pub releases: Option<Releases>,
    /// Iterations each chain was planned to run.
    pub planned_iterations: u64,
    /// One entry per chain, in chain order.
    pub chains: Vec<ChainLedger>,
    /// Everything the run released: the earlier releases and all chains composed.
    pub total: Option<PrivacyEvent>,
    /// The releases before the chains (shared by every chain).
    #[serde(default)]
    pub before: Vec<EarlierRelease>,
    /// The cost part by part (earlier releases, warm-up, sampling), each with its ε share.
    #[serde(default)]
    pub parts: Vec<LedgerPart>,
}

impl Ledger {
    pub(crate) fn new(
        releases: &Releases,
        planned: u64,
        ran: impl IntoIterator<Item = u64>,
        before: &[EarlierRelease],
    ) -> Self {
        let chains: Vec<ChainLedger> = ran
            .into_iter()
            .map(|k| ChainLedger {
                iterations: k,
                event: releases.for_chain(k),
            })
            .collect();
        let total = PrivacyEvent::compose(
            before
                .iter()
                .map(|b| b.event.clone())
                .chain(chains.iter().map(|c| c.event.clone()))
                .collect(),
        );
        Ledger {
            releases: Some(releases.clone()),
            planned_iterations: planned,
            chains,
            total: Some(total),
            before: before.to_vec(),
            parts: Vec::new(),
        }
    }

    /// The composed event a guarantee covers: everything (whole-release budget), or the
    /// earlier releases and the chain that released most (per-chain budget).
    pub(crate) fn guarded_event(&self, per_chain: bool) -> Option<PrivacyEvent> {
        if !per_chain {
            return self.total.clone();
        }
        let worst = self.chains.iter().max_by_key(|c| c.iterations)?;
        Some(PrivacyEvent::compose(
            self.before
                .iter()
                .map(|b| b.event.clone())
                .chain([worst.event.clone()])
                .collect(),
        ))
    }

    /// The parts in spending order: earlier releases, warm-up (the first `warmup` iterations of
    /// each chain, with its once-per-chain event) and sampling, over all chains or (per-chain
    /// budget) the chain that ran most. Shares are filled in by the caller.
    pub(crate) fn part_events(&self, warmup: u64, per_chain: bool) -> Vec<LedgerPart> {
        let part = |name: &str, releases: u64, event: PrivacyEvent| LedgerPart {
            part: name.to_string(),
            epsilon_share: 0.0,
            releases,
            event,
        };
        let mut parts: Vec<LedgerPart> = self
            .before
            .iter()
            .map(|b| part(&b.part, b.releases, b.event.clone()))
            .collect();
        let Some(r) = &self.releases else {
            return parts;
        };
        let counted: Vec<u64> = if per_chain {
            self.chains
                .iter()
                .map(|c| c.iterations)
                .max()
                .into_iter()
                .collect()
        } else {
            self.chains.iter().map(|c| c.iterations).collect()
        };
        let split = |lo: bool| -> (u64, PrivacyEvent) {
            let mut n = 0;
            let mut events = Vec::new();
            for &k in &counted {
                let w = warmup.min(k);
                let steps = if lo { w } else { k - w };
                n += steps;
                if lo {
                    events.push(r.once_per_chain.clone());
                }
                events.push(r.iteration.clone().repeat(steps));
            }
            (n, PrivacyEvent::compose(events))
        };
        if warmup > 0 {
            let (n, e) = split(true);
            parts.push(part("warm-up", n, e));
            let (n, e) = split(false);
            parts.push(part("sampling", n, e));
        } else {
            let events = counted.iter().map(|&k| r.for_chain(k)).collect();
            parts.push(part(
                "sampling",
                counted.iter().sum(),
                PrivacyEvent::compose(events),
            ));
        }
        parts
    }

    /// Whether a chain ran fewer iterations than planned.
    pub fn stopped_early(&self) -> bool {
        self.chains
            .iter()
            .any(|c| c.iterations < self.planned_iterations)
    }
}
