//! What the thesis records for each chain (spec §2): acceptance, clip fractions, and — on
//! the kept second half — MMD against a 1000-draw reference posterior, mean and covariance
//! error. Clip fractions are non-private diagnostics.

use serde::Serialize;

use crate::diagnostics::{cov_error, mean_error, mmd_thesis, sample_mean};
use crate::error::Result;
use crate::samplers::Run;

/// The thesis' metrics of one chain (`None` where undefined, e.g. MMD with fewer than two
/// iterations, or on the circle, which has no reference posterior).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainMetrics {
    /// Chain index.
    pub chain: usize,
    /// Iterations run.
    pub iterations: usize,
    /// Acceptance rate.
    pub acceptance: f64,
    /// Fraction of clipped log-likelihood ratios (non-private diagnostic).
    pub clip_fraction: f64,
    /// Fraction of clipped per-row gradients (DP HMC; non-private diagnostic).
    pub grad_clip_fraction: Option<f64>,
    /// The thesis' MMD (√|MMD²_unbiased|, median-heuristic bandwidth) vs the reference.
    pub mmd: Option<f64>,
    /// ‖mean(kept) − mean(reference)‖₂ (circle: vs the true mean).
    pub mean_error: Option<f64>,
    /// Frobenius norm of the covariance difference (kept vs reference).
    pub cov_error: Option<f64>,
}

/// Metrics of every chain of `run`. `reference` is a row-major reference sample (or `None`);
/// `true_mean` replaces the reference mean for the mean error when there is no reference
/// (circle). `seed` seeds the MMD bandwidth heuristic (chain `i` uses `seed + i`).
pub fn chain_metrics(
    run: &Run,
    reference: Option<&[f64]>,
    true_mean: Option<&[f64]>,
    seed: u64,
) -> Result<Vec<ChainMetrics>> {
    let d = run.dim();
    run.chains
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let kept = c.kept_half(d);
            let has = kept.len() >= 2 * d;
            let (mmd, mean_err, cov_err) = match (reference, has) {
                (Some(r), true) => (
                    mmd_thesis(kept, r, d, seed.wrapping_add(i as u64))
                        .ok()
                        .map(|m| m.thesis()),
                    Some(mean_error(kept, r, d)?),
                    Some(cov_error(kept, r, d)?),
                ),
                (None, true) => {
                    let me = match true_mean {
                        Some(t) => {
                            let m = sample_mean(kept, d)?;
                            Some(
                                m.iter()
                                    .zip(t)
                                    .map(|(a, b)| (a - b).powi(2))
                                    .sum::<f64>()
                                    .sqrt(),
                            )
                        }
                        None => None,
                    };
                    (None, me, None)
                }
                _ => (None, None, None),
            };
            let g = c.grad_clip_fraction();
            Ok(ChainMetrics {
                chain: i,
                iterations: c.len(),
                acceptance: c.acceptance(),
                clip_fraction: c.clip_fraction(),
                grad_clip_fraction: (!g.is_nan()).then_some(g),
                mmd,
                mean_error: mean_err,
                cov_error: cov_err,
            })
        })
        .collect()
}
