//! [`CustomModel`]: a model built in a notebook cell from row-major data and closures.
//!
//! The closures are stored as `Arc<dyn Fn … + Send + Sync>`, so the model is cheap to clone,
//! owns everything it needs and can be shared by parallel chains.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result, check};
use crate::models::{Element, Layout, Model, RowData};

/// `ln p(row | θ)`.
pub type LogLikFn = Arc<dyn Fn(&[f64], &[f64]) -> f64 + Send + Sync>;
/// `∇_θ ln p(row | θ)` written into the last argument.
pub type GradLogLikFn = Arc<dyn Fn(&[f64], &[f64], &mut [f64]) + Send + Sync>;
/// `ln p(θ)`.
pub type LogPriorFn = Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;
/// `∇ ln p(θ)` written into the last argument.
pub type GradLogPriorFn = Arc<dyn Fn(&[f64], &mut [f64]) + Send + Sync>;

/// The prior of a [`CustomModel`].
#[derive(Clone)]
pub enum Prior {
    /// `ln p(θ) = 0` (improper unless the likelihood is integrable).
    Flat,
    /// `N(0, var · I)`.
    Gaussian {
        /// Prior variance of every coordinate.
        var: f64,
    },
    /// User closures for `ln p(θ)` and its gradient.
    Custom {
        /// `ln p(θ)`.
        log_prior: LogPriorFn,
        /// `∇ ln p(θ)`.
        grad: GradLogPriorFn,
    },
}

impl fmt::Debug for Prior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prior::Flat => write!(f, "Flat"),
            Prior::Gaussian { var } => write!(f, "Gaussian {{ var: {var} }}"),
            Prior::Custom { .. } => write!(f, "Custom"),
        }
    }
}

/// A model from row-major data and closures: a per-row log-likelihood `log_lik(θ, row)`, an
/// optional per-row gradient, a prior (flat by default), parameter names and a tempering.
///
/// ```
/// use dp_mcmc::models::{CustomModel, Model, RowData};
/// # fn main() -> dp_mcmc::Result<()> {
/// // Rows (x, y); model y ~ N(θ₀ + θ₁ x, 1).
/// let data = RowData::from_rows(&[vec![0.0, 1.1], vec![1.0, 2.9], vec![2.0, 5.2]])?;
/// let model = CustomModel::new(data, 2, |theta, row| {
///     let e = row[1] - theta[0] - theta[1] * row[0];
///     -0.5 * e * e
/// })?
/// .with_gaussian_prior(10.0)?
/// .with_param_names(&["intercept", "slope"])?;
///
/// // Per-row log-likelihood ratios r_j = ln p(x_j | θ') − ln p(x_j | θ).
/// let mut r = vec![0.0; model.n_rows()];
/// model.log_lik_ratio_rows(&[1.0, 2.0], &[1.0, 2.1], 0, &mut r);
/// assert_eq!(r[0], 0.0); // x = 0: the slope does not matter
/// assert!(r[1] < 0.0 && r[2] > 0.0); // row 1 fits worse, row 2 better
/// # Ok(()) }
/// ```
///
/// The data are `f64` by default; [`compact`](CustomModel::compact) stores them as `f32` (the
/// closures still receive `f64` rows).
#[derive(Clone)]
pub struct CustomModel<T: Element = f64> {
    data: RowData<T>,
    dim: usize,
    log_lik: LogLikFn,
    grad_log_lik: Option<GradLogLikFn>,
    prior: Prior,
    names: Option<Vec<String>>,
    tempering: f64,
}

impl<T: Element> fmt::Debug for CustomModel<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomModel")
            .field("n_rows", &self.data.n_rows())
            .field("n_cols", &self.data.n_cols())
            .field("layout", &self.data.layout())
            .field("dim", &self.dim)
            .field("has_gradient", &self.grad_log_lik.is_some())
            .field("prior", &self.prior)
            .field("tempering", &self.tempering)
            .finish()
    }
}

