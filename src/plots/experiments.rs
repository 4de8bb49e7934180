//! Figures 6.2–6.8 of the thesis from the experiment-grid DataFrames
//! ([`crate::frame::experiments::results_frame`]), plus trace and pair plots of any run.
//!
//! Box plots put ε (or the clip bound) on a categorical x axis with one box per algorithm
//! (the thesis' hue order and colours); a dashed black line is the median over seeds of the
//! posterior-vs-posterior baseline MMDs, a grey band their range. Panels without data are left
//! out, so quick grids give smaller figures.

use plotly::common::{Marker, Mode, Title};
use plotly::layout::{
    Axis, AxisType, BoxMode, CategoryOrder, GridPattern, LayoutGrid, Legend, Shape,
};
use plotly::{BoxPlot, Layout, Plot, Scatter};
use polars::prelude::DataFrame;

use super::common::{
    axis, baseline, baseline_band, color, f64_column, panel_axis_ids, panel_title, set_panel_axes,
    str_column, unique_in_order,
};
use crate::diagnostics::median;
use crate::experiments::SamplerKind;
use crate::models::Experiment;
use crate::{Error, Result};

/// Colour index and label of an algorithm key: its position in the registry, whose order is
/// the thesis' hue order (Figures 6.3–6.8); unknown keys keep their name, grey.
fn hue(key: &str) -> (usize, String) {
    match key.parse::<SamplerKind>() {
        Ok(k) => {
            let i = SamplerKind::all().position(|h| h == k).unwrap_or(7);
            (i, k.label().to_string())
        }
        Err(_) => (7, key.to_string()),
    }
}

/// Gap between the groups of boxes of neighbouring ε (a fraction of an ε's width; plotly's
/// default is 0.3): with 6-9 samplers per ε every bit of width is a wider box.
const BOX_GAP: f64 = 0.1;

/// Gap between the boxes of one group (a fraction of a box's slot; plotly's default 0.3).
const BOX_GROUP_GAP: f64 = 0.1;

/// Title of an experiment key (`easy-2d` → `Flat banana, d = 2`).
fn experiment_title(key: &str) -> String {
    key.parse::<Experiment>()
        .map_or_else(|_| key.to_string(), |e| e.name().to_string())
}

/// A number as a category label (`1`, `0.75`).
fn category(x: f64) -> String {
    format!("{x}")
}

/// A categorical x axis whose categories are the numbers `xs` in ascending order (plotly
/// would otherwise read "0.5", "1000" as numbers and space the boxes linearly).
fn category_axis(title: &str, xs: &[f64]) -> Axis {
    let mut xs = xs.to_vec();
    xs.retain(|x| x.is_finite());
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let cats: Vec<String> = xs.into_iter().map(category).collect();
    axis(title)
        .type_(AxisType::Category)
        .category_order(CategoryOrder::Array)
        .category_array(cats)
}

