//! Heterogeneous composition of single-step spectra: δ(ε) by Parseval against the weight
//! spectrum, and the composed density plus FA's Newton iteration for ε(δ).

use rayon::prelude::*;
use rustfft::num_complex::Complex;

use std::sync::Arc;

use super::grid::{CHUNK, Grid};
use super::relation::FourierRelation;
use crate::error::{Error, Result};

/// Terms |U_m F_m^k| below e^{-69} ≈ 1e-30 are skipped (at most nx/2 of them: < 1e-24 in δ).
const LN_NEGLIGIBLE: f64 = -69.0;

/// Newton's stopping rule |δ(ε) − δ_target| ≤ tol. FA (`compute_eps.py` of 0.12.x) uses the
/// absolute 1e-10 (S) / 1e-13 (R), which is loose for small targets (10 % of δ_target = 1e-9:
/// Newton approaches the root from below, so ε comes out too small). We additionally demand
/// 1e-4 relative accuracy (floored at 1e-14, the round-off level of δ); for δ_target ≥ 1e-6 (S)
/// or ≥ 1e-9 (R) this is FA's rule unchanged.
pub(super) fn newton_tolerance(relation: FourierRelation, target_delta: f64) -> f64 {
    let fa: f64 = match relation {
        FourierRelation::SubstituteWithoutReplacement => 1e-10,
        FourierRelation::AddRemovePoisson => 1e-13,
    };
    fa.min((1e-4 * target_delta).max(1e-14))
}

/// Cap on Newton iterations (FA has none and can spin forever at δ ≲ 1e-9).
pub(super) const MAX_NEWTON_ITERATIONS: usize = 200;

/// One step's spectrum, what a composition multiplies: `ln|F_m|` and `arg F_m` at each
/// frequency of the grid (computed in `spectrum.rs`, which owns its constructor).
pub(super) struct PldInner {
    pub(super) relation: FourierRelation,
    pub(super) sigma: f64,
    pub(super) q: f64,
    pub(super) grid: Arc<Grid>,
    pub(super) ln_abs: Vec<f64>,
    pub(super) arg: Vec<f64>,
    /// max_m ln|F_m| (for FA's overflow check of F^k).
    pub(super) max_ln_abs: f64,
}

/// One component of a heterogeneous composition: `steps` compositions of `pld`.
pub(super) struct Part<'a> {
    pub(super) pld: &'a PldInner,
    pub(super) steps: f64,
}

/// ln|Π F_i^{k_i}| and arg at frequency m.
#[inline]
fn log_power(parts: &[Part<'_>], m: usize) -> (f64, f64) {
    let (mut ln_r, mut phase) = (0.0, 0.0);
    for p in parts {
        ln_r += p.steps * p.pld.ln_abs[m];
        phase += p.steps * p.pld.arg[m];
    }
    (ln_r, phase)
}

/// FA's overflow check: `F**ncomp` must stay finite (it overflows only if the discretised
/// single-step mass exceeds 1 and k is large).
fn check_finite_power(parts: &[Part<'_>]) -> Result<()> {
    for p in parts {
        let worst = p.pld.max_ln_abs;
        if (p.steps * worst).exp().is_infinite() || worst.is_nan() {
            return Err(Error::Numerical {
                what: "Fourier accountant composition",
                reason: format!(
                    "|F|^k reached an infinite value (sigma = {}, q = {}, k = {}; the discretised \
                     PLD has mass {} > 1); increase nx or sigma",
                    p.pld.sigma,
                    p.pld.q,
                    p.steps,
                    p.pld.ln_abs[0].exp()
                ),
            });
        }
    }
    Ok(())
}

/// δ(ε) of the composition: Σ_m U_m Π_i F_{i,m}^{k_i} (real part; conjugate symmetry folds
/// m and nx − m). `epsilon` and the parts are validated by the caller.
pub(super) fn delta(grid: &Grid, epsilon: f64, parts: &[Part<'_>]) -> Result<f64> {
    check_finite_power(parts)?;
    let w = grid.weights(epsilon);
    let half = grid.half;
    let n_chunks = (half + 1).div_ceil(CHUNK);
    let partial: Vec<f64> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut acc = 0.0;
            for m in c * CHUNK..((c + 1) * CHUNK).min(half + 1) {
                let (ln_r, phase) = log_power(parts, m);
                if ln_r + w.ln_abs_u[m] < LN_NEGLIGIBLE {
                    continue;
                }
                let r = ln_r.exp();
                let (s, c) = phase.sin_cos();
                let u = w.u[m];
                let term = u.re * (r * c) - u.im * (r * s);
                acc += if m == 0 || m == half {
                    term
                } else {
                    2.0 * term
                };
            }
            acc
        })
        .collect();
    let d: f64 = partial.iter().sum();
    if d.is_finite() {
        Ok(d)
    } else {
        Err(Error::Numerical {
            what: "Fourier accountant delta",
            reason: "delta is not finite; increase sigma or the window".into(),
        })
    }
}

/// The composed PLD density c_j (original, un-swapped index) = IFFT(Π F_i^{k_i} / dx), real part.
pub(super) fn composed_density(grid: &Grid, parts: &[Part<'_>]) -> Result<Vec<f64>> {
    check_finite_power(parts)?;
    let (nx, half, dx) = (grid.nx, grid.half, grid.dx);
    let mut buf = vec![Complex::new(0.0, 0.0); nx];
    buf[..=half]
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (o, v) in chunk.iter_mut().enumerate() {
                let (ln_r, phase) = log_power(parts, c * CHUNK + o);
                *v = Complex::from_polar(ln_r.exp(), phase) / dx;
            }
        });
    for m in 1..half {
        buf[nx - m] = buf[m].conj();
    }
    grid.ifft_unnormalised(&mut buf);
    let inv_n = 1.0 / nx as f64;
    // Swap halves back: original j sits at swapped (j + half) mod nx.
    Ok((0..nx).map(|j| buf[(j + half) % nx].re * inv_n).collect())
}

