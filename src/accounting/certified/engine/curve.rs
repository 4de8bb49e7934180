//! Certified bounds on δ(ε) and ε(δ) from a [`Composed`] pair of PMFs.
//!
//! With `f_ε(s) = (1 − e^{ε−s})₊` (increasing in s) and `S` the composed privacy loss,
//! `δ(ε) = E f_ε(S)`. For a lattice PMF and `ε ∈ [jh, (j+1)h)`,
//! `δ(ε) = Σ_{s>j} p_s − e^{ε}·Σ_{s>j} p_s e^{−sh}`; in tilted units this is
//! `K_j·(A_j − e^{ε−jh}·B_j)` with `K_j = exp(ln_scale − λjh)`,
//! `A_j = Σ_{s>j} p̃_s e^{−λ(s−j)h}` and `B_j = Σ_{s>j} p̃_s e^{−(λ+1)(s−j)h}`, sums of
//! non-negative terms computed from the top down (`A_{j−1} = e^{−λh}(p̃_j + A_j)`).
//!
//! * **Upper bound**: the connect-the-dots PMF dominates the mechanism, and domination is
//!   kept by composition (Zhu, Dong and Wang 2022), so its δ is an upper bound; we add the
//!   mass at +∞, the round-off (`err_l2·‖w‖₂` for the weights `w_s ≤ 1` of the entries above
//!   j, by Cauchy–Schwarz, plus the relative error `rel`) and the tilted mass outside the
//!   window (`2τ`, aliased in or lost above).
//! * **Lower bound**: rounding every loss down gives `S̃ = S − E`, `E = Σ e_i` a sum of
//!   independent rounding errors in `[0, h)` with mean at least `m_lo`. By Hoeffding,
//!   `E ≥ m_lo − t` except with probability `η`, `t = h·√(n·ln(1/η)/2)`, so
//!   `δ(ε) = E f_ε(S̃ + E) ≥ E f_ε(S̃ + m_lo − t) − η`, which the composed rounded-down PMF
//!   (with its dropped tails, dropping only lowers it) bounds from below after subtracting
//!   its round-off. The best of three values of η is taken, and of the unshifted curve
//!   (`E ≥ 0`), which is the better one for few compositions.

use super::compose::Composed;

/// Failure probabilities η of the Hoeffding bound, as fractions of the value's scale.
const ETA_FRACTIONS: [f64; 3] = [1e-4, 1e-3, 1e-2];

/// Which composed array.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Pess,
    Opt,
}

impl Composed {
    fn array(&self, side: Side) -> (&[f64], f64, i64) {
        match side {
            Side::Pess => (&self.pess, self.ln_scale_pess, self.lo_pess),
            Side::Opt => (&self.opt, self.ln_scale_opt, self.lo_opt),
        }
    }

    /// `‖w‖₂` bound for the weights of the `count` entries above a node.
    fn weight_norm(&self, count: usize) -> f64 {
        let geometric = if self.lambda > 0.0 {
            1.0 / (-(-2.0 * self.lambda * self.h).exp_m1()).sqrt()
        } else {
            f64::INFINITY
        };
        (count as f64).sqrt().min(geometric)
    }

    /// `(K_j, A_j, B_j, allowance_j)` at every node `j` from the top of the window down
    /// to `stop` (inclusive), in decreasing j, until `visit` returns false.
    fn scan(&self, side: Side, stop: i64, mut visit: impl FnMut(i64, f64, f64, f64, f64) -> bool) {
        let (p, ln_scale, lo) = self.array(side);
        let (da, db) = (
            (-self.lambda * self.h).exp(),
            (-(self.lambda + 1.0) * self.h).exp(),
        );
        let (mut a, mut b) = (0.0, 0.0);
        let top = lo + p.len() as i64 - 1;
        let mut j = top;
        while j >= stop {
            let k = (ln_scale - self.lambda * j as f64 * self.h).exp();
            let allow = self.err_l2 * self.weight_norm((top - j) as usize) + 2.0 * self.tau;
            if !visit(j, k, a, b, allow) {
                return;
            }
            if j >= lo {
                let v = p[(j - lo) as usize];
                a = da * (v + a);
                b = db * (v + b);
            } else {
                a *= da;
                b *= db;
            }
            j -= 1;
        }
    }

