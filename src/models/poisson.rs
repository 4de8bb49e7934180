//! Poisson regression with a log link: counts `y_j ∈ {0, 1, 2, …}`,
//! `y_j ~ Poisson(e^{η_j})` with `η_j = x_jᵀβ`, prior `β ~ N(0, σ₀² I)`.
//!
//! Per row `ln p(y | x, β) = y η − e^η − ln y!`, gradient `(y − e^η) x`. The slope in `η` is
//! unbounded (large counts, large rates), so no per-row Lipschitz bound follows from declared
//! covariate ranges alone: [`Model::public_lipschitz`] is `None`, and a DP kernel's clip bound
//! must come from elsewhere (the `auto` builders buy a DP quantile of gradient norms).
//!
//! When `η` is so large that `e^η` overflows, the row's log-likelihood is `−∞` and a ratio of
//! two such rows is NaN; the DP kernels clip a NaN ratio to `−bound` and zero a non-finite
//! gradient row, so the sensitivity they assume still holds.

use std::sync::Arc;

use statrs::function::gamma::ln_gamma;

use super::glm::{self, BLOCK};
use crate::error::{Result, check};
use crate::models::{ColumnData, Model};

/// Poisson regression on owned, column-major covariates.
#[derive(Clone, Debug)]
pub struct PoissonRegression {
    x: ColumnData,
    y: Arc<[f64]>,
    /// `ln y_j!`, so that a row's log-likelihood is the log probability itself.
    ln_fact: Arc<[f64]>,
    prior_var: f64,
    names: Option<Arc<[String]>>,
}

/// `y η − e^η − ln y!`.
#[inline]
fn log_lik(eta: f64, y: f64, ln_fact: f64) -> f64 {
    y * eta - eta.exp() - ln_fact
}

impl PoissonRegression {
    /// Poisson regression of the counts `y` (non-negative integers stored as `f64`, one per
    /// row of `x`) on the covariates `x` (`n × p`; add a column of ones for an intercept),
    /// prior `N(0, prior_var · I)`.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, Model, PoissonRegression};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let x = ColumnData::from_columns(vec![vec![1.0; 3], vec![0.0, 1.0, 2.0]])?;
    /// let model = PoissonRegression::new(x.clone(), &[0.0, 2.0, 5.0], 10.0)?
    ///     .with_param_names(vec!["intercept".into(), "dose".into()])?;
    /// assert_eq!(model.param_names(), ["intercept", "dose"]);
    /// // ln p(y = 2 | η = 0) = −1 − ln 2
    /// assert!((model.log_lik_row(&[0.0, 0.0], 1) - (-1.0 - 2f64.ln())).abs() < 1e-14);
    /// // Counts must be non-negative integers:
    /// let err = PoissonRegression::new(x, &[0.0, 1.5, 5.0], 10.0).unwrap_err();
    /// assert!(err.to_string().contains("row 1"));
    /// # Ok(()) }
    /// ```
    pub fn new(x: ColumnData, y: &[f64], prior_var: f64) -> Result<Self> {
        check::positive("prior_var", prior_var)?;
        check::len("y", y.len(), x.n_rows())?;
        glm::ResponseSupport::Counts.check(y)?;
        let ln_fact: Arc<[f64]> = y.iter().map(|&v| ln_gamma(v + 1.0)).collect();
        Ok(Self {
            x,
            y: y.into(),
            ln_fact,
            prior_var,
            names: None,
        })
    }

    /// The model with parameter names `names` (one per column of `x`, e.g. `intercept` then
    /// the covariates' names) instead of `theta_0`, `theta_1`, …; an error if the count or
    /// uniqueness is wrong (see [`PoissonRegression::new`] for an example).
    pub fn with_param_names(mut self, names: Vec<String>) -> Result<Self> {
        self.names = Some(glm::check_names(names, self.x.n_cols())?.into());
        Ok(self)
    }

    /// The prior variance `σ₀²`.
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }

    /// `f_k = y_k − e^{η_k}` for rows `s .. s + f.len()`.
    fn slope_rows(&self, beta: &[f64], s: usize, f: &mut [f64]) {
        glm::eta_rows(&self.x, beta, s, f);
        for (fk, &y) in f.iter_mut().zip(&self.y[s..]) {
            *fk = y - fk.exp();
        }
    }
}

