//! The Fourier (FFT) accountant of Koskela, Jälkö & Honkela (2020) for the subsampled Gaussian,
//! as the thesis used it (fourier-accountant 0.12.11, `get_delta_S` with nx = 1e6, L = 20).
//!
//! # What is computed
//! The privacy loss distribution (PLD) ω of one step of the subsampled Gaussian is evaluated
//! on the grid x_j = −L + j·dx (dx = 2L/nx), its halves are swapped, and its FFT F is taken
//! (the single-step spectrum, cached per (σ, q) in a [`FourierPld`]). k steps compose to
//! F^k (heterogeneous compositions multiply the powers), and
//! δ(ε) = dx Σ_{x_j > ε} (1 − e^{ε − x_j}) c_j with c = IFFT(F^k / dx) (THESIS-NOTES §9). Two pairs
//! (unit sensitivity, noise σ; KJH20 §5):
//! * [`FourierRelation::AddRemovePoisson`] (FA `get_delta_R`): P = (1−q)N(0,σ²) + qN(1,σ²)
//!   against Q = N(0,σ²), the remove direction of Poisson subsampling under add/remove.
//! * [`FourierRelation::SubstituteWithoutReplacement`] (FA `get_delta_S`): P = (1−q)N(0,σ²) +
//!   qN(1,σ²) against Q = (1−q)N(0,σ²) + qN(−1,σ²), substitution with subsampling without
//!   replacement. Here σ is the noise std ÷ the per-record bound: the two sampled components
//!   differ by 2 σ-units (THESIS-NOTES §7).
//!
//! # Approximation, not a bound
//! fourier-accountant 0.12.11 computes **no error bound**: the result is an approximation whose
//! discretisation and truncation (mass beyond ±L wraps around) errors are only controlled by
//! choosing nx and L large enough. For the thesis' operating point the values move by < 3e-14
//! under refinement (THESIS-NOTES §9), and δ_S has no visible bias; δ_R samples its density's
//! singularity at ln(1−q) only at grid points and loses ~1e-6 of mass. Check a result by
//! increasing [`FourierAccountant::nx`] / [`FourierAccountant::window`] if in doubt.
//!
//! # Agreement with the library
//! δ matches fourier-accountant 0.12.11 to ≤ 3e-14 absolute for k ≲ 1e3 (THESIS-NOTES §9) and to
//! ~1e-16·k beyond (the FFT's relative round-off of each F_m is amplified k-fold in F_m^k, in
//! the library as here: 1.1e-11 at k = 1e5); ε(δ) to ≤ 3e-6 (our δ at the library's ε is within
//! its Newton tolerance); the thesis' Algorithm 2 iteration counts exactly.
//!
//! # The thesis' call for the minibatch DP penalty
//! The thesis calls `get_delta_S(ε, sigma = √τ, q = b/n, ncomp = k)`. With the statistic
//! normalised to substitute sensitivity 1 this charges the accountant for sensitivity 2, which
//! is **conservative** (sound, THESIS-NOTES §7). Do not use σ = 2√τ (a "factor-2 fix"): that is
//! optimistic and breaks the privacy guarantee. [`SubsampledGaussian::minibatch_penalty`] makes
//! the thesis' call.
//!
//! # Speed
//! δ is evaluated as Σ_m U_m F_m^k (Parseval), where U is the inverse DFT of the δ(ε) weights
//! (cached for the last ε), so a new k costs one pass over the cached spectra (with negligible
//! frequencies skipped) instead of a PLD evaluation and two FFTs; [`FourierPld::max_steps`]
//! runs Algorithm 2 on top of that.

mod accountant;
mod adaptive;
mod compose;
mod grid;
mod relation;
mod spectrum;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};

pub use accountant::Fourier;
pub use adaptive::{
    AUTO_MAX_NX, AUTO_REFINEMENTS, CONVERGENCE_TOLERANCE, DELTA_ROUNDOFF, GridAnswer,
};
pub use relation::FourierRelation;
pub use spectrum::FourierPld;

use crate::error::{Error, Result, check};
use compose::Part;
use grid::Grid;

