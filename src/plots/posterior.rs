//! Thesis Figure 5.1: the 2-d posteriors with the chains' start points.

use plotly::common::{ColorScale, ColorScalePalette, Line, Marker, Mode};
use plotly::contour::{Coloring, Contours};
use plotly::{Contour, Plot, Scatter};

use super::common::{axis, grid_layout, panel_axis_ids, panel_title, set_panel_axes};
use super::experiments::experiment_label;
use crate::experiments::{HmcTrajectory, PosteriorGrid};
use crate::models::Experiment;
use crate::{Error, Result};

/// Figure 5.1: one panel per posterior grid (density contours, relative to the maximum) with
/// the start points of its chains in orange; three panels per row.
///
/// ```
/// use dp_mcmc::experiments::PosteriorGrid;
/// use dp_mcmc::models::Experiment;
/// # fn main() -> dp_mcmc::Result<()> {
/// let grids = vec![PosteriorGrid::new(Experiment::Circle, 20, 30)?];
/// let json = dp_mcmc::plots::posterior::figure_5_1(&grids)?.to_json();
/// assert!(json.contains("\"contour\"") && json.contains("start points") && json.contains("θ₁"));
/// assert!(dp_mcmc::plots::posterior::figure_5_1(&[]).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// No grids.
pub fn figure_5_1(grids: &[PosteriorGrid]) -> Result<Plot> {
    if grids.is_empty() {
        return Err(Error::InvalidData(
            "no posterior grids: build them with PosteriorGrid::figure_5_1".into(),
        ));
    }
    let columns = grids.len().min(3);
    let rows = grids.len().div_ceil(columns);
    let mut layout = grid_layout(
        "Fig 5.1: posteriors of the 2-d experiments and the chains' start points",
        rows,
        columns,
        "",
    );
    let mut plot = Plot::new();
    let mut annotations = Vec::new();
    for (panel, g) in grids.iter().enumerate() {
        let (xa, ya) = panel_axis_ids(panel);
        // the circle drawn round: its θ₁ axis at the scale of its θ₀ axis
        let y_axis = match g.experiment {
            Experiment::Circle => axis("θ₁").scale_anchor(xa.as_str()),
            _ => axis("θ₁"),
        };
        layout = set_panel_axes(layout, panel, axis("θ₀"), y_axis)?;
        annotations.push(panel_title(&experiment_label(g.experiment.key()), panel));
        plot.add_trace(
            Contour::new(g.x.clone(), g.y.clone(), g.density.clone())
                .name("posterior density (relative)")
                .show_legend(panel == 0)
                .show_scale(false)
                .n_contours(8)
                // thick enough that a narrow posterior's few contours are seen
                .line(Line::new().width(2.0))
                .contours(Contours::new().coloring(Coloring::Lines))
                .color_scale(ColorScale::Palette(ColorScalePalette::Viridis))
                .x_axis(&xa)
                .y_axis(&ya),
        );
        plot.add_trace(
            Scatter::new(
                g.starts.iter().map(|s| s[0]).collect(),
                g.starts.iter().map(|s| s[1]).collect(),
            )
            .name("start points")
            .legend_group("start points")
            .show_legend(panel == 0)
            .mode(Mode::Markers)
            .marker(Marker::new().color("darkorange").size(7))
            .x_axis(&xa)
            .y_axis(&ya),
        );
    }
    plot.set_layout(layout.annotations(annotations));
    Ok(plot)
}

/// Figure 4.1: one DP HMC leapfrog trajectory on the circle posterior (start in orange).
///
/// ```
/// use dp_mcmc::experiments::HmcTrajectory;
/// # fn main() -> dp_mcmc::Result<()> {
/// let t = HmcTrajectory::circle(46327, 2, 30)?;
/// let json = dp_mcmc::plots::posterior::figure_4_1(&t)?.to_json();
/// assert!(json.contains("leapfrog trajectory") && json.contains("θ₀"));
/// # Ok(()) }
/// ```
///
/// # Errors
/// An empty trajectory.
pub fn figure_4_1(t: &HmcTrajectory) -> Result<Plot> {
    if t.path.is_empty() {
        return Err(Error::InvalidData("an empty trajectory".into()));
    }
    let g = &t.posterior;
    let mut plot = Plot::new();
    plot.add_trace(
        Contour::new(g.x.clone(), g.y.clone(), g.density.clone())
            .name("circle posterior (relative density)")
            .show_legend(true)
            .show_scale(false)
            .n_contours(8)
            .contours(Contours::new().coloring(Coloring::Lines))
            .color_scale(ColorScale::Palette(ColorScalePalette::Viridis)),
    );
    plot.add_trace(
        Scatter::new(
            t.path.iter().map(|p| p[0]).collect(),
            t.path.iter().map(|p| p[1]).collect(),
        )
        .name(format!(
            "leapfrog trajectory (L = {}, after {} iterations)",
            t.path.len() - 1,
            t.warmup
        ))
        .mode(Mode::LinesMarkers)
        .marker(Marker::new().color("black").size(4)),
    );
    plot.add_trace(
        Scatter::new(vec![t.path[0][0]], vec![t.path[0][1]])
            .name("start")
            .mode(Mode::Markers)
            .marker(Marker::new().color("darkorange").size(10)),
    );
    plot.set_layout(
        plotly::Layout::new()
            .title("Fig 4.1: a DP HMC trajectory on the circle")
            .height(650)
            .width(950)
            .x_axis(axis("θ₀"))
            .y_axis(axis("θ₁").scale_anchor("x")) // equal aspect: the circle looks round
            .show_legend(true)
            .legend(super::common::legend("")),
    );
    Ok(plot)
}

