//! Statistics of the empirical privacy audit (`tests/audit.rs`): exact Clopper-Pearson bounds
//! and the threshold (distinguishing) test that turns two samples of a mechanism's output into
//! a lower bound on ε at a given δ.
//!
//! **Why the bound is valid.** If a mechanism `M` is (ε, δ)-DP for the pair `(D, D')`, every
//! event `E` of its output satisfies `P[M(D) ∈ E] ≤ e^ε·P[M(D') ∈ E] + δ`, so
//! `ε ≥ ln((P[M(D) ∈ E] − δ)/P[M(D') ∈ E])`, and the same with `D`, `D'` swapped. The audit
//! uses the events `{S > t}` and `{S ≤ t}` of a scalar statistic `S` (a post-processing of the
//! release) for thresholds `t` on a grid fixed before any draw. For each threshold and each data
//! set it computes a two-sided Clopper-Pearson interval for `P[S > t]` (the complement event
//! uses the same interval), each one-sided bound at level `α/(4m)` for `m` thresholds. By the
//! union bound all `4m` one-sided statements hold at once with probability at least `1 − α`,
//! and then every candidate `ln((p_lower − δ)/q_upper)`, hence their maximum, is below the true
//! ε. The bounds are computed pessimistically (bisection returns the conservative end).

use statrs::function::gamma::ln_gamma;

/// Relative slack on the tail probability compared with α in the bisections (covers the
/// rounding of the term-by-term sums; makes every bound slightly more conservative).
const TAIL_SLACK: f64 = 1.0 - 1e-9;

/// `P[Bin(n, p) ≥ k]` for `1 ≤ k ≤ n` and `0 < p ≤ k/n`, where the terms `j ≥ k` decrease:
/// summed from `j = k` upwards until they no longer matter.
fn upper_tail(k: u64, n: u64, p: f64) -> f64 {
    let (kf, nf) = (k as f64, n as f64);
    let ln_term = ln_gamma(nf + 1.0) - ln_gamma(kf + 1.0) - ln_gamma(nf - kf + 1.0)
        + kf * p.ln()
        + (nf - kf) * (-p).ln_1p();
    let odds = p / (1.0 - p);
    let (mut term, mut sum) = (ln_term.exp(), 0.0);
    for j in k..=n {
        sum += term;
        if term <= 1e-18 * sum {
            break;
        }
        term *= (n - j) as f64 / (j + 1) as f64 * odds;
    }
    sum
}

/// `P[Bin(n, p) ≤ k]` for `0 ≤ k < n` and `k/n ≤ p < 1` (by symmetry from [`upper_tail`]).
fn lower_tail(k: u64, n: u64, p: f64) -> f64 {
    upper_tail(n - k, n, 1.0 - p)
}

/// One-sided Clopper-Pearson lower bound at level `a`: the largest `p` (up to bisection
/// precision, rounded down) with `P_p[X ≥ k] ≤ a`, for `k` successes out of `n`.
pub fn cp_lower(k: u64, n: u64, a: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    // P_{k/n}[X ≥ k] ≥ 1/2 > a (k is a median of Bin(n, k/n)), P_0[X ≥ k] = 0.
    let (mut lo, mut hi) = (0.0, k as f64 / n as f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if upper_tail(k, n, mid) <= a * TAIL_SLACK {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One-sided Clopper-Pearson upper bound at level `a`: the smallest `p` (rounded up) with
/// `P_p[X ≤ k] ≤ a`.
pub fn cp_upper(k: u64, n: u64, a: f64) -> f64 {
    if k == n {
        return 1.0;
    }
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if lower_tail(k, n, mid) <= a * TAIL_SLACK {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The best event of a threshold audit.
#[derive(Clone, Debug)]
pub struct AuditBound {
    /// The lower bound on ε (−∞ if no event gave a positive `p_lower − δ`).
    pub epsilon: f64,
    /// Threshold of the best event.
    pub threshold: f64,
    /// The best event, e.g. `"S > t, D vs D'"`.
    pub event: &'static str,
    /// Lower confidence bound of the event's probability under the first data set.
    pub p_lower: f64,
    /// Upper confidence bound under the second data set.
    pub q_upper: f64,
}

/// Threshold audit of two samples `xs ~ M(D)`, `ys ~ M(D')` at `delta`: the largest
/// `ln((p_lower − δ)/q_upper)` over the events `{S > t}`, `{S ≤ t}` for `t` in `grid` (fixed
/// before the draws) and both orders of the pair, valid with confidence `1 − alpha` (see the
/// module docs). NaN draws count as `{S ≤ t}` for every `t` (a fixed post-processing).
pub fn audit(xs: &[f64], ys: &[f64], grid: &[f64], alpha: f64, delta: f64) -> AuditBound {
    let a = alpha / (4.0 * grid.len() as f64);
    let sorted = |v: &[f64]| {
        let mut s: Vec<f64> = v
            .iter()
            .map(|&x| if x.is_nan() { f64::NEG_INFINITY } else { x })
            .collect();
        s.sort_by(f64::total_cmp);
        s
    };
    let (sx, sy) = (sorted(xs), sorted(ys));
    let (nx, ny) = (xs.len() as u64, ys.len() as u64);
    let mut best = AuditBound {
        epsilon: f64::NEG_INFINITY,
        threshold: f64::NAN,
        event: "none",
        p_lower: f64::NAN,
        q_upper: f64::NAN,
    };
    for &t in grid {
        // Draws above t, and two-sided intervals for P[S > t] under D and D'.
        let above = |s: &[f64]| (s.len() - s.partition_point(|&x| x <= t)) as u64;
        let (kx, ky) = (above(&sx), above(&sy));
        let (x_lo, x_hi) = (cp_lower(kx, nx, a), cp_upper(kx, nx, a));
        let (y_lo, y_hi) = (cp_lower(ky, ny, a), cp_upper(ky, ny, a));
        let candidates = [
            ("S > t, D vs D'", x_lo, y_hi),
            ("S > t, D' vs D", y_lo, x_hi),
            ("S <= t, D vs D'", 1.0 - x_hi, 1.0 - y_lo),
            ("S <= t, D' vs D", 1.0 - y_hi, 1.0 - x_lo),
        ];
        for (event, p_lower, q_upper) in candidates {
            if p_lower - delta <= 0.0 {
                continue;
            }
            let eps = ((p_lower - delta) / q_upper).ln();
            if eps > best.epsilon {
                best = AuditBound {
                    epsilon: eps,
                    threshold: t,
                    event,
                    p_lower,
                    q_upper,
                };
            }
        }
    }
    best
}

/// The grid `lo, lo + step, …, hi`.
pub fn grid(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let m = ((hi - lo) / step).round() as usize;
    (0..=m).map(|i| lo + i as f64 * step).collect()
}
