//! The data of a noise-aware fit: a regression's rows with **declared** public bounds, the
//! per-row score and information of each model, and sound per-row bounds of their shaped
//! norms over every row the bounds allow (the sensitivities of the releases).
//!
//! Per row, with the linear predictor `η = xᵀβ`:
//!
//! | model | parameters | score `g_j` | information `I_j = −∇² ln p` |
//! |---|---|---|---|
//! | logistic | `β` | `(y − σ(η)) x` | `σ(η)(1 − σ(η)) x xᵀ` |
//! | poisson | `β` | `clamp(y − e^η, −K, K) x` | `min(e^η, K) x xᵀ` |
//! | linear | `(β, s = ln σ)` | `(r e x, r² e − 1)`, `r = y − η`, `e = e^{−2s}` | `e (x, 2r)(x, 2r)ᵀ − 2r²e · 𝟙_s 𝟙_sᵀ` |
//!
//! Poisson's score is unbounded in the count, so the response needs a declared cap `K`
//! (`mdvis=0:K`); rows whose fitted mean passes `K` have their residual and weight clipped at
//! `K` (a bias only for rows whose mean exceeds the cap: declare a cap above the counts you
//! expect). Logistic and Poisson information terms are rank-one positive semi-definite, so
//! substituting a row moves their (shaped) sum by at most `√2` times a row's bound; the
//! linear model's are not, and move it by at most twice.

use nalgebra::DMatrix;

use super::coordinates::{Coordinates, GaussianPrior, Prior, PriorReport};
use super::link::GlmKind;
use super::polytope::Polytope;
use crate::error::{Error, Result};

/// A regression's rows and declared bounds (see the module docs).
#[derive(Clone, Debug)]
pub struct GlmData {
    pub(crate) kind: GlmKind,
    /// Row-major covariates, `n × p` (the intercept column included).
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
    pub(crate) p: usize,
    /// Declared bounds of each covariate in the internal coordinates (the intercept `[1, 1]`,
    /// a free covariate `[−1, 1]` with an intercept).
    pub(crate) lo: Vec<f64>,
    pub(crate) hi: Vec<f64>,
    /// Declared bounds of the response (Poisson: `[0, K]`; linear: required, internal
    /// coordinates; logistic: `[0, 1]`).
    pub(crate) y_lo: f64,
    pub(crate) y_hi: f64,
    /// The public map between the model's units and the internal coordinates.
    pub(crate) coords: Coordinates,
    /// The covariates' declared bounds in the model's units.
    declared: Vec<(f64, f64)>,
    /// The prior as declared, and as a Gaussian in the internal coordinates.
    prior_spec: Prior,
    pub(crate) prior: GaussianPrior,
    pub(crate) names: Vec<String>,
    /// The rows the declared bounds and one-hot declarations allow (internal coordinates).
    polytope: Polytope,
    /// Covariates declared indicators (sorted): every value is the declared 0 or the upper
    /// bound ([`GlmData::binary`], and every member of a one-hot group).
    indicators: Vec<usize>,
}

