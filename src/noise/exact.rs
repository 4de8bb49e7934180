//! Exact samplers on the integers (Canonne, Kamath & Steinke 2020, Algorithms 1-3): Bernoulli
//! with a rational probability, Bernoulli(exp(−γ)) for rational γ, the discrete Laplace and the
//! discrete Gaussian on ℤ. Every accept/reject decision is integer arithmetic on uniformly
//! random integers drawn by rejection from raw 64-bit words: **no floating point** anywhere in
//! this file (a unit test checks that its source names no floating-point type).
//!
//! Integer overflow (possible only for extreme parameters) is reported as an error, never
//! wrapped: every multiplication is a checked `u128` operation.

use rand::Rng;

use crate::error::{Error, Result};

fn overflow(what: &'static str) -> Error {
    Error::Numerical {
        what,
        reason: "integer overflow in the exact sampler: use a coarser lattice (larger \
                 `lattice_log2`) or less noise"
            .into(),
    }
}

/// A uniform integer in `0..d` (`d ≥ 1`), by rejection from masked raw words: exactly uniform
/// (no modulo or multiply-shift bias).
pub fn uniform_below<R: Rng + ?Sized>(rng: &mut R, d: u128) -> u128 {
    debug_assert!(d >= 1, "uniform_below needs a non-empty range");
    if d <= 1 {
        return 0;
    }
    let bits = 128 - (d - 1).leading_zeros();
    let mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    loop {
        let x = if bits <= 64 {
            u128::from(rng.next_u64())
        } else {
            (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())
        } & mask;
        // Acceptance probability > 1/2 (the mask is below 2d).
        if x < d {
            return x;
        }
    }
}

/// Bernoulli(`num/den`) for `0 ≤ num ≤ den`, `den ≥ 1`: exact.
pub fn bernoulli_ratio<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    uniform_below(rng, den) < num
}

/// Bernoulli(exp(−num/den)) for `num ≥ 0`, `den ≥ 1` (CKS20 Algorithm 1): for γ ≤ 1, draw
/// `A_k ~ Bernoulli(γ/k)` for k = 1, 2, … until the first `A_k = 0` and return whether that k
/// is odd; for γ > 1, ⌊γ⌋ independent Bernoulli(e⁻¹) and one Bernoulli(exp(−(γ − ⌊γ⌋))) must
/// all succeed.
///
/// # Errors
/// [`Error::Numerical`] if `den·k` overflows `u128` (k is the loop counter; never in practice).
pub fn bernoulli_exp_neg<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool> {
    if den == 0 {
        return Err(Error::invalid("den", 0, "the denominator of γ must be ≥ 1"));
    }
    if num <= den {
        return bernoulli_exp_neg_le1(rng, num, den);
    }
    let whole = num / den;
    for _ in 0..whole {
        if !bernoulli_exp_neg_le1(rng, 1, 1)? {
            return Ok(false);
        }
    }
    bernoulli_exp_neg_le1(rng, num % den, den)
}

/// Bernoulli(exp(−num/den)) for `0 ≤ num ≤ den`.
fn bernoulli_exp_neg_le1<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool> {
    let mut k: u128 = 1;
    loop {
        let dk = den
            .checked_mul(k)
            .ok_or_else(|| overflow("bernoulli_exp_neg"))?;
        if !bernoulli_ratio(rng, num, dk) {
            return Ok(k % 2 == 1);
        }
        k += 1;
    }
}

/// The discrete Laplace distribution on ℤ with integer scale `t ≥ 1`:
/// `P(x) ∝ exp(−|x|/t)` (CKS20 Algorithm 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscreteLaplace {
    scale: u128,
}

