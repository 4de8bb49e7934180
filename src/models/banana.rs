//! The banana model of Theorem 13 (Räisä 2021, §5.2), its data generator and its exact
//! tempered posterior (the banana distribution `Ban(μ, Σ, a, b, m)`).
//!
//! With `u(θ) = (θ₁, θ₂ + a(θ₁ − m)² + b, θ₃, …, θ_d)`:
//! - prior `θ ~ Ban(0, σ₀² I, a, b, m)`, i.e. `ln p(θ) = Σ_i ln N(u_i(θ); 0, σ₀²)`;
//! - per row `ln p(x | θ) = Σ_i ln N(x_i; u_i(θ), σ_i²)` (with normalising constants);
//! - the likelihood is tempered by `T` (the sampler multiplies the log-likelihood by
//!   [`Model::tempering`]).
//!
//! **b sign.** The residual of `x₂` is `x₂ − (θ₂ + a(θ₁ − m)² + b)`, as Theorem 13 states. The
//! thesis code (`banana_model.py`) writes `x₂ − (θ₂ + a(θ₁ − m)²) + b`, the wrong sign; it is
//! harmless there because every experiment has `b = m = 0` (THESIS-NOTES §10).
//!
//! The likelihood is Gaussian in `u(θ)`, so the per-row log-likelihood ratio is linear in the
//! row: `r_j = Σ_i τ_i (u'_i − u_i)(x_ji − (u_i + u'_i)/2)`. Only coordinates whose mean `u_i`
//! changes contribute (θ₁ also moves `u₂`), so a one-coordinate update costs one pass over one
//! or two columns.

use rand::{Rng, RngExt};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::error::{Error, Result, check};
use crate::models::{ColumnData, Element, Layout, Model, linear};
use crate::rng::chain_rng;

/// Hyper-parameters of the banana model (Theorem 13).
#[derive(Clone, Debug, PartialEq)]
pub struct BananaParams {
    /// Curvature `a` (any finite value; `a = 0` gives a Gaussian model).
    pub a: f64,
    /// Offset `b` of the second coordinate (0 in every thesis experiment).
    pub b: f64,
    /// Centre `m` of the curvature (0 in every thesis experiment).
    pub m: f64,
    /// Prior variance `σ₀²` of the banana prior `Ban(0, σ₀² I, a, b, m)`.
    pub prior_var: f64,
    /// Likelihood variances `σ_i²`, one per coordinate (its length is the dimension `d ≥ 2`).
    pub lik_vars: Vec<f64>,
    /// Tempering `T ∈ (0, 1]` (`T = n₀/n` in the tempered experiments).
    pub tempering: f64,
}

impl BananaParams {
    /// The thesis' values (§5.4): `σ₀² = 1000`, `σ₁² = 20`, `σ₂² = 2.5`, `σ_i² = 1` for
    /// `i ≥ 3`, `b = m = 0`, `T = 1`.
    ///
    /// ```
    /// use dp_mcmc::models::BananaParams;
    /// let p = BananaParams::thesis(3, 20.0);
    /// assert_eq!(p.lik_vars, vec![20.0, 2.5, 1.0]);
    /// assert!(p.validate().is_ok());
    /// // d = 1 is not a banana.
    /// assert!(BananaParams::thesis(1, 20.0).validate().is_err());
    /// ```
    pub fn thesis(d: usize, a: f64) -> Self {
        let lik_vars = (0..d)
            .map(|i| match i {
                0 => 20.0,
                1 => 2.5,
                _ => 1.0,
            })
            .collect();
        Self {
            a,
            b: 0.0,
            m: 0.0,
            prior_var: 1000.0,
            lik_vars,
            tempering: 1.0,
        }
    }

    /// Sets the tempering `T` (validated by [`validate`](Self::validate)).
    #[must_use]
    pub fn with_tempering(mut self, tempering: f64) -> Self {
        self.tempering = tempering;
        self
    }

