//! DP Barker accounting (thesis Theorem 7; `exact_rdp.py` of the thesis code, THESIS-NOTES §8),
//! and the exact alternative `rdp-exact` ([`BarkerBound::Exact`], `exact.rs`).
//!
//! The per-step RDP of the Barker test with the Gaussian-plus-correction noise is bounded by
//! `rd_approx`, `ε′(α) = 5/(2b) + ln(2b/(b−5α))/(2(α−1)) + 2α/(b−5α)` (valid for `5α < b`), then
//! amplified by sampling the batch without replacement with WBK19 Theorem 9 (sum to `j = α`).
//! Orders `α ∈ {3, …, ⌊b/5⌋−1}` are scanned; as in the thesis code the scan stops at the first α
//! whose largest term `e^{(α−1)ε′(α)}` would overflow an f64, i.e. `(α−1)ε′(α) > ln(f64::MAX)`
//! (α = 231 for b = 1300). Stopping earlier only drops valid orders, so it is conservative;
//! for the same reason orders above [`MAX_ORDER`] = 1024 are not scanned (the thesis' batch
//! sizes stop far below it; without the cap a huge batch would scan billions of orders).
//! [`BarkerBound::Exact`] replaces `rd_approx` by the exact supremum of the per-step divergence
//! ([`barker_rd_exact`](super::barker_rd_exact)) and keeps everything else: the same
//! amplification, the same scan and overflow stop (reached later, being smaller: α = 236 for
//! b = 1300, so its orders are a superset of Theorem 7's), the same conversion.

pub(crate) mod exact;

use crate::accounting::rdp::bounds::wbk_thm9;
use crate::error::{Error, Result, check};
use exact::rd_exact;

/// Largest order α scanned by [`BarkerRdp`].
const MAX_ORDER: u64 = 1024;

/// `rd_approx`: the per-step RDP bound ε′(α) of the DP Barker test with batch size `b`
/// (thesis Theorem 7). Requires `5α < b`.
///
/// # Errors
/// `alpha` must be finite, > 1 and < b/5; `batch_size` ≥ 1.
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::barker_rd_approx;
/// // thesis code rd_approx (THESIS-NOTES §16): α = 10, b = 1300 → 0.05861018212936729
/// assert!((barker_rd_approx(10.0, 1300)? - 0.05861018212936729).abs() < 1e-15);
/// assert!(barker_rd_approx(300.0, 1300).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
pub fn barker_rd_approx(alpha: f64, batch_size: u64) -> Result<f64> {
    check::at_least_one("batch_size", batch_size as usize)?;
    let b = batch_size as f64;
    if !(alpha.is_finite() && alpha > 1.0 && 5.0 * alpha < b) {
        return Err(Error::invalid(
            "alpha",
            alpha,
            format!("must be > 1 and < batch_size/5 = {}", b / 5.0),
        ));
    }
    Ok(rd_approx(alpha, b))
}

fn rd_approx(alpha: f64, b: f64) -> f64 {
    5.0 / (2.0 * b)
        + (2.0 * b / (b - 5.0 * alpha)).ln() / (2.0 * (alpha - 1.0))
        + 2.0 * alpha / (b - 5.0 * alpha)
}

/// Which per-step divergence bound of the DP Barker test the RDP accounting uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BarkerBound {
    /// Thesis Theorem 7 (`rd_approx`), as the thesis code: the default.
    #[default]
    Theorem7,
    /// `rdp-exact`: the exact supremum of the Gaussian Rényi divergence over the feasible
    /// family of batch pairs ([`barker_rd_exact`](super::barker_rd_exact); derivation in
    /// `docs/ACCOUNTING.md`).
    Exact,
}

impl BarkerBound {
    /// The bound an iteration-budget [`AccountantKind`](super::AccountantKind) selects: `Rdp` → Theorem 7,
    /// `RdpExact` → exact; `None` for a method DP Barker does not support.
    pub(crate) fn of_method(method: super::AccountantKind) -> Option<Self> {
        match method {
            super::AccountantKind::Rdp => Some(BarkerBound::Theorem7),
            super::AccountantKind::RdpExact => Some(BarkerBound::Exact),
            _ => None,
        }
    }

