//! One step's privacy loss distribution (PLD) of the subsampled Gaussian on the grid, its FFT
//! in polar form (the cached single-step spectrum), and δ(ε) / Algorithm 2 on top of it.

use std::f64::consts::PI;
use std::fmt;
use std::sync::Arc;

use rayon::prelude::*;
use rustfft::num_complex::Complex;

use super::compose::{self, Part, PldInner};
use super::grid::{CHUNK, Grid, par_map};
use super::relation::FourierRelation;
use crate::error::{Error, Result, check};

/// FA 0.12.11 refuses the S pair when c = q·e^{−1/(2σ²)} is "close to 0" (`numpy.allclose(c, 0)`,
/// i.e. |c| ≤ 1e-8): the inverse of the privacy loss is then evaluated with catastrophic
/// cancellation.
const MIN_C: f64 = 1e-8;

/// Largest k the max_steps search tries before giving up (δ(ε, k) never reached the target).
const MAX_SEARCH_STEPS: u64 = 1 << 40;

/// The single-step spectrum of the Fourier accountant for one (σ, q): the FFT F of the
/// discretised, half-swapped PLD density (times dx), stored in polar form ln|F_m|, arg F_m for
/// m = 0..=nx/2. Cheap to clone (shared). Made by [`FourierAccountant::pld`](super::FourierAccountant::pld).
///
/// δ after k steps is computed from F^k = |F|^k e^{ik arg F} (polar form, as CPython/numpy do
/// for exponents above 100) without an inverse FFT per k, see [`FourierPld::delta`].
#[derive(Clone)]
pub struct FourierPld {
    pub(super) inner: Arc<PldInner>,
}

impl fmt::Debug for FourierPld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FourierPld")
            .field("relation", &self.inner.relation)
            .field("sigma", &self.inner.sigma)
            .field("q", &self.inner.q)
            .field("nx", &self.inner.grid.nx)
            .field("window", &self.inner.grid.l)
            .field("mass", &self.mass())
            .finish()
    }
}

