//! The thesis' per-chain metrics (THESIS-NOTES §2): burn-in, then MMD, mean and covariance error of
//! the kept half against a reference sample.

use serde::Serialize;

use super::burn_in::kept_half;
use super::mmd::mmd_thesis;
use super::moments::{cov_error, mean_error};
use crate::error::{Error, Result};

/// Metrics of one chain against a reference sample, as `run_chain.py` reports them.
/// `None` where the thesis code gets NaN (k ≤ 1 iterations, or a zero median-heuristic
/// bandwidth).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChainMetrics {
    /// Rows kept after burn-in.
    pub kept_rows: usize,
    /// √|MMD²_unbiased| at the thesis' paired-500 median bandwidth (THESIS-NOTES §13).
    pub mmd: Option<f64>,
    /// ‖mean(kept) − mean(reference)‖₂.
    pub mean_error: Option<f64>,
    /// ‖cov(kept) − cov(reference)‖_F (ddof 1).
    pub cov_error: Option<f64>,
}

/// Apply the thesis' burn-in to `chain` (k+1 row-major rows of `dim` values, row 0 the start
/// point) and compute MMD (seeded bandwidth), mean error and covariance error against
/// `reference` (the thesis uses 1000 exact posterior draws).
///
/// ```
/// use dp_mcmc::diagnostics::thesis_metrics;
/// # fn main() -> dp_mcmc::Result<()> {
/// let chain: Vec<f64> = (0..101).map(|i| (i as f64 * 0.7).sin()).collect(); // k = 100, 1-d
/// let reference: Vec<f64> = (0..200).map(|i| (i as f64 * 1.3).cos()).collect();
/// let m = thesis_metrics(&chain, &reference, 1, 0)?;
/// assert_eq!(m.kept_rows, 51);
/// assert!(m.mmd.is_some() && m.mean_error.is_some() && m.cov_error.is_some());
/// assert_eq!(thesis_metrics(&chain[..2], &reference, 1, 0)?.mmd, None); // k = 1: NaN in the thesis
/// assert!(thesis_metrics(&chain, &reference[..1], 1, 0).is_err()); // one reference row
/// # Ok(()) }
/// ```
pub fn thesis_metrics(
    chain: &[f64],
    reference: &[f64],
    dim: usize,
    seed: u64,
) -> Result<ChainMetrics> {
    let kept = kept_half(chain, dim)?;
    let kept_rows = kept.len() / dim;
    if reference.len() < 2 * dim {
        return Err(Error::InvalidData(format!(
            "the reference sample has {} values; it needs at least 2 rows of dim = {dim}",
            reference.len()
        )));
    }
    let k = chain.len() / dim - 1;
    if k <= 1 {
        // Validate the reference anyway so bad input is reported, then return the NaNs.
        mean_error(reference, reference, dim)?;
        return Ok(ChainMetrics {
            kept_rows,
            mmd: None,
            mean_error: None,
            cov_error: None,
        });
    }
    let mmd = match mmd_thesis(kept, reference, dim, seed) {
        Ok(r) => Some(r.thesis()),
        Err(Error::Numerical { .. }) => None,
        Err(e) => return Err(e),
    };
    Ok(ChainMetrics {
        kept_rows,
        mmd,
        mean_error: Some(mean_error(kept, reference, dim)?),
        cov_error: Some(cov_error(kept, reference, dim)?),
    })
}
