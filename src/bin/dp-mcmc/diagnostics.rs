//! `diagnose` and `mmd` subcommands: thin wrappers over `dp_mcmc::diagnostics` and the CSV
//! readers of `dp_mcmc::frame::diagnostics`.
use std::path::{Path, PathBuf};

use clap::Args;
use dp_mcmc::diagnostics::{mmd as mmd_fixed, mmd_thesis, summarize};
use dp_mcmc::frame::diagnostics::{param_draws, read_sample_csv};
use dp_mcmc::frame::read_table;
use dp_mcmc::{Error, Result};
use serde_json::{Map, Value, json};

/// R-hat, bulk/tail ESS and MCSE of the mean per parameter (ArviZ definitions).
#[derive(Args)]
pub struct DiagnoseArgs {
    /// Long-format draws, CSV or parquet (e.g. the `draws.parquet` that `fit` writes):
    /// columns `chain`, `draw`, then one numeric column per parameter (an optional boolean
    /// `warmup` column drops warm-up rows).
    #[arg(long, value_name = "FILE")]
    pub draws: PathBuf,
}

/// MMD² between two samples with a Gaussian RBF kernel.
#[derive(Args)]
pub struct MmdArgs {
    /// First sample: CSV with a header; every numeric column is a coordinate.
    #[arg(long, value_name = "X.csv")]
    pub x: PathBuf,
    /// Second sample (reference), same columns as `--x`.
    #[arg(long, value_name = "Y.csv")]
    pub y: PathBuf,
    /// Kernel bandwidth σ in k(x,y) = exp(-|x-y|²/(2σ²)). Default: the thesis' median
    /// heuristic (median of 500 random X-Y pair distances, seeded by --seed).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub bandwidth: Option<f64>,
    /// Seed of the median heuristic's random pairs (ignored with --bandwidth).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub seed: u64,
}

fn existing(flag: &'static str, path: &Path) -> Result<()> {
    if path.is_file() {
        Ok(())
    } else {
        Err(Error::invalid(
            flag,
            path.display(),
            "no such file; pass an existing file",
        ))
    }
}

/// An error about the contents of the file given with `flag`, naming the flag.
fn in_file(flag: &'static str, path: &Path) -> impl Fn(Error) -> Error {
    move |e| match e {
        e @ Error::InvalidParameter { .. } => e,
        Error::Polars(p) => Error::invalid(
            flag,
            path.display(),
            format!(
                "cannot read it as a table (CSV with a header row, or parquet) ({})",
                p.to_string().replace('\n', " ")
            ),
        ),
        other => Error::invalid(flag, path.display(), other.to_string()),
    }
}

/// `dp-mcmc diagnose --draws FILE` (CSV or parquet): one JSON object keyed by parameter name,
/// each with `rhat`, `ess_bulk`, `ess_tail`, `mcse_mean` (null where undefined).
pub fn diagnose(args: DiagnoseArgs) -> Result<Value> {
    existing("--draws", &args.draws)?;
    let bad = in_file("--draws", &args.draws);
    let df = read_table(&args.draws).map_err(&bad)?;
    let mut out = Map::new();
    for p in param_draws(&df).map_err(&bad)? {
        let s = summarize(&p.as_slices()).map_err(&bad)?;
        out.insert(
            p.name,
            json!({
                "rhat": s.rhat,
                "ess_bulk": s.ess_bulk,
                "ess_tail": s.ess_tail,
                "mcse_mean": s.mcse_mean,
            }),
        );
    }
    Ok(Value::Object(out))
}

/// `dp-mcmc mmd --x X.csv --y Y.csv [--bandwidth S] [--seed N]`.
pub fn mmd(args: MmdArgs) -> Result<Value> {
    existing("--x", &args.x)?;
    existing("--y", &args.y)?;
    let (x, dx) = read_sample_csv(&args.x).map_err(in_file("--x", &args.x))?;
    let (y, dy) = read_sample_csv(&args.y).map_err(in_file("--y", &args.y))?;
    if dx != dy {
        return Err(Error::InvalidData(format!(
            "--x has {dx} numeric columns but --y has {dy}; both samples need the same coordinates"
        )));
    }
    if let Some(s) = args.bandwidth {
        dp_mcmc::error::check::positive("--bandwidth", s)?;
    }
    Ok(match args.bandwidth {
        Some(s) => {
            let r = mmd_fixed(&x, &y, dx, s)?;
            json!({
                "mmd2_biased": r.mmd2_biased,
                "mmd2_unbiased": r.mmd2_unbiased,
                "bandwidth": r.bandwidth,
            })
        }
        None => {
            let r = mmd_thesis(&x, &y, dx, args.seed)?;
            json!({
                "mmd2_biased": r.mmd2_biased,
                "mmd2_unbiased": r.mmd2_unbiased,
                "bandwidth": r.bandwidth,
                "mmd_thesis": r.thesis(),
                "seed": args.seed,
            })
        }
    })
}
