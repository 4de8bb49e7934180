//! `MaxIterations`: how many iterations each DP sampler may run for an (ε, δ) budget
//! (thesis Algorithm 2 and Theorems 5–8, 11, 12), as notebook-friendly builders.
//!
//! Setters never fail; [`DpPenaltyIterations::compute`] (and the others) validate everything
//! once and return an [`IterationBudget`]. Every count is rounded down (pessimistic), and
//! `achieved` re-evaluates the accountant at the returned count, so `achieved ≤ target` is
//! visible in the result.

use super::algorithm2::{beyond_cap, capped, within_cap};
use super::barker::BarkerRdp;
use super::fourier::{FourierAccountant, FourierRelation};
use super::gaussian::pld_delta_unchecked;
use super::rdp::{thesis_code_thm8, wbk_thm9};
use super::special::floor_pessimistic;
use super::zcdp::{thm5_iterations, thm11_iterations};
use crate::error::{Error, Result, check};
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
    /// Fourier accountant of Koskela et al. (minibatch penalty; substitute relation).
    Fourier,
}

impl Method {
    /// Label used in tables and plots: "zCDP", "ADP", "RDP", "Fourier".
    pub fn label(self) -> &'static str {
        match self {
            Method::Zcdp => "zCDP",
            Method::Pld => "ADP",
            Method::Rdp => "RDP",
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

fn check_n(n: u64) -> Result<f64> {
    if n == 0 {
        return Err(Error::invalid("n", n, "must be at least 1"));
    }
    Ok(n as f64)
}

fn check_budget(epsilon: f64, delta: Option<f64>, n: f64) -> Result<(f64, f64)> {
    let eps = check::positive("epsilon", epsilon)?;
    let delta = match delta {
        Some(d) => check::delta("delta", d)?,
        None => 0.1 / n,
    };
    check::delta("delta", delta)?;
    Ok((eps, delta))
}

fn unsupported(method: Method, algorithm: Algorithm, allowed: &str) -> Error {
    Error::invalid(
        "accountant",
        method.label(),
        format!("{} supports {allowed}", algorithm.name()),
    )
}

/// Entry point of the iteration-budget builders.
#[derive(Clone, Copy, Debug)]
pub struct MaxIterations;

impl MaxIterations {
    /// DP penalty with noise parameter τ (σ = τ√n, α = ½) on `n` rows.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{MaxIterations, Method};
    /// // thesis code (THESIS-NOTES §4): easy-2d dpps, ε = 1, δ = 1e-6 → 56 (Thm 6), 34 (Thm 5)
    /// let b = MaxIterations::dp_penalty(0.1, 100_000).epsilon(1.0).compute()?;
    /// assert_eq!(b.iterations, 56);
    /// let z = MaxIterations::dp_penalty(0.1, 100_000).epsilon(1.0).method(Method::Zcdp).compute()?;
    /// assert_eq!(z.iterations, 34);
    /// assert!(MaxIterations::dp_penalty(-0.1, 100_000).epsilon(1.0).compute().is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn dp_penalty(tau: f64, n: u64) -> DpPenaltyIterations {
        DpPenaltyIterations {
            tau,
            n,
            epsilon: f64::NAN,
            delta: None,
            method: Method::Pld,
        }
    }

    /// DP HMC with likelihood-ratio noise τ_l, gradient noise τ_g and `leapfrog_steps` L.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Gradient, MaxIterations};
    /// // thesis code (THESIS-NOTES §3): easy-2d hmc, ε = 4 → 416 (fresh), 431 (re-use)
    /// let f = MaxIterations::dp_hmc(0.1, 0.4, 10, 100_000).epsilon(4.0).compute()?;
    /// assert_eq!(f.iterations, 416);
    /// let r = MaxIterations::dp_hmc(0.1, 0.4, 10, 100_000).epsilon(4.0)
    ///     .gradient(Gradient::Reuse).compute()?;
    /// assert_eq!(r.iterations, 431);
    /// assert!(MaxIterations::dp_hmc(0.1, 0.4, 10, 0).epsilon(4.0).compute().is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn dp_hmc(tau_l: f64, tau_g: f64, leapfrog_steps: u32, n: u64) -> DpHmcIterations {
        DpHmcIterations {
            tau_l,
            tau_g,
            leapfrog_steps,
            n,
            epsilon: f64::NAN,
            delta: None,
            method: Method::Pld,
            gradient: Gradient::Fresh,
        }
    }

