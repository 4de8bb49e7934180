//! Targets for the samplers: the [`Model`] trait and the thesis' models.
//!
//! A DP kernel clips and bounds *per-row* log-likelihood terms, so a model exposes its
//! likelihood row by row. Every method writes into buffers the caller owns: evaluating rows
//! never allocates.
//!
//! Models:
//! - [`BananaModel`] (Theorem 13, any `d ≥ 2`, tempering) with its exact posterior
//!   [`BananaPosterior`]; `a = 0` gives the thesis' 30-d Gaussian;
//! - [`GaussianModel`] (known covariance, e.g. [`block_correlated_cov`]) with
//!   [`GaussianPosterior`];
//! - [`CircleModel`] (flat prior, ring-shaped posterior);
//! - [`LogisticModel`] (Yildirim & Ermis' logistic regression, per-row Lipschitz bound, public
//!   bound from declared covariate ranges);
//! - [`PoissonRegression`] (counts, log link) and [`LinearRegression`] (Gaussian errors,
//!   unknown σ; [`LinearRegression::gaussian_mean`] for a mean and a spread), for
//!   `dp-mcmc fit`;
//! - [`CustomModel`] from closures, or any type implementing [`Model`];
//! - [`Experiment`]: the eight Table 5.1 presets, building an [`ExperimentModel`];
//! - [`testing::IsotropicGaussian`]: a tiny model with a closed-form posterior for tests and
//!   doctests.
//!
//! The thesis models store their data column-major ([`ColumnData`]) and override the chunk
//! methods: a one-coordinate update touches only the columns whose likelihood mean changed.
//!
//! **Compact layout.** The models that read their rows from memory (the thesis models,
//! [`LogisticModel`], [`CustomModel`], and [`ExperimentModel`] through
//! [`ExperimentModel::with_layout`]) take `f32` data (`BananaModel<f32>`, … , built by their
//! `.compact()`): half the bytes per row, every term still computed and summed in `f64` (see
//! [`Layout`] and the `dataset` notes on [`ColumnData::compact`]). `f64` is the default.
//!
//! # Implementing the trait
//!
//! Only five methods are required; the chunk methods have row-by-row defaults.
//!
//! ```
//! use dp_mcmc::models::Model;
//!
//! /// Poisson counts with a log-rate θ and a flat prior.
//! struct Poisson { counts: Vec<f64> }
//!
//! impl Model for Poisson {
//!     fn dim(&self) -> usize { 1 }
//!     fn n_rows(&self) -> usize { self.counts.len() }
//!     fn log_prior(&self, _theta: &[f64]) -> f64 { 0.0 }
//!     fn grad_log_prior(&self, _theta: &[f64], grad: &mut [f64]) { grad[0] = 0.0 }
//!     fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
//!         self.counts[row] * theta[0] - theta[0].exp()
//!     }
//! }
//!
//! let model = Poisson { counts: vec![1.0, 3.0, 2.0] };
//! let mut r = [0.0; 3];
//! model.log_lik_ratio_rows(&[0.0], &[0.5], 0, &mut r);
//! assert!((r[1] - (3.0 * 0.5 - 0.5f64.exp() + 1.0)).abs() < 1e-15);
//! ```

use crate::error::{Error, Result};

mod banana;
mod circle;
mod custom;
mod dataset;
mod forward;
mod gaussian;
mod glm;
mod huge_pages;
mod linear;
mod linear_regression;
mod logistic;
mod poisson;
mod presets;
pub mod testing;

pub use banana::{BananaModel, BananaParams, BananaPosterior};
pub use circle::CircleModel;
pub use custom::{CustomModel, GradLogLikFn, GradLogPriorFn, LogLikFn, LogPriorFn, Prior};
pub use dataset::{ColumnData, Element, Layout, RowData};
pub use gaussian::{GaussianModel, GaussianPosterior, block_correlated_cov, generate_gaussian};
pub(crate) use glm::{ResponseSupport, check_names as check_param_names};
pub use linear_regression::LinearRegression;
pub use logistic::LogisticModel;
pub use poisson::PoissonRegression;
pub use presets::{
    DATA_SEED_BANANA, DATA_SEED_CIRCLE, DATA_SEED_GAUSS, ExactPosterior, Experiment,
    ExperimentModel, REFERENCE_DRAWS, REFERENCE_SEED_BANANA, REFERENCE_SEED_GAUSS, START_SEED,
    mean_sample_std,
};

