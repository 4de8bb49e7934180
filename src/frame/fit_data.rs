//! The data of `dp-mcmc fit`: a table (CSV, or parquet with the `cli` feature), a response
//! column, covariates and declared bounds become one of the fit models, after checks whose
//! errors name the column, the row (counted from 0, header excluded) and what to change.
//!
//! Declared bounds (`COL=LO:HI`) are **public** statements about every possible value of a
//! column (from a codebook, never from the data). A value outside its bounds is an error, or
//! with `clamp` is silently moved onto the nearest bound: how many values were clamped is
//! never reported (that count is a function of the data and would leak).
//!
//! ```
//! use dp_mcmc::frame::fit_data::{FitKind, FitSpec, prepare};
//! use dp_mcmc::models::Model;
//! use dp_mcmc::polars::prelude::*;
//! # fn main() -> dp_mcmc::Result<()> {
//! let df = df!("visits" => [0i64, 2, 1], "age" => [0.3, 0.9, 0.5], "id" => ["a", "b", "c"])?;
//! let mut spec = FitSpec::new(FitKind::Poisson, "visits");
//! // the covariates are named, never guessed from the cells' contents
//! assert!(prepare(&df, &spec).unwrap_err().to_string().contains("--features"));
//! spec.features = Some(vec!["age".into()]);
//! let model = prepare(&df, &spec)?;
//! assert_eq!(model.param_names(), ["intercept", "age"]);
//! spec.features = Some(vec!["age".into(), "id".into()]);
//! let err = prepare(&df, &spec).unwrap_err().to_string();
//! assert!(err.contains("`id`") && err.contains("row 0"), "{err}"); // "a" is not a number
//! # Ok(()) }
//! ```

use polars::prelude::*;

use super::data::numeric_columns;
use crate::error::{Error, Result, num};
use crate::models::{
    ColumnData, LinearRegression, LogisticModel, Model, PoissonRegression, ResponseSupport,
    check_param_names,
};

/// Which model `dp-mcmc fit` fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitKind {
    /// Logistic regression of a 0/1 response ([`LogisticModel`]).
    Logistic,
    /// Poisson regression of counts, log link ([`PoissonRegression`]).
    Poisson,
    /// Linear regression with Gaussian errors ([`LinearRegression`]).
    Linear,
    /// Mean and spread of one column ([`LinearRegression::gaussian_mean`]).
    GaussianMean,
}

impl FitKind {
    /// The kind named `s` (`logistic`, `poisson`, `linear`, `gaussian-mean`).
    ///
    /// ```
    /// use dp_mcmc::frame::fit_data::FitKind;
    /// assert_eq!(FitKind::parse("gaussian-mean").unwrap(), FitKind::GaussianMean);
    /// assert!(FitKind::parse("probit").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "logistic" => Ok(Self::Logistic),
            "poisson" => Ok(Self::Poisson),
            "linear" => Ok(Self::Linear),
            "gaussian-mean" => Ok(Self::GaussianMean),
            _ => Err(Error::invalid(
                "--model",
                s,
                "use logistic, poisson, linear or gaussian-mean",
            )),
        }
    }

    /// The name [`FitKind::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Logistic => "logistic",
            Self::Poisson => "poisson",
            Self::Linear => "linear",
            Self::GaussianMean => "gaussian-mean",
        }
    }
}

/// Declared bounds of one column: every possible value lies in `[lo, hi]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// Column name.
    pub column: String,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// Parses `COL=LO:HI,COL=LO:HI,…` (the `--bounds` flag).
