//! The internal coordinates of a noise-aware fit and its prior: a public affine map fixed by
//! the **declared bounds** alone (never by the data), so that the answer does not depend on
//! the covariates' units.
//!
//! With a constant covariate (an intercept) every other covariate is centred at its declared
//! box's midpoint and divided by its half-width, so each free covariate's box becomes
//! `[−1, 1]`; the intercept absorbs the centring. A linear model's response is centred and
//! scaled by its declared range the same way. Without an intercept nothing can be centred, and
//! covariate `i` (and the response) is divided by the largest magnitude its bounds allow. An
//! affine change of a covariate's units, with its declared bounds changed alike, leaves the
//! internal rows, and so every release, shape, Newton step and draw in these coordinates,
//! unchanged; the draws are mapped back exactly ([`Coordinates::to_model`]).
//!
//! The default prior ([`Prior::Autoscaled`]) is weakly informative **in these coordinates**,
//! scaled by the declared bounds rather than the data, with scale 2.5 on every coefficient
//! (the effect of moving a covariate by half its declared range; the intercept at the box's
//! centre): for logistic and Poisson regression independent Cauchy distributions (Student-t
//! with [`AUTOSCALED_DF`] degree of freedom; Gelman, Jakulin, Pittau & Su, "A weakly
//! informative default prior distribution for logistic and other regression models", Ann.
//! Appl. Stat. 2008), which shrink small effects like `N(0, 2.5²)` does but barely pull a
//! large one, where the private likelihood is wide; for a linear model `N(0, 2.5²)` (the
//! convention of rstanarm's autoscaled priors) and `ln σ' ~ N(−1, 1.5²)` with `σ'` the error
//! sd in units of the response's half-range.
//! [`Prior::Original`] puts `N(0, sd²)` on every parameter in the model's own units, as
//! `fit --prior-sd` does; it is carried into the internal coordinates exactly (a correlated
//! Gaussian there).

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The prior of a noise-aware fit, given in the model's units or in the internal coordinates
/// of the declared bounds ([`Coordinates`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scale", rename_all = "kebab-case")]
pub enum Prior {
    /// Scale `sd` (default [`AUTOSCALED_SD`]) on every coefficient in the internal
    /// coordinates: Cauchy for logistic and Poisson regression (Student-t with
    /// [`AUTOSCALED_DF`] degree of freedom), `N(0, sd²)` for a linear model, whose `ln σ'` gets
    /// `N(−1, 1.5²)`.
    Autoscaled {
        /// Prior scale of every internal coefficient.
        sd: f64,
    },
    /// `N(0, sd²)` on every coefficient in the internal coordinates, for every model (the
    /// logistic and Poisson default before the Cauchy; `fit --prior-normal`); a linear model's
    /// `ln σ'` as under [`Prior::Autoscaled`].
    AutoscaledNormal {
        /// Prior sd of every internal coefficient.
        sd: f64,
    },
    /// `N(0, sd²)` on every parameter in the model's own units (`log_sigma` included).
    Original {
        /// Prior sd of every parameter.
        sd: f64,
    },
}

/// Prior scale of every coefficient under the default [`Prior::Autoscaled`].
pub const AUTOSCALED_SD: f64 = 2.5;

/// Degrees of freedom of [`Prior::Autoscaled`] on a logistic or Poisson model's coefficients
/// (1: Cauchy, Gelman et al. 2008).
pub const AUTOSCALED_DF: f64 = 1.0;

/// Mean and sd of a linear model's `ln σ'` under [`Prior::Autoscaled`] (`σ'` in units of the
/// response's half-range: `e^{−1} ≈ 0.37`, within a factor `e³` either way at two sds).
pub const AUTOSCALED_LOG_SIGMA: (f64, f64) = (-1.0, 1.5);

impl Default for Prior {
    fn default() -> Self {
        Prior::Autoscaled { sd: AUTOSCALED_SD }
    }
}

