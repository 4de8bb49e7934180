//! The thesis' Figure 6.1 as a named specification ([`Figure61`]), its end points against the
//! thesis' printed values ([`Figure61::endpoints`]), and the Fourier accountant's value beside
//! a certified interval of the same privacy loss ([`fourier_against_certified`]).
//!
//! Every table here is computed from the accountants, never from another table, so a notebook
//! cell can build each one in a line (see the `dp_mcmc::display` docs for why frames are
//! better not looked up by column name in a later cell).

use polars::prelude::*;
use rayon::prelude::*;

use super::accounting::{iterations_frame, linspace};
use crate::Result;
use crate::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
use crate::accounting::{Accountant, AccountantKind, CertifiedPld, PrivacyEvent};
use crate::samplers::{DpHmc, DpPenalty, Gradient, IterationBudget, MinibatchPenalty, RunSetters};

/// The final thesis' Figure 6.1 at ε = 6 (docs/THESIS-NOTES.md §16, read off the PDF), in the
/// row order of [`Figure61::budgets`]: (algorithm, accountant, iterations).
pub const THESIS_FIGURE_6_1_AT_6: [(&str, &str, u64); 6] = [
    ("dp-penalty", "zCDP", 1079),
    ("dp-penalty", "ADP", 1431),
    ("minibatch-penalty", "RDP", 991),
    ("minibatch-penalty", "Fourier", 1817),
    ("dp-hmc", "zCDP", 639),
    ("dp-hmc", "ADP", 848),
];

/// The figure's data size n (thesis §6.1).
const ROWS: usize = 100_000;
/// The figure's δ.
const DELTA: f64 = 1e-6;

/// The settings of the thesis' Figure 6.1 (thesis §6.1): n = 100 000 rows, δ = 10⁻⁶; DP
/// penalty τ = 0.1 (zCDP against ADP); minibatch DP penalty τ = `minibatch_tau`, b = 1000
/// (RDP against Fourier); DP HMC τ_l = 0.1, τ_g = 0.4, L = 10 (zCDP against ADP) with the
/// given gradient schedule; one row per (algorithm, accountant, ε).
///
/// ```
/// use dp_mcmc::frame::figure_6_1::Figure61;
/// # fn main() -> dp_mcmc::Result<()> {
/// let spec = Figure61::final_thesis().epsilons(vec![6.0]);
/// let thesis = spec.clone().thesis_compatible(true).frame()?;
/// assert_eq!(thesis.height(), 6);
/// // the thesis-compatible end points are the thesis' own numbers
/// let ends = spec.endpoints()?;
/// let same = ends.column("thesis = ours")?.bool()?;
/// assert_eq!(same.sum(), Some(6));
/// // an invalid setting is a typed error, not a panic
/// assert!(Figure61::final_thesis().minibatch_tau(-1.0).epsilons(vec![1.0]).frame().is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Figure61 {
    /// The ε grid (the thesis: `linspace(0.5, 6, 50)`).
    pub epsilons: Vec<f64>,
    /// The minibatch penalty's τ (final thesis 0.7; the March 2021 text 0.9).
    pub minibatch_tau: f64,
    /// DP HMC's gradient schedule (final thesis: a fresh gradient each iteration).
    pub gradient: Gradient,
    /// The thesis code's minibatch RDP sum (to j = α − 1, slightly optimistic;
    /// docs/THESIS-NOTES.md §6) instead of Theorem 8's (to j = α).
    pub thesis_compatible: bool,
}

impl Figure61 {
    /// The final thesis' figure in dp-mcmc's corrected mode: `linspace(0.5, 6, 50)`, τ = 0.7,
    /// fresh gradients, Theorem 8's RDP sum.
    pub fn final_thesis() -> Self {
        Figure61 {
            epsilons: linspace(0.5, 6.0, 50),
            minibatch_tau: 0.7,
            gradient: Gradient::Fresh,
            thesis_compatible: false,
        }
    }

    /// The grid `linspace(0.5, 6, num)` (same end points as the thesis', fewer values).
    pub fn points(self, num: usize) -> Self {
        self.epsilons(linspace(0.5, 6.0, num))
    }

    /// The ε grid.
    pub fn epsilons(mut self, epsilons: Vec<f64>) -> Self {
        self.epsilons = epsilons;
        self
    }

    /// The minibatch penalty's τ.
    pub fn minibatch_tau(mut self, tau: f64) -> Self {
        self.minibatch_tau = tau;
        self
    }

    /// DP HMC's gradient schedule.
    pub fn gradient(mut self, gradient: Gradient) -> Self {
        self.gradient = gradient;
        self
    }

    /// The thesis code's minibatch RDP sum (`true`) or Theorem 8's (`false`).
    pub fn thesis_compatible(mut self, yes: bool) -> Self {
        self.thesis_compatible = yes;
        self
    }

