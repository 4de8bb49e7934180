//! Small models with a known posterior, for tests, doctests and benches.
//!
//! [`IsotropicGaussian`]: rows `x_j ~ N(θ, I_d)`, prior `N(0, 100·I_d)`, so the posterior is
//! Gaussian in closed form. The samplers' invariance tests start chains at exact posterior
//! draws ([`IsotropicGaussian::posterior_draws`]) and check that the chains' last positions
//! still follow the posterior ([`IsotropicGaussian::check_posterior_draws`], or
//! [`check_normal_draws`] for any normal target).
//!
//! ```
//! # fn main() -> dp_mcmc::Result<()> {
//! use dp_mcmc::models::Model;
//! use dp_mcmc::models::testing::IsotropicGaussian;
//!
//! // One coordinate, the rows given by hand:
//! let model = IsotropicGaussian::new(vec![0.1, -0.3, 0.7], 1)?;
//! assert_eq!((model.dim(), model.n_rows()), (1, 3));
//! let (mean, var) = model.posterior();
//! assert!((mean[0] - 0.5 / 3.01).abs() < 1e-15 && (var - 1.0 / 3.01).abs() < 1e-15);
//!
//! // Generated rows (coordinate c has mean c/2), and exact posterior draws:
//! let model = IsotropicGaussian::generate(500, 2, 1);
//! let draws = model.posterior_draws(400, 5);
//! assert!(model.check_posterior_draws(&draws).is_ok());
//! // Bad rows are an error naming the argument:
//! assert!(IsotropicGaussian::new(vec![1.0, 2.0, 3.0], 2).is_err());
//! # Ok(()) }
//! ```

use rand_distr::{Distribution, StandardNormal};
use statrs::distribution::{ContinuousCDF, Normal};

use super::Model;
use crate::error::{Error, Result, check};
use crate::rng::chain_rng;

/// Prior variance of every coordinate (Table 5.1's Gaussian prior).
const PRIOR_VAR: f64 = 100.0;

/// Rows `x_j ~ N(θ, I_d)` (row-major), prior `N(0, 100·I_d)`: the posterior is
/// `N(Σ_j x_j / (n + 1/100), I_d / (n + 1/100))`. Has per-row gradients `x_j − θ`.
#[derive(Clone, Debug)]
pub struct IsotropicGaussian {
    d: usize,
    x: Vec<f64>,
}

impl IsotropicGaussian {
    /// The model with the given rows (row-major: `rows.len()` is a positive multiple of `d`).
    ///
    /// # Errors
    /// `d = 0`, no rows, a length that is not a multiple of `d`, or a non-finite value.
    pub fn new(rows: Vec<f64>, d: usize) -> Result<Self> {
        check::at_least_one("d", d)?;
        if rows.is_empty() || !rows.len().is_multiple_of(d) {
            return Err(Error::invalid(
                "rows",
                rows.len(),
                format!("must hold n ≥ 1 rows of d = {d} values (row-major)"),
            ));
        }
        check::all_finite("rows", &rows)?;
        Ok(IsotropicGaussian { d, x: rows })
    }

    /// `n` rows in `d` dimensions: value `c` of a row is `c/2 + z` with `z ~ N(0, 1)` from
    /// `chain_rng(seed, 99)`.
    pub fn generate(n: usize, d: usize, seed: u64) -> Self {
        let mut rng = chain_rng(seed, 99);
        let x = (0..n * d)
            .map(|i| {
                let z: f64 = StandardNormal.sample(&mut rng);
                (i % d) as f64 * 0.5 + z
            })
            .collect();
        IsotropicGaussian { d, x }
    }

    /// Posterior mean and the variance of every coordinate.
    pub fn posterior(&self) -> (Vec<f64>, f64) {
        let prec = self.n_rows() as f64 + 1.0 / PRIOR_VAR;
        let mean = (0..self.d)
            .map(|c| self.x.iter().skip(c).step_by(self.d).sum::<f64>() / prec)
            .collect();
        (mean, 1.0 / prec)
    }

