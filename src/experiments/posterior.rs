//! Posterior densities of the 2-d experiments on a grid, with the chains' start points
//! (thesis Fig 5.1). Plot them with [`crate::plots::experiments::figure_5_1`].

use crate::error::{Error, Result, check};
use crate::models::{ExactPosterior, Experiment, ExperimentModel, Model};

/// The 2-d experiments of the thesis' Figure 5.1, in its order.
pub const FIGURE_5_1_EXPERIMENTS: [Experiment; 5] = [
    Experiment::EasyBanana2d,
    Experiment::HardBanana2d,
    Experiment::TemperedBanana2d,
    Experiment::Circle,
    Experiment::HardGauss2d,
];

/// A 2-d posterior density on a regular grid and the start points of the experiment's chains.
#[derive(Clone, Debug)]
pub struct PosteriorGrid {
    /// The experiment.
    pub experiment: Experiment,
    /// Grid abscissae (θ₀).
    pub x: Vec<f64>,
    /// Grid ordinates (θ₁).
    pub y: Vec<f64>,
    /// `density[i][j]`: the posterior density at `(x[j], y[i])` divided by its maximum on the grid.
    pub density: Vec<Vec<f64>>,
    /// The chains' start points (as the comparison grid uses them).
    pub starts: Vec<Vec<f64>>,
}

impl PosteriorGrid {
    /// The posterior of a 2-d `experiment` on a grid of `resolution` values per axis across its
    /// 1000-draw reference sample (10 % margin) and a quarter as many across the whole extent of
    /// it and the first `chains` start points (unevenly spaced: a narrow posterior far from the
    /// starts stays drawn); the circle,
    /// which has no exact sampler, uses its ring `‖θ‖ ≤ 4.5` instead of a reference sample. The
    /// density is exact (Theorem 13's banana, the closed-form Gaussian) or, for the circle, the
    /// flat-prior posterior from sufficient statistics.
    ///
    /// ```
    /// use dp_mcmc::experiments::PosteriorGrid;
    /// use dp_mcmc::models::Experiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let g = PosteriorGrid::new(Experiment::EasyBanana2d, 20, 40)?;
    /// assert!((40..=50).contains(&g.x.len()) && (40..=50).contains(&g.y.len()));
    /// assert_eq!(g.starts.len(), 20);
    /// let max = g.density.iter().flatten().cloned().fold(0.0, f64::max);
    /// assert!((max - 1.0).abs() < 1e-12);
    /// assert!(PosteriorGrid::new(Experiment::EasyBanana10d, 20, 40).is_err()); // not 2-d
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A target that is not 2-d, `resolution < 2`, or a model that cannot be built.
    pub fn new(experiment: Experiment, chains: usize, resolution: usize) -> Result<Self> {
        if experiment.dim() != 2 {
            return Err(Error::invalid(
                "experiment",
                experiment,
                "Figure 5.1 draws 2-d posteriors; use easy-2d, hard-2d, tempered-2d, circle or hard-gauss-2d",
            ));
        }
        let model = experiment.model()?;
        let starts = model.start_points(chains);
        PosteriorGrid::for_model(&model, starts, resolution)
    }

    /// [`PosteriorGrid::new`] on an already built 2-d experiment model, with the given start
    /// points (the grid covers them).
    ///
    /// # Errors
    /// A model that is not 2-d, `resolution < 2`.
    pub fn for_model(
        model: &ExperimentModel,
        starts: Vec<Vec<f64>>,
        resolution: usize,
    ) -> Result<Self> {
        let experiment = model.experiment();
        check::len("model dimension", model.dim(), 2)?;
        if resolution < 2 {
            return Err(Error::invalid(
                "resolution",
                resolution,
                "the grid needs at least 2 points per axis",
            ));
        }
        let posterior: Vec<Vec<f64>> = model.default_reference_sample().unwrap_or_else(|| {
            vec![vec![-4.5, -4.5], vec![4.5, 4.5]] // the circle's ring, radius ≈ 3
        });
        let mut points = posterior.clone();
        points.extend(starts.iter().cloned());
        // `resolution` values across the posterior and a quarter as many out to the starts: a
        // narrow posterior far from its chains' starts stays drawn (plotly's contours take an
        // unevenly spaced grid)
        let axis_k = |k: usize| {
            let mut v = axis(&posterior, k, resolution);
            v.extend(axis(&points, k, resolution.div_ceil(4).max(2)));
            v.sort_by(f64::total_cmp);
            v.dedup();
            v
        };
        let (x, y) = (axis_k(0), axis_k(1));
        let exact = model.exact_posterior(); // once: it reduces the data to sufficient statistics
        let log_density =
            |theta: &[f64]| -> Result<f64> { log_posterior(model, exact.as_ref(), theta) };
        let mut log_p = Vec::with_capacity(y.len());
        for &yi in &y {
            let row: Result<Vec<f64>> = x.iter().map(|&xj| log_density(&[xj, yi])).collect();
            log_p.push(row?);
        }
        let max = log_p
            .iter()
            .flatten()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max);
        check::all_finite("posterior log density maximum", &[max])?;
        let density = log_p
            .iter()
            .map(|row| row.iter().map(|l| (l - max).exp()).collect())
            .collect();
        Ok(PosteriorGrid {
            experiment,
            x,
            y,
            density,
            starts,
        })
    }

    /// [`PosteriorGrid::new`] for every experiment of Figure 5.1 (20 chains, as the thesis).
    ///
    /// # Errors
    /// As [`PosteriorGrid::new`].
    pub fn figure_5_1(resolution: usize) -> Result<Vec<PosteriorGrid>> {
        FIGURE_5_1_EXPERIMENTS
            .iter()
            .map(|&e| PosteriorGrid::new(e, 20, resolution))
            .collect()
    }
}

