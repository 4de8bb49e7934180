//! A privacy loss PMF on the lattice `h·ℤ` with the mass it dropped carried explicitly, its
//! composition (direct or FFT convolution, self-composition by repeated squaring) and
//! `g(x) = Σ p_i (1 − e^{x − s_i})₊`, the hockey-stick sum at x.

use super::loss::Loss;
use crate::error::{Error, Result};
use rustfft::FftPlanner;
use rustfft::num_complex::Complex;

/// Mass the discretisation of one mechanism may drop from each tail; added to the upper
/// bound's `lost` term.
pub(crate) const TAIL: f64 = 1e-20;

/// Mass one convolution may drop from each tail (added to `lost`). It must sit above the
/// FFT's noise floor (~1e-16 of the largest entry, spread over every entry), or nothing is
/// ever truncated and the support doubles with every squaring; with ~2·log₂k convolutions
/// per leaf the total is ~1e-13, so δ values below ~1e-12 are dominated by it (the upper
/// bound stays valid, only loose).
pub(crate) const CONV_TAIL: f64 = 1e-15;

/// A sub-probability PMF at losses `s_i = (start + i)·h` from rounding every loss *up* to the
/// lattice, with `lost` ≥ the probability that some truncation dropped the outcome and
/// `round_off` ≥ the l1 error the floating-point convolutions may have made.
#[derive(Clone, Debug)]
pub(crate) struct Pmf {
    pub h: f64,
    pub start: i64,
    pub p: Vec<f64>,
    pub lost: f64,
    pub round_off: f64,
    /// Number of rounded mechanisms composed (for the Hoeffding term).
    pub count: f64,
    /// Bracket `[m_lo, m_hi]` of `Σ E[rounding error]` over the composed mechanisms.
    pub m_lo: f64,
    pub m_hi: f64,
}

/// `P(a < L ≤ b)` from the side whose tail is accurate, and an allowance for its absolute
/// round-off: 4e-15 × the two terms subtracted (the distribution functions are accurate to
/// ~1e-15 relative, see `special::erfc`).
fn bucket(loss: Loss, a: f64, b: f64) -> (f64, f64) {
    let (ca, sa) = loss.cdf_sf(a);
    let (cb, sb) = loss.cdf_sf(b);
    if sa < 0.5 {
        ((sa - sb).max(0.0), 4e-15 * (sa + sb))
    } else {
        ((cb - ca).max(0.0), 4e-15 * (ca + cb))
    }
}

impl Pmf {
    /// The point mass at loss 0 (nothing composed).
    pub(crate) fn identity(h: f64) -> Pmf {
        Pmf {
            h,
            start: 0,
            p: vec![1.0],
            lost: 0.0,
            round_off: 0.0,
            count: 0.0,
            m_lo: 0.0,
            m_hi: 0.0,
        }
    }

    /// Largest loss on the lattice.
    pub(crate) fn top(&self) -> f64 {
        (self.start + self.p.len() as i64 - 1) as f64 * self.h
    }