impl GlmData {
    /// Rows `x` (row-major, `n × p`, first column the intercept if wanted), responses `y`,
    /// declared covariate bounds `bounds` (one `(lo, hi)` per column) and response bounds,
    /// prior `N(0, prior_var)` on every parameter in the model's units
    /// ([`Prior::Original`]; [`GlmData::with_prior`] sets another, e.g. the default of `fit`,
    /// [`Prior::Autoscaled`]). The rows are held in the internal coordinates of the declared
    /// bounds ([`Coordinates`]).
    ///
    /// ```
    /// use dp_mcmc::noise_aware::{GlmData, GlmKind};
    /// let x = vec![1.0, 0.2, 1.0, 0.9, 1.0, 0.5];
    /// let data = GlmData::new(GlmKind::Logistic, x.clone(), vec![0.0, 1.0, 1.0],
    ///     vec![(1.0, 1.0), (0.0, 1.0)], (0.0, 1.0), 10.0, vec!["intercept".into(), "a".into()])?;
    /// assert_eq!(data.dim(), 2);
    /// // a value outside its declared bounds is an error naming the column and the row
    /// let err = GlmData::new(GlmKind::Logistic, x, vec![0.0, 1.0, 1.0],
    ///     vec![(1.0, 1.0), (0.0, 0.5)], (0.0, 1.0), 10.0, vec!["intercept".into(), "a".into()]);
    /// assert!(err.unwrap_err().to_string().contains("`a`"));
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// Shapes that disagree, non-finite values or bounds, a value outside its bounds, a
    /// response outside the model's support.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: GlmKind,
        x: Vec<f64>,
        y: Vec<f64>,
        bounds: Vec<(f64, f64)>,
        y_bounds: (f64, f64),
        prior_var: f64,
        names: Vec<String>,
    ) -> Result<Self> {
        let p = bounds.len();
        crate::error::check::positive("prior_var", prior_var)?;
        crate::error::check::at_least_one("covariates", p)?;
        if x.len() != y.len() * p || y.is_empty() {
            return Err(Error::invalid(
                "x",
                x.len(),
                format!("must hold n × p = {} × {p} values (and n ≥ 1)", y.len()),
            ));
        }
        let dim = p + usize::from(kind == GlmKind::Linear);
        crate::error::check::len("names", names.len(), dim)?;
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                return Err(Error::invalid(
                    "bounds",
                    format!("{lo}:{hi}"),
                    format!("column `{}` needs finite bounds LO ≤ HI", names[i]),
                ));
            }
        }
        let (y_lo, y_hi) = y_bounds;
        if !(y_lo.is_finite() && y_hi.is_finite() && y_lo <= y_hi) {
            return Err(Error::invalid(
                "bounds",
                format!("{y_lo}:{y_hi}"),
                "the response needs finite declared bounds LO ≤ HI",
            ));
        }
        for (j, row) in x.chunks_exact(p).enumerate() {
            for (i, (&v, &(lo, hi))) in row.iter().zip(&bounds).enumerate() {
                if !(lo..=hi).contains(&v) {
                    return Err(Error::InvalidData(format!(
                        "column `{}` has the value {v} at row {j}, outside its declared bounds \
                         [{lo}, {hi}]; widen the bounds or clamp the values",
                        names[i]
                    )));
                }
            }
        }
        for (j, &v) in y.iter().enumerate() {
            let ok = match kind {
                GlmKind::Logistic => v == 0.0 || v == 1.0,
                GlmKind::Poisson => v >= 0.0 && v.fract() == 0.0 && v <= y_hi,
                GlmKind::Linear => (y_lo..=y_hi).contains(&v),
            };
            if !ok {
                return Err(Error::InvalidData(format!(
                    "the response has the value {v} at row {j}: it must be {}",
                    match kind {
                        GlmKind::Logistic => "0 or 1".to_string(),
                        GlmKind::Poisson => format!("a count in [0, {y_hi}] (the declared cap)"),
                        GlmKind::Linear => format!("within its declared bounds [{y_lo}, {y_hi}]"),
                    }
                )));
            }
        }
        // the public internal coordinates of the declared bounds
        let linear = kind == GlmKind::Linear;
        let coords = Coordinates::of(&bounds, linear.then_some(y_bounds));
        let mut x = x;
        for row in x.chunks_exact_mut(p) {
            for (i, v) in row.iter_mut().enumerate() {
                *v = coords.covariate(i, *v);
            }
        }
        let (lo, hi): (Vec<f64>, Vec<f64>) = bounds
            .iter()
            .enumerate()
            .map(|(i, &(lo, hi))| (coords.covariate(i, lo), coords.covariate(i, hi)))
            .unzip();
        let (y, y_lo, y_hi) = if linear {
            let y = y.into_iter().map(|v| coords.response(v)).collect();
            (y, coords.response(y_lo), coords.response(y_hi))
        } else {
            (y, y_lo, y_hi)
        };
        let prior_spec = Prior::Original {
            sd: prior_var.sqrt(),
        };
        let prior = coords.prior(prior_spec)?;
        let polytope = Polytope::new(lo.clone(), hi.clone());
        Ok(GlmData {
            kind,
            x,
            y,
            p,
            lo,
            hi,
            y_lo,
            y_hi,
            coords,
            declared: bounds,
            prior_spec,
            prior,
            names,
            polytope,
            indicators: Vec::new(),
        })
    }

    /// The same rows under another prior (see [`Prior`]; `fit`'s default is
    /// [`Prior::Autoscaled`], weakly informative in the internal coordinates).
    ///
    /// ```
    /// use dp_mcmc::noise_aware::{GlmData, GlmKind, Prior};
    /// let data = GlmData::new(GlmKind::Logistic, vec![1.0, 0.2, 1.0, 0.9], vec![0.0, 1.0],
    ///     vec![(1.0, 1.0), (0.0, 1.0)], (0.0, 1.0), 10.0, vec!["intercept".into(), "a".into()])?;
    /// let data = data.with_prior(Prior::default())?;
    /// assert_eq!(data.prior(), Prior::Autoscaled { sd: 2.5 });
    /// assert!(data.with_prior(Prior::Original { sd: 0.0 }).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// A prior sd that is not positive and finite.
    pub fn with_prior(mut self, prior: Prior) -> Result<Self> {
        self.prior = self.coords.prior(prior)?;
        self.prior_spec = prior;
        Ok(self)
    }

    /// Declares `group` (covariate names) **one-hot**: at most one of them is non-zero in any
    /// row, as the indicators of one categorical variable are (public structure, from a
    /// codebook). The releases' sensitivities are maxima of convex norms over the rows the
    /// declaration allows, whose convex hull's vertices are the box's vertices with at most
    /// one of the group away from 0: fewer and smaller worst cases, so less noise (on randhie's
    /// three health indicators: sd ratio 1.62 → 1.48 at ε = 1, docs/NOISE-AWARE.md). The
    /// members are indicators (each value 0 or the declared upper bound, as
    /// [`GlmData::binary`] declares), so the releases need not carry the products the
    /// declaration fixes (docs/NOISE-AWARE.md, "Releases").
    ///
    /// ```
    /// use dp_mcmc::noise_aware::{GlmData, GlmKind};
    /// let x = vec![1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    /// let bounds = vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0)];
    /// let names = vec!["intercept".into(), "fair".into(), "poor".into()];
    /// let data = GlmData::new(GlmKind::Logistic, x.clone(), vec![0.0, 1.0, 1.0], bounds.clone(),
    ///     (0.0, 1.0), 10.0, names.clone())?;
    /// let data = data.one_hot(&["fair", "poor"])?;
    /// // a row with two of them set contradicts the declaration: an error naming the row
    /// let mut bad = x;
    /// bad[7] = 1.0; // row 2: fair and poor both set
    /// bad[8] = 1.0;
    /// let err = GlmData::new(GlmKind::Logistic, bad, vec![0.0, 1.0, 1.0], bounds, (0.0, 1.0),
    ///     10.0, names)?.one_hot(&["fair", "poor"]).unwrap_err();
    /// assert!(err.to_string().contains("row 2"), "{err}");
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// A name that is not a covariate, a group of fewer than two, a covariate whose declared
    /// lower bound is not 0, a value that is neither 0 nor the upper bound, a row with more
    /// than one of the group non-zero.
    pub fn one_hot(mut self, group: &[&str]) -> Result<Self> {
        let idx = self.indicator_columns("one-hot", group)?;
        if idx.len() < 2 {
            return Err(Error::invalid(
                "one-hot",
                group.join(","),
                "name at least two distinct covariates",
            ));
        }
        // away from the declared 0 (internally its image, the lower bound)
        let set_in_group = |v: &[f64]| idx.iter().filter(|&&i| v[i] != self.lo[i]).count();
        for (j, row) in self.x.chunks_exact(self.p).enumerate() {
            if set_in_group(row) > 1 {
                return Err(Error::InvalidData(format!(
                    "row {j} has more than one of the one-hot columns {} non-zero; fix the \
                     row or drop the declaration",
                    group.join(", ")
                )));
            }
        }
        self.polytope = self.polytope.with_one_hot(idx);
        Ok(self)
    }

    /// Declares `columns` (covariate names) **binary**: every value is 0 or the declared upper
    /// bound (an indicator, from a codebook). Public structure: a row's square of such a
    /// column is fixed by the column itself, so a linear model's `XᵀX` release need not carry
    /// it (docs/NOISE-AWARE.md, "Releases"). The members of a one-hot group are binary
    /// already.
    ///
    /// ```
    /// use dp_mcmc::noise_aware::{GlmData, GlmKind};
    /// let names = vec!["intercept".into(), "smoker".into(), "log_sigma".into()];
    /// let data = |x: Vec<f64>| GlmData::new(GlmKind::Linear, x, vec![0.5, 1.5, 1.0],
    ///     vec![(1.0, 1.0), (0.0, 1.0)], (0.0, 2.0), 10.0, names.clone());
    /// let ok = data(vec![1.0, 1.0, 1.0, 0.0, 1.0, 1.0])?.binary(&["smoker"])?;
    /// assert_eq!(ok.dim(), 3);
    /// // a value between 0 and the bound contradicts the declaration: an error naming the row
    /// let err = data(vec![1.0, 1.0, 1.0, 0.5, 1.0, 1.0])?.binary(&["smoker"]).unwrap_err();
    /// assert!(err.to_string().contains("row 1"), "{err}");
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// A name that is not a covariate, a covariate whose declared lower bound is not 0, a
    /// value that is neither 0 nor the upper bound.
    pub fn binary(mut self, columns: &[&str]) -> Result<Self> {
        self.indicator_columns("binary", columns)?;
        Ok(self)
    }

    /// The covariates named by `names` (sorted, deduplicated), checked declared `0:HI` with
    /// every value 0 or `HI`, and recorded as indicators; `flag` names the declaration.
    fn indicator_columns(&mut self, flag: &'static str, names: &[&str]) -> Result<Vec<usize>> {
        let mut idx = Vec::with_capacity(names.len());
        for name in names {
            let i = self.names[..self.p]
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| {
                    Error::invalid(
                        flag,
                        name,
                        "is not one of the covariates: name columns given as features",
                    )
                })?;
            if self.declared[i].0 != 0.0 || self.declared[i].1 <= 0.0 {
                return Err(Error::invalid(
                    flag,
                    name,
                    format!("a {flag} column needs declared bounds 0:HI with HI > 0"),
                ));
            }
            idx.push(i);
        }
        idx.sort_unstable();
        idx.dedup();
        for &i in &idx {
            // the internal images of the declared 0 and HI, computed as the rows' were
            let (lo, hi) = (self.lo[i], self.hi[i]);
            if let Some((j, v)) = self
                .x
                .chunks_exact(self.p)
                .map(|row| row[i])
                .enumerate()
                .find(|&(_, v)| v != lo && v != hi)
            {
                let v = self.coords.covariate_to_model(i, v);
                return Err(Error::InvalidData(format!(
                    "column `{}` has the value {v} at row {j}: a {flag} column holds \
                     indicators, 0 or its declared upper bound {}; fix the row or drop the \
                     declaration",
                    self.names[i], self.declared[i].1
                )));
            }
        }
        self.indicators.extend(&idx);
        self.indicators.sort_unstable();
        self.indicators.dedup();
        Ok(idx)
    }

    /// The covariates declared indicators ([`GlmData::binary`], one-hot members), sorted.
    pub(crate) fn indicators(&self) -> &[usize] {
        &self.indicators
    }

    /// The one-hot groups (covariate indices, sorted).
    pub(crate) fn one_hot_groups(&self) -> &[Vec<usize>] {
        self.polytope.groups()
    }

    /// The rows in the internal coordinates ([`GlmData::coordinates`]): covariates
    /// (row-major, `n × p`) and responses, as validated (and clamped).
    pub fn internal_rows(&self) -> (&[f64], &[f64]) {
        (&self.x, &self.y)
    }

    /// The rows in the model's units, mapped back from the internal coordinates (equal to
    /// the validated, clamped input up to rounding): covariates (row-major, `n × p`) and
    /// responses.
    pub fn rows(&self) -> (Vec<f64>, Vec<f64>) {
        let c = &self.coords;
        let x = self
            .x
            .chunks_exact(self.p)
            .flat_map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(i, &v)| c.covariate_to_model(i, v))
            })
            .collect();
        let y = if self.kind == GlmKind::Linear {
            let (m, s) = (c.response_centre, c.response_scale);
            self.y.iter().map(|v| m + s * v).collect()
        } else {
            self.y.clone()
        };
        (x, y)
    }

    /// The public map between the model's units and the internal coordinates.
    pub fn coordinates(&self) -> &Coordinates {
        &self.coords
    }

    /// `θ` in internal coordinates to the model's own.
    pub(crate) fn to_model(&self, theta: &mut [f64]) {
        self.coords.to_model(theta);
    }

    /// Number of parameters.
    pub fn dim(&self) -> usize {
        self.p + usize::from(self.kind == GlmKind::Linear)
    }

    /// Number of rows (public under the substitution relation).
    pub fn n_rows(&self) -> usize {
        self.y.len()
    }

    /// Parameter names.
    pub fn param_names(&self) -> &[String] {
        &self.names
    }

    /// The model.
    pub fn kind(&self) -> GlmKind {
        self.kind
    }

    /// The prior as declared.
    pub fn prior(&self) -> Prior {
        self.prior_spec
    }

    /// The prior as declared, in words and as a Gaussian in the model's units.
    pub fn prior_report(&self) -> PriorReport {
        self.coords.prior_report(self.prior_spec, &self.prior)
    }

    /// The **non-private** Laplace approximation of the posterior: the mode (Newton's method on
    /// the exact sums) and the inverse of the information plus the prior's curvature there
    /// (row-major `d × d`). It reads the raw data and is **not** covered by any privacy
    /// guarantee: a reference for evaluations on data you may see, never a release.
    ///
    /// # Errors
    /// Newton's method does not converge in 100 steps.
    pub fn laplace_nonprivate(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let d = self.dim();
        let mut theta = self.public_start();
        for _ in 0..100 {
            let mut g = vec![0.0; d];
            let mut h = DMatrix::zeros(d, d);
            self.sums(&theta, &mut g, &mut h);
            let prior_grad = self.prior.grad(&theta);
            for (gi, pg) in g.iter_mut().zip(prior_grad.iter()) {
                *gi += pg;
            }
            h += &self.prior.prec;
            let chol = h.clone().cholesky().ok_or_else(|| Error::Numerical {
                what: "non-private Laplace approximation",
                reason: "the information is not positive definite on the Newton path".into(),
            })?;
            let mut step = chol.solve(&nalgebra::DVector::from_vec(g));
            let big = step.amax();
            if big > 1.0 {
                step /= big;
            }
            for (t, s) in theta.iter_mut().zip(step.iter()) {
                *t += s;
            }
            if big < 1e-10 {
                // the Laplace covariance with the prior's exact curvature at the mode (a
                // Student-t prior's Newton steps above are damped by its scale Gaussian)
                let mut exact = DMatrix::zeros(d, d);
                self.sums(&theta, &mut vec![0.0; d], &mut exact);
                let exact = exact + self.prior.neg_hessian(&theta);
                let chol = exact.cholesky().ok_or_else(|| Error::Numerical {
                    what: "non-private Laplace approximation",
                    reason: "the posterior's curvature at the mode is not positive definite".into(),
                })?;
                let (t, _) = self.coords.to_model_map();
                let cov = &t * chol.inverse() * t.transpose();
                self.to_model(&mut theta);
                return Ok((theta, cov.transpose().as_slice().to_vec()));
            }
        }
        Err(Error::Numerical {
            what: "non-private Laplace approximation",
            reason: "Newton's method did not converge in 100 steps".into(),
        })
    }

    /// The public start of the Newton path: 0, and for a linear model `ln σ` at a quarter of
    /// the response's declared range.
    pub(crate) fn public_start(&self) -> Vec<f64> {
        let mut t = vec![0.0; self.dim()];
        if self.kind == GlmKind::Linear {
            t[self.p] = (0.25 * (self.y_hi - self.y_lo)).max(1e-8).ln();
        }
        t
    }

    /// The range of `vᵀβ` over the covariate box (`β` beyond the covariates, a linear model's
    /// `ln σ`, ignored).
    pub(super) fn eta_range(&self, beta: &[f64]) -> (f64, f64) {
        let mut range = (0.0, 0.0);
        for ((&b, &lo), &hi) in beta.iter().zip(&self.lo).zip(&self.hi) {
            let (a, c) = (b * lo, b * hi);
            range.0 += a.min(c);
            range.1 += a.max(c);
        }
        range
    }

    /// The box's vertices (row-major, `p` per vertex), when few enough to enumerate.
    pub(crate) fn vertices(&self) -> Option<&[f64]> {
        self.polytope.vertices()
    }

    /// The same declarations with one row (`x` in the caller's coordinates): for tests that
    /// compare one row's terms with the bounds.
    #[cfg(test)]
    pub(crate) fn with_one_row(&self, x: &[f64], y: f64) -> GlmData {
        GlmData {
            x: x.iter()
                .enumerate()
                .map(|(i, &v)| self.coords.covariate(i, v))
                .collect(),
            y: vec![if self.kind == GlmKind::Linear {
                self.coords.response(y)
            } else {
                y
            }],
            ..self.clone()
        }
    }

    /// The allowed polytope's edges (pairs of indices into [`Self::vertices`]), when there are
    /// few enough vertices to search them.
    pub(crate) fn edges(&self) -> Option<&[[u32; 2]]> {
        self.polytope.edges()
    }

    /// The Poisson cap `K` (the response's declared upper bound, at least 1).
    pub(super) fn cap(&self) -> f64 {
        self.y_hi.max(1.0)
    }

    /// The rows' residual and weight functions (`None` for a linear model).
    pub(crate) fn link(&self) -> Option<super::link::Link> {
        (self.kind != GlmKind::Linear).then(|| super::link::Link {
            kind: self.kind,
            cap: self.cap(),
        })
    }

    /// `max ‖M_{:, ..p} v‖` over the allowed rows (`m` has `dim()` columns; only the first
    /// `p` act on `v`): exact, by vertex enumeration or a certified branch and bound.
    pub(crate) fn max_shaped_norm(&self, m: &DMatrix<f64>) -> f64 {
        self.polytope.max_norm(m)
    }

    /// Adds `Σ_j g_j(θ)` to `grad` and `Σ_j I_j(θ)` (full `d × d`) to `info`.
    pub(crate) fn sums(&self, theta: &[f64], grad: &mut [f64], info: &mut DMatrix<f64>) {
        let (p, d) = (self.p, self.dim());
        let link = self.link();
        let mut v = vec![0.0; d];
        for (row, &y) in self.x.chunks_exact(p).zip(&self.y) {
            let eta: f64 = row.iter().zip(theta).map(|(a, b)| a * b).sum();
            // info = w v vᵀ (+ a correction on the s-s entry for the linear model)
            let (r, w, extra) = match link {
                Some(link) => (link.residual(y, eta), link.weight(eta), 0.0),
                None => {
                    let e = (-2.0 * theta[p]).exp();
                    let r = y - eta;
                    grad[p] += r * r * e - 1.0;
                    (r * e, e, -2.0 * r * r * e)
                }
            };
            v[..p].copy_from_slice(row);
            if self.kind == GlmKind::Linear {
                v[p] = 2.0 * r / (-2.0 * theta[p]).exp();
            }
            for (g, xi) in grad.iter_mut().zip(row) {
                *g += r * xi;
            }
            for a in 0..d {
                let wa = w * v[a];
                if wa == 0.0 {
                    continue;
                }
                for b in a..d {
                    info[(a, b)] += wa * v[b];
                }
            }
            if extra != 0.0 {
                info[(p, p)] += extra;
            }
        }
        for a in 0..d {
            for b in 0..a {
                info[(a, b)] = info[(b, a)];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise_aware::sensitivity::separate_bounds;

    fn data(kind: GlmKind) -> GlmData {
        let x = vec![1.0, 0.0, 2.0, 1.0, 1.0, -1.0, 1.0, 0.5, 0.0];
        let y = match kind {
            GlmKind::Logistic => vec![0.0, 1.0, 1.0],
            GlmKind::Poisson => vec![0.0, 3.0, 7.0],
            GlmKind::Linear => vec![0.5, -1.0, 2.0],
        };
        let names = (0..3 + usize::from(kind == GlmKind::Linear))
            .map(|i| format!("t{i}"))
            .collect();
        GlmData::new(
            kind,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0), (-1.0, 2.0)],
            match kind {
                GlmKind::Logistic => (0.0, 1.0),
                GlmKind::Poisson => (0.0, 8.0),
                GlmKind::Linear => (-3.0, 3.0),
            },
            10.0,
            names,
        )
        .unwrap()
    }

    /// A one-hot declaration keeps the shaped-norm bound sound over every row it allows (the
    /// bound is at least the norm of random allowed rows, including rows with one indicator at
    /// a fractional value) and never raises it; on a shape that weighs two indicators
    /// together it lowers it.
    #[test]
    fn one_hot_bounds_stay_sound_and_get_tighter() {
        use rand::RngExt;
        let mut rng = crate::rng::chain_rng(9, 0);
        let names: Vec<String> = ["intercept", "u", "a", "b", "c"].map(String::from).to_vec();
        let rows = vec![1.0, 0.3, 1.0, 0.0, 0.0, 1.0, 0.9, 0.0, 0.0, 1.0];
        let bounds = vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)];
        let boxed = GlmData::new(
            GlmKind::Logistic,
            rows,
            vec![0.0, 1.0],
            bounds,
            (0.0, 1.0),
            10.0,
            names,
        )
        .unwrap();
        let grouped = boxed.clone().one_hot(&["a", "b", "c"]).unwrap();
        // the shapes act on the internal coordinates (an indicator x becomes 2x − 1): the
        // indicators' sum is (Σ x' + 3)/2, at most 3 in the box and 1 under the declaration
        let together = DMatrix::from_fn(5, 5, |r, c| match (r, c) {
            (0, 0) => 1.5,
            (0, 2..) => 0.5,
            _ => 0.0,
        });
        assert!(grouped.max_shaped_norm(&together) < boxed.max_shaped_norm(&together) - 1.5);
        for _ in 0..2000 {
            let m = DMatrix::from_fn(5, 5, |_, _| rng.random_range(-1.0..1.0));
            let bound = grouped.max_shaped_norm(&m);
            assert!(bound <= boxed.max_shaped_norm(&m) + 1e-12);
            let mut x =
                nalgebra::DVector::from_vec(vec![1.0, rng.random_range(0.0..=1.0), 0.0, 0.0, 0.0]);
            x[2 + rng.random_range(0..3usize)] = rng.random_range(0.0..=1.0);
            let c = grouped.coordinates();
            let x = x.map_with_location(|i, _, v| c.covariate(i, v));
            assert!((&m * x).norm() <= bound * (1.0 + 1e-12));
        }
        // the declaration is checked against the rows
        let err = boxed.one_hot(&["u", "a", "b"]).unwrap_err();
        assert!(err.to_string().contains("row 0"), "{err}");
    }

    /// The per-row bounds hold for random rows inside the box and random shapes: the
    /// sensitivity is never below a row's own shaped norm (the bound the noise is charged for).
    #[test]
    fn row_bounds_cover_every_row_in_the_box() {
        use rand::RngExt;
        let mut rng = crate::rng::chain_rng(5, 0);
        for kind in [GlmKind::Logistic, GlmKind::Poisson, GlmKind::Linear] {
            let base = data(kind);
            let d = base.dim();
            for _ in 0..200 {
                let theta: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
                let a = DMatrix::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
                let b = DMatrix::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
                let (bg, bh, _) = separate_bounds(&base, &theta, &a, &b);
                // one random row in the box
                let x = [
                    1.0,
                    rng.random_range(0.0..=1.0),
                    rng.random_range(-1.0..=2.0),
                ];
                let y = match kind {
                    GlmKind::Logistic => f64::from(rng.random_range(0..2u8)),
                    GlmKind::Poisson => f64::from(rng.random_range(0..=8u8)),
                    GlmKind::Linear => rng.random_range(-3.0..=3.0),
                };
                let one = base.with_one_row(&x, y);
                let mut g = vec![0.0; d];
                let mut h = DMatrix::zeros(d, d);
                one.sums(&theta, &mut g, &mut h);
                let ag = (&a * nalgebra::DVector::from_vec(g)).norm();
                let bhb = (&b * &h * b.transpose()).norm();
                assert!(ag <= bg, "{kind:?}: {ag} > {bg}");
                assert!(bhb <= bh, "{kind:?}: {bhb} > {bh}");
            }
        }
    }

    /// The information sums equal finite differences of the score sums.
    #[test]
    fn information_is_minus_the_score_jacobian() {
        for kind in [GlmKind::Logistic, GlmKind::Poisson, GlmKind::Linear] {
            let data = data(kind);
            let d = data.dim();
            let theta: Vec<f64> = (0..d).map(|i| 0.1 * i as f64 - 0.1).collect();
            let mut g0 = vec![0.0; d];
            let mut h = DMatrix::zeros(d, d);
            data.sums(&theta, &mut g0, &mut h);
            for i in 0..d {
                let mut t = theta.clone();
                t[i] += 1e-6;
                let mut g1 = vec![0.0; d];
                data.sums(&t, &mut g1, &mut DMatrix::zeros(d, d));
                for a in 0..d {
                    let fd = -(g1[a] - g0[a]) / 1e-6;
                    assert!(
                        (fd - h[(a, i)]).abs() < 1e-4 * (1.0 + fd.abs()),
                        "{kind:?} {a} {i}"
                    );
                }
            }
        }
    }
}
