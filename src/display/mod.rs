//! Notebook display: pure `to_html`/`to_text` renderers and `evcxr_display` hooks.
//!
//! evcxr shows the last expression of a cell by calling `(expr).evcxr_display()` when such a
//! method resolves, and falls back to `Debug` otherwise. polars' `DataFrame` has no such method
//! and plotly's own `Plot::evcxr_display` is blank offline, so this module supplies both:
//!
//! * [`FrameDisplay`], a trait implemented for `DataFrame`: with `use dp_mcmc::prelude::*;`
//!   in scope, a bare `df` as a cell's last expression renders as an HTML table (head … tail,
//!   with dtypes) plus a plain-text table.
//! * [`RunDisplay`], implemented for [`Run`](crate::samplers::Run): a bare `run` renders its
//!   report (algorithm, chains, iterations, ε, δ, accountant, random source, acceptance, the
//!   summary table with R-hat and ESS) rather than `Debug`'s every draw; `run.to_string()`
//!   is the same report as text (`Display`).
//! * [`Chart`] (feature `plot`), a wrapper around `plotly::Plot` that inlines plotly.js once per
//!   kernel session, so charts render without a network connection; [`Chart::try_new`] turns a
//!   figure that could not be drawn (e.g. no rows for its panels) into a readable placeholder.
//! * [`quick_mode`]: the notebooks' quick flag (`DP_MCMC_QUICK`, quick unless it is `0`).
//!
//! Pitfalls of the evcxr kernel (0.22, measured):
//! * It keeps one output per MIME type per cell: show one table or chart per cell.
//! * It links dependencies statically into each cell, so each cell has its own copy of every
//!   static. polars hashes column names with a per-copy seed and caches a frame's schema (for
//!   frames wider than 4 columns) on the first lookup by name: look a kept DataFrame's columns
//!   up by name (`df.column("x")`, filters on names, ...) only in the cell that created it;
//!   later cells may display it and pass it to `dp_mcmc::plots` (which scan the columns
//!   instead). `Chart` keeps its "plotly.js already sent" state in a per-process marker file
//!   for the same reason.
//! * An error returned through `?` is only printed on stderr and the cell's new variables are
//!   lost; `scripts/check_outputs.py` treats any stderr output as a failure.
//!
//! ```
//! use dp_mcmc::prelude::*;
//! use dp_mcmc::polars::prelude::*;
//! # fn main() -> dp_mcmc::Result<()> {
//! let df = df!("epsilon" => [0.5, 1.0], "method" => ["zCDP", "<ADP>"])?;
//! assert!(df.to_html().contains("&lt;ADP&gt;"));
//! assert!(df.to_text().contains("zCDP"));
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "plot")]
mod chart;
mod quick;
mod run;
mod table;

#[cfg(feature = "plot")]
pub use chart::{Chart, reset_plotly_js};
pub use quick::{QUICK_ENV, quick_mode, quick_mode_from};
pub use run::{NONPRIVATE_NOTE, RunDisplay};
pub use table::{DEFAULT_MAX_ROWS, escape_html, format_value, frame_to_html, frame_to_text};

use polars::prelude::DataFrame;

/// Joins `(mime, body)` pairs into evcxr's output protocol: one
/// `EVCXR_BEGIN_CONTENT <mime>` … `EVCXR_END_CONTENT` block per MIME type.
///
/// Print the result with a single `println!`, so that the blocks of one value stay together.
///
/// ```
/// let s = dp_mcmc::display::evcxr_blocks(&[("text/plain", "hi")]);
/// assert_eq!(s, "EVCXR_BEGIN_CONTENT text/plain\nhi\nEVCXR_END_CONTENT");
/// ```
pub fn evcxr_blocks(parts: &[(&str, &str)]) -> String {
    parts
        .iter()
        .map(|(mime, body)| format!("EVCXR_BEGIN_CONTENT {mime}\n{body}\nEVCXR_END_CONTENT"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rich display of a DataFrame in evcxr notebooks (bring it into scope with the prelude).
///
/// `to_html`/`to_text` are pure and show at most [`DEFAULT_MAX_ROWS`] rows (head … tail), with
/// each column's dtype under its name and the frame's shape.
pub trait FrameDisplay {
    /// HTML table (escaped), head … tail, with dtypes and shape.
    fn to_html(&self) -> String;
    /// Aligned plain-text table, head … tail, with dtypes and shape.
    fn to_text(&self) -> String;
    /// Prints `text/html` and `text/plain` in evcxr's protocol (called by the kernel).
    fn evcxr_display(&self) {
        println!(
            "{}",
            evcxr_blocks(&[
                ("text/html", &self.to_html()),
                ("text/plain", &self.to_text())
            ])
        );
    }
}

impl FrameDisplay for DataFrame {
    fn to_html(&self) -> String {
        frame_to_html(self, DEFAULT_MAX_ROWS)
    }

    fn to_text(&self) -> String {
        frame_to_text(self, DEFAULT_MAX_ROWS)
    }
}

/// A DataFrame shown with every row, for a table whose rows must all be read (a posterior
/// summary's R-hat and ESS rows): `AllRows(&df)` as a cell's last expression.
///
/// ```
/// use dp_mcmc::display::{AllRows, FrameDisplay};
/// use dp_mcmc::polars::prelude::*;
/// let df = df!("rhat" => (0..30).map(|i| 1.0 + i as f64 / 100.0).collect::<Vec<f64>>())?;
/// assert!(df.to_text().contains('…'));
/// assert!(!AllRows(&df).to_text().contains('…') && AllRows(&df).to_text().contains("1.29"));
/// # Ok::<(), PolarsError>(())
/// ```
pub struct AllRows<'a>(pub &'a DataFrame);

impl FrameDisplay for AllRows<'_> {
    fn to_html(&self) -> String {
        frame_to_html(self.0, self.0.height())
    }

    fn to_text(&self) -> String {
        frame_to_text(self.0, self.0.height())
    }
}