/// A Bayesian model `p(θ) Π_j p(x_j | θ)^T` as the DP kernels see it.
///
/// Implementors own their data (no borrowed lifetimes), so a model can live across notebook
/// cells and be shared by parallel chains (`Send + Sync`).
///
/// Only [`dim`](Model::dim), [`n_rows`](Model::n_rows), [`log_prior`](Model::log_prior),
/// [`grad_log_prior`](Model::grad_log_prior) and [`log_lik_row`](Model::log_lik_row) are
/// required. The chunk methods have row-by-row defaults; fast models override them (e.g. to
/// touch only the columns whose parameter changed).
pub trait Model: Send + Sync {
    /// Number of parameters `d`.
    fn dim(&self) -> usize;

    /// Number of data rows `n`.
    fn n_rows(&self) -> usize;

    /// Parameter names, used as DataFrame column names (default `theta_0`, `theta_1`, ...).
    fn param_names(&self) -> Vec<String> {
        (0..self.dim()).map(|i| format!("theta_{i}")).collect()
    }

    /// Tempering multiplier `T ∈ (0, 1]` applied to the whole log-likelihood (default 1).
    fn tempering(&self) -> f64 {
        1.0
    }

    /// A bound `L` with `|ln p(x | θ') − ln p(x | θ)| ≤ L·‖θ' − θ‖₂` and `‖∇_θ ln p(x | θ)‖ ≤ L`
    /// for **every possible row** `x` (not only the rows of this data set), derived from public
    /// declarations alone (e.g. declared feature ranges), never from the data; `None` (the
    /// default) when no such bound is declared.
    ///
    /// The `auto` builders ([`crate::auto`]) use it as the clip bound, which then costs no
    /// privacy; without it they spend a little of the budget on a DP quantile of the per-row
    /// gradient norms.
    fn public_lipschitz(&self) -> Option<f64> {
        None
    }

    /// `ln p(θ)`, up to an additive constant.
    fn log_prior(&self, theta: &[f64]) -> f64;

