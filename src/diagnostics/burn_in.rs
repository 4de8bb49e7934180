//! The thesis' burn-in rule (THESIS-NOTES §2): of the k+1 stored rows, keep ⌊(k−1)/2⌋+1 … k.

use std::ops::Range;

use crate::error::{Error, Result};

/// Rows kept after burn-in for a chain of `iterations` = k steps stored as k+1 rows (row 0 is
/// the start point): `⌊(k−1)/2⌋+1 .. k+1`, i.e. k − ⌊(k−1)/2⌋ rows, duplicates from
/// rejections included. Python's floor division makes k = 0 keep row 0. With k ≤ 1 fewer
/// than 2 rows remain and the thesis reports every metric as NaN. (The end saturates at
/// `usize::MAX`.)
///
/// ```
/// use dp_mcmc::diagnostics::burn_in_range;
/// assert_eq!(burn_in_range(3000), 1500..3001); // 1501 rows
/// assert_eq!(burn_in_range(4), 2..5);
/// assert_eq!(burn_in_range(1), 1..2);
/// assert_eq!(burn_in_range(0), 0..1);
/// ```
pub fn burn_in_range(iterations: usize) -> Range<usize> {
    let start = if iterations == 0 {
        0
    } else {
        (iterations - 1) / 2 + 1
    };
    start..iterations.saturating_add(1)
}

/// The kept half of a row-major chain of k+1 rows with `dim` columns ([`burn_in_range`]).
///
/// ```
/// use dp_mcmc::diagnostics::kept_half;
/// # fn main() -> dp_mcmc::Result<()> {
/// let chain = [0.0, 1.0, 2.0, 3.0, 4.0]; // k = 4 steps, 1-d
/// assert_eq!(kept_half(&chain, 1)?, &[2.0, 3.0, 4.0]);
/// assert!(kept_half(&chain, 2).is_err()); // 5 values are not whole 2-d rows
/// # Ok(()) }
/// ```
pub fn kept_half(chain: &[f64], dim: usize) -> Result<&[f64]> {
    if dim == 0 {
        return Err(Error::invalid("dim", dim, "must be at least 1"));
    }
    if chain.is_empty() || !chain.len().is_multiple_of(dim) {
        return Err(Error::InvalidData(format!(
            "chain has {} values; it must be k+1 >= 1 whole rows of dim = {dim}",
            chain.len()
        )));
    }
    let k = chain.len() / dim - 1;
    let r = burn_in_range(k);
    Ok(&chain[r.start * dim..r.end * dim])
}
