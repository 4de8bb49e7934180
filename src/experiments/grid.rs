//! Grid tasks and the thesis' Chapter 6 algorithm comparison (THESIS-NOTES §11): which
//! (experiment, algorithm, ε, chain) combinations the thesis ran.

use serde::Serialize;

use crate::models::Experiment;
use crate::samplers::ClipDistance;
use crate::samplers::SamplerKind;

/// What a task computes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TaskKind {
    /// One DP chain with the thesis' tuned parameters and budget (ε, δ = 0.1/n) per chain.
    Comparison {
        /// The algorithm.
        algorithm: SamplerKind,
        /// Privacy budget ε of the chain.
        epsilon: f64,
    },
    /// One non-private RWMH / HMC chain with clipped ratios, started at the true θ (THESIS-NOTES
    /// §12).
    Clipping {
        /// `Rwmh` or `Hmc`.
        algorithm: SamplerKind,
        /// Clip bound per unit distance.
        clip_bound: f64,
        /// Distance the bound scales with.
        distance: ClipDistance,
    },
    /// One fresh 1000-draw exact posterior sample against the reference (THESIS-NOTES §13, Fig
    /// 6.2/6.3 baseline lines).
    Baseline,
    /// One chain of a sampler the thesis did not run (the field's, [`field_algorithms`]) with
    /// its public settings (`tuned_for`) and the comparison's budget (ε, δ = 0.1/n per chain).
    Field {
        /// The algorithm.
        algorithm: SamplerKind,
        /// Privacy budget ε of the chain.
        epsilon: f64,
    },
}

/// One unit of work of a grid: one chain (or one baseline draw), written as one result row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Task {
    /// The experiment (Table 5.1 preset).
    pub experiment: Experiment,
    /// Data rows (the experiment's `n`, except the thesis-compatible d = 10 clipping runs).
    pub n: usize,
    /// Chain index (start point `i`), or the baseline seed index.
    pub chain: usize,
    /// What to compute.
    pub kind: TaskKind,
}

fn distance_key(d: ClipDistance) -> &'static str {
    match d {
        ClipDistance::L2 => "l2",
        ClipDistance::AbsSumThesis => "abs-sum",
    }
}

impl Task {
    /// The grid this task belongs to (`comparison`, `clipping`, `baseline`).
    pub fn grid(&self) -> &'static str {
        match self.kind {
            TaskKind::Comparison { .. } => "comparison",
            TaskKind::Clipping { .. } => "clipping",
            TaskKind::Baseline => "baseline",
            TaskKind::Field { .. } => "field",
        }
    }

    /// Algorithm key (`exact` for baseline draws).
    pub fn algorithm(&self) -> &'static str {
        match self.kind {
            TaskKind::Comparison { algorithm, .. }
            | TaskKind::Clipping { algorithm, .. }
            | TaskKind::Field { algorithm, .. } => algorithm.key(),
            TaskKind::Baseline => "exact",
        }
    }

    /// ε of a comparison or field task.
    pub fn epsilon(&self) -> Option<f64> {
        match self.kind {
            TaskKind::Comparison { epsilon, .. } | TaskKind::Field { epsilon, .. } => Some(epsilon),
            _ => None,
        }
    }

    /// Clip bound of a clipping task.
    pub fn clip_bound(&self) -> Option<f64> {
        match self.kind {
            TaskKind::Clipping { clip_bound, .. } => Some(clip_bound),
            _ => None,
        }
    }

    /// Clip distance key (`l2`, `abs-sum`) of a clipping task.
    pub fn clip_distance(&self) -> Option<&'static str> {
        match self.kind {
            TaskKind::Clipping { distance, .. } => Some(distance_key(distance)),
            _ => None,
        }
    }

    /// The unique id (resume key; also what the task's seed is derived from), e.g.
    /// `comparison/easy-2d/n=100000/dp-hmc/eps=1/chain=3`.
    ///
    /// ```
    /// use dp_mcmc::experiments::{SamplerKind, Task, TaskKind};
    /// use dp_mcmc::models::Experiment;
    /// let t = Task {
    ///     experiment: Experiment::EasyBanana2d,
    ///     n: 100_000,
    ///     chain: 3,
    ///     kind: TaskKind::Comparison { algorithm: SamplerKind::DpHmc, epsilon: 1.0 },
    /// };
    /// assert_eq!(t.id(), "comparison/easy-2d/n=100000/dp-hmc/eps=1/chain=3");
    /// ```
    pub fn id(&self) -> String {
        let head = format!(
            "{}/{}/n={}/{}",
            self.grid(),
            self.experiment.key(),
            self.n,
            self.algorithm()
        );
        match &self.kind {
            TaskKind::Comparison { epsilon, .. } | TaskKind::Field { epsilon, .. } => {
                format!("{head}/eps={epsilon}/chain={}", self.chain)
            }
            TaskKind::Clipping {
                clip_bound,
                distance,
                ..
            } => format!(
                "{head}/{}/b={clip_bound}/chain={}",
                distance_key(*distance),
                self.chain
            ),
            TaskKind::Baseline => format!("{head}/seed={}", self.chain),
        }
    }

    /// The task's seed: a fixed hash (FNV-1a) of its id mixed with the grid seed, so a task's
    /// result depends neither on the thread count nor on which other tasks run.
    pub fn seed(&self, grid_seed: u64) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.id().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // splitmix64 finaliser of the combination.
        let mut z = h ^ grid_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The algorithms the thesis ran on an experiment (THESIS-NOTES §11): DP HMC, DP penalty and DP