impl DiscreteLaplace {
    /// The discrete Laplace with scale `t ≥ 1`.
    ///
    /// ```
    /// use dp_mcmc::noise::DiscreteLaplace;
    /// let lap = DiscreteLaplace::new(3)?;
    /// let x = lap.sample(&mut dp_mcmc::rng::chain_rng(1, 0))?;
    /// assert!(x.abs() < 1_000);
    /// assert!(DiscreteLaplace::new(0).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new(scale: u128) -> Result<Self> {
        if scale == 0 || scale > u128::from(u64::MAX) {
            return Err(Error::invalid(
                "scale",
                scale,
                "the discrete Laplace scale must be between 1 and 2^64 − 1",
            ));
        }
        Ok(DiscreteLaplace { scale })
    }

    /// One exact draw.
    ///
    /// # Errors
    /// [`Error::Numerical`] on integer overflow (|x| beyond `i64`, practically impossible).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<i64> {
        let t = self.scale;
        loop {
            let u = uniform_below(rng, t);
            if !bernoulli_exp_neg(rng, u, t)? {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_neg(rng, 1, 1)? {
                v += 1;
            }
            let x = v
                .checked_mul(t)
                .and_then(|vt| vt.checked_add(u))
                .ok_or_else(|| overflow("discrete_laplace"))?;
            let negative = bernoulli_ratio(rng, 1, 2);
            if negative && x == 0 {
                continue;
            }
            let x = i64::try_from(x).map_err(|_| overflow("discrete_laplace"))?;
            return Ok(if negative { -x } else { x });
        }
    }
}

/// The discrete Gaussian on ℤ with rational parameter `σ² = num/den`:
/// `P(x) ∝ exp(−x²/(2σ²))` for `x ∈ ℤ` (CKS20 Algorithm 3: a discrete Laplace proposal with
/// scale `t = ⌊σ⌋ + 1`, accepted with probability `exp(−(|y| − σ²/t)²/(2σ²))`).
///
/// The acceptance exponent is the exact rational
/// `γ = (|y|·t·den − num)² / (2·num·t²·den)`, evaluated in checked `u128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscreteGaussian {
    num: u128,
    den: u128,
    t: u128,
    laplace: DiscreteLaplace,
}

/// Integer square root ⌊√x⌋ (Newton's method on integers).
pub(crate) fn isqrt(x: u128) -> u128 {
    if x < 2 {
        return x;
    }
    let mut r = 1u128 << (128 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

impl DiscreteGaussian {
    /// The discrete Gaussian on ℤ with `σ² = num/den` (both ≥ 1, each below 2^64).
    ///
    /// ```
    /// use dp_mcmc::noise::DiscreteGaussian;
    /// let g = DiscreteGaussian::new(5, 2)?; // σ² = 2.5
    /// let x = g.sample(&mut dp_mcmc::rng::chain_rng(7, 0))?;
    /// assert!(x.abs() < 100);
    /// assert!(DiscreteGaussian::new(0, 1).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new(num: u64, den: u64) -> Result<Self> {
        if num == 0 || den == 0 {
            return Err(Error::invalid(
                "sigma2",
                format!("{num}/{den}"),
                "σ² = num/den needs num ≥ 1 and den ≥ 1",
            ));
        }
        let (num, den) = (u128::from(num), u128::from(den));
        let t = isqrt(num / den) + 1;
        Ok(DiscreteGaussian {
            num,
            den,
            t,
            laplace: DiscreteLaplace::new(t)?,
        })
    }

    /// `σ²` as the exact fraction `(num, den)`.
    pub fn sigma2(&self) -> (u128, u128) {
        (self.num, self.den)
    }

    /// One exact draw.
    ///
    /// # Errors
    /// [`Error::Numerical`] if an intermediate product overflows `u128` (σ² beyond ~10^18).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<i64> {
        let err = || overflow("discrete_gaussian");
        let td = self.t.checked_mul(self.den).ok_or_else(err)?;
        // 2·num·t²·den
        let gamma_den = self
            .num
            .checked_mul(2)
            .and_then(|v| v.checked_mul(self.t))
            .and_then(|v| v.checked_mul(td))
            .ok_or_else(err)?;
        loop {
            let y = self.laplace.sample(rng)?;
            let a = u128::from(y.unsigned_abs())
                .checked_mul(td)
                .ok_or_else(err)?;
            let diff = a.abs_diff(self.num);
            let gamma_num = diff.checked_mul(diff).ok_or_else(err)?;
            if bernoulli_exp_neg(rng, gamma_num, gamma_den)? {
                return Ok(y);
            }
        }
    }
}
