//! `fit`: a data file in, posterior draws out (README, "Your own data"). Reads a CSV or parquet table,
//! builds the chosen model (`intercept` and the covariates, `log_sigma` where present), runs
//! [`Auto`] with one (ε, δ) for initialisation, clip bounds, warm-up and sampling, and writes
//! `DIR/draws.parquet`, `DIR/summary.csv` and `DIR/ledger.json`. Prints one JSON object.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use dp_mcmc::auto::{Auto, auto_sampler, auto_samplers, default_sampler};
use dp_mcmc::frame::fit_data::{FitKind, FitSpec, parse_bounds, prepare, prepare_glm};
use dp_mcmc::frame::fit_output::{check_out_dir, write_fit_outputs};
use dp_mcmc::frame::read_table;
use dp_mcmc::models::Model;
use dp_mcmc::noise_aware::NoiseAware;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::SamplerKind;
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

/// Arguments of `dp-mcmc fit`.
#[derive(Args)]
pub struct FitArgs {
    /// The data: a .csv file (header row) or a .parquet file. Rows are counted from 0 (header
    /// excluded) in error messages.
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// logistic (0/1 response), poisson (counts), linear (Gaussian errors) or gaussian-mean
    /// (mean and spread of the response; no covariates).
    #[arg(long)]
    model: String,
    /// The response column.
    #[arg(long, value_name = "COL")]
    response: String,
    /// Covariate columns, comma separated (declared, never guessed from the cells). Default:
    /// the columns --bounds names besides the response, in the order given.
    #[arg(long, value_name = "A,B,…")]
    features: Option<String>,
    /// Public bounds of columns, declared without looking at the data (e.g. from a codebook):
    /// `COL=LO:HI,…`. A value outside its bounds is an error (see --clamp). With bounds on
    /// every covariate, logistic regression's clip bound costs no privacy.
    #[arg(long, value_name = "COL=LO:HI,…", allow_hyphen_values = true)]
    bounds: Option<String>,
    /// Covariates that are one-hot indicators of one categorical variable (at most one of them
    /// non-zero in any row, each declared 0:HI), comma separated; repeat the flag for several
    /// groups. Public structure from a codebook: the noise-aware method's worst-case rows are
    /// then fewer and its noise smaller. A row that breaks it is an error.
    #[arg(long, value_name = "A,B,…")]
    one_hot: Vec<String>,
    /// Clamp values outside their declared bounds to the bounds instead of failing (silently:
    /// how many were clamped is not reported, it would leak).
    #[arg(long)]
    clamp: bool,
    /// Map every covariate onto [0, 1] by its declared bounds, (x − LO)/(HI − LO): a public
    /// transformation, so the privacy analysis does not depend on the covariates' units (a
    /// covariate declared 0:60 weighs as much as one declared 0:1); each coefficient is then
    /// the effect of the covariate's whole declared range. Needs --bounds on every covariate.
    #[arg(long)]
    scale: bool,
    /// Prior standard deviation of every parameter in the model's units (normal prior
    /// centred at 0). Default: the noise-aware method's autoscaled prior, N(0, 2.5²) on every
    /// coefficient in the coordinates of the declared bounds (a covariate's coefficient per
    /// half its declared range; a linear model's log σ in units of the response's half-range
    /// N(−1, 1.5²)); the DP-MCMC method's N(0, 10) on every parameter.
    #[arg(long, value_name = "SD", allow_hyphen_values = true)]
    prior_sd: Option<f64>,
    /// Privacy budget ε of the whole analysis (initialisation, warm-up, sampling, all chains).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
    /// Privacy budget δ of the whole analysis.
    #[arg(long, allow_hyphen_values = true)]
    delta: f64,
    /// auto (noise-aware when the covariates, and the response of a poisson, linear or
    /// gaussian-mean model, have declared --bounds; dp-mcmc otherwise), noise-aware (a few
    /// private releases, then the posterior given them with the DP noise modelled:
    /// docs/NOISE-AWARE.md), or dp-mcmc (a DP sampler, see --algorithm).
    #[arg(long, default_value = "auto")]
    method: String,
    /// The DP-MCMC sampler: auto (the DP penalty; DP Barker for a model with neither gradients
    /// nor bounds), dp-penalty, dp-hmc, minibatch-penalty, dp-barker, dp-sgld, dp-sgnht or
    /// dp-fast-mh. Naming one selects
    /// --method dp-mcmc under --method auto.
    #[arg(long, default_value = "auto")]
    algorithm: String,
    /// Number of chains.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    chains: usize,
    /// Seed every random draw (reproducible research: anyone who knows the seed can regenerate
    /// the noise, so a seeded run is NOT a DP release). Default: noise from the operating
    /// system's entropy.
    #[arg(long, allow_hyphen_values = true)]
    seed: Option<u64>,
    /// Stop the chains after this wall time (seconds); the ledger then counts what ran.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    max_time: Option<f64>,
    /// Output directory (created if missing; a folder that already holds files is refused
    /// unless --overwrite).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace the fit outputs in a non-empty --out folder.
    #[arg(long)]
    overwrite: bool,
}

