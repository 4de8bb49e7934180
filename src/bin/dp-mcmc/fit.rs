//! `fit`: a data file in, posterior draws out (README, "Your own data"). Reads a CSV or
//! parquet table and asks the library ([`dp_mcmc::fit`]) for the method and its report; writes
//! `DIR/draws.parquet`, `DIR/summary.csv`, `DIR/ledger.json` and `DIR/fit.json`, prints one
//! JSON object on stdout and a short summary on stderr. An answer that is not converged is
//! not a result: only `ledger.json` and `fit.json` (with `"converged": false`) are written, and
//! the status is 3 ([`NOT_CONVERGED`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use dp_mcmc::auto::auto_sampler;
use dp_mcmc::fit::{FitDetails, InferenceMethod, TableFit, TableFitResult};
use dp_mcmc::frame::fit_data::{FitKind, FitSpec, parse_bounds};
use dp_mcmc::frame::fit_output::{check_out_dir, write_fit_outputs};
use dp_mcmc::frame::read_table;
use dp_mcmc::samplers::{RunSetters, SamplerKind};
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

/// Exit status of a fit whose answer did not converge (its JSON says `"converged": false`).
pub const NOT_CONVERGED: i32 = 3;

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
    /// Covariates that are binary indicators (every value 0 or its declared upper bound, each
    /// declared 0:HI), comma separated; one-hot members are binary already. Public structure
    /// from a codebook: a linear model's XᵀX release then carries less noise. A value between
    /// is an error.
    #[arg(long, value_name = "A,B,…")]
    binary: Option<String>,
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
    /// centred at 0). Default: the noise-aware method's autoscaled prior, scale 2.5 on every
    /// coefficient in the coordinates of the declared bounds (a covariate's coefficient per
    /// half its declared range): Cauchy for logistic and Poisson, N(0, 2.5²) for linear (its
    /// log σ in units of the response's half-range N(−1, 1.5²)); the DP-MCMC method's
    /// N(0, 10) on every parameter.
    #[arg(long, value_name = "SD", allow_hyphen_values = true)]
    prior_sd: Option<f64>,
    /// The noise-aware method's autoscaled prior as N(0, 2.5²) on every coefficient (for
    /// logistic and Poisson too, instead of their default Cauchy).
    #[arg(long)]
    prior_normal: bool,
    /// Privacy budget ε of the whole analysis (initialisation, warm-up, sampling, all chains).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
    /// Privacy budget δ of the whole analysis: well below 1/n (e.g. 1e-6); a δ of at least 1/n
    /// is warned about (it allows publishing a row whole).
    #[arg(long, allow_hyphen_values = true)]
    delta: f64,
    /// auto (the noise-aware method; without the --bounds it needs, an error naming them:
    /// never DP-MCMC unless a sampler is named with --algorithm), noise-aware (a few private
    /// releases, then the posterior given them with the DP noise modelled:
    /// docs/NOISE-AWARE.md), or dp-mcmc (a DP sampler, see --algorithm).
    #[arg(long, default_value = "auto")]
    method: String,
    /// The DP-MCMC sampler: auto (the DP penalty; DP Barker for a model with neither gradients
    /// nor bounds) or one of the registry's (listed in the help). Naming one selects --method
    /// dp-mcmc under --method auto.
    #[arg(long, default_value = "auto", help = algorithm_help())]
    algorithm: String,
    /// Number of chains.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    chains: usize,
    /// Seed every random draw (reproducible research: anyone who knows the seed can regenerate
    /// the noise, so a seeded run is NOT a DP release). Default: noise from the operating
    /// system's entropy.
    #[arg(long, allow_hyphen_values = true)]
    seed: Option<u64>,
    /// Wall-time limit in seconds: of the noise-aware posterior's sampling (post-processing,
    /// continued until converged; default 10), or of a DP-MCMC run's chains (no default; the
    /// ledger then counts what ran). A fit that has not converged by then exits 3.
    #[arg(
        long,
        value_name = "SECONDS",
        alias = "max-time",
        allow_hyphen_values = true
    )]
    max_seconds: Option<f64>,
    /// Threads (default: all cores). Results do not depend on it.
    #[arg(long, allow_hyphen_values = true)]
    threads: Option<usize>,
    /// Output directory (created if missing; a folder that already holds files is refused
    /// unless --overwrite).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace the fit outputs in a non-empty --out folder.
    #[arg(long)]
    overwrite: bool,
}