    /// δ at `eps` of one side (pessimistic: upper bound incl. allowances; optimistic:
    /// lower bound of the computed rounded-down curve, allowances subtracted).
    fn delta_side(&self, side: Side, eps: f64) -> f64 {
        let j = (eps / self.h).floor() as i64;
        if side == Side::Pess && j < self.lo_pess {
            // entries below the window would count: no certified upper bound here
            return 1.0;
        }
        let mut out = 0.0;
        self.scan(side, j, |node, k, a, b, allow| {
            if node > j {
                return true;
            }
            let y = (eps - node as f64 * self.h).exp();
            let core = (a - y * b).max(0.0);
            out = match side {
                Side::Pess => self.pess_inf + k * (core * (1.0 + self.rel) + allow),
                Side::Opt => k * (core * (1.0 - self.rel) - allow),
            };
            false
        });
        if out.is_nan() {
            out = if side == Side::Pess { 1.0 } else { 0.0 };
        }
        out.clamp(0.0, 1.0)
    }

    /// Hoeffding shift `m_lo − t(η)`.
    fn shift(&self, eta: f64) -> f64 {
        self.m_lo - self.h * (self.count * (1.0 / eta).ln() / 2.0).sqrt()
    }

    /// `(lower, upper)` bounds on δ(ε).
    pub(crate) fn delta_bounds(&self, eps: f64) -> (f64, f64) {
        let upper = self.delta_side(Side::Pess, eps);
        // E ≥ 0 always: the unshifted rounded-down curve is a lower bound too
        let mut lower: f64 = self.delta_side(Side::Opt, eps);
        for f in ETA_FRACTIONS {
            let eta = f * upper;
            if eta <= 0.0 {
                continue;
            }
            lower = lower.max(self.delta_side(Side::Opt, eps - self.shift(eta)) - eta);
        }
        (lower.min(upper), upper)
    }

    /// Smallest ε ≥ 0 with the upper δ bound ≤ `delta` (`∞` if none in the window).
    fn epsilon_upper(&self, delta: f64) -> f64 {
        let mut out = f64::INFINITY;
        let stop = self.lo_pess.max(0);
        let mut last_ok: Option<i64> = None;
        self.scan(Side::Pess, stop, |j, k, a, b, allow| {
            let at_node = self.pess_inf + k * ((a - b).max(0.0) * (1.0 + self.rel) + allow);
            if at_node <= delta {
                last_ok = Some(j);
                return true;
            }
            // crossing inside [jh, (j+1)h): solve pess_inf + k((a − yb)(1+rel) + allow) = δ
            if last_ok.is_some() && b > 0.0 {
                let target = ((delta - self.pess_inf) / k - allow) / (1.0 + self.rel);
                let y = ((a - target) / b).clamp(1.0, self.h.exp());
                out = j as f64 * self.h + y.ln();
            } else if last_ok.is_some() {
                out = (j + 1) as f64 * self.h;
            }
            false
        });
        // every scanned node passed: the crossing is at or below the window's start
        if out.is_infinite() && last_ok == Some(stop) {
            out = (stop as f64 * self.h).max(0.0);
        }
        out.max(0.0)
    }

    /// Largest ε' at which the computed rounded-down curve (allowances subtracted) exceeds
    /// `target`; `None` if it never does.
    fn opt_crossing(&self, target: f64) -> Option<f64> {
        let mut out = None;
        self.scan(Side::Opt, self.lo_opt, |j, k, a, b, allow| {
            let at_node = k * ((a - b).max(0.0) * (1.0 - self.rel) - allow);
            if at_node > target {
                let want = (target / k + allow) / (1.0 - self.rel);
                let y = if b > 0.0 {
                    ((a - want) / b).clamp(1.0, self.h.exp())
                } else {
                    1.0
                };
                out = Some(j as f64 * self.h + y.ln());
                return false;
            }
            true
        });
        out
    }

    /// `(lower, upper)` bounds on ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.
    pub(crate) fn epsilon_bounds(&self, delta: f64) -> (f64, f64) {
        let upper = self.epsilon_upper(delta);
        let mut lower: f64 = self.opt_crossing(delta).unwrap_or(0.0);
        for f in ETA_FRACTIONS {
            let eta = f * delta;
            if let Some(e) = self.opt_crossing(delta + eta) {
                lower = lower.max(e + self.shift(eta));
            }
        }
        (lower.max(0.0).min(upper), upper)
    }
}
