//! The Laplace mechanism for numeric queries with a given ℓ1 sensitivity.

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::error::{Result, check};

/// Draw one `Lap(0, scale)` variate as the difference of two independent `Exp(1)` variates
/// times `scale` (exact; no inverse-CDF cancellation near the tails).
pub fn sample_laplace(scale: f64, rng: &mut impl Rng) -> f64 {
    let a: f64 = Exp1.sample(rng);
    let b: f64 = Exp1.sample(rng);
    scale * (a - b)
}

/// The Laplace mechanism `M(x) = f(x) + (Y_1, …, Y_k)`, `Y_i ~ Lap(Δf/ε)` i.i.d.
///
/// # Privacy
/// ε-DP (δ = 0) for a query `f` whose ℓ1 sensitivity is at most `sensitivity` (slides,
/// "Laplace Mechanism" theorem; Dwork and Roth Thm 3.6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceMechanism {
    sensitivity: f64,
    epsilon: f64,
}

impl LaplaceMechanism {
    /// A Laplace mechanism for a query of ℓ1 sensitivity `sensitivity` at privacy `epsilon`.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::LaplaceMechanism;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = LaplaceMechanism::new(2.0, 0.8)?;
    /// assert_eq!(m.scale(), 2.5);
    /// assert!(LaplaceMechanism::new(1.0, -0.1).is_err()); // names `epsilon`
    /// # Ok(()) }
    /// ```
    pub fn new(sensitivity: f64, epsilon: f64) -> Result<Self> {
        check::positive("sensitivity", sensitivity)?;
        check::positive("epsilon", epsilon)?;
        Ok(Self {
            sensitivity,
            epsilon,
        })
    }

    /// The noise scale `b = Δf/ε`.
    pub fn scale(&self) -> f64 {
        self.sensitivity / self.epsilon
    }

    /// The privacy parameter ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The ℓ1 sensitivity Δf.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// Release one scalar query answer.
    pub fn release(&self, value: f64, rng: &mut impl Rng) -> f64 {
        value + sample_laplace(self.scale(), rng)
    }

    /// Release a vector-valued query answer (independent noise per coordinate).
    ///
    /// # Errors
    /// [`crate::Error::InvalidData`] if a value is not finite.
    pub fn release_vec(&self, values: &[f64], rng: &mut impl Rng) -> Result<Vec<f64>> {
        check::all_finite("values", values)?;
        Ok(values.iter().map(|&v| self.release(v, rng)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_matches_2b2() {
        // 200 000 draws of Lap(2): variance 8, sd of the sample variance ≈ 8*sqrt(5/200000)
        // ≈ 0.04 (kurtosis 6); 0.3 is > 7 sd.
        let mut rng = crate::rng::chain_rng(1, 0);
        let xs: Vec<f64> = (0..200_000)
            .map(|_| sample_laplace(2.0, &mut rng))
            .collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((var - 8.0).abs() < 0.3, "variance {var}");
    }
}
