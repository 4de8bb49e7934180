//! Randomized response (the slides' coin-flip survey) with a general bias, its ε, and the
//! unbiased estimator of the population proportion.

use rand::{Rng, RngExt};

use crate::error::{Error, Result};

/// Randomized response: with probability `truth_prob` answer truthfully, otherwise answer
/// "yes" with probability `yes_prob` regardless of the truth.
///
/// The slides' protocol (flip a fair coin; on tails tell the truth, on heads flip a second fair
/// coin) is `truth_prob = yes_prob = 1/2`, which is `(ln 3, 0)`-DP.
///
/// # Privacy
/// With `p = truth_prob`, `q = yes_prob`, the answer probabilities are
/// `P(yes | 1) = p + (1-p) q`, `P(yes | 0) = (1-p) q`, `P(no | 0) = p + (1-p)(1-q)`,
/// `P(no | 1) = (1-p)(1-q)`; the mechanism is ε-DP (δ = 0) for
/// `ε = max(ln(P(yes|1)/P(yes|0)), ln(P(no|0)/P(no|1)))` (slides, "Randomized Response,
/// Revisited"), computed by [`RandomizedResponse::epsilon`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomizedResponse {
    truth_prob: f64,
    yes_prob: f64,
}

impl RandomizedResponse {
    /// A randomized-response protocol; both probabilities must lie strictly inside (0, 1)
    /// (a truthful probability of 1 gives no privacy, 0 gives no information).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedResponse;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let rr = RandomizedResponse::new(0.5, 0.5)?;
    /// assert!((rr.epsilon() - 3f64.ln()).abs() < 1e-12);
    /// assert!(RandomizedResponse::new(1.0, 0.5).is_err()); // names `truth_prob`
    /// # Ok(()) }
    /// ```
    pub fn new(truth_prob: f64, yes_prob: f64) -> Result<Self> {
        for (name, x) in [("truth_prob", truth_prob), ("yes_prob", yes_prob)] {
            if !(x > 0.0 && x < 1.0) {
                return Err(Error::invalid(name, x, "must lie strictly between 0 and 1"));
            }
        }
        Ok(Self {
            truth_prob,
            yes_prob,
        })
    }

    /// The slides' fair-coin protocol (`truth_prob = yes_prob = 1/2`, ε = ln 3).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedResponse;
    /// let rr = RandomizedResponse::fair();
    /// assert_eq!(rr.output_probability(false, false), 0.75);
    /// ```
    pub fn fair() -> Self {
        Self {
            truth_prob: 0.5,
            yes_prob: 0.5,
        }
    }

    /// The symmetric protocol (`yes_prob = 1/2`) whose ε is exactly `epsilon`:
    /// `truth_prob = (e^ε − 1)/(e^ε + 1)`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::RandomizedResponse;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let rr = RandomizedResponse::with_epsilon(1.0)?;
    /// assert!((rr.epsilon() - 1.0).abs() < 1e-12);
    /// assert!(RandomizedResponse::with_epsilon(0.0).is_err()); // names `epsilon`
    /// # Ok(()) }
    /// ```
    pub fn with_epsilon(epsilon: f64) -> Result<Self> {
        crate::error::check::positive("epsilon", epsilon)?;
        // tanh(ε/2) = (e^ε − 1)/(e^ε + 1), stable for small and large ε.
        let p = (epsilon / 2.0).tanh();
        if p >= 1.0 {
            return Err(Error::invalid(
                "epsilon",
                epsilon,
                "is so large that the truthful probability rounds to 1; use epsilon < 36",
            ));
        }
        Self::new(p, 0.5)
    }

    /// Probability of answering truthfully.
    pub fn truth_prob(&self) -> f64 {
        self.truth_prob
    }

    /// Probability of "yes" when not answering truthfully.
    pub fn yes_prob(&self) -> f64 {
        self.yes_prob
    }

    /// Exact `P(answer | truth)`.
    pub fn output_probability(&self, truth: bool, answer: bool) -> f64 {
        let (p, q) = (self.truth_prob, self.yes_prob);
        let p_yes = if truth {
            p + (1.0 - p) * q
        } else {
            (1.0 - p) * q
        };
        if answer { p_yes } else { 1.0 - p_yes }
    }

    /// The ε of the protocol (δ = 0): the largest log ratio of the output probabilities of the
    /// two possible truths.
    pub fn epsilon(&self) -> f64 {
        let mut eps: f64 = 0.0;
        for answer in [false, true] {
            let a = self.output_probability(true, answer).ln();
            let b = self.output_probability(false, answer).ln();
            eps = eps.max((a - b).abs());
        }
        eps
    }

    /// One noisy answer.
    pub fn respond(&self, truth: bool, rng: &mut impl Rng) -> bool {
        if rng.random_bool(self.truth_prob) {
            truth
        } else {
            rng.random_bool(self.yes_prob)
        }
    }

    /// Noisy answers for a whole population (one stream, `chain_rng(seed, 0)`).
    pub fn respond_all(&self, truths: &[bool], seed: u64) -> Vec<bool> {
        let mut rng = crate::rng::chain_rng(seed, 0);
        truths.iter().map(|&t| self.respond(t, &mut rng)).collect()
    }

    /// Unbiased estimate of the population proportion of "yes" truths from the noisy answers:
    /// `E[share of yes] = (1-p) q + p π`, so `π̂ = (share − (1-p) q)/p`. It is unbiased, hence not
    /// clamped to [0, 1].
    ///
    /// # Errors
    /// [`Error::InvalidData`] for an empty slice.
    pub fn estimate_proportion(&self, answers: &[bool]) -> Result<f64> {
        if answers.is_empty() {
            return Err(Error::InvalidData(
                "no answers: pass at least one noisy answer".into(),
            ));
        }
        let share = answers.iter().filter(|&&a| a).count() as f64 / answers.len() as f64;
        let (p, q) = (self.truth_prob, self.yes_prob);
        Ok((share - (1.0 - p) * q) / p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_coin_is_ln3() {
        let rr = RandomizedResponse::fair();
        assert!((rr.epsilon() - 3f64.ln()).abs() < 1e-14);
        assert_eq!(rr.output_probability(true, false), 0.25);
    }

    #[test]
    fn estimator_recovers_proportion() {
        // 20 000 answers, true proportion 0.3: sd of the estimate is
        // sqrt(0.5*0.5/20000)/0.5 ≈ 0.0071, so 0.04 is > 5 sd.
        let truths: Vec<bool> = (0..20_000).map(|i| i % 10 < 3).collect();
        let rr = RandomizedResponse::fair();
        let est = rr.estimate_proportion(&rr.respond_all(&truths, 3)).unwrap();
        assert!((est - 0.3).abs() < 0.04, "estimate {est}");
    }

    #[test]
    fn errors_name_parameter() {
        let e = RandomizedResponse::new(0.5, 0.0).unwrap_err().to_string();
        assert!(e.contains("yes_prob"), "{e}");
        assert!(RandomizedResponse::fair().estimate_proportion(&[]).is_err());
    }
}
