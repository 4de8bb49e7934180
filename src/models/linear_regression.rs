//! Linear regression with Gaussian errors of unknown scale: `y_j ~ N(x_jᵀβ, σ²)`, parameters
//! `θ = (β, ln σ)`, prior `N(0, σ₀²)` on every coefficient and on `ln σ`. With one column of
//! ones it is the model of a mean and a spread ([`LinearRegression::gaussian_mean`]).
//!
//! Per row, with the residual `r = y − xᵀβ` and `s = ln σ`:
//! `ln p(y | x, θ) = −½ ln 2π − s − r² e^{−2s} / 2`, gradient `(r e^{−2s} x, r² e^{−2s} − 1)`.
//! Neither is bounded in `θ` (a small σ makes every residual expensive), so
//! [`Model::public_lipschitz`] is `None`.

use std::sync::Arc;

use super::glm::{self, BLOCK};
use crate::error::{Result, check};
use crate::models::{ColumnData, Model};

/// `½ ln 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Linear regression (or a Gaussian mean) on owned, column-major covariates.
#[derive(Clone, Debug)]
pub struct LinearRegression {
    x: ColumnData,
    y: Arc<[f64]>,
    prior_var: f64,
    names: Option<Arc<[String]>>,
}

#[inline]
fn log_lik(r: f64, s: f64) -> f64 {
    -HALF_LN_2PI - s - 0.5 * r * r * (-2.0 * s).exp()
}

impl LinearRegression {
    /// Linear regression of `y` (finite, one per row of `x`) on the covariates `x` (`n × p`;
    /// add a column of ones for an intercept). The parameters are the `p` coefficients, then
    /// `log_sigma`; prior `N(0, prior_var)` on each.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, LinearRegression, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let x = ColumnData::from_columns(vec![vec![1.0; 3], vec![0.0, 1.0, 2.0]])?;
    /// let model = LinearRegression::new(x.clone(), &[0.1, 1.2, 1.9], 10.0)?;
    /// assert_eq!(model.param_names(), ["theta_0", "theta_1", "log_sigma"]);
    /// // N(0.1 | 0, 1) at β = 0, σ = 1:
    /// let want = -0.5 * (2.0 * std::f64::consts::PI).ln() - 0.005;
    /// assert!((model.log_lik_row(&[0.0, 0.0, 0.0], 0) - want).abs() < 1e-15);
    /// assert!(LinearRegression::new(x, &[0.1, f64::NAN, 1.9], 10.0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn new(x: ColumnData, y: &[f64], prior_var: f64) -> Result<Self> {
        check::positive("prior_var", prior_var)?;
        check::len("y", y.len(), x.n_rows())?;
        glm::ResponseSupport::Finite.check(y)?;
        Ok(Self {
            x,
            y: y.into(),
            prior_var,
            names: None,
        })
    }

    /// `y_j ~ N(μ, σ²)`: parameters `mean` and `log_sigma`, prior `N(0, prior_var)` on each.
    ///
    /// ```
    /// use dp_mcmc::models::{LinearRegression, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = LinearRegression::gaussian_mean(&[1.0, 2.0, 3.0], 10.0)?;
    /// assert_eq!(model.param_names(), ["mean", "log_sigma"]);
    /// assert!(LinearRegression::gaussian_mean(&[], 10.0).is_err()); // no rows
    /// # Ok(()) }
    /// ```
    pub fn gaussian_mean(y: &[f64], prior_var: f64) -> Result<Self> {
        let x = ColumnData::from_columns(vec![vec![1.0; y.len()]])?;
        Self::new(x, y, prior_var)?.with_param_names(vec!["mean".into(), "log_sigma".into()])
    }

    /// The model with parameter names `names`: one per parameter, the coefficients' names
    /// then the name of `ln σ` (e.g. `intercept`, the covariates, `log_sigma`).
    pub fn with_param_names(mut self, names: Vec<String>) -> Result<Self> {
        self.names = Some(glm::check_names(names, self.dim())?.into());
        Ok(self)
    }

    /// The prior variance `σ₀²`.
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }

    /// Number of coefficients `p`.
    fn p(&self) -> usize {
        self.x.n_cols()
    }

    /// Scaled residuals `r_k e^{−2s}` into `f` and `r_k² e^{−2s} − 1` into `h` for rows
    /// `s0 .. s0 + f.len()`.
    fn scores(&self, theta: &[f64], s0: usize, f: &mut [f64], h: &mut [f64]) {
        let p = self.p();
        let w = (-2.0 * theta[p]).exp();
        glm::eta_rows(&self.x, &theta[..p], s0, f);
        for ((fk, hk), &y) in f.iter_mut().zip(h.iter_mut()).zip(&self.y[s0..]) {
            let r = y - *fk;
            *fk = r * w;
            *hk = r * r * w - 1.0;
        }
    }
}

impl Model for LinearRegression {
    fn dim(&self) -> usize {
        self.p() + 1
    }

    fn n_rows(&self) -> usize {
        self.x.n_rows()
    }

