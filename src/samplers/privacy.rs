//! The privacy cost of a DP sampler, from one place.
//!
//! Every DP sampler states what one chain releases ([`PrivacyCost::releases`]: a
//! [`PrivacyEvent`] per iteration and one per chain) and which accountant evaluates it
//! ([`PrivacyCost::accountant`]). Everything else is generic: the iterations a budget allows
//! (Algorithm 2, [`Accountant::max_iterations`]), the ε a fixed run spends, and the [`Ledger`] a
//! finished run carries. [`MaxIterations`](super::MaxIterations), the builders' `run`, the CLI
//! and the experiment grids all go through [`plan`].

use super::ledger::{EarlierRelease, Ledger};
use super::run::{ChainTrace, PrivacySpent};
use super::settings::{Budget, RunSettings};
use crate::accounting::{
    Accountant, AccountantKind, Measure, Pld, PrivacyEvent, Releases, Zcdp, ZcdpConversion,
};
use crate::error::{Error, Result, check};

/// What a DP sampler releases and how it is accounted.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{Accountant, PrivacyEvent};
/// use dp_mcmc::samplers::{DpPenalty, PrivacyCost};
/// let s = DpPenalty::builder().tau(0.1);
/// // one Gaussian release per iteration, noise multiplier τ√n
/// let r = s.releases(100_000)?;
/// assert_eq!(r.iteration, PrivacyEvent::gaussian(0.1 * 100_000f64.sqrt()));
/// // the tight Gaussian PLD (Theorem 6) allows 56 iterations at ε = 1, δ = 1e-6
/// let acc = s.new_accountant(100_000)?;
/// assert_eq!(acc.max_iterations(&r, 1, 1.0, 1e-6)?, Some(56));
/// assert!(DpPenalty::builder().tau(-1.0).releases(100).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub trait PrivacyCost {
    /// What one chain releases on a data set of `n` rows.
    ///
    /// # Errors
    /// Invalid privacy parameters (e.g. τ ≤ 0, a batch larger than `n`), naming them.
    fn releases(&self, n: u64) -> Result<Releases>;
    /// An empty accountant that evaluates [`releases`](Self::releases) under the sampler's
    /// settings (its accountant method, its noise).
    ///
    /// # Errors
    /// An accountant the sampler does not support, naming the setting.
    fn new_accountant(&self, n: u64) -> Result<Box<dyn Accountant>>;
    /// Where the iteration count deliberately follows the thesis code (the minibatch penalty's
    /// thesis-compatible RDP sum, which is optimistic), the corrected accountant whose ε is
    /// reported as the guarantee; `None` (the default) when [`new_accountant`](Self::new_accountant)
    /// reports its own count.
    ///
    /// # Errors
    /// As [`new_accountant`](Self::new_accountant).
    fn corrected_accountant(&self, _n: u64) -> Result<Option<Box<dyn Accountant>>> {
        Ok(None)
    }
    /// The accountant's label in [`PrivacySpent::accountant`] (`"ADP"`, `"zCDP"`, `"RDP"`,
    /// `"Fourier"`, `"zCDP-CKS20"`).
    fn accountant_label(&self) -> &'static str;
    /// The accountant method in force (discrete noise may force one).
    fn method(&self) -> AccountantKind;
    /// The sampler's privacy parameters, as `budget(n)` reports them (`tau`, `batch_size`, ...;
    /// a name that is a field of the sampler's settings is a setting the budget depends on).
    fn budget_parameters(&self) -> Vec<(&'static str, f64)>;
    /// The Rényi order a budget `(ε, δ)` of `k` iterations for each of `copies` chains is
    /// reported with (RDP accountants; `None` by default).
    ///
    /// # Errors
    /// As [`new_accountant`](Self::new_accountant).
    fn reported_order(
        &self,
        _n: u64,
        _budget: (f64, f64),
        _k: u64,
        _copies: u64,
    ) -> Result<Option<f64>> {
        Ok(None)
    }
    /// With a privacy budget, the most iterations per chain the sampler runs (`None`, the
    /// default: Algorithm 2's count). A capped run reports the ε it spent, below the budget.
    fn iteration_cap(&self) -> Option<usize> {
        None
    }
    /// Whether the count follows the thesis code's optimistic bound (see
    /// [`corrected_accountant`](Self::corrected_accountant)).
    fn thesis_compatible(&self) -> bool {
        false
    }
}

