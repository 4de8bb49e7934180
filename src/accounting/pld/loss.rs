//! Privacy loss random variables `L = ln(p(X)/q(X))`, `X ~ P`, of the dominating pairs
//! (P, Q) this engine discretises: the distribution functions `P(L ≤ l)` and `P(L > l)`, each
//! accurate in its own tail (both from `erfc`), and the first two moments of `L`.

use crate::accounting::special::erfc;

/// `P(N(0,1) > z)`, accurate in the upper tail.
fn norm_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// `ln(1 − q + q·e^u)` without overflow or cancellation.
fn ln_mix(q: f64, u: f64) -> f64 {
    if u > 0.0 {
        u + (q + (1.0 - q) * (-u).exp()).ln()
    } else if q * u.exp_m1() > -0.5 {
        (q * u.exp_m1()).ln_1p()
    } else {
        // both terms positive: no cancellation (and no ln(0) when q = 1)
        ((1.0 - q) + q * u.exp()).ln()
    }
}

/// The dominating pair of one mechanism (sensitivity 1, noise multiplier or scale given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Loss {
    /// P = N(0, σ²), Q = N(1, σ²): L ~ N(μ, 2μ), μ = 1/(2σ²) (symmetric in the direction).
    Gaussian { sigma: f64 },
    /// P = Lap(0, b), Q = Lap(1, b) (symmetric in the direction).
    Laplace { b: f64 },
    /// Poisson subsampling, remove direction: P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²).
    PoissonRemove { sigma: f64, q: f64 },
    /// Poisson subsampling, add direction: P = N(0,σ²), Q = (1−q)N(0,σ²) + qN(1,σ²).
    PoissonAdd { sigma: f64, q: f64 },
    /// Sampling without replacement, substitute relation, the pair the Fourier accountant
    /// uses: P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²) (its swap has the
    /// same loss distribution, by x ↦ −x).
    Substitute { sigma: f64, q: f64 },
}

impl Loss {
    /// Whether the add direction has the same loss distribution as the remove direction.
    pub(crate) fn add_direction(self) -> Loss {
        match self {
            Loss::PoissonRemove { sigma, q } => Loss::PoissonAdd { sigma, q },
            other => other,
        }
    }

    /// `L(x)` for the increasing-in-x models (Substitute only; used to invert by bisection).
    fn substitute_loss(sigma: f64, q: f64, x: f64) -> f64 {
        let s2 = 2.0 * sigma * sigma;
        ln_mix(q, (2.0 * x - 1.0) / s2) - ln_mix(q, (-2.0 * x - 1.0) / s2)
    }

