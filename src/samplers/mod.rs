//! MCMC samplers and the run driver. One folder per sampler (`dp_penalty/`, `dp_hmc/`,
//! `minibatch_penalty/`, `dp_barker/`, `rwmh/`, `hmc/`, and the field's `dp_sgld/`, `dp_sgnht/`, `dp_fast_mh/`): its builder, its privacy cost
//! ([`PrivacyCost`]), its kernel, and its [`Sampler`] implementation (samplers as values),
//! listed once in the [`REGISTRY`] (`registry.rs`; [`SamplerKind`] names one by its key). Shared: the [`Kernel`] trait, the data pass (`pass`;
//! `split` spreads it over threads), proposals, run settings, the driver (chains in parallel), the privacy plan and ledger
//! (`privacy`), and what a budget allows ([`IterationBudget`], every DP builder's `budget(n)`).

pub(crate) mod adapt;
pub(crate) mod batch;
pub(crate) mod budget;
pub(crate) mod driver;
mod fluent;
mod hamiltonian;
pub(crate) mod kernel;
pub(crate) mod ledger;
pub mod pass;
pub(crate) mod poisson_batch;
mod privacy;
pub(crate) mod proposal;
mod registry;
pub(crate) mod run;
pub(crate) mod sampler;
mod settings;
pub(crate) mod split;
pub(crate) mod stochastic_gradient;
mod thesis_tables;
pub mod vcorr;
mod walk_state;

pub use crate::accounting::AccountantKind;
pub use crate::noise::Noise;
pub use adapt::{Released, StepAdapter};
pub use budget::{Gradient, IterationBudget};
pub use dp_barker::DpBarker;
pub use dp_fast_mh::DpFastMh;
pub use dp_hmc::DpHmc;
pub use dp_penalty::DpPenalty;
pub use dp_sgld::DpSgld;
pub use dp_sgnht::DpSgnht;
pub use driver::run_chains;
pub use hmc::Hmc;
pub use kernel::{Kernel, StepInfo};
pub use ledger::{ChainLedger, EarlierRelease, Ledger, LedgerPart};
pub use minibatch_penalty::MinibatchPenalty;
pub use privacy::{Plan, PrivacyCost};
pub use proposal::{ClipDistance, ProposalKind, StepSize};
pub use registry::SamplerKind;
pub use run::{ChainTrace, Fit, PrivacySpent, Run, StepTotals};
pub use rwmh::Rwmh;
pub use sampler::{AutoInputs, DerivedSettings, Sampler, SamplerEntry};
pub use settings::{Budget, DEFAULT_MAX_TRACE_BYTES, MAX_CHAINS, RunSetters, RunSettings, Start};

// The sampler folders (a new sampler is its folder, one line here and one in `REGISTRY`).
pub mod dp_barker;
pub mod dp_fast_mh;
pub mod dp_hmc;
pub mod dp_penalty;
pub mod dp_sgld;
pub mod dp_sgnht;
pub mod hmc;
pub mod minibatch_penalty;
pub mod rwmh;

/// Every sampler, one entry each (`registry.rs`). The order is the figures' colour order (the
/// thesis' hue order of Figures 6.3–6.8, then the non-private baselines, then samplers the
/// thesis did not plot): a new sampler goes at the end.
pub static REGISTRY: &[SamplerEntry] = &[
    dp_hmc::ENTRY,
    dp_penalty::ENTRY,
    dp_penalty::GWMH_ENTRY,
    minibatch_penalty::ENTRY,
    minibatch_penalty::GWMH_ENTRY,
    dp_barker::ENTRY,
    hmc::ENTRY,
    rwmh::ENTRY,
    dp_penalty::OCU_ENTRY,
    dp_sgld::ENTRY,
    dp_sgnht::ENTRY,
    dp_fast_mh::ENTRY,
];

#[cfg(test)]
mod tests;
