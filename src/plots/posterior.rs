//! Thesis Figure 5.1: the 2-d posteriors with the chains' start points.

use plotly::common::{ColorScale, ColorScalePalette, Marker, Mode};
use plotly::contour::{Coloring, Contours};
use plotly::{Contour, Plot, Scatter};

use super::common::{axis, grid_layout, panel_axis_ids, panel_title, set_panel_axes};
use super::experiments::experiment_label;
use crate::experiments::PosteriorGrid;
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
        layout = set_panel_axes(layout, panel, axis("θ₀"), axis("θ₁"))?;
        annotations.push(panel_title(&experiment_label(g.experiment.key()), panel));
        let (xa, ya) = panel_axis_ids(panel);
        plot.add_trace(
            Contour::new(g.x.clone(), g.y.clone(), g.density.clone())
                .name("posterior density (relative)")
                .show_legend(panel == 0)
                .show_scale(false)
                .n_contours(8)
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