    /// Discretise `loss`: each outcome's loss rounded up to `h·ℤ`, both tails beyond
    /// [`TAIL`] dropped into `lost`; at most `max_len` points.
    pub(crate) fn discretise(loss: Loss, h: f64, max_len: usize) -> Result<Pmf> {
        let (mean, second, allowance) = loss.moments();
        let scale = second.sqrt().max(1e-6);
        let mut hi = mean + scale;
        while loss.cdf_sf(hi).1 > TAIL {
            hi = mean + 2.0 * (hi - mean);
        }
        let mut lo = mean - scale;
        while loss.cdf_sf(lo).0 > TAIL {
            lo = mean - 2.0 * (mean - lo);
        }
        let i_lo = (lo / h).floor() as i64;
        let i_hi = (hi / h).ceil() as i64;
        let len = (i_hi - i_lo) as usize;
        if len > max_len {
            return Err(over_budget(len, max_len));
        }
        let (p, errs): (Vec<f64>, Vec<f64>) = (i_lo + 1..=i_hi)
            .map(|i| bucket(loss, (i - 1) as f64 * h, i as f64 * h))
            .unzip();
        let lost = loss.cdf_sf(i_lo as f64 * h).0 + loss.cdf_sf(i_hi as f64 * h).1;
        // E[ceil(L) − L] over the kept range (the rounding error is defined as 0 outside):
        // Σ s_i p_i − E[L] + E[L; tails], |E[L; tails]| ≤ √(E[L²]·lost) (Cauchy–Schwarz).
        let mut sum = 0.0;
        let mut abs = 0.0;
        for (j, &pj) in p.iter().enumerate() {
            let s = (i_lo + 1 + j as i64) as f64 * h;
            sum += s * pj;
            abs += s.abs();
        }
        let slack = (second * lost).sqrt() + allowance + 4.0 * f64::EPSILON * abs + 1e-300;
        let m = sum - mean;
        Ok(Pmf {
            h,
            start: i_lo + 1,
            p,
            lost,
            round_off: errs.iter().sum(),
            count: 1.0,
            m_lo: (m - slack).max(0.0),
            m_hi: (m + slack).min(h),
        })
    }

    /// Composition (independent sum), truncating each tail beyond [`TAIL`] into `lost`;
    /// an error if the result would exceed `max_len` points.
    pub(crate) fn compose(&self, other: &Pmf, max_len: usize) -> Result<Pmf> {
        let len = self.p.len() + other.p.len() - 1;
        if len > max_len {
            return Err(over_budget(len, max_len));
        }
        let (p, err) = convolve(&self.p, &other.p);
        let mut out = Pmf {
            h: self.h,
            start: self.start + other.start,
            p,
            lost: self.lost + other.lost,
            round_off: self.round_off + other.round_off + err,
            count: self.count + other.count,
            m_lo: self.m_lo + other.m_lo,
            m_hi: self.m_hi + other.m_hi,
        };
        out.truncate();
        Ok(out)
    }

    /// `count`-fold self-composition by repeated squaring.
    pub(crate) fn power(&self, mut count: u64, max_len: usize) -> Result<Pmf> {
        let mut result = Pmf::identity(self.h);
        let mut base = self.clone();
        while count > 0 {
            if count & 1 == 1 {
                result = result.compose(&base, max_len)?;
            }
            count >>= 1;
            if count > 0 {
                base = base.compose(&base, max_len)?;
            }
        }
        Ok(result)
    }

    fn truncate(&mut self) {
        let mut front = 0;
        let mut cum = 0.0;
        while front + 1 < self.p.len() && cum + self.p[front] <= CONV_TAIL {
            cum += self.p[front];
            front += 1;
        }
        let mut back = self.p.len();
        let mut cum_b = 0.0;
        while back > front + 1 && cum_b + self.p[back - 1] <= CONV_TAIL {
            cum_b += self.p[back - 1];
            back -= 1;
        }
        self.lost += cum + cum_b;
        self.p.truncate(back);
        self.p.drain(..front);
        self.start += front as i64;
    }

    /// `g(x) = Σ p_i (1 − e^{x − s_i})₊` (kept mass only).
    pub(crate) fn g(&self, x: f64) -> f64 {
        let first = ((x / self.h).floor() as i64 + 1 - self.start).max(0) as usize;
        let mut sum = 0.0;
        for (j, &pj) in self.p.iter().enumerate().skip(first) {
            let s = (self.start + j as i64) as f64 * self.h;
            if s > x {
                sum -= pj * (x - s).exp_m1();
            }
        }
        sum
    }

    /// Smallest x (up to 1e-12 relative bisection) with `g(x) ≤ d`, `+∞` if `d < 0`.
    pub(crate) fn g_inv_upper(&self, d: f64) -> f64 {
        if d < 0.0 {
            return f64::INFINITY;
        }
        self.bisect(d).1
    }

