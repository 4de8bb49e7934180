//! The circle model (Räisä 2021, §5.3): parameters `θ = (x, y)`, observed radii `r_j`,
//! per row `ln p(r | x, y) = −a (x² + y² − r²)²`, flat prior.
//!
//! The posterior is a ring around the origin; its mean is `(0, 0)` (thesis §5.3), there is no
//! exact sampler. The thesis draws `r_j ~ N(3, 1)` and uses `a = 10⁻⁵`.
//!
//! With `s = x² + y²` the ratio is `−a (s' − s)(s' + s − 2 r²)`, one multiply-add per row.

use rand::RngExt;
use rand_distr::StandardNormal;
use std::sync::Arc;

use crate::error::{Error, Result, check};
use crate::models::{Element, Layout, Model};
use crate::rng::chain_rng;

/// The circle model on owned radii, stored as squared radii `r_j²` in `f64` (`CircleModel`,
/// the default) or `f32` (`CircleModel<f32>`, [`compact`](CircleModel::compact)).
#[derive(Clone, Debug)]
pub struct CircleModel<T: Element = f64> {
    /// `r_j²`.
    r2: Arc<[T]>,
    /// `Σ_j r_j²` (the unclipped gradient sum, the log-likelihood sum).
    r2_sum: f64,
    /// `Σ_j r_j⁴` (the log-likelihood sum).
    r4_sum: f64,
    a: f64,
}

impl CircleModel {
    /// The thesis' `a = 10⁻⁵` (Table 5.1, `circle.py`).
    pub const THESIS_A: f64 = 1e-5;

    /// A circle model on the radii `radii` (finite, non-empty) with scale `a > 0`.
    ///
    /// ```
    /// use dp_mcmc::models::{CircleModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = CircleModel::new(&[3.0, 2.5, 3.5], 1e-5)?;
    /// assert_eq!((model.dim(), model.n_rows()), (2, 3));
    /// assert_eq!(model.log_lik_row(&[3.0, 0.0], 0), 0.0);
    /// assert!(CircleModel::new(&[], 1e-5).is_err()); // no data
    /// # Ok(()) }
    /// ```
    pub fn new(radii: &[f64], a: f64) -> Result<Self> {
        check::positive("a", a)?;
        if radii.is_empty() {
            return Err(Error::InvalidData(
                "no radii: the circle model needs at least one row".into(),
            ));
        }
        check::all_finite("radii", radii)?;
        let r2: Arc<[f64]> = radii.iter().map(|r| r * r).collect();
        Ok(Self::from_squared(r2, a))
    }

    /// `n` radii `r_j ~ N(3, 1)` from `chain_rng(seed, 0)` (the thesis' data law).
    ///
    /// ```
    /// use dp_mcmc::models::CircleModel;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let r = CircleModel::generate_radii(1000, 1)?;
    /// assert_eq!(r.len(), 1000);
    /// assert!(CircleModel::generate_radii(0, 1).is_err());
    /// # Ok(()) }
    /// ```
    pub fn generate_radii(n: usize, seed: u64) -> Result<Vec<f64>> {
        check::at_least_one("n", n)?;
        check::values("n", n as u128, 1)?;
        let mut rng = chain_rng(seed, 0);
        Ok((0..n)
            .map(|_| 3.0 + rng.sample::<f64, _>(StandardNormal))
            .collect())
    }
}

impl<T: Element> CircleModel<T> {
    /// The model on stored squared radii (finite, non-empty) with a valid `a`.
    fn from_squared(r2: Arc<[T]>, a: f64) -> Self {
        Self {
            r2_sum: r2.iter().map(|v| v.to_f64()).sum(),
            r4_sum: r2.iter().map(|v| v.to_f64() * v.to_f64()).sum(),
            r2,
            a,
        }
    }

    /// The same model with its data, the squared radii `r_j²`, rounded to `f32` once (half the
    /// bytes per row; every term still computed in `f64`, see
    /// [`ColumnData::compact`](crate::models::ColumnData::compact)). An error names a row
    /// whose `r²` is beyond the `f32` range.
    ///
    /// ```
    /// use dp_mcmc::models::{CircleModel, Layout, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = CircleModel::new(&[3.0, 2.5, 3.5], 1e-5)?.compact()?;
    /// assert_eq!((model.layout(), model.n_rows()), (Layout::F32, 3));
    /// assert!(CircleModel::new(&[3.0, 1e20], 1e-5)?.compact().is_err()); // r² > 3.4e38
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<CircleModel<f32>> {
        let mut r2 = Vec::with_capacity(self.r2.len());
        for (j, v) in self.r2.iter().enumerate() {
            r2.push(f32::from_f64(v.to_f64()).ok_or_else(|| {
                Error::InvalidData(format!(
                    "row {j} has r² = {v}, beyond the f32 range; rescale the radii or keep \
                     the default f64 layout"
                ))
            })?);
        }
        Ok(CircleModel::from_squared(r2.into(), self.a))
    }

    /// The scale `a`.
    pub fn a(&self) -> f64 {
        self.a
    }

