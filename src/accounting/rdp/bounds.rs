//! Rényi DP (Mironov 2017) of Gaussian and subsampled Gaussian mechanisms, and the RDP → (ε, δ)
//! conversions, optimised over a grid of orders.
//!
//! * Gaussian: `ε(α) = α/(2σ²)` per release (σ = noise std ÷ sensitivity; thesis Theorem 4).
//! * Sampling without replacement, substitute relation: Wang, Balle & Kasiviswanathan (2019)
//!   Theorem 9 exactly as the thesis states it in Theorems 7 and 8 ([`WorBound`]).
//! * Poisson sampling, add/remove relation: Mironov, Talwar & Zhang (2019), integer and
//!   fractional orders (the TF-Privacy / opacus / dp_accounting computation).
//! * Conversion ([`RdpConversion`]): the thesis' Theorem 1 (`Classic`, the default) or the
//!   improved conversion of Canonne, Kamath & Steinke / Balle et al. 2020 (`Improved`, what
//!   dp_accounting and opacus report; *not* the thesis).

use crate::accounting::special::{ln_binom, ln_erfc, log_add, log_sum_exp};
use crate::error::{Error, Result, check};
use serde::{Deserialize, Serialize};

/// Which RDP → (ε, δ) conversion to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RdpConversion {
    /// Thesis Theorem 1 (Mironov 2017): `ε = ε_RDP(α) + ln(1/δ)/(α−1)`. The default.
    #[default]
    Classic,
    /// `ε = ε_RDP(α) + ln(1 − 1/α) − ln(δ·α)/(α−1)` (Canonne–Kamath–Steinke 2020, Balle et al.
    /// 2020), as dp_accounting's `RdpAccountant`; orders ≤ 1.01 are skipped as there.
    Improved,
}

/// Which form of WBK19 Theorem 9 (thesis Theorem 8) to evaluate for sampling without replacement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorBound {
    /// The theorem: sum over `j = 3..=α` (log space, never overflows). The default.
    #[default]
    Theorem9,
    /// The thesis code (`dp_penalty_minibatch.total_RDP_epsilon`): the sum stops at `j = α−1`
    /// and is evaluated in plain f64 (overflow gives +∞). **Optimistic**: it drops the
    /// dominating `j = α` term (up to 4.8× too small per step). Only for reproducing the thesis.
    ThesisCode,
    /// `min(Theorem 9, α/(2σ²))`: also valid, because subsampling never hurts; tighter at large
    /// q. Not what the thesis computes (its numbers are Theorem 9 verbatim).
    Theorem9MinUnsubsampled,
}

/// The integer orders `2..=256` used for the thesis-style optimisation of composed RDP.
pub fn integer_orders(lo: u32, hi: u32) -> Vec<f64> {
    (lo..=hi).map(f64::from).collect()
}

/// dp_accounting 0.6's default `RdpAccountant` orders:
/// `[1 + x/10 for x in 1..100] + [11..63] + [128, 256, 512, 1024]`.
pub fn dp_accounting_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (1..100).map(|x| 1.0 + f64::from(x) / 10.0).collect();
    v.extend((11..64).map(f64::from));
    v.extend([128.0, 256.0, 512.0, 1024.0]);
    v
}

/// Largest RDP order accepted (the sums behind the subsampled bounds take `O(α)` terms; the
/// standard order grids stop at 256 or 1024).
pub const MAX_RDP_ORDER: f64 = 10_000.0;

fn check_order(alpha: f64) -> Result<f64> {
    if alpha.is_finite() && alpha > 1.0 && alpha <= MAX_RDP_ORDER {
        Ok(alpha)
    } else {
        Err(Error::invalid(
            "alpha",
            alpha,
            "RDP order must be finite, > 1 and at most 10000",
        ))
    }
}

/// RDP of one Gaussian release at order α: `α/(2σ²)` (thesis Theorem 4).
///
/// # Errors
/// `noise_multiplier` finite > 0; `alpha` finite > 1.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::gaussian_rdp;
/// assert_eq!(gaussian_rdp(1.0, 4.0)?, 2.0);
/// assert!(gaussian_rdp(-1.0, 4.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn gaussian_rdp(noise_multiplier: f64, alpha: f64) -> Result<f64> {
    let s = check::positive("noise_multiplier", noise_multiplier)?;
    let a = check_order(alpha)?;
    Ok(a / (2.0 * s * s))
}

