//! The outputs of `dp-mcmc fit`: post-warm-up draws as ArviZ reads them, a per-parameter
//! summary, the privacy ledger and the whole record of the fit. Every file carries its
//! provenance: whether the noise came from a seeded generator (reproducible research, **not**
//! a DP release) and what the guarantee does not cover ([`not_covered`]).
//!
//! - `draws.parquet`: columns `chain` (i64, from 0), `draw` (i64, the index of the draw within
//!   its chain after warm-up, from 0) and one f64 column per parameter, named by
//!   [`Model::param_names`](crate::models::Model::param_names): ArviZ's `chain` and `draw`
//!   dimensions (checked with ArviZ 0.23: `az.convert_to_inference_data(pd.read_parquet(p)
//!   .set_index(["chain", "draw"]).to_xarray())`). The file's key-value metadata holds
//!   `dp_mcmc.rng` and `dp_mcmc.not_covered`.
//! - `summary.csv`: one row per parameter with ArviZ's column names: `parameter, mean, sd, q5,
//!   q50, q95, mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat` (rank-normalised split R-hat,
//!   bulk and tail ESS and MCSE of [`crate::diagnostics`]), then `rng`.
//! - `ledger.json`: what the run spent, as the caller serialised it, with `rng`, `seed` and
//!   `not_covered`.
//! - `fit.json`: the caller's whole record of the fit (what `dp-mcmc fit` prints).

#[cfg(feature = "cli")]
use std::path::Path;
use std::path::PathBuf;

use polars::prelude::*;
use rayon::prelude::*;

use super::diagnostics::param_draws;
use crate::diagnostics::{mcse_sd, quantile_sorted, summarize};
use crate::error::{Error, Result};
use crate::noise::RngMode;
use crate::samplers::Run;

/// The post-warm-up draws of `run` (the first `warmup` steps of every chain dropped): columns
/// `chain`, `draw` (both i64, from 0) and one f64 column per parameter. Chains stopped early
/// (`max_time`) are cut to the shortest chain's length, so the table is rectangular as ArviZ
/// needs it (`chain × draw`); an error if some chain has no draw after its warm-up.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// use dp_mcmc::frame::fit_output::fit_draws;
/// use dp_mcmc::models::testing::IsotropicGaussian;
/// use dp_mcmc::samplers::Rwmh;
/// # fn main() -> dp_mcmc::Result<()> {
/// let model = IsotropicGaussian::generate(50, 2, 1);
/// let run = Rwmh::builder().iterations(30).chains(2).start(vec![0.0, 0.0]).run(&model)?;
/// let draws = fit_draws(&run, 10)?;
/// assert_eq!(draws.height(), 2 * 20);
/// assert_eq!(draws.column("draw")?.i64()?.get(0), Some(0));
/// assert!(fit_draws(&run, 30).is_err()); // nothing left after warm-up
/// # Ok(()) }
/// ```
pub fn fit_draws(run: &Run, warmup: usize) -> Result<DataFrame> {
    let kept = run.draws_after(warmup);
    let len = kept.iter().map(Vec::len).min().unwrap_or(0);
    if len == 0 {
        return Err(Error::InvalidData(format!(
            "a chain has no draw after its {warmup} warm-up iterations; run longer (raise \
             --max-time) or use fewer chains"
        )));
    }
    let total = len * kept.len();
    let mut chain = Vec::with_capacity(total);
    let mut draw = Vec::with_capacity(total);
    let mut params: Vec<Vec<f64>> = vec![Vec::with_capacity(total); run.dim()];
    for (i, rows) in kept.iter().enumerate() {
        for (k, row) in rows[..len].iter().enumerate() {
            chain.push(i as i64);
            draw.push(k as i64);
            for (p, v) in params.iter_mut().zip(row.iter()) {
                p.push(*v);
            }
        }
    }
    let mut cols = vec![
        Column::new("chain".into(), chain),
        Column::new("draw".into(), draw),
    ];
    for (name, values) in run.param_names.iter().zip(params) {
        cols.push(Column::new(name.as_str().into(), values));
    }
    Ok(DataFrame::new_infer_height(cols)?)
}

