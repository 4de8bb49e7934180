//! The privacy profile of one DP Barker step over the feasible family (`pld`), before and after
//! the amplification by sampling the batch without replacement; derivation in
//! `docs/ACCOUNTING.md`, section "DP Barker: a PLD over the feasible family".
//!
//! One step releases `N(μ, v)` with `(μ, v)` in the family of [`Family`] (see
//! `exact.rs`): neighbouring batches give a pair `N(μ₁, v₁)`, `N(μ₂, v₂)` with
//! `|μ₁ − μ₂| ≤ 2c/√b`, `v₁, v₂ ∈ [C − 1, C]`, `|v₁ − v₂| ≤ 5c²/b`. The profile is
//! `δ_step(ε) = sup` of the hockey-stick divergence `P(A) − e^ε Q(A)`,
//! `A = {p > e^ε q}`, over the family and its swapped pairs. It is attained (checked against a
//! dense grid over the family in the tests) at the largest mean gap and the smallest variance,
//! by one of three pairs: equal variances `C − 1`, or variances `C − 1` and `C − 1 + 5c²/b`
//! in either orientation ([`step_delta`]); the equal pair wins only near ε = 0.
//!
//! Sampling the batch without replacement (substitution; Balle, Barthe and Gaboardi 2018)
//! gives `δ'(ε') = γ·δ_step(ln(1 + (e^{ε'} − 1)/γ))`, `γ = b/n`, for `ε' ≥ 0`
//! ([`amplified_delta`]); the family is closed under swapping, so the profile of negative ε'
//! follows from `δ(ε) = 1 − e^ε + e^ε·δ(−ε)` (used by `certified/engine/profile.rs`).
//!
//! Every value returned is an upper bound: the normal tails come from `libm::erfc` on their
//! accurate side (a few ulps), the region `A` from the stable quadratic formula (an error in
//! its end points lowers `P(A) − e^ε Q(A)` only to second order, the integrand vanishing
//! there), and the cancellation in `P(A) − e^ε Q(A)` is covered by adding
//! [`ALLOW_REL`]`·(P(A) + e^ε Q(A))`, which also covers rounding ε down by a few ulps and the
//! arithmetic of the connect-the-dots masses built from these values.

use crate::accounting::barker::exact::Family;
use crate::accounting::special::norm_sf;

/// Allowance added to each hockey-stick value, relative to `P(A) + e^ε Q(A)`.
const ALLOW_REL: f64 = 1e-12;

/// `P(l < X < u)` for `X ~ N(m, s²)`, `l ≤ u`, each tail from its accurate side.
fn between(m: f64, s: f64, l: f64, u: f64) -> f64 {
    let v = if l >= m {
        norm_sf((l - m) / s) - norm_sf((u - m) / s)
    } else if u <= m {
        norm_sf((m - u) / s) - norm_sf((m - l) / s)
    } else {
        1.0 - norm_sf((m - l) / s) - norm_sf((u - m) / s)
    };
    v.max(0.0)
}

