//! Iterations and privacy spent for samplers with discrete Gaussian noise: every step is a
//! zCDP mechanism (CKS20), composed by adding ρ and converted with the CKS20 bound
//! ([`zcdp_max_iterations`], [`cks_zcdp_epsilon`]). Same run-settings rules as
//! [`resolve`](super::budget::resolve): a whole-release budget composes all chains.

use super::run::PrivacySpent;
use super::settings::RunSettings;
use crate::accounting::{cks_zcdp_epsilon, zcdp_max_iterations};
use crate::error::{Error, Result, check};

/// Label of this accountant in [`PrivacySpent::accountant`].
pub(crate) const LABEL: &str = "zCDP-CKS20 (discrete Gaussian)";

/// `(iterations per chain, privacy spent)` for steps of `rho_iter` each plus `rho_once` per
/// chain.
pub(crate) fn resolve_zcdp(
    rho_iter: f64,
    rho_once: f64,
    run: &RunSettings,
    n_rows: usize,
) -> Result<(usize, PrivacySpent)> {
    check::at_least_one("n (data rows)", n_rows)?;
    let copies = run.copies();
    let spent = |epsilon: f64, delta: f64| PrivacySpent {
        epsilon,
        delta,
        per_chain: run.per_chain_budget,
        accountant: LABEL.to_string(),
    };
    match (run.iterations, run.budget()?) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "iterations",
            "set together with epsilon",
            "set either `.iterations(k)` or `.epsilon(e).delta(d)`, not both",
        )),
        (Some(k), None) => {
            let delta = (0.1 / n_rows as f64).min(0.5);
            let rho = copies as f64 * (k as f64 * rho_iter + rho_once);
            Ok((k, spent(cks_zcdp_epsilon(rho, delta)?, delta)))
        }
        (None, Some((eps, delta))) => {
            let k = zcdp_max_iterations(rho_iter, rho_once, copies, eps, delta)?;
            if k == 0 {
                return Err(Error::BudgetTooSmall(format!(
                    "(ε = {eps}, δ = {delta}) allows no iteration for {copies} chain(s) sharing the budget; \
                     increase epsilon or the noise (tau), use fewer chains, or a per-chain budget"
                )));
            }
            let k = usize::try_from(k)
                .map_err(|_| Error::invalid("epsilon", eps, "allows too many iterations"))?;
            Ok((k, spent(eps, delta)))
        }
        (None, None) => Err(Error::invalid(
            "epsilon",
            "unset",
            "set a privacy budget `.epsilon(e).delta(d)` (or a fixed `.iterations(k)`)",
        )),
    }
}