    /// The per-step divergence `ε′(α)` at batch size `b` (`5α < b` for Theorem 7).
    fn per_step(self, alpha: f64, b: f64) -> f64 {
        match self {
            BarkerBound::Theorem7 => rd_approx(alpha, b),
            BarkerBound::Exact => rd_exact(alpha, b),
        }
    }
}

/// Per-step RDP of DP Barker on the scanned orders; `ε(k)` for any number of steps.
#[derive(Clone, Debug)]
pub struct BarkerRdp {
    orders: Vec<f64>,
    step_rdp: Vec<f64>,
    batch_size: u64,
    n: u64,
    bound: BarkerBound,
}

impl BarkerRdp {
    /// Per-step RDP of DP Barker with batch size `batch_size` out of `n` rows (q = b/n).
    ///
    /// # Errors
    /// `n ≥ 1`, `1 ≤ batch_size ≤ n`, and `batch_size ≥ 20` (so that at least the order α = 3
    /// satisfies `5α < b`).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::BarkerRdp;
    /// let acc = BarkerRdp::new(1300, 100_000)?;
    /// // thesis code (THESIS-NOTES §16): 106 iterations, δ = 1e-6 → ε = 0.9971899091727385
    /// assert!((acc.epsilon(106.0, 1e-6)?.0 - 0.9971899091727385).abs() < 1e-12);
    /// assert!(BarkerRdp::new(2000, 1000).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new(batch_size: u64, n: u64) -> Result<Self> {
        Self::with_bound(batch_size, n, BarkerBound::Theorem7)
    }

    /// [`BarkerRdp::new`] with the per-step bound `bound`, on the same orders.
    ///
    /// # Errors
    /// As [`BarkerRdp::new`].
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{BarkerBound, BarkerRdp};
    /// let thm7 = BarkerRdp::new(1300, 100_000)?;
    /// let exact = BarkerRdp::with_bound(1300, 100_000, BarkerBound::Exact)?;
    /// // the exact divergence spends far less ε on the thesis' 106 iterations
    /// let (e7, ex) = (thm7.epsilon(106.0, 1e-6)?.0, exact.epsilon(106.0, 1e-6)?.0);
    /// assert!(ex < e7 / 2.0, "{ex} vs {e7}");
    /// assert!(BarkerRdp::with_bound(19, 100_000, BarkerBound::Exact).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn with_bound(batch_size: u64, n: u64, bound: BarkerBound) -> Result<Self> {
        check::at_least_one("n", n as usize)?;
        check::at_least_one("batch_size", batch_size as usize)?;
        if batch_size > n {
            return Err(Error::invalid(
                "batch_size",
                batch_size,
                format!("must not exceed n = {n}"),
            ));
        }
        let b = batch_size as f64;
        let a_max = batch_size / 5;
        if a_max < 4 {
            return Err(Error::invalid(
                "batch_size",
                batch_size,
                "must be at least 20 (Theorem 7 needs an order 3 < batch_size/5)",
            ));
        }
        let q = b / n as f64;
        let (mut orders, mut step_rdp) = (Vec::new(), Vec::new());
        let ln_max = f64::MAX.ln();
        for alpha in 3..a_max.min(MAX_ORDER + 1) as u32 {
            let a = f64::from(alpha);
            if (a - 1.0) * bound.per_step(a, b) > ln_max {
                break; // the thesis code's overflow break (THESIS-NOTES §8)
            }
            let e = wbk_thm9(q, alpha, alpha, |j| bound.per_step(j, b));
            if !e.is_finite() {
                break;
            }
            orders.push(a);
            step_rdp.push(e);
        }
        Ok(BarkerRdp {
            orders,
            step_rdp,
            batch_size,
            n,
            bound,
        })
    }

    /// The scanned orders and the per-step RDP at each.
    pub fn per_step(&self) -> (&[f64], &[f64]) {
        (&self.orders, &self.step_rdp)
    }

    /// `(ε, optimal order)` after `steps` (real, ≥ 0) iterations at `delta`, with the thesis'
    /// Theorem 1 conversion `k·ε_step(α) + ln(1/δ)/(α−1)` minimised over the scanned orders.
    ///
    /// # Errors
    /// `steps` finite ≥ 0; `delta` in (0, 1).
    pub fn epsilon(&self, steps: f64, delta: f64) -> Result<(f64, f64)> {
        let k = check::non_negative("steps", steps)?;
        let delta = check::delta("delta", delta)?;
        Ok(self.epsilon_unchecked(k, delta))
    }

    pub(crate) fn epsilon_unchecked(&self, k: f64, delta: f64) -> (f64, f64) {
        let mut best = (f64::INFINITY, f64::NAN);
        for (&a, &e) in self.orders.iter().zip(&self.step_rdp) {
            let tot = k * e - delta.ln() / (a - 1.0);
            if tot < best.0 {
                best = (tot, a);
            }
        }
        best
    }

    /// The per-step RDP at order `alpha`: the scanned value, +∞ at an order not scanned.
    pub(crate) fn step_rdp_at(&self, alpha: f64) -> f64 {
        self.orders
            .iter()
            .position(|&a| a == alpha)
            .map_or(f64::INFINITY, |i| self.step_rdp[i])
    }

    /// Batch size b.
    pub fn batch_size(&self) -> u64 {
        self.batch_size
    }

    /// Number of rows n.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The per-step bound in use.
    pub fn bound(&self) -> BarkerBound {
        self.bound
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;

    #[test]
    fn rd_approx_spec_values() {
        // thesis code rd_approx, b = 1300 (THESIS-NOTES §16)
        for (a, want) in [
            (2.0, 0.3554584654438032),
            (3.0, 0.18278051929352934),
            (10.0, 0.05861018212936729),
            (100.0, 0.2578758799349034),
            (259.0, 103.61404290020131),
        ] {
            let got = rd_approx(a, 1300.0);
            assert!(((got - want) / want).abs() < 1e-13, "α={a}: {got}");
        }
    }

    #[test]
    fn break_point() {
        // THESIS-NOTES §8: the scan stops before α = 231 (b = 1300) and α = 421 (b = 2600)
        let a = BarkerRdp::new(1300, 100_000).unwrap();
        assert_eq!(*a.per_step().0.last().unwrap(), 230.0);
        let a = BarkerRdp::new(2600, 200_000).unwrap();
        assert_eq!(*a.per_step().0.last().unwrap(), 420.0);
        // the exact curve overflows later: (α−1)ε′(α) > ln(f64::MAX) first at α = 236 and 429
        // (an independent double-precision evaluation of the closed form)
        let a = BarkerRdp::with_bound(1300, 100_000, BarkerBound::Exact).unwrap();
        assert_eq!(*a.per_step().0.last().unwrap(), 235.0);
        let a = BarkerRdp::with_bound(2600, 200_000, BarkerBound::Exact).unwrap();
        assert_eq!(*a.per_step().0.last().unwrap(), 428.0);
    }

    #[test]
    fn epsilon_spec_values() {
        // thesis code barker_rdp_epsilon, δ = 0.1/n (THESIS-NOTES §16)
        let a = BarkerRdp::new(1300, 100_000).unwrap();
        for (k, want) in [
            (106.0, 0.9971899091727385),
            (1687.0, 3.999073763770259),
            (3640.0, 5.999882045598124),
            (1000.0, 3.0537517163606047),
        ] {
            let got = a.epsilon(k, 1e-6).unwrap().0;
            assert!(((got - want) / want).abs() < 1e-12, "k={k}: {got}");
        }
        let a = BarkerRdp::new(2600, 200_000).unwrap();
        let got = a.epsilon(1632.0, 5e-7).unwrap().0;
        assert!(((got - 3.999040120313672) / got).abs() < 1e-12, "{got}");
        // THESIS-NOTES §8: k = 1 with the break gives 0.076554
        let a = BarkerRdp::new(1300, 100_000).unwrap();
        assert!((a.epsilon(1.0, 1e-6).unwrap().0 - 0.076554).abs() < 5e-6);
    }
}
