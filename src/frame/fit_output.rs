//! The outputs of `dp-mcmc fit`: post-warm-up draws as ArviZ reads them, a per-parameter
//! summary, and the privacy ledger.
//!
//! - `draws.parquet`: columns `chain` (i64, from 0), `draw` (i64, the index of the draw within
//!   its chain after warm-up, from 0) and one f64 column per parameter, named by
//!   [`Model::param_names`](crate::models::Model::param_names): ArviZ's `chain` and `draw`
//!   dimensions (checked with ArviZ 0.23: `az.convert_to_inference_data(pd.read_parquet(p)
//!   .set_index(["chain", "draw"]).to_xarray())`).
//! - `summary.csv`: one row per parameter: `parameter, mean, sd, q5, q50, q95, rhat, ess_bulk,
//!   ess_tail` (rank-normalised split R-hat, bulk and tail ESS of [`crate::diagnostics`]).
//! - `ledger.json`: what the run spent, as the caller serialised it.

#[cfg(feature = "cli")]
use std::path::Path;
use std::path::PathBuf;

use polars::prelude::*;
use rayon::prelude::*;

use super::diagnostics::param_draws;
use crate::diagnostics::{quantile_sorted, summarize};
use crate::error::{Error, Result};
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
    let d = run.dim().max(1);
    // Each chain's saved rows after its warm-up.
    let kept: Vec<Vec<&[f64]>> = run
        .chains
        .iter()
        .map(|c| {
            c.draws
                .chunks_exact(d)
                .enumerate()
                .filter(|(k, _)| c.step_of(*k) >= warmup)
                .map(|(_, row)| row)
                .collect()
        })
        .collect();
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

/// One row per parameter of a draws frame (layout of [`fit_draws`]): `parameter`, `mean`,
/// `sd`, `q5`, `q50`, `q95` (type-7 quantiles of all draws), `rhat`, `ess_bulk`, `ess_tail`
/// (null where undefined, e.g. a single draw per chain).
///
/// ```
/// use dp_mcmc::frame::fit_output::fit_summary;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("chain" => [0i64, 0, 0, 1, 1, 1], "draw" => [0i64, 1, 2, 0, 1, 2],
///              "mu" => [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let s = fit_summary(&df)?;
/// assert_eq!(s.column("q50")?.f64()?.get(0), Some(3.5));
/// assert!(fit_summary(&df.drop("chain")?).is_err());
/// # Ok(()) }
/// ```
pub fn fit_summary(draws: &DataFrame) -> Result<DataFrame> {
    let params = param_draws(draws)?;
    let mut names = Vec::new();
    let (mut mean, mut sd, mut q5, mut q50, mut q95) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut rhat, mut ess_bulk, mut ess_tail) = (vec![], vec![], vec![]);
    // one parameter per task: the diagnostics of long runs dominate `fit`'s output time
    let stats: Vec<(crate::diagnostics::ParamSummary, f64)> = params
        .par_iter()
        .map(|p| {
            let s = summarize(&p.as_slices())?;
            let mut all: Vec<f64> = p.chains.concat();
            all.sort_by(f64::total_cmp);
            Ok((s, quantile_sorted(&all, 0.5)))
        })
        .collect::<Result<_>>()?;
    for (p, (s, median)) in params.iter().zip(stats) {
        names.push(p.name.as_str());
        mean.push(s.mean);
        sd.push(s.sd);
        q5.push(s.q05);
        q50.push(median);
        q95.push(s.q95);
        rhat.push(s.rhat);
        ess_bulk.push(s.ess_bulk);
        ess_tail.push(s.ess_tail);
    }
    Ok(DataFrame::new_infer_height(vec![
        Column::new("parameter".into(), names),
        Column::new("mean".into(), mean),
        Column::new("sd".into(), sd),
        Column::new("q5".into(), q5),
        Column::new("q50".into(), q50),
        Column::new("q95".into(), q95),
        Column::new("rhat".into(), rhat),
        Column::new("ess_bulk".into(), ess_bulk),
        Column::new("ess_tail".into(), ess_tail),
    ])?)
}

/// Paths of the three files [`write_fit_outputs`] writes.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FitFiles {
    /// `DIR/draws.parquet`.
    pub draws: PathBuf,
    /// `DIR/summary.csv`.
    pub summary: PathBuf,
    /// `DIR/ledger.json`.
    pub ledger: PathBuf,
    /// Post-warm-up draws per chain in `draws.parquet` (not serialised).
    #[serde(skip)]
    pub draws_per_chain: usize,
}

/// Writes `DIR/draws.parquet` ([`fit_draws`]), `DIR/summary.csv` ([`fit_summary`]) and
/// `DIR/ledger.json` (`ledger`, pretty-printed), creating `dir` if missing. Only with the
/// `cli` feature (parquet).
#[cfg(feature = "cli")]
pub fn write_fit_outputs(
    run: &Run,
    warmup: usize,
    ledger: &serde_json::Value,
    dir: impl AsRef<Path>,
) -> Result<FitFiles> {
    let dir = dir.as_ref();
    if dir.exists() && !dir.is_dir() {
        return Err(Error::invalid(
            "--out",
            dir.display(),
            "is a file: give a directory (it is created if missing)",
        ));
    }
    std::fs::create_dir_all(dir)?;
    let draws = fit_draws(run, warmup)?;
    let files = FitFiles {
        draws: dir.join("draws.parquet"),
        summary: dir.join("summary.csv"),
        ledger: dir.join("ledger.json"),
        draws_per_chain: draws.height() / run.chains.len().max(1),
    };
    // the summary's diagnostics and the parquet encoding side by side
    let mut copy = draws.clone();
    let (summary, written) = rayon::join(
        || fit_summary(&draws),
        || super::write_parquet(&mut copy, &files.draws),
    );
    let mut summary = summary?;
    written?;
    super::write_csv(&mut summary, &files.summary)?;
    let text = serde_json::to_string_pretty(ledger)
        .map_err(|e| Error::InvalidData(format!("cannot serialise the ledger: {e}")))?;
    std::fs::write(&files.ledger, text + "\n")?;
    Ok(files)
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
