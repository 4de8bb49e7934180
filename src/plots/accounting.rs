//! Figure 6.1 of the thesis: maximum iterations against ε, one panel per algorithm, one line
//! per accountant.

use plotly::common::{DashType, Line, Mode};
use plotly::layout::{GridPattern, LayoutGrid};
use plotly::{Plot, Scatter};
use polars::prelude::DataFrame;

use super::common::{
    axis, color, f64_column, grid_layout, panel_axis_ids, panel_title, set_panel_axes, str_column,
    unique_in_order,
};
use crate::{Error, Result};

/// The thesis' y-axis limit in Figure 6.1 (raised when the data go higher).
const THESIS_Y_MAX: f64 = 3000.0;

/// Dash styles for the values of the optional `mode` column (first mode solid).
const MODE_DASH: [DashType; 3] = [DashType::Solid, DashType::Dash, DashType::Dot];

/// The thesis' name of an algorithm given by its CLI name (`dp-penalty` → `DP penalty`);
/// other names are shown as they are.
fn panel_label(algorithm: &str) -> String {
    match algorithm {
        "dp-penalty" => "DP penalty",
        "minibatch-penalty" => "minibatch DP penalty",
        "dp-hmc" => "DP HMC",
        "dp-barker" => "DP Barker",
        other => other,
    }
    .to_string()
}

