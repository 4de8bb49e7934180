//! From a privacy budget to iterations per chain (Algorithm 2), and back to the privacy spent.
//!
//! A whole-release budget (default) composes every chain: with `C` chains of `k` iterations
//! the accountant sees `C·k` steps (DP HMC re-use: `C·(kL+1)` gradient releases). A per-chain
//! budget (the thesis experiments) gives each chain the full (ε, δ).

use serde::{Deserialize, Serialize};

use super::hmc::GradientMode;
use super::run::PrivacySpent;
use super::settings::RunSettings;
use crate::accounting::{algorithm2, pld_delta, pld_epsilon, zcdp_rho_budget};
use crate::error::{Error, Result, check};

/// Accountant of the full-data samplers (compositions of Gaussian mechanisms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PenaltyAccountant {
    /// Tight Gaussian PLD bound (Theorems 6 / 12).
    #[default]
    Pld,
    /// zCDP (Theorems 5 / 11).
    Zcdp,
}

impl PenaltyAccountant {
    fn label(self) -> &'static str {
        match self {
            PenaltyAccountant::Pld => "pld",
            PenaltyAccountant::Zcdp => "zcdp",
        }
    }
}

/// Total μ (Gaussian PLD / zCDP ρ) of `copies` chains of `k` steps, each step costing
/// `mu_step` plus `per_step` releases of `mu_extra` and `once` extra releases per chain.
#[derive(Clone, Copy, Debug)]
struct Cost {
    mu_step: f64,
    mu_extra: f64,
    per_step: f64,
    once: f64,
    copies: f64,
}

impl Cost {
    fn mu(&self, k: f64) -> f64 {
        self.copies
            * (k * (self.mu_step + self.per_step * self.mu_extra) + self.once * self.mu_extra)
    }

    /// zCDP iterations: the largest integer k with `mu(k) ≤ ρ` (clamped at 0).
    fn zcdp_iterations(&self, rho: f64) -> f64 {
        let k = (rho / self.copies - self.once * self.mu_extra)
            / (self.mu_step + self.per_step * self.mu_extra);
        k.max(0.0).floor()
    }

    fn iterations(&self, accountant: PenaltyAccountant, eps: f64, delta: f64) -> Result<usize> {
        let rho = zcdp_rho_budget(eps, delta)?;
        let low = self.zcdp_iterations(rho);
        let k = match accountant {
            PenaltyAccountant::Zcdp => low,
            PenaltyAccountant::Pld => {
                // Algorithm 2: zCDP's k is a valid lower end; δ(k) is increasing in k.
                let f = |k: f64| pld_delta(self.mu(k), eps).unwrap_or(1.0);
                algorithm2(f, delta, low, low.max(1.0))? as f64
            }
        };
        Ok(k as usize)
    }

    fn spent(&self, accountant: PenaltyAccountant, k: usize, delta: f64) -> Result<f64> {
        let mu = self.mu(k as f64);
        match accountant {
            PenaltyAccountant::Pld => pld_epsilon(mu, delta),
            PenaltyAccountant::Zcdp => Ok(mu + 2.0 * (mu * (1.0 / delta).ln()).sqrt()),
        }
    }
}

/// Iterations per chain and the privacy spent, for a cost model and run settings.
fn resolve(
    cost: Cost,
    accountant: PenaltyAccountant,
    run: &RunSettings,
    n_rows: usize,
) -> Result<(usize, PrivacySpent)> {
    let spent = |epsilon: f64, delta: f64| PrivacySpent {
        epsilon,
        delta,
        per_chain: run.per_chain_budget,
        accountant: accountant.label().to_string(),
    };
    match (run.iterations, run.budget()?) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "iterations",
            "set together with epsilon",
            "set either `.iterations(k)` or `.epsilon(e).delta(d)`, not both",
        )),
        (Some(k), None) => {
            // Fixed iterations: report ε at δ = 0.1/n (the thesis' convention).
            let delta = (0.1 / n_rows as f64).min(0.5);
            Ok((k, spent(cost.spent(accountant, k, delta)?, delta)))
        }
        (None, Some((eps, delta))) => {
            let k = cost.iterations(accountant, eps, delta)?;
            if k == 0 {
                return Err(Error::BudgetTooSmall(format!(
                    "(ε = {eps}, δ = {delta}) allows no iteration for {} chain(s); increase epsilon, the noise (tau), or use a per-chain budget",
                    run.copies()
                )));
            }
            Ok((k, spent(eps, delta)))
        }
        (None, None) => Err(Error::invalid(
            "epsilon",
            "unset",
            "set a privacy budget `.epsilon(e).delta(d)` (or a fixed `.iterations(k)`)",
        )),
    }
}

/// DP penalty: every step is a Gaussian mechanism with `μ = 1/(2τ²n)` (Theorems 5 / 6).
pub(crate) fn penalty(
    tau: f64,
    n_rows: usize,
    accountant: PenaltyAccountant,
    run: &RunSettings,
) -> Result<(usize, PrivacySpent)> {
    check::positive("tau", tau)?;
    check::at_least_one("n (data rows)", n_rows)?;
    let cost = Cost {
        mu_step: 1.0 / (2.0 * tau * tau * n_rows as f64),
        mu_extra: 0.0,
        per_step: 0.0,
        once: 0.0,
        copies: run.copies() as f64,
    };
    resolve(cost, accountant, run, n_rows)
}

/// DP HMC: per iteration one ratio release (`μ_l = 1/(2τ_l²n)`) and `L+1` (fresh) or `L`
/// (re-use, plus one before the chain) gradient releases (`μ_g = 1/(2τ_g²n)`) (Thms 11 / 12).
pub(crate) fn hmc(
    tau_l: f64,
    tau_g: f64,
    leapfrog_steps: usize,
    gradient: GradientMode,
    n_rows: usize,
    accountant: PenaltyAccountant,
    run: &RunSettings,
) -> Result<(usize, PrivacySpent)> {
    check::positive("tau_l", tau_l)?;
    check::positive("tau_g", tau_g)?;
    check::at_least_one("leapfrog_steps", leapfrog_steps)?;
    check::at_least_one("n (data rows)", n_rows)?;
    let n = n_rows as f64;
    let l = leapfrog_steps as f64;
    let (per_step, once) = match gradient {
        GradientMode::Fresh => (l + 1.0, 0.0),
        GradientMode::Reuse => (l, 1.0),
    };
    let cost = Cost {
        mu_step: 1.0 / (2.0 * tau_l * tau_l * n),
        mu_extra: 1.0 / (2.0 * tau_g * tau_g * n),
        per_step,
        once,
        copies: run.copies() as f64,
    };
    resolve(cost, accountant, run, n_rows)
}
