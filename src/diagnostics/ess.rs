//! Effective sample size (ArviZ 0.23 definitions): bulk, tail, mean, quantile and variants.
//!
//! The core estimator follows Vehtari et al. (2021) and Geyer (1992): autocovariances by
//! FFT, the multi-chain autocorrelation ρ_t, Geyer's initial positive then initial monotone
//! sequence, and τ ≥ 1/log10(MN). All functions take one slice per chain (equal lengths) and
//! return `Ok(None)` where ArviZ returns NaN (fewer than 4 draws per chain).

use rustfft::{FftPlanner, num_complex::Complex};

use super::chains::{Mat, mean, quantile_sorted, sorted, var};
use super::rank::{fold, z_scale};
use crate::error::{Error, Result};

/// Smallest 2^a·3^b·5^c ≥ `n` (scipy's `next_fast_len` for real transforms).
fn next_fast_len(n: usize) -> usize {
    let mut best = usize::MAX;
    let mut p5 = 1usize;
    while p5 < 2 * n.max(1) {
        let mut p35 = p5;
        while p35 < 2 * n.max(1) {
            let mut p = p35;
            while p < n {
                p *= 2;
            }
            best = best.min(p);
            p35 *= 3;
        }
        p5 *= 5;
    }
    best
}

/// Biased (divided by `n`) autocovariances at lags `0..n` of every chain of `x`, via an FFT
/// zero-padded to `next_fast_len(2n)` as ArviZ's `autocov` does.
pub(crate) fn autocov(x: &Mat) -> Vec<Vec<f64>> {
    let n = x.n;
    let len = next_fast_len(2 * n);
    let mut planner = FftPlanner::<f64>::new();
    let fwd = planner.plan_fft_forward(len);
    let inv = planner.plan_fft_inverse(len);
    let mut buf = vec![Complex::new(0.0, 0.0); len];
    (0..x.m)
        .map(|c| {
            let chain = x.chain(c);
            let mu = mean(chain);
            buf.iter_mut().for_each(|z| *z = Complex::new(0.0, 0.0));
            for (z, &v) in buf.iter_mut().zip(chain) {
                z.re = v - mu;
            }
            fwd.process(&mut buf);
            buf.iter_mut()
                .for_each(|z| *z = Complex::new(z.norm_sqr(), 0.0));
            inv.process(&mut buf);
            buf[..n]
                .iter()
                .map(|z| z.re / len as f64 / n as f64)
                .collect()
        })
        .collect()
}

/// ArviZ's `_ess` on an `m × n` matrix (no splitting): the literal port of the Geyer loops.
/// Returns NaN where ArviZ does.
pub(crate) fn ess_raw(x: &Mat) -> f64 {
    let size = (x.m * x.n) as f64;
    let (lo, hi) = x
        .data
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    // np.finfo(float).resolution = 1e-15: ArviZ returns the size for a constant array.
    if hi - lo < 1e-15 {
        return size;
    }
    let (m, n) = (x.m, x.n);
    if n < 2 {
        return f64::NAN;
    }
    let nf = n as f64;
    let acov = autocov(x);
    let mean_acov = |t: usize| acov.iter().map(|a| a[t]).sum::<f64>() / m as f64;
    let chain_means: Vec<f64> = (0..m).map(|c| mean(x.chain(c))).collect();
    let mean_var = mean_acov(0) * nf / (nf - 1.0);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if m > 1 {
        var_plus += var(&chain_means, 1);
    }
    let rho = |t: usize| 1.0 - (mean_var - mean_acov(t)) / var_plus;

    let mut rho_hat = vec![0.0; n];
    let mut rho_even = 1.0;
    rho_hat[0] = rho_even;
    let mut rho_odd = rho(1);
    rho_hat[1] = rho_odd;

    // Geyer's initial positive sequence.
    let mut t: isize = 1;
    let ni = n as isize;
    while t < ni - 3 && rho_even + rho_odd > 0.0 {
        let tu = t as usize;
        rho_even = rho(tu + 1);
        rho_odd = rho(tu + 2);
        if rho_even + rho_odd >= 0.0 {
            rho_hat[tu + 1] = rho_even;
            rho_hat[tu + 2] = rho_odd;
        }
        t += 2;
    }
    let max_t = t - 2;
    // Keep the last even term if positive (ArviZ's "improved estimation").
    if rho_even > 0.0 {
        rho_hat[(max_t + 1) as usize] = rho_even;
    }
    // Geyer's initial monotone sequence.
    let mut t: isize = 1;
    while t <= max_t - 2 {
        let tu = t as usize;
        if rho_hat[tu + 1] + rho_hat[tu + 2] > rho_hat[tu - 1] + rho_hat[tu] {
            rho_hat[tu + 1] = (rho_hat[tu - 1] + rho_hat[tu]) / 2.0;
            rho_hat[tu + 2] = rho_hat[tu + 1];
        }
        t += 2;
    }
    let head: f64 = rho_hat[..(max_t + 1) as usize].iter().sum();
    let next = rho_hat.get((max_t + 1) as usize).copied().unwrap_or(0.0);
    let tau = (-1.0 + 2.0 * head + next).max(1.0 / size.log10());
    if rho_hat.iter().any(|r| r.is_nan()) {
        return f64::NAN;
    }
    size / tau
}

