//! The run driver: chains in parallel (rayon), one RNG stream per chain, progress, time bound.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use serde::Serialize;

use super::adapt::{Released, StepAdapter};
use super::kernel::Kernel;
use super::privacy::Plan;
use super::run::Run;
use super::run::{ChainTrace, StepTotals};
use super::settings::RunSettings;
use crate::error::{Error, Result};
use crate::models::Model;
use crate::progress::Progress;
use crate::rng::chain_rng;

/// Saved steps reserved up front per chain; traces grow beyond it as the chain runs, so a
/// run cut short by `max_time` only holds the steps it made.
const RESERVE_STEPS: usize = 4096;

/// The wall-time bound is checked at least every this many steps.
const TIME_CHECK_STEPS: usize = 256;

/// Run `settings.chains` chains of `kernel` on `model` for `iterations` steps each.
/// Chain `i` uses `chain_rng(seed, i)`, so the result does not depend on the thread count;
/// with `settings.secure_rng` every chain's generator is keyed from OS entropy instead
/// ([`crate::noise::os_chain_rng`]) and the seed is not used.
///
/// Every `settings.thin`-th step is saved (0-based steps `0, thin, 2·thin, …`); a run whose
/// saved traces would exceed `settings.max_trace_bytes` is refused before it starts
/// ([`RunSettings::check_memory`]).
pub fn run_chains<K: Kernel, M: Model + ?Sized>(
    kernel: &K,
    model: &M,
    settings: &RunSettings,
    iterations: usize,
) -> Result<Vec<ChainTrace>> {
    run_chains_marked(kernel, model, settings, iterations, None)
}

/// [`run_chains`], with the ε spent so far on the progress bar when `plan` is given.
fn run_chains_marked<K: Kernel, M: Model + ?Sized>(
    kernel: &K,
    model: &M,
    settings: &RunSettings,
    iterations: usize,
    plan: Option<&Plan>,
) -> Result<Vec<ChainTrace>> {
    check_tempering(model.tempering())?;
    settings.check_memory(model.dim(), iterations)?;
    kernel.validate(model)?;
    let starts = settings.start_points(model.dim())?;
    let adapt = Adaptation::new(kernel, settings, iterations)?;
    let mut bar = Progress::iterations(
        settings.progress,
        (iterations as u64).saturating_mul(settings.chains as u64),
    );
    if let Some(p) = plan.filter(|_| bar.is_drawn()) {
        bar.set_marks(p.progress_marks());
    }
    let bar = bar;
    let deadline = settings.max_time;
    let work = || {
        let threads = settings.pass_threads(starts.len());
        starts
            .par_iter()
            .enumerate()
            .map(|(i, theta0)| {
                run_one(
                    kernel,
                    model,
                    theta0,
                    i,
                    (!settings.secure_rng).then_some(settings.seed),
                    threads,
                    iterations,
                    settings.thin,
                    deadline,
                    &bar,
                    adapt,
                )
            })
            .collect::<Vec<_>>()
    };
    let results = settings.on_pool(work)?;
    bar.finish();
    results.into_iter().collect()
}

/// Every kernel scales the clipped sum and its noise by the model's tempering `T`; the
/// privacy analysis (sensitivity `T·2B ≤ 2B`) needs `T ∈ (0, 1]` (a negative `T`, for one,
/// would shrink the minibatch kernel's variance bound).
fn check_tempering(t: f64) -> Result<()> {
    if t > 0.0 && t <= 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "tempering",
            t,
            "must be in (0, 1]: the samplers' privacy analysis assumes a temperature T ≤ 1 \
             (set the model's tempering to a value in (0, 1], or 1 for the untempered posterior)",
        ))
    }
}

/// Warm-up of every chain: how many iterations adapt the step scale, toward which acceptance.
#[derive(Clone, Copy, Debug)]
struct Adaptation {
    iterations: usize,
    target: f64,
    /// Whether the kernel's step scale is adapted (else warm-up is burn-in only).
    adapts: bool,
}

