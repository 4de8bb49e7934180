//! Logistic regression as Yildirim & Ermis (2019) use it with DP penalty: `y_j ∈ {0, 1}`,
//! `P(y_j = 1 | θ) = σ(x_jᵀθ)`, prior `θ ~ N(0, σ₀² I)`.
//!
//! Per row `ln p(y | x, θ) = y η − ln(1 + e^η)` with `η = xᵀθ`, gradient `(y − σ(η)) x`.
//! The log-likelihood has slope `|y − σ(η)| ≤ 1` in `η`, so
//! `|r_j| ≤ ‖x_j‖ · ‖θ' − θ‖` and `‖∇ ln p(y_j | x_j, θ)‖ ≤ ‖x_j‖`: a per-row Lipschitz bound.
//! Add a column of ones to `x` for an intercept.
//!
//! Memory: the covariates (`n · p` values, `f64` or, with [`LogisticModel::compact`], `f32`)
//! and one byte per row for `y`. Kernels add a per-row cache of the current and proposed
//! log-likelihoods for the ratio passes (16 bytes per row, 8 with `f32`: see
//! [`Model::layout`]).

use std::sync::Arc;

use super::glm;
use crate::error::{Result, check};
use crate::models::{ColumnData, Element, Layout, Model};

/// `ln(1 + e^t) = max(t, 0) + ln(1 + e^{−|t|})`, accurate for every `t`. Branch-free (the
/// sign of `η` is random across rows); the same values as `t + ln_1p(e^{−t})` for `t > 0` and
/// `ln_1p(e^t)` otherwise (`0 + v = v` exactly, and `max` returns 0 for a NaN `t`, whose
/// result stays NaN through the second term).
#[inline]
fn softplus(t: f64) -> f64 {
    t.max(0.0) + (-t.abs()).exp().ln_1p()
}

/// `y η − ln(1 + e^η)`.
#[inline]
fn log_lik(eta: f64, y: f64) -> f64 {
    y * eta - softplus(eta)
}

/// Logistic regression on owned, column-major covariates, stored as `f64` (`LogisticModel`,
/// the default) or `f32` (`LogisticModel<f32>`, [`compact`](LogisticModel::compact)).
#[derive(Clone, Debug)]
pub struct LogisticModel<T: Element = f64> {
    x: ColumnData<T>,
    /// The outcomes, 0 or 1 (one byte per row).
    y: Arc<[u8]>,
    prior_var: f64,
    lipschitz: f64,
    names: Option<Arc<[String]>>,
    public_bounds: Option<Arc<[(f64, f64)]>>,
}

/// Rows per block in the ratio loops (stack buffers; no allocation).
const BLOCK: usize = glm::BLOCK;

impl<T: Element> LogisticModel<T> {
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
    pub fn new(x: ColumnData<T>, y: &[f64], prior_var: f64) -> Result<Self> {
        check::positive("prior_var", prior_var)?;
        check::len("y", y.len(), x.n_rows())?;
        glm::ResponseSupport::Binary.check(y)?;
        let y: Arc<[u8]> = y.iter().map(|&v| u8::from(v == 1.0)).collect();
        Ok(Self::from_parts(x, y, prior_var))
    }

    /// The model on checked parts (`y` of 0/1 bytes, one per row of `x`; `prior_var > 0`).
    fn from_parts(x: ColumnData<T>, y: Arc<[u8]>, prior_var: f64) -> Self {
        // max_j ‖x_j‖², a block of rows at a time (no n-sized buffer).
        let mut max2 = 0.0_f64;
        let mut norms2 = [0.0; BLOCK];
        for s in (0..x.n_rows()).step_by(BLOCK) {
            let len = BLOCK.min(x.n_rows() - s);
            let block = &mut norms2[..len];
            block.fill(0.0);
            for i in 0..x.n_cols() {
                for (b, &v) in block.iter_mut().zip(&x.col(i)[s..s + len]) {
                    let v = v.to_f64();
                    *b += v * v;
                }
            }
            max2 = block.iter().fold(max2, |m, &b| m.max(b));
        }
        Self {
            x,
            y,
            prior_var,
            lipschitz: max2.sqrt(),
            names: None,
            public_bounds: None,
        }
    }

