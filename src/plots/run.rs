//! Figures of one [`Run`].

use plotly::Plot;

use crate::Result;
use crate::samplers::Run;

/// Trace plot of a run: one panel per parameter (the first 8), one line per chain, x the
/// 1-based step (with thinning, the saved steps). The same figure as
/// [`trace_plot`](super::experiments::trace_plot) of [`Run::draws`].
///
/// ```
/// use dp_mcmc::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let model = dp_mcmc::models::Experiment::EasyBanana2d.model()?;
/// let run = Rwmh::builder().iterations(20).chains(2).start(vec![0.0, 0.0]).run(&model)?;
/// let plot = dp_mcmc::plots::trace(&run)?;
/// assert_eq!(plot.data().len(), 2 * 2); // 2 parameters × 2 chains
/// // A run without parameters has nothing to draw: an error, shown readably by Chart::try_new.
/// let mut empty = run.clone();
/// empty.param_names.clear();
/// assert!(dp_mcmc::plots::trace(&empty).is_err());
/// assert!(Chart::try_new(dp_mcmc::plots::trace(&empty)).error().is_some());
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`crate::Error::InvalidData`] for a run without parameters.
pub fn trace(run: &Run) -> Result<Plot> {
    super::experiments::trace_plot(&run.draws()?)
}
