//! MCMC kernels (RWMH, HMC, DP penalty, DP HMC, minibatch DP penalty, DP Barker) and the run driver.

pub mod barker;
pub mod batch;
mod builders;
pub mod dp_penalty;
pub mod driver;
pub mod hmc;
mod iterations;
pub mod kernel;
pub mod minibatch;
pub mod pass;
mod privacy;
pub mod proposal;
pub mod run;
pub mod rwmh;
mod settings;
mod subsampled;
pub mod vcorr;

pub use crate::accounting::Method;
pub use crate::noise::Noise;
pub use builders::{DpHmc, DpPenalty, Hmc, Rwmh};
pub use hmc::GradientMode;
pub use iterations::{
    DpBarkerIterations, DpHmcIterations, DpPenaltyIterations, MaxIterations,
    MinibatchPenaltyIterations,
};
pub use kernel::{Kernel, StepInfo};
pub use privacy::{ChainLedger, Ledger, PrivacyCost};
pub use proposal::{ClipDistance, ProposalKind, StepSize};
pub use run::{ChainTrace, PrivacySpent, Run, StepTotals};
pub use settings::{Budget, DEFAULT_MAX_TRACE_BYTES, MAX_CHAINS, RunSettings, Start};
pub use subsampled::{DpBarker, MinibatchPenalty};

#[cfg(test)]
mod tests;