/// Validated input with at least 4 draws per chain, or `None` (ArviZ's NaN).
fn input(chains: &[&[f64]]) -> Result<Option<Mat>> {
    let x = Mat::from_chains(chains)?;
    Ok((x.n >= 4).then_some(x))
}

fn defined(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn with(chains: &[&[f64]], f: impl Fn(&Mat) -> f64) -> Result<Option<f64>> {
    Ok(input(chains)?.and_then(|x| defined(f(&x))))
}

/// ESS of the `p`-quantile: ESS of split chains of the indicator `x ≤ q_p`, where `q_p` is
/// the type-7 quantile of all draws.
pub(crate) fn ess_quantile_mat(x: &Mat, p: f64) -> f64 {
    let q = quantile_sorted(&sorted(&x.data), p);
    ess_raw(&x.map(|v| if v <= q { 1.0 } else { 0.0 }).split())
}

/// Bulk ESS: ESS of rank-normalised split chains (ArviZ `ess(method="bulk")`, the default).
///
/// ```
/// use dp_mcmc::diagnostics::ess_bulk;
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4, -0.2, 0.6];
/// let b = [-0.7, 0.2, 1.0, -1.3, 0.4, -0.1, 0.9, -0.6];
/// let ess = ess_bulk(&[&a, &b])?.expect("8 draws per chain: defined");
/// assert!(ess > 0.0);
/// assert_eq!(ess_bulk(&[&a[..3]])?, None); // fewer than 4 draws
/// assert!(ess_bulk(&[&a, &[f64::NAN; 8]]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_bulk(chains: &[&[f64]]) -> Result<Option<f64>> {
    with(chains, |x| ess_raw(&z_scale(&x.split())))
}

/// Tail ESS: the minimum of the 5 % and 95 % quantile ESS (ArviZ `ess(method="tail")`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a: Vec<f64> = (0..40).map(|i| ((i * 7919) % 40) as f64).collect();
/// assert!(dp_mcmc::diagnostics::ess_tail(&[&a])?.unwrap() > 0.0);
/// assert!(dp_mcmc::diagnostics::ess_tail(&[&a, &a[..39]]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_tail(chains: &[&[f64]]) -> Result<Option<f64>> {
    Ok(input(chains)?.and_then(|x| {
        let lo = ess_quantile_mat(&x, 0.05);
        let hi = ess_quantile_mat(&x, 0.95);
        // Python's min(lo, hi): `hi` wins only if `hi < lo` (NaN handling as in ArviZ).
        defined(if hi < lo { hi } else { lo })
    }))
}

/// ESS of the mean: ESS of the raw split chains (ArviZ `ess(method="mean")`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// // Alternating draws are antithetic: the ESS of the mean exceeds the number of draws.
/// let a: Vec<f64> = (0..100).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
/// assert!(dp_mcmc::diagnostics::ess_mean(&[&a])?.unwrap() > 100.0);
/// assert!(dp_mcmc::diagnostics::ess_mean(&[]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_mean(chains: &[&[f64]]) -> Result<Option<f64>> {
    with(chains, |x| ess_raw(&x.split()))
}

/// ESS of the `prob`-quantile (ArviZ `ess(method="quantile", prob=prob)`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a: Vec<f64> = (0..40).map(|i| ((i * 13) % 40) as f64).collect();
/// assert!(dp_mcmc::diagnostics::ess_quantile(&[&a], 0.25)?.is_some());
/// assert!(dp_mcmc::diagnostics::ess_quantile(&[&a], 1.5).is_err());
/// # Ok(()) }
/// ```
pub fn ess_quantile(chains: &[&[f64]], prob: f64) -> Result<Option<f64>> {
    check_prob(prob)?;
    with(chains, |x| ess_quantile_mat(x, prob))
}