/// One row per parameter of a draws frame (layout of [`fit_draws`]), ArviZ's names:
/// `parameter`, `mean`, `sd`, `q5`, `q50`, `q95` (type-7 quantiles of all draws),
/// `mcse_mean`, `mcse_sd`, `ess_bulk`, `ess_tail`, `r_hat` (null where undefined, e.g. a
/// single draw per chain).
///
/// ```
/// use dp_mcmc::frame::fit_output::fit_summary;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("chain" => [0i64, 0, 0, 1, 1, 1], "draw" => [0i64, 1, 2, 0, 1, 2],
///              "mu" => [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let s = fit_summary(&df)?;
/// assert_eq!(s.column("q50")?.f64()?.get(0), Some(3.5));
/// assert_eq!(s.get_column_names()[6..].iter().map(|c| c.as_str()).collect::<Vec<_>>(),
///            ["mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"]);
/// assert!(fit_summary(&df.drop("chain")?).is_err());
/// # Ok(()) }
/// ```
pub fn fit_summary(draws: &DataFrame) -> Result<DataFrame> {
    let params = param_draws(draws)?;
    type Stats = (crate::diagnostics::ParamSummary, f64, Option<f64>);
    // one parameter per task: the diagnostics of long runs dominate `fit`'s output time
    let stats: Vec<Stats> = params
        .par_iter()
        .map(|p| {
            let chains = p.as_slices();
            let s = summarize(&chains)?;
            let mut all: Vec<f64> = p.chains.concat();
            all.sort_by(f64::total_cmp);
            Ok((s, quantile_sorted(&all, 0.5), mcse_sd(&chains)?))
        })
        .collect::<Result<_>>()?;
    let col = |name: &str, f: &dyn Fn(&Stats) -> Option<f64>| {
        Column::new(name.into(), stats.iter().map(f).collect::<Vec<_>>())
    };
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    Ok(DataFrame::new_infer_height(vec![
        Column::new("parameter".into(), names),
        col("mean", &|s| Some(s.0.mean)),
        col("sd", &|s| s.0.sd),
        col("q5", &|s| Some(s.0.q05)),
        col("q50", &|s| Some(s.1)),
        col("q95", &|s| Some(s.0.q95)),
        col("mcse_mean", &|s| s.0.mcse_mean),
        col("mcse_sd", &|s| s.2),
        col("ess_bulk", &|s| s.0.ess_bulk),
        col("ess_tail", &|s| s.0.ess_tail),
        col("r_hat", &|s| s.0.rhat),
    ])?)
}

/// What the (ε, δ) guarantee of a `fit` does not cover (docs/SECURITY.md), keyed by the
/// output it concerns; written into every file `fit` writes. A seeded run (`rng` seeded) is
/// not a DP release at all: anyone who knows the seed regenerates every noise draw.
///
/// ```
/// use dp_mcmc::frame::fit_output::not_covered;
/// use dp_mcmc::noise::RngMode;
/// assert!(not_covered(RngMode::Seeded)["rng"].as_str().unwrap().contains("NOT a DP release"));
/// assert!(not_covered(RngMode::Secure).get("rng").is_none());
/// ```
pub fn not_covered(rng: RngMode) -> serde_json::Value {
    let mut v = serde_json::json!({
        "n_rows": "the exact number of rows: public under the substitution relation the \
                   guarantee uses (it protects every row's values, not whether the table has one \
                   more row)",
        "wall_seconds": "run time: depends on the data, not covered",
        "exit_status": "whether the fit succeeded, and an error's text: not covered (a row that \
                        breaks a declaration is named)",
    });
    if rng == RngMode::Seeded {
        v["rng"] = serde_json::json!(
            "seeded: anyone who knows the seed can regenerate every noise draw; this run is \
             reproducible research, NOT a DP release (leave --seed out for one)"
        );
    }
    v
}

/// Paths of the files [`write_fit_outputs`] writes (`draws` and `summary` only for a
/// converged answer).
#[derive(Clone, Debug, serde::Serialize)]
pub struct FitFiles {
    /// `DIR/draws.parquet`.
    pub draws: Option<PathBuf>,
    /// `DIR/summary.csv`.
    pub summary: Option<PathBuf>,
    /// `DIR/ledger.json`.
    pub ledger: PathBuf,
    /// `DIR/fit.json`.
    pub record: PathBuf,
    /// Post-warm-up draws per chain in `draws.parquet` (not serialised).
    #[serde(skip)]
    pub draws_per_chain: usize,
    /// The summary as written to `summary.csv` (not serialised).
    #[serde(skip)]
    pub summary_frame: Option<DataFrame>,
}

/// Checks an output folder before a fit runs: a file is an error, and so is a folder that
/// holds anything unless `overwrite` (a rerun never replaces earlier results silently).
///
/// ```
/// use dp_mcmc::frame::fit_output::check_out_dir;
/// let dir = std::env::temp_dir().join(format!("dp-mcmc-doc-out-{}", std::process::id()));
/// check_out_dir(&dir, false)?; // missing: created later
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("fit.json"), "{}")?;
/// let err = check_out_dir(&dir, false).unwrap_err().to_string();
/// assert!(err.contains("--overwrite"), "{err}");
/// check_out_dir(&dir, true)?;
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
///
/// # Errors
/// `dir` is a file, or a non-empty folder without `overwrite`.
pub fn check_out_dir(dir: &std::path::Path, overwrite: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::invalid(
            "--out",
            dir.display(),
            "is a file: give a directory (it is created if missing)",
        ));
    }
    let occupied = dir.is_dir() && std::fs::read_dir(dir)?.next().is_some();
    if occupied && !overwrite {
        return Err(Error::invalid(
            "--out",
            dir.display(),
            "already holds files: give a new or empty folder, or pass --overwrite to replace \
             its fit outputs",
        ));
    }
    Ok(())
}

