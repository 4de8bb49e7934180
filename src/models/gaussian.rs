//! The Gaussian model with known covariance (Räisä 2021, §5.1): `x_j ~ N(θ, Σ)`,
//! `θ ~ N(0, σ₀² I)`, its data generator and its closed-form posterior.
//!
//! Per row `ln p(x | θ) = −½ (x − θ)ᵀ Σ⁻¹ (x − θ)` (= `−½‖L⁻¹(x − θ)‖²`, Cholesky `Σ = LLᵀ`;
//! the constant `−½ ln det(2πΣ)` is dropped, as in the thesis code: it cancels in every ratio).
//!
//! **Prior variance.** Table 5.1 gives `σ₀² = 100` for the correlated Gaussian, and the thesis
//! code's exact-posterior sampler uses `Σ₀ = 100 I`; its MCMC log-prior however uses
//! `norm.logpdf(θ, scale=100)`, a prior *variance* of 10⁴ (THESIS-NOTES §10). This crate uses
//! one prior everywhere: the sampler's [`Model::log_prior`] and [`GaussianPosterior`] both use
//! the variance given to [`GaussianModel::new`] (100 in the `hard-gauss-2d` preset). At
//! `n = 2·10⁵` the two choices move the posterior mean by 1.5·10⁻⁷ (7·10⁻⁵ posterior sds).
//! To target the thesis code's MCMC prior, build the model with `prior_var = 1e4` (its
//! [`GaussianModel::posterior`] then matches that prior too).
//!
//! The per-row ratio is linear in the row: `r_j = wᵀ(x_j − (θ + θ')/2)` with `w = Σ⁻¹(θ' − θ)`;
//! with a block-diagonal `Σ` a one-coordinate change touches only the columns of its block.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, RngExt};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::error::{Error, Result, check};
use crate::models::{ColumnData, Element, Layout, Model, linear};
use crate::rng::chain_rng;

/// The block-diagonal covariance of THESIS-NOTES §10: block `k` (coordinates `2k, 2k+1`) is
/// `[[1, ρ], [ρ, 1]] / (k + 1)`. The thesis' correlated Gaussian is `d = 2`, `ρ = 0.999`.
///
/// ```
/// use dp_mcmc::models::block_correlated_cov;
/// # fn main() -> dp_mcmc::Result<()> {
/// let s = block_correlated_cov(4, 0.999)?;
/// assert_eq!(s[(0, 1)], 0.999);
/// assert_eq!(s[(3, 2)], 0.999 / 2.0);
/// assert_eq!(s[(1, 2)], 0.0);
/// assert!(block_correlated_cov(3, 0.999).is_err()); // d must be even
/// # Ok(()) }
/// ```
pub fn block_correlated_cov(d: usize, rho: f64) -> Result<DMatrix<f64>> {
    if d < 2 || !d.is_multiple_of(2) {
        return Err(Error::invalid(
            "d",
            d,
            "must be an even number >= 2 (the covariance has 2×2 blocks)",
        ));
    }
    if !(rho.is_finite() && rho.abs() < 1.0) {
        return Err(Error::invalid(
            "rho",
            rho,
            "must lie strictly between -1 and 1",
        ));
    }
    check::values("d", d as u128, d as u128)?;
    let mut s = DMatrix::zeros(d, d);
    for k in 0..d / 2 {
        let f = 1.0 / (k as f64 + 1.0);
        let (i, j) = (2 * k, 2 * k + 1);
        s[(i, i)] = f;
        s[(j, j)] = f;
        s[(i, j)] = rho * f;
        s[(j, i)] = rho * f;
    }
    Ok(s)
}

/// Checks that `cov` is a finite, symmetric, positive-definite `d × d` matrix and returns its
/// Cholesky factor `L` (lower triangular).
fn cholesky_of(cov: &DMatrix<f64>, d: usize) -> Result<DMatrix<f64>> {
    check::len("cov rows", cov.nrows(), d)?;
    check::len("cov columns", cov.ncols(), d)?;
    check::all_finite("cov", cov.as_slice())?;
    let scale = cov.amax();
    for i in 0..d {
        for j in 0..i {
            if (cov[(i, j)] - cov[(j, i)]).abs() > 1e-12 * scale {
                return Err(Error::invalid(
                    "cov",
                    format!("[{i},{j}] = {} vs [{j},{i}] = {}", cov[(i, j)], cov[(j, i)]),
                    "must be symmetric",
                ));
            }
        }
    }
    cov.clone().cholesky().map(|c| c.l()).ok_or_else(|| {
        Error::invalid(
            "cov",
            "(matrix)",
            "must be positive definite (its Cholesky factorisation failed)",
        )
    })
}

