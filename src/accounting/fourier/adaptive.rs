//! Answers on a grid that can give them: the accountant's own grid first (so every answer it
//! gives, e.g. the thesis' nx = 1e6, L = 20, is unchanged), then, only where that grid fails
//! numerically (the composed loss leaves the window, `|F|^k` overflows, Newton's iteration does
//! not converge), finer grids (nx doubled, L kept, at most [`AUTO_REFINEMENTS`] times and up to
//! [`AUTO_MAX_NX`] points); a δ query at an ε
//! outside the window widens the window first (nx scaled with it, so the step is kept).
//!
//! The Fourier accountant has no error bound, so an answer is **accepted only when it is
//! checked** (two guards, both needed, since an answer can be wrong and stable):
//!
//! 1. *converged*: the grid with twice the points (same window) gives a value within
//!    [`CONVERGENCE_TOLERANCE`] (relative) of it; the answering grid's value is returned, so
//!    every answer of the thesis' own grid is unchanged;
//! 2. *not below the truth*: it is at least the certified PLD accountant's **lower** bound for
//!    the same pair and query ([`CertifiedPld`](crate::accounting::CertifiedPld); for
//!    [`FourierRelation::AddRemovePoisson`] the maximum over the add and remove directions,
//!    since FA's `get_delta_R` covers only the remove direction and a user reads the answer as
//!    the mechanism's).
//!
//! A query that fails either guard is a typed error naming `--accountant pld` (certified). The
//! first grid that answers without converging is not enough: a composed loss that spills out of
//! the window can give a finite, stable-looking and optimistic value (σ = 0.8, q = 0.001,
//! k = 10⁵: ε = 2.42 on nx = 4·10⁶ where the truth is 2.91).

use super::{FourierAccountant, FourierRelation, SubsampledGaussian};
use crate::accounting::CertifiedPld;
use crate::accounting::certified::engine::loss::Loss;
use crate::error::{Error, Result};

/// The finest grid the automatic refinement tries: 2^22 points (about 4.2 million, 64 MiB per
/// complex spectrum, about a second per query on 2 cores).
pub const AUTO_MAX_NX: usize = 1 << 22;

/// At most this many refinements (nx doubled each time) after the accountant's own grid fails.
pub const AUTO_REFINEMENTS: u32 = 3;

/// Relative agreement of two successive grids (nx and 2·nx) for an answer to count as
/// converged.
pub const CONVERGENCE_TOLERANCE: f64 = 1e-3;

/// Absolute round-off allowance of a δ answer (FA's own round-off is about 1e-16 per composed
/// step): two δ within it agree, and a δ within it below the certified lower bound is answered
/// by the certified upper bound instead (never below the truth).
pub const DELTA_ROUNDOFF: f64 = 1e-12;

/// Which of ε(δ) or δ(ε) a guarded query asks for.
#[derive(Clone, Copy)]
enum Asked {
    Delta(f64),
    Epsilon(f64),
}

/// A Fourier accountant answer and the grid that gave it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridAnswer {
    /// δ(ε) or ε(δ).
    pub value: f64,
    /// Grid size nx that answered.
    pub nx: usize,
    /// Window L that answered.
    pub window: f64,
}