    /// `count` independent exact posterior draws from `chain_rng(seed, 1234)`.
    pub fn posterior_draws(&self, count: usize, seed: u64) -> Vec<Vec<f64>> {
        let (mean, var) = self.posterior();
        let mut rng = chain_rng(seed, 1234);
        (0..count)
            .map(|_| {
                mean.iter()
                    .map(|m| {
                        let z: f64 = StandardNormal.sample(&mut rng);
                        m + var.sqrt() * z
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether independent `draws` (e.g. the last positions of many chains started at
    /// [`posterior_draws`](Self::posterior_draws)) follow the posterior
    /// ([`check_normal_draws`] with the posterior mean and variance).
    ///
    /// # Errors
    /// A message naming the coordinate and the statistic that failed.
    pub fn check_posterior_draws(&self, draws: &[Vec<f64>]) -> std::result::Result<(), String> {
        let (mean, var) = self.posterior();
        check_normal_draws(draws, &mean, var)
    }

    fn row(&self, j: usize) -> &[f64] {
        &self.x[j * self.d..(j + 1) * self.d]
    }
}

impl Model for IsotropicGaussian {
    fn dim(&self) -> usize {
        self.d
    }
    fn n_rows(&self) -> usize {
        self.x.len() / self.d
    }
    fn log_prior(&self, t: &[f64]) -> f64 {
        -0.5 * t.iter().map(|v| v * v).sum::<f64>() / PRIOR_VAR
    }
    fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) {
        for (g, t) in g.iter_mut().zip(t) {
            *g = -t / PRIOR_VAR;
        }
    }
    fn log_lik_row(&self, t: &[f64], j: usize) -> f64 {
        -0.5 * self
            .row(j)
            .iter()
            .zip(t)
            .map(|(x, t)| (x - t) * (x - t))
            .sum::<f64>()
    }
    fn has_gradient(&self) -> bool {
        true
    }
    fn grad_log_lik_row(&self, t: &[f64], j: usize, g: &mut [f64]) -> Result<()> {
        for ((g, x), t) in g.iter_mut().zip(self.row(j)).zip(t) {
            *g = x - t;
        }
        Ok(())
    }
}

/// Whether independent `draws` follow `N(mean, var·I)`: per coordinate, the standardized
/// mean within 5 standard errors, and a Kolmogorov-Smirnov test at α = 10⁻⁶ (asymptotic
/// critical value `√(ln(2/α)/(2m))` for `m` draws). Draws from that normal fail with
/// probability below 10⁻⁵ per coordinate.
///
/// # Errors
/// A message naming the coordinate and the statistic that failed, or the shape that is wrong.
pub fn check_normal_draws(
    draws: &[Vec<f64>],
    mean: &[f64],
    var: f64,
) -> std::result::Result<(), String> {
    let m = draws.len();
    if m == 0 || draws.iter().any(|t| t.len() != mean.len()) {
        return Err(format!("need ≥ 1 draws of dimension {}", mean.len()));
    }
    let std_normal = Normal::standard();
    for (c, &mu) in mean.iter().enumerate() {
        let mut z: Vec<f64> = draws.iter().map(|t| (t[c] - mu) / var.sqrt()).collect();
        let zbar = z.iter().sum::<f64>() / m as f64;
        if zbar.abs() >= 5.0 / (m as f64).sqrt() {
            return Err(format!(
                "coordinate {c}: standardized mean {zbar} over {m} draws"
            ));
        }
        z.sort_by(f64::total_cmp);
        let ks = z
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let f = std_normal.cdf(v);
                (f - i as f64 / m as f64)
                    .abs()
                    .max(((i + 1) as f64 / m as f64 - f).abs())
            })
            .fold(0.0, f64::max);
        let crit = ((2.0f64 / 1e-6).ln() / (2.0 * m as f64)).sqrt();
        if ks >= crit {
            return Err(format!(
                "coordinate {c}: KS statistic {ks} ≥ {crit} (m = {m}, α = 1e-6)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_rejects_shifted_draws() {
        let model = IsotropicGaussian::generate(200, 2, 3);
        let (_, var) = model.posterior();
        let mut draws = model.posterior_draws(400, 4);
        assert!(model.check_posterior_draws(&draws).is_ok());
        // A shift of one posterior s.d. in coordinate 1: mean test fails (20 s.e.).
        for t in &mut draws {
            t[1] += var.sqrt();
        }
        let err = model.check_posterior_draws(&draws).unwrap_err();
        assert!(err.starts_with("coordinate 1"), "{err}");
    }

    #[test]
    fn bad_rows_are_errors() {
        assert!(IsotropicGaussian::new(vec![], 1).is_err());
        assert!(IsotropicGaussian::new(vec![1.0], 0).is_err());
        assert!(IsotropicGaussian::new(vec![f64::NAN], 1).is_err());
    }
}