    /// Dimension `d` (the number of likelihood variances).
    pub fn dim(&self) -> usize {
        self.lik_vars.len()
    }

    /// Checks `d ≥ 2`, finite `a, b, m`, `σ₀² > 0`, every `σ_i² > 0` and `T ∈ (0, 1]`.
    pub fn validate(&self) -> Result<()> {
        if self.lik_vars.len() < 2 {
            return Err(Error::invalid(
                "lik_vars",
                format!("{:?}", self.lik_vars),
                "needs one variance per coordinate and at least 2 coordinates (d >= 2)",
            ));
        }
        check::finite("a", self.a)?;
        check::finite("b", self.b)?;
        check::finite("m", self.m)?;
        check::positive("prior_var", self.prior_var)?;
        for &v in &self.lik_vars {
            check::positive("lik_vars", v)?;
        }
        check::rate("tempering", self.tempering)?;
        Ok(())
    }

    /// `u₂(θ) = θ₂ + a(θ₁ − m)² + b`, the likelihood mean of the second coordinate.
    fn row_mean_2(&self, theta: &[f64]) -> f64 {
        let c = theta[0] - self.m;
        theta[1] + self.a * c * c + self.b
    }

    /// Draws `n` rows from the likelihood at `theta` (column `i` from stream `i` of
    /// `chain_rng(seed, ·)`): `x_i = u_i(θ) + σ_i z`.
    ///
    /// ```
    /// use dp_mcmc::models::BananaParams;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let p = BananaParams::thesis(2, 20.0);
    /// let data = p.generate(&[0.0, 3.0], 1000, 1)?;
    /// assert_eq!((data.n_rows(), data.n_cols()), (1000, 2));
    /// assert!(p.generate(&[0.0], 1000, 1).is_err()); // θ of the wrong length
    /// # Ok(()) }
    /// ```
    pub fn generate(&self, theta: &[f64], n: usize, seed: u64) -> Result<ColumnData> {
        self.validate()?;
        check::len("theta", theta.len(), self.dim())?;
        check::all_finite("theta", theta)?;
        check::at_least_one("n", n)?;
        check::values("n", n as u128, self.dim() as u128)?;
        let u2 = self.row_mean_2(theta);
        // One independent stream per column, generated in parallel (deterministic).
        let columns = self
            .lik_vars
            .par_iter()
            .enumerate()
            .map(|(i, &v)| {
                let mean = if i == 1 { u2 } else { theta[i] };
                let sd = v.sqrt();
                let mut rng = chain_rng(seed, i as u64);
                (0..n)
                    .map(|_| mean + sd * rng.sample::<f64, _>(StandardNormal))
                    .collect()
            })
            .collect();
        ColumnData::from_columns(columns)
    }
}

/// The banana model on owned, column-major data, stored as `f64` (`BananaModel`, the default)
/// or `f32` (`BananaModel<f32>`, [`compact`](BananaModel::compact)).
#[derive(Clone, Debug)]
pub struct BananaModel<T: Element = f64> {
    data: ColumnData<T>,
    params: BananaParams,
    /// Likelihood precisions `τ_i = 1/σ_i²`.
    tau: Vec<f64>,
    /// `Σ_i −½ ln(2π σ_i²)`.
    lik_const: f64,
    /// `d · (−½ ln(2π σ₀²))`.
    prior_const: f64,
    /// Column sums `Σ_j x_ji` (the unclipped gradient sum).
    col_sums: Vec<f64>,
}