impl<T: Element> CustomModel<T> {
    /// A model with `dim` parameters, per-row log-likelihood `log_lik(θ, row)` on `data`, a
    /// flat prior and no gradient.
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, Model, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_row_major(vec![0.5, -0.2, 1.3], 1)?;
    /// let model = CustomModel::new(data.clone(), 1, |t, x| -0.5 * (x[0] - t[0]).powi(2))?;
    /// assert_eq!(model.log_lik_row(&[0.5], 0), 0.0);
    /// assert!(CustomModel::new(data, 0, |_, _| 0.0).is_err()); // dim must be >= 1
    /// # Ok(()) }
    /// ```
    pub fn new(
        data: RowData<T>,
        dim: usize,
        log_lik: impl Fn(&[f64], &[f64]) -> f64 + Send + Sync + 'static,
    ) -> Result<Self> {
        check::at_least_one("dim", dim)?;
        Ok(Self {
            data,
            dim,
            log_lik: Arc::new(log_lik),
            grad_log_lik: None,
            prior: Prior::Flat,
            names: None,
            tempering: 1.0,
        })
    }

    /// Adds the per-row gradient `grad(θ, row, out)` (needed by HMC).
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, Model, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_row_major(vec![0.5, -0.2], 1)?;
    /// let model = CustomModel::new(data, 1, |t, x| -0.5 * (x[0] - t[0]).powi(2))?
    ///     .with_gradient(|t, x, g| g[0] = x[0] - t[0]);
    /// let mut g = [0.0];
    /// model.grad_log_lik_row(&[0.0], 0, &mut g)?;
    /// assert_eq!(g[0], 0.5);
    /// assert!(model.grad_log_lik_row(&[0.0], 0, &mut [0.0, 0.0]).is_err()); // wrong length
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_gradient(
        mut self,
        grad: impl Fn(&[f64], &[f64], &mut [f64]) + Send + Sync + 'static,
    ) -> Self {
        self.grad_log_lik = Some(Arc::new(grad));
        self
    }

