//! From a privacy budget to iterations per chain (Algorithm 2 via
//! [`MaxIterations`](crate::accounting::MaxIterations)), and back to the privacy spent.
//!
//! A whole-release budget (default) composes every chain: `C` chains of `k` iterations are
//! `C·k` steps of the same mechanism, so the per-chain count is `⌊K/C⌋` where `K` is
//! Algorithm 2's count for one chain (exact for homogeneous compositions). DP HMC with
//! gradient re-use adds one gradient release per chain, so that count is re-checked and
//! lowered until the composed `C·(kL+1)` releases fit. A per-chain budget (the thesis
//! experiments) gives each chain the full (ε, δ).

use super::run::PrivacySpent;
use super::settings::RunSettings;
use crate::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
use crate::accounting::{
    Accountant, BarkerRdp, Gradient, IterationBudget, MaxIterations, Method, PrivacyEvent, Rdp,
    WorBound, pld_delta, pld_epsilon, zcdp_rho_budget,
};
use crate::error::{Error, Result, check};

/// The privacy mechanism of one iteration of a DP sampler.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scheme {
    /// DP penalty with noise scale τ.
    Penalty { tau: f64 },
    /// DP HMC.
    Hmc {
        tau_l: f64,
        tau_g: f64,
        leapfrog_steps: usize,
        gradient: Gradient,
    },
    /// Minibatch DP penalty.
    Minibatch {
        tau: f64,
        batch: usize,
        thesis_compatible: bool,
    },
    /// DP Barker.
    Barker { batch: usize },
}

impl Scheme {
    /// Algorithm 2's count for one chain.
    fn single_chain(
        &self,
        n: usize,
        method: Method,
        eps: f64,
        delta: f64,
    ) -> Result<IterationBudget> {
        let n64 = n as u64;
        match *self {
            Scheme::Penalty { tau } => MaxIterations::dp_penalty(tau, n64)
                .epsilon(eps)
                .delta(delta)
                .method(method)
                .compute(),
            Scheme::Hmc {
                tau_l,
                tau_g,
                leapfrog_steps,
                gradient,
            } => {
                let l = u32::try_from(leapfrog_steps).map_err(|_| {
                    Error::invalid("leapfrog_steps", leapfrog_steps, "is too large")
                })?;
                MaxIterations::dp_hmc(tau_l, tau_g, l, n64)
                    .epsilon(eps)
                    .delta(delta)
                    .method(method)
                    .gradient(gradient)
                    .compute()
            }
            Scheme::Minibatch {
                tau,
                batch,
                thesis_compatible,
            } => MaxIterations::minibatch_penalty(tau, batch as u64, n64)
                .epsilon(eps)
                .delta(delta)
                .method(method)
                .thesis_compatible(thesis_compatible)
                .compute(),
            Scheme::Barker { batch } => MaxIterations::dp_barker(batch as u64, n64)
                .epsilon(eps)
                .delta(delta)
                .compute(),
        }
    }

    /// DP HMC's total μ (Gaussian PLD / zCDP ρ) for `copies` chains of `k` iterations.
    fn hmc_mu(
        tau_l: f64,
        tau_g: f64,
        l: f64,
        gradient: Gradient,
        n: f64,
        k: f64,
        copies: f64,
    ) -> f64 {
        let grads = match gradient {
            Gradient::Fresh => k * (l + 1.0),
            Gradient::Reuse => k * l + 1.0,
        };
        copies * (k / (2.0 * tau_l * tau_l * n) + grads / (2.0 * tau_g * tau_g * n))
    }

    /// Iterations per chain for `copies` chains sharing (ε, δ).
    fn per_chain(
        &self,
        n: usize,
        method: Method,
        eps: f64,
        delta: f64,
        copies: usize,
    ) -> Result<usize> {
        let total = self.single_chain(n, method, eps, delta)?.iterations as usize;
        let mut k = total / copies;
        if let Scheme::Hmc {
            tau_l,
            tau_g,
            leapfrog_steps,
            gradient: Gradient::Reuse,
        } = *self
            && copies > 1
        {
            {
                let rho = zcdp_rho_budget(eps, delta)?;
                let fits = |k: usize| -> Result<bool> {
                    let mu = Self::hmc_mu(
                        tau_l,
                        tau_g,
                        leapfrog_steps as f64,
                        Gradient::Reuse,
                        n as f64,
                        k as f64,
                        copies as f64,
                    );
                    Ok(match method {
                        Method::Zcdp => mu <= rho,
                        _ => pld_delta(mu, eps)? <= delta,
                    })
                };
                while k > 0 && !fits(k)? {
                    k -= 1;
                }
            }
        }
        Ok(k)
    }

