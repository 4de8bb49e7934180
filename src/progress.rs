//! Progress of long runs (chains, experiment grids) on stderr.
//!
//! With the `cli` feature (on by default) a [`Progress`] is an indicatif bar, drawn only when
//! asked for, stderr is a terminal and `CI` is not set. Without the feature (notebooks load the
//! crate with `default-features = false, features = ["plot"]`) no bar is ever drawn: every
//! method is a no-op except [`Progress::println`], which still writes its line to stderr. A
//! notebook's stderr is not a terminal, so the bar would not show there anyway.

/// The chain driver's bar: steps of all chains.
const ITERATIONS: &str = "{bar:40} {pos}/{len} iterations ({eta} left) {msg}";
/// The grid runner's bar: finished tasks.
const TASKS: &str = "{bar:40} {pos}/{len} tasks ({elapsed}, {eta} left) {msg}";

/// A progress bar on stderr, or nothing (see the module docs for when it is drawn).
/// Shared by reference between worker threads.
#[derive(Debug)]
pub(crate) struct Progress {
    #[cfg(feature = "cli")]
    bar: Option<indicatif::ProgressBar>,
    /// `(position, ε)`: the privacy spent once the bar has reached `position`, increasing;
    /// the bar shows the ε of the first mark at or beyond its position (an upper bound).
    marks: Vec<(u64, f64)>,
}

impl Progress {
    /// A bar counting `len` iterations (the run driver), drawn only if `wanted`.
    pub(crate) fn iterations(wanted: bool, len: u64) -> Self {
        Self::new(wanted, len, ITERATIONS)
    }

    /// A bar counting `len` tasks (the grid runner), drawn only if `wanted`.
    pub(crate) fn tasks(wanted: bool, len: u64) -> Self {
        Self::new(wanted, len, TASKS)
    }

    #[cfg(feature = "cli")]
    fn new(wanted: bool, len: u64, template: &str) -> Self {
        use std::io::IsTerminal;
        let bar = (wanted && !in_ci() && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(len);
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            marks: Vec::new(),
        }
    }

    #[cfg(not(feature = "cli"))]
    fn new(_wanted: bool, _len: u64, _template: &str) -> Self {
        Progress { marks: Vec::new() }
    }

    /// Show the ε spent so far: `marks` are `(position, ε)` pairs, increasing in both.
    pub(crate) fn set_marks(&mut self, marks: Vec<(u64, f64)>) {
        self.marks = marks;
        self.show_mark(0);
    }

    #[cfg_attr(not(feature = "cli"), allow(unused_variables))]
    fn show_mark(&self, position: u64) {
        #[cfg(feature = "cli")]
        if let (Some(bar), Some(&(_, eps))) =
            (&self.bar, self.marks.iter().find(|(at, _)| *at >= position))
        {
            bar.set_message(format!("ε spent ≤ {eps:.3}"));
        }
    }

    /// Whether a bar is drawn.
    pub(crate) fn is_drawn(&self) -> bool {
        #[cfg(feature = "cli")]
        return self.bar.is_some();
        #[cfg(not(feature = "cli"))]
        return false;
    }

    /// Advance the bar by `n`.
    pub(crate) fn inc(&self, n: u64) {
        #[cfg(feature = "cli")]
        if let Some(bar) = &self.bar {
            bar.inc(n);
            if !self.marks.is_empty() {
                self.show_mark(bar.position());
            }
        }
        #[cfg(not(feature = "cli"))]
        let _ = n;
    }

    /// Write `line` to stderr, above the bar when one is drawn.
    pub(crate) fn println(&self, line: String) {
        #[cfg(feature = "cli")]
        if let Some(bar) = &self.bar {
            bar.println(line);
            return;
        }
        eprintln!("{line}");
    }

    /// Remove the bar (it leaves no line behind).
    pub(crate) fn finish(&self) {
        #[cfg(feature = "cli")]
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `CI` set to anything but empty or `false`.
#[cfg(feature = "cli")]
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn a_bar_not_asked_for_is_never_drawn() {
        assert!(!Progress::iterations(false, 10).is_drawn());
        assert!(!Progress::tasks(false, 10).is_drawn());
    }

    #[test]
    fn no_bar_when_stderr_is_not_a_terminal_or_in_ci() {
        use std::io::IsTerminal;
        // Under `cargo test` stderr is usually a pipe; on a terminal, only the CI check (or the
        // missing `cli` feature) may hide the bar.
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        let expect = cfg!(feature = "cli") && std::io::stderr().is_terminal() && !ci;
        let p = Progress::iterations(true, 10);
        assert_eq!(p.is_drawn(), expect);
        p.inc(3);
        p.finish();
    }
}
