//! `sample`: run a Table 5.1 experiment with the thesis' tuned parameters and print the
//! thesis' per-chain metrics as JSON.

use std::path::PathBuf;

use clap::Args;
use dp_mcmc::accounting::AccountantKind;
use dp_mcmc::experiments::{chain_metrics, tuned};
use dp_mcmc::models::{Experiment, Model};
use dp_mcmc::samplers::Gradient;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::{Budget, Start, StepSize};
use dp_mcmc::samplers::{DpHmc, MinibatchPenalty, Sampler, SamplerKind};
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

/// Arguments of `dp-mcmc sample`.
#[derive(Args)]
pub struct SampleArgs {
    /// Table 5.1 experiment: easy-2d, easy-10d, tempered-2d, tempered-10d, gauss-30d, hard-2d,
    /// hard-gauss-2d, circle.
    #[arg(long)]
    experiment: String,
    /// The sampler: a key of the registry (listed in the help).
    #[arg(long, help = algorithm_help())]
    algorithm: String,
    /// Privacy budget ε (ignored by the non-private rwmh and hmc).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: Option<f64>,
    /// Privacy budget δ (default 0.1/n, as in the thesis).
    #[arg(long, allow_hyphen_values = true)]
    delta: Option<f64>,
    /// Number of chains.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    chains: usize,
    /// Seed of the run (chain i uses stream i).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    seed: u64,
    /// Give (ε, δ) to each chain (the thesis experiments) instead of to the whole release.
    #[arg(long)]
    per_chain_budget: bool,
    /// Write the draws (chain, draw, parameters) to this CSV file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override the noise scale τ (DP penalty, minibatch penalty; τ_l of DP HMC).
    #[arg(long, allow_hyphen_values = true)]
    tau: Option<f64>,
    /// Override the log-likelihood-ratio clip bound.
    #[arg(long, allow_hyphen_values = true)]
    clip_bound: Option<f64>,
    /// Override the proposal standard deviation (same for every coordinate).
    #[arg(long, allow_hyphen_values = true)]
    proposal_sd: Option<f64>,
    /// Override the batch size (minibatch penalty, DP Barker).
    #[arg(long, allow_hyphen_values = true)]
    batch_size: Option<usize>,
    /// Fixed iterations per chain (instead of a privacy budget; required semantics for rwmh/hmc).
    #[arg(long, allow_hyphen_values = true)]
    iterations: Option<usize>,
    /// Accountant for Algorithm 2: pld (default for full data), zcdp, fourier (default for
    /// minibatch), rdp (default for dp-barker: Theorem 7), rdp-exact (dp-barker only); pld
    /// for dp-barker: the certified PLD of its feasible family.
    #[arg(long)]
    accountant: Option<String>,
    /// DP HMC gradient schedule: fresh (default) or reuse (the March thesis).
    #[arg(long)]
    gradient: Option<String>,
    /// Minibatch RDP: reproduce the thesis code's (optimistic) Theorem 8 sum.
    #[arg(long)]
    thesis_compatible: bool,
    /// Threads (results do not depend on it).
    #[arg(long, allow_hyphen_values = true)]
    threads: Option<usize>,
    /// Keep every K-th draw (CmdStan's thin: steps 1, K+1, 2K+1, ... are saved; acceptance and
    /// clip fractions still count every step).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "K",
        allow_hyphen_values = true
    )]
    thin: usize,
    /// Start points: `thesis` (default; the thesis' starts, a reproduction-only shortcut: their
    /// spread is the exact posterior's standard deviation on the data, so they are NOT covered
    /// by the privacy guarantee), or a public point for every chain, comma separated
    /// (e.g. `0,3`), chosen without looking at the data.
    #[arg(long, allow_hyphen_values = true, default_value = "thesis")]
    start: String,
    /// Derive every setting privately (the samplers are listed in the help).
    #[arg(long, help = auto_help())]
    auto: bool,
}

