//! Private online learning: randomized weighted majority (RWM) as a repeated exponential
//! mechanism, its (ε, δ) for a horizon T, and its regret on a loss matrix.

use rand::Rng;

use crate::error::{Error, Result, check};
use crate::mechanisms::exponential::sample_log_weights;

/// Randomized weighted majority with learning rate `eta`: at step `t` choose expert `i` with
/// probability ∝ `exp(−η Σ_{j<t} ℓ_i^j)` (the slides' second form of RWM).
///
/// # Privacy
/// Each step is the exponential mechanism with utility `−Σ_{j<t} ℓ_i^j`, whose sensitivity is 1
/// when neighbouring loss streams differ in one whole loss vector with entries in [0, 1]; the
/// slides' theorem (Dwork and Roth Thm 11.1, by advanced composition over T steps) gives
/// (ε, δ)-DP for `η = ε / sqrt(32 T ln(1/δ))`. [`RandomizedWeightedMajority::private`] sets η
/// that way and [`RandomizedWeightedMajority::epsilon`] inverts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomizedWeightedMajority {
    eta: f64,
}

/// One run of RWM on a loss matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineRun {
    /// The expert chosen at each step.
    pub actions: Vec<usize>,
    /// The loss suffered at each step, `ℓ^t_{a_t}`.
    pub step_losses: Vec<f64>,
    /// Average loss of the algorithm, `L_A = (1/T) Σ ℓ^t_{a_t}`.
    pub algorithm_loss: f64,
    /// Average loss of each expert, `L_i = (1/T) Σ ℓ_i^t`.
    pub expert_losses: Vec<f64>,
    /// `L_A − min_i L_i`.
    pub regret: f64,
    /// The cumulative loss after each step of the best expert in hindsight (the smallest
    /// `L_i`, the first on a tie): the line the algorithm's cumulative loss is measured against.
    pub best_expert_cumulative: Vec<f64>,
}

impl RandomizedWeightedMajority {
    /// RWM with learning rate `eta > 0`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedWeightedMajority;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let rwm = RandomizedWeightedMajority::new(0.1)?;
    /// assert_eq!(rwm.eta(), 0.1);
    /// assert!(RandomizedWeightedMajority::new(0.0).is_err()); // names `eta`
    /// # Ok(()) }
    /// ```
    pub fn new(eta: f64) -> Result<Self> {
        check::positive("eta", eta)?;
        Ok(Self { eta })
    }

    /// The no-regret choice `η = sqrt(ln k / T)` (not private by itself).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedWeightedMajority;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let rwm = RandomizedWeightedMajority::no_regret(4, 100)?;
    /// assert!((rwm.eta() - (4f64.ln() / 100.0).sqrt()).abs() < 1e-15);
    /// assert!(RandomizedWeightedMajority::no_regret(1, 100).is_err()); // names `experts`
    /// # Ok(()) }
    /// ```
    pub fn no_regret(experts: usize, horizon: usize) -> Result<Self> {
        if experts < 2 {
            return Err(Error::invalid("experts", experts, "must be at least 2"));
        }
        check::at_least_one("horizon", horizon)?;
        Self::new(((experts as f64).ln() / horizon as f64).sqrt())
    }

    /// The (ε, δ)-DP choice of the slides' theorem: `η = ε / sqrt(32 T ln(1/δ))`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedWeightedMajority;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let rwm = RandomizedWeightedMajority::private(1.0, 1e-5, 1000)?;
    /// assert!((rwm.epsilon(1000, 1e-5)? - 1.0).abs() < 1e-12);
    /// assert!(RandomizedWeightedMajority::private(1.0, 1.5, 1000).is_err()); // names `delta`
    /// # Ok(()) }
    /// ```
    pub fn private(epsilon: f64, delta: f64, horizon: usize) -> Result<Self> {
        check::positive("epsilon", epsilon)?;
        check::delta("delta", delta)?;
        check::at_least_one("horizon", horizon)?;
        Self::new(epsilon / (32.0 * horizon as f64 * (1.0 / delta).ln()).sqrt())
    }

    /// The learning rate η.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// The ε this η gives over `horizon` steps at `delta` by the slides' theorem:
    /// `ε = η sqrt(32 T ln(1/δ))`.
    ///
    /// # Errors
    /// `horizon` = 0 or `delta` ∉ (0, 1).
    pub fn epsilon(&self, horizon: usize, delta: f64) -> Result<f64> {
        check::delta("delta", delta)?;
        check::at_least_one("horizon", horizon)?;
        Ok(self.eta * (32.0 * horizon as f64 * (1.0 / delta).ln()).sqrt())
    }

