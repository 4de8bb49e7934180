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
// `median` and `normal_quantile` serve the plots (baselines, interval scales) too
#[cfg(feature = "plot")]
pub(crate) use chains::median;
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
#[cfg(feature = "plot")]
pub(crate) use rank::normal_quantile;
pub use rates::{acceptance_rate, grad_clip_fraction, r_clip_fraction};
pub use rhat::{rhat, rhat_folded, rhat_identity, rhat_split, rhat_z_scale};
pub use summary::{ParamSummary, summarize};
pub use thesis::{SampleMetrics, sample_metrics};

/// Largest rank-normalised R-hat a converged answer may have (Vehtari et al. 2021's
/// recommendation, which Stan and ArviZ follow).
pub const CONVERGED_RHAT: f64 = 1.01;

/// Smallest bulk ESS a converged answer may have (Vehtari et al. 2021: 100 per chain for
/// four chains).
pub const CONVERGED_ESS: f64 = 400.0;

/// Whether draws with largest R-hat `max_rhat` and smallest bulk ESS `min_ess_bulk` over
/// their parameters count as converged: R-hat ≤ [`CONVERGED_RHAT`] and ESS ≥
/// [`CONVERGED_ESS`] (a NaN is not converged). The one rule every `fit` method answers to.
///
/// ```
/// use dp_mcmc::diagnostics::converged;
/// assert!(converged(1.004, 950.0));
/// assert!(!converged(1.3, 950.0) && !converged(1.004, 120.0) && !converged(f64::NAN, 1e4));
/// ```
pub fn converged(max_rhat: f64, min_ess_bulk: f64) -> bool {
    max_rhat <= CONVERGED_RHAT && min_ess_bulk >= CONVERGED_ESS
}