/// `--algorithm`'s help, its keys from the registry.
fn algorithm_help() -> String {
    format!(
        "{} (the samplers the thesis did not tune, such as DP-SGLD, DP-SGNHT and DP-Fast MH, run \
         with public settings: the DP HMC table's gradient clip bound, batches of 1000 rows, a \
         step from the posterior scale; DP-Fast MH the DP penalty table's clip bound and \
         proposal; docs/ACCOUNTING.md)",
        SamplerKind::keys(SamplerKind::all())
    )
}

/// `--auto`'s help, its samplers from the registry.
fn auto_help() -> String {
    format!(
        "Derive every setting privately from (ε, δ), n and public information (DP clip bound \
         and initial point, warm-up adaptation, τ and iterations from the budget), every cost \
         in one ledger (the JSON's `ledger`); algorithms {}. Not combinable with the tuning \
         flags. `--start` then gives the public start of the DP initial point (default: the \
         origin)",
        SamplerKind::keys(SamplerKind::auto_capable())
    )
}

/// Keys of the output computed from the raw data and not covered by the privacy guarantee.
const NONPRIVATE_KEYS: [&str; 5] = [
    "clip_fraction",
    "grad_clip_fraction",
    "mmd",
    "mean_error",
    "cov_error",
];

/// The chains' start points and whether they are public.
fn start_points(
    a: &SampleArgs,
    model: &impl Model,
    thesis: impl FnOnce() -> Vec<Vec<f64>>,
) -> Result<(Start, bool)> {
    if a.start == "thesis" {
        return Ok((Start::PerChain(thesis()), false));
    }
    let point = a
        .start
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<std::result::Result<Vec<f64>, _>>()
        .map_err(|_| {
            Error::invalid(
                "--start",
                &a.start,
                "use `thesis` or a comma-separated point such as `0,3`",
            )
        })?;
    if point.len() != model.dim() {
        return Err(Error::invalid(
            "--start",
            &a.start,
            format!(
                "the model has {} parameters: give that many comma-separated values",
                model.dim()
            ),
        ));
    }
    Ok((Start::Point(point), true))
}

fn parse_method(s: &str) -> Result<AccountantKind> {
    match s {
        "pld" | "adp" => Ok(AccountantKind::Pld),
        "zcdp" => Ok(AccountantKind::Zcdp),
        "fourier" | "fa" => Ok(AccountantKind::Fourier),
        "rdp" => Ok(AccountantKind::Rdp),
        "rdp-exact" => Ok(AccountantKind::RdpExact),
        _ => Err(Error::invalid(
            "--accountant",
            s,
            "use pld, zcdp, fourier, rdp or rdp-exact (dp-barker)",
        )),
    }
}

fn configure(
    a: &SampleArgs,
    exp: Experiment,
    kind: SamplerKind,
    n: usize,
) -> Result<Box<dyn Sampler>> {
    let mut s = tuned(exp, kind)?;
    if let Some(t) = a.tau {
        s.set_tau(t)?;
    }
    if let Some(b) = a.clip_bound {
        s.set_clip_bound(b)?;
    }
    if let Some(sd) = a.proposal_sd {
        s.set_proposal_sd(StepSize::Scalar(sd))?;
    }
    if let Some(b) = a.batch_size {
        s.set_batch_size(b)?;
    }
    s.set_accountant(a.accountant.as_deref().map(parse_method).transpose()?)?;
    if let Some(g) = a.gradient.as_deref() {
        let Some(hmc) = s.as_any_mut().downcast_mut::<DpHmc>() else {
            return Err(Error::invalid(
                "--gradient",
                g,
                "only dp-hmc has a gradient schedule",
            ));
        };
        hmc.gradient = match g {
            "fresh" => Gradient::Fresh,
            "reuse" => Gradient::Reuse,
            _ => return Err(Error::invalid("--gradient", g, "use fresh or reuse")),
        };
    }
    if let Some(m) = s.as_any_mut().downcast_mut::<MinibatchPenalty>() {
        m.thesis_compatible = a.thesis_compatible;
    }
    let r = s.run_settings_mut();
    r.chains = a.chains;
    r.seed = a.seed;
    r.per_chain_budget = a.per_chain_budget;
    r.threads = a.threads;
    r.thin = a.thin;
    r.progress = true;
    if kind.is_private() {
        match (a.iterations, a.epsilon) {
            (Some(k), _) => r.budget = Budget::Iterations(k),
            (None, Some(e)) => {
                r.budget = Budget::Privacy {
                    epsilon: e,
                    delta: a.delta.unwrap_or(0.1 / n as f64),
                };
            }
            (None, None) => {
                return Err(Error::invalid(
                    "--epsilon",
                    "missing",
                    "give --epsilon (or --iterations)",
                ));
            }
        }
    } else if let Some(k) = a.iterations {
        r.budget = Budget::Iterations(k);
    }
    Ok(s)
}