impl Adaptation {
    fn new<K: Kernel>(kernel: &K, settings: &RunSettings, iterations: usize) -> Result<Self> {
        let target = match settings.adapt_target {
            Some(t) => StepAdapter::try_new(t)?.target(),
            None => kernel.adapt_target(),
        };
        Ok(Adaptation {
            iterations: settings.warmup.min(iterations),
            target,
            adapts: kernel.adapts_step(),
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn run_one<K: Kernel, M: Model + ?Sized>(
    kernel: &K,
    model: &M,
    theta0: &[f64],
    chain: usize,
    seed: Option<u64>,
    threads: usize,
    iterations: usize,
    thin: usize,
    deadline: Option<Duration>,
    bar: &Progress,
    adapt: Adaptation,
) -> Result<ChainTrace> {
    let t0 = Instant::now();
    let wrap = |e: Error| Error::Chain {
        chain,
        source: Box::new(e),
    };
    let mut rng = match seed {
        Some(seed) => chain_rng(seed, chain as u64),
        None => crate::noise::os_chain_rng().map_err(wrap)?,
    };
    let mut state = kernel.init(model, theta0, &mut rng).map_err(wrap)?;
    kernel.set_pass_threads(&mut state, threads);
    let dim = model.dim();
    let thin = thin.max(1);
    let reserve = iterations.div_ceil(thin).min(RESERVE_STEPS);
    let mut trace = ChainTrace {
        start: theta0.to_vec(),
        draws: Vec::with_capacity(reserve * dim),
        stats: Vec::with_capacity(reserve),
        thin,
        warmup: adapt.iterations,
        step_scale: 1.0,
        ..ChainTrace::default()
    };
    let mut totals = StepTotals::default();
    let tick = (iterations / 100).max(1);
    let time_check = tick.min(TIME_CHECK_STEPS);
    let mut adapter = StepAdapter::new(adapt.target);
    for it in 0..iterations {
        let info = kernel.step(model, &mut state, &mut rng);
        totals.add(&info);
        if it < adapt.iterations && adapt.adapts {
            // Adaptation reads the released decision and state, nothing else.
            let scale = adapter.update(Released {
                accepted: info.accepted,
                position: kernel.position(&state),
            });
            trace.step_scale = if it + 1 == adapt.iterations {
                adapter.final_scale()
            } else {
                scale
            };
            kernel.set_step_scale(&mut state, trace.step_scale);
        }
        if it % thin == 0 {
            trace.stats.push(info);
            trace.draws.extend_from_slice(kernel.position(&state));
        }
        let done = it + 1;
        if done % tick == 0 {
            bar.inc(tick as u64);
        }
        if done % time_check == 0 && done < iterations && deadline.is_some_and(|d| t0.elapsed() > d)
        {
            trace.stopped_early = true;
            break;
        }
    }
    trace.totals = Some(totals);
    trace.wall_seconds = t0.elapsed().as_secs_f64();
    Ok(trace)
}
/// Assemble a [`Run`] from finished chains.
pub(crate) fn finish<K: Kernel, M: Model + ?Sized, S: Serialize>(
    kernel: &K,
    model: &M,
    run: &RunSettings,
    settings: &S,
    plan: Option<Plan>,
) -> Result<Run> {
    let t0 = Instant::now();
    let iterations = match &plan {
        Some(p) => p.iterations,
        None => fixed_iterations(run, &kernel.name().to_uppercase())?,
    };
    let chains = run_chains_marked(kernel, model, run, iterations, plan.as_ref())?;
    let privacy = plan.map(|p| p.spent(&chains));
    Ok(Run {
        algorithm: kernel.name().to_string(),
        param_names: model.param_names(),
        n_rows: model.n_rows(),
        iterations,
        warmup: run.warmup.min(iterations),
        chains,
        privacy,
        seed: run.seed,
        rng: if run.secure_rng {
            crate::noise::RngMode::Secure
        } else {
            crate::noise::RngMode::Seeded
        },
        settings: serde_json::to_value(settings).unwrap_or(serde_json::Value::Null),
        wall_seconds: t0.elapsed().as_secs_f64(),
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// Iterations for a non-private sampler: must be given explicitly.
fn fixed_iterations(run: &RunSettings, algorithm: &str) -> Result<usize> {
    run.budget.iterations().ok_or_else(|| {
        Error::invalid(
            "iterations",
            "unset",
            format!("{algorithm} is not private: set `.iterations(k)`"),
        )
    })
}