/// `resolution` equally spaced values covering coordinate `k` of `points` with a 10 % margin.
fn axis(points: &[Vec<f64>], k: usize, resolution: usize) -> Vec<f64> {
    let lo = points.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p[k])
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = 0.1 * (hi - lo).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    (0..resolution)
        .map(|i| lo + (hi - lo) * i as f64 / (resolution - 1) as f64)
        .collect()
}

/// The log posterior (up to a constant): exact where the experiment has an exact posterior,
/// the circle's flat-prior posterior from sufficient statistics otherwise.
fn log_posterior(
    model: &ExperimentModel,
    exact: Option<&ExactPosterior>,
    theta: &[f64],
) -> Result<f64> {
    if let Some(post) = exact {
        return post.log_density(theta);
    }
    match model.as_circle() {
        Some(c) => Ok(model.log_prior(theta) + model.tempering() * c.log_lik_sum(theta)),
        None => Err(Error::Model(format!(
            "{}: no exact posterior density to draw",
            model.experiment()
        ))),
    }
}

/// One DP HMC trajectory on the circle (thesis Fig 4.1: the circle's tuned DP HMC with
/// `L = 48`, started at `(0, 1)`), with the circle posterior behind it.
#[derive(Clone, Debug)]
pub struct HmcTrajectory {
    /// The leapfrog positions, start first (`L + 1` points).
    pub path: Vec<Vec<f64>>,
    /// The circle posterior on a grid covering the path.
    pub posterior: PosteriorGrid,
    /// Iterations run before the drawn trajectory.
    pub warmup: usize,
}

impl HmcTrajectory {
    /// Run `warmup` DP HMC iterations on the circle from `(0, 1)` with `chain_rng(seed, 0)`,
    /// then record the next proposal's leapfrog trajectory (the thesis used seed 46327).
    ///
    /// ```
    /// use dp_mcmc::experiments::HmcTrajectory;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let t = HmcTrajectory::circle(46327, 5, 40)?;
    /// assert_eq!(t.path.len(), 49);
    /// assert!(t.path.iter().all(|p| p.iter().all(|v| v.is_finite())));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// `resolution < 2`, or the circle model cannot be built.
    pub fn circle(seed: u64, warmup: usize, resolution: usize) -> Result<HmcTrajectory> {
        use crate::samplers::{DpHmc, Kernel, SamplerKind};
        let model = Experiment::Circle.model()?;
        let tuned = crate::experiments::tuned(Experiment::Circle, SamplerKind::DpHmc)?;
        let mut hmc = tuned
            .as_any()
            .downcast_ref::<DpHmc>()
            .cloned()
            .ok_or_else(|| Error::Model("the tuned circle DP HMC is not a DP HMC".into()))?;
        hmc.leapfrog_steps = 48;
        let kernel = hmc.kernel(&model)?;
        let mut rng = crate::rng::chain_rng(seed, 0);
        let mut state = kernel.init(&model, &[0.0, 1.0], &mut rng)?;
        for _ in 0..warmup {
            kernel.step(&model, &mut state, &mut rng);
        }
        let path = kernel.trajectory(&model, &mut state, &mut rng);
        let posterior = PosteriorGrid::for_model(&model, vec![path[0].clone()], resolution)?;
        Ok(HmcTrajectory {
            path,
            posterior,
            warmup,
        })
    }
}