impl Prior {
    /// The prior's sd, checked positive and finite.
    fn sd(self) -> Result<f64> {
        let (Prior::Autoscaled { sd } | Prior::AutoscaledNormal { sd } | Prior::Original { sd }) =
            self;
        crate::error::check::positive("prior sd", sd)
    }
}

/// The prior of a fit as a user reads it: as declared (`scale`: `autoscaled` or `original`,
/// and `sd`), in words, and in the model's units (`mean`, `cov`, in the order of the
/// parameters): a Gaussian, or with `df` independent Student-t distributions in the internal
/// coordinates ([`Coordinates`]) whose scale Gaussian is `N(mean, cov)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorReport {
    /// The prior as declared.
    #[serde(flatten)]
    pub declared: Prior,
    /// What it means, in words.
    pub description: String,
    /// Degrees of freedom of a Student-t prior (none for a Gaussian).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// Its mean in the model's units.
    pub mean: Vec<f64>,
    /// Its covariance in the model's units (one row per parameter).
    pub cov: Vec<Vec<f64>>,
}

impl Prior {
    /// The prior in words (`log_sigma`: a linear model's, with its error scale).
    pub fn describe(self, log_sigma: bool) -> String {
        const WHERE: &str = "on every coefficient in the internal coordinates of the declared \
                             bounds (a covariate's coefficient per half its declared range, the \
                             intercept at the box's centre)";
        match self {
            Prior::Autoscaled { sd } | Prior::AutoscaledNormal { sd } if log_sigma => {
                let (m, s) = AUTOSCALED_LOG_SIGMA;
                format!(
                    "N(0, {sd}²) {WHERE}; log σ' ~ N({m}, {s}²), σ' the error sd in units of \
                     the response's declared half-range"
                )
            }
            Prior::Autoscaled { sd } => format!(
                "Cauchy(0, {sd}) (Student-t, {AUTOSCALED_DF} degree of freedom, scale {sd}) \
                 {WHERE}"
            ),
            Prior::AutoscaledNormal { sd } => format!("N(0, {sd}²) {WHERE}"),
            Prior::Original { sd } => {
                format!("N(0, {sd}²) on every parameter in the model's own units")
            }
        }
    }
}

/// A prior in the internal coordinates: the Gaussian `N(mean, cov)` (`prec` its precision),
/// or, with `student_df` = ν, independent Student-t distributions with ν degrees of freedom,
/// centre `mean` and scale `√cov_jj` (`cov` then diagonal): the scale mixture of
/// `N(mean_j, λ_j cov_jj)` with `λ_j ~ InvGamma(ν/2, ν/2)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GaussianPrior {
    pub mean: Vec<f64>,
    pub cov: DMatrix<f64>,
    pub prec: DMatrix<f64>,
    pub student_df: Option<f64>,
}

impl GaussianPrior {
    /// `N(mean, cov)`.
    ///
    /// # Errors
    /// A covariance that is not positive definite, or a mean that is not finite.
    pub(crate) fn new(mean: Vec<f64>, cov: DMatrix<f64>) -> Result<Self> {
        let cov = (&cov + cov.transpose()) * 0.5;
        let chol = cov
            .clone()
            .cholesky()
            .filter(|_| mean.iter().all(|m| m.is_finite()));
        let prec = chol
            .ok_or_else(|| {
                Error::Model(
                    "the prior is not a proper Gaussian in the internal coordinates (a \
                     covariance that is not positive definite or a mean that is not finite): \
                     give a finite, positive prior sd"
                        .into(),
                )
            })?
            .inverse();
        Ok(GaussianPrior {
            mean,
            cov,
            prec,
            student_df: None,
        })
    }

    /// The gradient of the log density of the Gaussian `N(mean, cov)` at `theta`:
    /// `−P(θ − m)` (a Student-t prior's scale Gaussian).
    pub(crate) fn gaussian_grad(&self, theta: &[f64]) -> DVector<f64> {
        let diff = DVector::from_iterator(
            theta.len(),
            theta.iter().zip(&self.mean).map(|(t, m)| t - m),
        );
        -(&self.prec * diff)
    }

