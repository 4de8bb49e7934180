//! `dp-mcmc`: the command-line face of the library. Every subcommand prints one JSON object on
//! stdout; bad arguments exit with status 2 and a one-line message on stderr (`error: …`,
//! naming the flag to change); a `fit` whose answer did not converge prints its record
//! (`"converged": false`) and exits with status 3. A panic would be a bug: it is reported the same way (status 2,
//! one line asking for a bug report), never with status 101.

use clap::{Parser, Subcommand};

mod accounting;
mod diagnostics;
mod fit;
mod reproduce;
mod sample;
mod samplers;
mod shard;

/// Differentially private MCMC: accountants, samplers, diagnostics.
#[derive(Parser)]
#[command(name = "dp-mcmc", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Maximum number of iterations of a DP sampler for (ε, δ) (Algorithm 2).
    Iterations(accounting::IterationsArgs),
    /// δ(ε) of a composition of (subsampled) Gaussian mechanisms.
    Delta(accounting::DeltaArgs),
    /// ε(δ) of a composition of (subsampled) Gaussian mechanisms.
    Epsilon(accounting::EpsilonArgs),
    /// R-hat, bulk/tail ESS and MCSE of a long-format draws CSV.
    Diagnose(diagnostics::DiagnoseArgs),
    /// MMD² between two samples (CSV files).
    Mmd(diagnostics::MmdArgs),
    /// Run a Table 5.1 experiment with the thesis' tuned parameters; print per-chain metrics.
    Sample(sample::SampleArgs),
    /// Every sampler `--algorithm` takes: key, label, aliases, private or not, privacy
    /// parameters.
    Samplers(samplers::SamplersArgs),
    /// Fit a model to a data file (CSV or parquet) under one (ε, δ): posterior draws,
    /// summary and privacy ledger in a directory.
    Fit(fit::FitArgs),
    /// Reproduce the thesis' Chapter 6: result tables (CSV) and figures (offline HTML).
    Reproduce(reproduce::ReproduceArgs),
}

/// A clap error as one line: `error: <what>` plus the flags it names (clap's usage and help
/// hints dropped).
fn one_line(e: &clap::Error) -> String {
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return "error: a subcommand is required (iterations, delta, epsilon, diagnose, mmd, \
                sample, samplers, fit or reproduce); see `dp-mcmc --help`"
            .into();
    }
    let text = e.render().to_string();
    let mut parts = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() && !line.starts_with("tip:") {
            parts.push(line);
        }
    }
    let line = parts.join(" ");
    if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}

/// `e` with the name of an invalid parameter replaced by the command-line flag that sets it
/// (`flag` maps library parameter names to flags, e.g. `"tau"` to `"--tau"`).
fn name_the_flag(e: dp_mcmc::Error, flag: fn(&'static str) -> &'static str) -> dp_mcmc::Error {
    match e {
        dp_mcmc::Error::InvalidParameter {
            name,
            value,
            reason,
        } => dp_mcmc::Error::InvalidParameter {
            name: flag(name),
            value,
            reason,
        },
        other => other,
    }
}

/// The last panic's message and location (set by the hook, read by `main`).
static PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn main() {
    // A panic is a bug of this program, never the user's input: the hook records it silently
    // (no backtrace), and `main` reports it in one line with status 2, never 101.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut p) = PANIC.lock() {
            *p = format!("{}{at}", what.replace('\n', " "));
        }
    }));
    match std::panic::catch_unwind(run) {
        Ok(code) => std::process::exit(code),
        Err(_) => {
            let what = PANIC.lock().map(|p| p.clone()).unwrap_or_default();
            eprintln!(
                "error: internal error ({what}); this is a bug, please report it with the command line"
            );
            std::process::exit(2);
        }
    }
}

/// Parse, run, print; the exit status.
fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: clap's text on stdout, status 0
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            eprintln!("{}", one_line(&e));
            return 2;
        }
    };
    let done = |v: dp_mcmc::Result<serde_json::Value>| v.map(|json| (json, None));
    let out = match cli.command {
        Command::Iterations(a) => done(accounting::iterations(a)),
        Command::Delta(a) => done(accounting::delta(a)),
        Command::Epsilon(a) => done(accounting::epsilon(a)),
        Command::Diagnose(a) => done(diagnostics::diagnose(a)),
        Command::Mmd(a) => done(diagnostics::mmd(a)),
        Command::Sample(a) => done(sample::sample(a)),
        Command::Samplers(a) => done(Ok(samplers::samplers(a))),
        Command::Fit(a) => fit::fit(a),
        Command::Reproduce(a) => done(reproduce::reproduce(a)),
    };
    match out {
        Ok((json, None)) => {
            println!("{json}");
            0
        }
        Ok((json, Some(failure))) => {
            // the record (with "converged": false) on stdout, the reason on stderr
            println!("{json}");
            eprintln!("error: {}", failure.replace('\n', " "));
            fit::NOT_CONVERGED
        }
        Err(e) => {
            eprintln!("error: {}", e.to_string().replace('\n', " "));
            2
        }
    }
}
