//! DataFrames of a sampler [`Run`]: wide draws, per-step statistics, per-chain summary, and
//! its privacy [`Ledger`] part by part.

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::samplers::{Ledger, Run};

impl Ledger {
    /// The cost part by part, in the order it was spent: columns `part` (`initialisation`,
    /// `clip bound`, `warm-up`, `sampling`), `releases` (u64), `epsilon_share` (the shares add
    /// up to the run's ε) and `event` (the part's privacy event, as text). A run without parts
    /// (a fixed-iteration or non-private run) gives an empty frame with these columns.
    ///
    /// ```
    /// use dp_mcmc::prelude::*;
    /// # use dp_mcmc::models::testing::IsotropicGaussian;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// # let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
    /// let run = DpPenalty::builder().tau(0.5).proposal_sd(0.05).epsilon(4.0).delta(1e-5)
    ///     .chains(2).warmup(10).seed(1).start(vec![0.5]).run(&model)?;
    /// let ledger = &run.privacy.as_ref().unwrap().ledger;
    /// let table = ledger.to_frame()?;
    /// assert_eq!(table.get_column_names(), ["part", "releases", "epsilon_share", "event"]);
    /// assert_eq!(table.height(), ledger.parts.len()); // warm-up, then sampling
    /// let total: f64 = ledger.parts.iter().map(|p| p.epsilon_share).sum();
    /// assert!((total - 4.0).abs() < 1e-9);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Only polars errors (none expected).
    pub fn to_frame(&self) -> Result<DataFrame> {
        let df = df!(
            "part" => self.parts.iter().map(|p| p.part.as_str()).collect::<Vec<_>>(),
            "releases" => self.parts.iter().map(|p| p.releases).collect::<Vec<u64>>(),
            "epsilon_share" => self.parts.iter().map(|p| p.epsilon_share).collect::<Vec<f64>>(),
            "event" => self.parts.iter().map(|p| p.event.to_string()).collect::<Vec<_>>(),
        )?;
        Ok(df)
    }
}

/// The 1-based `draw` number of 0-based step `step` (u32 column).
fn draw_number(step: usize) -> Result<u32> {
    u32::try_from(step + 1).map_err(|_| {
        Error::InvalidData(format!(
            "step {step} does not fit the u32 `draw` column; read the traces from `Run::chains`"
        ))
    })
}

impl Run {
    /// Draws: columns `chain` (u32), `draw` (u32, 1-based step index; with `.thin(k)` the
    /// saved steps 1, k+1, 2k+1, …), for a run with warm-up (`Run::warmup > 0`, e.g. `auto`
    /// runs) a boolean `warmup` (the draw's step adapted the step scale; `Run::summary` leaves
    /// those rows out), then one f64 column per parameter (named by the model). Wide format:
    /// `group_by("chain")` works directly.
    pub fn draws(&self) -> Result<DataFrame> {
        let d = self.dim();
        let total: usize = self.chains.iter().map(|c| c.len()).sum();
        let mut chain = Vec::with_capacity(total);
        let mut draw = Vec::with_capacity(total);
        let mut params: Vec<Vec<f64>> = vec![Vec::with_capacity(total); d];
        let mut warmup = Vec::with_capacity(if self.warmup > 0 { total } else { 0 });
        for (i, c) in self.chains.iter().enumerate() {
            for (k, row) in c.draws.chunks_exact(d.max(1)).enumerate() {
                chain.push(i as u32);
                draw.push(draw_number(c.step_of(k))?);
                if self.warmup > 0 {
                    warmup.push(c.step_of(k) < self.warmup);
                }
                for (p, v) in params.iter_mut().zip(row) {
                    p.push(*v);
                }
            }
        }
        let mut cols = vec![
            Column::new("chain".into(), chain),
            Column::new("draw".into(), draw),
        ];
        if self.warmup > 0 {
            cols.push(Column::new("warmup".into(), warmup));
        }
        for (name, values) in self.param_names.iter().zip(params) {
            cols.push(Column::new(name.as_str().into(), values));
        }
        Ok(DataFrame::new_infer_height(cols)?)
    }

