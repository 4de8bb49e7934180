//! The grid runner: runs [`Task`]s in parallel (a rayon pool of workers taking tasks in
//! order), appends one result row per finished task, skips tasks already in the results file
//! (resume), shows progress, and stops taking new work at a time limit.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use super::grid::{Task, TaskKind};
use super::metrics::trace_metrics;
use super::results::{ResultRow, ResultsFile, finished_tasks};
use super::tuned::tuned;
use crate::diagnostics::sample_metrics;
use crate::error::{Error, Result};
use crate::models::{Experiment, ExperimentModel};
use crate::progress::Progress;

use crate::samplers::{Budget, ChainTrace, RunSettings, Sampler, Start};

/// Settings of a grid run.
#[derive(Clone, Debug)]
pub struct GridRunner {
    /// Grid seed; every task derives its own seed from it and its id ([`Task::seed`]).
    pub seed: u64,
    /// Worker threads (default: rayon's default, the number of cores). Results do not depend
    /// on it.
    pub threads: Option<usize>,
    /// Stop taking new tasks after this time, and stop running chains at it (a stopped chain
    /// is not written, so a rerun redoes it).
    pub max_time: Option<Duration>,
    /// Progress bar on a terminal (never when `CI` is set or stderr is not a terminal, nor
    /// without the `cli` feature).
    pub progress: bool,
    /// Print a one-line progress report to stderr at this interval (`None`: never).
    pub log_every: Option<Duration>,
}

impl Default for GridRunner {
    fn default() -> Self {
        GridRunner {
            seed: 0,
            threads: None,
            max_time: None,
            progress: true,
            log_every: Some(Duration::from_secs(30)),
        }
    }
}

/// What a grid run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GridReport {
    /// The results file.
    pub file: String,
    /// Tasks in the grid.
    pub tasks: usize,
    /// Tasks found already finished in the file (skipped).
    pub skipped: usize,
    /// Tasks finished and written by this run.
    pub completed: usize,
    /// Tasks not run or cut off because of `max_time` (a rerun does them).
    pub interrupted: usize,
    /// Failed tasks: `(task id, error)`.
    pub failed: Vec<(String, String)>,
    /// Wall time of the run in seconds.
    pub wall_seconds: f64,
    /// Sum of the tasks' wall times in seconds (CPU-time-like: ≈ threads × wall when busy).
    pub task_seconds: f64,
}

impl std::fmt::Display for GridReport {
    /// One line: `N tasks: R run, S found finished, I interrupted, F failed (W s)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} tasks: {} run, {} found finished, {} interrupted, {} failed ({:.1} s)",
            self.tasks,
            self.completed,
            self.skipped,
            self.interrupted,
            self.failed.len(),
            self.wall_seconds
        )
    }
}

/// A model with its reference sample and start points, shared by the tasks on it.
struct Problem {
    model: ExperimentModel,
    /// Row-major 1000-draw reference sample (`None`: circle).
    reference: Option<Vec<f64>>,
    true_mean: Vec<f64>,
    starts: Vec<Vec<f64>>,
}

impl Problem {
    fn new(experiment: Experiment, n: usize, chains: usize) -> Result<Problem> {
        let model = if n == experiment.n() {
            experiment.model()?
        } else {
            let params = experiment.banana_params().ok_or_else(|| {
                Error::invalid(
                    "n",
                    n,
                    format!(
                        "only banana experiments can change n; use n = {}",
                        experiment.n()
                    ),
                )
            })?;
            let data = params.generate(
                &experiment.start_center(),
                n,
                experiment.default_data_seed(),
            )?;
            experiment.model_from_data(data)?
        };
        let reference = model.default_reference_sample().map(|s| s.concat());
        let true_mean = model.reference_mean();
        let starts = model.start_points(chains);
        Ok(Problem {
            model,
            reference,
            true_mean,
            starts,
        })
    }
}