/// A run's privacy before it starts: iterations per chain (Algorithm 2), the guarantee they
/// give, and what is needed to re-evaluate it for what the chains really ran. A sampler's
/// `plan(n)` computes it once; `run_planned` runs with it, so a caller that needs the count
/// first (to set the warm-up, say) does not run the search twice.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::DpPenalty;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
/// let s = DpPenalty::builder().tau(0.5).clip_bound(2.0).proposal_sd(0.05)
///     .epsilon(4.0).delta(1e-5).chains(2).seed(1).start(vec![0.5]);
/// let plan = s.plan(1000)?;
/// let warmup = plan.iterations() / 2;
/// let run = s.clone().warmup(warmup).run_planned(&model, plan.with_warmup(warmup))?;
/// assert_eq!((run.iterations, run.warmup), (s.budget(1000)?.iterations, warmup));
/// // a plan made for other settings, or for another number of rows, is refused
/// let other = s.clone().chains(3).plan(1000)?;
/// assert!(s.run_planned(&model, other).is_err());
/// assert!(s.run_planned(&model, s.plan(2000)?).is_err());
/// # Ok(()) }
/// ```
pub struct Plan {
    pub(crate) iterations: usize,
    spent: PrivacySpent,
    releases: Releases,
    /// The reporting accountant with the earlier releases already composed.
    reporting: Box<dyn Accountant>,
    /// The reporting accountant before any release (for the ledger's parts).
    empty: Box<dyn Accountant>,
    before: Vec<EarlierRelease>,
    warmup: u64,
    chains: usize,
    copies: u64,
    /// The sampler's settings it was made for (warm-up set to 0), as JSON.
    made_for: serde_json::Value,
    /// The rows it was made for (the releases' noise depends on them).
    n_rows: usize,
    /// Whether the count follows the thesis code (`empty` is then the corrected accountant).
    thesis_count: bool,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("iterations", &self.iterations)
            .field("spent", &self.spent)
            .field("warmup", &self.warmup)
            .finish_non_exhaustive()
    }
}

/// A sampler's settings with the warm-up set to 0 (the one setting a plan may change).
fn settings_key<S: serde::Serialize>(sampler: &S) -> serde_json::Value {
    let mut v = serde_json::to_value(sampler).unwrap_or(serde_json::Value::Null);
    if let Some(w) = v.pointer_mut("/run/warmup") {
        *w = serde_json::json!(0);
    }
    v
}

impl Plan {
    /// Iterations per chain.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// The plan with `warmup` warm-up iterations per chain (the ledger's warm-up part; the
    /// count and the guarantee do not depend on it). Set the sampler's own `warmup` to the
    /// same value.
    #[must_use]
    pub fn with_warmup(mut self, warmup: usize) -> Self {
        self.warmup = warmup.min(self.iterations) as u64;
        self
    }

    /// Stamps the plan with the settings of the sampler it was made for.
    pub(crate) fn made_for<S: serde::Serialize>(mut self, sampler: &S) -> Self {
        self.made_for = settings_key(sampler);
        self
    }

    /// The plan, if it was made for `sampler`'s settings (up to the warm-up) and `n_rows` rows,
    /// and its warm-up is the sampler's.
    pub(crate) fn check_for<S: serde::Serialize>(
        self,
        sampler: &S,
        run: &RunSettings,
        n_rows: usize,
    ) -> Result<Self> {
        if self.n_rows != n_rows {
            return Err(Error::invalid(
                "plan",
                self.n_rows,
                format!(
                    "the plan was made for another number of rows: plan with `.plan({n_rows})`"
                ),
            ));
        }
        if self.made_for != settings_key(sampler) {
            return Err(Error::invalid(
                "plan",
                "mismatch",
                "the plan was made for other settings: plan again with `.plan(n)` after changing them",
            ));
        }
        if self.warmup != run.warmup.min(self.iterations) as u64 {
            return Err(Error::invalid(
                "plan",
                self.warmup,
                "the plan's warm-up differs from the sampler's: use `plan.with_warmup(w)` with the same w",
            ));
        }
        Ok(self)
    }