    /// Minibatch DP penalty with noise parameter τ, batch size b out of n rows.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{MaxIterations, Method};
    /// // THESIS-NOTES §6: 272 (Theorem 8), 329 (thesis code)
    /// let b = MaxIterations::minibatch_penalty(0.7, 1000, 100_000)
    ///     .epsilon(4.0).method(Method::Rdp).compute()?;
    /// assert_eq!(b.iterations, 272);
    /// let t = MaxIterations::minibatch_penalty(0.7, 1000, 100_000)
    ///     .epsilon(4.0).method(Method::Rdp).thesis_compatible(true).compute()?;
    /// assert_eq!(t.iterations, 329);
    /// assert!(MaxIterations::minibatch_penalty(0.7, 1000, 10).epsilon(4.0).compute().is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn minibatch_penalty(tau: f64, batch_size: u64, n: u64) -> MinibatchPenaltyIterations {
        MinibatchPenaltyIterations {
            tau,
            batch_size,
            n,
            epsilon: f64::NAN,
            delta: None,
            method: Method::Fourier,
            thesis_compatible: false,
            fourier: None,
        }
    }

    /// DP Barker with batch size b out of n rows (Theorem 7).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::MaxIterations;
    /// // thesis code (THESIS-NOTES §16): easy-2d barker, ε = 1 → 106
    /// assert_eq!(MaxIterations::dp_barker(1300, 100_000).epsilon(1.0).compute()?.iterations, 106);
    /// assert!(MaxIterations::dp_barker(1300, 100_000).epsilon(0.0).compute().is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn dp_barker(batch_size: u64, n: u64) -> DpBarkerIterations {
        DpBarkerIterations {
            batch_size,
            n,
            epsilon: f64::NAN,
            delta: None,
        }
    }
}

macro_rules! budget_setters {
    () => {
        /// Target ε (> 0). Required.
        #[must_use]
        pub fn epsilon(mut self, epsilon: f64) -> Self {
            self.epsilon = epsilon;
            self
        }
        /// Target δ in (0, 1). Default: 0.1/n, as in every thesis experiment.
        #[must_use]
        pub fn delta(mut self, delta: f64) -> Self {
            self.delta = Some(delta);
            self
        }
    };
}

/// Builder for DP penalty iterations (see [`MaxIterations::dp_penalty`]).
#[derive(Clone, Debug)]
pub struct DpPenaltyIterations {
    tau: f64,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
    method: Method,
}

impl DpPenaltyIterations {
    budget_setters!();

    /// `Method::Pld` (Theorem 6 + Algorithm 2, default) or `Method::Zcdp` (Theorem 5).
    #[must_use]
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Validate and compute.
    ///
    /// # Errors
    /// ε ≤ 0 or NaN, δ ∉ (0,1), τ ≤ 0, n = 0, or a method other than zCDP/PLD.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n = check_n(self.n)?;
        let tau = check::positive("tau", self.tau)?;
        let (eps, delta) = check_budget(self.epsilon, self.delta, n)?;
        let alg = Algorithm::DpPenalty;
        let mu = 1.0 / (2.0 * tau * tau * n);
        let zk = thm5_iterations(eps, delta, tau, n);
        let (k, achieved, q) = match self.method {
            Method::Zcdp => {
                let zk = within_cap(zk, eps)?;
                let rho = zk as f64 * mu;
                (zk, super::zcdp::zcdp_epsilon(rho, delta), "epsilon")
            }
            Method::Pld => {
                let low = within_cap(zk, eps)? as f64;
                let k = capped(
                    |x| Ok(pld_delta_unchecked(x * mu, eps)),
                    delta,
                    low,
                    low.max(1.0),
                )?
                .ok_or_else(|| beyond_cap(eps))?;
                (k, pld_delta_unchecked(k as f64 * mu, eps), "delta")
            }
            m => return Err(unsupported(m, alg, "zcdp or pld")),
        };
        Ok(IterationBudget {
            iterations: k,
            algorithm: alg,
            method: self.method,
            epsilon: eps,
            delta,
            achieved,
            achieved_quantity: q.into(),
            optimal_order: None,
            thesis_compatible: false,
            params: vec![("tau".into(), tau), ("n".into(), n)],
        })
    }
}

/// Builder for DP HMC iterations (see [`MaxIterations::dp_hmc`]).
#[derive(Clone, Debug)]
pub struct DpHmcIterations {
    tau_l: f64,
    tau_g: f64,
    leapfrog_steps: u32,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
    method: Method,
    gradient: Gradient,
}

impl DpHmcIterations {
    budget_setters!();

