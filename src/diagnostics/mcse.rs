//! Monte Carlo standard errors of the mean, the sd and quantiles (ArviZ 0.23 definitions).

use super::chains::{Mat, mean, sorted, var};
use super::ess::{check_prob, ess_quantile_mat, ess_raw};
use crate::error::Result;

fn input(chains: &[&[f64]]) -> Result<Option<Mat>> {
    let x = Mat::from_chains(chains)?;
    Ok((x.n >= 4).then_some(x))
}

fn defined(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// MCSE of the posterior mean: `sd(all draws, ddof 1) / sqrt(ESS_mean)` (ArviZ
/// `mcse(method="mean")`). `Ok(None)` with fewer than 4 draws per chain.
///
/// ```
/// use dp_mcmc::diagnostics::mcse_mean;
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4, -0.2, 0.6];
/// let se = mcse_mean(&[&a])?.expect("8 draws: defined");
/// assert!(se > 0.0 && se < 1.0);
/// assert_eq!(mcse_mean(&[&[0.0; 8]])?, Some(0.0)); // constant chain
/// assert!(mcse_mean(&[&a, &a[..5]]).is_err());
/// # Ok(()) }
/// ```
pub fn mcse_mean(chains: &[&[f64]]) -> Result<Option<f64>> {
    Ok(input(chains)?.and_then(|x| {
        let ess = ess_raw(&x.split());
        defined(var(&x.data, 1).sqrt() / ess.sqrt())
    }))
}

/// MCSE of the posterior sd, ArviZ 0.23.4 / arviz-stats 1.3: with `c² = (x − mean)²`,
/// `ess = ESS_mean(c²)`, `varvar = (mean(c⁴) − mean(c²)²)/ess`,
/// `mcse = sqrt(varvar / mean(c²) / 4)` (the delta method for `sqrt`).
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4, -0.2, 0.6];
/// assert!(dp_mcmc::diagnostics::mcse_sd(&[&a])?.unwrap() > 0.0);
/// assert!(dp_mcmc::diagnostics::mcse_sd(&[&[0.0, f64::NAN, 0.0, 0.0]]).is_err());
/// # Ok(()) }
/// ```
pub fn mcse_sd(chains: &[&[f64]]) -> Result<Option<f64>> {
    Ok(input(chains)?.and_then(|x| {
        let mu = mean(&x.data);
        let c2 = x.map(|v| (v - mu) * (v - mu));
        let ess = ess_raw(&c2.split());
        let m2 = mean(&c2.data);
        let m4 = c2.data.iter().map(|v| v * v).sum::<f64>() / c2.data.len() as f64;
        let varvar = (m4 - m2 * m2) / ess;
        defined((varvar / m2 / 4.0).sqrt())
    }))
}

/// MCSE of the `prob`-quantile (ArviZ `mcse(method="quantile")`): with `ess` the quantile
/// ESS, the Beta(ess·p + 1, ess·(1 − p) + 1) quantiles at Φ(∓1) are mapped to order
/// statistics of all draws; the MCSE is half the distance between them.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a: Vec<f64> = (0..200).map(|i| ((i * 37) % 200) as f64 / 200.0).collect();
/// let se = dp_mcmc::diagnostics::mcse_quantile(&[&a], 0.5)?.unwrap();
/// assert!(se > 0.0 && se < 0.1);
/// assert!(dp_mcmc::diagnostics::mcse_quantile(&[&a], 0.0).is_err());
/// # Ok(()) }
/// ```
pub fn mcse_quantile(chains: &[&[f64]], prob: f64) -> Result<Option<f64>> {
    check_prob(prob)?;
    Ok(input(chains)?.and_then(|x| mcse_quantile_mat(&x, prob)))
}

/// MCSE of the median: [`mcse_quantile`] at 0.5.
///
/// ```
/// # fn main() -> dp_mcmc::Result<()> {
/// let a: Vec<f64> = (0..200).map(|i| ((i * 37) % 200) as f64 / 200.0).collect();
/// assert!(dp_mcmc::diagnostics::mcse_median(&[&a])?.is_some());
/// assert!(dp_mcmc::diagnostics::mcse_median(&[]).is_err());
/// # Ok(()) }
/// ```
pub fn mcse_median(chains: &[&[f64]]) -> Result<Option<f64>> {
    mcse_quantile(chains, 0.5)
}

fn mcse_quantile_mat(x: &Mat, p: f64) -> Option<f64> {
    let ess = defined(ess_quantile_mat(x, p))?;
    let (a, b) = (ess * p + 1.0, ess * (1.0 - p) + 1.0);
    let s = sorted(&x.data);
    let size = s.len() as f64;
    let lo = statrs::function::beta::inv_beta_reg(a, b, 0.1586553) * size - 1.0;
    let hi = statrs::function::beta::inv_beta_reg(a, b, 0.8413447) * size - 1.0;
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    let th1 = s[lo.max(0.0).floor() as usize];
    let th2 = s[hi.min(size - 1.0).ceil() as usize];
    defined((th2 - th1) / 2.0)
}