impl<T: Element> BananaModel<T> {
    /// A banana model on `data` (`n × d`, `d = params.lik_vars.len()`).
    ///
    /// ```
    /// use dp_mcmc::models::{BananaModel, BananaParams, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let params = BananaParams::thesis(2, 20.0);
    /// let data = params.generate(&[0.0, 3.0], 1000, 7)?;
    /// let model = BananaModel::new(data.clone(), params.clone())?;
    /// assert_eq!((model.dim(), model.n_rows()), (2, 1000));
    /// // T = 0 is not a tempering.
    /// assert!(BananaModel::new(data, params.with_tempering(0.0)).is_err());
    /// # Ok(()) }
    /// ```
    pub fn new(data: ColumnData<T>, params: BananaParams) -> Result<Self> {
        params.validate()?;
        check::len("data columns", data.n_cols(), params.dim())?;
        let tau: Vec<f64> = params.lik_vars.iter().map(|v| 1.0 / v).collect();
        let ln2pi = (2.0 * std::f64::consts::PI).ln();
        let lik_const = params
            .lik_vars
            .iter()
            .map(|v| -0.5 * (ln2pi + v.ln()))
            .sum();
        let prior_const = params.dim() as f64 * -0.5 * (ln2pi + params.prior_var.ln());
        Ok(Self {
            col_sums: data.column_sums(),
            data,
            params,
            tau,
            lik_const,
            prior_const,
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &BananaParams {
        &self.params
    }

    /// The data.
    pub fn data(&self) -> &ColumnData<T> {
        &self.data
    }

    /// The same model on its data rounded to `f32` once (half the bytes per row; every term
    /// still computed in `f64`, see [`ColumnData::compact`]). The exact posterior of the
    /// compact model is that of the rounded data.
    ///
    /// ```
    /// use dp_mcmc::models::{BananaModel, BananaParams, Layout, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let params = BananaParams::thesis(2, 20.0);
    /// let model = BananaModel::new(params.generate(&[0.0, 3.0], 1000, 7)?, params)?;
    /// let compact = model.compact()?;
    /// assert_eq!((compact.layout(), compact.n_rows()), (Layout::F32, 1000));
    /// let (a, b) = (model.log_lik_row(&[0.1, 2.9], 5), compact.log_lik_row(&[0.1, 2.9], 5));
    /// assert!((a - b).abs() < 1e-6 * a.abs().max(1.0));
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<BananaModel<f32>> {
        BananaModel::new(self.data.compact()?, self.params.clone())
    }

    /// The exact tempered posterior of Theorem 13 for this model's data.
    ///
    /// ```
    /// use dp_mcmc::models::{BananaModel, BananaParams};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let params = BananaParams::thesis(2, 20.0);
    /// let model = BananaModel::new(params.generate(&[0.0, 3.0], 100_000, 1)?, params)?;
    /// let post = model.posterior();
    /// // s₁ = (n τ₁ + τ₀)^(-1/2) does not depend on the data (THESIS-NOTES §10).
    /// assert!((post.z_std()[0] - 0.0141421342095176).abs() < 1e-15);
    /// # Ok(()) }
    /// ```
    pub fn posterior(&self) -> BananaPosterior {
        let xbar = self.data.column_means();
        BananaPosterior::from_sufficient(&self.params, &xbar, self.data.n_rows())
            .expect("params were validated in `new`, x̄ has length d and n >= 1")
    }

    /// `u_i(θ)`: the likelihood mean of coordinate `i`.
    #[inline]
    fn mean_i(&self, theta: &[f64], i: usize) -> f64 {
        if i == 1 {
            self.params.row_mean_2(theta)
        } else {
            theta[i]
        }
    }

    /// `∂u₂/∂θ₁ = 2a(θ₁ − m)`.
    #[inline]
    fn du2(&self, theta: &[f64]) -> f64 {
        2.0 * self.params.a * (theta[0] - self.params.m)
    }
}

impl<T: Element> linear::ColumnRatio<T> for BananaModel<T> {
    fn ratio_columns(&self) -> usize {
        self.params.dim()
    }

    fn ratio_column(&self, k: usize) -> &[T] {
        self.data.col(k)
    }

    /// Coefficients `(c, c0)` of coordinate `i`'s ratio term `c·x + c0`,
    /// `τ_i(u'_i − u_i)(x − (u_i + u'_i)/2)`; `None` if `u_i` does not change.
    #[inline]
    fn ratio_coef(&self, theta: &[f64], theta_new: &[f64], i: usize) -> Option<(f64, f64)> {
        let (mu, mu_new) = (self.mean_i(theta, i), self.mean_i(theta_new, i));
        if mu == mu_new {
            return None;
        }
        let c = self.tau[i] * (mu_new - mu);
        Some((c, -c * 0.5 * (mu + mu_new)))
    }
}

impl<T: Element> Model for BananaModel<T> {
    fn layout(&self) -> Layout {
        T::LAYOUT
    }
    fn dim(&self) -> usize {
        self.params.dim()
    }

    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    fn tempering(&self) -> f64 {
        self.params.tempering
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        let tau0 = 1.0 / self.params.prior_var;
        let ss: f64 = (0..self.dim())
            .map(|i| {
                let u = self.mean_i(theta, i);
                u * u
            })
            .sum();
        self.prior_const - 0.5 * tau0 * ss
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        let tau0 = 1.0 / self.params.prior_var;
        for (i, g) in grad.iter_mut().enumerate() {
            *g = -tau0 * self.mean_i(theta, i);
        }
        grad[0] += grad[1] * self.du2(theta);
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        let mut s = self.lik_const;
        for (i, &t) in self.tau.iter().enumerate() {
            let e = self.data.get(row, i) - self.mean_i(theta, i);
            s -= 0.5 * t * e * e;
        }
        s
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim())?;
        for (i, g) in grad.iter_mut().enumerate() {
            *g = self.tau[i] * (self.data.get(row, i) - self.mean_i(theta, i));
        }
        grad[0] += grad[1] * self.du2(theta);
        Ok(())
    }

    fn has_direct_ratio(&self) -> bool {
        true
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        out.fill(self.lik_const);
        let end = start + out.len();
        for (i, &t) in self.tau.iter().enumerate() {
            let mu = self.mean_i(theta, i);
            let h = -0.5 * t;
            for (o, &x) in out.iter_mut().zip(&self.data.col(i)[start..end]) {
                let e = x.to_f64() - mu;
                *o += h * e * e;
            }
        }
    }

    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        linear::ratio_rows(self, theta, theta_new, start, out);
    }

    fn linear_ratio(&self, theta: &[f64], theta_new: &[f64]) -> Option<super::LinearRatio<'_>> {
        linear::model_linear_ratio(self, theta, theta_new)
    }