    /// `Σ_j ln p(r_j | θ) = −a(n‖θ‖⁴ − 2‖θ‖² Σr² + Σr⁴)` from sufficient statistics (`O(1)`;
    /// the log posterior up to a constant, the prior being flat). For plots and checks: it
    /// cancels at large `n`, so kernels use per-row ratios.
    ///
    /// ```
    /// use dp_mcmc::models::{CircleModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = CircleModel::new(&[3.0, 2.5, 3.5], 1e-5)?;
    /// let rows: f64 = (0..3).map(|j| model.log_lik_row(&[1.0, 2.0], j)).sum();
    /// assert!((model.log_lik_sum(&[1.0, 2.0]) - rows).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    pub fn log_lik_sum(&self, theta: &[f64]) -> f64 {
        let s = sq_norm(theta);
        -self.a * (self.r2.len() as f64 * s * s - 2.0 * s * self.r2_sum + self.r4_sum)
    }

    /// The squared radii `r_j²`, as stored.
    pub fn radii_squared(&self) -> &[T] {
        &self.r2
    }

    /// The ratio `r_j = c2·r_j² + c1` of `theta_new` against `theta` as `(c2, c1)`:
    /// `−a(s' − s)(s' + s − 2r²)` with `s = ‖θ‖²`.
    #[inline]
    fn ratio_coefs(&self, theta: &[f64], theta_new: &[f64]) -> (f64, f64) {
        let (s, s_new) = (sq_norm(theta), sq_norm(theta_new));
        let c2 = 2.0 * self.a * (s_new - s);
        let c1 = -self.a * (s_new - s) * (s_new + s);
        (c2, c1)
    }
}

#[inline]
fn sq_norm(theta: &[f64]) -> f64 {
    theta[0] * theta[0] + theta[1] * theta[1]
}

impl<T: Element> Model for CircleModel<T> {
    fn layout(&self) -> Layout {
        T::LAYOUT
    }
    fn dim(&self) -> usize {
        2
    }

    fn n_rows(&self) -> usize {
        self.r2.len()
    }

    fn param_names(&self) -> Vec<String> {
        vec!["x".into(), "y".into()]
    }

    /// Flat prior: 0.
    fn log_prior(&self, _theta: &[f64]) -> f64 {
        0.0
    }

    fn grad_log_prior(&self, _theta: &[f64], grad: &mut [f64]) {
        grad.fill(0.0);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        let e = sq_norm(theta) - self.r2[row].to_f64();
        -self.a * e * e
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), 2)?;
        let f = -4.0 * self.a * (sq_norm(theta) - self.r2[row].to_f64());
        grad[0] = f * theta[0];
        grad[1] = f * theta[1];
        Ok(())
    }

    fn has_direct_ratio(&self) -> bool {
        true
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        let s = sq_norm(theta);
        let a = self.a;
        let end = start + out.len();
        for (o, &r2) in out.iter_mut().zip(&self.r2[start..end]) {
            let e = s - r2.to_f64();
            *o = -a * e * e;
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        let (c2, c1) = self.ratio_coefs(theta, theta_new);
        let end = start + out.len();
        for (o, &r2) in out.iter_mut().zip(&self.r2[start..end]) {
            *o = c2 * r2.to_f64() + c1;
        }
    }

    fn log_lik_ratio_indexed(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) {
        let (c2, c1) = self.ratio_coefs(theta, theta_new);
        for (o, &j) in out.iter_mut().zip(rows) {
            *o = c2 * self.r2[j].to_f64() + c1;
        }
    }

    fn linear_ratio(&self, theta: &[f64], theta_new: &[f64]) -> Option<super::LinearRatio<'_>> {
        // `c2·r² + c1` is `c1 + c2·r²`: a floating-point sum does not depend on its order
        let (c2, c1) = self.ratio_coefs(theta, theta_new);
        super::linear::linear_ratio(c1, std::iter::once((c2, &self.r2[..])))
    }

    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        super::gradient_rows(
            "grad_log_lik_rows output (a multiple of d = 2)",
            out.len(),
            2,
        )?;
        let s = sq_norm(theta);
        let (x, y) = (theta[0], theta[1]);
        let f0 = -4.0 * self.a;
        let end = start + out.len() / 2;
        for (g, &r2) in out.chunks_exact_mut(2).zip(&self.r2[start..end]) {
            let f = f0 * (s - r2.to_f64());
            g[0] = f * x;
            g[1] = f * y;
        }
        Ok(())
    }

    fn has_column_gradients(&self) -> bool {
        true
    }

    fn grad_log_lik_cols(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let len = super::gradient_rows("grad_log_lik_cols output (a multiple of d)", out.len(), 2)?;
        let s = sq_norm(theta);
        let (x, y) = (theta[0], theta[1]);
        let f0 = -4.0 * self.a;
        let (c0, c1) = out.split_at_mut(len);
        for ((g0, g1), &r2) in c0.iter_mut().zip(c1).zip(&self.r2[start..start + len]) {
            let f = f0 * (s - r2.to_f64());
            *g0 = f * x;
            *g1 = f * y;
        }
        Ok(())
    }

    fn has_gradient_sum(&self) -> bool {
        true
    }

    fn grad_log_lik_sum(&self, theta: &[f64], out: &mut [f64]) -> Result<()> {
        check::len("grad", out.len(), 2)?;
        // Σ_j −4a(‖θ‖² − r_j²) θ = −4a(n‖θ‖² − Σ r²) θ
        let f = -4.0 * self.a * (self.r2.len() as f64 * sq_norm(theta) - self.r2_sum);
        out[0] = f * theta[0];
        out[1] = f * theta[1];
        Ok(())
    }
}
