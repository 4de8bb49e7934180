//! One parameter's summary row: mean, sd, 5 %/95 % quantiles, ESS, R-hat, MCSE.

use serde::Serialize;

use super::chains::{Mat, mean, quantile_sorted, sorted, var};
use super::{ess, mcse, rhat};
use crate::error::Result;

/// Posterior summary and convergence diagnostics of one scalar parameter over all chains.
///
/// `None` marks a value that is undefined for the input, where ArviZ returns NaN (R-hat of
/// one chain, anything needing 4 draws per chain when there are fewer, the sd of one draw).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamSummary {
    /// Mean of all draws.
    pub mean: f64,
    /// Standard deviation of all draws (ddof 1).
    pub sd: Option<f64>,
    /// 5 % quantile of all draws (type 7, numpy's default).
    pub q05: f64,
    /// 95 % quantile of all draws (type 7).
    pub q95: f64,
    /// Bulk ESS ([`ess_bulk`](crate::diagnostics::ess_bulk)).
    pub ess_bulk: Option<f64>,
    /// Tail ESS ([`ess_tail`](crate::diagnostics::ess_tail)).
    pub ess_tail: Option<f64>,
    /// Rank-normalised split R-hat ([`rhat`](crate::diagnostics::rhat)).
    pub rhat: Option<f64>,
    /// MCSE of the mean ([`mcse_mean`](crate::diagnostics::mcse_mean)).
    pub mcse_mean: Option<f64>,
}

/// Summarise one parameter given one slice of draws per chain (equal lengths, finite).
///
/// ```
/// use dp_mcmc::diagnostics::summarize;
/// # fn main() -> dp_mcmc::Result<()> {
/// let a = [0.3, -1.1, 0.8, 0.1, -0.5, 1.4, -0.2, 0.6];
/// let b = [-0.7, 0.2, 1.0, -1.3, 0.4, -0.1, 0.9, -0.6];
/// let s = summarize(&[&a, &b])?;
/// assert!((s.mean - 0.075).abs() < 1e-12);
/// assert!(s.rhat.is_some() && s.ess_bulk.is_some());
/// assert!(summarize(&[&a])?.rhat.is_none()); // one chain: no R-hat
/// let empty: [f64; 0] = [];
/// assert!(summarize(&[&empty]).is_err()); // no draws
/// # Ok(()) }
/// ```
pub fn summarize(chains: &[&[f64]]) -> Result<ParamSummary> {
    let x = Mat::from_chains(chains)?;
    if x.data.is_empty() {
        return Err(crate::Error::InvalidData(
            "the chains have no draws; a summary needs at least one".into(),
        ));
    }
    let s = sorted(&x.data);
    let sd = var(&x.data, 1).sqrt();
    Ok(ParamSummary {
        mean: mean(&x.data),
        sd: sd.is_finite().then_some(sd),
        q05: quantile_sorted(&s, 0.05),
        q95: quantile_sorted(&s, 0.95),
        ess_bulk: ess::ess_bulk(chains)?,
        ess_tail: ess::ess_tail(chains)?,
        rhat: rhat::rhat(chains)?,
        mcse_mean: mcse::mcse_mean(chains)?,
    })
}