    /// The gradient of the log prior density at `theta`: `−P(θ − m)`, or for a Student-t
    /// prior `−(ν + 1)(θ_j − m_j)/(ν s_j² + (θ_j − m_j)²)` per coordinate.
    pub(crate) fn grad(&self, theta: &[f64]) -> DVector<f64> {
        match self.student_df {
            None => self.gaussian_grad(theta),
            Some(nu) => DVector::from_fn(theta.len(), |j, _| {
                let r = theta[j] - self.mean[j];
                -self.student_weight(nu, j, r) * r
            }),
        }
    }

    /// `(ν + 1)/(ν s_j² + r²)`: the Student-t score's weight of coordinate `j` at the distance
    /// `r` from its centre, and the mixture's posterior mean precision `E[1/(λ_j s_j²) | r]`.
    fn student_weight(&self, nu: f64, j: usize, r: f64) -> f64 {
        (nu + 1.0) / (nu * self.cov[(j, j)] + r * r)
    }

    /// Minus the Hessian of the log prior density at `theta`: `P`, or for a Student-t prior
    /// the diagonal `w_j − 2r_j² w_j²/(ν + 1)` with `w_j` the score's weight
    /// ([`Self::student_weight`], `r = θ − m`; negative beyond `r_j² = ν s_j²`).
    pub(crate) fn neg_hessian(&self, theta: &[f64]) -> DMatrix<f64> {
        match self.student_df {
            None => self.prec.clone(),
            Some(nu) => DMatrix::from_diagonal(&DVector::from_fn(theta.len(), |j, _| {
                let r = theta[j] - self.mean[j];
                let w = self.student_weight(nu, j, r);
                w - 2.0 * r * r * w * w / (nu + 1.0)
            })),
        }
    }

    /// The Gaussian a Student-t prior acts as on draws of θ (rows in the internal
    /// coordinates): precision [`Self::student_weight`] averaged over the draws, the posterior
    /// mean of the mixture's precision `1/(λ_j s_j²)`; the prior itself if it is Gaussian.
    pub(crate) fn effective_precision<'a>(
        &self,
        rows: impl IntoIterator<Item = &'a [f64]>,
    ) -> DMatrix<f64> {
        let Some(nu) = self.student_df else {
            return self.prec.clone();
        };
        let mut diag = DVector::zeros(self.mean.len());
        let mut count = 0usize;
        for row in rows {
            for (j, (t, m)) in row.iter().zip(&self.mean).enumerate() {
                diag[j] += self.student_weight(nu, j, t - m);
            }
            count += 1;
        }
        DMatrix::from_diagonal(&(diag / count.max(1) as f64))
    }
}

/// The public affine map between a model's own coordinates and the internal ones, fixed by the
/// declared bounds alone (never by the data): covariate `i` is `x'_i = (x_i − centre_i)/scale_i`, a linear model's
/// response `y' = (y − response_centre)/response_scale`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coordinates {
    /// The constant covariate that absorbs the centring (an intercept), if any.
    pub intercept: Option<usize>,
    /// Centre of each covariate (0 for constant ones and without an intercept).
    pub centre: Vec<f64>,
    /// Scale of each covariate: half its declared width with an intercept, else its largest
    /// declared magnitude; a constant covariate's value (1 if it is 0), so it becomes 1.
    pub scale: Vec<f64>,
    /// Centre of a linear model's response (0 otherwise).
    pub response_centre: f64,
    /// Scale of a linear model's response (1 otherwise).
    pub response_scale: f64,
    /// Whether the last parameter is a linear model's `ln σ`.
    pub log_sigma: bool,
}

