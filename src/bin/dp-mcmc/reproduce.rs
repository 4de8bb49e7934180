//! `reproduce`: run the thesis' Chapter 6 grids (accounting comparison, clipping study,
//! algorithm comparison), write the result tables (CSV) and the figures (offline HTML), and
//! print one JSON summary. `--shard I/N` runs 1/N of the grids' tasks (tables only);
//! `reproduce merge` combines the shards into the tables and figures of an unsharded run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use dp_mcmc::experiments::{
    BaselineSpec, ClippingSpec, ComparisonSpec, FieldSpec, GridReport, GridRunner, Shard, Task,
    read_results,
};
use dp_mcmc::frame::accounting::linspace;
use dp_mcmc::frame::experiments::{medians_frame, results_frame};
use dp_mcmc::frame::figure_6_1::figure_6_1_with;
use dp_mcmc::frame::write_csv;
use dp_mcmc::plots::experiments as figs;
use dp_mcmc::polars::prelude::{Column, DataFrame};
use dp_mcmc::samplers::Gradient;
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

use crate::shard;

/// Which part of Chapter 6 to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Part {
    /// Figure 6.1: iterations per accountant.
    Accounting,
    /// Figure 6.2: the clipping study (non-private RWMH / HMC).
    Clipping,
    /// Figures 6.3–6.8: the algorithm comparison.
    Comparison,
    /// The field's samplers (DP-SGLD, DP-SGNHT, DP-Fast MH) on the comparison's experiments at
    /// ε ∈ {1, 2, 4, 6}, beside the thesis' boxes of `comparison.csv` (not part of `all`).
    Field,
    /// Everything, in the order accounting, comparison, clipping.
    All,
    /// Only the baseline grid (exact posterior sample vs the reference: the figures' dashed
    /// lines), which the comparison and clipping parts also run.
    Baseline,
    /// Combine the tables of shard runs (`merge --out DIR SHARD_DIR...`, the shard runs'
    /// `--out` folders) into the tables and figures of an unsharded run.
    Merge,
}

impl Part {
    fn key(self) -> &'static str {
        match self {
            Part::Accounting => "accounting",
            Part::Clipping => "clipping",
            Part::Comparison => "comparison",
            Part::Field => "field",
            Part::All => "all",
            Part::Baseline => "baseline",
            Part::Merge => "merge",
        }
    }
}

/// Arguments of `dp-mcmc reproduce`.
#[derive(Args)]
pub struct ReproduceArgs {
    /// accounting, clipping, comparison, field, all, baseline, or merge (then SHARD_DIRS follow).
    #[arg(value_enum)]
    part: Part,
    /// With `merge`: the `--out` folders of the shard runs `--shard 1/N` ... `--shard N/N`.
    #[arg(value_name = "SHARD_DIRS")]
    shard_dirs: Vec<PathBuf>,
    /// Run only shard I of N (1-based) of every grid: the tasks at positions ≡ I−1 (mod N) of
    /// the grid's task list (round robin; task ids and seeds unchanged). Writes the grid tables
    /// and `shard.json` under `--out` (no medians, accounting or figures: `reproduce merge`
    /// makes them from all shards).
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    shard: Option<String>,
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
    /// `--shard`: run this shard's tasks, write only the grid tables.
    shard: Option<Shard>,
    /// Grids already run by this command (the baseline grid is shared by two parts: `all
    /// --fresh` must not empty and compute it twice, nor report it twice).
    visited: HashSet<String>,
    /// Set by `merge`: the tables are merged shard tables, nothing is left to run.
    merged: bool,
    t0: Instant,
    files: Vec<String>,
    parts: serde_json::Map<String, Value>,
}

/// The task list of the grid `name` (`baseline`, `comparison`, `field`, `clipping`,
/// `clipping-thesis`).
fn grid_tasks(name: &str, quick: bool) -> Vec<Task> {
    let clipping = || {
        if quick {
            ClippingSpec::quick()
        } else {
            ClippingSpec::full()
        }
    };
    match name {
        "comparison" if quick => ComparisonSpec::quick().tasks(),
        "comparison" => ComparisonSpec::full().tasks(),
        "field" if quick => FieldSpec::quick().tasks(),
        "field" => FieldSpec::full().tasks(),
        "clipping" => clipping().tasks(),
        "clipping-thesis" => clipping().thesis_compatible().tasks(),
        _ => BaselineSpec::full().tasks(),
    }
}

