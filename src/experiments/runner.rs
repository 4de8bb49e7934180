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
use super::tuned::Sampler;
use crate::diagnostics::{cov_error, mean_error, mmd_thesis};
use crate::error::{Error, Result};
use crate::models::{Experiment, ExperimentModel};
use crate::progress::Progress;
use crate::samplers::driver::run_chains;
use crate::samplers::{ChainTrace, RunSettings, Start};

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
fn comparison_sampler(task: &Task) -> Result<Sampler> {
    let TaskKind::Comparison { algorithm, epsilon } = task.kind else {
        return Err(Error::invalid("task", task.id(), "not a comparison task"));
    };
    let mut s = Sampler::tuned(task.experiment, algorithm)?;
    let r = s.run_settings_mut();
    r.epsilon = Some(epsilon);
    r.delta = Some(0.1 / task.n as f64);
    r.per_chain_budget = true;
    r.chains = 1;
    Ok(s)
}

/// Iterations of a comparison task's chain (0 when the budget allows none).
fn comparison_budget(task: &Task) -> Result<usize> {
    match comparison_sampler(task)?.budget(task.n) {
        Ok(Some((k, _))) => Ok(k),
        Ok(None) => Err(Error::invalid("task", task.id(), "not a DP sampler")),
        Err(Error::BudgetTooSmall(_)) => Ok(0),
        Err(e) => Err(e),
    }
}

fn budget_key(task: &Task) -> Option<BudgetKey> {
    match task.kind {
        TaskKind::Comparison { algorithm, epsilon } => {
            Some((task.experiment, algorithm.key(), epsilon.to_bits()))
        }
        _ => None,
    }
}

/// Runs the kernel of `s` for exactly `k` iterations (the budget was computed once per
/// configuration; recomputing it per chain would repeat the Fourier accountant's search).
fn run_fixed(
    s: &Sampler,
    model: &ExperimentModel,
    run: &RunSettings,
    k: usize,
) -> Result<Vec<ChainTrace>> {
    match s {
        Sampler::DpPenalty(p) => run_chains(&p.kernel(model)?, model, run, k),
        Sampler::DpHmc(p) => run_chains(&p.kernel(model)?, model, run, k),
        Sampler::MinibatchPenalty(p) => run_chains(&p.kernel(model)?, model, run, k),
        Sampler::DpBarker(p) => run_chains(&p.kernel(model)?, model, run, k),
        Sampler::Rwmh(_) | Sampler::Hmc(_) => Err(Error::invalid(
            "algorithm",
            "non-private",
            "comparison tasks run DP samplers",
        )),
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
        ..RunSettings::default()
    };
    match &task.kind {
        TaskKind::Comparison { .. } => {
            let key = budget_key(task).expect("a comparison task has a budget key");
            let k = *budgets
                .get(&key)
                .expect("budgets are computed for every pending task before the run");
            if k > 0 {
                let start = p.starts.get(task.chain).cloned().ok_or_else(|| {
                    Error::invalid("chain", task.chain, "more chains than start points")
                })?;
                let s = comparison_sampler(task)?;
                let traces = run_fixed(&s, &p.model, &settings(Start::PerChain(vec![start])), k)?;
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
            let mut s = Sampler::tuned(task.experiment, *algorithm)?;
            s.set_clip_bound(*clip_bound)?;
            match &mut s {
                Sampler::Rwmh(r) => r.clip_distance = *distance,
                Sampler::Hmc(h) => h.clip_distance = *distance,
                _ => {
                    return Err(Error::invalid(
                        "algorithm",
                        algorithm.key(),
                        "the clipping study runs rwmh or hmc",
                    ));
                }
            }
            let theta0 = task
                .experiment
                .true_theta()
                .expect("the clipping study runs on the flat bananas");
            let iterations = s.run_settings_mut().iterations;
            *s.run_settings_mut() = RunSettings {
                iterations,
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
            let d = row.dim;
            row.iterations = crate::models::REFERENCE_DRAWS;
            row.mmd = mmd_thesis(&fresh, reference, d, seed ^ 0x5eed)
                .ok()
                .map(|m| m.thesis());
            row.mean_error = Some(mean_error(&fresh, reference, d)?);
            row.cov_error = Some(cov_error(&fresh, reference, d)?);
        }
    }
    row.wall_seconds = t0.elapsed().as_secs_f64();
    Ok(Some(row))
}

impl GridRunner {
    /// Defaults: seed 0, all cores, no time limit, progress bar on a terminal, a progress
    /// line every 30 s.
    pub fn new() -> GridRunner {
        GridRunner::default()
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
        let mut report = GridReport {
            file: out.display().to_string(),
            tasks: tasks.len(),
            skipped: tasks.len() - pending.len(),
            ..GridReport::default()
        };
        if pending.is_empty() {
            return Ok(report);
        }

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

        let pool = {
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
            })?
        };
        let workers = pool.current_num_threads();

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

        let bar = Progress::tasks(self.progress, pending.len() as u64);
        let next = AtomicUsize::new(0);
        let finished = AtomicUsize::new(0);
        let state = Mutex::new((
            Vec::<(String, String)>::new(),
            0usize,
            0.0f64,
            Instant::now(),
        ));
        let total = pending.len();
        let label = out
            .file_stem()
            .map_or_else(|| "grid".to_string(), |s| s.to_string_lossy().into_owned());

        pool.scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|_| {
                    loop {
                        let remaining = match self.max_time {
                            Some(m) => match m.checked_sub(t0.elapsed()) {
                                Some(r) if !r.is_zero() => Some(r),
                                _ => break,
                            },
                            None => None,
                        };
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(task) = pending.get(i) else { break };
                        let p = &problems[&(task.experiment, task.n)];
                        let result = run_task(task, p, &budgets, self.seed, remaining)
                            .and_then(|r| match r {
                                Some(row) => file.append(&row).map(|_| Some(row)),
                                None => Ok(None),
                            });
                        let mut st = state.lock().expect("no worker panics while holding the lock");
                        match result {
                            Ok(Some(row)) => {
                                st.1 += 1;
                                st.2 += row.wall_seconds;
                            }
                            Ok(None) => {}
                            Err(e) => st.0.push((task.id(), e.to_string())),
                        }
                        let f = finished.fetch_add(1, Ordering::SeqCst) + 1;
                        bar.inc(1);
                        if let Some(every) = self.log_every
                            && (st.3.elapsed() >= every || f == total)
                        {
                            st.3 = Instant::now();
                            let el = t0.elapsed().as_secs_f64();
                            let eta = el / f as f64 * (total - f) as f64;
                            let line = format!(
                                "[dp-mcmc reproduce] {label}: {f}/{total} tasks, {el:.0} s elapsed, ~{eta:.0} s left, {} failed",
                                st.0.len()
                            );
                            bar.println(line);
                        }
                    }
                });
            }
        });
        bar.finish();
        let (failed, completed, task_seconds, _) =
            state.into_inner().expect("workers have finished");
        report.completed = completed;
        report.interrupted = total - completed - failed.len();
        report.failed = failed;
        report.task_seconds = task_seconds;
        report.wall_seconds = t0.elapsed().as_secs_f64();
        Ok(report)
    }
}
