//! Potential scale reduction R-hat: rank-normalised split R-hat and its variants, as ArviZ.
//!
//! All functions take one slice per chain (equal lengths) and return `Ok(None)` where ArviZ
//! returns NaN: fewer than 2 chains, fewer than 4 draws per chain, or zero within-chain
//! variance (constant chains).

use super::chains::Mat;
use super::rank::{fold, z_scale};
use crate::error::Result;

/// Basic R-hat of an `m × n` matrix: `sqrt((B/W + n − 1)/n)` (NaN if W = 0).
pub(crate) fn rhat_basic(x: &Mat) -> f64 {
    let n = x.n as f64;
    let means: Vec<f64> = (0..x.m).map(|c| super::chains::mean(x.chain(c))).collect();
    let w = (0..x.m)
        .map(|c| super::chains::var(x.chain(c), 1))
        .sum::<f64>()
        / x.m as f64;
    let b = n * super::chains::var(&means, 1);
    ((b / w + n - 1.0) / n).sqrt()
}

fn valid(x: &Mat) -> bool {
    x.m >= 2 && x.n >= 4
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Rank-normalised split R-hat (ArviZ `rhat(method="rank")`, the default R-hat): the
/// maximum of the bulk R-hat of z-scaled split chains and the tail R-hat of z-scaled folded
/// split chains (Vehtari et al. 2021, eq. 4.1 and §4.2).
///
/// ```
/// use dp_mcmc::diagnostics::rhat;
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.1, -0.4, 0.3, 0.9, -1.2, 0.5, 0.0, 0.2];
/// let b = [0.4, 0.0, -0.6, 1.1, 0.7, -0.3, 0.8, -0.9];
/// let r = rhat(&[&a, &b])?.expect("two chains of 8 draws: defined");
/// assert!(r > 0.8 && r < 1.5);
/// assert_eq!(rhat(&[&a])?, None); // one chain: undefined (ArviZ gives NaN)
/// assert!(rhat(&[&a, &b[..7]]).is_err()); // chains of different lengths
/// # Ok(()) }
/// ```
pub fn rhat(chains: &[&[f64]]) -> Result<Option<f64>> {
    let x = Mat::from_chains(chains)?;
    if !valid(&x) {
        return Ok(None);
    }
    let s = x.split();
    let bulk = rhat_basic(&z_scale(&s));
    let tail = rhat_basic(&z_scale(&fold(&s)));
    // Python's max(bulk, tail): `tail` wins only if `tail > bulk`, so a NaN bulk gives NaN
    // and a NaN tail (e.g. folded draws all equal) gives the bulk value, as in ArviZ.
    Ok(finite(if tail > bulk { tail } else { bulk }))
}

/// Split R-hat on the raw draws (ArviZ `method="split"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.0, 1.0, 2.0, 3.0];
/// let r = dp_mcmc::diagnostics::rhat_split(&[&a, &a])?.unwrap();
/// // A trend within each chain: halves [0,1] and [2,3] give B = 8/3, W = 1/2, R = sqrt(19/6).
/// assert!((r - (19.0f64 / 6.0).sqrt()).abs() < 1e-12);
/// assert!(dp_mcmc::diagnostics::rhat_split(&[&a, &[0.0, f64::NAN, 1.0, 2.0]]).is_err());
/// # Ok(()) }
/// ```
pub fn rhat_split(chains: &[&[f64]]) -> Result<Option<f64>> {
    variant(chains, |x| rhat_basic(&x.split()))
}

/// Folded split R-hat: R-hat of z-scaled `|split x − median|` (ArviZ `method="folded"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.1, -0.4, 0.3, 0.9, -1.2, 0.5];
/// let b = [0.4, -4.0, 3.6, 1.1, -2.7, -3.0];
/// assert!(dp_mcmc::diagnostics::rhat_folded(&[&a, &b])?.unwrap() > 1.0);
/// assert!(dp_mcmc::diagnostics::rhat_folded(&[]).is_err());
/// # Ok(()) }
/// ```
pub fn rhat_folded(chains: &[&[f64]]) -> Result<Option<f64>> {
    variant(chains, |x| rhat_basic(&z_scale(&fold(&x.split()))))
}

/// Rank-normalised split R-hat without the folded term (ArviZ `method="z_scale"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.1, -0.4, 0.3, 0.9];
/// assert!(dp_mcmc::diagnostics::rhat_z_scale(&[&a, &a])?.is_some());
/// assert_eq!(dp_mcmc::diagnostics::rhat_z_scale(&[&a[..3], &a[..3]])?, None); // < 4 draws
/// # Ok(()) }
/// ```
pub fn rhat_z_scale(chains: &[&[f64]]) -> Result<Option<f64>> {
    variant(chains, |x| rhat_basic(&z_scale(&x.split())))
}

/// Classic (non-split) Gelman–Rubin R-hat (ArviZ `method="identity"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [1.0, 2.0, 1.0, 2.0];
/// let b = [1.0, 2.0, 1.0, 2.0];
/// // identical chains: B = 0, so R-hat = sqrt((n-1)/n)
/// let r = dp_mcmc::diagnostics::rhat_identity(&[&a, &b])?.unwrap();
/// assert!((r - (0.75f64).sqrt()).abs() < 1e-15);
/// assert_eq!(dp_mcmc::diagnostics::rhat_identity(&[&[1.0; 4], &[1.0; 4]])?, None); // constant
/// # Ok(()) }
/// ```
pub fn rhat_identity(chains: &[&[f64]]) -> Result<Option<f64>> {
    variant(chains, rhat_basic)
}

fn variant(chains: &[&[f64]], f: impl Fn(&Mat) -> f64) -> Result<Option<f64>> {
    let x = Mat::from_chains(chains)?;
    if !valid(&x) {
        return Ok(None);
    }
    Ok(finite(f(&x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_parameter_has_no_rhat() {
        let c = [1.5; 8];
        assert_eq!(rhat(&[&c, &c]).unwrap(), None);
        assert_eq!(rhat_split(&[&c, &c]).unwrap(), None);
    }

    /// Draws ±1 symmetric around the median 0: every folded value is 1, so the tail R-hat is
    /// NaN; ArviZ's `max(bulk, nan)` then returns the bulk value, and so do we.
    #[test]
    fn nan_tail_falls_back_to_bulk_like_python_max() {
        let a = [1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0];
        let b = [-1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0];
        let r = rhat(&[&a, &b]).unwrap();
        assert!(r.is_some());
        assert_eq!(r, rhat_z_scale(&[&a, &b]).unwrap());
        assert_eq!(rhat_folded(&[&a, &b]).unwrap(), None);
    }
}
