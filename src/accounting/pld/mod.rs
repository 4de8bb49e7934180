//! Certified privacy loss distribution engine: two-sided bounds on δ(ε) and ε(δ) of
//! compositions, used by [`CertifiedPld`](crate::accounting::CertifiedPld).
//!
//! # Method
//! Each mechanism's privacy loss `L = ln(p(X)/q(X))`, `X ~ P`, of its dominating pair (P, Q)
//! ([`loss`]) is rounded **up** to the lattice `h·ℤ` (dp_accounting's privacy-loss-bucket
//! discretisation, `use_connect_dots=False`): `L̃ = ⌈L/h⌉·h`, so the rounding error
//! `e = L̃ − L ∈ [0, h)`. Tails beyond 1e-20 per side are dropped into an explicit `lost` mass;
//! compositions are convolutions (direct or FFT with rustfft, self-composition by repeated
//! squaring), truncating tails of at most 1e-15 per side into `lost` again.
//! With `S = ΣL_i`, `S̃ = ΣL̃_i`, `f_ε(s) = (1 − e^{ε−s})₊` increasing in s and
//! `δ(ε) = E f_ε(S)` (the hockey-stick divergence of the composed pair), the computed
//! `g(x) = Σ_i p_i (1 − e^{x − s_i})₊` of the kept mass gives:
//! * **rounding bounds**: `S ≤ S̃` and `S > S̃ − K·h` (K mechanisms), so
//!   `g(ε + K·h) ≤ δ(ε) ≤ g(ε) + lost`;
//! * **concentration bounds** (as Gopi, Lee and Wutschitz 2021 for the PRV accountant): the
//!   errors `e_i` are independent, in `[0, h]`, with known means `m_i = E[L̃_i] − E[L_i]`
//!   (`E[L_i]` in closed form for the Gaussian and the Laplace, by quadrature with an error
//!   allowance for the subsampled pairs; `M = Σm_i` bracketed in `[M_lo, M_hi]`), so by
//!   Hoeffding `|Σe_i − M| ≤ t = h·√(K·ln(1/η)/2)` except with probability η per side:
//!   `g(ε + M_hi + t) − η ≤ δ(ε) ≤ g(ε + M_lo − t) + η + lost`.
//!
//! The interval's width is O(h·√K) instead of the O(h·K) of rounding alone. Every bound is the
//! best of several valid ones (three values of η), and the floating-point error of the
//! convolutions is carried as `round_off` (an allowance, see `pmf::convolve`) and added to
//! the upper bound / subtracted from the lower one.
//!
//! Not implemented (yet): the connect-the-dots discretisation of Doroshenko et al. (PETS
//! 2022), which would shrink the rounding bounds; the concentration bounds already make the
//! interval O(h√K).

pub(crate) mod loss;
pub(crate) mod pmf;

use pmf::Pmf;

/// A closed interval `[lower, upper]` certified to contain the true value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

impl Interval {
    /// `upper − lower`.
    pub fn width(&self) -> f64 {
        self.upper - self.lower
    }
    /// Whether `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }
    /// The intersection of two intervals that both contain the true value.
    pub(crate) fn intersect(self, other: Interval) -> Interval {
        Interval {
            lower: self.lower.max(other.lower),
            upper: self.upper.min(other.upper),
        }
    }
    /// The interval of the maximum of two quantities.
    pub(crate) fn max(self, other: Interval) -> Interval {
        Interval {
            lower: self.lower.max(other.lower),
            upper: self.upper.max(other.upper),
        }
    }
}

/// Failure probabilities η of the Hoeffding bound, as fractions of the value's scale.
const ETA_FRACTIONS: [f64; 3] = [1e-4, 1e-3, 1e-2];

/// Relative allowance for the round-off of `g` itself.
const G_ROUND: f64 = 1e-12;

/// Hoeffding deviation `t` at failure probability `eta`.
fn deviation(p: &Pmf, eta: f64) -> f64 {
    p.h * (p.count * (1.0 / eta).ln() / 2.0).sqrt()
}

/// Interval containing δ(ε) of the composition `p` describes.
pub(crate) fn delta_interval(p: &Pmf, eps: f64) -> Interval {
    let extra = p.lost + p.round_off;
    let g0 = p.g(eps);
    let mut upper = g0 + extra;
    let mut lower = p.g(eps + p.count * p.h) - p.round_off;
    if p.count > 0.0 {
        for f in ETA_FRACTIONS {
            let eta = f * g0.max(1e-300);
            let t = deviation(p, eta);
            upper = upper.min(p.g(eps + p.m_lo - t) + eta + extra);
            lower = lower.max(p.g(eps + p.m_hi + t) - eta - p.round_off);
        }
    }
    Interval {
        lower: (lower * (1.0 - G_ROUND)).max(0.0),
        upper: (upper * (1.0 + G_ROUND)).min(1.0),
    }
}

/// Interval containing ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}; `upper = ∞` if nothing finite is
/// certified.
pub(crate) fn epsilon_interval(p: &Pmf, delta: f64) -> Interval {
    let extra = p.lost + p.round_off;
    let d_up = delta * (1.0 - G_ROUND);
    let d_lo = delta * (1.0 + G_ROUND);
    let mut upper = p.g_inv_upper(d_up - extra);
    let mut lower = p.g_inv_lower(d_lo + p.round_off) - p.count * p.h;
    if p.count > 0.0 {
        for f in ETA_FRACTIONS {
            let eta = f * delta;
            let t = deviation(p, eta);
            upper = upper.min(p.g_inv_upper(d_up - extra - eta) - p.m_lo + t);
            lower = lower.max(p.g_inv_lower(d_lo + p.round_off + eta) - p.m_hi - t);
        }
    }
    let upper = upper.max(0.0);
    Interval {
        lower: lower.max(0.0).min(upper),
        upper,
    }
}

#[cfg(test)]
mod tests;