    /// The x with `L(x) = l` for the substitute pair (L is increasing in x).
    fn substitute_inverse(sigma: f64, q: f64, l: f64) -> f64 {
        let (mut lo, mut hi) = (-1.0, 1.0);
        while Self::substitute_loss(sigma, q, lo) > l {
            lo *= 2.0;
        }
        while Self::substitute_loss(sigma, q, hi) <= l {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if Self::substitute_loss(sigma, q, mid) > l {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// `(P(L ≤ l), P(L > l))`, each accurate in its tail.
    pub(crate) fn cdf_sf(self, l: f64) -> (f64, f64) {
        match self {
            Loss::Gaussian { sigma } => {
                let mu = 0.5 / (sigma * sigma);
                let z = (l - mu) / (2.0 * mu).sqrt();
                (norm_sf(-z), norm_sf(z))
            }
            Loss::Laplace { b } => {
                if l >= 1.0 / b {
                    (1.0, 0.0)
                } else if l < -1.0 / b {
                    (0.0, 1.0)
                } else {
                    // L > l ⇔ X < t = (1 − b·l)/2 ∈ (0, 1]; P(X ≥ t) = e^{−t/b}/2.
                    let t = 0.5 * (1.0 - b * l);
                    let le = 0.5 * (-t / b).exp();
                    (le, 1.0 - le)
                }
            }
            Loss::PoissonRemove { sigma, q } => {
                // L > l ⇔ x > σ²·ln((e^l − 1 + q)/q) + ½ (always if e^l ≤ 1 − q).
                let a = l.exp_m1() + q;
                if a <= 0.0 {
                    return (0.0, 1.0);
                }
                let x = sigma * sigma * (a / q).ln() + 0.5;
                let sf = (1.0 - q) * norm_sf(x / sigma) + q * norm_sf((x - 1.0) / sigma);
                let cdf = (1.0 - q) * norm_sf(-x / sigma) + q * norm_sf((1.0 - x) / sigma);
                (cdf, sf)
            }
            Loss::PoissonAdd { sigma, q } => {
                // L > l ⇔ x < σ²·ln((e^{−l} − 1 + q)/q) + ½ (never if e^{−l} ≤ 1 − q).
                let a = (-l).exp_m1() + q;
                if a <= 0.0 {
                    return (1.0, 0.0);
                }
                let x = sigma * sigma * (a / q).ln() + 0.5;
                (norm_sf(x / sigma), norm_sf(-x / sigma))
            }
            Loss::Substitute { sigma, q } => {
                let x = Self::substitute_inverse(sigma, q, l);
                let sf = (1.0 - q) * norm_sf(x / sigma) + q * norm_sf((x - 1.0) / sigma);
                let cdf = (1.0 - q) * norm_sf(-x / sigma) + q * norm_sf((1.0 - x) / sigma);
                (cdf, sf)
            }
        }
    }

    /// `(E[L], E[L²], allowance)`: closed forms for Gaussian (μ, μ² + 2μ) and Laplace
    /// (KL = 1/b + e^{−1/b} − 1), composite Simpson quadrature in x for the subsampled pairs
    /// with an allowance for its error.
    pub(crate) fn moments(self) -> (f64, f64, f64) {
        match self {
            Loss::Gaussian { sigma } => {
                let mu = 0.5 / (sigma * sigma);
                (mu, mu * mu + 2.0 * mu, 0.0)
            }
            Loss::Laplace { b } => {
                // |L| ≤ 1/b, so 1/b² bounds E[L²] (only used as a bound)
                let m = 1.0 / b + (-1.0 / b).exp_m1();
                (m, 1.0 / (b * b), 0.0)
            }
            Loss::PoissonRemove { sigma, q } => {
                let s2 = 2.0 * sigma * sigma;
                let l = |x: f64| ln_mix(q, (2.0 * x - 1.0) / s2);
                let (a0, b0) = gauss_expect(sigma, 0.0, l);
                let (a1, b1) = gauss_expect(sigma, 1.0, l);
                quad_result((1.0 - q) * a0 + q * a1, (1.0 - q) * b0 + q * b1)
            }
            Loss::PoissonAdd { sigma, q } => {
                let s2 = 2.0 * sigma * sigma;
                let (a, b) = gauss_expect(sigma, 0.0, |x| -ln_mix(q, (2.0 * x - 1.0) / s2));
                quad_result(a, b)
            }
            Loss::Substitute { sigma, q } => {
                let l = |x: f64| Self::substitute_loss(sigma, q, x);
                let (a0, b0) = gauss_expect(sigma, 0.0, l);
                let (a1, b1) = gauss_expect(sigma, 1.0, l);
                quad_result((1.0 - q) * a0 + q * a1, (1.0 - q) * b0 + q * b1)
            }
        }
    }
}

/// Allowance for the quadrature error of a mean: 1e-11 relative plus 1e-13 absolute, far
/// above Simpson's error for these smooth, Gaussian-weighted integrands (step σ/1000 on
/// ±40σ), which is below 1e-15 relative.
fn quad_result(m1: f64, m2: f64) -> (f64, f64, f64) {
    (m1, m2 * (1.0 + 1e-9), 1e-11 * m1.abs() + 1e-13)
}

/// `(E[f(X)], E[f(X)²])` for `X ~ N(m, σ²)` by composite Simpson on `m ± 40σ`.
fn gauss_expect(sigma: f64, m: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    const N: usize = 80_000; // even
    let h = 80.0 / N as f64;
    let (mut s1, mut s2) = (0.0, 0.0);
    for i in 0..=N {
        let z = -40.0 + i as f64 * h;
        let w = if i == 0 || i == N {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let phi = (-0.5 * z * z).exp();
        let v = f(m + sigma * z);
        s1 += w * phi * v;
        s2 += w * phi * v * v;
    }
    let c = h / 3.0 / (2.0 * std::f64::consts::PI).sqrt();
    (s1 * c, s2 * c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cdf + sf = 1 and sf decreasing, for every model.
    #[test]
    fn distribution_functions_consistent() {
        let models = [
            Loss::Gaussian { sigma: 0.7 },
            Loss::Laplace { b: 1.3 },
            Loss::PoissonRemove {
                sigma: 1.0,
                q: 0.01,
            },
            Loss::PoissonAdd {
                sigma: 1.0,
                q: 0.01,
            },
            Loss::Substitute {
                sigma: 1.0,
                q: 0.01,
            },
        ];
        for m in models {
            let mut last = 1.0;
            for i in -400..=400 {
                let l = i as f64 * 0.01;
                let (c, s) = m.cdf_sf(l);
                assert!((c + s - 1.0).abs() < 1e-12, "{m:?} at {l}: {c} + {s}");
                assert!(s <= last + 1e-15, "{m:?}: sf not decreasing at {l}");
                last = s;
            }
        }
    }

    /// Quadrature of the Gaussian moments against the closed form; Laplace mean against a
    /// Riemann sum of its sf (E[L] = ∫₀^∞ sf − ∫_{−∞}^0 cdf).
    #[test]
    fn moments_match_closed_forms() {
        let (m, m2) = gauss_expect(0.8, 0.0, |x| (1.0 - 2.0 * x) / (2.0 * 0.64));
        let mu = 0.5 / 0.64;
        assert!((m - mu).abs() < 1e-14 && (m2 - mu * mu - 2.0 * mu).abs() < 1e-13);
        let lap = Loss::Laplace { b: 0.7 };
        let n = 200_000;
        let h = 2.0 / 0.7 / n as f64;
        let mut e = 0.0;
        for i in 0..n {
            let l = -1.0 / 0.7 + (i as f64 + 0.5) * h;
            let (c, s) = lap.cdf_sf(l);
            e += if l > 0.0 { s } else { -c } * h;
        }
        assert!(
            (e - lap.moments().0).abs() < 1e-6,
            "{e} vs {:?}",
            lap.moments()
        );
        // Poisson with q = 1 is the Gaussian mechanism
        let p = Loss::PoissonRemove { sigma: 0.9, q: 1.0 }.moments();
        let g = Loss::Gaussian { sigma: 0.9 }.moments();
        // E[L²] of the quadrature carries a deliberate 1e-9 relative inflation
        assert!((p.0 - g.0).abs() < 1e-13 && (p.1 / g.1 - 1.0).abs() < 2e-9);
    }
}
