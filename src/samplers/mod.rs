//! MCMC samplers and the run driver. One folder per sampler (`dp_penalty/`, `dp_hmc/`,
//! `minibatch_penalty/`, `dp_barker/`, `rwmh/`, `hmc/`): its builder, its privacy cost
//! ([`PrivacyCost`]), its kernel, and its [`Sampler`] implementation (samplers as values),
//! listed once in the [`REGISTRY`] (`registry.rs`; [`SamplerKind`] names one by its key). Shared: the [`Kernel`] trait, the data pass (`pass`;
//! `split` spreads it over threads), proposals, run settings, the driver (chains in parallel), the privacy plan and ledger
//! (`privacy`), and [`MaxIterations`].

pub mod adapt;
pub(crate) mod batch;
pub mod dp_barker;
pub mod dp_hmc;
pub mod dp_penalty;
pub mod driver;
mod fluent;
pub mod hmc;
mod iterations;
pub mod kernel;
pub mod minibatch_penalty;
pub mod pass;
mod privacy;
pub mod proposal;
mod registry;
pub mod run;
pub mod rwmh;
pub(crate) mod sampler;
mod settings;
pub mod split;
pub mod vcorr;

pub use crate::accounting::Method;
pub use crate::noise::Noise;
pub use adapt::{Released, StepAdapter};
pub use dp_barker::DpBarker;
pub use dp_hmc::DpHmc;
pub use dp_penalty::DpPenalty;
pub use hmc::Hmc;
pub use iterations::{
    DpBarkerIterations, DpHmcIterations, DpPenaltyIterations, MaxIterations,
    MinibatchPenaltyIterations,
};
pub use kernel::{Kernel, StepInfo};
pub use minibatch_penalty::MinibatchPenalty;
pub use privacy::{ChainLedger, EarlierRelease, Ledger, LedgerPart, Plan, PrivacyCost};
pub use proposal::{ClipDistance, ProposalKind, StepSize};
pub use registry::{REGISTRY, SamplerEntry, SamplerKind};
pub use run::{ChainTrace, PrivacySpent, Run, StepTotals};
pub use rwmh::Rwmh;
pub use sampler::{AutoInputs, DerivedSettings, Sampler};
pub use settings::{Budget, DEFAULT_MAX_TRACE_BYTES, MAX_CHAINS, RunSettings, Start};

#[cfg(test)]
mod tests;
