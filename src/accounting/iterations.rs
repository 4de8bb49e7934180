//! The vocabulary of iteration budgets: the accountant [`Method`], the [`Algorithm`], DP HMC's
//! [`Gradient`] schedule and the [`IterationBudget`] result that
//! [`MaxIterations`](crate::samplers::MaxIterations) returns.

use serde::{Deserialize, Serialize};

/// Accountant used to turn the privacy budget into a number of iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// zCDP + thesis Theorem 1 conversion (Theorems 5, 11).
    Zcdp,
    /// Tight Gaussian privacy loss distribution ("ADP" in the thesis; Theorems 6, 12).
    Pld,
    /// Rényi DP (Theorem 8 for the minibatch penalty, Theorem 7 for DP Barker).
    Rdp,
    /// DP Barker only: Rényi DP with the exact per-step divergence of the Barker test over its
    /// feasible family instead of Theorem 7's bound (`rdp-exact`; same amplification, orders
    /// and conversion; [`BarkerBound::Exact`](super::BarkerBound::Exact)).
    RdpExact,
    /// Fourier accountant of Koskela et al. (minibatch penalty; substitute relation).
    Fourier,
}

impl Method {
    /// Label used in tables and plots: "zCDP", "ADP", "RDP", "RDP-exact", "Fourier".
    pub fn label(self) -> &'static str {
        match self {
            Method::Zcdp => "zCDP",
            Method::Pld => "ADP",
            Method::Rdp => "RDP",
            Method::RdpExact => "RDP-exact",
            Method::Fourier => "Fourier",
        }
    }
}

/// The sampler whose iterations are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// DP penalty (full data).
    DpPenalty,
    /// DP HMC.
    DpHmc,
    /// Minibatch DP penalty.
    MinibatchPenalty,
    /// DP Barker.
    DpBarker,
}

impl Algorithm {
    /// Kebab-case name as in the CLI (`dp-penalty`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::DpPenalty => "dp-penalty",
            Algorithm::DpHmc => "dp-hmc",
            Algorithm::MinibatchPenalty => "minibatch-penalty",
            Algorithm::DpBarker => "dp-barker",
        }
    }
}

/// Gradient schedule of DP HMC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Gradient {
    /// A fresh noisy gradient at the start of every iteration: `k(L+1)` gradient releases
    /// (final thesis; the default, because its proposal is provably reversible).
    #[default]
    Fresh,
    /// The March-2021 thesis' gradient re-use: `kL + 1` gradient releases.
    Reuse,
}

/// Result of an iteration-budget computation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationBudget {
    /// Largest number of iterations within the budget.
    pub iterations: u64,
    /// The sampler.
    pub algorithm: Algorithm,
    /// The accountant used.
    pub method: Method,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ.
    pub delta: f64,
    /// The accountant at `iterations`: δ(ε) for PLD/Fourier, ε(δ) for zCDP/RDP. Never above the
    /// target.
    pub achieved: f64,
    /// What `achieved` is: `"delta"` or `"epsilon"`.
    pub achieved_quantity: String,
    /// RDP order at which the budget is attained (RDP methods only).
    pub optimal_order: Option<f64>,
    /// Whether the thesis code's (optimistic) behaviour was reproduced.
    pub thesis_compatible: bool,
    /// The algorithm's parameters (name, value).
    pub params: Vec<(String, f64)>,
}