/// `ln(e^x − 1)` without overflow.
fn ln_expm1(x: f64) -> f64 {
    if x > 1.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// WBK19 Theorem 9 for a base mechanism whose RDP at order `j` is `eps_prime(j)` (thesis
/// Theorems 7 and 8), at integer order `alpha ≥ 2`, sampling rate `q`, sum up to `j = upper`.
/// Log space; `+∞` only if `eps_prime` is.
pub(crate) fn wbk_thm9(q: f64, alpha: u32, upper: u32, eps_prime: impl Fn(f64) -> f64) -> f64 {
    let lq = q.ln();
    let a = u64::from(alpha);
    let e2 = eps_prime(2.0);
    let mut terms = Vec::with_capacity(alpha as usize);
    let m2 = (4f64.ln() + ln_expm1(e2)).min(2f64.ln() + e2);
    terms.push(2.0 * lq + ln_binom(a, 2) + m2);
    for j in 3..=upper.min(alpha) {
        let jf = f64::from(j);
        terms.push(2f64.ln() + jf * lq + ln_binom(a, u64::from(j)) + (jf - 1.0) * eps_prime(jf));
    }
    // ln(1 + Σ) via log1p: the sum is often ~1e-7, where ln(1 + x) would lose 9 digits
    log_add(0.0, log_sum_exp(&terms)) / (f64::from(alpha) - 1.0)
}

/// The thesis code's plain-f64 evaluation of Theorem 8 with the sum over `j = 3..α−1`
/// (`total_RDP_epsilon`); overflow gives `+∞` as in Python.
pub(crate) fn thesis_code_thm8(q: f64, alpha: u32, tau: f64) -> f64 {
    let eps_p = |j: f64| j / (2.0 * tau);
    let a = u64::from(alpha);
    let e2 = eps_p(2.0);
    let mut sum = q * q * ln_binom(a, 2).exp() * (4.0 * e2.exp_m1()).min(2.0 * e2.exp());
    for j in 3..alpha {
        let jf = f64::from(j);
        sum += (jf * q.ln() + ln_binom(a, u64::from(j)) + (jf - 1.0) * eps_p(jf) + 2f64.ln()).exp();
    }
    (1.0 + sum).ln() / (f64::from(alpha) - 1.0)
}

/// Per-release RDP at integer order `alpha ≥ 2` of the Gaussian mechanism (noise std ÷
/// *substitute* sensitivity = `noise_multiplier`) on a batch sampled without replacement with
/// rate `q = b/n`, substitute relation: WBK19 Theorem 9 as in thesis Theorem 8
/// (`ε′(j) = j/(2σ²)`), in the form chosen by `bound`.
///
/// # Errors
/// `q` in (0, 1]; `noise_multiplier` finite > 0; `2 ≤ alpha ≤` [`MAX_RDP_ORDER`].
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{wor_subsampled_gaussian_rdp, WorBound};
/// // q = 0.01, σ = 1, α = 10: 0.067422384513373207 (mpmath; tests/data/accounting sub_rdp_wor_12)
/// let e = wor_subsampled_gaussian_rdp(0.01, 1.0, 10, WorBound::Theorem9)?;
/// assert!((e - 0.067422384513373207).abs() < 1e-12);
/// assert!(wor_subsampled_gaussian_rdp(1.5, 1.0, 10, WorBound::Theorem9).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn wor_subsampled_gaussian_rdp(
    q: f64,
    noise_multiplier: f64,
    alpha: u32,
    bound: WorBound,
) -> Result<f64> {
    let q = check::rate("q", q)?;
    let s = check::positive("noise_multiplier", noise_multiplier)?;
    if alpha < 2 || f64::from(alpha) > MAX_RDP_ORDER {
        return Err(Error::invalid(
            "alpha",
            alpha,
            "must be an integer >= 2 and at most 10000",
        ));
    }
    Ok(wor_rdp(q, s, alpha, bound))
}

