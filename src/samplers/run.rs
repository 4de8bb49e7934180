//! A finished run: per-chain traces and statistics, the privacy spent, and what produced it.
//! Fully owned (no lifetimes), so it can live across notebook cells. DataFrames of it are
//! built in `crate::frame::samplers`.

use serde::Serialize;

use super::kernel::StepInfo;
use super::ledger::Ledger;

/// Counts over every step of a chain, including the steps thinning did not save.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepTotals {
    /// Completed steps.
    pub steps: u64,
    /// Accepted proposals.
    pub accepted: u64,
    /// Clipped log-likelihood ratios.
    pub clipped: u64,
    /// Rows evaluated for the ratios.
    pub rows: u64,
    /// Clipped per-row gradients.
    pub grad_clipped: u64,
    /// Per-row gradients evaluated.
    pub grad_rows: u64,
    /// Steps whose decision clipping changed.
    pub decisions_changed: u64,
    /// Steps with a non-finite acceptance ratio.
    pub nonfinite: u64,
}

impl StepTotals {
    /// Adds one step.
    pub fn add(&mut self, s: &StepInfo) {
        self.steps += 1;
        self.accepted += u64::from(s.accepted);
        self.clipped += s.clipped;
        self.rows += s.rows;
        self.grad_clipped += s.grad_clipped;
        self.grad_rows += s.grad_rows;
        self.decisions_changed += u64::from(s.decision_changed);
        self.nonfinite += u64::from(s.nonfinite);
    }

    /// The totals of a list of step records.
    pub fn of(stats: &[StepInfo]) -> Self {
        let mut t = StepTotals::default();
        for s in stats {
            t.add(s);
        }
        t
    }
}

/// Draws and per-step statistics of one chain.
///
/// With thinning (`thin = k > 1`) only the 0-based steps `0, k, 2k, …` are saved in `draws`
/// and `stats`; the rates ([`acceptance`](Self::acceptance), clip fractions) come from
/// `totals`, which count every step.
#[derive(Clone, Debug, Default)]
pub struct ChainTrace {
    /// Start point θ₀.
    pub start: Vec<f64>,
    /// Positions after each saved step, row-major (`saved steps × dim`).
    pub draws: Vec<f64>,
    /// One record per saved step.
    pub stats: Vec<StepInfo>,
    /// Wall time of the chain in seconds.
    pub wall_seconds: f64,
    /// The chain stopped at `max_time` before its last iteration.
    pub stopped_early: bool,
    /// Every `thin`-th step was saved (0 or 1: every step).
    pub thin: usize,
    /// Counts over every step (`None`: every step is in `stats`, the counts come from there).
    pub totals: Option<StepTotals>,
    /// The first `warmup` steps adapted the step scale (0: no warm-up).
    pub warmup: usize,
    /// The step scale after the warm-up, relative to the configured step (1 without warm-up).
    pub step_scale: f64,
}

impl ChainTrace {
    /// Counts over every completed step.
    pub fn totals(&self) -> StepTotals {
        self.totals.unwrap_or_else(|| StepTotals::of(&self.stats))
    }

    /// Every `thin()`-th step is saved (at least 1).
    pub fn thin(&self) -> usize {
        self.thin.max(1)
    }

    /// 0-based step index of the `i`-th saved step.
    pub fn step_of(&self, i: usize) -> usize {
        i * self.thin()
    }

    /// Number of completed steps (saved or not).
    pub fn len(&self) -> usize {
        match self.totals {
            Some(t) => t.steps as usize,
            None => self.stats.len(),
        }
    }

    /// No step completed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Acceptance rate (accepted / steps; NaN without steps).
    pub fn acceptance(&self) -> f64 {
        let t = self.totals();
        ratio(t.accepted as f64, t.steps as f64)
    }

    /// Fraction of clipped log-likelihood ratios: Σ clipped / Σ rows evaluated.
    /// A non-private diagnostic.
    pub fn clip_fraction(&self) -> f64 {
        let t = self.totals();
        ratio(t.clipped as f64, t.rows as f64)
    }

    /// Fraction of clipped per-row gradients (NaN for kernels without gradients).
    /// A non-private diagnostic.
    pub fn grad_clip_fraction(&self) -> f64 {
        let t = self.totals();
        ratio(t.grad_clipped as f64, t.grad_rows as f64)
    }

