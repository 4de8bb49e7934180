//! What a DP sampler's settings allow: [`IterationBudget`], the answer of every builder's
//! `budget(n)` (thesis Algorithm 2 on the sampler's own releases and accountant), and DP HMC's
//! [`Gradient`] schedule, which sets its releases.
//!
//! ```
//! use dp_mcmc::samplers::RunSetters;
//! use dp_mcmc::accounting::AccountantKind;
//! use dp_mcmc::samplers::DpPenalty;
//! // thesis code (THESIS-NOTES §4): easy-2d dpps, ε = 1, δ = 1e-6 → 56 (Thm 6), 34 (Thm 5)
//! let s = DpPenalty::builder().tau(0.1).chains(1).epsilon(1.0).delta(1e-6);
//! let b = s.budget(100_000)?;
//! assert_eq!((b.iterations, b.achieved_quantity.as_str()), (56, "delta"));
//! assert!(b.achieved <= 1e-6);
//! assert_eq!(s.clone().accountant(AccountantKind::Zcdp).budget(100_000)?.iterations, 34);
//! // four chains share one budget: each gets a quarter of the releases
//! assert_eq!(s.clone().chains(4).budget(100_000)?.iterations, 14);
//! // a budget that allows no iteration answers 0 (a run with it is an error)
//! assert_eq!(s.clone().epsilon(1e-3).budget(100_000)?.iterations, 0);
//! assert!(s.clone().tau(-0.1).budget(100_000).is_err());
//! # Ok::<(), dp_mcmc::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use super::privacy::{Plan, PrivacyCost};
use super::run::PrivacySpent;
use super::settings::{Budget, RunSettings};
use crate::accounting::AccountantKind;
use crate::error::Result;

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

/// How many iterations a DP sampler's budget allows, and what they spend: the answer of
/// `budget(n)`. Every count is rounded down (pessimistic); `achieved` re-evaluates the
/// accountant at the count, so `achieved ≤ target` is visible.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationBudget {
    /// Iterations per chain (0 if the budget allows none; a run then fails).
    pub iterations: usize,
    /// The sampler family's registry key (`dp-penalty`, `dp-hmc`, ...).
    pub algorithm: String,
    /// The accountant that counted the iterations.
    pub method: AccountantKind,
    /// Target ε (for a fixed `.iterations(k)`: the ε they spend).
    pub epsilon: f64,
    /// Target δ (for a fixed `.iterations(k)`: 0.1/n).
    pub delta: f64,
    /// The counting accountant at `iterations`: δ(ε) for PLD/Fourier, ε(δ) for zCDP/RDP. Never
    /// above the target.
    pub achieved: f64,
    /// What `achieved` is: `"delta"` or `"epsilon"`.
    pub achieved_quantity: String,
    /// The Rényi order at which the budget is attained (RDP accountants only).
    pub optimal_order: Option<f64>,
    /// Whether the count follows the thesis code's (optimistic) bound; `spent` then holds the
    /// corrected guarantee.
    pub thesis_compatible: bool,
    /// The privacy parameters of the sampler and the rows (`tau`, `batch_size`, ..., `n`).
    pub params: Vec<(String, f64)>,
    /// The guarantee a run with these settings carries (its ledger is filled by the run).
    pub spent: PrivacySpent,
}

/// The budget answer of a plan made for `cost` (with `key`, the family's registry key).
pub(crate) fn of_plan(
    cost: &dyn PrivacyCost,
    key: &str,
    run: &RunSettings,
    plan: &Plan,
    n_rows: usize,
) -> Result<IterationBudget> {
    let n = n_rows as u64;
    let spent = plan.planned().clone();
    let k = plan.iterations as u64;
    let (epsilon, delta, achieved, quantity, order) = match run.budget {
        Budget::Iterations(_) => (spent.epsilon, spent.delta, spent.epsilon, "epsilon", None),
        _ => {
            let (eps, delta) = run
                .privacy_budget()?
                .unwrap_or((spent.epsilon, spent.delta));
            let m = plan.measure_at_count(cost, eps, delta)?;
            let order = cost.reported_order(n, (eps, delta), k, run.copies() as u64)?;
            (eps, delta, m.value(), m.quantity(), order)
        }
    };
    let mut params: Vec<(String, f64)> = cost
        .budget_parameters()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    params.push(("n".into(), n_rows as f64));
    Ok(IterationBudget {
        iterations: plan.iterations,
        algorithm: key.to_string(),
        method: cost.method(),
        epsilon,
        delta,
        achieved,
        achieved_quantity: quantity.into(),
        optimal_order: order,
        thesis_compatible: cost.thesis_compatible(),
        params,
        spent,
    })
}
