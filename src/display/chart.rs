//! [`Chart`]: a `plotly::Plot` that renders offline in evcxr notebooks and as standalone HTML.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use plotly::Plot;

use crate::plots::plotly_js_script;

/// Set once plotly.js has been sent to the notebook by this copy of the crate.
static PLOTLY_JS_SENT: AtomicBool = AtomicBool::new(false);

/// A marker file for "plotly.js already sent" that every cell of a kernel session sees.
///
/// evcxr links dependencies statically into each cell's library by default, so every cell
/// has its own copy of [`PLOTLY_JS_SENT`]; the session-wide state therefore lives in a file
/// named after the kernel process: its id and, on Linux, its start time (so that a reused
/// process id does not inherit the marker).
fn session_marker() -> PathBuf {
    let start = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            // Field 22 (starttime); fields after the `)` of the command name start at 3.
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace().nth(19).map(str::to_string)
        })
        .unwrap_or_default();
    std::env::temp_dir().join(format!("dp-mcmc-plotly-js-{}-{start}", std::process::id()))
}

/// Makes the next displayed [`Chart`] inline plotly.js again (call it after clearing the
/// notebook's outputs, since the cell that carried plotly.js is then gone).
pub fn reset_plotly_js() {
    PLOTLY_JS_SENT.store(false, Ordering::SeqCst);
    // A missing marker is the state we want.
    let _ = std::fs::remove_file(session_marker());
}

/// A plotly figure with an offline notebook display.
///
/// plotly's own `Plot::evcxr_display` emits only the plotly MIME bundle (blank without the
/// JupyterLab plotly extension) and `notebook_display` loads plotly.js from a CDN. `Chart`
/// emits, in one evcxr output, `text/html` (plotly.js inlined the first time a chart is shown
/// in a kernel session, then only the plot's `<div>` and script) and
/// `application/vnd.plotly.v1+json`. One chart per cell: evcxr keeps one output per MIME type.
///
/// ```
/// use dp_mcmc::display::Chart;
/// use dp_mcmc::plotly::{Plot, Scatter};
/// let mut plot = Plot::new();
/// plot.add_trace(Scatter::new(vec![1.0, 2.0], vec![3.0, 4.0]).name("line"));
/// let chart = Chart::new(plot);
/// assert!(chart.to_inline_html().contains("Plotly.newPlot"));
/// // Writing to a folder that does not exist is an error, not a panic.
/// assert!(chart.write_html("/nonexistent/dir/chart.html").is_err());
/// ```
#[derive(Clone)]
pub struct Chart {
    plot: Plot,
    /// Why there is no figure ([`Chart::try_new`] of an error); `plot` is then a placeholder.
    error: Option<String>,
}

impl From<Plot> for Chart {
    fn from(plot: Plot) -> Self {
        Chart::new(plot)
    }
}

impl Chart {
    /// Wraps a figure (see the type's docs for an example).
    pub fn new(plot: Plot) -> Self {
        Chart { plot, error: None }
    }

    /// Wraps a figure function's result: `Ok` as [`Chart::new`]; an `Err` (say, a figure whose
    /// panels have no rows) becomes a placeholder that shows the error text when displayed,
    /// so the notebook cell does not fail. In a notebook: `Chart::try_new(figure_6_5(&results))`.
    ///
    /// ```
    /// use dp_mcmc::display::Chart;
    /// use dp_mcmc::plotly::{Plot, Scatter};
    /// let mut plot = Plot::new();
    /// plot.add_trace(Scatter::new(vec![1.0], vec![2.0]).name("point"));
    /// assert!(Chart::try_new(Ok(plot)).error().is_none());
    /// // An error case: a trace plot of a table without parameter columns.
    /// let empty = dp_mcmc::polars::prelude::DataFrame::empty();
    /// let chart = Chart::try_new(dp_mcmc::plots::experiments::trace_plot(&empty));
    /// assert!(chart.error().is_some());
    /// assert!(chart.notebook_html().starts_with("<div class=\"dp-mcmc-no-figure\">"));
    /// assert!(chart.notebook_html().contains("No figure"));
    /// ```
    pub fn try_new(plot: crate::Result<Plot>) -> Self {
        match plot {
            Ok(p) => Chart::new(p),
            Err(e) => Chart::placeholder(&e.to_string()),
        }
    }