    /// `∇ ln p(θ)`, written into `grad` (length `d`).
    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]);

    /// `ln p(x_row | θ)` of one row, untempered.
    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64;

    /// Whether [`grad_log_lik_row`](Model::grad_log_lik_row) is implemented (HMC needs it).
    fn has_gradient(&self) -> bool {
        false
    }

    /// `∇_θ ln p(x_row | θ)`, written into `grad` (length `d`).
    fn grad_log_lik_row(&self, _theta: &[f64], _row: usize, _grad: &mut [f64]) -> Result<()> {
        Err(Error::Model(
            "this model has no per-row gradient; implement `grad_log_lik_row` and `has_gradient` to use HMC".into(),
        ))
    }

    /// Whether [`log_lik_ratio_rows`](Model::log_lik_ratio_rows) is cheaper than two
    /// likelihood evaluations (closed-form ratios). Kernels then skip their per-row cache.
    fn has_direct_ratio(&self) -> bool {
        false
    }

    /// How the model's rows are stored: [`Layout::F64`] unless it holds its data in the
    /// compact `f32` layout. Kernels that keep per-row log-likelihoods between iterations
    /// (models without a [direct ratio](Model::has_direct_ratio)) keep them in the same
    /// precision: with `f32` each value is rounded once when it is computed, and a proposal's
    /// per-row ratio is the difference of two rounded values. The chain then targets the
    /// posterior whose per-row log-likelihoods are rounded to `f32` (relative error ≤ 2⁻²⁴,
    /// the size of the data's own rounding) and holds 8 bytes of cache per row instead of 16.
    fn layout(&self) -> Layout {
        Layout::F64
    }

    /// `ln p(x_j | θ)` for rows `start .. start + out.len()`.
    fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.log_lik_row(theta, start + k);
        }
    }

    /// `r_j = ln p(x_j | θ') − ln p(x_j | θ)` for rows `start .. start + out.len()`.
    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            let j = start + k;
            *o = self.log_lik_row(theta_new, j) - self.log_lik_row(theta, j);
        }
    }

    /// `r_j` as in [`log_lik_ratio_rows`](Model::log_lik_ratio_rows) for the rows in `rows`
    /// (minibatches).
    fn log_lik_ratio_indexed(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) {
        for (o, &j) in out.iter_mut().zip(rows) {
            *o = self.log_lik_row(theta_new, j) - self.log_lik_row(theta, j);
        }
    }

    /// The per-row ratios `r_j` of [`log_lik_ratio_rows`](Model::log_lik_ratio_rows) as a
    /// linear form in the row's data columns, when they are exactly that and the data are
    /// stored as `f64` ([`LinearRatio`]); `None` (the default) otherwise. A ratio pass then
    /// computes each row's ratio where it clips and sums it, without writing it out. The
    /// values must be those of `log_lik_ratio_rows`, operation for operation.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, Experiment, LogisticModel, Model};
    /// let m = Experiment::EasyBanana2d.model()?;
    /// let (theta, theta_new) = ([0.5, 1.0], [0.5, 1.25]);
    /// let r = m.linear_ratio(&theta, &theta_new).expect("a banana's ratio is linear in the row");
    /// let mut direct = [0.0; 3];
    /// m.log_lik_ratio_rows(&theta, &theta_new, 0, &mut direct);
    /// for (j, &d) in direct.iter().enumerate() {
    ///     let terms = r.terms[..r.len].iter();
    ///     let v = terms.fold(r.constant, |acc, &(w, x)| acc + w * x[j]);
    ///     assert_eq!(v.to_bits(), d.to_bits());
    /// }
    /// let x = ColumnData::from_columns(vec![vec![1.0; 3], vec![-1.0, 0.1, 2.0]])?;
    /// let logistic = LogisticModel::new(x, &[0.0, 1.0, 1.0], 10.0)?;
    /// assert!(logistic.linear_ratio(&theta, &theta_new).is_none()); // not linear in the row
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    fn linear_ratio(&self, _theta: &[f64], _theta_new: &[f64]) -> Option<LinearRatio<'_>> {
        None
    }

    /// Per-row gradients of rows `start .. start + out.len() / d`, row-major
    /// (`out[k*d .. (k+1)*d]` is the gradient of row `start + k`).
    fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = self.dim();
        for (k, g) in out.chunks_exact_mut(d).enumerate() {
            self.grad_log_lik_row(theta, start + k, g)?;
        }
        Ok(())
    }

    /// Whether [`grad_log_lik_cols`](Model::grad_log_lik_cols) is implemented. Kernels then
    /// clip per-row gradients column by column (vectorised) instead of row by row.
    fn has_column_gradients(&self) -> bool {
        false
    }

    /// Per-row gradients of rows `start .. start + len` with `len = out.len() / d`,
    /// column-major (`out[i*len + k]` is `∂ ln p(x_{start+k} | θ) / ∂θ_i`). Only called when
    /// [`has_column_gradients`](Model::has_column_gradients) is true.
    fn grad_log_lik_cols(&self, _theta: &[f64], _start: usize, _out: &mut [f64]) -> Result<()> {
        Err(Error::Model(
            "this model has no column-major gradients; implement `grad_log_lik_cols` and `has_column_gradients`".into(),
        ))
    }

    /// The per-row gradients at `theta` as centred data columns, when they are exactly that
    /// and the data are stored as `f64` ([`CentredGradient`]); `None` (the default) otherwise.
    /// The clipped gradient pass then computes each row's gradient where it clips it, without
    /// writing it out. The values must be those of
    /// [`grad_log_lik_cols`](Model::grad_log_lik_cols), operation for operation.
    ///
    /// ```
    /// use dp_mcmc::models::{Experiment, Model};
    /// let m = Experiment::EasyBanana2d.model()?;
    /// let c = m.centred_gradient(&[0.5, 1.0]).expect("a banana's gradient is centred columns");
    /// assert_eq!((c.dim, c.columns[0].2.len()), (2, m.n_rows()));
    /// let circle = Experiment::Circle.model()?;
    /// assert!(circle.centred_gradient(&[0.5, 1.0]).is_none()); // not centred columns
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    fn centred_gradient(&self, _theta: &[f64]) -> Option<CentredGradient<'_>> {
        None
    }

    /// Whether [`grad_log_lik_sum`](Model::grad_log_lik_sum) is implemented: the *unclipped*
    /// gradient of the whole log-likelihood from sufficient statistics, in `O(d²)` instead of
    /// a pass over the data. Only non-private kernels use it (DP kernels clip every row).
    fn has_gradient_sum(&self) -> bool {
        false
    }

    /// `Σ_j ∇_θ ln p(x_j | θ)` (untempered) into `out` (length `d`). Only called when
    /// [`has_gradient_sum`](Model::has_gradient_sum) is true.
    fn grad_log_lik_sum(&self, _theta: &[f64], _out: &mut [f64]) -> Result<()> {
        Err(Error::Model(
            "this model has no closed-form gradient sum; implement `grad_log_lik_sum` and `has_gradient_sum`".into(),
        ))
    }
}

