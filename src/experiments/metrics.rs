//! What the thesis records for each chain (THESIS-NOTES §2): acceptance, clip fractions, and — on
//! the kept second half — MMD against a 1000-draw reference posterior, mean and covariance
//! error ([`crate::diagnostics::sample_metrics`]). Clip fractions are non-private diagnostics.

use serde::Serialize;

use crate::diagnostics::{sample_mean, sample_metrics};
use crate::error::Result;
use crate::samplers::{ChainTrace, Run};

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
        .map(|(i, c)| trace_metrics(c, i, d, reference, true_mean, seed.wrapping_add(i as u64)))
        .collect()
}

/// The metrics of one chain trace (`chain` is its index, `dim` the parameter dimension);
/// `seed` seeds the MMD bandwidth heuristic. See [`chain_metrics`].
///
/// ```
/// use dp_mcmc::experiments::trace_metrics;
/// use dp_mcmc::samplers::{ChainTrace, StepInfo};
/// # fn main() -> dp_mcmc::Result<()> {
/// let trace = ChainTrace {
///     draws: (0..40).map(|i| (i as f64 * 0.37).sin()).collect(), // 20 steps, d = 2
///     stats: vec![StepInfo { accepted: true, ..StepInfo::default() }; 20],
///     ..ChainTrace::default()
/// };
/// let reference: Vec<f64> = (0..200).map(|i| (i as f64 * 1.3).cos()).collect();
/// let m = trace_metrics(&trace, 0, 2, Some(&reference), None, 1)?;
/// assert_eq!((m.iterations, m.acceptance), (20, 1.0));
/// assert!(m.mmd.is_some() && m.cov_error.is_some());
/// // A reference of the wrong width is an error.
/// assert!(trace_metrics(&trace, 0, 2, Some(&reference[..3]), None, 1).is_err());
/// # Ok(()) }
/// ```
pub fn trace_metrics(
    c: &ChainTrace,
    chain: usize,
    d: usize,
    reference: Option<&[f64]>,
    true_mean: Option<&[f64]>,
    seed: u64,
) -> Result<ChainMetrics> {
    let kept = c.kept_half(d);
    let has = kept.len() >= 2 * d;
    let (mmd, mean_err, cov_err) = match (reference, has) {
        (Some(r), true) => {
            let m = sample_metrics(kept, r, d, seed)?;
            (m.mmd, Some(m.mean_error), Some(m.cov_error))
        }
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
        chain,
        iterations: c.len(),
        acceptance: c.acceptance(),
        clip_fraction: c.clip_fraction(),
        grad_clip_fraction: (!g.is_nan()).then_some(g),
        mmd,
        mean_error: mean_err,
        cov_error: cov_err,
    })
}
