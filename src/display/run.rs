//! A [`Run`] that displays itself: `Display` for `Run` and [`PrivacySpent`] (a short report
//! instead of `Debug`'s every draw) and the [`RunDisplay`] notebook hook.

use std::fmt;

use super::table::{escape_html, format_float, frame_to_html, frame_to_text};
use crate::noise::RngMode;
use crate::samplers::{PrivacySpent, Run};

/// Rows of the posterior summary shown by a run's report (one row per parameter).
const SUMMARY_ROWS: usize = 20;

/// The last line of a run's report.
pub const NONPRIVATE_NOTE: &str = "The *_nonprivate diagnostics (clip fractions in \
run.chain_summary() and run.stats()) are computed from the raw data and are not covered by \
the privacy guarantee.";

/// `x` with 6 significant digits, rounded up (never below `x`): a displayed ε or δ must not
/// understate the privacy spent.
pub(crate) fn format_up(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format_float(x);
    }
    let mut y = x;
    for _ in 0..8 {
        let shown: f64 = format!("{y:.5e}").parse().unwrap_or(f64::INFINITY);
        if shown >= x {
            return format_float(shown);
        }
        // Half a unit of the 6th digit: the next rounding lands on the next 6-digit value.
        y += x.abs() * 5e-6;
    }
    format_float(x)
}

impl fmt::Display for PrivacySpent {
    /// `ε = 2.0, δ = 1e-5 (ADP accountant, whole release: all chains together)`; ε and δ
    /// have 6 significant digits, rounded up.
    ///
    /// ```
    /// use dp_mcmc::samplers::PrivacySpent;
    /// let p = PrivacySpent { epsilon: 2.0, delta: 1e-5, per_chain: false, accountant: "ADP".into(),
    ///                        ledger: Default::default() };
    /// assert_eq!(p.to_string(), "ε = 2.0, δ = 1e-5 (ADP accountant, whole release: all chains together)");
    /// // Rounded up, never down: ε = 1.2345641 is shown as 1.23457.
    /// let p = PrivacySpent { epsilon: 1.2345641, per_chain: true, ..p };
    /// assert!(p.to_string().starts_with("ε = 1.23457,") && p.to_string().contains("per chain"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = if self.per_chain {
            "per chain: each chain separately; the chains together spend more"
        } else {
            "whole release: all chains together"
        };
        write!(
            f,
            "ε = {}, δ = {} ({} accountant, {scope})",
            format_up(self.epsilon),
            format_up(self.delta),
            self.accountant
        )
    }
}

/// The header lines of a run's report (everything above the summary table).
fn header_lines(run: &Run) -> Vec<String> {
    let mut lines = Vec::new();
    let mut size = format!(
        "{} chain{} × {} iterations",
        run.chains.len(),
        if run.chains.len() == 1 { "" } else { "s" },
        run.iterations
    );
    let thin = run.chains.first().map_or(1, |c| c.thin());
    if thin > 1 {
        size.push_str(&format!(" (thin {thin}: every {thin}-th step saved)"));
    }
    lines.push(format!("Run of {}: {size}", run.algorithm));
    let early: Vec<String> = run
        .chains
        .iter()
        .enumerate()
        .filter(|(_, c)| c.stopped_early)
        .map(|(i, c)| format!("chain {i} after {}", c.len()))
        .collect();
    if !early.is_empty() {
        lines.push(format!(
            "stopped early (max_time): {} iterations",
            early.join(", ")
        ));
    }
    lines.push(match &run.privacy {
        Some(p) if p.ledger.stopped_early() => format!(
            "privacy: {p}; spent by the iterations the chains ran (planned {} per chain)",
            p.ledger.planned_iterations
        ),
        Some(p) => format!("privacy: {p}"),
        None => "privacy: none (a non-private sampler)".to_string(),
    });
    lines.push(match run.rng {
        RngMode::Secure => "random source: secure (generators keyed from OS entropy)".to_string(),
        RngMode::Seeded => format!(
            "random source: seeded (seed {}): a reproducible research run, not a secure DP release",
            run.seed
        ),
    });
    let acceptance: Vec<String> = run
        .acceptance()
        .iter()
        .map(|a| {
            if a.is_nan() {
                "NaN".to_string()
            } else {
                format!("{a:.3}")
            }
        })
        .collect();
    lines.push(format!("acceptance per chain: {}", acceptance.join(", ")));
    lines.push("posterior summary of all saved draws (burn-in included):".to_string());
    lines
}