fn nullable(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// Library parameter name → `sample` flag.
fn flag(name: &'static str) -> &'static str {
    match name {
        "chains" => "--chains",
        "iterations" => "--iterations",
        "thin" => "--thin",
        "epsilon" => "--epsilon",
        "delta" => "--delta",
        "tau" | "tau_l" => "--tau",
        "clip_bound" => "--clip-bound",
        "proposal_sd" => "--proposal-sd",
        "batch_size" | "batch" => "--batch-size",
        "threads" => "--threads",
        "accountant" => "--accountant",
        "experiment" => "--experiment",
        "algorithm" => "--algorithm",
        "out" => "--out",
        other => other,
    }
}

/// Run `dp-mcmc sample`.
pub fn sample(a: SampleArgs) -> Result<Value> {
    sample_inner(a).map_err(|e| super::name_the_flag(e, flag))
}

/// `--out` checked before any sampling: a CSV path whose folder exists and that is not a folder.
fn check_out_file(path: &std::path::Path) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid("out", path.display(), why));
    if path.extension().is_some_and(|e| e != "csv") {
        return bad("the draws are written as CSV: use a path ending in .csv");
    }
    if path.is_dir() {
        return bad("is a folder: give a file path ending in .csv");
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !folder.is_dir() {
        return bad("its folder does not exist: create it first or give another path");
    }
    Ok(())
}

fn sample_inner(a: SampleArgs) -> Result<Value> {
    let exp: Experiment = a.experiment.parse()?;
    let kind: SamplerKind = a.algorithm.parse()?;
    if a.threads == Some(0) {
        return Err(Error::invalid("threads", 0, "use at least 1 thread"));
    }
    if let Some(path) = &a.out {
        check_out_file(path)?;
    }
    let model = exp.model()?;
    let (run, start_label, report) = if a.auto {
        let fit = auto_run(&a, kind, &model)?;
        (
            fit.run,
            "auto: DP initial point with public jitter",
            Some(fit.report),
        )
    } else {
        let mut sampler = configure(&a, exp, kind, model.n_rows())?;
        // Counts first: the start points below allocate one vector per chain.
        sampler.run_settings_mut().check_counts()?;
        let (start, public_start) = start_points(&a, &model, || model.start_points(a.chains))?;
        sampler.run_settings_mut().start = start;
        let label = if public_start {
            "public"
        } else {
            "thesis (reproduction only: derived from the data, not covered by the guarantee)"
        };
        (sampler.run(&model)?, label, None)
    };
    let reference: Option<Vec<f64>> = model.default_reference_sample().map(|s| s.concat());
    let true_mean = model.reference_mean();
    let metrics = chain_metrics(&run, reference.as_deref(), Some(&true_mean), a.seed)?;
    if let Some(path) = &a.out {
        dp_mcmc::frame::write_csv(&mut run.draws()?, path).map_err(|e| {
            Error::invalid("out", path.display(), format!("cannot be written ({e})"))
        })?;
    }
    let col = |f: &dyn Fn(&dp_mcmc::experiments::ChainMetrics) -> Value| -> Value {
        metrics.iter().map(f).collect()
    };
    let mut out = json!({
        "experiment": exp.key(),
        "algorithm": kind.key(),
        "iterations": col(&|m| json!(m.iterations)),
        "acceptance": col(&|m| nullable(m.acceptance)),
        "clip_fraction": col(&|m| nullable(m.clip_fraction)),
        "grad_clip_fraction": col(&|m| m.grad_clip_fraction.map_or(Value::Null, nullable)),
        "mmd": col(&|m| m.mmd.map_or(Value::Null, nullable)),
        "mean_error": col(&|m| m.mean_error.map_or(Value::Null, nullable)),
        "cov_error": col(&|m| m.cov_error.map_or(Value::Null, nullable)),
        "epsilon": run.privacy.as_ref().map_or(Value::Null, |p| json!(p.epsilon)),
        "delta": run.privacy.as_ref().map_or(Value::Null, |p| json!(p.delta)),
        "per_chain_budget": run.privacy.as_ref().map_or(Value::Null, |p| json!(p.per_chain)),
        "accountant": run.privacy.as_ref().map_or(Value::Null, |p| json!(p.accountant)),
        "seed": a.seed,
        "thin": a.thin,
        "rng": run.rng.as_str(),
        "wall_seconds": run.wall_seconds,
        "out": a.out.as_ref().map(|p| p.display().to_string()),
        "start": start_label,
        "nonprivate": NONPRIVATE_KEYS,
    });
    if let (Some(report), Some(p)) = (&report, &run.privacy) {
        out["ledger"] = json!(p.ledger.parts);
        out["auto"] = json!(report);
    }
    // the ε asked for beside the ε spent, and why they differ (both always present, null when
    // there is no budget or nothing to explain)
    out["epsilon_budget"] = json!(a.epsilon);
    out["note"] = json!(budget_note(
        a.epsilon,
        run.privacy.as_ref().map(|p| p.epsilon)
    ));
    Ok(out)
}

/// Why a run spent less than the ε it was given (`None` when it spent it, or had no budget):
/// its iteration count was capped (DP-SGLD's and DP-SGNHT's `max_iterations`: each of their
/// steps is so cheap that the budget alone would allow millions), not set by the budget.
fn budget_note(asked: Option<f64>, spent: Option<f64>) -> Option<String> {
    let (asked, spent) = (asked?, spent?);
    (spent < asked * (1.0 - 1e-9)).then(|| {
        format!(
            "spent ε = {spent:.4} of the budget ε = {asked}: the sampler's iteration cap \
             (max_iterations), not the budget, set the count; raise the cap to spend more"
        )
    })
}

/// The flags `--auto` derives itself.
fn tuning_flags(a: &SampleArgs) -> Option<&'static str> {
    [
        (a.tau.is_some(), "--tau"),
        (a.clip_bound.is_some(), "--clip-bound"),
        (a.proposal_sd.is_some(), "--proposal-sd"),
        (a.batch_size.is_some(), "--batch-size"),
        (a.iterations.is_some(), "--iterations"),
        (a.accountant.is_some(), "--accountant"),
        (a.gradient.is_some(), "--gradient"),
        (a.thesis_compatible, "--thesis-compatible"),
    ]
    .into_iter()
    .find_map(|(set, name)| set.then_some(name))
}