pub(crate) fn wor_rdp(q: f64, s: f64, alpha: u32, bound: WorBound) -> f64 {
    let rho = 1.0 / (2.0 * s * s);
    match bound {
        WorBound::Theorem9 => wbk_thm9(q, alpha, alpha, |j| j * rho),
        WorBound::ThesisCode => thesis_code_thm8(q, alpha, s * s),
        WorBound::Theorem9MinUnsubsampled => {
            wbk_thm9(q, alpha, alpha, |j| j * rho).min(f64::from(alpha) * rho)
        }
    }
}

/// Per-release RDP at order `alpha > 1` of the Poisson-subsampled Gaussian (rate `q`,
/// noise std ÷ add/remove sensitivity = `noise_multiplier`), Mironov, Talwar & Zhang (2019):
/// exact binomial sum at integer orders, the erfc series at fractional orders.
///
/// # Errors
/// `q` in (0, 1]; `noise_multiplier` finite > 0; `alpha` in (1, [`MAX_RDP_ORDER`]].
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::poisson_subsampled_gaussian_rdp;
/// // q = 0.01, σ = 1, α = 32: 11.246275937048072 (dp_accounting 0.6.0; sub_rdp_poi_03)
/// let e = poisson_subsampled_gaussian_rdp(0.01, 1.0, 32.0)?;
/// assert!((e - 11.246275937048072).abs() < 1e-8);
/// assert!(poisson_subsampled_gaussian_rdp(0.0, 1.0, 32.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn poisson_subsampled_gaussian_rdp(q: f64, noise_multiplier: f64, alpha: f64) -> Result<f64> {
    let q = check::rate("q", q)?;
    let s = check::positive("noise_multiplier", noise_multiplier)?;
    let a = check_order(alpha)?;
    Ok(poisson_rdp(q, s, a))
}

pub(crate) fn poisson_rdp(q: f64, sigma: f64, alpha: f64) -> f64 {
    if q == 1.0 {
        return alpha / (2.0 * sigma * sigma);
    }
    let log_a = if alpha.fract() == 0.0 {
        log_a_int(q, sigma, alpha as u64)
    } else {
        log_a_frac(q, sigma, alpha)
    };
    log_a / (alpha - 1.0)
}

fn log_a_int(q: f64, sigma: f64, alpha: u64) -> f64 {
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let terms: Vec<f64> = (0..=alpha)
        .map(|i| {
            let fi = i as f64;
            ln_binom(alpha, i)
                + fi * lq
                + (alpha - i) as f64 * l1q
                + (fi * fi - fi) / (2.0 * sigma * sigma)
        })
        .collect();
    log_sum_exp(&terms)
}

