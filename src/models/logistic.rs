//! Logistic regression as Yildirim & Ermis (2019) use it with DP penalty: `y_j ∈ {0, 1}`,
//! `P(y_j = 1 | θ) = σ(x_jᵀθ)`, prior `θ ~ N(0, σ₀² I)`.
//!
//! Per row `ln p(y | x, θ) = y η − ln(1 + e^η)` with `η = xᵀθ`, gradient `(y − σ(η)) x`.
//! The log-likelihood has slope `|y − σ(η)| ≤ 1` in `η`, so
//! `|r_j| ≤ ‖x_j‖ · ‖θ' − θ‖` and `‖∇ ln p(y_j | x_j, θ)‖ ≤ ‖x_j‖`: a per-row Lipschitz bound.
//! Add a column of ones to `x` for an intercept.

use crate::error::{Error, Result, check};
use crate::models::{ColumnData, Model};

/// `ln(1 + e^t)`, accurate for every `t`.
#[inline]
fn softplus(t: f64) -> f64 {
    if t > 0.0 {
        t + (-t).exp().ln_1p()
    } else {
        t.exp().ln_1p()
    }
}

/// `y η − ln(1 + e^η)`.
#[inline]
fn log_lik(eta: f64, y: f64) -> f64 {
    y * eta - softplus(eta)
}

/// Logistic regression on owned, column-major covariates.
#[derive(Clone, Debug)]
pub struct LogisticModel {
    x: ColumnData,
    y: std::sync::Arc<[f64]>,
    prior_var: f64,
    lipschitz: f64,
    names: Option<std::sync::Arc<[String]>>,
    public_bounds: Option<std::sync::Arc<[(f64, f64)]>>,
}

/// Rows per block in the ratio loops (stack buffers; no allocation).
const BLOCK: usize = 256;

impl LogisticModel {
    /// Logistic regression of `y` (each 0 or 1, one per row of `x`) on the covariates `x`
    /// (`n × p`), prior `N(0, prior_var · I)`.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, LogisticModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// // intercept column and one covariate
    /// let x = ColumnData::from_columns(vec![vec![1.0; 4], vec![-1.0, 0.5, 2.0, 3.0]])?;
    /// let model = LogisticModel::new(x.clone(), &[0.0, 0.0, 1.0, 1.0], 10.0)?;
    /// assert_eq!(model.dim(), 2);
    /// assert!((model.lipschitz_bound() - 10f64.sqrt()).abs() < 1e-15);
    /// assert!(LogisticModel::new(x, &[0.0, 2.0, 1.0, 1.0], 10.0).is_err()); // y must be 0/1
    /// # Ok(()) }
    /// ```
    pub fn new(x: ColumnData, y: &[f64], prior_var: f64) -> Result<Self> {
        check::positive("prior_var", prior_var)?;
        check::len("y", y.len(), x.n_rows())?;
        if let Some(j) = y.iter().position(|&v| v != 0.0 && v != 1.0) {
            return Err(Error::InvalidData(format!(
                "y has the value {} at row {j}; logistic regression needs every y in {{0, 1}}",
                y[j]
            )));
        }
        let mut norms2 = vec![0.0; x.n_rows()];
        for i in 0..x.n_cols() {
            for (s, &v) in norms2.iter_mut().zip(x.col(i)) {
                *s += v * v;
            }
        }
        let lipschitz = norms2.iter().fold(0.0_f64, |m, &s| m.max(s)).sqrt();
        Ok(Self {
            x,
            y: y.into(),
            prior_var,
            lipschitz,
            names: None,
            public_bounds: None,
        })
    }

    /// The model with parameter names `names` (one per column of `x`, e.g. `intercept` then
    /// the covariates' names) instead of `theta_0`, `theta_1`, ….
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, LogisticModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let x = ColumnData::from_columns(vec![vec![1.0; 2], vec![-1.0, 0.5]])?;
    /// let model = LogisticModel::new(x, &[0.0, 1.0], 10.0)?;
    /// let named = model.clone().with_param_names(vec!["intercept".into(), "age".into()])?;
    /// assert_eq!(named.param_names(), ["intercept", "age"]);
    /// assert!(model.with_param_names(vec!["age".into()]).is_err()); // one name per column
    /// # Ok(()) }
    /// ```
    pub fn with_param_names(mut self, names: Vec<String>) -> Result<Self> {
        self.names = Some(super::glm::check_names(names, self.x.n_cols())?.into());
        Ok(self)
    }