impl FourierAccountant {
    /// FA's δ(ε) ([`delta`](Self::delta)) on this accountant's grid, or, where that grid cannot
    /// answer, on the first refined or widened one that can (see the module docs of
    /// `fourier::adaptive`).
    ///
    /// # Errors
    /// Invalid parameters as [`delta`](Self::delta); a numerical failure on every grid tried.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
    /// let fa = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement);
    /// let part = SubsampledGaussian::minibatch_penalty(0.7, 1000, 100_000, 828)?;
    /// // the thesis' grid answers: the same value as `delta`
    /// let a = fa.delta_adaptive(4.0, &[part])?;
    /// assert_eq!((a.value, a.nx, a.window), (fa.delta(4.0, &[part])?, 1_000_000, 20.0));
    /// // ε = 30 lies outside L = 20: the window is widened (same step)
    /// let wide = fa.clone().nx(100_000).delta_adaptive(30.0, &[part])?;
    /// assert!(wide.window > 30.0 && wide.value < 1e-12);
    /// assert!(fa.delta_adaptive(-1.0, &[part]).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn delta_adaptive(&self, epsilon: f64, parts: &[SubsampledGaussian]) -> Result<GridAnswer> {
        self.check_grid()?;
        let mut start = self.clone();
        if epsilon.is_finite() && epsilon >= self.l && epsilon > 0.0 {
            // the smallest power-of-two widening that puts ε well inside the window
            let mut factor = 2usize;
            while self.l * factor as f64 <= 1.25 * epsilon && factor < 1 << 30 {
                factor *= 2;
            }
            let l = self.l * factor as f64;
            if l > Self::MAX_WINDOW || self.nx.saturating_mul(factor) > AUTO_MAX_NX {
                let v = self.delta(epsilon, parts)?;
                return self.guard(self.answer(v), parts, Asked::Delta(epsilon), |fa| {
                    fa.delta(epsilon, parts)
                });
            }
            start = FourierAccountant::new(self.relation)
                .nx(self.nx * factor)
                .window(l);
        }
        let query = |fa: &FourierAccountant| fa.delta(epsilon, parts);
        let answer = start.refine(query)?;
        start.guard(answer, parts, Asked::Delta(epsilon), query)
    }

    /// FA's ε(δ) ([`epsilon`](Self::epsilon), rounded up) on this accountant's grid, or, where
    /// that grid cannot answer, on the first refined one that can.
    ///
    /// # Errors
    /// Invalid parameters as [`epsilon`](Self::epsilon); a numerical failure on every grid
    /// tried.
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
    /// let fa = FourierAccountant::new(FourierRelation::AddRemovePoisson).nx(100_000);
    /// let part = SubsampledGaussian::new(2.0, 0.01, 1000)?;
    /// let a = fa.epsilon_adaptive(1e-5, &[part])?;
    /// assert_eq!((a.value, a.nx), (fa.epsilon(1e-5, &[part])?, 100_000));
    /// assert!(fa.epsilon_adaptive(2.0, &[part]).is_err()); // δ must be in (0, 1)
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn epsilon_adaptive(&self, delta: f64, parts: &[SubsampledGaussian]) -> Result<GridAnswer> {
        let query = |fa: &FourierAccountant| fa.epsilon(delta, parts);
        let answer = self.refine(query)?;
        self.guard(answer, parts, Asked::Epsilon(delta), query)
    }

    /// The two guards of the module docs on `answer`: convergence against the grid with twice
    /// the points, then the certified lower bound.
    fn guard(
        &self,
        answer: GridAnswer,
        parts: &[SubsampledGaussian],
        asked: Asked,
        query: impl Fn(&FourierAccountant) -> Result<f64>,
    ) -> Result<GridAnswer> {
        let what = match asked {
            Asked::Delta(e) => format!("δ(ε = {e})"),
            Asked::Epsilon(d) => format!("ε(δ = {d:e})"),
        };
        let refuse = |why: String| Error::Numerical {
            what: "Fourier accountant",
            reason: format!(
                "{what} = {} (nx = {}, L = {}) is not accepted: {why}; the Fourier accountant has \
                 no error bound: use the certified PLD accountant (`--accountant pld`, \
                 `CertifiedPld`) for this query",
                answer.value, answer.nx, answer.window
            ),
        };
        let finer = answer.nx.saturating_mul(2);
        let check = FourierAccountant::new(self.relation)
            .nx(finer)
            .window(answer.window);
        let second = query(&check)
            .map_err(|e| refuse(format!("the grid with nx = {finer} does not answer ({e})")))?;
        let scale = answer.value.abs().max(second.abs());
        let atol = match asked {
            Asked::Delta(_) => DELTA_ROUNDOFF,
            Asked::Epsilon(_) => 0.0,
        };
        if (second - answer.value).abs() > CONVERGENCE_TOLERANCE * scale + atol {
            return Err(refuse(format!(
                "not converged: nx = {finer} gives {second} (relative change above {CONVERGENCE_TOLERANCE})"
            )));
        }
        let mut value = answer.value;
        let certified = self.certified(parts, asked)?;
        if value < certified.lower {
            if certified.lower - value > atol {
                return Err(refuse(format!(
                    "it lies below the certified lower bound {} of the same query",
                    certified.lower
                )));
            }
            value = certified.upper;
        }
        Ok(GridAnswer { value, ..answer })
    }

    /// The certified PLD interval of the query on the same pairs (both directions for
    /// add/remove with Poisson subsampling).
    fn certified(
        &self,
        parts: &[SubsampledGaussian],
        asked: Asked,
    ) -> Result<crate::accounting::Interval> {
        let leaves = parts
            .iter()
            .map(|p| {
                let loss = match self.relation {
                    FourierRelation::AddRemovePoisson => Loss::PoissonRemove {
                        sigma: p.sigma,
                        q: p.q,
                    },
                    FourierRelation::SubstituteWithoutReplacement => Loss::Substitute {
                        sigma: p.sigma,
                        q: p.q,
                    },
                };
                (loss, p.steps)
            })
            .collect();
        let acc = CertifiedPld::of_leaves(leaves);
        match asked {
            Asked::Delta(e) => acc.delta_interval(e),
            Asked::Epsilon(d) => acc.epsilon_interval(d),
        }
    }

    fn answer(&self, value: f64) -> GridAnswer {
        GridAnswer {
            value,
            nx: self.nx,
            window: self.l,
        }
    }

    /// `query` on this grid, then on grids with nx doubled while it fails numerically.
    fn refine(&self, query: impl Fn(&FourierAccountant) -> Result<f64>) -> Result<GridAnswer> {
        let mut fa = self.clone();
        let mut refinements = 0;
        loop {
            let err = match query(&fa) {
                Ok(v) => return Ok(fa.answer(v)),
                Err(e @ Error::Numerical { .. }) => e,
                Err(e) => return Err(e),
            };
            let finer = fa.nx.saturating_mul(2);
            if refinements == AUTO_REFINEMENTS || finer > AUTO_MAX_NX {
                if refinements == 0 {
                    return Err(err);
                }
                return Err(Error::Numerical {
                    what: "Fourier accountant",
                    reason: format!(
                        "no grid answered: nx = {} to {} at L = {} ({err}); the Fourier \
                         accountant is an approximation without a certificate: use the PLD \
                         accountant (`--accountant pld`) for a certified interval",
                        self.nx, fa.nx, fa.l
                    ),
                });
            }
            refinements += 1;
            fa = FourierAccountant::new(fa.relation).nx(finer).window(fa.l);
        }
    }
}
