//! `use dp_mcmc::prelude::*;` brings what a notebook cell needs into scope: the samplers'
//! builders, the models, the accountants, the diagnostics, the display hooks and polars'
//! `DataFrame`.
pub use crate::accounting::{
    Accountant, Fourier, Gradient, MaxIterations, Method, Pld, PrivacyEvent, Rdp, Zcdp, pld_delta,
    pld_epsilon,
};
pub use crate::diagnostics::{ess_bulk, ess_tail, mmd, mmd_thesis, rhat};
pub use crate::display::*;
pub use crate::error::{Error, Result};
pub use crate::experiments::{Sampler, SamplerKind, chain_metrics};
pub use crate::models::{ColumnData, CustomModel, Experiment, ExperimentModel, Model, RowData};
pub use crate::samplers::{
    ClipDistance, DpBarker, DpHmc, DpPenalty, Hmc, MinibatchPenalty, ProposalKind, Run,
    RunSettings, Rwmh, StepSize,
};
pub use polars::prelude::DataFrame;