/// penalty OCU+GWMH everywhere; the minibatch penalties and DP Barker only on the flat and
/// tempered bananas.
///
/// ```
/// use dp_mcmc::experiments::comparison_algorithms;
/// use dp_mcmc::models::Experiment;
/// assert_eq!(comparison_algorithms(Experiment::EasyBanana2d).len(), 6);
/// assert_eq!(comparison_algorithms(Experiment::Circle).len(), 3);
/// ```
pub fn comparison_algorithms(experiment: Experiment) -> Vec<SamplerKind> {
    use Experiment::*;
    let mut v = vec![
        SamplerKind::DpHmc,
        SamplerKind::DpPenalty,
        SamplerKind::DpPenaltyGwmh,
    ];
    if matches!(
        experiment,
        EasyBanana2d | EasyBanana10d | TemperedBanana2d | TemperedBanana10d
    ) {
        v.extend([
            SamplerKind::MinibatchPenalty,
            SamplerKind::MinibatchPenaltyGwmh,
            SamplerKind::DpBarker,
        ]);
    }
    v
}

/// The algorithm comparison of Figures 6.3–6.8 (THESIS-NOTES §11).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonSpec {
    /// Experiments (the seven banana/Gauss ones and the circle in the full grid).
    pub experiments: Vec<Experiment>,
    /// ε of the banana-family experiments (thesis: 1, …, 6).
    pub epsilons: Vec<f64>,
    /// ε of the circle (thesis: 0.5, 0.75, 1).
    pub circle_epsilons: Vec<f64>,
    /// Chains per configuration (thesis: 20).
    pub chains: usize,
    /// Restrict to these algorithms (`None`: all of [`comparison_algorithms`]).
    pub algorithms: Option<Vec<SamplerKind>>,
}

impl ComparisonSpec {
    /// The thesis' grid: 8 experiments, ε 1..6 (circle 0.5, 0.75, 1), 20 chains: 4140 tasks.
    ///
    /// ```
    /// use dp_mcmc::experiments::ComparisonSpec;
    /// assert_eq!(ComparisonSpec::full().tasks().len(), 4140);
    /// ```
    pub fn full() -> ComparisonSpec {
        ComparisonSpec {
            experiments: Experiment::ALL.to_vec(),
            epsilons: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            circle_epsilons: vec![0.5, 0.75, 1.0],
            chains: 20,
            algorithms: None,
        }
    }

    /// The CLI's quick grid: the d = 2 experiments, ε ∈ {1, 4} (circle 0.5), 3 chains.
    pub fn quick() -> ComparisonSpec {
        use Experiment::*;
        ComparisonSpec {
            experiments: vec![
                EasyBanana2d,
                TemperedBanana2d,
                HardBanana2d,
                HardGauss2d,
                Circle,
            ],
            epsilons: vec![1.0, 4.0],
            circle_epsilons: vec![0.5],
            chains: 3,
            algorithms: None,
        }
    }

    /// The smallest grid that still compares every algorithm (a notebook's quick live grid):
    /// the flat 2-d banana at ε = 1, 2 chains.
    ///
    /// ```
    /// use dp_mcmc::experiments::ComparisonSpec;
    /// assert_eq!(ComparisonSpec::smoke().tasks().len(), 2 * 6); // six algorithms, two chains
    /// ```
    pub fn smoke() -> ComparisonSpec {
        ComparisonSpec {
            experiments: vec![Experiment::EasyBanana2d],
            epsilons: vec![1.0],
            circle_epsilons: vec![],
            chains: 2,
            algorithms: None,
        }
    }