type BudgetKey = (Experiment, &'static str, u64);

/// The tuned sampler of a comparison task with its per-chain budget (ε, δ = 0.1/n).
fn comparison_sampler(task: &Task) -> Result<Box<dyn Sampler>> {
    let (TaskKind::Comparison { algorithm, epsilon } | TaskKind::Field { algorithm, epsilon }) =
        task.kind
    else {
        return Err(Error::invalid("task", task.id(), "not a comparison task"));
    };
    let delta = 0.1 / task.n as f64;
    let mut s = tuned(task.experiment, algorithm)?.for_budget(task.n, epsilon, delta)?;
    let r = s.run_settings_mut();
    r.budget = Budget::Privacy { epsilon, delta };
    r.per_chain_budget = true;
    r.chains = 1;
    Ok(s)
}

/// Iterations of a comparison task's chain (0 when the budget allows none).
fn comparison_budget(task: &Task) -> Result<usize> {
    match comparison_sampler(task)?.budget(task.n)? {
        Some(b) => Ok(b.iterations),
        None => Err(Error::invalid("task", task.id(), "not a DP sampler")),
    }
}

fn budget_key(task: &Task) -> Option<BudgetKey> {
    match task.kind {
        TaskKind::Comparison { algorithm, epsilon } | TaskKind::Field { algorithm, epsilon } => {
            Some((task.experiment, algorithm.key(), epsilon.to_bits()))
        }
        _ => None,
    }
}

fn base_row(task: &Task, seed: u64) -> ResultRow {
    let mut row = ResultRow::empty(
        &task.id(),
        task.grid(),
        task.experiment.key(),
        task.algorithm(),
    );
    row.epsilon = task.epsilon();
    row.clip_bound = task.clip_bound();
    row.clip_distance = task.clip_distance().map(str::to_string);
    row.dim = task.experiment.dim();
    row.n = task.n;
    row.chain = task.chain;
    row.seed = seed;
    row
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Fills the metric columns of `row` from a finished chain.
fn record(row: &mut ResultRow, trace: &ChainTrace, p: &Problem, seed: u64) -> Result<()> {
    let m = trace_metrics(
        trace,
        row.chain,
        row.dim,
        p.reference.as_deref(),
        Some(&p.true_mean),
        seed ^ 0x05ee_d0f0_003d,
    )?;
    row.iterations = m.iterations;
    row.acceptance = finite(m.acceptance);
    row.clip_fraction = finite(m.clip_fraction);
    row.grad_clip_fraction = m.grad_clip_fraction;
    row.mmd = m.mmd;
    row.mean_error = m.mean_error;
    row.cov_error = m.cov_error;
    Ok(())
}

/// Runs one task; `Ok(None)` if it was cut off by the time limit.
fn run_task(
    task: &Task,
    p: &Problem,
    budgets: &HashMap<BudgetKey, usize>,
    grid_seed: u64,
    remaining: Option<Duration>,
) -> Result<Option<ResultRow>> {
    let t0 = Instant::now();
    let seed = task.seed(grid_seed);
    let mut row = base_row(task, seed);
    let settings = |start: Start| RunSettings {
        chains: 1,
        seed,
        start,
        max_time: remaining,
        progress: false,
        // the grid keeps every worker busy with its own task: no threads inside a chain
        threads_per_chain: Some(1),
        ..RunSettings::default()
    };
    match &task.kind {
        TaskKind::Comparison { .. } | TaskKind::Field { .. } => {
            let key = budget_key(task).expect("a comparison task has a budget key");
            let k = *budgets
                .get(&key)
                .expect("budgets are computed for every pending task before the run");
            if k > 0 {
                let start = p.starts.get(task.chain).cloned().ok_or_else(|| {
                    Error::invalid("chain", task.chain, "more chains than start points")
                })?;
                let s = comparison_sampler(task)?;
                let traces = s.run_chains(&p.model, &settings(Start::PerChain(vec![start])), k)?;
                let trace = &traces[0];
                if trace.stopped_early {
                    return Ok(None);
                }
                record(&mut row, trace, p, seed)?;
            }
        }
        TaskKind::Clipping {
            algorithm,
            clip_bound,
            distance,
        } => {
            let mut s = tuned(task.experiment, *algorithm)?;
            s.set_clip_bound(*clip_bound)?;
            s.set_clip_distance(*distance)?;
            let theta0 = task
                .experiment
                .true_theta()
                .expect("the clipping study runs on the flat bananas");
            let budget = s.run_settings_mut().budget;
            *s.run_settings_mut() = RunSettings {
                budget,
                ..settings(Start::Point(theta0))
            };
            let run = s.run(&p.model)?;
            let trace = &run.chains[0];
            if trace.stopped_early {
                return Ok(None);
            }
            record(&mut row, trace, p, seed)?;
            row.decisions_changed = Some(trace.decisions_changed());
        }
        TaskKind::Baseline => {
            let post = p.model.exact_posterior().ok_or_else(|| {
                Error::invalid("experiment", task.experiment, "has no exact posterior")
            })?;
            let reference = p
                .reference
                .as_deref()
                .expect("an experiment with an exact posterior has a reference sample");
            let fresh = post
                .sample_seeded(crate::models::REFERENCE_DRAWS, seed)
                .concat();
            row.iterations = crate::models::REFERENCE_DRAWS;
            let m = sample_metrics(&fresh, reference, row.dim, seed ^ 0x5eed)?;
            row.mmd = m.mmd;
            row.mean_error = Some(m.mean_error);
            row.cov_error = Some(m.cov_error);
        }
    }
    row.wall_seconds = t0.elapsed().as_secs_f64();
    Ok(Some(row))
}

/// What the workers of one grid run share: the set-up (pending tasks, problems, budgets, the
/// results file, the progress bar) and the running tally.
struct GridRun<'a> {
    runner: &'a GridRunner,
    t0: Instant,
    pending: Vec<&'a Task>,
    problems: HashMap<(Experiment, usize), Problem>,
    budgets: HashMap<BudgetKey, usize>,
    file: ResultsFile,
    /// Name of the grid in progress lines (the results file's stem).
    label: String,
    bar: Progress,
    /// Index into `pending` of the next task to take.
    next: AtomicUsize,
    /// Tasks taken and finished (written, cut off or failed).
    finished: AtomicUsize,
    tally: Mutex<Tally>,
}

/// Outcome counts of the finished tasks, and when the last progress line was printed.
struct Tally {
    failed: Vec<(String, String)>,
    completed: usize,
    task_seconds: f64,
    last_log: Instant,
}

impl<'a> GridRun<'a> {
    /// Set-up: one problem per (experiment, n), the budgets once per configuration (in
    /// `pool`), the progress bar.
    fn new(
        runner: &'a GridRunner,
        t0: Instant,
        tasks: &'a [Task],
        pending: Vec<&'a Task>,
        file: ResultsFile,
        out: &Path,
        pool: &rayon::ThreadPool,
    ) -> Result<GridRun<'a>> {
        // Models, references and start points, one per (experiment, n).
        let mut problems: HashMap<(Experiment, usize), Problem> = HashMap::new();
        for t in &pending {
            let chains = tasks
                .iter()
                .filter(|u| (u.experiment, u.n) == (t.experiment, t.n))
                .map(|u| u.chain + 1)
                .max()
                .unwrap_or(1);
            if let std::collections::hash_map::Entry::Vacant(v) =
                problems.entry((t.experiment, t.n))
            {
                v.insert(Problem::new(t.experiment, t.n, chains)?);
            }
        }

        // Budgets, once per configuration (Algorithm 2; the Fourier accountant's search is
        // the expensive one).
        let mut keys: Vec<(BudgetKey, &Task)> = Vec::new();
        for t in &pending {
            if let Some(k) = budget_key(t)
                && !keys.iter().any(|(q, _)| *q == k)
            {
                keys.push((k, t));
            }
        }
        let computed: Vec<(BudgetKey, Result<usize>)> = pool.install(|| {
            keys.par_iter()
                .map(|(k, t)| (*k, comparison_budget(t)))
                .collect()
        });
        let mut budgets = HashMap::new();
        for (k, b) in computed {
            budgets.insert(k, b?);
        }

        let bar = Progress::tasks(runner.progress, pending.len() as u64);
        let label = out
            .file_stem()
            .map_or_else(|| "grid".to_string(), |s| s.to_string_lossy().into_owned());
        Ok(GridRun {
            runner,
            t0,
            pending,
            problems,
            budgets,
            file,
            label,
            bar,
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            tally: Mutex::new(Tally {
                failed: Vec::new(),
                completed: 0,
                task_seconds: 0.0,
                last_log: Instant::now(),
            }),
        })
    }

    /// What is left of the time limit (`Some(None)`: no limit; `None`: time is up).
    fn remaining(&self) -> Option<Option<Duration>> {
        match self.runner.max_time {
            Some(m) => match m.checked_sub(self.t0.elapsed()) {
                Some(r) if !r.is_zero() => Some(Some(r)),
                _ => None,
            },
            None => Some(None),
        }
    }

    /// One worker: takes the next pending task until there is none or time is up, runs it,
    /// appends its row and updates the tally and the progress display.
    fn work(&self) {
        while let Some(remaining) = self.remaining() {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            let Some(task) = self.pending.get(i) else {
                break;
            };
            let p = &self.problems[&(task.experiment, task.n)];
            let result = run_task(task, p, &self.budgets, self.runner.seed, remaining).and_then(
                |r| match r {
                    Some(row) => self.file.append(&row).map(|_| Some(row)),
                    None => Ok(None),
                },
            );
            let mut tally = self
                .tally
                .lock()
                .expect("no worker panics while holding the lock");
            match result {
                Ok(Some(row)) => {
                    tally.completed += 1;
                    tally.task_seconds += row.wall_seconds;
                }
                Ok(None) => {}
                Err(e) => tally.failed.push((task.id(), e.to_string())),
            }
            let f = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
            self.bar.inc(1);
            self.log(&mut tally, f);
        }
    }

    /// A progress line every `log_every` and after the last task.
    fn log(&self, tally: &mut Tally, f: usize) {
        let total = self.pending.len();
        if let Some(every) = self.runner.log_every
            && (tally.last_log.elapsed() >= every || f == total)
        {
            tally.last_log = Instant::now();
            let el = self.t0.elapsed().as_secs_f64();
            let eta = el / f as f64 * (total - f) as f64;
            let line = format!(
                "[dp-mcmc reproduce] {}: {f}/{total} tasks, {el:.0} s elapsed, ~{eta:.0} s left, {} failed",
                self.label,
                tally.failed.len()
            );
            self.bar.println(line);
        }
    }

    /// The report once every worker has returned.
    fn finish(self, mut report: GridReport) -> GridReport {
        self.bar.finish();
        let tally = self.tally.into_inner().expect("workers have finished");
        report.completed = tally.completed;
        report.interrupted = self.pending.len() - tally.completed - tally.failed.len();
        report.failed = tally.failed;
        report.task_seconds = tally.task_seconds;
        report.wall_seconds = self.t0.elapsed().as_secs_f64();
        report
    }
}

