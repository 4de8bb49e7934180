//! DataFrames of the experiment grids: the per-task result rows and their medians per
//! configuration (what the thesis' box plots summarise).

use std::path::Path;

use polars::prelude::*;

use crate::error::Result;
use crate::experiments::{ResultRow, read_results};

/// One row per task, sorted by task id, columns as [`crate::experiments::RESULT_COLUMNS`]
/// (`None` values are nulls; float columns are always `f64`, even when all null).
///
/// ```
/// use dp_mcmc::experiments::ResultRow;
/// use dp_mcmc::frame::experiments::results_frame;
/// # fn main() -> dp_mcmc::Result<()> {
/// let mut row = ResultRow::empty("b/1", "baseline", "easy-2d", "exact");
/// row.mmd = Some(0.02);
/// let df = results_frame(&[row])?;
/// assert_eq!(df.height(), 1);
/// assert_eq!(df.column("epsilon")?.dtype(), &dp_mcmc::polars::prelude::DataType::Float64);
/// # Ok(()) }
/// ```
pub fn results_frame(rows: &[ResultRow]) -> Result<DataFrame> {
    let mut rows: Vec<&ResultRow> = rows.iter().collect();
    rows.sort_by(|a, b| a.task.cmp(&b.task));
    let s = |f: &dyn Fn(&ResultRow) -> String| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let o = |f: &dyn Fn(&ResultRow) -> Option<f64>| {
        rows.iter().map(|r| f(r)).collect::<Vec<Option<f64>>>()
    };
    let u = |f: &dyn Fn(&ResultRow) -> u64| rows.iter().map(|r| f(r)).collect::<Vec<u64>>();
    let df = df!(
        "task" => s(&|r| r.task.clone()),
        "grid" => s(&|r| r.grid.clone()),
        "experiment" => s(&|r| r.experiment.clone()),
        "algorithm" => s(&|r| r.algorithm.clone()),
        "epsilon" => o(&|r| r.epsilon),
        "clip_bound" => o(&|r| r.clip_bound),
        "clip_distance" => rows.iter().map(|r| r.clip_distance.clone()).collect::<Vec<Option<String>>>(),
        "dim" => u(&|r| r.dim as u64),
        "n" => u(&|r| r.n as u64),
        "chain" => u(&|r| r.chain as u64),
        "seed" => u(&|r| r.seed),
        "iterations" => u(&|r| r.iterations as u64),
        "acceptance" => o(&|r| r.acceptance),
        "clip_fraction" => o(&|r| r.clip_fraction),
        "grad_clip_fraction" => o(&|r| r.grad_clip_fraction),
        "decisions_changed" => rows.iter().map(|r| r.decisions_changed.map(|d| d as u64)).collect::<Vec<Option<u64>>>(),
        "mmd" => o(&|r| r.mmd),
        "mean_error" => o(&|r| r.mean_error),
        "cov_error" => o(&|r| r.cov_error),
        "wall_seconds" => rows.iter().map(|r| r.wall_seconds).collect::<Vec<f64>>(),
    )?;
    Ok(df)
}

/// [`results_frame`] of a results CSV written by the grid runner (empty if the file is
/// missing).
pub fn load_results(path: impl AsRef<Path>) -> Result<DataFrame> {
    results_frame(&read_results(path)?)
}

/// Median of the finite values (`None` if there are none).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