/// `sample --auto`: every setting derived privately ([`dp_mcmc::auto`]).
fn auto_run(
    a: &SampleArgs,
    kind: SamplerKind,
    model: &impl Model,
) -> Result<dp_mcmc::auto::AutoRun> {
    use dp_mcmc::auto::{Auto, auto_sampler};
    if let Some(f) = tuning_flags(a) {
        return Err(Error::invalid(
            f,
            "set",
            "--auto derives this setting itself: drop the flag (or drop --auto to tune by hand)",
        ));
    }
    let algorithm = auto_sampler(kind.key())?;
    let epsilon = a
        .epsilon
        .ok_or_else(|| Error::invalid("epsilon", "missing", "--auto needs --epsilon"))?;
    let mut auto = Auto::new(algorithm)
        .epsilon(epsilon)
        .delta(a.delta.unwrap_or(0.1 / model.n_rows() as f64))
        .chains(a.chains)
        .seed(a.seed)
        .per_chain_budget(a.per_chain_budget)
        .thin(a.thin);
    if let Some(t) = a.threads {
        auto = auto.threads(t);
    }
    if a.start != "thesis" {
        let (start, _) = start_points(a, model, Vec::new)?;
        if let Start::Point(p) = start {
            auto = auto.start(p);
        }
    }
    auto.run(model)
}