    /// Per-step statistics of the saved steps (all steps without thinning; `draw` numbers the
    /// step as in [`Run::draws`]): `chain`, `draw`, `accepted`, `log_alpha`, `nonfinite`, and the
    /// diagnostics computed from the raw data, which are **not covered by the privacy
    /// guarantee** and say so in their names (see docs/SECURITY.md):
    /// `clip_fraction_nonprivate`, `grad_clip_fraction_nonprivate` (null without gradients),
    /// `batch_var_nonprivate` (the exact scaled variance σ_b² of the step's batch; null for
    /// full-data kernels) and `decision_changed_nonprivate` (whether the unclipped, exact sum
    /// would have changed the accept decision).
    ///
    /// `accepted`, `log_alpha` and `nonfinite` are post-processing of the released noisy
    /// statistic (and of public values), so the guarantee covers them.
    pub fn stats(&self) -> Result<DataFrame> {
        let (mut chain, mut draw, mut acc, mut la, mut cf, mut gcf, mut bv, mut dc, mut nf) = (
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
        );
        for (i, c) in self.chains.iter().enumerate() {
            for (k, s) in c.stats.iter().enumerate() {
                chain.push(i as u32);
                draw.push(draw_number(c.step_of(k))?);
                acc.push(s.accepted);
                la.push(s.log_alpha);
                cf.push(if s.rows > 0 {
                    s.clipped as f64 / s.rows as f64
                } else {
                    f64::NAN
                });
                gcf.push((s.grad_rows > 0).then(|| s.grad_clipped as f64 / s.grad_rows as f64));
                bv.push((!s.batch_var.is_nan()).then_some(s.batch_var));
                dc.push(s.decision_changed);
                nf.push(s.nonfinite);
            }
        }
        let df = DataFrame::new_infer_height(vec![
            Column::new("chain".into(), chain),
            Column::new("draw".into(), draw),
            Column::new("accepted".into(), acc),
            Column::new("log_alpha".into(), la),
            Column::new("clip_fraction_nonprivate".into(), cf),
            Column::new("grad_clip_fraction_nonprivate".into(), gcf),
            Column::new("batch_var_nonprivate".into(), bv),
            Column::new("decision_changed_nonprivate".into(), dc),
            Column::new("nonfinite".into(), nf),
        ])?;
        Ok(df)
    }

    /// Posterior summary of all draws (ArviZ names): `param`, `mean`, `sd`, `q05`, `q95`,
    /// `ess_bulk`, `ess_tail`, `rhat`, `mcse_mean`. Use [`Run::kept_half`] or filter `draw` for
    /// the thesis' burn-in.
    pub fn summary(&self) -> Result<DataFrame> {
        crate::frame::diagnostics::summary(&self.draws()?)
    }

    /// One row per chain: `chain`, `iterations`, `acceptance`, `clip_fraction_nonprivate`,
    /// `grad_clip_fraction_nonprivate`, `rows_per_iteration`, `wall_seconds`, `rng`
    /// (`"seeded"`, reproducible research runs, or `"secure"`, OS-keyed), `stopped_early`.
    /// The clip fractions are computed from the raw data and are **not covered by the privacy
    /// guarantee** (hence the suffix); the acceptance rate is post-processing of the released
    /// accept decisions.
    pub fn chain_summary(&self) -> Result<DataFrame> {
        let n = self.chains.len();
        let df = DataFrame::new_infer_height(vec![
            Column::new("chain".into(), (0..n as u32).collect::<Vec<_>>()),
            Column::new(
                "iterations".into(),
                self.chains
                    .iter()
                    .map(|c| c.len() as u64)
                    .collect::<Vec<_>>(),
            ),
            Column::new("acceptance".into(), self.acceptance()),
            Column::new("clip_fraction_nonprivate".into(), self.clip_fraction()),
            Column::new(
                "grad_clip_fraction_nonprivate".into(),
                self.grad_clip_fraction(),
            ),
            Column::new(
                "rows_per_iteration".into(),
                self.chains
                    .iter()
                    .map(|c| c.totals().rows as f64 / c.len().max(1) as f64)
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "wall_seconds".into(),
                self.chains
                    .iter()
                    .map(|c| c.wall_seconds)
                    .collect::<Vec<_>>(),
            ),
            Column::new("rng".into(), vec![self.rng.as_str(); self.chains.len()]),
            Column::new(
                "stopped_early".into(),
                self.chains
                    .iter()
                    .map(|c| c.stopped_early)
                    .collect::<Vec<_>>(),
            ),
        ])?;
        Ok(df)
    }
}

/// The posterior summaries of several runs stacked, with a `label` column first (e.g. the ε
/// of each run, or `"non-private"`): `label`, `param`, `mean`, `sd`, `q05`, `q95`, … as
/// [`Run::summary`] (warm-up draws left out). The input of
/// [`plots::posterior::interval_plot`](crate::plots).
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// use dp_mcmc::frame::samplers::interval_table;
/// use dp_mcmc::models::testing::IsotropicGaussian;
/// use dp_mcmc::samplers::Rwmh;
/// # fn main() -> dp_mcmc::Result<()> {
/// let model = IsotropicGaussian::generate(200, 1, 1);
/// let run = Rwmh::builder().proposal_sd(0.1).iterations(50).chains(2).start(vec![0.0])
///     .progress(false).run(&model)?;
/// let t = interval_table(&[("a", &run), ("b", &run)])?;
/// assert_eq!(t.height(), 2);
/// assert!(interval_table(&[]).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// No runs, or a run whose summary fails (e.g. no draws).
pub fn interval_table(runs: &[(&str, &Run)]) -> Result<DataFrame> {
    let mut out: Option<DataFrame> = None;
    for (label, run) in runs {
        let s = run.summary()?;
        let mut cols = vec![Column::new("label".into(), vec![*label; s.height()])];
        cols.extend(s.columns().iter().cloned());
        let s = DataFrame::new_infer_height(cols)?;
        out = Some(match out {
            None => s,
            Some(o) => o.vstack(&s)?,
        });
    }
    out.ok_or_else(|| Error::InvalidData("no runs: give at least one (label, run)".into()))
}