    /// Prior `N(0, var · I)`.
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = CustomModel::new(RowData::from_row_major(vec![1.0], 1)?, 1, |_, _| 0.0)?;
    /// assert!(m.clone().with_gaussian_prior(4.0).is_ok());
    /// assert!(m.with_gaussian_prior(0.0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn with_gaussian_prior(mut self, var: f64) -> Result<Self> {
        self.prior = Prior::Gaussian {
            var: check::positive("prior var", var)?,
        };
        Ok(self)
    }

    /// A prior from closures `ln p(θ)` and `∇ ln p(θ)`.
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, Model, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = CustomModel::new(RowData::from_row_major(vec![1.0], 1)?, 1, |_, _| 0.0)?
    ///     .with_prior(|t| -t[0].abs(), |t, g| g[0] = -t[0].signum());
    /// assert_eq!(m.log_prior(&[-2.0]), -2.0);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_prior(
        mut self,
        log_prior: impl Fn(&[f64]) -> f64 + Send + Sync + 'static,
        grad: impl Fn(&[f64], &mut [f64]) + Send + Sync + 'static,
    ) -> Self {
        self.prior = Prior::Custom {
            log_prior: Arc::new(log_prior),
            grad: Arc::new(grad),
        };
        self
    }

    /// Parameter names (one per parameter).
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, Model, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = CustomModel::new(RowData::from_row_major(vec![1.0], 1)?, 2, |_, _| 0.0)?;
    /// assert_eq!(m.clone().with_param_names(&["a", "b"])?.param_names(), ["a", "b"]);
    /// assert!(m.with_param_names(&["a"]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn with_param_names<S: AsRef<str>>(mut self, names: &[S]) -> Result<Self> {
        check::len("param names", names.len(), self.dim)?;
        self.names = Some(names.iter().map(|s| s.as_ref().to_string()).collect());
        Ok(self)
    }

    /// Tempering `T ∈ (0, 1]`.
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = CustomModel::new(RowData::from_row_major(vec![1.0], 1)?, 1, |_, _| 0.0)?;
    /// assert!(m.clone().with_tempering(0.1).is_ok());
    /// assert!(m.with_tempering(0.0).is_err());
    /// # Ok(()) }
    /// ```
    pub fn with_tempering(mut self, tempering: f64) -> Result<Self> {
        self.tempering = check::rate("tempering", tempering)?;
        Ok(self)
    }

    /// The data.
    pub fn data(&self) -> &RowData<T> {
        &self.data
    }

    /// The same model on its data rounded to `f32` once (half the bytes per row, see
    /// [`RowData::compact`]); the closures receive each row converted back to `f64` (exactly)
    /// and compute in `f64`. Closures, prior, names and tempering are kept.
    ///
    /// ```
    /// use dp_mcmc::models::{CustomModel, Layout, Model, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_row_major(vec![0.1, -0.2, 1.3], 1)?;
    /// let model = CustomModel::new(data, 1, |t, x| -0.5 * (x[0] - t[0]).powi(2))?.compact()?;
    /// assert_eq!(model.layout(), Layout::F32);
    /// assert_eq!(model.log_lik_row(&[0.0], 0), -0.5 * (0.1f32 as f64).powi(2));
    /// // A value beyond the f32 range cannot be stored compactly.
    /// let big = RowData::from_row_major(vec![1e39], 1)?;
    /// assert!(CustomModel::new(big, 1, |_, _| 0.0)?.compact().is_err());
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<CustomModel<f32>> {
        Ok(CustomModel {
            data: self.data.compact()?,
            dim: self.dim,
            log_lik: self.log_lik.clone(),
            grad_log_lik: self.grad_log_lik.clone(),
            prior: self.prior.clone(),
            names: self.names.clone(),
            tempering: self.tempering,
        })
    }

    /// The prior.
    pub fn prior(&self) -> &Prior {
        &self.prior
    }
}

impl<T: Element> Model for CustomModel<T> {
    fn layout(&self) -> Layout {
        T::LAYOUT
    }
    fn dim(&self) -> usize {
        self.dim
    }

    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    fn param_names(&self) -> Vec<String> {
        match &self.names {
            Some(n) => n.clone(),
            None => (0..self.dim).map(|i| format!("theta_{i}")).collect(),
        }
    }

    fn tempering(&self) -> f64 {
        self.tempering
    }

    fn log_prior(&self, theta: &[f64]) -> f64 {
        match &self.prior {
            Prior::Flat => 0.0,
            Prior::Gaussian { var } => {
                let ss: f64 = theta.iter().map(|t| t * t).sum();
                -0.5 * theta.len() as f64 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * ss / var
            }
            Prior::Custom { log_prior, .. } => log_prior(theta),
        }
    }

    fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
        match &self.prior {
            Prior::Flat => grad.fill(0.0),
            Prior::Gaussian { var } => {
                for (g, t) in grad.iter_mut().zip(theta) {
                    *g = -t / var;
                }
            }
            Prior::Custom { grad: f, .. } => f(theta, grad),
        }
    }

    fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
        T::with_f64_row(self.data.row(row), |r| (self.log_lik)(theta, r))
    }

    fn has_gradient(&self) -> bool {
        self.grad_log_lik.is_some()
    }

    fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        check::len("grad", grad.len(), self.dim)?;
        match &self.grad_log_lik {
            Some(g) => {
                T::with_f64_row(self.data.row(row), |r| g(theta, r, grad));
                Ok(())
            }
            None => Err(Error::Model(
                "this CustomModel has no per-row gradient; add one with `.with_gradient(|theta, row, grad| ...)` to use HMC".into(),
            )),
        }
    }
}
