//! The thesis' sample metrics (THESIS-NOTES §2): MMD, mean and covariance error of a chain's
//! kept half (after [`kept_half`](super::kept_half)) against a reference sample. The per-chain
//! record of a run (acceptance, clip fractions and these metrics) is
//! [`crate::experiments::ChainMetrics`].

use serde::Serialize;

use super::mmd::mmd_thesis;
use super::moments::{cov_error, mean_error};
use crate::error::Result;

/// MMD, mean and covariance error of a sample against a reference sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SampleMetrics {
    /// √|MMD²_unbiased| at the thesis' paired-500 median bandwidth (THESIS-NOTES §13); `None`
    /// where that MMD is undefined (the heuristic bandwidth is 0 or `2σ²` overflows: the
    /// thesis code gets NaN).
    pub mmd: Option<f64>,
    /// ‖mean(sample) − mean(reference)‖₂.
    pub mean_error: f64,
    /// ‖cov(sample) − cov(reference)‖_F (ddof 1).
    pub cov_error: f64,
}

/// MMD (bandwidth seeded with `seed`), mean error and covariance error of `sample` (e.g. the
/// kept half of a chain) against `reference` (the thesis uses 1000 exact posterior draws),
/// both row-major with `dim` values per row.
///
/// ```
/// use dp_mcmc::diagnostics::{kept_half, sample_metrics};
/// # fn main() -> dp_mcmc::Result<()> {
/// let chain: Vec<f64> = (0..101).map(|i| (i as f64 * 0.7).sin()).collect(); // k = 100, 1-d
/// let reference: Vec<f64> = (0..200).map(|i| (i as f64 * 1.3).cos()).collect();
/// let kept = kept_half(&chain, 1)?; // the thesis' burn-in: rows 50..=100
/// let m = sample_metrics(kept, &reference, 1, 0)?;
/// assert!(m.mmd.is_some() && m.mean_error > 0.0 && m.cov_error > 0.0);
/// assert!(sample_metrics(&kept[..1], &reference, 1, 0).is_err()); // one row: no covariance
/// assert!(sample_metrics(kept, &reference[..1], 1, 0).is_err()); // one reference row
/// # Ok(()) }
/// ```
///
/// # Errors
/// Malformed samples (fewer than two rows, a length that is not a multiple of `dim`,
/// non-finite values), as [`mean_error`](super::mean_error) and
/// [`cov_error`](super::cov_error) report them.
pub fn sample_metrics(
    sample: &[f64],
    reference: &[f64],
    dim: usize,
    seed: u64,
) -> Result<SampleMetrics> {
    let mmd = mmd_thesis(sample, reference, dim, seed)
        .ok()
        .map(|m| m.thesis());
    Ok(SampleMetrics {
        mmd,
        mean_error: mean_error(sample, reference, dim)?,
        cov_error: cov_error(sample, reference, dim)?,
    })
}
