//! Shared plot helpers: palette, axes, panels, baselines, column access and offline HTML
//! (plotly.js inlined; `display::Chart` builds on it, this module never imports `display`).

use std::path::Path;

use plotly::common::{DashType, Line, Mode, Title};
use plotly::layout::{
    Annotation, Axis, GridPattern, LayoutGrid, Legend, Shape, ShapeLayer, ShapeLine, ShapeType,
};
use plotly::{Layout, Plot, Scatter};
use polars::prelude::{DataFrame, DataType};

use crate::{Error, Result};

/// matplotlib's `tab10` (seaborn's default), the colours of the thesis figures: blue, orange,
/// green, red, …, cyan; then black and gold, so that the samplers after the tenth (the field's
/// DP-SGNHT and DP-Fast MH) repeat none of the thesis samplers' colours and no two are shades of
/// one hue (a navy beside DP HMC's blue and DP-SGLD's cyan read as one colour).
pub const PALETTE: [&str; 12] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#000000", "#e7ba52",
];

/// The `i`-th colour of [`PALETTE`], cycling.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// An axis with a title (every figure labels both axes).
pub fn axis(title: &str) -> Axis {
    Axis::new().title(Title::with_text(title)).zero_line(false)
}

/// A legend with a title (the thing the lines or boxes are coloured by).
pub fn legend(title: &str) -> Legend {
    Legend::new().title(Title::with_text(title))
}

/// A figure layout: `title`, a `rows` × `columns` grid of independent subplots (panels are
/// numbered row by row from 0, see [`panel_axis_ids`]), a titled legend, 450 px per row.
pub fn grid_layout(title: &str, rows: usize, columns: usize, legend_title: &str) -> Layout {
    Layout::new()
        .title(Title::with_text(title))
        .height(450 * rows.max(1))
        .grid(
            LayoutGrid::new()
                .rows(rows.max(1))
                .columns(columns.max(1))
                .pattern(GridPattern::Independent),
        )
        .show_legend(true)
        .legend(legend(legend_title))
}

/// plotly's axis ids of subplot `panel` (0-based): `("x", "y")`, `("x2", "y2")`, …
pub fn panel_axis_ids(panel: usize) -> (String, String) {
    if panel == 0 {
        ("x".into(), "y".into())
    } else {
        (format!("x{}", panel + 1), format!("y{}", panel + 1))
    }
}

/// Sets the x and y axes of subplot `panel` (0-based; plotly-rs supports 8 panels).
///
/// # Errors
/// [`Error::InvalidParameter`] for `panel >= 8`.
pub fn set_panel_axes(layout: Layout, panel: usize, x: Axis, y: Axis) -> Result<Layout> {
    Ok(match panel {
        0 => layout.x_axis(x).y_axis(y),
        1 => layout.x_axis2(x).y_axis2(y),
        2 => layout.x_axis3(x).y_axis3(y),
        3 => layout.x_axis4(x).y_axis4(y),
        4 => layout.x_axis5(x).y_axis5(y),
        5 => layout.x_axis6(x).y_axis6(y),
        6 => layout.x_axis7(x).y_axis7(y),
        7 => layout.x_axis8(x).y_axis8(y),
        _ => {
            return Err(Error::invalid(
                "panel",
                panel,
                "plotly supports at most 8 subplot panels; split the figure",
            ));
        }
    })
}

/// A title centred above subplot `panel` (plotly has no per-subplot titles of its own).
pub fn panel_title(text: &str, panel: usize) -> Annotation {
    let (x, y) = panel_axis_ids(panel);
    Annotation::new()
        .text(text)
        .x_ref(format!("{x} domain"))
        .y_ref(format!("{y} domain"))
        .x(0.5)
        .y(1.0)
        .x_anchor(plotly::common::Anchor::Center)
        .y_anchor(plotly::common::Anchor::Bottom)
        .show_arrow(false)
        .font(plotly::common::Font::new().size(14))
}