/// Posterior means with their 5-95 % intervals, one marker series per label, parameters on the
/// x axis: the figure of [`crate::frame::samplers::interval_table`] (columns `label`, `param`,
/// `mean`, `q05`, `q95`), e.g. the same model at several ε beside its non-private posterior.
///
/// Each parameter gets its own scale: values are shown relative to the first label's series
/// (the reference, e.g. the non-private posterior), as `(value − its mean) / its sd`, the sd
/// read off its 5-95 % interval (`(q95 − q05) / 3.29`, exact for a normal posterior). So
/// parameters of very different sizes share one readable axis, in the unit in which a private
/// answer's cost is usually stated. Where the first series lacks a parameter or has a zero-width
/// interval the values are shown as they are.
///
/// ```
/// use dp_mcmc::plots::posterior::interval_plot;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("label" => ["ref", "ref", "ε = 1", "ε = 1"], "param" => ["a", "b", "a", "b"],
///              "mean" => [0.0, 100.0, 0.5, 90.0], "q05" => [-1.0, 90.0, -1.0, 70.0],
///              "q95" => [1.0, 110.0, 2.0, 110.0])?;
/// let plot = interval_plot(&df)?;
/// let json = plot.to_json();
/// assert!(json.contains("arrayminus") && json.contains("(value − ref mean) / ref sd"));
/// // b at ε = 1: (90 − 100) / (20 / 3.29) ≈ −1.645 reference sds
/// assert!(json.contains("-1.64"));
/// assert!(interval_plot(&df.drop("q95")?).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// A missing or mistyped column.
pub fn interval_plot(df: &polars::prelude::DataFrame) -> Result<Plot> {
    use super::common::{f64_column, str_column};
    use plotly::common::{ErrorData, ErrorType, Title};
    use plotly::layout::Layout;
    let label = str_column(df, "label")?;
    let param = str_column(df, "param")?;
    let (mean, lo, hi) = (
        f64_column(df, "mean")?,
        f64_column(df, "q05")?,
        f64_column(df, "q95")?,
    );
    let mut labels: Vec<&String> = Vec::new();
    for l in &label {
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let mut params: Vec<&String> = Vec::new();
    for p in &param {
        if !params.contains(&p) {
            params.push(p);
        }
    }
    // the reference series' mean and sd of each parameter, if it has them all
    let z90 = 2.0 * crate::diagnostics::normal_quantile(0.95);
    let reference: Option<Vec<(f64, f64)>> = params
        .iter()
        .filter(|_| !labels.is_empty())
        .map(|p| {
            let i = (0..label.len()).find(|&i| label[i] == *labels[0] && param[i] == **p)?;
            let (m, sd) = (mean[i], (hi[i] - lo[i]) / z90);
            (m.is_finite() && sd.is_finite() && sd > 0.0).then_some((m, sd))
        })
        .collect();
    let scale = |i: usize, v: f64| match &reference {
        Some(r) => {
            let (m, sd) = r[params.iter().position(|p| **p == param[i]).unwrap_or(0)];
            (v - m) / sd
        }
        None => v,
    };
    let mut plot = Plot::new();
    let n = labels.len().max(1) as f64;
    for (li, l) in labels.iter().enumerate() {
        let rows: Vec<usize> = (0..label.len()).filter(|&i| &label[i] == *l).collect();
        // each parameter at an integer position, the series side by side around it
        let dodge = (li as f64 - (n - 1.0) / 2.0) * 0.7 / n;
        let x: Vec<f64> = rows
            .iter()
            .map(|&i| params.iter().position(|p| **p == param[i]).unwrap_or(0) as f64 + dodge)
            .collect();
        let y: Vec<f64> = rows.iter().map(|&i| scale(i, mean[i])).collect();
        let trace = Scatter::new(x, y)
            .mode(Mode::Markers)
            .name(l.as_str())
            .error_y(
                ErrorData::new(ErrorType::Data)
                    .symmetric(false)
                    .array(
                        rows.iter()
                            .map(|&i| scale(i, hi[i]) - scale(i, mean[i]))
                            .collect(),
                    )
                    .array_minus(
                        rows.iter()
                            .map(|&i| scale(i, mean[i]) - scale(i, lo[i]))
                            .collect(),
                    ),
            );
        plot.add_trace(trace);
    }
    let ticks: Vec<f64> = (0..params.len()).map(|i| i as f64).collect();
    let text: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    let y_title = match (&reference, labels.first()) {
        (Some(_), Some(first)) => format!("(value − {first} mean) / {first} sd"),
        _ => "posterior mean and 5-95 % interval".to_string(),
    };
    plot.set_layout(
        Layout::new()
            .title(Title::with_text("Posterior means and 5-95 % intervals"))
            .x_axis(
                plotly::layout::Axis::new()
                    .title(Title::with_text("parameter"))
                    .zero_line(false) // the parameters are categories: no line at x = 0
                    .tick_values(ticks)
                    .tick_text(text),
            )
            .y_axis(plotly::layout::Axis::new().title(Title::with_text(y_title))),
    );
    Ok(plot)
}
