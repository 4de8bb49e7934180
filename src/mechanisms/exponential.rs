//! The exponential mechanism over a finite range, sampled stably in log space.

use rand::{Rng, RngExt};

use crate::error::{Error, Result, check};

/// `ln Σ exp(x_i)`, shifted by the maximum so that nothing overflows; `-∞` for an empty slice
/// or when every term is `-∞`.
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY || m.is_nan() {
        return m;
    }
    m + xs.iter().map(|&x| (x - m).exp()).sum::<f64>().ln()
}

/// Draw an index with probability proportional to `exp(log_weights[i])`.
///
/// Stable in log space: the weights are shifted by their maximum, so the largest is exactly 1
/// and the total lies in `[1, len]`; one uniform is inverted through the cumulative sums.
/// `-∞` entries have probability 0.
///
/// # Errors
/// [`Error::InvalidData`] if the slice is empty, holds a NaN or `+∞`, or every entry is `-∞`.
pub fn sample_log_weights(log_weights: &[f64], rng: &mut impl Rng) -> Result<usize> {
    let m = log_weights
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    if log_weights
        .iter()
        .any(|x| x.is_nan() || *x == f64::INFINITY)
    {
        return Err(Error::InvalidData(
            "log-weights contain NaN or +inf; pass finite scores (or -inf for impossible outputs)"
                .into(),
        ));
    }
    if m == f64::NEG_INFINITY {
        return Err(Error::InvalidData(
            "no output has positive probability (empty range or every log-weight is -inf)".into(),
        ));
    }
    let total: f64 = log_weights.iter().map(|&x| (x - m).exp()).sum();
    let target = rng.random::<f64>() * total;
    let mut acc = 0.0;
    let mut last_positive = 0;
    for (i, &x) in log_weights.iter().enumerate() {
        let w = (x - m).exp();
        if w > 0.0 {
            last_positive = i;
            acc += w;
            if target < acc {
                return Ok(i);
            }
        }
    }
    // Only reached when rounding puts `target` at the very top of the cumulative sum.
    Ok(last_positive)
}

/// The exponential mechanism: output `r ∈ R` with probability ∝ `exp(ε u(x, r) / (2 Δu))`.
///
/// # Privacy
/// ε-DP (δ = 0) when `sensitivity` bounds the utility's sensitivity
/// `max_r max_{x~y} |u(x, r) − u(y, r)|` (slides, "Exponential Mechanism" theorem; McSherry and
/// Talwar 2007).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExponentialMechanism {
    epsilon: f64,
    sensitivity: f64,
}

impl ExponentialMechanism {
    /// An exponential mechanism at privacy `epsilon` for a utility of sensitivity `sensitivity`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::ExponentialMechanism;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = ExponentialMechanism::new(1.0, 1.0)?;
    /// let p = m.probabilities(&[0.0, 2.0])?;
    /// assert!((p[1] / p[0] - 1f64.exp()).abs() < 1e-12);
    /// assert!(ExponentialMechanism::new(1.0, 0.0).is_err()); // names `sensitivity`
    /// # Ok(()) }
    /// ```
    pub fn new(epsilon: f64, sensitivity: f64) -> Result<Self> {
        check::positive("epsilon", epsilon)?;
        check::positive("sensitivity", sensitivity)?;
        Ok(Self {
            epsilon,
            sensitivity,
        })
    }

    /// The privacy parameter ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The utility's sensitivity Δu.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// The unnormalised log-weights `ε u / (2 Δu)`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the range is empty or a utility is not finite.
    pub fn log_weights(&self, utilities: &[f64]) -> Result<Vec<f64>> {
        if utilities.is_empty() {
            return Err(Error::InvalidData(
                "empty range: pass at least one utility".into(),
            ));
        }
        check::all_finite("utilities", utilities)?;
        let c = self.epsilon / (2.0 * self.sensitivity);
        Ok(utilities.iter().map(|&u| c * u).collect())
    }

    /// Exact output log-probabilities (normalised with [`log_sum_exp`]).
    ///
    /// # Errors
    /// As [`ExponentialMechanism::log_weights`].
    pub fn log_probabilities(&self, utilities: &[f64]) -> Result<Vec<f64>> {
        let lw = self.log_weights(utilities)?;
        let z = log_sum_exp(&lw);
        Ok(lw.into_iter().map(|x| x - z).collect())
    }

    /// Exact output probabilities.
    ///
    /// # Errors
    /// As [`ExponentialMechanism::log_weights`].
    pub fn probabilities(&self, utilities: &[f64]) -> Result<Vec<f64>> {
        Ok(self
            .log_probabilities(utilities)?
            .into_iter()
            .map(f64::exp)
            .collect())
    }

    /// Select one index of the range.
    ///
    /// # Errors
    /// As [`ExponentialMechanism::log_weights`].
    pub fn select(&self, utilities: &[f64], rng: &mut impl Rng) -> Result<usize> {
        sample_log_weights(&self.log_weights(utilities)?, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_sum_exp_does_not_overflow() {
        let v = log_sum_exp(&[1000.0, 1000.0]);
        assert!((v - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
    }

    #[test]
    fn huge_scores_sample_the_maximum() {
        let mut rng = crate::rng::chain_rng(0, 0);
        for _ in 0..100 {
            let i = sample_log_weights(&[-1e300, 0.0, f64::NEG_INFINITY], &mut rng).unwrap();
            assert_eq!(i, 1);
        }
        assert!(sample_log_weights(&[f64::NEG_INFINITY], &mut rng).is_err());
        assert!(sample_log_weights(&[f64::NAN], &mut rng).is_err());
    }
}