/// A dashed black horizontal line at `y` across the whole width of subplot `panel` (the
/// thesis' baseline lines). Works with categorical x axes (box plots) too.
pub fn baseline(y: f64, panel: usize) -> Shape {
    let (xa, ya) = panel_axis_ids(panel);
    Shape::new()
        .shape_type(ShapeType::Line)
        .x_ref(format!("{xa} domain"))
        .y_ref(ya)
        .x0(0.0)
        .x1(1.0)
        .y0(y)
        .y1(y)
        .line(
            ShapeLine::new()
                .color("black")
                .width(1.0)
                .dash(DashType::Dash),
        )
}

/// A light grey band across a panel from `low` to `high` (drawn below the data), e.g. the range
/// of a baseline over seeds.
pub fn baseline_band(low: f64, high: f64, panel: usize) -> Shape {
    let (xa, ya) = panel_axis_ids(panel);
    Shape::new()
        .shape_type(ShapeType::Rect)
        .x_ref(format!("{xa} domain"))
        .y_ref(ya)
        .x0(0.0)
        .x1(1.0)
        .y0(low)
        .y1(high)
        .fill_color("rgba(0, 0, 0, 0.08)")
        .line(ShapeLine::new().width(0.0))
        .layer(ShapeLayer::Below)
}

/// A dashed black baseline as a trace from `x_min` to `x_max` at `y`, so that it gets a legend
/// entry `name` (use [`baseline`] for categorical axes).
pub fn baseline_trace(
    x_min: f64,
    x_max: f64,
    y: f64,
    name: &str,
    panel: usize,
) -> Box<Scatter<f64, f64>> {
    let (xa, ya) = panel_axis_ids(panel);
    Scatter::new(vec![x_min, x_max], vec![y, y])
        .name(name)
        .mode(Mode::Lines)
        .line(Line::new().color("black").dash(DashType::Dash).width(1.0))
        .x_axis(xa)
        .y_axis(ya)
}

/// A solid line in subplot `panel`, grouped in the legend by `name` (only the first trace of a
/// group should have `show_legend = true`).
pub fn line_trace(
    x: Vec<f64>,
    y: Vec<f64>,
    name: &str,
    color: &str,
    panel: usize,
    show_legend: bool,
) -> Box<Scatter<f64, f64>> {
    let (xa, ya) = panel_axis_ids(panel);
    Scatter::new(x, y)
        .name(name)
        .legend_group(name)
        .show_legend(show_legend)
        .mode(Mode::Lines)
        .line(Line::new().color(color.to_string()).width(2.0))
        .x_axis(xa)
        .y_axis(ya)
}

/// Column `name` ([`crate::frame::column_named`]: safe for frames kept across evcxr cells).
fn column<'a>(df: &'a DataFrame, name: &str) -> Result<&'a polars::prelude::Column> {
    crate::frame::column_named(df, name).ok_or_else(|| {
        Error::InvalidData(format!(
            "the table has no column `{name}` (columns: {:?}); pass the frame the plot documents",
            df.get_column_names()
        ))
    })
}

/// Column `name` as floats (any numeric dtype is cast; nulls become NaN).
///
/// # Errors
/// [`Error::InvalidData`] if the column is missing or not numeric.
pub fn f64_column(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let col = column(df, name)?;
    if !col.dtype().is_primitive_numeric() {
        return Err(Error::InvalidData(format!(
            "column `{name}` must be numeric, found {}",
            col.dtype()
        )));
    }
    let cast = col.cast(&DataType::Float64)?;
    Ok(cast.f64()?.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

/// Column `name` as strings (nulls become `"null"`).
///
/// # Errors
/// [`Error::InvalidData`] if the column is missing or not a string column.
pub fn str_column(df: &DataFrame, name: &str) -> Result<Vec<String>> {
    let col = column(df, name)?;
    if col.dtype() != &DataType::String {
        return Err(Error::InvalidData(format!(
            "column `{name}` must be a string column, found {}",
            col.dtype()
        )));
    }
    Ok(col
        .str()?
        .iter()
        .map(|v| v.unwrap_or("null").to_string())
        .collect())
}

/// The distinct values of `values` in order of first appearance (facets and legend order).
pub fn unique_in_order(values: &[String]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(v) {
            seen.push(v.clone());
        }
    }
    seen
}

/// The `<script>` tag with plotly.js from plotly's embedded offline sources. MathJax, which
/// plotly bundles next to it for LaTeX titles, is left out: it would add 2 MB per notebook and
/// clash with Jupyter's own MathJax.
pub(crate) fn plotly_js_script() -> String {
    let sources = Plot::offline_js_sources();
    match sources.find("</script>") {
        Some(end) => sources[..end + "</script>".len()].trim_start().to_string(),
        None => sources,
    }
}

/// A standalone HTML page of `plot` with plotly.js inlined (no CDN, no MathJax): opens offline
/// in any browser.
pub fn standalone_html(plot: &Plot) -> String {
    let js = plotly_js_script();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n{js}\n</head>\n\
         <body>\n{}\n</body>\n</html>\n",
        plot.to_inline_html(Some("dp-mcmc-plot"))
    )
}

