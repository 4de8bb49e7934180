//! `reproduce`: run the thesis' Chapter 6 grids (accounting comparison, clipping study,
//! algorithm comparison), write the result tables (CSV) and the figures (offline HTML), and
//! print one JSON summary.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use dp_mcmc::accounting::Gradient;
use dp_mcmc::experiments::{
    BaselineSpec, ClippingSpec, ComparisonSpec, GridReport, GridRunner, read_results,
};
use dp_mcmc::frame::accounting::{figure_6_1_with, linspace};
use dp_mcmc::frame::experiments::{medians_frame, results_frame};
use dp_mcmc::frame::write_csv;
use dp_mcmc::plots::experiments as figs;
use dp_mcmc::polars::prelude::{Column, DataFrame};
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

/// Which part of Chapter 6 to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Part {
    /// Figure 6.1: iterations per accountant.
    Accounting,
    /// Figure 6.2: the clipping study (non-private RWMH / HMC).
    Clipping,
    /// Figures 6.3–6.8: the algorithm comparison.
    Comparison,
    /// Everything, in the order accounting, comparison, clipping.
    All,
}

/// Arguments of `dp-mcmc reproduce`.
#[derive(Args)]
pub struct ReproduceArgs {
    /// accounting, clipping, comparison or all.
    #[arg(value_enum)]
    part: Part,
    /// Small grids (3 chains, ε ∈ {1, 4}, d = 2 experiments; clipping d = 2, 4 bounds):
    /// results go to `<out>/quick/`.
    #[arg(long)]
    quick: bool,
    /// Folder of the result tables (`<grid>.csv`); figures go to its `figures/` subfolder.
    #[arg(long, default_value = "data/results")]
    out: PathBuf,
    /// Worker threads (results do not depend on it).
    #[arg(long, allow_hyphen_values = true)]
    threads: Option<usize>,
    /// Stop starting tasks after this many seconds (a rerun resumes where it stopped).
    #[arg(long, allow_hyphen_values = true)]
    max_time: Option<f64>,
    /// Grid seed (each task derives its own seed from it and its id).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    seed: u64,
    /// Clipping study as the thesis code ran it: |Σ(θ_i − θ'_i)| clip distance and n = 100 000
    /// for d = 10 (results in `clipping-thesis.csv`).
    #[arg(long)]
    thesis_compatible: bool,
    /// Skip writing the HTML figures.
    #[arg(long)]
    no_figures: bool,
    /// Recompute every task: delete the grids' result tables under `--out` first (a rerun
    /// otherwise keeps the rows already there and runs only the missing tasks).
    #[arg(long)]
    fresh: bool,
}

struct Ctx<'a> {
    args: &'a ReproduceArgs,
    t0: Instant,
    files: Vec<String>,
    parts: serde_json::Map<String, Value>,
}

