//! plotly figures for the mechanisms of the intro-to-DP and Hellinger seeds: box plots of the
//! Hellinger error per setting and mechanism, mean-error curves, and online-learning losses.

use plotly::box_plot::BoxMean;
use plotly::common::{DashType, Line, Mode, Title};
use plotly::layout::{Axis, AxisType, BoxMode, Layout};
use plotly::{BoxPlot, Plot, Scatter};
use polars::prelude::*;

use crate::error::{Error, Result};

fn f64_column(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
    let col = crate::frame::column_named(df, name)
        .ok_or_else(|| Error::InvalidData(format!("frame has no column `{name}`")))?
        .cast(&DataType::Float64)?;
    let ca = col.f64()?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

fn label(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A reader's axis title for a setting column of the Hellinger studies.
fn setting_title(column: &str) -> &str {
    match column {
        "n" => "data size n",
        "prior_strength" => "prior strength (the balanced prior's parameter)",
        other => other,
    }
}

/// Box plots of the error per setting (`x` = `"n"` or `"prior_strength"`), one box per
/// mechanism side by side (the paper's whisker plots), from
/// [`crate::frame::mechanisms::error_samples`].
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::SizeExperiment;
/// # fn main() -> dp_mcmc::Result<()> {
/// let res = SizeExperiment::beta_binomial(vec![300, 400], 10).run()?;
/// let df = dp_mcmc::frame::mechanisms::error_samples(&res)?;
/// let plot = dp_mcmc::plots::mechanisms::error_boxes(&df, "n")?;
/// assert!(plot.to_json().contains("\"box\""));
/// assert!(dp_mcmc::plots::mechanisms::error_boxes(&df, "nope").is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// Missing columns `mechanism`, `error` or `x`.
pub fn error_boxes(samples: &DataFrame, x: &str) -> Result<Plot> {
    let xs = f64_column(samples, x)?;
    let errors = f64_column(samples, "error")?;
    let mech = crate::frame::column_named(samples, "mechanism")
        .ok_or_else(|| Error::InvalidData("frame has no column `mechanism`".into()))?
        .str()?;
    let mech: Vec<Option<&str>> = (0..mech.len()).map(|i| mech.get(i)).collect();
    let mut plot = Plot::new();
    for (name, pretty) in [
        (
            "exponential",
            "exponential mechanism (Hellinger, smooth sensitivity)",
        ),
        ("laplace", "Laplace baseline"),
    ] {
        let mut bx = Vec::new();
        let mut by = Vec::new();
        for ((m, xv), e) in mech.iter().zip(&xs).zip(&errors) {
            if let (Some(m), Some(xv), Some(e)) = (m, xv, e)
                && *m == name
            {
                bx.push(label(*xv));
                by.push(*e);
            }
        }
        if !bx.is_empty() {
            plot.add_trace(BoxPlot::new_xy(bx, by).name(pretty).box_mean(BoxMean::True));
        }
    }
    let x_title = setting_title(x);
    plot.set_layout(
        Layout::new()
            .box_mode(BoxMode::Group)
            .title(Title::with_text(
                "Hellinger error of the released posterior",
            ))
            .x_axis(Axis::new().title(x_title).type_(AxisType::Category))
            .y_axis(Axis::new().title("Hellinger distance to the true posterior")),
    );
    Ok(plot)
}

/// Mean error curves vs `x` from [`crate::frame::mechanisms::error_summary`]: the exact
/// expectation of the exponential mechanism, and the Laplace baseline's exact expectation
/// where present (Beta-Binomial), otherwise its sampled mean.
///
/// # Errors
/// Missing summary columns.
pub fn mean_errors(summary: &DataFrame, x: &str) -> Result<Plot> {
    let xs: Vec<f64> = f64_column(summary, x)?.into_iter().flatten().collect();
    let exp: Vec<f64> = f64_column(summary, "exponential_expected")?
        .into_iter()
        .flatten()
        .collect();
    let lap_exact = f64_column(summary, "laplace_expected")?;
    let lap_mean = f64_column(summary, "laplace_mean")?;
    let lap: Vec<f64> = lap_exact
        .iter()
        .zip(&lap_mean)
        .map(|(e, m)| e.or(*m).unwrap_or(f64::NAN))
        .collect();
    let mut plot = Plot::new();
    plot.add_trace(
        Scatter::new(xs.clone(), exp)
            .mode(Mode::LinesMarkers)
            .name("exponential mechanism"),
    );
    plot.add_trace(
        Scatter::new(xs, lap)
            .mode(Mode::LinesMarkers)
            .name("Laplace baseline"),
    );
    plot.set_layout(
        Layout::new()
            .title(Title::with_text("Mean Hellinger error"))
            .x_axis(Axis::new().title(setting_title(x)))
            .y_axis(Axis::new().title("mean Hellinger error")),
    );
    Ok(plot)
}

/// Cumulative loss of an online-learning run vs step, beside the best expert's in hindsight
/// (the gap at the last step is `T` times the regret), from
/// [`crate::frame::mechanisms::online_run`].
///
/// # Errors
/// Missing columns `step`, `cumulative_loss` or `best_expert_cumulative_loss`.
pub fn online_losses(run: &DataFrame) -> Result<Plot> {
    let column = |name: &str| -> Result<Vec<f64>> {
        Ok(f64_column(run, name)?.into_iter().flatten().collect())
    };
    let steps = column("step")?;
    let mut plot = Plot::new();
    plot.add_trace(
        Scatter::new(steps.clone(), column("cumulative_loss")?)
            .mode(Mode::Lines)
            .name("RWM cumulative loss"),
    );
    plot.add_trace(
        Scatter::new(steps, column("best_expert_cumulative_loss")?)
            .mode(Mode::Lines)
            .line(Line::new().dash(DashType::Dash))
            .name("best expert in hindsight"),
    );
    plot.set_layout(
        Layout::new()
            .title(Title::with_text("Randomized weighted majority"))
            .show_legend(true)
            .x_axis(Axis::new().title("step"))
            .y_axis(Axis::new().title("cumulative loss")),
    );
    Ok(plot)
}
