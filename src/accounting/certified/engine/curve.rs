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
//! * **Lower bound**: the optimistic array is the mean-preserving rounding of the bucket
//!   pair (`discretise.rs`): its lattice sum is `S = L' + N`, `L'` the loss of the composed
//!   bucket pair (dominated by the mechanism, so `δ(ε) ≥ δ'(ε) = E f_ε(L')`) and `N = N₀ + B`
//!   with `N₀` conditionally centred and sub-Gaussian with variance proxy `s² = k·h²/4`
//!   (Hoeffding's lemma) and `B ≤ β` (`bias`). Two bounds, the better one is taken:
//!   - *first order* (Hoeffding): `L' ≥ S − t − β` except with probability `η`,
//!     `t = s·√(2 ln(1/η))`, so `δ(ε) ≥ E f_ε(S − t − β) − η = δ_S(ε + t + β) − η`; its
//!     error grows as `h√k`;
//!   - *second order*: `f_ε = max(0, g)` with `g(x) = 1 − e^{ε−x}` concave, so for fixed `l`
//!     `E f_ε(l + N₀) ≤ f_ε(l) + g'(l)·∫_c^∞ P(±N₀ > u) du`, `c = |e^{l−ε} − 1|`, and
//!     `δ(ε) ≥ δ_S(ε + β) − e^ε·E_{Q'}[Ḡ(|e^{L'−ε} − 1|)]` with
//!     `Ḡ(c) = s√(π/2)·erfc(c/(s√2))`. The expectation under the bucket pair's Q is bounded
//!     through `S`: with `ρ = 2.5s`, `Ḡ(L') ≤ E[φ̂(S)·1{|N₀| ≤ ρ} | L']/(1 − 2e^{−ρ²/2s²})`
//!     (`φ̂` the supremum over `±(ρ + β)`) and `e^{−L'} ≤ e^{−S + ρ + β}` on that event; from
//!     the same composed array (entries near ε, with their round-off), the lattice's
//!     `E_P[e^{−S}]` beyond them, and the Q-mass of the outcomes not split by their loss or
//!     with `|B| > β`. Its error is `O(k·h²)`: the same accuracy at a lattice step about
//!     `1/√(kh²)` times coarser.
//!
//!   Both are computed from the composed array with its round-off subtracted.

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
    /// lower bound of the computed optimistic curve, allowances subtracted).
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

    /// Sub-Gaussian scale `s = h·√k/2` of the optimistic rounding's centred noise.
    fn noise_scale(&self) -> f64 {
        0.5 * self.h * self.count.sqrt()
    }

    /// Bound on `|B|`, the total conditional mean of the optimistic rounding, except with
    /// probability `eta` (under P and under Q).
    fn bias(&self, eta: f64) -> f64 {
        self.bias_mean + self.bias_max * (self.count * (1.0 / eta).ln() / 2.0).sqrt()
    }

    /// The first-order shift `t(η) + β(η)`: `L' ≥ S − shift` except with probability `2η`.
    fn shift(&self, eta: f64) -> f64 {
        self.noise_scale() * (2.0 * (1.0 / eta).ln()).sqrt() + self.bias(eta)
    }

    /// The second-order bound's bias allowance `(β, η_b)` at the scale of the answer:
    /// `|B| ≤ β` except with probability `η_b = 1e-6·scale`.
    fn second_order_bias(&self, scale: f64) -> (f64, f64) {
        let eta_b = 1e-6 * scale;
        (self.bias(eta_b), eta_b)
    }

    /// An upper bound on `sup_{ε ∈ [ea, eb]} e^{ε}·E_{Q'}[Ḡ(|e^{L'−ε} − 1|)]` (module docs)
    /// given `|B| ≤ beta` except with probability `eta_b`, whose own slack is at most
    /// `2e-6·scale` plus the unsplit outcomes' share; `∞` where the nodes that matter are not
    /// all inside the composed window.
    fn gap(&self, ea: f64, eb: f64, scale: f64, (beta, eta_b): (f64, f64)) -> f64 {
        let s = self.noise_scale();
        let usable = s > 0.0 && scale > 0.0 && eb >= ea;
        if !usable {
            return f64::INFINITY;
        }
        let g0 = s * (std::f64::consts::PI / 2.0).sqrt();
        let budget = 1e-6 * scale;
        let ln_z = self.ln_z_opt + self.rel.ln_1p();
        // ψ(L') ≤ E[φ̂(S)·1{|N₀| ≤ ρ} | outcomes]/c_ρ, ρ = 2.5s: φ̂ takes the sup over ±(ρ + β)
        let rho = 2.5 * s;
        let c_rho = 1.0 - 2.0 * (-rho * rho / (2.0 * s * s)).exp();
        let reach = rho + beta;
        // nodes whose φ̂ is below `thr` add at most e^{eb+R}·thr·E_P[e^{−S}]/c_ρ = budget
        let thr = budget * c_rho * (-(eb + reach + ln_z)).exp();
        let erfc_at = |c: f64| g0 * libm::erfc(c / (s * std::f64::consts::SQRT_2));
        // c* with Ḡ(c*) = thr (Ḡ decreasing), by bisection
        let c_star = if thr >= g0 {
            0.0
        } else {
            let (mut lo, mut hi) = (0.0, s);
            while erfc_at(hi) > thr {
                hi *= 2.0;
            }
            for _ in 0..80 {
                let mid = 0.5 * (lo + hi);
                if erfc_at(mid) > thr {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        // ψ(u) = Ḡ(|e^u − 1|) ≥ thr exactly for u in [u_lo, u_hi]
        let u_hi = c_star.ln_1p();
        let u_lo = if c_star < 1.0 {
            (-c_star).ln_1p()
        } else {
            f64::NEG_INFINITY
        };
        // φ̂(x) = sup ψ over u ∈ [x − R − eb, x + R − ea] is ≥ thr only for x in [xa, xb]
        let (xa, xb) = (ea + u_lo - reach, eb + u_hi + reach);
        let (p, ln_scale, lo) = self.array(Side::Opt);
        let (top, bottom) = ((lo + p.len() as i64) as f64 * self.h, lo as f64 * self.h);
        if xa < bottom || xb > top {
            return f64::INFINITY;
        }
        let psi = |u: f64| erfc_at(u.exp_m1().abs());
        let (mut sum, mut w2) = (0.0, 0.0);
        let first = ((xa / self.h).floor() as i64).max(lo);
        let last = ((xb / self.h).ceil() as i64).min(lo + p.len() as i64 - 1);
        for j in first..=last {
            let x = j as f64 * self.h;
            let (a, b) = (x - reach - eb, x + reach - ea);
            let phi = if a <= 0.0 && 0.0 <= b {
                g0
            } else if b < 0.0 {
                psi(b)
            } else {
                psi(a)
            };
            // W_x = e^{ln_scale − λx}·e^{eb − x + R}·φ̂(x) in the tilted array's units
            let w = (ln_scale - self.lambda * x + eb - x + reach).exp() * phi;
            sum += p[(j - lo) as usize].max(0.0) * w;
            w2 += w * w;
        }
        let inside = (1.0 + self.rel) * (sum + self.err_l2 * w2.sqrt()) / c_rho * (1.0 + 1e-12);
        // the unsplit outcomes and those with |B| > β (probability ≤ η_b under Q)
        let loose = eb.exp() * g0 * (self.q_loose + eta_b);
        let out = inside + budget + loose;
        if out.is_nan() { f64::INFINITY } else { out }
    }

    /// `(lower, upper)` bounds on δ(ε).
    pub(crate) fn delta_bounds(&self, eps: f64) -> (f64, f64) {
        let upper = self.delta_side(Side::Pess, eps);
        let mut lower: f64 = 0.0;
        // second order: B ≤ β except with probability η_b, which costs η_b
        let (beta, eta_b) = self.second_order_bias(upper);
        if eta_b > 0.0 {
            let gap = self.gap(eps, eps, upper, (beta, eta_b));
            if gap.is_finite() {
                lower = lower.max(self.delta_side(Side::Opt, eps + beta) - gap - eta_b);
            }
        }
        for f in ETA_FRACTIONS {
            let eta = f * upper;
            if eta <= 0.0 {
                continue;
            }
            lower = lower.max(self.delta_side(Side::Opt, eps + self.shift(eta)) - 2.0 * eta);
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

    /// Largest ε' at which the computed optimistic curve (allowances subtracted) exceeds
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
    ///
    /// A lower bound ε' needs `δ(ε') > δ`: first order, the crossing `c` of the optimistic
    /// curve at `δ + η` gives `ε' = c − t(η) − β`; second order, with `G` the gap's supremum
    /// over the candidates `[ea, x0]` (`x0` the crossing at `δ` itself), the crossing at
    /// `δ + G` gives `ε' = c − β`, valid when it lands in `[ea, x0]`.
    pub(crate) fn epsilon_bounds(&self, delta: f64) -> (f64, f64) {
        let upper = self.epsilon_upper(delta);
        let mut lower: f64 = 0.0;
        for f in ETA_FRACTIONS {
            let eta = f * delta;
            if let Some(e) = self.opt_crossing(delta + 2.0 * eta) {
                lower = lower.max(e - self.shift(eta));
            }
        }
        let (beta, eta_b) = self.second_order_bias(delta);
        if let Some(c0) = self.opt_crossing(delta) {
            let x0 = c0 - beta;
            // a narrow range of candidates first (the gap is second order), then all of them
            for ea in [x0 - 0.25 * (x0 - lower), lower] {
                let candidates = x0 > ea;
                if !candidates {
                    continue;
                }
                let gap = self.gap(ea, x0, delta, (beta, eta_b)) + eta_b;
                if !gap.is_finite() {
                    continue;
                }
                if let Some(c) = self.opt_crossing(delta + gap) {
                    let e2 = c - beta;
                    if e2 >= ea {
                        lower = lower.max(e2);
                        break;
                    }
                }
            }
        }
        (lower.max(0.0).min(upper), upper)
    }
}