    /// `Method::Pld` (Theorem 12 + Algorithm 2, default) or `Method::Zcdp` (Theorem 11).
    #[must_use]
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Gradient schedule (default [`Gradient::Fresh`]).
    #[must_use]
    pub fn gradient(mut self, gradient: Gradient) -> Self {
        self.gradient = gradient;
        self
    }

    /// Validate and compute.
    ///
    /// # Errors
    /// ε ≤ 0 or NaN, δ ∉ (0,1), τ_l or τ_g ≤ 0, L = 0, n = 0, or a method other than zCDP/PLD.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n = check_n(self.n)?;
        let tau_l = check::positive("tau_l", self.tau_l)?;
        let tau_g = check::positive("tau_g", self.tau_g)?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", 0, "must be at least 1"));
        }
        let l = f64::from(self.leapfrog_steps);
        let (eps, delta) = check_budget(self.epsilon, self.delta, n)?;
        let alg = Algorithm::DpHmc;
        // gradient releases: per iteration and once (Theorem 11/12, THESIS-NOTES §3)
        let (per, extra) = match self.gradient {
            Gradient::Fresh => (l + 1.0, 0.0),
            Gradient::Reuse => (l, 1.0),
        };
        let mu_l = 1.0 / (2.0 * tau_l * tau_l * n);
        let mu_g = 1.0 / (2.0 * tau_g * tau_g * n);
        let mu = |k: f64| k * mu_l + (k * per + extra) * mu_g;
        let zk = thm11_iterations(eps, delta, tau_l, tau_g, n, per, extra);
        let (k, achieved, q) = match self.method {
            Method::Zcdp => {
                let zk = within_cap(zk, eps)?;
                (
                    zk,
                    super::zcdp::zcdp_epsilon(mu(zk as f64), delta),
                    "epsilon",
                )
            }
            Method::Pld => {
                let low = within_cap(zk, eps)? as f64;
                let k = capped(
                    |x| Ok(pld_delta_unchecked(mu(x), eps)),
                    delta,
                    low,
                    low.max(1.0),
                )?
                .ok_or_else(|| beyond_cap(eps))?;
                (k, pld_delta_unchecked(mu(k as f64), eps), "delta")
            }
            m => return Err(unsupported(m, alg, "zcdp or pld")),
        };
        Ok(IterationBudget {
            iterations: k,
            algorithm: alg,
            method: self.method,
            epsilon: eps,
            delta,
            achieved,
            achieved_quantity: q.into(),
            optimal_order: None,
            thesis_compatible: false, // both gradient schedules are sound; see `params`
            params: vec![
                ("tau_l".into(), tau_l),
                ("tau_g".into(), tau_g),
                ("leapfrog_steps".into(), l),
                ("gradient_releases_per_iteration".into(), per),
                ("gradient_releases_once".into(), extra),
                ("n".into(), n),
            ],
        })
    }
}

/// Builder for minibatch DP penalty iterations (see [`MaxIterations::minibatch_penalty`]).
#[derive(Clone, Debug)]
pub struct MinibatchPenaltyIterations {
    tau: f64,
    batch_size: u64,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
    method: Method,
    thesis_compatible: bool,
    fourier: Option<FourierAccountant>,
}

impl MinibatchPenaltyIterations {
    budget_setters!();

    /// The Fourier accountant to use (default: the thesis' grid nx = 1e6, L = 20). Pass a clone
    /// of one accountant to share its cached spectra across many budgets (e.g. an ε grid).
    /// Must use [`FourierRelation::SubstituteWithoutReplacement`] (checked by `compute`).
    #[must_use]
    pub fn fourier_accountant(mut self, fa: FourierAccountant) -> Self {
        self.fourier = Some(fa);
        self
    }

    /// `Method::Fourier` (default; the thesis' call `get_delta_S(ε, σ = √τ, q = b/n, k)`, which
    /// charges the statistic's sensitivity c as the pair's per-record bound: conservative,
    /// THESIS-NOTES §7) or `Method::Rdp` (Theorem 8, closed form per order α ∈ [2, 199]).
    #[must_use]
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Reproduce the thesis code's Theorem 8 sum, which stops at `j = α−1` (optimistic; RDP
    /// only). Default `false` (sum to `j = α`, as the theorem).
    #[must_use]
    pub fn thesis_compatible(mut self, yes: bool) -> Self {
        self.thesis_compatible = yes;
        self
    }

