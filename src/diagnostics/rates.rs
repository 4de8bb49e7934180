//! Acceptance rate and clip fractions of a run (THESIS-NOTES §2).
//!
//! Clip counts come from the raw data and are **not** covered by any DP guarantee: they are
//! non-private diagnostics (THESIS-NOTES §2). `Ok(None)` stands for the thesis' NaN
//! (zero iterations).

use crate::error::{Error, Result};

/// Acceptance rate `accepted / iterations`; `None` for zero iterations.
///
/// ```
/// use dp_mcmc::diagnostics::acceptance_rate;
/// # fn main() -> dp_mcmc::Result<()> {
/// assert_eq!(acceptance_rate(30, 120)?, Some(0.25));
/// assert_eq!(acceptance_rate(0, 0)?, None);
/// assert!(acceptance_rate(5, 4).is_err()); // more acceptances than iterations
/// # Ok(()) }
/// ```
pub fn acceptance_rate(accepted: u64, iterations: u64) -> Result<Option<f64>> {
    if accepted > iterations {
        return Err(Error::invalid(
            "accepted",
            accepted,
            format!("cannot exceed the number of iterations ({iterations})"),
        ));
    }
    Ok((iterations > 0).then(|| accepted as f64 / iterations as f64))
}

/// Fraction of clipped per-row log-likelihood ratios:
/// `clipped / rows_per_iteration / iterations`, where rows per iteration is n (full data)
/// or the batch size b (minibatch). `None` for zero iterations. Non-private.
///
/// ```
/// use dp_mcmc::diagnostics::r_clip_fraction;
/// # fn main() -> dp_mcmc::Result<()> {
/// assert_eq!(r_clip_fraction(50, 100, 10)?, Some(0.05));
/// assert_eq!(r_clip_fraction(0, 100, 0)?, None);
/// assert!(r_clip_fraction(2000, 100, 10).is_err()); // more clips than rows seen
/// # Ok(()) }
/// ```
pub fn r_clip_fraction(
    clipped: u64,
    rows_per_iteration: u64,
    iterations: u64,
) -> Result<Option<f64>> {
    fraction(
        "rows_per_iteration",
        clipped,
        rows_per_iteration,
        iterations,
    )
}

/// Fraction of clipped per-row gradients (DP HMC):
/// `clipped / n / gradient_evaluations`. `None` for zero evaluations. Non-private.
///
/// ```
/// use dp_mcmc::diagnostics::grad_clip_fraction;
/// # fn main() -> dp_mcmc::Result<()> {
/// assert_eq!(grad_clip_fraction(10, 1000, 20)?, Some(0.0005));
/// assert!(grad_clip_fraction(1, 0, 20).is_err()); // no data rows
/// # Ok(()) }
/// ```
pub fn grad_clip_fraction(clipped: u64, n: u64, gradient_evaluations: u64) -> Result<Option<f64>> {
    fraction("n", clipped, n, gradient_evaluations)
}

fn fraction(rows_name: &'static str, clipped: u64, rows: u64, times: u64) -> Result<Option<f64>> {
    if rows == 0 {
        return Err(Error::invalid(rows_name, rows, "must be at least 1"));
    }
    if times == 0 {
        return Ok(None);
    }
    let seen = rows as u128 * times as u128;
    if clipped as u128 > seen {
        return Err(Error::invalid(
            "clipped",
            clipped,
            format!("cannot exceed the number of terms evaluated ({seen})"),
        ));
    }
    Ok(Some(clipped as f64 / rows as f64 / times as f64))
}
