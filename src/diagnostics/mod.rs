//! MCMC diagnostics on plain slices: R-hat, ESS, MCSE (ArviZ definitions), MMD, mean and
//! covariance error, acceptance and clip rates, the thesis' burn-in rule and per-chain
//! metrics ([`sample_metrics`]).
//!
//! Layout: convergence diagnostics take one slice per chain for one scalar parameter
//! (`&[&[f64]]`, equal lengths); sample metrics take row-major samples `&[f64]` with a
//! `dim`. Values that are undefined for the input (where ArviZ returns NaN, e.g. R-hat of one
//! chain) come back as `Ok(None)`; malformed input (ragged chains, NaN, wrong shapes) is an
//! `Err`. DataFrame summaries live in [`crate::frame::diagnostics`].

mod burn_in;
mod chains;
mod ess;
mod mcse;
mod mmd;
mod moments;
mod rank;
mod rates;
mod rhat;
mod summary;
mod thesis;

pub use burn_in::{burn_in_range, kept_half};
pub(crate) use chains::quantile_sorted;
pub use ess::{
    autocorr, ess_bulk, ess_folded, ess_identity, ess_mean, ess_median, ess_quantile, ess_tail,
    ess_z_scale,
};
pub use mcse::{mcse_mean, mcse_median, mcse_quantile, mcse_sd};
pub use mmd::{
    Mmd, THESIS_BANDWIDTH_PAIRS, mmd, mmd_thesis, paired_median_distance, pooled_median_distance,
    thesis_bandwidth,
};
pub use moments::{cov_error, mean_error, sample_cov, sample_mean};
pub use rates::{acceptance_rate, grad_clip_fraction, r_clip_fraction};
pub use rhat::{rhat, rhat_folded, rhat_identity, rhat_split, rhat_z_scale};
pub use summary::{ParamSummary, summarize};
pub use thesis::{SampleMetrics, sample_metrics};