    /// The model with **public** covariate bounds `lo_i ≤ x_i ≤ hi_i`, one `(lo, hi)` per
    /// column of `x` (an intercept column is `(1.0, 1.0)`), declared without looking at the
    /// data (e.g. from a codebook). Then [`Model::public_lipschitz`] is
    /// `sqrt(Σ_i max(lo_i², hi_i²))` ≥ `‖x‖` for every possible row, so a DP kernel can clip
    /// at it without spending privacy. Every value of the data must lie within its bounds
    /// (clamp the data first otherwise): an error names the column and row.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, LogisticModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let x = ColumnData::from_columns(vec![vec![1.0; 3], vec![-1.0, 0.5, 2.0]])?;
    /// let model = LogisticModel::new(x, &[0.0, 1.0, 1.0], 10.0)?;
    /// assert_eq!(model.public_lipschitz(), None);
    /// let bounded = model.clone().with_public_feature_bounds(&[(1.0, 1.0), (-3.0, 2.0)])?;
    /// assert!((bounded.public_lipschitz().unwrap() - 10f64.sqrt()).abs() < 1e-14);
    /// // The value 2.0 at row 2 lies outside [-3, 1]:
    /// let err = model.with_public_feature_bounds(&[(1.0, 1.0), (-3.0, 1.0)]).unwrap_err();
    /// assert!(err.to_string().contains("row 2"));
    /// # Ok(()) }
    /// ```
    pub fn with_public_feature_bounds(mut self, bounds: &[(f64, f64)]) -> Result<Self> {
        super::glm::check_bounds(&self.x, bounds, &self.param_names())?;
        self.public_bounds = Some(bounds.into());
        Ok(self)
    }

    /// `max_j ‖x_j‖`: with it, `|r_j| ≤ L ‖θ' − θ‖` and every per-row gradient has norm `≤ L`.
    ///
    /// Using `L · ‖θ' − θ‖` as the clip bound of a DP kernel means nothing is clipped, but
    /// **this number is computed from the data and is itself not private**: releasing it, or a
    /// clip bound derived from it, leaks information about the largest row. Set the clip bound
    /// from public knowledge instead (e.g. a known bound on `‖x‖`, or covariates scaled to a
    /// known range).
    pub fn lipschitz_bound(&self) -> f64 {
        self.lipschitz
    }

    /// The prior variance `σ₀²`.
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }

    #[inline]
    fn eta(&self, theta: &[f64], row: usize) -> f64 {
        theta
            .iter()
            .enumerate()
            .map(|(i, t)| t * self.x.get(row, i))
            .sum()
    }

    /// `η_j` for rows `start .. start + out.len()` into `out` (column by column).
    fn eta_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        out.fill(0.0);
        let end = start + out.len();
        for (i, &t) in theta.iter().enumerate() {
            if t != 0.0 {
                for (o, &x) in out.iter_mut().zip(&self.x.col(i)[start..end]) {
                    *o += t * x;
                }
            }
        }
    }
}

impl Model for LogisticModel {
    fn dim(&self) -> usize {
        self.x.n_cols()
    }

    fn n_rows(&self) -> usize {
        self.x.n_rows()
    }

    fn param_names(&self) -> Vec<String> {
        super::glm::param_names(self.names.as_deref(), self.dim(), &[])
    }