/// Medians per configuration (grid, experiment, algorithm, ε, clip bound, clip distance, n):
/// columns `grid`, `experiment`, `algorithm`, `epsilon`, `clip_bound`, `n`, `chains`, and the
/// medians `iterations`, `acceptance`, `clip_fraction`, `grad_clip_fraction`, `mmd`,
/// `mean_error`, `cov_error`, `wall_seconds`, in order of first appearance after sorting by
/// task id.
///
/// ```
/// use dp_mcmc::experiments::ResultRow;
/// use dp_mcmc::frame::experiments::medians_frame;
/// # fn main() -> dp_mcmc::Result<()> {
/// let rows: Vec<ResultRow> = [0.1, 0.3, 0.2].iter().enumerate().map(|(i, m)| {
///     let mut r = ResultRow::empty(&format!("t/{i}"), "comparison", "easy-2d", "dp-hmc");
///     r.epsilon = Some(1.0);
///     r.mmd = Some(*m);
///     r
/// }).collect();
/// let med = medians_frame(&rows)?;
/// assert_eq!(med.height(), 1);
/// assert_eq!(med.column("mmd")?.f64()?.get(0), Some(0.2));
/// # Ok(()) }
/// ```
pub fn medians_frame(rows: &[ResultRow]) -> Result<DataFrame> {
    let mut sorted: Vec<&ResultRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.task.cmp(&b.task));
    type Key = (
        String,
        String,
        String,
        Option<u64>,
        Option<u64>,
        Option<String>,
        usize,
    );
    let key = |r: &ResultRow| -> Key {
        (
            r.grid.clone(),
            r.experiment.clone(),
            r.algorithm.clone(),
            r.epsilon.map(f64::to_bits),
            r.clip_bound.map(f64::to_bits),
            r.clip_distance.clone(),
            r.n,
        )
    };
    let mut groups: Vec<(Key, Vec<&ResultRow>)> = Vec::new();
    for r in sorted {
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    // Sort configurations by (grid, experiment, algorithm, ε, clip bound) numerically.
    groups.sort_by(|(a, _), (b, _)| {
        (&a.0, &a.1, &a.2)
            .cmp(&(&b.0, &b.1, &b.2))
            .then(
                a.3.map(f64::from_bits)
                    .unwrap_or(f64::NAN)
                    .total_cmp(&b.3.map(f64::from_bits).unwrap_or(f64::NAN)),
            )
            .then(
                a.4.map(f64::from_bits)
                    .unwrap_or(f64::NAN)
                    .total_cmp(&b.4.map(f64::from_bits).unwrap_or(f64::NAN)),
            )
            .then(a.5.cmp(&b.5))
            .then(a.6.cmp(&b.6))
    });
    let med = |f: &dyn Fn(&ResultRow) -> Option<f64>| -> Vec<Option<f64>> {
        groups
            .iter()
            .map(|(_, v)| median(v.iter().filter_map(|r| f(r)).collect()))
            .collect()
    };
    let df = df!(
        "grid" => groups.iter().map(|(k, _)| k.0.clone()).collect::<Vec<_>>(),
        "experiment" => groups.iter().map(|(k, _)| k.1.clone()).collect::<Vec<_>>(),
        "algorithm" => groups.iter().map(|(k, _)| k.2.clone()).collect::<Vec<_>>(),
        "epsilon" => groups.iter().map(|(k, _)| k.3.map(f64::from_bits)).collect::<Vec<_>>(),
        "clip_bound" => groups.iter().map(|(k, _)| k.4.map(f64::from_bits)).collect::<Vec<_>>(),
        "n" => groups.iter().map(|(k, _)| k.6 as u64).collect::<Vec<_>>(),
        "chains" => groups.iter().map(|(_, v)| v.len() as u64).collect::<Vec<_>>(),
        "iterations" => med(&|r| Some(r.iterations as f64)),
        "acceptance" => med(&|r| r.acceptance),
        "clip_fraction" => med(&|r| r.clip_fraction),
        "grad_clip_fraction" => med(&|r| r.grad_clip_fraction),
        "mmd" => med(&|r| r.mmd),
        "mean_error" => med(&|r| r.mean_error),
        "cov_error" => med(&|r| r.cov_error),
        "wall_seconds" => med(&|r| Some(r.wall_seconds)),
    )?;
    Ok(df)
}

/// The exact-posterior reference sample of an experiment (1000 draws, thesis Table 5.1), one
/// column per parameter named as the model names them: the dashed reference in
/// [`crate::plots::experiments::pair_plot`].
///
/// ```
/// use dp_mcmc::frame::experiments::reference_frame;
/// use dp_mcmc::models::Experiment;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = reference_frame(&Experiment::EasyBanana2d.model()?)?;
/// assert_eq!((df.height(), df.width()), (1000, 2));
/// // the circle has no exact posterior sample
/// assert!(reference_frame(&Experiment::Circle.model()?).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`crate::Error::InvalidData`] for an experiment without an exact posterior (the circle).
pub fn reference_frame(model: &crate::models::ExperimentModel) -> Result<DataFrame> {
    use crate::models::Model;
    let draws = model.default_reference_sample().ok_or_else(|| {
        crate::Error::InvalidData(format!(
            "the experiment `{}` has no exact posterior sample to compare with",
            model.experiment().name()
        ))
    })?;
    let columns: Vec<Column> = model
        .param_names()
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let values: Vec<f64> = draws.iter().map(|x| x[i]).collect();
            Column::new(name.as_str().into(), values)
        })
        .collect();
    Ok(DataFrame::new_infer_height(columns)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_nan() {
        assert_eq!(median(vec![3.0, 1.0, f64::NAN, 2.0, 4.0]), Some(2.5));
        assert_eq!(median(vec![f64::NAN]), None);
    }
}