    /// Largest x with `g(x) > d` (up to bisection), `−∞` if there is none.
    pub(crate) fn g_inv_lower(&self, d: f64) -> f64 {
        let (lo, _) = self.bisect(d);
        lo
    }

    /// Bracket `(lo, hi)` with `g(lo) > d ≥ g(hi)` (lo = −∞ if g ≤ d everywhere).
    fn bisect(&self, d: f64) -> (f64, f64) {
        let mut hi = self.top();
        let mut lo = self.start as f64 * self.h - 1.0;
        if self.g(lo) <= d {
            return (f64::NEG_INFINITY, lo);
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi || hi - lo <= 1e-13 * (1.0 + mid.abs()) {
                break;
            }
            if self.g(mid) > d {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo, hi)
    }
}

/// The (internal) error that stops refinement: the work budget is spent.
fn over_budget(len: usize, max_len: usize) -> Error {
    Error::Numerical {
        what: "certified PLD",
        reason: format!("{len} points exceed the work budget of {max_len}"),
    }
}

/// Linear convolution and a bound on the l1 norm of its round-off error. Direct summation
/// when small (non-negative terms: relative error ≤ n·u per entry). Otherwise FFT of size N:
/// by Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2) a computed
/// radix-2 FFT has `‖ŷ − y‖₂ ≤ γ‖y‖₂` with `γ ≈ log₂N·(μ + γ₄(√2 + μ)) ≤ 7u·log₂N` (μ ≈ u the
/// twiddle-factor error); with `‖Fa‖₂ = √N‖a‖₂`, `‖Fa‖_∞ ≤ ‖a‖₁` and the inverse transform
/// of norm `1/√N`, the convolution's error satisfies
/// `‖ĉ − c‖₂ ≤ (3γ + u)(‖a‖₂‖b‖₁ + ‖b‖₂‖a‖₁)` to first order, so
/// `‖ĉ − c‖₁ ≤ √N·(3γ + u)(‖a‖₂‖b‖₁ + ‖b‖₂‖a‖₁)`, doubled for the second-order terms.
/// Clamping negative outputs to 0 only reduces the error (the exact values are ≥ 0).
fn convolve(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let n = a.len() + b.len() - 1;
    let u = f64::EPSILON;
    if (a.len() as u64) * (b.len() as u64) <= 1 << 20 {
        let mut out = vec![0.0; n];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                out[i + j] += x * y;
            }
        }
        let total: f64 = out.iter().sum();
        return (out, 2.0 * a.len().min(b.len()) as f64 * u * total);
    }
    let size = n.next_power_of_two();
    let mut planner = FftPlanner::<f64>::new();
    let fwd = planner.plan_fft_forward(size);
    let inv = planner.plan_fft_inverse(size);
    let mut fa: Vec<Complex<f64>> = a.iter().map(|&x| Complex::new(x, 0.0)).collect();
    fa.resize(size, Complex::new(0.0, 0.0));
    fwd.process(&mut fa);
    let same = std::ptr::eq(a, b);
    if same {
        fa.iter_mut().for_each(|z| *z = *z * *z);
    } else {
        let mut fb: Vec<Complex<f64>> = b.iter().map(|&x| Complex::new(x, 0.0)).collect();
        fb.resize(size, Complex::new(0.0, 0.0));
        fwd.process(&mut fb);
        fa.iter_mut().zip(&fb).for_each(|(x, y)| *x *= *y);
    }
    inv.process(&mut fa);
    let scale = 1.0 / size as f64;
    let out: Vec<f64> = fa[..n].iter().map(|z| (z.re * scale).max(0.0)).collect();
    let l2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let l1 = |v: &[f64]| v.iter().sum::<f64>();
    let gamma = 7.0 * u * (size as f64).log2();
    let bound = 2.0 * (size as f64).sqrt() * (3.0 * gamma + u) * (l2(a) * l1(b) + l2(b) * l1(a));
    (out, bound)
}