/// `ln A_α` at fractional α (Mironov, Talwar & Zhang 2019, §3.3), as dp_accounting 0.6 computes
/// it: the alternating series is summed in absolute value (an upper bound on the exact value,
/// 1.2e-7 relative above opacus' signed sum at α = 10.5, i.e. the pessimistic side), stopping
/// once both terms decrease and are e^{-30} below the total; no convergence in 1000 terms
/// gives `+∞` (the order is then useless, never optimistic).
fn log_a_frac(q: f64, sigma: f64, alpha: f64) -> f64 {
    let (mut log_a0, mut log_a1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let z0 = sigma * sigma * (1.0 / q - 1.0).ln() + 0.5;
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let s2 = std::f64::consts::SQRT_2 * sigma;
    let mut log_coef = 0.0f64; // ln |C(alpha, i)|
    let (mut last0, mut last1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for step in 0..1000u32 {
        let i = f64::from(step);
        let j = alpha - i;
        let log_t0 = log_coef + i * lq + j * l1q;
        let log_t1 = log_coef + j * lq + i * l1q;
        let log_e0 = 0.5f64.ln() + ln_erfc((i - z0) / s2);
        let log_e1 = 0.5f64.ln() + ln_erfc((z0 - j) / s2);
        let log_s0 = log_t0 + (i * i - i) / (2.0 * sigma * sigma) + log_e0;
        let log_s1 = log_t1 + (j * j - j) / (2.0 * sigma * sigma) + log_e1;
        log_a0 = log_add(log_a0, log_s0);
        log_a1 = log_add(log_a1, log_s1);
        let total = log_add(log_a0, log_a1);
        if log_s0 < last0 && log_s1 < last1 && log_s0.max(log_s1) < total - 30.0 {
            return total;
        }
        last0 = log_s0;
        last1 = log_s1;
        log_coef += (alpha - i).abs().ln() - (i + 1.0).ln();
    }
    f64::INFINITY
}

/// (ε, optimal order) from per-order RDP values at `delta` (min over the orders).
pub(crate) fn rdp_to_epsilon(
    orders: &[f64],
    rdp: &[f64],
    delta: f64,
    conv: RdpConversion,
) -> (f64, f64) {
    let mut best = (f64::INFINITY, f64::NAN);
    for (&a, &r) in orders.iter().zip(rdp) {
        let e = match conv {
            RdpConversion::Classic => r + (1.0 / delta).ln() / (a - 1.0),
            RdpConversion::Improved => {
                if delta * delta + (-r).exp_m1() > 0.0 {
                    0.0
                } else if a > 1.01 {
                    r + (-1.0 / a).ln_1p() - (delta * a).ln() / (a - 1.0)
                } else {
                    f64::INFINITY
                }
            }
        };
        if e < best.0 {
            best = (e, a);
        }
    }
    (best.0.max(0.0), best.1)
}

/// (δ, optimal order) from per-order RDP values at `epsilon` (min over the orders), clamped to
/// [0, 1].
pub(crate) fn rdp_to_delta(
    orders: &[f64],
    rdp: &[f64],
    epsilon: f64,
    conv: RdpConversion,
) -> (f64, f64) {
    let mut best = (f64::INFINITY, f64::NAN);
    for (&a, &r) in orders.iter().zip(rdp) {
        let logd = match conv {
            RdpConversion::Classic => (a - 1.0) * (r - epsilon),
            RdpConversion::Improved => {
                let kl = if r == 0.0 {
                    f64::NEG_INFINITY
                } else {
                    0.5 * (-(-r).exp()).ln_1p()
                };
                if a > 1.01 {
                    kl.min((a - 1.0) * (r - epsilon + (-1.0 / a).ln_1p()) - a.ln())
                } else {
                    kl
                }
            }
        };
        if logd < best.0 {
            best = (logd, a);
        }
    }
    (best.0.exp().clamp(0.0, 1.0), best.1)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn thesis_code_values() {
        // thesis code total_RDP_epsilon (q = b/n; THESIS-NOTES §16):
        let cases = [
            (0.01, 2, 0.7, 0.0008341987361823586),
            (0.01, 3, 0.7, 0.001250255722011483),
            (0.01, 10, 0.7, 1.442524416338529),
            (0.006, 10, 0.8, 0.23535411724757416),
        ];
        for (q, a, tau, want) in cases {
            let got = thesis_code_thm8(q, a, tau);
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "α={a}: {got} vs {want}"
            );
        }
        assert_eq!(thesis_code_thm8(0.01, 50, 0.7), f64::INFINITY);
    }

    #[test]
    fn corrected_sum_spec_values() {
        // THESIS-NOTES §6 (τ 0.7): ε_step(3) = 0.001322723448123143,
        // ε_step(10) = 2.1033085054359177
        let s = 0.7f64.sqrt();
        let e3 = wor_rdp(0.01, s, 3, WorBound::Theorem9);
        let e10 = wor_rdp(0.01, s, 10, WorBound::Theorem9);
        assert!(((e3 - 0.001322723448123143) / e3).abs() < 1e-12, "{e3}");
        assert!(((e10 - 2.1033085054359177) / e10).abs() < 1e-12, "{e10}");
    }

    #[test]
    fn classic_gaussian_optimum() {
        // σ=1, k=1, δ=1e-5: classic 5.30259 at α = 6 (tests/data/accounting gauss_rdp_opt_02)
        let orders = integer_orders(2, 256);
        let rdp: Vec<f64> = orders.iter().map(|a| a / 2.0).collect();
        let (e, a) = rdp_to_epsilon(&orders, &rdp, 1e-5, RdpConversion::Classic);
        assert_eq!(a, 6.0);
        assert!((e - 5.30259).abs() < 1e-5);
        let (d, _) = rdp_to_delta(&orders, &rdp, e, RdpConversion::Classic);
        assert!((d - 1e-5).abs() < 1e-12);
    }
}