/// Draws `n` rows `x = θ + L z` (z ~ N(0, I); column `i` of `z` from stream `i` of
/// `chain_rng(seed, ·)`).
///
/// ```
/// use dp_mcmc::models::{block_correlated_cov, generate_gaussian};
/// # fn main() -> dp_mcmc::Result<()> {
/// let cov = block_correlated_cov(2, 0.999)?;
/// let data = generate_gaussian(&[0.0, 3.0], &cov, 1000, 1)?;
/// assert_eq!(data.n_rows(), 1000);
/// assert!(generate_gaussian(&[0.0, 3.0, 1.0], &cov, 1000, 1).is_err());
/// # Ok(()) }
/// ```
pub fn generate_gaussian(
    theta: &[f64],
    cov: &DMatrix<f64>,
    n: usize,
    seed: u64,
) -> Result<ColumnData> {
    let d = theta.len();
    check::all_finite("theta", theta)?;
    check::at_least_one("n", n)?;
    check::values("n", n as u128, d as u128)?;
    let chol = cholesky_of(cov, d)?;
    let z: Vec<Vec<f64>> = (0..d)
        .into_par_iter()
        .map(|i| {
            let mut rng = chain_rng(seed, i as u64);
            (0..n)
                .map(|_| rng.sample::<f64, _>(StandardNormal))
                .collect()
        })
        .collect();
    let columns = (0..d)
        .map(|k| {
            let mut x = vec![theta[k]; n];
            for (l_kl, zl) in (0..=k).map(|l| (chol[(k, l)], &z[l])) {
                if l_kl != 0.0 {
                    for (xi, &zi) in x.iter_mut().zip(zl) {
                        *xi += l_kl * zi;
                    }
                }
            }
            x
        })
        .collect();
    ColumnData::from_columns(columns)
}

/// The Gaussian model with known covariance on owned, column-major data, stored as `f64`
/// (`GaussianModel`, the default) or `f32` (`GaussianModel<f32>`,
/// [`compact`](GaussianModel::compact)).
#[derive(Clone, Debug)]
pub struct GaussianModel<T: Element = f64> {
    data: ColumnData<T>,
    cov: DMatrix<f64>,
    /// `Σ⁻¹`, row-major.
    prec: Vec<f64>,
    /// Non-zero entries `(i, l, P_il)` of `Σ⁻¹` with `i <= l`.
    prec_upper: Vec<(usize, usize, f64)>,
    prior_var: f64,
    tempering: f64,
    /// Column sums `Σ_j x_ji` (the unclipped gradient sum).
    col_sums: Vec<f64>,
}

impl<T: Element> GaussianModel<T> {
    /// A Gaussian model on `data` (`n × d`) with likelihood covariance `cov` (`d × d`,
    /// symmetric positive definite) and prior `N(0, prior_var · I)`.
    ///
    /// ```
    /// use dp_mcmc::models::{block_correlated_cov, generate_gaussian, GaussianModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let cov = block_correlated_cov(2, 0.999)?;
    /// let data = generate_gaussian(&[0.0, 3.0], &cov, 1000, 1)?;
    /// let model = GaussianModel::new(data.clone(), cov.clone(), 100.0)?;
    /// assert_eq!(model.dim(), 2);
    /// assert!(GaussianModel::new(data, cov, -1.0).is_err()); // prior variance must be > 0
    /// # Ok(()) }
    /// ```
    pub fn new(data: ColumnData<T>, cov: DMatrix<f64>, prior_var: f64) -> Result<Self> {
        let d = data.n_cols();
        check::positive("prior_var", prior_var)?;
        let l = cholesky_of(&cov, d)?;
        let l_inv = l
            .solve_lower_triangular(&DMatrix::identity(d, d))
            .ok_or_else(|| Error::Numerical {
                what: "GaussianModel::new",
                reason:
                    "the Cholesky factor of `cov` is singular; use a better-conditioned covariance"
                        .into(),
            })?;
        let p = l_inv.transpose() * l_inv;
        let mut prec = vec![0.0; d * d];
        let mut prec_upper = Vec::new();
        for i in 0..d {
            for l in 0..d {
                let v = 0.5 * (p[(i, l)] + p[(l, i)]);
                prec[i * d + l] = v;
                if l >= i && v != 0.0 {
                    prec_upper.push((i, l, v));
                }
            }
        }
        Ok(Self {
            col_sums: data.column_sums(),
            data,
            cov,
            prec,
            prec_upper,
            prior_var,
            tempering: 1.0,
        })
    }