    /// One budget per (algorithm, accountant, ε), in the order of
    /// [`THESIS_FIGURE_6_1_AT_6`] (each accountant over the whole grid). The Fourier rows take
    /// most of the time (about 0.25 s per ε in a release build; the ε of each line run on the
    /// rayon pool).
    ///
    /// # Errors
    /// Invalid settings (τ ≤ 0, an ε ≤ 0) or a Fourier-accountant failure.
    pub fn budgets(&self) -> Result<Vec<IterationBudget>> {
        let (n, delta) = (ROWS, DELTA);
        let mut rows = Vec::with_capacity(6 * self.epsilons.len());
        // every ε of one (algorithm, accountant) line on the rayon pool, in grid order (each
        // budget is a function of its settings alone: the same rows for any thread count)
        let mut line = |budget: &(dyn Fn(f64) -> Result<IterationBudget> + Sync)| -> Result<()> {
            let line: Vec<IterationBudget> = self
                .epsilons
                .par_iter()
                .map(|&e| budget(e))
                .collect::<Result<_>>()?;
            rows.extend(line);
            Ok(())
        };
        let penalty = DpPenalty::builder().tau(0.1).chains(1).delta(delta);
        for m in [AccountantKind::Zcdp, AccountantKind::Pld] {
            line(&|e| penalty.clone().accountant(m).epsilon(e).budget(n))?;
        }
        // one Fourier accountant for the whole grid: its single-step spectrum is computed once
        let minibatch =
            self.minibatch(self.thesis_compatible)
                .fourier_accountant(FourierAccountant::new(
                    FourierRelation::SubstituteWithoutReplacement,
                ));
        for m in [AccountantKind::Rdp, AccountantKind::Fourier] {
            line(&|e| minibatch.clone().accountant(m).epsilon(e).budget(n))?;
        }
        let hmc = DpHmc::builder()
            .tau_l(0.1)
            .tau_g(0.4)
            .leapfrog_steps(10)
            .gradient(self.gradient)
            .chains(1)
            .delta(delta);
        for m in [AccountantKind::Zcdp, AccountantKind::Pld] {
            line(&|e| hmc.clone().accountant(m).epsilon(e).budget(n))?;
        }
        Ok(rows)
    }

    /// The minibatch DP penalty of the figure (τ = `minibatch_tau`, b = 1000, one chain, δ of
    /// the figure) with the given RDP sum.
    fn minibatch(&self, thesis_compatible: bool) -> MinibatchPenalty {
        MinibatchPenalty::builder()
            .tau(self.minibatch_tau)
            .batch_size(1000)
            .thesis_compatible(thesis_compatible)
            .chains(1)
            .delta(DELTA)
    }

    /// The figure's table: columns as [`iterations_frame`] (`epsilon`, `iterations`,
    /// `method`, `algorithm`, ...), for [`crate::plots::accounting_comparison`].
    ///
    /// # Errors
    /// As [`Figure61::budgets`].
    pub fn frame(&self) -> Result<DataFrame> {
        iterations_frame(&self.budgets()?)
    }

    /// The corrected figure's table plus the thesis code's minibatch RDP line, its `method`
    /// named `RDP (thesis code)`: the one line the correction moves, drawn beside the corrected
    /// one.
    ///
    /// # Errors
    /// As [`Figure61::budgets`].
    pub fn frame_with_thesis_rdp(&self) -> Result<DataFrame> {
        let corrected = self.clone().thesis_compatible(false).frame()?;
        let thesis_code = self.minibatch(true).accountant(AccountantKind::Rdp);
        let thesis_rdp = self
            .epsilons
            .iter()
            .map(|&e| thesis_code.clone().epsilon(e).budget(ROWS))
            .collect::<Result<Vec<IterationBudget>>>()?;
        let mut rdp = iterations_frame(&thesis_rdp)?;
        let n = rdp.height();
        rdp.with_column(Column::new("method".into(), vec!["RDP (thesis code)"; n]))?;
        Ok(corrected.vstack(&rdp)?)
    }

    /// The end points at ε = 6 beside the final thesis' printed values
    /// ([`THESIS_FIGURE_6_1_AT_6`]): columns `algorithm`, `method`, `thesis (PDF)`,
    /// `thesis-compatible`, `corrected`, `thesis = ours` (the thesis-compatible count equals
    /// the thesis'). With the final thesis' settings (τ = 0.7, fresh gradients) the last column
    /// is all `true` and the corrected column differs only in the minibatch RDP row.
    ///
    /// # Errors
    /// As [`Figure61::budgets`].
    pub fn endpoints(&self) -> Result<DataFrame> {
        let at_6 = self.clone().epsilons(vec![6.0]);
        let thesis = at_6.clone().thesis_compatible(true).budgets()?;
        let corrected = at_6.thesis_compatible(false).budgets()?;
        let printed: Vec<u64> = THESIS_FIGURE_6_1_AT_6.iter().map(|r| r.2).collect();
        let ours: Vec<u64> = thesis.iter().map(|b| b.iterations as u64).collect();
        Ok(df!(
            "algorithm" => thesis.iter().map(|b| b.algorithm.clone()).collect::<Vec<_>>(),
            "method" => thesis.iter().map(|b| b.method.label()).collect::<Vec<_>>(),
            "thesis (PDF)" => printed.clone(),
            "thesis-compatible" => ours.clone(),
            "corrected" => corrected.iter().map(|b| b.iterations as u64).collect::<Vec<_>>(),
            "thesis = ours" => ours.iter().zip(&printed).map(|(a, b)| a == b).collect::<Vec<_>>(),
        )?)
    }
}