    /// Number of decisions clipping changed (baselines with clipping).
    pub fn decisions_changed(&self) -> usize {
        self.totals().decisions_changed as usize
    }

    /// The draws the thesis keeps after burn-in: steps `⌊(k−1)/2⌋+1 … k` of `k` (1-based,
    /// THESIS-NOTES §2), row-major; with thinning, the saved ones among them. Empty when `k ≤ 1` (the
    /// thesis then reports NaN metrics).
    pub fn kept_half(&self, dim: usize) -> &[f64] {
        let k = self.len();
        if k <= 1 {
            return &[];
        }
        let first = (k - 1) / 2; // 0-based index of step ⌊(k−1)/2⌋+1
        let saved = first.div_ceil(self.thin()); // first saved step at or after it
        self.draws.get(saved * dim..).unwrap_or(&[])
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

/// The privacy a run spent (from its accountant). Its `Display` reads
/// `ε = 2, δ = 1e-5 (ADP accountant, whole release: all chains together)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrivacySpent {
    /// ε of the guarantee.
    pub epsilon: f64,
    /// δ of the guarantee.
    pub delta: f64,
    /// `true` if (ε, δ) holds for each chain separately, `false` for the whole release.
    pub per_chain: bool,
    /// Accountant that bounded the run: an
    /// [`AccountantKind::label`](crate::accounting::AccountantKind::label) (`"ADP"`, the tight
    /// PLD of Theorems 6/12; `"zCDP"`; `"RDP"`; `"RDP-exact"`; `"Fourier"`; `"PLD (certified)"`
    /// for the subsampled samplers' certified PLD accountant), or, for discrete Gaussian noise,
    /// `"zCDP-CKS20"`.
    pub accountant: String,
    /// What the run released, chain by chain and in total. A chain stopped early by
    /// `max_time` lists the iterations it really ran, and (ε, δ) are then re-evaluated for
    /// those (never above the planned guarantee).
    pub ledger: Ledger,
}

/// A finished run.
///
/// Print it with `{}` (or show it as a notebook cell's last expression, with
/// `dp_mcmc::prelude::*` in scope): its `Display` is a short report (algorithm, chains,
/// iterations, ε, δ, accountant, random source, acceptance per chain and the posterior summary
/// with R-hat and ESS; see `crate::display::RunDisplay`). `{:?}` (`Debug`) prints every draw.
#[derive(Clone, Debug)]
pub struct Run {
    /// Algorithm name (`"dp-penalty"`, ...).
    pub algorithm: String,
    /// Parameter names (DataFrame column names).
    pub param_names: Vec<String>,
    /// Number of data rows.
    pub n_rows: usize,
    /// Iterations per chain the run was given.
    pub iterations: usize,
    /// The first `warmup` iterations of each chain adapted its step scale (0: no warm-up); their
    /// draws lead each chain's trace. Summaries of a run with warm-up use the draws after it.
    pub warmup: usize,
    /// One trace per chain, in chain order.
    pub chains: Vec<ChainTrace>,
    /// Privacy spent (`None` for non-private samplers).
    pub privacy: Option<PrivacySpent>,
    /// Seed of the run (not used when `rng` is `RngMode::Secure`).
    pub seed: u64,
    /// Random source that produced the run: `Seeded` (reproducible research run; not a
    /// secure DP release) or `Secure` (generators keyed from OS entropy); shown as
    /// `"seeded"`/`"secure"`.
    pub rng: crate::noise::RngMode,
    /// Settings of the sampler as JSON (enough to reproduce the run).
    pub settings: serde_json::Value,
    /// Wall time of the whole run in seconds.
    pub wall_seconds: f64,
    /// Crate version that produced the run.
    pub version: &'static str,
}

/// A finished private analysis: the draws as a [`Run`] (with its privacy ledger and random
/// source) and, beside it, the report of what the method derived or released (an `auto` run's
/// [`AutoReport`](crate::auto::AutoReport), a noise-aware fit's
/// [`NoiseAwareReport`](crate::noise_aware::NoiseAwareReport)). One shape for both wings.
#[derive(Clone, Debug)]
pub struct Fit<R> {
    /// The draws, one trace per chain, and the privacy ledger.
    pub run: Run,
    /// What the method derived or released.
    pub report: R,
}

impl Run {
    /// ε of the privacy guarantee (`None` for the non-private samplers).
    ///
    /// ```
    /// use dp_mcmc::samplers::RunSetters;
    /// # use dp_mcmc::samplers::{Run, PrivacySpent};
    /// # let mut run = dp_mcmc::samplers::Rwmh::builder().iterations(2).chains(1).start(vec![0.0, 0.0])
    /// #     .run(&dp_mcmc::models::Experiment::EasyBanana2d.model().unwrap()).unwrap();
    /// // A non-private run (random-walk MH) has no ε and no δ.
    /// assert_eq!(run.epsilon(), None);
    /// assert_eq!(run.delta(), None);
    /// run.privacy = Some(PrivacySpent { epsilon: 2.0, delta: 1e-5, per_chain: false,
    ///                                   accountant: "ADP".into(), ledger: Default::default() });
    /// assert_eq!((run.epsilon(), run.delta()), (Some(2.0), Some(1e-5)));
    /// ```
    pub fn epsilon(&self) -> Option<f64> {
        self.privacy.as_ref().map(|p| p.epsilon)
    }