    /// Every task, chain-major (all chain-0 tasks first), so that a run stopped early has a
    /// few chains of every configuration rather than all chains of a few.
    pub fn tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for chain in 0..self.chains {
            for &e in &self.experiments {
                let eps = if e == Experiment::Circle {
                    &self.circle_epsilons
                } else {
                    &self.epsilons
                };
                for algorithm in comparison_algorithms(e) {
                    if let Some(only) = &self.algorithms
                        && !only.contains(&algorithm)
                    {
                        continue;
                    }
                    for &epsilon in eps {
                        out.push(Task {
                            experiment: e,
                            n: e.n(),
                            chain,
                            kind: TaskKind::Comparison { algorithm, epsilon },
                        });
                    }
                }
            }
        }
        out
    }
}

/// The field's samplers the `field` grid runs beside the thesis' (in the registry's order).
///
/// ```
/// use dp_mcmc::experiments::field_algorithms;
/// let keys: Vec<&str> = field_algorithms().iter().map(|k| k.key()).collect();
/// assert_eq!(keys, ["dp-sgld", "dp-sgnht", "dp-fast-mh"]);
/// ```
pub fn field_algorithms() -> Vec<SamplerKind> {
    vec![
        SamplerKind::DpSgld,
        SamplerKind::DpSgnht,
        SamplerKind::DpFastMh,
    ]
}

/// The field grid: the field's samplers on the eight Table 5.1 experiments at ε ∈ {1, 2, 4, 6},
/// with the comparison's per-chain budget and start points, beside the thesis' boxes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldSpec {
    /// Experiments.
    pub experiments: Vec<Experiment>,
    /// ε of every experiment.
    pub epsilons: Vec<f64>,
    /// Chains per configuration.
    pub chains: usize,
    /// The samplers.
    pub algorithms: Vec<SamplerKind>,
}

impl FieldSpec {
    /// 8 experiments × ε ∈ {1, 2, 4, 6} × 20 chains × the field's samplers.
    ///
    /// ```
    /// use dp_mcmc::experiments::FieldSpec;
    /// assert_eq!(FieldSpec::full().tasks().len(), 8 * 4 * 20 * 3);
    /// ```
    pub fn full() -> FieldSpec {
        FieldSpec {
            experiments: Experiment::ALL.to_vec(),
            epsilons: vec![1.0, 2.0, 4.0, 6.0],
            chains: 20,
            algorithms: field_algorithms(),
        }
    }

    /// The CLI's quick grid: the d = 2 banana experiments, ε ∈ {1, 4}, 3 chains.
    pub fn quick() -> FieldSpec {
        use Experiment::*;
        FieldSpec {
            experiments: vec![EasyBanana2d, TemperedBanana2d, HardBanana2d],
            epsilons: vec![1.0, 4.0],
            chains: 3,
            algorithms: field_algorithms(),
        }
    }

    /// Every task, chain-major (as [`ComparisonSpec::tasks`]).
    pub fn tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for chain in 0..self.chains {
            for &e in &self.experiments {
                for &algorithm in &self.algorithms {
                    for &epsilon in &self.epsilons {
                        out.push(Task {
                            experiment: e,
                            n: e.n(),
                            chain,
                            kind: TaskKind::Field { algorithm, epsilon },
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_grid_matches_the_thesis_runs() {
        let tasks = ComparisonSpec::full().tasks();
        // 4 experiments × 6 algorithms + 3 × 3, each × 6 ε × 20 chains; circle 3 × 3 × 20.
        assert_eq!(tasks.len(), (4 * 6 + 3 * 3) * 6 * 20 + 3 * 3 * 20);
        let ids: std::collections::HashSet<String> = tasks.iter().map(Task::id).collect();
        assert_eq!(ids.len(), tasks.len(), "ids are unique");
        assert_eq!(tasks[0].chain, 0);
        assert_eq!(tasks.last().unwrap().chain, 19);
    }

    #[test]
    fn seeds_differ_by_task_and_grid_seed() {
        let tasks = ComparisonSpec::quick().tasks();
        let seeds: std::collections::HashSet<u64> = tasks.iter().map(|t| t.seed(0)).collect();
        assert_eq!(seeds.len(), tasks.len());
        assert_ne!(tasks[0].seed(0), tasks[0].seed(1));
    }
}
