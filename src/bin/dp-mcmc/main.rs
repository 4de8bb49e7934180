//! `dp-mcmc`: the command-line face of the library. Every subcommand prints one JSON object on
//! stdout; bad arguments exit with status 2 and a one-line message on stderr.

use clap::{Parser, Subcommand};

mod accounting;
mod diagnostics;
mod reproduce;
mod sample;

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
    /// Reproduce the thesis' Chapter 6: result tables (CSV) and figures (offline HTML).
    Reproduce(reproduce::ReproduceArgs),
}

fn main() {
    let cli = Cli::parse();
    let out = match cli.command {
        Command::Iterations(a) => accounting::iterations(a),
        Command::Delta(a) => accounting::delta(a),
        Command::Epsilon(a) => accounting::epsilon(a),
        Command::Diagnose(a) => diagnostics::diagnose(a),
        Command::Mmd(a) => diagnostics::mmd(a),
        Command::Sample(a) => sample::sample(a),
        Command::Reproduce(a) => reproduce::reproduce(a),
    };
    match out {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
