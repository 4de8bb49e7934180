//! Numerical helpers for the accountants: scaled erfc, log-space sums, binomials, pessimistic floors.

/// `x²` as an unevaluated sum `hi + lo` (exact up to round-off of `lo`), via a fused multiply-add.
fn square_split(x: f64) -> (f64, f64) {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    (hi, lo)
}

/// `exp(x²)` with the rounding error of `x²` compensated.
pub(crate) fn exp_sq(x: f64) -> f64 {
    let (hi, lo) = square_split(x);
    hi.exp() * (1.0 + lo)
}

/// `exp(-x²)` with the rounding error of `x²` compensated.
pub(crate) fn exp_neg_sq(x: f64) -> f64 {
    let (hi, lo) = square_split(x);
    (-hi).exp() * (1.0 - lo)
}

/// `erf(x)` for `0 ≤ x < 0.8` by the positive series
/// `erf(x) = 2/√π·e^{−x²}·Σ 2ⁿx^{2n+1}/(1·3·…·(2n+1))` (no cancellation).
fn erf_series(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term > 1e-17 * sum {
        n += 1.0;
        term *= 2.0 * x * x / (2.0 * n + 1.0);
        sum += term;
    }
    std::f64::consts::FRAC_2_SQRT_PI * exp_neg_sq(x) * sum
}

/// `erfcx(x)` for `x ≥ 0.8` by the continued fraction
/// `√π·erfcx(x) = 1/(x + ½/(x + 1/(x + (3/2)/(x + …))))`, evaluated backwards with
/// `30 + 1500/x²` terms (checked against mpmath on [0.8, 30]: ≤ 1.1e-15 relative).
fn erfcx_cf(x: f64) -> f64 {
    let n = (30.0 + 1500.0 / (x * x)) as usize;
    let mut t = x;
    for k in (1..=n).rev() {
        t = x + (k as f64 * 0.5) / t;
    }
    1.0 / (t * std::f64::consts::PI.sqrt())
}

/// Complementary error function, accurate to ~1e-15 relative on the whole real line
/// (statrs' `erfc` is off by up to ~5e-11 relative near x = 1, too coarse for δ ≈ 1e-22).
pub(crate) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < 0.0 {
        2.0 - erfc(-x)
    } else if x < 0.8 {
        1.0 - erf_series(x)
    } else if x < 27.3 {
        exp_neg_sq(x) * erfcx_cf(x)
    } else {
        0.0
    }
}

/// Scaled complementary error function `erfcx(x) = exp(x²)·erfc(x)` (relative error ~1e-15;
/// overflows to `+∞` for `x < −26.6`).
pub(crate) fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < 0.0 {
        2.0 * exp_sq(x) - erfcx(-x)
    } else if x < 0.8 {
        exp_sq(x) * (1.0 - erf_series(x))
    } else {
        erfcx_cf(x)
    }
}

/// `ln erfc(x)` without underflow for large `x`.
pub(crate) fn ln_erfc(x: f64) -> f64 {
    if x < 1.0 {
        erfc(x).ln()
    } else {
        erfcx(x).ln() - x * x
    }
}

/// `ln(e^a + e^b)`, exact for `-∞` inputs.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// `ln Σ e^{x_i}` (log-sum-exp); `-∞` for an empty slice; `+∞` if any term is `+∞`.
pub(crate) fn log_sum_exp(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `ln C(n, k)` for integers.
pub(crate) fn ln_binom(n: u64, k: u64) -> f64 {
    statrs::function::factorial::ln_binomial(n, k)
}

/// Relative margin applied before flooring a computed real iteration count: rounding error in the
/// last bits must never turn `k* = 41.99999999999999` into 42 (pessimistic rounding). It changes
/// the result only when the exact real count lies within 1e-12 relative above an integer.
pub(crate) const FLOOR_MARGIN: f64 = 1e-12;

/// `⌊x·(1 − 1e-12)⌋` clamped at 0 (pessimistic floor of a computed, non-negative real count).
pub(crate) fn floor_pessimistic(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let y = (x * (1.0 - FLOOR_MARGIN)).floor();
    if y >= u64::MAX as f64 {
        u64::MAX
    } else {
        y as u64
    }
}

/// `P(N(0,1) > z)`, accurate in the upper tail (fdlibm's erfc, within ~1 ulp relative).
pub(crate) fn norm_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn erfcx_matches_direct_and_asymptotic() {
        // Reference: mpmath.erfc(x)*mpmath.exp(x**2) at 30 digits.
        let cases = [
            (0.0, 1.0),
            (1.0, 0.42758357615580700442),
            (5.0, 0.11070463773306862637),
            (10.0, 0.056140992743822585858),
            (26.0, 0.021683584850562906616),
            (30.0, 0.018795888861416751),
        ];
        for (x, want) in cases {
            let got = erfcx(x);
            assert!(
                ((got - want) / want).abs() < 2e-15,
                "x={x}: {got} vs {want}"
            );
        }
        // erfc(1) = 0.157299207050285130659 (mpmath); erfc(-1) = 2 - erfc(1)
        assert!((erfc(1.0) / 0.157299207050285130659 - 1.0).abs() < 1e-15);
        assert!((erfc(-1.0) - (2.0 - 0.157299207050285130659)).abs() < 1e-15);
        assert!((erfc(7.0) / 4.1838256077794143986e-23 - 1.0).abs() < 1e-14);
    }

    #[test]
    fn log_helpers() {
        assert!((log_add(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(log_add(f64::NEG_INFINITY, 1.0), 1.0);
        assert!((log_sum_exp(&[0.0, 0.0, 0.0]) - 3f64.ln()).abs() < 1e-15);
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
        assert!((ln_erfc(30.0) - (erfcx(30.0).ln() - 900.0)).abs() < 1e-12);
        assert_eq!(floor_pessimistic(3.0), 2);
        assert_eq!(floor_pessimistic(3.5), 3);
        assert_eq!(floor_pessimistic(-1.0), 0);
    }
}