    /// `sqrt(Σ_i max(lo_i², hi_i²))` of the declared bounds
    /// ([`LogisticModel::with_public_feature_bounds`]); `None` without them. Never the
    /// data-derived [`LogisticModel::lipschitz_bound`].
    fn public_lipschitz(&self) -> Option<f64> {
        self.public_bounds.as_deref().map(super::glm::box_norm)
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        super::glm::normal_log_prior(theta, self.prior_var)
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        super::glm::normal_grad_log_prior(theta, self.prior_var, grad);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        log_lik(self.eta(theta, row), self.y[row])
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim())?;
        let eta = self.eta(theta, row);
        let f = self.y[row] - 1.0 / (1.0 + (-eta).exp());
        for (i, g) in grad.iter_mut().enumerate() {
            *g = f * self.x.get(row, i);
        }
        Ok(())
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        self.eta_rows(theta, start, out);
        let end = start + out.len();
        for (o, &y) in out.iter_mut().zip(&self.y[start..end]) {
            *o = log_lik(*o, y);
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        // η for every row, then η' = η + Σ_{changed i} (θ'_i − θ_i) x_i block by block.
        self.eta_rows(theta, start, out);
        let mut buf = [0.0; BLOCK];
        for (b, chunk) in out.chunks_mut(BLOCK).enumerate() {
            let s = start + b * BLOCK;
            let delta = &mut buf[..chunk.len()];
            delta.fill(0.0);
            for (i, (&t, &t_new)) in theta.iter().zip(theta_new).enumerate() {
                if t != t_new {
                    let dt = t_new - t;
                    for (dl, &x) in delta.iter_mut().zip(&self.x.col(i)[s..s + chunk.len()]) {
                        *dl += dt * x;
                    }
                }
            }
            for ((o, &dl), &y) in chunk.iter_mut().zip(delta.iter()).zip(&self.y[s..]) {
                *o = log_lik(*o + dl, y) - log_lik(*o, y);
            }
        }
    }

    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        super::gradient_rows("grad_log_lik_rows output (a multiple of d)", out.len(), d)?;
        let rows = out.len() / d;
        let mut f = [0.0; BLOCK];
        for b in 0..rows.div_ceil(BLOCK) {
            let s = start + b * BLOCK;
            let len = BLOCK.min(rows - b * BLOCK);
            let f = &mut f[..len];
            self.eta_rows(theta, s, f);
            for (fk, &y) in f.iter_mut().zip(&self.y[s..s + len]) {
                *fk = y - 1.0 / (1.0 + (-*fk).exp());
            }
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
        let end = start + len;
        // Column 0 first holds f_k = y_k − σ(η_k); it is overwritten last.
        let (f, rest) = out.split_at_mut(len);
        self.eta_rows(theta, start, f);
        for (fk, &y) in f.iter_mut().zip(&self.y[start..end]) {
            *fk = y - 1.0 / (1.0 + (-*fk).exp());
        }
        super::glm::slopes_times_x_cols(&self.x, start, f, rest, d);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::glm::tests::check_model;

    fn model() -> LogisticModel {
        let n = 600;
        let (x1, _) = crate::models::glm::tests::covariates(n);
        let y: Vec<f64> = (0..n).map(|j| ((j * 7) % 2) as f64).collect();
        let x = ColumnData::from_columns(vec![vec![1.0; n], x1]).unwrap();
        LogisticModel::new(x, &y, 10.0).unwrap()
    }

    #[test]
    fn fast_paths_match_the_log_likelihood() {
        check_model(&model(), &[0.2, -0.4], &[0.25, -0.1]);
    }

    #[test]
    fn public_bound_covers_every_row_of_the_box_and_is_not_the_data_bound() {
        let m = model();
        // The data's x1 lies in [-1, 1]; the declared box is wider, so the public bound is
        // sqrt(1 + 9) and not the data's sqrt(1 + 1).
        let b = m
            .clone()
            .with_public_feature_bounds(&[(1.0, 1.0), (-3.0, 2.0)])
            .unwrap();
        let l = b.public_lipschitz().unwrap();
        assert!(l >= 10f64.sqrt() && l < 10f64.sqrt() * (1.0 + 1e-14));
        assert!((m.lipschitz_bound() - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(m.public_lipschitz(), None);
        // Wrong count, lo > hi, NaN, and data outside the box are errors.
        assert!(m.clone().with_public_feature_bounds(&[(1.0, 1.0)]).is_err());
        assert!(
            m.clone()
                .with_public_feature_bounds(&[(1.0, 1.0), (2.0, -2.0)])
                .is_err()
        );
        assert!(
            m.clone()
                .with_public_feature_bounds(&[(1.0, 1.0), (f64::NAN, 2.0)])
                .is_err()
        );
        let e = m
            .with_public_feature_bounds(&[(1.0, 1.0), (-0.5, 2.0)])
            .unwrap_err();
        assert!(
            e.to_string().contains("row 0") && e.to_string().contains("`theta_1`"),
            "{e}"
        );
    }
}