    /// A placeholder figure whose title is the error text (kept so that
    /// [`to_json`](Self::to_json) and [`write_html`](Self::write_html) still work).
    fn placeholder(error: &str) -> Self {
        use plotly::common::Title;
        use plotly::{Layout, Scatter};
        let mut plot = Plot::new();
        plot.add_trace(Scatter::new(Vec::<f64>::new(), Vec::<f64>::new()).name("no data"));
        plot.set_layout(
            Layout::new()
                .title(Title::with_text(format!("No figure: {error}")))
                .x_axis(crate::plots::axis("x"))
                .y_axis(crate::plots::axis("y"))
                .show_legend(true),
        );
        Chart {
            plot,
            error: Some(error.to_string()),
        }
    }

    /// Why there is no figure (`None` for a figure; see [`Chart::try_new`]).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The wrapped figure.
    pub fn plot(&self) -> &Plot {
        &self.plot
    }

    /// Unwraps the figure.
    pub fn into_plot(self) -> Plot {
        self.plot
    }

    /// The figure as plotly JSON (`{"data": [...], "layout": {...}}`).
    pub fn to_json(&self) -> String {
        self.plot.to_json()
    }

    /// The plot's `<div>` and drawing script, without plotly.js (for a page that already
    /// loaded it).
    pub fn to_inline_html(&self) -> String {
        self.plot.to_inline_html(None)
    }

    /// A standalone HTML page with plotly.js inlined (works offline; about 7 MB).
    pub fn to_html(&self) -> String {
        crate::plots::standalone_html(&self.plot)
    }

    /// Writes [`Chart::to_html`] to `path` (see [`crate::plots::write_html`]).
    ///
    /// # Errors
    /// [`crate::Error::Io`] if the file cannot be written.
    pub fn write_html(&self, path: impl AsRef<Path>) -> crate::Result<()> {
        crate::plots::write_html(&self.plot, path)
    }

    /// The notebook HTML fragment: plotly.js first unless `js_sent` is set or `marker`
    /// exists (then both are set), followed by the inline plot.
    fn notebook_html_with(&self, js_sent: &AtomicBool, marker: &Path) -> String {
        let inline = self.to_inline_html();
        let already = js_sent.swap(true, Ordering::SeqCst) || marker.exists();
        if already {
            inline
        } else {
            // Without the marker the next cell inlines plotly.js again: larger, still correct.
            let _ = std::fs::write(marker, b"");
            format!("{}\n{inline}", plotly_js_script())
        }
    }

    /// The notebook HTML fragment, inlining plotly.js if no chart has been shown yet in this
    /// kernel session.
    /// For a placeholder ([`Chart::try_new`] of an error), a short HTML message with the
    /// error text instead (plotly.js is not sent).
    pub fn notebook_html(&self) -> String {
        match &self.error {
            Some(e) => no_figure_html(e),
            None => self.notebook_html_with(&PLOTLY_JS_SENT, &session_marker()),
        }
    }

    /// Prints `text/html` and `application/vnd.plotly.v1+json` in evcxr's protocol (called by
    /// the kernel when a `Chart` is a cell's last expression).
    /// A placeholder shows `text/html` and `text/plain` with the error text.
    pub fn evcxr_display(&self) {
        if let Some(e) = &self.error {
            let text = format!("No figure: {e}");
            println!(
                "{}",
                super::evcxr_blocks(&[("text/html", &no_figure_html(e)), ("text/plain", &text)])
            );
            return;
        }
        let html = self.notebook_html();
        let json = self.to_json();
        println!(
            "{}",
            super::evcxr_blocks(&[
                ("text/html", &html),
                ("application/vnd.plotly.v1+json", &json),
            ])
        );
    }
}

/// The HTML shown for a figure that could not be drawn.
fn no_figure_html(error: &str) -> String {
    format!(
        "<div class=\"dp-mcmc-no-figure\"><p><b>No figure:</b> {}</p></div>",
        super::escape_html(error)
    )
}