/// FA's ε(δ) (THESIS-NOTES §9): Newton from ε₀ = 0 on δ(ε) = dx Σ_{j>j0(ε)} (1 − e^{ε−x_j}) c_j
/// with δ'(ε) = −dx Σ_{j>j0} e^{ε−x_j} c_j, stopping when |δ − δ_target| ≤ `tol`. Real arithmetic
/// (FA keeps round-off imaginary parts, which can keep its loop from stopping).
pub(super) fn newton_epsilon(grid: &Grid, c: &[f64], target_delta: f64, tol: f64) -> Result<f64> {
    let l = grid.l;
    let mut eps = 0.0_f64;
    for _ in 0..MAX_NEWTON_ITERATIONS {
        let (d, dd) = delta_and_slope(grid, c, eps)?;
        if (d - target_delta).abs() <= tol {
            // A negative root is reported as 0, where δ(0) is below the target.
            let (eps, d, dd) = if eps < 0.0 {
                let (d0, dd0) = delta_and_slope(grid, c, 0.0)?;
                (0.0, d0, dd0)
            } else {
                (eps, d, dd)
            };
            return round_up_epsilon(grid, c, target_delta, eps, d, dd);
        }
        if dd == 0.0 {
            return Err(out_of_window(l));
        }
        eps -= (d - target_delta) / dd;
        if !(-l..=l).contains(&eps) {
            return Err(out_of_window(l));
        }
    }
    Err(Error::Numerical {
        what: "Fourier accountant epsilon",
        reason: format!(
            "Newton's iteration did not reach |delta - target| <= {tol:e} in \
             {MAX_NEWTON_ITERATIONS} steps (target_delta = {target_delta:e}); use a larger \
             target_delta or increase nx"
        ),
    })
}

/// δ(ε) of the composed density `c` on the grid, and its derivative in ε.
fn delta_and_slope(grid: &Grid, c: &[f64], eps: f64) -> Result<(f64, f64)> {
    let first = (grid.start_index(eps) + 1).clamp(0, grid.nx as i64) as usize;
    let (mut sum, mut dsum) = (0.0, 0.0);
    for (j, &cj) in c.iter().enumerate().skip(first) {
        let e = (eps - grid.x(j)).exp();
        sum += (1.0 - e) * cj;
        dsum -= e * cj;
    }
    let (d, dd) = (sum * grid.dx, dsum * grid.dx);
    if !d.is_finite() || !dd.is_finite() {
        return Err(Error::Numerical {
            what: "Fourier accountant epsilon",
            reason: "delta reached a NaN/infinite value; sigma is probably too small, \
                     increase sigma"
                .into(),
        });
    }
    Ok((d, dd))
}

/// Pessimistic rounding of Newton's ε: Newton approaches the root of the convex, decreasing
/// δ(ε) from below, so its ε can have δ(ε) slightly above the target. Step ε up (each step
/// twice the last Newton correction) until δ(ε) ≤ target on the same grid sum, so the ε
/// returned is one whose δ is checked to be within the target.
fn round_up_epsilon(
    grid: &Grid,
    c: &[f64],
    target_delta: f64,
    mut eps: f64,
    mut d: f64,
    dd: f64,
) -> Result<f64> {
    let mut step = if dd < 0.0 {
        (d - target_delta) / -dd
    } else {
        0.0
    }
    .max(eps.abs() * 1e-12)
    .max(1e-15);
    for _ in 0..MAX_NEWTON_ITERATIONS {
        if d <= target_delta {
            return Ok(eps);
        }
        eps += step;
        step *= 2.0;
        if eps > grid.l {
            return Err(out_of_window(grid.l));
        }
        d = delta_and_slope(grid, c, eps)?.0;
    }
    Err(out_of_window(grid.l))
}

fn out_of_window(l: f64) -> Error {
    Error::Numerical {
        what: "Fourier accountant epsilon",
        reason: format!(
            "epsilon out of the [-L, L] window (L = {l}); increase the window L \
             (or check sigma: the privacy loss may not fit into the window)"
        ),
    }
}
