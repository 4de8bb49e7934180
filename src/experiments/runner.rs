//! The grid runner: runs [`Task`]s in parallel (a rayon pool of workers taking tasks in
//! order), appends one result row per finished task, skips tasks already in the results file
//! (resume), shows progress, and stops taking new work at a time limit. The chains of a box
//! whose sampler reads all of a large data set at every pass run together in lockstep
//! (`samplers::pass::Lockstep`: one read of the data for all their passes, the same bits), as
//! one unit of work whose rows are written when the box ends.

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
use crate::models::{Experiment, ExperimentModel, Model};
use crate::progress::Progress;

use crate::samplers::pass::{Lockstep, run_member};
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

/// A box's chains run in lockstep (`samplers::pass::Lockstep`) when its data are too large
/// for the caches: at least this many bytes (the d ≥ 10 experiments: 16-48 MB; the d = 2 ones
/// hold 1.6-3.2 MB, which L3 serves as fast as a shared span: four DP HMC boxes of
/// tempered-2d and hard-2d took 31.6-33.7 s in lockstep against 30.3-31.0 s without).
const LOCKSTEP_MIN_BYTES: usize = 4 << 20;

/// The samplers whose chains are run in lockstep: those whose every pass reads every column
/// of the data (DP HMC's gradients and ratios, the full-dimensional proposals of the DP
/// penalty and of the clipping study's RWMH, HMC's ratios). A one-coordinate (GWMH) or
/// minibatch chain reads one column or a subsample, so chains in lockstep would share little
/// of it and only wait for each other (measured, one core, a box of 20 chains at ε = 2: GWMH
/// on gauss-30d 3 % and DP Barker on tempered-10d 20 % slower in lockstep; DP HMC on
/// gauss-30d 35 % faster, the DP penalty there 47 %).
const LOCKSTEP_ALGORITHMS: [&str; 4] = ["dp-hmc", "dp-penalty", "hmc", "rwmh"];

/// The box of a task (the id of its chain 0) when its chains are run in lockstep: a sampler
/// of [`LOCKSTEP_ALGORITHMS`] on at least [`LOCKSTEP_MIN_BYTES`] of data.
fn lockstep_box(task: &Task, p: &Problem) -> Option<String> {
    let bytes = p.model.n_rows().saturating_mul(p.model.dim()) * std::mem::size_of::<f64>();
    let shares =
        LOCKSTEP_ALGORITHMS.contains(&task.algorithm()) && !matches!(task.kind, TaskKind::Baseline);
    (shares && bytes >= LOCKSTEP_MIN_BYTES).then(|| {
        Task {
            chain: 0,
            ..task.clone()
        }
        .id()
    })
}

/// The pending tasks as units of work: the pending chains of each lockstep box together
/// (at the position of the box's first pending chain), every other task alone.
fn units<'a>(
    pending: &[&'a Task],
    problems: &HashMap<(Experiment, usize), Problem>,
) -> Vec<Vec<&'a Task>> {
    let mut units: Vec<Vec<&'a Task>> = Vec::new();
    let mut boxes: HashMap<String, usize> = HashMap::new();
    for &t in pending {
        let key = lockstep_box(t, &problems[&(t.experiment, t.n)]);
        match key.as_ref().and_then(|k| boxes.get(k).copied()) {
            Some(u) => units[u].push(t),
            None => {
                if let Some(k) = key {
                    boxes.insert(k, units.len());
                }
                units.push(vec![t]);
            }
        }
    }
    units
}

/// Runs the chains of one box in lockstep, each on its own thread: their passes over the
/// shared data set are computed together, span by span of chunks (`samplers::pass::Lockstep`),
/// with the same bits as each chain alone. A row's wall time is the box's divided by its
/// chains.
fn run_box(
    tasks: &[&Task],
    p: &Problem,
    budgets: &HashMap<BudgetKey, usize>,
    grid_seed: u64,
    remaining: Option<Duration>,
) -> Vec<Result<Option<ResultRow>>> {
    let group = Lockstep::new(&p.model as &dyn Model, tasks.len());
    run_members(&group, tasks, p, budgets, (grid_seed, remaining))
}

/// [`run_box`] in the lockstep `group` (of `tasks.len()` members on `p.model`).
fn run_members(
    group: &std::sync::Arc<Lockstep>,
    tasks: &[&Task],
    p: &Problem,
    budgets: &HashMap<BudgetKey, usize>,
    (grid_seed, remaining): (u64, Option<Duration>),
) -> Vec<Result<Option<ResultRow>>> {
    let t0 = Instant::now();
    let mut results: Vec<Result<Option<ResultRow>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = tasks
            .iter()
            .enumerate()
            .map(|(i, task)| {
                let chain = move || {
                    run_member(group, i, || {
                        run_task(task, p, budgets, grid_seed, remaining)
                    })
                };
                std::thread::Builder::new()
                    .name(format!("dp-mcmc chain {}", task.chain))
                    .spawn_scoped(scope, chain)
                    .map_err(|e| {
                        // the member never runs: it leaves at once, so the others do not wait
                        run_member(group, i, || ());
                        Error::Model(format!("cannot start a thread for task {}: {e}", task.id()))
                    })
            })
            .collect();
        handles
            .into_iter()
            .zip(tasks)
            .map(|(h, task)| {
                h?.join()
                    .unwrap_or_else(|_| Err(Error::Model(format!("task {} panicked", task.id()))))
            })
            .collect()
    });
    let share = t0.elapsed().as_secs_f64() / tasks.len() as f64;
    for row in results.iter_mut().flatten().flatten() {
        row.wall_seconds = share;
    }
    results
}

