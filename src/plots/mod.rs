//! plotly figures from result DataFrames (the only module that imports plotly).
//!
//! Every figure function takes a DataFrame (from [`crate::frame`]) or a
//! [`Run`](crate::samplers::Run) ([`trace`]) and returns a `plotly::Plot` with a title, axis
//! titles and a legend; wrap it in [`crate::display::Chart`] to show it in a notebook or write
//! it as an offline HTML page (`Chart::try_new` shows an error, e.g. a figure without rows, as
//! a readable placeholder instead of failing the cell).
//! The helpers below give all figures the same look: the matplotlib/seaborn palette the thesis
//! used, one subplot panel per facet with its title above it, and dashed black baselines.

pub mod accounting;
mod common;
pub mod experiments;
pub mod mechanisms;
pub mod posterior;
mod run;

pub use accounting::accounting_comparison;
pub(crate) use common::plotly_js_script;
pub use common::{
    PALETTE, axis, baseline, baseline_trace, color, f64_column, grid_layout, legend, line_trace,
    panel_axis_ids, panel_title, set_panel_axes, standalone_html, str_column, unique_in_order,
    write_html,
};
pub use run::trace;
