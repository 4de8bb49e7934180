//! DataFrames of accountant grids: iteration budgets and δ(ε) curves over a grid of ε, and the
//! thesis' Figure 6.1 comparison table.

use crate::Result;
use crate::accounting::Accountant;
use crate::samplers::IterationBudget;
use polars::prelude::*;

/// `numpy.linspace(start, stop, num)`.
pub fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    match num {
        0 => vec![],
        1 => vec![start],
        _ => (0..num)
            .map(|i| start + (stop - start) * i as f64 / (num - 1) as f64)
            .collect(),
    }
}

/// One row per budget: `epsilon`, `iterations`, `method` ("zCDP", "ADP", "RDP", "Fourier"),
/// `algorithm`, `delta`, `achieved`, `achieved_quantity`, `thesis_compatible`.
///
/// # Errors
/// Only polars errors (none expected).
///
/// # Examples
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// use dp_mcmc::samplers::DpPenalty;
/// use dp_mcmc::frame::accounting::iterations_frame;
/// let s = DpPenalty::builder().tau(0.1).chains(1).epsilon(1.0).delta(1e-6);
/// let df = iterations_frame(&[s.budget(100_000)?])?;
/// assert_eq!(df.height(), 1);
/// // an invalid budget fails before a frame is built
/// assert!(s.epsilon(-1.0).budget(100_000).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn iterations_frame(rows: &[IterationBudget]) -> Result<DataFrame> {
    let df = df!(
        "epsilon" => rows.iter().map(|r| r.epsilon).collect::<Vec<_>>(),
        "iterations" => rows.iter().map(|r| r.iterations as u64).collect::<Vec<_>>(),
        "method" => rows.iter().map(|r| r.method.label()).collect::<Vec<_>>(),
        "algorithm" => rows.iter().map(|r| r.algorithm.as_str()).collect::<Vec<_>>(),
        "delta" => rows.iter().map(|r| r.delta).collect::<Vec<_>>(),
        "achieved" => rows.iter().map(|r| r.achieved).collect::<Vec<_>>(),
        "achieved_quantity" => rows.iter().map(|r| r.achieved_quantity.clone()).collect::<Vec<_>>(),
        "thesis_compatible" => rows.iter().map(|r| r.thesis_compatible).collect::<Vec<_>>(),
    )?;
    Ok(df)
}

/// δ(ε) of an accountant on a grid of ε: columns `epsilon`, `delta`, `method` (the
/// accountant's name).
///
/// # Errors
/// Errors of `Accountant::delta` (e.g. a negative ε).
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{Accountant, PrivacyEvent, Pld};
/// use dp_mcmc::frame::accounting::delta_frame;
/// let mut acc = Pld::new();
/// acc.compose(&PrivacyEvent::gaussian(1.0))?;
/// let df = delta_frame(&acc, &[0.5, 1.0, 2.0])?;
/// assert_eq!(df.height(), 3);
/// assert!(delta_frame(&acc, &[-1.0]).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn delta_frame<A: Accountant>(acc: &A, epsilons: &[f64]) -> Result<DataFrame> {
    let deltas = epsilons
        .iter()
        .map(|&e| acc.delta(e))
        .collect::<Result<Vec<f64>>>()?;
    let df = df!(
        "epsilon" => epsilons.to_vec(),
        "delta" => deltas,
        "method" => vec![acc.name(); epsilons.len()],
    )?;
    Ok(df)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn linspace_matches_numpy() {
        let x = linspace(0.5, 6.0, 50);
        assert_eq!(x.len(), 50);
        assert_eq!(x[0], 0.5);
        assert_eq!(x[49], 6.0);
        assert!((x[1] - 0.6122448979591837).abs() < 1e-15);
    }
}