    fn log_lik_ratio_indexed(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) {
        linear::ratio_indexed(self, theta, theta_new, rows, out);
    }

    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        super::gradient_rows("grad_log_lik_rows output (a multiple of d)", out.len(), d)?;
        let end = start + out.len() / d;
        for (i, &t) in self.tau.iter().enumerate() {
            let mu = self.mean_i(theta, i);
            for (g, &x) in out.chunks_exact_mut(d).zip(&self.data.col(i)[start..end]) {
                g[i] = t * (x.to_f64() - mu);
            }
        }
        let du2 = self.du2(theta);
        if du2 != 0.0 {
            for g in out.chunks_exact_mut(d) {
                g[0] += g[1] * du2;
            }
        }
        Ok(())
    }

    fn has_column_gradients(&self) -> bool {
        true
    }

    fn grad_log_lik_cols(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let len = super::gradient_rows(
            "grad_log_lik_cols output (a multiple of d)",
            out.len(),
            self.dim(),
        )?;
        let end = start + len;
        let terms = self
            .tau
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, self.mean_i(theta, i), &self.data.col(i)[start..end]));
        super::linear::centred_cols(out, len, terms);
        let du2 = self.du2(theta);
        if du2 != 0.0 {
            let (c0, rest) = out.split_at_mut(len);
            for (g0, &g1) in c0.iter_mut().zip(&rest[..len]) {
                *g0 += g1 * du2;
            }
        }
        Ok(())
    }

    fn centred_gradient(&self, theta: &[f64]) -> Option<super::CentredGradient<'_>> {
        let d = self.dim();
        if d > super::CENTRED_MAX_DIM || theta.len() != d {
            return None;
        }
        let mut columns = [(0.0, 0.0, &[][..]); super::CENTRED_MAX_DIM];
        for (i, c) in columns[..d].iter_mut().enumerate() {
            *c = (
                self.tau[i],
                self.mean_i(theta, i),
                T::as_f64_slice(self.data.col(i))?,
            );
        }
        // as `grad_log_lik_cols`: the bend is added only where it is not zero
        let du2 = self.du2(theta);
        Some(super::CentredGradient {
            columns,
            dim: d,
            coupling: (du2 != 0.0).then_some(du2),
        })
    }

    fn has_gradient_sum(&self) -> bool {
        true
    }

    fn grad_log_lik_sum(&self, theta: &[f64], out: &mut [f64]) -> Result<()> {
        check::len("grad", out.len(), self.dim())?;
        let n = self.data.n_rows() as f64;
        for (i, ((o, &t), &s)) in out
            .iter_mut()
            .zip(&self.tau)
            .zip(&self.col_sums)
            .enumerate()
        {
            *o = t * (s - n * self.mean_i(theta, i));
        }
        out[0] += out[1] * self.du2(theta);
        Ok(())
    }
}