impl GridRunner {
    /// Defaults: seed 0, all cores, no time limit, progress bar on a terminal, a progress
    /// line every 30 s.
    pub fn new() -> GridRunner {
        GridRunner::default()
    }

    /// For notebooks and scripts: no progress bar and no progress lines (the other defaults
    /// as [`GridRunner::new`]).
    pub fn quiet() -> GridRunner {
        GridRunner {
            progress: false,
            log_every: None,
            ..GridRunner::default()
        }
    }

    /// Runs every one of `tasks` into a new results file at `out`: an existing file is
    /// removed first, so nothing is resumed and the report is the same on every run (a live
    /// grid in a notebook). [`GridRunner::run`] resumes instead.
    ///
    /// ```
    /// use dp_mcmc::experiments::{ComparisonSpec, GridRunner};
    /// use dp_mcmc::models::Experiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let out = std::env::temp_dir().join(format!("dp-mcmc-doc-fresh-{}.csv", std::process::id()));
    /// let spec = ComparisonSpec { chains: 1, ..ComparisonSpec::smoke() };
    /// let tasks: Vec<_> = spec.tasks().into_iter().take(1).collect();
    /// let first = GridRunner::quiet().run_fresh(&tasks, &out)?;
    /// let again = GridRunner::quiet().run_fresh(&tasks, &out)?;
    /// assert_eq!((first.completed, again.completed, again.skipped), (1, 1, 0));
    /// // a folder is not a results file
    /// assert!(GridRunner::quiet().run_fresh(&tasks, std::env::temp_dir()).is_err());
    /// std::fs::remove_file(&out)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`GridRunner::run`], and a file that cannot be removed.
    pub fn run_fresh(&self, tasks: &[Task], out: impl AsRef<Path>) -> Result<GridReport> {
        let out = out.as_ref();
        if out.is_file() {
            std::fs::remove_file(out)?;
        }
        self.run(tasks, out)
    }

