//! The conjugate models of the Hellinger paper: Dirichlet-Multinomial, with Beta-Binomial as
//! its k = 2 case, and the checks on observed counts.

use crate::error::{Error, Result, check};

/// A Dirichlet prior `Dir(α)` over k ≥ 2 categories; data are the category counts
/// `Δα = (c_1, …, c_k)`, `n = Σ c_i`, and the posterior is `Dir(α + Δα)` (paper, Section 2).
///
/// The Beta-Binomial model `Beta(α, β)` with `Δα` ones out of `n` is the case
/// `Dir(α, β)` with counts `(Δα, n − Δα)`: Beta(a, b) is the law of θ when (θ, 1 − θ) is
/// Dir(a, b), so every Hellinger distance agrees.
#[derive(Debug, Clone, PartialEq)]
pub struct DirichletMultinomial {
    prior: Vec<f64>,
}

impl DirichletMultinomial {
    /// The model with prior `Dir(prior)`; every entry finite and `> 0`, at least two.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::DirichletMultinomial;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = DirichletMultinomial::new(vec![1.0, 1.0, 1.0])?;
    /// assert_eq!(m.posterior(&[2, 0, 5])?, vec![3.0, 1.0, 6.0]);
    /// let e = DirichletMultinomial::new(vec![1.0, 0.0]).unwrap_err();
    /// assert!(e.to_string().contains("prior"));
    /// # Ok(()) }
    /// ```
    pub fn new(prior: Vec<f64>) -> Result<Self> {
        if prior.len() < 2 {
            return Err(Error::invalid(
                "prior",
                format!("{prior:?}"),
                "needs at least two categories",
            ));
        }
        for &a in &prior {
            check::positive("prior", a)?;
        }
        Ok(Self { prior })
    }

    /// The Beta-Binomial model with prior `Beta(alpha, beta)` (category 0 = ones).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::DirichletMultinomial;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = DirichletMultinomial::beta_binomial(1.0, 1.0)?;
    /// let counts = m.beta_counts(30, 300)?; // 30 ones out of 300
    /// assert_eq!(m.posterior(&counts)?, vec![31.0, 271.0]);
    /// assert!(m.beta_counts(301, 300).is_err()); // names `ones`
    /// assert!(DirichletMultinomial::beta_binomial(1.0, -2.0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn beta_binomial(alpha: f64, beta: f64) -> Result<Self> {
        check::positive("alpha", alpha)?;
        check::positive("beta", beta)?;
        Self::new(vec![alpha, beta])
    }

    /// The balanced prior `Dir(strength, …, strength)` over `k` categories.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::DirichletMultinomial;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// assert_eq!(DirichletMultinomial::balanced(3, 2.0)?.prior(), &[2.0, 2.0, 2.0]);
    /// assert!(DirichletMultinomial::balanced(1, 2.0).is_err()); // names `k`
    /// # Ok(()) }
    /// ```
    pub fn balanced(k: usize, strength: f64) -> Result<Self> {
        if k < 2 {
            return Err(Error::invalid("k", k, "must be at least 2"));
        }
        check::positive("strength", strength)?;
        check::values("k", k as u128, 1)?;
        Self::new(vec![strength; k])
    }

    /// The prior parameters α.
    pub fn prior(&self) -> &[f64] {
        &self.prior
    }

    /// Number of categories k.
    pub fn k(&self) -> usize {
        self.prior.len()
    }

    /// Counts `(ones, n − ones)` of the Beta-Binomial case.
    ///
    /// # Errors
    /// `ones > n` (named `ones`), or the model is not k = 2.
    pub fn beta_counts(&self, ones: u64, n: u64) -> Result<Vec<u64>> {
        if self.k() != 2 {
            return Err(Error::DimensionMismatch {
                name: "prior (Beta-Binomial needs k = 2)",
                expected: 2,
                got: self.k(),
            });
        }
        if ones > n {
            return Err(Error::invalid(
                "ones",
                ones,
                format!("must not exceed the data size n = {n}"),
            ));
        }
        Ok(vec![ones, n - ones])
    }

    /// Check counts against the model and an announced data size `n`.
    ///
    /// # Errors
    /// Wrong number of categories, or counts not summing to `n` (named `counts`).
    pub fn check_counts(&self, counts: &[u64], n: u64) -> Result<()> {
        check::len("counts", counts.len(), self.k())?;
        let total: u128 = counts.iter().map(|&c| c as u128).sum();
        if total != n as u128 {
            return Err(Error::invalid(
                "counts",
                format!("{counts:?}"),
                format!("must sum to the data size n = {n} (they sum to {total})"),
            ));
        }
        Ok(())
    }

    /// Deterministic counts for `n` rows with the given category proportions: each category
    /// gets `round(p_i n)`, and the last takes the remainder (the paper's "datasets of mean
    /// (0.2, 0.3, 0.5)").
    ///
    /// # Errors
    /// Wrong length, proportions negative or not summing to 1 (within 1e-9).
    pub fn counts_from_proportions(&self, proportions: &[f64], n: u64) -> Result<Vec<u64>> {
        check::len("proportions", proportions.len(), self.k())?;
        check::all_finite("proportions", proportions)?;
        let s: f64 = proportions.iter().sum();
        if proportions.iter().any(|&p| p < 0.0) || (s - 1.0).abs() > 1e-9 {
            return Err(Error::invalid(
                "proportions",
                format!("{proportions:?}"),
                "must be non-negative and sum to 1",
            ));
        }
        let mut counts = Vec::with_capacity(self.k());
        let mut used = 0u64;
        for &p in &proportions[..self.k() - 1] {
            let c = ((p * n as f64).round() as u64).min(n - used);
            used += c;
            counts.push(c);
        }
        counts.push(n - used);
        Ok(counts)
    }

    /// The posterior parameters `α + Δα`.
    ///
    /// # Errors
    /// Wrong number of categories.
    pub fn posterior(&self, counts: &[u64]) -> Result<Vec<f64>> {
        check::len("counts", counts.len(), self.k())?;
        Ok(self
            .prior
            .iter()
            .zip(counts)
            .map(|(a, &c)| a + c as f64)
            .collect())
    }
}

/// `n = Σ counts`, or an error naming `counts` if the sum does not fit in a `u64`.
pub(crate) fn total(counts: &[u64]) -> Result<u64> {
    counts
        .iter()
        .try_fold(0u64, |acc, &c| acc.checked_add(c))
        .ok_or_else(|| {
            Error::invalid(
                "counts",
                format!("{counts:?}"),
                "their sum exceeds 2^64 - 1; use smaller counts",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportions_round_and_sum() {
        let m = DirichletMultinomial::balanced(3, 1.0).unwrap();
        let c = m.counts_from_proportions(&[0.2, 0.3, 0.5], 301).unwrap();
        assert_eq!(c.iter().sum::<u64>(), 301);
        assert_eq!(c, vec![60, 90, 151]);
        assert!(m.counts_from_proportions(&[0.2, 0.3, 0.6], 10).is_err());
        let e = m.check_counts(&[1, 2, 3], 7).unwrap_err().to_string();
        assert!(e.contains("counts"), "{e}");
    }
}
