//! The eight experiments of Table 5.1 as named presets: data generators, models, exact
//! reference posteriors and chain start points (THESIS-NOTES §10).
//!
//! Seeds: the thesis' jax keys (THESIS-NOTES §14) are used as default seeds of [`chain_rng`]; the
//! streams differ from jax's (bit-exact reproduction is not a goal), the laws are the same.
//!
//! **Start points are not private.** The thesis' start-point spread `ν` comes from the exact
//! posterior of the (private) data; that is an experimental convenience outside any DP
//! guarantee (THESIS-NOTES §2). For a real release, pick `θ₀` from public knowledge.

use std::fmt;
use std::str::FromStr;

use rand::{Rng, RngExt};
use rand_distr::StandardNormal;

use crate::error::{Error, Result};
use crate::models::{
    BananaModel, BananaParams, BananaPosterior, CircleModel, ColumnData, GaussianModel,
    GaussianPosterior, Layout, Model, block_correlated_cov, generate_gaussian,
};
use crate::rng::chain_rng;

/// Default data seed of the banana-family experiments (thesis: jax key 43247).
pub const DATA_SEED_BANANA: u64 = 43247;
/// Default data seed of the correlated Gaussian (thesis: jax key 46283648).
pub const DATA_SEED_GAUSS: u64 = 46283648;
/// Default data seed of the circle (thesis: jax key 742983).
pub const DATA_SEED_CIRCLE: u64 = 742983;
/// Default seed of the banana reference sample (thesis: jax key 56437).
pub const REFERENCE_SEED_BANANA: u64 = 56437;
/// Default seed of the correlated-Gaussian reference sample (thesis: jax key 434927).
pub const REFERENCE_SEED_GAUSS: u64 = 434927;
/// Default seed of the start points; chain `i` uses stream `i` (thesis: jax key 4236482 + i).
pub const START_SEED: u64 = 4236482;
/// Size of the reference posterior sample (thesis: 1000 draws).
pub const REFERENCE_DRAWS: usize = 1000;

/// One row of Table 5.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Experiment {
    /// Flat banana, d = 2 (`easy-2d`).
    EasyBanana2d,
    /// Flat banana, d = 10 (`easy-10d`).
    EasyBanana10d,
    /// Tempered banana, d = 2 (`tempered-2d`).
    TemperedBanana2d,
    /// Tempered banana, d = 10 (`tempered-10d`).
    TemperedBanana10d,
    /// High-dimensional Gauss, d = 30: the banana model with a = 0 (`gauss-30d`).
    Gauss30d,
    /// Narrow banana, a = 350 (`hard-2d`).
    HardBanana2d,
    /// Correlated Gauss, Σ = [[1, .999], [.999, 1]] (`hard-gauss-2d`).
    HardGauss2d,
    /// Circle (`circle`).
    Circle,
}

impl Experiment {
    /// All eight experiments in Table 5.1 order.
    pub const ALL: [Experiment; 8] = [
        Experiment::EasyBanana2d,
        Experiment::EasyBanana10d,
        Experiment::TemperedBanana2d,
        Experiment::TemperedBanana10d,
        Experiment::Gauss30d,
        Experiment::HardBanana2d,
        Experiment::HardGauss2d,
        Experiment::Circle,
    ];