/// The Fourier accountant's δ(ε) (the thesis' tool: grid nx = 10⁶, L = 20, no error bar)
/// beside an interval certified to contain the true δ(ε) ([`CertifiedPld`] at relative
/// `tolerance`), for `k` compositions of the minibatch penalty's pair: the Gaussian
/// mechanism with noise `sigma` on a batch of `batch` rows drawn without replacement from
/// `n`, substitute relation. One row per `k` in `counts`: `iterations`, `fourier_delta`,
/// `certified_lower`, `certified_upper`, `inside` (the Fourier value lies in the interval,
/// so it is consistent with the truth).
///
/// ```
/// use dp_mcmc::frame::figure_6_1::fourier_against_certified;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = fourier_against_certified(0.7f64.sqrt(), 100_000, 1_000, 4.0, &[300], 1e-2)?;
/// assert_eq!(df.height(), 1);
/// assert!(df.column("inside")?.bool()?.get(0).unwrap());
/// // a batch larger than the data is a typed error
/// assert!(fourier_against_certified(1.0, 100, 1_000, 4.0, &[10], 1e-2).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// Invalid parameters (σ ≤ 0, `batch` > `n`, ε < 0, a tolerance outside (0, 1)) or an
/// accountant failure.
pub fn fourier_against_certified(
    sigma: f64,
    n: u64,
    batch: u64,
    epsilon: f64,
    counts: &[u64],
    tolerance: f64,
) -> Result<DataFrame> {
    let fourier = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement);
    let (mut f, mut lo, mut hi) = (Vec::new(), Vec::new(), Vec::new());
    for &k in counts {
        let event = PrivacyEvent::gaussian(sigma).without_replacement(n, batch);
        let mut certified = CertifiedPld::new().tolerance(tolerance);
        certified.compose(&event.repeat(k))?;
        let interval = certified.delta_interval(epsilon)?;
        let q = batch as f64 / n as f64;
        f.push(fourier.delta(epsilon, &[SubsampledGaussian::new(sigma, q, k)?])?);
        lo.push(interval.lower);
        hi.push(interval.upper);
    }
    let inside: Vec<bool> = (0..f.len())
        .map(|i| lo[i] <= f[i] && f[i] <= hi[i])
        .collect();
    Ok(df!(
        "iterations" => counts.to_vec(),
        "fourier_delta" => f,
        "certified_lower" => lo,
        "certified_upper" => hi,
        "inside" => inside,
    )?)
}

/// The thesis' Figure 6.1 comparison on the grid `epsilons`: [`Figure61`] with
/// the given minibatch τ, gradient schedule and RDP sum; the final thesis figure is
/// `(linspace(0.5, 6, 50), 0.7, Gradient::Fresh, true)`. Columns as [`iterations_frame`].
///
/// # Errors
/// Invalid parameters (e.g. `minibatch_tau ≤ 0`) or a Fourier-accountant failure.
pub fn figure_6_1_with(
    epsilons: &[f64],
    minibatch_tau: f64,
    gradient: Gradient,
    thesis_compatible: bool,
) -> Result<DataFrame> {
    Figure61 {
        epsilons: epsilons.to_vec(),
        minibatch_tau,
        gradient,
        thesis_compatible,
    }
    .frame()
}

/// The final thesis' Figure 6.1 on `linspace(0.5, 6, 50)` (τ = 0.7, fresh gradients), in the
/// corrected (`false`) or thesis-code (`true`) mode; see [`figure_6_1_with`].
///
/// # Errors
/// As [`figure_6_1_with`].
pub fn figure_6_1(thesis_compatible: bool) -> Result<DataFrame> {
    figure_6_1_with(
        &linspace(0.5, 6.0, 50),
        0.7,
        Gradient::Fresh,
        thesis_compatible,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `iterations` column of a Figure 6.1 frame.
    fn iterations(df: &DataFrame) -> Vec<u64> {
        df.column("iterations")
            .unwrap()
            .u64()
            .unwrap()
            .into_no_null_iter()
            .collect()
    }

    #[test]
    fn figure_endpoints() {
        // THESIS-NOTES §16: final figure at ε = 6: (1079, 1431 | 991, 1817 | 639, 848)
        let df = figure_6_1_with(&[6.0], 0.7, Gradient::Fresh, true).unwrap();
        let it = iterations(&df);
        assert_eq!(it, vec![1079, 1431, 991, 1817, 639, 848]);
    }

    #[test]
    #[ignore = "slow: 50-point Fourier grid (~45 s in debug); run with --ignored"]
    fn full_figure_is_monotone() {
        let t = std::time::Instant::now();
        let df = figure_6_1(true).unwrap();
        eprintln!("figure_6_1: {:?}", t.elapsed());
        assert_eq!(df.height(), 300);
        let it = iterations(&df);
        for series in it.chunks(50) {
            assert!(series.windows(2).all(|w| w[0] <= w[1]), "{series:?}");
        }
    }
}
