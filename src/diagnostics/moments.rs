//! Mean error and covariance error of a sample against a reference sample (THESIS-NOTES §2).

use nalgebra::DMatrix;

use super::mmd::sample_rows;
use crate::error::Result;

/// Column means of a row-major sample.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// assert_eq!(dp_mcmc::diagnostics::sample_mean(&[1.0, 2.0, 3.0, 6.0], 2)?, vec![2.0, 4.0]);
/// assert!(dp_mcmc::diagnostics::sample_mean(&[], 2).is_err()); // no rows
/// # Ok(()) }
/// ```
pub fn sample_mean(x: &[f64], dim: usize) -> Result<Vec<f64>> {
    let n = sample_rows("x", x, dim, 1)?;
    let mut mu = vec![0.0; dim];
    for row in x.chunks_exact(dim) {
        mu.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    mu.iter_mut().for_each(|m| *m /= n as f64);
    Ok(mu)
}

/// Sample covariance (ddof 1) of a row-major sample, as a `dim × dim` matrix.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let c = dp_mcmc::diagnostics::sample_cov(&[0.0, 0.0, 2.0, 2.0], 2)?;
/// assert_eq!(c[(0, 1)], 2.0);
/// assert!(dp_mcmc::diagnostics::sample_cov(&[0.0, 0.0], 2).is_err()); // one row
/// # Ok(()) }
/// ```
pub fn sample_cov(x: &[f64], dim: usize) -> Result<DMatrix<f64>> {
    let n = sample_rows("x", x, dim, 2)?;
    let mu = sample_mean(x, dim)?;
    let mut c = DMatrix::zeros(dim, dim);
    for row in x.chunks_exact(dim) {
        for a in 0..dim {
            let da = row[a] - mu[a];
            for b in 0..dim {
                c[(a, b)] += da * (row[b] - mu[b]);
            }
        }
    }
    Ok(c / (n as f64 - 1.0))
}

/// Mean error ‖mean(x) − mean(y)‖₂ of sample `x` against reference `y` (both row-major,
/// `dim` columns). The thesis compares the kept half of a chain with 1000 exact posterior
/// draws, or with the true mean (circle model): pass that as a one-row `y`.
///
/// ```
/// use dp_mcmc::diagnostics::mean_error;
/// # fn main() -> dp_mcmc::Result<()> {
/// let chain = [0.0, 0.0, 2.0, 0.0, 4.0, 3.0]; // mean (2, 1)
/// assert!((mean_error(&chain, &[2.0, 0.0], 2)? - 1.0).abs() < 1e-15);
/// assert!(mean_error(&chain, &[2.0, 0.0, 1.0], 2).is_err()); // y is not whole rows
/// # Ok(()) }
/// ```
pub fn mean_error(x: &[f64], y: &[f64], dim: usize) -> Result<f64> {
    sample_rows("y", y, dim, 1)?;
    let (mx, my) = (sample_mean(x, dim)?, sample_mean(y, dim)?);
    Ok(mx
        .iter()
        .zip(&my)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt())
}

/// Covariance error: the Frobenius norm of cov(x) − cov(y), sample covariances with ddof 1
/// (THESIS-NOTES §2). Needs at least 2 rows in each sample.
///
/// ```
/// use dp_mcmc::diagnostics::cov_error;
/// # fn main() -> dp_mcmc::Result<()> {
/// let x = [0.0, 2.0]; // 1-d, variance 2
/// let y = [0.0, 1.0, 2.0]; // variance 1
/// assert!((cov_error(&x, &y, 1)? - 1.0).abs() < 1e-15);
/// assert!(cov_error(&x[..1], &y, 1).is_err()); // one row: covariance undefined
/// # Ok(()) }
/// ```
pub fn cov_error(x: &[f64], y: &[f64], dim: usize) -> Result<f64> {
    sample_rows("y", y, dim, 2)?;
    Ok((sample_cov(x, dim)? - sample_cov(y, dim)?).norm())
}