///
/// ```
/// use dp_mcmc::frame::fit_data::parse_bounds;
/// let b = parse_bounds("age=18:99,dose=-1:1").unwrap();
/// assert_eq!((b[1].column.as_str(), b[1].lo, b[1].hi), ("dose", -1.0, 1.0));
/// assert!(parse_bounds("age=99:18").is_err()); // lo > hi
/// assert!(parse_bounds("age=18").is_err());
/// ```
pub fn parse_bounds(s: &str) -> Result<Vec<Bound>> {
    let bad = |item: &str, why: &str| {
        Error::invalid(
            "--bounds",
            item,
            format!("{why}; write COL=LO:HI for each column, separated by commas (e.g. age=18:99)"),
        )
    };
    let mut out: Vec<Bound> = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (col, range) = item.split_once('=').ok_or_else(|| bad(item, "no `=`"))?;
        let (lo, hi) = range.split_once(':').ok_or_else(|| bad(item, "no `:`"))?;
        let parse = |v: &str| v.trim().parse::<f64>().ok().filter(|x| x.is_finite());
        let (Some(lo), Some(hi)) = (parse(lo), parse(hi)) else {
            return Err(bad(item, "LO and HI must be finite numbers"));
        };
        if lo > hi {
            return Err(bad(item, "LO must not exceed HI"));
        }
        let column = col.trim().to_string();
        if column.is_empty() || out.iter().any(|b| b.column == column) {
            return Err(bad(item, "the column name is empty or given twice"));
        }
        out.push(Bound { column, lo, hi });
    }
    Ok(out)
}

/// What to fit: the model, the columns, the declared bounds, the prior.
#[derive(Clone, Debug)]
pub struct FitSpec {
    /// The model.
    pub kind: FitKind,
    /// The response column.
    pub response: String,
    /// Covariate columns (required for the regressions, none for `gaussian-mean`). They are
    /// named, never chosen from the cells' contents: which columns a default took would depend
    /// on the data (a column with one stray word would drop out) and leak it.
    pub features: Option<Vec<String>>,
    /// Declared bounds (response or covariates).
    pub bounds: Vec<Bound>,
    /// Clamp values outside their declared bounds instead of failing.
    pub clamp: bool,
    /// Prior standard deviation of every parameter in the model's units (`--prior-sd`).
    /// `None` (default): the noise-aware method takes its autoscaled prior, weakly informative
    /// in the internal coordinates of the declared bounds
    /// ([`Prior::Autoscaled`](crate::noise_aware::Prior::Autoscaled)); the DP-MCMC models
    /// take `N(0, 10)` on every parameter ([`DP_MCMC_PRIOR_SD`]).
    pub prior_sd: Option<f64>,
    /// The noise-aware method's autoscaled prior as `N(0, 2.5²)` on every coefficient
    /// ([`Prior::AutoscaledNormal`](crate::noise_aware::Prior::AutoscaledNormal), the logistic
    /// and Poisson default before the Cauchy) instead of the default (`--prior-normal`).
    pub prior_normal: bool,
    /// Groups of covariates declared one-hot (at most one non-zero per row; used by the
    /// noise-aware method, [`GlmData::one_hot`](crate::noise_aware::GlmData::one_hot)).
    pub one_hot: Vec<Vec<String>>,
    /// Covariates declared binary: every value 0 or the declared upper bound (used by the
    /// noise-aware method, [`GlmData::binary`](crate::noise_aware::GlmData::binary)).
    pub binary: Vec<String>,
    /// Map every covariate onto `[0, 1]` by its declared bounds, `(x − lo)/(hi − lo)` (a public
    /// transformation, fixed before the data are read): each coefficient is then the effect of
    /// the covariate's whole declared range, and the privacy analysis no longer depends on the
    /// units (a covariate declared `0:60` weighs as much as one declared `0:1`). Needs declared
    /// bounds on every covariate.
    pub scale_to_unit: bool,
}

impl FitSpec {
    /// The spec of `kind` on `response`, no covariates yet (set `features`), no bounds, the
    /// default prior.
    pub fn new(kind: FitKind, response: &str) -> Self {
        Self {
            kind,
            response: response.into(),
            features: None,
            bounds: Vec::new(),
            clamp: false,
            prior_sd: None,
            prior_normal: false,
            one_hot: Vec::new(),
            binary: Vec::new(),
            scale_to_unit: false,
        }
    }

