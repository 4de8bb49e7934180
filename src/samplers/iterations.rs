//! `MaxIterations`: how many iterations each DP sampler may run for an (ε, δ) budget
//! (thesis Algorithm 2 and Theorems 5–8, 11, 12), as notebook-friendly builders.
//!
//! Each builder describes its sampler with the sampler's own builder ([`DpPenalty`],
//! [`DpHmc`], [`MinibatchPenalty`], [`DpBarker`]), so the count comes from the very releases
//! and accountant ([`PrivacyCost`]) a run of that sampler is charged, through the one
//! Algorithm 2 ([`Accountant::max_iterations`]). Setters never fail; `compute` validates
//! everything once and returns an [`IterationBudget`]. Every count is rounded down
//! (pessimistic), and `achieved` re-evaluates the accountant at the returned count, so
//! `achieved ≤ target` is visible in the result.

use super::privacy::PrivacyCost;
use super::{DpBarker, DpHmc, DpPenalty, MinibatchPenalty};
use crate::accounting::algorithm2::beyond_cap;
use crate::accounting::fourier::{FourierAccountant, FourierRelation};
use crate::accounting::{
    Accountant, Algorithm, BarkerBound, Fourier, Gradient, IterationBudget, Method, Rdp, WorBound,
};
use crate::error::{Error, Result, check};

/// Entry point of the iteration-budget builders.
#[derive(Clone, Copy, Debug)]
pub struct MaxIterations;

impl MaxIterations {
    /// DP penalty with noise parameter τ (σ = τ√n, α = ½) on `n` rows.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::Method;
    /// use dp_mcmc::samplers::MaxIterations;
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
    /// use dp_mcmc::accounting::Gradient;
    /// use dp_mcmc::samplers::MaxIterations;
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
    /// use dp_mcmc::accounting::Method;
    /// use dp_mcmc::samplers::MaxIterations;
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