/// `(P(A) − e^ε Q(A), P(A) + e^ε Q(A))` for `P = N(m, v₁)`, `Q = N(0, v₂)` and
/// `A = {x : p(x) > e^ε q(x)}`, `ε ≥ 0`.
///
/// `ln p − ln q > ε ⇔ a x² + β x + c > 0` with `a = (v₁ − v₂)/(2v₁v₂)`, `β = m/v₁`,
/// `c = −m²/(2v₁) − ½ ln(v₁/v₂) − ε`: a half-line for equal variances, the complement of an
/// interval for `v₁ > v₂`, an interval for `v₁ < v₂`.
pub(crate) fn gaussian_hockey_stick(eps: f64, m: f64, v1: f64, v2: f64) -> (f64, f64) {
    let (s1, s2) = (v1.sqrt(), v2.sqrt());
    let a = (v1 - v2) / (2.0 * v1 * v2);
    let beta = m / v1;
    let c = -m * m / (2.0 * v1) - 0.5 * ((v1 - v2) / v2).ln_1p() - eps;
    let e = eps.exp();
    let (p, q) = if a == 0.0 {
        if beta == 0.0 {
            return (0.0, 0.0); // P = Q
        }
        let x0 = -c / beta;
        if beta > 0.0 {
            (norm_sf((x0 - m) / s1), norm_sf(x0 / s2))
        } else {
            (norm_sf((m - x0) / s1), norm_sf(-x0 / s2))
        }
    } else {
        let disc = beta * beta - 4.0 * a * c;
        if disc <= 0.0 {
            // A is the whole line (a > 0: δ = 1 − e^ε ≤ 0) or empty (a < 0)
            return (0.0, 0.0);
        }
        let qq = -0.5 * (beta + disc.sqrt().copysign(if beta == 0.0 { 1.0 } else { beta }));
        let (r1, r2) = (qq / a, c / qq);
        let (l, u) = (r1.min(r2), r1.max(r2));
        if a > 0.0 {
            (
                norm_sf((m - l) / s1) + norm_sf((u - m) / s1),
                norm_sf(-l / s2) + norm_sf(u / s2),
            )
        } else {
            (between(m, s1, l, u), between(0.0, s2, l, u))
        }
    };
    (p - e * q, p + e * q)
}

/// The family's candidate pairs `(mean gap, v₁, v₂)` whose maximum is the supremum.
fn candidates(f: &Family) -> [(f64, f64, f64); 3] {
    let hi = (f.var_lo + f.var_gap).min(f.var_hi);
    [
        (f.mean_gap, f.var_lo, f.var_lo),
        (f.mean_gap, hi, f.var_lo),
        (f.mean_gap, f.var_lo, hi),
    ]
}

/// Upper bound on the per-step profile `δ_step(ε)`, `ε ≥ 0`, of batch size `b`.
pub(crate) fn step_delta(eps: f64, b: f64) -> f64 {
    let f = Family::new(b);
    candidates(&f)
        .iter()
        .map(|&(m, v1, v2)| {
            let (d, scale) = gaussian_hockey_stick(eps, m, v1, v2);
            d + ALLOW_REL * scale
        })
        .fold(0.0, f64::max)
        .min(1.0)
}

/// Upper bound on the amplified profile `δ'(ε') = γ·δ_step(ln(1 + (e^{ε'} − 1)/γ))` of one
/// DP Barker step with batch size `b` out of `n` rows (`γ = b/n`), `ε' ≥ 0`.
pub(crate) fn amplified_delta(eps: f64, b: f64, n: f64) -> f64 {
    let gamma = b / n;
    // ε rounded down (δ_step decreases in ε): the few ulps are within ALLOW_REL
    let inner = (eps.exp_m1() / gamma).ln_1p() * (1.0 - 8.0 * f64::EPSILON);
    (gamma * step_delta(inner.max(0.0), b) * (1.0 + 4.0 * f64::EPSILON)).min(1.0)
}