/// The columns a box figure reads.
struct Rows {
    experiment: Vec<String>,
    algorithm: Vec<String>,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Rows {
    fn read(df: &DataFrame, x: &str, y: &str) -> Result<Rows> {
        Ok(Rows {
            experiment: str_column(df, "experiment")?,
            algorithm: str_column(df, "algorithm")?,
            x: f64_column(df, x)?,
            y: f64_column(df, y)?,
        })
    }
}

/// The baselines of one panel (one per seed) as one dashed line at their median over a light
/// band from their smallest to their largest: several seeds' lines drawn one by one read as a
/// black band.
fn baseline_summary(values: &[f64], panel: usize) -> Vec<Shape> {
    if values.is_empty() {
        return Vec::new();
    }
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    vec![
        baseline_band(low, high, panel),
        baseline(median(values), panel),
    ]
}

/// Baseline MMDs of `experiment` from a baseline frame (columns `experiment`, `mmd`): the
/// finite ones.
fn baselines_of(baselines: Option<&DataFrame>, experiment: &str) -> Result<Vec<f64>> {
    let Some(b) = baselines else {
        return Ok(Vec::new());
    };
    let e = str_column(b, "experiment")?;
    let m = f64_column(b, "mmd")?;
    Ok(e.iter()
        .zip(m)
        .filter(|(k, v)| k.as_str() == experiment && v.is_finite())
        .map(|(_, v)| v)
        .collect())
}

/// One box per (x category, algorithm) for each `(panel title, experiment, algorithm filter)`;
/// `columns` panels per row.
#[allow(clippy::too_many_arguments)]
fn box_figure(
    rows: &Rows,
    panels: &[(String, String)],
    only_algorithm: Option<&str>,
    baselines: Option<&DataFrame>,
    title: &str,
    x_title: &str,
    y_titles: &[&str],
    columns: usize,
) -> Result<Plot> {
    // one y title per panel, or the last one for the panels after it
    let y_title = |panel: usize| {
        let last = y_titles.len().saturating_sub(1);
        y_titles.get(panel.min(last)).copied().unwrap_or("value")
    };
    // Keep the panels that have data.
    let has = |exp: &str| {
        (0..rows.y.len()).any(|i| {
            rows.experiment[i] == exp
                && rows.y[i].is_finite()
                && only_algorithm.is_none_or(|a| rows.algorithm[i] == a)
        })
    };
    let panels: Vec<&(String, String)> = panels.iter().filter(|(_, e)| has(e)).collect();
    if panels.is_empty() {
        return Err(Error::InvalidData(format!(
            "no finite `{}` values for the experiments of this figure; run the grid first",
            y_title(0)
        )));
    }
    if panels.len() > 8 {
        return Err(Error::invalid(
            "experiments",
            panels.len(),
            "at most 8 panels per figure",
        ));
    }
    let n_rows = panels.len().div_ceil(columns);
    let mut plot = Plot::new();
    let mut layout = Layout::new()
        .title(Title::with_text(title))
        .height(320 * n_rows + 80)
        .grid(
            LayoutGrid::new()
                .rows(n_rows)
                .columns(columns.min(panels.len()))
                .pattern(GridPattern::Independent),
        )
        .box_mode(BoxMode::Group)
        // up to 9 samplers share an ε: narrow gaps, each box as wide as it can be
        .box_gap(BOX_GAP)
        .box_group_gap(BOX_GROUP_GAP)
        .show_legend(true)
        .legend(Legend::new().title(Title::with_text("algorithm")));
    let mut annotations = Vec::new();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for (panel, (ptitle, exp)) in panels.iter().enumerate() {
        let idx: Vec<usize> = (0..rows.y.len())
            .filter(|&i| {
                &rows.experiment[i] == exp
                    && rows.y[i].is_finite()
                    && only_algorithm.is_none_or(|a| rows.algorithm[i] == a)
            })
            .collect();
        let xs: Vec<f64> = idx.iter().map(|&i| rows.x[i]).collect();
        layout = set_panel_axes(
            layout,
            panel,
            category_axis(x_title, &xs),
            axis(y_title(panel)),
        )?;
        annotations.push(panel_title(ptitle, panel));
        let mut algs = unique_in_order(
            &idx.iter()
                .map(|&i| rows.algorithm[i].clone())
                .collect::<Vec<_>>(),
        );
        algs.sort_by_key(|a| hue(a).0);
        let (xa, ya) = panel_axis_ids(panel);
        for alg in &algs {
            let (ci, label) = hue(alg);
            let mut pts: Vec<(f64, f64)> = idx
                .iter()
                .filter(|&&i| &rows.algorithm[i] == alg)
                .map(|&i| (rows.x[i], rows.y[i]))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let first = !shown.contains(&label);
            if first {
                shown.push(label.clone());
            }
            let (x, y): (Vec<String>, Vec<f64>) =
                pts.into_iter().map(|(x, y)| (category(x), y)).unzip();
            plot.add_trace(
                BoxPlot::new_xy(x, y)
                    .name(&label)
                    // one slot per sampler beside the others (without it plotly stacked
                    // the groups' boxes into a sliver)
                    .offset_group(&label)
                    .legend_group(&label)
                    .show_legend(first)
                    .marker(Marker::new().color(color(ci)))
                    .x_axis(&xa)
                    .y_axis(&ya),
            );
        }
        shapes.extend(baseline_summary(&baselines_of(baselines, exp)?, panel));
    }
    plot.set_layout(layout.annotations(annotations).shapes(shapes));
    Ok(plot)
}

fn panels_of(experiments: &[Experiment]) -> Vec<(String, String)> {
    experiments
        .iter()
        .map(|e| (e.name().to_string(), e.key().to_string()))
        .collect()
}

/// A box figure of `metric` (a column of the comparison results: `mmd`, `clip_fraction`,
/// `grad_clip_fraction`, `mean_error`, `acceptance`, …) against ε, one panel per experiment
/// with data (at most 8), one box per algorithm; a dashed median baseline over its range from
/// `baselines` (columns `experiment`, `mmd`) when given.
///
/// # Errors
/// [`Error::InvalidData`] for missing columns or no data for any of the experiments.
pub fn comparison_boxes(
    results: &DataFrame,
    baselines: Option<&DataFrame>,
    metric: &str,
    experiments: &[Experiment],
    title: &str,
    y_title: &str,
) -> Result<Plot> {
    let rows = Rows::read(results, "epsilon", metric)?;
    box_figure(
        &rows,
        &panels_of(experiments),
        None,
        baselines,
        title,
        "ε",
        &[y_title],
        1,
    )
}

const BANANAS: [Experiment; 4] = [
    Experiment::EasyBanana2d,
    Experiment::TemperedBanana2d,
    Experiment::EasyBanana10d,
    Experiment::TemperedBanana10d,
];
const EXTRA: [Experiment; 3] = [
    Experiment::Gauss30d,
    Experiment::HardBanana2d,
    Experiment::HardGauss2d,
];

/// Figure 6.3: MMD to the reference posterior against ε on the flat and tempered bananas
/// (d = 2 and 10), all six algorithms, dashed baseline MMDs.
///
/// `results`: comparison rows (columns `experiment`, `algorithm`, `epsilon`, `mmd`);
/// `baselines`: baseline rows (`experiment`, `mmd`).
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let results = df!(
///     "experiment" => ["easy-2d"; 4],
///     "algorithm" => ["dp-hmc", "dp-hmc", "dp-penalty", "dp-penalty"],
///     "epsilon" => [1.0, 4.0, 1.0, 4.0],
///     "mmd" => [0.5, 0.2, 0.4, 0.15],
/// )?;
/// let baselines = df!("experiment" => ["easy-2d"], "mmd" => [0.02])?;
/// let plot = dp_mcmc::plots::experiments::figure_6_3(&results, &baselines)?;
/// assert_eq!(plot.data().len(), 2);
/// assert!(plot.to_json().contains("\"dash\":\"dash\""));
/// // Without any banana rows there is nothing to draw.
/// let other = df!("experiment" => ["circle"], "algorithm" => ["dp-hmc"], "epsilon" => [1.0], "mmd" => [0.1])?;
/// assert!(dp_mcmc::plots::experiments::figure_6_3(&other, &baselines).is_err());
/// # Ok(()) }
/// ```
pub fn figure_6_3(results: &DataFrame, baselines: &DataFrame) -> Result<Plot> {
    comparison_boxes(
        results,
        Some(baselines),
        "mmd",
        &BANANAS,
        "Fig 6.3: MMD to the reference posterior (dashed: baseline median over seeds, grey: their range)",
        "MMD",
    )
}

/// Figure 6.4: as [`figure_6_3`] for the 30-d Gaussian, the narrow banana and the correlated
/// Gaussian (the three full-data algorithms).
pub fn figure_6_4(results: &DataFrame, baselines: &DataFrame) -> Result<Plot> {
    comparison_boxes(
        results,
        Some(baselines),
        "mmd",
        &EXTRA,
        "Fig 6.4: MMD to the reference posterior, harder targets (dashed: baseline median, grey: range)",
        "MMD",
    )
}

/// The field grid's figure: MMD boxes of the field's samplers (DP-SGLD, DP-SGNHT, DP-Fast MH) beside the
/// thesis' samplers at the same ε, on the seven experiments with a reference posterior (the
/// circle: [`figure_6_7`] on the same rows).
pub fn figure_field(results: &DataFrame, baselines: &DataFrame) -> Result<Plot> {
    let experiments: Vec<Experiment> = BANANAS.iter().chain(&EXTRA).copied().collect();
    comparison_boxes(
        results,
        Some(baselines),
        "mmd",
        &experiments,
        "The field's samplers beside the thesis': MMD to the reference posterior (dashed: baseline median, grey: range)",
        "MMD",
    )
}

/// Figure 6.5: fraction of clipped log-likelihood ratios against ε on the bananas
/// (a non-private diagnostic).
pub fn figure_6_5(results: &DataFrame) -> Result<Plot> {
    comparison_boxes(
        results,
        None,
        "clip_fraction",
        &BANANAS,
        "Fig 6.5: fraction of clipped log-likelihood ratios",
        "clip fraction",
    )
}

/// Figure 6.6: as [`figure_6_5`] for the 30-d Gaussian, narrow banana and correlated Gaussian.
pub fn figure_6_6(results: &DataFrame) -> Result<Plot> {
    comparison_boxes(
        results,
        None,
        "clip_fraction",
        &EXTRA,
        "Fig 6.6: fraction of clipped log-likelihood ratios, harder targets",
        "clip fraction",
    )
}

/// Figure 6.7: the circle: distance of the chain mean from the true mean (0, 0) (left) and
/// the clip fraction (right) against ε.
///
/// # Errors
/// [`Error::InvalidData`] without circle rows.
pub fn figure_6_7(results: &DataFrame) -> Result<Plot> {
    let key = Experiment::Circle.key().to_string();
    let err = Rows::read(results, "epsilon", "mean_error")?;
    let clip = Rows::read(results, "epsilon", "clip_fraction")?;
    // Two metrics in one figure: stack them as two "experiments".
    let tag = |mut r: Rows, t: &str| {
        for e in &mut r.experiment {
            if *e == key {
                *e = t.to_string();
            } else {
                e.clear();
            }
        }
        r
    };
    let mut rows = tag(err, "mean");
    let clip = tag(clip, "clip");
    rows.experiment.extend(clip.experiment);
    rows.algorithm.extend(clip.algorithm);
    rows.x.extend(clip.x);
    rows.y.extend(clip.y);
    let panels = vec![
        ("mean error against ε".to_string(), "mean".to_string()),
        ("clip fraction against ε".to_string(), "clip".to_string()),
    ];
    box_figure(
        &rows,
        &panels,
        None,
        None,
        "Fig 6.7: circle: mean error (left) and clip fraction (right)",
        "ε",
        &["mean error ‖mean − (0, 0)‖", "clip fraction"],
        2,
    )
}

/// Figure 6.8: DP HMC's fraction of clipped per-row gradients against ε, one panel per
/// experiment (4 × 2 grid).
///
/// # Errors
/// [`Error::InvalidData`] without DP HMC rows.
pub fn figure_6_8(results: &DataFrame) -> Result<Plot> {
    use Experiment::*;
    let rows = Rows::read(results, "epsilon", "grad_clip_fraction")?;
    let order = [
        EasyBanana2d,
        TemperedBanana2d,
        EasyBanana10d,
        TemperedBanana10d,
        Gauss30d,
        HardGauss2d,
        HardBanana2d,
        Circle,
    ];
    box_figure(
        &rows,
        &panels_of(&order),
        Some(SamplerKind::DpHmc.key()),
        None,
        "Fig 6.8: DP HMC: fraction of clipped per-row gradients",
        "ε",
        &["gradient clip fraction"],
        2,
    )
}

/// Figure 6.2: the clipping study. Top: MMD against the clip bound (box per algorithm);
/// bottom: MMD against the clip fraction; columns d = 2 and d = 10 (those present). Dashed
/// lines: baseline MMDs of `easy-2d` / `easy-10d`.
///
/// `results`: clipping rows (columns `experiment`, `algorithm`, `clip_bound`,
/// `clip_fraction`, `mmd`); `baselines`: (`experiment`, `mmd`).
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let results = df!(
///     "experiment" => ["easy-2d"; 4],
///     "algorithm" => ["rwmh", "rwmh", "hmc", "hmc"],
///     "clip_bound" => [0.5, 4.0, 0.5, 4.0],
///     "clip_fraction" => [0.4, 0.01, 0.3, 0.0],
///     "mmd" => [0.2, 0.05, 0.1, 0.04],
/// )?;
/// let baselines = df!("experiment" => ["easy-2d", "easy-2d"], "mmd" => [0.02, 0.025])?;
/// let plot = dp_mcmc::plots::experiments::figure_6_2(&results, &baselines)?;
/// let json = plot.to_json();
/// assert!(json.contains("clip bound") && json.contains("\"dash\":\"dash\""));
/// assert!(dp_mcmc::plots::experiments::figure_6_2(&results.drop("mmd")?, &baselines).is_err());
/// # Ok(()) }
/// ```
pub fn figure_6_2(results: &DataFrame, baselines: &DataFrame) -> Result<Plot> {
    let experiment = str_column(results, "experiment")?;
    let algorithm = str_column(results, "algorithm")?;
    let bound = f64_column(results, "clip_bound")?;
    let clip = f64_column(results, "clip_fraction")?;
    let mmd = f64_column(results, "mmd")?;
    let dims: Vec<Experiment> = [Experiment::EasyBanana2d, Experiment::EasyBanana10d]
        .into_iter()
        .filter(|e| (0..mmd.len()).any(|i| experiment[i] == e.key() && mmd[i].is_finite()))
        .collect();
    if dims.is_empty() {
        return Err(Error::InvalidData(
            "no easy-2d / easy-10d clipping rows with an MMD; run the clipping grid first".into(),
        ));
    }
    let cols = dims.len();
    let mut plot = Plot::new();
    let mut layout = Layout::new()
        .title(Title::with_text(
            "Fig 6.2: clipping without privacy noise (dashed: baseline median over seeds, grey: their range)",
        ))
        .height(800)
        .grid(
            LayoutGrid::new()
                .rows(2)
                .columns(cols)
                .pattern(GridPattern::Independent),
        )
        .box_mode(BoxMode::Group)
        // up to 9 samplers share an ε: narrow gaps, each box as wide as it can be
        .box_gap(BOX_GAP)
        .box_group_gap(BOX_GROUP_GAP)
        .show_legend(true)
        .legend(Legend::new().title(Title::with_text("algorithm")));
    let mut annotations = Vec::new();
    let mut shapes = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for (c, e) in dims.iter().enumerate() {
        let idx: Vec<usize> = (0..mmd.len())
            .filter(|&i| experiment[i] == e.key() && mmd[i].is_finite())
            .collect();
        let mut algs = unique_in_order(
            &idx.iter()
                .map(|&i| algorithm[i].clone())
                .collect::<Vec<_>>(),
        );
        algs.sort_by_key(|a| hue(a).0);
        let top = c;
        let bottom = cols + c;
        let d = e.dim();
        let bounds: Vec<f64> = idx.iter().map(|&i| bound[i]).collect();
        layout = set_panel_axes(
            layout,
            top,
            category_axis("clip bound", &bounds),
            axis("MMD"),
        )?;
        layout = set_panel_axes(layout, bottom, axis("clip fraction"), axis("MMD"))?;
        annotations.push(panel_title(
            &format!("d = {d}: MMD against the clip bound"),
            top,
        ));
        annotations.push(panel_title(
            &format!("d = {d}: MMD against the clip fraction"),
            bottom,
        ));
        for alg in &algs {
            // The thesis draws HMC blue and RWMH orange.
            let (_, label) = hue(alg);
            let ci = match alg.as_str() {
                "hmc" => 0,
                "rwmh" => 1,
                other => hue(other).0,
            };
            let mut pts: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&i| &algorithm[i] == alg)
                .collect();
            pts.sort_by(|&a, &b| bound[a].total_cmp(&bound[b]));
            let first = !shown.contains(&label);
            if first {
                shown.push(label.clone());
            }
            let (xa, ya) = panel_axis_ids(top);
            plot.add_trace(
                BoxPlot::new_xy(
                    pts.iter().map(|&i| category(bound[i])).collect::<Vec<_>>(),
                    pts.iter().map(|&i| mmd[i]).collect::<Vec<_>>(),
                )
                .name(&label)
                .offset_group(&label)
                .legend_group(&label)
                .show_legend(first)
                .marker(Marker::new().color(color(ci)))
                .x_axis(&xa)
                .y_axis(&ya),
            );
            let (xb, yb) = panel_axis_ids(bottom);
            plot.add_trace(
                Scatter::new(
                    pts.iter().map(|&i| clip[i]).collect::<Vec<_>>(),
                    pts.iter().map(|&i| mmd[i]).collect::<Vec<_>>(),
                )
                .name(&label)
                .legend_group(&label)
                .show_legend(false)
                .mode(Mode::Markers)
                .marker(Marker::new().color(color(ci)).opacity(0.6))
                .x_axis(&xb)
                .y_axis(&yb),
            );
        }
        let values = baselines_of(Some(baselines), e.key())?;
        for panel in [top, bottom] {
            shapes.extend(baseline_summary(&values, panel));
        }
    }
    plot.set_layout(layout.annotations(annotations).shapes(shapes));
    Ok(plot)
}

/// Trace plot of a run's draws ([`crate::samplers::Run::draws`]: columns `chain`, `draw`,
/// then one column per parameter): one panel per parameter (the first 8), one line per chain.
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let draws = df!("chain" => [0u32, 0, 1, 1], "draw" => [1u32, 2, 1, 2], "theta_0" => [0.1, 0.2, 0.0, -0.1])?;
/// let plot = dp_mcmc::plots::experiments::trace_plot(&draws)?;
/// assert_eq!(plot.data().len(), 2);
/// assert!(dp_mcmc::plots::experiments::trace_plot(&draws.drop("theta_0")?).is_err());
/// # Ok(()) }
/// ```
pub fn trace_plot(draws: &DataFrame) -> Result<Plot> {
    let chain = f64_column(draws, "chain")?;
    let step = f64_column(draws, "draw")?;
    let params: Vec<String> = draws
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .filter(|s| s != "chain" && s != "draw" && s != "warmup")
        .take(8)
        .collect();
    if params.is_empty() {
        return Err(Error::InvalidData(
            "the draws table has no parameter columns (expected chain, draw, θ…)".into(),
        ));
    }
    let chains = {
        let mut c = chain.clone();
        c.sort_by(f64::total_cmp);
        c.dedup();
        c
    };
    let mut plot = Plot::new();
    let mut layout = Layout::new()
        .title(Title::with_text("Trace plot"))
        .height(280 * params.len() + 100)
        .grid(
            // y_gap: room between panels for the x-axis title and the next panel's title.
            LayoutGrid::new()
                .rows(params.len())
                .columns(1)
                .y_gap(0.45)
                .pattern(GridPattern::Independent),
        )
        .show_legend(true)
        .legend(Legend::new().title(Title::with_text("chain")));
    let mut annotations = Vec::new();
    for (panel, p) in params.iter().enumerate() {
        let v = f64_column(draws, p)?;
        layout = set_panel_axes(layout, panel, axis("iteration"), axis(p))?;
        annotations.push(panel_title(p, panel));
        let (xa, ya) = panel_axis_ids(panel);
        for (ci, c) in chains.iter().enumerate() {
            let idx: Vec<usize> = (0..v.len()).filter(|&i| chain[i] == *c).collect();
            let name = format!("chain {c}");
            plot.add_trace(
                Scatter::new(
                    idx.iter().map(|&i| step[i]).collect::<Vec<_>>(),
                    idx.iter().map(|&i| v[i]).collect::<Vec<_>>(),
                )
                .name(&name)
                .legend_group(&name)
                .show_legend(panel == 0)
                .mode(Mode::Lines)
                .line(plotly::common::Line::new().color(color(ci)).width(1.0))
                .x_axis(&xa)
                .y_axis(&ya),
            );
        }
    }
    plot.set_layout(layout.annotations(annotations));
    Ok(plot)
}

/// Pair (scatter) plot of parameters `x` and `y` of a draws table (one colour per chain),
/// optionally over a reference sample (a frame with the same parameter columns, grey).
///
/// # Errors
/// [`Error::InvalidData`] for missing columns.
pub fn pair_plot(
    draws: &DataFrame,
    x: &str,
    y: &str,
    reference: Option<&DataFrame>,
) -> Result<Plot> {
    let chain = f64_column(draws, "chain")?;
    let xs = f64_column(draws, x)?;
    let ys = f64_column(draws, y)?;
    let mut plot = Plot::new();
    if let Some(r) = reference {
        plot.add_trace(
            Scatter::new(f64_column(r, x)?, f64_column(r, y)?)
                .name("reference posterior")
                .mode(Mode::Markers)
                .marker(Marker::new().color("#bbbbbb").size(4)),
        );
    }
    let mut chains = chain.clone();
    chains.sort_by(f64::total_cmp);
    chains.dedup();
    for (ci, c) in chains.iter().enumerate() {
        let idx: Vec<usize> = (0..xs.len()).filter(|&i| chain[i] == *c).collect();
        plot.add_trace(
            Scatter::new(
                idx.iter().map(|&i| xs[i]).collect::<Vec<_>>(),
                idx.iter().map(|&i| ys[i]).collect::<Vec<_>>(),
            )
            .name(format!("chain {c}"))
            .mode(Mode::Markers)
            .marker(Marker::new().color(color(ci)).size(4).opacity(0.6)),
        );
    }
    plot.set_layout(
        Layout::new()
            .title(Title::with_text(format!("Draws: {y} against {x}")))
            .x_axis(axis(x))
            .y_axis(axis(y))
            .show_legend(true)
            .height(500),
    );
    Ok(plot)
}

/// Title of an experiment key, as the figures show it (exposed for notebooks).
pub fn experiment_label(key: &str) -> String {
    experiment_title(key)
}