    /// The thesis code's key (`easy-2d`, …, `circle`).
    pub fn key(self) -> &'static str {
        match self {
            Experiment::EasyBanana2d => "easy-2d",
            Experiment::EasyBanana10d => "easy-10d",
            Experiment::TemperedBanana2d => "tempered-2d",
            Experiment::TemperedBanana10d => "tempered-10d",
            Experiment::Gauss30d => "gauss-30d",
            Experiment::HardBanana2d => "hard-2d",
            Experiment::HardGauss2d => "hard-gauss-2d",
            Experiment::Circle => "circle",
        }
    }

    /// The name in Table 5.1.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::EasyBanana2d => "Flat banana, d = 2",
            Experiment::EasyBanana10d => "Flat banana, d = 10",
            Experiment::TemperedBanana2d => "Tempered banana, d = 2",
            Experiment::TemperedBanana10d => "Tempered banana, d = 10",
            Experiment::Gauss30d => "High dimensional Gauss",
            Experiment::HardBanana2d => "Narrow banana",
            Experiment::HardGauss2d => "Correlated Gauss",
            Experiment::Circle => "Circle",
        }
    }

    /// Dimension `d`.
    pub fn dim(self) -> usize {
        match self {
            Experiment::EasyBanana10d | Experiment::TemperedBanana10d => 10,
            Experiment::Gauss30d => 30,
            _ => 2,
        }
    }

    /// Number of rows `n`.
    pub fn n(self) -> usize {
        match self {
            Experiment::EasyBanana2d | Experiment::TemperedBanana2d | Experiment::Circle => 100_000,
            Experiment::HardBanana2d => 150_000,
            _ => 200_000,
        }
    }

    /// `n₀` of the tempered experiments (`T = n₀/n`), `None` for `T = 1`.
    pub fn n0(self) -> Option<usize> {
        match self {
            Experiment::TemperedBanana2d | Experiment::TemperedBanana10d => Some(1000),
            _ => None,
        }
    }

    /// Tempering `T = n₀/n` (1 without `n₀`).
    pub fn tempering(self) -> f64 {
        self.n0().map_or(1.0, |n0| n0 as f64 / self.n() as f64)
    }

    /// The model parameter `a` (banana curvature; circle scale 10⁻⁵; 0 for the Gaussians).
    pub fn a(self) -> f64 {
        match self {
            Experiment::Gauss30d | Experiment::HardGauss2d => 0.0,
            Experiment::HardBanana2d => 350.0,
            Experiment::Circle => CircleModel::THESIS_A,
            _ => 20.0,
        }
    }

    /// Prior variance `σ₀²` (`None`: the circle's flat prior).
    pub fn prior_var(self) -> Option<f64> {
        match self {
            Experiment::HardGauss2d => Some(100.0),
            Experiment::Circle => None,
            _ => Some(1000.0),
        }
    }

    /// The data-generating `θ = (0, 3, 0, …, 0)`; `None` for the circle (its data are radii).
    pub fn true_theta(self) -> Option<Vec<f64>> {
        if self == Experiment::Circle {
            return None;
        }
        let mut t = vec![0.0; self.dim()];
        t[1] = 3.0;
        Some(t)
    }

    /// Centre of the start points: the true `θ`, or `(0, 1)` for the circle.
    pub fn start_center(self) -> Vec<f64> {
        self.true_theta().unwrap_or_else(|| vec![0.0, 1.0])
    }

    /// The banana hyper-parameters of the banana-family experiments.
    pub fn banana_params(self) -> Option<BananaParams> {
        match self {
            Experiment::HardGauss2d | Experiment::Circle => None,
            _ => Some(BananaParams::thesis(self.dim(), self.a()).with_tempering(self.tempering())),
        }
    }

    /// Default data seed (the thesis' jax key of this experiment, THESIS-NOTES §14).
    pub fn default_data_seed(self) -> u64 {
        match self {
            Experiment::HardGauss2d => DATA_SEED_GAUSS,
            Experiment::Circle => DATA_SEED_CIRCLE,
            _ => DATA_SEED_BANANA,
        }
    }

    /// Default seed of the reference posterior sample (`None` for the circle).
    pub fn default_reference_seed(self) -> Option<u64> {
        match self {
            Experiment::HardGauss2d => Some(REFERENCE_SEED_GAUSS),
            Experiment::Circle => None,
            _ => Some(REFERENCE_SEED_BANANA),
        }
    }

    /// The experiment's `n` data rows drawn with `seed` (`n × d`; the circle: `n × 1` radii
    /// `r ~ N(3, 1)`).
    ///
    /// ```
    /// use dp_mcmc::models::Experiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = Experiment::EasyBanana2d.generate_data(1)?;
    /// assert_eq!((data.n_rows(), data.n_cols()), (100_000, 2));
    /// # Ok(()) }
    /// ```
    pub fn generate_data(self, seed: u64) -> Result<ColumnData> {
        let n = self.n();
        match self {
            Experiment::Circle => {
                ColumnData::from_columns(vec![CircleModel::generate_radii(n, seed)?])
            }
            Experiment::HardGauss2d => generate_gaussian(
                &self.start_center(),
                &block_correlated_cov(2, 0.999)?,
                n,
                seed,
            ),
            _ => {
                let p = self
                    .banana_params()
                    .expect("every other experiment is a banana");
                p.generate(&self.start_center(), n, seed)
            }
        }
    }

    /// The model on data drawn with the default seed.
    ///
    /// ```
    /// use dp_mcmc::models::{Experiment, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = Experiment::TemperedBanana2d.model()?;
    /// assert_eq!(model.tempering(), 0.01);
    /// let post = model.exact_posterior().expect("bananas have one");
    /// assert!((post.std()[0] - 0.14141994204496).abs() < 1e-12); // thesis code, THESIS-NOTES §16
    /// # Ok(()) }
    /// ```
    pub fn model(self) -> Result<ExperimentModel> {
        self.model_with_seed(self.default_data_seed())
    }

    /// The model on data drawn with `seed`.
    pub fn model_with_seed(self, seed: u64) -> Result<ExperimentModel> {
        self.model_from_data(self.generate_data(seed)?)
    }

    /// The experiment's model on user data (`n × d`; the circle: `n × 1` radii). The row count
    /// need not be the experiment's `n`; tempering stays `T = n₀/n` of Table 5.1.
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, Experiment};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let radii = ColumnData::from_columns(vec![vec![3.0, 2.0, 4.0]])?;
    /// assert!(Experiment::Circle.model_from_data(radii.clone()).is_ok());
    /// assert!(Experiment::EasyBanana2d.model_from_data(radii).is_err()); // 1 column, not 2
    /// # Ok(()) }
    /// ```
    pub fn model_from_data(self, data: ColumnData) -> Result<ExperimentModel> {
        let kind = match self {
            Experiment::Circle => {
                crate::error::check::len("circle data columns", data.n_cols(), 1)?;
                Kind::Circle(CircleModel::new(data.col(0), self.a())?)
            }
            Experiment::HardGauss2d => Kind::Gaussian(GaussianModel::new(
                data,
                block_correlated_cov(2, 0.999)?,
                100.0,
            )?),
            _ => Kind::Banana(BananaModel::new(
                data,
                self.banana_params()
                    .expect("every other experiment is a banana"),
            )?),
        };
        Ok(ExperimentModel {
            experiment: self,
            kind,
        })
    }
}