impl Ctx<'_> {
    /// Folder of this run's tables: `--out`, or its `quick/` subfolder in quick mode.
    fn dir(&self) -> PathBuf {
        if self.args.quick {
            self.args.out.join("quick")
        } else {
            self.args.out.clone()
        }
    }

    fn table(&self, name: &str) -> PathBuf {
        self.dir().join(format!("{name}.csv"))
    }

    fn figure(&self, name: &str) -> PathBuf {
        self.dir().join("figures").join(format!("{name}.html"))
    }

    fn runner(&self) -> GridRunner {
        let remaining = self.args.max_time.map(|m| {
            Duration::try_from_secs_f64(m)
                .unwrap_or(Duration::ZERO)
                .saturating_sub(self.t0.elapsed())
        });
        GridRunner {
            seed: self.args.seed,
            threads: self.args.threads,
            max_time: remaining,
            ..GridRunner::default()
        }
    }

    fn write_table(&mut self, df: &mut DataFrame, path: &Path) -> Result<()> {
        write_csv(df, path)?;
        self.files.push(path.display().to_string());
        Ok(())
    }

    /// Writes a figure; a figure without data is reported, not an error.
    fn write_figure(&mut self, name: &str, plot: Result<dp_mcmc::plotly::Plot>) -> Result<Value> {
        if self.args.no_figures {
            return Ok(Value::Null);
        }
        match plot {
            Ok(p) => {
                let path = self.figure(name);
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                dp_mcmc::plots::write_html(&p, &path)?;
                self.files.push(path.display().to_string());
                Ok(json!(path.display().to_string()))
            }
            Err(Error::InvalidData(msg)) => Ok(json!({ "skipped": msg })),
            Err(e) => Err(e),
        }
    }

    fn grid(&mut self, tasks: &[dp_mcmc::experiments::Task], name: &str) -> Result<GridReport> {
        let path = self.table(name);
        if self.args.fresh && path.exists() {
            std::fs::remove_file(&path)?;
        }
        eprintln!(
            "[dp-mcmc reproduce] {name}: {} tasks -> {}",
            tasks.len(),
            path.display()
        );
        let report = self.runner().run(tasks, &path)?;
        if report.skipped > 0 {
            // What a rerun did: rows already in the table are kept, not recomputed.
            let recorded: f64 = read_results(&path)?
                .iter()
                .map(|r| r.wall_seconds)
                .filter(|s| s.is_finite())
                .sum();
            eprintln!(
                "[dp-mcmc reproduce] {name}: {} of {} tasks were already finished in {} and kept \
                 (their recorded task time: {recorded:.0} s); {} run now. To recompute them, \
                 rerun with --fresh or with a new --out DIR",
                report.skipped,
                report.tasks,
                path.display(),
                report.completed + report.failed.len(),
            );
        }
        self.files.push(path.display().to_string());
        self.parts.insert(name.to_string(), json!(report));
        Ok(report)
    }

    fn accounting(&mut self) -> Result<()> {
        let t = Instant::now();
        let eps = linspace(0.5, 6.0, if self.args.quick { 12 } else { 50 });
        let tag = |mut df: DataFrame, mode: &str| -> Result<DataFrame> {
            let h = df.height();
            df.with_column(Column::new("mode".into(), vec![mode; h]))?;
            Ok(df)
        };
        let thesis = tag(figure_6_1_with(&eps, 0.7, Gradient::Fresh, true)?, "thesis")?;
        let corrected = tag(
            figure_6_1_with(&eps, 0.7, Gradient::Fresh, false)?,
            "corrected",
        )?;
        let mut both = thesis.vstack(&corrected)?;
        let path = self.table("accounting");
        self.write_table(&mut both, &path)?;
        let fig = self.write_figure(
            "fig6_1_accounting",
            dp_mcmc::plots::accounting_comparison(&both),
        )?;
        self.parts.insert(
            "accounting".into(),
            json!({ "rows": both.height(), "wall_seconds": t.elapsed().as_secs_f64(), "figure": fig }),
        );
        Ok(())
    }

    fn baseline(&mut self) -> Result<DataFrame> {
        self.grid(&BaselineSpec::full().tasks(), "baseline")?;
        results_frame(&read_results(self.table("baseline"))?)
    }

    fn comparison(&mut self) -> Result<()> {
        let baselines = self.baseline()?;
        let spec = if self.args.quick {
            ComparisonSpec::quick()
        } else {
            ComparisonSpec::full()
        };
        self.grid(&spec.tasks(), "comparison")?;
        let rows = read_results(self.table("comparison"))?;
        let mut med = medians_frame(&rows)?;
        let path = self.table("comparison-medians");
        self.write_table(&mut med, &path)?;
        let df = results_frame(&rows)?;
        let mut figures = serde_json::Map::new();
        for (name, plot) in [
            ("fig6_3_mmd", figs::figure_6_3(&df, &baselines)),
            ("fig6_4_mmd_extra", figs::figure_6_4(&df, &baselines)),
            ("fig6_5_clip_fraction", figs::figure_6_5(&df)),
            ("fig6_6_clip_fraction_extra", figs::figure_6_6(&df)),
            ("fig6_7_circle", figs::figure_6_7(&df)),
            ("fig6_8_grad_clip_fraction", figs::figure_6_8(&df)),
            (
                "fig5_1_posteriors",
                dp_mcmc::experiments::PosteriorGrid::figure_5_1(120)
                    .and_then(|g| dp_mcmc::plots::posterior::figure_5_1(&g)),
            ),
            (
                "fig4_1_hmc_trajectory",
                dp_mcmc::experiments::HmcTrajectory::circle(46_327, 16, 120)
                    .and_then(|t| dp_mcmc::plots::posterior::figure_4_1(&t)),
            ),
        ] {
            figures.insert(name.into(), self.write_figure(name, plot)?);
        }
        if let Some(Value::Object(p)) = self.parts.get_mut("comparison") {
            p.insert("figures".into(), Value::Object(figures));
        }
        Ok(())
    }

    fn clipping(&mut self) -> Result<()> {
        let baselines = self.baseline()?;
        let mut spec = if self.args.quick {
            ClippingSpec::quick()
        } else {
            ClippingSpec::full()
        };
        let name = if self.args.thesis_compatible {
            spec = spec.thesis_compatible();
            "clipping-thesis"
        } else {
            "clipping"
        };
        self.grid(&spec.tasks(), name)?;
        let rows = read_results(self.table(name))?;
        let mut med = medians_frame(&rows)?;
        let path = self.table(&format!("{name}-medians"));
        self.write_table(&mut med, &path)?;
        let df = results_frame(&rows)?;
        let fig = self.write_figure(
            &format!("fig6_2_{}", name.replace('-', "_")),
            figs::figure_6_2(&df, &baselines),
        )?;
        if let Some(Value::Object(p)) = self.parts.get_mut(name) {
            p.insert("figure".into(), fig);
        }
        Ok(())
    }
}

/// Run `dp-mcmc reproduce`.
pub fn reproduce(args: ReproduceArgs) -> Result<Value> {
    if args.threads == Some(0) {
        return Err(Error::invalid("--threads", 0, "use at least 1 thread"));
    }
    if let Some(m) = args.max_time
        && Duration::try_from_secs_f64(m).is_err()
    {
        return Err(Error::invalid(
            "--max-time",
            m,
            "must be a finite number of seconds >= 0",
        ));
    }
    let mut ctx = Ctx {
        args: &args,
        t0: Instant::now(),
        files: Vec::new(),
        parts: serde_json::Map::new(),
    };
    let part = args.part;
    if matches!(part, Part::Accounting | Part::All) {
        ctx.accounting()?;
    }
    if matches!(part, Part::Comparison | Part::All) {
        ctx.comparison()?;
    }
    if matches!(part, Part::Clipping | Part::All) {
        ctx.clipping()?;
    }
    let mut files = ctx.files.clone();
    files.sort();
    files.dedup();
    let incomplete: usize = ctx
        .parts
        .values()
        .filter_map(|p| p.get("interrupted").and_then(Value::as_u64))
        .sum::<u64>() as usize;
    Ok(json!({
        "command": "reproduce",
        "part": format!("{part:?}").to_lowercase(),
        "quick": args.quick,
        "out": args.out.display().to_string(),
        "threads": args.threads,
        "seed": args.seed,
        "complete": incomplete == 0,
        "parts": Value::Object(ctx.parts),
        "files": files,
        "wall_seconds": ctx.t0.elapsed().as_secs_f64(),
    }))
}