/// Writes `DIR/draws.parquet` ([`fit_draws`]) and `DIR/summary.csv` ([`fit_summary`]) when
/// `with_draws` (a converged answer), and always `DIR/ledger.json` (`ledger` with the run's
/// `rng`, `seed` and [`not_covered`]: the budget is spent either way) and `DIR/fit.json`
/// (`record`, with the files' paths under `files`), creating `dir` if missing. Only with the
/// `cli` feature (parquet).
#[cfg(feature = "cli")]
pub fn write_fit_outputs(
    run: &Run,
    warmup: usize,
    ledger: &serde_json::Value,
    record: &mut serde_json::Value,
    dir: impl AsRef<Path>,
    with_draws: bool,
) -> Result<FitFiles> {
    let dir = dir.as_ref();
    if dir.exists() && !dir.is_dir() {
        return Err(Error::invalid(
            "--out",
            dir.display(),
            "is a file: give a directory (it is created if missing)",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::invalid(
            "--out",
            dir.display(),
            format!("cannot be created ({e}): give a folder you can write to"),
        )
    })?;
    let rng = run.rng.as_str();
    let uncovered = not_covered(run.rng);
    let mut files = FitFiles {
        draws: None,
        summary: None,
        ledger: dir.join("ledger.json"),
        record: dir.join("fit.json"),
        draws_per_chain: 0,
        summary_frame: None,
    };
    if with_draws {
        let draws = fit_draws(run, warmup)?;
        let (draws_path, summary_path) = (dir.join("draws.parquet"), dir.join("summary.csv"));
        let metadata = vec![
            ("dp_mcmc.rng".to_string(), rng.to_string()),
            ("dp_mcmc.not_covered".to_string(), uncovered.to_string()),
        ];
        // the summary's diagnostics and the parquet encoding side by side
        let mut copy = draws.clone();
        let (summary, written) = rayon::join(
            || fit_summary(&draws),
            || super::io::write_parquet_with_metadata(&mut copy, &draws_path, metadata),
        );
        let mut summary = summary?;
        written?;
        let height = summary.height();
        summary.with_column(Column::new("rng".into(), vec![rng; height]))?;
        super::write_csv(&mut summary, &summary_path)?;
        files.draws_per_chain = draws.height() / run.chains.len().max(1);
        files.draws = Some(draws_path);
        files.summary = Some(summary_path);
        files.summary_frame = Some(summary);
    }
    let mut ledger = ledger.clone();
    ledger["rng"] = rng.into();
    ledger["seed"] = serde_json::json!((run.rng == RngMode::Seeded).then_some(run.seed));
    ledger["not_covered"] = uncovered.clone();
    write_json(&ledger, &files.ledger)?;
    record["files"] = serde_json::to_value(&files).unwrap_or_default();
    if with_draws {
        record["draws_per_chain"] = files.draws_per_chain.into();
    }
    record["rng"] = rng.into();
    record["not_covered"] = uncovered;
    write_json(record, &files.record)?;
    Ok(files)
}

/// `value` pretty-printed to `path`.
#[cfg(feature = "cli")]
fn write_json(value: &serde_json::Value, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::InvalidData(format!("cannot serialise {}: {e}", path.display())))?;
    std::fs::write(path, text + "\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;
    use crate::samplers::{RunSetters, Rwmh};

    #[test]
    fn chains_stopped_early_are_cut_to_the_shortest() {
        let model = IsotropicGaussian::generate(50, 2, 1);
        let mut run = Rwmh::builder()
            .iterations(30)
            .chains(3)
            .start(vec![0.0, 0.0])
            .run(&model)
            .unwrap();
        // Chain 1 "stopped" after 25 steps: 15 post-warm-up draws, the others 20.
        run.chains[1].draws.truncate(25 * 2);
        run.chains[1].stats.truncate(25);
        let df = fit_draws(&run, 10).unwrap();
        assert_eq!(df.height(), 3 * 15);
        let draw = df.column("draw").unwrap().i64().unwrap();
        assert_eq!(draw.max(), Some(14));
        // The kept values are the chain's steps 10.. in order.
        let theta1 = df.column("theta_1").unwrap().f64().unwrap();
        assert_eq!(theta1.get(15), Some(run.chains[1].draws[10 * 2 + 1]));
        let s = fit_summary(&df).unwrap();
        assert_eq!(s.height(), 2);
        run.chains[2].draws.truncate(10 * 2);
        assert!(fit_draws(&run, 10).is_err()); // chain 2 has nothing after warm-up
    }
}