impl serde::Serialize for Experiment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

impl<'de> serde::Deserialize<'de> for Experiment {
    /// Deserialises from the key (`"easy-2d"`, …).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let key = String::deserialize(d)?;
        key.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Experiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for Experiment {
    type Err = Error;

    /// Parses a key (`easy-2d`, …); an unknown key's error lists the valid ones.
    ///
    /// ```
    /// use dp_mcmc::models::Experiment;
    /// assert_eq!("hard-gauss-2d".parse::<Experiment>().unwrap(), Experiment::HardGauss2d);
    /// let err = "easy-3d".parse::<Experiment>().unwrap_err().to_string();
    /// assert!(err.contains("easy-2d") && err.contains("circle"));
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        Experiment::ALL
            .into_iter()
            .find(|e| e.key() == s.trim())
            .ok_or_else(|| {
                let keys: Vec<&str> = Experiment::ALL.iter().map(|e| e.key()).collect();
                Error::invalid(
                    "experiment",
                    s,
                    format!("must be one of {}", keys.join(", ")),
                )
            })
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Banana(BananaModel),
    Gaussian(GaussianModel),
    Circle(CircleModel),
    BananaF32(BananaModel<f32>),
    GaussianF32(GaussianModel<f32>),
    CircleF32(CircleModel<f32>),
}

/// An experiment's model (cheap to clone: the data are shared), implementing [`Model`] by
/// delegation, with its reference posterior and start points.
#[derive(Clone, Debug)]
pub struct ExperimentModel {
    experiment: Experiment,
    kind: Kind,
}

impl ExperimentModel {
    /// The model inside.
    fn inner(&self) -> &dyn Model {
        match &self.kind {
            Kind::Banana(m) => m,
            Kind::Gaussian(m) => m,
            Kind::Circle(m) => m,
            Kind::BananaF32(m) => m,
            Kind::GaussianF32(m) => m,
            Kind::CircleF32(m) => m,
        }
    }
}

impl Model for ExperimentModel {
    super::forward::forward_model!(|s| s.inner());
}

/// An exact posterior: Theorem 13's banana or the closed-form Gaussian.
#[derive(Clone, Debug)]
pub enum ExactPosterior {
    /// Banana family (including `gauss-30d`, the banana with `a = 0`).
    Banana(BananaPosterior),
    /// Gaussian with known covariance.
    Gaussian(GaussianPosterior),
}

impl ExactPosterior {
    /// Posterior mean.
    pub fn mean(&self) -> Vec<f64> {
        match self {
            ExactPosterior::Banana(p) => p.mean(),
            ExactPosterior::Gaussian(p) => p.mean().to_vec(),
        }
    }

    /// Posterior standard deviations.
    pub fn std(&self) -> Vec<f64> {
        match self {
            ExactPosterior::Banana(p) => p.std(),
            ExactPosterior::Gaussian(p) => p.std(),
        }
    }

