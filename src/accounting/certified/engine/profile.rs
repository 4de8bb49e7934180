//! The pessimistic connect-the-dots PMF of a **symmetric privacy profile** (a mechanism known
//! only through an upper bound on `δ(ε)`, `ε ≥ 0`, over a family closed under swapping): the
//! DP Barker step ([`Loss::BarkerTest`](super::loss::Loss)).
//!
//! Given node values `δ_j ≥ δ(jh)`, `j = 0..=N`, the PMF `ω` on `{jh : |j| ≤ N} ∪ {+∞}` whose
//! hockey-stick curve `δ̂(ε) = ω_∞ + Σ ω_j (1 − e^{ε − jh})₊` passes through them is
//! (dp_accounting's fixed-gap connect-the-dots, Doroshenko et al. 2022)
//! `ω_∞ = δ_N`, `ω_N = (δ_{N−1} − δ_N)/(1 − e^{−h})`,
//! `ω_j = ((δ_{j+1} − δ_j) − e^h(δ_j − δ_{j−1}))/(e^h − 1)`
//! `= (δ_{j+1} − 2δ_j + δ_{j−1})/(e^h − 1) + (δ_{j−1} − δ_j)` (the second form, with less
//! cancellation, is the one computed). The true δ is convex in `e^ε`, so between nodes the
//! interpolant (linear in `e^ε`) lies above it, and above the top node `δ̂ = δ_N ≥ δ`.
//!
//! The negative nodes follow from the symmetric-profile identity
//! `δ(ε) = 1 − e^ε + e^ε δ(−ε)`: the interpolant of symmetric node values is itself symmetric,
//! so its PMF satisfies `ω_{−j} = e^{−jh} ω_j`, which is how the lower half is filled (no
//! cancellation against `1 − e^ε`); `ω_0` is what is left of the total mass 1. The resulting
//! pair dominates every pair of the family at every `ε ≥ 0` and, being symmetric, at every
//! `ε < 0` too (`H_α(P‖Q) = 1 − α + α H_{1/α}(Q‖P)` and the swapped pairs are in the family).
//!
//! Round-off can make a mass computed as a second difference slightly negative (the true one
//! is `≥ 0` by convexity, but may be ~1e-30 in the tails). Such masses are set to 0 and
//! `ω_0` shrinks by the same total (for `ω_{±j}`): mass moves from the node 0 up to `jh`, which
//! raises `δ̂(ε)` at every `ε ≥ 0`, so the clamp is pessimistic; the symmetry is kept exactly.
//! There is no optimistic PMF: `opt` is all zeros, so compositions containing such a
//! mechanism report a lower bound of 0.

use super::discretise::Discretised;

/// The connect-the-dots PMF on `{jh : |j| ≤ N}`, `N = ⌈e_hi/h⌉`, of the symmetric profile
/// `delta` (an upper bound, evaluated at `jh`, `0 ≤ j ≤ N`); `None` above `max_len` nodes.
pub(crate) fn discretise_profile(
    delta: impl Fn(f64) -> f64,
    e_hi: f64,
    h: f64,
    max_len: usize,
) -> Option<Discretised> {
    let n = (e_hi / h).ceil().max(1.0);
    if n.is_nan() || 2.0 * n + 1.0 > max_len as f64 {
        return None;
    }
    let n = n as usize;
    let d: Vec<f64> = (0..=n).map(|j| delta(j as f64 * h)).collect();
    let em1 = h.exp_m1();
    let mut up = vec![0.0; n + 1]; // ω_j, j = 0..=n (ω_0 filled last)
    for j in 1..n {
        let w = (d[j + 1] - 2.0 * d[j] + d[j - 1]) / em1 + (d[j - 1] - d[j]);
        up[j] = w.max(0.0);
    }
    up[n] = ((d[n - 1] - d[n]) / -(-h).exp_m1()).max(0.0);
    let mut pess = vec![0.0; 2 * n + 1];
    // smallest masses first
    let mut rest = d[n];
    for j in (1..=n).rev() {
        let low = up[j] * (-(j as f64) * h).exp();
        pess[n + j] = up[j];
        pess[n - j] = low;
        rest += up[j] + low;
    }
    pess[n] = (1.0 - rest).max(0.0);
    Some(Discretised {
        h,
        start: -(n as i64),
        opt: vec![0.0; pess.len()],
        pess,
        pess_inf: d[n],
        bias: 0.0,
        q_loose: 0.0,
        rho: 8.0 * f64::EPSILON,
        bias_mean: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::pld_delta;

    #[test]
    fn gaussian_profile_round_trip() {
        // the Gaussian mechanism's profile (symmetric): the PMF has total mass 1, Q-mass ≤ 1,
        // passes through the node values and lies above the true curve between them
        let mu = 0.5; // PLD N(μ, 2μ)
        let profile = |e: f64| pld_delta(mu, e).unwrap();
        let h = 0.01;
        let d = discretise_profile(profile, 6.0, h, 1 << 20).unwrap();
        let total: f64 = d.pess.iter().sum::<f64>() + d.pess_inf;
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        let q: f64 = d
            .pess
            .iter()
            .enumerate()
            .map(|(i, &p)| p * (-((d.start + i as i64) as f64) * h).exp())
            .sum();
        assert!(q <= 1.0 + 1e-12, "{q}");
        for k in [0usize, 1, 7, 100, 300, 599] {
            let e = k as f64 * h;
            let got = d.pess_delta(e);
            assert!(
                (got - profile(e)).abs() <= 1e-12 * (1.0 + 1e3 * profile(e)),
                "node {e}"
            );
            let mid = e + 0.5 * h;
            assert!(d.pess_delta(mid) >= profile(mid), "between nodes at {mid}");
        }
        // negative ε: the symmetric identity, and domination there too
        for e in [-0.005f64, -0.3, -2.0] {
            let want = 1.0 - e.exp() + e.exp() * profile(-e);
            assert!(d.pess_delta(e) >= want * (1.0 - 1e-12), "ε = {e}");
        }
        // over budget
        assert!(discretise_profile(profile, 6.0, h, 1000).is_none());
    }
}