impl Coordinates {
    /// The coordinates of covariates declared in `bounds` (one `(lo, hi)` per column) and,
    /// for a linear model, a response declared in `response`.
    pub(crate) fn of(bounds: &[(f64, f64)], response: Option<(f64, f64)>) -> Self {
        let magnitude = |(lo, hi): (f64, f64)| {
            let m = f64::max(lo.abs(), hi.abs());
            if m > 0.0 { m } else { 1.0 }
        };
        let intercept = bounds.iter().position(|&(lo, hi)| lo == hi && lo != 0.0);
        let (centre, scale): (Vec<f64>, Vec<f64>) = bounds
            .iter()
            .map(|&(lo, hi)| match intercept {
                // a constant covariate becomes 1 (0 stays 0)
                _ if lo == hi => (0.0, if lo != 0.0 { lo } else { 1.0 }),
                Some(_) => (0.5 * (lo + hi), 0.5 * (hi - lo)),
                None => (0.0, magnitude((lo, hi))),
            })
            .collect();
        let (response_centre, response_scale) = match (response, intercept) {
            (Some((lo, hi)), Some(_)) if lo < hi => (0.5 * (lo + hi), 0.5 * (hi - lo)),
            (Some(r), _) => (0.0, magnitude(r)),
            (None, _) => (0.0, 1.0),
        };
        Coordinates {
            intercept,
            centre,
            scale,
            response_centre,
            response_scale,
            log_sigma: response.is_some(),
        }
    }

    /// Number of parameters (covariates, and `ln σ` for a linear model).
    pub fn dim(&self) -> usize {
        self.centre.len() + usize::from(self.log_sigma)
    }

    /// A covariate value in the internal coordinates.
    pub(crate) fn covariate(&self, i: usize, x: f64) -> f64 {
        (x - self.centre[i]) / self.scale[i]
    }

    /// A covariate value from the internal coordinates back to the model's units.
    pub(crate) fn covariate_to_model(&self, i: usize, x: f64) -> f64 {
        self.centre[i] + self.scale[i] * x
    }

    /// A response value in the internal coordinates.
    pub(crate) fn response(&self, y: f64) -> f64 {
        (y - self.response_centre) / self.response_scale
    }

    /// The affine map `θ = T θ' + t` from the internal coordinates to the model's own, as
    /// `(T, t)`.
    pub fn to_model_map(&self) -> (DMatrix<f64>, DVector<f64>) {
        let p = self.centre.len();
        let d = self.dim();
        let c = self.response_scale;
        let mut t = DMatrix::<f64>::zeros(d, d);
        let mut offset = DVector::<f64>::zeros(d);
        for i in 0..p {
            t[(i, i)] = c / self.scale[i];
        }
        if let Some(k) = self.intercept {
            // η = Σ β'_i (x_i − c_i)/s_i: the intercept (its value v = s_k, internally 1)
            // absorbs −Σ β'_i c_i/s_i
            let v = self.scale[k];
            for i in (0..p).filter(|&i| i != k) {
                t[(k, i)] = -c * self.centre[i] / (self.scale[i] * v);
            }
            offset[k] = self.response_centre / v;
        }
        if self.log_sigma {
            t[(p, p)] = 1.0;
            offset[p] = c.ln();
        }
        (t, offset)
    }

    /// `theta` from the internal coordinates to the model's own, in place.
    pub fn to_model(&self, theta: &mut [f64]) {
        let (t, offset) = self.to_model_map();
        let v = &t * DVector::from_column_slice(theta) + offset;
        theta.copy_from_slice(v.as_slice());
    }

