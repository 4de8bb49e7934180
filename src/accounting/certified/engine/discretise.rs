//! One mechanism's privacy loss distribution on the lattice `h·ℤ`, twice: the pessimistic
//! connect-the-dots PMF (Doroshenko et al. 2022, Algorithm 1) and the rounded-down
//! ("privacy buckets") PMF the lower bound is computed from.

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
    /// Each bucket's P-mass on its lower node; the mass outside the lattice dropped.
    pub opt: Vec<f64>,
    /// Lower bound on `E[L − ⌊L/h⌋·h]` over all outcomes (Jensen: within a bucket,
    /// `E[Y] ≥ −ln E[e^{−Y}]`, and `E_P[e^{−(L−a)}; bucket] = e^{a}·Q(bucket)`).
    pub m_lo: f64,
    /// Bound on the relative round-off of any entry of `pess` or `opt`.
    pub rho: f64,
}

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
    let mut m_lo = 0.0;
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
        opt[i] = b.p;
        let r_opt = (r * (1.0 + rel_r)).min(1.0);
        m_lo += b.p * (-r_opt.ln()).max(0.0);
    }
    Some(Discretised {
        h,
        start,
        pess,
        pess_inf: pess_inf.min(1.0),
        opt,
        m_lo: m_lo * (1.0 - 1e-12),
        rho: rho + 4.0 * f64::EPSILON,
    })
}
