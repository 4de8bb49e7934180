//! The exact per-step Rényi divergence of the DP Barker test (`rdp-exact`), beside Theorem 7's
//! term-by-term bound (`rd_approx`, [`super::barker`]); derivation in `docs/ACCOUNTING.md`,
//! section "DP Barker: exact Rényi divergence over the feasible family".
//!
//! For a fixed batch the test releases `λ_B + N(0, C − σ_B²)` (the `V_corr` draw is
//! data-independent post-processing). With the kernel's clip `|r_j| ≤ c·√b/(nT)`, substituting
//! one row of the batch changes the mean `λ_B` by at most `2c/√b`, and the batch variance
//! `σ_B² ≤ c²` by at most `5c²/b` (the constants of Theorem 7's proof, with the clip factor
//! `c` = [`CLIP_FACTOR`]). The kernel rejects every step with `σ_B² > 1`, so the noise variance
//! lies in `[C − 1, C]` whatever the round-off. The feasible family is therefore
//! `{(N(μ₁, v₁), N(μ₂, v₂)) : |μ₁ − μ₂| ≤ 2c/√b, v₁, v₂ ∈ [C − 1, C], |v₁ − v₂| ≤ 5c²/b}`,
//! and its supremum of `D_α` (Gil, Alajaji and Linder 2013) is attained at the largest mean gap
//! with the smaller variance at `C − 1` and the other `5c²/b` above it, in the orientation that
//! gives the larger value ([`rd_exact`]; a dense grid search over the family checks it in the
//! tests).

use crate::error::{Error, Result, check};

/// DP Barker's total noise variance C (the kernel's `BARKER_NOISE_VAR`).
pub(crate) const NOISE_VAR: f64 = 2.0;
/// Clip factor c of the kernel: `|r_j| ≤ c·√b/(nT)` (the thesis code's 0.99).
pub(crate) const CLIP_FACTOR: f64 = 0.99;
/// Largest batch variance `σ_B²` the kernel lets through (`σ_B² ≤ 1`, else the step is
/// rejected), so the noise variance `C − σ_B²` is at least `C − 1`.
pub(crate) const MAX_BATCH_VAR: f64 = 1.0;
// the clip alone keeps σ_B² ≤ c² below the guard, so the guard rejects only round-off
const _: () = assert!(CLIP_FACTOR * CLIP_FACTOR < MAX_BATCH_VAR);
/// Relative margin added to the computed divergence (its f64 error is a few ulps).
const ROUND_UP: f64 = 1e-12;

/// The feasible family of one DP Barker step on a batch of `b` rows (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Family {
    /// Largest `|μ₁ − μ₂|`: `2c/√b`.
    pub mean_gap: f64,
    /// Smallest noise variance: `C − 1`.
    pub var_lo: f64,
    /// Largest noise variance: `C`.
    pub var_hi: f64,
    /// Largest `|v₁ − v₂|`: `5c²/b`.
    pub var_gap: f64,
}

impl Family {
    /// Max of `f(μ, v₁, v₂)` over a dense grid of the family, both orientations (tests):
    /// mean gap on 11 levels, `v₁` on `levels + 1` levels of `[C−1, C]`, `v₂ = v₁ + t·gap` for
    /// `2·steps + 1` values of `t ∈ [−1, 1]`.
    #[cfg(test)]
    pub(crate) fn grid_max(
        &self,
        levels: u32,
        steps: i32,
        f: impl Fn(f64, f64, f64) -> f64,
    ) -> f64 {
        let mut best = 0.0f64;
        for i in 0..=10 {
            let mu = self.mean_gap * f64::from(i) / 10.0;
            for j in 0..=levels {
                let v1 =
                    self.var_lo + (self.var_hi - self.var_lo) * f64::from(j) / f64::from(levels);
                for t in -steps..=steps {
                    let v2 = v1 + self.var_gap * f64::from(t) / f64::from(steps);
                    if (self.var_lo..=self.var_hi).contains(&v2) {
                        best = best.max(f(mu, v1, v2)).max(f(mu, v2, v1));
                    }
                }
            }
        }
        best
    }

    pub(crate) fn new(b: f64) -> Self {
        let c = CLIP_FACTOR;
        Family {
            mean_gap: 2.0 * c / b.sqrt(),
            var_lo: NOISE_VAR - MAX_BATCH_VAR,
            var_hi: NOISE_VAR,
            var_gap: 5.0 * c * c / b,
        }
    }
}