/// What the workers of one grid run share: the set-up (pending tasks, problems, budgets, the
/// results file, the progress bar) and the running tally.
struct GridRun<'a> {
    runner: &'a GridRunner,
    t0: Instant,
    pending: Vec<&'a Task>,
    /// The pending tasks as units of work: one task, or the pending chains of a box run in
    /// lockstep ([`lockstep_box`]), in the order of each unit's first task.
    units: Vec<Vec<&'a Task>>,
    problems: HashMap<(Experiment, usize), Problem>,
    budgets: HashMap<BudgetKey, usize>,
    file: ResultsFile,
    /// Name of the grid in progress lines (the results file's stem).
    label: String,
    bar: Progress,
    /// Index into `units` of the next unit to take.
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
        let units = units(&pending, &problems);
        Ok(GridRun {
            runner,
            t0,
            units,
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

    /// One worker: takes the next pending unit (a task, or a box of chains in lockstep) until
    /// there is none or time is up, runs it, appends its rows and updates the tally and the
    /// progress display.
    fn work(&self) {
        while let Some(remaining) = self.remaining() {
            let u = self.next.fetch_add(1, Ordering::SeqCst);
            let Some(unit) = self.units.get(u) else {
                break;
            };
            let p = &self.problems[&(unit[0].experiment, unit[0].n)];
            let results = match unit.as_slice() {
                [task] => vec![run_task(
                    task,
                    p,
                    &self.budgets,
                    self.runner.seed,
                    remaining,
                )],
                tasks => run_box(tasks, p, &self.budgets, self.runner.seed, remaining),
            };
            for (task, result) in unit.iter().zip(results) {
                let result = result.and_then(|r| match r {
                    Some(row) => self.file.append(&row).map(|_| Some(row)),
                    None => Ok(None),
                });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ComparisonSpec;
    use crate::samplers::SamplerKind;

    /// On data of 4 MB or more, the chains of a DP HMC or DP penalty box form one unit (in
    /// order of the box's first chain), and run in lockstep they give each chain's own row;
    /// GWMH chains and the small d = 2 data stay one task per unit.
    #[test]
    fn boxes_in_lockstep_give_each_chains_own_rows() {
        let spec = ComparisonSpec {
            experiments: vec![Experiment::EasyBanana10d, Experiment::EasyBanana2d],
            epsilons: vec![1.0],
            circle_epsilons: vec![],
            chains: 3,
            algorithms: Some(vec![SamplerKind::DpHmc, SamplerKind::DpPenaltyGwmh]),
        };
        // 60 000 rows × 10 columns: 4.8 MB; the d = 2 experiment's own data: 1.6 MB
        let tasks: Vec<Task> = spec
            .tasks()
            .into_iter()
            .map(|t| match t.experiment {
                Experiment::EasyBanana10d => Task { n: 60_000, ..t },
                _ => t,
            })
            .collect();
        let pending: Vec<&Task> = tasks.iter().collect();
        let mut problems = HashMap::new();
        for t in &tasks {
            problems
                .entry((t.experiment, t.n))
                .or_insert_with(|| Problem::new(t.experiment, t.n, spec.chains).unwrap());
        }
        let units = units(&pending, &problems);
        let ids = |u: &Vec<&Task>| u.iter().map(|t| t.id()).collect::<Vec<_>>();
        let boxed: Vec<_> = units.iter().filter(|u| u.len() > 1).map(ids).collect();
        assert_eq!(
            boxed,
            vec![
                (0..3)
                    .map(|c| format!("comparison/easy-10d/n=60000/dp-hmc/eps=1/chain={c}"))
                    .collect::<Vec<_>>()
            ]
        );
        assert_eq!(units.len(), 1 + 3 * 3, "one box, nine single tasks");
        assert_eq!(
            ids(&units[0])[0],
            tasks[0].id(),
            "the box takes its first chain's place"
        );

        let chains = &units[0];
        let mut budgets = HashMap::new();
        for t in chains {
            let key = budget_key(t).unwrap();
            budgets
                .entry(key)
                .or_insert_with(|| comparison_budget(t).unwrap());
        }
        let p = &problems[&(Experiment::EasyBanana10d, 60_000)];
        let group = Lockstep::new(&p.model as &dyn Model, 3);
        let together = run_members(&group, chains, p, &budgets, (7, None));
        // every chain's passes went through the group (three chains' gradients and ratios)
        assert!(group.shared_passes() > 3 * 2 * budgets.values().sum::<usize>());
        for (t, row) in chains.iter().zip(together) {
            let p = &problems[&(t.experiment, t.n)];
            let mut alone = run_task(t, p, &budgets, 7, None).unwrap().unwrap();
            let row = row.unwrap().unwrap();
            assert!(row.iterations > 0);
            alone.wall_seconds = row.wall_seconds;
            assert_eq!(row, alone, "{}", t.id());
        }
    }
}
