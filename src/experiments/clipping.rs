//! The clipping study of Figure 6.2 (THESIS-NOTES §12): non-private RWMH (3000 iterations) and HMC
//! (500) with clipped log-likelihood ratios on the flat banana, d = 2 and 10, over a grid of
//! clip bounds, every chain started exactly at the true θ.

use serde::Serialize;

use super::grid::{Task, TaskKind};
use crate::models::Experiment;
use crate::samplers::ClipDistance;
use crate::samplers::SamplerKind;

/// The thesis' clip-bound grid.
pub const THESIS_CLIP_BOUNDS: [f64; 8] = [0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 1000.0];

/// Settings of the clipping study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClippingSpec {
    /// Dimensions (2 → `easy-2d`, 10 → `easy-10d`).
    pub dims: Vec<usize>,
    /// Clip bounds per unit distance.
    pub bounds: Vec<f64>,
    /// Chains per (algorithm, dimension, bound) (thesis: 20).
    pub chains: usize,
    /// `Rwmh` and/or `Hmc`.
    pub algorithms: Vec<SamplerKind>,
    /// Distance the clip bound scales with: L2 (correct, default) or the thesis code's
    /// `|Σ(θ_i − θ'_i)|`.
    pub distance: ClipDistance,
    /// Data rows of the d = 10 problem: Table 5.1's 200 000 (default) or the 100 000 the
    /// thesis' clipping code used.
    pub n_10d: usize,
}

impl ClippingSpec {
    /// The thesis' grid with dp-mcmc's corrections: L2 clip distance, d = 10 on Table 5.1's
    /// n = 200 000 (640 tasks).
    ///
    /// ```
    /// use dp_mcmc::experiments::ClippingSpec;
    /// assert_eq!(ClippingSpec::full().tasks().len(), 2 * 2 * 8 * 20);
    /// ```
    pub fn full() -> ClippingSpec {
        ClippingSpec {
            dims: vec![2, 10],
            bounds: THESIS_CLIP_BOUNDS.to_vec(),
            chains: 20,
            algorithms: vec![SamplerKind::Rwmh, SamplerKind::Hmc],
            distance: ClipDistance::L2,
            n_10d: Experiment::EasyBanana10d.n(),
        }
    }

    /// As the thesis' code ran it: `|Σ diff|` clip distance and n = 100 000 for d = 10.
    pub fn thesis_compatible(mut self) -> ClippingSpec {
        self.distance = ClipDistance::AbsSumThesis;
        self.n_10d = 100_000;
        self
    }

    /// The quick grid: d = 2 only, bounds {0.5, 1, 4, 1000}, 3 chains.
    pub fn quick() -> ClippingSpec {
        ClippingSpec {
            dims: vec![2],
            bounds: vec![0.5, 1.0, 4.0, 1000.0],
            chains: 3,
            ..ClippingSpec::full()
        }
    }

    /// The smallest grid that still shows clipping's effect (a notebook's quick live grid):
    /// d = 2, bounds {0.5, 2, 1000}, one RWMH chain each.
    ///
    /// ```
    /// use dp_mcmc::experiments::ClippingSpec;
    /// assert_eq!(ClippingSpec::smoke().tasks().len(), 3);
    /// ```
    pub fn smoke() -> ClippingSpec {
        ClippingSpec {
            dims: vec![2],
            bounds: vec![0.5, 2.0, 1000.0],
            chains: 1,
            algorithms: vec![SamplerKind::Rwmh],
            ..ClippingSpec::quick()
        }
    }

    /// Every task, chain-major.
    pub fn tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for chain in 0..self.chains {
            for &d in &self.dims {
                let (experiment, n) = if d == 2 {
                    (Experiment::EasyBanana2d, Experiment::EasyBanana2d.n())
                } else {
                    (Experiment::EasyBanana10d, self.n_10d)
                };
                for &algorithm in &self.algorithms {
                    for &clip_bound in &self.bounds {
                        out.push(Task {
                            experiment,
                            n,
                            chain,
                            kind: TaskKind::Clipping {
                                algorithm,
                                clip_bound,
                                distance: self.distance,
                            },
                        });
                    }
                }
            }
        }
        out
    }
}

/// Baseline MMDs (THESIS-NOTES §13): fresh exact posterior samples of 1000 draws against the
/// reference sample, `seeds` per experiment (thesis: 10).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineSpec {
    /// Experiments (those with an exact posterior; the circle has none).
    pub experiments: Vec<Experiment>,
    /// Fresh samples per experiment.
    pub seeds: usize,
}

impl BaselineSpec {
    /// Every experiment with a reference posterior, 10 seeds (70 tasks).
    ///
    /// ```
    /// use dp_mcmc::experiments::BaselineSpec;
    /// assert_eq!(BaselineSpec::full().tasks().len(), 70);
    /// ```
    pub fn full() -> BaselineSpec {
        BaselineSpec {
            experiments: Experiment::ALL
                .into_iter()
                .filter(|e| *e != Experiment::Circle)
                .collect(),
            seeds: 10,
        }
    }

    /// Every task.
    pub fn tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for &experiment in &self.experiments {
            if experiment == Experiment::Circle {
                continue;
            }
            for chain in 0..self.seeds {
                out.push(Task {
                    experiment,
                    n: experiment.n(),
                    chain,
                    kind: TaskKind::Baseline,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_mode_changes_the_ids() {
        let a = ClippingSpec::full().tasks();
        let b = ClippingSpec::full().thesis_compatible().tasks();
        assert_eq!(a.len(), b.len());
        assert!(a[0].id().contains("/l2/") && b[0].id().contains("/abs-sum/"));
        assert!(b.iter().any(|t| t.id().contains("easy-10d/n=100000/")));
        assert!(
            BaselineSpec::full()
                .tasks()
                .iter()
                .all(|t| t.grid() == "baseline")
        );
    }
}