/// `steps` compositions of the Gaussian mechanism with noise `sigma`, subsampled with rate `q`.
///
/// `sigma` is the noise std ÷ the unit of the pair (FA convention, THESIS-NOTES §7): for the
/// substitute relation the sampled components sit at ±1, i.e. σ is relative to the per-record
/// bound and the substitute sensitivity is 2 σ-units. The fields are checked when used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubsampledGaussian {
    /// Noise std in units of the pair's shift (FA's `sigma`).
    pub sigma: f64,
    /// Sampling rate in (0, 1] (FA's `q`; 1 is invalid for the add/remove relation).
    pub q: f64,
    /// Number of compositions (≥ 1).
    pub steps: u64,
}

impl SubsampledGaussian {
    /// A validated part: `sigma` > 0, `q` in (0, 1], `steps` ≥ 1.
    ///
    /// ```
    /// # fn main() -> dp_mcmc::Result<()> {
    /// use dp_mcmc::accounting::fourier::SubsampledGaussian;
    /// let part = SubsampledGaussian::new(2.0, 0.01, 10_000)?;
    /// assert_eq!(part.steps, 10_000);
    /// assert!(SubsampledGaussian::new(2.0, 1.5, 10).is_err()); // q > 1
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(sigma: f64, q: f64, steps: u64) -> Result<Self> {
        let part = Self { sigma, q, steps };
        part.validate()?;
        Ok(part)
    }

    /// The thesis' call for `steps` iterations of the minibatch DP penalty with noise parameter
    /// `tau`, batch size `batch` and `n` data rows: σ = √τ, q = batch/n (THESIS-NOTES §7; use with
    /// [`FourierRelation::SubstituteWithoutReplacement`]). σ = √τ is conservative; σ = 2√τ would
    /// be optimistic and is deliberately not offered.
    ///
    /// ```
    /// # fn main() -> dp_mcmc::Result<()> {
    /// use dp_mcmc::accounting::fourier::SubsampledGaussian;
    /// let part = SubsampledGaussian::minibatch_penalty(0.7, 1000, 100_000, 828)?;
    /// assert_eq!(part.q, 0.01);
    /// assert!((part.sigma - 0.7_f64.sqrt()).abs() < 1e-15);
    /// assert!(SubsampledGaussian::minibatch_penalty(0.7, 1000, 500, 828).is_err()); // batch > n
    /// # Ok(())
    /// # }
    /// ```
    pub fn minibatch_penalty(tau: f64, batch: usize, n: usize, steps: u64) -> Result<Self> {
        check::positive("tau", tau)?;
        if batch == 0 || batch > n {
            return Err(Error::invalid(
                "batch",
                batch,
                format!("must lie in 1..=n (n = {n}); choose a batch size of at most n"),
            ));
        }
        Self::new(tau.sqrt(), batch as f64 / n as f64, steps)
    }

    fn validate(&self) -> Result<()> {
        check::positive("sigma", self.sigma)?;
        check::rate("q", self.q)?;
        spectrum::check_steps(self.steps)?;
        Ok(())
    }
}

/// The Fourier accountant (fourier-accountant 0.12.11) for one relation, with grid size `nx`
/// (default 1 000 000) and window L (default 20). Caches the FFT plans and the single-step
/// spectra (per (σ, q)); clones share the cache.
#[derive(Clone, Debug)]
pub struct FourierAccountant {
    relation: FourierRelation,
    nx: usize,
    l: f64,
    cache: Arc<Mutex<Cache>>,
}

#[derive(Debug, Default)]
struct Cache {
    grid: Option<Arc<Grid>>,
    plds: Vec<FourierPld>,
}

/// At most this many single-step spectra are kept (each holds 8·nx bytes).
const MAX_CACHED_PLDS: usize = 8;

impl FourierAccountant {
    /// FA's defaults: nx = 1e6, L = 20.
    pub const DEFAULT_NX: usize = 1_000_000;
    /// FA's default window L.
    pub const DEFAULT_WINDOW: f64 = 20.0;
    /// Largest window L accepted.
    pub const MAX_WINDOW: f64 = 1e4;
    /// Largest grid size accepted: 2^27 (about 2 GiB per complex spectrum).
    pub const MAX_NX: usize = 1 << 27;