    /// δ of the privacy guarantee (`None` for the non-private samplers; see
    /// [`epsilon`](Self::epsilon)).
    pub fn delta(&self) -> Option<f64> {
        self.privacy.as_ref().map(|p| p.delta)
    }

    /// The last saved draw of every chain, in chain order (empty for a chain without draws).
    ///
    /// ```
    /// use dp_mcmc::samplers::RunSetters;
    /// # use dp_mcmc::models::testing::IsotropicGaussian;
    /// # use dp_mcmc::samplers::Rwmh;
    /// let model = IsotropicGaussian::new(vec![0.1, -0.3, 0.7], 1)?;
    /// let run = Rwmh::builder().proposal_sd(0.5).iterations(10).chains(3).start(vec![0.0]).run(&model)?;
    /// let last = run.last_draws();
    /// assert_eq!((last.len(), last[0].len()), (3, 1));
    /// assert_eq!(last[0][0], run.chains[0].draws[9]);
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn last_draws(&self) -> Vec<Vec<f64>> {
        let d = self.dim();
        self.chains
            .iter()
            .map(|c| c.draws[c.draws.len().saturating_sub(d)..].to_vec())
            .collect()
    }

    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.param_names.len()
    }

    /// Each chain's saved draws at steps `warmup` and later, one slice of [`dim`](Self::dim)
    /// values per draw (chains may differ in length).
    pub fn draws_after(&self, warmup: usize) -> Vec<Vec<&[f64]>> {
        let d = self.dim().max(1);
        self.chains
            .iter()
            .map(|c| {
                c.draws
                    .chunks_exact(d)
                    .enumerate()
                    .filter(|(k, _)| c.step_of(*k) >= warmup)
                    .map(|(_, row)| row)
                    .collect()
            })
            .collect()
    }

    /// Acceptance rate per chain.
    pub fn acceptance(&self) -> Vec<f64> {
        self.chains.iter().map(ChainTrace::acceptance).collect()
    }

    /// Clip fraction per chain (non-private diagnostic).
    pub fn clip_fraction(&self) -> Vec<f64> {
        self.chains.iter().map(ChainTrace::clip_fraction).collect()
    }

    /// Gradient clip fraction per chain (non-private diagnostic; NaN without gradients).
    pub fn grad_clip_fraction(&self) -> Vec<f64> {
        self.chains
            .iter()
            .map(ChainTrace::grad_clip_fraction)
            .collect()
    }

    /// Per-row evaluations per iteration (n for full-data kernels, the batch for subsampled).
    pub fn rows_per_iteration(&self) -> f64 {
        let (r, k) = self.chains.iter().fold((0u64, 0usize), |(r, k), c| {
            (r + c.totals().rows, k + c.len())
        });
        ratio(r as f64, k as f64)
    }

    /// Kept (post burn-in) draws of chain `chain`, row-major.
    pub fn kept_half(&self, chain: usize) -> &[f64] {
        self.chains
            .get(chain)
            .map_or(&[], |c| c.kept_half(self.dim()))
    }
}