/// `--algorithm`'s help, its keys from the registry.
fn algorithm_help() -> String {
    format!(
        "The DP-MCMC sampler: auto (the DP penalty; DP Barker for a model with neither \
         gradients nor bounds), {}. Naming one selects --method dp-mcmc under --method auto",
        SamplerKind::keys(SamplerKind::auto_capable())
    )
}

/// The sampler `--algorithm` names; `None` for `auto` (the library's default for the model).
fn parse_algorithm(name: &str) -> Result<Option<SamplerKind>> {
    if name == "auto" {
        return Ok(None);
    }
    auto_sampler(name).map(Some).map_err(|_| {
        Error::invalid(
            "--algorithm",
            name,
            format!(
                "use auto, {}",
                SamplerKind::keys(SamplerKind::auto_capable())
            ),
        )
    })
}

/// Library parameter name → `fit` flag.
fn flag(name: &'static str) -> &'static str {
    match name {
        "epsilon" => "--epsilon",
        "delta" => "--delta",
        "chains" => "--chains",
        "max_time" => "--max-seconds",
        "threads" => "--threads",
        "prior_var" | "prior sd" => "--prior-sd",
        "bounds" => "--bounds",
        "param_names" => "--features",
        other => other,
    }
}

/// Run `dp-mcmc fit`: its JSON, and the message of an answer that did not converge (exit 3).
pub fn fit(a: FitArgs) -> Result<(Value, Option<String>)> {
    fit_inner(a).map_err(|e| super::name_the_flag(e, flag))
}

fn fit_inner(a: FitArgs) -> Result<(Value, Option<String>)> {
    // Flags first, so a bad flag fails before the data are read.
    let kind = FitKind::parse(&a.model)?;
    dp_mcmc::error::check::positive("--epsilon", a.epsilon)?;
    dp_mcmc::error::check::delta("--delta", a.delta)?;
    dp_mcmc::error::check::at_least_one("--chains", a.chains)?;
    if let Some(t) = a.threads {
        dp_mcmc::error::check::at_least_one("--threads", t)?;
    }
    let max_time = a
        .max_seconds
        .map(|t| {
            dp_mcmc::error::check::positive("--max-seconds", t)?;
            Duration::try_from_secs_f64(t)
                .map_err(|_| Error::invalid("--max-seconds", t, "give a number of seconds > 0"))
        })
        .transpose()?;
    let method: InferenceMethod = a.method.parse()?;
    let sampler = parse_algorithm(&a.algorithm)?;
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
    spec.binary = a.binary.as_deref().map(comma_list).unwrap_or_default();
    spec.prior_sd = a.prior_sd;
    spec.prior_normal = a.prior_normal;
    spec.validate()?;
    check_out_dir(&a.out, a.overwrite)?;

    let mut fit = TableFit::new(spec)
        .method(method)
        .epsilon(a.epsilon)
        .delta(a.delta)
        .chains(a.chains)
        .progress(true);
    if let Some(k) = sampler {
        fit = fit.sampler(k);
    }
    if let Some(s) = a.seed {
        fit = fit.seed(s);
    }
    fit.run.max_time = max_time;
    fit.run.threads = a.threads;
    let table = read_table(&a.data)?;
    let declared = declared(&fit.spec, &a.data);
    let result = fit.run(&table)?;
    let mut record = record(&result, kind, a.chains, a.seed)?;
    record["declared"] = declared;
    let ledger = ledger_json(&result)?;
    let files = write_fit_outputs(
        &result.run,
        result.run.warmup,
        &ledger,
        &mut record,
        &a.out,
        result.converged,
    )?;
    let failure = (!result.converged).then(|| {
        format!(
            "the answer did not converge and is not given (fit.json holds the diagnostics; \
             the budget was spent, ledger.json records it): {}",
            result.warnings.join("; ")
        )
    });
    if let Some(summary) = &files.summary_frame {
        eprint!("{}", human_summary(&result, kind, summary));
    }
    Ok((record, failure))
}

/// What the user declared (public inputs, no data): the table's path, the response, the
/// covariates in order, their bounds as given, the one-hot groups and indicators, `--clamp`,
/// `--scale` and `--prior-sd`.
fn declared(spec: &FitSpec, data: &std::path::Path) -> Value {
    json!({
        "data": data.display().to_string(),
        "response": spec.response,
        "features": spec.covariates().unwrap_or_default(),
        "bounds": spec
            .bounds
            .iter()
            .map(|b| json!({"column": b.column, "lo": b.lo, "hi": b.hi}))
            .collect::<Vec<_>>(),
        "one_hot": spec.one_hot,
        "binary": spec.binary,
        "clamp": spec.clamp,
        "scale": spec.scale_to_unit,
        "prior_sd": spec.prior_sd,
        "prior_normal": spec.prior_normal,
    })
}

/// `fit`'s JSON: the same keys for both methods, then each method's own.
fn record(r: &TableFitResult, kind: FitKind, chains: usize, seed: Option<u64>) -> Result<Value> {
    let privacy = privacy(r)?;
    let mut v = json!({
        "method": r.method.as_str(),
        "model": kind.as_str(),
        "parameters": r.run.param_names,
        "n_rows": r.run.n_rows,
        "chains": chains,
        "converged": r.converged,
        "max_rhat": r.max_rhat,
        "min_ess_bulk": r.min_ess_bulk,
        "warning": (!r.warnings.is_empty()).then(|| r.warnings.join("; ")),
        "warnings": r.warnings,
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "accountant": privacy.accountant,
        "ledger": privacy.ledger.parts,
        "prior": r.prior,
        "seed": seed,
        "wall_seconds": r.run.wall_seconds,
        "version": r.run.version,
    });
    match &r.details {
        FitDetails::NoiseAware(report) => {
            v["pooled_rounds"] = json!(report.pooled);
            v["floored_share"] = json!(report.floored_share);
            v["indefinite_share"] = json!(report.indefinite_share);
            v["last_step_whitened"] = json!(report.last_step_whitened);
            v["last_step_noise"] = json!(report.last_step_noise);
            v["variance_shares"] = json!(report.variance_shares);
            v["coordinates"] = json!(report.coordinates);
            v["sampling_seconds"] = json!(report.sampling_seconds);
        }
        FitDetails::DpMcmc(report) => {
            v["algorithm"] = json!(report.algorithm.key());
            v["iterations"] = json!(r.run.chains.iter().map(|c| c.len()).collect::<Vec<_>>());
            v["warmup"] = json!(r.run.warmup);
            v["settings"] = json!(report);
        }
    }
    Ok(v)
}

/// The run's privacy spent.
fn privacy(r: &TableFitResult) -> Result<&dp_mcmc::samplers::PrivacySpent> {
    r.run.privacy.as_ref().ok_or_else(|| {
        Error::Model("the run has no privacy ledger; this is a bug, please report it".into())
    })
}

/// `ledger.json`'s content: the spent budget, its whole ledger and every release.
fn ledger_json(r: &TableFitResult) -> Result<Value> {
    let privacy = privacy(r)?;
    let mut ledger = json!({
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,
        "accountant": privacy.accountant,
        "ledger": privacy.ledger,
    });
    if let FitDetails::NoiseAware(report) = &r.details {
        ledger["releases"] = match &report.sufficient {
            Some(sufficient) => json!([sufficient]),
            None => json!(report.rounds),
        };
    }
    Ok(ledger)
}

/// A few lines for a person: the method, whether it converged, and per parameter its mean, sd,
/// 90 % interval and R-hat (stderr; the JSON on stdout is the record).
fn human_summary(
    r: &TableFitResult,
    kind: FitKind,
    summary: &dp_mcmc::polars::prelude::DataFrame,
) -> String {
    let eps = r.run.privacy.as_ref().map_or(f64::NAN, |p| p.epsilon);
    let mut out = format!(
        "{} {} fit on {} rows, ε = {eps:.3}: {} (max R-hat {:.4}, min bulk ESS {:.0})\n",
        r.method.as_str(),
        kind.as_str(),
        r.run.n_rows,
        if r.converged {
            "converged"
        } else {
            "NOT CONVERGED"
        },
        r.max_rhat,
        r.min_ess_bulk
    );
    let col = |name: &str| -> Vec<Option<f64>> {
        summary
            .column(name)
            .and_then(|c| Ok(c.f64()?.iter().collect()))
            .unwrap_or_default()
    };
    let (mean, sd, q5, q95, rhat) = (col("mean"), col("sd"), col("q5"), col("q95"), col("r_hat"));
    let show = |v: Option<&Option<f64>>| match v.copied().flatten() {
        Some(x) => format!("{x:>12.5}"),
        None => format!("{:>12}", "-"),
    };
    out.push_str(&format!(
        "{:<16}{:>12}{:>12}{:>12}{:>12}{:>12}\n",
        "parameter", "mean", "sd", "5 %", "95 %", "R-hat"
    ));
    for (i, name) in r.run.param_names.iter().enumerate() {
        out.push_str(&format!(
            "{name:<16}{}{}{}{}{}\n",
            show(mean.get(i)),
            show(sd.get(i)),
            show(q5.get(i)),
            show(q95.get(i)),
            show(rhat.get(i))
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// The names of a comma separated list (blanks trimmed, empty items dropped).
fn comma_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