impl Model for PoissonRegression {
    fn dim(&self) -> usize {
        self.x.n_cols()
    }

    fn n_rows(&self) -> usize {
        self.x.n_rows()
    }

    fn param_names(&self) -> Vec<String> {
        super::glm::param_names(self.names.as_deref(), self.dim(), &[])
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        super::glm::normal_log_prior(theta, self.prior_var)
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        super::glm::normal_grad_log_prior(theta, self.prior_var, grad);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        log_lik(
            glm::eta(&self.x, theta, row),
            self.y[row],
            self.ln_fact[row],
        )
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim())?;
        let f = self.y[row] - glm::eta(&self.x, theta, row).exp();
        for (i, g) in grad.iter_mut().enumerate() {
            *g = f * self.x.get(row, i);
        }
        Ok(())
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        glm::eta_rows(&self.x, theta, start, out);
        let end = start + out.len();
        for ((o, &y), &lf) in out
            .iter_mut()
            .zip(&self.y[start..end])
            .zip(&self.ln_fact[start..end])
        {
            *o = log_lik(*o, y, lf);
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        // r = y Δη − e^η (e^{Δη} − 1): ln y! cancels, no difference of two large numbers.
        glm::eta_rows(&self.x, theta, start, out);
        let mut buf = [0.0; BLOCK];
        for (b, chunk) in out.chunks_mut(BLOCK).enumerate() {
            let s = start + b * BLOCK;
            let delta = &mut buf[..chunk.len()];
            glm::eta_delta(&self.x, theta, theta_new, s, delta);
            for ((o, &dl), &y) in chunk.iter_mut().zip(delta.iter()).zip(&self.y[s..]) {
                *o = y * dl - o.exp() * dl.exp_m1();
            }
        }
    }

    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        let rows =
            super::gradient_rows("grad_log_lik_rows output (a multiple of d)", out.len(), d)?;
        let mut f = [0.0; BLOCK];
        for b in 0..rows.div_ceil(BLOCK) {
            let s = start + b * BLOCK;
            let len = BLOCK.min(rows - b * BLOCK);
            let f = &mut f[..len];
            self.slope_rows(theta, s, f);
            let block = &mut out[b * BLOCK * d..(b * BLOCK + len) * d];
            super::glm::slopes_times_x(&self.x, s, f, block, d, d);
        }
        Ok(())
    }

    fn has_column_gradients(&self) -> bool {
        true
    }

    fn grad_log_lik_cols(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        let len = super::gradient_rows("grad_log_lik_cols output (a multiple of d)", out.len(), d)?;
        // Column 0 first holds f_k = y_k − e^{η_k}; it is overwritten last.
        let (f, rest) = out.split_at_mut(len);
        self.slope_rows(theta, start, f);
        super::glm::slopes_times_x_cols(&self.x, start, f, rest, d);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::glm::tests::check_model;

    fn model() -> PoissonRegression {
        let n = 600;
        let (x1, x2) = crate::models::glm::tests::covariates(n);
        let y: Vec<f64> = (0..n).map(|j| ((j * 7) % 5) as f64).collect();
        let x = ColumnData::from_columns(vec![vec![1.0; n], x1, x2]).unwrap();
        PoissonRegression::new(x, &y, 10.0).unwrap()
    }

    #[test]
    fn gradients_and_ratios_match_the_log_likelihood() {
        check_model(&model(), &[0.2, -0.4, 0.3], &[0.25, -0.1, 0.3]);
    }

    #[test]
    fn log_lik_is_the_poisson_log_pmf() {
        let m = model();
        let theta = [0.3, 0.5, -0.2];
        for j in [0, 3, 17] {
            let lambda = glm::eta(&m.x, &theta, j).exp();
            let y = m.y[j];
            let pmf = (-lambda).exp() * lambda.powf(y) / (1..=y as u64).product::<u64>() as f64;
            assert!((m.log_lik_row(&theta, j) - pmf.ln()).abs() < 1e-12);
        }
    }

    #[test]
    fn overflow_gives_minus_infinity_not_a_panic() {
        let m = model();
        assert_eq!(m.log_lik_row(&[800.0, 0.0, 0.0], 0), f64::NEG_INFINITY);
        assert_eq!(m.public_lipschitz(), None);
        assert!(PoissonRegression::new(m.x.clone(), &vec![-1.0; 600], 1.0).is_err());
    }
}
