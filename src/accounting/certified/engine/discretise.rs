//! One mechanism's privacy loss distribution on the lattice `h·ℤ`, twice: the pessimistic
//! connect-the-dots PMF (Doroshenko et al. 2022, Algorithm 1) and the mean-preserving
//! rounding the lower bound is computed from.
//!
//! **The mean-preserving rounding.** Quantising the outcome to its loss bucket
//! `(ih, (i+1)h]` is a post-processing, so the pair of bucket masses `(p_i, q_i)` is dominated
//! by the mechanism (data processing) and its loss `ℓ_i = ln(p_i/q_i)` lies in the bucket.
//! Each bucket's P-mass is then split between its two nodes, `t_i = (ℓ_i − ih)/h` of it on
//! the upper one: the lattice value is `ℓ_i + N` with `E[N | i] = 0` and `N` in an interval of
//! length `h`. After `k` compositions the lattice sum is the bucket pair's loss plus a
//! conditionally centred noise, sub-Gaussian with variance proxy `k·h²/4` (Hoeffding's lemma),
//! which `curve.rs` turns into a lower bound whose error is `O(k·h²)`, not the `O(h√k)` of
//! rounding every loss down. Where `ℓ_i` cannot be computed to `1e-7` (far tails at fine
//! steps) the bucket is left out (which only lowers the bound) and its Q-mass is counted in
//! `q_loose`.

use super::loss::Loss;

/// Both discretisations of one mechanism on the nodes `(start + i)·h`, `i < len`.
#[derive(Clone, Debug)]
pub(crate) struct Discretised {
    /// Lattice step.
    pub h: f64,
    /// Lattice index of entry 0.
    pub start: i64,
    /// Connect-the-dots masses: each bucket's P-mass split between its two nodes so that
    /// both its P-mass and its Q-mass are kept, with the Q-mass shaded down by its
    /// round-off allowance (which moves mass up: more pessimistic). The mass below the
    /// lattice sits on the lowest node, the mass above it at +∞ (`pess_inf`).
    pub pess: Vec<f64>,
    /// Mass at +∞ of the pessimistic PMF.
    pub pess_inf: f64,
    /// The mean-preserving rounding of the bucket pair's losses (P-masses; the mass
    /// outside the lattice dropped).
    pub opt: Vec<f64>,
    /// Bound on `|E[N | i]|` over the buckets split by their computed loss (the round-off
    /// of `ℓ_i` and of the split).
    pub bias: f64,
    /// The mean of that bound over the split buckets, under P and under Q (the larger).
    pub bias_mean: f64,
    /// Upper bound on the Q-mass of the outcomes not split by their loss: the tails off
    /// the lattice, the buckets too small to carry, and those whose loss is not known well.
    pub q_loose: f64,
    /// Bound on the relative round-off of any entry of `pess` or `opt`.
    pub rho: f64,
}

/// Relative accuracy a bucket's loss must have to be split by it in `opt`; the others are
/// dropped from `opt` and their Q-mass counted in `q_loose` (far-tail buckets at fine steps,
/// whose masses are tiny).
const RELIABLE: f64 = 1e-7;

/// Masses below this are moved to +∞ (pessimistic) or dropped (optimistic) rather than
/// carried with a meaningless relative error.
const TINY: f64 = 1e-280;