    /// The prior in the internal coordinates: [`Prior::Autoscaled`] as stated there,
    /// [`Prior::Original`] mapped from the model's units (`θ' = T⁻¹(θ − t)`).
    ///
    /// # Errors
    /// A prior sd that is not positive and finite, or one that the map makes improper.
    pub(crate) fn prior(&self, prior: Prior) -> Result<GaussianPrior> {
        let sd = prior.sd()?;
        let d = self.dim();
        let p = self.centre.len();
        match prior {
            Prior::Autoscaled { .. } | Prior::AutoscaledNormal { .. } => {
                let mut mean = vec![0.0; d];
                let mut var = vec![sd * sd; d];
                if self.log_sigma {
                    let (m, s) = AUTOSCALED_LOG_SIGMA;
                    mean[p] = m;
                    var[p] = s * s;
                }
                let gaussian =
                    GaussianPrior::new(mean, DMatrix::from_diagonal(&DVector::from_vec(var)))?;
                Ok(GaussianPrior {
                    student_df: (matches!(prior, Prior::Autoscaled { .. }) && !self.log_sigma)
                        .then_some(AUTOSCALED_DF),
                    ..gaussian
                })
            }
            Prior::Original { .. } => {
                let (t, offset) = self.to_model_map();
                let t_inv = t.try_inverse().ok_or_else(|| {
                    Error::Model("the internal coordinates' map is singular".into())
                })?;
                let mean = -(&t_inv * offset);
                let cov = &t_inv * t_inv.transpose() * (sd * sd);
                GaussianPrior::new(mean.as_slice().to_vec(), cov)
            }
        }
    }

    /// The report of `prior` (declared as `declared`) in the model's units.
    pub(crate) fn prior_report(&self, declared: Prior, prior: &GaussianPrior) -> PriorReport {
        let (mean, cov) = self.gaussian_to_model(prior);
        PriorReport {
            declared,
            description: declared.describe(self.log_sigma),
            df: prior.student_df,
            mean,
            cov: cov
                .row_iter()
                .map(|r| r.iter().copied().collect())
                .collect(),
        }
    }

