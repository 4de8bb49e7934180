//! `use dp_mcmc::prelude::*;` brings what a notebook cell needs into scope: the samplers'
//! builders and the sampler registry (`SamplerKind`, `Sampler`, `tuned`), `Auto`, the models, the accountants, the diagnostics, the display hooks (a bare `df`,
//! `run` or `Chart` as a cell's last expression renders; `quick_mode()` reads
//! `DP_MCMC_QUICK`) and polars' `DataFrame`.
pub use crate::accounting::{
    Accountant, AccountantKind, CertifiedPld, Fourier, Pld, PrivacyEvent, Rdp, Releases, Zcdp,
    pld_delta, pld_epsilon,
};
pub use crate::auto::{Auto, AutoRun};
pub use crate::diagnostics::{ess_bulk, ess_tail, mmd, mmd_thesis, rhat};
#[cfg(feature = "plot")]
pub use crate::display::Chart;
pub use crate::display::{AllRows, FrameDisplay, RunDisplay, quick_mode};
pub use crate::error::Error;
// `Result` is deliberately not re-exported: evcxr writes variable types with the two-argument
// `std::result::Result`, which a one-argument alias in scope would break. Use
// `dp_mcmc::Result` in notebook code.
pub use crate::experiments::{chain_metrics, tuned};
pub use crate::models::{ColumnData, CustomModel, Experiment, ExperimentModel, Model, RowData};
pub use crate::samplers::{
    Budget, ClipDistance, DpBarker, DpFastMh, DpHmc, DpPenalty, DpSgld, DpSgnht, Gradient, Hmc,
    IterationBudget, Ledger, MinibatchPenalty, PrivacyCost, PrivacySpent, ProposalKind, Run,
    RunSetters, RunSettings, Rwmh, Sampler, SamplerKind, Start, StepSize,
};
pub use polars::prelude::DataFrame;