/// `D_α(N(μ, v₁) ‖ N(0, v₂))` for `α > 1` (Gil, Alajaji and Linder 2013):
/// `½ ln(v₂/v₁) + ln(v₂/v_α)/(2(α−1)) + αμ²/(2v_α)`, `v_α = αv₂ + (1−α)v₁`; `+∞` if `v_α ≤ 0`.
/// The logarithms go through `ln_1p`, as the variances differ by ~1/b.
pub(crate) fn gaussian_rd(alpha: f64, mu: f64, v1: f64, v2: f64) -> f64 {
    let d = v2 - v1;
    let va = v2 + (alpha - 1.0) * d;
    if va <= 0.0 {
        return f64::INFINITY;
    }
    0.5 * (d / v1).ln_1p() - ((alpha - 1.0) * d / v2).ln_1p() / (2.0 * (alpha - 1.0))
        + alpha * mu * mu / (2.0 * va)
}

/// The supremum of `D_α` over the family of batch size `b`, both orientations, rounded up.
pub(crate) fn rd_exact(alpha: f64, b: f64) -> f64 {
    let f = Family::new(b);
    let hi = (f.var_lo + f.var_gap).min(f.var_hi);
    let larger_first = gaussian_rd(alpha, f.mean_gap, hi, f.var_lo);
    let smaller_first = gaussian_rd(alpha, f.mean_gap, f.var_lo, hi);
    larger_first.max(smaller_first) * (1.0 + ROUND_UP)
}