    /// `ln p(θ | x)` (normalised).
    ///
    /// # Errors
    /// `theta` of the wrong length.
    pub fn log_density(&self, theta: &[f64]) -> Result<f64> {
        match self {
            ExactPosterior::Banana(p) => p.log_density(theta),
            ExactPosterior::Gaussian(p) => p.log_density(theta),
        }
    }

    /// Exact draws from `rng`.
    pub fn sample<R: Rng + ?Sized>(&self, n_draws: usize, rng: &mut R) -> Vec<Vec<f64>> {
        match self {
            ExactPosterior::Banana(p) => p.sample(n_draws, rng),
            ExactPosterior::Gaussian(p) => p.sample(n_draws, rng),
        }
    }

    /// Exact draws from `chain_rng(seed, 0)`.
    pub fn sample_seeded(&self, n_draws: usize, seed: u64) -> Vec<Vec<f64>> {
        self.sample(n_draws, &mut chain_rng(seed, 0))
    }
}

impl ExperimentModel {
    /// Which experiment this is.
    pub fn experiment(&self) -> Experiment {
        self.experiment
    }

    /// The same experiment with its data stored in `layout` ([`Layout::F32`]: rounded to `f32`
    /// once, half the bytes per row, every term still computed in `f64`; see
    /// [`ColumnData::compact`]). The exact posterior and reference sample are then those of
    /// the rounded data. Storing in the current layout returns the model unchanged; an `f32`
    /// model cannot go back to `f64` (the rounding is done): an error says to rebuild it.
    ///
    /// ```
    /// use dp_mcmc::models::{Experiment, Layout, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = Experiment::EasyBanana2d.model()?;
    /// let compact = model.clone().with_layout(Layout::F32)?;
    /// assert_eq!((compact.layout(), compact.n_rows()), (Layout::F32, 100_000));
    /// let (m, c) = (model.reference_mean(), compact.reference_mean());
    /// assert!((m[1] - c[1]).abs() < 1e-6);
    /// assert!(compact.with_layout(Layout::F64).is_err()); // the rounding cannot be undone
    /// # Ok(()) }
    /// ```
    pub fn with_layout(self, layout: Layout) -> Result<Self> {
        if layout == self.layout() {
            return Ok(self);
        }
        let kind = match (&self.kind, layout) {
            (Kind::Banana(m), Layout::F32) => Kind::BananaF32(m.compact()?),
            (Kind::Gaussian(m), Layout::F32) => Kind::GaussianF32(m.compact()?),
            (Kind::Circle(m), Layout::F32) => Kind::CircleF32(m.compact()?),
            _ => {
                return Err(Error::invalid(
                    "layout",
                    layout,
                    "an f32 model cannot be stored as f64 (its data were rounded); build the \
                     model again (e.g. `Experiment::model`) for the f64 layout",
                ));
            }
        };
        Ok(Self {
            experiment: self.experiment,
            kind,
        })
    }

    /// [`with_layout`](Self::with_layout)`(Layout::F32)`: the compact layout.
    ///
    /// ```
    /// use dp_mcmc::models::{Experiment, Layout, Model};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// assert_eq!(Experiment::Circle.model()?.compact()?.layout(), Layout::F32);
    /// # Ok(()) }
    /// ```
    pub fn compact(self) -> Result<Self> {
        self.with_layout(Layout::F32)
    }

    /// The inner banana model (banana family in the `f64` layout only).
    pub fn as_banana(&self) -> Option<&BananaModel> {
        match &self.kind {
            Kind::Banana(m) => Some(m),
            _ => None,
        }
    }

    /// The inner Gaussian model (`hard-gauss-2d` in the `f64` layout only).
    pub fn as_gaussian(&self) -> Option<&GaussianModel> {
        match &self.kind {
            Kind::Gaussian(m) => Some(m),
            _ => None,
        }
    }

    /// The inner circle model (`circle` in the `f64` layout only).
    pub fn as_circle(&self) -> Option<&CircleModel> {
        match &self.kind {
            Kind::Circle(m) => Some(m),
            _ => None,
        }
    }

    /// The exact posterior of this model's data (`None` for the circle).
    pub fn exact_posterior(&self) -> Option<ExactPosterior> {
        match &self.kind {
            Kind::Banana(m) => Some(ExactPosterior::Banana(m.posterior())),
            Kind::BananaF32(m) => Some(ExactPosterior::Banana(m.posterior())),
            Kind::Gaussian(m) => Some(ExactPosterior::Gaussian(m.posterior().expect(
                "the model's covariance, prior variance and data were validated in `new`",
            ))),
            Kind::GaussianF32(m) => Some(ExactPosterior::Gaussian(m.posterior().expect(
                "the model's covariance, prior variance and data were validated in `new`",
            ))),
            Kind::Circle(_) | Kind::CircleF32(_) => None,
        }
    }