impl fmt::Display for Run {
    /// The run's report: algorithm, chains × iterations (thinning, chains stopped early), ε,
    /// δ, accountant and its scope, random source, acceptance per chain, the posterior summary
    /// ([`Run::summary`]: mean, sd, quantiles, ESS, R-hat) and a note that the `*_nonprivate`
    /// diagnostics are not covered by the guarantee.
    ///
    /// ```
    /// use dp_mcmc::prelude::*;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = dp_mcmc::models::Experiment::EasyBanana2d.model()?;
    /// let run = Rwmh::builder().proposal_sd(0.01).iterations(20).chains(2).seed(1)
    ///     .start(vec![0.0, 0.0]).run(&model)?;
    /// let report = run.to_string();
    /// assert!(report.starts_with("Run of rwmh: 2 chains × 20 iterations"));
    /// assert!(report.contains("privacy: none") && report.contains("seed 1"));
    /// assert!(report.contains("rhat") && report.contains("theta_1"));
    /// assert!(report.ends_with(dp_mcmc::display::NONPRIVATE_NOTE));
    /// // Bad input is still an error, before there is anything to display.
    /// assert!(Rwmh::builder().iterations(20).run(&model).is_err()); // no start point
    /// # Ok(()) }
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in header_lines(self) {
            writeln!(f, "{line}")?;
        }
        match self.summary() {
            Ok(df) => writeln!(f, "{}", frame_to_text(&df, SUMMARY_ROWS))?,
            Err(e) => writeln!(f, "(no summary: {e})")?,
        }
        f.write_str(NONPRIVATE_NOTE)
    }
}

/// Rich display of a [`Run`] in evcxr notebooks (in scope with `use dp_mcmc::prelude::*;`):
/// a bare `run` as a cell's last expression shows its report (see `Display for Run`) with the
/// summary as an HTML table, instead of `Debug`'s every draw.
///
/// ```
/// use dp_mcmc::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let model = dp_mcmc::models::Experiment::EasyBanana2d.model()?;
/// let run = Rwmh::builder().iterations(10).chains(1).start(vec![0.0, 0.0]).run(&model)?;
/// let html = run.to_html();
/// assert!(html.contains("<table") && html.contains("Run of rwmh: 1 chain × 10 iterations"));
/// assert!(html.contains("not covered by the privacy guarantee"));
/// // What the kernel calls for a bare `run` (prints the report in evcxr's protocol):
/// run.evcxr_display();
/// # Ok(()) }
/// ```
pub trait RunDisplay {
    /// The report as HTML: the header lines, the summary table and the note.
    fn to_html(&self) -> String;
    /// Prints `text/html` and `text/plain` in evcxr's protocol (called by the kernel).
    fn evcxr_display(&self);
}

impl RunDisplay for Run {
    fn to_html(&self) -> String {
        let header = header_lines(self).join("\n");
        let table = match self.summary() {
            Ok(df) => frame_to_html(&df, SUMMARY_ROWS),
            Err(e) => format!("<p>(no summary: {})</p>", escape_html(&e.to_string())),
        };
        format!(
            "<div class=\"dp-mcmc-run\">\n<pre>{}</pre>\n{table}\n<p><small>{}</small></p>\n</div>",
            escape_html(&header),
            escape_html(NONPRIVATE_NOTE)
        )
    }

    fn evcxr_display(&self) {
        print_report(&self.to_html(), &self.to_string());
    }
}

/// Prints a report's HTML and text in evcxr's protocol.
fn print_report(html: &str, text: &str) {
    println!(
        "{}",
        super::evcxr_blocks(&[("text/html", html), ("text/plain", text)])
    );
}