    /// Validate and compute.
    ///
    /// # Errors
    /// ε ≤ 0 or NaN, δ ∉ (0,1), τ ≤ 0, n = 0, batch_size = 0 or > n, or a method other than
    /// Fourier/RDP.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n = check_n(self.n)?;
        let tau = check::positive("tau", self.tau)?;
        if self.batch_size == 0 || self.batch_size > self.n {
            return Err(Error::invalid(
                "batch_size",
                self.batch_size,
                format!("must be in 1..={}", self.n),
            ));
        }
        let b = self.batch_size as f64;
        let q = b / n;
        let (eps, delta) = check_budget(self.epsilon, self.delta, n)?;
        let alg = Algorithm::MinibatchPenalty;
        let params = vec![
            ("tau".into(), tau),
            ("batch_size".into(), b),
            ("n".into(), n),
        ];
        match self.method {
            Method::Rdp => {
                let thesis = self.thesis_compatible;
                let step = |alpha: u32| {
                    if thesis {
                        thesis_code_thm8(q, alpha, tau)
                    } else {
                        wbk_thm9(q, alpha, alpha, |j| j / (2.0 * tau))
                    }
                };
                let steps: Vec<(f64, f64)> = (2..200u32).map(|a| (f64::from(a), step(a))).collect();
                let ln_inv_d = (1.0 / delta).ln();
                // max over α of the per-order count; ties keep the smallest α (numpy argmax)
                let mut best = (0u64, 2.0);
                for (i, &(a, e)) in steps.iter().enumerate() {
                    let k = floor_pessimistic((eps - ln_inv_d / (a - 1.0)) / e);
                    if i == 0 || k > best.0 {
                        best = (k, a);
                    }
                }
                within_cap(best.0, eps)?;
                let k = best.0 as f64;
                let achieved = steps
                    .iter()
                    .map(|&(a, e)| if k == 0.0 { 0.0 } else { k * e } + ln_inv_d / (a - 1.0))
                    .fold(f64::INFINITY, f64::min);
                Ok(IterationBudget {
                    iterations: best.0,
                    algorithm: alg,
                    method: Method::Rdp,
                    epsilon: eps,
                    delta,
                    achieved,
                    achieved_quantity: "epsilon".into(),
                    optimal_order: Some(best.1),
                    thesis_compatible: thesis,
                    params,
                })
            }
            Method::Fourier => {
                let fa = match &self.fourier {
                    Some(fa) if fa.relation() != FourierRelation::SubstituteWithoutReplacement => {
                        return Err(Error::invalid(
                            "fourier_accountant",
                            format!("{:?}", fa.relation()),
                            "the minibatch penalty samples without replacement: use \
                             FourierRelation::SubstituteWithoutReplacement",
                        ));
                    }
                    Some(fa) => fa.clone(),
                    None => FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement),
                };
                let (k, achieved) =
                    super::fourier_events::minibatch_fourier(&fa, tau, q, eps, delta)?;
                Ok(IterationBudget {
                    iterations: k,
                    algorithm: alg,
                    method: Method::Fourier,
                    epsilon: eps,
                    delta,
                    achieved,
                    achieved_quantity: "delta".into(),
                    optimal_order: None,
                    thesis_compatible: self.thesis_compatible,
                    params,
                })
            }
            m => Err(unsupported(m, alg, "fourier or rdp")),
        }
    }
}

/// Builder for DP Barker iterations (see [`MaxIterations::dp_barker`]).
#[derive(Clone, Debug)]
pub struct DpBarkerIterations {
    batch_size: u64,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
}

impl DpBarkerIterations {
    budget_setters!();

    /// Validate and compute (Theorem 7 RDP, Algorithm 2 on ε(k) with low 0, high 1024).
    ///
    /// # Errors
    /// ε ≤ 0 or NaN, δ ∉ (0,1), n = 0, batch_size < 20 or > n.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n = check_n(self.n)?;
        let (eps, delta) = check_budget(self.epsilon, self.delta, n)?;
        let acc = BarkerRdp::new(self.batch_size, self.n)?;
        let k = capped(|x| Ok(acc.epsilon_unchecked(x, delta).0), eps, 0.0, 1024.0)?
            .ok_or_else(|| beyond_cap(eps))?;
        let (achieved, order) = acc.epsilon_unchecked(k as f64, delta);
        Ok(IterationBudget {
            iterations: k,
            algorithm: Algorithm::DpBarker,
            method: Method::Rdp,
            epsilon: eps,
            delta,
            achieved,
            achieved_quantity: "epsilon".into(),
            optimal_order: Some(order),
            thesis_compatible: false,
            params: vec![
                ("batch_size".into(), self.batch_size as f64),
                ("n".into(), n),
            ],
        })
    }
}