    /// DP Barker with batch size b out of n rows (Theorem 7; `.method(Method::RdpExact)`: the
    /// exact per-step divergence; `.method(Method::Pld)`: the certified PLD of the feasible
    /// family, the largest count of the three).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::Method;
    /// use dp_mcmc::samplers::MaxIterations;
    /// // thesis code (THESIS-NOTES §16): easy-2d barker, ε = 1 → 106
    /// assert_eq!(MaxIterations::dp_barker(1300, 100_000).epsilon(1.0).compute()?.iterations, 106);
    /// let exact = MaxIterations::dp_barker(1300, 100_000).epsilon(1.0).method(Method::RdpExact);
    /// assert!(exact.compute()?.iterations > 8 * 106);
    /// assert!(MaxIterations::dp_barker(1300, 100_000).epsilon(0.0).compute().is_err());
    /// let pld = MaxIterations::dp_barker(1300, 100_000).epsilon(1.0).method(Method::Pld).compute()?;
    /// assert!(pld.iterations >= exact.compute()?.iterations);
    /// assert_eq!(pld.optimal_order, None);
    /// assert!(MaxIterations::dp_barker(1300, 100_000).epsilon(1.0).method(Method::Zcdp).compute().is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn dp_barker(batch_size: u64, n: u64) -> DpBarkerIterations {
        DpBarkerIterations {
            batch_size,
            n,
            epsilon: f64::NAN,
            delta: None,
            method: Method::Rdp,
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

/// `n` as a row count the samplers accept.
fn check_n(n: u64) -> Result<usize> {
    if n == 0 {
        return Err(Error::invalid("n", n, "must be at least 1"));
    }
    usize::try_from(n).map_err(|_| Error::invalid("n", n, "is too large for this machine"))
}

/// The validated (ε, δ); δ defaults to 0.1/n.
fn check_budget(epsilon: f64, delta: Option<f64>, n: u64) -> Result<(f64, f64)> {
    let eps = check::positive("epsilon", epsilon)?;
    let delta = check::delta("delta", delta.unwrap_or(0.1 / n as f64))?;
    Ok((eps, delta))
}

fn unsupported(method: Method, algorithm: Algorithm, allowed: &str) -> Error {
    Error::invalid(
        "accountant",
        method.label(),
        format!("{} supports {allowed}", algorithm.name()),
    )
}

/// One chain's iterations for (ε, δ) under `accountant`, and the accountant at that count.
struct Counted {
    iterations: u64,
    achieved: f64,
    quantity: &'static str,
}

fn count(
    cost: &dyn PrivacyCost,
    accountant: Box<dyn Accountant>,
    n: u64,
    eps: f64,
    delta: f64,
) -> Result<Counted> {
    let releases = cost.releases(n)?;
    let k = accountant
        .max_iterations(&releases, 1, eps, delta)?
        .ok_or_else(|| beyond_cap(eps))?;
    let mut at_count = accountant;
    at_count.compose(&releases.for_chain(k))?;
    let measure = at_count.budget_measure(eps, delta)?;
    Ok(Counted {
        iterations: k,
        achieved: measure.value(),
        quantity: measure.quantity(),
    })
}

#[allow(clippy::too_many_arguments)]
fn budget(
    c: Counted,
    algorithm: Algorithm,
    method: Method,
    epsilon: f64,
    delta: f64,
    optimal_order: Option<f64>,
    thesis_compatible: bool,
    params: Vec<(&str, f64)>,
) -> IterationBudget {
    IterationBudget {
        iterations: c.iterations,
        algorithm,
        method,
        epsilon,
        delta,
        achieved: c.achieved,
        achieved_quantity: c.quantity.into(),
        optimal_order,
        thesis_compatible,
        params: params
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

/// The budget of a full-data sampler (DP penalty, DP HMC): zCDP or the tight Gaussian PLD.
fn full_data(
    sampler: &dyn PrivacyCost,
    algorithm: Algorithm,
    method: Method,
    (n, epsilon, delta): (u64, f64, Option<f64>),
    params: Vec<(&str, f64)>,
) -> Result<IterationBudget> {
    let (eps, delta) = check_budget(epsilon, delta, n)?;
    if !matches!(method, Method::Zcdp | Method::Pld) {
        return Err(unsupported(method, algorithm, "zcdp or pld"));
    }
    let c = count(sampler, sampler.new_accountant(n)?, n, eps, delta)?;
    Ok(budget(
        c, algorithm, method, eps, delta, None, false, params,
    ))
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
        check_n(self.n)?;
        let tau = check::positive("tau", self.tau)?;
        let sampler = DpPenalty::builder().tau(tau).accountant(self.method);
        let params = vec![("tau", tau), ("n", self.n as f64)];
        full_data(
            &sampler,
            Algorithm::DpPenalty,
            self.method,
            (self.n, self.epsilon, self.delta),
            params,
        )
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
        check_n(self.n)?;
        let tau_l = check::positive("tau_l", self.tau_l)?;
        let tau_g = check::positive("tau_g", self.tau_g)?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", 0, "must be at least 1"));
        }
        let l = f64::from(self.leapfrog_steps);
        let sampler = DpHmc::builder()
            .tau_l(tau_l)
            .tau_g(tau_g)
            .leapfrog_steps(self.leapfrog_steps as usize)
            .gradient(self.gradient)
            .accountant(self.method);
        // gradient releases: per iteration and once (Theorem 11/12, THESIS-NOTES §3)
        let (per, once) = match self.gradient {
            Gradient::Fresh => (l + 1.0, 0.0),
            Gradient::Reuse => (l, 1.0),
        };
        let params = vec![
            ("tau_l", tau_l),
            ("tau_g", tau_g),
            ("leapfrog_steps", l),
            ("gradient_releases_per_iteration", per),
            ("gradient_releases_once", once),
            ("n", self.n as f64),
        ];
        // both gradient schedules are sound; see `params`
        full_data(
            &sampler,
            Algorithm::DpHmc,
            self.method,
            (self.n, self.epsilon, self.delta),
            params,
        )
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
    /// THESIS-NOTES §7), `Method::Rdp` (Theorem 8, closed form per order α ∈ [2, 199]) or
    /// `Method::Pld` (the same pair as the Fourier accountant, its δ the certified upper bound
    /// of [`CertifiedPld`](crate::accounting::CertifiedPld): a count that never overstates).
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
    /// Fourier/RDP/PLD.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n_rows = check_n(self.n)?;
        let tau = check::positive("tau", self.tau)?;
        if self.batch_size == 0 || self.batch_size > self.n {
            return Err(Error::invalid(
                "batch_size",
                self.batch_size,
                format!("must be in 1..={}", self.n),
            ));
        }
        let b = self.batch_size as f64;
        let (eps, delta) = check_budget(self.epsilon, self.delta, self.n)?;
        let alg = Algorithm::MinibatchPenalty;
        let sampler = MinibatchPenalty::builder()
            .tau(tau)
            .batch_size(self.batch_size as usize)
            .accountant(self.method)
            .thesis_compatible(self.thesis_compatible);
        let params = vec![("tau", tau), ("batch_size", b), ("n", n_rows as f64)];
        let (accountant, order): (Box<dyn Accountant>, Option<f64>) = match self.method {
            Method::Rdp => (
                sampler.new_accountant(self.n)?,
                Some(largest_count_order(&sampler, self.n, eps, delta)?),
            ),
            Method::Pld => (sampler.new_accountant(self.n)?, None),
            Method::Fourier => {
                let fourier = match &self.fourier {
                    Some(fa) if fa.relation() != FourierRelation::SubstituteWithoutReplacement => {
                        return Err(Error::invalid(
                            "fourier_accountant",
                            format!("{:?}", fa.relation()),
                            "the minibatch penalty samples without replacement: use \
                             FourierRelation::SubstituteWithoutReplacement",
                        ));
                    }
                    Some(fa) => Fourier::new().with_engine(fa.clone()),
                    None => Fourier::new(),
                };
                (Box::new(fourier), None)
            }
            m => return Err(unsupported(m, alg, "fourier, rdp or pld")),
        };
        let c = count(&sampler, accountant, self.n, eps, delta)?;
        Ok(budget(
            c,
            alg,
            self.method,
            eps,
            delta,
            order,
            self.thesis_compatible,
            params,
        ))
    }
}

/// The RDP order reported with a minibatch budget, as the thesis code picks it: the order whose own count `⌊(ε − ln(1/δ)/(α−1)) / ε_step(α)⌋` is largest (the smallest
/// such order on ties).
fn largest_count_order(sampler: &MinibatchPenalty, n: u64, eps: f64, delta: f64) -> Result<f64> {
    let bound = if sampler.thesis_compatible {
        WorBound::ThesisCode
    } else {
        WorBound::Theorem9
    };
    let mut one_step = super::minibatch_penalty::minibatch_rdp(bound)?;
    one_step.compose(&sampler.releases(n)?.iteration)?;
    let ln_inv_d = (1.0 / delta).ln();
    let mut best = (0u64, one_step.orders()[0]);
    for (i, (&a, &e)) in one_step.orders().iter().zip(one_step.rdp()).enumerate() {
        let count = crate::accounting::special::floor_pessimistic((eps - ln_inv_d / (a - 1.0)) / e);
        if i == 0 || count > best.0 {
            best = (count, a);
        }
    }
    Ok(best.1)
}

/// Builder for DP Barker iterations (see [`MaxIterations::dp_barker`]).
#[derive(Clone, Debug)]
pub struct DpBarkerIterations {
    batch_size: u64,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
    method: Method,
}

impl DpBarkerIterations {
    budget_setters!();

    /// `Method::Rdp` (Theorem 7, default), `Method::RdpExact` (the exact per-step divergence
    /// over the feasible family; same amplification, orders and conversion) or `Method::Pld`
    /// (the certified upper bound on δ of the composed PLD of the feasible family; no order).
    #[must_use]
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Validate and compute (RDP with Theorem 7 or the exact per-step divergence, or the
    /// certified PLD; Algorithm 2 on ε(k) or δ(k) with low 0, high 1024).
    ///
    /// # Errors
    /// ε ≤ 0 or NaN, δ ∉ (0,1), n = 0, batch_size = 0 or > n (< 20 for `Rdp` and `RdpExact`),
    /// a method other than `Rdp`, `RdpExact` or `Pld`.
    pub fn compute(&self) -> Result<IterationBudget> {
        let n_rows = check_n(self.n)?;
        let (eps, delta) = check_budget(self.epsilon, self.delta, self.n)?;
        let sampler = DpBarker::builder()
            .batch_size(self.batch_size as usize)
            .accountant(self.method);
        let order = if self.method == Method::Pld {
            None
        } else {
            let bound = BarkerBound::of_method(self.method).ok_or_else(|| {
                unsupported(self.method, Algorithm::DpBarker, "rdp, rdp-exact or pld")
            })?;
            // validates the batch (1 ≤ b ≤ n, b ≥ 20) with Theorem 7's messages
            Some(Rdp::for_dp_barker_with(self.batch_size, self.n, bound)?)
        };
        let c = count(
            &sampler,
            sampler.new_accountant(self.n)?,
            self.n,
            eps,
            delta,
        )?;
        let order = match order {
            Some(mut orders) => {
                orders.compose(&sampler.releases(self.n)?.for_chain(c.iterations))?;
                Some(orders.epsilon_and_order(delta)?.1)
            }
            None => None,
        };
        let params = vec![("batch_size", self.batch_size as f64), ("n", n_rows as f64)];
        Ok(budget(
            c,
            Algorithm::DpBarker,
            self.method,
            eps,
            delta,
            order,
            false,
            params,
        ))
    }
}