    /// Tempers the likelihood by `T ∈ (0, 1]` (the thesis does not temper this model).
    ///
    /// ```
    /// use dp_mcmc::models::{block_correlated_cov, generate_gaussian, GaussianModel, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let cov = block_correlated_cov(2, 0.5)?;
    /// let model = GaussianModel::new(generate_gaussian(&[0.0, 0.0], &cov, 10, 1)?, cov, 100.0)?;
    /// assert_eq!(model.clone().with_tempering(0.5)?.tempering(), 0.5);
    /// assert!(model.with_tempering(1.5).is_err());
    /// # Ok(()) }
    /// ```
    pub fn with_tempering(mut self, tempering: f64) -> Result<Self> {
        self.tempering = check::rate("tempering", tempering)?;
        Ok(self)
    }

    /// The likelihood covariance `Σ`.
    pub fn cov(&self) -> &DMatrix<f64> {
        &self.cov
    }

    /// The prior variance `σ₀²`.
    pub fn prior_var(&self) -> f64 {
        self.prior_var
    }

    /// The data.
    pub fn data(&self) -> &ColumnData<T> {
        &self.data
    }

    /// The same model on its data rounded to `f32` once (half the bytes per row; every term
    /// still computed in `f64`, see [`ColumnData::compact`]); the tempering is kept.
    ///
    /// ```
    /// use dp_mcmc::models::{block_correlated_cov, generate_gaussian};
    /// use dp_mcmc::models::{GaussianModel, Layout, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let cov = block_correlated_cov(2, 0.999)?;
    /// let model = GaussianModel::new(generate_gaussian(&[0.0, 3.0], &cov, 1000, 1)?, cov, 100.0)?;
    /// let compact = model.compact()?;
    /// assert_eq!(compact.layout(), Layout::F32);
    /// let (m, c) = (model.posterior()?.mean()[1], compact.posterior()?.mean()[1]);
    /// assert!((m - c).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<GaussianModel<f32>> {
        GaussianModel::new(self.data.compact()?, self.cov.clone(), self.prior_var)?
            .with_tempering(self.tempering)
    }

    /// The closed-form (tempered) posterior for this model's data.
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        GaussianPosterior::from_sufficient(
            &self.data.column_means(),
            self.data.n_rows(),
            &self.cov,
            self.prior_var,
            self.tempering,
        )
    }

    #[inline]
    fn p(&self, i: usize, l: usize) -> f64 {
        self.prec[i * self.dim() + l]
    }
}

impl<T: Element> linear::ColumnRatio<T> for GaussianModel<T> {
    fn ratio_columns(&self) -> usize {
        self.dim()
    }

    fn ratio_column(&self, k: usize) -> &[T] {
        self.data.col(k)
    }

    /// Coefficients `(w_k, c0_k)` of column `k`'s ratio term `w_k x_k + c0_k`:
    /// `w_k = Σ_i P_ki (θ'_i − θ_i)`, `c0_k = −w_k (θ_k + θ'_k)/2`; `None` if `w_k = 0`.
    #[inline]
    fn ratio_coef(&self, theta: &[f64], theta_new: &[f64], k: usize) -> Option<(f64, f64)> {
        let w: f64 = (0..self.dim())
            .map(|i| self.p(k, i) * (theta_new[i] - theta[i]))
            .sum();
        (w != 0.0).then(|| (w, -w * 0.5 * (theta[k] + theta_new[k])))
    }
}