    /// The slides' bound on the expected regret, `η + ln k / (η T)` (the slides print
    /// `ln(k)/(nT)`; the `n` is a typo for η, as the choice `η = sqrt(ln k/T)` giving
    /// `2 sqrt(ln k / T)` shows).
    pub fn regret_bound(&self, experts: usize, horizon: usize) -> f64 {
        self.eta + (experts as f64).ln() / (self.eta * horizon as f64)
    }

    /// Run RWM on `losses` (`losses[t][i]` = loss of expert `i` at step `t`, in [0, 1]).
    ///
    /// # Errors
    /// Empty matrix, rows of different lengths, or a loss outside [0, 1].
    pub fn run(&self, losses: &[Vec<f64>], rng: &mut impl Rng) -> Result<OnlineRun> {
        let k = validate_losses(losses)?;
        let t_max = losses.len();
        let mut cumulative = vec![0.0; k];
        let mut log_w = vec![0.0; k];
        let mut actions = Vec::with_capacity(t_max);
        let mut step_losses = Vec::with_capacity(t_max);
        for row in losses {
            for (w, c) in log_w.iter_mut().zip(&cumulative) {
                *w = -self.eta * c;
            }
            let a = sample_log_weights(&log_w, rng)?;
            actions.push(a);
            step_losses.push(row[a]);
            for (c, l) in cumulative.iter_mut().zip(row) {
                *c += l;
            }
        }
        let t = t_max as f64;
        let algorithm_loss = step_losses.iter().sum::<f64>() / t;
        let expert_losses: Vec<f64> = cumulative.iter().map(|c| c / t).collect();
        let best = expert_losses.iter().copied().fold(f64::INFINITY, f64::min);
        let best_index = expert_losses.iter().position(|&l| l == best).unwrap_or(0);
        let best_expert_cumulative = losses
            .iter()
            .scan(0.0, |acc, row| {
                *acc += row[best_index];
                Some(*acc)
            })
            .collect();
        Ok(OnlineRun {
            actions,
            step_losses,
            algorithm_loss,
            regret: algorithm_loss - best,
            expert_losses,
            best_expert_cumulative,
        })
    }

    /// [`RandomizedWeightedMajority::run`] with the stream `chain_rng(seed, 0)`.
    ///
    /// # Errors
    /// As [`RandomizedWeightedMajority::run`].
    pub fn run_seeded(&self, losses: &[Vec<f64>], seed: u64) -> Result<OnlineRun> {
        self.run(losses, &mut crate::rng::chain_rng(seed, 0))
    }
}

/// Check a loss matrix; returns the number of experts.
fn validate_losses(losses: &[Vec<f64>]) -> Result<usize> {
    let k = losses
        .first()
        .map(Vec::len)
        .ok_or_else(|| Error::InvalidData("empty loss matrix: pass at least one step".into()))?;
    if k == 0 {
        return Err(Error::InvalidData(
            "loss matrix has no experts: each row needs one loss per expert".into(),
        ));
    }
    for (t, row) in losses.iter().enumerate() {
        check::len("losses row", row.len(), k)?;
        if let Some(i) = row.iter().position(|l| !(0.0..=1.0).contains(l)) {
            return Err(Error::InvalidData(format!(
                "loss {} of expert {i} at step {t} is outside [0, 1]; rescale the losses",
                row[i]
            )));
        }
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regret_within_bound_on_average() {
        // Expert 0 always loses 0.2, expert 1 always 0.8: regret is small and below the
        // no-regret bound 2 sqrt(ln 2 / T) ≈ 0.053 on average over 20 runs (each run's regret
        // is a mean of T Bernoulli-like terms; the bound is on the expectation, with slack).
        let t = 1000;
        let losses: Vec<Vec<f64>> = (0..t).map(|_| vec![0.2, 0.8]).collect();
        let rwm = RandomizedWeightedMajority::no_regret(2, t).unwrap();
        let mean: f64 = (0..20)
            .map(|s| rwm.run_seeded(&losses, s).unwrap().regret)
            .sum::<f64>()
            / 20.0;
        assert!(mean <= rwm.regret_bound(2, t), "mean regret {mean}");
        assert!(mean > 0.0);
    }

    #[test]
    fn bad_losses_rejected() {
        let rwm = RandomizedWeightedMajority::new(0.5).unwrap();
        assert!(rwm.run_seeded(&[vec![0.5, 1.5]], 0).is_err());
        assert!(rwm.run_seeded(&[vec![0.5, 0.5], vec![0.5]], 0).is_err());
        assert!(rwm.run_seeded(&[], 0).is_err());
    }
}