    /// The privacy the run spent: the planned guarantee with its ledger, re-evaluated with the
    /// reporting accountant if a chain stopped early (`max_time`).
    pub(crate) fn spent(self, traces: &[ChainTrace]) -> PrivacySpent {
        let ran: Vec<u64> = if traces.len() == self.chains {
            traces.iter().map(|t| t.totals().steps).collect()
        } else {
            vec![self.iterations as u64; self.chains]
        };
        let mut ledger = Ledger::new(&self.releases, self.iterations as u64, ran, &self.before);
        let mut spent = self.spent;
        let delta = spent.delta;
        let eps_of = |e: &PrivacyEvent| -> f64 {
            let mut acc = self.empty.boxed();
            acc.compose(e)
                .and_then(|()| acc.epsilon(delta))
                .unwrap_or(f64::INFINITY)
        };
        if ledger.stopped_early() {
            let reached = ledger
                .guarded_event(spent.per_chain)
                .map_or(f64::INFINITY, |e| eps_of(&e));
            // never report more than the planned guarantee (which holds regardless)
            spent.epsilon = reached.min(spent.epsilon);
        }
        let mut parts = ledger.part_events(self.warmup, spent.per_chain);
        if super::ledger::share_by_gaussian_mu(&mut parts, spent.epsilon) {
            ledger.parts = parts;
            spent.ledger = ledger;
            return spent;
        }
        // Otherwise each part's marginal ε: ε(parts up to it) − ε(parts before it); the last
        // one closes the sum at the run's ε.
        let mut events = Vec::new();
        let mut before = 0.0;
        let last = parts.len().saturating_sub(1);
        for (i, p) in parts.iter_mut().enumerate() {
            events.push(p.event.clone());
            let upto = if i == last {
                spent.epsilon
            } else {
                eps_of(&PrivacyEvent::compose(events.clone())).min(spent.epsilon)
            };
            p.epsilon_share = (upto - before).max(0.0);
            before = before.max(upto);
        }
        ledger.parts = parts;
        spent.ledger = ledger;
        spent
    }

    /// `(bar position, ε)` at eight evenly spaced points of the run, for the progress bar: the
    /// ε spent once every chain has run that share of its iterations (earlier releases
    /// included). Points the accountant cannot evaluate are left out.
    pub(crate) fn progress_marks(&self) -> Vec<(u64, f64)> {
        const MARKS: u64 = 8;
        let k = self.iterations as u64;
        let chains = self.chains as u64;
        (1..=MARKS)
            .filter_map(|m| {
                let steps = (k * m).div_ceil(MARKS);
                let mut acc = self.reporting.boxed();
                acc.compose(&self.releases.for_chains(steps, self.copies))
                    .ok()?;
                let eps = acc.epsilon(self.spent.delta).ok()?;
                Some((steps.saturating_mul(chains), eps.min(self.spent.epsilon)))
            })
            .collect()
    }

    /// The counting accountant at the plan's count (earlier releases and every chain
    /// composed), measured against `(ε, δ)`: the plan's own accountant (clones share a Fourier
    /// accountant's cached spectra), or `cost`'s where the count follows the thesis code and the
    /// plan reports the corrected one.
    pub(crate) fn measure_at_count(
        &self,
        cost: &dyn PrivacyCost,
        epsilon: f64,
        delta: f64,
    ) -> Result<Measure> {
        let mut acc = if self.thesis_count {
            cost.new_accountant(self.n_rows as u64)?
        } else {
            self.empty.boxed()
        };
        for b in &self.before {
            acc.compose(&b.event)?;
        }
        acc.compose(
            &self
                .releases
                .for_chains(self.iterations as u64, self.copies),
        )?;
        acc.budget_measure(epsilon, delta)
    }

    /// The planned guarantee.
    pub fn planned(&self) -> &PrivacySpent {
        &self.spent
    }
}

/// Iterations per chain and the privacy they spend, from the run settings: Algorithm 2 on the
/// sampler's releases for a budget (ε, δ) (a whole-release budget composes every chain: `C`
/// chains share it), or the ε at δ = 0.1/n that a fixed `.iterations(k)` spends (∞ where the
/// accountant cannot evaluate the composition: no finite guarantee is claimed).
pub(crate) fn plan(cost: &dyn PrivacyCost, run: &RunSettings, n_rows: usize) -> Result<Plan> {
    let plan = plan_any(cost, run, n_rows)?;
    if plan.iterations == 0
        && let Some((eps, delta)) = run.privacy_budget()?
    {
        let copies = run.copies();
        return Err(Error::BudgetTooSmall(format!(
            "(ε = {eps}, δ = {delta}) allows no iteration for {copies} chain(s) sharing the budget; \
             increase epsilon or the noise (tau), use fewer chains, or a per-chain budget"
        )));
    }
    Ok(plan)
}