    /// Runs the `tasks` not yet in `out` (a results CSV), appending a row per finished task.
    ///
    /// ```no_run
    /// use dp_mcmc::experiments::{BaselineSpec, GridRunner};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let report = GridRunner::new().run(&BaselineSpec::full().tasks(), "data/results/baseline.csv")?;
    /// assert_eq!(report.failed.len(), 0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// An unreadable or foreign results file, a model that cannot be built, or a thread pool
    /// that cannot start. A failing task does not stop the grid: it is listed in
    /// [`GridReport::failed`].
    pub fn run(&self, tasks: &[Task], out: impl AsRef<Path>) -> Result<GridReport> {
        let t0 = Instant::now();
        let out = out.as_ref();
        let done = finished_tasks(out)?;
        let file = ResultsFile::open(out)?;
        let pending: Vec<&Task> = tasks.iter().filter(|t| !done.contains(&t.id())).collect();
        let report = GridReport {
            file: out.display().to_string(),
            tasks: tasks.len(),
            skipped: tasks.len() - pending.len(),
            ..GridReport::default()
        };
        if pending.is_empty() {
            return Ok(report);
        }
        let pool = self.pool()?;
        let grid = GridRun::new(self, t0, tasks, pending, file, out, &pool)?;
        pool.scope(|scope| {
            for _ in 0..pool.current_num_threads() {
                scope.spawn(|_| grid.work());
            }
        });
        Ok(grid.finish(report))
    }

    /// The worker pool (`threads` workers, or rayon's default).
    fn pool(&self) -> Result<rayon::ThreadPool> {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(n) = self.threads {
            b = b.num_threads(n.max(1));
        }
        b.build().map_err(|e| {
            Error::invalid(
                "threads",
                self.threads.unwrap_or(0),
                format!("cannot build a thread pool: {e}"),
            )
        })
    }
}