/// The exact per-step Rényi divergence of order `alpha` of the DP Barker test with batch size
/// `batch_size` (before subsampling amplification): the supremum of the Gaussian Rényi
/// divergence over every pair of batches differing in one row (`rdp-exact`; Theorem 7's
/// `rd_approx` bounds the same quantity, [`barker_rd_approx`](super::barker_rd_approx)).
/// `+∞` at orders where some pair's divergence is infinite (`α ≥ 1 + b/(5c²)`).
///
/// # Errors
/// `alpha` finite and > 1; `batch_size` ≥ 1.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{barker_rd_approx, barker_rd_exact};
/// let exact = barker_rd_exact(2.0, 1300)?;
/// // about α(2c/√b)²/2 with c = 0.99: 100× below Theorem 7's 0.355
/// assert!(exact > 0.003 && exact < 0.0031);
/// assert!(exact < barker_rd_approx(2.0, 1300)? / 100.0);
/// assert!(barker_rd_exact(1.0, 1300).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn barker_rd_exact(alpha: f64, batch_size: u64) -> Result<f64> {
    check::at_least_one("batch_size", batch_size as usize)?;
    if !(alpha.is_finite() && alpha > 1.0) {
        return Err(Error::invalid("alpha", alpha, "must be finite and > 1"));
    }
    Ok(rd_exact(alpha, batch_size as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `D_α` by quadrature of `ln ∫ p₁^α p₂^{1−α} / (α−1)` (midpoint rule on ±60 std).
    fn rd_quadrature(alpha: f64, mu: f64, v1: f64, v2: f64) -> f64 {
        let ln_pdf = |x: f64, m: f64, v: f64| {
            -0.5 * (x - m) * (x - m) / v - 0.5 * (2.0 * std::f64::consts::PI * v).ln()
        };
        let (lo, hi, n) = (-60.0, 60.0, 200_000);
        let h = (hi - lo) / f64::from(n);
        let mut s = 0.0;
        for i in 0..n {
            let x = lo + (f64::from(i) + 0.5) * h;
            s += (alpha * ln_pdf(x, mu, v1) + (1.0 - alpha) * ln_pdf(x, 0.0, v2)).exp();
        }
        (s * h).ln() / (alpha - 1.0)
    }

    #[test]
    fn closed_form_matches_quadrature() {
        // the midpoint rule on a smooth, Gaussian-tailed integrand is accurate to ~1e-12 here
        for (a, mu, v1, v2) in [
            (2.0, 0.5, 1.0, 1.0),
            (3.0, 0.3, 1.5, 1.2),
            (5.0, 1.0, 1.0, 1.3),
            (1.5, 0.0, 2.0, 1.0),
        ] {
            let exact = gaussian_rd(a, mu, v1, v2);
            let quad = rd_quadrature(a, mu, v1, v2);
            assert!(
                (exact - quad).abs() < 1e-9,
                "{a} {mu} {v1} {v2}: {exact} vs {quad}"
            );
        }
        // v_α ≤ 0: the integral diverges
        assert_eq!(gaussian_rd(3.0, 0.1, 2.0, 1.0), f64::INFINITY);
    }

    #[test]
    fn equal_variances_give_the_gaussian_rdp() {
        for (a, mu, v) in [(2.0, 0.05, 1.0), (7.0, 0.3, 1.7), (40.0, 2.0, 2.0)] {
            let want = a * mu * mu / (2.0 * v);
            assert!((gaussian_rd(a, mu, v, v) - want).abs() <= 1e-15 * want);
        }
    }

    /// Max of `D_α` over a dense grid of the family, both orientations (201 × 81 variances).
    fn grid_max(alpha: f64, b: f64) -> f64 {
        Family::new(b).grid_max(200, 40, |mu, v1, v2| gaussian_rd(alpha, mu, v1, v2))
    }

    #[test]
    fn supremum_is_the_grid_maximum() {
        // the grid contains the claimed maximiser (corner points), so the two agree up to the
        // 1e-12 round-up; a larger grid value anywhere would mean the supremum is misplaced
        for b in [20.0f64, 100.0, 1300.0, 2600.0] {
            for a in [1.5, 2.0, 3.0, 4.0, 10.0, (b / 5.0 - 1.0).floor()] {
                let sup = rd_exact(a, b);
                let grid = grid_max(a, b);
                assert!(sup >= grid, "b={b} α={a}: sup {sup} < grid {grid}");
                assert!(sup <= grid * (1.0 + 1e-11), "b={b} α={a}: {sup} vs {grid}");
            }
        }
    }

    #[test]
    fn family_contains_every_neighbouring_batch() {
        // every batch of b scaled ratios u_j ∈ c·{−1, −½, 0, ½, 1} (u = r·nT/√b, so λ = Σu/√b
        // and σ_B² = population Var(u)) and every substitution of one row: the mean gap, the
        // variance gap and the variance itself stay inside the family
        let c = CLIP_FACTOR;
        let levels = [-c, -0.5 * c, 0.0, 0.5 * c, c];
        let stats = |u: &[f64]| {
            let b = u.len() as f64;
            let m = u.iter().sum::<f64>() / b;
            (
                u.iter().sum::<f64>() / b.sqrt(),
                u.iter().map(|x| x * x).sum::<f64>() / b - m * m,
            )
        };
        for b in [2usize, 3, 6] {
            let f = Family::new(b as f64);
            let (mut max_mean, mut max_var) = (0.0f64, 0.0f64);
            for code in 0..levels.len().pow(b as u32) {
                let mut u: Vec<f64> = (0..b)
                    .map(|j| levels[code / levels.len().pow(j as u32) % 5])
                    .collect();
                let (l1, v1) = stats(&u);
                assert!(v1 <= c * c + 1e-15); // noise variance ≥ C − c² > C − 1
                for &y in &levels {
                    u[0] = y; // rows are exchangeable: substituting row 0 covers every row
                    let (l2, v2) = stats(&u);
                    max_mean = max_mean.max((l1 - l2).abs());
                    max_var = max_var.max((v1 - v2).abs());
                }
            }
            assert!(max_mean <= f.mean_gap * (1.0 + 1e-12), "b={b}: {max_mean}");
            assert!(max_var <= f.var_gap, "b={b}: {max_var} > {}", f.var_gap);
            // both attained or nearly: the mean gap exactly, the variance gap at 4c²(b−1)/b²
            let bf = b as f64;
            assert!((max_mean - f.mean_gap).abs() < 1e-12);
            assert!((max_var - 4.0 * c * c * (bf - 1.0) / (bf * bf)).abs() < 1e-12);
        }
    }

    #[test]
    fn family_constants() {
        // clip c·√b/(nT): mean gap 2c/√b; noise variance in [C − 1, C]
        let f = Family::new(1300.0);
        assert!((f.mean_gap - 1.98 / 1300f64.sqrt()).abs() < 1e-16);
        assert_eq!((f.var_lo, f.var_hi), (1.0, 2.0));
        // the divergence is infinite from the order 1 + (C−1)b/(5c²) on
        assert!(rd_exact(265.0, 1300.0).is_finite());
        assert_eq!(rd_exact(267.0, 1300.0), f64::INFINITY);
    }
}
