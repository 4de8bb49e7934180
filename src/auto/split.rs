//! The budget split of an `auto` run: the Gaussian releases before the chains (DP initial
//! point, DP clip bounds) take fixed shares of the budget, the chains the rest.
//!
//! Shares are fractions of the run's total Gaussian cost `μ = Σ_i 1/(2σ_i²)` (the `μ` of
//! [`crate::accounting::pld_delta`], additive over Gaussian releases, and exact: a composition
//! of Gaussian mechanisms is the Gaussian mechanism with the summed `μ`). The total `μ` is the
//! largest one whose tight δ(ε) stays within the budget. The chains' count then comes from
//! Algorithm 2 on top of the earlier releases, with the sampler's own accountant, so whatever
//! the shares, the composed guarantee never exceeds (ε, δ).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Shares of the budget spent before the chains (fractions of the total Gaussian `μ`).
///
/// ```
/// use dp_mcmc::auto::BudgetSplit;
/// let s = BudgetSplit::default();
/// assert_eq!((s.initialisation, s.clip_bound), (0.2, 0.05));
/// assert!(BudgetSplit { initialisation: 0.7, clip_bound: 0.4 }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetSplit {
    /// The DP initial point (noisy clipped Newton steps and their clip bounds): default 0.2.
    pub initialisation: f64,
    /// Each DP clip bound (a DP quantile of per-row gradient norms), when no public bound is
    /// declared: default 0.05.
    pub clip_bound: f64,
}

impl Default for BudgetSplit {
    fn default() -> Self {
        BudgetSplit {
            initialisation: 0.2,
            clip_bound: 0.05,
        }
    }
}

impl BudgetSplit {
    /// Each share in [0, 1) and at most 0.8 together (up to two clip bounds are counted), so
    /// the chains keep at least a fifth of the budget.
    ///
    /// # Errors
    /// A share outside [0, 1), or shares that leave the chains less than 20 %.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("split.initialisation", self.initialisation),
            ("split.clip_bound", self.clip_bound),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(Error::invalid(
                    name,
                    v,
                    "must be a share of the budget in [0, 1)",
                ));
            }
        }
        if self.initialisation + 2.0 * self.clip_bound > 0.8 {
            return Err(Error::invalid(
                "split",
                format!("{self:?}"),
                "initialisation + 2 × clip_bound must be at most 0.8: leave the chains at least \
                 a fifth of the budget",
            ));
        }
        Ok(())
    }
}