impl std::fmt::Debug for Chart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Chart({})", self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotly::{Layout, Scatter};

    fn chart() -> Chart {
        let mut plot = Plot::new();
        plot.add_trace(Scatter::new(vec![0.5, 6.0], vec![3.0, 1817.0]).name("ADP"));
        plot.set_layout(Layout::new().title("Iterations"));
        Chart::from(plot)
    }

    /// A marker of plotly.min.js (its licence banner names the library and version).
    fn has_plotly_js(html: &str) -> bool {
        html.contains("plotly.js v")
    }

    fn temp_marker(tag: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("dp-mcmc-test-marker-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn plotly_js_is_inlined_once_per_session() {
        let sent = AtomicBool::new(false);
        let marker = temp_marker("once");
        let c = chart();
        let first = c.notebook_html_with(&sent, &marker);
        let second = c.notebook_html_with(&sent, &marker);
        assert!(has_plotly_js(&first));
        assert_eq!(first.matches("plotly.js v").count(), 1);
        assert!(!has_plotly_js(&second));
        assert!(first.contains("Plotly.newPlot") && second.contains("Plotly.newPlot"));
        // The script tag is complete and MathJax is left out.
        assert!(first.starts_with("<script"));
        assert!(
            !first.contains("TeXFont"),
            "MathJax (tex-svg) must not be inlined"
        );
        assert!(first.len() > 1_000_000, "plotly.min.js is several MB");
        assert!(second.len() < 10_000);
        std::fs::remove_file(&marker).unwrap();
    }

    #[test]
    fn the_marker_is_shared_by_copies_of_the_flag() {
        // Each evcxr cell has its own copy of the static flag; the marker file is shared.
        let marker = temp_marker("shared");
        let c = chart();
        let first = c.notebook_html_with(&AtomicBool::new(false), &marker);
        let other_cell = c.notebook_html_with(&AtomicBool::new(false), &marker);
        assert!(has_plotly_js(&first));
        assert!(!has_plotly_js(&other_cell));
        std::fs::remove_file(&marker).unwrap();
        let after_reset = c.notebook_html_with(&AtomicBool::new(false), &marker);
        assert!(has_plotly_js(&after_reset));
        std::fs::remove_file(&marker).unwrap();
    }

    #[test]
    fn session_marker_names_this_process() {
        let name = session_marker()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let pid = std::process::id().to_string();
        assert!(
            name.starts_with(&format!("dp-mcmc-plotly-js-{pid}-")),
            "{name}"
        );
        if cfg!(target_os = "linux") {
            let start = name.rsplit('-').next().unwrap();
            assert!(start.parse::<u64>().is_ok(), "start time missing: {name}");
        }
    }

    #[test]
    fn a_failed_figure_is_a_placeholder() {
        let failed = Chart::try_new(Err(crate::Error::InvalidData(
            "no rows for <d = 10>".into(),
        )));
        assert_eq!(failed.error(), Some("invalid data: no rows for <d = 10>"));
        let html = failed.notebook_html();
        assert!(html.contains("No figure:</b> invalid data: no rows for &lt;d = 10&gt;"));
        assert!(!has_plotly_js(&html) && !html.contains("Plotly.newPlot"));
        // The placeholder figure names the error, so a written page still explains itself.
        let json: serde_json::Value = serde_json::from_str(&failed.to_json()).unwrap();
        let title = json["layout"]["title"]["text"].as_str().unwrap();
        assert!(title.starts_with("No figure: invalid data"), "{title}");
        // A figure stays a figure.
        let ok = Chart::try_new(Ok(chart().into_plot()));
        assert!(ok.error().is_none());
        assert!(ok.to_inline_html().contains("Plotly.newPlot"));
    }

    #[test]
    fn json_and_standalone_html() {
        let c = chart();
        let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
        assert_eq!(json["layout"]["title"]["text"], "Iterations");
        assert_eq!(json["data"][0]["name"], "ADP");
        let html = c.to_html();
        assert!(html.starts_with("<!doctype html>") || html.contains("<html"));
        assert!(has_plotly_js(&html));
        assert!(
            !html.contains("<script src"),
            "nothing loaded from the network"
        );
    }

    #[test]
    fn write_html_creates_an_offline_page() {
        let dir = std::env::temp_dir().join(format!("dp-mcmc-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.html");
        chart().write_html(&path).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(has_plotly_js(&written) && written.contains("Iterations"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(chart().write_html(dir.join("missing/c.html")).is_err());
    }
}