    /// Adds the covariate `name` with its declared public bounds `[lo, hi]` (from a codebook,
    /// never from the data): the builder form of setting `features` and `bounds`.
    ///
    /// ```
    /// use dp_mcmc::frame::fit_data::{FitKind, FitSpec, prepare};
    /// use dp_mcmc::models::Model;
    /// use dp_mcmc::polars::prelude::*;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let df = df!("sick" => [0.0, 1.0, 1.0], "age" => [20.0, 80.0, 65.0], "dose" => [0.5, 2.0, 9.0])?;
    /// let spec = FitSpec::new(FitKind::Logistic, "sick")
    ///     .covariate("age", 18.0, 98.0)
    ///     .covariate("dose", 0.0, 4.0)
    ///     .clamped(true) // the dose 9 becomes 4
    ///     .scaled_to_unit(true); // age 20 becomes 0.025, dose 2 becomes 0.5
    /// let model = prepare(&df, &spec)?;
    /// assert_eq!(model.param_names(), ["intercept", "age", "dose"]);
    /// // the public Lipschitz bound of the scaled rows: ‖(1, 1, 1)‖
    /// assert!((model.public_lipschitz().unwrap() - 3f64.sqrt()).abs() < 1e-12);
    /// // without --clamp the out-of-range dose is an error naming the column and row
    /// let err = prepare(&df, &spec.clamped(false)).unwrap_err().to_string();
    /// assert!(err.contains("`dose`") && err.contains("row 2"), "{err}");
    /// # Ok(()) }
    /// ```
    pub fn covariate(mut self, name: &str, lo: f64, hi: f64) -> Self {
        self.features.get_or_insert_with(Vec::new).push(name.into());
        self.bounds.push(Bound {
            column: name.into(),
            lo,
            hi,
        });
        self
    }

    /// Checks what the spec declares before any data are read (the CLI calls it while it
    /// parses its flags): a prior sd that is not positive, bounds outside the supported range
    /// (values within ±10¹⁰⁰, a positive width of at least 10⁻¹⁰⁰: beyond, the internal
    /// coordinates and the prior lose precision), a Poisson response declared other than
    /// `0:K` with `K` a whole number ≥ 1 (a fractional cap would clamp counts to non-counts).
    ///
    /// ```
    /// use dp_mcmc::frame::fit_data::{FitKind, FitSpec, parse_bounds};
    /// let mut spec = FitSpec::new(FitKind::Poisson, "visits");
    /// spec.bounds = parse_bounds("visits=0:5.5")?;
    /// assert!(spec.validate().unwrap_err().to_string().contains("whole number"));
    /// spec.bounds = parse_bounds("visits=0:5,age=0:1e-300")?;
    /// assert!(spec.validate().unwrap_err().to_string().contains("`age`"));
    /// spec.bounds = parse_bounds("visits=0:5,age=18:99")?;
    /// spec.validate()?;
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As above, naming the flag and the column.
    pub fn validate(&self) -> Result<()> {
        if let Some(sd) = self.prior_sd {
            crate::error::check::positive("--prior-sd", sd)?;
            if self.prior_normal {
                return Err(Error::invalid(
                    "--prior-normal",
                    "with --prior-sd",
                    "give --prior-sd (a normal prior in the model's units) or --prior-normal \
                     (a normal prior in the coordinates of the declared bounds), not both",
                ));
            }
        }
        const LIMIT: f64 = 1e100;
        for b in &self.bounds {
            let width = b.hi - b.lo;
            let magnitude = b.lo.abs().max(b.hi.abs());
            if magnitude > LIMIT || !width.is_finite() || (width > 0.0 && width < 1.0 / LIMIT) {
                return Err(Error::invalid(
                    "--bounds",
                    format!("{}={}:{}", b.column, num(b.lo), num(b.hi)),
                    format!(
                        "the declared bounds of `{}` are outside the supported range (values \
                         within ±1e100, a width of 0 or at least 1e-100): give the column in \
                         other units",
                        b.column
                    ),
                ));
            }
        }
        if self.kind == FitKind::Poisson
            && let Some(b) = self.bounds.iter().find(|b| b.column == self.response)
            && !(b.lo == 0.0 && b.hi >= 1.0 && b.hi.fract() == 0.0)
        {
            return Err(Error::invalid(
                "--bounds",
                format!("{}={}:{}", b.column, num(b.lo), num(b.hi)),
                "declare a Poisson response as 0:K with K a whole number ≥ 1 (the cap on the \
                 counts; with --clamp larger counts become K)",
            ));
        }
        Ok(())
    }