    /// `n_draws` exact posterior draws with `chain_rng(seed, 0)` (`None` for the circle).
    pub fn reference_sample(&self, n_draws: usize, seed: u64) -> Option<Vec<Vec<f64>>> {
        self.exact_posterior()
            .map(|p| p.sample_seeded(n_draws, seed))
    }

    /// The thesis' reference sample: [`REFERENCE_DRAWS`] draws with the default seed.
    ///
    /// ```
    /// use dp_mcmc::models::Experiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = Experiment::EasyBanana2d.model()?;
    /// assert_eq!(model.default_reference_sample().map(|s| s.len()), Some(1000));
    /// assert!(Experiment::Circle.model()?.default_reference_sample().is_none());
    /// # Ok(()) }
    /// ```
    pub fn default_reference_sample(&self) -> Option<Vec<Vec<f64>>> {
        let seed = self.experiment.default_reference_seed()?;
        self.reference_sample(REFERENCE_DRAWS, seed)
    }

    /// The exact posterior mean; `(0, 0)` for the circle (thesis §5.3).
    pub fn reference_mean(&self) -> Vec<f64> {
        self.exact_posterior()
            .map_or_else(|| vec![0.0; self.dim()], |p| p.mean())
    }

    /// The exact posterior standard deviations (`None` for the circle).
    pub fn reference_std(&self) -> Option<Vec<f64>> {
        self.exact_posterior().map(|p| p.std())
    }

    /// The start-point spread `ν`: the mean over coordinates of the (ddof 0) standard deviation
    /// of the default reference sample; 1 for the circle (THESIS-NOTES §10).
    pub fn start_spread(&self) -> f64 {
        match self.default_reference_sample() {
            None => 1.0,
            Some(s) => mean_sample_std(&s),
        }
    }

    /// Start point of chain `chain` (reproduction only, not private: see
    /// [`start_points`](Self::start_points)): `centre + ν z`, `z ~ N(0, I)` from
    /// `chain_rng(START_SEED, chain)` (centre: the true θ; the circle: `(0, 1)`).
    ///
    /// ```
    /// use dp_mcmc::models::Experiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let model = Experiment::Circle.model()?;
    /// let starts: Vec<Vec<f64>> = (0..20).map(|i| model.start_point(i)).collect();
    /// assert_eq!(starts[3].len(), 2);
    /// assert_ne!(starts[0], starts[1]);
    /// # Ok(()) }
    /// ```
    pub fn start_point(&self, chain: u64) -> Vec<f64> {
        self.start_point_with(chain, START_SEED, self.start_spread())
    }

    /// `centre + spread · z` with `z` from `chain_rng(seed, chain)`.
    pub fn start_point_with(&self, chain: u64, seed: u64, spread: f64) -> Vec<f64> {
        let mut rng = chain_rng(seed, chain);
        self.experiment
            .start_center()
            .into_iter()
            .map(|c| c + spread * rng.sample::<f64, _>(StandardNormal))
            .collect()
    }

    /// Start points of chains `0 .. num_chains` (the reference sample is drawn once).
    ///
    /// **Reproduction only: not private.** These are the thesis' starts: centred on the true
    /// θ, with a spread computed from the exact posterior of the data ([`start_spread`](Self::start_spread)).
    /// A run started here leaks through its start points; for a DP release give public start
    /// points (`.start(theta0)`, chosen without looking at the data).
    pub fn start_points(&self, num_chains: usize) -> Vec<Vec<f64>> {
        let spread = self.start_spread();
        (0..num_chains as u64)
            .map(|i| self.start_point_with(i, START_SEED, spread))
            .collect()
    }
}

/// Mean over coordinates of the ddof-0 standard deviation of `draws` (NaN if there are no
/// draws or the draws have different lengths).
pub fn mean_sample_std(draws: &[Vec<f64>]) -> f64 {
    let n = draws.len() as f64;
    let d = draws.first().map_or(0, Vec::len);
    if d == 0 || draws.iter().any(|x| x.len() != d) {
        return f64::NAN;
    }
    (0..d)
        .map(|i| {
            let m = draws.iter().map(|x| x[i]).sum::<f64>() / n;
            (draws.iter().map(|x| (x[i] - m).powi(2)).sum::<f64>() / n).sqrt()
        })
        .sum::<f64>()
        / d as f64
}