/// ESS of the median (ArviZ `method="median"`): [`ess_quantile`] at 0.5.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a: Vec<f64> = (0..40).map(|i| ((i * 13) % 40) as f64).collect();
/// assert!(dp_mcmc::diagnostics::ess_median(&[&a])?.is_some());
/// let empty: [f64; 0] = [];
/// assert!(dp_mcmc::diagnostics::ess_median(&[&empty])?.is_none()); // no draws
/// assert!(dp_mcmc::diagnostics::ess_median(&[]).is_err()); // no chains
/// # Ok(()) }
/// ```
pub fn ess_median(chains: &[&[f64]]) -> Result<Option<f64>> {
    with(chains, |x| ess_quantile_mat(x, 0.5))
}

/// ESS of z-scaled split chains (ArviZ `method="z_scale"`; equals the bulk ESS).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4];
/// assert_eq!(dp_mcmc::diagnostics::ess_z_scale(&[&a])?, dp_mcmc::diagnostics::ess_bulk(&[&a])?);
/// assert!(dp_mcmc::diagnostics::ess_z_scale(&[&[f64::INFINITY; 6]]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_z_scale(chains: &[&[f64]]) -> Result<Option<f64>> {
    ess_bulk(chains)
}

/// ESS of z-scaled folded split chains (ArviZ `method="folded"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4, 0.2, -0.9];
/// assert!(dp_mcmc::diagnostics::ess_folded(&[&a])?.is_some());
/// assert!(dp_mcmc::diagnostics::ess_folded(&[&a, &a[..4]]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_folded(chains: &[&[f64]]) -> Result<Option<f64>> {
    with(chains, |x| ess_raw(&z_scale(&fold(&x.split()))))
}

/// ESS of the unsplit raw chains (ArviZ `method="identity"`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4];
/// assert!(dp_mcmc::diagnostics::ess_identity(&[&a])?.is_some());
/// assert!(dp_mcmc::diagnostics::ess_identity(&[&[0.0, f64::NAN, 0.0, 0.0]]).is_err());
/// # Ok(()) }
/// ```
pub fn ess_identity(chains: &[&[f64]]) -> Result<Option<f64>> {
    with(chains, ess_raw)
}

pub(crate) fn check_prob(prob: f64) -> Result<f64> {
    if prob > 0.0 && prob < 1.0 {
        Ok(prob)
    } else {
        Err(Error::invalid(
            "prob",
            prob,
            "must lie strictly between 0 and 1",
        ))
    }
}

/// Autocorrelation of one chain at lags `0..n` (FFT, biased /n normalisation, as
/// `arviz.autocorr`). A constant chain gives NaN beyond lag 0's 0/0.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let r = dp_mcmc::diagnostics::autocorr(&[1.0, -1.0, 1.0, -1.0])?;
/// assert!((r[0] - 1.0).abs() < 1e-15 && (r[1] + 0.75).abs() < 1e-15);
/// assert!(dp_mcmc::diagnostics::autocorr(&[1.0, f64::NAN]).is_err());
/// # Ok(()) }
/// ```
pub fn autocorr(chain: &[f64]) -> Result<Vec<f64>> {
    let x = Mat::from_chains(&[chain])?;
    let acov = autocov(&x).pop().unwrap_or_default();
    let c0 = acov.first().copied().unwrap_or(f64::NAN);
    Ok(acov.iter().map(|a| a / c0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_len_is_5_smooth() {
        assert_eq!(next_fast_len(2000), 2000);
        assert_eq!(next_fast_len(202), 216);
        assert_eq!(next_fast_len(1), 1);
        assert_eq!(next_fast_len(7), 8);
    }

    #[test]
    fn autocov_matches_direct_sum() {
        let v: Vec<f64> = (0..37).map(|i| ((i * 17) % 11) as f64 * 0.3).collect();
        let x = Mat::from_chains(&[&v]).unwrap();
        let fft = autocov(&x).pop().unwrap();
        let mu = mean(&v);
        for (t, a) in fft.iter().enumerate() {
            let direct: f64 = (0..v.len() - t)
                .map(|i| (v[i] - mu) * (v[i + t] - mu))
                .sum();
            assert!((a - direct / 37.0).abs() < 1e-12, "lag {t}");
        }
    }

    #[test]
    fn constant_chains_return_their_size() {
        let c = [2.0; 10];
        assert_eq!(ess_mean(&[&c, &c]).unwrap(), Some(20.0));
        assert_eq!(ess_bulk(&[&c, &c]).unwrap(), Some(20.0));
    }
}