/// The sampler `--algorithm` names; `None` for `auto` (the library's default for the model,
/// [`default_sampler`]).
fn parse_algorithm(name: &str) -> Result<Option<SamplerKind>> {
    if name == "auto" {
        return Ok(None);
    }
    auto_sampler(name).map(Some).map_err(|_| {
        let keys: Vec<&str> = auto_samplers().map(SamplerKind::key).collect();
        Error::invalid(
            "--algorithm",
            name,
            format!("use auto, {}", keys.join(", ")),
        )
    })
}

/// Library parameter name → `fit` flag.
fn flag(name: &'static str) -> &'static str {
    match name {
        "epsilon" => "--epsilon",
        "delta" => "--delta",
        "chains" => "--chains",
        "max_time" => "--max-time",
        "prior_var" => "--prior-sd",
        "bounds" => "--bounds",
        "param_names" => "--features",
        other => other,
    }
}

/// Run `dp-mcmc fit`.
pub fn fit(a: FitArgs) -> Result<Value> {
    fit_inner(a).map_err(|e| super::name_the_flag(e, flag))
}

fn fit_inner(a: FitArgs) -> Result<Value> {
    // Flags first, so a bad flag fails before the data are read.
    let kind = FitKind::parse(&a.model)?;
    dp_mcmc::error::check::positive("--epsilon", a.epsilon)?;
    dp_mcmc::error::check::delta("--delta", a.delta)?;
    dp_mcmc::error::check::at_least_one("--chains", a.chains)?;
    let max_time = a
        .max_time
        .map(|t| {
            dp_mcmc::error::check::positive("--max-time", t)?;
            Duration::try_from_secs_f64(t)
                .map_err(|_| Error::invalid("--max-time", t, "give a number of seconds > 0"))
        })
        .transpose()?;
    let chosen = parse_algorithm(&a.algorithm)?;
    let mut spec = FitSpec::new(kind, &a.response);
    spec.features = a.features.as_deref().map(comma_list);
    spec.bounds = a
        .bounds
        .as_deref()
        .map(parse_bounds)
        .transpose()?
        .unwrap_or_default();
    spec.clamp = a.clamp;
    spec.scale_to_unit = a.scale;
    spec.one_hot = a.one_hot.iter().map(|g| comma_list(g)).collect();
    spec.prior_sd = a.prior_sd;
    spec.validate()?;
    check_out_dir(&a.out, a.overwrite)?;

    let method = match a.method.as_str() {
        "auto" if chosen.is_none() && bounds_declared(&spec) => "noise-aware",
        "auto" | "dp-mcmc" => "dp-mcmc",
        "noise-aware" => "noise-aware",
        other => {
            return Err(Error::invalid(
                "--method",
                other,
                "use auto, noise-aware or dp-mcmc",
            ));
        }
    };
    let table = read_table(&a.data)?;
    if method == "noise-aware" {
        return noise_aware(&a, &table, &spec, kind);
    }
    let model = prepare(&table, &spec)?;
    let alg = chosen.unwrap_or_else(|| default_sampler(&model));
    let mut auto = Auto::new(alg)
        .epsilon(a.epsilon)
        .delta(a.delta)
        .chains(a.chains)
        .progress(true);
    if let Some(t) = max_time {
        auto = auto.max_time(t);
    }
    if let Some(s) = a.seed {
        auto = auto.seed(s);
    }
    let dp_mcmc::auto::AutoRun { run, report } = auto.run(&model)?;
    let (privacy, ledger) = ledger_of(&run)?;
    let mut record = json!({
        "method": "dp-mcmc",
        "model": kind.as_str(),
        "algorithm": alg.key(),
        "parameters": model.param_names(),
        "n_rows": model.n_rows(),
        "chains": a.chains,
        "iterations": run.chains.iter().map(|c| c.len()).collect::<Vec<_>>(),
        "warmup": run.warmup,
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "accountant": privacy.accountant,
        "ledger": privacy.ledger.parts,
        "public_lipschitz": model.public_lipschitz(),
        "settings": report,
        "seed": a.seed,
        "wall_seconds": run.wall_seconds,
        "version": run.version,
    });
    write_fit_outputs(&run, run.warmup, &ledger, &mut record, &a.out)?;
    Ok(record)
}

/// The run's privacy spent and `ledger.json`'s content.
fn ledger_of(run: &dp_mcmc::samplers::Run) -> Result<(&dp_mcmc::samplers::PrivacySpent, Value)> {
    let privacy = run.privacy.as_ref().ok_or_else(|| {
        Error::Model("the run has no privacy ledger; this is a bug, please report it".into())
    })?;
    let ledger = json!({
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "accountant": privacy.accountant,
        "ledger": privacy.ledger,
    });
    Ok((privacy, ledger))
}

/// Whether `--method auto` takes the noise-aware method: every bound it needs is declared
/// (the covariates', and the response's unless the model is logistic).
fn bounds_declared(spec: &FitSpec) -> bool {
    let has = |c: &str| spec.bounds.iter().any(|b| b.column == c);
    let covariates = spec.covariates().iter().flatten().all(|f| has(f));
    match spec.kind {
        FitKind::Logistic => covariates,
        FitKind::Poisson | FitKind::Linear | FitKind::GaussianMean => {
            covariates && has(&spec.response)
        }
    }
}

/// `fit --method noise-aware`.
fn noise_aware(
    a: &FitArgs,
    table: &dp_mcmc::polars::prelude::DataFrame,
    spec: &FitSpec,
    kind: FitKind,
) -> Result<Value> {
    let data = prepare_glm(table, spec)?;
    let mut builder = NoiseAware::new()
        .epsilon(a.epsilon)
        .delta(a.delta)
        .chains(a.chains);
    if let Some(s) = a.seed {
        builder = builder.seed(s);
    }
    let fit = builder.run(&data)?;
    let run = &fit.run;
    let (privacy, mut ledger) = ledger_of(run)?;
    ledger["releases"] = match &fit.report.sufficient {
        Some(sufficient) => json!([sufficient]),
        None => json!(fit.report.rounds),
    };
    let indefinite = fit.report.indefinite_share.unwrap_or(0.0);
    let warning = if fit.report.floored_share > 0.0 {
        Some(format!(
            "{:.0} % of the information proposals were floored: the releases are too noisy at \
             this budget for a positive definite information, and the posterior is an \
             approximation not to be trusted; increase --epsilon, declare narrower --bounds, \
             or rescale the covariates to comparable ranges (--scale)",
            100.0 * fit.report.floored_share
        ))
    } else if indefinite > dp_mcmc::noise_aware::INDEFINITE_WARNING {
        Some(format!(
            "{:.0} % of the information releases' noise distribution is not positive definite: \
             the releases do not determine the information in its weakest directions, so the \
             intervals there are wide and shaped by the prior rather than the data; increase \
             --epsilon, declare narrower --bounds, or rescale the covariates to comparable ranges \
             (--scale)",
            100.0 * indefinite
        ))
    } else {
        None
    };
    let mut record = json!({
        "method": "noise-aware",
        "warning": warning,
        "model": kind.as_str(),
        "parameters": data.param_names(),
        "n_rows": data.n_rows(),
        "chains": a.chains,
        "max_rhat": fit.report.max_rhat,
        "min_ess_bulk": fit.report.min_ess_bulk,
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "accountant": privacy.accountant,
        "ledger": privacy.ledger.parts,
        "prior": fit.report.prior,
        "coordinates": fit.report.coordinates,
        "pooled_rounds": fit.report.pooled,
        "floored_share": fit.report.floored_share,
        "indefinite_share": fit.report.indefinite_share,
        "seed": a.seed,
        "wall_seconds": run.wall_seconds,
        "version": run.version,
    });
    write_fit_outputs(run, 0, &ledger, &mut record, &a.out)?;
    Ok(record)
}

/// The names of a comma separated list (blanks trimmed, empty items dropped).
fn comma_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