    /// The original-scale mean and covariance of a Gaussian in the internal coordinates (for
    /// reports: the prior a user reads in the model's units).
    pub(crate) fn gaussian_to_model(&self, g: &GaussianPrior) -> (Vec<f64>, DMatrix<f64>) {
        let (t, offset) = self.to_model_map();
        let mean = &t * DVector::from_column_slice(&g.mean) + offset;
        let cov = &t * &g.cov * t.transpose();
        (mean.as_slice().to_vec(), (&cov + cov.transpose()) * 0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map back reproduces the linear predictor and the response: `η(x) = θᵀx` in the
    /// model's units equals `θ'ᵀx'` in the internal ones (plus the response's centring), for
    /// an intercept model with covariates whose boxes do not contain 0, and without one.
    #[test]
    fn the_map_back_preserves_the_linear_predictor() {
        let bounds = [(1.0, 1.0), (1997.0, 2002.0), (-3.0, 10.0)];
        for (response, with_intercept) in [(None, true), (Some((20.0, 320.0)), true), (None, false)]
        {
            let b: Vec<(f64, f64)> = if with_intercept {
                bounds.to_vec()
            } else {
                bounds[1..].to_vec()
            };
            let c = Coordinates::of(&b, response);
            let p = b.len();
            let internal: Vec<f64> = (0..c.dim()).map(|i| 0.3 * i as f64 - 0.7).collect();
            let mut model = internal.clone();
            c.to_model(&mut model);
            let x: Vec<f64> = b.iter().map(|&(lo, hi)| 0.25 * lo + 0.75 * hi).collect();
            let eta: f64 = (0..p).map(|i| model[i] * x[i]).sum();
            let eta_internal: f64 = (0..p).map(|i| internal[i] * c.covariate(i, x[i])).sum();
            // y = η in model units ⇔ y' = η' in the internal ones
            let want = c.response_centre + c.response_scale * eta_internal;
            assert!(
                (eta - want).abs() < 1e-9 * (1.0 + eta.abs()),
                "{eta} vs {want}"
            );
            if response.is_some() {
                assert!((model[p] - (internal[p] + c.response_scale.ln())).abs() < 1e-12);
            }
        }
    }

    /// An original-scale prior mapped into the internal coordinates and back is itself, and
    /// the autoscaled prior is what its docs state.
    #[test]
    fn priors_in_both_coordinates() {
        let c = Coordinates::of(&[(1.0, 1.0), (0.0, 60.0), (18.0, 99.0)], Some((0.0, 300.0)));
        let g = c.prior(Prior::Original { sd: 3.0 }).unwrap();
        let (mean, cov) = c.gaussian_to_model(&g);
        assert!(mean.iter().all(|m| m.abs() < 1e-9), "{mean:?}");
        let want = DMatrix::<f64>::identity(4, 4) * 9.0;
        assert!((cov - want).norm() < 1e-8);
        let a = c.prior(Prior::default()).unwrap();
        assert_eq!(a.mean, vec![0.0, 0.0, 0.0, -1.0]);
        assert_eq!(a.cov[(1, 1)], 6.25);
        assert!(c.prior(Prior::Original { sd: -1.0 }).is_err());
        // a linear model's default is Gaussian; a GLM's is Cauchy with the same scale
        assert_eq!(a.student_df, None);
        let glm = Coordinates::of(&[(1.0, 1.0), (0.0, 60.0)], None);
        let t = glm.prior(Prior::default()).unwrap();
        assert_eq!(t.student_df, Some(AUTOSCALED_DF));
        assert_eq!(t.cov[(1, 1)], 6.25);
        assert_eq!(
            glm.prior(Prior::Original { sd: 3.0 }).unwrap().student_df,
            None
        );
        assert_eq!(glm.prior_report(Prior::default(), &t).df, Some(1.0));
        let normal = glm.prior(Prior::AutoscaledNormal { sd: 2.5 }).unwrap();
        assert_eq!((normal.student_df, normal.cov[(1, 1)]), (None, 6.25));
        assert!(
            Prior::AutoscaledNormal { sd: 2.5 }
                .describe(false)
                .starts_with("N(0, 2.5²)")
        );
        assert!(glm.prior(Prior::AutoscaledNormal { sd: f64::NAN }).is_err());
    }

    /// The Student-t prior's gradient and curvature are those of its log density
    /// `−(ν + 1)/2 Σ ln(1 + r_j²/(ν s_j²))` (central differences), and its acting precision is
    /// the mixture's posterior mean precision.
    #[test]
    fn student_t_prior_derivatives() {
        let glm = Coordinates::of(&[(1.0, 1.0), (0.0, 60.0), (-3.0, 5.0)], None);
        let prior = glm.prior(Prior::Autoscaled { sd: 1.5 }).unwrap();
        let nu = prior.student_df.unwrap();
        let log_density = |t: &[f64]| -> f64 {
            t.iter()
                .enumerate()
                .map(|(j, v)| -0.5 * (nu + 1.0) * (v * v / (nu * prior.cov[(j, j)])).ln_1p())
                .sum()
        };
        let theta = [0.3, -4.0, 1.7];
        let (g, h) = (prior.grad(&theta), prior.neg_hessian(&theta));
        let e = 1e-5;
        for j in 0..3 {
            let mut up = theta;
            let mut down = theta;
            up[j] += e;
            down[j] -= e;
            let fd = (log_density(&up) - log_density(&down)) / (2.0 * e);
            assert!((fd - g[j]).abs() < 1e-7, "gradient {j}: {fd} vs {}", g[j]);
            let fd2 = (prior.grad(&up)[j] - prior.grad(&down)[j]) / (2.0 * e);
            assert!(
                (fd2 + h[(j, j)]).abs() < 1e-6,
                "curvature {j}: {fd2} vs {}",
                h[(j, j)]
            );
        }
        // beyond r² = ν s² the curvature is negative; the scale Gaussian's gradient is −P r
        assert!(h[(1, 1)] < 0.0);
        assert!((prior.gaussian_grad(&theta)[1] - 4.0 / 2.25).abs() < 1e-12);
        // one draw: (ν + 1)/(ν s² + r²) per coordinate
        let acting = prior.effective_precision([&theta[..]]);
        assert!((acting[(1, 1)] - 2.0 / (2.25 + 16.0)).abs() < 1e-12);
    }
}