/// The grids a part runs, in order.
fn part_grids(part: Part, thesis_compatible: bool) -> Vec<&'static str> {
    let clipping = if thesis_compatible {
        "clipping-thesis"
    } else {
        "clipping"
    };
    match part {
        Part::Accounting | Part::Merge => vec![],
        Part::Baseline => vec!["baseline"],
        Part::Comparison => vec!["baseline", "comparison"],
        Part::Field => vec!["baseline", "field"],
        Part::Clipping => vec!["baseline", clipping],
        Part::All => vec!["baseline", "comparison", clipping],
    }
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

    fn grid(&mut self, name: &str) -> Result<GridReport> {
        let all = grid_tasks(name, self.args.quick);
        let tasks = match self.shard {
            Some(s) => s.select(&all),
            None => all,
        };
        let path = self.table(name);
        let first_visit = self.visited.insert(name.to_string());
        if self.args.fresh && first_visit {
            for p in [path.clone(), shard::runs_path(&path)] {
                if p.exists() {
                    std::fs::remove_file(&p)?;
                }
            }
        }
        let of_shard = self
            .shard
            .map_or(String::new(), |s| format!(" (shard {s})"));
        if !self.merged && first_visit {
            eprintln!(
                "[dp-mcmc reproduce] {name}: {} tasks{of_shard} -> {}",
                tasks.len(),
                path.display()
            );
        }
        let report = self.runner().run(&tasks, &path)?;
        shard::record_run(&path, name, &report, self.args.threads, self.shard)?;
        if report.skipped > 0 && !self.merged && first_visit {
            self.say_kept(name, &path, &report)?;
        }
        self.files.push(path.display().to_string());
        if shard::runs_path(&path).exists() {
            self.files
                .push(shard::runs_path(&path).display().to_string());
        }
        if first_visit {
            self.parts.insert(name.to_string(), json!(report));
        }
        Ok(report)
    }

    /// One closing line: tasks found finished, run now, failed, left for a rerun.
    fn say_summary(&self) {
        let sum = |key: &str| -> u64 {
            self.parts
                .values()
                .filter_map(|p| p.get(key))
                .map(|v| v.as_u64().or_else(|| v.as_array().map(|a| a.len() as u64)))
                .map(Option::unwrap_or_default)
                .sum()
        };
        let (tasks, kept, run) = (sum("tasks"), sum("skipped"), sum("completed"));
        if tasks == 0 {
            return;
        }
        let (failed, left) = (sum("failed"), sum("interrupted"));
        let hint = if kept > 0 && run == 0 {
            " (to recompute: --fresh, or a new --out DIR)"
        } else {
            ""
        };
        eprintln!(
            "[dp-mcmc reproduce] done in {:.0} s: {tasks} tasks, {kept} found finished and kept{hint}, \
             {run} run now, {failed} failed, {left} left for a rerun; tables in {}",
            self.t0.elapsed().as_secs_f64(),
            self.dir().display()
        );
    }

    /// What a rerun did: rows already in the table are kept, not recomputed; how long they took.
    fn say_kept(&self, name: &str, path: &Path, report: &GridReport) -> Result<()> {
        let task_time: f64 = read_results(path)?
            .iter()
            .map(|r| r.wall_seconds)
            .filter(|s| s.is_finite())
            .sum();
        let wall = shard::recorded_wall(path)?.unwrap_or_else(|| {
            format!(
                "wall time not recorded (no {})",
                shard::runs_path(path).display()
            )
        });
        eprintln!(
            "[dp-mcmc reproduce] {name}: {} of {} tasks{} were already finished in {} and kept, \
             {} run now. Recorded time of their computation: {wall}; task time {task_time:.0} s \
             (the sum of the rows' wall_seconds). To recompute, rerun with --fresh (deletes the \
             tables first) or with a new --out DIR",
            report.skipped,
            report.tasks,
            self.shard
                .map_or(String::new(), |s| format!(" of shard {s}")),
            path.display(),
            report.completed + report.failed.len(),
        );
        Ok(())
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
        self.grid("baseline")?;
        results_frame(&read_results(self.table("baseline"))?)
    }

    fn comparison(&mut self) -> Result<()> {
        let baselines = self.baseline()?;
        self.grid("comparison")?;
        if self.shard.is_some() {
            return Ok(());
        }
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

    /// The field grid, its medians, and its figures beside the thesis' boxes (the rows of
    /// `comparison.csv` at the field's ε, where that table exists).
    fn field(&mut self) -> Result<()> {
        let baselines = self.baseline()?;
        self.grid("field")?;
        if self.shard.is_some() {
            return Ok(());
        }
        let field = read_results(self.table("field"))?;
        let mut med = medians_frame(&field)?;
        let path = self.table("field-medians");
        self.write_table(&mut med, &path)?;
        let epsilons: Vec<f64> = if self.args.quick {
            FieldSpec::quick().epsilons
        } else {
            FieldSpec::full().epsilons
        };
        let thesis = self.table("comparison");
        let mut rows = if thesis.exists() {
            read_results(&thesis)?
                .into_iter()
                .filter(|r| r.epsilon.is_some_and(|e| epsilons.contains(&e)))
                .collect()
        } else {
            Vec::new()
        };
        rows.extend(field);
        let df = results_frame(&rows)?;
        let mut figures = serde_json::Map::new();
        for (name, plot) in [
            ("field_mmd", figs::figure_field(&df, &baselines)),
            ("field_circle", figs::figure_6_7(&df)),
        ] {
            figures.insert(name.into(), self.write_figure(name, plot)?);
        }
        if let Some(Value::Object(p)) = self.parts.get_mut("field") {
            p.insert("figures".into(), Value::Object(figures));
        }
        Ok(())
    }

    fn clipping(&mut self) -> Result<()> {
        let baselines = self.baseline()?;
        let name = if self.args.thesis_compatible {
            "clipping-thesis"
        } else {
            "clipping"
        };
        self.grid(name)?;
        if self.shard.is_some() {
            return Ok(());
        }
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

/// `--shard` parsed; errors name the flag.
fn parse_shard(s: &str) -> Result<Shard> {
    s.parse().map_err(|e| match e {
        Error::InvalidParameter { value, reason, .. } => Error::InvalidParameter {
            name: "--shard",
            value,
            reason,
        },
        e => e,
    })
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
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    if args.part == Part::Merge {
        if shard.is_some() {
            return Err(Error::invalid(
                "--shard",
                args.shard.as_deref().unwrap_or_default(),
                "merge combines shards: give the shard runs' --out folders, without --shard",
            ));
        }
        return merge(args);
    }
    if args.part == Part::Accounting && shard.is_some() {
        return Err(Error::invalid(
            "--shard",
            args.shard.as_deref().unwrap_or_default(),
            "the accounting part has no tasks to shard (it takes seconds): run it without --shard",
        ));
    }
    if let Some(dir) = args.shard_dirs.first() {
        return Err(Error::invalid(
            "SHARD_DIRS",
            dir.display(),
            "folders are only taken by `reproduce merge --out DIR SHARD_DIR...`",
        ));
    }
    run(&args, shard, false)
}

/// The part's grids, tables and figures (`merged`: the tables were merged from shards).
fn run(args: &ReproduceArgs, shard: Option<Shard>, merged: bool) -> Result<Value> {
    let mut ctx = Ctx {
        args,
        shard,
        visited: HashSet::new(),
        merged,
        t0: Instant::now(),
        files: Vec::new(),
        parts: serde_json::Map::new(),
    };
    let part = args.part;
    // A shard writes grid tables only; the accounting part has no tasks: merge computes it.
    if matches!(part, Part::Accounting | Part::All) && shard.is_none() {
        ctx.accounting()?;
    }
    if part == Part::Baseline {
        ctx.baseline()?;
    }
    if matches!(part, Part::Comparison | Part::All) {
        ctx.comparison()?;
    }
    if matches!(part, Part::Clipping | Part::All) {
        ctx.clipping()?;
    }
    if part == Part::Field {
        ctx.field()?;
    }
    let incomplete: usize = ctx
        .parts
        .values()
        .filter_map(|p| p.get("interrupted").and_then(Value::as_u64))
        .sum::<u64>() as usize;
    if !merged {
        ctx.say_summary();
    }
    if let Some(s) = shard {
        let grids: serde_json::Map<String, Value> = ctx
            .parts
            .iter()
            .map(|(k, v)| {
                let done = v.get("skipped").and_then(Value::as_u64).unwrap_or(0)
                    + v.get("completed").and_then(Value::as_u64).unwrap_or(0);
                let tasks = v.get("tasks").and_then(Value::as_u64).unwrap_or(0);
                (k.clone(), json!({ "tasks": tasks, "finished": done }))
            })
            .collect();
        shard::write_manifest(&ctx.dir(), &settings(args), s, &Value::Object(grids))?;
        ctx.files
            .push(ctx.dir().join(shard::MANIFEST).display().to_string());
    }
    let mut files = ctx.files.clone();
    files.sort();
    files.dedup();
    Ok(json!({
        "command": "reproduce",
        "part": part.key(),
        "quick": args.quick,
        "out": args.out.display().to_string(),
        "threads": args.threads,
        "seed": args.seed,
        "shard": shard.map(|s| s.to_string()),
        "complete": incomplete == 0,
        "parts": Value::Object(ctx.parts),
        "files": files,
        "wall_seconds": ctx.t0.elapsed().as_secs_f64(),
    }))
}

/// The settings a shard manifest records and `merge` checks are equal across shards.
fn settings(args: &ReproduceArgs) -> Value {
    json!({
        "part": args.part.key(),
        "quick": args.quick,
        "seed": args.seed,
        "thesis_compatible": args.thesis_compatible,
    })
}

/// `reproduce merge --out DIR SHARD_DIRS...`: the shards' grid tables merged in task order,
/// then the part run on them (nothing left to compute): medians, accounting, figures.
fn merge(args: ReproduceArgs) -> Result<Value> {
    let t0 = Instant::now();
    let dirs = args
        .shard_dirs
        .iter()
        .map(|d| shard::read_shard_dir(d, args.quick))
        .collect::<Result<Vec<_>>>()?;
    shard::check_complete_set(&dirs)?;
    let s = &dirs[0].settings;
    let bad = |what: &str| Error::InvalidData(format!("shard manifest: bad `{what}` entry"));
    let part = Part::from_str(s["part"].as_str().ok_or_else(|| bad("part"))?, false)
        .map_err(|_| bad("part"))?;
    let merged_args = ReproduceArgs {
        part,
        shard_dirs: Vec::new(),
        shard: None,
        quick: s["quick"].as_bool().ok_or_else(|| bad("quick"))?,
        out: args.out.clone(),
        threads: args.threads,
        max_time: None,
        seed: s["seed"].as_u64().ok_or_else(|| bad("seed"))?,
        thesis_compatible: s["thesis_compatible"]
            .as_bool()
            .ok_or_else(|| bad("thesis_compatible"))?,
        no_figures: args.no_figures,
        fresh: false,
    };
    let dir = if merged_args.quick {
        args.out.join("quick")
    } else {
        args.out.clone()
    };
    let mut grids = serde_json::Map::new();
    for name in part_grids(part, merged_args.thesis_compatible) {
        let tasks = grid_tasks(name, merged_args.quick);
        let out = dir.join(format!("{name}.csv"));
        grids.insert(name.into(), shard::merge_grid(name, &tasks, &dirs, &out)?);
    }
    eprintln!(
        "[dp-mcmc reproduce] merged {} shards into {}",
        dirs.len(),
        dir.display()
    );
    let mut out = run(&merged_args, None, true)?;
    if let Value::Object(m) = &mut out {
        m.insert(
            "merged".into(),
            json!({
                "shards": dirs.iter().map(|d| d.tables.display().to_string()).collect::<Vec<_>>(),
                "grids": grids,
            }),
        );
        m.insert("wall_seconds".into(), json!(t0.elapsed().as_secs_f64()));
    }
    Ok(out)
}