/// Writes [`standalone_html`] of `plot` to `path` (about 4.7 MB per file).
///
/// # Errors
/// [`Error::Io`] if the file cannot be written (e.g. the folder does not exist).
pub fn write_html(plot: &Plot, path: impl AsRef<Path>) -> Result<()> {
    std::fs::write(path, standalone_html(plot))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    #[test]
    fn axis_ids_and_panel_limits() {
        assert_eq!(panel_axis_ids(0), ("x".to_string(), "y".to_string()));
        assert_eq!(panel_axis_ids(2), ("x3".to_string(), "y3".to_string()));
        assert!(set_panel_axes(Layout::new(), 7, axis("a"), axis("b")).is_ok());
        assert!(set_panel_axes(Layout::new(), 8, axis("a"), axis("b")).is_err());
    }

    #[test]
    fn grid_layout_has_title_grid_and_legend() {
        let mut plot = Plot::new();
        plot.set_layout(grid_layout("T", 2, 2, "method"));
        let json: serde_json::Value = serde_json::from_str(&plot.to_json()).unwrap();
        let layout = &json["layout"];
        assert_eq!(layout["title"]["text"], "T");
        assert_eq!(layout["grid"]["rows"], 2);
        assert_eq!(layout["grid"]["columns"], 2);
        assert_eq!(layout["grid"]["pattern"], "independent");
        assert_eq!(layout["height"], 900);
        assert_eq!(layout["showlegend"], true);
        assert_eq!(layout["legend"]["title"]["text"], "method");
    }

    #[test]
    fn baseline_is_dashed_black_across_the_panel() {
        let mut plot = Plot::new();
        plot.set_layout(Layout::new().shapes(vec![baseline(0.02, 1)]));
        let json: serde_json::Value = serde_json::from_str(&plot.to_json()).unwrap();
        let shape = &json["layout"]["shapes"][0];
        assert_eq!(shape["xref"], "x2 domain");
        assert_eq!(shape["yref"], "y2");
        assert_eq!(shape["y0"], 0.02);
        assert_eq!(shape["line"]["dash"], "dash");
        assert_eq!(shape["line"]["color"], "black");
    }

    #[test]
    fn columns_are_checked() {
        let df = df!("e" => [1i64, 2], "m" => ["a", "b"]).unwrap();
        assert_eq!(f64_column(&df, "e").unwrap(), vec![1.0, 2.0]);
        assert_eq!(str_column(&df, "m").unwrap(), vec!["a", "b"]);
        assert!(matches!(f64_column(&df, "m"), Err(Error::InvalidData(_))));
        assert!(matches!(str_column(&df, "e"), Err(Error::InvalidData(_))));
        let err = f64_column(&df, "missing").unwrap_err().to_string();
        assert!(err.contains("missing") && err.contains("\"e\""), "{err}");
    }

    #[test]
    fn unique_keeps_first_appearance_order() {
        let v: Vec<String> = ["b", "a", "b", "c", "a"].map(String::from).to_vec();
        assert_eq!(unique_in_order(&v), vec!["b", "a", "c"]);
    }

    #[test]
    fn standalone_page_is_offline() {
        let mut plot = Plot::new();
        plot.add_trace(Scatter::new(vec![1.0], vec![2.0]));
        let html = standalone_html(&plot);
        assert!(html.contains("plotly.js v") && html.contains("dp-mcmc-plot"));
        assert!(
            !html.contains("<script src"),
            "nothing loaded from the network"
        );
    }
}