    /// The covariates: [`features`](Self::features) as named, or else the columns the
    /// declared bounds name besides the response, in the order given (`None` if neither
    /// names any; `gaussian-mean` has none).
    ///
    /// ```
    /// use dp_mcmc::frame::fit_data::{FitKind, FitSpec, parse_bounds};
    /// let mut spec = FitSpec::new(FitKind::Logistic, "sick");
    /// assert_eq!(spec.covariates(), None);
    /// spec.bounds = parse_bounds("age=18:99,sick=0:1,dose=0:4")?;
    /// assert_eq!(spec.covariates().unwrap(), ["age", "dose"]);
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn covariates(&self) -> Option<Vec<String>> {
        if self.kind == FitKind::GaussianMean {
            return self.features.clone().or_else(|| Some(Vec::new()));
        }
        self.features.clone().or_else(|| {
            let named: Vec<String> = self
                .bounds
                .iter()
                .filter(|b| b.column != self.response)
                .map(|b| b.column.clone())
                .collect();
            (!named.is_empty()).then_some(named)
        })
    }

    /// Sets [`clamp`](Self::clamp): values outside their declared bounds are clamped onto
    /// them instead of failing.
    pub fn clamped(mut self, clamp: bool) -> Self {
        self.clamp = clamp;
        self
    }

    /// Sets [`scale_to_unit`](Self::scale_to_unit): covariates mapped onto `[0, 1]` by their
    /// declared bounds.
    pub fn scaled_to_unit(mut self, scale: bool) -> Self {
        self.scale_to_unit = scale;
        self
    }
}

/// Prior sd of every parameter of the DP-MCMC models when `--prior-sd` is not given (prior
/// variance 10, in the model's units).
pub const DP_MCMC_PRIOR_SD: f64 = 3.162_277_660_168_379_5; // √10

/// One of the fit models (logistic, Poisson or linear regression, Gaussian mean), ready for a
/// sampler: a shared pointer to the model, itself a [`Model`].
pub type FitModel = std::sync::Arc<dyn Model>;