/// [`plan`], with a budget that allows no iteration answered by a plan of 0 iterations (what
/// `budget(n)` reports).
pub(crate) fn plan_any(cost: &dyn PrivacyCost, run: &RunSettings, n_rows: usize) -> Result<Plan> {
    check::at_least_one("n (data rows)", n_rows)?;
    let n = n_rows as u64;
    let releases = cost.releases(n)?;
    let mut accountant = cost.new_accountant(n)?;
    let corrected = cost.corrected_accountant(n)?;
    let thesis_count = corrected.is_some();
    let empty = corrected.unwrap_or_else(|| accountant.boxed());
    let mut reporting = empty.boxed();
    // Releases before the chains (shared by all of them) are spent first.
    for b in &run.spent_before {
        accountant.compose(&b.event)?;
        reporting.compose(&b.event)?;
    }
    let copies = run.copies();
    let label = cost.accountant_label();
    let spent = |epsilon: f64, delta: f64| PrivacySpent {
        epsilon,
        delta,
        per_chain: run.per_chain_budget,
        accountant: label.to_string(),
        ledger: Ledger::default(),
    };
    let epsilon_at = |k: usize, delta: f64| -> Result<f64> {
        let mut acc = reporting.boxed();
        acc.compose(&releases.for_chains(k as u64, copies as u64))?;
        acc.epsilon(delta)
    };
    let (iterations, spent) = match (run.budget, run.privacy_budget()?) {
        (Budget::Iterations(k), _) => {
            let delta = (0.1 / n_rows as f64).min(0.5);
            (
                k,
                spent(epsilon_at(k, delta).unwrap_or(f64::INFINITY), delta),
            )
        }
        (_, Some((eps, delta))) => {
            let found = accountant.max_iterations(&releases, copies as u64, eps, delta)?;
            let cap = cost.iteration_cap();
            let k = match (found, cap) {
                (Some(k), Some(cap)) => k.min(cap as u64),
                (None, Some(cap)) => cap as u64,
                (Some(k), None) => k,
                (None, None) => return Err(crate::accounting::algorithm2::beyond_cap(eps)),
            };
            let k = usize::try_from(k)
                .map_err(|_| Error::invalid("epsilon", eps, "allows too many iterations"))?;
            let capped = cap.is_some_and(|c| found.is_none_or(|f| f > c as u64));
            // Where the count follows the thesis code, the guarantee is the corrected bound's ε
            // at that count (larger than the target); a capped run spent less than the budget.
            let eps = if thesis_count {
                epsilon_at(k, delta)?.max(eps)
            } else if capped {
                epsilon_at(k, delta)?.min(eps)
            } else {
                eps
            };
            (k, spent(eps, delta))
        }
        (_, None) => {
            return Err(Error::invalid(
                "epsilon",
                "unset",
                "set a privacy budget `.epsilon(e).delta(d)` (or a fixed `.iterations(k)`)",
            ));
        }
    };
    Ok(Plan {
        iterations,
        spent,
        releases,
        reporting,
        empty,
        before: run.spent_before.clone(),
        warmup: run.warmup.min(iterations) as u64,
        chains: run.chains,
        copies: copies as u64,
        made_for: serde_json::Value::Null,
        n_rows,
        thesis_count,
    })
}

/// A release of a full-data statistic with noise scale `tau` on `n` rows: noise multiplier
/// `τ√n` (ρ = 1/(2τ²n)); with exact discrete Gaussian noise, that ρ as a zCDP event.
pub(crate) fn gaussian_release(
    name: &'static str,
    tau: f64,
    n: u64,
    discrete: bool,
) -> Result<PrivacyEvent> {
    let tau = crate::error::check::positive(name, tau)?;
    let n = n as f64;
    if !(tau * n.sqrt()).is_finite() || 1.0 / (2.0 * tau * tau * n) == 0.0 {
        return Err(Error::invalid(
            name,
            tau,
            "is too large: the noise multiplier τ√n overflows; use a smaller value",
        ));
    }
    Ok(if discrete {
        PrivacyEvent::Zcdp {
            rho: 1.0 / (2.0 * tau * tau * n),
        }
    } else {
        PrivacyEvent::gaussian(tau * n.sqrt())
    })
}

/// The accountant of the full-data samplers: zCDP (Theorems 5/11) or the tight Gaussian PLD
/// (Theorems 6/12, for any other method); with discrete noise always zCDP with CKS20.
pub(crate) fn full_data_accountant(
    key: &str,
    method: AccountantKind,
    discrete: bool,
) -> Result<Box<dyn Accountant>> {
    Ok(match (discrete, method) {
        (true, _) => Box::new(Zcdp::new().conversion(ZcdpConversion::Cks20)),
        (false, AccountantKind::Zcdp) => Box::new(Zcdp::new()),
        (false, AccountantKind::Pld) => Box::new(Pld::new()),
        (false, m) => return Err(full_data_unsupported(key, m)),
    })
}