/// An `auto` run shows the line of what it derived, then its run's report.
impl RunDisplay for crate::auto::AutoRun {
    fn to_html(&self) -> String {
        let text = self.to_string();
        let first = text.lines().next().unwrap_or_default();
        format!("<p>{}</p>\n{}", escape_html(first), self.run.to_html())
    }

    fn evcxr_display(&self) {
        print_report(&self.to_html(), &self.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::{ChainTrace, StepTotals};

    fn run(privacy: Option<PrivacySpent>, chains: Vec<ChainTrace>) -> Run {
        Run {
            algorithm: "dp-penalty".into(),
            param_names: vec!["mu".into()],
            n_rows: 10,
            iterations: 4,
            warmup: 0,
            chains,
            privacy,
            seed: 7,
            rng: RngMode::Seeded,
            settings: serde_json::Value::Null,
            wall_seconds: 0.0,
            version: "test",
        }
    }

    fn chain(accepted: u64, stopped_early: bool, thin: usize) -> ChainTrace {
        ChainTrace {
            start: vec![0.0],
            draws: vec![0.1, 0.2, 0.3, 0.4],
            stats: Vec::new(),
            wall_seconds: 0.0,
            stopped_early,
            thin,
            totals: Some(StepTotals {
                steps: 4,
                accepted,
                ..StepTotals::default()
            }),
            ..ChainTrace::default()
        }
    }

    #[test]
    fn format_up_never_rounds_down() {
        for x in [
            1.2345641,
            1.0,
            1e-5,
            0.1 / 100_000.0,
            3.999_999_9,
            9.999_999_9,
            123_456_789.0,
            2.5e-12,
            std::f64::consts::PI,
        ] {
            let s = format_up(x);
            let shown: f64 = s.parse().unwrap();
            assert!(shown >= x, "{x} shown as {s}");
            assert!(shown <= x * (1.0 + 1.1e-5), "{x} shown as {s}: too coarse");
        }
        assert_eq!(format_up(1.2345641), "1.23457");
        assert_eq!(format_up(9.999_999_9), "10.0");
        assert_eq!(format_up(1e-6), "1e-6");
        assert_eq!(format_up(0.0), "0.0");
    }

    #[test]
    fn report_of_a_private_run() {
        let p = PrivacySpent {
            epsilon: 4.0,
            delta: 1e-6,
            per_chain: true,
            accountant: "zCDP-CKS20".into(),
            ledger: Default::default(),
        };
        let r = run(
            Some(p),
            vec![chain(1, false, 2), chain(3, true, 2), chain(0, false, 2)],
        );
        assert_eq!(r.epsilon(), Some(4.0));
        assert_eq!(r.delta(), Some(1e-6));
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "Run of dp-penalty: 3 chains × 4 iterations (thin 2: every 2-th step saved)"
        );
        assert_eq!(
            lines[1],
            "stopped early (max_time): chain 1 after 4 iterations"
        );
        assert_eq!(
            lines[2],
            "privacy: ε = 4.0, δ = 1e-6 (zCDP-CKS20 accountant, per chain: \
             each chain separately; the chains together spend more)"
        );
        assert!(lines[3].contains("seeded (seed 7)") && lines[3].contains("not a secure"));
        assert_eq!(lines[4], "acceptance per chain: 0.250, 0.750, 0.000");
        assert!(text.contains("mu") && text.contains("ess_bulk"));
        assert!(text.ends_with(NONPRIVATE_NOTE));
    }

    #[test]
    fn report_of_an_empty_run_does_not_fail() {
        let mut r = run(None, vec![]);
        r.rng = RngMode::Secure;
        let text = r.to_string();
        assert!(text.starts_with("Run of dp-penalty: 0 chains × 4 iterations\n"));
        assert!(text.contains("privacy: none") && text.contains("OS entropy"));
        assert!(!text.contains("seed 7"));
        let html = r.to_html();
        assert!(html.contains("dp-mcmc-run") && html.contains("privacy: none"));
    }

    #[test]
    fn html_is_escaped() {
        let mut r = run(None, vec![chain(2, false, 1)]);
        r.algorithm = "<script>".into();
        let html = r.to_html();
        assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"));
        assert!(html.contains("<table"));
    }
}
