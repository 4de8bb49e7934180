//! A finished run: per-chain traces and statistics, the privacy spent, and what produced it.
//! Fully owned (no lifetimes), so it can live across notebook cells. DataFrames of it are
//! built in `crate::frame::samplers`.

use serde::Serialize;

use super::kernel::StepInfo;

/// Draws and per-step statistics of one chain.
#[derive(Clone, Debug, Default)]
pub struct ChainTrace {
    /// Start point θ₀.
    pub start: Vec<f64>,
    /// Positions after each step, row-major (`iterations × dim`).
    pub draws: Vec<f64>,
    /// One record per step.
    pub stats: Vec<StepInfo>,
    /// Wall time of the chain in seconds.
    pub wall_seconds: f64,
    /// The chain stopped at `max_time` before its last iteration.
    pub stopped_early: bool,
}

impl ChainTrace {
    /// Number of completed steps.
    pub fn len(&self) -> usize {
        self.stats.len()
    }

    /// No step completed.
    pub fn is_empty(&self) -> bool {
        self.stats.is_empty()
    }

    /// Acceptance rate (accepted / steps; NaN without steps).
    pub fn acceptance(&self) -> f64 {
        ratio(
            self.stats.iter().filter(|s| s.accepted).count() as f64,
            self.len() as f64,
        )
    }

    /// Fraction of clipped log-likelihood ratios: Σ clipped / Σ rows evaluated.
    /// A non-private diagnostic.
    pub fn clip_fraction(&self) -> f64 {
        let c: u64 = self.stats.iter().map(|s| s.clipped).sum();
        let r: u64 = self.stats.iter().map(|s| s.rows).sum();
        ratio(c as f64, r as f64)
    }

    /// Fraction of clipped per-row gradients (NaN for kernels without gradients).
    /// A non-private diagnostic.
    pub fn grad_clip_fraction(&self) -> f64 {
        let c: u64 = self.stats.iter().map(|s| s.grad_clipped).sum();
        let r: u64 = self.stats.iter().map(|s| s.grad_rows).sum();
        ratio(c as f64, r as f64)
    }

    /// Number of decisions clipping changed (baselines with clipping).
    pub fn decisions_changed(&self) -> usize {
        self.stats.iter().filter(|s| s.decision_changed).count()
    }

    /// The draws the thesis keeps after burn-in: steps `⌊(k−1)/2⌋+1 … k` of `k` (1-based,
    /// THESIS-NOTES §2), row-major. Empty when `k ≤ 1` (the thesis then reports NaN metrics).
    pub fn kept_half(&self, dim: usize) -> &[f64] {
        let k = self.len();
        if k <= 1 {
            return &[];
        }
        let first = (k - 1) / 2; // 0-based index of step ⌊(k−1)/2⌋+1
        &self.draws[first * dim..]
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

/// The privacy a run spent (from its accountant).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrivacySpent {
    /// ε of the guarantee.
    pub epsilon: f64,
    /// δ of the guarantee.
    pub delta: f64,
    /// `true` if (ε, δ) holds for each chain separately, `false` for the whole release.
    pub per_chain: bool,
    /// Accountant used (e.g. `"pld"`, `"zcdp"`, `"fourier"`, `"rdp"`).
    pub accountant: String,
}

/// A finished run.
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
    /// One trace per chain, in chain order.
    pub chains: Vec<ChainTrace>,
    /// Privacy spent (`None` for non-private samplers).
    pub privacy: Option<PrivacySpent>,
    /// Seed of the run (not used when `rng == "secure"`).
    pub seed: u64,
    /// Random source that produced the run: `"seeded"` (reproducible research run; not a
    /// secure DP release) or `"secure"` (generators keyed from OS entropy).
    pub rng: &'static str,
    /// Settings of the sampler as JSON (enough to reproduce the run).
    pub settings: serde_json::Value,
    /// Wall time of the whole run in seconds.
    pub wall_seconds: f64,
    /// Crate version that produced the run.
    pub version: &'static str,
}

impl Run {
    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.param_names.len()
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
            (r + c.stats.iter().map(|s| s.rows).sum::<u64>(), k + c.len())
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