    /// The same model on its covariates rounded to `f32` once (half the bytes per row; every
    /// term still computed in `f64`, see [`ColumnData::compact`]). Names and public bounds
    /// are kept; the rounded data must still lie within the declared bounds (an error names
    /// the column and row otherwise: widen the bounds).
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, Layout, LogisticModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let x = ColumnData::from_columns(vec![vec![1.0; 3], vec![-1.0, 0.1, 2.0]])?;
    /// let model = LogisticModel::new(x, &[0.0, 1.0, 1.0], 10.0)?;
    /// let compact = model.compact()?;
    /// assert_eq!(compact.layout(), Layout::F32);
    /// let (a, b) = (model.log_lik_row(&[0.3, 0.7], 1), compact.log_lik_row(&[0.3, 0.7], 1));
    /// assert!((a - b).abs() < 1e-7);
    /// // 0.1 rounds up to 0.100000001…, outside a declared upper bound of exactly 0.1:
    /// let x = ColumnData::from_columns(vec![vec![0.1, -0.5]])?;
    /// let bounded = LogisticModel::new(x, &[0.0, 1.0], 10.0)?
    ///     .with_public_feature_bounds(&[(-1.0, 0.1)])?;
    /// assert!(bounded.compact().unwrap_err().to_string().contains("row 0"));
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<LogisticModel<f32>> {
        let mut m = LogisticModel::from_parts(self.x.compact()?, self.y.clone(), self.prior_var);
        m.names = self.names.clone();
        if let Some(b) = &self.public_bounds {
            m = m.with_public_feature_bounds(b)?;
        }
        Ok(m)
    }

    /// The covariates.
    pub fn x(&self) -> &ColumnData<T> {
        &self.x
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
        self.names = Some(glm::check_names(names, self.x.n_cols())?.into());
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
        glm::check_bounds(&self.x, bounds, &self.param_names())?;
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
        glm::eta(&self.x, theta, row)
    }

    /// `η_j` for rows `start .. start + out.len()` into `out` (column by column).
    fn eta_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        glm::eta_rows(&self.x, theta, start, out);
    }

    /// `y_j` as `f64` (0 or 1).
    #[inline]
    fn y(&self, row: usize) -> f64 {
        f64::from(self.y[row])
    }
}

impl<T: Element> Model for LogisticModel<T> {
    fn layout(&self) -> Layout {
        T::LAYOUT
    }
    fn dim(&self) -> usize {
        self.x.n_cols()
    }

    fn n_rows(&self) -> usize {
        self.x.n_rows()
    }

    fn param_names(&self) -> Vec<String> {
        glm::param_names(self.names.as_deref(), self.dim(), &[])
    }

    /// `sqrt(Σ_i max(lo_i², hi_i²))` of the declared bounds
    /// ([`LogisticModel::with_public_feature_bounds`]); `None` without them. Never the
    /// data-derived [`LogisticModel::lipschitz_bound`].
    fn public_lipschitz(&self) -> Option<f64> {
        self.public_bounds.as_deref().map(glm::box_norm)
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        glm::normal_log_prior(theta, self.prior_var)
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        glm::normal_grad_log_prior(theta, self.prior_var, grad);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        log_lik(self.eta(theta, row), self.y(row))
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim())?;
        let eta = self.eta(theta, row);
        let f = self.y(row) - 1.0 / (1.0 + (-eta).exp());
        for (i, g) in grad.iter_mut().enumerate() {
            *g = f * self.x.get(row, i);
        }
        Ok(())
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        self.eta_rows(theta, start, out);
        let end = start + out.len();
        for (o, &y) in out.iter_mut().zip(&self.y[start..end]) {
            *o = log_lik(*o, f64::from(y));
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        // η for every row, then η' = η + Σ_{changed i} (θ'_i − θ_i) x_i block by block.
        self.eta_rows(theta, start, out);
        let mut buf = [0.0; BLOCK];
        for (b, chunk) in out.chunks_mut(BLOCK).enumerate() {
            let s = start + b * BLOCK;
            let delta = &mut buf[..chunk.len()];
            glm::eta_delta(&self.x, theta, theta_new, s, delta);
            for ((o, &dl), &y) in chunk.iter_mut().zip(delta.iter()).zip(&self.y[s..]) {
                let y = f64::from(y);
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
                *fk = f64::from(y) - 1.0 / (1.0 + (-*fk).exp());
            }
            let block = &mut out[b * BLOCK * d..(b * BLOCK + len) * d];
            glm::slopes_times_x(&self.x, s, f, block, d, d);
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
            *fk = f64::from(y) - 1.0 / (1.0 + (-*fk).exp());
        }
        glm::slopes_times_x_cols(&self.x, start, f, rest, d);
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
        check_model(&model().compact().unwrap(), &[0.2, -0.4], &[0.25, -0.1]);
    }

    /// The branch-free softplus gives the same bits as the two-branch form it replaced.
    #[test]
    fn softplus_is_the_two_branch_form_bit_for_bit() {
        let old = |t: f64| {
            if t > 0.0 {
                t + (-t).exp().ln_1p()
            } else {
                t.exp().ln_1p()
            }
        };
        let mut ts = vec![0.0, -0.0, 1e-300, -1e-300, 745.0, -745.0, 800.0, -800.0];
        ts.extend([f64::INFINITY, f64::NEG_INFINITY, f64::MAX, f64::MIN]);
        ts.extend((-4000..=4000).map(|k| k as f64 * 0.01 + 1e-7 * k as f64));
        for t in ts {
            assert_eq!(softplus(t).to_bits(), old(t).to_bits(), "t = {t}");
        }
        assert!(softplus(f64::NAN).is_nan());
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