/// Most coordinates a [`CentredGradient`] holds.
pub const CENTRED_MAX_DIM: usize = 32;

/// Per-row gradients that are centred data columns ([`Model::centred_gradient`]): row `j`'s
/// gradient is `g_i = t_i·(x_ji − μ_i)` for every coordinate `i < dim`, computed as written,
/// and then, with a `coupling` `c`, `g_0 += g_1·c` (the banana models' bend).
#[derive(Clone, Copy, Debug)]
pub struct CentredGradient<'a> {
    /// `(t_i, μ_i, column i)` for `i < dim` (each column with all the model's rows); the
    /// entries from `dim` on are unused.
    pub columns: [(f64, f64, &'a [f64]); CENTRED_MAX_DIM],
    /// Coordinates in `columns`.
    pub dim: usize,
    /// `Some(c)` (`c ≠ 0`): `g_0 += g_1·c` after the centred values.
    pub coupling: Option<f64>,
}

/// Most columns a [`LinearRatio`] holds.
pub const LINEAR_RATIO_MAX_TERMS: usize = 32;

/// Per-row log-likelihood ratios linear in the row ([`Model::linear_ratio`]): row `j`'s ratio
/// is `((constant + w_0·x_j0) + w_1·x_j1) + …` over the `len` terms `(w_k, column k)` in
/// order, each product rounded before it is added (no fused multiply-add).
#[derive(Clone, Copy, Debug)]
pub struct LinearRatio<'a> {
    /// The ratio's part that does not depend on the row.
    pub constant: f64,
    /// `(w_k, column k)` for `k < len` (each column with all the model's rows); the entries
    /// from `len` on are unused.
    pub terms: [(f64, &'a [f64]); LINEAR_RATIO_MAX_TERMS],
    /// Terms in `terms`.
    pub len: usize,
}

impl std::fmt::Debug for dyn Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dim", &self.dim())
            .field("n_rows", &self.n_rows())
            .field("param_names", &self.param_names())
            .finish_non_exhaustive()
    }
}

/// The rows in a gradient buffer of `len_total` values (row- or column-major) for a model of
/// dimension `d`; an error naming `method`'s output if `len_total` is not a multiple of `d`.
pub(crate) fn gradient_rows(method: &'static str, len_total: usize, d: usize) -> Result<usize> {
    if d == 0 || !len_total.is_multiple_of(d) {
        return Err(Error::DimensionMismatch {
            name: method,
            expected: len_total.div_ceil(d.max(1)) * d,
            got: len_total,
        });
    }
    Ok(len_total / d)
}
