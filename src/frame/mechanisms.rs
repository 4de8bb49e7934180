//! DataFrames of mechanism results (Hellinger experiments, output distributions, online
//! learning runs, randomized-response tables), and loss matrices read from DataFrames.

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::mechanisms::hellinger::ExperimentResult;
use crate::mechanisms::online_learning::OnlineRun;
use crate::mechanisms::randomized_response::RandomizedResponse;

/// One row per run: `mechanism` (str), `n` (u64), `prior_strength`, `run` (u32), `error`.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::SizeExperiment;
/// # fn main() -> dp_mcmc::Result<()> {
/// let res = SizeExperiment::beta_binomial(vec![300], 5).run()?;
/// let df = dp_mcmc::frame::mechanisms::error_samples(&res)?;
/// assert_eq!(df.height(), 10);
/// # Ok(()) }
/// ```
///
/// # Errors
/// Only polars errors (none expected for well-formed results).
pub fn error_samples(result: &ExperimentResult) -> Result<DataFrame> {
    let s = &result.samples;
    Ok(df!(
        "mechanism" => s.iter().map(|x| x.mechanism.name()).collect::<Vec<_>>(),
        "n" => s.iter().map(|x| x.n).collect::<Vec<_>>(),
        "prior_strength" => s.iter().map(|x| x.prior_strength).collect::<Vec<_>>(),
        "run" => s.iter().map(|x| x.run as u32).collect::<Vec<_>>(),
        "error" => s.iter().map(|x| x.error).collect::<Vec<_>>(),
    )?)
}

/// One row per setting: `n`, `prior_strength`, sampled means, exact expectations (the Laplace
/// one is null for k ≥ 3), `smooth_sensitivity`, `local_sensitivity`, and `better` (the
/// mechanism with the smaller expected error).
///
/// # Errors
/// Only polars errors.
pub fn error_summary(result: &ExperimentResult) -> Result<DataFrame> {
    let s = &result.summary;
    let better: Vec<&str> = s
        .iter()
        .map(|x| {
            if x.exponential_expected < x.laplace_expected.unwrap_or(x.laplace_mean) {
                "exponential"
            } else {
                "laplace"
            }
        })
        .collect();
    Ok(df!(
        "n" => s.iter().map(|x| x.n).collect::<Vec<_>>(),
        "prior_strength" => s.iter().map(|x| x.prior_strength).collect::<Vec<_>>(),
        "exponential_mean" => s.iter().map(|x| x.exponential_mean).collect::<Vec<_>>(),
        "laplace_mean" => s.iter().map(|x| x.laplace_mean).collect::<Vec<_>>(),
        "exponential_expected" => s.iter().map(|x| x.exponential_expected).collect::<Vec<_>>(),
        "laplace_expected" => s.iter().map(|x| x.laplace_expected).collect::<Vec<_>>(),
        "smooth_sensitivity" => s.iter().map(|x| x.smooth_sensitivity).collect::<Vec<_>>(),
        "local_sensitivity" => s.iter().map(|x| x.local_sensitivity).collect::<Vec<_>>(),
        "better" => better,
    )?)
}

/// The exact output distribution of a mechanism (from
/// [`crate::mechanisms::hellinger::HellingerMechanism::output_distribution`]): columns
/// `r_0 … r_{k−1}` (u64) and `probability`.
///
/// # Errors
/// [`Error::InvalidData`] for an empty distribution or count vectors of different lengths.
pub fn output_distribution(dist: &[(Vec<u64>, f64)]) -> Result<DataFrame> {
    let k = dist
        .first()
        .map(|(r, _)| r.len())
        .ok_or_else(|| Error::InvalidData("empty output distribution".into()))?;
    if dist.iter().any(|(r, _)| r.len() != k) {
        return Err(Error::InvalidData(
            "output distribution has count vectors of different lengths".into(),
        ));
    }
    let mut cols: Vec<Column> = (0..k)
        .map(|i| {
            Column::new(
                format!("r_{i}").into(),
                dist.iter().map(|(r, _)| r[i]).collect::<Vec<u64>>(),
            )
        })
        .collect();
    cols.push(Column::new(
        "probability".into(),
        dist.iter().map(|(_, p)| *p).collect::<Vec<f64>>(),
    ));
    Ok(DataFrame::new_infer_height(cols)?)
}

/// One row per step of an online-learning run: `step` (u32), `action` (u32), `loss`,
/// `cumulative_loss`, and `best_expert_cumulative_loss` (the best expert in hindsight).
///
/// # Errors
/// Only polars errors.
pub fn online_run(run: &OnlineRun) -> Result<DataFrame> {
    let mut acc = 0.0;
    let cumulative: Vec<f64> = run
        .step_losses
        .iter()
        .map(|l| {
            acc += l;
            acc
        })
        .collect();
    Ok(df!(
        "step" => (0..run.actions.len() as u32).collect::<Vec<_>>(),
        "action" => run.actions.iter().map(|&a| a as u32).collect::<Vec<_>>(),
        "loss" => run.step_losses.clone(),
        "cumulative_loss" => cumulative,
        "best_expert_cumulative_loss" => run.best_expert_cumulative.clone(),
    )?)
}

/// The exact answer probabilities of a randomized-response protocol: `truth`, `answer`,
/// `probability`.
///
/// # Errors
/// Only polars errors.
pub fn randomized_response_table(rr: &RandomizedResponse) -> Result<DataFrame> {
    let cases = [(false, false), (false, true), (true, false), (true, true)];
    Ok(df!(
        "truth" => cases.iter().map(|c| c.0).collect::<Vec<_>>(),
        "answer" => cases.iter().map(|c| c.1).collect::<Vec<_>>(),
        "probability" => cases.iter().map(|&(t, a)| rr.output_probability(t, a)).collect::<Vec<_>>(),
    )?)
}

/// A loss matrix from a DataFrame with one numeric column per expert and one row per step
/// (`losses[t][i]`), for [`crate::mechanisms::RandomizedWeightedMajority::run`].
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("a" => [0.0, 1.0], "b" => [1.0, 0.5])?;
/// let losses = dp_mcmc::frame::mechanisms::losses_from_frame(&df)?;
/// assert_eq!(losses, vec![vec![0.0, 1.0], vec![1.0, 0.5]]);
/// let bad = df!("a" => [Some(0.0), None])?;
/// assert!(dp_mcmc::frame::mechanisms::losses_from_frame(&bad).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// No columns, a non-numeric column, or a null.
pub fn losses_from_frame(df: &DataFrame) -> Result<Vec<Vec<f64>>> {
    if df.width() == 0 {
        return Err(Error::InvalidData(
            "loss frame has no columns: one column per expert".into(),
        ));
    }
    let mut out = vec![Vec::with_capacity(df.width()); df.height()];
    for col in df.columns() {
        if col.null_count() > 0 {
            return Err(Error::InvalidData(format!(
                "loss column `{}` has nulls; fill or drop them",
                col.name()
            )));
        }
        let c = col.cast(&DataType::Float64)?;
        for (row, v) in out.iter_mut().zip(c.f64()?.into_no_null_iter()) {
            row.push(v);
        }
    }
    Ok(out)
}