/// An ε' with `amplified_delta(ε') ≤ tail` (found by bisection, the upper end returned).
pub(crate) fn amplified_range(b: f64, n: f64, tail: f64) -> f64 {
    let mut hi = 1e-3;
    while amplified_delta(hi, b, n) > tail {
        hi *= 2.0;
        if hi > 1e3 {
            return hi;
        }
    }
    let mut lo = 0.0;
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if amplified_delta(mid, b, n) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `P(A) − e^ε Q(A)` by the midpoint rule, A read off the densities pointwise.
    fn quadrature(eps: f64, m: f64, v1: f64, v2: f64) -> f64 {
        let pdf = |x: f64, mu: f64, v: f64| {
            (-0.5 * (x - mu) * (x - mu) / v).exp() / (2.0 * std::f64::consts::PI * v).sqrt()
        };
        let (lo, hi, n) = (-40.0, 40.0, 400_000);
        let h = (hi - lo) / f64::from(n);
        let mut s = 0.0;
        for i in 0..n {
            let x = lo + (f64::from(i) + 0.5) * h;
            s += (pdf(x, m, v1) - eps.exp() * pdf(x, 0.0, v2)).max(0.0);
        }
        s * h
    }

    #[test]
    fn closed_form_matches_quadrature() {
        // every shape of A: half-line, complement of an interval, interval; the midpoint
        // rule's error on an integrand with two kinks is O(h²) ≈ 1e-8 here
        for (e, m, v1, v2) in [
            (0.3, 0.5, 1.0, 1.0),
            (0.0, 0.5, 1.0, 1.0),
            (0.2, -0.4, 1.3, 1.0),
            (0.2, 0.4, 1.0, 1.3),
            (1.0, 0.3, 2.0, 1.0),
            (0.05, 0.1, 1.0, 1.5),
            (0.01, 0.0, 1.2, 1.0),
        ] {
            let (got, _) = gaussian_hockey_stick(e, m, v1, v2);
            let want = quadrature(e, m, v1, v2);
            assert!(
                (got - want).abs() < 1e-7,
                "{e} {m} {v1} {v2}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn tails_do_not_cancel() {
        // equal variances: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) with μ = gap/σ; far in
        // the tail the value is many orders below P(A), and must still be positive
        let (d, scale) = gaussian_hockey_stick(1.0, 0.055, 1.0, 1.0);
        assert!(d > 0.0 && d < 1e-60 && scale > d, "{d} {scale}");
        // unequal variances, complement of an interval: both tails from their own side
        let (d, _) = gaussian_hockey_stick(1.0, 0.055, 1.0038, 1.0);
        assert!(d > 1e-45 && d < 1e-35, "{d}");
    }

    /// Max of the hockey-stick divergence over a dense grid of the family, both orientations
    /// (101 × 41 variances).
    fn grid_max(eps: f64, b: f64) -> f64 {
        Family::new(b).grid_max(100, 20, |mu, v1, v2| {
            gaussian_hockey_stick(eps, mu, v1, v2).0
        })
    }

    #[test]
    fn supremum_is_the_grid_maximum() {
        // the grid contains the three candidate pairs, so the two agree up to the allowance;
        // a larger grid value anywhere would mean the supremum is misplaced. The ε values
        // cover the equal-variance regime (ε = 0, 1e-3 at b = 20) and both tails.
        for b in [20.0f64, 100.0, 1300.0] {
            for e in [0.0, 1e-3, 0.01, 0.05, 0.2, 0.5, 1.0, 2.0] {
                let sup = step_delta(e, b);
                let grid = grid_max(e, b);
                assert!(sup >= grid, "b={b} ε={e}: sup {sup} < grid {grid}");
                assert!(
                    sup <= grid * (1.0 + 1e-9) + 1e-300,
                    "b={b} ε={e}: {sup} vs {grid}"
                );
            }
        }
        // which pair wins: equal variances at ε = 0, the wider P (v₁ = C−1+5c²/b) above
        let f = Family::new(1300.0);
        let [eq, wide, narrow] =
            candidates(&f).map(|(m, v1, v2)| move |e: f64| gaussian_hockey_stick(e, m, v1, v2).0);
        assert!(eq(0.0) > wide(0.0) && eq(0.0) > narrow(0.0));
        assert!(wide(0.1) > eq(0.1) && wide(0.1) > narrow(0.1));
    }

    #[test]
    fn amplification_and_range() {
        let (b, n) = (1300.0, 100_000.0);
        // ε' = 0: γ·TV
        assert!((amplified_delta(0.0, b, n) - 0.013 * step_delta(0.0, b)).abs() < 1e-17);
        // decreasing, and below the tail at the range's end
        let top = amplified_range(b, n, 1e-25);
        assert!(amplified_delta(top, b, n) <= 1e-25);
        assert!(amplified_delta(0.9 * top, b, n) > 1e-25);
        let mut last = 1.0;
        for i in 0..=100 {
            let d = amplified_delta(top * f64::from(i) / 100.0, b, n);
            assert!(d <= last);
            last = d;
        }
    }
}