/// The banana distribution `Ban(μ, diag(s²), a, b, m)`: the law of
/// `θ = (z₁, z₂ − a(z₁ − m)² − b, z₃, …)` with independent `z_i ~ N(μ_i, s_i²)`.
///
/// Theorem 13: the posterior of the banana model tempered by `T` is this law with
/// `μ_i = T n τ_i x̄_i / (T n τ_i + τ₀)` and `s_i² = 1/(T n τ_i + τ₀)`.
#[derive(Clone, Debug, PartialEq)]
pub struct BananaPosterior {
    mu: Vec<f64>,
    var: Vec<f64>,
    a: f64,
    b: f64,
    m: f64,
}

impl BananaPosterior {
    /// Theorem 13 from the sufficient statistics: column means `x̄` and row count `n`.
    ///
    /// ```
    /// use dp_mcmc::models::{BananaParams, BananaPosterior};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// // Worked example of tests/data/diagnostics/README.md §4.
    /// let p = BananaParams::thesis(2, 20.0);
    /// let post = BananaPosterior::from_sufficient(&p, &[0.1, 3.2], 1000)?;
    /// assert!((post.mean()[1] - 2.6000079996200096).abs() < 1e-13);
    /// assert!(BananaPosterior::from_sufficient(&p, &[0.1], 1000).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_sufficient(params: &BananaParams, xbar: &[f64], n: usize) -> Result<Self> {
        params.validate()?;
        check::len("xbar", xbar.len(), params.dim())?;
        check::all_finite("xbar", xbar)?;
        check::at_least_one("n", n)?;
        let tau0 = 1.0 / params.prior_var;
        let tn = params.tempering * n as f64;
        let (mu, var) = params
            .lik_vars
            .iter()
            .zip(xbar)
            .map(|(&v, &xb)| {
                let prec = tn / v;
                (prec * xb / (prec + tau0), 1.0 / (prec + tau0))
            })
            .unzip();
        Ok(Self {
            mu,
            var,
            a: params.a,
            b: params.b,
            m: params.m,
        })
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.mu.len()
    }

    /// `μ`, the mean of the underlying Gaussian `z`.
    pub fn z_mean(&self) -> &[f64] {
        &self.mu
    }

    /// `s_i = (T n τ_i + τ₀)^{-1/2}`, the stds of `θ₁`, of `u = θ₂ + a(θ₁ − m)² + b` and of
    /// `θ_{i≥3}` (data independent).
    pub fn z_std(&self) -> Vec<f64> {
        self.var.iter().map(|v| v.sqrt()).collect()
    }

    fn c(&self) -> f64 {
        self.mu[0] - self.m
    }

    /// `E θ`: `E θ₂ = μ₂ − a(c² + s₁²) − b` with `c = μ₁ − m`; the others are `μ_i`.
    pub fn mean(&self) -> Vec<f64> {
        let mut m = self.mu.clone();
        let c = self.c();
        m[1] = self.mu[1] - self.a * (c * c + self.var[0]) - self.b;
        m
    }

    /// `Var θ_i`: `Var θ₂ = s₂² + a²(4c²s₁² + 2s₁⁴)`; the others are `s_i²`.
    pub fn variance(&self) -> Vec<f64> {
        let mut v = self.var.clone();
        let (c, s11) = (self.c(), self.var[0]);
        v[1] = self.var[1] + self.a * self.a * (4.0 * c * c * s11 + 2.0 * s11 * s11);
        v
    }

    /// Posterior standard deviations `sqrt(Var θ_i)`.
    pub fn std(&self) -> Vec<f64> {
        self.variance().iter().map(|v| v.sqrt()).collect()
    }

    /// `Cov(θ₁, θ₂) = −2 a c s₁²` (every other off-diagonal covariance is 0).
    pub fn cov12(&self) -> f64 {
        -2.0 * self.a * self.c() * self.var[0]
    }

    /// The full `d × d` posterior covariance, row-major.
    pub fn covariance(&self) -> Vec<f64> {
        let d = self.dim();
        let mut c = vec![0.0; d * d];
        for (i, v) in self.variance().into_iter().enumerate() {
            c[i * d + i] = v;
        }
        c[1] = self.cov12();
        c[d] = c[1];
        c
    }

    /// Normalised log density `Σ_i ln N(u_i; μ_i, s_i²)`, `u = (θ₁, θ₂ + a(θ₁ − m)² + b, θ₃, …)`
    /// (the Jacobian of the map is 1).
    ///
    /// ```
    /// use dp_mcmc::models::{BananaParams, BananaPosterior};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let post = BananaPosterior::from_sufficient(&BananaParams::thesis(2, 20.0), &[0.1, 3.2], 1000)?;
    /// // tests/data/diagnostics/README.md §4: log p(0.1, 3.0) = 3.1138779468571913
    /// assert!((post.log_density(&[0.1, 3.0])? - 3.1138779468571913).abs() < 1e-13);
    /// assert!(post.log_density(&[0.1]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn log_density(&self, theta: &[f64]) -> Result<f64> {
        check::len("theta", theta.len(), self.dim())?;
        let ln2pi = (2.0 * std::f64::consts::PI).ln();
        let c = theta[0] - self.m;
        Ok((0..self.dim())
            .map(|i| {
                let u = if i == 1 {
                    theta[1] + self.a * c * c + self.b
                } else {
                    theta[i]
                };
                let e = u - self.mu[i];
                -0.5 * (ln2pi + self.var[i].ln() + e * e / self.var[i])
            })
            .sum())
    }

    /// Exact draws (one `Vec` of length `d` per draw).
    pub fn sample<R: Rng + ?Sized>(&self, n_draws: usize, rng: &mut R) -> Vec<Vec<f64>> {
        let sd = self.z_std();
        (0..n_draws)
            .map(|_| {
                let mut z: Vec<f64> = self
                    .mu
                    .iter()
                    .zip(&sd)
                    .map(|(&mu, &s)| mu + s * rng.sample::<f64, _>(StandardNormal))
                    .collect();
                let c = z[0] - self.m;
                z[1] -= self.a * c * c + self.b;
                z
            })
            .collect()
    }
}