/// The column names of `df`.
fn names(df: &DataFrame) -> Vec<String> {
    df.get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Column `name` as finite f64 values; errors name the column and the first bad row.
fn column(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let col = super::column_named(df, name).ok_or_else(|| {
        Error::InvalidData(format!(
            "no column `{name}`; the data have {}",
            names(df).join(", ")
        ))
    })?;
    if let Ok(text) = col.str() {
        // A numeric column with a stray word reads as text: name the first such row.
        if let Some((j, v)) = text
            .iter()
            .enumerate()
            .find(|(_, v)| v.is_some_and(|v| v.trim().parse::<f64>().is_err()))
        {
            return Err(Error::InvalidData(format!(
                "column `{name}` is not numeric: row {j} holds {:?}; fix that value or leave the column out",
                v.unwrap_or_default()
            )));
        }
    }
    let mut values = numeric_columns(df, &[name])?;
    Ok(values.pop().unwrap_or_default())
}

/// The response and covariates of `spec` from `df`, checked, clamped or checked against the
/// declared bounds, as the chosen model (regressions get an `intercept` column first; the
/// parameters are named `intercept`, the covariates, and `log_sigma` for linear models).
///
/// Errors (naming the column and, where one exists, the row): a missing column (the
/// available ones are listed), a non-numeric column, a null, NaN or infinite value, a
/// response that is not 0/1 (logistic) or not a count (poisson), a value outside its
/// declared bounds (unless `clamp`), bounds on a column that is not used, covariates for
/// `gaussian-mean`, or no covariate left for a regression.
///
/// Without `features` a regression is an error listing the columns (the covariates are
/// declared, as the bounds are, never inferred from the cells).
pub fn prepare(df: &DataFrame, spec: &FitSpec) -> Result<FitModel> {
    let Table {
        y,
        cols,
        box_bounds,
        features,
        names,
    } = checked_table(df, spec)?;
    let sd = spec.prior_sd.unwrap_or(DP_MCMC_PRIOR_SD);
    let prior_var = sd * sd;
    Ok(match spec.kind {
        FitKind::Logistic => {
            let m = LogisticModel::new(ColumnData::from_columns(cols)?, &y, prior_var)?
                .with_param_names(names)?;
            // The public Lipschitz bound needs a declared range for every covariate.
            if box_bounds.len() == features.len() + 1 {
                std::sync::Arc::new(m.with_public_feature_bounds(&box_bounds)?)
            } else {
                std::sync::Arc::new(m)
            }
        }
        FitKind::Poisson => std::sync::Arc::new(
            PoissonRegression::new(ColumnData::from_columns(cols)?, &y, prior_var)?
                .with_param_names(names)?,
        ),
        FitKind::Linear => std::sync::Arc::new(
            LinearRegression::new(ColumnData::from_columns(cols)?, &y, prior_var)?
                .with_param_names(names)?,
        ),
        FitKind::GaussianMean => {
            std::sync::Arc::new(LinearRegression::gaussian_mean(&y, prior_var)?)
        }
    })
}

/// The checked columns of a fit: the response, the covariates (an intercept column first)
/// with their declared ranges in the model's units (only the declared ones), the covariates'
/// and the parameters' names.
struct Table {
    y: Vec<f64>,
    cols: Vec<Vec<f64>>,
    box_bounds: Vec<DeclaredRange>,
    features: Vec<String>,
    /// The model's parameter names (`intercept`, the covariates, `log_sigma` for linear
    /// models; `mean`, `log_sigma` for the Gaussian mean), checked distinct.
    names: Vec<String>,
}

/// The checks of [`prepare`] (and of [`prepare_glm`]), in the order its docs give them, and
/// the columns they pass.
fn checked_table(df: &DataFrame, spec: &FitSpec) -> Result<Table> {
    spec.validate()?;
    let features: Vec<String> = match (&spec.covariates(), spec.kind) {
        (Some(f), FitKind::GaussianMean) if !f.is_empty() => {
            return Err(Error::invalid(
                "--features",
                f.join(","),
                "gaussian-mean has no covariates: leave --features out",
            ));
        }
        (_, FitKind::GaussianMean) => Vec::new(),
        (Some(f), _) => f.clone(),
        (None, _) => {
            let others: Vec<String> = names(df)
                .into_iter()
                .filter(|c| *c != spec.response)
                .collect();
            return Err(Error::invalid(
                "--features",
                "unset",
                format!(
                    "name the covariates, comma separated, or declare their --bounds (the \
                     columns besides the response: {}); they are not guessed from the cells, \
                     which would depend on the data",
                    others.join(",")
                ),
            ));
        }
    };
    if spec.kind != FitKind::GaussianMean && features.is_empty() {
        return Err(Error::InvalidData(format!(
            "no covariate column besides the response `{}`; name them with --features",
            spec.response
        )));
    }
    if let Some(f) = features.iter().find(|f| **f == spec.response) {
        return Err(Error::invalid(
            "--features",
            f,
            "the response cannot also be a covariate",
        ));
    }
    let used: Vec<&String> = std::iter::once(&spec.response).chain(&features).collect();
    // a named column the table lacks, before the bounds are matched to the columns
    if let Some(missing) = used.iter().find(|c| super::column_named(df, c).is_none()) {
        return Err(Error::InvalidData(format!(
            "no column `{missing}`; the data have {}",
            names(df).join(", ")
        )));
    }
    if let Some(b) = spec.bounds.iter().find(|b| !used.contains(&&b.column)) {
        return Err(Error::invalid(
            "--bounds",
            &b.column,
            "bounds name a column that is neither the response nor a covariate",
        ));
    }
    if df.height() == 0 {
        return Err(Error::InvalidData(
            "the data have no rows: a fit needs at least one".into(),
        ));
    }
    let y = bounded_column(df, spec, &spec.response)?;
    let mut cols = vec![vec![1.0; df.height()]];
    let mut box_bounds = vec![(1.0, 1.0)];
    for f in &features {
        let (x, declared) = covariate_column(df, spec, f)?;
        cols.push(x);
        box_bounds.extend(declared);
    }
    let support = match spec.kind {
        FitKind::Logistic => ResponseSupport::Binary,
        FitKind::Poisson => ResponseSupport::Counts,
        FitKind::Linear | FitKind::GaussianMean => ResponseSupport::Finite,
    };
    support.check(&y).map_err(|e| match e {
        Error::InvalidData(m) => Error::InvalidData(m.replacen(
            "y has",
            &format!("response column `{}` has", spec.response),
            1,
        )),
        other => other,
    })?;
    let mut names: Vec<String> = match spec.kind {
        FitKind::GaussianMean => vec!["mean".into()],
        _ => std::iter::once("intercept".to_string())
            .chain(features.iter().cloned())
            .collect(),
    };
    if matches!(spec.kind, FitKind::Linear | FitKind::GaussianMean) {
        names.push("log_sigma".into());
    }
    let dim = names.len();
    let names = check_param_names(names, dim)?;
    Ok(Table {
        y,
        cols,
        box_bounds,
        features,
        names,
    })
}

/// A covariate's declared `(lo, hi)` in the model's units.
type DeclaredRange = (f64, f64);

/// Column `name` of `df`, checked against its declared bounds (if any) or clamped onto them.
fn bounded_column(df: &DataFrame, spec: &FitSpec, name: &str) -> Result<Vec<f64>> {
    let mut v = column(df, name)?;
    if let Some(b) = spec.bounds.iter().find(|b| b.column == name) {
        apply_bound(&mut v, b, spec.clamp)?;
    }
    Ok(v)
}

/// Covariate `name` of `df` as the model sees it (bounded as [`bounded_column`], and mapped
/// onto `[0, 1]` when `spec.scale_to_unit`), with its declared range in the model's units
/// (`None` without declared bounds). Scaling without declared bounds, or with `lo = hi`, is
/// an error.
fn covariate_column(
    df: &DataFrame,
    spec: &FitSpec,
    name: &str,
) -> Result<(Vec<f64>, Option<DeclaredRange>)> {
    let mut x = bounded_column(df, spec, name)?;
    let declared = spec.bounds.iter().find(|b| b.column == name);
    if !spec.scale_to_unit {
        return Ok((x, declared.map(|b| (b.lo, b.hi))));
    }
    let b = match declared {
        Some(b) if b.hi > b.lo => b,
        _ => {
            return Err(Error::invalid(
                "--bounds",
                name,
                "scaling to [0, 1] needs declared bounds LO:HI with LO < HI on every covariate: \
                 add them, or leave --scale out",
            ));
        }
    };
    let width = b.hi - b.lo;
    for v in x.iter_mut() {
        *v = ((*v - b.lo) / width).clamp(0.0, 1.0);
    }
    Ok((x, Some((0.0, 1.0))))
}

/// Checks `v` against `b` (an error naming the column and row) or, with `clamp`, clamps it.
fn apply_bound(v: &mut [f64], b: &Bound, clamp: bool) -> Result<()> {
    if clamp {
        for x in v.iter_mut() {
            *x = x.clamp(b.lo, b.hi);
        }
        return Ok(());
    }
    if let Some(j) = v.iter().position(|x| !(b.lo..=b.hi).contains(x)) {
        return Err(Error::InvalidData(format!(
            "column `{}` has the value {} at row {j}, outside its declared bounds [{}, {}]; \
             widen the bounds, fix the value, or pass --clamp to clamp values to the bounds",
            b.column,
            v[j],
            num(b.lo),
            num(b.hi)
        )));
    }
    Ok(())
}

/// The table as the rows of a noise-aware fit ([`crate::noise_aware`]): the response and the
/// covariates of `spec` (an `intercept` first), every covariate with declared bounds, and the
/// response with declared bounds where the model needs them (Poisson: a cap `0:K`; linear and
/// `gaussian-mean`: both ends). Values outside their bounds are errors, or clamped with `clamp`.
///
/// ```
/// use dp_mcmc::frame::fit_data::{FitKind, FitSpec, parse_bounds, prepare_glm};
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("visits" => [0i64, 2, 9], "age" => [0.3, 0.9, 0.5])?;
/// let mut spec = FitSpec::new(FitKind::Poisson, "visits");
/// spec.features = Some(vec!["age".into()]);
/// // the method needs bounds: the error names the flag and the columns
/// let err = prepare_glm(&df, &spec).unwrap_err().to_string();
/// assert!(err.contains("--bounds") && err.contains("age"), "{err}");
/// spec.bounds = parse_bounds("visits=0:5,age=0:1")?;
/// spec.clamp = true; // 9 visits is clamped to the declared cap 5
/// assert_eq!(prepare_glm(&df, &spec)?.dim(), 2);
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`prepare`], and a covariate or (where needed) the response without declared bounds.
pub fn prepare_glm(df: &DataFrame, spec: &FitSpec) -> Result<crate::noise_aware::GlmData> {
    use crate::noise_aware::{GlmData, GlmKind};
    // the checks of `prepare` (columns, support, bounds) first
    let table = checked_table(df, spec)?;
    let bound_of = |name: &str| spec.bounds.iter().find(|b| b.column == name);
    let missing: Vec<&str> = table
        .features
        .iter()
        .map(String::as_str)
        .filter(|f| bound_of(f).is_none())
        .collect();
    let needs_response = spec.kind != FitKind::Logistic;
    let response_missing = needs_response && bound_of(&spec.response).is_none();
    if !missing.is_empty() || response_missing {
        let mut cols: Vec<&str> = missing;
        if response_missing {
            cols.insert(0, &spec.response);
        }
        return Err(Error::invalid(
            "--bounds",
            cols.join(","),
            format!(
                "the noise-aware method needs declared public bounds (from a codebook, never \
                 from the data) on {}: add `--bounds {}` (Poisson: the response as 0:K, a cap \
                 on the counts; with --clamp larger counts are clamped to K), or use \
                 --method dp-mcmc",
                cols.join(", "),
                cols.iter()
                    .map(|c| format!("{c}=LO:HI"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ));
    }
    let n = table.y.len();
    let p = table.cols.len();
    let mut x = Vec::with_capacity(n * p);
    for j in 0..n {
        x.extend(table.cols.iter().map(|c| c[j]));
    }
    let kind = match spec.kind {
        FitKind::Logistic => GlmKind::Logistic,
        FitKind::Poisson => GlmKind::Poisson,
        FitKind::Linear | FitKind::GaussianMean => GlmKind::Linear,
    };
    let y_bounds = match bound_of(&spec.response) {
        Some(b) => (b.lo, b.hi),
        None => (0.0, 1.0),
    };
    let prior = match (spec.prior_sd, spec.prior_normal) {
        (Some(sd), _) => crate::noise_aware::Prior::Original { sd },
        (None, true) => crate::noise_aware::Prior::AutoscaledNormal {
            sd: crate::noise_aware::AUTOSCALED_SD,
        },
        (None, false) => crate::noise_aware::Prior::default(),
    };
    let mut data = GlmData::new(
        kind,
        x,
        table.y,
        table.box_bounds,
        y_bounds,
        1.0,
        table.names,
    )?
    .with_prior(prior)?;
    for group in &spec.one_hot {
        let names: Vec<&str> = group.iter().map(String::as_str).collect();
        data = data.one_hot(&names)?;
    }
    if !spec.binary.is_empty() {
        let names: Vec<&str> = spec.binary.iter().map(String::as_str).collect();
        data = data.binary(&names)?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn df() -> DataFrame {
        df!(
            "y" => [0.0, 1.0, 1.0, 0.0],
            "count" => [0i64, 3, 1, 7],
            "a" => [0.5, -0.5, 1.5, 0.0],
            "b" => [1i64, 2, 3, 4],
            "name" => ["p", "q", "r", "s"],
        )
        .unwrap()
    }

    fn err(spec: &FitSpec) -> String {
        prepare(&df(), spec).unwrap_err().to_string()
    }

    #[test]
    fn columns_and_names() {
        let mut s = FitSpec::new(FitKind::Logistic, "y");
        s.features = Some(vec!["a".into(), "b".into()]);
        let m = prepare(&df(), &s).unwrap();
        assert_eq!(m.param_names(), ["intercept", "a", "b"]);
        assert_eq!(m.public_lipschitz(), None); // no declared bounds
        // No default covariates: they are named.
        assert!(err(&FitSpec::new(FitKind::Linear, "a")).contains("--features"));
        let mut s = FitSpec::new(FitKind::Linear, "a");
        s.features = Some(vec!["y".into(), "count".into(), "b".into()]);
        let m = prepare(&df(), &s).unwrap();
        assert_eq!(
            m.param_names(),
            ["intercept", "y", "count", "b", "log_sigma"]
        );
        let m = prepare(&df(), &FitSpec::new(FitKind::GaussianMean, "a")).unwrap();
        assert_eq!(m.param_names(), ["mean", "log_sigma"]);
        assert_eq!(m.n_rows(), 4);
    }

    #[test]
    fn declared_bounds_give_the_public_bound_and_clamp_silently() {
        let mut s = FitSpec::new(FitKind::Logistic, "y");
        s.features = Some(vec!["a".into(), "b".into()]);
        s.bounds = parse_bounds("a=-2:2,b=0:4").unwrap();
        let m = prepare(&df(), &s).unwrap();
        let l = m.public_lipschitz().unwrap();
        assert!((l - 21f64.sqrt()).abs() < 1e-12, "{l}");
        s.bounds = parse_bounds("a=-1:1,b=0:4").unwrap();
        let e = err(&s);
        assert!(
            e.contains("`a`") && e.contains("row 2") && e.contains("--clamp"),
            "{e}"
        );
        s.clamp = true;
        let m = prepare(&df(), &s).unwrap();
        // a = 1.5 became 1: the row's log-likelihood at θ = (0, 1, 0) is that of η = 1.
        let want = 1.0 - (1.0 + 1f64.exp()).ln();
        assert!((m.log_lik_row(&[0.0, 1.0, 0.0], 2) - want).abs() < 1e-12);
        assert!((m.public_lipschitz().unwrap() - 18f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn bad_data_names_column_and_row() {
        let mut s = FitSpec::new(FitKind::Logistic, "count");
        s.features = Some(vec!["a".into()]);
        let e = err(&s);
        assert!(e.contains("`count`") && e.contains("row 1"), "{e}");
        let mut s = FitSpec::new(FitKind::Poisson, "a");
        s.features = Some(vec!["b".into()]);
        let e = err(&s);
        assert!(e.contains("`a`") && e.contains("row 0"), "{e}");
        s.features = Some(vec!["nope".into()]);
        let e = err(&s);
        assert!(e.contains("`nope`") && e.contains("count, a, b"), "{e}");
        s.features = Some(vec!["name".into()]);
        let e = err(&s);
        assert!(e.contains("`name`") && e.contains("row 0"), "{e}");
        s.features = Some(vec!["a".into()]);
        s.response = "a".into();
        assert!(err(&s).contains("response"));
        let mut s = FitSpec::new(FitKind::GaussianMean, "a");
        s.features = Some(vec!["b".into()]);
        assert!(err(&s).contains("--features"));
        let mut s = FitSpec::new(FitKind::Linear, "a");
        s.features = Some(vec!["b".into()]);
        s.bounds = parse_bounds("name=0:1").unwrap();
        assert!(err(&s).contains("--bounds"));
        // A numeric column with a stray word is reported by row, not silently dropped.
        let stray =
            df!("y" => [1.0, 2.0, 3.0], "z" => ["1", "x", "2"], "id" => ["a", "b", "c"]).unwrap();
        let mut s = FitSpec::new(FitKind::Linear, "y");
        s.features = Some(vec!["z".into()]);
        let e = prepare(&stray, &s).unwrap_err().to_string();
        assert!(e.contains("`z`") && e.contains("row 1"), "{e}");
        let nan = df!("y" => [1.0, f64::NAN], "x" => [1.0, 2.0]).unwrap();
        let mut s = FitSpec::new(FitKind::Linear, "y");
        s.features = Some(vec!["x".into()]);
        let e = prepare(&nan, &s).unwrap_err().to_string();
        assert!(e.contains("`y`") && e.contains("row 1"), "{e}");
    }
}