    /// An accountant with FA's defaults (nx = 1e6, L = 20). Setters never fail; the methods
    /// validate (nx even and > 0, L finite and > 0).
    ///
    /// ```
    /// # fn main() -> dp_mcmc::Result<()> {
    /// use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
    /// // Thesis, easy-2d minibatch penalty: tau = 0.7, b = 1000, n = 1e5, 828 iterations at eps 4.
    /// let fa = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement);
    /// let part = SubsampledGaussian::minibatch_penalty(0.7, 1000, 100_000, 828)?;
    /// let delta = fa.delta(4.0, &[part])?;
    /// assert!((delta - 9.99024953599909e-07).abs() < 1e-12);
    /// // An odd grid size is refused when used:
    /// assert!(fa.clone().nx(999).delta(4.0, &[part]).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(relation: FourierRelation) -> Self {
        Self {
            relation,
            nx: Self::DEFAULT_NX,
            l: Self::DEFAULT_WINDOW,
            cache: Arc::default(),
        }
    }

    /// Sets the number of grid points nx (must be even, > 0 and at most [`Self::MAX_NX`];
    /// checked when used).
    pub fn nx(mut self, nx: usize) -> Self {
        self.nx = nx;
        self.cache = Arc::default();
        self
    }

    /// Sets the window L: the PLD is represented on [−L, L) (must be > 0 and at most
    /// [`Self::MAX_WINDOW`]).
    pub fn window(mut self, l: f64) -> Self {
        self.l = l;
        self.cache = Arc::default();
        self
    }

    /// The relation.
    pub fn relation(&self) -> FourierRelation {
        self.relation
    }

    /// The grid size nx.
    pub fn grid_size(&self) -> usize {
        self.nx
    }

    /// The window L.
    pub fn window_size(&self) -> f64 {
        self.l
    }

    fn check_grid(&self) -> Result<()> {
        if self.nx == 0 || !self.nx.is_multiple_of(2) {
            return Err(Error::invalid(
                "nx",
                self.nx,
                "must be even and > 0 (the half swap needs equal halves); use e.g. 1000000",
            ));
        }
        if self.nx > Self::MAX_NX {
            return Err(Error::invalid(
                "nx",
                self.nx,
                format!(
                    "at most {} grid points (each spectrum takes 16·nx bytes); use e.g. 1000000",
                    Self::MAX_NX
                ),
            ));
        }
        check::positive("window", self.l)?;
        if self.l > Self::MAX_WINDOW {
            return Err(Error::invalid(
                "window",
                self.l,
                "must be at most 10000 (the grid spacing 2L/nx grows with L); use e.g. 20",
            ));
        }
        Ok(())
    }

    fn check_part(&self, sigma: f64, q: f64) -> Result<()> {
        check::positive("sigma", sigma)?;
        check::rate("q", q)?;
        if self.relation == FourierRelation::AddRemovePoisson && q == 1.0 {
            return Err(Error::invalid(
                "q",
                q,
                "must be < 1 for the add/remove relation (ln(1 - q) = -inf); use the \
                 substitute relation or q < 1",
            ));
        }
        Ok(())
    }

    fn grid(&self) -> Result<Arc<Grid>> {
        self.check_grid()?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        Ok(Arc::clone(cache.grid.get_or_insert_with(|| {
            Arc::new(Grid::new(self.nx, self.l))
        })))
    }

    /// The single-step spectrum for (`sigma`, `q`) under this accountant's relation, grid and
    /// window (computed once, then cached).
    ///
    /// ```
    /// # fn main() -> dp_mcmc::Result<()> {
    /// use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation};
    /// let fa = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement).nx(100_000);
    /// let pld = fa.pld(0.7_f64.sqrt(), 0.01)?;
    /// assert!((pld.mass() - 1.0).abs() < 1e-9);
    /// assert!(pld.delta(4.0, 828)? < 1e-6);
    /// assert!(fa.pld(-1.0, 0.01).is_err()); // sigma must be > 0
    /// # Ok(())
    /// # }
    /// ```
    pub fn pld(&self, sigma: f64, q: f64) -> Result<FourierPld> {
        self.check_part(sigma, q)?;
        let grid = self.grid()?;
        {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(p) = cache
                .plds
                .iter()
                .find(|p| p.sigma().to_bits() == sigma.to_bits() && p.q().to_bits() == q.to_bits())
            {
                return Ok(p.clone());
            }
        }
        let pld = FourierPld::build(self.relation, sigma, q, grid)?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.plds.len() >= MAX_CACHED_PLDS {
            cache.plds.remove(0);
        }
        cache.plds.push(pld.clone());
        Ok(pld)
    }

    /// FA's δ(ε) for the heterogeneous composition of `parts` (FA `get_delta_R/S` with array
    /// arguments; for one part exactly `get_delta_*(epsilon, sigma, q, steps, nx, L)`).
    /// An approximation without a rigorous error bound (see the module docs).
    ///
    /// Errors name the parameter: `epsilon` must be in (0, L), `parts` non-empty, each part
    /// valid (sigma > 0, q in (0, 1] and < 1 for add/remove, steps ≥ 1).
    pub fn delta(&self, epsilon: f64, parts: &[SubsampledGaussian]) -> Result<f64> {
        let grid = self.grid()?;
        spectrum::check_epsilon(epsilon, self.l)?;
        // The weight spectrum (one FFT) and the single-step spectra are independent.
        let (plds, _) = rayon::join(|| self.part_plds(parts), || grid.weights(epsilon));
        let plds = plds?;
        let parts: Vec<Part<'_>> = plds
            .iter()
            .map(|(p, k)| Part {
                pld: &p.inner,
                steps: *k as f64,
            })
            .collect();
        compose::delta(&grid, epsilon, &parts)
    }

    /// FA's ε(δ) (`get_epsilon_R/S`): Newton's iteration from ε = 0 on the composed PLD until
    /// |δ(ε) − `delta`| ≤ 1e-10 (S) / 1e-13 (R), as the library does, but also within 1e-4
    /// relative (FA's absolute rule is 10 % of δ at δ = 1e-9), with at most 200 iterations
    /// (an error instead of spinning forever), in real arithmetic, and a negative root reported
    /// as 0. δ(ε) is convex and decreasing, so Newton from 0 approaches the root from below;
    /// the ε found is then rounded up, pessimistically, until this accountant's own
    /// [`delta`](Self::delta) at it is at most `delta` (checked), unlike the library, whose ε
    /// can be below the root by about |δ − δ_t|/|δ'(ε)|.
    ///
    /// Errors: `delta` not in (0, 1), invalid parts, ε leaving [−L, L] (increase the window),
    /// no convergence.
    pub fn epsilon(&self, delta: f64, parts: &[SubsampledGaussian]) -> Result<f64> {
        check::delta("delta", delta)?;
        let plds = self.part_plds(parts)?;
        let grid = self.grid()?;
        let parts: Vec<Part<'_>> = plds
            .iter()
            .map(|(p, k)| Part {
                pld: &p.inner,
                steps: *k as f64,
            })
            .collect();
        let c = compose::composed_density(&grid, &parts)?;
        let mut eps = compose::newton_epsilon(
            &grid,
            &c,
            delta,
            compose::newton_tolerance(self.relation, delta),
        )?;
        // Checked with the accountant's own δ(ε) (`delta`): step ε up until it is within
        // the target, so the answer is never optimistic.
        let mut step = (eps * 1e-9).max(1e-12);
        for _ in 0..64 {
            if compose::delta(&grid, eps, &parts)? <= delta {
                return Ok(eps);
            }
            eps += step;
            step *= 2.0;
            spectrum::check_epsilon(eps, self.l)?;
        }
        Err(Error::Numerical {
            what: "Fourier accountant epsilon",
            reason: format!(
                "no epsilon with delta(epsilon) <= {delta:e} found above the Newton root; \
                 increase nx"
            ),
        })
    }

    /// Validates `parts` and merges parts with equal (σ, q).
    fn part_plds(&self, parts: &[SubsampledGaussian]) -> Result<Vec<(FourierPld, u64)>> {
        if parts.is_empty() {
            return Err(Error::invalid(
                "parts",
                "[]",
                "must contain at least one SubsampledGaussian",
            ));
        }
        self.check_grid()?;
        let mut merged: Vec<(f64, f64, u64)> = Vec::new();
        for p in parts {
            p.validate()?;
            self.check_part(p.sigma, p.q)?;
            match merged
                .iter_mut()
                .find(|(s, q, _)| s.to_bits() == p.sigma.to_bits() && q.to_bits() == p.q.to_bits())
            {
                Some(m) => {
                    m.2 = m.2.checked_add(p.steps).ok_or_else(|| {
                        Error::invalid("steps", p.steps, "the total number of steps overflows")
                    })?
                }
                None => merged.push((p.sigma, p.q, p.steps)),
            }
        }
        merged
            .into_iter()
            .map(|(s, q, k)| Ok((self.pld(s, q)?, k)))
            .collect()
    }
}