/// Figure 6.1: the number of iterations each accountant allows, against ε.
///
/// `df` needs the columns `epsilon` (numeric), `iterations` (numeric), `method` (string: the
/// accountant, e.g. `zCDP`, `RDP`, `ADP`) and `algorithm` (string: one panel per value, in
/// order of first appearance, at most 8; CLI names such as `dp-penalty` are shown as the
/// thesis names them), as [`crate::frame::figure_6_1::figure_6_1`] produces them. An
/// optional string column `mode` (e.g. `corrected` / `thesis`) splits each accountant into
/// one line per mode, told apart by dash style. Colours follow the order of the methods
/// (blue, orange, green, …: the thesis draws zCDP/RDP blue and ADP orange); the y axis spans
/// 0–3000 as in the thesis unless the data go higher. A numeric `delta` column with a single
/// value is named in the title.
///
/// # Errors
/// [`Error::InvalidData`] if a column is missing or has the wrong type, or the frame is empty;
/// [`Error::InvalidParameter`] for more than 8 algorithms.
///
/// # Examples
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!(
///     "epsilon" => [0.5, 6.0, 0.5, 6.0],
///     "iterations" => [10u64, 1079, 20, 1431],
///     "method" => ["zCDP", "zCDP", "ADP", "ADP"],
///     "algorithm" => ["DP penalty"; 4],
/// )?;
/// let plot = dp_mcmc::plots::accounting_comparison(&df)?;
/// assert_eq!(plot.data().len(), 2);
/// // A frame without the `method` column is rejected.
/// let bad = df.drop("method")?;
/// assert!(dp_mcmc::plots::accounting_comparison(&bad).is_err());
/// # Ok(())
/// # }
/// ```
pub fn accounting_comparison(df: &DataFrame) -> Result<Plot> {
    if df.height() == 0 {
        return Err(Error::InvalidData(
            "the accounting table is empty; compute at least one ε".into(),
        ));
    }
    let epsilon = f64_column(df, "epsilon")?;
    let iterations = f64_column(df, "iterations")?;
    let method = str_column(df, "method")?;
    let algorithm = str_column(df, "algorithm")?;
    let has = |name: &str| df.columns().iter().any(|c| c.name().as_str() == name);
    let mode = if has("mode") {
        Some(str_column(df, "mode")?)
    } else {
        None
    };

    let algorithms = unique_in_order(&algorithm);
    let methods = unique_in_order(&method);
    let modes = mode.as_deref().map(unique_in_order).unwrap_or_default();
    let n_panels = algorithms.len();
    let y_max = iterations
        .iter()
        .copied()
        .filter(|y| y.is_finite())
        .fold(THESIS_Y_MAX, |m, y| m.max(y * 1.05));

    let mut delta = "δ".to_string();
    if has("delta") {
        let deltas = f64_column(df, "delta")?;
        if deltas.iter().all(|d| *d == deltas[0]) {
            delta = format!("δ = {:e}", deltas[0]);
        }
    }
    let title = format!("Maximum iterations for a privacy budget (ε, {delta})");
    let mut plot = Plot::new();
    // wider gaps than the default so each panel's y-axis title clears the panel to its left
    let mut layout = grid_layout(&title, 1, n_panels, "accountant").grid(
        LayoutGrid::new()
            .rows(1)
            .columns(n_panels)
            .pattern(GridPattern::Independent)
            .x_gap(0.3),
    );
    let mut annotations = Vec::with_capacity(n_panels);
    let mut legend_shown: Vec<String> = Vec::new();

    for (panel, alg) in algorithms.iter().enumerate() {
        layout = set_panel_axes(
            layout,
            panel,
            axis("ε"),
            axis("iterations").range(vec![0.0, y_max]),
        )?;
        annotations.push(panel_title(&panel_label(alg), panel));
        for (mi, m) in methods.iter().enumerate() {
            let series_modes: Vec<Option<(usize, &String)>> = if modes.is_empty() {
                vec![None]
            } else {
                modes.iter().enumerate().map(Some).collect()
            };
            for md in series_modes {
                let mut points: Vec<(f64, f64)> = (0..df.height())
                    .filter(|&i| {
                        &algorithm[i] == alg
                            && &method[i] == m
                            && match (md, &mode) {
                                (Some((_, md)), Some(col)) => &col[i] == md,
                                _ => true,
                            }
                    })
                    .map(|i| (epsilon[i], iterations[i]))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let name = match md {
                    Some((_, md)) if modes.len() > 1 => format!("{m} ({md})"),
                    _ => m.clone(),
                };
                let dash = md.map_or(DashType::Solid, |(k, _)| {
                    MODE_DASH[k % MODE_DASH.len()].clone()
                });
                let first = !legend_shown.contains(&name);
                if first {
                    legend_shown.push(name.clone());
                }
                let (xa, ya) = panel_axis_ids(panel);
                let (x, y): (Vec<f64>, Vec<f64>) = points.into_iter().unzip();
                plot.add_trace(
                    Scatter::new(x, y)
                        .name(&name)
                        .legend_group(&name)
                        .show_legend(first)
                        .mode(Mode::Lines)
                        .line(Line::new().color(color(mi)).width(2.0).dash(dash))
                        .x_axis(xa)
                        .y_axis(ya),
                );
            }
        }
    }
    plot.set_layout(layout.annotations(annotations));
    Ok(plot)
}

/// The Fourier accountant's δ beside certified intervals of the same privacy loss, relative to
/// the Fourier value: a band from `certified_lower/fourier_delta − 1` to
/// `certified_upper/fourier_delta − 1` and the Fourier value at 0, against the number of
/// compositions. A Fourier value inside the band is consistent with the true δ.
///
/// `df` needs the numeric columns `iterations`, `fourier_delta`, `certified_lower` and
/// `certified_upper`, as [`crate::frame::figure_6_1::fourier_against_certified`] makes them.
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!(
///     "iterations" => [300u64, 828],
///     "fourier_delta" => [1e-7, 2e-6],
///     "certified_lower" => [0.99e-7, 1.98e-6],
///     "certified_upper" => [1.01e-7, 2.02e-6],
/// )?;
/// let plot = dp_mcmc::plots::accounting::certified_band(&df)?;
/// assert_eq!(plot.data().len(), 3);
/// // a table without the Fourier column is rejected
/// assert!(dp_mcmc::plots::accounting::certified_band(&df.drop("fourier_delta")?).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::InvalidData`] if a column is missing or not numeric, or the table is empty.
pub fn certified_band(df: &DataFrame) -> Result<Plot> {
    use plotly::Layout;
    use plotly::common::{Fill, Title};
    if df.height() == 0 {
        return Err(Error::InvalidData(
            "the comparison table is empty; compute at least one iteration count".into(),
        ));
    }
    let k = f64_column(df, "iterations")?;
    let fourier = f64_column(df, "fourier_delta")?;
    // in parts per million: plain numbers on the axis, not SI prefixes (µ) that read as units
    let relative = |name: &str| -> Result<Vec<f64>> {
        let v = f64_column(df, name)?;
        Ok(v.iter()
            .zip(&fourier)
            .map(|(x, f)| (x / f - 1.0) * 1e6)
            .collect())
    };
    let band_edge = |y: Vec<f64>, name: &str| {
        Scatter::new(k.clone(), y)
            .name(name)
            .mode(Mode::Lines)
            .line(Line::new().width(0.5).color(color(0)))
    };
    let mut plot = Plot::new();
    // one legend entry for the band: its lower edge carries no entry of its own
    plot.add_trace(band_edge(relative("certified_lower")?, "certified lower").show_legend(false));
    plot.add_trace(
        band_edge(
            relative("certified_upper")?,
            "certified interval (lower to upper)",
        )
        .fill(Fill::ToNextY),
    );
    plot.add_trace(
        Scatter::new(k.clone(), vec![0.0; k.len()])
            .name("Fourier (nx = 10⁶, L = 20)")
            .mode(Mode::Markers)
            .marker(plotly::common::Marker::new().color(color(1))),
    );
    plot.set_layout(
        Layout::new()
            .title(Title::with_text(
                "δ(ε) relative to the Fourier value, certified band",
            ))
            .x_axis(axis("iterations k"))
            .y_axis(axis("(δ / δ_Fourier − 1) × 10⁶"))
            .show_legend(true),
    );
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;
    use serde_json::Value;

    /// Three panels × two methods × three ε, with the thesis' ε = 6 endpoints (THESIS-NOTES §16).
    fn figure_frame() -> DataFrame {
        let panels = [
            ("DP penalty", "zCDP", 1079u64, 1431u64),
            ("minibatch DP penalty", "RDP", 991, 1817),
            ("DP HMC", "zCDP", 639, 848),
        ];
        let (mut e, mut k, mut m, mut a) = (vec![], vec![], vec![], vec![]);
        for (alg, first, end_first, end_adp) in panels {
            for (method, end) in [(first, end_first), ("ADP", end_adp)] {
                for (eps, frac) in [(6.0, 1.0), (0.5, 0.0), (3.0, 0.5)] {
                    e.push(eps);
                    k.push((end as f64 * frac) as u64);
                    m.push(method);
                    a.push(alg);
                }
            }
        }
        df!("epsilon" => e, "iterations" => k, "method" => m, "algorithm" => a).unwrap()
    }

    fn json(plot: &Plot) -> Value {
        serde_json::from_str(&plot.to_json()).unwrap()
    }

    #[test]
    fn three_titled_and_labelled_panels() {
        let j = json(&accounting_comparison(&figure_frame()).unwrap());
        let layout = &j["layout"];
        assert!(
            layout["title"]["text"]
                .as_str()
                .unwrap()
                .starts_with("Maximum iterations for a privacy budget (ε, δ)")
        );
        assert_eq!(layout["grid"]["columns"], 3);
        for ax in ["", "2", "3"] {
            assert_eq!(layout[format!("xaxis{ax}")]["title"]["text"], "ε");
            assert_eq!(layout[format!("yaxis{ax}")]["title"]["text"], "iterations");
            assert_eq!(layout[format!("yaxis{ax}")]["range"][1], 3000.0);
        }
        let titles: Vec<&str> = layout["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["text"].as_str().unwrap())
            .collect();
        assert_eq!(titles, ["DP penalty", "minibatch DP penalty", "DP HMC"]);
        assert_eq!(layout["legend"]["title"]["text"], "accountant");
    }

    #[test]
    fn cli_algorithm_names_get_thesis_titles() {
        let df = df!(
            "epsilon" => [1.0, 1.0], "iterations" => [1u64, 2],
            "method" => ["ADP", "ADP"], "algorithm" => ["minibatch-penalty", "my sampler"],
        )
        .unwrap();
        let j = json(&accounting_comparison(&df).unwrap());
        assert_eq!(
            j["layout"]["annotations"][0]["text"],
            "minibatch DP penalty"
        );
        assert_eq!(j["layout"]["annotations"][1]["text"], "my sampler");
    }

    #[test]
    fn one_sorted_line_per_method_and_panel_with_one_legend_entry_each() {
        let j = json(&accounting_comparison(&figure_frame()).unwrap());
        let data = j["data"].as_array().unwrap();
        assert_eq!(data.len(), 6);
        let legend: Vec<&str> = data
            .iter()
            .filter(|t| t["showlegend"] == true)
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(legend, ["zCDP", "ADP", "RDP"]);
        // Panel 1, ADP: sorted by ε, ending at the thesis endpoint.
        let adp = &data[1];
        assert_eq!(adp["xaxis"], "x");
        assert_eq!(adp["x"], serde_json::json!([0.5, 3.0, 6.0]));
        assert_eq!(adp["y"][2], 1431.0);
        assert_eq!(data[5]["xaxis"], "x3");
        // Colours by method: zCDP blue, ADP orange in every panel.
        assert_eq!(data[0]["line"]["color"], "#1f77b4");
        assert_eq!(data[1]["line"]["color"], "#ff7f0e");
        assert_eq!(data[5]["line"]["color"], "#ff7f0e");
    }

    #[test]
    fn mode_column_splits_lines_by_dash() {
        let df = figure_frame();
        let n = df.height();
        let mut thesis = df.clone();
        thesis
            .with_column(Column::new("mode".into(), vec!["thesis"; n]))
            .unwrap();
        let mut corrected = df;
        corrected
            .with_column(Column::new("mode".into(), vec!["corrected"; n]))
            .unwrap();
        let both = corrected.vstack(&thesis).unwrap();
        let j = json(&accounting_comparison(&both).unwrap());
        let data = j["data"].as_array().unwrap();
        assert_eq!(data.len(), 12);
        assert_eq!(data[0]["name"], "zCDP (corrected)");
        assert_eq!(data[1]["name"], "zCDP (thesis)");
        assert_eq!(data[0]["line"]["dash"], "solid");
        assert_eq!(data[1]["line"]["dash"], "dash");
    }

    #[test]
    fn y_range_grows_with_the_data() {
        let df = df!(
            "epsilon" => [1.0], "iterations" => [10_000u64],
            "method" => ["ADP"], "algorithm" => ["x"],
        )
        .unwrap();
        let j = json(&accounting_comparison(&df).unwrap());
        assert_eq!(j["layout"]["yaxis"]["range"][1], 10_500.0);
    }

    #[test]
    fn a_single_delta_is_named_in_the_title() {
        let mut df = figure_frame();
        let n = df.height();
        df.with_column(Column::new("delta".into(), vec![1e-6; n]))
            .unwrap();
        let j = json(&accounting_comparison(&df).unwrap());
        let title = j["layout"]["title"]["text"].as_str().unwrap().to_string();
        assert!(title.ends_with("(ε, δ = 1e-6)"), "{title}");
    }

    #[test]
    fn bad_frames_are_errors() {
        let df = figure_frame();
        assert!(matches!(
            accounting_comparison(&df.head(Some(0))),
            Err(Error::InvalidData(_))
        ));
        assert!(accounting_comparison(&df.drop("algorithm").unwrap()).is_err());
        let algs: Vec<String> = (0..9).map(|i| format!("a{i}")).collect();
        let many = df!(
            "epsilon" => vec![1.0; 9], "iterations" => vec![1u64; 9],
            "method" => vec!["ADP"; 9], "algorithm" => algs,
        )
        .unwrap();
        assert!(matches!(
            accounting_comparison(&many),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