    /// The accountant that evaluates this scheme under the requested `method`: the full-data
    /// samplers have zCDP or the tight Gaussian PLD, the minibatch penalty RDP or the Fourier
    /// accountant, DP Barker only Theorem 7's RDP. This is what [`PrivacySpent::accountant`]
    /// names.
    fn accountant(&self, method: Method) -> Method {
        match (*self, method) {
            (Scheme::Penalty { .. } | Scheme::Hmc { .. }, Method::Zcdp) => Method::Zcdp,
            (Scheme::Penalty { .. } | Scheme::Hmc { .. }, _) => Method::Pld,
            (Scheme::Minibatch { .. }, Method::Rdp) => Method::Rdp,
            (Scheme::Minibatch { .. }, _) => Method::Fourier,
            (Scheme::Barker { .. }, _) => Method::Rdp,
        }
    }

    /// ε at δ after `copies` chains of `k` iterations (for runs with a fixed iteration count,
    /// and for the guarantee a thesis-compatible budget really gives). The minibatch RDP
    /// bound is always the corrected Theorem 9 sum: the thesis code's sum is optimistic and
    /// is never reported as a guarantee.
    fn epsilon_spent(
        &self,
        n: usize,
        method: Method,
        k: usize,
        delta: f64,
        copies: usize,
    ) -> Result<f64> {
        let nf = n as f64;
        let steps = (k * copies) as u64;
        match *self {
            Scheme::Penalty { tau } => {
                let mu = steps as f64 / (2.0 * tau * tau * nf);
                gaussian_epsilon(method, mu, delta)
            }
            Scheme::Hmc {
                tau_l,
                tau_g,
                leapfrog_steps,
                gradient,
            } => {
                let mu = Self::hmc_mu(
                    tau_l,
                    tau_g,
                    leapfrog_steps as f64,
                    gradient,
                    nf,
                    k as f64,
                    copies as f64,
                );
                gaussian_epsilon(method, mu, delta)
            }
            Scheme::Minibatch { tau, batch, .. } => match method {
                Method::Rdp => {
                    let event = PrivacyEvent::gaussian(tau.sqrt())
                        .without_replacement(n as u64, batch as u64)
                        .repeat(steps);
                    let mut acc = Rdp::new().wor_bound(WorBound::Theorem9);
                    acc.compose(&event)?;
                    acc.epsilon(delta)
                }
                _ => FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement).epsilon(
                    delta,
                    &[SubsampledGaussian {
                        sigma: tau.sqrt(),
                        q: batch as f64 / nf,
                        steps,
                    }],
                ),
            },
            Scheme::Barker { batch } => Ok(BarkerRdp::new(batch as u64, n as u64)?
                .epsilon(steps as f64, delta)?
                .0),
        }
    }
}

fn gaussian_epsilon(method: Method, mu: f64, delta: f64) -> Result<f64> {
    match method {
        Method::Zcdp => Ok(mu + 2.0 * (mu * (1.0 / delta).ln()).sqrt()),
        _ => pld_epsilon(mu, delta),
    }
}

/// Iterations per chain and the privacy they spend, from the run settings.
pub(crate) fn resolve(
    scheme: Scheme,
    method: Method,
    run: &RunSettings,
    n_rows: usize,
) -> Result<(usize, PrivacySpent)> {
    check::at_least_one("n (data rows)", n_rows)?;
    let copies = run.copies();
    let method = scheme.accountant(method);
    let spent = |epsilon: f64, delta: f64| PrivacySpent {
        epsilon,
        delta,
        per_chain: run.per_chain_budget,
        accountant: method.label().to_string(),
    };
    match (run.iterations, run.budget()?) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "iterations",
            "set together with epsilon",
            "set either `.iterations(k)` or `.epsilon(e).delta(d)`, not both",
        )),
        (Some(k), None) => {
            // Fixed iterations: report ε at δ = 0.1/n (the thesis' convention). Where the
            // accountant cannot evaluate the composition (e.g. the Fourier accountant at a
            // vanishing noise level) no finite guarantee is claimed: ε = ∞ (pessimistic).
            let delta = (0.1 / n_rows as f64).min(0.5);
            let eps = scheme
                .epsilon_spent(n_rows, method, k, delta, copies)
                .unwrap_or(f64::INFINITY);
            Ok((k, spent(eps, delta)))
        }
        (None, Some((eps, delta))) => {
            let k = scheme.per_chain(n_rows, method, eps, delta, copies)?;
            if k == 0 {
                return Err(Error::BudgetTooSmall(format!(
                    "(ε = {eps}, δ = {delta}) allows no iteration for {copies} chain(s) sharing the budget; \
                     increase epsilon or the noise (tau), use fewer chains, or a per-chain budget"
                )));
            }
            if let Scheme::Minibatch {
                thesis_compatible: true,
                ..
            } = scheme
                && method == Method::Rdp
            {
                // The thesis code's Theorem 8 sum chose k; the guarantee those k iterations
                // really have is the corrected bound's ε (larger than the target).
                let corrected = scheme.epsilon_spent(n_rows, method, k, delta, copies)?;
                return Ok((k, spent(corrected.max(eps), delta)));
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