/// The error for an accountant a full-data sampler does not support.
pub(crate) fn full_data_unsupported(key: &str, method: AccountantKind) -> Error {
    let why = if method == AccountantKind::CertifiedPld {
        " (AccountantKind::Pld: the Gaussian PLD in closed form; the certified engine is the \
         subsampled samplers')"
    } else {
        ""
    };
    Error::invalid(
        "accountant",
        method.key(),
        format!("{key} supports --accountant zcdp (Theorems 5/11) or pld (Theorems 6/12){why}"),
    )
}

/// The accountant a full-data sampler's `set_accountant(method)` sets (`None`: PLD).
pub(crate) fn full_data_method_checked(
    key: &str,
    method: Option<AccountantKind>,
) -> Result<AccountantKind> {
    match method.unwrap_or(AccountantKind::Pld) {
        m @ (AccountantKind::Zcdp | AccountantKind::Pld) => Ok(m),
        m => Err(full_data_unsupported(key, m)),
    }
}

/// The accountant method of a full-data sampler with `method` set: zCDP with discrete noise.
pub(crate) fn full_data_method(method: AccountantKind, discrete: bool) -> AccountantKind {
    if discrete {
        AccountantKind::Zcdp
    } else {
        method
    }
}

pub(crate) fn full_data_label(method: AccountantKind, discrete: bool) -> &'static str {
    match (discrete, method) {
        (true, _) => crate::accounting::ZCDP_CKS20_LABEL,
        (false, AccountantKind::Zcdp) => AccountantKind::Zcdp.label(),
        (false, _) => AccountantKind::Pld.label(),
    }
}

/// `budget(n_rows)` and `run(model)` for a DP sampler builder with a `kernel(model)` method and a
/// [`PrivacyCost`] impl: both go through [`plan`], so a run is charged exactly what its budget
/// says.
macro_rules! dp_run {
    ($t:ty) => {
        impl $t {
            /// Iterations per chain and the privacy they spend ([`IterationBudget`](crate::samplers::IterationBudget)):
            /// Algorithm 2 on the sampler's releases for `.epsilon(e).delta(d)` (0 if it allows
            /// none), or the ε a fixed `.iterations(k)` spends.
            ///
            /// # Errors
            /// Invalid settings.
            pub fn budget(
                &self,
                n_rows: usize,
            ) -> $crate::Result<$crate::samplers::IterationBudget> {
                let plan = $crate::samplers::privacy::plan_any(self, &self.run, n_rows)?;
                let key = <Self as $crate::samplers::Sampler>::key(self);
                $crate::samplers::budget::of_plan(self, key, &self.run, &plan, n_rows)
            }

            /// The run's privacy plan for `n_rows` rows ([`Plan`](crate::samplers::Plan)):
            /// Algorithm 2 once, for [`run_planned`](Self::run_planned).
            ///
            /// # Errors
            /// Invalid settings, or a budget that allows no iteration.
            pub fn plan(&self, n_rows: usize) -> $crate::Result<$crate::samplers::Plan> {
                Ok($crate::samplers::privacy::plan(self, &self.run, n_rows)?.made_for(self))
            }

            /// Runs the chains with a plan from [`plan`](Self::plan) of these settings.
            ///
            /// # Errors
            /// A plan made for other settings (or another warm-up), invalid settings or start
            /// points, a model error.
            pub fn run_planned<M: $crate::models::Model + ?Sized>(
                &self,
                model: &M,
                plan: $crate::samplers::Plan,
            ) -> $crate::Result<$crate::samplers::Run> {
                let plan = plan.check_for(self, &self.run, model.n_rows())?;
                let kernel = self.kernel(model)?;
                $crate::samplers::driver::finish(&kernel, model, &self.run, self, Some(plan))
            }

            /// Run the chains; the run's privacy (`Run::privacy`) carries the ledger of what they
            /// released.
            ///
            /// # Errors
            /// Invalid settings or start points, a budget that allows no iteration, a model
            /// error.
            pub fn run<M: $crate::models::Model + ?Sized>(
                &self,
                model: &M,
            ) -> $crate::Result<$crate::samplers::Run> {
                let kernel = self.kernel(model)?;
                let plan = $crate::samplers::privacy::plan(self, &self.run, model.n_rows())?;
                $crate::samplers::driver::finish(&kernel, model, &self.run, self, Some(plan))
            }
        }
    };
}
pub(crate) use dp_run;