impl FourierPld {
    /// Evaluates the PLD density on the grid (KJH20 §5.1 for R, §5.2 for S; THESIS-NOTES §9), swaps
    /// halves, and takes the FFT. `sigma`, `q` are validated by the caller.
    pub(super) fn build(
        relation: FourierRelation,
        sigma: f64,
        q: f64,
        grid: Arc<Grid>,
    ) -> Result<Self> {
        let (nx, half, dx) = (grid.nx, grid.half, grid.dx);
        let density = Density::new(relation, sigma, q, &grid)?;
        let mut buf = vec![Complex::new(0.0, 0.0); nx];
        buf.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (o, v) in chunk.iter_mut().enumerate() {
                    let j = (c * CHUNK + o + half) % nx;
                    *v = Complex::new(density.at(j, &grid) * dx, 0.0);
                }
            });
        if let Some(bad) = buf.iter().position(|v| !v.re.is_finite()) {
            let j = (bad + half) % nx;
            return Err(Error::Numerical {
                what: "Fourier accountant PLD",
                reason: format!(
                    "the privacy-loss density is not finite at x = {} (sigma = {sigma}, q = {q}); \
                     increase sigma",
                    grid.x(j)
                ),
            });
        }
        grid.fft(&mut buf);
        buf.truncate(half + 1);
        let ln_abs = par_map(half + 1, |m| buf[m].norm().ln());
        let arg = par_map(half + 1, |m| buf[m].arg());
        let max_ln_abs = ln_abs.iter().fold(f64::NEG_INFINITY, |a: f64, &b| a.max(b));
        Ok(Self {
            inner: Arc::new(PldInner {
                relation,
                sigma,
                q,
                grid,
                ln_abs,
                arg,
                max_ln_abs,
            }),
        })
    }

    /// The relation (pair of distributions) of this PLD.
    pub fn relation(&self) -> FourierRelation {
        self.inner.relation
    }

    /// Noise σ (FA convention: noise std ÷ the per-record unit, see [`SubsampledGaussian`](super::SubsampledGaussian)).
    pub fn sigma(&self) -> f64 {
        self.inner.sigma
    }

    /// Sampling rate q.
    pub fn q(&self) -> f64 {
        self.inner.q
    }

    /// Total mass of the discretised single-step PLD, Σ_j f(x_j)·dx (= F_0). Should be 1: for R
    /// it is slightly below (the density's integrable singularity at ln(1−q) is sampled only at
    /// grid points; 0.99999922 for σ² = 0.7, q = 0.01), and far from 1 when the privacy loss
    /// does not fit into [−L, L].
    pub fn mass(&self) -> f64 {
        self.inner.ln_abs[0].exp()
    }

    /// FA's δ(ε) after `steps` compositions of this mechanism: `get_delta_R` / `get_delta_S`
    /// (fourier-accountant 0.12.11), i.e. dx Σ_{j > j0} (1 − e^{ε − x_j}) c_j with c the
    /// composed density IFFT(F^steps / dx) (THESIS-NOTES §9).
    ///
    /// Computed as Σ_m U_m F_m^steps with U the (cached) inverse DFT of the weights (Parseval;
    /// terms below 1e-30 in modulus are skipped). Agrees with the library to ~1e-13 absolute
    /// (≈ 1e-16·k for large k, see the module docs).
    /// This is an approximation without a rigorous error bound (see the module docs).
    ///
    /// Errors: `epsilon` not in (0, L) (increase the window), `steps` = 0, or |F|^steps
    /// overflowing (FA's "infinite value": the discretised PLD has mass > 1; increase nx or σ).
    pub fn delta(&self, epsilon: f64, steps: u64) -> Result<f64> {
        check_epsilon(epsilon, self.inner.grid.l)?;
        check_steps(steps)?;
        compose::delta(
            &self.inner.grid,
            epsilon,
            &[Part {
                pld: &self.inner,
                steps: steps as f64,
            }],
        )
    }

    /// Largest k with δ(ε, k) < `target_delta` (0 if already k = 1 fails): the answer of the
    /// thesis' Algorithm 2 for the minibatch DP penalty (THESIS-NOTES §5: low 0, high 1024,
    /// doubling while δ(high) < target, then bisection; the thesis passes ⌊x⌋ to FA).
    ///
    /// Like the thesis, this assumes δ(ε, k) is increasing in k (true for the exact PLD; FA's
    /// values have round-off ~1e-14, far below the ~1 % change per step near the target). Under
    /// that assumption Algorithm 2's real-valued bisection with floors returns the same integer
    /// as this integer search (doubling from 1024, then integer bisection), which needs the
    /// same ~10–25 δ evaluations, each now costing one pass over the cached spectra instead of
    /// a PLD evaluation plus two FFTs. Ties δ(k) = target (probability zero) are resolved
    /// pessimistically: k is returned only if δ(k) < target.
    ///
    /// Errors: `epsilon` not in (0, L), `target_delta` not in (0, 1), or δ staying below the
    /// target up to k = 2^40.
    pub fn max_steps(&self, epsilon: f64, target_delta: f64) -> Result<u64> {
        check_epsilon(epsilon, self.inner.grid.l)?;
        check::delta("target_delta", target_delta)?;
        let below = |k: u64| -> Result<bool> { Ok(self.delta(epsilon, k)? < target_delta) };
        let (mut lo, mut hi) = (0_u64, 1024_u64);
        while below(hi)? {
            lo = hi;
            hi = hi
                .checked_mul(2)
                .filter(|&h| h <= MAX_SEARCH_STEPS)
                .ok_or_else(|| Error::Numerical {
                    what: "Fourier accountant max_steps",
                    reason: format!(
                        "delta({epsilon}, k) stays below {target_delta} up to k = {lo}; \
                         epsilon is probably too close to the window L = {}, increase the window",
                        self.inner.grid.l
                    ),
                })?;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if below(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}

/// ε for δ(ε) must be finite, > 0 and inside the window (FA silently returns 0 for ε ≥ L).
pub(super) fn check_epsilon(epsilon: f64, l: f64) -> Result<f64> {
    check::positive("epsilon", epsilon)?;
    if epsilon >= l {
        return Err(Error::invalid(
            "epsilon",
            epsilon,
            format!("must lie inside the window (0, L = {l}); increase the window L"),
        ));
    }
    Ok(epsilon)
}

pub(super) fn check_steps(steps: u64) -> Result<u64> {
    if steps == 0 {
        Err(Error::invalid("steps", steps, "must be at least 1"))
    } else {
        Ok(steps)
    }
}

/// The PLD density ω(s) of one step on the grid (THESIS-NOTES §9), with FA's formulas and guards.
enum Density {
    /// P = (1−q)N(0,σ²) + qN(1,σ²) vs Q = N(0,σ²); zero for j ≤ i0 = ⌊nx(L + ln(1−q))/(2L)⌋.
    R { s2: f64, q: f64, first: usize },
    /// P = (1−q)N(0,σ²) + qN(1,σ²) vs Q = (1−q)N(0,σ²) + qN(−1,σ²); c = q e^{−1/(2σ²)}.
    S { s2: f64, q: f64, c: f64 },
}

impl Density {
    fn new(relation: FourierRelation, sigma: f64, q: f64, grid: &Grid) -> Result<Self> {
        let s2 = sigma * sigma;
        match relation {
            FourierRelation::AddRemovePoisson => {
                let i0 = grid.start_index((1.0 - q).ln());
                let first = (i0 + 1).clamp(0, grid.nx as i64) as usize;
                Ok(Density::R { s2, q, first })
            }
            FourierRelation::SubstituteWithoutReplacement => {
                let c = q * (-1.0 / (2.0 * s2)).exp();
                if c <= MIN_C {
                    return Err(Error::invalid(
                        "sigma",
                        sigma,
                        format!(
                            "too small for the substitute relation at q = {q}: \
                             c = q·exp(-1/(2 sigma²)) = {c:e} is below 1e-8 (the Fourier \
                             accountant cannot evaluate this PLD); increase sigma"
                        ),
                    ));
                }
                Ok(Density::S { s2, q, c })
            }
        }
    }

    /// ω(x_j) (original index j).
    #[inline]
    fn at(&self, j: usize, grid: &Grid) -> f64 {
        let x = grid.x(j);
        match *self {
            Density::R { s2, q, first } => {
                if j < first {
                    return 0.0;
                }
                let omq = 1.0 - q;
                let ey = x.exp();
                if ey <= omq {
                    // Only reachable through rounding at the start of the support.
                    return 0.0;
                }
                let t = s2 * ((ey - omq) / q).ln() + 0.5;
                let a = gaussian_mixture(t, s2, q);
                let dt = s2 * ey / (ey - omq);
                a * dt
            }
            Density::S { s2, q, c } => {
                let omq = 1.0 - q;
                let ey = x.exp();
                let one_m = 1.0 - ey;
                let sq = (omq * omq * (one_m * one_m) + 4.0 * (c * c) * ey).sqrt();
                let u = ((-omq * one_m + sq) / (2.0 * c)).max(1e-16);
                let t = s2 * u.ln();
                let nom1 = 4.0 * (c * c) * ey - 2.0 * (omq * omq) * ey * one_m;
                let nom2 = (nom1 / (2.0 * sq) + omq * ey) * (sq + omq * one_m);
                let dt = s2 * nom2 / (4.0 * (c * c) * ey);
                gaussian_mixture(t, s2, q) * dt
            }
        }
    }
}

/// Density of (1−q)N(0,σ²) + qN(1,σ²) at t.
#[inline]
fn gaussian_mixture(t: f64, s2: f64, q: f64) -> f64 {
    (1.0 / (2.0 * PI * s2).sqrt())
        * ((1.0 - q) * (-t * t / (2.0 * s2)).exp()
            + q * (-(t - 1.0) * (t - 1.0) / (2.0 * s2)).exp())
}