    fn param_names(&self) -> Vec<String> {
        super::glm::param_names(self.names.as_deref(), self.p(), &["log_sigma"])
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        super::glm::normal_log_prior(theta, self.prior_var)
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        super::glm::normal_grad_log_prior(theta, self.prior_var, grad);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        let p = self.p();
        let r = self.y[row] - glm::eta(&self.x, &theta[..p], row);
        log_lik(r, theta[p])
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim())?;
        let p = self.p();
        let w = (-2.0 * theta[p]).exp();
        let r = self.y[row] - glm::eta(&self.x, &theta[..p], row);
        for (i, g) in grad[..p].iter_mut().enumerate() {
            *g = r * w * self.x.get(row, i);
        }
        grad[p] = r * r * w - 1.0;
        Ok(())
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        let p = self.p();
        glm::eta_rows(&self.x, &theta[..p], start, out);
        for (o, &y) in out.iter_mut().zip(&self.y[start..]) {
            *o = log_lik(y - *o, theta[p]);
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        let p = self.p();
        let (s, s_new) = (theta[p], theta_new[p]);
        let (w, w_new) = (0.5 * (-2.0 * s).exp(), 0.5 * (-2.0 * s_new).exp());
        glm::eta_rows(&self.x, &theta[..p], start, out);
        let mut buf = [0.0; BLOCK];
        for (b, chunk) in out.chunks_mut(BLOCK).enumerate() {
            let s0 = start + b * BLOCK;
            let delta = &mut buf[..chunk.len()];
            glm::eta_delta(&self.x, &theta[..p], &theta_new[..p], s0, delta);
            for ((o, &dl), &y) in chunk.iter_mut().zip(delta.iter()).zip(&self.y[s0..]) {
                let r = y - *o;
                let r_new = r - dl;
                *o = (s - s_new) - r_new * r_new * w_new + r * r * w;
            }
        }
    }

    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        let p = self.p();
        let rows =
            super::gradient_rows("grad_log_lik_rows output (a multiple of d)", out.len(), d)?;
        let (mut f, mut h) = ([0.0; BLOCK], [0.0; BLOCK]);
        for b in 0..rows.div_ceil(BLOCK) {
            let s0 = start + b * BLOCK;
            let len = BLOCK.min(rows - b * BLOCK);
            let (f, h) = (&mut f[..len], &mut h[..len]);
            self.scores(theta, s0, f, h);
            let block = &mut out[b * BLOCK * d..(b * BLOCK + len) * d];
            for (g, &hk) in block.chunks_exact_mut(d).zip(h.iter()) {
                g[p] = hk;
            }
            super::glm::slopes_times_x(&self.x, s0, f, block, d, p);
        }
        Ok(())
    }

    fn has_column_gradients(&self) -> bool {
        true
    }

    fn grad_log_lik_cols(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        let p = self.p();
        let len = super::gradient_rows("grad_log_lik_cols output (a multiple of d)", out.len(), d)?;
        let end = start + len;
        // Column 0 first holds the scaled residuals, column p the log-sigma scores.
        let (first, rest) = out.split_at_mut(len);
        let (middle, last) = rest.split_at_mut((p - 1) * len);
        self.scores(theta, start, first, last);
        for (i, col) in (1..p).zip(middle.chunks_exact_mut(len)) {
            for ((g, &fk), &x) in col
                .iter_mut()
                .zip(first.iter())
                .zip(&self.x.col(i)[start..end])
            {
                *g = fk * x;
            }
        }
        for (g, &x) in first.iter_mut().zip(&self.x.col(0)[start..end]) {
            *g *= x;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::glm::tests::check_model;

    fn regression() -> LinearRegression {
        let n = 600;
        let (x1, x2) = crate::models::glm::tests::covariates(n);
        let y: Vec<f64> = (0..n).map(|j| ((j * 7) % 11) as f64 / 4.0 - 1.0).collect();
        let x = ColumnData::from_columns(vec![vec![1.0; n], x1, x2]).unwrap();
        LinearRegression::new(x, &y, 10.0).unwrap()
    }

    #[test]
    fn gradients_and_ratios_match_the_log_likelihood() {
        check_model(
            &regression(),
            &[0.2, -0.4, 0.3, 0.1],
            &[0.25, -0.1, 0.3, -0.2],
        );
        let y: Vec<f64> = (0..300).map(|j| (j % 9) as f64 - 4.0).collect();
        let mean = LinearRegression::gaussian_mean(&y, 10.0).unwrap();
        check_model(&mean, &[0.3, 0.5], &[0.1, 0.45]);
    }

    #[test]
    fn log_lik_is_the_normal_log_density() {
        let m = regression();
        let theta = [0.3, 0.5, -0.2, 0.4];
        for j in [0, 3, 17] {
            let mu = glm::eta(&m.x, &theta[..3], j);
            let sd = theta[3].exp();
            let z = (m.y[j] - mu) / sd;
            let want = -0.5 * z * z - sd.ln() - HALF_LN_2PI;
            assert!((m.log_lik_row(&theta, j) - want).abs() < 1e-13);
        }
        assert_eq!(m.public_lipschitz(), None);
    }

    #[test]
    fn names_are_checked() {
        let m = regression();
        let ok = m.clone().with_param_names(vec![
            "intercept".into(),
            "a".into(),
            "b".into(),
            "log_sigma".into(),
        ]);
        assert_eq!(ok.unwrap().param_names()[3], "log_sigma");
        assert!(m.clone().with_param_names(vec!["a".into(); 4]).is_err());
        assert!(m.with_param_names(vec!["a".into()]).is_err());
    }
}