/// Discretise `loss` at step `h`, the lattice covering all but `tail` of P on each side;
/// `None` if it would need more than `max_len` nodes.
pub(crate) fn discretise(loss: Loss, h: f64, tail: f64, max_len: usize) -> Option<Discretised> {
    if let Loss::BarkerTest { n, batch_size } = loss {
        // known through its privacy profile only: connect-the-dots from the profile
        let (b, n) = (batch_size as f64, n as f64);
        let (_, top) = loss.range(tail);
        return super::profile::discretise_profile(
            |e| super::barker::amplified_delta(e, b, n),
            top,
            h,
            max_len,
        );
    }
    let (lo, hi) = loss.range(tail);
    let i_lo = (lo / h).floor();
    let mut i_hi = (hi / h).ceil();
    if i_hi <= i_lo {
        i_hi = i_lo + 1.0;
    }
    let len = i_hi - i_lo + 1.0;
    if len.is_nan() || len > max_len as f64 {
        return None;
    }
    let (start, len) = (i_lo as i64, len as usize);
    let mut ls = Vec::with_capacity(len + 2);
    ls.push(f64::NEG_INFINITY);
    ls.extend((0..len).map(|i| (start + i as i64) as f64 * h));
    ls.push(f64::INFINITY);
    let buckets = loss.buckets(&ls);
    let (below, above) = (buckets[0], buckets[len]);

    let mut pess = vec![0.0; len];
    let mut opt = vec![0.0; len];
    let mut pess_inf = above.p;
    let mut rho: f64 = 0.0;
    let (mut bias, mut q_loose): (f64, f64) =
        (0.0, below.q + above.q + 2.0 * (below.err + above.err));
    let u = f64::EPSILON / 2.0;
    let (mut bias_p, mut bias_q) = (0.0, 0.0);
    if below.p >= TINY {
        pess[0] += below.p;
        rho = rho.max(below.err / below.p);
    } else {
        pess_inf += below.p;
    }
    let e_h = (-h).exp();
    let one_minus = -(-h).exp_m1();
    for (i, b) in buckets[1..len].iter().enumerate() {
        if b.p < TINY {
            pess_inf += b.p;
            q_loose += b.q + b.err;
            continue;
        }
        let rel_p = b.err / b.p;
        rho = rho.max(rel_p);
        // r = E_P[e^{−(L − a)} | bucket] ∈ [e^{−h}, 1], a = the bucket's lower node; an
        // underflowed Q-mass leaves r unknown: all mass on the upper node, no mean credit
        let (r, rel_r) = if b.q > 0.0 {
            let r = b.q / b.p * ((start + i as i64) as f64 * h).exp();
            (r, rel_p + b.err / b.q + 4.0 * f64::EPSILON)
        } else {
            (1.0, f64::INFINITY)
        };
        let r_pess = (r * (1.0 - rel_r)).clamp(e_h, 1.0);
        let low = (b.p * (r_pess - e_h) / one_minus).clamp(0.0, b.p);
        pess[i] += low;
        pess[i + 1] += b.p - low;
        // r = e^{−(ℓ − a)}: the share on the upper node is t = (ℓ − a)/h = −ln(r)/h
        if rel_r <= RELIABLE {
            let t = (-r.ln() / h).clamp(0.0, 1.0);
            // both shares with relative round-off ≤ 2u (not `b.p − up`, which cancels)
            opt[i] += b.p * (1.0 - t);
            opt[i + 1] += b.p * t;
            // |Δℓ| ≤ rel_r/(1 − rel_r) from the masses, plus the round-off of ln, /h, ·p
            let a = ((start + i as i64) as f64 * h).abs();
            let beta = 1.01 * rel_r + 8.0 * u * (a + h + (-r.ln()).abs());
            bias = bias.max(beta);
            bias_p += b.p * beta;
            bias_q += (b.q + b.err) * beta;
        } else {
            // dropped (which only lowers the optimistic curve); its Q-mass is counted
            q_loose += b.q + b.err;
        }
    }
    // masses sum to at most 1 (to round-off): the weighted sums bound the means
    let bias_mean = bias_p.max(bias_q) * (1.0 + 1e-9);
    Some(Discretised {
        h,
        start,
        pess,
        pess_inf: pess_inf.min(1.0),
        opt,
        bias,
        q_loose: q_loose * (1.0 + 1e-12),
        rho: rho + 4.0 * f64::EPSILON,
        bias_mean: bias_mean * (1.0 + 1e-12),
    })
}

#[cfg(test)]
impl Discretised {
    /// `δ(ε)` of the pessimistic PMF (with its mass at +∞), for tests.
    pub(crate) fn pess_delta(&self, eps: f64) -> f64 {
        let mut s = self.pess_inf;
        for (i, &p) in self.pess.iter().enumerate() {
            let l = (self.start + i as i64) as f64 * self.h;
            if l > eps {
                s += p * (1.0 - (eps - l).exp());
            }
        }
        s
    }
}