impl<T: Element> Model for GaussianModel<T> {
    fn layout(&self) -> Layout {
        T::LAYOUT
    }
    fn dim(&self) -> usize {
        self.data.n_cols()
    }

    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    fn tempering(&self) -> f64 {
        self.tempering
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        let d = self.dim() as f64;
        let ss: f64 = theta.iter().map(|t| t * t).sum();
        -0.5 * d * (2.0 * std::f64::consts::PI * self.prior_var).ln() - 0.5 * ss / self.prior_var
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        for (g, t) in grad.iter_mut().zip(theta) {
            *g = -t / self.prior_var;
        }
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        let mut q = 0.0;
        for &(i, l, p) in &self.prec_upper {
            let ei = self.data.get(row, i) - theta[i];
            let el = self.data.get(row, l) - theta[l];
            q += if i == l {
                p * ei * el
            } else {
                2.0 * p * ei * el
            };
        }
        -0.5 * q
    }

    fn has_gradient(&self) -> bool {
        true
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        let d = self.dim();
        check::len("grad", grad.len(), d)?;
        for (i, g) in grad.iter_mut().enumerate() {
            *g = (0..d)
                .map(|l| self.p(i, l) * (self.data.get(row, l) - theta[l]))
                .sum();
        }
        Ok(())
    }

    fn has_direct_ratio(&self) -> bool {
        true
    }

    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        out.fill(0.0);
        let end = start + out.len();
        for &(i, l, p) in &self.prec_upper {
            let (ti, tl) = (theta[i], theta[l]);
            let xi = &self.data.col(i)[start..end];
            if i == l {
                let h = -0.5 * p;
                for (o, &x) in out.iter_mut().zip(xi) {
                    let e = x.to_f64() - ti;
                    *o += h * e * e;
                }
            } else {
                let xl = &self.data.col(l)[start..end];
                for ((o, &a), &b) in out.iter_mut().zip(xi).zip(xl) {
                    *o -= p * (a.to_f64() - ti) * (b.to_f64() - tl);
                }
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
        out.fill(0.0);
        let end = start + out.len() / d;
        for &(i, l, p) in &self.prec_upper {
            let (ti, tl) = (theta[i], theta[l]);
            // g_i += P_il (x_l − θ_l), and symmetrically g_l += P_li (x_i − θ_i)
            for (g, &x) in out.chunks_exact_mut(d).zip(&self.data.col(l)[start..end]) {
                g[i] += p * (x.to_f64() - tl);
            }
            if i != l {
                for (g, &x) in out.chunks_exact_mut(d).zip(&self.data.col(i)[start..end]) {
                    g[l] += p * (x.to_f64() - ti);
                }
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
        out.fill(0.0);
        let end = start + len;
        for &(i, l, p) in &self.prec_upper {
            // column i += P_il (x_l − θ_l), and symmetrically column l += P_li (x_i − θ_i)
            let tl = theta[l];
            for (g, &x) in out[i * len..(i + 1) * len]
                .iter_mut()
                .zip(&self.data.col(l)[start..end])
            {
                *g += p * (x.to_f64() - tl);
            }
            if i != l {
                let ti = theta[i];
                for (g, &x) in out[l * len..(l + 1) * len]
                    .iter_mut()
                    .zip(&self.data.col(i)[start..end])
                {
                    *g += p * (x.to_f64() - ti);
                }
            }
        }
        Ok(())
    }

    fn has_gradient_sum(&self) -> bool {
        true
    }

    fn grad_log_lik_sum(&self, theta: &[f64], out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        check::len("grad", out.len(), d)?;
        let n = self.data.n_rows() as f64;
        // Σ_j P(x_j − θ) = P(S − nθ)
        for (i, o) in out.iter_mut().enumerate() {
            *o = (0..d)
                .map(|l| self.p(i, l) * (self.col_sums[l] - n * theta[l]))
                .sum();
        }
        Ok(())
    }
}

/// The Gaussian posterior `N(μ_n, Σ_n)` of the model `x_j ~ N(θ, Σ)`, `θ ~ N(0, σ₀² I)`,
/// likelihood tempered by `T`: with `S = σ₀² (σ₀² I + Σ/(Tn))⁻¹`, `μ_n = S x̄` and
/// `Σ_n = S Σ/(Tn)` (the thesis code's formula, [GCS⁺14, §3.5]).
#[derive(Clone, Debug)]
pub struct GaussianPosterior {
    mean: Vec<f64>,
    cov: DMatrix<f64>,
    chol: DMatrix<f64>,
}

impl GaussianPosterior {
    /// The posterior from the sufficient statistics `x̄` (column means) and `n`.
    ///
    /// ```
    /// use dp_mcmc::models::{block_correlated_cov, GaussianPosterior};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// // Worked example of tests/data/diagnostics/README.md §3.
    /// let cov = block_correlated_cov(2, 0.999)?;
    /// let post = GaussianPosterior::from_sufficient(&[0.01, 3.02], 200_000, &cov, 100.0, 1.0)?;
    /// assert!((post.mean()[0] - 0.009999848651015135).abs() < 1e-13);
    /// assert!(GaussianPosterior::from_sufficient(&[0.01], 200_000, &cov, 100.0, 1.0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_sufficient(
        xbar: &[f64],
        n: usize,
        cov: &DMatrix<f64>,
        prior_var: f64,
        tempering: f64,
    ) -> Result<Self> {
        let d = xbar.len();
        check::all_finite("xbar", xbar)?;
        check::at_least_one("n", n)?;
        check::positive("prior_var", prior_var)?;
        check::rate("tempering", tempering)?;
        cholesky_of(cov, d)?;
        let tn = tempering * n as f64;
        let sigma_n = cov / tn;
        let a = DMatrix::identity(d, d) * prior_var + &sigma_n;
        let a_chol = a.cholesky().ok_or_else(|| Error::Numerical {
            what: "GaussianPosterior",
            reason: "σ₀² I + Σ/(Tn) is not positive definite".into(),
        })?;
        let mean = a_chol.solve(&DVector::from_column_slice(xbar)) * prior_var;
        let c = a_chol.solve(&sigma_n) * prior_var;
        let cov_post = (&c + c.transpose()) * 0.5;
        let chol = cov_post
            .clone()
            .cholesky()
            .map(|c| c.l())
            .ok_or_else(|| Error::Numerical {
                what: "GaussianPosterior",
                reason: "the posterior covariance is not positive definite in f64".into(),
            })?;
        Ok(Self {
            mean: mean.iter().copied().collect(),
            cov: cov_post,
            chol,
        })
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }

    /// Posterior mean `μ_n`.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Posterior covariance `Σ_n`.
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.cov
    }

    /// Posterior standard deviations `sqrt(diag Σ_n)`.
    pub fn std(&self) -> Vec<f64> {
        (0..self.dim()).map(|i| self.cov[(i, i)].sqrt()).collect()
    }

    /// `ln N(θ; μ_n, Σ_n)`, through the Cholesky factor `L` (`z = L⁻¹(θ − μ_n)`).
    ///
    /// ```
    /// use dp_mcmc::models::{block_correlated_cov, GaussianPosterior};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let cov = block_correlated_cov(2, 0.5)?;
    /// let post = GaussianPosterior::from_sufficient(&[0.0, 0.0], 100, &cov, 100.0, 1.0)?;
    /// let at_mean = post.log_density(post.mean())?;
    /// assert!(at_mean > post.log_density(&[0.1, -0.1])?);
    /// assert!(post.log_density(&[0.0]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn log_density(&self, theta: &[f64]) -> Result<f64> {
        let d = self.dim();
        check::len("theta", theta.len(), d)?;
        let mut z = vec![0.0; d];
        let mut log_det = 0.0;
        for k in 0..d {
            let s: f64 = (0..k).map(|l| self.chol[(k, l)] * z[l]).sum();
            z[k] = (theta[k] - self.mean[k] - s) / self.chol[(k, k)];
            log_det += self.chol[(k, k)].ln();
        }
        let q: f64 = z.iter().map(|v| v * v).sum();
        Ok(-0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + q) - log_det)
    }

    /// Exact draws `μ_n + L z` (one `Vec` of length `d` per draw).
    pub fn sample<R: Rng + ?Sized>(&self, n_draws: usize, rng: &mut R) -> Vec<Vec<f64>> {
        let d = self.dim();
        let mut z = vec![0.0; d];
        (0..n_draws)
            .map(|_| {
                for zi in z.iter_mut() {
                    *zi = rng.sample(StandardNormal);
                }
                (0..d)
                    .map(|k| self.mean[k] + (0..=k).map(|l| self.chol[(k, l)] * z[l]).sum::<f64>())
                    .collect()
            })
            .collect()
    }
}
